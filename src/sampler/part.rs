//! The sampler and the host probe as parts of a run ([`crate::run_part::RunPart`]): the
//! sampler starts once the results directory exists, reads the server around each step's
//! measured part and adds the step's server figures to its record; the host probe runs its
//! tasks before and after each step, outside the sampler's interval.

use std::path::Path;

use crate::backend::Driver;
use crate::results::probe::{CpuTicks, HostProbe, StepHost};
use crate::results::{CheckFailure, CheckKind, RunRecord, StepRecord};
use crate::run_part::{RunPart, StepEnd, StepFacts};
use crate::workload::steps::StepName;

use super::host_probe::{HostProber, cpu_ticks, fsync_dirs, step_host};
use super::{Sampler, Sampling, StepRaw, step_metrics};

/// The sampler as a part of a run.
pub struct SamplerPart {
    sampling: Sampling,
    /// The driver its side connection is opened with, until the run starts.
    driver: Option<Box<dyn Driver>>,
    sampler: Option<Sampler>,
    /// The step whose measured part is under way.
    step: Option<StepName>,
    /// What the sampler read of the step that just ended.
    raw: Option<StepRaw>,
}

impl SamplerPart {
    /// The sampler of a run that measures `sampling`, reaching the server with `driver`.
    pub fn new(sampling: Sampling, driver: Box<dyn Driver>) -> SamplerPart {
        SamplerPart {
            sampling,
            driver: Some(driver),
            sampler: None,
            step: None,
            raw: None,
        }
    }
}

impl RunPart for SamplerPart {
    /// Locate the server, save its settings, start the thread: the run's metrics, its build
    /// and the host's data-dir facts go into the record.
    fn run_starts(&mut self, dir: &Path, record: &mut RunRecord) {
        let Some(driver) = self.driver.take() else {
            return;
        };
        let sampler = Sampler::start(&self.sampling, driver, dir, &mut record.host);
        record.metrics = Some(sampler.info());
        record.build = Some(sampler.build());
        self.sampler = Some(sampler);
    }

    fn step_begins(&mut self, step: StepName) {
        self.step = Some(step);
        self.raw = None;
        if let Some(s) = &self.sampler {
            s.begin_step(step);
        }
    }

    fn step_ends(&mut self, end: &StepEnd) {
        if let (Some(s), Some(step)) = (&self.sampler, self.step) {
            self.raw = s.end_step(step, end.ordinal);
        }
    }

    /// The step's server figures (`metrics`), each perf group's counts per operation of its
    /// own intervals, and the statistics that could not be saved as a failed check (not when
    /// the run was interrupted or the primary was lost).
    fn complete(&mut self, record: &mut StepRecord, facts: &StepFacts) -> Vec<CheckFailure> {
        let mut raw = self.raw.take();
        if let Some(p) = raw.as_mut().and_then(|s| s.perf.as_mut()) {
            p.count_ops(&facts.main_per_second, facts.main_ops, record.seconds);
        }
        let failure = raw
            .as_ref()
            .and_then(|s| s.stats_failure.clone())
            .filter(|_| !facts.interrupted && !facts.primary_gone)
            .map(|message| CheckFailure {
                kind: CheckKind::Statistics,
                message,
            });
        record.metrics = Some(step_metrics(record, raw));
        failure.into_iter().collect()
    }

    /// Stop the thread: the run's metrics with their totals.
    fn run_ends(&mut self, record: &mut RunRecord) {
        if let Some(s) = self.sampler.take() {
            record.metrics = Some(s.finish());
        }
    }
}

/// The host probe as a part of a run (`--host-probe-ms`; none at 0).
pub struct HostProbePart {
    budget_ms: u32,
    prober: Option<HostProber>,
    /// The probe and the host's CPU counters before the step under way.
    before: Option<(HostProbe, Option<CpuTicks>)>,
    /// The step's host record, once it ended.
    step_host: Option<StepHost>,
}

impl HostProbePart {
    /// A probe with `budget_ms` split over its tasks.
    pub fn new(budget_ms: u32) -> HostProbePart {
        HostProbePart {
            budget_ms,
            prober: None,
            before: None,
            step_host: None,
        }
    }
}

impl RunPart for HostProbePart {
    /// The probe fsyncs in the data directory the sampler found (before this part starts),
    /// else in the results directory `dir`; the record gets its setup.
    fn run_starts(&mut self, dir: &Path, record: &mut RunRecord) {
        self.prober = HostProber::new(
            self.budget_ms,
            &fsync_dirs(record.host.data_dir.as_deref(), dir),
        );
        record.host_probe = self.prober.as_ref().map(HostProber::record);
    }

    fn step_begins(&mut self, _step: StepName) {
        self.step_host = None;
        self.before = self.prober.as_ref().map(|p| (p.run(), cpu_ticks()));
    }

    fn step_ends(&mut self, _end: &StepEnd) {
        if let (Some(p), Some((before, ticks_before))) = (&self.prober, self.before.take()) {
            let ticks_after = cpu_ticks();
            self.step_host = Some(step_host(
                Some(before),
                Some(p.run()),
                (ticks_before, ticks_after),
            ));
        }
    }

    fn complete(&mut self, record: &mut StepRecord, _facts: &StepFacts) -> Vec<CheckFailure> {
        record.host_probe = self.step_host.take();
        Vec::new()
    }

    /// The run's median probe over the steps so far.
    fn steps_so_far(&mut self, record: &mut RunRecord) {
        if let Some(p) = record.host_probe.as_mut() {
            p.median = crate::results::probe::median_probe(&crate::results::probe::run_probes(
                &record.steps,
            ));
        }
    }
}
