//! Running a benchmark: the steps in order, each a set of connections driven by the one
//! client loop, with results written as the run goes.

pub mod client;
pub mod monitor;
pub mod pacer;
pub mod stop;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use crate::backend::{Conn, Driver, DriverOptions, TargetInfo, driver_for_url};
use crate::results::{
    self, IntegrityRecord, OpRecord, RunRecord, SCHEMA_VERSION, SettleRecord, SlaRecord, Status,
    StepRecord, TableCheck, TimelineWriter,
};
use crate::sampler::procfs::process_cpu_seconds;
use crate::sampler::{self, Sampler};
use crate::stats::{self, LatencySummary, OpKind, OpRecorder};
use crate::workload::steps::{QueryKind, StepName, settle_seconds};
use crate::workload::{Rng, RowGenerator};

pub use crate::results::options::{self, OptionsError, RunOptions};
use client::{DELETE_QUEUE_STATEMENTS, Deleter, Indexer, Inserter, Querier, Worker, client_loop};
use monitor::{Goal, Monitor, ProgressMode};
use pacer::Pacer;
use stop::StopSignal;

/// What a finished (or stopped) run leaves.
#[derive(Debug)]
pub struct RunOutcome {
    /// The results directory.
    pub dir: PathBuf,
    /// The final record, as written to `run.json`.
    pub record: RunRecord,
}

/// Run the benchmark. Writes `run.json` and `timeline.jsonl` into `opts.out_dir` as it goes.
///
/// Returns `Ok` for a completed or interrupted run (see `record.status`) and `Err` when the
/// run could not start or a step failed (run.json then says `failed` and why).
pub fn run(opts: RunOptions, command_line: Vec<String>) -> anyhow::Result<RunOutcome> {
    opts.validate()?;
    let driver = driver_for_url(
        &opts.url,
        &DriverOptions {
            engine: opts.engine,
        },
    )?;
    // Reach the database before creating anything, so a wrong URL leaves no empty results dir.
    let target = driver.describe()?;
    // --server-dir / --server-pid must name the server at the URL, or the figures measure
    // another process.
    if opts.server_dir.is_some() || opts.server_pid.is_some() {
        let files = driver.connect()?.server_files()?;
        sampler::locate::check_server_claims(&opts, files.as_ref()).map_err(anyhow::Error::msg)?;
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
        options: opts.redacted(),
        target: Some(target),
        session_settings: driver.session_settings(),
        host: results::host::HostInfo::read(),
        steps: Vec::new(),
        timeline_file: results::TIMELINE_FILE.to_string(),
        metrics: None,
    };
    let sampler = Sampler::start(&opts, driver.as_ref(), &dir, &mut record.host);
    record.metrics = Some(sampler.info());
    let run_file = dir.join(results::RUN_FILE);
    results::write_json_atomic(&run_file, &record)?;
    stop::set_run_file(Some(run_file.clone()));

    let outcome = run_steps(
        &opts,
        driver.as_ref(),
        &mut timeline,
        &run_file,
        &mut record,
        &sampler,
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
    opts: &RunOptions,
    driver: &dyn Driver,
    timeline: &mut TimelineWriter,
    run_file: &Path,
    record: &mut RunRecord,
    sampler: &Sampler,
) -> anyhow::Result<()> {
    let mut admin = driver.connect()?;
    match precheck(opts, admin.as_mut()) {
        Err(_) if stop::interrupted() => return Ok(()),
        other => other?,
    }
    let mut state = TableState::default();
    let mode = ProgressMode::detect(opts.quiet);
    for (ordinal, &step) in opts.steps.iter().enumerate() {
        if stop::interrupted() {
            break;
        }
        let step_record = run_step(
            opts,
            driver,
            admin.as_mut(),
            &mut state,
            timeline,
            mode,
            step,
            ordinal as u32,
            sampler,
        );
        let step_record = match step_record {
            Ok(r) => r,
            // Stopped during its setup: nothing of the step ran.
            Err(_) if stop::interrupted() => {
                let mut r = failed_step(step, opts.clients, String::new());
                r.status = Status::Interrupted;
                r.error = None;
                r
            }
            Err(e) => failed_step(step, opts.clients, format!("{e:#}")),
        };
        let failed = step_record.status == Status::Failed;
        let error = step_record.error.clone();
        if mode != ProgressMode::Quiet {
            eprintln!("{}", crate::report::text::step_line(&step_record));
        }
        record.steps.push(step_record);
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

fn failed_step(step: StepName, clients: u32, error: String) -> StepRecord {
    let now = results::now_rfc3339();
    StepRecord {
        name: step,
        status: Status::Failed,
        error: Some(error),
        started_at: now.clone(),
        ended_at: now,
        seconds: 0.0,
        clients,
        throughput: 0.0,
        throughput_unit: step.throughput_unit().to_string(),
        ops: BTreeMap::new(),
        rate_p50: None,
        rate_p1low: None,
        client_cpu_seconds: 0.0,
        client_cpu_us_per_op: None,
        sla: None,
        settle: None,
        integrity: None,
        metrics: None,
    }
}

/// Before anything runs: every step finds the tables and indexes it needs, either made by an
/// earlier step of this run or already there.
fn precheck(opts: &RunOptions, conn: &mut dyn Conn) -> anyhow::Result<()> {
    let mut tables_made = false;
    let mut indexes: Option<bool> = None;
    for &step in &opts.steps {
        match step {
            StepName::LoadInitial => {
                tables_made = true;
                indexes = Some(false);
            }
            _ => {
                if !tables_made {
                    for t in opts.tables() {
                        stop::check_interrupted()?;
                        if conn.count_rows(&t).is_err() {
                            bail!(
                                "step {step} needs table {t}, which does not exist: run l.i0 first (add it to --steps)"
                            );
                        }
                    }
                    tables_made = true;
                }
                let have = match indexes {
                    Some(h) => h,
                    None => {
                        let mut all = true;
                        for t in opts.tables() {
                            stop::check_interrupted()?;
                            all &= conn.has_secondary_indexes(&t)?;
                        }
                        indexes = Some(all);
                        all
                    }
                };
                match step {
                    StepName::CreateIndexes if have => bail!(
                        "step l.x would create the secondary indexes, but they exist already: run l.i0 first to recreate the tables (--steps)"
                    ),
                    StepName::CreateIndexes => indexes = Some(true),
                    StepName::Query { .. } if !have => bail!(
                        "step {step} needs the secondary indexes: run l.x before it (add it to --steps)"
                    ),
                    _ => {}
                }
            }
        }
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
struct Plan {
    slots: Vec<Slot>,
    goal: Goal,
    /// Query steps run for a fixed time.
    deadline_seconds: Option<f64>,
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

#[allow(clippy::too_many_arguments)]
fn run_step(
    opts: &RunOptions,
    driver: &dyn Driver,
    admin: &mut dyn Conn,
    state: &mut TableState,
    timeline: &mut TimelineWriter,
    mode: ProgressMode,
    step: StepName,
    ordinal: u32,
    sampler: &Sampler,
) -> anyhow::Result<StepRecord> {
    prepare_tables(opts, admin, state, step)?;
    let rows_before = state.expected_rows.clone();
    let plan = plan_connections(opts, driver, admin, state, step, ordinal)?;
    sampler.begin_step(step);
    let cpu_before = process_cpu_seconds();
    let driven = drive(plan, step, timeline, mode);
    let cpu_seconds = process_cpu_seconds() - cpu_before;
    let sampled = sampler.end_step(step, ordinal);
    let Driven {
        finished,
        seen,
        timeline_error,
        started_at,
        ended_at,
        seconds,
    } = driven;

    // What went wrong, if anything. A statement cancelled because of Ctrl-C fails with the
    // backend's "cancelled" error: that is the interruption, not a failure.
    let interrupted = stop::interrupted();
    let error = finished
        .iter()
        .find_map(|f| f.result.as_ref().err().map(ToString::to_string))
        .or(timeline_error.map(|e| format!("timeline: {e}")));
    let all_reached_their_end = finished.iter().all(|f| matches!(f.result, Ok(true)));
    let (status, error) = step_status(error, interrupted, all_reached_their_end);

    // Table bookkeeping.
    for f in &finished {
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
        if step == StepName::LoadInitial {
            state.loaded_rows += rows;
        }
    }

    // Merge and summarise.
    let merged = stats::merge(finished.into_iter().map(|f| f.recorder));
    let target_rows_per_sec = match step {
        StepName::Query {
            rate_rows_per_sec, ..
        } => Some(f64::from(rate_rows_per_sec) * f64::from(opts.clients)),
        _ => None,
    };
    let ops: BTreeMap<String, OpRecord> = merged
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
                    ops_per_sec: m.ops as f64 / seconds,
                    rows_per_sec: m.rows as f64 / seconds,
                    target_rows_per_sec: if paced { target_rows_per_sec } else { None },
                    latency_us: LatencySummary::of(&m.latency),
                    service_us: LatencySummary::of(&m.service),
                    latency_histogram_us: stats::histogram_counts(&m.latency),
                },
            )
        })
        .collect();
    let main_kind = step.main_op();
    let main = merged.get(&main_kind);
    let (main_ops, per_second_of_main): (u64, Vec<u64>) = match step {
        StepName::Query { .. } => (
            main.map_or(0, |m| m.ops),
            series(&seen, main_kind, |c| c.ops),
        ),
        StepName::CreateIndexes => (main.map_or(0, |m| m.rows), Vec::new()),
        _ => (
            main.map_or(0, |m| m.rows),
            series(&seen, main_kind, |c| c.rows),
        ),
    };
    let rates = stats::rate_percentiles(&per_second_of_main);
    let sla = target_rows_per_sec.map(|target| {
        let inserted = merged.get(&OpKind::Insert).map_or(0, |m| m.rows);
        sla_verdict(
            target,
            inserted as f64 / seconds,
            &series(&seen, OpKind::Insert, |c| c.rows),
        )
    });
    let settle = if step == StepName::InsertDelete2 && status == Status::Completed {
        Some(settle_phase(opts, driver, state, mode)?)
    } else {
        None
    };
    let integrity = if opts.check && step.writes_rows() && status != Status::Failed {
        let intent = |table: &str| {
            row_intent(
                opts,
                step,
                status,
                rows_before.get(table).copied().unwrap_or(0),
            )
        };
        Some(check_integrity(
            admin,
            &opts.tables(),
            &state.expected_rows,
            &intent,
        )?)
    } else {
        None
    };

    let mut record = StepRecord {
        name: step,
        status,
        error,
        started_at: results::rfc3339(started_at),
        ended_at: results::rfc3339(ended_at),
        seconds,
        clients: opts.clients,
        throughput: main_ops as f64 / seconds,
        throughput_unit: step.throughput_unit().to_string(),
        ops,
        rate_p50: rates.map(|r| r.0),
        rate_p1low: rates.map(|r| r.1),
        client_cpu_seconds: cpu_seconds,
        client_cpu_us_per_op: (main_ops > 0).then(|| cpu_seconds * 1e6 / main_ops as f64),
        sla,
        settle,
        integrity,
        metrics: None,
    };
    record.metrics = Some(sampler::step_metrics(&record, sampled));
    Ok(record)
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

/// Set up the tables a step needs, outside its measured time: l.i0 (re)creates them; other
/// steps learn the row counts they do not know yet.
fn prepare_tables(
    opts: &RunOptions,
    admin: &mut dyn Conn,
    state: &mut TableState,
    step: StepName,
) -> anyhow::Result<()> {
    if step == StepName::LoadInitial {
        for t in opts.tables() {
            stop::check_interrupted()?;
            admin.create_table(&t, &opts.table)?;
            state.expected_rows.insert(t, 0);
        }
        state.next_client_id.clear();
    } else {
        for t in opts.tables() {
            stop::check_interrupted()?;
            if let std::collections::hash_map::Entry::Vacant(e) = state.expected_rows.entry(t) {
                let n = admin.count_rows(e.key())?;
                e.insert(n);
            }
        }
    }
    Ok(())
}

/// The connections of a step: which worker each runs, paced or not, and when the step ends.
fn plan_connections(
    opts: &RunOptions,
    driver: &dyn Driver,
    admin: &mut dyn Conn,
    state: &TableState,
    step: StepName,
    ordinal: u32,
) -> anyhow::Result<Plan> {
    let clients = opts.clients;
    let stream = |client: u32, role: u32| Rng::for_stream(opts.seed, client, ordinal * 8 + role);
    let slot = |worker: Box<dyn Worker>, ops_per_sec: Option<f64>, table: &str, client: u32| {
        stop::check_interrupted()?;
        let recorder = OpRecorder::new(worker.kind());
        Ok::<_, anyhow::Error>(Slot {
            worker,
            conn: driver.connect()?,
            ops_per_sec,
            table: table.to_string(),
            client,
            recorder,
        })
    };
    // Where the client assigns ids, each client goes on from where it stopped, or from the
    // table's max id (on a shared table, client c starts c × 2^40 higher).
    let generator = |client: u32, admin: &mut dyn Conn| -> anyhow::Result<RowGenerator> {
        let first_id = if !opts.table.client_assigns_ids {
            None
        } else if let Some(&id) = state.next_client_id.get(&client) {
            Some(id)
        } else {
            let base = admin
                .min_max_id(&opts.table_of(client))?
                .map_or(1, |(_, hi)| hi + 1);
            let offset = if opts.shared_table {
                i64::from(client) << 40
            } else {
                0
            };
            Some(base + offset)
        };
        Ok(RowGenerator::new(
            stream(client, 0),
            opts.row_shape.clone(),
            first_id,
        ))
    };
    // An inserter and the deleter that follows it, both paced when `statements_per_sec` is given.
    let writers = |slots: &mut Vec<Slot>,
                   client: u32,
                   rows_per_insert: u32,
                   total: Option<u64>,
                   statements_per_sec: Option<f64>,
                   admin: &mut dyn Conn|
     -> anyhow::Result<()> {
        let t = opts.table_of(client);
        let (tx, rx) = sync_channel(DELETE_QUEUE_STATEMENTS);
        let ins = Inserter::new(
            t.clone(),
            generator(client, admin)?,
            u64::from(rows_per_insert),
            total,
            Some(tx),
        );
        let del = Deleter::new(t.clone(), rx, opts.delete_min_refresh);
        slots.push(slot(Box::new(ins), statements_per_sec, &t, client)?);
        slots.push(slot(Box::new(del), statements_per_sec, &t, client)?);
        Ok(())
    };

    let mut slots = Vec::new();
    let plan = match step {
        StepName::LoadInitial => {
            for c in 0..clients {
                let t = opts.table_of(c);
                let w = Inserter::new(
                    t.clone(),
                    generator(c, admin)?,
                    u64::from(opts.load_rows_per_insert),
                    Some(opts.load_rows),
                    None,
                );
                slots.push(slot(Box::new(w), None, &t, c)?);
            }
            Plan {
                slots,
                goal: Goal::Rows {
                    kind: OpKind::Insert,
                    total: opts.load_rows * u64::from(clients),
                },
                deadline_seconds: None,
            }
        }
        StepName::CreateIndexes => {
            for (i, t) in opts.tables().iter().enumerate() {
                let rows = state.expected_rows.get(t).copied().unwrap_or(0);
                slots.push(slot(
                    Box::new(Indexer::new(t.clone(), rows)),
                    None,
                    t,
                    i as u32,
                )?);
            }
            Plan {
                slots,
                goal: Goal::None,
                deadline_seconds: None,
            }
        }
        StepName::InsertDelete1 | StepName::InsertDelete2 => {
            let (rows, per_insert) = if step == StepName::InsertDelete1 {
                (opts.i1_rows, opts.i1_rows_per_insert)
            } else {
                (opts.i2_rows, opts.i2_rows_per_insert)
            };
            for c in 0..clients {
                writers(&mut slots, c, per_insert, Some(rows), None, admin)?;
            }
            Plan {
                slots,
                goal: Goal::Rows {
                    kind: OpKind::Insert,
                    total: rows * u64::from(clients),
                },
                deadline_seconds: None,
            }
        }
        StepName::Query {
            kind,
            rate_rows_per_sec,
        } => {
            let statements_per_sec =
                f64::from(rate_rows_per_sec) / f64::from(opts.query_rows_per_insert);
            for c in 0..clients {
                let t = opts.table_of(c);
                let point = kind == QueryKind::Point;
                let q = Querier::new(t.clone(), stream(c, 2), opts.row_shape.clone(), point);
                slots.push(slot(Box::new(q), None, &t, c)?);
                writers(
                    &mut slots,
                    c,
                    opts.query_rows_per_insert,
                    None,
                    Some(statements_per_sec),
                    admin,
                )?;
            }
            Plan {
                slots,
                goal: Goal::Seconds(opts.query_seconds),
                deadline_seconds: Some(opts.query_seconds),
            }
        }
    };
    Ok(plan)
}

/// Run every connection of the plan on its own thread with the one client loop, while the
/// monitor writes the timeline and the progress line; returns when all have finished.
fn drive(plan: Plan, step: StepName, timeline: &mut TimelineWriter, mode: ProgressMode) -> Driven {
    let counters: Vec<_> = plan
        .slots
        .iter()
        .map(|s| (s.recorder.kind, s.recorder.live.clone()))
        .collect();
    let started_at = SystemTime::now();
    let start = Instant::now();
    let stop = StopSignal::new(
        plan.deadline_seconds
            .map(|s| start + Duration::from_secs_f64(s)),
    );
    // On Ctrl-C, the statements in flight are cancelled on the server (an index build can
    // run for minutes): the connections then see the stop at once.
    let cancellers: Vec<_> = plan
        .slots
        .iter()
        .filter_map(|s| s.conn.canceller())
        .collect();
    let step_over = std::sync::atomic::AtomicBool::new(false);
    let (finished, seen, timeline_error) = std::thread::scope(|scope| {
        let step_over = &step_over;
        let cancellers = &cancellers;
        scope.spawn(move || {
            while !step_over.load(std::sync::atomic::Ordering::Relaxed) {
                if stop::interrupted() {
                    for c in cancellers {
                        // A statement that already ended cannot be cancelled; nothing to do.
                        let _ = c.cancel();
                    }
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let handles: Vec<_> = plan
            .slots
            .into_iter()
            .map(|mut s| {
                let stop = &stop;
                scope.spawn(move || {
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
                })
            })
            .collect();
        let mut monitor = Monitor::new(step, start, counters, timeline, mode, plan.goal);
        while monitor.tick(&|| handles.iter().all(|h| h.is_finished())) {}
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

/// The SLA verdict of a query step (spec section 4) from the achieved background insert rate
/// and the rows inserted in each whole second.
fn sla_verdict(target: f64, achieved: f64, per_second_rows: &[u64]) -> SlaRecord {
    let below = per_second_rows
        .iter()
        .filter(|&&r| (r as f64) < 0.95 * target)
        .count();
    SlaRecord {
        target_rows_per_sec: target,
        achieved_rows_per_sec: achieved,
        passed: achieved >= 0.95 * target,
        share_of_seconds_below_95pct: if per_second_rows.is_empty() {
            0.0
        } else {
            below as f64 / per_second_rows.len() as f64
        },
    }
}

/// l.i2's settle phase: the engine's maintenance inside the settle time, then rest.
fn settle_phase(
    opts: &RunOptions,
    driver: &dyn Driver,
    state: &TableState,
    mode: ProgressMode,
) -> anyhow::Result<SettleRecord> {
    let loaded = if state.loaded_rows > 0 {
        state.loaded_rows
    } else {
        state.expected_rows.values().sum()
    };
    let planned = settle_seconds(loaded, opts.settle_max_seconds);
    if mode != ProgressMode::Quiet {
        eprintln!("l.i2    settle phase: {planned:.0} s of maintenance and rest");
    }
    let t0 = Instant::now();
    let actions = driver.settle(&opts.tables(), Duration::from_secs_f64(planned))?;
    StopSignal::new(None).sleep_until(t0 + Duration::from_secs_f64(planned));
    Ok(SettleRecord {
        planned_seconds: planned,
        seconds: t0.elapsed().as_secs_f64(),
        actions,
    })
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

/// What a step means a table to hold afterwards and how far the count may lie from it:
/// `(intended_rows, allowed_drift_rows)`. l.i0 loads its rows (all clients' on a shared
/// table); l.i1, l.i2 and the query steps delete as many rows as they insert, so the table
/// keeps the rows it held before. A step that stops on time (query steps) or is interrupted
/// may leave the rows its deleters still had queued: up to one queue plus the statement in
/// flight per deleter of the table.
fn row_intent(
    opts: &RunOptions,
    step: StepName,
    status: Status,
    rows_before: u64,
) -> (Option<u64>, u64) {
    let writers_per_table = if opts.shared_table {
        u64::from(opts.clients)
    } else {
        1
    };
    let queued = |rows_per_insert: u32| {
        (DELETE_QUEUE_STATEMENTS as u64 + 1) * u64::from(rows_per_insert) * writers_per_table
    };
    let interrupted = status != Status::Completed;
    match step {
        StepName::LoadInitial if interrupted => (None, 0),
        StepName::LoadInitial => (Some(opts.load_rows * writers_per_table), 0),
        StepName::CreateIndexes => (None, 0),
        StepName::InsertDelete1 | StepName::InsertDelete2 => {
            let per_insert = if step == StepName::InsertDelete1 {
                opts.i1_rows_per_insert
            } else {
                opts.i2_rows_per_insert
            };
            let drift = if interrupted { queued(per_insert) } else { 0 };
            (Some(rows_before), drift)
        }
        StepName::Query { .. } => (Some(rows_before), queued(opts.query_rows_per_insert)),
    }
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
        let plan = Plan {
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
        };
        let driven = drive(
            plan,
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

    #[test]
    fn a_step_means_the_table_to_keep_its_rows() {
        let mut opts = RunOptions::from_profile(
            "sqlite:x.db",
            &crate::workload::steps::Profile::named("small").unwrap(),
        );
        opts.load_rows = 1000;
        opts.i1_rows_per_insert = 50;
        opts.query_rows_per_insert = 50;
        let done = Status::Completed;
        assert_eq!(
            row_intent(&opts, StepName::LoadInitial, done, 0),
            (Some(1000), 0)
        );
        assert_eq!(
            row_intent(&opts, StepName::CreateIndexes, done, 1000),
            (None, 0)
        );
        assert_eq!(
            row_intent(&opts, StepName::InsertDelete1, done, 1000),
            (Some(1000), 0)
        );
        // Stopped early: the deleter may have left its queue and one statement undone.
        let queue = (DELETE_QUEUE_STATEMENTS as u64 + 1) * 50;
        assert_eq!(
            row_intent(&opts, StepName::InsertDelete1, Status::Interrupted, 1000),
            (Some(1000), queue)
        );
        let qr100 = crate::workload::steps::parse_step_list("qr100").unwrap()[0];
        assert_eq!(row_intent(&opts, qr100, done, 1000), (Some(1000), queue));
        // A shared table: every client loads into it and has a deleter on it.
        opts.clients = 3;
        opts.shared_table = true;
        assert_eq!(
            row_intent(&opts, StepName::LoadInitial, done, 0),
            (Some(3000), 0)
        );
        assert_eq!(
            row_intent(&opts, qr100, done, 3000),
            (Some(3000), 3 * queue)
        );
        assert_eq!(
            row_intent(&opts, StepName::LoadInitial, Status::Interrupted, 0),
            (None, 0)
        );
    }
    use crate::backend::{BackendKind, Engine};

    fn target(engine: Option<Engine>) -> TargetInfo {
        TargetInfo {
            backend: BackendKind::Mysql,
            url: "mysql://root@127.0.0.1:1/ibench".into(),
            dbms: "MariaDB".into(),
            version: "10.11.19-MariaDB-0+deb12u1 log".into(),
            engine,
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
}
