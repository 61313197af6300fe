//! transport: TCP / Unix / TLS byte streams. Setup (connect, TLS handshake,
//! AUTH/SELECT/HELLO) is blocking; the benchmark phase is non-blocking via mio.

use std::io::{self, Read, Write};
use std::net::{TcpStream as StdTcp, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream as StdUnix;
use std::sync::Arc;
use std::time::Duration;

use mio::event::Source;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};

use crate::base::resp;

#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    Tcp(String, u16),
    Unix(String),
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Tcp(h, p) if h.contains(':') => write!(f, "[{h}]:{p}"),
            Endpoint::Tcp(h, p) => write!(f, "{h}:{p}"),
            Endpoint::Unix(s) => write!(f, "{s}"),
        }
    }
}

/// Everything needed to open one benchmark connection.
#[derive(Clone)]
pub struct ConnectSpec {
    pub tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
    /// Pre-encoded AUTH / SELECT / HELLO commands and how many replies they produce.
    pub prefix: Vec<u8>,
    pub prefix_replies: usize,
}

pub enum Stream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
    Tls(Box<TlsStream>),
}

pub struct TlsStream {
    sock: mio::net::TcpStream,
    conn: ClientConnection,
}

/// A blocking stream used during setup.
enum Setup {
    Tcp(StdTcp),
    Unix(StdUnix),
    Tls(Box<rustls::StreamOwned<ClientConnection, StdTcp>>),
}

impl Setup {
    fn io(&mut self) -> &mut dyn ReadWrite {
        match self {
            Setup::Tcp(s) => s,
            Setup::Unix(s) => s,
            Setup::Tls(s) => s.as_mut(),
        }
    }
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn open_tcp(host: &str, port: u16) -> io::Result<StdTcp> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for addr in (host, port).to_socket_addrs()? {
        match StdTcp::connect_timeout(&addr, Duration::from_secs(5)) {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn open(ep: &Endpoint, spec: &ConnectSpec) -> Result<Setup, String> {
    let fail = |e: &dyn std::fmt::Display| format!("Could not connect to server at {ep}: {e}");
    match ep {
        Endpoint::Unix(p) => StdUnix::connect(p).map(Setup::Unix).map_err(|e| fail(&e)),
        Endpoint::Tcp(h, p) => {
            let sock = open_tcp(h, *p).map_err(|e| fail(&e))?;
            let Some((cfg, name)) = &spec.tls else { return Ok(Setup::Tcp(sock)) };
            let conn = ClientConnection::new(cfg.clone(), name.clone()).map_err(|e| fail(&e))?;
            let mut s = rustls::StreamOwned::new(conn, sock);
            sock_timeout(&s.sock)?;
            while s.conn.is_handshaking() {
                s.conn
                    .complete_io(&mut s.sock)
                    .map_err(|e| format!("Could not negotiate a TLS connection with {ep}: {e}"))?;
            }
            Ok(Setup::Tls(Box::new(s)))
        }
    }
}

fn sock_timeout(s: &StdTcp) -> Result<(), String> {
    s.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())
}

/// Sends `req` and reads exactly `n` replies on a blocking stream.
fn roundtrip(io: &mut dyn ReadWrite, req: &[u8], n: usize) -> io::Result<Vec<resp::Value>> {
    io.write_all(req)?;
    io.flush()?;
    let mut buf = Vec::with_capacity(4096);
    let mut out = Vec::new();
    let mut pos = 0;
    let mut chunk = [0u8; 16384];
    while out.len() < n {
        match resp::skip(&buf[pos..]) {
            Ok(Some((len, _))) => {
                let (v, _) = resp::parse_value(&buf[pos..pos + len]).map_err(|e| io::Error::other(e.0))?;
                out.push(v);
                pos += len;
                continue;
            }
            Ok(None) => {}
            Err(e) => return Err(io::Error::other(e.0)),
        }
        let got = io.read(&mut chunk)?;
        if got == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the connection"));
        }
        buf.extend_from_slice(&chunk[..got]);
    }
    Ok(out)
}

/// A blocking connection for rare control-path requests (e.g. ASK retries).
pub struct Blocking(Setup);

impl Blocking {
    pub fn open(ep: &Endpoint, spec: &ConnectSpec) -> Result<Blocking, String> {
        let mut s = open(ep, spec)?;
        if spec.prefix_replies > 0 {
            let vals = roundtrip(s.io(), &spec.prefix, spec.prefix_replies).map_err(|e| format!("{ep}: {e}"))?;
            check_prefix(ep, &vals)?;
        }
        Ok(Blocking(s))
    }

    /// Sends `req` and returns its `n` replies.
    pub fn call(&mut self, req: &[u8], n: usize) -> Result<Vec<resp::Value>, String> {
        roundtrip(self.0.io(), req, n).map_err(|e| e.to_string())
    }
}

/// Runs one command on a fresh blocking connection (setup/control path).
pub fn command(ep: &Endpoint, spec: &ConnectSpec, req: &[u8]) -> Result<resp::Value, String> {
    let mut s = open(ep, spec)?;
    let mut all = spec.prefix.clone();
    all.extend_from_slice(req);
    let mut vals = roundtrip(s.io(), &all, spec.prefix_replies + 1).map_err(|e| format!("{ep}: {e}"))?;
    check_prefix(ep, &vals[..spec.prefix_replies])?;
    vals.pop().ok_or_else(|| "no reply".to_string())
}

fn check_prefix(ep: &Endpoint, vals: &[resp::Value]) -> Result<(), String> {
    for v in vals {
        if let resp::Value::Error(e) = v {
            return Err(format!("Error from server {ep}: {e}"));
        }
    }
    Ok(())
}

/// Opens a benchmark connection: blocking setup, then switched to non-blocking.
pub fn connect(ep: &Endpoint, spec: &ConnectSpec) -> Result<Stream, String> {
    let mut s = open(ep, spec)?;
    if spec.prefix_replies > 0 {
        let vals = roundtrip(s.io(), &spec.prefix, spec.prefix_replies).map_err(|e| format!("{ep}: {e}"))?;
        check_prefix(ep, &vals)?;
    }
    let nb = |e: io::Error| format!("{ep}: {e}");
    Ok(match s {
        Setup::Tcp(t) => {
            t.set_nonblocking(true).map_err(nb)?;
            Stream::Tcp(mio::net::TcpStream::from_std(t))
        }
        Setup::Unix(u) => {
            u.set_nonblocking(true).map_err(nb)?;
            Stream::Unix(mio::net::UnixStream::from_std(u))
        }
        Setup::Tls(b) => {
            let (conn, sock) = b.into_parts();
            sock.set_nonblocking(true).map_err(nb)?;
            Stream::Tls(Box::new(TlsStream { sock: mio::net::TcpStream::from_std(sock), conn }))
        }
    })
}

impl Stream {
    pub fn source(&mut self) -> &mut dyn Source {
        match self {
            Stream::Tcp(s) => s,
            Stream::Unix(s) => s,
            Stream::Tls(t) => &mut t.sock,
        }
    }

    pub fn raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(t) => t.sock.as_raw_fd(),
        }
    }

    /// Back to blocking mode: io_uring then waits for readiness itself (an
    /// O_NONBLOCK socket would hand EAGAIN back instead).
    pub fn set_blocking(&self) -> Result<(), String> {
        let fd = self.raw_fd();
        // SAFETY: fcntl on a socket we own.
        let ok = unsafe {
            let fl = libc::fcntl(fd, libc::F_GETFL);
            fl >= 0 && libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK) == 0
        };
        if ok {
            Ok(())
        } else {
            Err(format!("fcntl: {}", io::Error::last_os_error()))
        }
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// Non-blocking read of plaintext. Ok(0) = peer closed.
    #[inline]
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => raw_read(s.as_raw_fd(), buf),
            Stream::Unix(s) => raw_read(s.as_raw_fd(), buf),
            Stream::Tls(t) => t.read(buf),
        }
    }

    /// Non-blocking write. For TLS, plaintext is taken up to rustls' buffer limit and
    /// records are flushed as far as the socket allows.
    #[inline]
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => raw_write(s.as_raw_fd(), buf),
            Stream::Unix(s) => raw_write(s.as_raw_fd(), buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    /// Pushes pending TLS records; true if some remain (wait for writable).
    pub fn flush(&mut self) -> io::Result<bool> {
        match self {
            Stream::Tls(t) => t.flush(),
            _ => Ok(false),
        }
    }
}

/// read(2) through syscall(2): skips libc's cancellation-point bookkeeping on the hot path.
#[inline]
fn raw_read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: buf is valid for writes of buf.len() bytes; fd is owned by the caller's stream.
    let n = unsafe { libc::syscall(libc::SYS_read, fd, buf.as_mut_ptr(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// write(2) through syscall(2); SIGPIPE is ignored process-wide.
#[inline]
fn raw_write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is valid for reads of buf.len() bytes; fd is owned by the caller's stream.
    let n = unsafe { libc::syscall(libc::SYS_write, fd, buf.as_ptr(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

impl TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut n = self.conn.writer().write(buf)?;
        if n == 0 && !buf.is_empty() {
            // rustls' buffer is full: push records out, then retry once.
            if self.flush()? {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            n = self.conn.writer().write(buf)?;
            if n == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
        }
        self.flush()?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<bool> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match self.conn.read_tls(&mut self.sock) {
                Ok(0) => return Ok(0),
                Ok(_) => {
                    self.conn.process_new_packets().map_err(io::Error::other)?;
                    if self.conn.wants_write() {
                        self.flush()?;
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}
