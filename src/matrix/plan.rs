//! The plan: the matrix file resolved into cells (server × config × workload × repeat) with
//! labels and estimated durations, the groups, and the split of the cells into shards.

use crate::stats::convert::round_to_u64;
use std::path::PathBuf;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::file::{self, ConfigSetEntry, Order, Source};
use crate::backend::Engine;
use crate::cli::RunArgs;
use crate::runner::RunOptions;
use crate::server::ServerKind;
use crate::workload::plan::StepPlan;

pub use super::configs::{axis_names, check_axes_product};
use super::groups::plan_groups;
use super::servers::plan_server;
pub use super::servers::version_label;
pub use super::shards::{Shard, ShardIdentity};

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

pub use super::workloads::plan_workloads;

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
const EST_SERVER_SECONDS: f64 = 5.0;

/// Estimated seconds of one run with these options: its steps' own estimates
/// ([`StepPlan::estimate_seconds`]).
pub fn estimate_seconds(o: &RunOptions) -> f64 {
    let sizes = o.step_sizes();
    o.steps
        .iter()
        .map(|s| StepPlan::for_step(*s, &sizes).estimate_seconds)
        .sum()
}

/// `1h02m`, `3m05s`, `12s`.
pub fn duration_text(seconds: f64) -> String {
    let s = round_to_u64(seconds.max(0.0).round());
    let (d, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    if d > 0 {
        format!("{d}d{h:02}h{m:02}m")
    } else if h > 0 {
        format!("{h}h{m:02}m")
    } else if m > 0 {
        format!("{m}m{sec:02}s")
    } else {
        format!("{sec}s")
    }
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

/// The `ibench run` options of a cell: the workload's options plus what the matrix decides.
/// Errors are `ibench run`'s own messages.
pub fn run_options(
    workload: &PlanWorkload,
    url: &str,
    engine: Option<Engine>,
    out: &std::path::Path,
    label: &str,
    server_dir: Option<&std::path::Path>,
    quiet: bool,
) -> Result<RunOptions> {
    let mut args = workload.options.clone();
    args.url = url.to_string();
    args.engine = engine;
    args.out = Some(out.to_path_buf());
    args.label = Some(label.to_string());
    args.server_dir = server_dir.map(std::path::Path::to_path_buf);
    args.quiet = quiet;
    args.to_options()
}

/// In a server's `url`, replaced by the cell's name (`sqlite:DIR/{cell}.db`: a file per cell).
pub const CELL_PLACEHOLDER: &str = "{cell}";

/// The most cells a matrix may have: past it, a file is a typo (`repeats = 100000000`, an axis
/// product of millions), not a plan; refused before anything is allocated for the cells.
pub const MAX_CELLS: usize = 10_000;

/// Refuse a plan of more than [`MAX_CELLS`] cells, saying how many and what to shrink.
fn check_cell_count(
    src: &Source,
    repeats: u32,
    servers: &[PlanServer],
    workloads: &[PlanWorkload],
) -> Result<()> {
    let configs: usize = servers.iter().map(|s| s.configs.len()).sum();
    let cells = configs
        .checked_mul(workloads.len())
        .and_then(|n| n.checked_mul(usize::try_from(repeats).unwrap_or(usize::MAX)))
        .unwrap_or(usize::MAX);
    if cells > MAX_CELLS {
        return Err(src.err(
            "cells",
            format!(
                "{configs} server configs x {} workloads x {repeats} repeats = {cells} cells, more than a matrix may have ({MAX_CELLS}); shrink the axes, workloads or repeats",
                workloads.len()
            ),
        ));
    }
    Ok(())
}

/// Resolve the matrix file into a plan (runs the servers' `--version`, nothing else).
pub fn build(src: &Source) -> Result<Plan> {
    let f = &src.file;
    if f.repeats == 0 {
        return Err(src.err("repeats", "must be at least 1; set repeats = 1 or more"));
    }
    if usize::try_from(f.repeats).map_or(true, |r| r > MAX_CELLS) {
        return Err(src.err(
            "repeats",
            format!("{} is more cells than a matrix may have ({MAX_CELLS}); set repeats = 1 to 10 as the published runs do", f.repeats),
        ));
    }
    if f.servers.is_empty() {
        return Err(src.err("servers", "no server; add one, e.g. [servers.pg15] kind = \"postgres\" bindir = \"/usr/lib/postgresql/15/bin\""));
    }
    if f.workloads.is_empty() {
        return Err(src.err(
            "workloads",
            "no workload; add one, e.g. [workloads.small] profile = \"small\"",
        ));
    }
    let sets = f
        .configs
        .iter()
        .map(|(name, v)| Ok((name.clone(), file::entry(src, "configs", name, v)?)))
        .collect::<Result<Vec<(String, ConfigSetEntry)>>>()?;
    let workloads = plan_workloads(src)?;
    let mut servers = f
        .servers
        .iter()
        .map(|(name, v)| plan_server(src, name, v, &sets, &workloads))
        .collect::<Result<Vec<_>>>()?;
    // Two servers with the same label prefix: add the server name.
    let prefixes: Vec<String> = servers.iter().map(|s| s.label.clone()).collect();
    for s in &mut servers {
        if prefixes.iter().filter(|p| **p == s.label).count() > 1 {
            s.label = format!("{} ({})", s.label, s.name);
        }
    }
    check_cell_count(src, f.repeats, &servers, &workloads)?;
    let cells = plan_cells(f.order, f.repeats, &servers, &workloads)?;
    let groups = plan_groups(src, &servers, &workloads)?;
    Ok(Plan {
        file: src.path.clone(),
        repeats: f.repeats,
        order: f.order,
        servers,
        workloads,
        cells,
        groups,
    })
}

/// Every cell in run order: server × config × workload, each repeated.
fn plan_cells(
    order: Order,
    repeats: u32,
    servers: &[PlanServer],
    workloads: &[PlanWorkload],
) -> Result<Vec<Cell>> {
    let mut combos = Vec::new();
    for s in servers {
        for c in &s.configs {
            for w in workloads {
                let url = placeholder_url(&s.source);
                let opts = run_options(
                    w,
                    &url,
                    s.source.engine(),
                    std::path::Path::new("x"),
                    "x",
                    None,
                    true,
                )?;
                let managed = matches!(s.source, ServerSource::Managed { .. });
                let est = estimate_seconds(&opts) + if managed { EST_SERVER_SECONDS } else { 0.0 };
                let mut label = if !managed && c.name == "base" {
                    s.label.clone()
                } else {
                    format!("{} {}", s.label, c.name)
                };
                if let Some(v) = &w.variant {
                    label = format!("{label} {v}");
                }
                combos.push((s.name.clone(), c.name.clone(), w.name.clone(), label, est));
            }
        }
    }
    let make = |(s, c, w, label, est): &(String, String, String, String, f64), r: u32| Cell {
        name: format!("{s}.{c}.{w}.r{r}"),
        combo: format!("{s}.{c}.{w}"),
        server: s.clone(),
        config: c.clone(),
        workload: w.clone(),
        repeat: r,
        label: label.clone(),
        estimate_seconds: *est,
    };
    let mut cells = Vec::new();
    match order {
        Order::Sequential => {
            for combo in &combos {
                cells.extend((1..=repeats).map(|r| make(combo, r)));
            }
        }
        Order::Interleaved => {
            for r in 1..=repeats {
                cells.extend(combos.iter().map(|combo| make(combo, r)));
            }
        }
    }
    Ok(cells)
}

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
                duration_text(c.estimate_seconds),
                c.label
            ));
        }
        t.push_str(&format!(
            "{} cells, estimated {} (assumes a small host; see docs/matrix.md)\n",
            cells.len(),
            duration_text(total)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(duration_text(12.4), "12s");
        assert_eq!(duration_text(185.0), "3m05s");
        assert_eq!(duration_text(3720.0), "1h02m");
        assert_eq!(duration_text(2.0 * 86_400.0 + 3600.0), "2d01h00m");
    }
}
