//! options: kvload's argv → typed, checked `Options` (valkey-benchmark's flags and
//! kvload's own). Hand-written so that `-h` means host, as in valkey-benchmark.

use std::str::FromStr;

use crate::base::event_loop::IoChoice;
use crate::base::session::Session;
use crate::base::tls::TlsOptions;
use crate::base::uri;
use crate::engine::reconnect::DEFAULT_BACKOFF_MS;
use crate::report::RunInfo;
use crate::workload::replicas::{self, ReadFrom};
use crate::workload::sample::KeyShape;
use crate::workload::values::MAX_VALUE;
use crate::workload::spec::{TEST_ALIASES, TEST_NAMES};
use crate::workload::staircase::{self, Ramp};
use crate::workload::values::{Content, Sizes, Ttl, Values};

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub host: String,
    pub port: u16,
    pub socket: Option<String>,
    pub password: Option<String>,
    pub user: Option<String>,
    pub clients: usize,
    pub requests: u64,
    pub duration: Option<f64>,
    pub warmup: f64,
    pub data_size: usize,
    pub dbnum: u32,
    pub resp3: bool,
    pub threads: usize,
    pub cluster: bool,
    pub keepalive: bool,
    pub keyspace: Option<u64>,
    pub sequential: bool,
    pub independent_keys: bool,
    pub pipeline: usize,
    pub rps: Option<f64>,
    /// --arrivals poisson: open-loop sends at exponential gaps (a Poisson process per
    /// connection, so their sum is one too) instead of an even grid.
    pub poisson: bool,
    pub quiet: bool,
    pub precision: u8,
    pub csv: bool,
    pub repeat: bool,
    pub tests: Option<Vec<String>>,
    pub seed: Option<u64>,
    pub json: Option<String>,
    pub tls: TlsOptions,
    pub tracking: bool,
    pub command: Vec<String>,
    /// --reconnect-on-error (with --reconnect-backoff-ms, --fallback, --ack-log): `reconnect`.
    pub reconnect_on_error: bool,
    pub reconnect_opts: ReconnectOptions,
    /// --dataset: CSV whose rows fill `__field:NAME__` placeholders of the command.
    pub dataset: Option<String>,
    /// --io: which event loop (auto = io_uring when the kernel allows it).
    pub io: IoChoice,
    /// --read-from-replicas (valkey-benchmark's --rfr): where read tests go.
    pub read_from: ReadFrom,
    /// --clients-start / --clients-step / --step-duration as given (`staircase`).
    pub ramp_flags: (Option<usize>, Option<usize>, Option<u64>),
    /// --key-distribution: how `__rand_int__` values are drawn (`sequential` = --sequential).
    pub key_shape: KeyShape,
    /// --value-size (None: -d's fixed size), --value-content, --ttl: `values()`.
    pub value_size: Option<Sizes>,
    pub value_content: Content,
    pub ttl: Ttl,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            host: "127.0.0.1".into(),
            port: 6379,
            socket: None,
            password: None,
            user: None,
            clients: 50,
            requests: 100_000,
            duration: None,
            warmup: 0.0,
            data_size: 3,
            dbnum: 0,
            resp3: false,
            threads: 1,
            cluster: false,
            keepalive: true,
            keyspace: None,
            sequential: false,
            independent_keys: false,
            pipeline: 1,
            rps: None,
            poisson: false,
            quiet: false,
            precision: 3,
            csv: false,
            repeat: false,
            tests: None,
            seed: None,
            json: None,
            tls: TlsOptions::default(),
            tracking: false,
            command: Vec::new(),
            reconnect_on_error: false,
            reconnect_opts: ReconnectOptions::default(),
            dataset: None,
            io: IoChoice::Auto,
            read_from: ReadFrom::No,
            ramp_flags: (None, None, None),
            key_shape: KeyShape::Uniform,
            value_size: None,
            value_content: Content::Random,
            ttl: Ttl(None),
        }
    }
}

impl Options {
    /// The values and TTLs asked for (-d's fixed size unless --value-size).
    pub fn values(&self) -> Values {
        let sizes = self.value_size.clone().unwrap_or_else(|| Sizes::fixed(self.data_size));
        Values { sizes, content: self.value_content, ttl: self.ttl }
    }

    /// Whether --value-size, --value-content or --ttl change the values from -d's.
    pub fn shapes_values(&self) -> bool {
        self.value_size.is_some() || self.value_content != Content::Random || self.ttl.0.is_some()
    }

    /// How its connections start (TLS, AUTH, CLIENT TRACKING, SELECT, HELLO).
    pub fn session(&self) -> Session<'_> {
        Session {
            tls: &self.tls,
            host: &self.host,
            user: self.user.as_deref(),
            password: self.password.as_deref(),
            tracking: self.tracking,
            dbnum: self.dbnum,
            cluster: self.cluster,
            resp3: self.resp3,
        }
    }

    /// The run as kvload's report describes it.
    pub fn run_info(&self) -> RunInfo {
        let tests = match (self.command.is_empty(), &self.tests) {
            (false, _) => vec![self.command.join(" ")],
            (true, Some(t)) => t.clone(),
            (true, None) => TEST_NAMES.iter().map(|s| s.to_string()).collect(),
        };
        RunInfo {
            host: self.host.clone(),
            port: self.port,
            socket: self.socket.clone(),
            clients: self.clients,
            threads: self.threads,
            pipeline: self.pipeline,
            requests: self.requests,
            duration: self.duration,
            warmup: self.warmup,
            data_size: self.data_size,
            keyspace: self.keyspace,
            sequential: self.sequential,
            seed: self.seed,
            rps: self.rps,
            poisson: self.poisson,
            tls: self.tls.enabled,
            cluster: self.cluster,
            resp3: self.resp3,
            dbnum: self.dbnum,
            tests,
            dataset: self.dataset.clone(),
            ramp: self.ramp(),
            keepalive: self.keepalive,
            precision: self.precision,
            csv: self.csv,
            quiet: self.quiet,
        }
    }

    /// The reconnect options when --reconnect-on-error is on.
    pub fn reconnect(&self) -> Option<&ReconnectOptions> {
        self.reconnect_on_error.then_some(&self.reconnect_opts)
    }

    /// The staircase ramp (all three flags given; `validate` refused a partial set).
    pub fn ramp(&self) -> Option<Ramp> {
        staircase::from_flags(self.ramp_flags.0, self.ramp_flags.1, self.ramp_flags.2).ok().flatten()
    }
}

/// The options of `--reconnect-on-error` (`--reconnect-backoff-ms`, `--fallback`, `--ack-log`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReconnectOptions {
    pub backoff_ms: u64,
    /// `--fallback`: other nodes to try, after the seed, in this order.
    pub fallback: Vec<(String, u16)>,
    /// `--ack-log FILE`: the keys of acknowledged commands, written at the end.
    pub ack_log: Option<String>,
}

impl Default for ReconnectOptions {
    fn default() -> Self {
        ReconnectOptions { backoff_ms: DEFAULT_BACKOFF_MS, fallback: Vec::new(), ack_log: None }
    }
}


#[derive(Debug, PartialEq)]
pub enum Parsed {
    Run(Box<Options>),
    Help,
    Version,
}

struct Args<'a> {
    argv: &'a [String],
    i: usize,
}

impl<'a> Args<'a> {
    fn value(&mut self, flag: &str) -> Result<&'a str, String> {
        self.i += 1;
        self.argv
            .get(self.i)
            .map(|s| s.as_str())
            .ok_or_else(|| format!("option {flag} requires an argument"))
    }

    fn num<T: FromStr>(&mut self, flag: &str) -> Result<T, String> {
        let v = self.value(flag)?;
        v.trim().parse().map_err(|_| format!("invalid value for {flag}: '{v}'"))
    }

    fn positive<T: FromStr + PartialOrd + Default>(&mut self, flag: &str) -> Result<T, String> {
        let v: T = self.num(flag)?;
        if v <= T::default() {
            return Err(format!("invalid value for {flag}: must be > 0"));
        }
        Ok(v)
    }
}

/// Without `-a` (or a URI password), a non-empty `value` of `KVLOAD_AUTH` is the password.
pub fn password_from_env(o: &mut Options, value: Option<String>) {
    if o.password.is_none() {
        o.password = value.filter(|v| !v.is_empty());
    }
}

/// Parses argv (without the program name).
pub fn parse(argv: &[String]) -> Result<Parsed, String> {
    let mut o = Options::default();
    let mut a = Args { argv, i: 0 };
    while a.i < argv.len() {
        let flag = argv[a.i].as_str();
        if !flag.starts_with('-') || flag == "-" {
            o.command = argv[a.i..].to_vec();
            break;
        }
        match flag {
            "--help" => return Ok(Parsed::Help),
            "--version" | "-v" => return Ok(Parsed::Version),
            _ => parse_flag(flag, &mut a, &mut o)?,
        }
        a.i += 1;
    }
    validate(&o)?;
    validate_shapes(&mut o)?;
    Ok(Parsed::Run(Box::new(o)))
}

fn parse_flag(flag: &str, a: &mut Args, o: &mut Options) -> Result<(), String> {
    match flag {
        "-h" => o.host = a.value(flag)?.to_string(),
        "-p" => o.port = a.num(flag)?,
        "-s" => o.socket = Some(a.value(flag)?.to_string()),
        "-a" => o.password = Some(a.value(flag)?.to_string()),
        "--user" => o.user = Some(a.value(flag)?.to_string()),
        "-u" => apply_uri(a.value(flag)?, o)?,
        "-c" => o.clients = a.positive(flag)?,
        "-n" => o.requests = a.positive(flag)?,
        "--duration" => o.duration = Some(a.positive(flag)?),
        "--warmup" => o.warmup = nonneg(a.num(flag)?, flag)?,
        "-d" => o.data_size = at_most_max_value(a.positive(flag)?, flag)?,
        "--dbnum" => o.dbnum = a.num(flag)?,
        "-3" => o.resp3 = true,
        "--threads" => o.threads = a.positive(flag)?,
        "--cluster" => o.cluster = true,
        "--read-from-replicas" | "--rfr" => o.read_from = replicas::parse_read_from(a.value(flag)?)?,
        "--enable-tracking" => o.tracking = true,
        "-k" => o.keepalive = parse_bool01(a.value(flag)?, flag)?,
        "-r" => o.keyspace = Some(a.num(flag)?),
        "--sequential" => o.sequential = true,
        "--key-distribution" => o.key_shape = KeyShape::parse(a.value(flag)?)?,
        "--value-size" => o.value_size = Some(Sizes::parse(a.value(flag)?)?),
        "--value-content" => o.value_content = Content::parse(a.value(flag)?)?,
        "--ttl" => o.ttl = Ttl::parse(a.value(flag)?)?,
        "--command-file" => command_file(a.value(flag)?, o)?,
        "--independent-keys" => o.independent_keys = true,
        "-P" => o.pipeline = a.positive(flag)?,
        "--rps" => o.rps = Some(a.positive(flag)?),
        "--arrivals" => o.poisson = parse_arrivals(a.value(flag)?)?,
        "-q" => o.quiet = true,
        "--precision" => o.precision = a.num(flag)?,
        "--csv" => o.csv = true,
        "-l" => o.repeat = true,
        "-t" => o.tests = Some(parse_tests(a.value(flag)?)?),
        "--seed" => o.seed = Some(a.num(flag)?),
        "--json" => o.json = Some(a.value(flag)?.to_string()),
        "--dataset" => o.dataset = Some(a.value(flag)?.to_string()),
        "--io" => o.io = IoChoice::parse(a.value(flag)?)?,
        "--reconnect-on-error" => o.reconnect_on_error = true,
        "--reconnect-backoff-ms" => o.reconnect_opts.backoff_ms = a.positive(flag)?,
        "--fallback" => o.reconnect_opts.fallback.extend(parse_fallback(a.value(flag)?)?),
        "--ack-log" => o.reconnect_opts.ack_log = Some(a.value(flag)?.to_string()),
        "--clients-start" => o.ramp_flags.0 = Some(a.positive(flag)?),
        "--clients-step" => o.ramp_flags.1 = Some(a.positive(flag)?),
        "--step-duration" => o.ramp_flags.2 = Some(a.positive(flag)?),
        _ => parse_tls_flag(flag, a, &mut o.tls)?,
    }
    Ok(())
}

fn parse_tls_flag(flag: &str, a: &mut Args, t: &mut TlsOptions) -> Result<(), String> {
    match flag {
        "--tls" => t.enabled = true,
        "--insecure" => t.insecure = true,
        "--sni" => t.sni = Some(a.value(flag)?.to_string()),
        "--cacert" => t.cacert = Some(a.value(flag)?.to_string()),
        "--cacertdir" => t.cacertdir = Some(a.value(flag)?.to_string()),
        "--cert" => t.cert = Some(a.value(flag)?.to_string()),
        "--key" => t.key = Some(a.value(flag)?.to_string()),
        _ => return Err(format!("unrecognized option '{flag}' (see --help)")),
    }
    Ok(())
}

fn parse_arrivals(v: &str) -> Result<bool, String> {
    match v {
        "uniform" => Ok(false),
        "poisson" => Ok(true),
        _ => Err(format!("invalid value for --arrivals: '{v}' (uniform or poisson)")),
    }
}

fn nonneg(v: f64, flag: &str) -> Result<f64, String> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("invalid value for {flag}: must be >= 0"))
    }
}

fn parse_bool01(v: &str, flag: &str) -> Result<bool, String> {
    match v {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(format!("invalid value for {flag}: expected 1 or 0")),
    }
}

fn parse_tests(v: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for name in v.split(',').map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()) {
        if !TEST_NAMES.contains(&name.as_str()) && !TEST_ALIASES.contains(&name.as_str()) {
            return Err(format!("unknown test '{name}' in -t"));
        }
        out.push(name);
    }
    if out.is_empty() {
        return Err("empty test list in -t".into());
    }
    Ok(out)
}

/// `-u`: `scheme://[user[:password]@]host[:port][/dbnum]` (`crate::base::uri`, kvload's rules);
/// valkeys/rediss enable TLS.
fn apply_uri(text: &str, o: &mut Options) -> Result<(), String> {
    let u = uri::parse(text, uri::Dialect::Kvload)?;
    o.tls.enabled |= u.tls;
    if let Some(auth) = u.userinfo {
        match auth.split_once(':') {
            Some((user, password)) => {
                if !user.is_empty() {
                    o.user = Some(user.to_string());
                }
                o.password = Some(password.to_string());
            }
            None => o.password = Some(auth),
        }
    }
    if let Some(db) = u.db {
        o.dbnum = db;
    }
    if let Some(host) = u.host {
        o.host = host;
    }
    if let Some(port) = u.port {
        o.port = port;
    }
    Ok(())
}

fn validate(o: &Options) -> Result<(), String> {
    if o.precision > 5 {
        return Err("invalid value for --precision: must be 0..5".into());
    }
    if o.user.is_some() && o.password.is_none() {
        return Err("--user needs -a".into());
    }
    if o.cluster && o.independent_keys {
        return Err("--independent-keys cannot be used with --cluster (a sequence is routed by its first key)".into());
    }
    if o.cluster && o.socket.is_some() {
        return Err("--cluster cannot be used with -s".into());
    }
    if o.threads > o.clients {
        return Err("--threads must not exceed -c".into());
    }
    if o.dataset.is_some() && o.command.is_empty() {
        return Err("--dataset needs a custom command with __field:NAME__ placeholders".into());
    }
    if o.dataset.is_some() && (o.cluster || o.independent_keys) {
        return Err("--dataset cannot be used with --cluster or --independent-keys".into());
    }
    if o.poisson && o.rps.is_none() {
        return Err("--arrivals poisson needs --rps (an open loop)".into());
    }
    if o.tls.enabled && o.socket.is_some() {
        return Err("--tls cannot be used with -s".into());
    }
    if let Some(why) = reconnect_refusal(o) {
        return Err(why.into());
    }
    validate_ramp(o)
}

/// `--command-file FILE`: its weighted commands as the custom command (a sequence whose
/// commands draw their own keys).
fn command_file(path: &str, o: &mut Options) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--command-file {path}: {e}"))?;
    o.command = crate::workload::spec::command_file(&text)?;
    o.independent_keys = true;
    Ok(())
}

/// --key-distribution against --sequential; values drawn per request only where each
/// batch's instances are found by their length (not --cluster, --ack-log, --dataset).
fn validate_shapes(o: &mut Options) -> Result<(), String> {
    match (o.key_shape, o.sequential) {
        (KeyShape::Sequential, _) => o.sequential = true,
        (KeyShape::Uniform, true) => o.key_shape = KeyShape::Sequential,
        (_, true) => return Err("--sequential cannot be combined with --key-distribution (give --key-distribution sequential)".into()),
        _ => {}
    }
    if o.dataset.is_some() && o.shapes_values() {
        return Err("--value-size, --value-content and --ttl cannot be used with --dataset (its rows are the values)".into());
    }
    if o.values().varies() && (o.cluster || o.reconnect_opts.ack_log.is_some()) {
        return Err("--value-size with several sizes and --ttl with a range cannot be used with --cluster or --ack-log".into());
    }
    if let Some(s) = &o.value_size {
        o.data_size = s.max();
    }
    Ok(())
}

/// Why these options cannot run together (bad input), or None.
fn reconnect_refusal(o: &Options) -> Option<&'static str> {
    if !o.reconnect_on_error {
        let extra = o.reconnect_opts != ReconnectOptions::default();
        return extra.then_some("--reconnect-backoff-ms, --fallback and --ack-log need --reconnect-on-error");
    }
    if o.reconnect_opts.ack_log.is_some() && (o.command.is_empty() || o.dataset.is_some()) {
        return Some("--ack-log needs a custom command (its first argument is the key logged), without --dataset");
    }
    if o.cluster && !o.reconnect_opts.fallback.is_empty() {
        return Some("--fallback is for a standalone run: in a cluster the slot map names the new primary");
    }
    if o.duration.is_none() {
        return Some("--reconnect-on-error needs --duration (a run of -n requests could wait forever for a node)");
    }
    if o.io == IoChoice::Uring {
        return Some("--reconnect-on-error runs on the epoll loop: drop --io uring");
    }
    if !o.keepalive {
        return Some("--reconnect-on-error cannot be used with -k 0");
    }
    if o.read_from != ReadFrom::No {
        // its --fallback nodes and the replicas' read routing would share one endpoint list
        return Some("--reconnect-on-error cannot be used with --read-from-replicas yet");
    }
    None
}


/// `--fallback host:port[,host:port...]`.
fn parse_fallback(v: &str) -> Result<Vec<(String, u16)>, String> {
    v.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            let s = s.trim();
            let (h, p) = s.rsplit_once(':').ok_or_else(|| format!("invalid --fallback '{s}': expected HOST:PORT"))?;
            let port = u16::from_str(p).map_err(|_| format!("invalid --fallback '{s}': bad port"))?;
            Ok((h.to_string(), port))
        })
        .collect()
}


/// The staircase flags: memtier's refusals (-c as the full count, --duration as its
/// --test-time), and what a ramp cannot be combined with in kvload's mode.
fn validate_ramp(o: &Options) -> Result<(), String> {
    let (s, st, d) = o.ramp_flags;
    let Some(r) = staircase::from_flags(s, st, d)? else { return Ok(()) };
    if let Some(why) = staircase::refusal(&r, o.clients, o.duration.is_some(), false) {
        return Err(why.replace("--clients (", "-c (").replace("--test-time", "--duration"));
    }
    if o.rps.is_some() || o.reconnect_on_error || o.repeat {
        return Err("--clients-start cannot be used with --rps, --reconnect-on-error or -l".into());
    }
    Ok(())
}

/// A value size kvload can send: at most `MAX_VALUE` (a bigger one was an allocation abort).
fn at_most_max_value(size: usize, flag: &str) -> Result<usize, String> {
    if size > MAX_VALUE {
        return Err(format!("invalid value for {flag}: {size} bytes is over the {MAX_VALUE} a value may have (the server's proto-max-bulk-len, 512 MiB)"));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Parsed, String> {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(&v)
    }

    fn opts(args: &[&str]) -> Options {
        match p(args) {
            Ok(Parsed::Run(o)) => *o,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn distributions_parse_and_conflicts_are_refused() {
        let o = opts(&["--key-distribution", "zipf:0.99", "--value-size", "16-256", "--ttl", "60"]);
        assert_eq!(o.key_shape, KeyShape::Zipf(0.99));
        assert_eq!((o.data_size, o.values().varies(), o.shapes_values()), (256, true, true));
        assert_eq!(opts(&["--sequential"]).key_shape, KeyShape::Sequential);
        assert!(opts(&["--key-distribution", "sequential"]).sequential);
        assert!(!opts(&["-d", "64"]).shapes_values());
        // a value over 512 MiB was an allocation abort (issue 41)
        let too_big = parse(&["-d".to_string(), "99999999999".to_string()]).map(|_| ()).unwrap_err();
        assert!(too_big.contains("invalid value for -d") && too_big.contains("over the 536870912"), "{too_big}");
        for (args, says) in [
            (&["--key-distribution", "zipf:0.9", "--sequential"][..], "--sequential cannot"),
            (&["--key-distribution", "pareto"][..], "\"pareto\""),
            (&["--value-size", "16-256", "--cluster"][..], "--cluster or --ack-log"),
            (&["--ttl", "5-9", "--cluster"][..], "--cluster or --ack-log"),
            (&["--ttl", "60", "--dataset", "x.csv", "GET", "__field:a__"][..], "--dataset"),
        ] {
            let e = p(args).unwrap_err();
            assert!(e.contains(says), "{args:?}: {e}");
        }
        assert!(p(&["--ttl", "60", "--cluster"]).is_ok(), "a fixed TTL is literal");
    }

    #[test]
    fn password_from_env_only_without_a() {
        let mut o = opts(&[]);
        password_from_env(&mut o, Some("envpw".into()));
        assert_eq!(o.password.as_deref(), Some("envpw"));
        let mut o = opts(&["-a", "flagpw"]);
        password_from_env(&mut o, Some("envpw".into()));
        assert_eq!(o.password.as_deref(), Some("flagpw"));
        let mut o = opts(&[]);
        password_from_env(&mut o, Some(String::new()));
        assert_eq!(o.password, None);
    }

    #[test]
    fn arrivals() {
        assert!(!opts(&["--rps", "100"]).poisson);
        assert!(opts(&["--rps", "100", "--arrivals", "poisson"]).poisson);
        assert!(!opts(&["--rps", "100", "--arrivals", "uniform"]).poisson);
        assert!(p(&["--rps", "100", "--arrivals", "burst"]).unwrap_err().contains("--arrivals"));
        assert!(p(&["--arrivals", "poisson"]).unwrap_err().contains("needs --rps"));
    }

    #[test]
    fn defaults() {
        let o = opts(&[]);
        assert_eq!(o.clients, 50);
        assert_eq!(o.requests, 100_000);
        assert_eq!(o.data_size, 3);
        assert_eq!(o.pipeline, 1);
        assert_eq!(o.threads, 1);
    }

    #[test]
    fn flags_and_command() {
        let o = opts(&["-h", "::1", "-p", "7000", "-c", "4", "-P", "16", "-r", "100", "--seed", "7",
            "--rps", "2000", "-t", "SET,get", "--csv", "SET", "foo", "__data__"]);
        assert_eq!(o.host, "::1");
        assert_eq!(o.port, 7000);
        assert_eq!(o.pipeline, 16);
        assert_eq!(o.keyspace, Some(100));
        assert_eq!(o.seed, Some(7));
        assert_eq!(o.rps, Some(2000.0));
        assert_eq!(o.tests, Some(vec!["set".to_string(), "get".to_string()]));
        assert_eq!(o.command, vec!["SET", "foo", "__data__"]);
    }

    #[test]
    fn bad_flags() {
        assert!(p(&["--pipelines", "3"]).is_err());
        assert!(p(&["-c", "0"]).is_err());
        assert!(p(&["-P", "abc"]).is_err());
        assert!(p(&["-n"]).is_err());
        assert!(p(&["-t", "nope"]).is_err());
        assert!(p(&["-k", "2"]).is_err());
    }

    #[test]
    fn help_version() {
        assert_eq!(p(&["--help"]), Ok(Parsed::Help));
        assert_eq!(p(&["--version"]), Ok(Parsed::Version));
    }

    #[test]
    fn uri() {
        let o = opts(&["-u", "valkeys://bob:secret@example:7001/3"]);
        assert!(o.tls.enabled);
        assert_eq!(o.user.as_deref(), Some("bob"));
        assert_eq!(o.password.as_deref(), Some("secret"));
        assert_eq!(o.host, "example");
        assert_eq!(o.port, 7001);
        assert_eq!(o.dbnum, 3);
        let o = opts(&["-u", "redis://[::1]:6380"]);
        assert_eq!(o.host, "::1");
        assert_eq!(o.port, 6380);
        assert!(p(&["-u", "http://x"]).is_err());
    }

    #[test]
    fn fallback_lists_parse_and_bad_ones_are_named() {
        assert_eq!(parse_fallback("127.0.0.1:7001, ::1:7002").unwrap(), vec![("127.0.0.1".into(), 7001), ("::1".into(), 7002)]);
        assert!(parse_fallback("localhost").unwrap_err().contains("'localhost'"));
        assert!(parse_fallback("h:99999").unwrap_err().contains("bad port"));
    }
}
