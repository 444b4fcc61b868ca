//! The run's shape: what the options mean for this run, worked out once before anything runs
//! (its database, its tables, each step's plan, what the sampler and the workers are built
//! from). Every part of the run takes what it needs from here, not from the options.

use std::time::Duration;

use crate::backend::DriverOptions;
use crate::results::options::RunOptions;
use crate::results::options::TableOptions;
use crate::sampler::Sampling;
use crate::sampler::locate::ServerClaim;
use crate::url::{UrlParts, redact_url};
use crate::workload::RowShape;
use crate::workload::plan::StepPlan;

use super::monitor::ProgressMode;

/// A run's shape, built once from its options by [`RunShape::of`].
pub struct RunShape {
    /// The database the run measures.
    pub target: Target,
    /// How the driver connects, beyond the URL.
    pub driver: DriverOptions,
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
}

/// The database a run measures: its URL read once, as given (to connect), with its password
/// masked (for the record), and the host it names (for the sampler).
pub struct Target {
    /// The URL as given: it may hold a password, so it goes only to the driver.
    url: String,
    /// The URL with its password masked.
    pub redacted_url: String,
    /// The URL's first host (`""` for a Unix socket, none given, or SQLite).
    pub host: String,
}

impl Target {
    /// The target at `url`, its text read once for both the redacted form and the host.
    pub fn of(url: &str) -> Target {
        let (redacted_url, host) = match UrlParts::parse(url) {
            Some(u) => (u.redacted(), u.first_host()),
            None => (redact_url(url), String::new()),
        };
        Target {
            url: url.to_string(),
            redacted_url,
            host,
        }
    }

    /// The URL as given, to connect with.
    pub fn url(&self) -> &str {
        &self.url
    }
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
    /// The shape of a run with the (validated) options `opts`.
    pub fn of(opts: &RunOptions) -> RunShape {
        let target = Target::of(&opts.url);
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
            ..opts.clone()
        };
        RunShape {
            target,
            driver: DriverOptions {
                engine: opts.engine,
                flavour: opts.flavour,
            },
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
        }
    }

    /// The table client `c` works on.
    pub fn table_of(&self, client: u32) -> &str {
        let at = usize::try_from(client).unwrap_or(usize::MAX) % self.tables.len().max(1);
        self.tables.get(at).map_or("", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::options::Workload;
    use crate::workload::steps::Profile;

    #[test]
    fn each_client_works_on_its_table() {
        let mut o = RunOptions::from_profile("sqlite:x.db", &Profile::small());
        o.clients = 3;
        let shape = RunShape::of(&o);
        assert_eq!(shape.tables, ["pi1", "pi2", "pi3"]);
        assert_eq!(shape.table_of(2), "pi3");
        o.shared_table = true;
        assert_eq!(RunShape::of(&o).table_of(2), "pi1");
        o.workload = Workload::Micro;
        o.micro.tables = 2;
        let shape = RunShape::of(&o);
        assert_eq!(shape.tables, ["sbtest1", "sbtest2"]);
        assert_eq!(shape.table_of(2), "sbtest1");
        assert_eq!(shape.table_of(3), "sbtest2");
    }

    #[test]
    fn the_target_reads_the_url_once_and_records_it_without_its_password() {
        let o =
            RunOptions::from_profile("postgres://u:secret@db.example:5432/x", &Profile::small());
        let shape = RunShape::of(&o);
        assert_eq!(shape.target.url(), o.url);
        assert_eq!(shape.target.host, "db.example");
        assert_eq!(shape.sampling.server.host, "db.example");
        assert!(!shape.target.redacted_url.contains("secret"));
        assert_eq!(shape.recorded_options.url, shape.target.redacted_url);
        assert_eq!(shape.steps.len(), o.steps.len());
    }
}
