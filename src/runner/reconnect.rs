//! What the one client loop ([`super::client::client_loop`]) does when a connection is lost
//! (`--failover`, `--reconnect-for`), as a policy it is given: each failed statement is
//! classified and counted, the connection made again within the bound, and the operation
//! done again, its latency still counted from its intended start, so the gap shows in the
//! timeline and the histograms. Without those flags the loop has no policy, and a failed
//! statement ends the connection's part of the step.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backend::{BackendError, Conn, Driver};
use crate::results::failover::FailedStatements;

use super::stop::StopSignal;

/// Latencies this long before a client's first failure, and after its first success after
/// it, count in the failover's latency window.
pub const LATENCY_MARGIN: Duration = Duration::from_secs(5);

/// How long a client waits between two attempts to connect, or after a read-only refusal.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// Why a statement failed, as the failover counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailKind {
    /// The connection broke or could not be made.
    ConnectionLost,
    /// The server refused a write as read-only (a standby).
    ReadOnly,
    /// A wait ran past its limit.
    Timeout,
    /// Anything else.
    Other,
}

/// The kind of a failed statement; `None` for an error no reconnect can help (a refused
/// login, a full disk, an unwritable file): the step fails on it as without a failover.
pub fn classify(e: &BackendError) -> Option<FailKind> {
    match e {
        BackendError::Lost { .. } | BackendError::Unreachable { .. } => {
            Some(FailKind::ConnectionLost)
        }
        BackendError::Stalled { .. } => Some(FailKind::Timeout),
        BackendError::Auth { .. }
        | BackendError::Unwritable { .. }
        | BackendError::DiskFull { .. }
        | BackendError::Retryable(_) => None,
        BackendError::Sql { detail, .. } => Some(classify_text(detail)),
    }
}

/// A statement's error text as a kind: PostgreSQL's `25006` and MariaDB's `--read-only`
/// refusal, a server shutting down or starting (`57P01`, `57P03`), a timeout.
fn classify_text(detail: &str) -> FailKind {
    let d = detail.to_ascii_lowercase();
    if d.contains("read-only") || d.contains("read only") || d.contains("25006") {
        FailKind::ReadOnly
    } else if [
        "57p01",
        "57p02",
        "57p03",
        "shutting down",
        "starting up",
        "recovery mode",
    ]
    .iter()
    .any(|p| d.contains(p))
    {
        FailKind::ConnectionLost
    } else if d.contains("timeout") || d.contains("timed out") {
        FailKind::Timeout
    } else {
        FailKind::Other
    }
}

/// Where and how long a client reconnects.
#[derive(Clone)]
pub struct Reconnect {
    /// The server the clients connect to again (the promoted replica, or `--url` when the
    /// failover is observed).
    pub driver: Arc<dyn Driver>,
    /// How long a client keeps trying, from its first failure in a row.
    pub bound: Duration,
    /// With ibench's failover: set when the replica was promoted; clients connect again only
    /// after it (a MariaDB replica does not refuse a privileged user's writes while it still
    /// applies its relay log).
    pub after: Option<Arc<std::sync::OnceLock<Instant>>>,
}

/// One client's side of a failover: its failed statements, reconnects, the acknowledged
/// operations around its outage and the latencies near it.
#[derive(Clone, Debug, Default)]
pub struct ClientOutage {
    /// Failed statements by kind.
    pub failed: FailedStatements,
    /// Connections made again.
    pub reconnects: u64,
    /// The last operation acknowledged before the client's first failure.
    pub last_ok_before: Option<Instant>,
    /// The client's first failed statement.
    pub first_failure: Option<Instant>,
    /// The first operation acknowledged after it.
    pub first_ok_after: Option<Instant>,
    /// Latencies (µs, from the intended start) of the operations that ended within
    /// [`LATENCY_MARGIN`] before the first failure up to that long after the first success
    /// after it.
    pub window_latency_us: Vec<u64>,
    /// Until the first failure: the latencies of the last [`LATENCY_MARGIN`].
    recent: VecDeque<(Instant, u64)>,
}

impl ClientOutage {
    /// An operation acknowledged at `end` with `latency_us`.
    fn ok(&mut self, end: Instant, latency_us: u64) {
        match self.first_failure {
            None => {
                self.last_ok_before = Some(end);
                self.recent.push_back((end, latency_us));
                while self
                    .recent
                    .front()
                    .is_some_and(|(t, _)| end.duration_since(*t) > LATENCY_MARGIN)
                {
                    self.recent.pop_front();
                }
            }
            Some(_) => {
                let back = *self.first_ok_after.get_or_insert(end);
                if end.duration_since(back) <= LATENCY_MARGIN {
                    self.window_latency_us.push(latency_us);
                }
            }
        }
    }

    /// A statement failed with `kind` at `at`.
    fn failed(&mut self, kind: FailKind, at: Instant) {
        match kind {
            FailKind::ConnectionLost => self.failed.connection_lost += 1,
            FailKind::ReadOnly => self.failed.read_only += 1,
            FailKind::Timeout => self.failed.timeout += 1,
            FailKind::Other => self.failed.other += 1,
        }
        if self.first_failure.is_none() {
            self.first_failure = Some(at);
            self.window_latency_us
                .extend(self.recent.drain(..).map(|(_, l)| l));
        }
    }
}

/// The one client loop's policy for a lost connection ([`super::client::client_loop`] with
/// `--reconnect-for` or `--failover`): a failed statement classified and counted, the
/// connection made again within the bound, the operation done again; the client's outage
/// figures as it goes.
pub struct Reconnecting<'a> {
    reconnect: &'a Reconnect,
    outage: ClientOutage,
    /// The current operation's first failure in a row (the bound runs from it).
    failing_since: Option<Instant>,
    /// The connection made again, once the first was lost.
    fresh: Option<Box<dyn Conn>>,
}

impl<'a> Reconnecting<'a> {
    /// The policy of a client that reconnects as `reconnect` says.
    pub fn new(reconnect: &'a Reconnect) -> Self {
        Reconnecting {
            reconnect,
            outage: ClientOutage::default(),
            failing_since: None,
            fresh: None,
        }
    }

    /// The connection made again, when the client's first one was lost.
    pub fn connection(&mut self) -> Option<&mut dyn Conn> {
        match self.fresh.as_mut() {
            Some(c) => Some(c.as_mut()),
            None => None,
        }
    }

    /// An operation acknowledged at `end`, `latency_us` after its intended start.
    pub fn ok(&mut self, end: Instant, latency_us: u64) {
        self.failing_since = None;
        self.outage.ok(end, latency_us);
    }

    /// A statement failed with `e` (not a transient conflict the loop retries): count it,
    /// tell the worker through `lost` whether the connection went with its operation in
    /// flight, and connect again when it did. `Ok(true)`: do the operation again;
    /// `Ok(false)`: the step stopped; `Err`: not a failure a failover explains, or still
    /// failing after the bound.
    pub fn recover(
        &mut self,
        e: BackendError,
        stop: &StopSignal,
        lost: &mut dyn FnMut(bool),
    ) -> Result<bool, BackendError> {
        let Some(kind) = classify(&e) else {
            return Err(e);
        };
        let now = Instant::now();
        self.outage.failed(kind, now);
        lost(kind == FailKind::ConnectionLost || kind == FailKind::Timeout);
        let bound = self.reconnect.bound;
        let since = *self.failing_since.get_or_insert(now);
        if now.duration_since(since) > bound {
            return Err(gave_up(e, bound));
        }
        match kind {
            FailKind::ConnectionLost | FailKind::Timeout => {
                match connect_again(self.reconnect, stop, since) {
                    Some(Ok(c)) => {
                        self.fresh = Some(c);
                        self.outage.reconnects += 1;
                        // The bound starts again for a failure on the new connection.
                        self.failing_since = None;
                        Ok(true)
                    }
                    Some(Err(e)) => Err(gave_up(e, bound)),
                    None => Ok(false),
                }
            }
            FailKind::ReadOnly | FailKind::Other => {
                Ok(stop.sleep_until(Instant::now() + RETRY_PAUSE))
            }
        }
    }

    /// The client's outage figures, once its loop ended.
    pub fn into_outage(self) -> ClientOutage {
        let mut outage = self.outage;
        outage.recent.clear();
        outage
    }
}

/// Connect to the reconnect target (with ibench's failover, once it was promoted) until it
/// answers, the bound from `since` passes (the last error) or the step stops (`None`).
fn connect_again(
    reconnect: &Reconnect,
    stop: &StopSignal,
    since: Instant,
) -> Option<Result<Box<dyn Conn>, BackendError>> {
    loop {
        let ready = reconnect.after.as_ref().is_none_or(|a| a.get().is_some());
        match ready.then(|| reconnect.driver.connect()) {
            Some(Ok(c)) => return Some(Ok(c)),
            // Waiting for the promotion: the failover's controller bounds it, and stops the
            // step when it fails.
            None => {
                if !stop.sleep_until(Instant::now() + RETRY_PAUSE) {
                    return None;
                }
            }
            Some(Err(e)) if since.elapsed() > reconnect.bound => return Some(Err(e)),
            Some(Err(_)) => {
                if !stop.sleep_until(Instant::now() + RETRY_PAUSE) {
                    return None;
                }
            }
        }
    }
}

/// The error a client ends the step with once it has retried for the whole bound.
fn gave_up(e: BackendError, bound: Duration) -> BackendError {
    BackendError::sql(
        "reconnect",
        format!(
            "still failing after {:.0} s of retries (--reconnect-for): {e}",
            bound.as_secs_f64()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_statements_are_classified_by_what_the_server_said() {
        let lost = BackendError::Lost {
            context: "insert".into(),
            target: "t".into(),
            detail: "reset".into(),
        };
        assert_eq!(classify(&lost), Some(FailKind::ConnectionLost));
        let ro = BackendError::sql(
            "insert",
            "cannot execute INSERT in a read-only transaction (SQLSTATE 25006)",
        );
        assert_eq!(classify(&ro), Some(FailKind::ReadOnly));
        let my_ro = BackendError::sql(
            "insert",
            "The MariaDB server is running with the --read-only option",
        );
        assert_eq!(classify(&my_ro), Some(FailKind::ReadOnly));
        let down = BackendError::sql("insert", "the database system is shutting down");
        assert_eq!(classify(&down), Some(FailKind::ConnectionLost));
        assert_eq!(
            classify(&BackendError::sql("x", "statement timeout")),
            Some(FailKind::Timeout)
        );
        assert_eq!(
            classify(&BackendError::sql("x", "duplicate key")),
            Some(FailKind::Other)
        );
        assert_eq!(classify(&BackendError::Retryable("d".into())), None);
    }

    #[test]
    fn an_outage_spans_the_last_ack_before_to_the_first_after() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut o = ClientOutage::default();
        o.ok(at(0), 10);
        o.ok(at(6000), 20);
        o.ok(at(9000), 30);
        o.failed(FailKind::ConnectionLost, at(9100));
        o.failed(FailKind::ReadOnly, at(9500));
        o.ok(at(11_000), 2000);
        o.ok(at(17_000), 40);
        assert_eq!(o.last_ok_before, Some(at(9000)));
        assert_eq!(o.first_ok_after, Some(at(11_000)));
        // 6000 and 9000 were within 5 s of the failure; 0 was not; 17000 is past the margin.
        assert_eq!(o.window_latency_us, [20, 30, 2000]);
        assert_eq!((o.failed.connection_lost, o.failed.read_only), (1, 1));
    }
}
