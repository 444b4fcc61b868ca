//! The comparison of runs as data: the three summary tables of the published reports with
//! their colours, and per step the latency distribution and the figures of every run. Every
//! output format renders from a [`Comparison`]; `--format json` is this struct.

use crate::stats::convert::count_f64;
use std::collections::BTreeSet;

use serde::Serialize;

use super::diagnosis::StepBands;
use super::load::LoadedRun;
use crate::results::metrics::{METRICS, Metric, ProfileRecord, Source};
use crate::results::{CheckKind, Status, StepRecord};
use crate::stats::OpKind;
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
}

impl Cell {
    fn missing(note: CellNote) -> Cell {
        Cell {
            value: None,
            colour: Colour::None,
            note: Some(note),
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
}

impl CellNote {
    /// Whether a cell with a figure and this note needs a mark: the figure covers only part of
    /// its step, or a check after the step failed.
    pub fn is_partial(&self) -> bool {
        matches!(self, CellNote::Unfinished(_) | CellNote::CheckFailed(_))
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
            CellNote::WithinBaseSpread => f.write_str("within base spread"),
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
    pub differences: Vec<RunSetup>,
    /// What the comparison means to vary (a matrix group's axis) and the runs that differ
    /// beyond it; absent outside a matrix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub axis: Option<AxisCheck>,
    /// Throughput per client and scaling efficiency, when some run's clients differ from the
    /// base's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Scaling>,
}

/// How one run's setup differs from the base's.
#[derive(Clone, Debug, Serialize)]
pub struct RunSetup {
    /// The run's label.
    pub run: String,
    /// What differs.
    #[serde(flatten)]
    pub setup: super::differs::SetupDifferences,
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

/// The report's title: what the runs are.
pub fn title(cmp: &Comparison) -> &'static str {
    if cmp.micro.is_some() {
        "Microbenchmark results"
    } else {
        "Insert Benchmark results"
    }
}

/// A microbenchmark table cut into its published groups (`load`, `point queries`, `range
/// queries`, `writes`), each with the rows of its microbenchmarks.
pub fn micro_groups(t: &StepRows) -> Vec<(&'static str, StepRows)> {
    let mut out: Vec<(&'static str, StepRows)> = Vec::new();
    for row in &t.rows {
        let g = row.label.family();
        match out.last_mut() {
            Some((last, table)) if *last == g => table.rows.push(row.clone()),
            _ => out.push((
                g,
                Table {
                    columns: t.columns.clone(),
                    rows: vec![row.clone()],
                },
            )),
        }
    }
    out
}

/// A table with its rows and columns swapped: steps become rows, runs columns.
pub fn transpose(t: &Table, labels: &[String]) -> StepRows {
    Table {
        columns: labels.to_vec(),
        rows: t
            .columns
            .iter()
            .enumerate()
            .map(|(j, step)| TableRow {
                label: *step,
                cells: t
                    .rows
                    .iter()
                    .map(|r| {
                        r.cells
                            .get(j)
                            .cloned()
                            .unwrap_or_else(|| Cell::missing(CellNote::Missing))
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The microbenchmark view of a comparison whose steps are all microbenchmark steps.
fn micro_view(
    runs: &[LoadedRun],
    names: &[StepName],
    labels: &[String],
    absolute: &Table,
    relative: &Table,
) -> Option<MicroView> {
    if names.is_empty() || !names.iter().all(|n| n.is_micro()) {
        return None;
    }
    let per_op = METRICS
        .iter()
        .filter_map(|d| Some((d.shown.micro?, d.meaning, d.get)))
        .map(|(name, meaning, f)| {
            let rows = names
                .iter()
                .map(|&step| TableRow {
                    label: step,
                    cells: runs
                        .iter()
                        .map(|r| {
                            let value = r
                                .record
                                .step(step)
                                .and_then(|s| s.metrics.as_ref())
                                .and_then(|m| f(m).value());
                            Cell {
                                value,
                                colour: Colour::None,
                                note: value.is_none().then_some(CellNote::NotMeasured),
                            }
                        })
                        .collect(),
                })
                .collect();
            let table = Table {
                columns: labels.to_vec(),
                rows,
            };
            ((*name).to_string(), (*meaning).to_string(), table)
        })
        .collect();
    Some(MicroView {
        absolute: transpose(absolute, labels),
        relative: transpose(relative, labels),
        per_op,
    })
}

/// Colours of the absolute-throughput column (spec section 7): top quarter of the column's
/// range green, bottom quarter red (no red when min ≥ 0.8 × max); SLA failures grey and left
/// out of the range. `values[i]` is `(value, sla_failed)`.
pub fn absolute_colours(values: &[Option<(f64, bool)>]) -> Vec<Colour> {
    let ok: Vec<f64> = values
        .iter()
        .flatten()
        .filter(|(_, failed)| !failed)
        .map(|(v, _)| *v)
        .collect();
    let max = ok.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = ok.iter().copied().fold(f64::INFINITY, f64::min);
    values
        .iter()
        .map(|v| match v {
            None => Colour::None,
            Some((_, true)) => Colour::Grey,
            Some((v, false)) => {
                if ok.len() < 2 || max <= min {
                    Colour::None
                } else {
                    let quarter = (max - min) / 4.0;
                    if *v >= max - quarter {
                        Colour::Green
                    } else if *v <= min + quarter && min < 0.8 * max {
                        Colour::Red
                    } else {
                        Colour::None
                    }
                }
            }
        })
        .collect()
}

/// Colour of a relative value: red ≤ 0.95, green ≥ 1.05, grey between.
pub fn relative_colour(r: f64) -> Colour {
    if r <= 0.95 {
        Colour::Red
    } else if r >= 1.05 {
        Colour::Green
    } else {
        Colour::Grey
    }
}

/// Colour of a background insert rate: red below 95% of the target.
pub fn background_colour(achieved: f64, target: f64) -> Colour {
    if achieved < 0.95 * target {
        Colour::Red
    } else {
        Colour::None
    }
}

/// Whether a step ran writers in the background of its main operation (a query step's
/// inserts and deletes): it recorded inserts while its throughput counts another op kind.
fn has_background_writers(s: &StepRecord) -> bool {
    s.main_op() != OpKind::Insert && s.ops.contains_key(OpKind::Insert.name())
}

fn sla_failed(s: &StepRecord) -> bool {
    s.sla.as_ref().is_some_and(|x| !x.passed)
}

fn status_note(s: &StepRecord) -> Option<CellNote> {
    (s.status != Status::Completed).then_some(CellNote::Unfinished(s.status))
}

/// The note of a figure whose step's checks failed: `check failed: integrity`.
fn check_note(s: &StepRecord) -> Option<CellNote> {
    let mut kinds: Vec<CheckKind> = s.check_failures.iter().map(|f| f.kind).collect();
    kinds.sort_by_key(ToString::to_string);
    kinds.dedup();
    (!kinds.is_empty()).then_some(CellNote::CheckFailed(kinds))
}

/// The start of the note of a figure whose step's checks failed.
const CHECK_FAILED: &str = "check failed";

/// [`CellNote::UnsettledStart`] when the run's `step` started from an unsettled server.
fn unsettled_note(run: &LoadedRun, step: StepName) -> Option<CellNote> {
    let i = run.record.steps.iter().position(|s| s.name == step)?;
    run.record
        .unsettled_before(i)
        .map(|_| CellNote::UnsettledStart)
}

/// One line per settle phase that ran out of its budget, naming what it left and the steps
/// that started from the unsettled server, for the report's notes.
fn unsettled_lines(runs: &[LoadedRun]) -> Vec<String> {
    let mut lines = Vec::new();
    for r in runs {
        let steps = &r.record.steps;
        for (i, s) in steps.iter().enumerate() {
            let Some(settle) = &s.settle else { continue };
            let Some(left) = &settle.unsettled else {
                continue;
            };
            let after: Vec<String> = steps[i + 1..]
                .iter()
                .take_while(|n| n.settle.is_none())
                .map(|n| n.name.to_string())
                .collect();
            let started = if after.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} started from an unsettled server (their figures are as measured, noted {})",
                    after.join(", "),
                    CellNote::UnsettledStart
                )
            };
            lines.push(format!(
                "{} {}: the settle phase ran out of its {:.0} s budget with work left ({left}){started}",
                r.label, s.name, settle.planned_seconds
            ));
        }
    }
    lines
}

/// One line per step that did not complete or whose checks failed, for the report's notes.
fn check_failure_lines(runs: &[LoadedRun]) -> Vec<String> {
    runs.iter()
        .flat_map(|r| {
            r.record.steps.iter().flat_map(|s| {
                let unfinished = status_note(s).map(|status| {
                    format!(
                        "{} {}: {status}{} (its figures cover only the part that ran, marked !)",
                        r.label,
                        s.name,
                        s.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default()
                    )
                });
                let check = s.check_failed().then(|| {
                    format!(
                        "{} {}: {CHECK_FAILED}: {} (the step's figures are kept as measured, marked !)",
                        r.label,
                        s.name,
                        s.check_failure_text()
                    )
                });
                unfinished.into_iter().chain(check)
            })
        })
        .collect()
}

/// Build the comparison. `base` picks the base run by label; when it matches nothing the
/// first run is the base and a problem says so. Every step's noise band is the default ±5%.
pub fn compare(runs: &[LoadedRun], base: Option<&str>, problems: Vec<String>) -> Comparison {
    compare_with_spreads(runs, base, problems, &[])
}

/// [`compare`] with each run's spread over its repeats (`spreads[i]` is `runs[i]`'s; a matrix
/// report): the base's spread is the noise band of its steps. A relative throughput inside it
/// is grey, noted [`CellNote::WithinBaseSpread`], and not diagnosed.
pub fn compare_with_spreads(
    runs: &[LoadedRun],
    base: Option<&str>,
    mut problems: Vec<String>,
    spreads: &[StepBands],
) -> Comparison {
    let labels: Vec<String> = runs.iter().map(|r| r.label.clone()).collect();
    let base_index = base_index(runs, base, &labels, &mut problems);
    let noise = spreads.get(base_index).cloned().unwrap_or_default();
    problems.extend(check_failure_lines(runs));
    problems.extend(unsettled_lines(runs));
    let steps = step_names(runs, &mut problems);
    let (absolute, abs_cells) = absolute_table(runs, &steps);
    let mut relative = relative_table(runs, &steps, &abs_cells, base_index);
    let shifts = super::shift::shifts(runs);
    let host = super::host::host_view(runs, base_index, &steps, &shifts);
    mark_host_affected(&mut relative, &host);
    mark_within_base_spread(&mut relative, base_index, &noise);
    let (background, targets) = background_table(runs, &steps);
    let details = steps
        .iter()
        .map(|&name| step_detail(runs, base_index, name))
        .collect();
    let differences: Vec<RunSetup> = runs
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != base_index)
        .map(|(_, r)| RunSetup {
            run: r.label.clone(),
            setup: super::differs::setup_differences(&runs[base_index], r),
        })
        .collect();
    let diagnoses = diagnoses(runs, base_index, &steps, &host, &noise, &differences);
    let micro = micro_view(runs, &steps, &labels, &absolute, &relative);
    let scaling = super::setup::scaling(runs, base_index, &steps, &differences);
    let keys = short_keys(&labels);
    let run_rows = run_rows(runs, &keys);
    let mut cmp = Comparison {
        labels,
        keys,
        build_warning: build_warning(&run_rows),
        tls_warning: tls_warning(&run_rows),
        runs: run_rows,
        base: base_index,
        steps,
        absolute,
        relative,
        background,
        background_targets: targets,
        details,
        diagnoses,
        summary: Vec::new(),
        micro,
        problems,
        host,
        shifts,
        differences,
        axis: None,
        scaling,
    };
    cmp.summarise();
    cmp
}

/// Grey the relative cells of host-affected steps (never painted as a DBMS change) and note
/// why, unless the cell already carries a note (a [`CellNote::UnsettledStart`] gives way: the
/// notes list those steps anyway).
fn mark_host_affected(relative: &mut Table, host: &super::host::HostView) {
    for row in &mut relative.rows {
        for (cell, step) in row.cells.iter_mut().zip(&relative.columns) {
            let Some(flag) = host.flag(*step, &row.label) else {
                continue;
            };
            if cell.value.is_none() {
                continue;
            }
            cell.colour = Colour::Grey;
            if matches!(cell.note, None | Some(CellNote::UnsettledStart)) {
                cell.note = Some(CellNote::HostAffected(flag.reasons.clone()));
            }
        }
    }
}

/// Grey the relative cells that lie inside the base's spread over repeats (`noise`: its
/// steps' own bands) and note why, unless the cell is grey already (host-affected, or within
/// ±5%).
fn mark_within_base_spread(relative: &mut Table, base: usize, noise: &StepBands) {
    for (i, row) in relative.rows.iter_mut().enumerate() {
        if i == base {
            continue;
        }
        for (cell, step) in row.cells.iter_mut().zip(&relative.columns) {
            let (Some(r), Some(band)) = (cell.value, noise.own(*step)) else {
                continue;
            };
            if band.contains(r) && cell.colour != Colour::Grey {
                cell.colour = Colour::Grey;
                if cell.note.is_none() {
                    cell.note = Some(CellNote::WithinBaseSpread);
                }
            }
        }
    }
}

/// Whether a cell is marked host-affected.
pub fn host_affected(c: &Cell) -> bool {
    c.value.is_some() && matches!(c.note, Some(CellNote::HostAffected(_)))
}

impl Comparison {
    /// Name the runs by `keys` (one per run, in order) in the tables, instead of the keys
    /// made from the labels.
    pub fn set_keys(&mut self, keys: Vec<String>) {
        if keys.len() == self.runs.len() {
            for (r, k) in self.runs.iter_mut().zip(&keys) {
                r.key = k.clone();
            }
            self.keys = keys;
            self.build_warning = build_warning(&self.runs);
            self.tls_warning = tls_warning(&self.runs);
        }
    }

    /// The key of the run labelled `label` (the label itself when no run has it).
    pub fn key_of<'a>(&'a self, label: &'a str) -> &'a str {
        self.labels
            .iter()
            .position(|l| l == label)
            .and_then(|i| self.keys.get(i))
            .map_or(label, String::as_str)
    }

    /// Sum the diagnoses up per step family and run.
    fn summarise(&mut self) {
        let names = &self.steps;
        let mut out = Vec::new();
        for (i, row) in self.relative.rows.iter().enumerate() {
            if i == self.base {
                continue;
            }
            let mut families: Vec<&'static str> = names.iter().map(|n| n.family()).collect();
            families.dedup();
            let mut seen = BTreeSet::new();
            families.retain(|f| seen.insert(*f));
            for family in families {
                let in_family = |step: &StepName| step.family() == family;
                let rel: Vec<f64> = row
                    .cells
                    .iter()
                    .zip(&self.relative.columns)
                    .filter(|(_, step)| in_family(step))
                    .filter_map(|(c, _)| c.value)
                    .collect();
                if rel.is_empty() {
                    continue;
                }
                let diagnosed: Vec<&super::diagnosis::Diagnosis> = self
                    .diagnoses
                    .iter()
                    .filter(|d| d.run == row.label && in_family(&d.step))
                    .collect();
                out.push(FamilySummary {
                    family: family.to_string(),
                    run: row.label.clone(),
                    steps: rel.len(),
                    relative_min: rel.iter().copied().fold(f64::INFINITY, f64::min),
                    relative_max: rel.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    mover: top_mover(&diagnosed),
                    host_affected: self
                        .host
                        .flags
                        .iter()
                        .filter(|f| f.run == row.label && in_family(&f.step))
                        .count(),
                });
            }
        }
        self.summary = out;
    }
}

/// The figure named most often among `diagnosed` (ties: the one with the largest share),
/// with the range of its ratio.
fn top_mover(diagnosed: &[&super::diagnosis::Diagnosis]) -> Option<(String, f64, f64)> {
    let mut by_figure: Vec<(String, Vec<f64>, f64)> = Vec::new();
    for m in diagnosed.iter().flat_map(|d| &d.movers) {
        match by_figure.iter_mut().find(|(f, ..)| *f == m.figure) {
            Some((_, ratios, share)) => {
                ratios.push(m.ratio);
                *share = share.max(m.share);
            }
            None => by_figure.push((m.figure.clone(), vec![m.ratio], m.share)),
        }
    }
    by_figure
        .into_iter()
        .max_by(|a, b| a.1.len().cmp(&b.1.len()).then(a.2.total_cmp(&b.2)))
        .map(|(f, ratios, _)| {
            let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (f, lo, hi)
        })
}

/// Longest short key; longer ones fall back to `r1..rN`.
pub const MAX_KEY_CHARS: usize = 24;

/// The shortest names that tell the runs apart: the words of each name that not every name
/// shares (`PostgreSQL 17.10 sync0` and `PostgreSQL 17.10 sync1` become `sync0` and
/// `sync1`). When that leaves a name empty, two alike, or one longer than
/// [`MAX_KEY_CHARS`], the runs are `r1` to `rN`.
pub fn short_keys(names: &[String]) -> Vec<String> {
    let numbered = || (1..=names.len()).map(|i| format!("r{i}")).collect();
    if names.len() == 1 {
        let n = super::clean_label(&names[0]);
        return if n.chars().count() <= MAX_KEY_CHARS && !n.is_empty() {
            vec![n]
        } else {
            numbered()
        };
    }
    let words: Vec<Vec<&str>> = names
        .iter()
        .map(|n| n.split_whitespace().collect())
        .collect();
    let shared = |w: &str| words.iter().all(|ws| ws.contains(&w));
    let keys: Vec<String> = words
        .iter()
        .map(|ws| {
            let own: Vec<&str> = ws.iter().copied().filter(|w| !shared(w)).collect();
            super::clean_label(&own.join(" "))
        })
        .collect();
    let distinct: BTreeSet<&String> = keys.iter().collect();
    if distinct.len() < keys.len()
        || keys
            .iter()
            .any(|k| k.is_empty() || k.chars().count() > MAX_KEY_CHARS)
    {
        numbered()
    } else {
        keys
    }
}

/// The run table's rows.
fn run_rows(runs: &[LoadedRun], keys: &[String]) -> Vec<RunRow> {
    runs.iter()
        .zip(keys)
        .map(|(r, key)| {
            let build = r.record.build.as_ref();
            RunRow {
                key: key.clone(),
                label: r.label.clone(),
                dbms: r
                    .record
                    .target
                    .as_ref()
                    .map(|t| format!("{} {}", t.dbms, t.version))
                    .unwrap_or_default(),
                build_flags: build.and_then(crate::results::target::BuildFacts::flags_summary),
                binary_bytes: build.and_then(|b| b.binary_bytes),
                tls: r
                    .record
                    .target
                    .as_ref()
                    .and_then(|t| t.tls.as_ref())
                    .map(ToString::to_string),
                status: format!("{:?}", r.record.status).to_lowercase(),
                dir: r.dir.display().to_string(),
            }
        })
        .collect()
}

/// `Build flags differ: -O2, lz4 (a, b); -Os, no lz4 (c): ...` when the runs that report their
/// flags do not all share them.
/// A line when the runs' builds differ in flags, naming the runs by their keys.
fn build_warning(rows: &[RunRow]) -> Option<String> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in rows {
        let Some(flags) = r.build_flags.as_deref() else {
            continue;
        };
        match groups.iter_mut().find(|(f, _)| *f == flags) {
            Some((_, keys)) => keys.push(&r.key),
            None => groups.push((flags, vec![&r.key])),
        }
    }
    (groups.len() > 1).then(|| {
        let parts: Vec<String> = groups
            .iter()
            .map(|(flags, labels)| format!("{flags} ({})", labels.join(", ")))
            .collect();
        format!(
            "Build flags differ: {}. A build difference alone moves every figure: compare builds made with the same flags.",
            parts.join("; ")
        )
    })
}

/// A line when some runs used TLS and others did not, naming the runs by their keys.
fn tls_warning(rows: &[RunRow]) -> Option<String> {
    let (tls, plain): (Vec<&RunRow>, Vec<&RunRow>) = rows.iter().partition(|r| r.tls.is_some());
    (!tls.is_empty() && !plain.is_empty()).then(|| {
        let keys = |rs: &[&RunRow]| {
            rs.iter()
                .map(|r| r.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "TLS differs: {} connected over TLS, {} without. Encryption costs CPU on both sides \
             of every statement: compare runs made the same way.",
            keys(&tls),
            keys(&plain)
        )
    })
}

/// The index of the base run: the one labelled `base`, else the first (with a problem line).
fn base_index(
    runs: &[LoadedRun],
    base: Option<&str>,
    labels: &[String],
    problems: &mut Vec<String>,
) -> usize {
    match base {
        None => 0,
        Some(b) => match runs
            .iter()
            .position(|r| r.label == b || r.record.label == b)
        {
            Some(i) => i,
            None => {
                problems.push(format!(
                    "no run is labelled '{b}' (--base); the labels are: {}; using '{}' as the base",
                    labels.join(", "),
                    labels.first().map_or("", String::as_str)
                ));
                0
            }
        },
    }
}

/// Every step of any run, in step order; a run that lacks some gets a problem line.
fn step_names(runs: &[LoadedRun], problems: &mut Vec<String>) -> Vec<StepName> {
    let mut names: Vec<StepName> = Vec::new();
    let mut seen = BTreeSet::new();
    for s in runs.iter().flat_map(|r| r.record.steps.iter()) {
        if seen.insert(s.name.sort_key()) {
            names.push(s.name);
        }
    }
    names.sort_by_key(|s| s.sort_key());
    if names.iter().any(|n| n.is_micro()) && names.iter().any(|n| !n.is_micro()) {
        problems.push(
            "the runs are of different workloads (insert benchmark and microbenchmarks): compare runs of one workload"
                .to_string(),
        );
    }
    for run in runs {
        let missing: Vec<String> = names
            .iter()
            .filter(|&&s| run.record.step(s).is_none())
            .map(ToString::to_string)
            .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{} has no {} (shown as missing)",
                run.label,
                missing.join(", ")
            ));
        }
    }
    names
}

/// The absolute throughput table, and its cells per run (the relative table divides them).
fn absolute_table(runs: &[LoadedRun], steps: &[StepName]) -> (Table, Vec<Vec<Cell>>) {
    // 1. Absolute throughput.
    let mut abs_cells: Vec<Vec<Cell>> = vec![Vec::new(); runs.len()];
    for &step in steps {
        let column: Vec<Option<&StepRecord>> = runs.iter().map(|r| r.record.step(step)).collect();
        let values: Vec<Option<(f64, bool)>> = column
            .iter()
            .map(|s| s.map(|s| (s.throughput, sla_failed(s))))
            .collect();
        let colours = absolute_colours(&values);
        for (i, s) in column.iter().enumerate() {
            abs_cells[i].push(match s {
                None => Cell::missing(CellNote::Missing),
                Some(s) => Cell {
                    value: Some(s.throughput),
                    colour: colours[i],
                    note: if sla_failed(s) {
                        Some(CellNote::SlaFailed)
                    } else {
                        status_note(s)
                            .or_else(|| check_note(s))
                            .or_else(|| unsettled_note(&runs[i], step))
                    },
                },
            });
        }
    }
    let absolute = Table {
        columns: steps.to_vec(),
        rows: runs
            .iter()
            .zip(abs_cells.iter())
            .map(|(r, cells)| TableRow {
                label: r.label.clone(),
                cells: cells.clone(),
            })
            .collect(),
    };
    (absolute, abs_cells)
}

/// Each run's throughput divided by the base's, per step.
fn relative_table(
    runs: &[LoadedRun],
    steps: &[StepName],
    abs_cells: &[Vec<Cell>],
    base_index: usize,
) -> Table {
    // 2. Relative to the base.
    Table {
        columns: steps.to_vec(),
        rows: abs_cells
            .iter()
            .zip(runs)
            .map(|(cells, r)| TableRow {
                label: r.label.clone(),
                cells: cells
                    .iter()
                    .zip(&abs_cells[base_index])
                    .map(|(c, b)| match (c.value, b.value) {
                        (Some(v), Some(bv)) if bv > 0.0 => {
                            let rel = v / bv;
                            Cell {
                                value: Some(rel),
                                colour: relative_colour(rel),
                                note: c.note.clone(),
                            }
                        }
                        (None, _) => Cell::missing(CellNote::Missing),
                        _ => Cell::missing(CellNote::NoBase),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The background insert rates of the query steps, and their targets.
fn background_table(runs: &[LoadedRun], steps: &[StepName]) -> (Table, Vec<Option<f64>>) {
    // 3. Background insert rates of the steps with background writers (the query steps).
    let query_steps: Vec<StepName> = steps
        .iter()
        .copied()
        .filter(|&n| {
            runs.iter()
                .filter_map(|r| r.record.step(n))
                .any(has_background_writers)
        })
        .collect();
    let mut targets = vec![None; query_steps.len()];
    let background = Table {
        columns: query_steps.clone(),
        rows: runs
            .iter()
            .map(|r| TableRow {
                label: r.label.clone(),
                cells: query_steps
                    .iter()
                    .enumerate()
                    .map(
                        |(j, &step)| match r.record.step(step).and_then(|s| s.sla.as_ref()) {
                            None => Cell::missing(CellNote::Missing),
                            Some(sla) => {
                                targets[j] = Some(sla.target_rows_per_sec);
                                Cell {
                                    value: Some(sla.achieved_rows_per_sec),
                                    colour: background_colour(
                                        sla.achieved_rows_per_sec,
                                        sla.target_rows_per_sec,
                                    ),
                                    note: (!sla.passed).then_some(CellNote::SlaFailed),
                                }
                            }
                        },
                    )
                    .collect(),
            })
            .collect(),
    };
    (background, targets)
}

/// One line of a profile: its top functions by own share (`ExecInsert 12.3%, ...`), or why
/// there is none.
pub fn profile_line(p: &ProfileRecord, functions: usize) -> String {
    if let Some(e) = &p.error {
        return format!("n/a ({e})");
    }
    let top: Vec<String> = p
        .top_functions
        .iter()
        .take(functions)
        .map(|f| format!("{} {:.1}%", f.function, f.self_share * 100.0))
        .collect();
    format!(
        "{} ({} samples in {:.1} s)",
        top.join(", "),
        p.samples,
        p.seconds
    )
}

/// The diagnosis of every step of every run against the base, where its relative throughput
/// lies outside the step's noise band (`noise`); steps that did not complete are left out.
fn diagnoses(
    runs: &[LoadedRun],
    base: usize,
    steps: &[StepName],
    host: &super::host::HostView,
    noise: &StepBands,
    differences: &[RunSetup],
) -> Vec<super::diagnosis::Diagnosis> {
    let mut out = Vec::new();
    for &step in steps {
        let Some(b) = runs.get(base).and_then(|r| r.record.step(step)) else {
            continue;
        };
        for (i, run) in runs.iter().enumerate() {
            if i == base {
                continue;
            }
            if let Some(s) = run.record.step(step)
                && s.status == Status::Completed
                && b.status == Status::Completed
                && let Some(mut d) = super::diagnosis::diagnose(&run.label, s, b, noise.of(step))
            {
                d.build = build_difference(run, &runs[base]);
                d.host = host.flag(step, &run.label).map(|f| f.reasons.join("; "));
                d.setup = differences
                    .iter()
                    .find(|x| x.run == run.label)
                    .and_then(|x| super::setup::diagnosis_note(&x.setup, s, b));
                out.push(d);
            }
        }
    }
    out
}

/// `-Os, no lz4 vs the base's -O2, lz4` when `run` and `base` are one DBMS major whose
/// builds differ in flags.
fn build_difference(run: &LoadedRun, base: &LoadedRun) -> Option<String> {
    let family = |r: &LoadedRun| {
        r.record
            .target
            .as_ref()
            .map(|t| super::diagnosis::version_family(&t.dbms, &t.version))
    };
    let flags = |r: &LoadedRun| {
        r.record
            .build
            .as_ref()
            .and_then(crate::results::target::BuildFacts::flags_summary)
    };
    let (f, bf) = (flags(run)?, flags(base)?);
    (f != bf && family(run)? == family(base)?).then(|| format!("{f} vs the base's {bf}"))
}

fn step_detail(runs: &[LoadedRun], base: usize, name: StepName) -> StepDetail {
    let records: Vec<Option<&StepRecord>> = runs.iter().map(|r| r.record.step(name)).collect();
    let main = records
        .iter()
        .flatten()
        .next()
        .map_or_else(|| name.main_op(), |s| s.main_op());
    let mut kinds = vec![main];
    if records.iter().flatten().any(|s| has_background_writers(s)) {
        kinds.push(OpKind::Insert);
    }
    let latency = kinds
        .iter()
        .map(|k| (k.name().to_string(), latency_rows(runs, &records, *k)))
        .collect();

    let row =
        |name: &str, meaning: &str, lower: Option<bool>, f: &dyn Fn(&StepRecord) -> Option<f64>| {
            figure_row(&records, base, name, meaning, lower, f)
        };
    let metrics = step_figures(&records, &row);
    let profiles = runs
        .iter()
        .zip(&records)
        .filter_map(|(r, s)| {
            let p = (*s)?.metrics.as_ref()?.profile.as_ref()?;
            Some((r.label.clone(), p.clone()))
        })
        .collect();
    let (counters, counters_na) = counter_rows(&records, &row);
    StepDetail {
        step: name,
        unit: records
            .iter()
            .flatten()
            .next()
            .map(|s| s.throughput_unit.to_string())
            .unwrap_or_default(),
        latency,
        metrics,
        counters,
        counters_na,
        profiles,
    }
}

/// Makes a step's figure row from its name, meaning, direction and how to read it from a step.
type MakeRow<'a> =
    dyn Fn(&str, &str, Option<bool>, &dyn Fn(&StepRecord) -> Option<f64>) -> MetricRow + 'a;

/// One figure of a step in every run, and its ratio to the base's.
fn figure_row(
    records: &[Option<&StepRecord>],
    base: usize,
    name: &str,
    meaning: &str,
    lower_is_better: Option<bool>,
    f: &dyn Fn(&StepRecord) -> Option<f64>,
) -> MetricRow {
    let values: Vec<Option<f64>> = records.iter().map(|s| s.and_then(f)).collect();
    let base_value = values.get(base).copied().flatten();
    MetricRow {
        name: name.to_string(),
        meaning: meaning.to_string(),
        relative: values
            .iter()
            .map(|v| match (v, base_value) {
                (Some(v), Some(b)) if b != 0.0 => Some(v / b),
                _ => None,
            })
            .collect(),
        values,
        lower_is_better,
    }
}

/// A step's figures: from the step's record (throughput, client CPU, rates, latency, time),
/// then the server's figures of [`METRICS`] the reports show. Names, meanings and directions
/// come from [`METRICS`] where it has them.
fn step_figures(records: &[Option<&StepRecord>], row: &MakeRow) -> Vec<MetricRow> {
    let main = |s: &StepRecord| s.main_op().name();
    let def = |n: &str| {
        crate::results::metrics::metric_def(n)
            .map_or(("", None), |d| (d.meaning, Some(d.lower_is_better)))
    };
    let from_record = |n: &str, f: &dyn Fn(&StepRecord) -> Option<f64>| {
        let (meaning, lower) = def(n);
        row(n, meaning, lower, f)
    };
    let mut figures = vec![
        row(
            "throughput",
            "the step's throughput figure",
            Some(false),
            &|s| Some(s.throughput),
        ),
        from_record("ccpupq", &|s| s.client_cpu_us_per_op),
        from_record("p50", &|s| s.rate_p50),
        from_record("p1low", &|s| s.rate_p1low),
        from_record("maxop", &|s| {
            s.ops
                .get(main(s))
                .map(|o| count_f64(o.latency_us.max_us) / 1e6)
        }),
        row(
            "p99",
            "99th percentile latency of the step's op, µs",
            Some(true),
            &|s| s.ops.get(main(s)).map(|o| count_f64(o.latency_us.p99_us)),
        ),
        row("seconds", "measured seconds", None, &|s| Some(s.seconds)),
    ];
    if records.iter().flatten().any(|s| s.metrics.is_some()) {
        for d in METRICS.iter().filter(|d| d.shown.report) {
            let r = row(d.name, d.meaning, Some(d.lower_is_better), &|s| {
                s.metrics.as_ref().and_then(|m| (d.get)(m).value())
            });
            // The DBMS's counters: only those some run's server has.
            if d.source == Source::Host || r.values.iter().any(Option::is_some) {
                figures.push(r);
            }
        }
    }
    figures
}

/// A step's perf record when it was counted in groups.
fn perf_groups(s: &StepRecord) -> Option<&crate::results::metrics::PerfRecord> {
    s.metrics
        .as_ref()?
        .perf
        .as_ref()
        .filter(|p| !p.groups.is_empty())
}

/// Group `index` (into `sampler::perf::GROUPS`) of a step's perf record.
fn group_of(s: &StepRecord, index: usize) -> Option<&crate::results::metrics::PerfGroupRecord> {
    perf_groups(s)?
        .groups
        .iter()
        .find(|g| usize::try_from(g.group).ok() == Some(index + 1))
}

/// The counters-per-operation rows of a step (clock, IPC, then every event counted in some
/// run, in group order) and the events n/a in every run, grouped by reason.
fn counter_rows(records: &[Option<&StepRecord>], row: &MakeRow) -> (Vec<MetricRow>, Vec<String>) {
    use crate::sampler::perf::GROUPS;
    if !records.iter().flatten().any(|s| perf_groups(s).is_some()) {
        return (Vec::new(), Vec::new());
    }
    let mut rows = vec![
        row(
            "GHz",
            "the clock: cycles / cpu-clock (a different clock changes every other ratio)",
            None,
            &|s| perf_groups(s)?.ghz(),
        ),
        row("IPC", "instructions per cycle", Some(false), &|s| {
            perf_groups(s)?.groups.iter().find_map(|g| g.ipc.value())
        }),
    ];
    let mut na: Vec<(String, Vec<&str>)> = Vec::new();
    for (g, events) in GROUPS.iter().enumerate() {
        for &e in *events {
            let unit = if e == "cpu-clock" { ", ms" } else { "" };
            // Every counter per op is a cost: fewer instructions, misses or faults per op.
            let counted = row(
                e,
                &format!("{e} per op{unit} (group {})", g + 1),
                Some(true),
                &|s| group_of(s, g)?.per_op.get(e)?.value(),
            );
            if counted.values.iter().any(Option::is_some) {
                rows.push(counted);
                continue;
            }
            let why = records
                .iter()
                .flatten()
                .find_map(|s| match group_of(s, g)?.counts.get(e)? {
                    Metric::Na(r) => Some(r.clone()),
                    Metric::Value(_) => None,
                })
                .unwrap_or_else(|| "not recorded".into());
            match na.iter_mut().find(|(r, _)| *r == why) {
                Some((_, events)) => events.push(e),
                None => na.push((why, vec![e])),
            }
        }
    }
    rows.retain(|r| r.values.iter().any(Option::is_some));
    let na = na
        .into_iter()
        .map(|(why, events)| format!("{}: {why}", events.join(", ")))
        .collect();
    (rows, na)
}

/// The latency row of every run that has ops of `kind` in the step.
fn latency_rows(
    runs: &[LoadedRun],
    records: &[Option<&StepRecord>],
    kind: OpKind,
) -> Vec<LatencyRow> {
    runs.iter()
        .zip(records)
        .filter_map(|(r, s)| {
            let l = &(*s)?.ops.get(kind.name())?.latency_us;
            Some(LatencyRow {
                label: r.label.clone(),
                bucket_shares: l.bucket_shares,
                p50_us: l.p50_us,
                p90_us: l.p90_us,
                p99_us: l.p99_us,
                p99_9_us: l.p99_9_us,
                max_us: l.max_us,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_colours_follow_the_quarters() {
        // Range 100..200: top quarter >= 175 green, bottom quarter <= 125 red.
        let v = [
            Some((200.0, false)),
            Some((180.0, false)),
            Some((150.0, false)),
            Some((120.0, false)),
            Some((100.0, false)),
        ];
        assert_eq!(
            absolute_colours(&v),
            [
                Colour::Green,
                Colour::Green,
                Colour::None,
                Colour::Red,
                Colour::Red
            ]
        );
    }

    #[test]
    fn no_red_when_the_spread_is_small_and_sla_failures_are_grey_and_ignored() {
        // min 85 >= 0.8 * 100: no red.
        let v = [Some((100.0, false)), Some((85.0, false))];
        assert_eq!(absolute_colours(&v), [Colour::Green, Colour::None]);
        // The 500 failed its SLA: grey, and the max is 100, not 500.
        let v = [
            Some((500.0, true)),
            Some((100.0, false)),
            Some((50.0, false)),
            None,
        ];
        assert_eq!(
            absolute_colours(&v),
            [Colour::Grey, Colour::Green, Colour::Red, Colour::None]
        );
        // One run: nothing to compare against.
        assert_eq!(absolute_colours(&[Some((1.0, false))]), [Colour::None]);
    }

    #[test]
    fn short_keys_keep_the_words_that_tell_runs_apart() {
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        assert_eq!(
            short_keys(&names(&[
                "PostgreSQL 17.10 sync0_comp0",
                "PostgreSQL 17.10 sync1_comp0"
            ])),
            ["sync0_comp0", "sync1_comp0"]
        );
        assert_eq!(
            short_keys(&names(&["pg10", "pg17 fpi0"])),
            ["pg10", "pg17 fpi0"]
        );
        // Alike, empty or too long: numbered.
        assert_eq!(short_keys(&names(&["a", "a"])), ["r1", "r2"]);
        assert_eq!(short_keys(&names(&["x y", "y x"])), ["r1", "r2"]);
        let long = "L".repeat(MAX_KEY_CHARS + 1);
        assert_eq!(short_keys(&names(&[&long, "b"])), ["r1", "r2"]);
        assert_eq!(short_keys(&names(&["SQLite base"])), ["SQLite base"]);
        assert_eq!(short_keys(&names(&[&long])), ["r1"]);
    }

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
        assert!(CellNote::Unfinished(Status::Running).is_partial());
        assert!(!CellNote::UnsettledStart.is_partial());
    }

    #[test]
    fn relative_and_background_thresholds() {
        assert_eq!(relative_colour(0.95), Colour::Red);
        assert_eq!(relative_colour(0.96), Colour::Grey);
        assert_eq!(relative_colour(1.04), Colour::Grey);
        assert_eq!(relative_colour(1.05), Colour::Green);
        assert_eq!(background_colour(94.9, 100.0), Colour::Red);
        assert_eq!(background_colour(95.0, 100.0), Colour::None);
    }
}
