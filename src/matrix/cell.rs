//! One cell of a matrix: its fresh private server (config applied, a replica when the
//! server has one), its benchmark through `runner::run`, its server stopped and its logs kept
//! beside the results, its state (`cells/CELL/state.json`) written however it ends.
//!
//! Layout of a cell's dir, `cells/CELL/`:
//! - `state.json`: pending, running, completed, failed or interrupted (+ error);
//! - `run/`: the run's results (run.json, timeline, metrics);
//! - `server/`: the server's logs and config copy; `CONFIG.conf`: the generated config file.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::plan::{Cell, Plan, PlanConfig, PlanWorkload, ServerSource, Shard, run_options};
use super::side::{DuetContext, DuetObserver};
use crate::replication;
use crate::results::{self, Status};
use crate::runner::stop;
use crate::server::{self, ServerKind, ServerSpec};

/// The state file of a cell (defined with the results' files, so that `ibench report` tells
/// a matrix's output from a run without the matrix).
pub use crate::results::MATRIX_STATE_FILE as STATE_FILE;

/// Where a cell is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    /// Not started.
    Pending,
    /// Started (left in this state when the process died).
    Running,
    /// Finished.
    Completed,
    /// Failed; see `error`.
    Failed,
    /// Stopped by Ctrl-C.
    Interrupted,
}

/// `cells/CELL/state.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CellState {
    /// The cell's name.
    pub cell: String,
    /// Where it is.
    pub status: CellStatus,
    /// Why it failed.
    pub error: Option<String>,
    /// The cell's label.
    pub label: String,
    /// What the cell is (server, config text, workload flags): a finished cell is redone when
    /// its definition changed.
    pub definition: serde_json::Value,
    /// The shard that ran it.
    pub shard: Shard,
    /// When it started and ended (RFC 3339).
    pub started_at: Option<String>,
    /// When it ended.
    pub ended_at: Option<String>,
    /// The private server's instance dir while it runs (stopped on resume if left behind).
    pub instance_dir: Option<PathBuf>,
}

/// How `matrix run` ended.
#[derive(Debug, Default)]
pub struct Summary {
    /// Cells run to completion now.
    pub completed: usize,
    /// Cells skipped because they were done.
    pub skipped: usize,
    /// Failed cells: name and error.
    pub failed: Vec<(String, String)>,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
}

/// The directory of a cell.
pub fn cell_dir(out: &Path, cell: &str) -> PathBuf {
    out.join("cells").join(cell)
}

/// Read a cell's state, `None` when it has none.
pub fn read_state(dir: &Path) -> Option<CellState> {
    let text = std::fs::read_to_string(dir.join(STATE_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

pub(super) fn definition(plan: &Plan, cell: &Cell, config: &PlanConfig) -> serde_json::Value {
    serde_json::json!({
        "server": plan.server(&cell.server).map(|s| &s.source),
        "config": config.text,
        "workload": plan.workload(&cell.workload).map(|w| &w.options),
    })
}

/// A short instance dir under the temp dir (unix socket paths are limited to 107 bytes, and
/// the server's OS user must reach it).
fn instance_dir(cell: &Cell) -> PathBuf {
    let short: String = cell.name.chars().take(24).collect();
    std::env::temp_dir().join(format!("ibm-{}-{short}", std::process::id()))
}

/// Whether the cell finished before with the same definition (its run.json says completed);
/// a server that a killed earlier run left behind is stopped on the way.
pub(super) fn finished_before(
    previous: Option<&CellState>,
    def: &serde_json::Value,
    dir: &Path,
) -> bool {
    let Some(p) = previous else {
        return false;
    };
    if p.status == CellStatus::Completed
        && &p.definition == def
        && results::read_run(&dir.join("run")).is_ok_and(|r| r.status == Status::Completed)
    {
        return true;
    }
    // A server left behind by a killed process.
    if p.status == CellStatus::Running
        && let Some(inst) = &p.instance_dir
        && inst.join(server::HANDLE_FILE).exists()
    {
        let _ = replication::pair::stop_pair(inst);
        let _ = std::fs::remove_dir_all(inst);
    }
    false
}

/// Run one cell in a fresh `dir` and record its state (written atomically) however it ends.
pub(super) fn execute_cell(
    job: CellJob,
    definition: serde_json::Value,
    shard: Shard,
) -> Result<CellState> {
    let (cell, dir) = (job.cell, job.dir);
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .with_context(|| format!("cannot clear {} to redo the cell", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut state = CellState {
        cell: cell.name.clone(),
        status: CellStatus::Running,
        error: None,
        label: cell.label.clone(),
        definition,
        shard,
        started_at: Some(results::now_rfc3339()),
        ended_at: None,
        instance_dir: None,
    };
    let result = run_cell(job, &mut state);
    state.ended_at = Some(results::now_rfc3339());
    state.instance_dir = None;
    match result {
        Ok(CellStatus::Interrupted) => {
            state.status = CellStatus::Interrupted;
            state.error = Some("interrupted (Ctrl-C); the same command redoes it".into());
        }
        Ok(s) => state.status = s,
        Err(e) => {
            state.status = CellStatus::Failed;
            state.error = Some(format!("{e:#}"));
        }
    }
    results::write_json_atomic(&dir.join(STATE_FILE), &state)?;
    Ok(state)
}

/// One cell to run: the plan it is in, its config, its own dir, whether to print steps, and
/// the duet it is one side of.
#[derive(Clone, Copy)]
pub(super) struct CellJob<'a> {
    pub(super) plan: &'a Plan,
    pub(super) cell: &'a Cell,
    pub(super) config: &'a PlanConfig,
    pub(super) dir: &'a Path,
    pub(super) quiet: bool,
    pub(super) duet: Option<&'a DuetContext<'a>>,
}

/// Run one cell; `Ok(status)` for completed or interrupted, `Err` for a failure.
fn run_cell(job: CellJob, state: &mut CellState) -> Result<CellStatus> {
    let CellJob {
        plan,
        cell,
        dir,
        quiet,
        ..
    } = job;
    let server = plan
        .server(&cell.server)
        .context("the plan has no such server")?;
    let workload = plan
        .workload(&cell.workload)
        .context("the plan has no such workload")?;
    match &server.source {
        ServerSource::Url { url, engine } => {
            let url = url.replace(super::plan::CELL_PLACEHOLDER, &cell.name);
            let run_dir = dir.join("run");
            let mut opts = run_options(
                workload,
                (&url, None, None),
                *engine,
                &run_dir,
                &cell.label,
                None,
                quiet,
            )?;
            opts.duet = job.duet.map(|d| d.side.clone());
            results::write_json_atomic(&dir.join(STATE_FILE), &*state)?;
            benchmark_cell(opts, job)
        }
        ServerSource::Managed { .. } => run_managed_cell(job, state, workload, &server.source),
    }
}

/// Run one cell on a fresh private instance: start it with the cell's config, run the steps,
/// stop it and keep its log in the cell's dir.
fn run_managed_cell(
    job: CellJob,
    state: &mut CellState,
    workload: &PlanWorkload,
    source: &ServerSource,
) -> Result<CellStatus> {
    let CellJob {
        plan,
        cell,
        config,
        dir,
        quiet,
        duet,
    } = job;
    let ServerSource::Managed {
        kind,
        engine,
        bindir,
        init_args,
        replica,
        failover,
    } = source
    else {
        bail!("cell {} is not on a managed server", cell.name);
    };
    let run_dir = dir.join("run");
    let file = plan.file.display();
    let config_file = write_cell_config(config, *kind, dir)?;
    let inst = duet.map_or_else(|| instance_dir(cell), |d| d.instance_dir());
    if inst.exists() {
        let _ = replication::pair::stop_pair(&inst);
        let _ = std::fs::remove_dir_all(&inst);
    }
    state.instance_dir = Some(inst.clone());
    results::write_json_atomic(&dir.join(STATE_FILE), &*state)?;
    let spec = ServerSpec {
        kind: *kind,
        engine: *engine,
        bindir: Some(bindir.clone()),
        config: config_file,
        dir: Some(inst.clone()),
        port: None,
        init_args: init_args.clone(),
    };
    let handle = start_side_server(&spec, *replica, duet).or_else(|e| {
        let kept = dir.join("server");
        keep_server_files(&inst, &kept);
        let _ = std::fs::remove_dir_all(&inst);
        // The instance dir is gone; its logs are kept in the cell's dir.
        let e = format!("{e:#}")
            .replace(&inst.display().to_string(), &kept.display().to_string());
        anyhow::bail!(
            "the {kind} server {} did not start with config '{}' ({file}: {}): {e}; fix that entry (or the server's bindir/init_args) and rerun",
            cell.server,
            config.name,
            config.entry
        )
    })?;
    let outcome = start_cell_replica(&handle, &spec, *replica).and_then(|replica_url| {
        if stop::interrupted() {
            return Ok(CellStatus::Interrupted);
        }
        let engine = Some(*engine).filter(|_| *kind == ServerKind::Mariadb);
        let mut o = run_options(
            workload,
            (&handle.url, replica_url.as_deref(), *failover),
            engine,
            &run_dir,
            &cell.label,
            Some(&handle.dir),
            quiet,
        )?;
        o.duet = duet.map(|d| d.side.clone());
        benchmark_cell(o, job)
    });
    let stopped = stop_cell_servers(&handle, dir);
    let status = outcome?;
    stopped?;
    Ok(status)
}

/// A cell's server, for a duet side in its turn (the side that starts second waits for the
/// first's server) and on its CPUs.
fn start_side_server(
    spec: &ServerSpec,
    replica: Option<replication::ReplicaMode>,
    duet: Option<&DuetContext>,
) -> Result<server::ServerHandle> {
    if let Some(d) = duet {
        d.before_server()?;
    }
    let started = start_cell_server(spec, replica);
    if let Some(d) = duet {
        d.after_server();
    }
    started
}

/// A cell's server; a MariaDB that a replica will follow writes a binary log.
fn start_cell_server(
    spec: &ServerSpec,
    replica: Option<replication::ReplicaMode>,
) -> Result<server::ServerHandle> {
    match (replica, spec.kind) {
        (Some(_), ServerKind::Mariadb) => replication::pair::start_logging_primary(spec),
        _ => server::start(spec),
    }
}

/// Stop a cell's server (its replica first), keep their logs in the cell's dir and remove
/// their instance dirs once stopped.
fn stop_cell_servers(handle: &server::ServerHandle, dir: &Path) -> Result<()> {
    let replicas = replication::pair::replicas_of(&handle.dir);
    let stopped = replication::pair::stop_pair(&handle.dir).map(|_| ());
    keep_server_files(&handle.dir, &dir.join("server"));
    for r in &replicas {
        keep_server_files(r, &dir.join("replica-server"));
    }
    if stopped.is_ok() {
        let _ = std::fs::remove_dir_all(&handle.dir);
        for r in &replicas {
            let _ = std::fs::remove_dir_all(r);
        }
    }
    stopped
}

/// A cell's private replica of `primary` (the cell's spec, in a dir of its own), when its
/// server has one: the replica's URL.
fn start_cell_replica(
    primary: &server::ServerHandle,
    spec: &ServerSpec,
    mode: Option<replication::ReplicaMode>,
) -> Result<Option<String>> {
    let Some(mode) = mode else {
        return Ok(None);
    };
    let mut dir = primary.dir.clone().into_os_string();
    dir.push("-r");
    let dir = PathBuf::from(dir);
    if dir.exists() {
        let _ = replication::pair::stop_pair(&dir);
        let _ = std::fs::remove_dir_all(&dir);
    }
    let replica_spec = ServerSpec {
        dir: Some(dir),
        port: None,
        ..spec.clone()
    };
    let replica = replication::pair::start_replica(&replica_spec, &primary.dir, mode)
        .context("the cell's replica did not start")?;
    Ok(Some(replica.url))
}

/// One cell's benchmark: `runner::run` with the cell's options; a duet side's steps wait at
/// the duet's barrier.
fn benchmark_cell(opts: crate::runner::RunOptions, job: CellJob) -> Result<CellStatus> {
    let cmd = vec![
        "ibench".to_string(),
        "matrix".to_string(),
        "run".to_string(),
    ];
    let quiet = opts.quiet;
    let outcome = match job.duet {
        Some(d) => {
            let mut observer = DuetObserver {
                barrier: d.barrier,
                quiet,
                tag: format!("[duet r{} s{}]", d.side.round, d.side.slot),
            };
            crate::runner::run_observed(opts, cmd, &mut observer)?
        }
        None => {
            let mut print_step = |step: &crate::results::StepRecord| {
                if !quiet {
                    crate::say!("{}", crate::report::text::step_line(step));
                }
            };
            crate::runner::run(opts, cmd, &mut print_step)?
        }
    };
    if outcome.record.status == Status::Interrupted {
        return Ok(CellStatus::Interrupted);
    }
    outcome.record.checks_passed(&outcome.dir)?;
    Ok(CellStatus::Completed)
}

/// Write the cell's generated config (base plus variant settings) into its dir, for the
/// server and for the record; `None` when the config has no settings.
fn write_cell_config(config: &PlanConfig, kind: ServerKind, dir: &Path) -> Result<Option<PathBuf>> {
    let Some(text) = &config.text else {
        return Ok(None);
    };
    let ext = if kind == ServerKind::Postgres {
        "conf"
    } else {
        "cnf"
    };
    let path = dir.join(format!("{}.{ext}", config.name));
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(Some(path))
}

/// Copy the server's logs, config copy and handle from the instance dir (never the data dir
/// or a password file).
fn keep_server_files(inst: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(inst) else {
        return;
    };
    let _ = std::fs::create_dir_all(to);
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let keep =
            name.ends_with(".log") || name.starts_with("config-") || name == server::HANDLE_FILE;
        if keep && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::copy(e.path(), to.join(&name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell's state is read back from its dir as written; a dir without one, or a cell
    /// never finished, is not finished before.
    #[test]
    fn a_cell_s_state_reads_back_and_only_a_completed_run_is_finished_before() {
        let out = std::env::temp_dir().join(format!("ibench-cell-{}", std::process::id()));
        let dir = cell_dir(&out, "pg-a");
        assert_eq!(dir, out.join("cells").join("pg-a"));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(read_state(&dir).is_none());
        let state = CellState {
            cell: "pg-a".into(),
            status: CellStatus::Completed,
            error: None,
            label: "pg a".into(),
            definition: serde_json::json!({"config": "x"}),
            shard: Shard { index: 0, count: 1 },
            started_at: None,
            ended_at: None,
            instance_dir: None,
        };
        results::write_json_atomic(&dir.join(STATE_FILE), &state).unwrap();
        let back = read_state(&dir).expect("the state reads back");
        assert_eq!(back.status, CellStatus::Completed);
        assert_eq!(back.definition, state.definition);
        // Completed with the same definition, but its run.json is missing: run it again.
        assert!(!finished_before(Some(&back), &state.definition, &dir));
        assert!(!finished_before(None, &state.definition, &dir));
        std::fs::remove_dir_all(&out).unwrap();
    }
}
