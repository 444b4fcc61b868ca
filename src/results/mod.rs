//! The result model: what a run records, versioned and written as it goes.
//!
//! A results directory holds `run.json` (a [`RunRecord`], rewritten atomically after every
//! step and when the run ends) and `timeline.jsonl` (one [`TimelineLine`] per step-second,
//! appended and flushed as it is measured). Every report renders from these two files; see
//! `docs/results.md` for the field-by-field description.

pub mod counters;
pub mod dir;
pub mod duet;
pub mod failover;
pub mod host;
pub mod json_file;
pub mod location;
pub mod metric;
pub mod metrics;
pub mod options;
pub mod perf;
pub mod probe;
pub mod replication;
pub mod settings;
pub mod statistics;
pub mod target;

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::stats::{LatencySummary, SecondCounts};
use crate::workload::steps::StepName;
pub use json_file::{read_json_lines, write_json_atomic};
use options::RunOptions;
use target::{BuildFacts, TargetInfo};

/// Version of the `run.json` layout. Bumped on any change a reader must know about.
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest `run.json` layout this ibench still reads (version 1 has no `main_op`).
pub const OLDEST_SCHEMA_VERSION: u32 = 1;

/// File name of the run record inside a results directory.
pub const RUN_FILE: &str = "run.json";

/// The plan file in a matrix's output dir (`ibench matrix run`): `ibench report` tells a
/// matrix's output from a run by it.
pub const MATRIX_PLAN_FILE: &str = "plan.json";

/// The state file of a matrix cell.
pub const MATRIX_STATE_FILE: &str = "state.json";

/// File name of the per-second timeline inside a results directory.
pub const TIMELINE_FILE: &str = "timeline.jsonl";

/// State of a run or a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Still going (a run.json left in this state means the process died).
    Running,
    /// Finished normally.
    Completed,
    /// Stopped by Ctrl-C or SIGTERM; the figures cover the part that ran.
    Interrupted,
    /// Stopped by an error, given in `error`.
    Failed,
}

/// Everything a run records (`run.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    /// [`SCHEMA_VERSION`] of this layout.
    pub schema_version: u32,
    /// Version of ibench that wrote it.
    pub ibench_version: String,
    /// State of the run.
    pub status: Status,
    /// Why the run failed, when it did.
    pub error: Option<String>,
    /// The run's label (DBMS, version, config), from `--label` or derived.
    pub label: String,
    /// The process that wrote it (with `host.hostname`: whether a run that says `running`
    /// is still going); absent in runs recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// What went wrong with the results themselves while the run went on (a results
    /// directory deleted and made again, and what that lost); absent when nothing did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// When the run started, UTC, RFC 3339.
    pub started_at: String,
    /// When the run ended, UTC, RFC 3339; `None` while running.
    pub ended_at: Option<String>,
    /// The command line as given.
    pub command_line: Vec<String>,
    /// The full, validated options (sizes, rates, seed, ...).
    pub options: RunOptions,
    /// The DBMS, its version and the redacted URL; `None` if it could not be reached.
    pub target: Option<TargetInfo>,
    /// Backend settings ibench applied itself (e.g. SQLite pragmas), name → value.
    pub session_settings: BTreeMap<String, String>,
    /// The machine the client ran on.
    pub host: host::HostInfo,
    /// The steps that ran or started, in order.
    pub steps: Vec<StepRecord>,
    /// Name of the per-second timeline file beside run.json.
    pub timeline_file: String,
    /// Where the sampler found the server and its storage, and the run's totals.
    #[serde(default)]
    pub metrics: Option<metrics::RunMetrics>,
    /// How the server was built (version string, compiler flags, binary size and SHA-256),
    /// as far as it could be told; `None` in runs recorded before it existed.
    #[serde(default)]
    pub build: Option<BuildFacts>,
    /// The host probe's setup and the run's typical host speed (`--host-probe-ms`); `None`
    /// with the probe off and in runs recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_probe: Option<probe::RunHostProbe>,
    /// The replica the run measured (`--replica-url`); absent without one and in runs
    /// recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<replication::ReplicaInfo>,
    /// The run was one side of a duet (the base and the candidate run at the same time on
    /// one host, `order = "duet"`): the round, the slot and the other side. Absent for a solo
    /// run and in runs recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duet: Option<duet::DuetSide>,
}

/// What one step measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step (`l.i0`, `qr100`, ...).
    pub name: StepName,
    /// Completed, interrupted or failed.
    pub status: Status,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// Start, UTC, RFC 3339.
    pub started_at: String,
    /// End (of the measured part; l.i2's settle phase follows it), UTC, RFC 3339.
    pub ended_at: String,
    /// Measured seconds: from the start of the step's operations to the end of the last one.
    pub seconds: f64,
    /// Number of clients (tables, unless the table is shared).
    pub clients: u32,
    /// The step's throughput figure (spec section 3), in `throughput_unit`.
    pub throughput: f64,
    /// What `throughput` counts: `inserted rows/s`, `indexed rows/s`, `queries/s`,
    /// `operations/s` or `rows scanned/s`.
    pub throughput_unit: crate::workload::steps::ThroughputUnit,
    /// The op kind the throughput counts, whose latency and per-op figures the reports show
    /// first (`insert`, `create_indexes`, `range_query`, `point_query`, `micro`). Absent in
    /// schema version 1: [`StepRecord::main_op`] then derives it from the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_op: Option<crate::stats::OpKind>,
    /// Per operation kind (`insert`, `delete`, `range_query`, `point_query`, `create_indexes`).
    pub ops: BTreeMap<String, OpRecord>,
    /// Per-second rate of the step's main op at the median, over the step's whole seconds.
    pub rate_p50: Option<f64>,
    /// Per-second rate of the step's main op exceeded in 99% of the step's whole seconds.
    pub rate_p1low: Option<f64>,
    /// ibench's own CPU (user+sys, all threads) over the step, seconds. With SQLite this
    /// includes the embedded database engine.
    pub client_cpu_seconds: f64,
    /// `client_cpu_seconds` per op of the step (µs per inserted row, indexed row or query).
    pub client_cpu_us_per_op: Option<f64>,
    /// Background insert rate verdict of a query step.
    pub sla: Option<SlaRecord>,
    /// The settle phase that follows l.i2.
    pub settle: Option<SettleRecord>,
    /// Row-count and index check after a step that wrote rows; `None` when turned off.
    pub integrity: Option<IntegrityRecord>,
    /// Server-side efficiency per op (spec section 5); `None` for a step that failed to start.
    #[serde(default)]
    pub metrics: Option<metrics::StepMetrics>,
    /// The checks after the step's measured part that failed (integrity, settle, statistics):
    /// the step's figures above stay as measured, the run's exit status is non-zero. Empty
    /// when every check passed; absent in runs recorded before it existed.
    #[serde(default)]
    pub check_failures: Vec<CheckFailure>,
    /// The host probe before and after the step and the host's steal and iowait shares
    /// during it; `None` with the probe off and in runs recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_probe: Option<probe::StepHost>,
    /// The replica's lag over the step and after it (`--replica-url`); absent without a
    /// replica and in runs recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication: Option<replication::StepReplication>,
    /// The failover that hit the step (`--failover`, or one observed with
    /// `--reconnect-for`); absent for a step without one and in runs recorded before it
    /// existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<failover::StepFailover>,
}

impl probe::ProbedStep for StepRecord {
    fn step_host(&self) -> Option<&probe::StepHost> {
        self.host_probe.as_ref()
    }
}

impl StepRecord {
    /// The op kind the step's throughput counts: as recorded, or from its name for a
    /// `run.json` of schema version 1.
    pub fn main_op(&self) -> crate::stats::OpKind {
        self.main_op.unwrap_or_else(|| self.name.main_op())
    }
}

impl StepRecord {
    /// Whether a check after the step failed (its figures are kept, marked).
    pub fn check_failed(&self) -> bool {
        !self.check_failures.is_empty()
    }

    /// The failed checks in one line: `integrity: pi1 holds 39,960 rows, expected 40,000; ...`.
    pub fn check_failure_text(&self) -> String {
        self.check_failures
            .iter()
            .map(|f| format!("{}: {}", f.kind, f.message))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Which check after a step failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckKind {
    /// The row counts or an index disagree with what the step did, or they could not be read.
    Integrity,
    /// The settle phase after l.i2 could not run, or one of its maintenance actions failed.
    Settle,
    /// The DBMS's statistics could not be saved at step end.
    Statistics,
}

impl std::fmt::Display for CheckKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CheckKind::Integrity => "integrity",
            CheckKind::Settle => "settle",
            CheckKind::Statistics => "statistics",
        })
    }
}

/// One failed check after a step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckFailure {
    /// Which check.
    pub kind: CheckKind,
    /// What went wrong, as the check or the DBMS said it.
    pub message: String,
}

impl RunRecord {
    /// The run's record of step `name`, if it ran that step.
    pub fn step(&self, name: StepName) -> Option<&StepRecord> {
        self.steps.iter().find(|s| s.name == name)
    }

    /// What the last settle phase before `steps[index]` left undone when its budget ran out:
    /// that step started from an unsettled server. `None` when that settle phase finished,
    /// or none came before the step.
    pub fn unsettled_before(&self, index: usize) -> Option<&str> {
        self.steps
            .get(..index)?
            .iter()
            .rev()
            .find_map(|s| s.settle.as_ref())
            .and_then(|s| s.unsettled.as_deref())
    }

    /// The steps whose checks failed, one line each (`l.i1: integrity: ...`); empty when none.
    /// An error naming every failed check and the run.json in `dir` that records it, or
    /// `Ok` when every check passed.
    pub fn checks_passed(&self, dir: &Path) -> anyhow::Result<()> {
        let failed = self.failed_checks();
        if failed.is_empty() {
            return Ok(());
        }
        anyhow::bail!(
            "a check after a step failed (its figures are kept, marked in the reports): {}; see {}",
            failed.join(" | "),
            dir.join(RUN_FILE).display()
        )
    }

    /// One line per step whose checks failed: `l.i1: integrity: ...`.
    pub fn failed_checks(&self) -> Vec<String> {
        self.steps
            .iter()
            .filter(|s| s.check_failed())
            .map(|s| format!("{}: {}", s.name, s.check_failure_text()))
            .collect()
    }
}

/// One operation kind of one step, merged over all connections.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpRecord {
    /// Operations finished.
    pub ops: u64,
    /// Rows affected (inserted, deleted) or read (queries).
    pub rows: u64,
    /// Operations retried after a transient conflict (deadlock, busy); not in `ops`.
    pub retries: u64,
    /// Statements that affected fewer rows than asked: a deleter of a shared table whose
    /// oldest rows another deleter took first (it then deleted the rest with more statements,
    /// which are in this count too). Absent in runs recorded before it existed.
    #[serde(default)]
    pub short_statements: u64,
    /// CPU seconds of the connections' own threads while they ran this op kind (user +
    /// system): the client work on the connections' critical path. Absent in runs recorded
    /// before it existed.
    #[serde(default)]
    pub connection_cpu_seconds: f64,
    /// Operations per second over the step's seconds.
    pub ops_per_sec: f64,
    /// Rows per second over the step's seconds.
    pub rows_per_sec: f64,
    /// Target rate for paced connections (rows/s over all clients), `None` when unpaced.
    pub target_rows_per_sec: Option<f64>,
    /// Latency from the intended start: the due time of a paced op, the send otherwise.
    pub latency_us: LatencySummary,
    /// Service time from the real send.
    pub service_us: LatencySummary,
    /// The latency histogram as `[value_us, count]` pairs (HdrHistogram, 3 digits).
    pub latency_histogram_us: Vec<[u64; 2]>,
}

/// The SLA verdict of a query step (spec section 4).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SlaRecord {
    /// Target background insert rate, rows/s over all clients.
    pub target_rows_per_sec: f64,
    /// Achieved: rows inserted / step seconds.
    pub achieved_rows_per_sec: f64,
    /// Whether `achieved >= 0.95 * target`.
    pub passed: bool,
    /// Share (0..=1) of the step's whole seconds with fewer than 95% of the target inserted.
    pub share_of_seconds_below_95pct: f64,
}

/// The settle phase after l.i2.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SettleRecord {
    /// Planned length, seconds.
    pub planned_seconds: f64,
    /// Actual length, seconds (shorter when interrupted).
    pub seconds: f64,
    /// The maintenance done inside it.
    pub actions: Vec<SettleAction>,
    /// What was left undone when the budget ran out (the actions' `unsettled`, joined with
    /// `; `): the steps after it started from an unsettled server. Not a check failure.
    /// `None` (absent from the JSON) when every action finished; absent in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsettled: Option<String>,
}

impl SettleRecord {
    /// `unsettled` from the actions: each unfinished action's leftover, `action: what`.
    pub fn unsettled_of(actions: &[SettleAction]) -> Option<String> {
        let left: Vec<String> = actions
            .iter()
            .filter_map(|a| a.unsettled.as_ref().map(|u| format!("{}: {u}", a.action)))
            .collect();
        (!left.is_empty()).then(|| left.join("; "))
    }
}

/// One maintenance action done in the settle phase, for the record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SettleAction {
    /// What was done, e.g. `VACUUM (ANALYZE) pi1`.
    pub action: String,
    /// How long it took, seconds.
    pub seconds: f64,
    /// `None` when it succeeded, the error text when it did not.
    pub error: Option<String>,
    /// What was left undone when the settle budget ran out before the action finished
    /// (`4007 dirty pages left`, `VACUUM cancelled by statement_timeout`): not an error, the
    /// server was merely not settled. `None` when the action finished or failed. Absent in
    /// older runs and in the JSON of actions that finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsettled: Option<String>,
}

impl SettleAction {
    /// An action that finished (`error` `None`) or failed (`error` the reason).
    pub fn done(action: impl Into<String>, seconds: f64, error: Option<String>) -> SettleAction {
        SettleAction {
            action: action.into(),
            seconds,
            error,
            unsettled: None,
        }
    }
}

/// The integrity check of one step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IntegrityRecord {
    /// Whether every table matched.
    pub ok: bool,
    /// Per table.
    pub tables: Vec<TableCheck>,
}

/// The integrity check of one table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableCheck {
    /// The table.
    pub table: String,
    /// Rows the step's inserts and deletes imply.
    pub expected_rows: u64,
    /// Rows the step means the table to hold afterwards: l.i0 the rows it loads, l.i1, l.i2
    /// and the query steps the rows the table held before (inserts and deletes balance).
    /// Absent in runs recorded before it existed.
    #[serde(default)]
    pub intended_rows: Option<u64>,
    /// How far `pk_rows` may lie from `intended_rows`: 0 for a load step and for l.i1 and l.i2
    /// that ran to the end; the rows the deleters may still have queued when a step stops on
    /// time (query steps) or is interrupted.
    #[serde(default)]
    pub allowed_drift_rows: u64,
    /// `count(*)` through the primary key.
    pub pk_rows: u64,
    /// Count through each secondary index (index name → rows), when the indexes exist.
    pub index_rows: BTreeMap<String, u64>,
    /// Whether all of them agree with `expected_rows`, and `pk_rows` lies within
    /// `allowed_drift_rows` of `intended_rows`.
    pub ok: bool,
}

/// One line of `timeline.jsonl`: one second of one step.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TimelineLine {
    /// The step.
    pub step: StepName,
    /// Seconds since the step started; the line covers `(second - 1, second]`.
    pub second: u32,
    /// Per op kind name: ops, rows and max latency in that second.
    pub ops: BTreeMap<String, SecondCounts>,
    /// l.x: the index builds as the server last reported them in that second (phase, work
    /// done of its total), one per phase; absent when none was reported and in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub index_builds: Vec<IndexBuildProgress>,
    /// Connections of the step that had finished by the end of the second (a load step's
    /// tail, where fewer connections insert); absent while all run, and in older files.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub finished_connections: u32,
    /// With a replica (`--replica-url`): the largest lag the heartbeat read on it in that
    /// second, ms; absent without a replica, in a second with no reading, and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_lag_ms: Option<f64>,
    /// With a replica: true when a reading of the replica failed in that second (stopped,
    /// killed, unreachable): its lag is lost. Absent when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replica_lost: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One index build's progress as the server reports it: its phase and the work done of the
/// phase's total.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexBuildProgress {
    /// The phase as the server names it: PostgreSQL's `building index: scanning table`,
    /// MySQL/MariaDB's stage `alter table (merge sort)`.
    pub phase: String,
    /// Work done in the phase (summed over the builds in this phase).
    pub done: u64,
    /// The phase's total work, as the server estimates it; 0 when it gives none.
    pub total: u64,
    /// What the work counts: `blocks` or `tuples` (PostgreSQL), `work units` (MySQL's
    /// `WORK_COMPLETED`/`WORK_ESTIMATED`); empty when the phase has no count.
    pub unit: String,
    /// Builds in this phase (one per table being indexed at once).
    pub builds: u32,
}

/// Current time, UTC, RFC 3339 with milliseconds.
pub fn now_rfc3339() -> String {
    rfc3339(std::time::SystemTime::now())
}

/// A wall-clock time, UTC, RFC 3339 with milliseconds.
pub fn rfc3339(t: std::time::SystemTime) -> String {
    let (y, mo, d, h, mi, s, us) = crate::calendar::civil_from_system_time(t);
    format!(
        "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}Z",
        us / 1000
    )
}

/// Seconds since the Unix epoch of a UTC time as [`rfc3339`] writes it
/// (`2023-11-14T22:13:20.123Z`; the `Z` may be left out); `None` for any other shape.
pub fn rfc3339_seconds(text: &str) -> Option<f64> {
    let (date, time) = text.trim_end_matches('Z').split_once('T')?;
    let mut d = date.splitn(3, '-').map(str::parse::<i64>);
    let (y, m, day) = (d.next()?.ok()?, d.next()?.ok()?, d.next()?.ok()?);
    let mut t = time.splitn(3, ':');
    let (h, mi) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
    );
    let sec: f64 = t.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let days = crate::calendar::days_from_civil(y, m, day);
    Some(crate::stats::convert::i64_f64(days * 86_400 + h * 3600 + mi * 60) + sec)
}

/// Read a run record.
pub fn read_run(dir: &Path) -> anyhow::Result<RunRecord> {
    let path = dir.join(RUN_FILE);
    let text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("{} is not a valid run.json", path.display()))
}

/// Read every line of a timeline file.
pub fn read_timeline(dir: &Path) -> anyhow::Result<Vec<TimelineLine>> {
    read_json_lines(&dir.join(TIMELINE_FILE))
}

/// Appends timeline lines and flushes each, so a run that dies keeps its seconds. A timeline
/// deleted under the run (its directory removed) is noticed at the next line and made again,
/// with a warning of what was lost ([`TimelineWriter::take_warning`]).
pub struct TimelineWriter {
    out: BufWriter<File>,
    path: PathBuf,
    warning: Option<String>,
}

fn open_append(path: &Path) -> anyhow::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| json_file::write_error(path, &e))
}

/// Whether the open file was deleted (no name links to it any more).
fn unlinked(f: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    f.metadata().is_ok_and(|m| m.nlink() == 0)
}

impl TimelineWriter {
    /// Open (create or append to) the timeline in a results directory.
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join(TIMELINE_FILE);
        Ok(TimelineWriter {
            out: BufWriter::new(open_append(&path)?),
            path,
            warning: None,
        })
    }

    /// Append one line and flush it.
    pub fn write(&mut self, line: &TimelineLine) -> anyhow::Result<()> {
        if unlinked(self.out.get_ref()) {
            if let Some(parent) = self.path.parent() {
                let _ = fs::create_dir_all(parent);
            }
            self.out = BufWriter::new(open_append(&self.path)?);
            self.warning = Some(format!(
                "{} was deleted during the run and is made again from {} second {}: the \
                 seconds before are lost (run.json keeps every step's figures)",
                self.path.display(),
                line.step,
                line.second
            ));
        }
        serde_json::to_writer(&mut self.out, line)?;
        self.out
            .write_all(b"\n")
            .and_then(|()| self.out.flush())
            .map_err(|e| json_file::write_error(&self.path, &e))
    }

    /// The warning of a timeline made again since the last call, if it was.
    pub fn take_warning(&mut self) -> Option<String> {
        self.warning.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_utc() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_123);
        assert_eq!(rfc3339(t), "2023-11-14T22:13:20.123Z");
        assert_eq!(
            rfc3339_seconds("2023-11-14T22:13:20.123Z"),
            Some(1_700_000_000.123)
        );
        assert_eq!(
            rfc3339_seconds("2000-03-01T00:00:00.000Z"),
            Some(951_868_800.0)
        );
        assert_eq!(rfc3339_seconds("2023-11-14 22:13:20"), None);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("ibench-results-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.json");
        write_json_atomic(&p, &vec![1, 2]).unwrap();
        write_json_atomic(&p, &vec![3]).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap().trim(), "[\n  3\n]");
        assert!(!dir.join("x.json.tmp").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_buffered_write_gives_the_bytes_of_the_straight_one() {
        let dir = std::env::temp_dir().join(format!("ibench-results-buf-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        // A real run record (tens of KB, well past one buffer), with escapes and floats.
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let mut record = read_run(&fixture).unwrap();
        record.label = "quote \" tab \t é \u{1}".into();
        let buffered = dir.join("run.json");
        write_json_atomic(&buffered, &record).unwrap();
        // How it was written before: serde straight to the file, then the newline.
        let straight = dir.join("straight.json");
        let mut f = File::create(&straight).unwrap();
        serde_json::to_writer_pretty(&mut f, &record).unwrap();
        f.write_all(b"\n").unwrap();
        drop(f);
        let got = fs::read(&buffered).unwrap();
        assert!(got.len() > 3 * 8192, "{} bytes", got.len());
        assert_eq!(got, fs::read(&straight).unwrap());
        let mut pretty = serde_json::to_vec_pretty(&record).unwrap();
        pretty.push(b'\n');
        assert_eq!(got, pretty);
        assert!(!dir.join("run.json.tmp").exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
