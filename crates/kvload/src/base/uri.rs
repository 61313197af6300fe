//! uri: `scheme://[userinfo@]host[:port][/db]` → its parts; the one parser behind kvload's
//! `-u` and kvload memtier's `--uri`. Both read the same shape; a `Dialect` holds where
//! they differ, so each keeps the rules of the tool it follows: valkey-benchmark's `-u`
//! for kvload, memtier_benchmark's `--uri` (its `parse_uri`) for kvload memtier.

/// The parts of a URI; None where it leaves the default.
#[derive(Debug, Default, PartialEq)]
pub struct Uri {
    pub tls: bool,
    /// As written: `user:password` or `password`.
    pub userinfo: Option<String>,
    /// None when the URI names no host (`redis://:6380`).
    pub host: Option<String>,
    pub port: Option<u16>,
    pub db: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// kvload `-u`: valkey, redis, valkeys, rediss; the last `@` ends the credentials (a
    /// password may hold `@`); `[v6addr]:port` or the last `:`; every error "invalid URI".
    Kvload,
    /// memtier `--uri`: redis, rediss; the first `@` and the first `:` (memtier's strchr);
    /// port 1..65535; memtier's messages.
    Memtier,
}

impl Dialect {
    /// Whether the scheme means TLS; None for a scheme this dialect does not take.
    fn tls(self, scheme: &str) -> Option<bool> {
        match (self, scheme) {
            (_, "redis") | (Dialect::Kvload, "valkey") => Some(false),
            (_, "rediss") | (Dialect::Kvload, "valkeys") => Some(true),
            _ => None,
        }
    }

    fn bad_scheme(self, scheme: &str) -> String {
        match self {
            Dialect::Kvload => format!("invalid URI scheme '{scheme}'"),
            Dialect::Memtier => format!("unsupported URI scheme '{scheme}'. Use 'redis' or 'rediss'"),
        }
    }

    /// The URI without its scheme split into (userinfo, the rest).
    fn split_userinfo(self, rest: &str) -> (Option<&str>, &str) {
        let at = match self {
            Dialect::Kvload => rest.rsplit_once('@'),
            Dialect::Memtier => rest.split_once('@'),
        };
        match at {
            Some((auth, tail)) => (Some(auth), tail),
            None => (None, rest),
        }
    }
}

/// Splits `uri` by `dialect`'s rules; Err is the message to show.
pub fn parse(uri: &str, dialect: Dialect) -> Result<Uri, String> {
    let invalid = || format!("invalid URI '{uri}'");
    let (scheme, rest) = uri.split_once("://").ok_or_else(|| match dialect {
        Dialect::Kvload => invalid(),
        Dialect::Memtier => "invalid URI format, missing scheme".to_string(),
    })?;
    let tls = dialect.tls(scheme).ok_or_else(|| dialect.bad_scheme(scheme))?;
    let (userinfo, hostpart) = dialect.split_userinfo(rest);
    let (hostport, db) = match hostpart.split_once('/') {
        Some((h, d)) => (h, Some(d).filter(|d| !d.is_empty())),
        None => (hostpart, None),
    };
    let db = match db {
        Some(d) => Some(d.parse().map_err(|_| match dialect {
            Dialect::Kvload => invalid(),
            Dialect::Memtier => format!("invalid database number '{d}'"),
        })?),
        None => None,
    };
    let (host, port) = match dialect {
        Dialect::Kvload => kvload_host_port(hostport).ok_or_else(invalid)?,
        Dialect::Memtier => memtier_host_port(hostport)?,
    };
    Ok(Uri {
        tls,
        userinfo: userinfo.map(str::to_string),
        host: Some(host).filter(|h| !h.is_empty()).map(str::to_string),
        port,
        db,
    })
}

/// `[v6addr]:port`, `[v6addr]`, `host:port` (the last `:`) or `host`; None for a bad port.
fn kvload_host_port(s: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (h, tail) = rest.split_once(']')?;
        let port = match tail.strip_prefix(':') {
            Some(p) => Some(p.parse().ok()?),
            None => None,
        };
        return Some((h, port));
    }
    match s.rsplit_once(':') {
        Some((h, p)) => Some((h, Some(p.parse().ok()?))),
        None => Some((s, None)),
    }
}

/// `host:port` at the first `:`, port 1..65535, or `host`.
fn memtier_host_port(s: &str) -> Result<(&str, Option<u16>), String> {
    match s.split_once(':') {
        Some((h, p)) => {
            let port = p.parse().ok().filter(|&n: &u16| n > 0).ok_or_else(|| format!("invalid port number '{p}'"))?;
            Ok((h, Some(port)))
        }
        None => Ok((s, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::Dialect::{Kvload, Memtier};
    use super::*;

    fn uri(tls: bool, userinfo: Option<&str>, host: Option<&str>, port: Option<u16>, db: Option<u32>) -> Uri {
        Uri { tls, userinfo: userinfo.map(Into::into), host: host.map(Into::into), port, db }
    }

    #[test]
    fn both_dialects_read_the_common_shape() {
        for d in [Kvload, Memtier] {
            assert_eq!(parse("rediss://bob:pw@example:7000/2", d), Ok(uri(true, Some("bob:pw"), Some("example"), Some(7000), Some(2))));
            assert_eq!(parse("redis://example", d), Ok(uri(false, None, Some("example"), None, None)));
            assert_eq!(parse("redis://pw@h/", d), Ok(uri(false, Some("pw"), Some("h"), None, None)));
            assert_eq!(parse("redis://:6380", d), Ok(uri(false, None, None, Some(6380), None)));
            assert_eq!(parse("redis://", d), Ok(Uri::default()));
        }
    }

    #[test]
    fn kvload_rules() {
        assert_eq!(parse("valkeys://u:p@h:1/3", Kvload), Ok(uri(true, Some("u:p"), Some("h"), Some(1), Some(3))));
        assert_eq!(parse("valkey://a@b@h", Kvload), Ok(uri(false, Some("a@b"), Some("h"), None, None)));
        assert_eq!(parse("redis://[::1]:6380", Kvload), Ok(uri(false, None, Some("::1"), Some(6380), None)));
        assert_eq!(parse("redis://[::1]", Kvload), Ok(uri(false, None, Some("::1"), None, None)));
        assert_eq!(parse("redis://::1:6380", Kvload), Ok(uri(false, None, Some("::1"), Some(6380), None)));
        assert_eq!(parse("redis://h:0", Kvload), Ok(uri(false, None, Some("h"), Some(0), None)));
        assert_eq!(parse("http://x", Kvload), Err("invalid URI scheme 'http'".into()));
        for bad in ["h:1", "redis://h:x", "redis://h/x", "redis://[::1:1", "redis://h:70000"] {
            assert_eq!(parse(bad, Kvload), Err(format!("invalid URI '{bad}'")));
        }
    }

    #[test]
    fn memtier_rules() {
        assert_eq!(parse("redis://a@b@h", Memtier), Ok(uri(false, Some("a"), Some("b@h"), None, None)));
        assert_eq!(parse("valkey://h", Memtier), Err("unsupported URI scheme 'valkey'. Use 'redis' or 'rediss'".into()));
        assert_eq!(parse("h:1", Memtier), Err("invalid URI format, missing scheme".into()));
        assert_eq!(parse("redis://h/x", Memtier), Err("invalid database number 'x'".into()));
        assert_eq!(parse("redis://h:0", Memtier), Err("invalid port number '0'".into()));
        assert_eq!(parse("redis://[::1]:6380", Memtier), Err("invalid port number ':1]:6380'".into()));
        assert_eq!(parse("redis://h:1:2", Memtier), Err("invalid port number '1:2'".into()));
    }
}
