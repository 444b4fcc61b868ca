//! The keys each inserter sent during a step with a failover, and their audit on the new
//! primary: which acknowledged keys it lacks, which unacknowledged ones it holds.

use std::sync::{Arc, Mutex};

use crate::backend::Conn;
use crate::results::failover::FailoverAudit;

/// The keys one inserter sent: ranges acknowledged before its first failure, and ranges that
/// were in flight when a connection broke. Ids are sequential per client, so a step holds a
/// range or a few, whatever its size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyLedger {
    /// Acknowledged before the first failure, as inclusive ranges.
    pub acknowledged: Vec<(i64, i64)>,
    /// Sent, never acknowledged (the connection broke under them), as inclusive ranges.
    pub unacknowledged: Vec<(i64, i64)>,
    failed_once: bool,
}

impl KeyLedger {
    /// An insert of `ids` was acknowledged.
    pub fn acknowledged(&mut self, ids: &[i64]) {
        if !self.failed_once {
            add_range(&mut self.acknowledged, ids);
        }
    }

    /// A statement failed; `in_flight` holds the ids of an insert the broken connection may
    /// have committed.
    pub fn failed(&mut self, in_flight: Option<&[i64]>) {
        self.failed_once = true;
        if let Some(ids) = in_flight {
            add_range(&mut self.unacknowledged, ids);
        }
    }
}

/// A ledger its inserter writes and the failover's controller reads.
pub type SharedLedger = Arc<Mutex<KeyLedger>>;

/// The ledger, even if a thread panicked holding it.
pub fn lock(l: &SharedLedger) -> std::sync::MutexGuard<'_, KeyLedger> {
    l.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Add the contiguous `ids` (a batch's) to `ranges`, merged with the last range it follows.
fn add_range(ranges: &mut Vec<(i64, i64)>, ids: &[i64]) {
    let (Some(&lo), Some(&hi)) = (ids.iter().min(), ids.iter().max()) else {
        return;
    };
    match ranges.last_mut() {
        Some(last) if last.1.checked_add(1) == Some(lo) => last.1 = hi,
        _ => ranges.push((lo, hi)),
    }
}

/// As soon as the new primary takes writes: which of the keys acknowledged before the loss
/// it lacks, and which unacknowledged ones it holds. Keys below the table's smallest id, read
/// in the same statement, are not audited (the step's deleters remove the oldest rows).
pub(super) fn audit(conn: &mut dyn Conn, ledgers: &[(String, SharedLedger)]) -> FailoverAudit {
    let mut a = FailoverAudit::default();
    if let Err(e) = audit_into(conn, ledgers, &mut a) {
        a = FailoverAudit {
            error: Some(e.to_string()),
            ..FailoverAudit::default()
        };
    }
    a
}

fn audit_into(
    conn: &mut dyn Conn,
    ledgers: &[(String, SharedLedger)],
    a: &mut FailoverAudit,
) -> Result<(), crate::backend::BackendError> {
    for (table, ledger) in ledgers {
        let ledger = lock(ledger).clone();
        for &(lo, hi) in &ledger.acknowledged {
            let (lowest, present) = conn.count_ids_between(table, lo, hi)?;
            let lo = lowest.map_or(lo, |l| lo.max(l));
            if lo > hi {
                continue;
            }
            a.acknowledged_keys_audited += span(lo, hi);
            a.acknowledged_rows_lost += span(lo, hi).saturating_sub(present);
        }
        for &(lo, hi) in &ledger.unacknowledged {
            a.unacknowledged_keys_audited += span(lo, hi);
            a.unacknowledged_rows_present += conn.count_ids_between(table, lo, hi)?.1;
        }
    }
    Ok(())
}

fn span(lo: i64, hi: i64) -> u64 {
    u64::try_from(hi - lo + 1).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_keeps_ranges_not_keys() {
        let mut l = KeyLedger::default();
        l.acknowledged(&[1, 2, 3]);
        l.acknowledged(&[4, 5]);
        l.acknowledged(&[10, 11]);
        l.failed(Some(&[12, 13]));
        l.acknowledged(&[14]);
        l.failed(Some(&[15]));
        l.failed(None);
        assert_eq!(l.acknowledged, [(1, 5), (10, 11)]);
        assert_eq!(l.unacknowledged, [(12, 13), (15, 15)]);
    }
}
