//! The replication heartbeat (`--replica-url`, docs/replication.md): the same on PostgreSQL
//! and MariaDB. A writer thread updates one row of `ibench_heartbeat` on the primary every
//! 100 ms on its own connection, outside the measured operations, with a sequence number that
//! only grows; a reader thread reads that row on the replica every 100 ms. The replica is
//! `now - (commit time of the first write it has not applied)` behind (zero when it has
//! applied every write), to within the time one read takes; a failed read marks that moment
//! lost. Once a second, and as a step ends, the reader also reads the DBMS's own view (PostgreSQL's replay LSN and
//! `replay_lag`; MariaDB's GTID positions and `Seconds_Behind_Master`) and, on PostgreSQL, the
//! standby's replication slot on the primary (`slot_watch.rs`).
//!
//! It is one of the run's parts (`super::part::ReplicaPart`): started once per run
//! ([`Heartbeat::start`], which also refuses a replica URL that is no replica of `--url`),
//! asked for each second's lag ([`Heartbeat::second`]) and for a step's figures
//! ([`Heartbeat::begin_step`], [`Heartbeat::end_step`], which waits until the replica has
//! caught up). A run without a replica has none. Every statement is the backend's ([`ReplicaLink`]), reached through the
//! typed targets of `--url` and `--replica-url`, each read once by the run's shape.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use super::apply::{ApplyMark, ApplyProbe};
use super::slot_watch::SlotWatch;
use crate::backend::replication::ReplicaLink;
use crate::backend::target::ConnectTarget;
use crate::results::options::ReplicaLoss;
use crate::results::replication::{
    DbmsReplicationView, ReplicaInfo, ReplicaIntegrity, StepReplication, TableMatch, lag_figures,
};
use crate::workload::steps::StepName;

/// Time between two heartbeat writes (and two reads).
pub const INTERVAL: Duration = Duration::from_millis(100);

/// How long the replica may take to show the heartbeat's first row.
const FIRST_ROW_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest wait for a replica to catch up after a step.
const CATCH_UP_CAP: Duration = Duration::from_secs(120);

/// After a step: give up waiting for a replica whose reads have failed this long; with
/// `--on-replica-loss stop`, the replica is lost once no read has succeeded this long.
const LOST_AFTER: Duration = Duration::from_secs(5);

/// The login timeout of the heartbeat's connections (a lost replica is retried once a second).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Commit times kept (about 33 minutes of writes); a replica further behind is measured from
/// the oldest kept.
const COMMITS_KEPT: usize = 20_000;

/// One reading of the replica.
#[derive(Clone, Copy, Debug)]
struct Reading {
    at: Instant,
    /// The lag, ms; `None`: the replica could not be read.
    lag_ms: Option<f64>,
    /// The sequence number read; `None`: the replica could not be read.
    applied: Option<i64>,
}

/// What the two threads share with the run.
struct Shared {
    /// The writes committed on the primary: sequence number and when the commit returned.
    commits: Mutex<VecDeque<(i64, Instant)>>,
    /// The readings since the step began.
    readings: Mutex<Vec<Reading>>,
    /// The newest sequence number read on the replica, and when.
    applied: Mutex<Option<(i64, Instant)>>,
    /// The DBMS's view since the step began.
    view: Mutex<DbmsReplicationView>,
    /// The standby's `application_name` on a PostgreSQL primary, when known.
    application_name: Option<String>,
    /// The primary and the replica, for the reconnections and the integrity check after l.i2.
    targets: (ConnectTarget, ConnectTarget),
    /// PostgreSQL: the standby's replication slot on the primary.
    slot: SlotWatch,
    /// A step ended: read the DBMS's view and the slot at the next tick (cleared once read).
    view_due: AtomicBool,
    stop: AtomicBool,
    /// `--on-replica-loss stop`: a step stops when the replica stops answering.
    stop_on_loss: bool,
    /// The replica's process and replay position, and the mark at the step's start.
    apply: Mutex<(ApplyProbe, Option<ApplyMark>)>,
    /// Whether the run was interrupted (Ctrl-C): the wait for a catch-up ends.
    interrupted: fn() -> bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A run's heartbeat: its threads, and the replica as it was found at the start.
pub struct Heartbeat {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    /// The replica, as `run.json` records it.
    pub info: ReplicaInfo,
}

impl Heartbeat {
    /// Check that `replica` is a replica of the primary `primary` (a standby or a MariaDB
    /// replica, not the primary itself), make the heartbeat's row, wait until the replica
    /// shows it, and start the writer and the reader. `interrupted` tells a Ctrl-C. Errors
    /// are one line naming `--replica-url` or `--url`.
    pub fn start(
        primary: &ConnectTarget,
        replica: &ConnectTarget,
        on_loss: ReplicaLoss,
        interrupted: fn() -> bool,
    ) -> anyhow::Result<Heartbeat> {
        let mut p = primary
            .replica_link(CONNECT_TIMEOUT)
            .map_err(|e| anyhow::anyhow!("--url: {e}"))?;
        let mut r = replica
            .replica_link(CONNECT_TIMEOUT)
            .map_err(|e| anyhow::anyhow!("--replica-url: {e}"))?;
        let shown = replica.shown_url.clone();
        let found = p.check_pair(&mut r, &shown)?;
        let slot = SlotWatch::of(p.find_slot(&mut r, found.application_name.as_deref()));
        let first = first_sequence();
        p.make_heartbeat(first)
            .map_err(anyhow::Error::msg)
            .context("cannot make the heartbeat's table on --url")?;
        wait_first_row(&mut r, first, &shown)?;
        let probe = ApplyProbe::locate(replica);
        let process_na = probe.process_na();
        let shared = Arc::new(Shared {
            commits: Mutex::new(VecDeque::new()),
            readings: Mutex::new(Vec::new()),
            applied: Mutex::new(Some((first, Instant::now()))),
            view: Mutex::new(DbmsReplicationView::default()),
            application_name: found.application_name,
            targets: (primary.clone(), replica.clone()),
            slot,
            view_due: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            stop_on_loss: on_loss == ReplicaLoss::Stop,
            apply: Mutex::new((probe, None)),
            interrupted,
        });
        let writer = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("ibench-heartbeat-writer".into())
                .spawn(move || write_loop(&shared, p, first))
                .context("cannot start the heartbeat's writer thread")?
        };
        let reader = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("ibench-heartbeat-reader".into())
                .spawn(move || read_loop(&shared, r))
                .context("cannot start the heartbeat's reader thread")?
        };
        Ok(Heartbeat {
            shared,
            threads: vec![writer, reader],
            info: ReplicaInfo {
                url: shown,
                version: found.replica_version,
                primary_version: found.primary_version,
                mode: found.mode,
                synchronous_commit: found.synchronous_commit,
                heartbeat_interval_ms: u32::try_from(INTERVAL.as_millis()).unwrap_or(u32::MAX),
                process_na,
            },
        })
    }

    /// Stop both threads (the writer drops the heartbeat's table on its way out). A thread
    /// stuck on a replica that stopped answering is left behind after 3 s.
    pub fn finish(mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(3);
        for t in std::mem::take(&mut self.threads) {
            while !t.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Heartbeat {
    /// A heartbeat dropped without [`Heartbeat::finish`] (a run that could not start) stops
    /// its threads too.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
    }
}

/// The first sequence number of this run: microseconds since the epoch, so that it is above
/// any a former run left in the row.
fn first_sequence() -> i64 {
    let us = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    i64::try_from(us).unwrap_or(i64::MAX / 2)
}

/// Wait until the replica shows the heartbeat's first row.
fn wait_first_row(r: &mut ReplicaLink, first: i64, shown: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + FIRST_ROW_TIMEOUT;
    loop {
        let seen = r.read_heartbeat().ok().flatten();
        if seen.is_some_and(|s| s >= first) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "--replica-url {shown} did not show the heartbeat written on --url within {} s: is it a replica of --url's server, and replicating?",
                FIRST_ROW_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sleep until `next` (or the stop), then move `next` on by one interval (skipping ticks
/// that have passed).
fn tick(shared: &Shared, next: &mut Instant) -> bool {
    let now = Instant::now();
    if *next > now {
        std::thread::sleep(*next - now);
    }
    *next += INTERVAL;
    let now = Instant::now();
    while *next <= now {
        *next += INTERVAL;
    }
    !shared.stop.load(Ordering::Relaxed)
}

/// Reconnect a link that failed, at most once a second.
fn reconnect(
    link: &mut Option<ReplicaLink>,
    target: &ConnectTarget,
    last_try: &mut Option<Instant>,
) {
    if link.is_some() || last_try.is_some_and(|t| t.elapsed() < Duration::from_secs(1)) {
        return;
    }
    *last_try = Some(Instant::now());
    *link = target.replica_link(CONNECT_TIMEOUT).ok();
}

/// The writer: one update of the row per interval on the primary; its commit times.
fn write_loop(shared: &Shared, mut primary: ReplicaLink, first: i64) {
    // The heartbeat measures the replica; it does not wait for it.
    primary.commit_locally();
    let mut link = Some(primary);
    let mut seq = first;
    let mut next = Instant::now() + INTERVAL;
    let mut last_try = None;
    while tick(shared, &mut next) {
        reconnect(&mut link, &shared.targets.0, &mut last_try);
        let Some(l) = link.as_mut() else { continue };
        match l.write_heartbeat(seq + 1) {
            Ok(_) => {
                seq += 1;
                let mut commits = lock(&shared.commits);
                commits.push_back((seq, Instant::now()));
                while commits.len() > COMMITS_KEPT {
                    commits.pop_front();
                }
            }
            Err(_) => link = None,
        }
    }
    if let Some(l) = link.as_mut() {
        l.drop_heartbeat();
    }
}

/// The lag at `at` of a replica that has applied the writes up to `applied`: from the commit
/// of the first write after it, zero when there is none yet.
fn lag_ms(commits: &VecDeque<(i64, Instant)>, applied: i64, at: Instant) -> f64 {
    let i = commits.partition_point(|(s, _)| *s <= applied);
    match commits.get(i) {
        // Microseconds are the finest figure worth keeping.
        Some((_, committed)) if *committed < at => {
            ((at - *committed).as_secs_f64() * 1e6).round() / 1e3
        }
        _ => 0.0,
    }
}

/// The reader: one read of the row per interval on the replica, the DBMS's view once a
/// second.
fn read_loop(shared: &Shared, replica: ReplicaLink) {
    let (primary_target, replica_target) = (&shared.targets.0, &shared.targets.1);
    let mut link = Some(replica);
    let mut primary = primary_target.replica_link(CONNECT_TIMEOUT).ok();
    let (mut last_try, mut last_primary_try) = (None, None);
    let mut next = Instant::now() + INTERVAL;
    let mut n: u64 = 0;
    while tick(shared, &mut next) {
        n += 1;
        reconnect(&mut link, replica_target, &mut last_try);
        let read = link.as_mut().map(ReplicaLink::read_heartbeat);
        let at = Instant::now();
        let (lag, applied) = match read {
            Some(Ok(Some(applied))) => {
                *lock(&shared.applied) = Some((applied, at));
                (
                    Some(lag_ms(&lock(&shared.commits), applied, at)),
                    Some(applied),
                )
            }
            Some(Ok(None)) => (None, None),
            Some(Err(_)) => {
                link = None;
                (None, None)
            }
            None => (None, None),
        };
        lock(&shared.readings).push(Reading {
            at,
            lag_ms: lag,
            applied,
        });
        let due = shared.view_due.load(Ordering::Relaxed);
        if n.is_multiple_of(10) || due {
            reconnect(&mut primary, primary_target, &mut last_primary_try);
            if let (Some(r), Some(p)) = (link.as_mut(), primary.as_mut()) {
                let mut view = lock(&shared.view);
                let standby = shared.application_name.as_deref();
                if p.read_view(r, standby, &mut view).is_err() {
                    primary = None;
                }
            }
            if let Some(p) = primary.as_mut()
                && shared.slot.read(p).is_err()
            {
                primary = None;
            }
            // Cleared once read, so that a step's end waits for the reading, not its start.
            if due {
                shared.view_due.store(false, Ordering::Relaxed);
            }
        }
    }
}

impl Heartbeat {
    /// After a step that caught up (l.i2): compare the replica's `tables` with the primary's,
    /// rows and a checksum of every row.
    pub fn check_tables(&self, tables: &[String]) -> ReplicaIntegrity {
        let (p, r) = &self.shared.targets;
        let compared = (|| -> Result<Vec<TableMatch>, String> {
            let mut primary = p.replica_link(CONNECT_TIMEOUT)?;
            let mut replica = r.replica_link(CONNECT_TIMEOUT)?;
            let mut out = Vec::new();
            for table in tables {
                let (pr, pc) = primary.table_checksum(table)?;
                let (rr, rc) = replica.table_checksum(table)?;
                out.push(TableMatch {
                    table: table.clone(),
                    primary_rows: pr,
                    replica_rows: rr,
                    primary_checksum: pc,
                    replica_checksum: rc,
                });
            }
            Ok(out)
        })();
        match compared {
            Ok(tables) => ReplicaIntegrity {
                ok: tables.iter().all(|t| {
                    t.primary_rows == t.replica_rows && t.primary_checksum == t.replica_checksum
                }),
                tables,
                error: None,
            },
            Err(e) => ReplicaIntegrity {
                ok: false,
                tables: Vec::new(),
                error: Some(e),
            },
        }
    }

    /// A step begins: its readings and the DBMS's view start afresh, and the replica's
    /// process and replay position are marked.
    pub fn begin_step(&self) {
        let shared = &self.shared;
        lock(&shared.readings).clear();
        *lock(&shared.view) = DbmsReplicationView::default();
        shared.slot.begin_step();
        // A replica lost already is not marked (its logins could time out at every step).
        let answering = lock(&shared.applied).is_some_and(|(_, at)| at.elapsed() < LOST_AFTER);
        let mut apply = lock(&shared.apply);
        apply.1 = answering.then(|| apply.0.mark());
    }

    /// The watch of step `step`, started at `start`, when the run stops on the replica's
    /// loss (`None` otherwise). Made on the run thread; read on any.
    pub fn loss_watch(&self, step: StepName, start: Instant) -> Option<LossWatch> {
        self.shared.stop_on_loss.then(|| LossWatch {
            shared: Arc::clone(&self.shared),
            step,
            start,
        })
    }

    /// Second `second` of a step that started at `start`: the largest lag read in it, and
    /// whether a reading failed in it.
    pub fn second(&self, start: Instant, second: u32) -> (Option<f64>, bool) {
        let from = start + Duration::from_secs(u64::from(second.saturating_sub(1)));
        let to = start + Duration::from_secs(u64::from(second));
        let readings = lock(&self.shared.readings);
        let mut max: Option<f64> = None;
        let mut lost = false;
        for r in readings.iter().filter(|r| r.at > from && r.at <= to) {
            match r.lag_ms {
                Some(l) => max = Some(max.map_or(l, |m| m.max(l))),
                None => lost = true,
            }
        }
        (max, lost)
    }

    /// A step's measured part ran from `started_at` to `ended_at`: its lag figures, after
    /// waiting (up to two minutes) until the replica has applied every heartbeat written by
    /// its end.
    pub fn end_step(&self, started_at: SystemTime, ended_at: SystemTime) -> StepReplication {
        let shared = &self.shared;
        let (start, end) = (instant_of(started_at), instant_of(ended_at));
        // The DBMS's view at the end too (a step shorter than a second has no other reading).
        shared.view_due.store(true, Ordering::Relaxed);
        let asked = Instant::now();
        while shared.view_due.load(Ordering::Relaxed) && asked.elapsed() < 20 * INTERVAL {
            std::thread::sleep(Duration::from_millis(5));
        }
        let catch_up_seconds = wait_catch_up(shared, end);
        let apply_marks = {
            let mut apply = lock(&shared.apply);
            let before = apply.1.take();
            // The apply work is whole once the replica caught up; not before.
            before
                .filter(|_| catch_up_seconds.is_some())
                .map(|b| (b, apply.0.mark()))
        };
        let mut rep = step_figures(shared, start, end, catch_up_seconds);
        if let Some((before, after)) = apply_marks {
            super::apply::record(&mut rep, &before, &after);
        }
        rep
    }
}

/// A step's figures from the readings between `start` and `end`, the slot's and the DBMS's
/// view (the apply work apart).
fn step_figures(
    shared: &Shared,
    start: Instant,
    end: Instant,
    catch_up_seconds: Option<f64>,
) -> StepReplication {
    let readings: Vec<Reading> = lock(&shared.readings)
        .iter()
        .filter(|r| r.at >= start && r.at <= end)
        .copied()
        .collect();
    let lags: Vec<f64> = readings.iter().filter_map(|r| r.lag_ms).collect();
    let (max, p99, mean) = lag_figures(&lags);
    let (slot, slot_lost_from) = shared.slot.end_step(start);
    let lost_from_second = readings
        .iter()
        .find(|r| r.lag_ms.is_none())
        .map(|r| (r.at - start).as_secs_f64())
        .into_iter()
        .chain(slot_lost_from)
        .reduce(f64::min);
    StepReplication {
        samples: u32::try_from(readings.len()).unwrap_or(u32::MAX),
        lag_max_ms: max,
        lag_p99_ms: p99,
        lag_mean_ms: mean,
        catch_up_seconds,
        lost_from_second,
        dbms: Some(lock(&shared.view).clone()).filter(|v| *v != DbmsReplicationView::default()),
        slot,
        ..StepReplication::default()
    }
}

/// The failed integrity check's line: which tables differ and how.
pub fn integrity_message(check: &ReplicaIntegrity) -> String {
    if let Some(e) = &check.error {
        return format!("replica: the tables could not be compared: {e}");
    }
    let differ: Vec<String> = check
        .tables
        .iter()
        .filter(|t| t.primary_rows != t.replica_rows || t.primary_checksum != t.replica_checksum)
        .map(|t| {
            format!(
                "{} holds {} rows on the replica, {} on the primary{}",
                t.table,
                t.replica_rows,
                t.primary_rows,
                if t.primary_checksum == t.replica_checksum {
                    ""
                } else {
                    " (checksums differ)"
                }
            )
        })
        .collect();
    format!("replica: {}", differ.join("; "))
}

/// With `--on-replica-loss stop`: watches a step for the replica's loss.
pub struct LossWatch {
    shared: Arc<Shared>,
    step: StepName,
    start: Instant,
}

impl LossWatch {
    /// The line that fails the step once no reading of the replica has succeeded for
    /// 5 s (`LOST_AFTER`); `None` while it answers.
    pub fn lost(&self) -> Option<String> {
        let (_, at) = (*lock(&self.shared.applied))?;
        if at.elapsed() < LOST_AFTER {
            return None;
        }
        Some(format!(
            "the replica stopped answering at second {} of {}; --on-replica-loss continue measures on without it",
            at.saturating_duration_since(self.start).as_secs(),
            self.step
        ))
    }
}

/// The instant of a wall-clock time in the recent past.
fn instant_of(t: SystemTime) -> Instant {
    let ago = SystemTime::now().duration_since(t).unwrap_or_default();
    Instant::now().checked_sub(ago).unwrap_or_else(Instant::now)
}

/// Wait until the replica has applied the last write committed by `end`; the seconds from
/// `end` to the read that showed it. `None` after the cap, or when reads keep failing.
fn wait_catch_up(shared: &Shared, end: Instant) -> Option<f64> {
    let target = {
        let commits = lock(&shared.commits);
        let i = commits.partition_point(|(_, at)| *at <= end);
        match i.checked_sub(1).and_then(|i| commits.get(i)) {
            Some((seq, _)) => *seq,
            None => return Some(0.0),
        }
    };
    let deadline = Instant::now() + CATCH_UP_CAP;
    loop {
        // The first reading that showed it: it may come before the step's end (caught up
        // at once), or while the sampler and the host probe ran after it.
        let first = lock(&shared.readings)
            .iter()
            .find(|r| r.applied.is_some_and(|a| a >= target))
            .map(|r| r.at);
        if let Some(at) = first {
            let seconds = at.saturating_duration_since(end).as_secs_f64();
            return Some((seconds * 1e3).round() / 1e3);
        }
        if let Some((_, at)) = *lock(&shared.applied)
            && at.elapsed() > LOST_AFTER
        {
            return None;
        }
        if Instant::now() >= deadline || (shared.interrupted)() || shared.slot.is_lost() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lag_runs_from_the_first_write_not_applied() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let commits: VecDeque<(i64, Instant)> =
            [(1, t0), (2, t0 + ms(100)), (3, t0 + ms(200))].into();
        // Applied everything: no lag.
        assert_eq!(lag_ms(&commits, 3, t0 + ms(250)), 0.0);
        // Applied 1 of 3, read at 250 ms: write 2 has waited 150 ms.
        let lag = lag_ms(&commits, 1, t0 + ms(250));
        assert!((lag - 150.0).abs() < 1e-6, "{lag}");
        // Before the first write: measured from it.
        let lag = lag_ms(&commits, 0, t0 + ms(50));
        assert!((lag - 50.0).abs() < 1e-6, "{lag}");
    }
}
