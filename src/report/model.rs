//! The comparison of runs as data: the three summary tables of the published reports with
//! their colours, and per step the latency distribution and the figures of every run. Every
//! output format renders from a [`Comparison`]; `--format json` is this struct. The model
//! only: [`super::compare`] builds it, the document and the formats read it.

use serde::Serialize;

use crate::results::failover::StepFailover;
use crate::results::metrics::ProfileRecord;
use crate::results::{CheckKind, Status};
use crate::workload::steps::StepName;

/// A cell's highlight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Colour {
    /// Good (top quarter; ≥ 1.05 relative).
    Green,
    /// Bad (bottom quarter; ≤ 0.95 relative; below 95% of target).
    Red,
    /// Neutral (between 0.95 and 1.05 relative) or not to be trusted (SLA failed).
    Grey,
    /// No highlight.
    None,
}

/// One value in a table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// The value; `None` when the run lacks the step (see `note`).
    pub value: Option<f64>,
    /// Its highlight.
    pub colour: Colour,
    /// Why it is grey, marked or missing.
    pub note: Option<CellNote>,
    /// A relative figure's interval over the repeats (a matrix report: the run's spread, min
    /// / median to max / median, times the figure); absent without repeats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
}

impl Cell {
    pub(super) fn missing(note: CellNote) -> Cell {
        Cell {
            value: None,
            colour: Colour::None,
            note: Some(note),
            interval: None,
        }
    }
}

/// Why a cell is grey, marked or missing. Every format and the JSON write it as its text
/// (`SLA failed`, `check failed: integrity`, `host-affected: steal 12% of the CPU time`).
#[derive(Clone, Debug, PartialEq)]
pub enum CellNote {
    /// The run lacks the step: `missing`.
    Missing,
    /// The base lacks the step, or its figure is 0: `no base`.
    NoBase,
    /// The figure was not measured: `n/a`.
    NotMeasured,
    /// The step failed its background-insert SLA: `SLA failed`.
    SlaFailed,
    /// The step did not complete (failed, interrupted, or still running when the run ended):
    /// its figure covers only the part that ran. Never [`Status::Completed`].
    Unfinished(Status),
    /// Checks after the step failed (the figure is as measured): `check failed: integrity`.
    CheckFailed(Vec<CheckKind>),
    /// The step started from an unsettled server (the settle phase before it ran out of its
    /// budget with work left; not a failure, the figure is as measured): `unsettled start`.
    UnsettledStart,
    /// The host may have moved the figure (`report::host`): `host-affected: ` and the reasons.
    HostAffected(Vec<String>),
    /// A relative figure inside the base's spread over repeats (a matrix report):
    /// `within base spread`.
    WithinBaseSpread,
    /// The host screening flagged the figure's step, but the figure is judged all the same,
    /// and why (`stats::decision::duet_waives_host_flags`: a rate of a duet, whose sides met
    /// the same host): `not held to the host screening's flag (` its reasons `): ` why.
    HostFlagWaived {
        /// What the host screening said (`report::host`).
        reasons: Vec<String>,
        /// Why it does not hold the figure: `a duet's sides met the same host`.
        why: &'static str,
    },
    /// A relative figure the decision rule (`stats::decision`) could not decide: `not
    /// decided: ` and its reason and interval (`too noisy: -8.0% (90% interval -21.0% ..
    /// +6.9%) reaches both inside and beyond ±5%`).
    Undecided(String),
}

impl CellNote {
    /// Whether a cell with a figure and this note needs a mark: the figure covers only part of
    /// its step, or a check after the step failed.
    pub fn is_partial(&self) -> bool {
        matches!(self, CellNote::Unfinished(_) | CellNote::CheckFailed(_))
    }

    /// Whether a grey figure with this note was left undecided by it: every note but
    /// [`CellNote::HostFlagWaived`], which says why a figure was judged, not why it was not.
    pub fn leaves_undecided(&self) -> bool {
        !matches!(self, CellNote::HostFlagWaived { .. })
    }

    /// The mark a relative figure with this note ends in: `~` host-affected, `?` not decided
    /// (`report::paint`); none otherwise
    /// (a partial step's figure and a failed SLA's carry the marks every syntax gives them:
    /// `!` or ⚠, `*` or struck through).
    pub fn mark(&self) -> &'static str {
        match self {
            CellNote::HostAffected(_) => "~",
            CellNote::Undecided(_) => "?",
            _ => "",
        }
    }
}

impl std::fmt::Display for CellNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CellNote::Missing => f.write_str("missing"),
            CellNote::NoBase => f.write_str("no base"),
            CellNote::NotMeasured => f.write_str("n/a"),
            CellNote::SlaFailed => f.write_str("SLA failed"),
            CellNote::Unfinished(status) => f.write_str(status_text(*status)),
            CellNote::CheckFailed(kinds) => {
                let kinds: Vec<String> = kinds.iter().map(ToString::to_string).collect();
                write!(f, "{CHECK_FAILED}: {}", kinds.join(", "))
            }
            CellNote::UnsettledStart => f.write_str("unsettled start"),
            CellNote::HostAffected(reasons) => write!(f, "host-affected: {}", reasons.join("; ")),
            CellNote::HostFlagWaived { reasons, why } => write!(
                f,
                "not held to the host screening's flag ({}): {why}",
                reasons.join("; ")
            ),
            CellNote::WithinBaseSpread => f.write_str("within base spread"),
            CellNote::Undecided(why) => write!(f, "not decided: {why}"),
        }
    }
}

impl Serialize for CellNote {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A step status as a cell note writes it.
fn status_text(status: Status) -> &'static str {
    match status {
        Status::Completed => "completed",
        Status::Interrupted => "interrupted",
        Status::Failed => "failed",
        Status::Running => "running",
    }
}

/// The start of the note of a figure whose step's checks failed.
pub(super) const CHECK_FAILED: &str = "check failed";

/// A table: a row per run (by label), a column per step; or, as [`StepRows`], a row per step
/// and a column per run.
#[derive(Clone, Debug, Serialize)]
pub struct Table<Column = StepName, Row = String> {
    /// Column names (steps, or the runs' labels).
    pub columns: Vec<Column>,
    /// Rows: one per run, in the order the runs were given (or one per step).
    pub rows: Vec<TableRow<Row>>,
}

/// A microbenchmark table: a row per step (in the published order), a column per run label.
pub type StepRows = Table<String, StepName>;

/// One row: a run's (by label) or a step's.
#[derive(Clone, Debug, Serialize)]
pub struct TableRow<Label = String> {
    /// The run's label, or the step.
    pub label: Label,
    /// One cell per column.
    pub cells: Vec<Cell>,
}

/// The latency distribution of one op kind of one run in one step.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyRow {
    /// The run's label.
    pub label: String,
    /// Share of operations per bucket (≤256µs … >16s).
    pub bucket_shares: [f64; 10],
    /// p50, p90, p99, p99.9 and max, µs.
    pub p50_us: u64,
    /// 90th percentile, µs.
    pub p90_us: u64,
    /// 99th percentile, µs.
    pub p99_us: u64,
    /// 99.9th percentile, µs.
    pub p99_9_us: u64,
    /// Largest, µs.
    pub max_us: u64,
}

/// One metric of one step across runs, absolute and relative to the base.
#[derive(Clone, Debug, Serialize)]
pub struct MetricRow {
    /// The metric's name.
    pub name: String,
    /// What it means, with its unit.
    pub meaning: String,
    /// Per run (in run order): the value, or `None` when not measured.
    pub values: Vec<Option<f64>>,
    /// Per run: value / the base run's value, when both exist.
    pub relative: Vec<Option<f64>>,
    /// Whether less is better (a cost), more (a rate), or neither is known (a count of
    /// events, a clock).
    pub lower_is_better: Option<bool>,
}

/// Everything about one step.
#[derive(Clone, Debug, Serialize)]
pub struct StepDetail {
    /// The step.
    pub step: StepName,
    /// Unit of the step's throughput.
    pub unit: String,
    /// Op kinds with a latency table, each with a row per run that has the step.
    pub latency: Vec<(String, Vec<LatencyRow>)>,
    /// The step's figures per run.
    pub metrics: Vec<MetricRow>,
    /// With `--perf`: the clock (`GHz`), `IPC`, then each counted event per operation of its
    /// group's own intervals; empty when no run counted.
    pub counters: Vec<MetricRow>,
    /// Events n/a in every run that counted, grouped by reason: `cycles, instructions: perf:
    /// <not supported> (...)`.
    pub counters_na: Vec<String>,
    /// The server CPU profile of each run that has one (`--profile-server`): its label and
    /// the profile (top functions, files relative to the run's dir, or why there is none).
    pub profiles: Vec<(String, ProfileRecord)>,
}

/// One run as the report's run table shows it.
#[derive(Clone, Debug, Serialize)]
pub struct RunRow {
    /// The short key that names the run in the report's tables (`pg17 sync0`, `r3`).
    pub key: String,
    /// The run's label.
    pub label: String,
    /// DBMS and version (`PostgreSQL 15.18`).
    pub dbms: String,
    /// The build's optimisation level and speed-relevant options (`-O2, lz4`), when the
    /// server reports its flags.
    pub build_flags: Option<String>,
    /// The server binary's size, bytes, when it was found.
    pub binary_bytes: Option<u64>,
    /// TLS version and cipher of the run's connections (`TLSv1.3 TLS13_AES_256_GCM_SHA384`);
    /// absent for a plain connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
    /// The run's state (`completed`, `failed`, ...).
    pub status: String,
    /// Its results directory.
    pub dir: String,
}

/// The whole comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The tl;dr the report opens with (`report::tldr`): per run against the base, its
    /// relative throughput per step family from the decided figures, what differs, and the
    /// host or noise caveat. Empty for one run.
    pub tldr: Tldr,
    /// The runs' labels, in order.
    pub labels: Vec<String>,
    /// The runs' short keys, in order: the tables name runs by these (the run table maps
    /// each to its label).
    pub keys: Vec<String>,
    /// The runs: DBMS, build and results dir of each, in order.
    pub runs: Vec<RunRow>,
    /// One line when the runs' servers were built with different flags (a build difference
    /// alone moves every figure), said above the tables.
    pub build_warning: Option<String>,
    /// One line when some runs connected over TLS and others did not (encryption moves the
    /// client's and the server's CPU per operation), said above the tables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_warning: Option<String>,
    /// Index of the base run.
    pub base: usize,
    /// Each run's repeats, in order: 1 for a run, a matrix report's member its repeats (the
    /// most any of its steps holds). Which rule decided a relative figure follows from it:
    /// the repeats' (two or more a side) or one run's (`report::tldr` says which). Not in the
    /// JSON: a matrix report's `spread` gives each member's `repeats`.
    #[serde(skip)]
    pub repeats: Vec<usize>,
    /// Steps in canonical order (union over the runs).
    pub steps: Vec<StepName>,
    /// Absolute throughput.
    pub absolute: Table,
    /// Throughput relative to the base run.
    pub relative: Table,
    /// Background insert rate of the query steps (rows/s); `targets` is the last row.
    pub background: Table,
    /// Target background insert rate per query step column.
    pub background_targets: Vec<Option<f64>>,
    /// Per step details.
    pub details: Vec<StepDetail>,
    /// For every relative throughput outside the noise band (±5%, or the base's spread over
    /// repeats in a matrix report), the per-op figures that
    /// moved with it (see `report::diagnosis`).
    pub diagnoses: Vec<super::diagnosis::Diagnosis>,
    /// The diagnosis summed up per step family and run (every run but the base).
    pub summary: Vec<FamilySummary>,
    /// The diagnosis's lead (`report::setup::diagnosis_lead`): a line per run whose setup
    /// differs from the base's, naming what differs first. Not in the JSON: the differences
    /// are.
    #[serde(skip)]
    pub diagnosis_lead: Vec<String>,
    /// The published shape of a microbenchmark comparison (microbenchmarks as rows, runs as
    /// columns), when every step is a microbenchmark step.
    pub micro: Option<MicroView>,
    /// What could not be read or compared, one line each.
    pub problems: Vec<String>,
    /// Each run's host speed against the base's, the warnings and the host-affected steps
    /// (`report::host`).
    pub host: super::host::HostView,
    /// The steps that ran at one speed for a stretch and several times faster or slower for
    /// the rest, and who slowed down (`report::shift`); absent when none did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shifts: Vec<super::shift::StepShift>,
    /// How each run's setup differs from the base's (`report::differs`), every run but the
    /// base in order: the report's first section. Absent for one run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<super::differs::RunSetup>,
    /// What the comparison means to vary (a matrix group's axis) and the runs that differ
    /// beyond it; absent outside a matrix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub axis: Option<AxisCheck>,
    /// Throughput per client and scaling efficiency, when some run's clients differ from the
    /// base's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Scaling>,
    /// The replica-lag SLA of the runs that measured a replica (`report::lag_sla`); absent
    /// when none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag_sla: Option<LagSla>,
    /// Every failover of the runs (`report::failover`, docs/failover.md), in run order;
    /// absent when no run had one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failovers: Vec<FailoverRow>,
}

impl Comparison {
    /// The key of the run labelled `label` (the label itself when no run has it).
    pub fn key_of<'a>(&'a self, label: &'a str) -> &'a str {
        self.labels
            .iter()
            .position(|l| l == label)
            .and_then(|i| self.keys.get(i))
            .map_or(label, String::as_str)
    }
}

/// One failover of one run: what the JSON report carries and the section shows.
#[derive(Clone, Debug, Serialize)]
pub struct FailoverRow {
    /// The run's label.
    pub run: String,
    /// The step it hit.
    pub step: StepName,
    /// Its figures, as run.json holds them.
    pub failover: StepFailover,
}

/// The tl;dr of a comparison.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Tldr {
    /// One line per run but the base, in run order.
    pub lines: Vec<TldrLine>,
    /// What holds for every line: how noise was judged.
    pub caveat: Option<String>,
    /// One line per run whose replica failed the lag SLA (`report::lag_sla`), naming the
    /// steps; absent when every step held or no run measured a replica.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lag_sla: Vec<TldrLagLine>,
    /// One line per failover (`report::failover`): the writes' gap, the acknowledged rows
    /// lost, the time until the rate was back; absent when no run had one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failover: Vec<TldrLagLine>,
}

impl Tldr {
    /// Its items as every format lists them, each in its painted pieces: a line per run
    /// against the base, then a line per run whose replica failed the lag SLA, then a line
    /// per failover.
    pub fn painted_items(&self) -> Vec<Vec<Span>> {
        self.lines
            .iter()
            .map(|l| l.spans.clone())
            .chain(self.lag_sla.iter().map(|l| l.spans.clone()))
            .chain(self.failover.iter().map(|l| l.spans.clone()))
            .collect()
    }
}

/// A run whose replica failed the lag SLA, or a failover, in the tl;dr.
#[derive(Clone, Debug, Serialize)]
pub struct TldrLagLine {
    /// The run's label.
    pub run: String,
    /// The line as every format writes it.
    pub text: String,
    /// The line in pieces, each painted (`report::paint`), as HTML and coloured text show it.
    #[serde(skip)]
    pub spans: Vec<Span>,
}

/// A piece of a line of prose and its paint (a tl;dr's step family, red or green only when
/// decided).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The text.
    pub text: String,
    /// Its paint.
    pub colour: Colour,
}

impl Span {
    /// Text with no paint.
    pub fn plain(text: impl Into<String>) -> Span {
        Span {
            text: text.into(),
            colour: Colour::None,
        }
    }
}

/// One run against the base.
#[derive(Clone, Debug, Serialize)]
pub struct TldrLine {
    /// The run's label.
    pub run: String,
    /// Per step family, in the order the steps ran.
    pub families: Vec<TldrFamily>,
    /// What differs in the run's setup from the base's, the first few named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differs: Option<String>,
    /// The host caveat for this run, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caveat: Option<String>,
    /// The line as every format writes it.
    pub text: String,
    /// The line in pieces, each family's range painted as `report::paint` decided it, as HTML
    /// and coloured text show it (their texts joined are `text`).
    #[serde(skip)]
    pub spans: Vec<Span>,
}

/// A step family's relative throughput in one run.
#[derive(Clone, Debug, Serialize)]
pub struct TldrFamily {
    /// `writes` (the load steps with the writes), `range queries`, `point queries`.
    pub family: String,
    /// Steps of the family both runs have.
    pub steps: usize,
    /// Of those, the steps whose figure is decided (painted, or inside the band).
    pub decided: usize,
    /// Lowest decided relative throughput (absent when none is decided).
    pub relative_min: Option<f64>,
    /// Highest decided relative throughput.
    pub relative_max: Option<f64>,
    /// The range's paint: red or green only when every figure of the family is decided and
    /// all agree.
    pub colour: Colour,
    /// The range of all its figures as measured, decided or not.
    pub measured_min: f64,
    /// Highest, as measured.
    pub measured_max: f64,
    /// Why figures are not decided (the first reason), when some are not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undecided_reason: Option<String>,
}

/// What a comparison means to vary (a matrix group: its servers, configs and workload axes),
/// and the runs whose setup differs beyond it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AxisCheck {
    /// What varies, for people: `the server (pg15, pg17), --clients (1, 2)`.
    pub varies: String,
    /// One line per run that differs beyond the axis, naming it and what differs.
    pub warnings: Vec<String>,
}

/// For runs whose number of clients differs: each step's throughput per client, and the
/// scaling efficiency: throughput / (the base's × clients / the base's clients).
#[derive(Clone, Debug, Serialize)]
pub struct Scaling {
    /// Throughput / the step's clients, a row per run.
    pub per_client: Table,
    /// Throughput / (the base's throughput × the ratio of clients), a row per run.
    pub efficiency: Table,
}

/// A run's steps of one family (load, writes, range queries, point queries) against the base.
#[derive(Clone, Debug, Serialize)]
pub struct FamilySummary {
    /// The family (`writes`).
    pub family: String,
    /// The run's label.
    pub run: String,
    /// Steps of the family both runs have.
    pub steps: usize,
    /// Lowest relative throughput of those steps.
    pub relative_min: f64,
    /// Highest.
    pub relative_max: f64,
    /// The per-op figure named most often in the diagnoses of those steps, with the range of
    /// its ratio to the base: (figure, lowest ratio, highest ratio).
    pub mover: Option<(String, f64, f64)>,
    /// How many of those steps are host-affected (`report::host`): their figures may measure
    /// the host, not the DBMS.
    pub host_affected: usize,
    /// How many of those steps' figures are not decided (grey with a reason: host-affected,
    /// partial, within the base's spread).
    pub undecided: usize,
    /// The range's paint (`report::paint::paint_of_range`): red or green only when every
    /// figure of the family is decided and all agree; grey otherwise.
    pub colour: Colour,
}

/// Microbenchmark tables: one row per microbenchmark (in the published order), one column per
/// run.
#[derive(Clone, Debug, Serialize)]
pub struct MicroView {
    /// Operations per second (a scan: rows per second).
    pub absolute: StepRows,
    /// Relative to the base.
    pub relative: StepRows,
    /// The server's efficiency per operation: (figure, meaning, table).
    pub per_op: Vec<(String, String, StepRows)>,
}

/// Whether a cell is marked host-affected.
pub fn host_affected(c: &Cell) -> bool {
    c.value.is_some() && matches!(c.note, Some(CellNote::HostAffected(_)))
}

/// `v` with its whole part grouped in thousands and `decimals` decimals: `12,345.6`.
pub fn grouped(v: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, v.abs());
    let (whole, frac) = text
        .split_once('.')
        .map_or((text.as_str(), ""), |(w, f)| (w, f));
    let whole: u64 = whole.parse().unwrap_or(0);
    let sign = if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        "-"
    } else {
        ""
    };
    let mut out = format!("{sign}{}", crate::stats::thousands::group(whole));
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// The lag SLA of the runs compared: the bound and a verdict per run and step.
#[derive(Clone, Debug, Serialize)]
pub struct LagSla {
    /// The bound on a step's 99th-percentile lag, ms (`--lag-sla-ms`).
    pub bound_ms: f64,
    /// One verdict per step of every run that measured a replica, in run order then step
    /// order.
    pub verdicts: Vec<LagVerdict>,
}

/// One step of one run against the bound.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LagVerdict {
    /// The run's label.
    pub run: String,
    /// The step.
    pub step: StepName,
    /// Whether the step held the bound: its p99 lag at most the bound and the replica never
    /// lost.
    pub passed: bool,
    /// The step's 99th-percentile lag over the heartbeat's readings, ms (nearest rank: with
    /// fewer than 100 readings, their largest); absent when no reading succeeded.
    pub lag_p99_ms: Option<f64>,
    /// The largest lag read, ms.
    pub lag_max_ms: Option<f64>,
    /// Seconds of the step (timeline.jsonl) whose largest reading exceeded the bound.
    pub seconds_over: u32,
    /// Seconds of the step with a reading.
    pub seconds_read: u32,
    /// Seconds into the step from which the replica could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_from_second: Option<f64>,
    /// Why it failed, for people (`p99 lag 1,234 ms over the 1,000 ms bound`, `replica lost
    /// from 3.0 s`); absent when it passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_notes_serialise_to_their_text() {
        let json = |n: CellNote| serde_json::to_string(&n).unwrap();
        assert_eq!(json(CellNote::Missing), "\"missing\"");
        assert_eq!(json(CellNote::NoBase), "\"no base\"");
        assert_eq!(json(CellNote::NotMeasured), "\"n/a\"");
        assert_eq!(json(CellNote::SlaFailed), "\"SLA failed\"");
        assert_eq!(json(CellNote::Unfinished(Status::Failed)), "\"failed\"");
        assert_eq!(
            json(CellNote::Unfinished(Status::Interrupted)),
            "\"interrupted\""
        );
        assert_eq!(
            json(CellNote::CheckFailed(vec![
                CheckKind::Integrity,
                CheckKind::Settle
            ])),
            "\"check failed: integrity, settle\""
        );
        assert_eq!(json(CellNote::UnsettledStart), "\"unsettled start\"");
        assert_eq!(
            json(CellNote::HostAffected(vec!["a".into(), "b".into()])),
            "\"host-affected: a; b\""
        );
        assert_eq!(json(CellNote::WithinBaseSpread), "\"within base spread\"");
        let waived = CellNote::HostFlagWaived {
            reasons: vec!["a".into(), "b".into()],
            why: crate::stats::decision::DUET_SAME_HOST,
        };
        assert_eq!(
            json(waived.clone()),
            "\"not held to the host screening's flag (a; b): a duet's sides met the same host\""
        );
        assert_eq!(waived.mark(), "");
        assert!(!waived.leaves_undecided());
        assert!(CellNote::WithinBaseSpread.leaves_undecided());
        assert!(CellNote::Unfinished(Status::Running).is_partial());
        assert!(!CellNote::UnsettledStart.is_partial());
    }

    #[test]
    fn a_figure_is_grouped_in_thousands() {
        assert_eq!(grouped(12_345.04, 1), "12,345.0");
        assert_eq!(grouped(98.66, 1), "98.7");
        assert_eq!(grouped(-1_234.6, 0), "-1,235");
        assert_eq!(grouped(-0.01, 1), "0.0");
    }
}
