//! dataset: `--dataset FILE.csv` — a CSV loaded once into one buffer with cell offsets, and
//! a command template pre-parsed into literal / `__field:NAME__` / `__rand_int__` segments.
//! Each request is written as RESP straight into the connection's output buffer: no
//! allocation per request (the buffer is sized once from the longest possible request).

use crate::workload::spec::{Spec, RAND, TAG};
use crate::workload::keys::{write_digits, KeyGen};

const FIELD_OPEN: &[u8] = b"__field:";
const FIELD_CLOSE: &[u8] = b"__";

/// A CSV file (first line: column names): every cell's bytes in `buf`, unquoted.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub columns: Vec<String>,
    buf: Vec<u8>,
    /// (start, end) in `buf`, row-major, `columns.len()` per row.
    cells: Vec<(u32, u32)>,
    /// Longest cell of each column.
    widths: Vec<usize>,
}

/// Splits CSV text into records of cells (RFC 4180: `"` quotes, `""` inside quotes, CRLF or LF).
fn records(text: &[u8], buf: &mut Vec<u8>, cells: &mut Vec<(u32, u32)>) -> Result<Vec<usize>, String> {
    let mut per_record = Vec::new();
    let (mut i, mut in_record) = (0, 0usize);
    while i < text.len() {
        let start = buf.len();
        if text[i] == b'"' {
            i += 1;
            loop {
                match text.get(i) {
                    None => return Err(format!("unterminated quoted field in record {}", per_record.len() + 1)),
                    Some(b'"') if text.get(i + 1) == Some(&b'"') => { buf.push(b'"'); i += 2; }
                    Some(b'"') => { i += 1; break; }
                    Some(&c) => { buf.push(c); i += 1; }
                }
            }
        } else {
            while i < text.len() && !matches!(text[i], b',' | b'\n' | b'\r') {
                buf.push(text[i]);
                i += 1;
            }
        }
        cells.push((start as u32, buf.len() as u32));
        in_record += 1;
        match text.get(i) {
            Some(b',') => { i += 1; if i == text.len() { cells.push((buf.len() as u32, buf.len() as u32)); in_record += 1; } }
            Some(b'\r') | Some(b'\n') | None => {
                i += if text.get(i) == Some(&b'\r') && text.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
                per_record.push(in_record);
                in_record = 0;
            }
            Some(&c) => return Err(format!("unexpected {:?} after a quoted field in record {}", c as char, per_record.len() + 1)),
        }
    }
    if in_record > 0 {
        per_record.push(in_record);
    }
    Ok(per_record)
}

impl Dataset {
    pub fn parse(text: &[u8]) -> Result<Dataset, String> {
        let mut buf = Vec::with_capacity(text.len());
        let mut cells = Vec::new();
        let counts = records(text, &mut buf, &mut cells)?;
        let ncols = *counts.first().ok_or("the CSV is empty (a header line is needed)")?;
        if let Some(bad) = counts.iter().position(|&n| n != ncols) {
            return Err(format!("record {} has {} fields, the header has {ncols}", bad + 1, counts[bad]));
        }
        if counts.len() < 2 {
            return Err("the CSV has a header but no rows".into());
        }
        let columns = cells[..ncols].iter().map(|&(s, e)| String::from_utf8_lossy(&buf[s as usize..e as usize]).into_owned()).collect();
        let mut widths = vec![0usize; ncols];
        for (k, &(s, e)) in cells[ncols..].iter().enumerate() {
            widths[k % ncols] = widths[k % ncols].max((e - s) as usize);
        }
        Ok(Dataset { columns, buf, cells: cells[ncols..].to_vec(), widths })
    }

    pub fn load(path: &str) -> Result<Dataset, String> {
        let text = std::fs::read(path).map_err(|e| format!("cannot read --dataset {path}: {e}"))?;
        Dataset::parse(&text).map_err(|e| format!("--dataset {path}: {e}"))
    }

    pub fn rows(&self) -> usize {
        self.cells.len() / self.columns.len()
    }

    #[inline]
    pub fn cell(&self, row: usize, col: usize) -> &[u8] {
        let (s, e) = self.cells[row * self.columns.len() + col];
        &self.buf[s as usize..e as usize]
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Seg {
    /// (start, end) in `DataTemplate::lits`.
    Lit(u32, u32),
    Field(u16),
    Rand,
}

/// A command sequence whose arguments are segment lists, resolved against a dataset's columns.
#[derive(Debug, Clone)]
pub struct DataTemplate {
    lits: Vec<u8>,
    /// Per command: (first arg index, arg count) into `args`.
    cmds: Vec<(u32, u32)>,
    /// Per argument: (first segment index, segment count) into `segs`.
    args: Vec<(u32, u32)>,
    segs: Vec<Seg>,
    max_len: usize,
}

/// Segments of one argument; `__rand_int__` only when `randomize`.
fn split_arg(arg: &[u8], ds: &Dataset, randomize: bool, lits: &mut Vec<u8>, segs: &mut Vec<Seg>) -> Result<(), String> {
    let (mut i, mut lit_start) = (0, 0);
    let push_lit = |lits: &mut Vec<u8>, segs: &mut Vec<Seg>, from: usize, to: usize| {
        if to > from {
            let s = lits.len() as u32;
            lits.extend_from_slice(&arg[from..to]);
            segs.push(Seg::Lit(s, lits.len() as u32));
        }
    };
    while i < arg.len() {
        if arg[i..].starts_with(FIELD_OPEN) {
            let rest = &arg[i + FIELD_OPEN.len()..];
            let end = rest.windows(2).position(|w| w == FIELD_CLOSE).ok_or_else(|| format!("unterminated __field: in {:?}", String::from_utf8_lossy(arg)))?;
            let name = String::from_utf8_lossy(&rest[..end]);
            let col = ds.columns.iter().position(|c| *c == name).ok_or_else(|| {
                format!("__field:{name}__: the dataset has no column {name:?} (columns: {})", ds.columns.join(", "))
            })?;
            push_lit(lits, segs, lit_start, i);
            segs.push(Seg::Field(col as u16));
            i += FIELD_OPEN.len() + end + FIELD_CLOSE.len();
            lit_start = i;
        } else if randomize && arg[i..].starts_with(RAND) {
            push_lit(lits, segs, lit_start, i);
            segs.push(Seg::Rand);
            i += RAND.len();
            lit_start = i;
        } else {
            i += 1;
        }
    }
    push_lit(lits, segs, lit_start, arg.len());
    Ok(())
}

/// Decimal digits of `v` written at `out[0..]`; returns their count.
#[inline]
fn write_uint(out: &mut [u8], mut v: usize) -> usize {
    let mut tmp = [0u8; 20];
    let mut n = 0;
    loop {
        tmp[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for k in 0..n {
        out[k] = tmp[n - 1 - k];
    }
    n
}

impl DataTemplate {
    /// Compiles `spec`'s commands against `ds` (unknown column names and `{tag}` refused).
    pub fn compile(spec: &Spec, ds: &Dataset, randomize: bool) -> Result<DataTemplate, String> {
        let mut t = DataTemplate { lits: Vec::new(), cmds: Vec::new(), args: Vec::new(), segs: Vec::new(), max_len: 0 };
        for cmd in &spec.commands {
            t.cmds.push((t.args.len() as u32, cmd.len() as u32));
            for arg in cmd {
                if arg.windows(TAG.len()).any(|w| w == TAG) {
                    return Err("{tag} cannot be used with --dataset".into());
                }
                let first = t.segs.len();
                split_arg(arg, ds, randomize, &mut t.lits, &mut t.segs)?;
                t.args.push((first as u32, (t.segs.len() - first) as u32));
            }
        }
        t.max_len = t.bound(ds);
        Ok(t)
    }

    /// The longest request this template can produce over `ds`'s rows.
    fn bound(&self, ds: &Dataset) -> usize {
        let mut total = 0;
        for &(_, n) in &self.cmds {
            total += 1 + 20 + 2 + (n as usize) * (1 + 20 + 2 + 2);
        }
        total + self.segs.iter().map(|s| match *s {
            Seg::Lit(a, b) => (b - a) as usize,
            Seg::Field(c) => ds.widths[c as usize],
            Seg::Rand => RAND.len(),
        }).sum::<usize>()
    }

    pub fn max_len(&self) -> usize {
        self.max_len
    }

    fn seg_len(&self, s: Seg, ds: &Dataset, row: usize) -> usize {
        match s {
            Seg::Lit(a, b) => (b - a) as usize,
            Seg::Field(c) => ds.cell(row, c as usize).len(),
            Seg::Rand => RAND.len(),
        }
    }

    /// Writes one instance for `row` at `out[0..]` (at least `max_len` bytes); returns its
    /// length. `__rand_int__` draws from `keys.rng` below `keyspace`.
    #[inline]
    pub fn write(&self, ds: &Dataset, row: usize, out: &mut [u8], keys: &mut KeyGen, keyspace: u64) -> usize {
        let mut at = 0;
        for &(a0, na) in &self.cmds {
            out[at] = b'*';
            at += 1;
            at += write_uint(&mut out[at..], na as usize);
            out[at..at + 2].copy_from_slice(b"\r\n");
            at += 2;
            for &(s0, ns) in &self.args[a0 as usize..(a0 + na) as usize] {
                let segs = &self.segs[s0 as usize..(s0 + ns) as usize];
                let len: usize = segs.iter().map(|&s| self.seg_len(s, ds, row)).sum();
                out[at] = b'$';
                at += 1;
                at += write_uint(&mut out[at..], len);
                out[at..at + 2].copy_from_slice(b"\r\n");
                at += 2;
                for &s in segs {
                    match s {
                        Seg::Lit(a, b) => {
                            let src = &self.lits[a as usize..b as usize];
                            out[at..at + src.len()].copy_from_slice(src);
                            at += src.len();
                        }
                        Seg::Field(c) => {
                            let src = ds.cell(row, c as usize);
                            out[at..at + src.len()].copy_from_slice(src);
                            at += src.len();
                        }
                        Seg::Rand => {
                            let v = if keyspace > 0 { keys.rng.below(keyspace) } else { 0 };
                            write_digits(out, at, v);
                            at += RAND.len();
                        }
                    }
                }
                out[at..at + 2].copy_from_slice(b"\r\n");
                at += 2;
            }
        }
        at
    }
}

/// A hint to load the cache line at `p` (no effect where the target has no prefetch).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// What a thread needs for `--dataset` runs: the rows, the compiled template, `-r`.
#[derive(Debug)]
pub struct DataPlan {
    pub ds: Dataset,
    pub t: DataTemplate,
    pub keyspace: u64,
}

impl DataPlan {
    /// Writes `count` instances into `out` (rows from `keys`: in order with --sequential,
    /// else drawn at random); returns the bytes written.
    /// Rows are drawn CHUNK at a time and their cells prefetched first: random rows of a
    /// dataset larger than the cache would otherwise stall on one miss after another.
    #[inline]
    pub fn fill(&self, out: &mut [u8], count: usize, keys: &mut KeyGen) -> usize {
        const CHUNK: usize = 16;
        let mut rows = [0usize; CHUNK];
        let (mut at, mut done) = (0, 0);
        while done < count {
            let n = (count - done).min(CHUNK);
            for r in rows.iter_mut().take(n) {
                *r = keys.next() as usize;
                prefetch(self.ds.cells.as_ptr().wrapping_add(*r * self.ds.columns.len()) as *const u8);
            }
            for &r in &rows[..n] {
                prefetch(self.ds.buf.as_ptr().wrapping_add(self.ds.cells[r * self.ds.columns.len()].0 as usize));
            }
            for &r in &rows[..n] {
                at += self.t.write(&self.ds, r, &mut out[at..], keys, self.keyspace);
            }
            done += n;
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::spec::custom;

    fn ds() -> Dataset {
        Dataset::parse(b"id,title\r\n1,hello\n2,\"a, \"\"quoted\"\" title\"\n3,\n").unwrap()
    }

    #[test]
    fn csv_cells_unquoted_with_offsets() {
        let d = ds();
        assert_eq!(d.columns, ["id", "title"]);
        assert_eq!(d.rows(), 3);
        assert_eq!(d.cell(1, 1), b"a, \"quoted\" title");
        assert_eq!(d.cell(2, 1), b"");
        assert_eq!(d.widths, [1, 17]);
        assert!(Dataset::parse(b"a,b\n1\n").unwrap_err().contains("record 2 has 1 fields"));
        assert!(Dataset::parse(b"a\n\"x\n").unwrap_err().contains("unterminated"));
        assert!(Dataset::parse(b"a,b\n").unwrap_err().contains("no rows"));
    }

    #[test]
    fn template_writes_resp_per_row() {
        let d = ds();
        let spec = custom(&["HSET doc:__field:id__ title __field:title__ n __rand_int__".into()], 3).unwrap();
        let t = DataTemplate::compile(&spec, &d, true).unwrap();
        let mut out = vec![0u8; t.max_len() * 3];
        let mut keys = KeyGen::new(1, 3, true, 0, 1);
        let plan = DataPlan { ds: d, t, keyspace: 10 };
        let n = plan.fill(&mut out, 3, &mut keys);
        let text = String::from_utf8(out[..n].to_vec()).unwrap();
        assert!(text.starts_with("*6\r\n$4\r\nHSET\r\n$5\r\ndoc:1\r\n$5\r\ntitle\r\n$5\r\nhello\r\n$1\r\nn\r\n$12\r\n0000000000"), "{text}");
        assert!(text.contains("$5\r\ndoc:2\r\n$5\r\ntitle\r\n$17\r\na, \"quoted\" title\r\n"));
        assert!(text.contains("$5\r\ndoc:3\r\n$5\r\ntitle\r\n$0\r\n\r\n"));
        assert!(!text.contains("__"));
        for row in 0..3 {
            let mut buf = vec![0u8; plan.t.max_len()];
            let mut k = KeyGen::new(1, 3, true, row, 1);
            assert!(plan.t.write(&plan.ds, row as usize, &mut buf, &mut k, 10) <= plan.t.max_len());
        }
    }

    #[test]
    fn unknown_column_and_tag_refused() {
        let d = ds();
        let e = DataTemplate::compile(&custom(&["GET __field:nope__".into()], 3).unwrap(), &d, false).unwrap_err();
        assert!(e.contains("no column \"nope\"") && e.contains("id, title"), "{e}");
        assert!(DataTemplate::compile(&custom(&["GET {tag}:__field:id__".into()], 3).unwrap(), &d, false).is_err());
        let t = DataTemplate::compile(&custom(&["GET k:__rand_int__".into()], 3).unwrap(), &d, false).unwrap();
        let mut out = vec![0u8; t.max_len()];
        let n = t.write(&d, 0, &mut out, &mut KeyGen::new(1, 3, false, 0, 1), 0);
        assert_eq!(&out[..n], b"*2\r\n$3\r\nGET\r\n$14\r\nk:__rand_int__\r\n");
    }

    #[test]
    fn random_rows_repeat_per_seed() {
        let d = ds();
        let t = DataTemplate::compile(&custom(&["GET __field:id__".into()], 3).unwrap(), &d, false).unwrap();
        let plan = DataPlan { ds: d, t, keyspace: 0 };
        let run = |seed| {
            let mut out = vec![0u8; plan.t.max_len() * 50];
            let n = plan.fill(&mut out, 50, &mut KeyGen::new(seed, 3, false, 0, 1));
            out.truncate(n);
            out
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}

#[cfg(test)]
mod bench {
    use super::*;
    use crate::workload::spec::custom;

    /// A micro-benchmark that also runs as a test (docs/PERFORMANCE.md, "Datasets"): its
    /// timings print with `--nocapture`; the test checks that every request was written whole.
    #[test]
    fn fill_speed() {
        let mut text = String::from("id,title\n");
        for i in 0..100_000 {
            text.push_str(&format!("{i},{}\n", "x".repeat(10 + i % 20)));
        }
        let ds = Dataset::parse(text.as_bytes()).unwrap();
        let t = DataTemplate::compile(&custom(&["HSET doc:__field:id__ title __field:title__".into()], 3).unwrap(), &ds, false).unwrap();
        println!("max_len {}", t.max_len());
        let plan = DataPlan { ds, t, keyspace: 0 };
        let mut out = vec![0u8; plan.t.max_len() * 16];
        for sequential in [false, true] {
            let mut keys = KeyGen::new(1, 100_000, sequential, 0, 1);
            let start = std::time::Instant::now();
            let mut total = 0;
            for _ in 0..100_000 {
                total += plan.fill(&mut out, 16, &mut keys);
            }
            println!("sequential {sequential}: {:.1} ns/request, {total} bytes", start.elapsed().as_nanos() as f64 / 1_600_000.0);
            // 1.6M requests of "HSET doc:<id> title <10-29 x>": at least the 25 fixed bytes each
            assert!(total >= 1_600_000 * 25 && total <= 1_600_000 * plan.t.max_len(), "{total}");
        }
    }
}
