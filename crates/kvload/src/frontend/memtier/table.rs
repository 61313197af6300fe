//! memtier options: the one table of every option memtier_benchmark knows (and kvload's
//! additions) — long name, short letter, value, help text, and whether kvload supports it
//! or why it refuses it. `options` parses by it, `--help` is printed from it, and
//! `kvload memtier --options-json` prints it for kvperf (src/kvperf/definitions/).

use std::fmt;

use serde_json::{json, Value};

/// `--options-json`'s format name and version.
/// Version 1: {"format", "version", "options": [{"name", "short", "takes_value",
/// "value_name", "help", "section", "supported", "refused", "refused_values":
/// [{"value", "reason"}]}]}, options in memtier's order.
pub const JSON_FORMAT: &str = "kvload-memtier-options";
pub const JSON_VERSION: u32 = 1;

/// The `--help` heading an option is listed under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Connection,
    Output,
    Test,
    Commands,
    Data,
}

use Section::{Commands, Connection, Data, Output, Test};

const SECTIONS: [(Section, &str); 5] = [
    (Connection, "Connection"),
    (Output, "Output"),
    (Test, "Test"),
    (Commands, "Arbitrary commands"),
    (Data, "Data and keys"),
];

impl Section {
    pub fn title(self) -> &'static str {
        SECTIONS.iter().find(|(s, _)| *s == self).map_or("", |(_, t)| t)
    }
}

/// What kvload does with an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Supported and listed in `--help` under this heading.
    Listed(Section),
    /// Supported, not listed (memtier's --help and --version; values that change nothing).
    Unlisted,
    /// Refused by name; the text says why.
    No(&'static str),
}

use Support::{Listed, No, Unlisted};

#[derive(Debug)]
pub struct MtOption {
    pub long: &'static str,
    pub short: Option<char>,
    /// The value's name in `--help` (`--port=PORT`); None: the option takes no value.
    pub value: Option<&'static str>,
    pub help: &'static str,
    pub support: Support,
    /// Values kvload refuses although it takes the option: (value, why).
    pub refused_values: &'static [(&'static str, &'static str)],
}

impl MtOption {
    pub fn takes_value(&self) -> bool {
        self.value.is_some()
    }

    pub fn refused(&self) -> Option<&'static str> {
        match self.support {
            No(why) => Some(why),
            _ => None,
        }
    }

    /// Why kvload refuses this value of the option, if it does.
    pub fn refused_value(&self, v: &str) -> Option<&'static str> {
        self.refused_values.iter().find(|(value, _)| *value == v).map(|(_, why)| *why)
    }

    const fn refusing(self, values: &'static [(&'static str, &'static str)]) -> MtOption {
        MtOption { refused_values: values, ..self }
    }
}

/// One table row: `short` '-' for none, `value` "" for a flag.
const fn opt(short: char, long: &'static str, value: &'static str, support: Support, help: &'static str) -> MtOption {
    MtOption {
        long,
        short: if short == '-' { None } else { Some(short) },
        value: if value.is_empty() { None } else { Some(value) },
        help,
        support,
        refused_values: &[],
    }
}

const RECONNECT: Support = No("reconnecting is not implemented");
const VERIFY: Support = No("data verification is not implemented");
const IMPORT_ONLY: Support = No("only with --data-import, which is not implemented");
const WAIT: Support = No("WAIT commands are not implemented");
const MONITOR: Support = No("MONITOR replay is not implemented");
const STATSD: Support = No("StatsD export is not implemented");
const NOT_IMPLEMENTED: Support = No("not implemented");
const ADDRESS_FAMILY: Support = No("address family selection is not implemented");

/// Every option, in memtier's order (its `long_options`), then kvload's own.
pub const TABLE: &[MtOption] = &[
    opt('s', "server", "ADDR", Listed(Connection), "Server address (default: localhost)"),
    opt('h', "host", "ADDR", Listed(Connection), "Server address, as --server"),
    opt('p', "port", "PORT", Listed(Connection), "Server port (default: 6379)"),
    opt('S', "unix-socket", "SOCKET", Listed(Connection), "UNIX domain socket"),
    opt('4', "ipv4", "", ADDRESS_FAMILY, "Connect over IPv4 only"),
    opt('6', "ipv6", "", ADDRESS_FAMILY, "Connect over IPv6 only"),
    opt('P', "protocol", "PROTOCOL", Listed(Connection), "redis (default), resp2, or resp3 (HELLO 3)")
        .refusing(&[("memcache_text", "Redis protocol only"), ("memcache_binary", "Redis protocol only")]),
    opt('-', "tls", "", Listed(Connection), "Connect over TLS"),
    opt('-', "cert", "FILE", Listed(Connection), "TLS client certificate"),
    opt('-', "key", "FILE", Listed(Connection), "TLS client private key"),
    opt('-', "cacert", "FILE", Listed(Connection), "CA certificate to verify the server with"),
    opt('-', "tls-skip-verify", "", Listed(Connection), "Skip server certificate verification"),
    opt('-', "sni", "NAME", Listed(Connection), "TLS server name indication"),
    opt('-', "tls-protocols", "LIST", No("TLS versions are rustls' safe defaults (1.2, 1.3)"), "TLS protocol versions to allow"),
    opt('o', "out-file", "FILE", Listed(Output), "Text results to FILE (default: stdout)"),
    opt('-', "hdr-file-prefix", "PREFIX", No("use --kvload-json for HDR histograms"), "Write HDR histogram files named PREFIX..."),
    opt('-', "client-stats", "PREFIX", No("per-client stats files are not written"), "Write per-client stats files named PREFIX..."),
    opt('x', "run-count", "NUMBER", Listed(Output), "Run the test NUMBER times (best, worst, average)"),
    opt('D', "debug", "", No("there is no debug log"), "Print debug output"),
    opt('-', "show-config", "", NOT_IMPLEMENTED, "Print the configuration before the run"),
    opt('-', "hide-histogram", "", Listed(Output), "Don't print the latency distribution"),
    opt('-', "print-percentiles", "LIST", Listed(Output), "Percentiles in the table and JSON (default: 50,99,99.9)"),
    opt('-', "print-all-runs", "", Listed(Output), "With -x, print every run too"),
    opt('-', "distinct-client-seed", "", Listed(Test), "Each client its own random seed (default: all the same)"),
    opt('-', "randomize", "", Listed(Test), "Random seed from the clock (default: a constant)"),
    opt('n', "requests", "NUMBER|allkeys", Listed(Test), "Requests per client (default: 10000)"),
    opt('c', "clients", "NUMBER", Listed(Test), "Clients (connections) per thread (default: 50)"),
    opt('t', "threads", "NUMBER", Listed(Test), "Threads (default: 4)"),
    opt('-', "test-time", "SECS", Listed(Test), "Run SECS seconds instead of -n"),
    opt('-', "ratio", "SET:GET", Listed(Test), "SET:GET ratio (default: 1:10)"),
    opt('-', "pipeline", "NUMBER", Listed(Test), "Requests in flight per connection (default: 1)"),
    opt('d', "data-size", "SIZE", Listed(Data), "Value size (default: 32)"),
    opt('-', "data-offset", "OFFSET", No("SETRANGE/GETRANGE mode is not implemented"), "SETRANGE/GETRANGE at OFFSET instead of SET/GET"),
    opt('R', "random-data", "", Listed(Data), "Random value bytes"),
    opt('-', "data-size-range", "MIN-MAX", Listed(Data), "Random value sizes in [MIN, MAX]"),
    opt('-', "data-size-list", "SIZE:WEIGHT,...", No("weighted size lists are not implemented"), "Value sizes drawn by weight"),
    opt('-', "data-size-pattern", "R|S", Unlisted, "How --data-size-range sizes are drawn: R at random, S in order")
        .refusing(&[("S", "sizes are drawn at random")]),
    opt('-', "expiry-range", "MIN-MAX", No("expiring SETs are not implemented"), "SET with an expiry in [MIN, MAX] seconds"),
    opt('-', "data-import", "FILE", No("importing data is not implemented"), "Read keys and values from FILE"),
    opt('-', "data-verify", "", VERIFY, "Check the values read against the ones written"),
    opt('-', "verify-only", "", VERIFY, "Only check data written before"),
    opt('-', "generate-keys", "", IMPORT_ONLY, "With --data-import, generate the keys"),
    opt('-', "key-prefix", "PREFIX", Listed(Data), "Key prefix (default: memtier-)"),
    opt('-', "key-minimum", "N", Listed(Data), "Smallest key number (default: 0)"),
    opt('-', "key-maximum", "N", Listed(Data), "Largest key number (default: 10000000)"),
    opt('-', "key-pattern", "SET:GET", Listed(Data), "R, G, S, P or Z each (default: R:R)"),
    opt('-', "key-stddev", "N", Listed(Data), "Standard deviation of G (default: key range / 6)"),
    opt('-', "key-median", "N", Listed(Data), "Median of G (default: the middle of the key range)"),
    opt('-', "key-zipf-exp", "EXP", Listed(Data), "Exponent of Z, in (0, 5) (default: 1)"),
    opt('-', "reconnect-interval", "NUM", Listed(Connection), "Reconnect after every NUM requests of a client"),
    opt('-', "reconnect-on-error", "", RECONNECT, "Reconnect after a connection error"),
    opt('-', "max-reconnect-attempts", "NUM", RECONNECT, "Give up after NUM reconnection attempts"),
    opt('-', "reconnect-backoff-factor", "NUM", RECONNECT, "Backoff factor between reconnection attempts"),
    opt('-', "connection-timeout", "SECS", NOT_IMPLEMENTED, "Connection timeout"),
    opt('-', "thread-conn-start-min-jitter-micros", "NUM", Listed(Connection), "Least delay between a thread's client connects"),
    opt('-', "thread-conn-start-max-jitter-micros", "NUM", Listed(Connection), "Most delay between a thread's client connects (default: 0)"),
    opt('-', "multi-key-get", "NUM", No("MGET mode is not implemented"), "GET up to NUM keys with one MGET"),
    opt('a', "authenticate", "CREDENTIALS", Listed(Connection), "PASSWORD or USER:PASSWORD"),
    opt('u', "uri", "URI", Listed(Connection), "redis[s]://user:password@host:port/dbnum"),
    opt('-', "select-db", "DB", Listed(Connection), "SELECT db on every connection"),
    opt('-', "no-expiry", "", IMPORT_ONLY, "With --data-import, ignore the expiry times"),
    opt('-', "wait-ratio", "SET:WAIT", WAIT, "SET:WAIT ratio"),
    opt('-', "num-slaves", "MIN-MAX", WAIT, "Replicas a WAIT waits for"),
    opt('-', "wait-timeout", "MIN-MAX", WAIT, "WAIT timeout in milliseconds"),
    opt('-', "json-out-file", "FILE", Listed(Output), "memtier's JSON layout (\"ALL STATS\" -> \"Totals\" -> ...)"),
    opt('-', "cluster-mode", "", Listed(Connection), "Route each key to the primary owning its slot"),
    opt('-', "read-preference", "MODE", Listed(Connection), "Where reads go: primary (default), secondary (a replica of\nthe shard, in turn), secondaryPreferred (else the primary)")
        .refusing(&[("nearest", "latency-aware routing is not implemented")]),
    opt('-', "read-preference-fallback", "MODE", No("not implemented: secondary with a shard lacking a replica is an error"), "What secondary does without a live replica"),
    opt('-', "read-server", "HOST:PORT", Listed(Connection), "A standalone replica that reads go to (repeatable)"),
    opt('-', "replica-clients", "N", NOT_IMPLEMENTED, "Connections per replica"),
    opt('-', "replicas-per-shard", "N", NOT_IMPLEMENTED, "Replicas expected per shard"),
    opt('-', "command-is-read", "", NOT_IMPLEMENTED, "Mark the last command a read"),
    opt('-', "help", "", Unlisted, "Print this help"),
    opt('v', "version", "", Unlisted, "Print the version"),
    opt('-', "command", "COMMAND", Listed(Commands), "Repeatable; __key__ (may have a prefix/suffix) and __data__"),
    opt('-', "command-key-pattern", "R|G|S|P|Z", Listed(Commands), "Key pattern of the last command (default: R)"),
    opt('-', "command-ratio", "N", Listed(Commands), "Send the last command N times in a row (default: 1)"),
    opt('-', "monitor-input", "FILE", MONITOR, "Replay the commands of a MONITOR output file"),
    opt('-', "monitor-pattern", "S|R", MONITOR, "Replay them in order (S) or at random (R)"),
    opt('-', "command-stats-breakdown", "command|line", Unlisted, "Stats rows per command name or per command line")
        .refusing(&[("line", "stats are by command")]),
    opt('-', "rate-limiting", "RPS", Listed(Test), "Requests per second per connection"),
    opt('-', "statsd-host", "HOST", STATSD, "Send metrics to this StatsD host"),
    opt('-', "statsd-port", "PORT", STATSD, "StatsD port"),
    opt('-', "statsd-prefix", "PREFIX", STATSD, "StatsD metric prefix"),
    opt('-', "statsd-run-label", "LABEL", STATSD, "StatsD run label"),
    opt('-', "graphite-port", "PORT", No("Graphite export is not implemented"), "Graphite port for run annotations"),
    opt('-', "scan-incremental-iteration", "", Listed(Commands), "Follow SCAN cursors (one SCAN command, --pipeline 1)"),
    opt('-', "scan-incremental-max-iterations", "N", Listed(Commands), "Restart a cursor at 0 after N SCANs (default: 0, when it ends)"),
    opt('-', "clients-start", "N", Listed(Test), "Staircase: clients per thread at the first step (< -c; needs --test-time)"),
    opt('-', "clients-step", "N", Listed(Test), "Staircase: clients per thread added at each step, up to -c"),
    opt('-', "step-duration", "SECS", Listed(Test), "Staircase: seconds per step (the last runs to the end)"),
    // kvload's own additions.
    opt('-', "kvload-json", "FILE", Listed(Output), "kvload's versioned JSON report (HDR histograms) of the same runs"),
    opt('-', "time-limit", "SECS", Listed(Test), "kvload's: a run bound by --requests also stops sending after\nSECS (whichever comes first); every reply in flight is waited for"),
    opt('-', "io", "uring|epoll", Listed(Output), "kvload's event loop (default: io_uring when the kernel allows\nit, else epoll with a note; TLS always runs on epoll)"),
];

/// getopt_long: the exact long name, else the one option it is a prefix of.
pub fn find_long(name: &str) -> Result<&'static MtOption, String> {
    if let Some(o) = TABLE.iter().find(|o| o.long == name) {
        return Ok(o);
    }
    let matches: Vec<&MtOption> = TABLE.iter().filter(|o| o.long.starts_with(name)).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("unrecognized option '--{name}'")),
        _ => Err(format!("option '--{name}' is ambiguous")),
    }
}

pub fn find_short(c: char) -> Result<&'static MtOption, String> {
    TABLE.iter().find(|o| o.short == Some(c)).ok_or_else(|| format!("invalid option -- '{c}'"))
}

/// `kvload memtier --help`: the listed options of `TABLE` by section.
pub struct Help;

pub const HELP: Help = Help;

const HELP_HEAD: &str = "\
Usage: kvload memtier [options]    (or a link to kvload named memtier_benchmark)
A memtier_benchmark-compatible front end of kvload (Redis protocol only).

";
const HELP_TAIL: &str = "\
Every other memtier_benchmark option is refused by name (exit status 2);
`kvload memtier --options-json` lists them all with kvload's reasons.
";
/// Where the help text starts.
const HELP_COLUMN: usize = 33;

impl fmt::Display for Help {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(HELP_HEAD)?;
        for (section, title) in SECTIONS {
            writeln!(f, "{title}:")?;
            for o in TABLE.iter().filter(|o| o.support == Listed(section)) {
                help_line(f, o)?;
            }
        }
        f.write_str(HELP_TAIL)
    }
}

fn help_line(f: &mut fmt::Formatter, o: &MtOption) -> fmt::Result {
    let short = o.short.map_or("    ".to_string(), |c| format!("-{c}, "));
    let value = o.value.map_or(String::new(), |v| format!("={v}"));
    let left = format!("  {short}--{}{value}", o.long);
    let pad = if left.len() < HELP_COLUMN { HELP_COLUMN - left.len() } else { 2 };
    let indent = format!("\n{:HELP_COLUMN$}", "");
    writeln!(f, "{left}{:pad$}{}", "", o.help.replace('\n', &indent))
}

/// `kvload memtier --options-json`: `TABLE` as versioned JSON.
pub fn options_json() -> String {
    let options: Vec<Value> = TABLE
        .iter()
        .map(|o| {
            let refused_values: Vec<Value> = o.refused_values.iter().map(|(v, why)| json!({"value": v, "reason": why})).collect();
            json!({
                "name": o.long,
                "short": o.short.map(String::from),
                "takes_value": o.takes_value(),
                "value_name": o.value,
                "help": o.help,
                "section": match o.support { Listed(s) => Some(s.title()), _ => None },
                "supported": o.refused().is_none(),
                "refused": o.refused(),
                "refused_values": refused_values,
            })
        })
        .collect();
    format!("{:#}\n", json!({"format": JSON_FORMAT, "version": JSON_VERSION, "options": options}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_letters_are_unique() {
        for (i, o) in TABLE.iter().enumerate() {
            assert!(TABLE[i + 1..].iter().all(|p| p.long != o.long), "--{} twice", o.long);
            assert!(o.short.is_none() || TABLE[i + 1..].iter().all(|p| p.short != o.short), "-{:?} twice", o.short);
            assert!(!o.help.is_empty(), "--{} has no help text", o.long);
            assert!(o.refused().is_none() || o.refused_values.is_empty(), "--{}: refused, and some values too", o.long);
        }
    }

    #[test]
    fn help_lists_exactly_the_listed_options() {
        let help = HELP.to_string();
        for o in TABLE {
            let shown = help.contains(&format!("--{}{}", o.long, o.value.map_or(" ".to_string(), |v| format!("={v}"))));
            assert_eq!(shown, matches!(o.support, Listed(_)), "--{} in --help: {shown}", o.long);
        }
        assert!(help.starts_with("Usage: kvload memtier [options]"));
        assert!(help.contains("  -p, --port=PORT                Server port (default: 6379)\n"));
        assert!(help.contains("      --io=uring|epoll           kvload's event loop (default: io_uring when the kernel allows\n                                 it, else"));
        assert!(help.ends_with("with kvload's reasons.\n"));
    }

    #[test]
    fn options_json_is_the_table() {
        let v: Value = serde_json::from_str(&options_json()).expect("valid JSON");
        assert_eq!((v["format"].as_str(), v["version"].as_u64()), (Some(JSON_FORMAT), Some(1)));
        let options = v["options"].as_array().expect("options");
        assert_eq!(options.len(), TABLE.len());
        let port = &options[2];
        assert_eq!(port["name"], "port");
        assert_eq!(port["short"], "p");
        assert_eq!((port["takes_value"].as_bool(), port["supported"].as_bool()), (Some(true), Some(true)));
        assert_eq!((port["refused"].is_null(), port["section"].as_str()), (true, Some("Connection")));
        let wait = options.iter().find(|o| o["name"] == "wait-ratio").expect("wait-ratio");
        assert!(wait["refused"].is_string());
        assert_eq!(wait["supported"], false);
        let pattern = options.iter().find(|o| o["name"] == "data-size-pattern").expect("data-size-pattern");
        assert_eq!(pattern["refused_values"], json!([{"value": "S", "reason": "sizes are drawn at random"}]));
        assert!(pattern["section"].is_null());
    }
}
