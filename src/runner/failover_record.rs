//! A step's `failover` record (`results::failover::StepFailover`) from what its connections
//! did: the clients' outages, the per-second timeline, the controller's kill and promotion
//! (`super::failover`) and its audit (`super::ledger`), or an observed failover's verdict
//! (`super::observed`).

use std::time::Instant;

use crate::results::failover::{
    DrivenBy, FailedStatements, FailoverAudit, KillMethod, StepFailover,
};
use crate::stats::OpKind;
use crate::stats::convert::{count_f64 as u64_f64, round_to_usize, usize_f64};

use super::failover::Event;
use super::reconnect::{ClientOutage, LATENCY_MARGIN};

/// The step's `failover` record from what its connections did: `None` when the step had
/// no failover of ibench's and no client lost anything. The audit is the controller's, made
/// on the promoted replica as soon as it took writes.
pub(super) fn step_record(
    driven: &super::threads::Driven,
    plan: &crate::workload::plan::StepPlan,
    client_ids: bool,
) -> Option<StepFailover> {
    let f = driven.failover.as_ref()?;
    let clients: Vec<ClientSide<'_>> = driven
        .finished
        .iter()
        .filter_map(|c| {
            c.outage.as_ref().map(|outage| ClientSide {
                kind: c.recorder.kind,
                outage,
            })
        })
        .collect();
    let kills = f.plan.controller.kills();
    if !kills && clients.iter().all(|c| c.outage.first_failure.is_none()) {
        return None;
    }
    let kind = plan.throughput.kind();
    let rows = !matches!(plan.throughput, crate::workload::plan::Throughput::Ops(_));
    let per_second: Vec<u64> = driven
        .seen
        .per_kind
        .get(&kind)
        .map(|v| {
            v.iter()
                .map(|c| if rows { c.rows } else { c.ops })
                .collect()
        })
        .unwrap_or_default();
    let mut record = figures(&f.plan.event, f.start, &clients, (kind, &per_second));
    record.audit = f
        .plan
        .event
        .audit
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if record.audit.is_none() && kills && !f.plan.ledgers.is_empty() {
        record.audit = Some(FailoverAudit {
            error: Some("the replica was never promoted".into()),
            ..FailoverAudit::default()
        });
    }
    f.plan.controller.conclude(&f.plan, &mut record);
    if !client_ids && record.audit.is_some() {
        record.audit = Some(FailoverAudit {
            error: Some("the server assigned the ids, so ibench does not know the keys it inserted (--client-ids)".into()),
            ..FailoverAudit::default()
        });
    }
    Some(record)
}

/// One client's outage with its op kind, after the step.
pub(super) struct ClientSide<'a> {
    pub kind: OpKind,
    pub outage: &'a ClientOutage,
}

/// The step's failover figures (the audit is added by [`audit`]; who drove the failover,
/// how, and the new primary by the step's controller, `Controller::conclude`). `main` is the step's main
/// op kind (the one its throughput counts: a query step's queries, not its background
/// writers) and its count per whole second: the rate and the latency around the event are
/// that op's.
pub(super) fn figures(
    ev: &Event,
    start: Instant,
    clients: &[ClientSide<'_>],
    (main_kind, per_second_main): (OpKind, &[u64]),
) -> StepFailover {
    let secs = |t: Instant| t.saturating_duration_since(start).as_secs_f64();
    let first_failure = clients.iter().filter_map(|c| c.outage.first_failure).min();
    let lost_at = ev.lost_at.get().copied().or(first_failure);
    let mut failed = FailedStatements::default();
    let mut latencies: Vec<u64> = Vec::new();
    for c in clients {
        let f = &c.outage.failed;
        failed.connection_lost += f.connection_lost;
        failed.read_only += f.read_only;
        failed.timeout += f.timeout;
        failed.other += f.other;
        if c.kind == main_kind {
            latencies.extend(&c.outage.window_latency_us);
        }
    }
    let back = clients.iter().filter_map(|c| c.outage.first_ok_after).max();
    let loss_second = lost_at.map(secs);
    let (recovery, rate_before) =
        loss_second.map_or((None, None), |l| recovery_seconds(per_second_main, l));
    let lat = latency_summary(&mut latencies);
    StepFailover {
        driven_by: DrivenBy::Observed,
        at_second: None,
        kill_method: KillMethod::Unknown,
        loss_at_second: loss_second,
        promoted_at_second: ev.promoted_at.get().copied().map(secs),
        new_primary_url: None,
        writers_unavailable_seconds: unavailable(clients, true),
        readers_unavailable_seconds: unavailable(clients, false),
        failed_statements: failed,
        reconnects: clients.iter().map(|c| c.outage.reconnects).sum(),
        recovery_seconds: recovery,
        rate_before_per_sec: rate_before,
        latency_p99_us: lat.map(|l| l.0),
        latency_max_us: lat.map(|l| l.1),
        latency_window_start_second: lost_at.map_or(0.0, |l| {
            secs(l.checked_sub(LATENCY_MARGIN).unwrap_or(start))
        }),
        latency_window_end_second: back.map_or_else(
            || usize_f64(per_second_main.len()),
            |b| secs(b + LATENCY_MARGIN),
        ),
        audit: None,
        error: ev.error(),
    }
}

/// The largest gap, over the writer (or reader) clients that failed, from the last
/// acknowledged operation before their first failure to the first after it.
fn unavailable(clients: &[ClientSide<'_>], writers: bool) -> Option<f64> {
    clients
        .iter()
        .filter(|c| matches!(c.kind, OpKind::Insert | OpKind::Delete) == writers)
        .filter_map(|c| {
            let o = c.outage;
            o.first_failure?;
            let (before, after) = (o.last_ok_before?, o.first_ok_after?);
            Some(after.saturating_duration_since(before).as_secs_f64())
        })
        .max_by(f64::total_cmp)
}

/// The p99 (nearest rank) and the largest of `latencies`, µs.
fn latency_summary(latencies: &mut [u64]) -> Option<(f64, f64)> {
    if latencies.is_empty() {
        return None;
    }
    latencies.sort_unstable();
    let n = latencies.len();
    let rank = (n * 99).div_ceil(100).clamp(1, n);
    Some((u64_f64(latencies[rank - 1]), u64_f64(latencies[n - 1])))
}

/// Consecutive whole seconds within the band that mean the rate is back.
pub const RECOVERY_RUN_SECONDS: usize = 3;

/// How far below the rate before a second may be and count as back (10%); a faster second
/// counts (a primary without its synchronous standby commits sooner).
pub const RECOVERY_BAND: f64 = 0.10;

/// Whole seconds before the loss whose median is the rate before.
pub const RATE_BEFORE_SECONDS: usize = 10;

/// Seconds from the loss at `loss_second` until the rate was back, and the rate before:
/// the median of the up to [`RATE_BEFORE_SECONDS`] whole seconds that ended before the
/// loss; back at the start of the first whole second after the loss that begins
/// [`RECOVERY_RUN_SECONDS`] seconds in a row each at least (1 − [`RECOVERY_BAND`]) of it.
/// `per_second[i]` is the count of second `[i, i+1)` of the step.
pub fn recovery_seconds(per_second: &[u64], loss_second: f64) -> (Option<f64>, Option<f64>) {
    let before_end = round_to_usize(loss_second.floor().max(0.0)).min(per_second.len());
    let from = before_end.saturating_sub(RATE_BEFORE_SECONDS);
    let mut before: Vec<u64> = per_second[from..before_end].to_vec();
    if before.is_empty() {
        return (None, None);
    }
    before.sort_unstable();
    let median = u64_f64(before[(before.len() - 1) / 2] + before[before.len() / 2]) / 2.0;
    let within = |c: u64| u64_f64(c) >= (1.0 - RECOVERY_BAND) * median;
    let first_after = round_to_usize(loss_second.ceil().max(0.0));
    let back = (first_after..per_second.len())
        .find(|&i| {
            per_second
                .get(i..i + RECOVERY_RUN_SECONDS)
                .is_some_and(|run| run.iter().all(|&c| within(c)))
        })
        .map(|i| usize_f64(i) - loss_second);
    (back, Some(median))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_back_when_three_seconds_in_a_row_are_within_ten_percent() {
        // 10 s at ~100, the loss at 10.4, nothing for 2 s, a ramp, then back from second 14.
        let per = [
            100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 40, 0, 0, 50, 95, 105, 100, 100,
        ];
        let (back, before) = recovery_seconds(&per, 10.4);
        assert_eq!(before, Some(100.0));
        let back = back.unwrap();
        assert!((back - 3.6).abs() < 1e-9, "{back}");
        // Never back: the last seconds stay low.
        assert_eq!(recovery_seconds(&per[..15], 10.4).0, None);
        // Faster than before counts as back.
        let faster = [100, 100, 0, 150, 160, 170];
        assert_eq!(recovery_seconds(&faster, 2.0).0, Some(1.0));
        // A loss in the first second has no rate before.
        assert_eq!(recovery_seconds(&per, 0.5), (None, None));
    }

    #[test]
    fn the_latency_window_takes_the_nearest_rank() {
        let mut l: Vec<u64> = (1..=200).collect();
        assert_eq!(latency_summary(&mut l), Some((198.0, 200.0)));
        assert_eq!(latency_summary(&mut []), None);
    }
}
