//! spec: tests → commands → RESP templates pre-encoded once, with patch offsets.

/// All test names accepted by `-t`, in the order they run.
pub const TEST_NAMES: &[&str] = &[
    "ping_inline", "ping_mbulk", "set", "get", "incr", "lpush", "rpush", "lpop", "rpop", "sadd",
    "hset", "spop", "zadd", "zpopmin", "lrange_100", "lrange_300", "lrange_500", "lrange_600",
    "mset", "mget", "xadd",
];
/// Group aliases accepted by `-t` on top of TEST_NAMES.
pub const TEST_ALIASES: &[&str] = &["ping", "lrange"];

pub const RAND: &[u8] = b"__rand_int__";
pub const TAG: &[u8] = b"{tag}";
const DATA: &str = "__data__";
/// Most `__rand_int__` occurrences allowed in one command.
pub const MAX_OCC: usize = 64;

/// One test: a display name and a sequence of commands (each a list of arguments).
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub name: String,
    pub commands: Vec<Vec<Vec<u8>>>,
}

/// One encoded instance of a spec plus where to patch it.
#[derive(Debug, Clone)]
pub struct Template {
    pub bytes: Vec<u8>,
    pub ncmds: usize,
    /// (offset of the 12-byte field, occurrence index within its command)
    pub rand: Vec<(u32, u8)>,
    pub nocc: usize,
    /// offsets of `{tag}` (5 bytes) fields.
    pub tags: Vec<u32>,
    /// Start offset of each command, plus the total length at the end.
    pub cmd_starts: Vec<u32>,
    /// Cluster routing key: (offset, length) in `bytes` of the key of the first
    /// command of the sequence that takes a key (see `key_index`), when that key
    /// has no `{tag}`. None: no such key (keys with `{tag}` are routed by the tag).
    pub key: Option<(u32, u32)>,
    /// Indices into `rand` of the `__rand_int__` fields inside `key`.
    pub key_rand: std::ops::Range<usize>,
}

/// Commands whose first argument is not a key (or that take no key): they do not
/// pick a routing key in cluster mode.
const KEYLESS: &[&[u8]] = &[
    b"ACL", b"AUTH", b"BGREWRITEAOF", b"BGSAVE", b"CLIENT", b"CLUSTER", b"COMMAND", b"CONFIG",
    b"DBSIZE", b"DEBUG", b"DISCARD", b"ECHO", b"EXEC", b"FLUSHALL", b"FLUSHDB", b"FUNCTION",
    b"HELLO", b"INFO", b"KEYS", b"LASTSAVE", b"LATENCY", b"LOLWUT", b"MEMORY", b"MODULE",
    b"MULTI", b"OBJECT", b"PING", b"PUBLISH", b"PUBSUB", b"RANDOMKEY", b"READONLY",
    b"READWRITE", b"ROLE", b"SAVE", b"SCAN", b"SCRIPT", b"SELECT", b"SLOWLOG", b"SWAPDB",
    b"TIME", b"UNWATCH", b"WAIT",
];

/// Index of the argument that is the command's (first) key: argv[1] for ordinary
/// commands, argv[3] for EVAL/EVALSHA/FCALL(_RO) with numkeys > 0, None for
/// keyless commands.
pub fn key_index(cmd: &[Vec<u8>]) -> Option<usize> {
    let name = cmd.first()?.to_ascii_uppercase();
    let n = name.as_slice();
    if matches!(n, b"EVAL" | b"EVALSHA" | b"EVAL_RO" | b"EVALSHA_RO" | b"FCALL" | b"FCALL_RO") {
        let numkeys: u64 = std::str::from_utf8(cmd.get(2)?).ok()?.parse().ok()?;
        return (numkeys > 0 && cmd.len() > 3).then_some(3);
    }
    if KEYLESS.contains(&n) || cmd.len() < 2 {
        return None;
    }
    Some(1)
}

fn words(s: &str) -> Vec<Vec<u8>> {
    s.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

fn one(name: &str, cmd: Vec<Vec<u8>>) -> Spec {
    Spec { name: name.to_string(), commands: vec![cmd] }
}

fn with_data(s: &str, data: &[u8]) -> Vec<Vec<u8>> {
    let mut v = words(s);
    v.push(data.to_vec());
    v
}

/// Deterministic printable payload of `n` bytes.
pub fn payload(n: usize) -> Vec<u8> {
    let mut state: u32 = 0x2545_f491;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            b'0' + (state % 64) as u8
        })
        .collect()
}

/// What the built-in suite is run with: `-t` (None: every test), `--cluster` (keys get a
/// `{tag}`), `-d` and whether `-r` was given (ZADD's score is then `__rand_int__`).
pub struct Suite<'a> {
    pub tests: Option<&'a [String]>,
    pub cluster: bool,
    pub data_size: usize,
    pub randomize: bool,
}

/// One built-in test's arguments, formatted with the suite's tag and payload.
struct Maker<'a> {
    s: &'a Suite<'a>,
    /// `:{tag}` in cluster mode, else empty.
    t: &'static str,
    d: Vec<u8>,
    out: Vec<Spec>,
}

impl Maker<'_> {
    /// Whether `-t` selects any of `names`.
    fn has(&self, names: &[&str]) -> bool {
        match self.s.tests {
            None => true,
            Some(t) => t.iter().any(|x| names.contains(&x.as_str())),
        }
    }

    fn add(&mut self, names: &[&str], name: &str, cmd: Vec<Vec<u8>>) {
        if self.has(names) {
            self.out.push(one(name, cmd));
        }
    }

    fn strings(&mut self) {
        let (t, d) = (self.t, self.d.clone());
        self.add(&["ping_inline", "ping"], "PING_INLINE", vec![b"PING".to_vec()]);
        self.add(&["ping_mbulk", "ping"], "PING_MBULK", vec![b"PING".to_vec()]);
        self.add(&["set"], "SET", with_data(&format!("SET key{t}:__rand_int__"), &d));
        self.add(&["get"], "GET", words(&format!("GET key{t}:__rand_int__")));
        self.add(&["incr"], "INCR", words(&format!("INCR counter{t}:__rand_int__")));
    }

    fn lists_sets_hashes(&mut self) {
        let (t, d) = (self.t, self.d.clone());
        for (n, c) in [("lpush", "LPUSH"), ("rpush", "RPUSH")] {
            self.add(&[n], c, with_data(&format!("{c} mylist{t}"), &d));
        }
        for (n, c) in [("lpop", "LPOP"), ("rpop", "RPOP")] {
            self.add(&[n], c, words(&format!("{c} mylist{t}")));
        }
        self.add(&["sadd"], "SADD", words(&format!("SADD myset{t} element:__rand_int__")));
        self.add(&["hset"], "HSET", with_data(&format!("HSET myhash{t} element:__rand_int__"), &d));
        self.add(&["spop"], "SPOP", words(&format!("SPOP myset{t}")));
        let score = if self.s.randomize { "__rand_int__" } else { "0" };
        self.add(&["zadd"], "ZADD", words(&format!("ZADD myzset{t} {score} element:__rand_int__")));
        self.add(&["zpopmin"], "ZPOPMIN", words(&format!("ZPOPMIN myzset{t}")));
    }

    fn lranges(&mut self) {
        let (t, d) = (self.t, self.d.clone());
        let lr = ["lrange", "lrange_100", "lrange_300", "lrange_500", "lrange_600"];
        self.add(&lr, "LPUSH (needed to benchmark LRANGE)", with_data(&format!("LPUSH mylist{t}"), &d));
        for n in [100, 300, 500, 600] {
            let tn = format!("lrange_{n}");
            let name = format!("LRANGE_{n} (first {n} elements)");
            self.add(&["lrange", tn.as_str()], &name, words(&format!("LRANGE mylist{t} 0 {}", n - 1)));
        }
    }

    fn multi_keys_and_streams(&mut self) {
        let (t, d) = (self.t, self.d.clone());
        let key = format!("key{t}:__rand_int__");
        let mut mset = vec![b"MSET".to_vec()];
        for _ in 0..10 {
            mset.push(key.as_bytes().to_vec());
            mset.push(d.clone());
        }
        self.add(&["mset"], "MSET (10 keys)", mset);
        let mut mget = vec![b"MGET".to_vec()];
        mget.extend((0..10).map(|_| key.as_bytes().to_vec()));
        self.add(&["mget"], "MGET (10 keys)", mget);
        self.add(&["xadd"], "XADD", with_data(&format!("XADD mystream{t} * myfield"), &d));
    }
}

/// The built-in suite in valkey-benchmark's order, filtered by `-t`.
pub fn builtin(s: &Suite) -> Vec<Spec> {
    let t = if s.cluster { ":{tag}" } else { "" };
    let mut m = Maker { s, t, d: payload(s.data_size), out: Vec::new() };
    m.strings();
    m.lists_sets_hashes();
    m.lranges();
    m.multi_keys_and_streams();
    m.out
}

/// Splits one string into words; double quotes group, backslash escapes inside quotes.
fn split_line(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => cur.push(chars.next().ok_or("unterminated quote")?),
                        Some(x) => cur.push(x),
                        None => return Err("unterminated quote in command".into()),
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    Ok(out)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A command file's word with its placeholders expanded: memtier's `__key__` and a second
/// key `__key2__` as `key:__rand_int__` (each drawn on its own: command files run with
/// independent keys), `__fields:N__` as `field:0 … field:N-1` and `__field_values:N__` as
/// `field:0 __data__ …` (1 ≤ N ≤ 1000), as kvperf's configs expand them.
fn expand_word(word: &str, line: usize, out: &mut Vec<String>) -> Result<(), String> {
    for (prefix, valued) in [("__fields:", false), ("__field_values:", true)] {
        let Some(count) = word.strip_prefix(prefix).and_then(|r| r.strip_suffix("__")) else { continue };
        let n = count.parse::<usize>().ok().filter(|n| (1..=1000).contains(n));
        let Some(n) = n else {
            return Err(format!("--command-file line {line}: {word:?}: a field list holds 1 to 1000 fields"));
        };
        for i in 0..n {
            out.push(format!("field:{i}"));
            if valued {
                out.push("__data__".into());
            }
        }
        return Ok(());
    }
    out.push(word.replace("__key2__", "key:__rand_int__").replace("__key__", "key:__rand_int__"));
    Ok(())
}

/// A command file (`--command-file`): lines of `WEIGHT COMMAND ARGS…` (`#` comments) as
/// one sequence's words — each command repeated its weight over the weights' common
/// divisor, `;` between them (at most 64 a cycle), placeholders by `expand_word` — so each
/// cycle runs exactly the asked shares.
pub fn command_file(text: &str) -> Result<Vec<String>, String> {
    let mut entries: Vec<(u64, Vec<String>)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split('#').next().unwrap_or("").split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        let weight = words[0].parse::<u64>().ok().filter(|&w| w > 0 && words.len() > 1);
        let Some(weight) = weight else {
            return Err(format!("--command-file line {}: {:?} is not WEIGHT COMMAND ARGS... (a positive integer weight)", n + 1, line.trim()));
        };
        let mut argv = Vec::with_capacity(words.len() - 1);
        for word in &words[1..] {
            expand_word(word, n + 1, &mut argv)?;
        }
        entries.push((weight, argv));
    }
    let divisor = entries.iter().fold(0, |g, e| gcd(g, e.0));
    let cycle: u64 = entries.iter().map(|e| e.0 / divisor.max(1)).sum();
    if entries.is_empty() || cycle > 64 {
        return Err(format!("--command-file: {} (lines of WEIGHT COMMAND ARGS..., at most 64 commands a cycle after reducing the weights)", if entries.is_empty() { "no command".to_string() } else { format!("{cycle} commands a cycle") }));
    }
    let mut out: Vec<String> = Vec::new();
    for (w, argv) in &entries {
        for _ in 0..w / divisor {
            if !out.is_empty() {
                out.push(";".into());
            }
            out.extend(argv.iter().cloned());
        }
    }
    Ok(out)
}

/// A custom command from the trailing arguments. The name is the line as given.
pub fn custom(args: &[String], data_size: usize) -> Result<Spec, String> {
    let name = args.join(" ");
    let toks = if args.len() == 1 && args[0].contains(char::is_whitespace) {
        split_line(&args[0])?
    } else {
        args.to_vec()
    };
    let data = payload(data_size);
    let mut commands = Vec::new();
    for part in toks.split(|t| t == ";") {
        if part.is_empty() {
            continue;
        }
        let cmd: Vec<Vec<u8>> = part
            .iter()
            .map(|a| if a == DATA { data.clone() } else { a.as_bytes().to_vec() })
            .collect();
        commands.push(cmd);
    }
    if commands.is_empty() {
        return Err("empty command".into());
    }
    Ok(Spec { name, commands })
}

fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    let mut v = Vec::new();
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        if &hay[i..i + needle.len()] == needle {
            v.push(i);
            i += needle.len();
        } else {
            i += 1;
        }
    }
    v
}

/// Encodes one instance of `spec` as RESP and records patch offsets.
/// `randomize`: patch `__rand_int__` (-r given); `tags`: patch `{tag}` (cluster).
pub fn encode(spec: &Spec, randomize: bool, tags: bool) -> Result<Template, String> {
    let mut t = Template {
        bytes: Vec::new(),
        ncmds: spec.commands.len(),
        rand: Vec::new(),
        nocc: 0,
        tags: Vec::new(),
        cmd_starts: Vec::new(),
        key: None,
        key_rand: 0..0,
    };
    let mut key_chosen = false;
    if spec.name == "PING_INLINE" {
        t.bytes.extend_from_slice(b"PING\r\n");
        t.cmd_starts = vec![0, t.bytes.len() as u32];
        return Ok(t);
    }
    for cmd in &spec.commands {
        t.cmd_starts.push(t.bytes.len() as u32);
        t.bytes.extend_from_slice(format!("*{}\r\n", cmd.len()).as_bytes());
        let mut occ = 0usize;
        let key_at = if key_chosen { None } else { key_index(cmd) };
        key_chosen |= key_at.is_some();
        for (ai, arg) in cmd.iter().enumerate() {
            t.bytes.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            let base = t.bytes.len();
            let rand_before = t.rand.len();
            t.bytes.extend_from_slice(arg);
            t.bytes.extend_from_slice(b"\r\n");
            if randomize {
                for off in find_all(arg, RAND) {
                    if occ >= MAX_OCC {
                        return Err(format!("too many __rand_int__ in one command (max {MAX_OCC})"));
                    }
                    t.rand.push(((base + off) as u32, occ as u8));
                    occ += 1;
                }
            }
            if tags {
                t.tags.extend(find_all(arg, TAG).into_iter().map(|o| (base + o) as u32));
            }
            if key_at == Some(ai) && find_all(arg, TAG).is_empty() {
                t.key = Some((base as u32, arg.len() as u32));
                t.key_rand = rand_before..t.rand.len();
            }
        }
        t.nocc = t.nocc.max(occ);
    }
    t.cmd_starts.push(t.bytes.len() as u32);
    Ok(t)
}

/// Gives every `__rand_int__` field of the sequence its own value (renumbers the
/// occurrence indices across commands instead of within each command).
pub fn independent_keys(mut t: Template) -> Result<Template, String> {
    if t.rand.len() > MAX_OCC {
        return Err(format!("too many __rand_int__ in one sequence for --independent-keys (max {MAX_OCC})"));
    }
    for (i, field) in t.rand.iter_mut().enumerate() {
        field.1 = i as u8;
    }
    t.nocc = t.rand.len();
    Ok(t)
}

#[cfg(test)]
mod command_file_tests {
    use super::*;

    #[test]
    fn weights_reduce_to_one_exact_cycle() {
        let words = command_file("# mix\n2 SET __key__ __data__\n\n4 GET __key__ # reads\n").unwrap();
        assert_eq!(words.join(" "), "SET key:__rand_int__ __data__ ; GET key:__rand_int__ ; GET key:__rand_int__");
        for bad in ["x GET a", "0 GET a", "3", "", "65 GET a\n1 SET a b", "1 HMGET h __fields:0__", "1 HSET h __field_values:1001__"] {
            assert!(command_file(bad).unwrap_err().contains("--command-file"), "{bad}");
        }
    }

    #[test]
    fn field_lists_and_a_second_key_expand_as_kvperf_expands_them() {
        let words = command_file("1 HSET __key__ __field_values:2__\n2 HMGET __key__ __fields:3__\n1 COPY __key__ __key2__ REPLACE\n").unwrap();
        assert_eq!(
            words.join(" "),
            "HSET key:__rand_int__ field:0 __data__ field:1 __data__ ; HMGET key:__rand_int__ field:0 field:1 field:2 ; \
             HMGET key:__rand_int__ field:0 field:1 field:2 ; COPY key:__rand_int__ key:__rand_int__ REPLACE"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(tests: Option<&[String]>, cluster: bool) -> Suite<'_> {
        Suite { tests, cluster, data_size: 3, randomize: false }
    }

    fn names(s: &Suite) -> Vec<String> {
        builtin(s).into_iter().map(|s| s.name).collect()
    }

    #[test]
    fn builtin_shapes() {
        let tests = vec!["set".to_string(), "lrange_100".into(), "mset".into()];
        let mut o = suite(Some(&tests), false);
        assert_eq!(names(&o), ["SET", "LPUSH (needed to benchmark LRANGE)", "LRANGE_100 (first 100 elements)", "MSET (10 keys)"]);
        let specs = builtin(&o);
        assert_eq!(specs[0].commands[0][1], b"key:__rand_int__");
        assert_eq!(specs[0].commands[0][2], payload(3));
        assert_eq!(specs[3].commands[0].len(), 21);
        o.cluster = true;
        let specs = builtin(&o);
        assert_eq!(specs[0].commands[0][1], b"key:{tag}:__rand_int__");
        assert_eq!(specs[1].commands[0][1], b"mylist:{tag}");
    }

    #[test]
    fn the_whole_suite_runs_in_valkey_benchmarks_order() {
        let all = names(&suite(None, false));
        assert_eq!(all[..14], ["PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP", "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN"]);
        assert_eq!(all[14..], ["LPUSH (needed to benchmark LRANGE)", "LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)",
            "LRANGE_500 (first 500 elements)", "LRANGE_600 (first 600 elements)", "MSET (10 keys)", "MGET (10 keys)", "XADD"]);
    }

    #[test]
    fn encode_offsets() {
        let s = Spec { name: "x".into(), commands: vec![vec![b"SET".to_vec(), b"k:__rand_int__".to_vec(), b"v".to_vec()]] };
        let t = encode(&s, true, false).unwrap();
        assert_eq!(t.bytes, b"*3\r\n$3\r\nSET\r\n$14\r\nk:__rand_int__\r\n$1\r\nv\r\n");
        assert_eq!(t.rand, vec![(20, 0)]);
        assert_eq!(&t.bytes[20..32], RAND);
        let t = encode(&s, false, false).unwrap();
        assert!(t.rand.is_empty());
    }

    #[test]
    fn custom_sequences() {
        let a: Vec<String> = ["SET", "a:__rand_int__", "__data__", ";", "GET", "a:__rand_int__"].iter().map(|s| s.to_string()).collect();
        let s = custom(&a, 5).unwrap();
        assert_eq!(s.commands.len(), 2);
        assert_eq!(s.commands[0][2].len(), 5);
        assert_eq!(s.name, "SET a:__rand_int__ __data__ ; GET a:__rand_int__");
        let s2 = custom(&["SET a:__rand_int__ \"x y\" ; GET a:__rand_int__".to_string()], 3).unwrap();
        assert_eq!(s2.commands[0][2], b"x y");
        assert_eq!(s2.commands[1], vec![b"GET".to_vec(), b"a:__rand_int__".to_vec()]);
        let t = encode(&s2, true, false).unwrap();
        assert_eq!(t.ncmds, 2);
        assert_eq!(t.cmd_starts.len(), 3);
        assert_eq!(&t.bytes[t.cmd_starts[1] as usize..t.cmd_starts[1] as usize + 4], b"*2\r\n");
        assert_eq!(t.rand.iter().map(|r| r.1).collect::<Vec<_>>(), [0, 0]);
        let (k, n) = t.key.unwrap();
        assert_eq!(&t.bytes[k as usize..(k + n) as usize], b"a:__rand_int__");
        assert_eq!(t.key_rand, 0..1);
        let t = independent_keys(t).unwrap();
        assert_eq!(t.rand.iter().map(|r| r.1).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(t.nocc, 2);
    }

    #[test]
    fn routing_keys() {
        let key = |line: &str| {
            let t = encode(&custom(&[line.to_string()], 3).unwrap(), true, true).unwrap();
            t.key.map(|(k, n)| (String::from_utf8(t.bytes[k as usize..(k + n) as usize].to_vec()).unwrap(), t.key_rand.len()))
        };
        assert_eq!(key("LPOP mylist"), Some(("mylist".into(), 0)));
        assert_eq!(key("SET k:__rand_int__:__rand_int__ __rand_int__"), Some(("k:__rand_int__:__rand_int__".into(), 2)));
        assert_eq!(key("MGET a:__rand_int__ b:__rand_int__"), Some(("a:__rand_int__".into(), 1)));
        assert_eq!(key("GET key:{tag}:__rand_int__"), None);
        assert_eq!(key("PING"), None);
        assert_eq!(key("DEBUG SLEEP 0"), None);
        assert_eq!(key("MULTI ; INCR c:__rand_int__ ; EXEC"), Some(("c:__rand_int__".into(), 1)));
        assert_eq!(key("EVAL \"return 1\" 1 x y"), Some(("x".into(), 0)));
        assert_eq!(key("EVAL \"return 1\" 0"), None);
        let t = encode(&custom(&["LPOP mylist".to_string()], 3).unwrap(), false, false).unwrap();
        assert!(t.key.is_some());
        let tests = vec!["set".to_string(), "mset".into(), "ping".into()];
        assert!(builtin(&suite(Some(&tests), true)).iter().all(|s| encode(s, true, true).unwrap().key.is_none()));
    }
}
