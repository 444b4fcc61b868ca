//! A failover during a step (`--failover STEP+SECONDS`): the moment comes, ibench sends
//! SIGKILL to the primary's server processes, promotes the replica with the DBMS's own means
//! and waits until it takes writes, while the clients (`super::reconnect`) reconnect to it
//! and go on. After the step: the figures of `results::failover::StepFailover` from the
//! clients' outages and the per-second timeline, and the audit of the inserted keys on the
//! new primary.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::backend::{Conn, Driver};
use crate::results::failover::{
    DrivenBy, FailedStatements, FailoverAt, FailoverAudit, KillMethod, StepFailover,
};
use crate::stats::OpKind;
use crate::stats::convert::{count_f64 as u64_f64, round_to_usize, usize_f64};

use super::reconnect::{ClientOutage, LATENCY_MARGIN, Reconnect};
use super::stop::StopSignal;

/// How often the controller asks the replica whether it takes writes yet.
const PROMOTION_POLL: Duration = Duration::from_millis(50);

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

/// ibench's own failover in a step: when, whom to kill, whom to promote.
pub(super) struct Kill {
    /// The moment asked.
    pub at: FailoverAt,
    /// The primary's server process (its descendants are killed with it).
    pub primary_pid: u32,
    /// The replica to promote.
    pub replica: Arc<dyn Driver>,
    /// Its URL, password masked.
    pub replica_url: String,
}

/// A step's failover set-up: where the clients reconnect, and ibench's kill when it drives.
pub(super) struct StepFailoverPlan {
    pub reconnect: Reconnect,
    pub kill: Option<Kill>,
    /// The inserters' ledgers (table, ledger) that the audit reads; empty with `--no-check`.
    pub ledgers: Vec<(String, SharedLedger)>,
    /// Without ibench's kill: the server the step started on (`super::observed`).
    pub observed_from: Option<crate::backend::identity::ServerIdentity>,
}

/// The failover set-up of `step`: with `--failover` at this step, ibench's kill of the
/// primary (its pid read from its pid file, so it must run on this host) and the promoted
/// replica as the clients' reconnect target; in any other step with `--reconnect-for` (or
/// `--failover`), the clients reconnect to `--url`. `None` when clients do not reconnect.
pub(super) fn step_plan(
    shape: &super::shape::RunShape,
    admin: &mut dyn Conn,
    step: crate::workload::steps::StepName,
) -> anyhow::Result<Option<StepFailoverPlan>> {
    let Some(r) = &shape.reconnect else {
        return Ok(None);
    };
    if let Some((at, replica)) = r.failover.as_ref().filter(|(at, _)| at.step == step) {
        let primary_pid = primary_pid(admin)?;
        let driver: Arc<dyn Driver> = Arc::from(replica.driver());
        standby_before(driver.as_ref(), &replica.redacted_url)?;
        return Ok(Some(StepFailoverPlan {
            reconnect: Reconnect {
                driver: Arc::clone(&driver),
                bound: r.bound,
                after: Some(Arc::new(OnceLock::new())),
            },
            kill: Some(Kill {
                at: *at,
                primary_pid,
                replica: driver,
                replica_url: replica.redacted_url.clone(),
            }),
            ledgers: Vec::new(),
            observed_from: None,
        }));
    }
    Ok(Some(StepFailoverPlan {
        reconnect: Reconnect {
            driver: Arc::from(shape.target.driver()),
            bound: r.bound,
            after: None,
        },
        kill: None,
        ledgers: Vec::new(),
        observed_from: super::observed::identity_at_start(admin),
    }))
}

/// Before anything is killed: the replica answers and is a replica (it refuses writes), so
/// a promotion can make it a primary.
fn standby_before(replica: &dyn Driver, url: &str) -> anyhow::Result<()> {
    let mut conn = replica
        .connect()
        .map_err(|e| anyhow::anyhow!("--failover: cannot reach the replica to promote: {e}"))?;
    if conn.accepts_writes()? {
        anyhow::bail!(
            "--failover: the server at --replica-url ({url}) takes writes, so it is no replica to promote; give a standby's URL (`ibench server start --replica-of` prints it)"
        );
    }
    Ok(())
}

/// The primary's server process, from the pid file it reports.
fn primary_pid(admin: &mut dyn Conn) -> anyhow::Result<u32> {
    let fix = "--failover kills the primary's server process, so --url must be a server on this host (a private one: `ibench server start`)";
    let file = admin
        .server_files()?
        .and_then(|f| f.pid_file)
        .ok_or_else(|| anyhow::anyhow!("the primary does not say where its pid file is; {fix}"))?;
    let text = std::fs::read_to_string(&file).map_err(|e| {
        anyhow::anyhow!(
            "cannot read the primary's pid file {}: {e}; {fix}",
            file.display()
        )
    })?;
    let pid = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse::<u32>().ok())
        .ok_or_else(|| anyhow::anyhow!("no pid in {}; {fix}", file.display()))?;
    if crate::process::read_stat(pid).is_none() {
        anyhow::bail!(
            "process {pid} of {} is not running here; {fix}",
            file.display()
        );
    }
    Ok(pid)
}

/// What the controller saw, shared with the step.
#[derive(Default)]
pub(super) struct Event {
    pub lost_at: OnceLock<Instant>,
    /// When the replica took writes; the clients wait for it before they reconnect
    /// (the same cell as their [`Reconnect::after`]).
    pub promoted_at: Arc<OnceLock<Instant>>,
    pub error: Mutex<Option<String>>,
    /// The audit, made as soon as the replica took writes.
    pub audit: Mutex<Option<FailoverAudit>>,
}

impl Event {
    /// The event of a step with `plan`: its promotion is the moment the clients wait for.
    pub fn for_plan(plan: Option<&StepFailoverPlan>) -> Event {
        Event {
            promoted_at: plan
                .and_then(|p| p.reconnect.after.clone())
                .unwrap_or_default(),
            ..Event::default()
        }
    }

    fn fail(&self, e: String) {
        *self
            .error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
    }

    /// Why the failover did not complete, if it did not.
    pub fn error(&self) -> Option<String> {
        self.error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// The controller's thread: at the moment asked, kill the primary, promote the replica and
/// wait until it takes writes, within the clients' reconnect bound. A failure stops the step
/// (what it measured is kept); Ctrl-C or the step's end before the moment ends it quietly.
pub(super) fn control(plan: &StepFailoverPlan, start: Instant, stop: &StopSignal, ev: &Event) {
    let Some(kill) = plan.kill.as_ref() else {
        super::observed::watch(plan, stop, ev);
        return;
    };
    let bound = plan.reconnect.bound;
    let moment = start + Duration::from_secs_f64(kill.at.seconds);
    if !stop.sleep_until(moment) {
        if !crate::runner::stop::interrupted() {
            ev.fail(format!(
                "the step ended before the failover moment ({} s into it): ask for an earlier one",
                kill.at.seconds
            ));
        }
        return;
    }
    if let Err(e) = kill_tree(kill.primary_pid) {
        ev.fail(format!("cannot kill the primary: {e:#}"));
        stop.stop();
        return;
    }
    let _ = ev.lost_at.set(Instant::now());
    crate::say!(
        "failover: sent SIGKILL to the primary (pid {}), promoting {}",
        kill.primary_pid,
        kill.replica_url
    );
    match promote(kill, bound, stop) {
        Ok(Some(mut conn)) => {
            let _ = ev.promoted_at.set(Instant::now());
            if !plan.ledgers.is_empty() {
                let a = audit(conn.as_mut(), &plan.ledgers);
                *ev.audit
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(a);
            }
        }
        Ok(None) => {}
        Err(e) => {
            ev.fail(format!("the replica {}: {e}", kill.replica_url));
            stop.stop();
        }
    }
}

/// Start [`control`] on a thread of `scope` when the step has a failover plan (ibench's kill,
/// or the observed failover's watcher).
pub(super) fn spawn_control<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    plan: Option<&'scope StepFailoverPlan>,
    start: Instant,
    (stop, ev): (&'scope StopSignal, &'scope Event),
) {
    // Without ibench's kill, the controller is the observed failover's watcher.
    if let Some(plan) = plan {
        scope.spawn(move || control(plan, start, stop, ev));
    }
}

/// SIGKILL `pid` and every process below it (PostgreSQL's backends would otherwise go on
/// serving their connections for a moment).
fn kill_tree(pid: u32) -> anyhow::Result<()> {
    let tree = crate::sampler::procfs::process_tree(pid).map_err(anyhow::Error::msg)?;
    for (p, _) in tree {
        crate::server::signal(p, libc::SIGKILL)?;
    }
    Ok(())
}

/// Promote the replica and wait until it takes writes: the connection to it, `Ok(None)` when
/// the step stopped first (Ctrl-C), an error when it cannot be promoted or did not within
/// `bound`.
fn promote(
    kill: &Kill,
    bound: Duration,
    stop: &StopSignal,
) -> Result<Option<Box<dyn Conn>>, String> {
    let since = Instant::now();
    let mut conn: Box<dyn Conn> = kill
        .replica
        .connect()
        .map_err(|e| format!("cannot connect to promote it: {e}"))?;
    let wait_seconds = u32::try_from(bound.as_secs().max(1)).unwrap_or(u32::MAX);
    conn.promote(wait_seconds)
        .map_err(|e| format!("cannot be promoted: {e}"))?;
    loop {
        if conn
            .accepts_writes()
            .map_err(|e| format!("stopped answering while promoted: {e}"))?
        {
            return Ok(Some(conn));
        }
        if since.elapsed() > bound {
            return Err(format!(
                "the promotion did not complete within {:.0} s (--reconnect-for)",
                bound.as_secs_f64()
            ));
        }
        if !stop.sleep_until(Instant::now() + PROMOTION_POLL) {
            return Ok(None);
        }
    }
}

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
    let kill = f.plan.kill.as_ref();
    if kill.is_none() && clients.iter().all(|c| c.outage.first_failure.is_none()) {
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
    let mut record = figures(kill, &f.event, f.start, &clients, (kind, &per_second));
    record.audit = f
        .event
        .audit
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if record.audit.is_none() && kill.is_some() && !f.plan.ledgers.is_empty() {
        record.audit = Some(FailoverAudit {
            error: Some("the replica was never promoted".into()),
            ..FailoverAudit::default()
        });
    }
    if kill.is_none() {
        super::observed::conclude(&f.plan, &mut record);
    }
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

/// The step's failover figures (the audit is added by [`audit`]). `main` is the step's main
/// op kind (the one its throughput counts: a query step's queries, not its background
/// writers) and its count per whole second: the rate and the latency around the event are
/// that op's.
pub(super) fn figures(
    plan: Option<&Kill>,
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
        driven_by: if plan.is_some() {
            DrivenBy::Ibench
        } else {
            DrivenBy::Observed
        },
        at_second: plan.map(|k| k.at.seconds),
        kill_method: if plan.is_some() {
            KillMethod::Sigkill
        } else {
            KillMethod::Unknown
        },
        loss_at_second: loss_second,
        promoted_at_second: ev.promoted_at.get().copied().map(secs),
        new_primary_url: plan.map(|k| k.replica_url.clone()),
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
