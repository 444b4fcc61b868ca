//! The plan: the matrix file resolved into cells (server × config × workload × repeat) with
//! labels and estimated durations, the groups, and the split of the cells into shards.

use crate::stats::convert::{count_f64, round_to_u64};
use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::file::{self, AxisEntry, ConfigSetEntry, GroupEntry, Order, ServerEntry, Source};
use crate::backend::{Engine, kind_of_url};
use crate::cli::RunArgs;
use crate::runner::RunOptions;
use crate::server::ServerKind;
use crate::workload::steps::{StepName, settle_seconds};

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
const EST_LOAD_ROWS_PER_SEC: f64 = 40_000.0;
const EST_INDEX_ROWS_PER_SEC: f64 = 200_000.0;
const EST_I1_ROWS_PER_SEC: f64 = 10_000.0;
const EST_I2_ROWS_PER_SEC: f64 = 2_000.0;
/// Server start and stop per cell.
const EST_SERVER_SECONDS: f64 = 5.0;

/// Estimated seconds of one run with these options.
pub fn estimate_seconds(o: &RunOptions) -> f64 {
    let clients = f64::from(o.clients);
    let mut s = 0.0;
    for step in &o.steps {
        s += match step {
            StepName::LoadInitial => clients * count_f64(o.load_rows) / EST_LOAD_ROWS_PER_SEC,
            StepName::CreateIndexes => clients * count_f64(o.load_rows) / EST_INDEX_ROWS_PER_SEC,
            StepName::InsertDelete1 => clients * count_f64(o.i1_rows) / EST_I1_ROWS_PER_SEC,
            StepName::InsertDelete2 => {
                clients * count_f64(o.i2_rows) / EST_I2_ROWS_PER_SEC
                    + settle_seconds(o.load_rows * u64::from(o.clients), o.settle_max_seconds)
            }
            StepName::Query { .. } => o.query_seconds,
            StepName::MicroLoad => {
                f64::from(o.micro.tables) * f64::from(o.micro.rows) / EST_LOAD_ROWS_PER_SEC
            }
            StepName::Micro(_) => o.micro.seconds,
        };
    }
    s
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
fn placeholder_url(source: &ServerSource) -> String {
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
    fn postgres_syntax(&self) -> bool {
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

/// The label prefix from a version line (`postgres (PostgreSQL) 15.14 (Debian …)`,
/// `mariadbd  Ver 10.11.14-MariaDB-0+deb12u1 for …`).
pub fn version_label(kind: ServerKind, engine: Engine, version_line: &str) -> String {
    match kind {
        ServerKind::Postgres => {
            let v = version_line
                .split(')')
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .unwrap_or(version_line);
            format!("PostgreSQL {v}")
        }
        ServerKind::Mariadb => {
            let mut words = version_line.split_whitespace();
            let v = words
                .by_ref()
                .skip_while(|w| *w != "Ver")
                .nth(1)
                .unwrap_or(version_line);
            let (num, rest) = v.split_once('-').unwrap_or((v, ""));
            let dbms = if rest.to_ascii_lowercase().contains("mariadb") {
                "MariaDB"
            } else {
                "MySQL"
            };
            format!("{dbms} {num} {}", format!("{engine:?}").to_lowercase())
        }
    }
}

/// `BINDIR/postgres --version` or `BINDIR/mariadbd --version` (the server binary must be in
/// the bindir itself, as `ibench server start --bindir` requires).
fn probe_version(
    src: &Source,
    entry: &str,
    kind: ServerKind,
    bindir: &std::path::Path,
) -> Result<String> {
    let candidates: Vec<PathBuf> = match kind {
        ServerKind::Postgres => vec![bindir.join("postgres")],
        ServerKind::Mariadb => vec![bindir.join("mariadbd"), bindir.join("mysqld")],
    };
    let Some(binary) = candidates.iter().find(|p| p.is_file()) else {
        let wanted = match kind {
            ServerKind::Postgres => "initdb, pg_ctl and postgres",
            ServerKind::Mariadb => "mariadbd and mariadb-install-db",
        };
        return Err(src.err(
            entry,
            format!(
                "no {} in bindir {}; set bindir to the directory holding {wanted}",
                candidates[0]
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                bindir.display()
            ),
        ));
    };
    let out = std::process::Command::new(binary)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("cannot run {} --version", binary.display()))
        .map_err(|e| src.err(entry, format!("{e:#}; fix bindir")))?;
    if !out.status.success() {
        return Err(src.err(
            entry,
            format!(
                "{} --version failed ({}); set bindir to a working build",
                binary.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Rendered settings: (name, value as config text).
type Settings = Vec<(String, String)>;

/// The text of the base config file of a set, if it names one.
fn read_base_text(
    src: &Source,
    at: &dyn Fn(&str) -> String,
    set: &ConfigSetEntry,
) -> Result<Option<String>> {
    let Some(p) = &set.base else {
        return Ok(None);
    };
    let path = src.resolve(p);
    std::fs::read_to_string(&path).map(Some).map_err(|e| {
        src.err(
            &at(".base"),
            format!(
                "cannot read {} ({e}); fix the path (relative to the matrix file)",
                path.display()
            ),
        )
    })
}

/// A generated config file: the base text, then the settings under a comment naming them.
fn config_text(
    base_text: Option<&str>,
    postgres: bool,
    settings: &[(String, String)],
    title: &str,
) -> String {
    let section_header = if postgres { "" } else { "[mysqld]\n" };
    let mut t = base_text.unwrap_or_default().to_string();
    if !t.is_empty() && !t.ends_with('\n') {
        t.push('\n');
    }
    t.push_str(&format!("\n# ibench matrix: {title}\n{section_header}"));
    for (k, v) in settings {
        t.push_str(&format!("{k} = {v}\n"));
    }
    t
}

/// The settings of one variant, rendered as config text.
fn variant_settings(
    src: &Source,
    entry: &str,
    table: &toml::Table,
    postgres: bool,
) -> Result<Settings> {
    if table.is_empty() {
        return Err(src.err(
            entry,
            "no settings; give at least one, e.g. { wal_compression = \"lz4\" }",
        ));
    }
    table
        .iter()
        .map(|(k, v)| {
            if let Some(problem) = file::setting_problem(k, v) {
                return Err(src.err(entry, problem));
            }
            file::setting_text(v, postgres)
                .map(|t| (k.clone(), t))
                .ok_or_else(|| {
                    src.err(
                        entry,
                        format!(
                            "setting {k} is not a string, number or boolean; write its value as one"
                        ),
                    )
                })
        })
        .collect()
}

/// The names of an axis' values: given, or `SETTING-VALUE`.
pub(super) fn axis_names(src: &Source, entry: &str, axis: &AxisEntry) -> Result<Vec<String>> {
    let AxisEntry {
        setting,
        values,
        names,
    } = axis;
    if values.is_empty() {
        return Err(src.err(
            entry,
            "the axis has no values; give at least one in values = [...] or remove the axis",
        ));
    }
    let names: Vec<String> = match names {
        Some(n) if n.len() != values.len() => {
            return Err(src.err(
                entry,
                format!(
                    "{} names for {} values; give one name per value",
                    n.len(),
                    values.len()
                ),
            ));
        }
        Some(n) => n.clone(),
        None => values
            .iter()
            .map(|v| format!("{setting}-{}", file::value_name(v)))
            .collect(),
    };
    for n in &names {
        file::check_name(src, entry, n)?;
    }
    Ok(names)
}

/// Refuse axes whose product (of `lengths`, the axes' value counts) has more `what`
/// (configs, variants) than a matrix may have cells, before anything is allocated.
pub(super) fn check_axes_product(
    src: &Source,
    entry: &str,
    lengths: impl Iterator<Item = usize>,
    what: &str,
) -> Result<()> {
    let product = lengths
        .into_iter()
        .try_fold(1usize, usize::checked_mul)
        .unwrap_or(usize::MAX);
    if product > MAX_CELLS {
        return Err(src.err(
            entry,
            format!(
                "the axes give {} {what}, more than a matrix may have ({MAX_CELLS} cells); shrink the axes' values",
                if product == usize::MAX { "too many".to_string() } else { product.to_string() }
            ),
        ));
    }
    Ok(())
}

/// The cartesian product of the axes: (value names, settings) per combination.
fn axis_product(
    src: &Source,
    at: &dyn Fn(&str) -> String,
    axes: &[AxisEntry],
    postgres: bool,
) -> Result<Vec<(Vec<String>, Settings)>> {
    check_axes_product(
        src,
        &at(".axes"),
        axes.iter().map(|a| a.values.len()),
        "configs",
    )?;
    let mut combos: Vec<(Vec<String>, Settings)> = vec![(Vec::new(), Vec::new())];
    for (i, axis) in axes.iter().enumerate() {
        let entry = at(&format!(".axes[{i}] ({})", axis.setting));
        let names = axis_names(src, &entry, axis)?;
        let mut next = Vec::new();
        for (done_names, done_settings) in &combos {
            for (v, n) in axis.values.iter().zip(&names) {
                if let Some(problem) = file::setting_problem(&axis.setting, v) {
                    return Err(src.err(&entry, problem));
                }
                let text = file::setting_text(v, postgres).ok_or_else(|| {
                    src.err(
                        &entry,
                        "a value is not a string, number or boolean; write it as one",
                    )
                })?;
                let mut nn = done_names.clone();
                nn.push(n.clone());
                let mut ss = done_settings.clone();
                ss.push((axis.setting.clone(), text));
                next.push((nn, ss));
            }
        }
        combos = next;
    }
    Ok(combos)
}

/// The configs of one set, in order: base, variants, then the axes' product.
fn resolve_config_set(
    src: &Source,
    set_name: &str,
    set: &ConfigSetEntry,
    postgres: bool,
) -> Result<Vec<PlanConfig>> {
    let at = |rest: &str| format!("configs.{set_name}{rest}");
    let base_text = read_base_text(src, &at, set)?;
    let mut out: Vec<PlanConfig> = Vec::new();
    if set.include_base {
        out.push(PlanConfig {
            name: "base".into(),
            entry: at(".base"),
            text: base_text.clone(),
        });
    }
    for (name, value) in &set.variants {
        let entry = at(&format!(".variants.{name}"));
        file::check_name(src, &at(".variants"), name)?;
        let toml::Value::Table(table) = value else {
            return Err(src.err(&entry, "a variant is a table of settings, e.g. lz4 = { wal_compression = \"lz4\" }; write it as one"));
        };
        let settings = variant_settings(src, &entry, table, postgres)?;
        out.push(PlanConfig {
            name: name.clone(),
            entry: entry.clone(),
            text: Some(config_text(
                base_text.as_deref(),
                postgres,
                &settings,
                &format!("variant {name}"),
            )),
        });
    }
    if !set.axes.is_empty() {
        // Names joined with '_'.
        for (names, settings) in axis_product(src, &at, &set.axes, postgres)? {
            let name = names.join("_");
            out.push(PlanConfig {
                entry: at(&format!(".axes ({name})")),
                text: Some(config_text(
                    base_text.as_deref(),
                    postgres,
                    &settings,
                    &format!("axes {name}"),
                )),
                name,
            });
        }
    }
    let mut seen = BTreeSet::new();
    for c in &out {
        if !seen.insert(c.name.clone()) {
            return Err(src.err(
                &c.entry,
                format!(
                    "config name '{}' is used twice; rename the variant or the axis value names",
                    c.name
                ),
            ));
        }
    }
    if out.is_empty() {
        return Err(src.err(&at(""), "the set has no config (include_base = false and no variants or axes); add a variant or set include_base = true"));
    }
    Ok(out)
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

/// One server of the file: how to reach it, its label, its configs; every workload is checked
/// against its kind now, not hours later.
fn plan_server(
    src: &Source,
    name: &str,
    v: &toml::Value,
    sets: &[(String, ConfigSetEntry)],
    workloads: &[PlanWorkload],
) -> Result<PlanServer> {
    let entry = format!("servers.{name}");
    let s: ServerEntry = file::entry(src, "servers", name, v)?;
    let (source, label) = match &s.url {
        Some(url) => {
            if s.kind.is_some()
                || s.bindir.is_some()
                || !s.init_args.is_empty()
                || s.config_set.is_some()
            {
                return Err(src.err(&entry, "url is a server ibench does not manage: drop kind, bindir, init_args and config_set, or drop url"));
            }
            let kind = kind_of_url(url).map_err(|e| src.err(&entry, format!("{e}; fix url")))?;
            if kind == crate::backend::BackendKind::Sqlite && !url.contains(CELL_PLACEHOLDER) {
                return Err(src.err(
                    &entry,
                    format!(
                        "every cell of a SQLite server would share {url} (shards running at once collide, and each cell starts from the last one's tables); give each cell its own file: url = \"sqlite:DIR/{CELL_PLACEHOLDER}.db\""
                    ),
                ));
            }
            let source = ServerSource::Url {
                url: url.clone(),
                engine: s.engine,
            };
            (source, s.label.clone().unwrap_or_else(|| name.to_string()))
        }
        None => managed_source(src, &entry, &s)?,
    };
    let configs = server_configs(src, &entry, &s, &source, sets)?;
    for w in workloads {
        run_options(
            w,
            &placeholder_url(&source),
            source.engine(),
            std::path::Path::new("x"),
            "x",
            None,
            true,
        )
        .map_err(|e| {
            src.err(
                &format!("workloads.{}", w.name),
                format!("{e:#} (fix it in the workload)"),
            )
        })?;
    }
    Ok(PlanServer {
        name: name.to_string(),
        source,
        label,
        configs,
    })
}

/// A server ibench starts itself: its kind and binaries checked, its label from `--version`.
fn managed_source(src: &Source, entry: &str, s: &ServerEntry) -> Result<(ServerSource, String)> {
    let kind = match s.kind.as_deref() {
        Some("postgres") | Some("postgresql") => ServerKind::Postgres,
        Some("mariadb") | Some("mysql") => ServerKind::Mariadb,
        Some(other) => {
            return Err(src.err(
                entry,
                format!(
                    "unknown kind '{other}'; set kind = \"postgres\", \"mariadb\" or \"mysql\""
                ),
            ));
        }
        None => {
            return Err(src.err(entry, "no kind; set kind = \"postgres\", \"mariadb\" or \"mysql\" (or url for a server ibench does not manage)"));
        }
    };
    if kind == ServerKind::Postgres && s.engine.is_some() {
        return Err(src.err(
            entry,
            "engine applies to mariadb/mysql servers only; remove engine",
        ));
    }
    let Some(bindir) = &s.bindir else {
        let example = match kind {
            ServerKind::Postgres => "/usr/lib/postgresql/15/bin",
            ServerKind::Mariadb => "/usr/sbin",
        };
        return Err(src.err(entry, format!("no bindir; set bindir to the directory holding the {kind} binaries (e.g. {example})")));
    };
    let bindir = src.resolve(bindir);
    if !bindir.is_dir() {
        return Err(src.err(
            entry,
            format!("bindir {} does not exist; fix bindir", bindir.display()),
        ));
    }
    let engine = s.engine.unwrap_or(Engine::Innodb);
    let version = probe_version(src, entry, kind, &bindir)?;
    let label = s
        .label
        .clone()
        .unwrap_or_else(|| version_label(kind, engine, &version));
    let source = ServerSource::Managed {
        kind,
        engine,
        bindir,
        init_args: s.init_args.clone(),
    };
    Ok((source, label))
}

/// A server's configs: its `config_set` (or the set named after its kind), cut to `configs`.
fn server_configs(
    src: &Source,
    entry: &str,
    s: &ServerEntry,
    source: &ServerSource,
    sets: &[(String, ConfigSetEntry)],
) -> Result<Vec<PlanConfig>> {
    let set_name = match (&s.config_set, source) {
        (Some(n), _) => Some(n.clone()),
        (None, ServerSource::Managed { kind, .. }) => {
            let k = kind.name();
            sets.iter()
                .find(|(n, _)| n == k || (k == "mariadb" && n == "mysql"))
                .map(|(n, _)| n.clone())
        }
        (None, ServerSource::Url { .. }) => None,
    };
    let mut configs = match &set_name {
        Some(set_name) => {
            let Some((_, set)) = sets.iter().find(|(n, _)| n == set_name) else {
                return Err(src.err(entry, format!("config_set '{set_name}' is not defined; add [configs.{set_name}] or fix config_set")));
            };
            resolve_config_set(src, set_name, set, source.postgres_syntax())?
        }
        None => vec![PlanConfig {
            name: "base".into(),
            entry: entry.to_string(),
            text: None,
        }],
    };
    if let Some(only) = &s.configs {
        if let Some(c) = only.iter().find(|c| !configs.iter().any(|x| &x.name == *c)) {
            let there: Vec<&str> = configs.iter().map(|c| c.name.as_str()).collect();
            return Err(src.err(
                &format!("{entry}.configs"),
                format!(
                    "no config named '{c}' (there are: {}); fix the name",
                    there.join(", ")
                ),
            ));
        }
        configs.retain(|c| only.contains(&c.name));
    }
    Ok(configs)
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

/// A group's list of names (servers, configs or workloads), checked against the known ones.
fn check_known(
    src: &Source,
    entry: &str,
    what: &str,
    list: Option<&Vec<String>>,
    known: &[String],
) -> Result<()> {
    let Some(list) = list else {
        return Ok(());
    };
    if list.is_empty() {
        return Err(src.err(
            &format!("{entry}.{what}"),
            format!("the list is empty; name at least one or remove {what}"),
        ));
    }
    if let Some(x) = list.iter().find(|x| !known.contains(x)) {
        return Err(src.err(
            &format!("{entry}.{what}"),
            format!(
                "'{x}' is not defined (there are: {}); fix the name",
                known.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The groups of the file (or one group `all`), each with its members and base.
fn plan_groups(
    src: &Source,
    servers: &[PlanServer],
    workloads: &[PlanWorkload],
) -> Result<Vec<PlanGroup>> {
    let default_group = toml::Value::Table(toml::Table::new());
    let group_entries: Vec<(String, &toml::Value)> = if src.file.groups.is_empty() {
        vec![("all".to_string(), &default_group)]
    } else {
        src.file
            .groups
            .iter()
            .map(|(n, v)| (n.clone(), v))
            .collect()
    };
    let server_names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    let config_names: Vec<String> = servers
        .iter()
        .flat_map(|s| s.configs.iter().map(|c| c.name.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // A workload with axes is named by its own name (one report comparing its variants) or
    // by a variant's.
    let mut workload_names: Vec<String> = Vec::new();
    for w in workloads {
        let name = w.family.as_ref().unwrap_or(&w.name);
        if !workload_names.contains(name) {
            workload_names.push(name.clone());
        }
    }
    let known_workloads: Vec<String> = workload_names
        .iter()
        .cloned()
        .chain(
            workloads
                .iter()
                .filter(|w| w.family.is_some())
                .map(|w| w.name.clone()),
        )
        .collect();
    let mut groups = Vec::new();
    for (name, v) in group_entries {
        let entry = format!("groups.{name}");
        let g: GroupEntry = file::entry(src, "groups", &name, v)?;
        check_known(src, &entry, "servers", g.servers.as_ref(), &server_names)?;
        check_known(src, &entry, "configs", g.configs.as_ref(), &config_names)?;
        check_known(
            src,
            &entry,
            "workloads",
            g.workloads.as_ref(),
            &known_workloads,
        )?;
        let mut members = Vec::new();
        for s in servers {
            if g.servers.as_ref().is_some_and(|l| !l.contains(&s.name)) {
                continue;
            }
            for c in &s.configs {
                if g.configs.as_ref().is_none_or(|l| l.contains(&c.name)) {
                    members.push(format!("{}.{}", s.name, c.name));
                }
            }
        }
        if members.is_empty() {
            return Err(src.err(
                &entry,
                "no server has any of the group's configs; fix servers or configs",
            ));
        }
        let base = match g.base {
            Some(b) if members.contains(&b) => b,
            Some(b) => {
                return Err(src.err(&format!("{entry}.base"), format!("'{b}' is not in the group (its members: {}); set base = \"SERVER.CONFIG\" to one of them", members.join(", "))));
            }
            None => members[0].clone(),
        };
        groups.push(PlanGroup {
            name,
            members,
            workloads: g.workloads.unwrap_or_else(|| workload_names.clone()),
            base,
        });
    }
    Ok(groups)
}

/// Which part of the cells this host runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 0-based index.
    pub index: u32,
    /// Number of shards.
    pub count: u32,
}

impl Shard {
    /// The whole matrix.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// `I/N` with 0 ≤ I < N.
    pub fn parse(s: &str) -> Result<Shard> {
        let bad = || {
            anyhow::anyhow!(
                "--shard '{s}' is not I/N with 0 <= I < N (e.g. --shard 0/4); fix --shard"
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// The shard index from a scheduler: the task's own id, `JOB_COMPLETION_INDEX`
    /// (Kubernetes indexed Job) or `SLURM_ARRAY_TASK_ID` (Slurm job array, submitted as
    /// `--array=0-(N-1)`; a rerun of one shard is `--array=I`, and runs shard I). Refused when
    /// the id is not below `count`, naming the variable.
    pub fn from_env(count: u32, env: &dyn Fn(&str) -> Option<String>) -> Result<Shard> {
        if count == 0 {
            bail!("--shards must be at least 1");
        }
        let parse = |var: &str, v: String| -> Result<u32> {
            v.trim().parse::<u32>().map_err(|_| {
                anyhow::anyhow!(
                    "{var}='{v}' is not a shard index; fix the job's index or pass --shard I/N"
                )
            })
        };
        let (var, index) = if let Some(v) = env("JOB_COMPLETION_INDEX") {
            ("JOB_COMPLETION_INDEX", parse("JOB_COMPLETION_INDEX", v)?)
        } else if let Some(v) = env("SLURM_ARRAY_TASK_ID") {
            ("SLURM_ARRAY_TASK_ID", parse("SLURM_ARRAY_TASK_ID", v)?)
        } else {
            bail!(
                "--shards {count} needs the shard index from JOB_COMPLETION_INDEX (Kubernetes indexed Job) or SLURM_ARRAY_TASK_ID (Slurm job array), and neither is set; pass --shard I/{count} instead"
            );
        };
        if index >= count {
            bail!(
                "{var}={index} is not below --shards {count}: the task id is the shard index, so submit task ids 0 to {} (Slurm --array=0-{}, Kubernetes completions {count}) or fix --shards",
                count - 1,
                count - 1
            );
        }
        Ok(Shard { index, count })
    }

    /// A note when the scheduler's array does not cover `count` shards: a Slurm array whose
    /// task ids (`SLURM_ARRAY_TASK_MIN`..`_MAX`, `_COUNT` of them) are not exactly 0 to
    /// count-1, or a Kubernetes Job whose `JOB_COMPLETIONS` differs. Fine for the rerun of one
    /// shard, a mistake otherwise, so it is said, not refused.
    pub fn array_note(count: u32, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        let num = |k: &str| env(k).and_then(|v| v.trim().parse::<u32>().ok());
        if let (Some(min), Some(max)) = (num("SLURM_ARRAY_TASK_MIN"), num("SLURM_ARRAY_TASK_MAX")) {
            let tasks = num("SLURM_ARRAY_TASK_COUNT").unwrap_or(max.saturating_sub(min) + 1);
            if min != 0 || max + 1 != count || tasks != count {
                return Some(format!(
                    "note: the Slurm array has {tasks} task(s) with ids {min} to {max}, but --shards is {count}: only the shards with those ids run in this array (right for a rerun of one shard; otherwise submit --array=0-{})",
                    count - 1
                ));
            }
        }
        if let Some(n) = num("JOB_COMPLETIONS").filter(|&n| n != count) {
            return Some(format!(
                "note: the Job has {n} completions but --shards is {count}: set completions and parallelism to {count}"
            ));
        }
        None
    }

    /// What a results dir records of the shard that writes it: `I/N` and the hash of the
    /// plan's split (cell names and the shard of each), so a dir is never filled by another
    /// shard or another split.
    pub fn identity(&self, plan: &Plan) -> ShardIdentity {
        use sha2::{Digest, Sha256};
        let map = plan.shard_of_combos(self.count);
        let mut hasher = Sha256::new();
        for c in &plan.cells {
            hasher.update(c.name.as_bytes());
            hasher.update(map.get(&c.combo).copied().unwrap_or(0).to_le_bytes());
        }
        let digest = hasher.finalize();
        ShardIdentity {
            shard: self.to_string(),
            plan_hash: digest.iter().take(6).map(|b| format!("{b:02x}")).collect(),
        }
    }
}

/// The shard a results dir belongs to (`shard.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardIdentity {
    /// `I/N`.
    pub shard: String,
    /// Hash of the plan's cells and their split into N shards (12 hex digits).
    pub plan_hash: String,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Plan {
    /// The shard of each combination: longest estimated first onto the least-loaded shard
    /// (ties to the lowest index), so that the shards end at about the same time. All repeats of
    /// a combination go to one shard (its spread is then measured on one host). Deterministic:
    /// every host computes the same split from the same file, no coordinator.
    pub fn shard_of_combos(&self, count: u32) -> std::collections::BTreeMap<String, u32> {
        let mut combos: Vec<(String, f64, usize)> = Vec::new();
        for (i, c) in self.cells.iter().enumerate() {
            match combos.iter_mut().find(|(n, _, _)| *n == c.combo) {
                Some(x) => x.1 += c.estimate_seconds,
                None => combos.push((c.combo.clone(), c.estimate_seconds, i)),
            }
        }
        combos.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
        let mut load = vec![0.0f64; count.max(1) as usize];
        let mut out = std::collections::BTreeMap::new();
        for (name, est, _) in combos {
            let (k, _) = load
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
                .unwrap_or((0, &0.0));
            load[k] += est;
            out.insert(name, u32::try_from(k).unwrap_or(u32::MAX));
        }
        out
    }

    /// The cells of one shard, in run order.
    pub fn cells_of(&self, shard: Shard) -> Vec<&Cell> {
        let map = self.shard_of_combos(shard.count);
        self.cells
            .iter()
            .filter(|c| map.get(&c.combo).copied().unwrap_or(0) == shard.index)
            .collect()
    }

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
    fn labels_from_version_lines() {
        assert_eq!(
            version_label(
                ServerKind::Postgres,
                Engine::Innodb,
                "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)"
            ),
            "PostgreSQL 15.14"
        );
        assert_eq!(
            version_label(
                ServerKind::Mariadb,
                Engine::Rocksdb,
                "mariadbd  Ver 10.11.14-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)"
            ),
            "MariaDB 10.11.14 rocksdb"
        );
    }

    #[test]
    fn shard_parsing_and_environment() {
        assert_eq!(Shard::parse("1/3").unwrap(), Shard { index: 1, count: 3 });
        for bad in ["3/3", "x/2", "1", "0/0"] {
            assert!(
                Shard::parse(bad)
                    .unwrap_err()
                    .to_string()
                    .contains("--shard"),
                "{bad}"
            );
        }
        let env = |k: &str| match k {
            "SLURM_ARRAY_TASK_ID" => Some("3".to_string()),
            "SLURM_ARRAY_TASK_MIN" => Some("1".to_string()),
            _ => None,
        };
        // The task id is the shard index, whatever the array's first id.
        assert_eq!(
            Shard::from_env(4, &env).unwrap(),
            Shard { index: 3, count: 4 }
        );
        let err = Shard::from_env(3, &env).unwrap_err().to_string();
        assert!(
            err.contains("SLURM_ARRAY_TASK_ID=3 is not below --shards 3"),
            "{err}"
        );
        let k8s = |k: &str| (k == "JOB_COMPLETION_INDEX").then(|| "1".to_string());
        assert_eq!(
            Shard::from_env(2, &k8s).unwrap(),
            Shard { index: 1, count: 2 }
        );
        assert!(
            Shard::from_env(2, &|_| None)
                .unwrap_err()
                .to_string()
                .contains("--shard")
        );
        assert!(Shard::from_env(1, &k8s).is_err());
    }

    #[test]
    fn an_array_that_does_not_cover_the_shards_is_said() {
        let slurm = |min: &'static str, max: &'static str, n: &'static str| {
            move |k: &str| match k {
                "SLURM_ARRAY_TASK_MIN" => Some(min.to_string()),
                "SLURM_ARRAY_TASK_MAX" => Some(max.to_string()),
                "SLURM_ARRAY_TASK_COUNT" => Some(n.to_string()),
                _ => None,
            }
        };
        assert_eq!(Shard::array_note(2, &slurm("0", "1", "2")), None);
        // --array=0-1 --shards 3: shard 2 would never run.
        let note = Shard::array_note(3, &slurm("0", "1", "2")).unwrap();
        assert!(
            note.contains("2 task(s) with ids 0 to 1") && note.contains("--array=0-2"),
            "{note}"
        );
        // The rerun of one shard: said, and fine.
        assert!(
            Shard::array_note(2, &slurm("1", "1", "1"))
                .unwrap()
                .contains("rerun")
        );
        let k8s = |k: &str| (k == "JOB_COMPLETIONS").then(|| "3".to_string());
        assert!(Shard::array_note(2, &k8s).unwrap().contains("completions"));
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(duration_text(12.4), "12s");
        assert_eq!(duration_text(185.0), "3m05s");
        assert_eq!(duration_text(3720.0), "1h02m");
        assert_eq!(duration_text(2.0 * 86_400.0 + 3600.0), "2d01h00m");
    }
}
