//! Running a benchmark: the steps in order, each a set of connections driven by the one
//! client loop, with results written as the run goes.
//!
//! One file per job: the run's shape worked out once (`shape.rs`), the precheck, the steps in
//! order and the record after each (`sequence.rs`), the tables between steps (`tables.rs`), one step
//! from its plan to its record (`step.rs`), its connections opened (`connections.rs`) and
//! driven on their threads (`threads.rs`), the checks and settle phase after it
//! (`checks.rs`); the client loop and its workers (`client.rs`, `micro.rs`), the pacer, the
//! stop conditions, the monitor and the index builds' progress.

pub mod checks;
pub mod client;
pub mod connections;
pub mod failover;
pub mod failover_record;
pub mod index_progress;
pub mod ledger;
pub mod micro;
pub mod monitor;
pub mod observed;
pub mod pacer;
pub mod reconnect;
pub mod sequence;
pub mod shape;
pub mod step;
pub mod stop;
pub mod tables;
pub mod threads;

use std::path::{Path, PathBuf};

use crate::replication::part::{ReplicaPart, ReplicaWatch};
use crate::results::target::TargetInfo;
use crate::results::{self, RunRecord, SCHEMA_VERSION, Status, StepRecord, TimelineWriter};
use crate::run_part::{RunPart, RunParts};
use crate::sampler::{self, part::HostProbePart, part::SamplerPart};

pub use crate::results::options::{self, OptionsError, RunOptions};
pub use sequence::RunObserver;
use sequence::run_steps;
use shape::{RunSettings, RunShape};

/// What a finished (or stopped) run leaves.
#[derive(Debug)]
pub struct RunOutcome {
    /// The results directory.
    pub dir: PathBuf,
    /// The final record, as written to `run.json`.
    pub record: RunRecord,
}

/// Run the benchmark. Writes `run.json` and `timeline.jsonl` into `opts.out_dir` as it goes,
/// and hands each step's record to `on_step` as the step ends (the caller prints its line).
///
/// Returns `Ok` for a completed or interrupted run (see `record.status`) and `Err` when the
/// run could not start or a step failed (run.json then says `failed` and why). `opts` are
/// validated options, as `RunArgs::to_options` makes them (the command line and the matrix
/// both build them so); what depends on the backend is checked where the URL is read, once
/// ([`RunShape::of`]).
pub fn run(
    opts: RunOptions,
    command_line: Vec<String>,
    on_step: &mut dyn FnMut(&StepRecord),
) -> anyhow::Result<RunOutcome> {
    run_observed(opts, command_line, &mut StepEnds(on_step))
}

/// An observer that hears only the ends of steps.
struct StepEnds<'a>(&'a mut dyn FnMut(&StepRecord));

impl RunObserver for StepEnds<'_> {
    fn step_ends(&mut self, record: &StepRecord) {
        (self.0)(record);
    }
}

/// [`run`], telling `observer` when the run and each step start and when each step ends.
/// The options are resolved here, once, into the run's shape ([`RunShape::of`]); nothing
/// after takes them.
pub fn run_observed(
    opts: RunOptions,
    command_line: Vec<String>,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<RunOutcome> {
    let settings = RunSettings::of(&opts);
    // The default URL's SQLite file lives in the results directory: it must exist before
    // the URL is read.
    sqlite_in_results(&settings)?;
    let shape = RunShape::with(&opts, settings)?;
    drop(opts);
    stop::set_run_active(true);
    let outcome = run_locked(&shape, command_line, observer);
    stop::set_run_active(false);
    outcome
}

/// The run's start interrupted before anything was recorded: the error says so (the
/// command exits 130).
fn before_start(e: anyhow::Error) -> anyhow::Error {
    if stop::interrupted() {
        anyhow::Error::new(stop::SetupInterrupted)
    } else {
        e
    }
}

fn run_locked(
    shape: &RunShape,
    command_line: Vec<String>,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<RunOutcome> {
    let driver = shape.target.driver();
    let target = reach(shape, driver.as_ref())?;
    stop::check_interrupted()?;
    // --replica-url must name a replica of this server: checked before anything is written.
    let mut parts = run_parts(shape);
    parts.prepare()?;
    let mut record = first_record(shape, driver.as_ref(), target, command_line);
    // One directory, one writer: the lock comes before anything is written.
    let (dir, _lock) = results::dir::take_for_run(&shape.run.out_dir, "--out")?;
    let mut timeline = TimelineWriter::open(&dir)?;
    parts.run_starts(&dir, &mut record);
    let run_file = dir.join(results::RUN_FILE);
    results::dir::write_run(&run_file, &mut record)?;
    stop::set_run_file(Some(run_file.clone()));

    let outcome = run_steps(
        shape,
        driver.as_ref(),
        (&mut timeline, &run_file),
        &mut record,
        &mut parts,
        observer,
    );
    parts.run_ends(&mut record);
    finish(outcome, &run_file, &mut record)?;
    Ok(RunOutcome { dir, record })
}

/// The run's parts, outermost first: the replica's heartbeat (with `--replica-url`), the
/// host probe, the sampler (closest around each step's measured part).
fn run_parts(shape: &RunShape) -> RunParts {
    let mut parts: Vec<Box<dyn RunPart>> = Vec::new();
    if let Some(replica) = &shape.replica_target {
        parts.push(Box::new(ReplicaPart::new(ReplicaWatch {
            targets: (shape.target.clone(), replica.clone()),
            on_loss: shape.run.on_replica_loss,
            interrupted: stop::interrupted,
            check: shape.check,
            tables: shape.tables.clone(),
        })));
    }
    parts.push(Box::new(HostProbePart::new(shape.run.host_probe_ms)));
    parts.push(Box::new(SamplerPart::new(
        shape.sampling.clone(),
        shape.target.driver(),
    )));
    RunParts::new(parts)
}

/// The results directory made first when the SQLite file lives in it (the default URL).
fn sqlite_in_results(settings: &RunSettings) -> anyhow::Result<()> {
    if settings.sqlite_in_out_dir {
        let out = &settings.out_dir;
        std::fs::create_dir_all(out).map_err(|e| {
            anyhow::anyhow!(
                "cannot create the results directory {}: {e}; {}",
                out.display(),
                results::dir::write_fix(&e, "--out")
            )
        })?;
    }
    Ok(())
}

/// Reach the database before creating anything, so a wrong URL leaves no empty results dir;
/// `--server-dir` / `--server-pid` must name the server at the URL, or the figures measure
/// another process. The stall limit (`--stall-limit`) bounds every wait on the server from
/// this first one on.
fn reach(shape: &RunShape, driver: &dyn crate::backend::Driver) -> anyhow::Result<TargetInfo> {
    crate::backend::deadline::set_stall_limit(shape.run.stall_limit);
    let claim = &shape.sampling.server;
    let target = driver.describe().map_err(|e| before_start(e.into()))?;
    if claim.server_dir.is_some() || claim.server_pid.is_some() {
        let files = driver
            .connect()
            .and_then(|mut c| c.server_files())
            .map_err(|e| before_start(e.into()))?;
        sampler::locate::check_server_claims(claim, files.as_ref()).map_err(anyhow::Error::msg)?;
    }
    Ok(target)
}

/// The run's record as first written: running, no steps yet.
fn first_record(
    shape: &RunShape,
    driver: &dyn crate::backend::Driver,
    target: TargetInfo,
    command_line: Vec<String>,
) -> RunRecord {
    let settings = &shape.run;
    let label = settings
        .label
        .clone()
        .unwrap_or_else(|| derive_label(&target, settings.server_dir.as_deref()));
    RunRecord {
        schema_version: SCHEMA_VERSION,
        ibench_version: env!("CARGO_PKG_VERSION").to_string(),
        status: Status::Running,
        error: None,
        label,
        pid: Some(std::process::id()),
        warnings: Vec::new(),
        started_at: results::now_rfc3339(),
        ended_at: None,
        command_line: crate::url::redact_args(&command_line),
        options: shape.recorded_options.clone(),
        target: Some(target),
        session_settings: driver.session_settings(),
        host: results::host::HostInfo::read(),
        steps: Vec::new(),
        timeline_file: results::TIMELINE_FILE.to_string(),
        metrics: None,
        build: None,
        host_probe: None,
        replica: None,
        duet: settings.duet.clone(),
    }
}

/// The run's end: its status from how the steps went, `run.json` written a last time, and
/// the one line that says what is kept when it did not complete.
fn finish(
    outcome: anyhow::Result<()>,
    run_file: &Path,
    record: &mut RunRecord,
) -> anyhow::Result<()> {
    record.ended_at = Some(results::now_rfc3339());
    match &outcome {
        Ok(()) if stop::interrupted() => record.status = Status::Interrupted,
        Ok(()) => record.status = Status::Completed,
        Err(_) if stop::interrupted() => record.status = Status::Interrupted,
        Err(e) => {
            record.status = Status::Failed;
            record.error = Some(format!("{e:#}"));
        }
    }
    let kept = kept(record);
    let written = results::dir::write_final(run_file, record);
    stop::set_run_file(None);
    written?;
    match (record.status, kept) {
        (Status::Interrupted, kept) => crate::say!(
            "the run is recorded interrupted in {}; {}; run the steps left with --steps into \
             another --out",
            run_file.display(),
            kept.unwrap_or_else(|| "no step completed".into())
        ),
        // The error stays one line: which steps are kept, where, and what next.
        (_, Some(kept)) => {
            outcome.map_err(|e| {
                anyhow::anyhow!(
                    "{e:#}; {kept} (recorded in {}); fix that, then run the steps left with \
                     --steps into another --out",
                    run_file.display()
                )
            })?;
        }
        _ => outcome?,
    }
    Ok(())
}

/// Which steps a run that did not complete keeps (`kept: l.i0, l.x completed`), `None` when
/// none completed.
fn kept(record: &RunRecord) -> Option<String> {
    let done: Vec<String> = record
        .steps
        .iter()
        .filter(|s| s.status == Status::Completed)
        .map(|s| s.name.to_string())
        .collect();
    (!done.is_empty()).then(|| format!("kept: {} completed", done.join(", ")))
}

/// `<DBMS> <version>[ <engine>]`, plus the config file's name when the run names the
/// `ibench server start` instance it runs against and that instance was given a config.
fn derive_label(t: &TargetInfo, server_dir: Option<&Path>) -> String {
    let version = t.version.split_whitespace().next().unwrap_or(&t.version);
    let mut label = match t.engine {
        Some(e) => format!("{} {} {}", t.dbms, version, format!("{e:?}").to_lowercase()),
        None => format!("{} {}", t.dbms, version),
    };
    let config = server_dir
        .and_then(|d| std::fs::read_dir(d).ok())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("config-"))
                .map(str::to_string)
        })
        .next();
    if let Some(c) = config {
        label.push_str(&format!(" ({c})"));
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::CheckKind;
    use crate::workload::steps::StepName;

    use crate::results::target::{BackendKind, Engine};

    fn target(engine: Option<Engine>) -> TargetInfo {
        TargetInfo {
            backend: BackendKind::Mysql,
            url: "mysql://root@127.0.0.1:1/ibench".into(),
            dbms: "MariaDB".into(),
            version: "10.11.19-MariaDB-0+deb12u1 log".into(),
            engine,
            flavour: None,
            tls: None,
        }
    }

    #[test]
    fn labels_name_the_dbms_version_engine_and_config() {
        assert_eq!(
            derive_label(&target(Some(Engine::Rocksdb)), None),
            "MariaDB 10.11.19-MariaDB-0+deb12u1 rocksdb"
        );
        let dir = std::env::temp_dir().join(format!("ibench-label-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config-my.cnf"), "").unwrap();
        assert_eq!(
            derive_label(&target(None), Some(&dir)),
            "MariaDB 10.11.19-MariaDB-0+deb12u1 (my.cnf)"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `runner::run` end to end in-process on the hidden `mock:` backend: every step of the
    /// insert benchmark, its integrity checks against the in-memory tables, run.json written
    /// and read back, for one client and for two on a shared table with client-assigned ids.
    #[test]
    fn run_drives_every_step_in_process_on_the_mock_backend() {
        for (clients, shared) in [(1, false), (2, true)] {
            let dir = std::env::temp_dir()
                .join(format!("ibench-mock-run-{}-{clients}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let profile = crate::workload::steps::Profile::small();
            let mut o = RunOptions::from_profile("mock:", &profile);
            o.load_rows = 3000;
            o.i1_rows = 600;
            o.i2_rows = 200;
            o.query_seconds = 1.0;
            o.settle_max_seconds = Some(0.0);
            o.steps = StepName::default_list(&[100]);
            o.clients = clients;
            o.shared_table = shared;
            o.table.client_assigns_ids = shared;
            o.out_dir = dir.clone();
            o.quiet = true;
            // A short host probe: every step still records one before and after it.
            o.host_probe_ms = 20;
            let outcome = run(o, vec!["test".into()], &mut |_| {}).expect("the run completes");
            let record = &outcome.record;
            assert_eq!(record.status, Status::Completed, "{:?}", record.error);
            let names: Vec<String> = record.steps.iter().map(|s| s.name.to_string()).collect();
            assert_eq!(names, ["l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100"]);
            for s in &record.steps {
                assert_eq!(s.status, Status::Completed, "{}: {:?}", s.name, s.error);
                assert!(
                    s.check_failures.is_empty(),
                    "{}: {:?}",
                    s.name,
                    s.check_failures
                );
                assert!(s.throughput > 0.0, "{}", s.name);
                assert_eq!(s.main_op, Some(s.name.main_op()));
                let h = s
                    .host_probe
                    .as_ref()
                    .expect("each step records the host probe");
                assert!(h.before.is_some() && h.after.is_some(), "{}: {h:?}", s.name);
            }
            let probe = record
                .host_probe
                .as_ref()
                .expect("the run records the probe");
            assert_eq!(probe.budget_ms, 20);
            assert!(
                probe
                    .median
                    .as_ref()
                    .is_some_and(|m| m.cpu_ns_per_iteration.is_some())
            );
            // The writes' integrity checks ran and agreed with the in-memory tables.
            let li1 = &record.steps[2];
            assert!(li1.integrity.as_ref().is_some_and(|i| i.ok), "{li1:?}");
            let inserted = record.steps[0].ops["insert"].rows;
            assert_eq!(inserted, 3000 * u64::from(clients));
            let back = results::read_run(&outcome.dir).expect("run.json reads back");
            assert_eq!(back.steps.len(), 6);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }

    /// l.i0 to l.i2 on the mock backend at `url`: l.i2's record.
    fn li2_on_mock(url: &str, tag: &str) -> StepRecord {
        let dir = std::env::temp_dir().join(format!("ibench-mock-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut o = RunOptions::from_profile(url, &crate::workload::steps::Profile::small());
        o.load_rows = 1000;
        o.i1_rows = 200;
        o.i2_rows = 100;
        o.settle_max_seconds = Some(0.0);
        o.steps = vec![
            StepName::LoadInitial,
            StepName::CreateIndexes,
            StepName::InsertDelete1,
            StepName::InsertDelete2,
        ];
        o.out_dir = dir.clone();
        o.quiet = true;
        let outcome = run(o, vec!["test".into()], &mut |_| {}).expect("the run completes");
        let back = results::read_run(&outcome.dir).expect("run.json reads back");
        let _ = std::fs::remove_dir_all(&dir);
        back.steps
            .into_iter()
            .find(|s| s.name == StepName::InsertDelete2)
            .expect("l.i2 ran")
    }

    #[test]
    fn a_settle_that_ran_out_of_budget_is_recorded_not_failed() {
        let li2 = li2_on_mock("mock:unsettled", "unsettled");
        assert!(li2.check_failures.is_empty(), "{:?}", li2.check_failures);
        let settle = li2.settle.expect("l.i2 settled");
        assert_eq!(
            settle.unsettled.as_deref(),
            Some("wait for the mock's dirty pages: 7 dirty pages left")
        );
        assert_eq!(settle.actions[0].error, None);
    }

    #[test]
    fn a_settle_action_that_failed_is_still_a_check_failure() {
        let li2 = li2_on_mock("mock:settle-error", "settle-error");
        let kinds: Vec<CheckKind> = li2.check_failures.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [CheckKind::Settle], "{:?}", li2.check_failures);
        assert!(li2.check_failures[0].message.contains("no such table"));
        assert_eq!(li2.settle.and_then(|s| s.unsettled), None);
    }
}
