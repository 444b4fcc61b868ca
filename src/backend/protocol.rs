//! What ibench's own protocol clients (`postgres::wire`, `mysql::wire`) share: a TCP or Unix
//! stream the connection's thread blocks on, a reused send buffer, a receive buffer whose
//! messages are read in place ([`Channel`]), and the kinds of error ([`WireError`]).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::deadline::{self, Deadlined, ReadTimeout};
use super::tls::{self, TlsStream};
use crate::results::target::TlsInfo;

/// Initial size of a receive buffer; it grows (doubling) as a longer message arrives, never
/// to a length a peer merely claims.
const RECEIVE_BUFFER_BYTES: usize = 64 * 1024;

/// A receive buffer grown past this goes back to [`RECEIVE_BUFFER_BYTES`] once what it held
/// is consumed (one 300 MiB message once kept 535 MiB for the connection's life).
const SHRINK_ABOVE_BYTES: usize = 4 << 20;

/// TCP keepalive: the first probe after this much silence ...
const KEEPALIVE_IDLE_SECONDS: i32 = 60;
/// ... then one probe every this many seconds ...
const KEEPALIVE_INTERVAL_SECONDS: i32 = 10;
/// ... and the connection is dead after this many unanswered probes (about 2 minutes).
const KEEPALIVE_PROBES: i32 = 6;

/// How long a cancel request or a `KILL QUERY` may take, connect and reply included.
pub const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);

/// What a read past the login's deadline says.
pub const LOGIN_OVERDUE: &str = "the server did not finish the login in time (connect timeout)";

/// What a read past a bounded statement's deadline says (a `KILL QUERY`).
pub const STATEMENT_OVERDUE: &str =
    "the server did not finish its reply in time (statement timeout)";

/// The most rows one text query (a describe, settle or sampler query) keeps.
pub const MAX_TEXT_ROWS: usize = 100_000;

/// The most bytes of row data one text query keeps.
pub const MAX_TEXT_BYTES: usize = 64 << 20;

/// The most bytes of one piece of server text (an error's message, detail or hint, a
/// warning) that ibench keeps, shows and records; the rest is cut, saying so.
pub const MAX_SERVER_TEXT_BYTES: usize = 4096;

/// What a text query past [`MAX_TEXT_ROWS`] or [`MAX_TEXT_BYTES`] says.
pub fn text_reply_too_long() -> String {
    format!(
        "a text query's reply of more than {MAX_TEXT_ROWS} rows or {} MiB, more than ibench \
         keeps",
        MAX_TEXT_BYTES >> 20
    )
}

/// Server text as ibench keeps it: UTF-8 (invalid bytes replaced), control characters
/// escaped ([`escape_controls`]: an error must not set the terminal's title or clear its
/// screen), and at most [`MAX_SERVER_TEXT_BYTES`] (a 50 MiB error once filled stderr,
/// run.json and the report).
pub fn server_text(bytes: &[u8]) -> String {
    let cut = bytes.len() > MAX_SERVER_TEXT_BYTES;
    let kept = &bytes[..bytes.len().min(MAX_SERVER_TEXT_BYTES)];
    let mut text = escape_controls(&String::from_utf8_lossy(kept));
    if cut {
        text.push_str(&format!("... (cut: the server sent {} bytes)", bytes.len()));
    }
    text
}

/// A column of a text query's row as ibench keeps it: UTF-8 (invalid bytes replaced),
/// control and bidi characters escaped as [`server_text`] does, not cut (the text caps,
/// [`MAX_TEXT_BYTES`], bound a whole reply). What is shown or recorded as one piece (a
/// version, a build fact) goes through [`server_text`] as well.
pub fn server_cell(bytes: &[u8]) -> String {
    escape_controls(&String::from_utf8_lossy(bytes))
}

/// Whether `c` reorders or hides text on a terminal: a bidirectional control (an embedding,
/// override or isolate, and the marks), which could make a line read other than it is.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// `text` with every control character but newline and tab, and every bidi control, written
/// as an escape (`\x1b`, `\u{9b}`, `\u{202e}`), so no text a server sent can drive the
/// terminal it is shown on or reorder the line it is in.
pub fn escape_controls(text: &str) -> String {
    let escaped = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c);
    if !text.chars().any(escaped) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !escaped(c) => out.push(c),
            c if u32::from(c) < 0x80 => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    out
}

/// What TLS the connections made from one configuration got (the describe connection, the
/// benchmark's, the cancels'), when TLS is optional (`prefer`, `allow`, `PREFERRED`): the
/// first one's outcome, which every later one must match. A server (or a man in the middle)
/// that gave the first connection TLS and the next ones none would otherwise have the run
/// record TLS for a benchmark that ran in plaintext. Clones share the record.
#[derive(Clone, Debug, Default)]
pub struct TlsLedger(std::sync::Arc<std::sync::Mutex<LedgerEntries>>);

/// What a [`TlsLedger`] holds.
#[derive(Debug, Default)]
struct LedgerEntries {
    /// The first connection's TLS (`Some(None)`: plaintext).
    first: Option<Option<TlsInfo>>,
    /// The plaintext fallback and a differing TLS version were said once already.
    warned_plaintext: bool,
    warned_version: bool,
}

impl TlsLedger {
    /// Record what a connection to `target` got under the optional-TLS mode `mode`: an error
    /// when it is TLS where the first connection had none, or plaintext where it had TLS; a
    /// warning on the terminal (once) when the mode fell back to plaintext, and when two TLS
    /// connections got different versions or ciphers.
    pub fn check(&self, got: Option<TlsInfo>, target: &str, mode: &str) -> Result<(), String> {
        self.check_on(got, target, mode, false)
    }

    /// [`TlsLedger::check`], where `loopback` says the peer is on this machine: no warning
    /// about plaintext then (nothing crosses a network; a private server has no TLS).
    pub fn check_on(
        &self,
        got: Option<TlsInfo>,
        target: &str,
        mode: &str,
        loopback: bool,
    ) -> Result<(), String> {
        let Ok(mut entries) = self.0.lock() else {
            return Ok(());
        };
        let first = entries.first.get_or_insert_with(|| got.clone()).clone();
        match (&first, &got) {
            (Some(f), None) => {
                return Err(format!(
                    "a connection to {target} got no TLS, while the first one got {f} ({mode} \
                     takes what the server offers, so a server or a man in the middle can drop \
                     TLS for some connections): use TLS always (sslmode=require, \
                     ssl-mode=REQUIRED or stronger) or never"
                ));
            }
            (None, Some(g)) => {
                return Err(format!(
                    "a connection to {target} got {g}, while the first one got no TLS ({mode}): \
                     the run's connections would not be alike; use TLS always (sslmode=require, \
                     ssl-mode=REQUIRED or stronger) or never"
                ));
            }
            (Some(f), Some(g)) if f != g && !entries.warned_version => {
                entries.warned_version = true;
                crate::say!(
                    "warning: connections to {target} got different TLS: {f} and {g} (the run \
                     records the first)"
                );
            }
            (None, None) if !entries.warned_plaintext && !loopback => {
                entries.warned_plaintext = true;
                crate::say!(
                    "warning: {target}: {mode} fell back to plaintext (the server offers no TLS, \
                     or the TLS handshake failed): the run is not encrypted"
                );
            }
            _ => {}
        }
        Ok(())
    }
}

/// Why a call on a protocol client failed; `S` is the protocol's error from the server.
#[derive(Debug, thiserror::Error)]
pub enum WireError<S: std::fmt::Debug + std::fmt::Display> {
    /// The socket failed (the server is gone, or never answered).
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The server refused the statement or the login; the connection is still usable after
    /// a statement's error.
    #[error("{0}")]
    Server(Box<S>),
    /// The login cannot proceed from the client's side (no password, a method ibench lacks).
    #[error("authentication error: {0}")]
    Auth(String),
    /// A statement or parameter ibench cannot send.
    #[error("{0}")]
    Param(String),
    /// The server sent something the client does not understand; the connection is closed.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// TLS could not be set up as asked (refused by the server, a certificate that does not
    /// check out, a CA file that cannot be read).
    #[error("{0}")]
    Tls(String),
}

impl<S: std::fmt::Debug + std::fmt::Display> WireError<S> {
    /// The server's error, if it was one.
    pub fn server(&self) -> Option<&S> {
        match self {
            WireError::Server(e) => Some(e),
            _ => None,
        }
    }
}

/// One connection's stream with its send and receive buffers.
pub struct Channel {
    /// The socket.
    pub stream: Stream,
    /// The outgoing messages of one call, reused.
    pub out: Vec<u8>,
    /// Received bytes, read in place.
    pub received: ReceiveBuffer,
    /// Set when the byte stream can no longer be trusted (an I/O or protocol error, a
    /// failed login): every later call fails at once.
    pub broken: bool,
    /// When set (during the login, or a bounded statement), every read ends by then: one
    /// deadline for the whole exchange, not one timeout per read.
    pub deadline: Option<Instant>,
    /// What a read past the deadline says ([`LOGIN_OVERDUE`], [`STATEMENT_OVERDUE`]).
    pub overdue: &'static str,
}

impl Channel {
    /// A channel on a connected stream.
    pub fn new(stream: Stream) -> Channel {
        Channel {
            stream,
            out: Vec::with_capacity(16 * 1024),
            received: ReceiveBuffer::default(),
            broken: false,
            deadline: None,
            overdue: LOGIN_OVERDUE,
        }
    }

    /// An error when the channel was broken earlier.
    pub fn usable(&self) -> io::Result<()> {
        if self.broken {
            Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the connection was lost earlier",
            ))
        } else {
            Ok(())
        }
    }

    /// Send what is in the send buffer, with one `write` as a rule.
    pub fn send(&mut self) -> io::Result<()> {
        let r = self.stream.write_all(&self.out);
        if r.is_err() {
            self.broken = true;
        }
        r
    }

    /// Make at least `n` received bytes pending (see [`ReceiveBuffer::fill`]).
    pub fn fill(&mut self, n: usize) -> io::Result<()> {
        match self.deadline {
            None => self.received.fill(
                &mut Deadlined {
                    stream: &mut self.stream,
                    deadline: None,
                    overdue: self.overdue,
                },
                n,
            ),
            Some(deadline) => self.received.fill(
                &mut Deadlined {
                    stream: &mut self.stream,
                    deadline: Some(deadline),
                    overdue: self.overdue,
                },
                n,
            ),
        }
    }

    /// Bound every read from now on by `timeout` from now, for the whole exchange
    /// (`None` or zero: unbounded, and watched: the socket wakes every
    /// [`deadline::WATCH_TICK`] to look at the stall limit and at Ctrl-C).
    pub fn bound(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.deadline = timeout.filter(|t| !t.is_zero()).map(|t| Instant::now() + t);
        if self.deadline.is_none() {
            self.stream.set_read_timeout(Some(deadline::WATCH_TICK))?;
        }
        Ok(())
    }

    /// A parting message (Terminate, `COM_QUIT`) when the channel is still sound.
    pub fn say_goodbye(&mut self, message: &[u8]) {
        if !self.broken {
            let _ = self.stream.write_all(message);
        }
    }
}

/// Where a connection goes.
#[derive(Debug, Clone)]
pub enum Address {
    /// A TCP address (`TCP_NODELAY` is set: one statement is one small write).
    Tcp(SocketAddr),
    /// A Unix socket file.
    Unix(PathBuf),
}

impl Address {
    /// Open a blocking stream to the address (TCP with keepalive on, so that a peer that
    /// vanished is noticed within minutes even while a statement runs).
    pub fn connect(&self, timeout: Option<Duration>) -> io::Result<Stream> {
        match self {
            Address::Tcp(a) => {
                let s = match timeout.filter(|t| !t.is_zero()) {
                    Some(t) => TcpStream::connect_timeout(a, t)?,
                    None => TcpStream::connect(a)?,
                };
                s.set_nodelay(true)?;
                set_keepalive(&s)?;
                // Until the login's end, a server silent for the stall limit ends the
                // connect (a TLS answer or handshake read straight from the socket).
                s.set_read_timeout(deadline::stall_limit())?;
                s.set_write_timeout(deadline::stall_limit())?;
                Ok(Stream::Tcp(s))
            }
            Address::Unix(p) => {
                let s = UnixStream::connect(p)?;
                s.set_read_timeout(deadline::stall_limit())?;
                s.set_write_timeout(deadline::stall_limit())?;
                Ok(Stream::Unix(s))
            }
        }
    }

    /// Whether it is a Unix socket (a local peer: no TLS, a cleartext password is fine).
    pub fn is_local(&self) -> bool {
        matches!(self, Address::Unix(_))
    }
}

/// Turn TCP keepalive on with ibench's idle, interval and probe count.
fn set_keepalive(s: &TcpStream) -> io::Result<()> {
    let fd = s.as_raw_fd();
    let set = |level: libc::c_int, name: libc::c_int, value: libc::c_int| -> io::Result<()> {
        // SAFETY: fd is an open socket owned by `s`; the option value is a c_int on the stack.
        let r = unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                (&raw const value).cast(),
                libc::socklen_t::try_from(std::mem::size_of::<libc::c_int>()).unwrap_or(4),
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    set(
        libc::IPPROTO_TCP,
        libc::TCP_KEEPIDLE,
        KEEPALIVE_IDLE_SECONDS,
    )?;
    set(
        libc::IPPROTO_TCP,
        libc::TCP_KEEPINTVL,
        KEEPALIVE_INTERVAL_SECONDS,
    )?;
    set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, KEEPALIVE_PROBES)
}

/// A connected blocking stream.
pub enum Stream {
    /// Over TCP.
    Tcp(TcpStream),
    /// Over a Unix socket.
    Unix(UnixStream),
    /// TLS over TCP; `verified`: the server's certificate was checked against trusted
    /// roots (`verify-ca`, `verify-full`, `VERIFY_CA`, `VERIFY_IDENTITY`, or `require` /
    /// `REQUIRED` with a CA given), so the peer is who the roots vouch for.
    Tls {
        /// The TLS session.
        tls: Box<TlsStream>,
        /// Whether the certificate was checked.
        verified: bool,
    },
}

impl Stream {
    /// What TLS negotiated, when the stream is TLS.
    pub fn tls_info(&self) -> Option<TlsInfo> {
        match self {
            Stream::Tls { tls, .. } => Some(tls::info(&tls.conn)),
            _ => None,
        }
    }

    /// Whether the stream is a Unix socket.
    pub fn is_local(&self) -> bool {
        matches!(self, Stream::Unix(_))
    }

    /// Whether the peer is on this machine: a Unix socket, or TCP to a loopback address.
    pub fn is_loopback(&self) -> bool {
        let tcp = match self {
            Stream::Unix(_) => return true,
            Stream::Tcp(s) => s,
            Stream::Tls { tls, .. } => &tls.sock,
        };
        tcp.peer_addr().is_ok_and(|a| a.ip().is_loopback())
    }

    /// Whether the stream is encrypted.
    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls { .. })
    }

    /// Whether a password may go over this stream in clear: a Unix socket in a directory
    /// other users cannot write, or TLS whose certificate was checked. TLS with an unchecked
    /// certificate is not enough: whoever took the port (or sits in the middle) can show any
    /// certificate and read the password; nor is a socket in a world-writable directory
    /// (`/tmp`), where anyone could have put a socket of their own under the server's name
    /// (X31 in docs/security.md).
    pub fn is_private(&self) -> bool {
        match self {
            Stream::Unix(_) => self.shared_socket_dir().is_none(),
            Stream::Tls { verified, .. } => *verified,
            Stream::Tcp(_) => false,
        }
    }

    /// The directory of the server's Unix socket when every user may write into it
    /// (world-writable, sticky or not); `None` for TCP, a private directory, or a socket with
    /// no path.
    pub fn shared_socket_dir(&self) -> Option<std::path::PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let Stream::Unix(s) = self else {
            return None;
        };
        let peer = s.peer_addr().ok()?;
        let dir = peer.as_pathname()?.parent()?;
        let mode = std::fs::metadata(dir).ok()?.permissions().mode();
        (mode & 0o002 != 0).then(|| dir.to_path_buf())
    }

    /// Bound every read (`None`: block as long as it takes). The login is bounded by the
    /// connect timeout, so a server that accepts but never answers is an error, not a hang;
    /// statements are not (a statement may rightly take hours, and Ctrl-C cancels it).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        // The OS refuses a zero timeout; zero means none, as for the connect.
        let timeout = timeout.filter(|t| !t.is_zero());
        match self {
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            Stream::Unix(s) => s.set_read_timeout(timeout),
            Stream::Tls { tls, .. } => tls.sock.set_read_timeout(timeout),
        }
    }

    /// Bound every write (a peer that stops reading must not hang a login or a cancel).
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        let timeout = timeout.filter(|t| !t.is_zero());
        match self {
            Stream::Tcp(s) => s.set_write_timeout(timeout),
            Stream::Unix(s) => s.set_write_timeout(timeout),
            Stream::Tls { tls, .. } => tls.sock.set_write_timeout(timeout),
        }
    }
}

impl ReadTimeout for Stream {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        Stream::set_read_timeout(self, timeout)
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls { tls, .. } => tls.read(buf).map_err(tls::read_error),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls { tls, .. } => tls.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tls { tls, .. } => tls.flush(),
            _ => Ok(()),
        }
    }
}

/// Received bytes: `bytes[start..end]` is not consumed yet. Messages are handed out as
/// ranges of it, valid until the next read.
pub struct ReceiveBuffer {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl Default for ReceiveBuffer {
    fn default() -> Self {
        ReceiveBuffer {
            bytes: vec![0; RECEIVE_BUFFER_BYTES],
            start: 0,
            end: 0,
        }
    }
}

impl ReceiveBuffer {
    /// The unconsumed bytes.
    pub fn pending(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// Bytes `range` of the buffer (as returned by [`ReceiveBuffer::take`]).
    pub fn get(&self, at: usize, len: usize) -> &[u8] {
        &self.bytes[at..at + len]
    }

    /// Consume `n` pending bytes; returns where they start.
    pub fn take(&mut self, n: usize) -> usize {
        let at = self.start;
        self.start += n.min(self.end - self.start);
        at
    }

    /// Make at least `n` bytes pending, reading from `stream` as needed (blocking). Moves
    /// the pending bytes to the front first, so positions from earlier calls are stale.
    pub fn fill(&mut self, stream: &mut impl Read, n: usize) -> io::Result<()> {
        if self.end - self.start >= n {
            return Ok(());
        }
        self.bytes.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.bytes.len() > SHRINK_ABOVE_BYTES && self.end <= RECEIVE_BUFFER_BYTES {
            // What a long message left behind: back to the usual size, and freed.
            self.bytes.truncate(RECEIVE_BUFFER_BYTES);
            self.bytes.shrink_to_fit();
        }
        while self.end < n {
            if self.end == self.bytes.len() {
                // Grow as bytes arrive: at most twice what the peer really sent.
                let grown = (self.bytes.len() * 2).min(n).max(RECEIVE_BUFFER_BYTES);
                self.bytes.resize(grown, 0);
            }
            let got = match stream.read(&mut self.bytes[self.end..]) {
                Ok(got) => got,
                // A signal (Ctrl-C) during a read with a timeout set is not restarted.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if got == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
            self.end += got;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its bytes a few at a time.
    struct Trickle(Vec<u8>, usize);

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0.drain(..n);
            Ok(n)
        }
    }

    #[test]
    fn fills_across_short_reads_and_grows_for_a_long_message() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut src = Trickle(data.clone(), 7000);
        let mut b = ReceiveBuffer::default();
        b.fill(&mut src, 3).unwrap();
        let at = b.take(3);
        assert_eq!(b.get(at, 3), &data[..3]);
        b.fill(&mut src, 150_000).unwrap();
        assert!(b.pending().len() >= 150_000);
        assert_eq!(&b.pending()[..5], &data[3..8]);
        let mut empty = Trickle(Vec::new(), 1);
        let e = b.fill(&mut empty, 1_000_000).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }

    /// Interrupted once (a signal during a read with a timeout), then the bytes.
    struct Flinch(bool, Vec<u8>);

    impl Read for Flinch {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if !self.0 {
                self.0 = true;
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
            Trickle(std::mem::take(&mut self.1), 64).read(buf)
        }
    }

    /// Claims a length, then sends nothing more.
    struct Liar(usize);

    impl Read for Liar {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.min(buf.len());
            self.0 -= n;
            Ok(n)
        }
    }

    #[test]
    fn a_claimed_length_does_not_allocate_what_never_arrives() {
        let mut b = ReceiveBuffer::default();
        let e = b.fill(&mut Liar(100), 2 << 30).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(
            b.bytes.len(),
            RECEIVE_BUFFER_BYTES,
            "no growth for 100 bytes"
        );
    }

    #[test]
    fn server_text_is_escaped_and_cut() {
        assert_eq!(server_text(b"plain\nline\t."), "plain\nline\t.");
        assert_eq!(
            server_text(b"\x1b]0;title\x07\x1b[2J"),
            "\\x1b]0;title\\x07\\x1b[2J"
        );
        assert_eq!(escape_controls("a\u{9b}2J"), "a\\u{9b}2J");
        assert_eq!(
            escape_controls("abc\u{202e}fed\u{2066}"),
            "abc\\u{202e}fed\\u{2066}"
        );
        assert_eq!(server_cell(b"x\x1b[31m\xff"), "x\\x1b[31m\u{fffd}");
        let long = vec![b'x'; 50 << 20];
        let t = server_text(&long);
        assert!(t.len() < MAX_SERVER_TEXT_BYTES + 100, "{}", t.len());
        assert!(
            t.ends_with("(cut: the server sent 52428800 bytes)"),
            "{}",
            &t[4000..]
        );
        let mut multibyte = vec![b'x'; MAX_SERVER_TEXT_BYTES - 1];
        multibyte.extend_from_slice("é".as_bytes());
        assert!(
            server_text(&multibyte).contains("cut"),
            "a split character is no panic"
        );
    }

    #[test]
    fn a_buffer_grown_for_a_long_message_shrinks_after_it() {
        let mut b = ReceiveBuffer::default();
        let long = vec![7u8; 10 << 20];
        b.fill(&mut Trickle(long, 1 << 20), 10 << 20).unwrap();
        assert!(b.bytes.len() >= 10 << 20);
        b.take(10 << 20);
        b.fill(&mut Trickle(vec![1, 2, 3], 3), 3).unwrap();
        assert_eq!(b.pending(), &[1, 2, 3]);
        assert_eq!(
            b.bytes.len(),
            RECEIVE_BUFFER_BYTES,
            "back to the usual size"
        );
        assert!(b.bytes.capacity() < SHRINK_ABOVE_BYTES, "and freed");
    }

    #[test]
    fn a_read_interrupted_by_a_signal_is_retried() {
        let mut b = ReceiveBuffer::default();
        b.fill(&mut Flinch(false, vec![1, 2, 3]), 3).unwrap();
        assert_eq!(b.pending(), &[1, 2, 3]);
    }
}
