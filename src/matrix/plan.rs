//! The plan: the matrix file resolved into cells (server × config × workload × repeat) with
//! labels and estimated durations, the groups, and the split of the cells into shards.

use std::path::PathBuf;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::file::Order;
use crate::cli::RunArgs;
use crate::results::options::RunOptions;
use crate::results::target::Engine;
use crate::server::ServerKind;
use crate::workload::plan::StepPlan;

/// How a cell reaches its server.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ServerSource {
    /// A fresh private instance per cell.
    Managed {
        /// Which server.
        kind: ServerKind,
        /// Storage engine.
        engine: Engine,
        /// Binaries.
        bindir: PathBuf,
        /// Extra initdb / mariadb-install-db arguments.
        init_args: Vec<String>,
        /// A private replica attached to each cell's server, and how it follows.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replica: Option<crate::replication::ReplicaMode>,
        /// When each cell's run loses its primary and promotes the replica (`--failover`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failover: Option<crate::results::failover::FailoverAt>,
    },
    /// A server ibench does not manage.
    Url {
        /// Where it is.
        url: String,
        /// Storage engine (MySQL family).
        engine: Option<Engine>,
    },
}

/// A resolved server.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlanServer {
    /// Its name in the file.
    pub name: String,
    /// How to reach it.
    pub source: ServerSource,
    /// Label prefix: `PostgreSQL 15.14`, `MariaDB 10.11.14 rocksdb`, or the file's label.
    pub label: String,
    /// Its configs, in order.
    pub configs: Vec<PlanConfig>,
}

/// A resolved config: the text of the generated config file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PlanConfig {
    /// Name (`base`, a variant, or a generated `sync1_compLZ4`).
    pub name: String,
    /// Where it comes from in the file (`configs.postgres.variants.lz4`).
    pub entry: String,
    /// The config file's text; `None`: no config file.
    pub text: Option<String>,
}

/// A resolved workload.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlanWorkload {
    /// Name (`writes`, or `writes_clients-4` for a variant of a workload with axes).
    pub name: String,
    /// Its run options (the matrix sets url, out, label, engine and server dir per cell).
    #[serde(default)]
    pub options: RunArgs,
    /// For a variant of a workload with axes: the workload's own name (one report compares
    /// its variants).
    #[serde(default)]
    pub family: Option<String>,
    /// For a variant: its value names joined by `_` (`clients-4`); added to the cells' labels.
    #[serde(default)]
    pub variant: Option<String>,
}

/// One run of the matrix.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cell {
    /// `SERVER.CONFIG.WORKLOAD.rN`; also its directory name.
    pub name: String,
    /// `SERVER.CONFIG.WORKLOAD`: the repeats of a combination share it.
    pub combo: String,
    /// Server name.
    pub server: String,
    /// Config name.
    pub config: String,
    /// Workload name.
    pub workload: String,
    /// 1-based repeat.
    pub repeat: u32,
    /// Label in reports (repeats share it).
    pub label: String,
    /// Estimated duration, seconds.
    pub estimate_seconds: f64,
}

/// A resolved group: which combinations one report compares, per workload.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlanGroup {
    /// Name.
    pub name: String,
    /// `SERVER.CONFIG` members, in order.
    pub members: Vec<String>,
    /// Workloads; one report each. A workload with axes is one report comparing its
    /// variants.
    pub workloads: Vec<String>,
    /// The base member (`SERVER.CONFIG`).
    pub base: String,
}

/// The whole plan.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    /// The matrix file.
    pub file: PathBuf,
    /// Repeats per combination.
    pub repeats: u32,
    /// Order.
    pub order: Order,
    /// With `order = "duet"`: each side pinned to its own half of the host's CPUs.
    #[serde(default)]
    pub pin: bool,
    /// Servers.
    pub servers: Vec<PlanServer>,
    /// Workloads.
    pub workloads: Vec<PlanWorkload>,
    /// Every cell in run order.
    pub cells: Vec<Cell>,
    /// Groups.
    pub groups: Vec<PlanGroup>,
}

/// Assumed rates for the estimate (a 2-core VM; real hosts are faster, so the estimate errs
/// long). Rows per second over all clients.
/// Server start and stop per cell.
pub(super) const EST_SERVER_SECONDS: f64 = 5.0;

/// Estimated seconds of one run with these options: its steps' own estimates
/// ([`StepPlan::estimate_seconds`]).
pub fn estimate_seconds(o: &RunOptions) -> f64 {
    let sizes = o.step_sizes();
    o.steps
        .iter()
        .map(|s| StepPlan::for_step(*s, &sizes).estimate_seconds)
        .sum()
}

/// A duration in the plan's table: the compact style.
fn compact(seconds: f64) -> String {
    crate::calendar::duration_text(seconds, crate::calendar::DurationStyle::Compact)
}

/// A URL that passes validation for a kind, for checking a workload before any server runs.
pub(super) fn placeholder_url(source: &ServerSource) -> String {
    match source {
        ServerSource::Managed {
            kind: ServerKind::Postgres,
            ..
        } => "postgres://postgres@127.0.0.1:1/postgres".into(),
        ServerSource::Managed { .. } => "mysql://root@127.0.0.1:1/ibench".into(),
        ServerSource::Url { url, .. } => url.clone(),
    }
}

/// What a plan checks a workload against for a server with a private replica, in place of
/// the replica's URL a cell learns when it starts it; `None` without one.
pub(super) fn placeholder_replica_url(source: &ServerSource) -> Option<String> {
    match source {
        ServerSource::Managed {
            replica: Some(_), ..
        } => Some(placeholder_url(source).replace("127.0.0.1:1/", "127.0.0.1:2/")),
        _ => None,
    }
}

impl ServerSource {
    /// The engine flag for runs against this server.
    pub fn engine(&self) -> Option<Engine> {
        match self {
            ServerSource::Managed {
                kind: ServerKind::Mariadb,
                engine,
                ..
            } => Some(*engine),
            ServerSource::Managed { .. } => None,
            ServerSource::Url { engine, .. } => *engine,
        }
    }

    /// When each cell's run loses its primary (`--failover`); `None` without a failover.
    pub fn failover(&self) -> Option<crate::results::failover::FailoverAt> {
        match self {
            ServerSource::Managed { failover, .. } => *failover,
            ServerSource::Url { .. } => None,
        }
    }

    /// Whether configs are written in PostgreSQL syntax.
    pub(super) fn postgres_syntax(&self) -> bool {
        matches!(
            self,
            ServerSource::Managed {
                kind: ServerKind::Postgres,
                ..
            }
        )
    }
}

/// The `ibench run` options of a cell: the workload's options plus what the matrix decides
/// (the server's URL, its private replica's when it has one, and the failover its server
/// asks for). Errors are `ibench run`'s own messages.
pub fn run_options(
    workload: &PlanWorkload,
    (url, replica_url, failover): (
        &str,
        Option<&str>,
        Option<crate::results::failover::FailoverAt>,
    ),
    engine: Option<Engine>,
    out: &std::path::Path,
    label: &str,
    server_dir: Option<&std::path::Path>,
    quiet: bool,
) -> Result<RunOptions> {
    let mut args = workload.options.clone();
    args.url = url.to_string();
    if let Some(replica) = replica_url {
        args.replica_url = Some(replica.to_string());
    }
    if let Some(at) = failover {
        args.failover = Some(at.to_string());
    }
    args.engine = engine;
    args.out = Some(out.to_path_buf());
    args.label = Some(label.to_string());
    args.server_dir = server_dir.map(std::path::Path::to_path_buf);
    args.quiet = quiet;
    args.to_options()
}

/// In a server's `url`, replaced by the cell's name (`sqlite:DIR/{cell}.db`: a file per cell).
pub const CELL_PLACEHOLDER: &str = "{cell}";

pub use super::file::MAX_CELLS;

impl Plan {
    /// A server by name.
    pub fn server(&self, name: &str) -> Option<&PlanServer> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// A workload by name.
    pub fn workload(&self, name: &str) -> Option<&PlanWorkload> {
        self.workloads.iter().find(|w| w.name == name)
    }

    /// The printed plan: one line per cell and the estimate.
    pub fn render(&self, shard: Shard) -> String {
        let cells = self.cells_of(shard);
        let mut t = String::new();
        if shard.count > 1 {
            t.push_str(&format!(
                "shard {shard}: {} of {} cells\n",
                cells.len(),
                self.cells.len()
            ));
        }
        let w = |f: fn(&Cell) -> &str| cells.iter().map(|c| f(c).len()).max().unwrap_or(0).max(6);
        let (wn, ws, wc, ww) = (
            w(|c| &c.name),
            w(|c| &c.server),
            w(|c| &c.config),
            w(|c| &c.workload),
        );
        t.push_str(&format!(
            "{:>4}  {:wn$}  {:ws$}  {:wc$}  {:ww$}  {:>6}  {:>8}  label\n",
            "#", "cell", "server", "config", "workload", "repeat", "estimate"
        ));
        let mut total = 0.0;
        for (i, c) in cells.iter().enumerate() {
            total += c.estimate_seconds;
            t.push_str(&format!(
                "{:>4}  {:wn$}  {:ws$}  {:wc$}  {:ww$}  {:>6}  {:>8}  {}\n",
                i + 1,
                c.name,
                c.server,
                c.config,
                c.workload,
                c.repeat,
                compact(c.estimate_seconds),
                c.label
            ));
        }
        t.push_str(&format!(
            "{} cells, estimated {} (assumes a small host; see docs/matrix.md)\n",
            cells.len(),
            compact(total)
        ));
        for g in &self.groups {
            t.push_str(&format!(
                "group {}: {} against {} ({} report{})\n",
                g.name,
                g.members.join(", "),
                g.base,
                g.workloads.len(),
                if g.workloads.len() == 1 { "" } else { "s" }
            ));
        }
        t
    }
}

/// Which part of the cells this host runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 0-based index.
    pub index: u32,
    /// Number of shards.
    pub count: u32,
}

/// The shard a results dir belongs to (`shard.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardIdentity {
    /// `I/N`.
    pub shard: String,
    /// Hash of the plan's cells and their split into N shards (12 hex digits).
    pub plan_hash: String,
}
