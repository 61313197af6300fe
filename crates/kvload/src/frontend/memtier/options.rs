//! memtier options: memtier_benchmark's argv (getopt_long rules) → typed `MtOptions`.
//! Every option memtier knows is in `table::TABLE`; the ones kvload does not implement
//! (and the values it refuses) are refused by their full name, never ignored; `apply`
//! handles every other one (the tests check both ways).

use crate::base::event_loop::IoChoice;
use crate::base::tls::TlsOptions;
use crate::base::uri::{self, Dialect};
use crate::workload::staircase::{self, Ramp};
use crate::workload::values::MAX_VALUE;

use super::keys::Pattern;
use super::read_pref::{self, ReadPref};
use super::table::{find_long, find_short, MtOption};

/// One `--command` with its `--command-key-pattern` and `--command-ratio`.
#[derive(Debug, Clone, PartialEq)]
pub struct MtCommand {
    pub line: String,
    pub args: Vec<Vec<u8>>,
    pub pattern: Pattern,
    pub ratio: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requests {
    /// Not given: 10000 per client unless --test-time.
    Unset,
    PerClient(u64),
    /// `-n allkeys`: the whole key range (split across clients with P:P).
    AllKeys,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Redis,
    Resp2,
    Resp3,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MtOptions {
    pub host: String,
    pub port: u16,
    pub socket: Option<String>,
    pub auth: Option<String>,
    pub uri: Option<String>,
    pub protocol: Protocol,
    pub tls: TlsOptions,
    pub out_file: Option<String>,
    pub json_out_file: Option<String>,
    pub kvload_json: Option<String>,
    /// kvload's --io (event loop).
    pub io: IoChoice,
    pub run_count: u32,
    pub hide_histogram: bool,
    pub print_percentiles: Vec<f64>,
    pub print_all_runs: bool,
    pub distinct_client_seed: bool,
    pub randomize: bool,
    pub requests: Requests,
    pub clients: usize,
    pub threads: usize,
    pub test_time: Option<u64>,
    /// --time-limit (kvload's): a request-bound run also stops sending after these seconds.
    pub time_limit: Option<u64>,
    pub ratio: Option<(u32, u32)>,
    pub pipeline: usize,
    pub data_size: Option<usize>,
    pub data_size_range: Option<(usize, usize)>,
    pub random_data: bool,
    pub key_prefix: String,
    pub key_min: u64,
    pub key_max: u64,
    pub key_pattern: Option<(Pattern, Pattern)>,
    pub key_stddev: f64,
    pub key_median: f64,
    pub key_zipf_exp: f64,
    pub select_db: u32,
    pub cluster_mode: bool,
    pub commands: Vec<MtCommand>,
    pub scan_incremental: bool,
    pub scan_max_iterations: u32,
    /// --rate-limiting: requests per second per connection.
    pub rate: Option<u32>,
    /// --thread-conn-start-{min,max}-jitter-micros: the pause between two clients' connects
    /// in a thread is drawn in [min, max] µs (none when max is 0).
    pub connect_jitter_us: (u32, u32),
    /// --reconnect-interval: a client reconnects after every N requests answered.
    pub reconnect_every: Option<u64>,
    /// --read-preference: where reads go (memtier_read_pref).
    pub read_preference: ReadPref,
    /// --read-server HOST:PORT (repeatable): standalone replicas reads may go to.
    pub read_servers: Vec<(String, u16)>,
    /// --clients-start / --clients-step / --step-duration as given (`crate::workload::staircase`).
    pub ramp_flags: (Option<usize>, Option<usize>, Option<u64>),
}

impl Default for MtOptions {
    fn default() -> Self {
        MtOptions {
            host: "localhost".into(),
            port: 6379,
            socket: None,
            auth: None,
            uri: None,
            protocol: Protocol::Redis,
            tls: TlsOptions::default(),
            out_file: None,
            json_out_file: None,
            kvload_json: None,
            io: IoChoice::Auto,
            run_count: 1,
            hide_histogram: false,
            print_percentiles: vec![50.0, 99.0, 99.9],
            print_all_runs: false,
            distinct_client_seed: false,
            randomize: false,
            requests: Requests::Unset,
            clients: 50,
            threads: 4,
            test_time: None,
            time_limit: None,
            ratio: None,
            pipeline: 1,
            data_size: None,
            data_size_range: None,
            random_data: false,
            key_prefix: "memtier-".into(),
            key_min: 0,
            key_max: 10_000_000,
            key_pattern: None,
            key_stddev: 0.0,
            key_median: 0.0,
            key_zipf_exp: 0.0,
            select_db: 0,
            cluster_mode: false,
            commands: Vec::new(),
            scan_incremental: false,
            scan_max_iterations: 0,
            rate: None,
            connect_jitter_us: (0, 0),
            reconnect_every: None,
            read_preference: ReadPref::Primary,
            read_servers: Vec::new(),
            ramp_flags: (None, None, None),
        }
    }
}

impl MtOptions {
    /// The staircase ramp (all three flags given; `validate` refused a partial set).
    pub fn ramp(&self) -> Option<Ramp> {
        staircase::from_flags(self.ramp_flags.0, self.ramp_flags.1, self.ramp_flags.2).ok().flatten()
    }

    /// A one-line description of the workload (the kvload JSON's test name).
    pub fn describe(&self) -> String {
        if self.commands.is_empty() {
            let (a, b) = self.ratio_or_default();
            let (s, g) = self.key_pattern_or_default();
            format!("memtier SET:GET {a}:{b} key-pattern {}:{}", s.letter(), g.letter())
        } else {
            let cmds: Vec<String> = self.commands.iter().map(|c| format!("{} (x{}, {})", c.line, c.ratio, c.pattern.letter())).collect();
            format!("memtier {}", cmds.join("; "))
        }
    }

    /// SET:GET ratio in effect (memtier's default 1:10).
    pub fn ratio_or_default(&self) -> (u32, u32) {
        self.ratio.unwrap_or((1, 10))
    }

    /// Set and get key patterns in effect (default R:R).
    pub fn key_pattern_or_default(&self) -> (Pattern, Pattern) {
        self.key_pattern.unwrap_or((Pattern::Random, Pattern::Random))
    }

    /// Requests per client, None when the run is bound by --test-time.
    /// `allkeys` is max - min (per client: that / clients + 1 with P:P), as memtier computes it;
    /// when that is 0 (a one-key range without P:P) memtier's default of 10,000 applies, as
    /// in memtier, which sets it after printing "setting requests to 0".
    pub fn requests_per_client(&self) -> Option<u64> {
        match self.requests {
            Requests::PerClient(n) => Some(n),
            Requests::AllKeys => Some(match self.allkeys_count() {
                0 => 10_000,
                n => n,
            }),
            Requests::Unset if self.test_time.is_some() => None,
            Requests::Unset => Some(10_000),
        }
    }

    /// `allkeys` as memtier first computes it (and prints: "setting requests to N").
    pub fn allkeys_count(&self) -> u64 {
        let n = self.key_max.saturating_sub(self.key_min);
        if self.key_pattern == Some((Pattern::Parallel, Pattern::Parallel)) {
            n / (self.clients * self.threads) as u64 + 1
        } else {
            n
        }
    }

    pub fn data_max(&self) -> usize {
        match (self.data_size, self.data_size_range) {
            (Some(n), _) => n,
            (None, Some((_, hi))) => hi,
            (None, None) => 32,
        }
    }
}

#[derive(Debug, PartialEq)]
pub enum MtParsed {
    Run(Box<MtOptions>),
    Help,
    Version,
    /// `--options-json` alone: print `table::TABLE` as JSON.
    OptionsJson,
}

/// Splits argv into (entry, value) pairs by getopt_long's rules.
fn tokenize(argv: &[String]) -> Result<Vec<(&'static MtOption, Option<String>)>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        i += 1;
        if a == "--" {
            if i < argv.len() {
                return Err(format!("unexpected argument '{}'", argv[i]));
            }
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let e = find_long(name)?;
            let value = match (e.takes_value(), inline) {
                (true, Some(v)) => Some(v),
                (true, None) => {
                    let v = argv.get(i).ok_or_else(|| format!("option '--{}' requires an argument", e.long))?;
                    i += 1;
                    Some(v.clone())
                }
                (false, Some(_)) => return Err(format!("option '--{}' doesn't allow an argument", e.long)),
                (false, None) => None,
            };
            out.push((e, value));
        } else if a.len() > 1 && a.starts_with('-') {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let e = find_short(chars[k])?;
                k += 1;
                if e.takes_value() {
                    let rest: String = chars[k..].iter().collect();
                    let v = if !rest.is_empty() {
                        rest
                    } else {
                        let v = argv.get(i).ok_or_else(|| format!("option requires an argument -- '{}'", chars[k - 1]))?;
                        i += 1;
                        v.clone()
                    };
                    out.push((e, Some(v)));
                    break;
                }
                out.push((e, None));
            }
        } else {
            return Err(format!("unexpected argument '{a}' (memtier_benchmark takes options only)"));
        }
    }
    Ok(out)
}

/// Parses memtier_benchmark's argv (without the program name).
pub fn parse(argv: &[String]) -> Result<MtParsed, String> {
    if argv.len() == 1 && argv[0] == "--options-json" {
        return Ok(MtParsed::OptionsJson);
    }
    let mut o = MtOptions::default();
    for (e, v) in tokenize(argv)? {
        if let Some(why) = e.refused() {
            return Err(not_supported(e.long, why));
        }
        let v = v.unwrap_or_default();
        if let Some(why) = e.refused_value(&v) {
            return Err(not_supported(&format!("{}={v}", e.long), why));
        }
        match e.long {
            "help" => return Ok(MtParsed::Help),
            "version" => return Ok(MtParsed::Version),
            name => apply(name, &v, &mut o)?,
        }
    }
    if let Some(uri) = o.uri.clone() {
        apply_uri(&uri, &mut o)?;
    }
    validate(&o)?;
    Ok(MtParsed::Run(Box::new(o)))
}

/// The refusal of an option (`what`: its long name, or `name=value`) and why.
fn not_supported(what: &str, why: &str) -> String {
    format!("option '--{what}' is not supported by kvload memtier ({why})")
}

/// `command` or `line` in any case, as memtier reads them; kvload has stats by command only.
fn check_breakdown(v: &str) -> Result<(), String> {
    match v.to_ascii_lowercase().as_str() {
        "command" => Ok(()),
        "line" => {
            let why = find_long("command-stats-breakdown").ok().and_then(|e| e.refused_value("line")).unwrap_or_default();
            Err(not_supported("command-stats-breakdown=line", why))
        }
        _ => Err("command-stats-breakdown must be 'command' or 'line'".into()),
    }
}

/// strtoul-like: the whole string is a decimal number.
fn num<T: std::str::FromStr>(v: &str, what: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("invalid value for --{what}: '{v}'"))
}

fn positive<T: std::str::FromStr + PartialOrd + Default>(v: &str, what: &str) -> Result<T, String> {
    let n: T = num(v, what)?;
    if n <= T::default() {
        return Err(format!("{what} must be greater than zero"));
    }
    Ok(n)
}

fn apply(name: &str, v: &str, o: &mut MtOptions) -> Result<(), String> {
    match name {
        "server" | "host" => o.host = v.to_string(),
        "port" => o.port = positive(v, "port")?,
        "unix-socket" => o.socket = Some(v.to_string()),
        "protocol" => o.protocol = parse_protocol(v)?,
        "out-file" => o.out_file = Some(v.to_string()),
        "json-out-file" => o.json_out_file = Some(v.to_string()),
        "kvload-json" => o.kvload_json = Some(v.to_string()),
        "io" => o.io = IoChoice::parse(v)?,
        "run-count" => o.run_count = positive(v, "run-count")?,
        "hide-histogram" => o.hide_histogram = true,
        "print-percentiles" => o.print_percentiles = parse_quantiles(v)?,
        "print-all-runs" => o.print_all_runs = true,
        "distinct-client-seed" => o.distinct_client_seed = true,
        "randomize" => o.randomize = true,
        "requests" => o.requests = parse_requests(v)?,
        "clients" => o.clients = positive(v, "clients")?,
        "threads" => o.threads = positive(v, "threads")?,
        "test-time" => o.test_time = Some(positive(v, "test-time")?),
        "time-limit" => o.time_limit = Some(positive(v, "time-limit")?),
        "clients-start" => o.ramp_flags.0 = Some(positive(v, "clients-start")?),
        "clients-step" => o.ramp_flags.1 = Some(positive(v, "clients-step")?),
        "step-duration" => o.ramp_flags.2 = Some(positive(v, "step-duration")?),
        "ratio" => o.ratio = Some(parse_ratio(v)?),
        "pipeline" => o.pipeline = positive(v, "pipeline")?,
        "data-size" => o.data_size = Some(at_most_max_value(positive(v, "data-size")?, "data-size")?),
        "random-data" => o.random_data = true,
        "data-size-range" => o.data_size_range = Some(parse_range(v)?),
        "data-size-pattern" if v != "R" => return Err("data-size-pattern must be either R or S".into()),
        "data-size-pattern" => {}
        "key-prefix" => o.key_prefix = v.to_string(),
        "key-minimum" => o.key_min = positive(v, "key-minimum")?,
        "key-maximum" => o.key_max = positive(v, "key-maximum")?,
        "key-pattern" => o.key_pattern = Some(parse_key_pattern(v)?),
        "key-stddev" => o.key_stddev = positive_f(v, "key-stddev")?,
        "key-median" => o.key_median = positive_f(v, "key-median")?,
        "key-zipf-exp" => o.key_zipf_exp = parse_zipf_exp(v)?,
        "authenticate" => o.auth = Some(v.to_string()),
        "uri" => o.uri = Some(v.to_string()),
        "select-db" => o.select_db = num(v, "select-db")?,
        "cluster-mode" => o.cluster_mode = true,
        "read-preference" => o.read_preference = read_pref::parse(v)?,
        "read-server" => o.read_servers.push(read_pref::parse_server(v)?),
        "command" => o.commands.push(parse_command(v)?),
        "command-key-pattern" => last_command(o)?.pattern = parse_command_pattern(v)?,
        "command-ratio" => last_command(o)?.ratio = num(v, "command-ratio")?,
        "scan-incremental-iteration" => o.scan_incremental = true,
        "scan-incremental-max-iterations" => o.scan_max_iterations = num(v, "scan-incremental-max-iterations")?,
        "command-stats-breakdown" => check_breakdown(v)?,
        "rate-limiting" => o.rate = Some(positive(v, "rate-limiting")?),
        "reconnect-interval" => o.reconnect_every = Some(positive(v, "reconnect-interval")?),
        "thread-conn-start-min-jitter-micros" => o.connect_jitter_us.0 = num(v, "thread-conn-start-min-jitter-micros")?,
        "thread-conn-start-max-jitter-micros" => o.connect_jitter_us.1 = num(v, "thread-conn-start-max-jitter-micros")?,
        _ => apply_tls(name, v, &mut o.tls)?,
    }
    Ok(())
}

fn apply_tls(name: &str, v: &str, t: &mut TlsOptions) -> Result<(), String> {
    match name {
        "tls" => t.enabled = true,
        "cert" => t.cert = Some(v.to_string()),
        "key" => t.key = Some(v.to_string()),
        "cacert" => t.cacert = Some(v.to_string()),
        "tls-skip-verify" => t.insecure = true,
        "sni" => t.sni = Some(v.to_string()),
        _ => return Err(format!("internal error: option '--{name}' has no handler")),
    }
    Ok(())
}

fn last_command(o: &mut MtOptions) -> Result<&mut MtCommand, String> {
    o.commands.last_mut().ok_or_else(|| "no arbitrary command found (give --command first)".to_string())
}

fn positive_f(v: &str, what: &str) -> Result<f64, String> {
    let x: f64 = num(v, what)?;
    if !(x > 0.0 && x.is_finite()) {
        return Err(format!("{what} must be greater than zero"));
    }
    Ok(x)
}

fn parse_zipf_exp(v: &str) -> Result<f64, String> {
    let x: f64 = num(v, "key-zipf-exp")?;
    if !(x > 0.0 && x < 5.0) {
        return Err("key-zipf-exp must be within interval (0, 5)".into());
    }
    Ok(x)
}

fn parse_protocol(v: &str) -> Result<Protocol, String> {
    match v {
        "redis" => Ok(Protocol::Redis),
        "resp2" => Ok(Protocol::Resp2),
        "resp3" => Ok(Protocol::Resp3),
        _ => Err("supported protocols are 'redis', 'resp2' and 'resp3'".into()),
    }
}

fn parse_requests(v: &str) -> Result<Requests, String> {
    if v == "allkeys" {
        return Ok(Requests::AllKeys);
    }
    Ok(Requests::PerClient(positive(v, "requests")?))
}

/// `a:b`, both ≥ 0 and not both 0.
pub fn parse_ratio(v: &str) -> Result<(u32, u32), String> {
    let bad = || "ratio must be expressed as [0-n]:[0-n]".to_string();
    let (a, b) = v.split_once(':').ok_or_else(bad)?;
    let (a, b): (u32, u32) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
    if a == 0 && b == 0 {
        return Err(bad());
    }
    Ok((a, b))
}

/// `min-max` (swapped if reversed), min ≥ 1.
fn parse_range(v: &str) -> Result<(usize, usize), String> {
    let bad = || "data-size-range must be expressed as [1-n]-[1-n]".to_string();
    let (a, b) = v.split_once('-').ok_or_else(bad)?;
    let (a, b): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
    let (lo, hi) = (a.min(b), a.max(b));
    if lo < 1 {
        return Err(bad());
    }
    Ok((lo, at_most_max_value(hi, "data-size-range")?))
}

/// A value size kvload can send: at most `MAX_VALUE` (a bigger one was an allocation abort).
fn at_most_max_value(size: usize, what: &str) -> Result<usize, String> {
    if size > MAX_VALUE {
        return Err(format!("{what}: {size} bytes is over the {MAX_VALUE} a value may have (the server's proto-max-bulk-len, 512 MiB)"));
    }
    Ok(size)
}

fn parse_quantiles(v: &str) -> Result<Vec<f64>, String> {
    let bad = || "quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...)".to_string();
    let q: Vec<f64> = v.split(',').map(|s| s.parse::<f64>().map_err(|_| bad())).collect::<Result<_, _>>()?;
    if q.iter().any(|x| !(0.0..=100.0).contains(x)) {
        return Err(bad());
    }
    Ok(q)
}

fn parse_key_pattern(v: &str) -> Result<(Pattern, Pattern), String> {
    let bad = || "key-pattern must be in the format of [S/R/G/P/Z]:[S/R/G/P/Z]".to_string();
    let c: Vec<char> = v.chars().collect();
    if c.len() != 3 || c[1] != ':' {
        return Err(bad());
    }
    let (s, g) = (Pattern::from_letter(c[0]).ok_or_else(bad)?, Pattern::from_letter(c[2]).ok_or_else(bad)?);
    if (s == Pattern::Parallel || g == Pattern::Parallel) && s != g {
        return Err("parallel key-pattern must be configured for both SET and GET commands".into());
    }
    Ok((s, g))
}

fn parse_command_pattern(v: &str) -> Result<Pattern, String> {
    let mut c = v.chars();
    match (c.next().and_then(Pattern::from_letter), c.next()) {
        (Some(p), None) => Ok(p),
        _ => Err("key-pattern for a command must be in the format of [S/R/Z/G/P]".into()),
    }
}

fn parse_command(line: &str) -> Result<MtCommand, String> {
    let args = split_args(line).ok_or_else(|| "failed to parse arbitrary command".to_string())?;
    if args.is_empty() {
        return Err("failed to parse arbitrary command (empty)".into());
    }
    for a in &args {
        let has_data = a.windows(8).any(|w| w == b"__data__");
        if has_data && a.as_slice() != b"__data__" {
            return Err("data placeholder can't combined with other data".into());
        }
    }
    if args[0].windows(7).any(|w| w == b"__key__") || args[0] == b"__data__" {
        return Err("the first word of a --command must be the command name".into());
    }
    Ok(MtCommand { line: line.to_string(), args, pattern: Pattern::Random, ratio: 1 })
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// memtier's (redis-cli's) argument splitter: blanks separate; "..." with
/// \n \r \t \b \a \xHH escapes; '...' with \' ; a closing quote must end the word.
pub fn split_args(line: &str) -> Option<Vec<Vec<u8>>> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            return Some(out);
        }
        let mut cur = Vec::new();
        i = word(b, i, &mut cur)?;
        out.push(cur);
    }
}

/// Appends the word starting at `b[i]` to `cur`; returns where it ends (None: a bad quote).
fn word(b: &[u8], mut i: usize, cur: &mut Vec<u8>) -> Option<usize> {
    loop {
        match b.get(i).copied() {
            None | Some(b' ' | b'\n' | b'\r' | b'\t') => return Some(i),
            Some(b'"') => return double_quoted(b, i + 1, cur),
            Some(b'\'') => return single_quoted(b, i + 1, cur),
            Some(x) => cur.push(x),
        }
        i += 1;
    }
}

/// The rest of a "..." word from `b[i]`: past its closing quote, which must end the word.
fn double_quoted(b: &[u8], mut i: usize, cur: &mut Vec<u8>) -> Option<usize> {
    let hex_at = |k: usize| b.get(k).and_then(|&x| hex(x));
    loop {
        match *b.get(i)? {
            b'\\' if b.get(i + 1) == Some(&b'x') && hex_at(i + 2).is_some() && hex_at(i + 3).is_some() => {
                cur.push(hex_at(i + 2)? * 16 + hex_at(i + 3)?);
                i += 3;
            }
            b'\\' if i + 1 < b.len() => {
                i += 1;
                cur.push(match b[i] {
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'b' => 8,
                    b'a' => 7,
                    x => x,
                });
            }
            b'"' => return closing_quote(b, i),
            x => cur.push(x),
        }
        i += 1;
    }
}

/// The rest of a '...' word from `b[i]` (\' is a quote): past its closing quote.
fn single_quoted(b: &[u8], mut i: usize, cur: &mut Vec<u8>) -> Option<usize> {
    loop {
        match *b.get(i)? {
            b'\\' if b.get(i + 1) == Some(&b'\'') => {
                i += 1;
                cur.push(b'\'');
            }
            b'\'' => return closing_quote(b, i),
            x => cur.push(x),
        }
        i += 1;
    }
}

/// Past the closing quote at `b[i]`; None when a character other than a blank follows it.
fn closing_quote(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i + 1).is_some_and(|x| !x.is_ascii_whitespace()) {
        return None;
    }
    Some(i + 1)
}

/// `--uri`: `redis[s]://[user[:password]@]host[:port][/db]` (`crate::base::uri`, memtier's rules);
/// applied after every other option, so it wins over -h, -p, -a and --select-db.
fn apply_uri(uri: &str, o: &mut MtOptions) -> Result<(), String> {
    let u = uri::parse(uri, Dialect::Memtier)?;
    o.tls.enabled |= u.tls;
    if let Some(auth) = u.userinfo {
        o.auth = Some(auth);
    }
    if let Some(db) = u.db {
        o.select_db = db;
    }
    if let Some(port) = u.port {
        o.port = port;
    }
    if let Some(host) = u.host {
        o.host = host;
    }
    Ok(())
}

fn validate(o: &MtOptions) -> Result<(), String> {
    // memtier counts connections in 32 bits; past 64 the product wrapped (to 0: a division).
    if o.clients.checked_mul(o.threads).is_none_or(|n| n > u32::MAX as usize) {
        return Err(format!("--clients × --threads ({} × {}) is over {} connections", o.clients, o.threads, u32::MAX));
    }
    if o.requests != Requests::Unset && o.test_time.is_some() {
        return Err("--test-time and --requests are mutually exclusive".into());
    }
    if o.time_limit.is_some() && o.test_time.is_some() {
        return Err("--time-limit caps a run bound by --requests; a --test-time run has nothing for it to cap".into());
    }
    if !o.commands.is_empty() {
        if o.key_pattern.is_some() {
            return Err("when using arbitrary command, key pattern is configured with --command-key-pattern option".into());
        }
        if o.ratio.is_some() {
            return Err("when using arbitrary command, ratio is configured with --command-ratio option".into());
        }
        let parallel = o.commands.iter().filter(|c| c.pattern == Pattern::Parallel).count();
        if parallel > 0 && parallel != o.commands.len() {
            return Err("parallel key-pattern must be configured to all commands".into());
        }
        if o.commands.iter().all(|c| c.ratio == 0) {
            return Err("at least one --command needs a --command-ratio above 0".into());
        }
    }
    if o.data_size.is_some() && o.data_size_range.is_some() {
        return Err("data-size cannot be used with data-size-list or data-size-range".into());
    }
    if o.key_min > o.key_max {
        return Err("key-minimum must not exceed key-maximum".into());
    }
    let (lo, hi) = o.connect_jitter_us;
    if lo > hi {
        return Err(format!("thread-conn-start-min-jitter-micros ({lo}) cannot be greater than thread-conn-start-max-jitter-micros ({hi})"));
    }
    validate_gaussian(o)?;
    validate_ramp(o)?;
    validate_modes(o)
}

/// memtier's staircase checks (its messages; memtier exits 1, kvload 2 as for all bad input).
fn validate_ramp(o: &MtOptions) -> Result<(), String> {
    let (s, st, d) = o.ramp_flags;
    let Some(r) = staircase::from_flags(s, st, d)? else { return Ok(()) };
    match staircase::refusal(&r, o.clients, o.test_time.is_some(), o.requests != Requests::Unset) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

fn uses(o: &MtOptions, p: Pattern) -> bool {
    if o.commands.is_empty() {
        let (s, g) = o.key_pattern_or_default();
        s == p || g == p
    } else {
        o.commands.iter().any(|c| c.pattern == p)
    }
}

fn validate_gaussian(o: &MtOptions) -> Result<(), String> {
    if (o.key_stddev > 0.0 || o.key_median > 0.0) && !uses(o, Pattern::Gaussian) {
        return Err("key-stddev and key-median are only allowed together with key-pattern set to G".into());
    }
    if o.key_median > 0.0 && (o.key_median < o.key_min as f64 || o.key_median > o.key_max as f64) {
        return Err("key-median must be between key-minimum and key-maximum".into());
    }
    Ok(())
}

fn validate_modes(o: &MtOptions) -> Result<(), String> {
    if o.cluster_mode {
        if o.socket.is_some() {
            return Err("cluster mode dose not support unix-socket option".into());
        }
        if o.select_db > 0 {
            return Err("database selection not supported in cluster mode. Redis Cluster only supports database 0".into());
        }
        if o.reconnect_every.is_some() {
            return Err("cluster mode dose not support reconnect-interval option".into());
        }
    }
    if o.tls.enabled && o.socket.is_some() {
        return Err("--tls cannot be used with --unix-socket".into());
    }
    if !o.read_servers.is_empty() && (o.cluster_mode || o.socket.is_some() || o.reconnect_every.is_some()) {
        return Err("--read-server names a standalone replica: not with --cluster-mode, --unix-socket or --reconnect-interval".into());
    }
    if o.scan_incremental {
        if o.pipeline != 1 {
            return Err("--scan-incremental-iteration requires --pipeline 1".into());
        }
        if o.cluster_mode {
            return Err("--scan-incremental-iteration is not supported in cluster mode".into());
        }
        let cursor_at = |c: &MtCommand| scan_cursor_index(&c.args[0]);
        match o.commands.as_slice() {
            [] => return Err("--scan-incremental-iteration requires --command with a SCAN command".into()),
            [c] if cursor_at(c).is_some_and(|at| c.args.len() > at) => {}
            [c] if cursor_at(c) == Some(1) => {
                return Err("SCAN command must have at least a cursor argument (e.g., 'SCAN 0')".into())
            }
            [c] if cursor_at(c).is_some() => {
                return Err("HSCAN, SSCAN and ZSCAN need a key and a cursor (e.g., 'ZSCAN myzset 0')".into())
            }
            [_] => return Err("--scan-incremental-iteration requires the command to be SCAN, HSCAN, SSCAN or ZSCAN".into()),
            _ => return Err("--scan-incremental-iteration requires exactly one --command (a SCAN command)".into()),
        }
    }
    Ok(())
}

/// Where a cursor-walking command takes its cursor: SCAN's first argument, the second of
/// HSCAN, SSCAN and ZSCAN (after the key); None for any other command.
pub fn scan_cursor_index(name: &[u8]) -> Option<usize> {
    if name.eq_ignore_ascii_case(b"SCAN") {
        Some(1)
    } else if [&b"HSCAN"[..], b"SSCAN", b"ZSCAN"].iter().any(|n| name.eq_ignore_ascii_case(n)) {
        Some(2)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<MtParsed, String> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    fn opts(args: &[&str]) -> MtOptions {
        match p(args) {
            Ok(MtParsed::Run(o)) => *o,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn defaults_are_memtiers() {
        let o = opts(&[]);
        assert_eq!((o.clients, o.threads, o.pipeline), (50, 4, 1));
        assert_eq!(o.ratio_or_default(), (1, 10));
        assert_eq!(o.key_prefix, "memtier-");
        assert_eq!((o.key_min, o.key_max), (0, 10_000_000));
        assert_eq!(o.requests_per_client(), Some(10_000));
        assert_eq!(o.data_max(), 32);
        assert_eq!(o.print_percentiles, vec![50.0, 99.0, 99.9]);
        assert_eq!(o.host, "localhost");
    }

    #[test]
    fn getopt_forms() {
        let o = opts(&["-c5", "-t", "2", "--pipeline=7", "--data-size", "100", "-Rx2"]);
        assert_eq!((o.clients, o.threads, o.pipeline, o.data_size), (5, 2, 7, Some(100)));
        assert!(o.random_data);
        assert_eq!(o.run_count, 2);
        // unique prefixes, last value wins
        let o = opts(&["--hide", "--pipeline", "100", "--pipeline", "50", "--key-max=9"]);
        assert!(o.hide_histogram);
        assert_eq!((o.pipeline, o.key_max), (50, 9));
        assert!(p(&["--key"]).is_err_and(|e| e.contains("ambiguous") || e.contains("requires")));
    }

    #[test]
    fn time_limit_caps_a_request_bound_run_only() {
        let o = opts(&["-n", "500", "--time-limit", "2"]);
        assert_eq!((o.requests_per_client(), o.time_limit, o.test_time), (Some(500), Some(2), None));
        assert_eq!(opts(&["--time-limit", "2"]).requests_per_client(), Some(10_000));
        let e = p(&["--test-time", "3", "--time-limit", "2"]).expect_err("refused");
        assert!(e.contains("--time-limit caps a run bound by --requests"), "{e}");
        assert!(p(&["--time-limit", "0"]).is_err_and(|e| e.contains("time-limit must be greater than zero")));
    }

    #[test]
    fn staircase_flags_parse_and_memtiers_refusals() {
        let o = opts(&["-c", "6", "--clients-start", "2", "--clients-step", "2", "--step-duration", "1", "--test-time", "3"]);
        assert_eq!(o.ramp(), Some(Ramp { start: 2, step: 2, step_s: 1 }));
        assert_eq!(opts(&["--test-time", "3"]).ramp(), None);
        let bad = [
            (&["--clients-start", "2", "--test-time", "3"][..], "must all be specified together"),
            (&["-c", "2", "--clients-start", "2", "--clients-step", "1", "--step-duration", "1", "--test-time", "3"], "--clients-start (2) must be less than --clients (2)"),
            (&["--clients-start", "2", "--clients-step", "1", "--step-duration", "1"], "--test-time is required"),
            (&["--clients-start", "2", "--clients-step", "1", "--step-duration", "1", "-n", "5"], "--requests cannot be used"),
            (&["--clients-step", "0"], "clients-step must be greater than zero"),
        ];
        for (args, why) in bad {
            let e = p(args).expect_err("refused");
            assert!(e.contains(why), "{args:?}: {e}");
        }
    }

    #[test]
    fn refusals_name_the_option() {
        for (args, name) in [
            (vec!["--wait-ratio=1:1"], "--wait-ratio"),
            (vec!["-D"], "--debug"),
            (vec!["--data-offset", "3"], "--data-offset"),
            (vec!["--expiry-range", "1-2"], "--expiry-range"),
            (vec!["-P", "memcache_text"], "--protocol=memcache_text"),
            (vec!["--command-stats-breakdown=line"], "--command-stats-breakdown=line"),
        ] {
            let e = p(&args).expect_err("refused");
            assert!(e.contains(name) && e.contains("not supported"), "{e}");
        }
        assert!(p(&["--no-such-option"]).unwrap_err().contains("--no-such-option"));
        assert!(p(&["stray"]).unwrap_err().contains("stray"));
    }

    #[test]
    fn option_interactions() {
        assert!(p(&["--command", "GET __key__", "--ratio", "1:1"]).unwrap_err().contains("--command-ratio"));
        assert!(p(&["--command", "GET __key__", "--key-pattern", "R:R"]).unwrap_err().contains("--command-key-pattern"));
        assert!(p(&["--command-ratio", "2"]).unwrap_err().contains("no arbitrary command"));
        assert!(p(&["--command", "SET __key__ __data__", "--command-key-pattern", "P", "--command", "GET __key__"])
            .unwrap_err()
            .contains("parallel"));
        assert!(p(&["--key-pattern", "P:R"]).is_err());
        assert!(p(&["--test-time", "1", "-n", "5"]).is_err());
        assert!(p(&["-n", "5", "--test-time", "1"]).is_err());
        assert!(p(&["--ratio", "0:0"]).is_err());
        assert!(p(&["--key-stddev", "5"]).unwrap_err().contains("G"));
        assert!(p(&["--data-size", "5", "--data-size-range", "1-9"]).is_err());
        // a value over 512 MiB was an allocation abort (issue 41)
        assert!(p(&["--data-size", "536870913"]).unwrap_err().contains("over the 536870912"));
        assert!(p(&["--data-size-range", "1-99999999999"]).unwrap_err().contains("over the 536870912"));
        assert!(p(&["--data-size", "536870912"]).is_ok());
        let o = opts(&["--command", "HSET __key__ f __data__", "--command-ratio", "2", "--command-key-pattern=S", "--command", "HGET __key__ f"]);
        assert_eq!(o.commands.len(), 2);
        assert_eq!((o.commands[0].ratio, o.commands[0].pattern), (2, Pattern::Sequential));
        assert_eq!((o.commands[1].ratio, o.commands[1].pattern), (1, Pattern::Random));
        assert_eq!(opts(&["--test-time", "3"]).requests_per_client(), None);
    }

    /// Found while writing `props` (review, not a generated case): -c × -t past 64 bits wrapped
    /// to 0 and `-n allkeys` with P:P divided by it (a panic).
    #[test]
    fn clients_times_threads_past_the_limit_is_refused() {
        let e = p(&["-c", "4294967296", "-t", "4294967296", "-n", "allkeys", "--key-pattern", "P:P"]).unwrap_err();
        assert!(e.contains("--clients") && e.contains("--threads"), "{e}");
    }

    #[test]
    fn allkeys_requests() {
        let o = opts(&["-n", "allkeys", "--key-pattern", "P:P", "--key-minimum", "1", "--key-maximum", "1000", "-c", "2", "-t", "2"]);
        assert_eq!(o.requests_per_client(), Some(999 / 4 + 1));
        let o = opts(&["-n", "allkeys", "--key-minimum", "1", "--key-maximum", "1000"]);
        assert_eq!(o.requests_per_client(), Some(999));
        // a one-key range: memtier prints 0, then its default 10,000 applies (the corpus'
        // 1key-hash-hscan-* preloads: 0 requests, no key, before this)
        let o = opts(&["-n", "allkeys", "--command", "HSET __key__ f __data__", "--command-key-pattern=P", "--key-minimum=1", "--key-maximum", "1"]);
        assert_eq!((o.allkeys_count(), o.requests_per_client()), (0, Some(10_000)));
    }

    #[test]
    fn command_splitting() {
        assert_eq!(split_args("SET __key__ \"a b\" 'c d'").unwrap(), vec![b"SET".to_vec(), b"__key__".to_vec(), b"a b".to_vec(), b"c d".to_vec()]);
        assert_eq!(split_args("X \"\\x41\\n\"").unwrap()[1], b"A\n");
        assert!(split_args("X \"abc\"d").is_none());
        assert!(split_args("X \"abc").is_none());
        assert!(p(&["--command", "SET k x__data__"]).is_err());
        assert!(p(&["--command", "   "]).is_err());
    }

    #[test]
    fn uri_and_protocol() {
        let o = opts(&["--uri", "rediss://bob:pw@example:7000/2", "-P", "resp3"]);
        assert!(o.tls.enabled);
        assert_eq!(o.auth.as_deref(), Some("bob:pw"));
        assert_eq!((o.host.as_str(), o.port, o.select_db), ("example", 7000, 2));
        assert_eq!(o.protocol, Protocol::Resp3);
        // The URI wins over -h/-p whatever the order; what it leaves out keeps its value.
        let o = opts(&["-u", "redis://:7001", "-h", "elsewhere", "-p", "1", "-a", "pw"]);
        assert_eq!((o.host.as_str(), o.port, o.auth.as_deref(), o.tls.enabled), ("elsewhere", 7001, Some("pw"), false));
        assert_eq!(p(&["--uri", "redis://h:0"]), Err("invalid port number '0'".into()));
    }

    #[test]
    fn every_table_option_is_handled_or_refused() {
        for e in super::super::table::TABLE {
            let arg = if e.takes_value() { format!("--{}=1", e.long) } else { format!("--{}", e.long) };
            let r = p(&[&arg]);
            match e.refused() {
                Some(why) => assert_eq!(r, Err(not_supported(e.long, why)), "{arg}"),
                None => assert!(!matches!(&r, Err(m) if m.contains("has no handler")), "{arg} is in table::TABLE but apply has no arm for it: {r:?}"),
            }
            for (value, why) in e.refused_values {
                assert_eq!(p(&[&format!("--{}={value}", e.long)]), Err(not_supported(&format!("{}={value}", e.long), why)));
            }
        }
        assert_eq!(p(&["--command-stats-breakdown=LINE"]), p(&["--command-stats-breakdown=line"]));
    }

    /// The option names `func`'s match arms name (`"a" =>`, `"a" | "b" if ... =>`).
    fn names_matched_in(src: &str, func: &str) -> Vec<String> {
        let start = src.find(func).unwrap_or_else(|| panic!("{func} not found"));
        let body = &src[start..start + src[start..].find("\n}\n").expect("end of fn")];
        let mut names = Vec::new();
        for line in body.lines() {
            let mut rest = line.trim_start();
            while let Some(r) = rest.strip_prefix('"') {
                let end = r.find('"').expect("closing quote");
                names.push(r[..end].to_string());
                match r[end + 1..].trim_start().strip_prefix('|') {
                    Some(more) => rest = more.trim_start(),
                    None => break,
                }
            }
        }
        names
    }

    #[test]
    fn every_option_apply_handles_is_a_supported_table_option() {
        use std::collections::BTreeSet;
        let src = include_str!("options.rs");
        let handled: BTreeSet<String> =
            ["pub fn parse(", "fn apply(", "fn apply_tls("].iter().flat_map(|f| names_matched_in(src, f)).collect();
        let supported: BTreeSet<String> =
            super::super::table::TABLE.iter().filter(|e| e.refused().is_none()).map(|e| e.long.to_string()).collect();
        let not_in_table: Vec<&String> = handled.difference(&supported).collect();
        let not_handled: Vec<&String> = supported.difference(&handled).collect();
        assert!(not_in_table.is_empty(), "apply handles options table::TABLE does not have (or refuses): {not_in_table:?}");
        assert!(not_handled.is_empty(), "table::TABLE options apply does not handle: {not_handled:?}");
    }

    #[test]
    fn scan_rules() {
        assert!(opts(&["--command", "SCAN 0 COUNT 10", "--scan-incremental-iteration"]).scan_incremental);
        assert!(p(&["--command", "SCAN 0", "--scan-incremental-iteration", "--pipeline", "2"]).is_err());
        assert!(p(&["--command", "GET __key__", "--scan-incremental-iteration"]).is_err());
        assert!(opts(&["--command", "ZSCAN z 0", "--scan-incremental-iteration"]).scan_incremental);
        assert!(p(&["--command", "HSCAN h", "--scan-incremental-iteration"]).unwrap_err().contains("a key and a cursor"));
        assert!(p(&["--scan-incremental-iteration"]).is_err());
    }
}
