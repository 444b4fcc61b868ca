//! The server-side metrics of the result contract: `run.json`'s `metrics` and
//! `steps[].metrics`, and the lines of `metrics.jsonl`. The sampler (`crate::sampler`) fills
//! them; the reports read them. Plain data: this module measures nothing.

use crate::results::target::{BackendKind, Engine};
use crate::stats::convert::count_f64;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// File name of the per-second metrics time series inside a results directory.
pub const METRICS_FILE: &str = "metrics.jsonl";

/// File name of the server's settings inside a results directory.
pub const SETTINGS_FILE: &str = "server-settings.json";

/// Directory of the per-step DBMS statistics inside a results directory.
pub const STATS_DIR: &str = "stats";

/// Bytes in the GB of `dbgb1`, `dbgb2` and `rss` (2^30, as `du -g` and `free -g`).
pub const BYTES_PER_GB: f64 = 1_073_741_824.0;

/// A figure that was measured, or why it was not. Serialised as `{"value": 1.23}` or
/// `{"na": "reason"}`: never 0 for unmeasured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// The measured value.
    Value(f64),
    /// Not measured, and why.
    Na(String),
}

impl Metric {
    /// The value, if measured.
    pub fn value(&self) -> Option<f64> {
        match self {
            Metric::Value(v) => Some(*v),
            Metric::Na(_) => None,
        }
    }

    pub(crate) fn na(reason: impl Into<String>) -> Metric {
        Metric::Na(reason.into())
    }

    pub(crate) fn from(r: &Result<f64, String>) -> Metric {
        match r {
            Ok(v) => Metric::Value(*v),
            Err(e) => Metric::Na(e.clone()),
        }
    }

    /// `self / by`, n/a when either is n/a or `by` is 0 (with `zero_reason`).
    pub(crate) fn per(&self, by: f64, zero_reason: &str) -> Metric {
        match self {
            Metric::Na(r) => Metric::Na(r.clone()),
            Metric::Value(_) if by <= 0.0 => Metric::na(zero_reason),
            Metric::Value(v) => Metric::Value(v / by),
        }
    }

    pub(crate) fn scale(&self, k: f64) -> Metric {
        match self {
            Metric::Value(v) => Metric::Value(v * k),
            na => na.clone(),
        }
    }
}

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

/// How a DBMS counter is shown: in the terminal's DBMS table, the reports, the time series,
/// and, for a per-op cost, among the diagnosis's candidates.
const fn dbms_shown(diagnosis: bool) -> Shown {
    Shown {
        terminal: true,
        report: true,
        diagnosis,
        micro: None,
        series: true,
    }
}

/// A DBMS counter's entry: a cost (lower is better), shown as [`dbms_shown`] says.
#[allow(clippy::too_many_arguments)]
const fn dbms_metric(
    name: &'static str,
    unit: &'static str,
    meaning: &'static str,
    short: &'static str,
    decimals: usize,
    diagnosis: bool,
    source: Source,
    get: fn(&StepMetrics) -> Metric,
) -> MetricDef {
    MetricDef {
        name,
        unit,
        meaning,
        short,
        decimals,
        lower_is_better: true,
        shown: dbms_shown(diagnosis),
        source,
        get,
    }
}

/// Every per-step figure, in the order the tables show them.
pub const METRICS: [MetricDef; 45] = [
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
    dbms_metric(
        "walbpi",
        "bytes/row",
        "WAL bytes per inserted row: the advance of the WAL insert position over the step, every record of the cluster",
        "WAL bytes/row",
        1,
        true,
        Source::Postgres,
        |m| m.dbms.walbpi.clone(),
    ),
    dbms_metric(
        "fpipi",
        "FPIs/row",
        "full-page images written to WAL per inserted row (pg_stat_wal, PostgreSQL 14 and later)",
        "full-page images/row",
        4,
        true,
        Source::Postgres,
        |m| m.dbms.fpipi.clone(),
    ),
    dbms_metric(
        "shrpq",
        "blocks/op",
        "shared-buffer misses per op: blocks read into shared buffers in the run's database (pg_stat_database blks_read)",
        "buffer reads/op",
        3,
        true,
        Source::Postgres,
        |m| m.dbms.shrpq.clone(),
    ),
    dbms_metric(
        "shhpq",
        "blocks/op",
        "shared-buffer hits per op in the run's database (pg_stat_database blks_hit)",
        "buffer hits/op",
        2,
        true,
        Source::Postgres,
        |m| m.dbms.shhpq.clone(),
    ),
    dbms_metric(
        "iorpq",
        "reads/op",
        "reads per op by client backends (pg_stat_io, PostgreSQL 16 and later)",
        "client backend reads/op",
        3,
        true,
        Source::Postgres,
        |m| m.dbms.iorpq.clone(),
    ),
    dbms_metric(
        "iowpq",
        "writes/op",
        "writes per op by client backends (pg_stat_io): dirty buffers they had to write themselves",
        "client backend writes/op",
        3,
        true,
        Source::Postgres,
        |m| m.dbms.iowpq.clone(),
    ),
    dbms_metric(
        "ioxpq",
        "extends/op",
        "relation extends per op by client backends (pg_stat_io)",
        "client backend extends/op",
        4,
        true,
        Source::Postgres,
        |m| m.dbms.ioxpq.clone(),
    ),
    dbms_metric(
        "iofpq",
        "fsyncs/op",
        "fsyncs per op by client backends (pg_stat_io)",
        "client backend fsyncs/op",
        4,
        true,
        Source::Postgres,
        |m| m.dbms.iofpq.clone(),
    ),
    dbms_metric(
        "bgiorpq",
        "reads/op",
        "reads per op by every other backend type: autovacuum, checkpointer, background writer and the rest (pg_stat_io)",
        "other backends' reads/op",
        3,
        true,
        Source::Postgres,
        |m| m.dbms.bgiorpq.clone(),
    ),
    dbms_metric(
        "bgiowpq",
        "writes/op",
        "writes per op by every other backend type (pg_stat_io)",
        "other backends' writes/op",
        3,
        true,
        Source::Postgres,
        |m| m.dbms.bgiowpq.clone(),
    ),
    dbms_metric(
        "bgioxpq",
        "extends/op",
        "relation extends per op by every other backend type (pg_stat_io)",
        "other backends' extends/op",
        4,
        true,
        Source::Postgres,
        |m| m.dbms.bgioxpq.clone(),
    ),
    dbms_metric(
        "bgiofpq",
        "fsyncs/op",
        "fsyncs per op by every other backend type (pg_stat_io)",
        "other backends' fsyncs/op",
        4,
        true,
        Source::Postgres,
        |m| m.dbms.bgiofpq.clone(),
    ),
    dbms_metric(
        "ckpts",
        "checkpoints",
        "checkpoints in the step (pg_stat_checkpointer from 17, pg_stat_bgwriter before)",
        "checkpoints",
        0,
        false,
        Source::Postgres,
        |m| m.dbms.ckpts.clone(),
    ),
    dbms_metric(
        "ckbufs",
        "buffers",
        "buffers written by checkpoints in the step",
        "checkpoint buffers",
        0,
        false,
        Source::Postgres,
        |m| m.dbms.ckbufs.clone(),
    ),
    dbms_metric(
        "avacs",
        "runs",
        "autovacuum runs on the run's tables in the step (pg_stat_user_tables)",
        "autovacuum runs",
        0,
        false,
        Source::Postgres,
        |m| m.dbms.avacs.clone(),
    ),
    dbms_metric(
        "deadtup",
        "rows",
        "dead rows in the run's tables at step end (pg_stat_user_tables n_dead_tup)",
        "dead rows",
        0,
        false,
        Source::Postgres,
        |m| m.dbms.deadtup.clone(),
    ),
    dbms_metric(
        "rowspq",
        "rows/op",
        "rows read per op (Innodb_rows_read; MariaDB's Rows_read, every engine; Rocksdb_rows_read)",
        "rows read/op",
        2,
        true,
        Source::Mysql,
        |m| m.dbms.rowspq.clone(),
    ),
    dbms_metric(
        "redobpi",
        "bytes/row",
        "InnoDB redo log bytes per inserted row (Innodb_os_log_written)",
        "redo bytes/row",
        1,
        true,
        Source::Innodb,
        |m| m.dbms.redobpi.clone(),
    ),
    dbms_metric(
        "bprpq",
        "pages/op",
        "InnoDB pages read from disk into the buffer pool per op (Innodb_buffer_pool_reads)",
        "buffer pool reads/op",
        3,
        true,
        Source::Innodb,
        |m| m.dbms.bprpq.clone(),
    ),
    dbms_metric(
        "idrpq",
        "reads/op",
        "InnoDB data file reads per op (Innodb_data_reads)",
        "InnoDB data reads/op",
        3,
        true,
        Source::Innodb,
        |m| m.dbms.idrpq.clone(),
    ),
    dbms_metric(
        "idwpi",
        "writes/row",
        "InnoDB data file writes per inserted row (Innodb_data_writes, the doublewrite buffer's included)",
        "InnoDB data writes/row",
        3,
        true,
        Source::Innodb,
        |m| m.dbms.idwpi.clone(),
    ),
    dbms_metric(
        "idwkbpi",
        "KB/row",
        "KB InnoDB wrote to its data files per inserted row (Innodb_data_written)",
        "InnoDB data KB written/row",
        3,
        true,
        Source::Innodb,
        |m| m.dbms.idwkbpi.clone(),
    ),
    dbms_metric(
        "hll",
        "undo logs",
        "InnoDB history list length at step end (undo not yet purged)",
        "history list length",
        0,
        false,
        Source::Innodb,
        |m| m.dbms.hll.clone(),
    ),
    dbms_metric(
        "rbwpi",
        "bytes/row",
        "bytes written into MyRocks per inserted row (Rocksdb_bytes_written)",
        "MyRocks bytes written/row",
        1,
        true,
        Source::Rocksdb,
        |m| m.dbms.rbwpi.clone(),
    ),
    dbms_metric(
        "rflbpi",
        "bytes/row",
        "bytes MyRocks flushed from memtables to files per inserted row (Rocksdb_flush_write_bytes)",
        "MyRocks flush bytes/row",
        1,
        true,
        Source::Rocksdb,
        |m| m.dbms.rflbpi.clone(),
    ),
    dbms_metric(
        "rcrbpi",
        "bytes/row",
        "bytes MyRocks compaction read per inserted row (Rocksdb_compact_read_bytes)",
        "compaction bytes read/row",
        1,
        true,
        Source::Rocksdb,
        |m| m.dbms.rcrbpi.clone(),
    ),
    dbms_metric(
        "rcwbpi",
        "bytes/row",
        "bytes MyRocks compaction wrote per inserted row (Rocksdb_compact_write_bytes)",
        "compaction bytes written/row",
        1,
        true,
        Source::Rocksdb,
        |m| m.dbms.rcwbpi.clone(),
    ),
    dbms_metric(
        "stalls",
        "s",
        "seconds MyRocks stalled writes in the step (Rocksdb_stall_micros)",
        "write stall seconds",
        3,
        false,
        Source::Rocksdb,
        |m| m.dbms.stalls.clone(),
    ),
];

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

/// The DBMS's own counters over one step, per op, per inserted row or per step:
/// `run.json`'s `steps[].metrics.dbms`. Read over SQL before and after the step's measured
/// part, so a server on another host has them too. A figure of another DBMS or engine is n/a.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbmsMetrics {
    /// The counters read: each one's change over the step (by its view and column, or its
    /// status variable), and the levels at step end (named `… at step end`).
    pub counters: BTreeMap<String, f64>,
    /// WAL bytes per inserted row: the advance of the WAL insert position over the step, every record of the cluster.
    pub walbpi: Metric,
    /// Full-page images written to WAL per inserted row (pg_stat_wal, PostgreSQL 14 and later).
    pub fpipi: Metric,
    /// Shared-buffer misses per op: blocks read into shared buffers in the run's database (pg_stat_database blks_read).
    pub shrpq: Metric,
    /// Shared-buffer hits per op in the run's database (pg_stat_database blks_hit).
    pub shhpq: Metric,
    /// Reads per op by client backends (pg_stat_io, PostgreSQL 16 and later).
    pub iorpq: Metric,
    /// Writes per op by client backends (pg_stat_io): dirty buffers they had to write themselves.
    pub iowpq: Metric,
    /// Relation extends per op by client backends (pg_stat_io).
    pub ioxpq: Metric,
    /// Fsyncs per op by client backends (pg_stat_io).
    pub iofpq: Metric,
    /// Reads per op by every other backend type: autovacuum, checkpointer, background writer and the rest (pg_stat_io).
    pub bgiorpq: Metric,
    /// Writes per op by every other backend type (pg_stat_io).
    pub bgiowpq: Metric,
    /// Relation extends per op by every other backend type (pg_stat_io).
    pub bgioxpq: Metric,
    /// Fsyncs per op by every other backend type (pg_stat_io).
    pub bgiofpq: Metric,
    /// Checkpoints in the step (pg_stat_checkpointer from 17, pg_stat_bgwriter before).
    pub ckpts: Metric,
    /// Buffers written by checkpoints in the step.
    pub ckbufs: Metric,
    /// Autovacuum runs on the run's tables in the step (pg_stat_user_tables).
    pub avacs: Metric,
    /// Dead rows in the run's tables at step end (pg_stat_user_tables n_dead_tup).
    pub deadtup: Metric,
    /// Rows read per op (Innodb_rows_read; MariaDB's Rows_read, every engine; Rocksdb_rows_read).
    pub rowspq: Metric,
    /// InnoDB redo log bytes per inserted row (Innodb_os_log_written).
    pub redobpi: Metric,
    /// InnoDB pages read from disk into the buffer pool per op (Innodb_buffer_pool_reads).
    pub bprpq: Metric,
    /// InnoDB data file reads per op (Innodb_data_reads).
    pub idrpq: Metric,
    /// InnoDB data file writes per inserted row (Innodb_data_writes, the doublewrite buffer's included).
    pub idwpi: Metric,
    /// KB InnoDB wrote to its data files per inserted row (Innodb_data_written).
    pub idwkbpi: Metric,
    /// InnoDB history list length at step end (undo not yet purged).
    pub hll: Metric,
    /// Bytes written into MyRocks per inserted row (Rocksdb_bytes_written).
    pub rbwpi: Metric,
    /// Bytes MyRocks flushed from memtables to files per inserted row (Rocksdb_flush_write_bytes).
    pub rflbpi: Metric,
    /// Bytes MyRocks compaction read per inserted row (Rocksdb_compact_read_bytes).
    pub rcrbpi: Metric,
    /// Bytes MyRocks compaction wrote per inserted row (Rocksdb_compact_write_bytes).
    pub rcwbpi: Metric,
    /// Seconds MyRocks stalled writes in the step (Rocksdb_stall_micros).
    pub stalls: Metric,
}

impl DbmsMetrics {
    /// Every figure n/a with `reason`, no counters.
    pub fn all_na(reason: &str) -> DbmsMetrics {
        let na = || Metric::na(reason);
        DbmsMetrics {
            counters: BTreeMap::new(),
            walbpi: na(),
            fpipi: na(),
            shrpq: na(),
            shhpq: na(),
            iorpq: na(),
            iowpq: na(),
            ioxpq: na(),
            iofpq: na(),
            bgiorpq: na(),
            bgiowpq: na(),
            bgioxpq: na(),
            bgiofpq: na(),
            ckpts: na(),
            ckbufs: na(),
            avacs: na(),
            deadtup: na(),
            rowspq: na(),
            redobpi: na(),
            bprpq: na(),
            idrpq: na(),
            idwpi: na(),
            idwkbpi: na(),
            hll: na(),
            rbwpi: na(),
            rflbpi: na(),
            rcrbpi: na(),
            rcwbpi: na(),
            stalls: na(),
        }
    }

    /// The figures of a step recorded before ibench read the DBMS's counters.
    pub fn not_recorded() -> DbmsMetrics {
        DbmsMetrics::all_na("not recorded: the run predates ibench's DBMS counters")
    }
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
    super::read_json_lines(&dir.join(METRICS_FILE))
}

/// Why the server's figures are n/a for an embedded DBMS. It says nothing about which figure
/// holds SQLite's own cost: that differs per figure (its CPU is in ccpupq, its memory in
/// ibench's own), so the efficiency table says it once, on its `server:` line.
pub const EMBEDDED_NA: &str = "SQLite runs inside ibench: there is no server process";

/// The server's process tree: where its root pid came from, or why there is none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerLocation {
    /// Root of the server's process tree (postmaster, mariadbd) on this host.
    pub pid: Option<u32>,
    /// How the pid was found (`--server-dir DIR`, `--server-pid`, `the server's pid file
    /// PATH`), or what was tried.
    pub how: String,
    /// Why the process figures (cpupq, rss, per-process IO) are n/a, when they are.
    pub na: Option<String>,
    /// The URL names a host other than this one: host-wide figures would describe the client
    /// only, so they are n/a too.
    pub remote: bool,
}

impl ServerLocation {
    /// One line for the terminal.
    pub fn describe(&self) -> String {
        match (&self.pid, &self.na) {
            (Some(p), _) => format!("pid {p} ({})", self.how),
            (None, Some(na)) => format!("n/a: {na}"),
            (None, None) => "n/a".to_string(),
        }
    }
}

/// The server's storage: the data paths and the block device holding them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageLocation {
    /// The data directory (or SQLite's files) on this host.
    pub data_paths: Vec<PathBuf>,
    /// The block device holding the first data path.
    pub device: Option<BlockDevice>,
    /// Why the storage figures are n/a, when they are.
    pub na: Option<String>,
}

impl StorageLocation {
    /// One line for the terminal.
    pub fn describe(&self) -> String {
        let paths = self
            .data_paths
            .first()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match (&self.device, &self.na) {
            (Some(d), _) => format!(
                "{paths} on /dev/{} ({}{})",
                d.name,
                d.dev,
                if d.partition { ", partition" } else { "" }
            ),
            (None, Some(na)) => format!("n/a: {na}"),
            (None, None) => "n/a".to_string(),
        }
    }
}

/// The block device that holds a path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDevice {
    /// Kernel name, as in `/proc/diskstats` (`vda`, `nvme0n1p2`, `dm-0`).
    pub name: String,
    /// `MAJOR:MINOR`.
    pub dev: String,
    /// Whether it is a partition (its own counters are used, not the whole disk's).
    pub partition: bool,
}

/// `perf stat` counters of one step, counted in groups (see `sampler::perf::GROUPS`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PerfRecord {
    /// Per event: the count over its group's intervals (cpu-clock and task-clock in ms), or
    /// why not.
    pub counters: BTreeMap<String, Metric>,
    /// Per event: the count per operation of its group's own intervals.
    pub per_op: BTreeMap<String, Metric>,
    /// perf's raw output, relative to the results dir.
    pub file: Option<String>,
    /// Why perf could not run, when it could not.
    pub error: Option<String>,
    /// The groups, in order (empty in run.json files written before groups; their counters
    /// cover the whole step).
    #[serde(default)]
    pub groups: Vec<PerfGroupRecord>,
}

/// One group of counters of a step: perf counted them together (never multiplexed with
/// another group) over its intervals, and each count is divided by the operations done in
/// those same intervals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerfGroupRecord {
    /// The group's number, 1 to 7.
    pub group: u32,
    /// Its events as given to `perf stat -e`.
    pub events: Vec<String>,
    /// Per event: the count summed over the group's intervals, or why not (perf's
    /// `<not supported>` or `<not counted>`, perf failing, the group not reached).
    pub counts: BTreeMap<String, Metric>,
    /// Per event: the lowest share of its intervals, in %, that the counter ran; below 100
    /// the kernel multiplexed it and perf scaled the count up.
    pub running_pct: BTreeMap<String, f64>,
    /// The group's intervals: `[start, end]` in seconds since the step's measured part
    /// began.
    pub intervals: Vec<[f64; 2]>,
    /// Their total length, seconds.
    pub seconds: f64,
    /// Operations (the step's throughput unit: rows, queries or operations) done in those
    /// intervals, from the per-second timeline.
    pub ops: f64,
    /// Per event: the count per operation.
    pub per_op: BTreeMap<String, Metric>,
    /// Instructions per cycle, where both are counted.
    pub ipc: Metric,
    /// The clock: cycles / cpu-clock, GHz, where both are counted.
    pub ghz: Metric,
    /// Why the group was not counted at all, when it was not.
    pub error: Option<String>,
}

impl PerfRecord {
    pub(crate) fn failed(error: String) -> PerfRecord {
        PerfRecord {
            counters: BTreeMap::new(),
            per_op: BTreeMap::new(),
            file: None,
            error: Some(error),
            groups: Vec::new(),
        }
    }

    /// Fill `per_op` from `counters` over the whole step (records without groups).
    pub fn per_op(mut self, ops: u64) -> PerfRecord {
        self.per_op = self
            .counters
            .iter()
            .map(|(k, v)| (k.clone(), v.per(count_f64(ops), "no ops in the step")))
            .collect();
        self
    }

    /// The clock of the step: cycles / cpu-clock of the group that counts both, GHz.
    pub fn ghz(&self) -> Option<f64> {
        self.groups.iter().find_map(|g| g.ghz.value())
    }
}

/// A profile of the server's CPU over (part of) one step: `perf record` on the `cpu-clock`
/// event with call graphs, folded into stacks.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProfileRecord {
    /// The folded stacks (`frame;frame;... weight` per line, the weight in ns of CPU), relative
    /// to the results dir.
    pub folded_file: Option<String>,
    /// The flamegraph, relative to the results dir.
    pub svg_file: Option<String>,
    /// Seconds recorded (the first part of the step's measured part).
    pub seconds: f64,
    /// Samples per second and process.
    pub frequency_hz: u32,
    /// Samples of the server's processes (each stands for 1/frequency_hz s of CPU).
    pub samples: u64,
    /// The functions with the largest share of samples of their own, largest first.
    pub top_functions: Vec<FunctionShare>,
    /// Why there is no profile, when there is none.
    pub error: Option<String>,
}

impl ProfileRecord {
    pub(crate) fn failed(error: String) -> ProfileRecord {
        ProfileRecord {
            folded_file: None,
            svg_file: None,
            seconds: 0.0,
            frequency_hz: 0,
            samples: 0,
            top_functions: Vec::new(),
            error: Some(error),
        }
    }
}

/// One function's share of a profile's samples.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FunctionShare {
    /// The function (with its module when perf could not name it, e.g. `[unknown]`).
    pub function: String,
    /// Share of all samples in which it is the leaf frame (its own time), 0..1.
    pub self_share: f64,
    /// Share of all samples in which it is on the stack at all (callees included), 0..1.
    pub total_share: f64,
}

/// The mount holding a path, from `/proc/self/mountinfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountInfo {
    /// Mount point.
    pub mount_point: String,
    /// Filesystem type (`ext4`, `xfs`, `tmpfs`, ...).
    pub fs_type: String,
    /// Mount source (`/dev/vda`, `tmpfs`, ...).
    pub source: String,
    /// `MAJOR:MINOR` of the filesystem.
    pub dev: String,
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
