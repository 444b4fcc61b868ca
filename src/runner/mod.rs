//! Running a benchmark: the steps in order, each a set of connections driven by the one
//! client loop, with results written as the run goes.

pub mod client;
pub mod index_progress;
pub mod micro;
pub mod monitor;
pub mod pacer;
pub mod shape;
pub mod stop;

use crate::stats::convert::{count_f64, usize_f64};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use crate::backend::{Conn, Driver, TargetInfo, driver_for_url};
use crate::results::{
    self, CheckFailure, CheckKind, IntegrityRecord, OpRecord, RunRecord, SCHEMA_VERSION,
    SettleRecord, SlaRecord, Status, StepRecord, TableCheck, TimelineWriter,
};
use crate::sampler::procfs::process_cpu_seconds;
use crate::sampler::{self, Sampler};
use crate::stats::{self, LatencySummary, OpKind, OpRecorder};
use crate::workload::plan::{
    DELETE_QUEUE_STATEMENTS, Needs, Role, StepPlan, StopRule, TableShape, Throughput,
};
use crate::workload::steps::{QueryKind, StepName, settle_seconds};
use crate::workload::{Rng, RowGenerator};

pub use crate::results::options::{self, OptionsError, RunOptions};
use client::{Deleter, Indexer, Inserter, Querier, Worker, client_loop};
use monitor::{Goal, Monitor, ProgressMode};
use pacer::Pacer;
use shape::{RunShape, WorkerSettings};
use stop::StopSignal;

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
/// run could not start or a step failed (run.json then says `failed` and why).
pub fn run(
    opts: RunOptions,
    command_line: Vec<String>,
    on_step: &mut dyn FnMut(&StepRecord),
) -> anyhow::Result<RunOutcome> {
    opts.validate()?;
    let shape = RunShape::of(&opts);
    let driver = driver_for_url(shape.target.url(), &shape.driver)?;
    // Reach the database before creating anything, so a wrong URL leaves no empty results dir.
    let target = driver.describe()?;
    // --server-dir / --server-pid must name the server at the URL, or the figures measure
    // another process.
    let claim = &shape.sampling.server;
    if claim.server_dir.is_some() || claim.server_pid.is_some() {
        let files = driver.connect()?.server_files()?;
        sampler::locate::check_server_claims(claim, files.as_ref()).map_err(anyhow::Error::msg)?;
    }
    let dir = prepare_out_dir(&opts.out_dir)?;
    let mut timeline = TimelineWriter::open(&dir)?;
    let label = opts
        .label
        .clone()
        .unwrap_or_else(|| derive_label(&target, opts.server_dir.as_deref()));
    let mut record = RunRecord {
        schema_version: SCHEMA_VERSION,
        ibench_version: env!("CARGO_PKG_VERSION").to_string(),
        status: Status::Running,
        error: None,
        label,
        started_at: results::now_rfc3339(),
        ended_at: None,
        command_line: crate::backend::redact_args(&command_line),
        options: shape.recorded_options.clone(),
        target: Some(target),
        session_settings: driver.session_settings(),
        host: results::host::HostInfo::read(),
        steps: Vec::new(),
        timeline_file: results::TIMELINE_FILE.to_string(),
        metrics: None,
        build: None,
        host_probe: None,
    };
    let sampler = Sampler::start(&shape.sampling, driver.as_ref(), &dir, &mut record.host);
    record.metrics = Some(sampler.info());
    record.build = Some(sampler.build());
    let prober = sampler::host_probe::HostProber::new(
        opts.host_probe_ms,
        &sampler::host_probe::fsync_dirs(record.host.data_dir.as_deref(), &dir),
    );
    record.host_probe = prober.as_ref().map(sampler::host_probe::HostProber::record);
    let run_file = dir.join(results::RUN_FILE);
    results::write_json_atomic(&run_file, &record)?;
    stop::set_run_file(Some(run_file.clone()));

    let outcome = run_steps(
        &shape,
        driver.as_ref(),
        &mut timeline,
        &run_file,
        &mut record,
        (&sampler, prober.as_ref()),
        on_step,
    );
    record.metrics = Some(sampler.finish());
    record.ended_at = Some(results::now_rfc3339());
    match &outcome {
        Ok(()) if stop::interrupted() => record.status = Status::Interrupted,
        Ok(()) => record.status = Status::Completed,
        Err(e) => {
            record.status = Status::Failed;
            record.error = Some(format!("{e:#}"));
        }
    }
    let written = results::write_json_atomic(&run_file, &record);
    stop::set_run_file(None);
    written?;
    outcome?;
    Ok(RunOutcome { dir, record })
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

fn prepare_out_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    if dir.join(results::RUN_FILE).exists() {
        bail!(
            "{} already holds a run (run.json); choose another --out",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| {
        format!(
            "cannot create the results directory {}; choose another --out",
            dir.display()
        )
    })?;
    let probe = dir.join(".ibench-write-test");
    std::fs::write(&probe, b"").with_context(|| {
        format!(
            "cannot write into the results directory {}; choose another --out",
            dir.display()
        )
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()))
}

/// What the run knows about its tables between steps.
#[derive(Default)]
struct TableState {
    /// Rows each table should hold, when known.
    expected_rows: HashMap<String, u64>,
    /// Next client-assigned id per client.
    next_client_id: HashMap<u32, i64>,
    /// Rows loaded by l.i0 in this run, all tables.
    loaded_rows: u64,
}

fn run_steps(
    shape: &RunShape,
    driver: &dyn Driver,
    timeline: &mut TimelineWriter,
    run_file: &Path,
    record: &mut RunRecord,
    (sampler, prober): (&Sampler, Option<&sampler::host_probe::HostProber>),
    on_step: &mut dyn FnMut(&StepRecord),
) -> anyhow::Result<()> {
    // Ctrl-C while the first connection logs in is the interruption, not a failure.
    let mut admin = match driver.connect() {
        Err(_) if stop::interrupted() => return Ok(()),
        other => other?,
    };
    match precheck(&shape.steps, &shape.tables, admin.as_mut()) {
        Err(_) if stop::interrupted() => return Ok(()),
        other => other?,
    }
    let mut state = TableState::default();
    for (ordinal, plan) in shape.steps.iter().enumerate() {
        if stop::interrupted() {
            break;
        }
        let step = plan.step;
        let step_record = run_step(
            shape,
            driver,
            admin.as_mut(),
            &mut state,
            timeline,
            plan,
            u32::try_from(ordinal).unwrap_or(u32::MAX),
            (sampler, prober),
        );
        let step_record = match step_record {
            Ok(r) => r,
            // Stopped during its setup: nothing of the step ran.
            Err(_) if stop::interrupted() => {
                let mut r = failed_step(plan, shape.workers.clients, String::new());
                r.status = Status::Interrupted;
                r.error = None;
                r
            }
            Err(e) => failed_step(plan, shape.workers.clients, format!("{e:#}")),
        };
        let failed = step_record.status == Status::Failed;
        let error = step_record.error.clone();
        on_step(&step_record);
        record.steps.push(step_record);
        if let Some(p) = record.host_probe.as_mut() {
            p.median = results::probe::median_probe(&results::probe::run_probes(&record.steps));
        }
        results::write_json_atomic(run_file, record)?;
        if failed {
            bail!(
                "step {step} failed: {}",
                error.unwrap_or_else(|| "unknown error".into())
            );
        }
    }
    Ok(())
}

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
    }
}

/// Before anything runs: every step finds the tables and indexes it needs, either made by an
/// earlier step of this run or already there.
fn precheck(plans: &[StepPlan], tables: &[String], conn: &mut dyn Conn) -> anyhow::Result<()> {
    let mut tables_made = false;
    let mut indexes: Option<bool> = None;
    for plan in plans {
        let step = plan.step;
        if plan.creates_tables {
            tables_made = true;
            indexes = Some(false);
            continue;
        }
        if !tables_made {
            for t in tables {
                stop::check_interrupted()?;
                if conn.count_rows(t).is_err() {
                    let first = if step.is_micro() { "m.load" } else { "l.i0" };
                    bail!(
                        "step {step} needs table {t}, which does not exist: run {first} first (add it to --steps)"
                    );
                }
            }
            tables_made = true;
        }
        let have = match indexes {
            Some(h) => h,
            None => {
                let mut all = true;
                for t in tables {
                    stop::check_interrupted()?;
                    all &= conn.has_secondary_indexes(t)?;
                }
                all
            }
        };
        match plan.needs {
            Needs::TablesWithoutIndexes if have => bail!(
                "step {step} would create the secondary indexes, but they exist already: run l.i0 first to recreate the tables (--steps)"
            ),
            Needs::TablesWithIndexes if !have => bail!(
                "step {step} needs the secondary indexes: run l.x before it (add it to --steps)"
            ),
            _ => {}
        }
        indexes = Some(have || plan.creates_indexes);
    }
    Ok(())
}

/// One connection's work in a step, before it runs.
struct Slot {
    worker: Box<dyn Worker>,
    conn: Box<dyn Conn>,
    ops_per_sec: Option<f64>,
    table: String,
    client: u32,
    recorder: OpRecorder,
}

/// One connection's work in a step, after it ran.
struct Finished {
    worker: Box<dyn Worker>,
    table: String,
    client: u32,
    recorder: OpRecorder,
    /// `Ok(true)` when the connection reached its natural end (its work done, or the
    /// deadline), `Ok(false)` when it was stopped early.
    result: Result<bool, crate::backend::BackendError>,
    ended: Instant,
}

/// The connections of a step before it runs, with its stop condition.
struct StepConnections {
    slots: Vec<Slot>,
    goal: Goal,
    /// Query steps run for a fixed time.
    deadline_seconds: Option<f64>,
    /// l.x: a connection of its own that polls the server's index builds (or why none).
    index_progress: Option<Result<Box<dyn Conn>, String>>,
}

/// What the step's connections did.
struct Driven {
    finished: Vec<Finished>,
    seen: monitor::Seconds,
    timeline_error: Option<String>,
    started_at: SystemTime,
    ended_at: SystemTime,
    /// From the start to the end of the last operation.
    seconds: f64,
}

impl Driven {
    /// The step's status and what went wrong, if anything. A statement cancelled because of
    /// Ctrl-C fails with the backend's "cancelled" error: that is the interruption, not a
    /// failure.
    fn status(&self) -> (Status, Option<String>) {
        let error = self
            .finished
            .iter()
            .find_map(|f| f.result.as_ref().err().map(ToString::to_string))
            .or(self
                .timeline_error
                .clone()
                .map(|e| format!("timeline: {e}")));
        let all_reached_their_end = self.finished.iter().all(|f| matches!(f.result, Ok(true)));
        step_status(error, stop::interrupted(), all_reached_their_end)
    }
}

#[allow(clippy::too_many_arguments)]
fn run_step(
    shape: &RunShape,
    driver: &dyn Driver,
    admin: &mut dyn Conn,
    state: &mut TableState,
    timeline: &mut TimelineWriter,
    plan: &StepPlan,
    ordinal: u32,
    (sampler, prober): (&Sampler, Option<&sampler::host_probe::HostProber>),
) -> anyhow::Result<StepRecord> {
    let (step, mode) = (plan.step, shape.progress);
    prepare_tables(&shape.tables, &shape.table_options, admin, state, plan)?;
    let rows_before = state.expected_rows.clone();
    let connections = plan_connections(shape, driver, admin, state, plan, ordinal)?;
    let Probed {
        driven,
        cpu_seconds,
        mut sampled,
        host_probe,
    } = drive_probed(
        connections,
        step,
        ordinal,
        timeline,
        mode,
        (sampler, prober),
    );

    let (status, error) = driven.status();
    book_rows(state, plan, &driven.finished);

    let seconds = driven.seconds;
    let merged = stats::merge(driven.finished.into_iter().map(|f| f.recorder));
    let ops = op_records(&merged, seconds, plan.sla_target_rows_per_sec);
    let (main_ops, per_second_of_main) = main_figures(plan.throughput, &merged, &driven.seen);
    let rates = stats::rate_percentiles(&per_second_of_main);
    // Each perf group's counts per operation of its own intervals.
    if let Some(p) = sampled.as_mut().and_then(|s| s.perf.as_mut()) {
        p.count_ops(&per_second_of_main, main_ops, seconds);
    }
    let sla = step_sla(plan, &merged, seconds, &driven.seen);
    let checks = Checks {
        shape,
        driver,
        plan,
        status,
        rows_before: &rows_before,
    };
    let (settle, integrity, mut check_failures) = checks.run(admin, state);
    if let Some(e) = sampled.as_ref().and_then(|s| s.stats_failure.clone()) {
        check_failures.push(check_failure(CheckKind::Statistics, e));
    }

    let mut record = StepRecord {
        name: step,
        status,
        error,
        started_at: results::rfc3339(driven.started_at),
        ended_at: results::rfc3339(driven.ended_at),
        seconds,
        clients: shape.workers.clients,
        throughput: count_f64(main_ops) / seconds,
        throughput_unit: plan.throughput.unit(),
        main_op: Some(plan.throughput.kind()),
        ops,
        rate_p50: rates.map(|r| r.0),
        rate_p1low: rates.map(|r| r.1),
        client_cpu_seconds: cpu_seconds,
        client_cpu_us_per_op: (main_ops > 0).then(|| cpu_seconds * 1e6 / count_f64(main_ops)),
        sla,
        settle,
        integrity,
        metrics: None,
        check_failures,
        host_probe,
    };
    record.metrics = Some(sampler::step_metrics(&record, sampled));
    Ok(record)
}

/// A step's measured part and what was read around it.
struct Probed {
    driven: Driven,
    /// ibench's own CPU over the measured part.
    cpu_seconds: f64,
    sampled: Option<sampler::StepRaw>,
    host_probe: Option<crate::results::probe::StepHost>,
}

/// Drive the step's connections between the sampler's begin and end and the host probes
/// before and after (the probe runs outside the measured part and its sampler interval).
fn drive_probed(
    connections: StepConnections,
    step: StepName,
    ordinal: u32,
    timeline: &mut TimelineWriter,
    mode: ProgressMode,
    (sampler, prober): (&Sampler, Option<&sampler::host_probe::HostProber>),
) -> Probed {
    let probe_before = prober.map(sampler::host_probe::HostProber::run);
    let ticks_before = sampler::host_probe::cpu_ticks();
    sampler.begin_step(step);
    let cpu_before = process_cpu_seconds();
    let driven = drive(connections, step, timeline, mode);
    let cpu_seconds = process_cpu_seconds() - cpu_before;
    let sampled = sampler.end_step(step, ordinal);
    let ticks_after = sampler::host_probe::cpu_ticks();
    let host_probe = prober.map(|p| {
        sampler::host_probe::step_host(probe_before, Some(p.run()), (ticks_before, ticks_after))
    });
    Probed {
        driven,
        cpu_seconds,
        sampled,
        host_probe,
    }
}

/// What the checks after a step's measured part need.
struct Checks<'a> {
    shape: &'a RunShape,
    driver: &'a dyn Driver,
    plan: &'a StepPlan,
    status: Status,
    rows_before: &'a HashMap<String, u64>,
}

impl Checks<'_> {
    /// The settle phase (after l.i2) and the integrity check: their records, and a failure
    /// for each that failed, recorded beside the step's figures, which stay as measured.
    fn run(
        &self,
        admin: &mut dyn Conn,
        state: &mut TableState,
    ) -> (
        Option<SettleRecord>,
        Option<IntegrityRecord>,
        Vec<CheckFailure>,
    ) {
        let mut failures = Vec::new();
        let settle = if self.plan.settle && self.status == Status::Completed {
            match settle_phase(self.shape, self.driver, state) {
                Ok(settle) => {
                    failures.extend(settle_failures(&settle));
                    Some(settle)
                }
                Err(e) => {
                    failures.push(check_failure(CheckKind::Settle, format!("{e:#}")));
                    None
                }
            }
        } else {
            None
        };
        let checked = after_check(
            self.shape,
            admin,
            state,
            self.plan,
            self.status,
            self.rows_before,
        );
        let integrity = match checked {
            Ok(integrity) => integrity,
            Err(e) => {
                failures.push(check_failure(CheckKind::Integrity, format!("{e:#}")));
                None
            }
        };
        if let Some(i) = integrity.as_ref().filter(|i| !i.ok) {
            failures.push(check_failure(CheckKind::Integrity, integrity_mismatch(i)));
        }
        (settle, integrity, failures)
    }
}

/// The step's main figure (rows or operations of its main op kind) and its per-second series.
fn main_figures(
    throughput: Throughput,
    merged: &BTreeMap<OpKind, stats::MergedOps>,
    seen: &monitor::Seconds,
) -> (u64, Vec<u64>) {
    let main = merged.get(&throughput.kind());
    match throughput {
        Throughput::Ops(k) => (main.map_or(0, |m| m.ops), series(seen, k, |c| c.ops)),
        Throughput::RowsOnce(_) => (main.map_or(0, |m| m.rows), Vec::new()),
        Throughput::Rows(k) => (main.map_or(0, |m| m.rows), series(seen, k, |c| c.rows)),
    }
}

/// The integrity check after a step that writes rows (unless `--no-check` or it failed).
fn after_check(
    shape: &RunShape,
    admin: &mut dyn Conn,
    state: &TableState,
    plan: &StepPlan,
    status: Status,
    rows_before: &HashMap<String, u64>,
) -> anyhow::Result<Option<IntegrityRecord>> {
    if !shape.check || !plan.writes_rows() || status == Status::Failed {
        return Ok(None);
    }
    let ran_to_end = status == Status::Completed;
    let intent =
        |table: &str| plan.intended_rows(rows_before.get(table).copied().unwrap_or(0), ran_to_end);
    Ok(Some(check_integrity(
        admin,
        &shape.tables,
        &state.expected_rows,
        &intent,
    )?))
}

/// Table bookkeeping after a step: the rows each table should now hold, each client's next
/// id, the rows loaded.
fn book_rows(state: &mut TableState, plan: &StepPlan, finished: &[Finished]) {
    for f in finished {
        if let Some(id) = f.worker.next_client_id() {
            state.next_client_id.insert(f.client, id);
        }
        let rows = f.recorder.rows;
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

/// The step's figures per op kind; paced writers carry the step's target rate.
fn op_records(
    merged: &BTreeMap<OpKind, stats::MergedOps>,
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

/// A step's status: completed when every connection reached its natural end (even if Ctrl-C
/// came during the last operation: l.x that built every index is complete); interrupted when
/// the run was interrupted and some connection was cut short (an error then is the cancelled
/// statement, so it is dropped); failed on any other error.
fn step_status(
    error: Option<String>,
    interrupted: bool,
    all_reached_their_end: bool,
) -> (Status, Option<String>) {
    match error {
        Some(_) if interrupted => (Status::Interrupted, None),
        Some(e) => (Status::Failed, Some(e)),
        None if all_reached_their_end => (Status::Completed, None),
        None if interrupted => (Status::Interrupted, None),
        None => (Status::Completed, None),
    }
}

/// Set up the tables a step needs, outside its measured time: a step that creates the tables
/// (re)creates them; other steps learn the row counts they do not know yet.
fn prepare_tables(
    tables: &[String],
    table_options: &crate::backend::TableOptions,
    admin: &mut dyn Conn,
    state: &mut TableState,
    plan: &StepPlan,
) -> anyhow::Result<()> {
    if plan.creates_tables {
        for t in tables {
            stop::check_interrupted()?;
            match plan.table_shape {
                TableShape::InsertBenchmark => admin.create_table(t, table_options)?,
                TableShape::Sysbench => admin.create_micro_table(t, table_options)?,
            }
            state.expected_rows.insert(t.clone(), 0);
        }
        state.next_client_id.clear();
    } else {
        for t in tables {
            stop::check_interrupted()?;
            let entry = state.expected_rows.entry(t.clone());
            if let std::collections::hash_map::Entry::Vacant(e) = entry {
                let n = admin.count_rows(e.key())?;
                e.insert(n);
            }
        }
    }
    Ok(())
}

/// Open the connections of a step's plan and give each its worker: one per role, two for an
/// inserter and the deleter that follows it.
fn plan_connections(
    shape: &RunShape,
    driver: &dyn Driver,
    admin: &mut dyn Conn,
    state: &TableState,
    plan: &StepPlan,
    ordinal: u32,
) -> anyhow::Result<StepConnections> {
    let mut slots = Vec::new();
    for client in &plan.clients {
        let c = client.client;
        let table = shape.table_of(c);
        for role in &client.roles {
            let stream = |r: u32| Rng::for_stream(shape.workers.seed, c, ordinal * 8 + r);
            for (worker, ops_per_sec) in role_workers(shape, state, admin, c, role, &stream)? {
                stop::check_interrupted()?;
                let recorder = OpRecorder::new(worker.kind());
                slots.push(Slot {
                    worker,
                    conn: driver.connect()?,
                    ops_per_sec,
                    table: table.to_string(),
                    client: c,
                    recorder,
                });
            }
        }
    }
    let (goal, deadline_seconds) = match (plan.stop, plan.goal_rows) {
        (StopRule::AfterSeconds(s), _) => (Goal::Seconds(s), Some(s)),
        (StopRule::WorkDone, Some((kind, total))) => (Goal::Rows { kind, total }, None),
        (StopRule::WorkDone, None) => (Goal::None, None),
    };
    let index_progress = (plan.throughput.kind() == OpKind::CreateIndexes)
        .then(|| driver.connect().map_err(|e| format!("{e:#}")));
    Ok(StepConnections {
        slots,
        goal,
        deadline_seconds,
        index_progress,
    })
}

/// A worker and its pace (operations per second), when paced.
type PacedWorker = (Box<dyn Worker>, Option<f64>);

/// The workers of one role of client `c` (an inserter and its deleter for writers), each with
/// its pace.
fn role_workers(
    shape: &RunShape,
    state: &TableState,
    admin: &mut dyn Conn,
    c: u32,
    role: &Role,
    stream: &dyn Fn(u32) -> Rng,
) -> anyhow::Result<Vec<PacedWorker>> {
    let (table, w) = (shape.table_of(c).to_string(), &shape.workers);
    let mut out: Vec<PacedWorker> = Vec::new();
    match role {
        Role::Load {
            rows,
            rows_per_insert,
        } => {
            let generator = row_generator(w, &table, state, admin, c, stream(0))?;
            let per_insert = u64::from(*rows_per_insert);
            let ins = Inserter::new(table.clone(), generator, per_insert, Some(*rows), None);
            out.push((Box::new(ins), None));
        }
        Role::Index => {
            let rows = state.expected_rows.get(&table).copied().unwrap_or(0);
            out.push((Box::new(Indexer::new(table.clone(), rows)), None));
        }
        Role::Writers {
            rows,
            rows_per_insert,
            statements_per_sec,
        } => {
            let generator = row_generator(w, &table, state, admin, c, stream(0))?;
            let (tx, rx) = sync_channel(DELETE_QUEUE_STATEMENTS);
            let per_insert = u64::from(*rows_per_insert);
            let ins = Inserter::new(table.clone(), generator, per_insert, *rows, Some(tx));
            let del = Deleter::new(table.clone(), rx, w.delete_min_refresh);
            out.push((Box::new(ins), *statements_per_sec));
            out.push((Box::new(del), *statements_per_sec));
        }
        Role::MicroLoad { rows } => {
            let count = u32::try_from(shape.tables.len()).unwrap_or(u32::MAX);
            let tables = crate::workload::plan::micro_loader_tables(c, count)
                .map(|t| shape.table_of(t).to_string())
                .collect();
            let loader = micro::MicroLoader::new(tables, *rows, stream(3));
            out.push((Box::new(loader), None));
        }
        Role::Micro(step) => {
            let worker = micro::MicroWorker::new(
                *step,
                shape.tables.clone(),
                w.micro_rows,
                stream(4),
                (c, w.clients),
            );
            out.push((Box::new(worker), None));
        }
        Role::Queries(kind) => {
            let point = *kind == QueryKind::Point;
            let q = Querier::new(table.clone(), stream(2), w.row_shape.clone(), point);
            out.push((Box::new(q), None));
        }
    }
    Ok(out)
}

/// The row generator of client `c`. Where the client assigns ids, each client goes on from
/// where it stopped, or from the table's max id (on a shared table, client c starts c × 2^40
/// higher).
fn row_generator(
    w: &WorkerSettings,
    table: &str,
    state: &TableState,
    admin: &mut dyn Conn,
    c: u32,
    stream: Rng,
) -> anyhow::Result<RowGenerator> {
    let first_id = if !w.client_assigns_ids {
        None
    } else if let Some(&id) = state.next_client_id.get(&c) {
        Some(id)
    } else {
        let base = admin.min_max_id(table)?.map_or(1, |(_, hi)| hi + 1);
        let offset = if w.shared_table {
            i64::from(c) << 40
        } else {
            0
        };
        Some(base + offset)
    };
    Ok(RowGenerator::new(stream, w.row_shape.clone(), first_id))
}

/// Run every connection of the step on its own thread with the one client loop, while the
/// monitor writes the timeline and the progress line; returns when all have finished.
fn drive(
    connections: StepConnections,
    step: StepName,
    timeline: &mut TimelineWriter,
    mode: ProgressMode,
) -> Driven {
    let counters: Vec<_> = connections
        .slots
        .iter()
        .map(|s| (s.recorder.kind, s.recorder.live.clone()))
        .collect();
    let started_at = SystemTime::now();
    let start = Instant::now();
    let stop = StopSignal::new(
        connections
            .deadline_seconds
            .map(|s| start + Duration::from_secs_f64(s)),
    );
    // On Ctrl-C, the statements in flight are cancelled on the server (an index build can
    // run for minutes): the connections then see the stop at once.
    let cancellers: Vec<_> = connections
        .slots
        .iter()
        .filter_map(|s| s.conn.canceller())
        .collect();
    let step_over = std::sync::atomic::AtomicBool::new(false);
    let index_shared = std::sync::Arc::new(index_progress::Shared::default());
    let (finished, seen, timeline_error) = std::thread::scope(|scope| {
        let step_over = &step_over;
        let cancellers = &cancellers;
        scope.spawn(move || cancel_on_interrupt(cancellers, step_over));
        if let Some(conn) = connections.index_progress {
            let shared = &*index_shared;
            scope.spawn(move || {
                index_progress::poll(conn, shared, step_over, mode == ProgressMode::Quiet)
            });
        }
        let handles: Vec<_> = connections
            .slots
            .into_iter()
            .map(|s| {
                let stop = &stop;
                scope.spawn(move || run_slot(s, start, stop))
            })
            .collect();
        let mut monitor = Monitor::new(step, start, counters, timeline, mode, connections.goal);
        monitor.watch_index_builds(index_progress::Watch::new(std::sync::Arc::clone(
            &index_shared,
        )));
        while monitor.tick(&|| handles.iter().filter(|h| h.is_finished()).count()) {}
        let timeline_error = monitor.timeline_error.take();
        let finished: Vec<Finished> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
        step_over.store(true, std::sync::atomic::Ordering::Relaxed);
        (finished, monitor.into_seconds(), timeline_error)
    });
    let seconds = finished
        .iter()
        .map(|f| f.ended)
        .max()
        .map_or(0.0, |e| (e - start).as_secs_f64())
        .max(1e-6);
    Driven {
        finished,
        seen,
        timeline_error,
        started_at,
        ended_at: SystemTime::now(),
        seconds,
    }
}

/// One connection's thread: its pacer, the client loop, and its record however it ended.
fn run_slot(mut s: Slot, start: Instant, stop: &StopSignal) -> Finished {
    // Paced inserts are due a quarter interval into each slot and deletes
    // half an interval later, so the insert a delete follows has normally
    // finished when the delete is due, and neither lands on the monitor's
    // one-second ticks (which would blur the per-second rates).
    let pacer = s.ops_per_sec.map(|r| {
        let slots = if s.recorder.kind == OpKind::Delete {
            0.75
        } else {
            0.25
        };
        Pacer::new(start + Duration::from_secs_f64(slots / r), r)
    });
    // A panic in a connection (a bug) fails the step with its message
    // instead of dropping the connection's figures silently.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        client_loop(
            s.worker.as_mut(),
            s.conn.as_mut(),
            pacer,
            stop,
            &mut s.recorder,
        )
    }))
    .unwrap_or_else(|panic| Err(panicked(s.client, panic.as_ref())));
    if result.is_err() {
        stop.stop();
    }
    Finished {
        worker: s.worker,
        table: s.table,
        client: s.client,
        recorder: s.recorder,
        result,
        ended: Instant::now(),
    }
}

/// Until the step is over: on Ctrl-C, cancel every statement in flight on the server (an
/// index build can run for minutes), so the connections see the stop at once.
fn cancel_on_interrupt(
    cancellers: &[Box<dyn crate::backend::Canceller>],
    step_over: &std::sync::atomic::AtomicBool,
) {
    let over = || step_over.load(std::sync::atomic::Ordering::Relaxed);
    while !over() {
        if stop::interrupted() {
            for c in cancellers {
                // A statement that already ended cannot be cancelled; nothing to do. Each
                // cancel is bounded (protocol::CANCEL_TIMEOUT).
                let _ = c.cancel();
            }
            // A server that ignores the cancel (or is gone without a word) must not hold the
            // run for ever: after a grace period the run is recorded interrupted all the same.
            let cancelled = Instant::now();
            while !over() {
                if cancelled.elapsed() > CANCEL_GRACE {
                    stop::abandon(&format!(
                        "the server did not end the cancelled statements within {} s",
                        CANCEL_GRACE.as_secs()
                    ));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How long the connections may take to end after their statements were cancelled on Ctrl-C.
const CANCEL_GRACE: Duration = Duration::from_secs(15);

/// The error of a connection thread that panicked, with the panic's message.
fn panicked(client: u32, panic: &(dyn std::any::Any + Send)) -> crate::backend::BackendError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    crate::backend::BackendError::sql(
        format!("connection of client {client}"),
        format!("panicked: {message} (a bug in ibench; please report it)"),
    )
}

/// The step's SLA verdict on its inserts, when its plan has a target.
fn step_sla(
    plan: &StepPlan,
    merged: &BTreeMap<OpKind, stats::MergedOps>,
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
fn sla_verdict(target: f64, achieved: f64, per_second_rows: &[u64]) -> SlaRecord {
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

/// l.i2's settle phase: the engine's maintenance inside the settle time, then rest.
fn settle_phase(
    shape: &RunShape,
    driver: &dyn Driver,
    state: &TableState,
) -> anyhow::Result<SettleRecord> {
    let mode = shape.progress;
    let loaded = if state.loaded_rows > 0 {
        state.loaded_rows
    } else {
        state.expected_rows.values().sum()
    };
    let planned = settle_seconds(loaded, shape.settle_max_seconds);
    if mode != ProgressMode::Quiet {
        eprintln!("l.i2    settle phase: {planned:.0} s of maintenance and rest");
    }
    let t0 = Instant::now();
    let actions = driver.settle(&shape.tables, Duration::from_secs_f64(planned))?;
    let unsettled = SettleRecord::unsettled_of(&actions);
    if let Some(left) = unsettled.as_deref().filter(|_| mode != ProgressMode::Quiet) {
        eprintln!(
            "l.i2    settle: the {planned:.0} s budget ran out ({left}); recorded, the next \
             steps start from an unsettled server"
        );
    }
    StopSignal::new(None).sleep_until(t0 + Duration::from_secs_f64(planned));
    Ok(SettleRecord {
        planned_seconds: planned,
        seconds: t0.elapsed().as_secs_f64(),
        actions,
        unsettled,
    })
}

fn check_failure(kind: CheckKind, message: String) -> CheckFailure {
    CheckFailure { kind, message }
}

/// The settle phase's maintenance actions that failed, as settle failures (an action the
/// budget cut short is recorded in `unsettled`, not failed).
fn settle_failures(settle: &SettleRecord) -> impl Iterator<Item = CheckFailure> + '_ {
    settle.actions.iter().filter_map(|a| {
        a.error
            .as_ref()
            .map(|e| check_failure(CheckKind::Settle, format!("{}: {e}", a.action)))
    })
}

/// What disagreed in an integrity check, table by table:
/// `pi1 holds 39960 rows (expected 40000); pi1_pdc counts 39950`.
fn integrity_mismatch(integrity: &IntegrityRecord) -> String {
    integrity
        .tables
        .iter()
        .filter(|t| !t.ok)
        .map(|t| {
            let mut parts = vec![format!(
                "{} holds {} rows (expected {}",
                t.table, t.pk_rows, t.expected_rows
            )];
            if let Some(want) = t.intended_rows {
                parts[0].push_str(&format!(
                    ", the step intends {want} within {}",
                    t.allowed_drift_rows
                ));
            }
            parts[0].push(')');
            parts.extend(
                t.index_rows
                    .iter()
                    .filter(|(_, n)| **n != t.expected_rows)
                    .map(|(ix, n)| format!("{ix} counts {n}")),
            );
            parts.join(", ")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn series(
    seen: &monitor::Seconds,
    kind: OpKind,
    f: impl Fn(&stats::SecondCounts) -> u64,
) -> Vec<u64> {
    seen.per_kind
        .get(&kind)
        .map(|v| v.iter().map(f).collect())
        .unwrap_or_default()
}

/// Count every table through its primary key and each secondary index; a table is ok when all
/// counts equal what the run's inserts and deletes imply and the count lies within the allowed
/// drift of what the step intends (`intent` gives `(intended_rows, allowed_drift_rows)`).
fn check_integrity(
    conn: &mut dyn Conn,
    tables: &[String],
    expected: &HashMap<String, u64>,
    intent: &dyn Fn(&str) -> (Option<u64>, u64),
) -> anyhow::Result<IntegrityRecord> {
    let mut checks = Vec::new();
    for t in tables {
        let expected_rows = expected.get(t).copied().unwrap_or(0);
        let (intended_rows, allowed_drift_rows) = intent(t);
        let pk_rows = conn.count_rows(t)?;
        let mut index_rows = BTreeMap::new();
        if conn.has_secondary_indexes(t)? {
            for ix in crate::backend::SecondaryIndex::ALL {
                index_rows.insert(ix.name(t), conn.count_rows_via_index(t, ix)?);
            }
        }
        let as_intended =
            intended_rows.is_none_or(|want| pk_rows.abs_diff(want) <= allowed_drift_rows);
        let ok = pk_rows == expected_rows
            && index_rows.values().all(|&n| n == expected_rows)
            && as_intended;
        checks.push(TableCheck {
            table: t.clone(),
            expected_rows,
            intended_rows,
            allowed_drift_rows,
            pk_rows,
            index_rows,
            ok,
        });
    }
    Ok(IntegrityRecord {
        ok: checks.iter().all(|c| c.ok),
        tables: checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker whose operation panics (a bug).
    struct Panicking;

    impl Worker for Panicking {
        fn kind(&self) -> OpKind {
            OpKind::Insert
        }
        fn op(&mut self, _: &mut dyn Conn) -> Result<Option<u64>, crate::backend::BackendError> {
            panic!("index out of bounds")
        }
    }

    /// A connection thread that panics used to be dropped silently with its figures; now it
    /// fails the step with the panic's message.
    #[test]
    fn a_panicking_connection_fails_the_step_with_its_message() {
        let dir = std::env::temp_dir().join(format!("ibench-panic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut timeline = TimelineWriter::open(&dir).unwrap();
        let connections = StepConnections {
            slots: vec![Slot {
                worker: Box::new(Panicking),
                conn: Box::new(crate::backend::mock::Ids::with_rows(10)),
                ops_per_sec: None,
                table: "pi1".into(),
                client: 3,
                recorder: OpRecorder::new(OpKind::Insert),
            }],
            goal: Goal::None,
            deadline_seconds: None,
            index_progress: None,
        };
        let driven = drive(
            connections,
            StepName::LoadInitial,
            &mut timeline,
            ProgressMode::Quiet,
        );
        assert_eq!(driven.finished.len(), 1, "the connection's record is kept");
        let err = driven.finished[0].result.as_ref().unwrap_err().to_string();
        assert!(
            err.contains("client 3") && err.contains("panicked: index out of bounds"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_step_that_did_all_its_work_is_complete_even_when_interrupted() {
        // l.x built every index, then Ctrl-C: complete.
        assert_eq!(step_status(None, true, true), (Status::Completed, None));
        // Cut short by Ctrl-C; the cancelled statement's error is the interruption.
        assert_eq!(step_status(None, true, false), (Status::Interrupted, None));
        assert_eq!(
            step_status(
                Some("canceling statement due to user request".into()),
                true,
                false
            ),
            (Status::Interrupted, None)
        );
        // Any other error fails the step.
        assert_eq!(
            step_status(Some("disk full".into()), false, false),
            (Status::Failed, Some("disk full".into()))
        );
        assert_eq!(step_status(None, false, true), (Status::Completed, None));
    }

    use crate::backend::{BackendKind, Engine};

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
