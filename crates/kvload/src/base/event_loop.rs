//! event_loop: which event loop a run uses (`--io`): io_uring (`engine/uring_loop.rs`) or
//! epoll (mio, `engine/epoll_loop.rs`), decided once per run from the option, the kernel
//! and TLS.

/// The `--io` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoChoice {
    /// io_uring when the kernel allows it (and no TLS), else epoll with a note.
    #[default]
    Auto,
    Uring,
    Epoll,
}

/// The loop a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    Uring,
    Epoll,
}

impl IoKind {
    pub fn name(self) -> &'static str {
        match self {
            IoKind::Uring => "uring",
            IoKind::Epoll => "epoll",
        }
    }
}

impl IoChoice {
    pub fn parse(v: &str) -> Result<IoChoice, String> {
        match v {
            "uring" | "io_uring" => Ok(IoChoice::Uring),
            "epoll" => Ok(IoChoice::Epoll),
            "auto" => Ok(IoChoice::Auto),
            _ => Err(format!("invalid value for --io: '{v}' (uring, epoll or auto)")),
        }
    }
}

/// The loop a run uses and why, for the JSON report.
#[derive(Debug, Clone, PartialEq)]
pub struct IoUsed {
    pub kind: IoKind,
    /// Why it is not io_uring (TLS, a kernel that refuses it); None otherwise.
    pub note: Option<String>,
}

/// `resolve`, printing the note on stderr when the kernel refused io_uring or an
/// explicit `--io uring` was overridden (TLS).
pub fn resolve_and_note(choice: IoChoice, tls: bool) -> Result<IoUsed, String> {
    let (kind, note) = resolve(choice, tls)?;
    if let Some(n) = &note {
        if !(tls && choice == IoChoice::Auto) {
            eprintln!("kvload: note: {n}");
        }
    }
    Ok(IoUsed { kind, note })
}

/// The loop to use, and a one-line note when it is not the one asked for (or the
/// default). Err (exit 2) when `--io uring` was explicit and the kernel refuses it.
pub fn resolve(choice: IoChoice, tls: bool) -> Result<(IoKind, Option<String>), String> {
    resolve_with(choice, tls, crate::base::uring::probe)
}

fn resolve_with(
    choice: IoChoice,
    tls: bool,
    probe: impl Fn() -> Result<(), String>,
) -> Result<(IoKind, Option<String>), String> {
    match (choice, tls) {
        (IoChoice::Epoll, _) => Ok((IoKind::Epoll, None)),
        (IoChoice::Auto, true) => Ok((IoKind::Epoll, Some("TLS runs on the epoll loop".into()))),
        (IoChoice::Uring, true) => {
            Ok((IoKind::Epoll, Some("--io uring: TLS runs on the epoll loop (rustls, no kTLS)".into())))
        }
        (IoChoice::Uring, false) => match probe() {
            Ok(()) => Ok((IoKind::Uring, None)),
            Err(e) => Err(format!("--io uring: io_uring is not available here ({e}); use --io epoll")),
        },
        (IoChoice::Auto, false) => match probe() {
            Ok(()) => Ok((IoKind::Uring, None)),
            Err(e) => Ok((IoKind::Epoll, Some(format!("io_uring is not available ({e}): using epoll")))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_kernel_and_tls_decide_the_loop() {
        let ok = || Ok(());
        let refused = || Err("io_uring_setup: Operation not permitted".to_string());
        assert_eq!(resolve_with(IoChoice::Auto, false, ok), Ok((IoKind::Uring, None)));
        assert_eq!(resolve_with(IoChoice::Epoll, false, ok), Ok((IoKind::Epoll, None)));
        let (k, note) = resolve_with(IoChoice::Auto, false, refused).expect("falls back");
        assert_eq!(k, IoKind::Epoll);
        assert!(note.is_some_and(|n| n.contains("not permitted")));
        assert!(resolve_with(IoChoice::Uring, false, refused).is_err_and(|e| e.contains("--io epoll")));
        let (k, note) = resolve_with(IoChoice::Uring, true, ok).expect("TLS stays on epoll");
        assert_eq!(k, IoKind::Epoll);
        assert!(note.is_some_and(|n| n.contains("TLS")));
        assert_eq!(IoChoice::parse("uring"), Ok(IoChoice::Uring));
        assert!(IoChoice::parse("poll").is_err());
    }
}
