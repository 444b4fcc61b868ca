//! What a failover during a step records (a step's `failover`, docs/results.md): how the
//! primary was lost and who promoted the replica, how long writers and readers could not
//! work, the statements that failed and why, how long until the rate was back, the latency
//! around the event, and the audit of the rows ibench inserted (acknowledged rows lost on the
//! new primary, unacknowledged rows found there).
//!
//! Seconds (`*_at_second`) count from the start of the step's measured part, like the
//! timeline's `second`.

use serde::{Deserialize, Serialize};

use crate::workload::steps::StepName;

/// When ibench loses the primary (`--failover STEP+SECONDS`, e.g. `l.i1+10s`): that many
/// seconds into that step's measured part. Written in run.json as given (`"l.i1+10s"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FailoverAt {
    /// The step it hits.
    pub step: StepName,
    /// Seconds into the step's measured part.
    pub seconds: f64,
}

impl std::fmt::Display for FailoverAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}+{}s", self.step, self.seconds)
    }
}

impl std::str::FromStr for FailoverAt {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "--failover {text:?}: give STEP+SECONDS, the step and how far into it the primary is lost, such as l.i1+10s"
            )
        };
        let (step, when) = text.trim().rsplit_once('+').ok_or_else(bad)?;
        let step: StepName = step.parse().map_err(|_| bad())?;
        let seconds = when.trim().strip_suffix('s').unwrap_or(when.trim());
        match seconds.parse::<f64>() {
            Ok(s) if s >= 0.0 && s.is_finite() => Ok(FailoverAt { step, seconds: s }),
            _ => Err(bad()),
        }
    }
}

impl Serialize for FailoverAt {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for FailoverAt {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Who made the failover happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DrivenBy {
    /// ibench killed the primary and promoted the replica itself (`--failover STEP+SECONDS`).
    Ibench,
    /// Something else did (an HA manager such as Patroni, an operator); ibench only saw the
    /// connections break and reconnected (`--reconnect-for`).
    Observed,
}

/// How the primary was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KillMethod {
    /// ibench sent SIGKILL to the primary's server process (no shutdown, no flush).
    Sigkill,
    /// Not ibench's doing (`driven_by: observed`): the method is unknown to it.
    Unknown,
}

/// Statements that failed during the step, by why they failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedStatements {
    /// The connection broke or could not be made (closed, reset, refused, server shut down).
    pub connection_lost: u64,
    /// The server refused a write because it is read-only (a standby not yet promoted, or a
    /// former primary that came back as one).
    pub read_only: u64,
    /// The statement or the connection attempt ran past its deadline.
    pub timeout: u64,
    /// Any other error (the first one's text is in the step's log).
    pub other: u64,
}

impl FailedStatements {
    /// All failed statements, whatever the kind.
    pub fn total(&self) -> u64 {
        self.connection_lost + self.read_only + self.timeout + self.other
    }
}

/// The audit of the rows ibench inserted during the step, read on the new primary after it.
///
/// ibench chose every key it inserted, so it knows which inserts the server acknowledged
/// (the commit returned) before the loss, and which were in flight (sent, no answer) when
/// the primary died.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailoverAudit {
    /// Keys whose insert was acknowledged before the loss, checked on the new primary.
    pub acknowledged_keys_audited: u64,
    /// Of those, the keys the new primary does not hold: acknowledged writes that were lost.
    /// 0 is the promise of a synchronous standby; an async replica may lose a few.
    pub acknowledged_rows_lost: u64,
    /// Keys whose insert was in flight (sent, never acknowledged) when the primary died.
    pub unacknowledged_keys_audited: u64,
    /// Of those, the keys the new primary holds: committed, but the client never heard so.
    pub unacknowledged_rows_present: u64,
    /// Why the audit could not be made (the new primary could not be read); the counts
    /// above are then 0 and mean nothing. Absent when it was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A failover during a step (a step's `failover`; absent for a step without one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepFailover {
    /// Who made it happen: `ibench` (`--failover`) or `observed` (`--reconnect-for`).
    pub driven_by: DrivenBy,
    /// The moment asked for (`--failover l.i1+10s` → 10); absent when observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_second: Option<f64>,
    /// How the primary was lost: `sigkill`, or `unknown` when observed.
    pub kill_method: KillMethod,
    /// When the primary was lost: when ibench killed it, or the first failed statement when
    /// observed; `None` when an observed run never lost a connection.
    pub loss_at_second: Option<f64>,
    /// When the promotion completed (the replica answered as a primary); `None` when
    /// observed, or when it never completed within the bound.
    pub promoted_at_second: Option<f64>,
    /// The new primary's URL, password masked; `None` when it is not known.
    pub new_primary_url: Option<String>,
    /// Writers' unavailability: from the last write acknowledged before the loss to the first
    /// acknowledged after it, seconds (the largest gap over the writer clients); `None` when
    /// no write was acknowledged after it.
    pub writers_unavailable_seconds: Option<f64>,
    /// The same for the readers' queries; `None` without readers or when none came back.
    pub readers_unavailable_seconds: Option<f64>,
    /// Statements that failed during the step, by kind.
    pub failed_statements: FailedStatements,
    /// Connections the clients made again after losing theirs (successful reconnects).
    pub reconnects: u64,
    /// Seconds from the loss until the rate was back: the first whole second after the loss
    /// that starts 3 consecutive seconds each within 10% of the median per-second rate of
    /// the step's main op over the (up to) 10 whole seconds before the loss, counted from
    /// the loss. `None` when it never was, or when no second before the loss was measured.
    pub recovery_seconds: Option<f64>,
    /// The median per-second rate before the loss that `recovery_seconds` compares with.
    pub rate_before_per_sec: Option<f64>,
    /// 99th percentile latency of the step's main op over the window around the event, µs,
    /// measured from each operation's intended start (so the time waiting to reconnect
    /// counts); `None` when no operation fell in it.
    pub latency_p99_us: Option<f64>,
    /// The largest latency in the same window, µs.
    pub latency_max_us: Option<f64>,
    /// The window the two latencies cover: from 5 s before the loss to
    /// `latency_window_end_second` (5 s after the writers were back, or the step's end).
    pub latency_window_start_second: f64,
    /// End of the latency window, seconds into the step.
    pub latency_window_end_second: f64,
    /// The audit of the inserted rows on the new primary; `None` when the step inserted no
    /// rows or the audit was turned off (`--no-check`).
    pub audit: Option<FailoverAudit>,
    /// Why the failover did not complete (the promotion failed or never finished within the
    /// bound); absent when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StepFailover {
        StepFailover {
            driven_by: DrivenBy::Ibench,
            at_second: Some(10.0),
            kill_method: KillMethod::Sigkill,
            loss_at_second: Some(10.01),
            promoted_at_second: Some(10.6),
            new_primary_url: Some("postgres://ibench:***@127.0.0.1:5433/ibench".into()),
            writers_unavailable_seconds: Some(0.9),
            readers_unavailable_seconds: None,
            failed_statements: FailedStatements {
                connection_lost: 4,
                ..FailedStatements::default()
            },
            reconnects: 4,
            recovery_seconds: Some(2.0),
            rate_before_per_sec: Some(40_000.0),
            latency_p99_us: Some(900_000.0),
            latency_max_us: Some(950_000.0),
            latency_window_start_second: 5.01,
            latency_window_end_second: 16.0,
            audit: Some(FailoverAudit {
                acknowledged_keys_audited: 400_000,
                ..FailoverAudit::default()
            }),
            error: None,
        }
    }

    #[test]
    fn a_failover_moment_reads_step_plus_seconds() {
        let at: FailoverAt = "l.i1+10s".parse().unwrap();
        assert_eq!((at.step, at.seconds), (StepName::InsertDelete1, 10.0));
        assert_eq!(at.to_string(), "l.i1+10s");
        assert_eq!("l.i2+2.5".parse::<FailoverAt>().unwrap().seconds, 2.5);
        for bad in ["l.i1", "x+3s", "l.i1+-1s", "l.i1+soon"] {
            let e = bad.parse::<FailoverAt>().unwrap_err();
            assert!(e.contains("give STEP+SECONDS"), "{e}");
        }
    }

    #[test]
    fn round_trips_and_names_its_fields_in_snake_case() {
        let f = sample();
        let text = serde_json::to_string(&f).unwrap();
        assert!(text.contains("\"driven_by\":\"ibench\""));
        assert!(text.contains("\"kill_method\":\"sigkill\""));
        assert!(text.contains("\"acknowledged_rows_lost\":0"));
        assert!(!text.contains("\"error\""));
        let back: StepFailover = serde_json::from_str(&text).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.failed_statements.total(), 4);
    }
}
