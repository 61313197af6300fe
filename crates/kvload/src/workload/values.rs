//! values: what kvload's own mode writes as values — their sizes (`--value-size`: fixed,
//! a range, a weighted list or a histogram), their contents (`--value-content`: random
//! printable bytes, or compressible to a ratio) and the SETs' TTLs (`--ttl`: none, fixed,
//! a range) — and `VarTemplate`, a template whose values or TTLs differ per instance,
//! written into a batch's buffer without allocating (sizes drawn from the key generator's
//! RNG, `__rand_int__` digits patched at their shifted offsets).

/// The largest value kvload sends (the server's default `proto-max-bulk-len`, 512 MiB):
/// every front end refuses a bigger size rather than allocating it.
pub const MAX_VALUE: usize = 512 << 20;

use crate::base::rng::Rng;
use crate::workload::keys::{write_digits, KeyGen};
use crate::workload::spec::{payload, Spec, Template, MAX_OCC};

/// The TTL placeholder of a TTL drawn per request (replaced by digits when written).
pub const TTL_FIELD: &[u8] = b"__ttl__";

/// Value sizes: buckets (lo, hi, cumulative weight), a size drawn uniformly in its bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct Sizes {
    buckets: Vec<(u64, u64, u64)>,
}

impl Sizes {
    pub fn fixed(n: usize) -> Sizes {
        Sizes { buckets: vec![(n as u64, n as u64, 1)] }
    }

    /// `64`, `64-1024`, `64:3,1024:1` or `1-100:50,101-1000:40,1001-4096:10`: entries of a
    /// size or an inclusive range, each with an optional integer weight (1).
    pub fn parse(text: &str) -> Result<Sizes, String> {
        let bad = |why: &str| format!("--value-size {text:?}: {why} (e.g. 64, 64-1024, 64:3,1024:1)");
        let mut buckets = Vec::new();
        let mut total = 0u64;
        for entry in text.split(',') {
            let (range, weight) = entry.split_once(':').unwrap_or((entry, "1"));
            let weight: u64 = weight.trim().parse().ok().filter(|&w| w > 0).ok_or_else(|| bad(&format!("weight {weight:?} is not a positive integer")))?;
            let (lo, hi) = range.split_once('-').unwrap_or((range, range));
            let size = |s: &str| s.trim().parse::<u64>().ok().filter(|&v| (1..=MAX_VALUE as u64).contains(&v));
            let (Some(lo), Some(hi)) = (size(lo), size(hi)) else { return Err(bad(&format!("{range:?} is not a size in bytes (1 to 512 MiB) or a range of them"))) };
            if lo > hi {
                return Err(bad(&format!("range {range:?} runs backwards")));
            }
            total += weight;
            buckets.push((lo, hi, total));
        }
        Ok(Sizes { buckets })
    }

    pub fn max(&self) -> usize {
        self.buckets.iter().map(|b| b.1).max().unwrap_or(0) as usize
    }

    pub fn is_fixed(&self) -> bool {
        self.buckets.iter().all(|b| b.0 == b.1 && b.0 == self.buckets[0].0)
    }

    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> usize {
        let total = self.buckets[self.buckets.len() - 1].2;
        let r = if self.buckets.len() == 1 { 0 } else { rng.below(total) };
        let &(lo, hi, _) = self.buckets.iter().find(|b| r < b.2).unwrap_or(&self.buckets[0]);
        (if lo == hi { lo } else { lo + rng.below(hi - lo + 1) }) as usize
    }
}

/// What values are made of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Content {
    /// Pseudo-random printable bytes (valkey-benchmark's and kvload's payload until now).
    Random,
    /// Compressed by zlib/LZ4-like coders to about this fraction of its size: each 64-byte
    /// block is that share of random bytes (all 256 values), the rest one repeated byte.
    Compressible(f64),
}

impl Content {
    pub fn parse(text: &str) -> Result<Content, String> {
        if text == "random" {
            return Ok(Content::Random);
        }
        let ratio = text.strip_prefix("compressible:").and_then(|r| r.parse::<f64>().ok());
        match ratio {
            Some(r) if r > 0.0 && r <= 1.0 => Ok(Content::Compressible(r)),
            _ => Err(format!("--value-content {text:?} is not random or compressible:RATIO (a ratio in (0, 1], e.g. compressible:0.5)")),
        }
    }

    /// `n` bytes of this content (deterministic).
    pub fn bytes(self, n: usize) -> Vec<u8> {
        let Content::Compressible(ratio) = self else { return payload(n) };
        let random = (ratio * 64.0).round() as usize;
        let mut rng = Rng::new(0x5eed);
        (0..n).map(|i| if i % 64 < random { rng.next() as u8 } else { b'x' }).collect()
    }
}

/// SETs' TTLs in seconds: none, or drawn in [lo, hi].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Ttl(pub Option<(u64, u64)>);

impl Ttl {
    /// `none`, `60` or `30-300` (seconds).
    pub fn parse(text: &str) -> Result<Ttl, String> {
        if text == "none" {
            return Ok(Ttl(None));
        }
        let (lo, hi) = text.split_once('-').unwrap_or((text, text));
        match (lo.parse::<u64>(), hi.parse::<u64>()) {
            (Ok(lo), Ok(hi)) if lo >= 1 && lo <= hi && hi < 1 << 40 => Ok(Ttl(Some((lo, hi)))),
            _ => Err(format!("--ttl {text:?} is not none, SECONDS or LOW-HIGH (seconds ≥ 1, e.g. 60 or 30-300)")),
        }
    }
}

/// Values and TTLs as a run asks for them.
#[derive(Debug, Clone, PartialEq)]
pub struct Values {
    pub sizes: Sizes,
    pub content: Content,
    pub ttl: Ttl,
}

impl Values {
    /// Whether instances differ in length (sizes or TTLs drawn per request).
    pub fn varies(&self) -> bool {
        !self.sizes.is_fixed() || self.ttl.0.is_some_and(|(lo, hi)| lo != hi)
    }

    /// `spec` with its values (`-d`'s payload of `data_size` bytes) made of this content at
    /// the largest size, and `EX ttl` (or `EX __ttl__`, drawn per request) after each SET.
    pub fn apply(&self, spec: &Spec, data_size: usize) -> Spec {
        let old = payload(data_size);
        let new = self.content.bytes(self.sizes.max());
        let ttl: Option<Vec<u8>> = self.ttl.0.map(|(lo, hi)| if lo == hi { lo.to_string().into_bytes() } else { TTL_FIELD.to_vec() });
        let commands = spec.commands.iter().map(|cmd| {
            let mut c: Vec<Vec<u8>> = cmd.iter().map(|a| if *a == old { new.clone() } else { a.clone() }).collect();
            if let (Some(t), true) = (&ttl, cmd[0].eq_ignore_ascii_case(b"SET")) {
                c.push(b"EX".to_vec());
                c.push(t.clone());
            }
            c
        });
        Spec { name: spec.name.clone(), commands: commands.collect() }
    }
}

/// A part of a template as written per instance.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Seg {
    /// Template bytes [from, to).
    Lit(u32, u32),
    /// A value: `$n\r\n` + n bytes + `\r\n`.
    Data,
    /// A TTL: `$d\r\n` + d digits + `\r\n`.
    Ttl,
}

/// A template whose values' sizes or TTLs are drawn per instance.
#[derive(Debug, Clone)]
pub struct VarTemplate {
    segs: Vec<Seg>,
    payload: Vec<u8>,
    values: Values,
    /// The longest instance.
    pub max_len: usize,
}

fn bulk(arg: &[u8]) -> Vec<u8> {
    let mut b = format!("${}\r\n", arg.len()).into_bytes();
    b.extend_from_slice(arg);
    b.extend_from_slice(b"\r\n");
    b
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    (from..(hay.len() + 1).saturating_sub(needle.len())).find(|&i| &hay[i..i + needle.len()] == needle)
}

impl VarTemplate {
    /// The segments of `t` (encoded from `Values::apply`'s spec): its values and TTLs found
    /// as whole bulk strings.
    pub fn new(t: &Template, values: &Values) -> VarTemplate {
        let payload = values.content.bytes(values.sizes.max());
        let (data, ttl) = (bulk(&payload), bulk(TTL_FIELD));
        let (mut segs, mut at) = (Vec::new(), 0usize);
        loop {
            let d = find(&t.bytes, &data, at).map(|i| (i, data.len(), Seg::Data));
            let e = find(&t.bytes, &ttl, at).map(|i| (i, ttl.len(), Seg::Ttl));
            let Some((i, len, seg)) = [d, e].into_iter().flatten().min_by_key(|x| x.0) else { break };
            segs.push(Seg::Lit(at as u32, i as u32));
            segs.push(seg);
            at = i + len;
        }
        segs.push(Seg::Lit(at as u32, t.bytes.len() as u32));
        let ttls = segs.iter().filter(|s| **s == Seg::Ttl).count();
        VarTemplate { segs, payload, values: values.clone(), max_len: t.bytes.len() + ttls * 24 }
    }

    /// Writes `count` instances at the start of `buf`; returns their length.
    #[inline]
    pub fn fill(&self, buf: &mut [u8], t: &Template, count: usize, keys: &mut KeyGen) -> usize {
        let mut vals = [0u64; MAX_OCC];
        let mut at = 0;
        for _ in 0..count {
            for v in vals.iter_mut().take(t.nocc) {
                *v = keys.next();
            }
            at = self.instance(buf, at, t, &vals, &mut keys.rng);
        }
        at
    }

    fn instance(&self, buf: &mut [u8], mut at: usize, t: &Template, vals: &[u64; MAX_OCC], rng: &mut Rng) -> usize {
        let mut r = 0;
        for seg in &self.segs {
            match *seg {
                Seg::Lit(from, to) => {
                    let (from, to) = (from as usize, to as usize);
                    buf[at..at + to - from].copy_from_slice(&t.bytes[from..to]);
                    while let Some(&(off, occ)) = t.rand.get(r).filter(|f| (f.0 as usize) < to) {
                        write_digits(buf, at + off as usize - from, vals[occ as usize]);
                        r += 1;
                    }
                    at += to - from;
                }
                Seg::Data => {
                    let n = self.values.sizes.draw(rng);
                    at = bulk_header(buf, at, n as u64);
                    buf[at..at + n].copy_from_slice(&self.payload[..n]);
                    buf[at + n..at + n + 2].copy_from_slice(b"\r\n");
                    at += n + 2;
                }
                Seg::Ttl => at = self.ttl(buf, at, rng),
            }
        }
        at
    }

    fn ttl(&self, buf: &mut [u8], at: usize, rng: &mut Rng) -> usize {
        let (lo, hi) = self.values.ttl.0.unwrap_or((1, 1));
        let v = lo + rng.below(hi - lo + 1);
        let at = bulk_header(buf, at, digits(v) as u64);
        let end = write_number(buf, at, v);
        buf[end..end + 2].copy_from_slice(b"\r\n");
        end + 2
    }
}

fn digits(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

/// `v` in decimal at `at`; returns the end.
fn write_number(buf: &mut [u8], at: usize, mut v: u64) -> usize {
    let end = at + digits(v);
    for i in (at..end).rev() {
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    end
}

/// `$n\r\n` at `at`; returns the end.
fn bulk_header(buf: &mut [u8], at: usize, n: u64) -> usize {
    buf[at] = b'$';
    let end = write_number(buf, at + 1, n);
    buf[end..end + 2].copy_from_slice(b"\r\n");
    end + 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::resp;
    use crate::workload::spec::{custom, encode};

    fn values(sizes: &str, ttl: &str) -> Values {
        Values { sizes: Sizes::parse(sizes).unwrap(), content: Content::Random, ttl: Ttl::parse(ttl).unwrap() }
    }

    #[test]
    fn sizes_are_drawn_by_weight_within_their_buckets() {
        let s = Sizes::parse("10:3,20-29:1").unwrap();
        let mut rng = Rng::new(5);
        let v: Vec<usize> = (0..40_000).map(|_| s.draw(&mut rng)).collect();
        let tens = v.iter().filter(|&&n| n == 10).count() as f64 / 40_000.0;
        assert!((tens - 0.75).abs() < 0.01, "{tens}");
        assert!(v.iter().all(|&n| n == 10 || (20..=29).contains(&n)));
        assert!((20..=29).all(|n| v.contains(&n)));
        assert_eq!((s.max(), s.is_fixed(), Sizes::parse("64").unwrap().is_fixed()), (29, false, true));
        for bad in ["", "0", "x", "9-3", "64:0", "64:x", "1-2-3"] {
            assert!(Sizes::parse(bad).unwrap_err().contains(&format!("{bad:?}")), "{bad}");
        }
    }

    #[test]
    fn ttls_and_contents_parse_or_are_refused_by_name() {
        assert_eq!(Ttl::parse("none"), Ok(Ttl(None)));
        assert_eq!(Ttl::parse("30-300"), Ok(Ttl(Some((30, 300)))));
        for bad in ["0", "5-1", "x", "-3"] {
            assert!(Ttl::parse(bad).unwrap_err().contains(bad));
        }
        assert_eq!(Content::parse("compressible:0.5"), Ok(Content::Compressible(0.5)));
        assert!(Content::parse("zeros").unwrap_err().contains("zeros"));
    }

    #[test]
    fn compressible_values_hold_their_share_of_random_bytes() {
        let b = Content::Compressible(0.25).bytes(6400);
        let filler = b.iter().filter(|&&c| c == b'x').count();
        assert!((filler as f64 / 6400.0 - 0.75).abs() < 0.01, "{filler}");
    }

    #[test]
    fn instances_are_whole_commands_with_drawn_sizes_ttls_and_keys() {
        let v = values("1-50", "30-39");
        let spec = v.apply(&custom(&["SET k:__rand_int__ __data__ ; GET k:__rand_int__".into()], 3).unwrap(), 3);
        let t = encode(&spec, true, false).unwrap();
        let var = VarTemplate::new(&t, &v);
        let mut buf = vec![0u8; 200 * var.max_len];
        let mut keys = KeyGen::new(1, 1000, false, 0, 1);
        let len = var.fill(&mut buf, &t, 200, &mut keys);
        let (mut at, mut seen) = (0, std::collections::BTreeSet::new());
        while at < len {
            let (resp::Value::Array(set), n) = resp::parse_value(&buf[at..len]).unwrap() else { panic!() };
            let (resp::Value::Array(get), m) = resp::parse_value(&buf[at + n..len]).unwrap() else { panic!() };
            let arg = |a: &resp::Value| match a { resp::Value::Bulk(b) => b.clone(), _ => panic!() };
            assert_eq!((arg(&set[1]), arg(&set[3])), (arg(&get[1]), b"EX".to_vec()));
            let ttl: u64 = String::from_utf8(arg(&set[4])).unwrap().parse().unwrap();
            assert!((30..=39).contains(&ttl));
            seen.insert(arg(&set[2]).len());
            at += n + m;
        }
        assert!(seen.len() > 40 && seen.iter().all(|n| (1..=50).contains(n)), "{seen:?}");
    }
}
