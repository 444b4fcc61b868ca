//! Reads that end by a deadline, for the protocol clients' logins, bounded statements and TLS
//! handshakes: the socket's read timeout is set to what is left before each read, so a peer
//! that trickles a byte at a time cannot stretch an exchange past its deadline.
//!
//! Reads without a deadline (a statement's reply) are watched instead: their socket wakes
//! every [`WATCH_TICK`], and the read gives up when the run was interrupted
//! ([`abandon_waits`]: Ctrl-C honoured at any moment, not only inside a step) or when no
//! connection of the process has received a byte for the stall limit ([`set_stall_limit`],
//! `--stall-limit`): a server or a network path that froze without a word fails the wait
//! with [`Stalled`] instead of holding ibench for ever.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often a read without a deadline wakes to look at the stall limit and at Ctrl-C.
pub const WATCH_TICK: Duration = Duration::from_secs(1);

/// What watched waits share: the stall limit, the progress of every connection, the last
/// declared stall and whether waits are abandoned. The process has one, [`WATCH`].
pub struct Watch {
    /// The stall limit in ms; 0: none.
    limit_ms: AtomicU64,
    /// Reads of any connection that returned bytes: the progress the stall limit looks for.
    progress: AtomicU64,
    /// `progress` when a stall was last declared (`u64::MAX`: none): a wait that starts
    /// while nothing has arrived since gives up after one tick, not after another limit.
    stalled_at: AtomicU64,
    /// Set once the run was interrupted: every watched wait gives up at its next tick.
    abandoned: AtomicBool,
}

impl Watch {
    /// No limit, nothing abandoned.
    pub const fn new() -> Watch {
        Watch {
            limit_ms: AtomicU64::new(0),
            progress: AtomicU64::new(0),
            stalled_at: AtomicU64::new(u64::MAX),
            abandoned: AtomicBool::new(false),
        }
    }

    fn set_limit(&self, limit: Option<Duration>) {
        let ms = limit.map_or(0, |l| {
            u64::try_from(l.as_millis()).unwrap_or(u64::MAX).max(1)
        });
        self.limit_ms.store(ms, Ordering::SeqCst);
        self.stalled_at.store(u64::MAX, Ordering::SeqCst);
    }

    fn limit(&self) -> Option<Duration> {
        match self.limit_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        }
    }

    fn got(&self, n: usize) -> usize {
        if n > 0 {
            self.progress.fetch_add(1, Ordering::Relaxed);
        }
        n
    }

    /// A read without a deadline. When the socket has a read timeout (the clients set
    /// [`WATCH_TICK`] after the login), each timeout is a look at the stall limit and at
    /// Ctrl-C; without one the read blocks as before.
    pub fn read(&self, stream: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
        let mut seen = self.progress.load(Ordering::Relaxed);
        let mut since = Instant::now();
        loop {
            match stream.read(buf) {
                Ok(n) => return Ok(self.got(n)),
                Err(e) if is_timeout(&e) => {}
                Err(e) => return Err(e),
            }
            if self.abandoned.load(Ordering::Relaxed) {
                return Err(io::Error::other(Abandoned));
            }
            let Some(limit) = self.limit() else {
                continue;
            };
            let now = self.progress.load(Ordering::Relaxed);
            if now != seen {
                (seen, since) = (now, Instant::now());
                continue;
            }
            if since.elapsed() >= limit || self.stalled_at.load(Ordering::Relaxed) == now {
                self.stalled_at.store(now, Ordering::Relaxed);
                let seconds = u64::try_from(limit.as_millis().div_ceil(1000)).unwrap_or(u64::MAX);
                return Err(io::Error::new(io::ErrorKind::TimedOut, Stalled { seconds }));
            }
        }
    }
}

impl Default for Watch {
    fn default() -> Self {
        Watch::new()
    }
}

/// The process's watch.
pub static WATCH: Watch = Watch::new();

/// Bound how long the process's connections wait for a server that sends nothing at all
/// (`None`: for ever). Applies to every wait without a deadline, and to the sockets opened
/// after it (their reads and writes before the login's end).
pub fn set_stall_limit(limit: Option<Duration>) {
    WATCH.set_limit(limit);
}

/// The stall limit, when one is set.
pub fn stall_limit() -> Option<Duration> {
    WATCH.limit()
}

/// Make every wait without a deadline give up at its next tick (Ctrl-C: the run ends).
pub fn abandon_waits() {
    WATCH.abandoned.store(true, Ordering::SeqCst);
}

/// Whether waits are abandoned (the run was interrupted).
pub fn waits_abandoned() -> bool {
    WATCH.abandoned.load(Ordering::Relaxed)
}

/// A read without a deadline, watched by the process's [`WATCH`].
pub fn watched_read(stream: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    WATCH.read(stream, buf)
}

/// A wait that gave up because no connection received anything for the stall limit: the
/// payload of the `TimedOut` error such a read returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no reply from the server for {seconds} s")]
pub struct Stalled {
    /// The stall limit, whole seconds.
    pub seconds: u64,
}

/// A wait given up because the run was interrupted (Ctrl-C).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("stopped waiting for the server: the run was interrupted")]
pub struct Abandoned;

/// What an I/O error says about the wait it ended: a stall, an abandoned wait, or neither.
pub fn wait_end(e: &io::Error) -> Option<WaitEnd> {
    let inner = e.get_ref()?;
    if let Some(s) = inner.downcast_ref::<Stalled>() {
        return Some(WaitEnd::Stalled(*s));
    }
    inner
        .downcast_ref::<Abandoned>()
        .map(|_| WaitEnd::Abandoned)
}

/// How a watched wait ended without bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitEnd {
    /// The stall limit passed.
    Stalled(Stalled),
    /// The run was interrupted.
    Abandoned,
}

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
/// saying `overdue`. Without a deadline the read is watched (see the module's comment).
/// Writes go straight through.
pub struct Deadlined<'a, S> {
    /// The stream read from.
    pub stream: &'a mut S,
    /// When the exchange must be over (`None`: watched, see [`watched_read`]).
    pub deadline: Option<Instant>,
    /// What a read past the deadline says.
    pub overdue: &'static str,
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

impl<S: ReadTimeout> Read for Deadlined<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(deadline) = self.deadline else {
            return watched_read(self.stream, buf);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, self.overdue));
        }
        self.stream.set_read_timeout(Some(left))?;
        match self.stream.read(buf) {
            Err(e) if is_timeout(&e) => Err(io::Error::new(io::ErrorKind::TimedOut, self.overdue)),
            Ok(n) => Ok(WATCH.got(n)),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that never has anything: every read times out at once; it counts its reads.
    #[derive(Default)]
    struct Silent {
        reads: usize,
    }

    impl Read for Silent {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            std::thread::sleep(Duration::from_millis(5));
            Err(io::Error::from(io::ErrorKind::WouldBlock))
        }
    }

    /// A silent peer ends a watched wait at the stall limit with [`Stalled`], and the next
    /// wait (nothing arrived since) at once; bytes anywhere give a wait its time again.
    #[test]
    fn a_silent_peer_ends_a_watched_wait_at_the_stall_limit() {
        let watch = Watch::new();
        watch.set_limit(Some(Duration::from_millis(200)));
        let t0 = Instant::now();
        let e = watch
            .read(&mut Silent::default(), &mut [0u8; 4])
            .unwrap_err();
        assert!(t0.elapsed() >= Duration::from_millis(200));
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert_eq!(wait_end(&e), Some(WaitEnd::Stalled(Stalled { seconds: 1 })));
        // Nothing arrived since: the next wait ends after one read, however slow the host.
        let mut again = Silent::default();
        assert!(watch.read(&mut again, &mut [0u8; 4]).is_err());
        assert_eq!(again.reads, 1, "sticky");
        watch.got(1);
        let t2 = Instant::now();
        assert!(watch.read(&mut Silent::default(), &mut [0u8; 4]).is_err());
        assert!(t2.elapsed() >= Duration::from_millis(200), "a fresh limit");
        watch.abandoned.store(true, Ordering::SeqCst);
        let e = watch
            .read(&mut Silent::default(), &mut [0u8; 4])
            .unwrap_err();
        assert_eq!(wait_end(&e), Some(WaitEnd::Abandoned));
        assert_eq!(
            Stalled { seconds: 60 }.to_string(),
            "no reply from the server for 60 s"
        );
    }
}
