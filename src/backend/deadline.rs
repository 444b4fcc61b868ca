//! Reads that end by a deadline, for the protocol clients' logins, bounded statements and TLS
//! handshakes: the socket's read timeout is set to what is left before each read, so a peer
//! that trickles a byte at a time cannot stretch an exchange past its deadline.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A stream whose reads can be given a timeout.
pub trait ReadTimeout: Read {
    /// Bound the next reads (`None`: block as long as it takes).
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
}

impl ReadTimeout for TcpStream {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }
}

/// `stream`, whose every read ends by `deadline` (when one is set) with a `TimedOut` error
/// saying `overdue`. Writes go straight through.
pub struct Deadlined<'a, S> {
    /// The stream read from.
    pub stream: &'a mut S,
    /// When the exchange must be over (`None`: the reads are as the socket says).
    pub deadline: Option<Instant>,
    /// What a read past the deadline says.
    pub overdue: &'static str,
}

impl<S: ReadTimeout> Read for Deadlined<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(deadline) = self.deadline else {
            return self.stream.read(buf);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, self.overdue));
        }
        self.stream.set_read_timeout(Some(left))?;
        match self.stream.read(buf) {
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Err(io::Error::new(io::ErrorKind::TimedOut, self.overdue))
            }
            other => other,
        }
    }
}

impl<S: Write> Write for Deadlined<'_, S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}
