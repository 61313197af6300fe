//! options: the trace subcommands' argv → options (`kvload record`, `kvload replay`) and
//! their `--help`.

use super::format;

pub const RECORD_HELP: &str = "Usage: kvload record --listen HOST:PORT --upstream HOST:PORT --out TRACE [--duration S] [--max-bytes N] [--queue-bytes N] [--replies]
  A recording proxy: clients connect to --listen as to the server; bytes are forwarded untouched
  both ways and every command the clients send is appended to TRACE (docs/TRACES.md).
  --replies also records each command's reply size and latency (command read → reply complete).
  Ends after --duration seconds, when TRACE would pass --max-bytes, on SIGINT/SIGTERM, or when
  the disk is full; TRACE always ends at a whole record.
  --queue-bytes N bounds the records waiting for the trace writer, across connections (default
  67108864, 64 MiB): when the disk falls behind, records that do not fit are dropped from TRACE
  and counted (a gap record per connection; forwarding never waits).
";

#[derive(Debug, PartialEq)]
pub struct RecordOptions {
    pub listen: String,
    pub upstream: String,
    pub out: String,
    pub duration: Option<f64>,
    pub max_bytes: Option<u64>,
    /// The bound of the records waiting for the writer (queue.rs).
    pub queue_bytes: usize,
    pub replies: bool,
}

/// `kvload record`'s argv → options; Ok(None) for --help.
pub fn parse_record(argv: &[String]) -> Result<Option<RecordOptions>, String> {
    let (mut listen, mut upstream, mut out, mut duration, mut max_bytes) = (None, None, None, None, None);
    let mut queue_bytes = super::queue::DEFAULT_QUEUE_BYTES;
    let mut replies = false;
    let mut i = 0;
    while i < argv.len() {
        let flag = argv[i].as_str();
        if flag == "--help" {
            return Ok(None);
        }
        if flag == "--replies" {
            replies = true;
            i += 1;
            continue;
        }
        let v = argv.get(i + 1).ok_or_else(|| format!("option {flag} requires an argument"))?;
        match flag {
            "--listen" => listen = Some(v.clone()),
            "--upstream" => upstream = Some(v.clone()),
            "--out" => out = Some(v.clone()),
            "--duration" => {
                duration = Some(v.parse::<f64>().ok().filter(|d| *d > 0.0).ok_or_else(|| format!("invalid value for --duration: '{v}'"))?)
            }
            "--max-bytes" => {
                max_bytes = Some(v.parse::<u64>().ok().filter(|n| *n > format::HEADER_LEN as u64).ok_or_else(|| format!("invalid value for --max-bytes: '{v}' (more than {} bytes)", format::HEADER_LEN))?)
            }
            "--queue-bytes" => {
                queue_bytes = v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| format!("invalid value for --queue-bytes: '{v}' (a number of bytes over 0)"))?
            }
            _ => return Err(format!("unknown option {flag} (see kvload record --help)")),
        }
        i += 2;
    }
    let need = |v: Option<String>, f: &str| v.ok_or_else(|| format!("{f} is required (see kvload record --help)"));
    Ok(Some(RecordOptions { listen: need(listen, "--listen")?, upstream: need(upstream, "--upstream")?, out: need(out, "--out")?, duration, max_bytes, queue_bytes, replies }))
}

pub const REPLAY_HELP: &str = "Usage: kvload replay TRACE [-h HOST] [-p PORT] [-a PASSWORD] [--user USER] [--speed F|max] [--seed-from-trace] [--seed-size N] [--json FILE] [-q]
  Replays TRACE (kvload's trace format or a MONITOR capture; docs/TRACES.md) against the server:
  each recorded connection is a connection, each batch (one recorded read, or MULTI…EXEC) is
  sent at its recorded time divided by --speed (default 1; open loop, latency from the intended
  send time); --speed max is a closed loop per connection. --seed-from-trace first SETs the keys
  the trace reads before it writes them (the value size of the trace's later write of that key,
  else --seed-size, default 32). --json writes kvload's JSON report (one test).
  -a (or $KVLOAD_AUTH) and --user: every connection sends AUTH before the replay starts.
";

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    Factor(f64),
    Max,
}

#[derive(Debug, PartialEq)]
pub struct ReplayOptions {
    pub trace: String,
    pub host: String,
    pub port: u16,
    pub speed: Speed,
    pub seed: bool,
    pub seed_size: usize,
    pub json: Option<String>,
    pub quiet: bool,
    /// AUTH of every connection before the replay (-a or $KVLOAD_AUTH, --user).
    pub password: Option<String>,
    pub user: Option<String>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            trace: String::new(),
            host: "127.0.0.1".into(),
            port: 6379,
            speed: Speed::Factor(1.0),
            seed: false,
            seed_size: 32,
            json: None,
            quiet: false,
            password: None,
            user: None,
        }
    }
}

/// The options that take a value.
const VALUE_FLAGS: &[&str] = &["-h", "--host", "-p", "--port", "--speed", "--seed-size", "--json", "-a", "--user"];

/// `kvload replay`'s argv → options; Ok(None) for --help.
pub fn parse_replay(argv: &[String]) -> Result<Option<ReplayOptions>, String> {
    let mut o = ReplayOptions::default();
    let mut i = 0;
    while i < argv.len() {
        let flag = argv[i].as_str();
        match flag {
            "--help" => return Ok(None),
            "--seed-from-trace" => o.seed = true,
            "-q" => o.quiet = true,
            f if VALUE_FLAGS.contains(&f) => {
                let v = argv.get(i + 1).ok_or_else(|| format!("option {flag} requires an argument"))?;
                set(&mut o, flag, v)?;
                i += 1;
            }
            f if f.starts_with('-') => return Err(format!("unknown option {f} (see kvload replay --help)")),
            f => {
                if !o.trace.is_empty() {
                    return Err(format!("unexpected argument '{f}' (one TRACE)"));
                }
                o.trace = f.to_string();
            }
        }
        i += 1;
    }
    if o.trace.is_empty() {
        return Err("a TRACE file is required (see kvload replay --help)".into());
    }
    Ok(Some(o))
}

/// Applies one `flag value` pair of `VALUE_FLAGS`.
fn set(o: &mut ReplayOptions, flag: &str, v: &str) -> Result<(), String> {
    match flag {
        "-h" | "--host" => o.host = v.to_string(),
        "-p" | "--port" => o.port = v.parse().map_err(|_| format!("invalid value for {flag}: '{v}'"))?,
        "--speed" if v == "max" => o.speed = Speed::Max,
        "--speed" => {
            let f = v.parse::<f64>().ok().filter(|f| f.is_finite() && *f > 0.0);
            o.speed = Speed::Factor(f.ok_or_else(|| format!("invalid value for --speed: '{v}' (a factor > 0, or max)"))?);
        }
        "--seed-size" => o.seed_size = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| format!("invalid value for --seed-size: '{v}'"))?,
        "--json" => o.json = Some(v.to_string()),
        "-a" => o.password = Some(v.to_string()),
        "--user" => o.user = Some(v.to_string()),
        _ => return Err(format!("unknown option {flag} (see kvload replay --help)")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_are_checked() {
        let a = |extra: &[&str]| {
            let mut v: Vec<String> = ["--listen", "a:1", "--upstream", "b:2", "--out", "t"].iter().map(|s| s.to_string()).collect();
            v.extend(extra.iter().map(|s| s.to_string()));
            parse_record(&v)
        };
        assert!(parse_record(&["--listen".into(), "a:1".into()]).is_err(), "--upstream and --out are required");
        assert!(a(&["--max-bytes", "3"]).is_err(), "not even a header fits");
        assert_eq!(a(&["--max-bytes", "100"]).unwrap().unwrap().max_bytes, Some(100));
        assert!(a(&["--duration", "0"]).is_err());
        assert_eq!(a(&[]).unwrap().unwrap().queue_bytes, 64 << 20);
        assert_eq!(a(&["--queue-bytes", "1000"]).unwrap().unwrap().queue_bytes, 1000);
        let e = a(&["--queue-bytes", "0"]).unwrap_err();
        assert!(e.contains("--queue-bytes: '0'"), "{e}");
        assert!(a(&["--queue-bytes", "64M"]).is_err());
        assert_eq!(a(&["--duration", "1.5"]).unwrap().unwrap().duration, Some(1.5));
        assert!(!a(&[]).unwrap().unwrap().replies);
        assert!(a(&["--replies", "--duration", "2"]).unwrap().unwrap().replies, "--replies takes no value");
    }

    #[test]
    fn speed_parses() {
        let a = |v: &[&str]| parse_replay(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(a(&["t", "--speed", "max"]).unwrap().unwrap().speed, Speed::Max);
        assert_eq!(a(&["t", "--speed", "2"]).unwrap().unwrap().speed, Speed::Factor(2.0));
        assert!(a(&["t", "--speed", "0"]).is_err());
        assert!(a(&["--speed", "2"]).is_err());
        let o = a(&["t", "-a", "pw", "--user", "bob"]).unwrap().unwrap();
        assert_eq!((o.password.as_deref(), o.user.as_deref()), (Some("pw"), Some("bob")));
    }
}
