//! The validated options of a run (part of the result contract: `run.json` records them): built
//! once from the command line (or by a library caller)
//! before any work starts, and recorded in full in `run.json`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::target::{BackendKind, Engine, Flavour};
use crate::workload::RowShape;
pub use crate::workload::micro::MicroSizes;
use crate::workload::steps::{DEFAULT_QUERY_RATES_ROWS_PER_SEC, Profile, StepName};

/// Seconds each `--perf` counter group is counted before the next one's turn, by default.
pub const DEFAULT_PERF_INTERVAL_SECONDS: f64 = 10.0;

fn default_perf_interval_seconds() -> f64 {
    DEFAULT_PERF_INTERVAL_SECONDS
}

/// The host probe's time budget before and after each step, ms, by default
/// (`--host-probe-ms`; docs/method.md, "The host probe").
pub const DEFAULT_HOST_PROBE_MS: u32 = 200;

/// The longest host probe budget `--host-probe-ms` accepts, ms.
pub const MAX_HOST_PROBE_MS: u32 = 5000;

/// Everything that shapes a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunOptions {
    /// Where the database is (`sqlite:PATH`, `postgres://…`, `mysql://…`); stored redacted.
    pub url: String,
    /// Storage engine for the MySQL family.
    pub engine: Option<Engine>,
    /// The server's flavour when given with `--flavour` (else detected from its version).
    #[serde(default)]
    pub flavour: Option<Flavour>,
    /// A replica of the server at `url` whose lag the run measures (`--replica-url`); stored
    /// redacted. Absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_url: Option<String>,
    /// Where the query steps' queries run (`--query-on`): on the primary, or on the replica
    /// at `replica_url` while the background writers stay on the primary. `primary` in runs
    /// recorded before it existed.
    #[serde(default)]
    pub query_on: QueryOn,
    /// What the run does when its replica stops answering (`--on-replica-loss`): measure on
    /// without it, or fail the step in progress and stop. `continue` in runs recorded before
    /// it existed.
    #[serde(default)]
    pub on_replica_loss: ReplicaLoss,
    /// When ibench loses the primary and promotes the replica (`--failover STEP+SECONDS`);
    /// absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<super::failover::FailoverAt>,
    /// How long a client keeps trying to connect again after it lost its connection
    /// (`--reconnect-for`, seconds; 60 with `--failover`); absent when clients do not
    /// reconnect (a lost connection fails the step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_for_seconds: Option<f64>,
    /// The profile the sizes came from.
    pub profile: String,
    /// The steps, in order.
    pub steps: Vec<StepName>,
    /// Number of clients.
    pub clients: u32,
    /// All clients share table `pi1` instead of one table each.
    pub shared_table: bool,
    /// X: rows per client inserted by l.i0.
    pub load_rows: u64,
    /// Y: rows per client inserted (and deleted) by l.i1.
    pub i1_rows: u64,
    /// Z: rows per client inserted (and deleted) by l.i2.
    pub i2_rows: u64,
    /// Rows per insert in l.i0.
    pub load_rows_per_insert: u32,
    /// Rows per insert (and delete) in l.i1.
    pub i1_rows_per_insert: u32,
    /// Rows per insert (and delete) in l.i2.
    pub i2_rows_per_insert: u32,
    /// Rows per background insert (and delete) in the query steps.
    pub query_rows_per_insert: u32,
    /// Seconds each query step runs.
    pub query_seconds: f64,
    /// Upper bound on the settle phase after l.i2, seconds (`None`: the spec's formula).
    pub settle_max_seconds: Option<f64>,
    /// The run's seed; every connection's stream derives from it.
    pub seed: u64,
    /// Value domains and the data column's shape.
    pub row_shape: RowShape,
    /// Table DDL options.
    pub table: TableOptions,
    /// The deleter re-reads `min(transactionid)` every this many deletes.
    pub delete_min_refresh: u64,
    /// Check row counts and indexes after each step that writes.
    pub check: bool,
    /// Results directory.
    pub out_dir: PathBuf,
    /// Label given with `--label` (derived from the DBMS when `None`).
    pub label: Option<String>,
    /// No progress output.
    pub quiet: bool,
    /// Instance dir of an `ibench server start` server: gives the sampler its pid and data dir.
    #[serde(default)]
    pub server_dir: Option<PathBuf>,
    /// Pid of the server's main process on this host, for the sampler.
    #[serde(default)]
    pub server_pid: Option<u32>,
    /// Run `perf stat` on the server's processes for each step.
    #[serde(default)]
    pub perf: bool,
    /// With `perf`: seconds each counter group is counted before the next one's turn.
    #[serde(default = "default_perf_interval_seconds")]
    pub perf_interval_seconds: f64,
    /// Profile the server's CPU (`perf record`) for the first this many seconds of each step.
    #[serde(default)]
    pub profile_seconds: Option<f64>,
    /// The workload family: the insert benchmark or the microbenchmarks.
    #[serde(default)]
    pub workload: Workload,
    /// The microbenchmarks' sizes (with `--workload micro`).
    #[serde(default)]
    pub micro: MicroSizes,
    /// The host probe's time budget before and after each step, ms; 0 turns it off. Absent
    /// (0) in runs recorded before it existed.
    #[serde(default)]
    pub host_probe_ms: u32,
    /// Seconds without a byte from the server on any connection after which a wait gives up
    /// (`--stall-limit`); 0: wait for ever. Absent (0) in runs recorded before it existed.
    #[serde(default)]
    pub stall_limit_seconds: u32,
    /// The run is one side of a duet (a matrix with `order = "duet"`): recorded as the run's
    /// `duet`, not among its options (the two sides' options stay alike).
    #[serde(skip)]
    pub duet: Option<super::duet::DuetSide>,
}

/// The stall limit's default, seconds: far above any reply a healthy server keeps back (the
/// sampler asks the server for its size every 5 s, so a long statement is no stall).
pub const DEFAULT_STALL_LIMIT_SECONDS: u32 = 60;

/// How to create the table: options that are not dialect but do change the DDL.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TableOptions {
    /// When true the client assigns `transactionid`; otherwise the server does
    /// (identity/sequence, `AUTO_INCREMENT`, `INTEGER PRIMARY KEY`).
    pub client_assigns_ids: bool,
    /// Storage engine (MySQL family only; ignored elsewhere).
    pub engine: Engine,
    /// Extra text appended to `CREATE TABLE (...)`, e.g. `USING heap` or `PARTITION BY ...`.
    pub table_suffix: Option<String>,
}

/// Where the query steps' queries run (`--query-on`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum QueryOn {
    /// On the server at `--url`, beside the background writers.
    #[default]
    Primary,
    /// On the replica at `--replica-url`, while the background writers run on the primary.
    Replica,
}

/// What a run does when its replica stops answering (`--on-replica-loss`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ReplicaLoss {
    /// Keep measuring on the primary; the replica's lag is recorded lost from that second.
    #[default]
    Continue,
    /// Fail the step in progress (what it measured is kept) and stop the run.
    Stop,
}

/// Which benchmark a run is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// The insert benchmark: l.i0, l.x, l.i1, l.i2 and the query steps on tables `piN`.
    #[default]
    Insert,
    /// The microbenchmark suite (sysbench-style) on tables `sbtestN`.
    Micro,
}

/// The most clients a run may have: each holds up to 3 connections and 3 threads, so 1024
/// clients are 3072 connections, past what a server allows by default (Postgres
/// `max_connections` 100, MySQL 151) and far past the published runs (1 to 20 clients).
pub const MAX_CLIENTS: u32 = 1024;

/// The most microbenchmark tables a run may have.
pub const MAX_MICRO_TABLES: u32 = 1024;

/// A problem with the options, naming the flag that fixes it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OptionsError(pub String);

impl RunOptions {
    /// The options of a profile with everything else at its default, for `url`.
    pub fn from_profile(url: &str, profile: &Profile) -> RunOptions {
        RunOptions {
            url: url.to_string(),
            engine: None,
            flavour: None,
            replica_url: None,
            query_on: QueryOn::Primary,
            on_replica_loss: ReplicaLoss::Continue,
            failover: None,
            reconnect_for_seconds: None,
            profile: profile.name.clone(),
            steps: StepName::default_list(&DEFAULT_QUERY_RATES_ROWS_PER_SEC),
            clients: 1,
            shared_table: false,
            load_rows: profile.load_rows,
            i1_rows: profile.i1_rows,
            i2_rows: profile.i2_rows,
            load_rows_per_insert: 100,
            i1_rows_per_insert: 50,
            i2_rows_per_insert: 5,
            query_rows_per_insert: 50,
            query_seconds: profile.query_seconds,
            settle_max_seconds: profile.settle_max_seconds,
            seed: 1,
            row_shape: RowShape::default(),
            table: TableOptions::default(),
            delete_min_refresh: 1000,
            check: true,
            out_dir: PathBuf::from("ibench-results"),
            label: None,
            quiet: false,
            server_dir: None,
            server_pid: None,
            perf: false,
            perf_interval_seconds: default_perf_interval_seconds(),
            profile_seconds: None,
            workload: Workload::Insert,
            micro: MicroSizes::default(),
            host_probe_ms: DEFAULT_HOST_PROBE_MS,
            stall_limit_seconds: DEFAULT_STALL_LIMIT_SECONDS,
            duet: None,
        }
    }

    /// Check the options against each other; the error names the flag to fix.
    /// Steps of the chosen workload only, and sizes the microbenchmarks can run with.
    fn validate_workload(&self) -> Result<(), OptionsError> {
        let micro = self.workload == Workload::Micro;
        if let Some(s) = self.steps.iter().find(|s| s.is_micro() != micro) {
            return Err(OptionsError(if micro {
                format!(
                    "step {s} is an insert-benchmark step and --workload is micro: drop --workload micro or give microbenchmark steps (--steps)"
                )
            } else {
                format!(
                    "step {s} is a microbenchmark: add --workload micro (or give insert-benchmark steps to --steps)"
                )
            }));
        }
        if micro {
            if self.micro.tables == 0 || self.micro.rows == 0 {
                return Err(OptionsError(
                    "--micro-tables and --micro-rows must be at least 1".into(),
                ));
            }
            if self.micro.tables > MAX_MICRO_TABLES {
                return Err(OptionsError(format!(
                    "--micro-tables {} is more than {MAX_MICRO_TABLES} tables; the published runs use 1 to 32: lower --micro-tables",
                    self.micro.tables
                )));
            }
            if !(self.micro.seconds > 0.0 && self.micro.seconds.is_finite()) {
                return Err(OptionsError("--micro-seconds must be above 0".into()));
            }
        }
        Ok(())
    }

    /// `--perf-interval` must be a positive number of seconds.
    fn validate_perf(&self) -> Result<(), OptionsError> {
        let s = self.perf_interval_seconds;
        if !(s >= 0.1 && s.is_finite()) {
            return Err(OptionsError(
                "--perf-interval must be at least 0.1 seconds (the default, 10, counts each of the 7 groups for 10 s in turn)".into(),
            ));
        }
        Ok(())
    }

    /// `--host-probe-ms` is 0 (off) or a budget up to [`MAX_HOST_PROBE_MS`].
    fn validate_host_probe(&self) -> Result<(), OptionsError> {
        if self.host_probe_ms > MAX_HOST_PROBE_MS {
            return Err(OptionsError(format!(
                "--host-probe-ms {} is more than {MAX_HOST_PROBE_MS} ms before and after every step: lower it (the default, {DEFAULT_HOST_PROBE_MS}, is enough; 0 turns the probe off)",
                self.host_probe_ms
            )));
        }
        Ok(())
    }

    /// `--profile-server` needs a positive `--profile-seconds` (and a server process, which
    /// the backend registry answers).
    fn validate_profile(&self) -> Result<(), OptionsError> {
        let Some(seconds) = self.profile_seconds else {
            return Ok(());
        };
        if !(seconds > 0.0 && seconds.is_finite()) {
            return Err(OptionsError("--profile-seconds must be above 0".into()));
        }
        Ok(())
    }

    /// `--failover`: a replica to promote, a step of `--steps`, the last one (after the
    /// failover the run has no replica and its primary is another server).
    fn validate_failover(&self) -> Result<(), OptionsError> {
        let Some(at) = self.failover else {
            return Ok(());
        };
        if self.replica_url.is_none() {
            return Err(OptionsError(format!(
                "--failover {at} needs --replica-url (the replica ibench promotes when it kills the primary)"
            )));
        }
        if !self.steps.contains(&at.step) {
            let steps: Vec<String> = self.steps.iter().map(ToString::to_string).collect();
            return Err(OptionsError(format!(
                "--failover {at}: step {} is not in --steps ({}); name one of them",
                at.step,
                steps.join(",")
            )));
        }
        if self.steps.last() != Some(&at.step) {
            return Err(OptionsError(format!(
                "--failover {at}: {} must be the last step of --steps (after the failover the primary is gone and the run has no replica); run the later steps in another run against the new primary",
                at.step
            )));
        }
        if self.query_on == QueryOn::Replica {
            return Err(OptionsError(
                "--failover and --query-on replica do not go together: the replica becomes the primary".into(),
            ));
        }
        Ok(())
    }

    /// `--replica-url`: a server of the same protocol as `--url` (PostgreSQL or MySQL), and
    /// not the same text.
    fn validate_replica(&self) -> Result<(), OptionsError> {
        let Some(replica) = &self.replica_url else {
            if self.query_on == QueryOn::Replica {
                return Err(OptionsError(
                    "--query-on replica needs --replica-url (the replica the query steps read)"
                        .into(),
                ));
            }
            if self.on_replica_loss == ReplicaLoss::Stop {
                return Err(OptionsError(
                    "--on-replica-loss stop needs --replica-url (the replica whose loss stops the run)"
                        .into(),
                ));
            }
            return Ok(());
        };
        // The family's first scheme without its `://` (`postgres`, `mysql`); none for SQLite.
        let family = |url: &str| {
            BackendKind::of_url(url)
                .filter(|k| *k != BackendKind::Sqlite)
                .and_then(|k| k.schemes()[0].strip_suffix("://"))
        };
        match (family(&self.url), family(replica)) {
            (None, _) => Err(OptionsError(
                "--replica-url needs a server at --url (postgres:// or mysql://), not SQLite"
                    .into(),
            )),
            (Some(p), Some(r)) if p == r => {
                if replica == &self.url {
                    return Err(OptionsError(
                        "--replica-url is --url itself: give the replica's URL (`ibench server start --replica-of` prints it)".into(),
                    ));
                }
                Ok(())
            }
            (Some(p), _) => Err(OptionsError(format!(
                "--replica-url must be a {p}:// URL like --url (a replica is the same server as its primary)"
            ))),
        }
    }

    /// Check the options against each other; the error names the flag to fix. What depends on
    /// the backend (the URL's scheme, `--engine`, a server to profile, `--flavour`) is checked
    /// against the backend registry where the run reads its URL (`ConnectTarget::for_run`).
    pub fn validate(&self) -> Result<(), OptionsError> {
        let fail = |m: &str| Err(OptionsError(m.to_string()));
        if self.clients == 0 {
            return fail("--clients must be at least 1");
        }
        if self.clients > MAX_CLIENTS {
            return Err(OptionsError(format!(
                "--clients {} is more than {MAX_CLIENTS}: each client holds up to 3 connections and 3 threads (and a table unless --shared-table); give --clients {MAX_CLIENTS} or fewer",
                self.clients
            )));
        }
        if self.steps.is_empty() {
            return fail("no steps to run: give at least one step to --steps");
        }
        self.validate_profile()?;
        self.validate_perf()?;
        self.validate_host_probe()?;
        self.validate_workload()?;
        self.validate_replica()?;
        self.validate_failover()?;
        let has = |f: fn(&StepName) -> bool| self.steps.iter().any(f);
        if has(|s| *s == StepName::LoadInitial) && self.load_rows == 0 {
            return fail("--load-rows must be at least 1 when l.i0 runs");
        }
        if has(|s| *s == StepName::InsertDelete1) && self.i1_rows == 0 {
            return fail("--i1-rows must be at least 1 when l.i1 runs");
        }
        if has(|s| *s == StepName::InsertDelete2) && self.i2_rows == 0 {
            return fail("--i2-rows must be at least 1 when l.i2 runs");
        }
        for (flag, v) in [
            ("--load-batch", self.load_rows_per_insert),
            ("--i1-batch", self.i1_rows_per_insert),
            ("--i2-batch", self.i2_rows_per_insert),
            ("--query-batch", self.query_rows_per_insert),
        ] {
            if v == 0 || v > 10_000 {
                return Err(OptionsError(format!(
                    "{flag} must be between 1 and 10000 rows per insert, not {v}"
                )));
            }
        }
        if has(|s| matches!(s, StepName::Query { .. }))
            && !(self.query_seconds.is_finite() && self.query_seconds > 0.0)
        {
            return fail("--query-seconds must be a number of seconds above 0");
        }
        if let Some(s) = self.settle_max_seconds
            && !(s.is_finite() && s >= 0.0)
        {
            return fail("--settle-seconds must be a number of seconds, 0 or more");
        }
        let shape = &self.row_shape;
        if shape.data_min_len > shape.data_max_len {
            return fail("--data-min-len must not exceed --data-max-len");
        }
        if shape.data_max_len > 4000 {
            return fail("--data-max-len must be at most 4000 (the column is varchar(4000))");
        }
        if shape.data_random_pct > 100 {
            return fail("--data-random-pct must be between 0 and 100");
        }
        for (flag, v) in [
            ("--cashregisters", shape.cashregisters),
            ("--customers", shape.customers),
            ("--products", shape.products),
            ("--max-price", shape.max_price),
        ] {
            if v <= 0 {
                return Err(OptionsError(format!("{flag} must be at least 1, not {v}")));
            }
        }
        if self.delete_min_refresh == 0 {
            return fail("--delete-min-refresh must be at least 1");
        }
        Ok(())
    }

    /// The table names: `pi1..piN`, or just `pi1` when shared.
    pub fn tables(&self) -> Vec<String> {
        if self.workload == Workload::Micro {
            (1..=self.micro.tables.max(1))
                .map(|t| format!("sbtest{t}"))
                .collect()
        } else if self.shared_table {
            vec!["pi1".to_string()]
        } else {
            (1..=self.clients).map(|c| format!("pi{c}")).collect()
        }
    }

    /// The sizes the step plans are built from.
    pub fn step_sizes(&self) -> crate::workload::plan::StepSizes {
        crate::workload::plan::StepSizes {
            clients: self.clients,
            shared_table: self.shared_table,
            load_rows: self.load_rows,
            i1_rows: self.i1_rows,
            i2_rows: self.i2_rows,
            load_rows_per_insert: self.load_rows_per_insert,
            i1_rows_per_insert: self.i1_rows_per_insert,
            i2_rows_per_insert: self.i2_rows_per_insert,
            query_rows_per_insert: self.query_rows_per_insert,
            query_seconds: self.query_seconds,
            settle_max_seconds: self.settle_max_seconds,
            micro: self.micro,
        }
    }

    /// Where the sizes came from, in words for the banners: `profile small` when they are
    /// the profile's, else the profile with the flags that changed it (`profile small with
    /// --load-rows 1,000`); `microbenchmarks` and their sizes for that workload.
    pub fn sizes_source(&self) -> String {
        use crate::stats::thousands::group;
        if self.workload == Workload::Micro {
            return format!(
                "microbenchmarks: {} table(s) of {} rows, {} s each",
                self.micro.tables,
                group(u64::from(self.micro.rows)),
                self.micro.seconds
            );
        }
        let Some(p) = Profile::named(&self.profile) else {
            return format!("profile {}", self.profile);
        };
        let mut changed = Vec::new();
        for (flag, ours, its) in [
            ("--load-rows", self.load_rows, p.load_rows),
            ("--i1-rows", self.i1_rows, p.i1_rows),
            ("--i2-rows", self.i2_rows, p.i2_rows),
        ] {
            if ours != its {
                changed.push(format!("{flag} {}", group(ours)));
            }
        }
        if self.query_seconds != p.query_seconds {
            changed.push(format!("--query-seconds {}", self.query_seconds));
        }
        if self.settle_max_seconds != p.settle_max_seconds {
            let s = self
                .settle_max_seconds
                .map_or("none".into(), |s| s.to_string());
            changed.push(format!("--settle-seconds {s}"));
        }
        if changed.is_empty() {
            format!("profile {}", self.profile)
        } else {
            format!("profile {} with {}", self.profile, changed.join(" "))
        }
    }

    /// The sizes of a run in one line, as `ibench run`'s banner shows them: clients, rows
    /// per step, query seconds, and whether they are the profile's (the closing line names
    /// the flags that changed them).
    pub fn sizes_line(&self) -> String {
        use crate::stats::thousands::group;
        let clients = format!(
            "{} client{}{}",
            self.clients,
            if self.clients == 1 { "" } else { "s" },
            if self.shared_table {
                " on one table"
            } else {
                ""
            }
        );
        let source = self.sizes_source();
        if self.workload == Workload::Micro {
            return format!("{clients}; {source}");
        }
        let profile = format!("profile {}", self.profile);
        let source = if source == profile {
            profile
        } else {
            format!("{profile}, changed by flags")
        };
        format!(
            "{clients}; l.i0 {} rows per table, l.i1 {}, l.i2 {}; query steps {} s ({source})",
            group(self.load_rows),
            group(self.i1_rows),
            group(self.i2_rows),
            self.query_seconds,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_say_which_flags_changed_the_profile() {
        let mut o = small();
        assert_eq!(o.sizes_source(), "profile small");
        o.load_rows = 1000;
        o.query_seconds = 2.5;
        assert_eq!(
            o.sizes_source(),
            "profile small with --load-rows 1,000 --query-seconds 2.5"
        );
    }

    fn small() -> RunOptions {
        RunOptions::from_profile("sqlite:x.db", &Profile::named("small").unwrap())
    }

    #[test]
    fn defaults_are_valid() {
        small().validate().unwrap();
    }

    #[test]
    fn a_replica_url_is_a_server_of_the_primary_s_protocol() {
        let mut o = small();
        o.url = "postgres://u@127.0.0.1:5432/db".into();
        o.replica_url = Some("postgres://u@127.0.0.1:5433/db".into());
        assert!(o.validate().is_ok());
        o.replica_url = Some(o.url.clone());
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("--replica-url is --url itself"), "{e}");
        o.replica_url = Some("mysql://u@127.0.0.1:3306/db".into());
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("must be a postgres:// URL"), "{e}");
        o.url = "sqlite:x.db".into();
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("not SQLite"), "{e}");
    }

    #[test]
    fn the_replica_s_options_need_a_replica() {
        let mut o = small();
        o.url = "postgres://u@127.0.0.1:5432/db".into();
        o.query_on = QueryOn::Replica;
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("--query-on replica needs --replica-url"), "{e}");
        o.query_on = QueryOn::Primary;
        o.on_replica_loss = ReplicaLoss::Stop;
        let e = o.validate().unwrap_err().to_string();
        assert!(
            e.contains("--on-replica-loss stop needs --replica-url"),
            "{e}"
        );
        o.replica_url = Some("postgres://u@127.0.0.1:5433/db".into());
        o.query_on = QueryOn::Replica;
        assert!(o.validate().is_ok());
    }

    #[test]
    fn conflicting_and_bad_values_name_the_flag() {
        let mut o = small();
        o.query_seconds = 0.0;
        assert!(
            o.validate()
                .unwrap_err()
                .to_string()
                .contains("--query-seconds")
        );
        let mut o = small();
        o.row_shape.data_min_len = 30;
        assert!(
            o.validate()
                .unwrap_err()
                .to_string()
                .contains("--data-min-len")
        );
    }

    #[test]
    fn tables_per_client_or_shared() {
        let mut o = small();
        o.clients = 3;
        assert_eq!(o.tables(), vec!["pi1", "pi2", "pi3"]);
        o.shared_table = true;
        assert_eq!(o.tables(), vec!["pi1"]);
    }
}
