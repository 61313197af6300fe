//! options: `kvload pubsub`'s argv → checked `PubsubOptions` (roles, channels, bounds).

use super::payload;

pub const HELP: &str = "Usage: kvload pubsub [-h HOST] [-p PORT] [--subscribers N] [--channels M]
                     [--channels-per-subscriber K] [--mode subscribe|psubscribe|ssubscribe]
                     [--publishers P] [--rps R | -P DEPTH] [-d BYTES] [--duration S | --messages N]
                     [--channel-prefix TEXT] [--channel-min ID] [--threads T] [--drain S]
                     [--json FILE] [-q]
  N subscriber connections (default 1) each subscribe to K (default 1) of the M channels
  (default 1) named PREFIX<ID> (default channel-1 …); --mode psubscribe subscribes to each
  channel's name as a pattern, ssubscribe uses sharded pub/sub (and SPUBLISH). P publisher
  connections (default 1) publish round-robin over the channels, for --duration seconds
  (default 10) or --messages each: closed loop with DEPTH messages in flight each (default
  1), or at R messages per second in all (--rps, an open loop). Each message (-d bytes,
  default 64, at least 32) carries its publisher, sequence and send time: subscribers record
  publish-to-deliver latency and count lost and duplicated messages after waiting up to
  --drain seconds (default 5) for messages in flight. Subscribers run on T threads
  (default 1). --json writes kvload's JSON report with a `pubsub` object.
";

/// How subscribers subscribe (and so how publishers publish).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Subscribe,
    Psubscribe,
    Ssubscribe,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Subscribe => "subscribe",
            Mode::Psubscribe => "psubscribe",
            Mode::Ssubscribe => "ssubscribe",
        }
    }

    fn parse(v: &str) -> Result<Mode, String> {
        match v {
            "subscribe" => Ok(Mode::Subscribe),
            "psubscribe" => Ok(Mode::Psubscribe),
            "ssubscribe" => Ok(Mode::Ssubscribe),
            _ => Err(format!("invalid value for --mode: '{v}' (subscribe, psubscribe or ssubscribe)")),
        }
    }

    /// The publish command of this mode.
    pub fn publish(self) -> &'static str {
        if self == Mode::Ssubscribe { "SPUBLISH" } else { "PUBLISH" }
    }
}

/// How long publishers publish.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    Seconds(f64),
    /// Messages per publisher.
    Messages(u64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PubsubOptions {
    pub host: String,
    pub port: u16,
    pub subscribers: usize,
    pub channels: usize,
    pub per_subscriber: usize,
    pub mode: Mode,
    pub publishers: usize,
    pub rps: Option<f64>,
    pub pipeline: usize,
    pub data_size: usize,
    pub bound: Bound,
    pub prefix: String,
    pub channel_min: u64,
    pub threads: usize,
    pub drain_s: f64,
    pub json: Option<String>,
    pub quiet: bool,
}

impl Default for PubsubOptions {
    fn default() -> Self {
        PubsubOptions {
            host: "127.0.0.1".into(),
            port: 6379,
            subscribers: 1,
            channels: 1,
            per_subscriber: 1,
            mode: Mode::Subscribe,
            publishers: 1,
            rps: None,
            pipeline: 1,
            data_size: 64,
            bound: Bound::Seconds(10.0),
            prefix: "channel-".into(),
            channel_min: 1,
            threads: 1,
            drain_s: 5.0,
            json: None,
            quiet: false,
        }
    }
}

impl PubsubOptions {
    /// The name of channel index `i`.
    pub fn channel(&self, i: usize) -> String {
        format!("{}{}", self.prefix, self.channel_min + i as u64)
    }
}

fn number<T: std::str::FromStr + PartialOrd + Default>(flag: &str, v: &str, min: T) -> Result<T, String> {
    v.trim().parse::<T>().ok().filter(|n| *n >= min).ok_or_else(|| format!("invalid value for {flag}: '{v}'"))
}

fn positive_f64(flag: &str, v: &str) -> Result<f64, String> {
    v.trim().parse::<f64>().ok().filter(|f| f.is_finite() && *f > 0.0).ok_or_else(|| format!("invalid value for {flag}: '{v}' (a number > 0)"))
}

/// Applies one `flag value` pair.
fn set(o: &mut PubsubOptions, flag: &str, v: &str) -> Result<(), String> {
    match flag {
        "-h" | "--host" => o.host = v.to_string(),
        "-p" | "--port" => o.port = number(flag, v, 1)?,
        "--subscribers" => o.subscribers = number(flag, v, 1)?,
        "--channels" => o.channels = number(flag, v, 1)?,
        "--channels-per-subscriber" => o.per_subscriber = number(flag, v, 1)?,
        "--mode" => o.mode = Mode::parse(v)?,
        "--publishers" => o.publishers = number(flag, v, 1)?,
        "--rps" => o.rps = Some(positive_f64(flag, v)?),
        "-P" | "--pipeline" => o.pipeline = number(flag, v, 1)?,
        "-d" | "--data-size" => o.data_size = number(flag, v, 0)?,
        "--duration" => o.bound = Bound::Seconds(positive_f64(flag, v)?),
        "--messages" => o.bound = Bound::Messages(number(flag, v, 1)?),
        "--channel-prefix" => o.prefix = v.to_string(),
        "--channel-min" => o.channel_min = number(flag, v, 0)?,
        "--threads" => o.threads = number(flag, v, 1)?,
        "--drain" => o.drain_s = number(flag, v, 0.0)?,
        "--json" => o.json = Some(v.to_string()),
        _ => return Err(format!("unknown option {flag} (see kvload pubsub --help)")),
    }
    Ok(())
}

/// argv → options; Ok(None) for --help.
pub fn parse_args(argv: &[String]) -> Result<Option<PubsubOptions>, String> {
    let mut o = PubsubOptions::default();
    let mut i = 0;
    while i < argv.len() {
        let flag = argv[i].as_str();
        match flag {
            "--help" => return Ok(None),
            "-q" => o.quiet = true,
            _ if !flag.starts_with('-') => return Err(format!("unexpected argument '{flag}' (see kvload pubsub --help)")),
            _ => {
                let v = argv.get(i + 1).ok_or_else(|| format!("option {flag} requires an argument"))?;
                set(&mut o, flag, v)?;
                i += 1;
            }
        }
        i += 1;
    }
    check(&o)?;
    Ok(Some(o))
}

/// What the options cannot mean together.
fn check(o: &PubsubOptions) -> Result<(), String> {
    if o.data_size < payload::HEADER_LEN {
        return Err(format!("invalid value for -d: {} (at least {} bytes: each message carries its publisher, sequence and send times)", o.data_size, payload::HEADER_LEN));
    }
    if o.per_subscriber > o.channels {
        return Err(format!("--channels-per-subscriber {} exceeds --channels {}", o.per_subscriber, o.channels));
    }
    if o.rps.is_some() && o.pipeline > 1 {
        return Err("-P applies to the closed loop; --rps paces each message (give one of them)".into());
    }
    if o.publishers > u32::MAX as usize {
        return Err("--publishers is too large".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<Option<PubsubOptions>, String> {
        parse_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn parses_roles_and_bounds() {
        let o = args(&["--subscribers", "170", "--channels", "10", "--mode", "ssubscribe", "--publishers", "3", "-P", "10", "-d", "128", "--messages", "50"]).unwrap().unwrap();
        assert_eq!((o.subscribers, o.channels, o.publishers, o.pipeline, o.data_size), (170, 10, 3, 10, 128));
        assert_eq!(o.mode.publish(), "SPUBLISH");
        assert_eq!(o.bound, Bound::Messages(50));
        assert_eq!(o.channel(9), "channel-10");
        assert_eq!(args(&["--help"]).unwrap(), None);
    }

    #[test]
    fn refuses_what_cannot_work() {
        for bad in [&["-d", "8"][..], &["--channels", "2", "--channels-per-subscriber", "3"], &["--rps", "100", "-P", "4"], &["--mode", "bcast"], &["--subscribers", "0"], &["--duration", "-1"], &["--bogus", "1"], &["stray"]] {
            assert!(args(bad).is_err(), "{bad:?}");
        }
    }
}
