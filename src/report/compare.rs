//! Building the comparison of runs ([`Comparison`], the model in [`super::model`]): the base,
//! the steps, the tables, the step details, the diagnoses and their summary per step family,
//! the notes and the warnings, each made by its own module.

use std::collections::BTreeSet;

use super::details::step_detail;
use super::diagnosis::StepBands;
use super::load::LoadedRun;
use super::model::{Comparison, FamilySummary, Table};
use super::notes::{check_failure_lines, duet_lines, unsettled_lines};
use super::paint::{Paint, of_cell, paint_of_range};
use super::run_table::{keys_of_runs, run_rows};
use super::tables::{background_table, measures, micro_view, paint_relative};
use super::warnings::{build_warning, tls_warning};
use crate::workload::steps::StepName;

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
    let mut missing_steps = Vec::new();
    let steps = step_names(runs, &mut missing_steps);
    problems.extend(run_problems(runs, missing_steps));
    let shifts = super::shift::shifts(runs);
    // What differs in the setups is read before any figure.
    let differences = super::differs::differences_from_base(runs, base_index);
    let host = super::host::host_view(runs, base_index, &steps, &shifts, "the base's");
    let measured = measures(runs, &steps, spreads);
    let (absolute, relative, abs_cells) =
        super::tables::painted_tables(runs, &steps, base_index, (&host, spreads), &measured);
    let (background, targets) = background_table(runs, &steps);
    let micro = micro_view(runs, &steps, &labels, &absolute, &relative);
    let mut scaling = super::tables::scaling(runs, base_index, &steps, &differences);
    if let Some(sc) = &mut scaling {
        // The efficiency is the throughput's ratio over the clients' ratio: the same rule,
        // on the same measures scaled by the clients' ratio.
        let per_client = super::tables::per_client_measures(runs, &steps, base_index, &measured);
        paint_relative(
            &mut sc.efficiency,
            &abs_cells,
            base_index,
            &host,
            spreads,
            Some(&per_client),
        );
    }
    let details = steps
        .iter()
        .map(|&name| step_detail(runs, base_index, name))
        .map(|d| with_relative_throughput(d, &relative))
        .collect();
    let diagnoses =
        super::diagnosis::diagnoses(runs, base_index, &steps, &host, &noise, &differences);
    let keys = keys_of_runs(&labels, runs);
    let run_rows = run_rows(runs, &keys);
    let mut cmp = Comparison {
        tldr: super::model::Tldr::default(),
        labels,
        keys,
        build_warning: build_warning(&run_rows),
        tls_warning: tls_warning(&run_rows),
        runs: run_rows,
        base: base_index,
        repeats: repeats_a_side(runs.len(), spreads),
        steps,
        absolute,
        relative,
        background,
        background_targets: targets,
        details,
        diagnoses,
        summary: Vec::new(),
        diagnosis_lead: Vec::new(),
        micro,
        problems,
        host,
        shifts,
        differences,
        axis: None,
        scaling,
        lag_sla: super::lag_sla::judge(runs, super::lag_sla::DEFAULT_LAG_SLA_MS),
        failovers: super::failover::rows(runs),
    };
    cmp.summarise();
    cmp.diagnosis_lead = super::setup::diagnosis_lead(&cmp);
    cmp.tldr = super::tldr::tldr(&cmp);
    cmp
}

/// What the runs themselves say is wrong or worth knowing, in the order the report lists it:
/// a duet's sides, failed integrity checks, unsettled servers, then the steps some runs lack.
fn run_problems(runs: &[LoadedRun], missing_steps: Vec<String>) -> Vec<String> {
    let mut lines = duet_lines(runs);
    lines.extend(check_failure_lines(runs));
    lines.extend(unsettled_lines(runs));
    lines.extend(missing_steps);
    lines
}

/// Each of `count` runs' repeats: its spread's count (a matrix member's), else one run.
fn repeats_a_side(count: usize, spreads: &[StepBands]) -> Vec<usize> {
    (0..count)
        .map(|i| spreads.get(i).map_or(1, StepBands::repeat_count))
        .collect()
}

/// A step's figures with its throughput row's ratios taken from the relative table: the
/// ratio the decision rule used (paired, Welch, one run), so the step's table and the
/// relative table show the one ratio.
fn with_relative_throughput(
    mut d: super::model::StepDetail,
    relative: &Table,
) -> super::model::StepDetail {
    let Some(j) = relative.columns.iter().position(|c| *c == d.step) else {
        return d;
    };
    if let Some(row) = d.metrics.iter_mut().find(|m| m.name == "throughput") {
        for (i, r) in row.relative.iter_mut().enumerate() {
            if let Some(v) = relative.rows.get(i).and_then(|row| row.cells.get(j)?.value) {
                *r = Some(v);
            }
        }
    }
    d
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
            self.diagnosis_lead = super::setup::diagnosis_lead(self);
            self.tldr = super::tldr::tldr(self);
        }
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
                let cells: Vec<&super::model::Cell> = row
                    .cells
                    .iter()
                    .zip(&self.relative.columns)
                    .filter(|(c, step)| in_family(step) && c.value.is_some())
                    .map(|(c, _)| c)
                    .collect();
                let rel: Vec<f64> = cells.iter().filter_map(|c| c.value).collect();
                let paints: Vec<Paint> = cells.iter().map(|c| of_cell(c)).collect();
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
                        .filter(|f| self.host.holds_rate(f))
                        .count(),
                    undecided: paints.iter().filter(|p| p.is_undecided()).count(),
                    colour: paint_of_range(&paints).colour,
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

impl Comparison {
    /// Judge the runs' replica lag against `bound_ms` instead of the default, and write the
    /// tl;dr again (it names the runs that failed).
    pub fn judge_lag(&mut self, runs: &[LoadedRun], bound_ms: f64) {
        self.lag_sla = super::lag_sla::judge(runs, bound_ms);
        self.tldr = super::tldr::tldr(self);
    }
}
