//! One step, from its plan to its record: its tables set up, its connections opened and
//! driven while the run's parts (`crate::run_part`: the sampler, the host probe, the
//! replica's heartbeat) bracket the measured part, its figures merged, its SLA verdict, its
//! checks, and the parts' figures added.

use std::collections::BTreeMap;

use crate::backend::{Conn, Driver};
use crate::results::{self, OpRecord, SlaRecord, Status, StepRecord, TimelineWriter};
use crate::run_part::{RunPart, StepEnd, StepFacts};
use crate::sampler::procfs::process_cpu_seconds;
use crate::stats::convert::{count_f64, usize_f64};
use crate::stats::{self, LatencySummary, OpKind};
use crate::workload::plan::{StepPlan, Throughput};

use super::checks::Checks;
use super::connections::plan_connections;
use super::monitor;
use super::shape::RunShape;
use super::tables::{TableState, prepare_tables};
use super::threads::{Driven, Finished, drive};

/// What every step of a run shares: its shape and its driver.
#[derive(Clone, Copy)]
pub(super) struct StepRig<'a> {
    pub shape: &'a RunShape,
    pub driver: &'a dyn Driver,
}

/// What the run lends each step in turn: its parts, its admin connection, the tables' state
/// and the timeline.
pub(super) struct StepSeat<'a> {
    pub parts: &'a mut dyn RunPart,
    pub admin: &'a mut dyn Conn,
    pub state: &'a mut TableState,
    pub timeline: &'a mut TimelineWriter,
}

/// One step of the run, from its plan to its record; a step that failed before it
/// measured gets a failed record (an interrupted one when it was stopped during its setup).
pub(super) fn run_step(
    rig: StepRig<'_>,
    seat: &mut StepSeat<'_>,
    plan: &StepPlan,
    ordinal: u32,
) -> StepRecord {
    let clients = rig.shape.workers.clients;
    let measured = measure_step(rig, seat, plan, ordinal);
    step_or_failed(measured, plan, clients)
}

/// The step's record, or, when it failed before it measured, a failed one (an interrupted
/// one when it was stopped during its setup: nothing of the step ran).
fn step_or_failed(result: anyhow::Result<StepRecord>, plan: &StepPlan, clients: u32) -> StepRecord {
    match result {
        Ok(r) => r,
        Err(_) if super::stop::interrupted() => {
            let mut r = failed_step(plan, clients, String::new());
            r.status = Status::Interrupted;
            r.error = None;
            r
        }
        Err(e) => failed_step(plan, clients, format!("{e:#}")),
    }
}

/// A step's measured part, its figures and its checks: its record, or an error when it
/// failed before it measured. The run's parts begin right before the measured part, end
/// right after it, and complete the checked record.
fn measure_step(
    rig: StepRig<'_>,
    seat: &mut StepSeat<'_>,
    plan: &StepPlan,
    ordinal: u32,
) -> anyhow::Result<StepRecord> {
    let (shape, driver) = (rig.shape, rig.driver);
    let (parts, admin) = (&mut *seat.parts, &mut *seat.admin);
    let (state, timeline) = (&mut *seat.state, &mut *seat.timeline);
    let (step, mode) = (plan.step, shape.progress);
    prepare_tables(&shape.tables, &shape.table_options, admin, state, plan)?;
    let rows_before = state.expected_rows.clone();
    let connections = plan_connections(shape, driver, admin, state, plan, ordinal)?;
    parts.step_begins(step);
    let cpu_before = process_cpu_seconds();
    let driven = drive(connections, step, timeline, (mode, &*parts));
    let cpu_seconds = process_cpu_seconds() - cpu_before;
    parts.step_ends(&StepEnd {
        ordinal,
        started_at: driven.started_at,
        ended_at: driven.ended_at,
    });
    let (status, error) = driven.status();
    let failover =
        super::failover_record::step_record(&driven, plan, shape.workers.client_assigns_ids);
    // After a failover the primary is gone: no checks on it, nor on the new one, whose missing
    // rows the audit counted (ibench's failover, or an observed one that found the promoted
    // server).
    let primary_gone = driven.primary_lost()
        || failover
            .as_ref()
            .is_some_and(|f| f.promoted_at_second.is_some());
    book_rows(state, plan, &driven.finished);
    let m = Measured::of(plan, driven, cpu_seconds);
    let checks = Checks {
        shape,
        driver,
        plan,
        status,
        rows_before: &rows_before,
    };
    let (settle, integrity, check_failures) = if primary_gone {
        (None, None, Vec::new())
    } else {
        checks.run(admin, state)
    };
    let mut record = StepRecord {
        name: step,
        status,
        error,
        clients: shape.workers.clients,
        settle,
        integrity,
        check_failures,
        failover,
        ..m.record
    };
    let facts = StepFacts {
        main_ops: m.main_ops,
        main_per_second: m.main_per_second,
        primary_gone,
        interrupted: super::stop::interrupted(),
    };
    let failed = parts.complete(&mut record, &facts);
    record.check_failures.extend(failed);
    if let Some(metrics) = record.metrics.as_mut()
        && shape.query_target.is_some()
        && is_query_step(plan)
    {
        queries_elsewhere(metrics);
    }
    Ok(record)
}

fn is_query_step(plan: &StepPlan) -> bool {
    matches!(
        plan.throughput.kind(),
        OpKind::RangeQuery | OpKind::PointQuery
    )
}

/// With `--query-on replica`, a query step's server figures per query would divide the
/// primary's work (its background writers) by the replica's queries: n/a, saying why.
fn queries_elsewhere(m: &mut crate::results::metrics::StepMetrics) {
    let why =
        "the queries ran on the replica (--query-on replica); the server figures are the primary's";
    for f in [&mut m.cpupq, &mut m.rpq, &mut m.rkbpq, &mut m.cspq] {
        *f = crate::results::metrics::Metric::Na(why.to_string());
    }
    for (per, f) in m.dbms.figures_mut() {
        if per == crate::results::counters::Per::Op {
            *f = crate::results::metrics::Metric::Na(why.to_string());
        }
    }
}

/// A step's figures from what its connections did: its operations merged, its main figure,
/// its rates and SLA, ibench's own CPU per operation, in a record that the checks complete.
struct Measured {
    record: StepRecord,
    main_ops: u64,
    /// The main figure in each whole second.
    main_per_second: Vec<u64>,
}

impl Measured {
    /// `cpu_seconds`: ibench's own CPU over the measured part.
    fn of(plan: &StepPlan, driven: Driven, cpu_seconds: f64) -> Measured {
        let seconds = driven.seconds;
        let merged = stats::merge(driven.finished.into_iter().map(|f| f.recorder));
        let ops = op_records(&merged, seconds, plan.sla_target_rows_per_sec);
        let (main_ops, per_second_of_main) = main_figures(plan.throughput, &merged, &driven.seen);
        let rates = stats::rate_percentiles(&per_second_of_main);
        // The step's record with nothing in it yet (the caller sets its status, error,
        // clients and the checks' parts); the figures measured here.
        let mut record = failed_step(plan, 0, String::new());
        record.started_at = results::rfc3339(driven.started_at);
        record.ended_at = results::rfc3339(driven.ended_at);
        record.seconds = seconds;
        record.throughput = count_f64(main_ops) / seconds;
        record.ops = ops;
        record.rate_p50 = rates.map(|r| r.0);
        record.rate_p1low = rates.map(|r| r.1);
        record.sla = step_sla(plan, &merged, seconds, &driven.seen);
        record.client_cpu_seconds = cpu_seconds;
        record.client_cpu_us_per_op =
            (main_ops > 0).then(|| cpu_seconds * 1e6 / count_f64(main_ops));
        Measured {
            record,
            main_ops,
            main_per_second: per_second_of_main,
        }
    }
}

/// Table bookkeeping after a step: the rows each table should now hold, each client's next
/// id, the rows loaded.
pub(super) fn book_rows(state: &mut TableState, plan: &StepPlan, finished: &[Finished]) {
    for f in finished {
        if let Some(id) = f.worker.next_client_id() {
            state.next_client_id.insert(f.client, id);
        }
        let rows = f.recorder.figures.rows;
        let entry = state.expected_rows.entry(f.table.clone()).or_insert(0);
        match f.recorder.kind {
            OpKind::Insert => *entry += rows,
            OpKind::Delete => *entry = entry.saturating_sub(rows),
            _ => {}
        }
        if plan.creates_tables {
            state.loaded_rows += rows;
        }
    }
}

/// The step's main figure (rows or operations of its main op kind) and its per-second series.
pub(super) fn main_figures(
    throughput: Throughput,
    merged: &BTreeMap<OpKind, stats::OpFigures>,
    seen: &monitor::Seconds,
) -> (u64, Vec<u64>) {
    let main = merged.get(&throughput.kind());
    match throughput {
        Throughput::Ops(k) => (main.map_or(0, |m| m.ops), series(seen, k, |c| c.ops)),
        Throughput::RowsOnce(_) => (main.map_or(0, |m| m.rows), Vec::new()),
        Throughput::Rows(k) => (main.map_or(0, |m| m.rows), series(seen, k, |c| c.rows)),
    }
}

/// The step's figures per op kind; paced writers carry the step's target rate.
pub(super) fn op_records(
    merged: &BTreeMap<OpKind, stats::OpFigures>,
    seconds: f64,
    target_rows_per_sec: Option<f64>,
) -> BTreeMap<String, OpRecord> {
    merged
        .iter()
        .map(|(kind, m)| {
            let paced = matches!(kind, OpKind::Insert | OpKind::Delete);
            (
                kind.name().to_string(),
                OpRecord {
                    ops: m.ops,
                    rows: m.rows,
                    retries: m.retries,
                    short_statements: m.short_statements,
                    connection_cpu_seconds: m.thread_cpu_seconds,
                    ops_per_sec: count_f64(m.ops) / seconds,
                    rows_per_sec: count_f64(m.rows) / seconds,
                    target_rows_per_sec: if paced { target_rows_per_sec } else { None },
                    latency_us: LatencySummary::of(&m.latency),
                    service_us: LatencySummary::of(&m.service),
                    latency_histogram_us: stats::histogram_counts(&m.latency),
                },
            )
        })
        .collect()
}

/// The step's SLA verdict on its inserts, when its plan has a target.
pub(super) fn step_sla(
    plan: &StepPlan,
    merged: &BTreeMap<OpKind, stats::OpFigures>,
    seconds: f64,
    seen: &monitor::Seconds,
) -> Option<SlaRecord> {
    plan.sla_target_rows_per_sec.map(|target| {
        let inserted = merged.get(&OpKind::Insert).map_or(0, |m| m.rows);
        sla_verdict(
            target,
            count_f64(inserted) / seconds,
            &series(seen, OpKind::Insert, |c| c.rows),
        )
    })
}

/// The SLA verdict of a query step (spec section 4) from the achieved background insert rate
/// and the rows inserted in each whole second.
pub(super) fn sla_verdict(target: f64, achieved: f64, per_second_rows: &[u64]) -> SlaRecord {
    let below = per_second_rows
        .iter()
        .filter(|&&r| count_f64(r) < 0.95 * target)
        .count();
    SlaRecord {
        target_rows_per_sec: target,
        achieved_rows_per_sec: achieved,
        passed: achieved >= 0.95 * target,
        share_of_seconds_below_95pct: if per_second_rows.is_empty() {
            0.0
        } else {
            usize_f64(below) / usize_f64(per_second_rows.len())
        },
    }
}

pub(super) fn series(
    seen: &monitor::Seconds,
    kind: OpKind,
    f: impl Fn(&stats::SecondCounts) -> u64,
) -> Vec<u64> {
    seen.per_kind
        .get(&kind)
        .map(|v| v.iter().map(f).collect())
        .unwrap_or_default()
}

/// The record of a step that failed (or was stopped) before it measured anything.
fn failed_step(plan: &StepPlan, clients: u32, error: String) -> StepRecord {
    let now = results::now_rfc3339();
    StepRecord {
        name: plan.step,
        status: Status::Failed,
        error: Some(error),
        started_at: now.clone(),
        ended_at: now,
        seconds: 0.0,
        clients,
        throughput: 0.0,
        throughput_unit: plan.throughput.unit(),
        main_op: Some(plan.throughput.kind()),
        ops: BTreeMap::new(),
        rate_p50: None,
        rate_p1low: None,
        client_cpu_seconds: 0.0,
        client_cpu_us_per_op: None,
        sla: None,
        settle: None,
        integrity: None,
        metrics: None,
        check_failures: Vec::new(),
        host_probe: None,
        replication: None,
        failover: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sla_verdict_uses_95_percent_of_the_target() {
        let v = sla_verdict(1000.0, 950.0, &[1000, 900, 1000, 949]);
        assert!(v.passed);
        assert_eq!(v.share_of_seconds_below_95pct, 0.5);
        assert!(!sla_verdict(1000.0, 949.9, &[]).passed);
        assert_eq!(
            sla_verdict(100.0, 100.0, &[]).share_of_seconds_below_95pct,
            0.0
        );
    }
}
