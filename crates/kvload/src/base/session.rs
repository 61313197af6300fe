//! session: how a benchmark connection starts — TLS, then the commands sent before any
//! request (AUTH, CLIENT TRACKING, SELECT, HELLO): the `ConnectSpec` every connection of a
//! run is opened with.

use crate::base::resp::encode_args;
use crate::base::tls::{self, TlsOptions};
use crate::base::transport::ConnectSpec;

/// The environment variable kvload reads the AUTH password from when `-a` is not given:
/// a password in argv is visible to every user through `ps`.
pub const AUTH_ENV: &str = "KVLOAD_AUTH";

/// What a connection does before its first request.
pub struct Session<'a> {
    pub tls: &'a TlsOptions,
    /// The server's host name: TLS's server name unless `--sni` names another.
    pub host: &'a str,
    pub user: Option<&'a str>,
    pub password: Option<&'a str>,
    /// CLIENT TRACKING on.
    pub tracking: bool,
    /// SELECT this database (not when 0, nor in cluster mode).
    pub dbnum: u32,
    pub cluster: bool,
    /// HELLO 3.
    pub resp3: bool,
}

/// The connect spec of a session: its TLS configuration and its pre-encoded commands.
pub fn connect_spec(s: &Session) -> Result<ConnectSpec, String> {
    let tls = if s.tls.enabled {
        Some((tls::client_config(s.tls)?, tls::server_name(s.tls, s.host)?))
    } else {
        None
    };
    let mut prefix = Vec::new();
    let mut n = 0;
    if let Some(pass) = s.password {
        prefix.extend(match s.user {
            Some(u) => encode_args(&[b"AUTH", u.as_bytes(), pass.as_bytes()]),
            None => encode_args(&[b"AUTH", pass.as_bytes()]),
        });
        n += 1;
    }
    if s.tracking {
        prefix.extend(encode_args(&[b"CLIENT", b"TRACKING", b"on"]));
        n += 1;
    }
    if s.dbnum != 0 && !s.cluster {
        prefix.extend(encode_args(&[b"SELECT", s.dbnum.to_string().as_bytes()]));
        n += 1;
    }
    if s.resp3 {
        prefix.extend(encode_args(&[b"HELLO", b"3"]));
        n += 1;
    }
    Ok(ConnectSpec { tls, prefix, prefix_replies: n })
}
