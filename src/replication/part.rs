//! The replica's heartbeat as a part of a run ([`crate::run_part::RunPart`], `--replica-url`):
//! it starts before the results directory is made (a replica URL that names no replica of
//! `--url` refuses the run), brackets each step's measured part, waits after it for the
//! replica to catch up, gives the monitor each second's lag and the step's cancel thread the
//! replica's loss, and after l.i2 compares the replica's tables with the primary's.

use std::path::Path;
use std::time::Instant;

use crate::backend::target::ConnectTarget;
use crate::results::options::ReplicaLoss;
use crate::results::replication::StepReplication;
use crate::results::{CheckFailure, CheckKind, RunRecord, StepRecord};
use crate::run_part::{RunPart, StepEnd, StepFacts, StopWatch};
use crate::stats::OpKind;
use crate::workload::steps::StepName;

use super::heartbeat::{Heartbeat, integrity_message};

/// What the replica's part is asked to do.
pub struct ReplicaWatch {
    /// The primary (`--url`) and the replica (`--replica-url`).
    pub targets: (ConnectTarget, ConnectTarget),
    /// `--on-replica-loss`.
    pub on_loss: ReplicaLoss,
    /// Whether the run was interrupted (Ctrl-C): the wait for a catch-up ends.
    pub interrupted: fn() -> bool,
    /// Compare the replica's tables after l.i2 (not with `--no-integrity-check`).
    pub check: bool,
    /// The run's tables.
    pub tables: Vec<String>,
}

/// The replica's heartbeat as a part of a run.
pub struct ReplicaPart {
    watch: ReplicaWatch,
    heartbeat: Option<Heartbeat>,
    /// The step whose measured part is under way.
    step: Option<StepName>,
    /// The figures of the step that just ended.
    replication: Option<StepReplication>,
}

impl ReplicaPart {
    /// The part of a run that `watch` describes; nothing starts before [`RunPart::prepare`].
    pub fn new(watch: ReplicaWatch) -> ReplicaPart {
        ReplicaPart {
            watch,
            heartbeat: None,
            step: None,
            replication: None,
        }
    }
}

/// Rows a step wrote on the primary: inserted plus deleted.
fn rows_written(record: &StepRecord) -> u64 {
    let rows = |k: OpKind| record.ops.get(k.name()).map_or(0, |o| o.rows);
    rows(OpKind::Insert) + rows(OpKind::Delete)
}

impl RunPart for ReplicaPart {
    /// Check the pair and start the heartbeat ([`Heartbeat::start`]).
    fn prepare(&mut self) -> anyhow::Result<()> {
        let w = &self.watch;
        self.heartbeat = Some(Heartbeat::start(
            &w.targets.0,
            &w.targets.1,
            w.on_loss,
            w.interrupted,
        )?);
        Ok(())
    }

    fn run_starts(&mut self, _dir: &Path, record: &mut RunRecord) {
        record.replica = self.heartbeat.as_ref().map(|h| h.info.clone());
    }

    fn step_begins(&mut self, step: StepName) {
        self.step = Some(step);
        self.replication = None;
        if let Some(h) = &self.heartbeat {
            h.begin_step();
        }
    }

    /// The step's lag figures, once the replica caught up (or gave up).
    fn step_ends(&mut self, end: &StepEnd) {
        self.replication = self
            .heartbeat
            .as_ref()
            .map(|h| h.end_step(end.started_at, end.ended_at));
    }

    /// The apply work per row written; after l.i2, once the replica caught up and unless
    /// `--no-integrity-check`: its tables against the primary's, a mismatch a failed
    /// integrity check.
    fn complete(&mut self, record: &mut StepRecord, _facts: &StepFacts) -> Vec<CheckFailure> {
        let Some(mut rep) = self.replication.take() else {
            return Vec::new();
        };
        rep.per_row(rows_written(record));
        let mut failures = Vec::new();
        let compare = record.name == StepName::InsertDelete2
            && self.watch.check
            && rep.catch_up_seconds.is_some();
        if let Some(h) = self.heartbeat.as_ref().filter(|_| compare) {
            let check = h.check_tables(&self.watch.tables);
            if !check.ok {
                failures.push(CheckFailure {
                    kind: CheckKind::Integrity,
                    message: integrity_message(&check),
                });
            }
            rep.integrity = Some(check);
        }
        record.replication = Some(rep);
        failures
    }

    /// Stop the heartbeat's threads.
    fn run_ends(&mut self, _record: &mut RunRecord) {
        if let Some(h) = self.heartbeat.take() {
            h.finish();
        }
    }

    /// With `--on-replica-loss stop`: the replica's loss stops the step.
    fn stop_watch(&self, start: Instant) -> Option<StopWatch> {
        let watch = self.heartbeat.as_ref()?.loss_watch(self.step?, start)?;
        Some(Box::new(move || watch.lost()))
    }

    fn replica_second(&self, start: Instant, second: u32) -> Option<(Option<f64>, bool)> {
        self.heartbeat.as_ref().map(|h| h.second(start, second))
    }
}
