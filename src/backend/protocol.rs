//! What ibench's own protocol clients (`postgres::wire`, `mysql::wire`) share: a TCP or Unix
//! stream the connection's thread blocks on, a reused send buffer, a receive buffer whose
//! messages are read in place ([`Channel`]), and the kinds of error ([`WireError`]).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

/// Initial size of a receive buffer; it grows for a longer message.
const RECEIVE_BUFFER_BYTES: usize = 64 * 1024;

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
}

impl Channel {
    /// A channel on a connected stream.
    pub fn new(stream: Stream) -> Channel {
        Channel {
            stream,
            out: Vec::with_capacity(16 * 1024),
            received: ReceiveBuffer::default(),
            broken: false,
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
        self.received.fill(&mut self.stream, n)
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
    /// Open a blocking stream to the address.
    pub fn connect(&self, timeout: Option<Duration>) -> io::Result<Stream> {
        match self {
            Address::Tcp(a) => {
                let s = match timeout.filter(|t| !t.is_zero()) {
                    Some(t) => TcpStream::connect_timeout(a, t)?,
                    None => TcpStream::connect(a)?,
                };
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }
            Address::Unix(p) => Ok(Stream::Unix(UnixStream::connect(p)?)),
        }
    }
}

/// A connected blocking stream.
pub enum Stream {
    /// Over TCP.
    Tcp(TcpStream),
    /// Over a Unix socket.
    Unix(UnixStream),
}

impl Stream {
    /// Bound every read (`None`: block as long as it takes). The login is bounded by the
    /// connect timeout, so a server that accepts but never answers is an error, not a hang;
    /// statements are not (a statement may rightly take hours, and Ctrl-C cancels it).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        // The OS refuses a zero timeout; zero means none, as for the connect.
        let timeout = timeout.filter(|t| !t.is_zero());
        match self {
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            Stream::Unix(s) => s.set_read_timeout(timeout),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
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
        if self.bytes.len() < n {
            self.bytes.resize(n.max(self.bytes.len() * 2), 0);
        }
        while self.end < n {
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

    #[test]
    fn a_read_interrupted_by_a_signal_is_retried() {
        let mut b = ReceiveBuffer::default();
        b.fill(&mut Flinch(false, vec![1, 2, 3]), 3).unwrap();
        assert_eq!(b.pending(), &[1, 2, 3]);
    }
}
