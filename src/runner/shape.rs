//! The run's shape: what the options mean for this run, worked out once before anything runs
//! (its database, its tables, each step's plan, what the sampler and the workers are built
//! from). Every part of the run takes what it needs from here, not from the options.

use std::path::PathBuf;
use std::time::Duration;

use crate::backend::target::ConnectTarget;
use crate::results::duet::DuetSide;
use crate::results::options::TableOptions;
use crate::results::options::{QueryOn, ReplicaLoss, RunOptions};
use crate::sampler::Sampling;
use crate::sampler::locate::ServerClaim;
use crate::workload::RowShape;
use crate::workload::plan::StepPlan;

use super::monitor::ProgressMode;

/// A run's shape, built once from its options by [`RunShape::of`].
pub struct RunShape {
    /// The database the run measures: its URL read once (the backend, the family's parsed
    /// settings, the text `run.json` records, the host); the driver is built from it.
    pub target: ConnectTarget,
    /// With `--replica-url`: the replica whose lag the run measures, its URL read once like
    /// `--url`'s.
    pub replica_target: Option<ConnectTarget>,
    /// With `--query-on replica`: the replica the query steps' queriers connect to (the
    /// replica's target); `None` when they query the primary.
    pub query_target: Option<ConnectTarget>,
    /// The run's tables, in order; client `c` works on the `c`-th (modulo their number).
    pub tables: Vec<String>,
    /// One plan per step, in the order they run.
    pub steps: Vec<StepPlan>,
    /// The table DDL options a step that creates the tables uses.
    pub table_options: TableOptions,
    /// What each connection's worker is built from.
    pub workers: WorkerSettings,
    /// What the sampler measures.
    pub sampling: Sampling,
    /// Check row counts and indexes after each step that writes.
    pub check: bool,
    /// Upper bound on the settle phase after l.i2, seconds (`None`: the spec's formula).
    pub settle_max_seconds: Option<f64>,
    /// How the progress is shown.
    pub progress: ProgressMode,
    /// The options as `run.json` records them (the URL's password masked).
    pub recorded_options: RunOptions,
    /// With `--failover` or `--reconnect-for`: clients survive a lost connection.
    pub reconnect: Option<ReconnectShape>,
    /// What the run itself does around its steps: where it writes, its label, its bounds.
    pub run: RunSettings,
}

/// The options of the run as a whole, resolved once: its results directory, its label, the
/// stall limit, the replica-loss policy, the host probe's budget, the duet side it is and
/// the sizes its banner shows.
pub struct RunSettings {
    /// The results directory (`--out`).
    pub out_dir: PathBuf,
    /// The SQLite file lives in the results directory (the default URL): the directory is
    /// made before the database is reached.
    pub sqlite_in_out_dir: bool,
    /// `--label`; `None`: derived from the target reached.
    pub label: Option<String>,
    /// `--server-dir`: a derived label names the config file the instance was given.
    pub server_dir: Option<PathBuf>,
    /// `--stall-limit`; `None` when 0 (no limit).
    pub stall_limit: Option<Duration>,
    /// `--on-replica-loss`.
    pub on_replica_loss: ReplicaLoss,
    /// `--host-probe-ms`.
    pub host_probe_ms: u32,
    /// The duet side this run is (`matrix run` with `order = "duet"`).
    pub duet: Option<DuetSide>,
    /// The run's sizes in the one line its start banner shows (`RunOptions::sizes_line`).
    pub sizes_line: String,
}

impl RunSettings {
    /// The run's own settings in `opts`.
    pub fn of(opts: &RunOptions) -> RunSettings {
        RunSettings {
            out_dir: opts.out_dir.clone(),
            sqlite_in_out_dir: crate::backend::sqlite::path_of_url(&opts.url)
                .is_some_and(|p| p.parent() == Some(opts.out_dir.as_path())),
            label: opts.label.clone(),
            server_dir: opts.server_dir.clone(),
            stall_limit: (opts.stall_limit_seconds > 0)
                .then(|| Duration::from_secs(u64::from(opts.stall_limit_seconds))),
            on_replica_loss: opts.on_replica_loss,
            host_probe_ms: opts.host_probe_ms,
            duet: opts.duet.clone(),
            sizes_line: opts.sizes_line(),
        }
    }
}

/// How the clients survive a lost connection (`--reconnect-for`), and ibench's own
/// failover (`--failover`).
pub struct ReconnectShape {
    /// How long a client keeps trying.
    pub bound: Duration,
    /// Where the clients reconnect outside the failover's step: `--url`'s target.
    pub primary: ConnectTarget,
    /// With `--failover`: when, and the replica to promote (its URL read like `--url`'s).
    pub failover: Option<(crate::results::failover::FailoverAt, ConnectTarget)>,
}

/// The reconnect shape of `opts`, when it has one: the clients reconnect to `primary`
/// (`--url`'s target), and with `--failover` the replica promoted is `replica`
/// (`--replica-url`'s, read once with the run's other targets).
fn reconnect_shape(
    opts: &RunOptions,
    (primary, replica): (&ConnectTarget, Option<&ConnectTarget>),
) -> Option<ReconnectShape> {
    let seconds = opts.reconnect_for_seconds?;
    Some(ReconnectShape {
        bound: Duration::from_secs_f64(seconds),
        primary: primary.clone(),
        failover: opts.failover.zip(replica.cloned()),
    })
}

/// What the workers of a step's connections are built from.
#[derive(Clone, Debug)]
pub struct WorkerSettings {
    /// The run's seed; every connection's stream derives from it.
    pub seed: u64,
    /// Value domains and the data column's shape.
    pub row_shape: RowShape,
    /// The clients assign the ids (else the database does).
    pub client_assigns_ids: bool,
    /// All clients share one table.
    pub shared_table: bool,
    /// The deleter re-reads `min(transactionid)` every this many deletes.
    pub delete_min_refresh: u64,
    /// Rows per microbenchmark table.
    pub micro_rows: u32,
    /// Number of clients.
    pub clients: u32,
}

impl RunShape {
    /// The shape of a run with the options `opts`, validated by the command line
    /// (`RunArgs::to_options`). The URL is read here, once, and the options that depend on
    /// its backend are checked against it; an error names the flag to fix.
    pub fn of(opts: &RunOptions) -> anyhow::Result<RunShape> {
        RunShape::with(opts, RunSettings::of(opts))
    }

    /// [`RunShape::of`] with the run's own settings, `run`, resolved from `opts` before (the
    /// runner makes the SQLite file's directory from them before the URL is read).
    pub fn with(opts: &RunOptions, run: RunSettings) -> anyhow::Result<RunShape> {
        let target = ConnectTarget::for_run(opts)?;
        let replica_target = match &opts.replica_url {
            Some(replica) => Some(
                ConnectTarget::for_run(&RunOptions {
                    url: replica.clone(),
                    ..opts.clone()
                })
                .map_err(|e| anyhow::anyhow!("--replica-url: {e:#}"))?,
            ),
            None => None,
        };
        let query_target = replica_target
            .clone()
            .filter(|_| opts.query_on == QueryOn::Replica);
        let tables = opts.tables();
        let sizes = opts.step_sizes();
        let steps = opts
            .steps
            .iter()
            .map(|&step| StepPlan::for_step(step, &sizes))
            .collect();
        let sampling = Sampling {
            server: ServerClaim {
                host: target.host.clone(),
                server_dir: opts.server_dir.clone(),
                server_pid: opts.server_pid,
            },
            tables: tables.clone(),
            perf_turn: opts
                .perf
                .then(|| Duration::from_secs_f64(opts.perf_interval_seconds)),
            profile_seconds: opts.profile_seconds,
            engine: Some(opts.table.engine),
        };
        let recorded_options = RunOptions {
            url: target.redacted_url.clone(),
            replica_url: replica_target.as_ref().map(|t| t.shown_url.clone()),
            ..opts.clone()
        };
        let reconnect = reconnect_shape(opts, (&target, replica_target.as_ref()));
        Ok(RunShape {
            target,
            replica_target,
            query_target,
            tables,
            steps,
            table_options: opts.table.clone(),
            workers: WorkerSettings {
                seed: opts.seed,
                row_shape: opts.row_shape.clone(),
                client_assigns_ids: opts.table.client_assigns_ids,
                shared_table: opts.shared_table,
                delete_min_refresh: opts.delete_min_refresh,
                micro_rows: opts.micro.rows,
                clients: opts.clients,
            },
            sampling,
            check: opts.check,
            settle_max_seconds: opts.settle_max_seconds,
            progress: ProgressMode::detect(opts.quiet),
            recorded_options,
            reconnect,
            run,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::steps::Profile;

    #[test]
    fn the_target_reads_the_url_once_and_records_it_without_its_password() {
        let o =
            RunOptions::from_profile("postgres://u:secret@db.example:5432/x", &Profile::small());
        let shape = RunShape::of(&o).unwrap();
        assert_eq!(shape.target.host, "db.example");
        assert_eq!(shape.sampling.server.host, "db.example");
        assert!(!shape.target.redacted_url.contains("secret"));
        assert_eq!(shape.recorded_options.url, shape.target.redacted_url);
        assert_eq!(shape.steps.len(), o.steps.len());
    }
}
