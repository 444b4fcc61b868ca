//! The run's parts: what works beside a run's steps rather than in them, each in its own
//! room. The sampler reads the server's CPU, IO, sizes and counters (`sampler`), the host
//! probe times the host before and after each step (`sampler::host_probe`), the heartbeat
//! measures the replica (`replication::heartbeat`). The runner calls them at fixed moments of
//! the run and of each step through [`RunPart`] and [`RunParts`], and knows none of them by
//! name: a step opens its connections, lets the parts begin, drives the connections, lets
//! the parts end, and hands its checked record to each part to complete.

use std::path::Path;
use std::time::{Instant, SystemTime};

use crate::results::{CheckFailure, RunRecord, StepRecord};
use crate::workload::steps::StepName;

/// Why a step must stop now (the replica lost, with `--on-replica-loss stop`); polled by the
/// step's cancel thread, so it is `Send`.
pub type StopWatch = Box<dyn Fn() -> Option<String> + Send>;

/// A step's measured part as it ended.
#[derive(Clone, Copy, Debug)]
pub struct StepEnd {
    /// The step's place in the run, 0-based.
    pub ordinal: u32,
    /// When the measured part started and ended.
    pub started_at: SystemTime,
    pub ended_at: SystemTime,
}

/// What a part may need of a step besides its record.
#[derive(Clone, Debug, Default)]
pub struct StepFacts {
    /// The step's main operations (rows or statements of its main op kind).
    pub main_ops: u64,
    /// Its main figure in each whole second of the measured part.
    pub main_per_second: Vec<u64>,
    /// The primary was lost during the step (a failover): nothing is checked on it.
    pub primary_gone: bool,
    /// The run was interrupted (Ctrl-C).
    pub interrupted: bool,
}

/// One part of a run. Every moment has a default that does nothing; a part implements the
/// moments it needs.
pub trait RunPart {
    /// Before the results directory is made: a part that cannot start refuses the run here,
    /// with a one-line error naming the flag to fix, and no empty directory is left.
    fn prepare(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    /// The run's record as first written, in its results directory `dir`: the part starts
    /// and adds its run-level facts.
    fn run_starts(&mut self, _dir: &Path, _record: &mut RunRecord) {}
    /// Right before step `step`'s measured part, its connections open.
    fn step_begins(&mut self, _step: StepName) {}
    /// Right after the measured part.
    fn step_ends(&mut self, _end: &StepEnd) {}
    /// The step's record, measured and checked: the part adds its figures and returns the
    /// checks that failed.
    fn complete(&mut self, _record: &mut StepRecord, _facts: &StepFacts) -> Vec<CheckFailure> {
        Vec::new()
    }
    /// After each step, its record in `record.steps`.
    fn steps_so_far(&mut self, _record: &mut RunRecord) {}
    /// The run is over (completed, interrupted or failed): the part stops and adds its totals.
    fn run_ends(&mut self, _record: &mut RunRecord) {}
    /// During a measured part started at `start`: why the step must stop now, polled.
    fn stop_watch(&self, _start: Instant) -> Option<StopWatch> {
        None
    }
    /// Second `second` of a measured part started at `start`: the replica's largest lag read
    /// in it and whether a reading failed, for the timeline (`None`: the part reads none).
    fn replica_second(&self, _start: Instant, _second: u32) -> Option<(Option<f64>, bool)> {
        None
    }
}

/// A run's parts, in the order they begin: each step's parts begin in this order and end,
/// and complete the record, in the reverse order (the innermost part brackets the measured
/// part most closely); the run starts innermost first too. Itself a [`RunPart`]: the runner hands one part to each step.
#[derive(Default)]
pub struct RunParts {
    parts: Vec<Box<dyn RunPart>>,
}

impl RunParts {
    /// The parts, outermost first.
    pub fn new(parts: Vec<Box<dyn RunPart>>) -> RunParts {
        RunParts { parts }
    }
}

/// The parts together are one part: what calls it knows neither how many there are nor
/// which.
impl RunPart for RunParts {
    /// Every part's, in order; the first error ends it.
    fn prepare(&mut self) -> anyhow::Result<()> {
        self.parts.iter_mut().try_for_each(|p| p.prepare())
    }

    /// Every part's, innermost first: the sampler finds the server's data directory,
    /// which the host probe then fsyncs in.
    fn run_starts(&mut self, dir: &Path, record: &mut RunRecord) {
        self.parts
            .iter_mut()
            .rev()
            .for_each(|p| p.run_starts(dir, record));
    }

    /// Every part's, outermost first.
    fn step_begins(&mut self, step: StepName) {
        self.parts.iter_mut().for_each(|p| p.step_begins(step));
    }

    /// Every part's, innermost first.
    fn step_ends(&mut self, end: &StepEnd) {
        self.parts.iter_mut().rev().for_each(|p| p.step_ends(end));
    }

    /// Every part's, innermost first: the checks that failed, in that order.
    fn complete(&mut self, record: &mut StepRecord, facts: &StepFacts) -> Vec<CheckFailure> {
        self.parts
            .iter_mut()
            .rev()
            .flat_map(|p| p.complete(record, facts))
            .collect()
    }

    /// Every part's, in order.
    fn steps_so_far(&mut self, record: &mut RunRecord) {
        self.parts.iter_mut().for_each(|p| p.steps_so_far(record));
    }

    /// Every part's, in order.
    fn run_ends(&mut self, record: &mut RunRecord) {
        self.parts.iter_mut().for_each(|p| p.run_ends(record));
    }

    /// The parts' watches as one: the first part's reason to stop.
    fn stop_watch(&self, start: Instant) -> Option<StopWatch> {
        let watches: Vec<StopWatch> = self
            .parts
            .iter()
            .filter_map(|p| p.stop_watch(start))
            .collect();
        (!watches.is_empty())
            .then(|| -> StopWatch { Box::new(move || watches.iter().find_map(|w| w())) })
    }

    /// The first part's that reads a replica.
    fn replica_second(&self, start: Instant, second: u32) -> Option<(Option<f64>, bool)> {
        self.parts
            .iter()
            .find_map(|p| p.replica_second(start, second))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part that writes down the moments it hears, under its name.
    struct Heard {
        name: &'static str,
        log: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
    }

    impl RunPart for Heard {
        fn run_starts(&mut self, _dir: &Path, _record: &mut RunRecord) {
            self.log.borrow_mut().push(format!("{} starts", self.name));
        }
        fn step_begins(&mut self, step: StepName) {
            self.log
                .borrow_mut()
                .push(format!("{} begins {step}", self.name));
        }
        fn step_ends(&mut self, _end: &StepEnd) {
            self.log.borrow_mut().push(format!("{} ends", self.name));
        }
        fn complete(&mut self, _record: &mut StepRecord, _facts: &StepFacts) -> Vec<CheckFailure> {
            vec![crate::results::CheckFailure {
                kind: crate::results::CheckKind::Statistics,
                message: self.name.to_string(),
            }]
        }
        fn stop_watch(&self, _start: Instant) -> Option<StopWatch> {
            let name = self.name;
            (name == "inner").then(|| -> StopWatch { Box::new(move || Some(name.to_string())) })
        }
    }

    #[test]
    fn parts_start_innermost_first_begin_outermost_first_and_end_innermost_first() {
        let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let part = |name| -> Box<dyn RunPart> {
            Box::new(Heard {
                name,
                log: std::rc::Rc::clone(&log),
            })
        };
        let mut parts = RunParts::new(vec![part("outer"), part("inner")]);
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let mut run = crate::results::read_run(&fixture).unwrap();
        parts.run_starts(&fixture, &mut run);
        parts.step_begins(StepName::LoadInitial);
        let end = StepEnd {
            ordinal: 0,
            started_at: SystemTime::now(),
            ended_at: SystemTime::now(),
        };
        parts.step_ends(&end);
        assert_eq!(
            *log.borrow(),
            [
                "inner starts",
                "outer starts",
                "outer begins l.i0",
                "inner begins l.i0",
                "inner ends",
                "outer ends"
            ]
        );
        let mut record = run.steps.remove(0);
        let failed: Vec<String> = parts
            .complete(&mut record, &StepFacts::default())
            .into_iter()
            .map(|f| f.message)
            .collect();
        assert_eq!(failed, ["inner", "outer"]);
        let watch = parts.stop_watch(Instant::now()).expect("one part watches");
        assert_eq!(watch().as_deref(), Some("inner"));
        assert_eq!(parts.replica_second(Instant::now(), 1), None);
    }
}
