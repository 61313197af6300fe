//! pubsub::subscriber: subscriber connections on an epoll thread — subscribe and wait for
//! every confirmation, then read messages, record publish-to-deliver latency and tally each
//! message (new, duplicate, foreign) until the run says stop.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mio::{Events, Interest, Poll, Token};

use crate::base::clock;
use crate::base::resp::{self, encode_into, Kind};
use crate::engine::stats::ThreadStats;

use super::conn::{connect, Shared};
use super::options::{Mode, PubsubOptions};
use super::payload::{self, Tally};

/// One element of a RESP array: a bulk string's bytes or an integer's digits, and the
/// bytes it took.
fn element(b: &[u8]) -> Option<(&[u8], usize)> {
    let eol = b.windows(2).position(|w| w == b"\r\n")?;
    match b.first()? {
        b'$' => {
            let n: usize = std::str::from_utf8(&b[1..eol]).ok()?.parse().ok()?;
            let start = eol + 2;
            Some((b.get(start..start + n)?, start + n + 2))
        }
        b':' => Some((&b[1..eol], eol + 2)),
        _ => None,
    }
}

/// The kind (`message`, `subscribe`, …) and last element of a pub/sub frame (a RESP2
/// array or RESP3 push of bulk strings and integers); None for anything else.
pub fn frame_parts(frame: &[u8]) -> Option<(&[u8], &[u8])> {
    if !matches!(frame.first(), Some(b'*' | b'>')) {
        return None;
    }
    let eol = frame.windows(2).position(|w| w == b"\r\n")?;
    let n: usize = std::str::from_utf8(&frame[1..eol]).ok()?.parse().ok()?;
    let mut pos = eol + 2;
    let (kind, used) = element(&frame[pos..])?;
    pos += used;
    let mut last = kind;
    for _ in 1..n {
        let (e, used) = element(&frame[pos..])?;
        last = e;
        pos += used;
    }
    Some((kind, last))
}


/// One subscriber connection.
pub(super) struct Sub {
    stream: mio::net::TcpStream,
    buf: Vec<u8>,
    len: usize,
    pub channels: Vec<usize>,
    pub tally: Tally,
    /// The server closed the connection (a subscriber over client-output-buffer-limit
    /// pubsub is disconnected): what it did not receive counts as lost.
    pub closed: bool,
}

/// Connects, subscribes to `channels` and waits for every confirmation.
fn subscribe(o: &PubsubOptions, channels: &[usize]) -> Result<TcpStream, String> {
    let mut s = connect(o)?;
    let names: Vec<String> = channels.iter().map(|&c| subscription_name(o, c)).collect();
    let mut args: Vec<&[u8]> = vec![o.mode.name().as_bytes()];
    args.extend(names.iter().map(|n| n.as_bytes()));
    let mut out = Vec::new();
    encode_into(&args, &mut out);
    s.write_all(&out).map_err(|e| format!("subscribing: {e}"))?;
    let mut buf = vec![0u8; 64 * 1024];
    let (mut len, mut confirmed) = (0, 0);
    while confirmed < names.len() {
        let got = s.read(&mut buf[len..]).map_err(|e| format!("subscribing: {e}"))?;
        if got == 0 {
            return Err("subscribing: the server closed the connection".into());
        }
        len += got;
        let mut pos = 0;
        while let Some((used, kind)) = resp::skip(&buf[pos..len]).map_err(|e| format!("protocol error: {}", e.0))? {
            if let Kind::Error { start, end, .. } = kind {
                return Err(format!("{}: the server answered {}", o.mode.name().to_uppercase(), String::from_utf8_lossy(&buf[pos + start..pos + end])));
            }
            confirmed += 1;
            pos += used;
        }
        buf.copy_within(pos..len, 0);
        len -= pos;
    }
    Ok(s)
}

/// The name subscribed to: the channel, or for PSUBSCRIBE a pattern matching exactly it.
fn subscription_name(o: &PubsubOptions, c: usize) -> String {
    let name = o.channel(c);
    if o.mode != Mode::Psubscribe {
        return name;
    }
    name.chars().flat_map(|ch| if "*?[]\\".contains(ch) { vec!['\\', ch] } else { vec![ch] }).collect()
}

/// Handles the complete frames in `sub`'s buffer; returns the new messages.
fn consume(sub: &mut Sub, st: &mut ThreadStats, now: u64) -> Result<u64, String> {
    let mut pos = 0;
    let mut new = 0;
    while let Some((used, kind)) = resp::skip(&sub.buf[pos..sub.len]).map_err(|e| format!("protocol error: {}", e.0))? {
        let frame = &sub.buf[pos..pos + used];
        pos += used;
        if let Kind::Error { class, start, end } = kind {
            st.note_error(class, &frame[start..end]);
            st.record_error(now, class);
            continue;
        }
        let Some((what, last)) = frame_parts(frame) else { continue };
        if !matches!(what, b"message" | b"pmessage" | b"smessage") {
            continue;
        }
        match payload::decode(last) {
            Some(s) if sub.tally.note(s.publisher, s.seq) => {
                st.record(now, now.saturating_sub(s.intended_ns), now.saturating_sub(s.sent_ns));
                new += 1;
            }
            Some(_) => {}
            None => sub.tally.foreign += 1,
        }
    }
    sub.buf.copy_within(pos..sub.len, 0);
    sub.len -= pos;
    Ok(new)
}

/// Reads what `sub` has until it would block.
fn read_sub(sub: &mut Sub, st: &mut ThreadStats) -> Result<u64, String> {
    let mut new = 0;
    loop {
        if sub.len == sub.buf.len() {
            let n = sub.buf.len() * 2;
            sub.buf.resize(n, 0);
        }
        match sub.stream.read(&mut sub.buf[sub.len..]) {
            Ok(0) => {
                sub.closed = true;
                return Ok(new);
            }
            Ok(got) => {
                sub.len += got;
                new += consume(sub, st, clock::now())?;
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                sub.closed = true;
                return Ok(new);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(new),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("reading messages: {e}")),
        }
    }
}

/// A subscriber thread: subscribes its connections, then reads messages until `done`.
pub(super) fn subscriber_thread(o: &PubsubOptions, ids: Vec<usize>, shared: &Shared) -> Result<(ThreadStats, Vec<Sub>), String> {
    let poll = Poll::new().map_err(|e| format!("poll: {e}"))?;
    let mut subs = Vec::new();
    for (t, &i) in ids.iter().enumerate() {
        let channels = payload::channels_of(i, o.per_subscriber, o.channels);
        let s = subscribe(o, &channels)?;
        s.set_nonblocking(true).map_err(|e| e.to_string())?;
        let mut stream = mio::net::TcpStream::from_std(s);
        poll.registry().register(&mut stream, Token(t), Interest::READABLE).map_err(|e| format!("poll: {e}"))?;
        subs.push(Sub { stream, buf: vec![0u8; 64 * 1024], len: 0, channels, tally: Tally::new(o.publishers), closed: false });
        shared.ready.fetch_add(1, Ordering::SeqCst);
    }
    let mut poll = poll;
    let mut st = ThreadStats::new(3, o.rps.is_some());
    let mut events = Events::with_capacity(1024);
    let mut started = false;
    while !shared.done.load(Ordering::SeqCst) {
        poll.poll(&mut events, Some(Duration::from_millis(20))).map_err(|e| format!("poll: {e}"))?;
        if !started && shared.t0.load(Ordering::SeqCst) != 0 {
            st.start_measuring(shared.t0.load(Ordering::SeqCst));
            started = true;
        }
        let mut new = 0;
        for ev in events.iter() {
            if let Some(sub) = subs.get_mut(ev.token().0).filter(|s| !s.closed) {
                new += read_sub(sub, &mut st)?;
                if sub.closed {
                    let _ = poll.registry().deregister(&mut sub.stream);
                }
            }
        }
        shared.delivered.fetch_add(new, Ordering::SeqCst);
    }
    st.finish(clock::now());
    Ok((st, subs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_give_kind_and_payload() {
        let m = b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n";
        assert_eq!(frame_parts(m), Some((&b"message"[..], &b"hello"[..])));
        let p = b"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$3\r\nabc\r\n";
        assert_eq!(frame_parts(p), Some((&b"pmessage"[..], &b"abc"[..])));
        let s = b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n";
        assert_eq!(frame_parts(s), Some((&b"subscribe"[..], &b"1"[..])));
        let push = b">3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$0\r\n\r\n";
        assert_eq!(frame_parts(push), Some((&b"smessage"[..], &b""[..])));
        assert_eq!(frame_parts(b"+OK\r\n"), None);
    }

    #[test]
    fn pattern_names_match_only_their_channel() {
        let o = PubsubOptions { mode: Mode::Psubscribe, prefix: "a*b?".into(), ..PubsubOptions::default() };
        assert_eq!(subscription_name(&o, 0), "a\\*b\\?1");
    }
}
