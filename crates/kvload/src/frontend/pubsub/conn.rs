//! conn: what pub/sub's threads share — a blocking connection with a reply timeout, and the
//! run's shared state (subscriptions ready, publishing's start, messages delivered, stop).

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use super::options::PubsubOptions;

/// Seconds a blocking socket waits for a reply before the run fails.
pub(super) const REPLY_TIMEOUT_S: u64 = 30;

/// What the threads share: subscription readiness, the start and end of publishing, the
/// number of new messages delivered (for the drain) and the stop signal.
#[derive(Default)]
pub(super) struct Shared {
    pub ready: AtomicUsize,
    pub t0: AtomicU64,
    pub delivered: AtomicU64,
    pub done: AtomicBool,
    failed: Mutex<Option<String>>,
}

impl Shared {
    pub fn fail(&self, e: String) {
        if let Ok(mut f) = self.failed.lock() {
            f.get_or_insert(e);
        }
        self.done.store(true, Ordering::SeqCst);
    }

    pub fn failure(&self) -> Option<String> {
        self.failed.lock().ok().and_then(|f| f.clone())
    }
}

/// A blocking TCP connection with TCP_NODELAY and a reply timeout.
pub(super) fn connect(o: &PubsubOptions) -> Result<TcpStream, String> {
    let s = TcpStream::connect((o.host.as_str(), o.port)).map_err(|e| format!("Could not connect to server at {}:{}: {e}", o.host, o.port))?;
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(Duration::from_secs(REPLY_TIMEOUT_S))).map_err(|e| e.to_string())?;
    Ok(s)
}
