//! The server-side metrics of the result contract: `run.json`'s `metrics` and
//! `steps[].metrics`, and the lines of `metrics.jsonl`. The sampler (`crate::sampler`) fills
//! them; the reports read them. Plain data: this module measures nothing.

use crate::results::target::{BackendKind, Engine};
use crate::stats::convert::count_f64;
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::counters::{Per, dbms_counters};
pub use super::location::{BlockDevice, MountInfo, ServerLocation, StorageLocation};
pub use super::metric::Metric;
pub use super::perf::{FunctionShare, PerfGroupRecord, PerfRecord, ProfileRecord};

/// File name of the per-second metrics time series inside a results directory.
pub const METRICS_FILE: &str = "metrics.jsonl";

/// File name of the server's settings inside a results directory.
pub const SETTINGS_FILE: &str = "server-settings.json";

/// Directory of the per-step DBMS statistics inside a results directory.
pub const STATS_DIR: &str = "stats";

/// Bytes in the GB of `dbgb1`, `dbgb2` and `rss` (2^30, as `du -g` and `free -g`).
pub const BYTES_PER_GB: f64 = 1_073_741_824.0;

/// Where a per-step figure is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shown {
    /// The terminal's server-efficiency table at the end of a run.
    pub terminal: bool,
    /// Each step's figures in a comparison report.
    pub report: bool,
    /// A candidate of the diagnosis (a per-op cost that can explain a throughput change).
    pub diagnosis: bool,
    /// The microbenchmark report's per-operation tables, under this short name.
    pub micro: Option<&'static str>,
    /// The time series for change detection (`ibench report --format otava|nyrkio`).
    pub series: bool,
}

/// What a figure reads: the host (`/proc`, the block device, ibench itself), which needs the
/// server on this host, or the DBMS's own counters, which any server reached over SQL has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `/proc`, the block device, ibench's own clock and CPU.
    Host,
    /// PostgreSQL's statistics views.
    Postgres,
    /// MySQL/MariaDB's `SHOW GLOBAL STATUS`, whatever the engine.
    Mysql,
    /// InnoDB's status counters.
    Innodb,
    /// MyRocks' status counters.
    Rocksdb,
}

impl Source {
    /// Whether a figure of this source can be measured on a server of `backend` running the
    /// run's tables on `engine` (the MySQL family's default engine is InnoDB).
    pub fn applies(self, backend: BackendKind, engine: Option<Engine>) -> bool {
        match self {
            Source::Host => true,
            Source::Postgres => backend == BackendKind::Postgres,
            Source::Mysql => backend == BackendKind::Mysql,
            Source::Innodb => {
                backend == BackendKind::Mysql && engine.unwrap_or(Engine::Innodb) == Engine::Innodb
            }
            Source::Rocksdb => backend == BackendKind::Mysql && engine == Some(Engine::Rocksdb),
        }
    }
}

/// One per-step figure: its name in run.json, what it means, how it is shown and read. Every
/// table of figures (the sampler's terminal table, the reports, the diagnosis, the
/// microbenchmark report) reads [`METRICS`]; adding a figure is one line there.
#[derive(Clone, Copy, Debug)]
pub struct MetricDef {
    /// Its name (`cpupq`).
    pub name: &'static str,
    /// Its unit in the time series (`us/op`, `bytes/row`).
    pub unit: &'static str,
    /// What it is, with its unit (`server CPU µs per op`).
    pub meaning: &'static str,
    /// A short form for diagnosis lines (`server CPU/op`).
    pub short: &'static str,
    /// Decimals in the terminal table.
    pub decimals: usize,
    /// Whether less is better (a cost) rather than more (a rate).
    pub lower_is_better: bool,
    /// Where it is shown.
    pub shown: Shown,
    /// What it reads.
    pub source: Source,
    /// Its value in a step's metrics, or why there is none.
    pub get: fn(&StepMetrics) -> Metric,
}

const fn shown(
    terminal: bool,
    report: bool,
    diagnosis: bool,
    micro: Option<&'static str>,
) -> Shown {
    Shown {
        terminal,
        report,
        diagnosis,
        micro,
        series: false,
    }
}

/// The figures the sampler reads from the host and ibench itself, in the order the tables
/// show them.
const HOST_METRICS: [MetricDef; 17] = [
    MetricDef {
        name: "cpupq",
        unit: "us/op",
        meaning: "server CPU µs per op",
        short: "server CPU/op",
        decimals: 1,
        lower_is_better: true,
        shown: shown(true, true, true, Some("cpu/o")),
        source: Source::Host,
        get: |m| m.cpupq.clone(),
    },
    MetricDef {
        name: "ccpupq",
        unit: "us/op",
        meaning: "ibench (client) CPU µs per op",
        short: "client CPU/op",
        decimals: 1,
        lower_is_better: true,
        shown: shown(true, false, true, None),
        source: Source::Host,
        get: |m| m.ccpupq.clone(),
    },
    MetricDef {
        name: "hcpupq",
        unit: "us/op",
        meaning: "whole-host CPU µs per op",
        short: "host CPU/op",
        decimals: 1,
        lower_is_better: true,
        shown: shown(true, true, true, None),
        source: Source::Host,
        get: |m| m.hcpupq.clone(),
    },
    MetricDef {
        name: "rpq",
        unit: "reads/op",
        meaning: "storage reads per op",
        short: "reads/op",
        decimals: 3,
        lower_is_better: true,
        shown: shown(true, true, true, Some("r/o")),
        source: Source::Host,
        get: |m| m.rpq.clone(),
    },
    MetricDef {
        name: "rkbpq",
        unit: "KB/op",
        meaning: "KB read from storage per op",
        short: "KB read/op",
        decimals: 3,
        lower_is_better: true,
        shown: shown(true, true, true, Some("rKB/o")),
        source: Source::Host,
        get: |m| m.rkbpq.clone(),
    },
    MetricDef {
        name: "wpi",
        unit: "writes/row",
        meaning: "storage writes per inserted row",
        short: "writes/row",
        decimals: 3,
        lower_is_better: true,
        shown: shown(true, true, true, None),
        source: Source::Host,
        get: |m| m.wpi.clone(),
    },
    MetricDef {
        name: "wkbpi",
        unit: "KB/row",
        meaning: "KB written to storage per inserted row",
        short: "KB written/row",
        decimals: 3,
        lower_is_better: true,
        shown: shown(true, true, true, None),
        source: Source::Host,
        get: |m| m.wkbpi.clone(),
    },
    MetricDef {
        name: "server_wkbpi",
        unit: "KB/row",
        meaning: "KB the server's own processes wrote (write_bytes: WAL, data files, logs) per inserted row; unlike wkbpi not shared with the rest of the host",
        short: "server KB written/row",
        decimals: 3,
        lower_is_better: true,
        shown: shown(false, false, true, None),
        source: Source::Host,
        get: server_kb_written_per_row,
    },
    MetricDef {
        name: "wkbpq",
        unit: "KB/op",
        meaning: "KB written to storage per op",
        short: "KB written/op",
        decimals: 3,
        lower_is_better: true,
        shown: shown(false, false, false, Some("wKB/o")),
        source: Source::Host,
        get: |m| {
            m.totals
                .device_write_bytes
                .per(count_f64(m.ops), "no ops in the step")
                .scale(1.0 / 1024.0)
        },
    },
    MetricDef {
        name: "csps",
        unit: "1/s",
        meaning: "context switches per second",
        short: "context switches/s",
        decimals: 0,
        lower_is_better: true,
        shown: shown(true, true, false, None),
        source: Source::Host,
        get: |m| m.csps.clone(),
    },
    MetricDef {
        name: "cspq",
        unit: "1/op",
        meaning: "context switches per op",
        short: "context switches/op",
        decimals: 2,
        lower_is_better: true,
        shown: shown(true, true, true, Some("cs/o")),
        source: Source::Host,
        get: |m| m.cspq.clone(),
    },
    MetricDef {
        name: "dbgb1",
        unit: "GB",
        meaning: "logical database size at step end, GB",
        short: "database GB",
        decimals: 3,
        lower_is_better: true,
        shown: shown(true, true, false, None),
        source: Source::Host,
        get: |m| m.dbgb1.clone(),
    },
    MetricDef {
        name: "dbgb2",
        unit: "GB",
        meaning: "data directory size on disk at step end, GB",
        short: "data dir GB",
        decimals: 3,
        lower_is_better: true,
        shown: shown(true, true, false, None),
        source: Source::Host,
        get: |m| m.dbgb2.clone(),
    },
    MetricDef {
        name: "rss",
        unit: "GB",
        meaning: "server resident memory, max over the step, GB",
        short: "server RSS GB",
        decimals: 3,
        lower_is_better: true,
        shown: shown(true, true, false, None),
        source: Source::Host,
        get: |m| m.rss.clone(),
    },
    MetricDef {
        name: "maxop",
        unit: "s",
        meaning: "max response time of the step's op, seconds",
        short: "max response time",
        decimals: 3,
        lower_is_better: true,
        shown: shown(true, false, false, None),
        source: Source::Host,
        get: |m| m.maxop.clone(),
    },
    MetricDef {
        name: "p50",
        unit: "per s",
        meaning: "per-second rate at the median",
        short: "median rate",
        decimals: 0,
        lower_is_better: false,
        shown: shown(true, false, false, None),
        source: Source::Host,
        get: |m| m.p50.clone(),
    },
    MetricDef {
        name: "p1low",
        unit: "per s",
        meaning: "per-second rate exceeded in 99% of seconds",
        short: "1% low rate",
        decimals: 0,
        lower_is_better: false,
        shown: shown(true, false, false, None),
        source: Source::Host,
        get: |m| m.p1low.clone(),
    },
];

/// How a DBMS counter is shown: in the terminal's DBMS table, the reports, the time series,
/// and, for a cost, among the diagnosis's candidates.
const fn dbms_shown(per: Per) -> Shown {
    Shown {
        terminal: true,
        report: true,
        diagnosis: per.is_cost(),
        micro: None,
        series: true,
    }
}

dbms_counters!();

impl DbmsMetrics {
    /// The figures of a step recorded before ibench read the DBMS's counters.
    pub fn not_recorded() -> DbmsMetrics {
        DbmsMetrics::all_na("not recorded: the run predates ibench's DBMS counters")
    }
}

/// How many figures there are.
const METRIC_COUNT: usize = HOST_METRICS.len() + DBMS_METRICS.len();

/// Every per-step figure, in the order the tables show them: the host's, then the DBMS
/// counters of [`super::counters`]' table.
pub const METRICS: [MetricDef; METRIC_COUNT] = all_metrics();

const fn all_metrics() -> [MetricDef; METRIC_COUNT] {
    let mut out = [HOST_METRICS[0]; METRIC_COUNT];
    let mut i = 0;
    while i < METRIC_COUNT {
        out[i] = if i < HOST_METRICS.len() {
            HOST_METRICS[i]
        } else {
            DBMS_METRICS[i - HOST_METRICS.len()]
        };
        i += 1;
    }
    out
}

/// KB the server's own processes wrote (their `write_bytes`: WAL, data files, logs) per
/// inserted row. Unlike `wkbpi` (the data's block device, shared with anything else on the
/// host) it counts only the server.
fn server_kb_written_per_row(m: &StepMetrics) -> Metric {
    m.totals
        .server_write_bytes
        .per(count_f64(m.inserted_rows), "no rows inserted in this step")
        .scale(1.0 / 1024.0)
}

/// The figure named `name`.
pub fn metric_def(name: &str) -> Option<&'static MetricDef> {
    METRICS.iter().find(|d| d.name == name)
}

/// A file the sampler saved beside run.json, or why it could not. Serialised as
/// `{"file": "stats/l.i0.json"}` or `{"na": "reason"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SavedFile {
    /// Path relative to the results directory.
    File(String),
    /// Not saved, and why.
    Na(String),
}

impl SavedFile {
    /// The path, when saved.
    pub fn path(&self) -> Option<&str> {
        match self {
            SavedFile::File(p) => Some(p),
            SavedFile::Na(_) => None,
        }
    }
}

impl From<Result<String, String>> for SavedFile {
    fn from(r: Result<String, String>) -> Self {
        match r {
            Ok(p) => SavedFile::File(p),
            Err(e) => SavedFile::Na(e),
        }
    }
}

/// Where the sampler looked, and the run's totals: `run.json`'s `metrics` object.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunMetrics {
    /// Name of the time series file beside run.json.
    pub metrics_file: String,
    /// Seconds between samples.
    pub sample_interval_seconds: f64,
    /// Seconds between size readings in the time series (sizes are also read at step end).
    pub size_interval_seconds: f64,
    /// The server's processes: how they were found, or why not.
    pub server: ServerLocation,
    /// The server's storage: data paths and block device, or why not.
    pub storage: StorageLocation,
    /// The server's settings file, or why there is none.
    pub settings_file: SavedFile,
    /// Whether `--perf` was asked for.
    pub perf: bool,
    /// Seconds of each step `--profile-server` profiles; `None` when not asked for.
    #[serde(default)]
    pub profile_seconds: Option<f64>,
    /// Totals from the first to the last sample of the run.
    pub totals: Option<Totals>,
    /// Sampling errors seen during the run (first occurrence of each, at most 20).
    pub errors: Vec<String>,
}

/// Counter deltas over an interval (a step, or the whole run).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Totals {
    /// Length of the interval, seconds (by the sampler's clock).
    pub seconds: f64,
    /// CPU (user + sys) of the server's process tree, reaped children included, seconds.
    pub server_cpu_seconds: Metric,
    /// Busy CPU of the whole host (user + nice + system + irq + softirq), seconds.
    pub host_cpu_seconds: Metric,
    /// ibench's own CPU (getrusage), seconds.
    pub client_cpu_seconds: Metric,
    /// Context switches on the host.
    pub context_switches: Metric,
    /// Reads completed by the data's block device.
    pub device_reads: Metric,
    /// Bytes read by the data's block device.
    pub device_read_bytes: Metric,
    /// Writes completed by the data's block device.
    pub device_writes: Metric,
    /// Bytes written by the data's block device.
    pub device_write_bytes: Metric,
    /// `read_bytes` of `/proc/PID/io` summed over the server's tree.
    pub server_read_bytes: Metric,
    /// `write_bytes` of `/proc/PID/io` summed over the server's tree.
    pub server_write_bytes: Metric,
    /// Largest server memory seen (see `TreeReading::memory` in the sampler), bytes.
    pub server_memory_max_bytes: Metric,
}

/// Logical size of the database as the DBMS itself reports it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DbSize {
    /// The whole database (Postgres `pg_database_size`, MySQL the schema's
    /// `data_length + index_length`, SQLite `page_count * page_size`), bytes.
    pub total_bytes: u64,
    /// Per benchmark table: table + indexes (+ TOAST for Postgres), bytes. Tables the DBMS
    /// cannot size are left out.
    pub tables: std::collections::BTreeMap<String, u64>,
    /// How it was measured, e.g. `pg_database_size, pg_total_relation_size`.
    pub source: String,
}

/// The per-op metrics of one step (spec section 5): `run.json`'s `steps[].metrics`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepMetrics {
    /// What an op is in this step: `inserted row`, `indexed row` or `query`.
    pub op: String,
    /// Ops in the step.
    pub ops: u64,
    /// Rows inserted in the step (the divisor of `wpi`, `wkbpi`).
    pub inserted_rows: u64,
    /// Server CPU µs per op.
    pub cpupq: Metric,
    /// Client (ibench) CPU µs per op.
    pub ccpupq: Metric,
    /// Whole-host CPU µs per op.
    pub hcpupq: Metric,
    /// Storage reads per op.
    pub rpq: Metric,
    /// KB (1024 bytes) read from storage per op.
    pub rkbpq: Metric,
    /// Storage writes per inserted row.
    pub wpi: Metric,
    /// KB written to storage per inserted row.
    pub wkbpi: Metric,
    /// Host context switches per second.
    pub csps: Metric,
    /// Host context switches per op.
    pub cspq: Metric,
    /// Logical database size from the DBMS at step end, GB.
    pub dbgb1: Metric,
    /// Size of the data directory on disk at step end, GB.
    pub dbgb2: Metric,
    /// Server resident memory, GB, max over the step.
    pub rss: Metric,
    /// Max response time of the step's op, seconds.
    pub maxop: Metric,
    /// Per-second rate at the median.
    pub p50: Metric,
    /// Per-second rate exceeded in 99% of seconds.
    pub p1low: Metric,
    /// The raw counter deltas over the step.
    pub totals: Totals,
    /// Logical size per table at step end, as the DBMS reports it.
    pub db_size: Option<DbSize>,
    /// The DBMS's statistics saved at step end (path relative to the results dir), or why not.
    pub stats_file: SavedFile,
    /// `perf stat` counters per op, when `--perf` was given.
    pub perf: Option<PerfRecord>,
    /// Where the server's CPU went, when `--profile-server` was given.
    #[serde(default)]
    pub profile: Option<ProfileRecord>,
    /// The DBMS's own counters over the step (absent in runs before they were read).
    #[serde(default = "DbmsMetrics::not_recorded")]
    pub dbms: DbmsMetrics,
}

/// One line of `metrics.jsonl`: one sample interval. Figures that are n/a for the run are
/// absent (the reasons are in run.json's `metrics`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SampleLine {
    /// Seconds since the sampler started, at the end of the interval.
    pub t: f64,
    /// The step running, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// Length of the interval, seconds.
    pub interval_seconds: f64,
    /// Server tree CPU in the interval, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_cpu_seconds: Option<f64>,
    /// Host busy CPU in the interval, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_cpu_seconds: Option<f64>,
    /// ibench's CPU in the interval, seconds.
    pub client_cpu_seconds: f64,
    /// Host context switches in the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_switches: Option<u64>,
    /// Device reads in the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_reads: Option<u64>,
    /// Device bytes read in the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_read_bytes: Option<u64>,
    /// Device writes in the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_writes: Option<u64>,
    /// Device bytes written in the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_write_bytes: Option<u64>,
    /// Server tree `read_bytes` in the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_read_bytes: Option<u64>,
    /// Server tree `write_bytes` in the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_write_bytes: Option<u64>,
    /// Server memory at the sample (sum over the tree), bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_memory_bytes: Option<u64>,
    /// Processes in the server tree at the sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_processes: Option<u32>,
    /// Logical database size, bytes (every few seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db_size_bytes: Option<u64>,
    /// Data directory size on disk, bytes (every few seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir_bytes: Option<u64>,
}

/// Read every line of a results directory's `metrics.jsonl`.
pub fn read_metrics(dir: &Path) -> anyhow::Result<Vec<SampleLine>> {
    super::json_file::read_json_lines(&dir.join(METRICS_FILE))
}

/// Why the server's figures are n/a for an embedded DBMS. It says nothing about which figure
/// holds SQLite's own cost: that differs per figure (its CPU is in ccpupq, its memory in
/// ibench's own), so the efficiency table says it once, on its `server:` line.
pub const EMBEDDED_NA: &str = "SQLite runs inside ibench: there is no server process";

/// The DBMS's and the server's work per op that the check judges: a name of
/// [`METRICS`] and its unit. Whether the host can move it: the server's CPU
/// per op can (steal, a slower clock), the DBMS's counters cannot.
pub const WORK_METRICS: [(&str, &str, bool); 8] = [
    ("cpupq", "µs/op", true),
    ("walbpi", "bytes/row", false),
    ("fpipi", "FPIs/row", false),
    ("shhpq", "blocks/op", false),
    ("shrpq", "blocks/op", false),
    ("redobpi", "bytes/row", false),
    ("rowspq", "rows/op", false),
    ("rbwpi", "bytes/row", false),
];

/// The perf counters per op the check judges, where `--perf` ran.
pub const PERF_EVENTS: [&str; 2] = ["instructions", "cycles"];

/// Whether `name` (a name of [`METRICS`] or a perf event) is the DBMS's work per op that
/// `ibench check` judges ([`WORK_METRICS`], [`PERF_EVENTS`]): a figure one run a side may
/// decide. The others (the whole host's CPU, context switches, the client's CPU, storage IO
/// per op) move with the host.
pub fn judged_work(name: &str) -> bool {
    WORK_METRICS.iter().any(|(n, _, _)| *n == name) || PERF_EVENTS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_metric_table_serves_every_consumer() {
        // The terminal shows the published columns, in their order.
        let terminal: Vec<&str> = METRICS
            .iter()
            .filter(|d| d.shown.terminal && d.source == Source::Host)
            .map(|d| d.name)
            .collect();
        assert_eq!(
            terminal,
            [
                "cpupq", "ccpupq", "hcpupq", "rpq", "rkbpq", "wpi", "wkbpi", "csps", "cspq",
                "dbgb1", "dbgb2", "rss", "maxop", "p50", "p1low"
            ]
        );
        // The diagnosis looks only at costs; names are unique.
        assert!(
            METRICS
                .iter()
                .filter(|d| d.shown.diagnosis)
                .all(|d| d.lower_is_better)
        );
        let mut names: Vec<&str> = METRICS.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METRICS.len());
        assert_eq!(
            metric_def("cpupq").map(|d| d.shown.micro),
            Some(Some("cpu/o"))
        );
    }

    /// Step metrics whose every figure is n/a but the DBMS's `dbms`.
    fn step_with(dbms: DbmsMetrics) -> StepMetrics {
        let na = serde_json::json!({"na": "x"});
        let totals: serde_json::Map<String, serde_json::Value> = [
            "server_cpu_seconds",
            "host_cpu_seconds",
            "client_cpu_seconds",
            "context_switches",
            "device_reads",
            "device_read_bytes",
            "device_writes",
            "device_write_bytes",
            "server_read_bytes",
            "server_write_bytes",
            "server_memory_max_bytes",
        ]
        .iter()
        .map(|k| (k.to_string(), na.clone()))
        .chain([("seconds".to_string(), serde_json::json!(1.0))])
        .collect();
        let mut step = serde_json::json!({
            "op": "inserted row", "ops": 1, "inserted_rows": 1, "totals": totals,
            "db_size": null, "stats_file": {"na": "x"}, "perf": null
        });
        for d in METRICS.iter().filter(|d| d.source == Source::Host) {
            step[d.name] = na.clone();
        }
        let mut m: StepMetrics = serde_json::from_value(step).unwrap();
        assert_eq!(
            m.dbms,
            DbmsMetrics::not_recorded(),
            "the default of older runs"
        );
        m.dbms = dbms;
        m
    }

    #[test]
    fn the_docs_table_of_counters_is_the_declared_one() {
        let rows: String = DBMS_METRICS
            .iter()
            .map(|d| format!("| `{}` | {} | {} |\n", d.name, d.unit, d.meaning))
            .collect();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/results.md");
        let docs = std::fs::read_to_string(path).expect("docs/results.md");
        assert!(
            docs.contains(&rows),
            "docs/results.md's table of steps[].metrics.dbms must list, after its `counters` \
             row, exactly these rows:\n{rows}"
        );
    }

    #[test]
    fn the_schema_of_the_counters_is_the_declared_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/run.schema.json");
        let text = std::fs::read_to_string(path).expect("docs/run.schema.json");
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        let dbms = &schema["$defs"]["dbms_metrics"];
        let declared: Vec<(&str, &str)> =
            DBMS_METRICS.iter().map(|d| (d.name, d.meaning)).collect();
        let properties: Vec<(&str, &str)> = dbms["properties"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| *k != "counters")
            .map(|(k, v)| (k.as_str(), v["description"].as_str().unwrap_or("")))
            .collect();
        let mut sorted = declared.clone();
        sorted.sort_unstable();
        assert_eq!(properties, sorted, "docs/run.schema.json's dbms_metrics");
        let required: Vec<&str> = dbms["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        let names: Vec<&str> = declared.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            required[1..],
            names,
            "its required list, in the table's order"
        );
    }

    #[test]
    fn the_table_gives_each_counter_its_divisor_and_its_place_in_the_diagnosis() {
        let mut m = DbmsMetrics::all_na("x");
        let per: Vec<Per> = m.figures_mut().iter().map(|(p, _)| *p).collect();
        assert_eq!(per.len(), DBMS_COUNTERS);
        let tail: Vec<&str> = METRICS[METRICS.len() - DBMS_COUNTERS..]
            .iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(
            tail,
            DBMS_METRICS.map(|d| d.name),
            "METRICS ends with the counters"
        );
        for (d, p) in DBMS_METRICS.iter().zip(per) {
            assert_eq!(d.shown.diagnosis, p != Per::Step, "{}", d.name);
            let suffix = match p {
                Per::Op => d.name.ends_with("pq"),
                Per::Row => d.name.ends_with("pi"),
                Per::Step => !d.name.ends_with("pq") && !d.name.ends_with("pi"),
            };
            assert!(suffix, "{} is {p:?}", d.name);
        }
    }

    #[test]
    fn every_dbms_counter_has_a_field_a_unit_and_a_family() {
        // Each DBMS figure reads its own field of DbmsMetrics.
        for d in METRICS.iter().filter(|d| d.source != Source::Host) {
            assert!(
                d.shown.terminal && d.shown.series && !d.unit.is_empty(),
                "{}",
                d.name
            );
            assert!(
                d.name.len() <= 8,
                "{} is wider than a terminal column",
                d.name
            );
            let mut json = serde_json::to_value(DbmsMetrics::not_recorded()).unwrap();
            assert!(json.get(d.name).is_some(), "{} is no field", d.name);
            json[d.name] = serde_json::json!({"value": 1.0});
            let step = step_with(serde_json::from_value(json).unwrap());
            assert_eq!((d.get)(&step), Metric::Value(1.0), "{}", d.name);
        }
        assert!(Source::Innodb.applies(BackendKind::Mysql, None));
        assert!(!Source::Rocksdb.applies(BackendKind::Mysql, None));
        assert!(!Source::Postgres.applies(BackendKind::Mysql, Some(Engine::Rocksdb)));
        assert!(Source::Mysql.applies(BackendKind::Mysql, Some(Engine::Rocksdb)));
    }
}
