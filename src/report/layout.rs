//! What a comparison report says, in which order: the comparison turned into document blocks
//! once, for every format. Runs are named by their short keys in every table; the run table
//! maps each key to its label, DBMS, build and results dir.

use std::collections::BTreeMap;

use super::details::profile_line;
use super::document::{Block, DocCell, DocRow, DocTable};
use super::load::LoadedRun;
use super::model::{
    Cell, CellNote, Colour, Comparison, MetricRow, MicroView, StepDetail, StepRows, Table,
    micro_groups,
};
use super::model::{cell_text_with, column_decimals, partial_note};
use super::text::{fmt_binary, fmt_metric, fmt_us, group_f};
use crate::stats::BUCKET_LABELS;
use crate::stats::convert::count_f64;
use crate::workload::steps::StepName;

/// A step shorter than this (in every run) gets a note instead of per-second charts.
pub const MIN_CHART_SECONDS: f64 = 2.0;

/// How a report shows each step's detail (latency, figures, counters, charts, profiles).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Left out, with a note naming `--details` (text and Markdown by default).
    Short,
    /// In full, a section per step (text and Markdown with `--details`).
    Full,
    /// Each step's section folded, under a table of contents (HTML).
    Folded,
}

/// The report's blocks. `charts` draws the SVG charts and flamegraphs (HTML only); `detail`
/// says how each step's detail is shown; `extra` goes before the notes (the matrix's spread
/// over repeats).
pub fn blocks(
    cmp: &Comparison,
    runs: &[LoadedRun],
    charts: bool,
    detail: Detail,
    extra: Vec<Block>,
) -> Vec<Block> {
    let mut b = head(cmp);
    b.extend(super::setup::blocks(cmp));
    if let Some(m) = &cmp.micro {
        micro(&mut b, cmp, m);
    } else {
        throughput(&mut b, cmp, charts);
    }
    b.extend(super::setup::scaling_blocks(cmp));
    host(&mut b, cmp);
    shifts(&mut b, cmp);
    background(&mut b, cmp);
    b.extend(super::lag_sla::blocks(cmp));
    b.extend(super::replication::blocks(cmp, runs, charts));
    diagnosis(&mut b, cmp);
    match detail {
        Detail::Short if !cmp.details.is_empty() => {
            b.push(heading(2, "Per step"));
            b.push(Block::Note(format!(
                "Each step's latency distribution, figures per operation and counters are left out: `ibench report --details` shows them ({} step(s)); the HTML report has them folded.",
                cmp.details.len()
            )));
        }
        Detail::Short => {}
        Detail::Full => {
            for d in &cmp.details {
                step(&mut b, cmp, runs, d, charts);
            }
        }
        Detail::Folded => {
            for d in &cmp.details {
                let mut inner = Vec::new();
                step(&mut inner, cmp, runs, d, charts);
                b.push(Block::Fold {
                    summary: format!(
                        "{} ({}): latency, figures per operation{}",
                        d.step,
                        d.unit,
                        if charts { ", charts" } else { "" }
                    ),
                    blocks: inner,
                });
            }
        }
    }
    b.extend(extra);
    if detail != Detail::Short {
        glossary(&mut b, cmp);
    }
    if !cmp.problems.is_empty() {
        b.push(heading(2, "Notes"));
        b.push(Block::List(cmp.problems.clone()));
    }
    b.push(Block::Note(format!(
        "Written by ibench {}.",
        env!("CARGO_PKG_VERSION")
    )));
    if detail == Detail::Folded {
        with_contents(&mut b);
    }
    b
}

/// A table of contents of the report's sections, put after the tl;dr (after the title when
/// there is none).
fn with_contents(b: &mut Vec<Block>) {
    let entries = super::document::anchor_headings(b);
    let entries: Vec<(String, String)> = entries.into_iter().filter(|(_, a)| a != "tldr").collect();
    if entries.len() < 2 {
        return;
    }
    let after_tldr = b
        .iter()
        .position(|x| matches!(x, Block::Heading { anchor: Some(a), .. } if a == "tldr"))
        .map(|i| {
            i + 1
                + b[i + 1..]
                    .iter()
                    .take_while(|x| !matches!(x, Block::Heading { .. }))
                    .count()
        });
    let at = after_tldr.unwrap_or_else(|| b.len().min(1));
    b.insert(at, Block::Contents(entries));
}

fn heading(level: u8, text: &str) -> Block {
    Block::Heading {
        level,
        text: text.to_string(),
        anchor: None,
    }
}

/// The title, the run table and the build warning.
fn head(cmp: &Comparison) -> Vec<Block> {
    let base = cmp.keys.get(cmp.base).map_or("", String::as_str);
    let mut b = vec![heading(1, super::model::title(cmp))];
    b.extend(tldr(cmp));
    b.extend([
        Block::Paragraph(if cmp.runs.len() == 1 {
            "One run: nothing to compare. Give `ibench report` two or more results dirs to compare them.".to_string()
        } else {
            let named = if labelled(cmp) {
                "The tables name each run by its key:"
            } else {
                "The runs:"
            };
            format!("{} runs; the base is {base}. {named}", cmp.runs.len())
        }),
    ]);
    b.push(Block::Table(run_table(cmp)));
    if let Some(w) = &cmp.build_warning {
        b.push(Block::Warning(w.clone()));
    }
    if let Some(w) = &cmp.tls_warning {
        b.push(Block::Warning(w.clone()));
    }
    b
}

/// The tl;dr, first: a line per run against the base, each family's range painted, then
/// the runs whose replica failed the lag SLA, and the caveat.
fn tldr(cmp: &Comparison) -> Vec<Block> {
    if cmp.tldr.lines.is_empty() && cmp.tldr.lag_sla.is_empty() {
        return Vec::new();
    }
    let mut b = vec![Block::Heading {
        level: 2,
        text: "tl;dr".into(),
        anchor: Some("tldr".into()),
    }];
    b.push(Block::PaintedList(cmp.tldr.painted_items()));
    if let Some(c) = &cmp.tldr.caveat {
        b.push(Block::Note(format!(
            "Run / base, from the decided figures only (the relative table below paints them). {c}"
        )));
    }
    b
}

/// Whether some run's key is not its whole label (the run table then maps keys to labels).
fn labelled(cmp: &Comparison) -> bool {
    cmp.runs
        .iter()
        .any(|r| r.key != super::load::clean_label(&r.label))
}

/// The run table: a row per run, its key first. The label column is left out when every key
/// is its run's whole label (a few short labels).
fn run_table(cmp: &Comparison) -> DocTable {
    let labelled = labelled(cmp);
    let mut columns = vec![
        "label",
        "DBMS",
        "build flags",
        "binary",
        "status",
        "results",
    ];
    let tls = cmp.runs.iter().any(|r| r.tls.is_some());
    if tls {
        columns.insert(columns.len() - 2, "TLS");
    }
    if !labelled {
        columns.remove(0);
    }
    DocTable {
        corner: "key".into(),
        columns: columns.into_iter().map(String::from).collect(),
        rows: cmp
            .runs
            .iter()
            .map(|r| {
                let mut cells = vec![
                    r.dbms.clone(),
                    r.build_flags.clone().unwrap_or_else(|| "n/a".into()),
                    fmt_binary(r.binary_bytes),
                    r.status.clone(),
                    r.dir.clone(),
                ];
                if tls {
                    cells.insert(3, r.tls.clone().unwrap_or_else(|| "none".into()));
                }
                if labelled {
                    cells.insert(0, super::load::clean_label(&r.label));
                }
                DocRow {
                    label: r.key.clone(),
                    title: None,
                    link: None,
                    cells: cells.into_iter().map(DocCell::plain).collect(),
                }
            })
            .collect(),
        footer: None,
        text_columns: true,
        columns_are: String::new(),
    }
}

/// A comparison cell as a document cell; a rate or a count with its column's `decimals`.
fn doc_cell(c: &Cell, ratio: bool, decimals: usize) -> DocCell {
    DocCell {
        text: cell_text_with(c, ratio, decimals),
        colour: c.colour,
        sla_failed: c.value.is_some() && c.note == Some(CellNote::SlaFailed),
        partial: partial_note(c).map(ToString::to_string),
        missing: c.value.is_none(),
        title: c.note.as_ref().map(ToString::to_string),
        shade: None,
        links: Vec::new(),
    }
}

/// A table whose rows are runs: each row named by its key (the label on hover).
fn runs_as_rows(cmp: &Comparison, t: &Table, ratio: bool) -> DocTable {
    super::run_table::runs_as_rows(cmp, t, &|c, decimals| doc_cell(c, ratio, decimals))
}

/// A table whose columns are runs (microbenchmarks as rows): the columns named by key.
fn runs_as_columns(cmp: &Comparison, t: &StepRows, ratio: bool) -> DocTable {
    DocTable {
        corner: "microbenchmark".into(),
        columns: cmp.keys.clone(),
        columns_are: "run".into(),
        rows: t
            .rows
            .iter()
            .map(|r| DocRow {
                label: r.label.to_string(),
                title: None,
                link: None,
                cells: r
                    .cells
                    .iter()
                    .map(|c| doc_cell(c, ratio, c.value.map_or(0, |v| column_decimals([v]))))
                    .collect(),
            })
            .collect(),
        footer: None,
        text_columns: false,
    }
}

/// The marks a table's cells carry, explained once under it (only those it uses).
fn marks_note(t: &DocTable) -> Option<Block> {
    let cells = || t.rows.iter().flat_map(|r| &r.cells);
    let mut parts = Vec::new();
    if cells().any(|c| c.sla_failed) {
        parts.push("a struck figure (text: ending in *) failed its background-insert SLA: the background inserts missed 95% of the target");
    }
    if cells().any(|c| c.text.ends_with('~')) {
        parts.push("a relative figure ending in ~ is host-affected: the host probe or the run's own signals say the host's speed differed (section Host), so it is not painted as a DBMS change");
    }
    if cells().any(|c| c.text.ends_with('?')) {
        parts.push("a relative figure ending in ? is not decided: its interval reaches both inside and beyond ±5% (too noisy), its step is too short to judge (under 3 s or 3 per-second samples), or it is a rate of one run a side on a host nothing showed steady (one run a side: repeats, or `ibench check --run`, would decide it); the HTML's hover and the JSON say why");
    }
    if cells().any(|c| c.partial.is_some()) {
        parts.push("a figure marked ! or ⚠ covers only the part of its step that ran (the step failed or was interrupted), or a check after its step failed (the figure is as measured; the notes say why)");
    }
    (!parts.is_empty()).then(|| Block::Note(capitalised(&(parts.join("; ") + "."))))
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

fn push_table(b: &mut Vec<Block>, t: DocTable) {
    let note = marks_note(&t);
    b.push(Block::Table(t));
    b.extend(note);
}

/// The insert benchmark's absolute and relative throughput, and the relative chart.
fn throughput(b: &mut Vec<Block>, cmp: &Comparison, charts: bool) {
    b.push(heading(2, "Absolute throughput"));
    b.push(Block::Note("Inserted rows/s for l.i0, l.i1, l.i2; indexed rows/s for l.x; queries/s for the query steps. Green: top quarter of the column; red: bottom quarter (none when min ≥ 0.8 × max).".into()));
    push_table(b, runs_as_rows(cmp, &cmp.absolute, false));
    if cmp.runs.len() < 2 {
        return;
    }
    b.push(heading(2, "Relative to the base"));
    b.push(Block::Note(RELATIVE_COLOURS.into()));
    push_table(b, runs_as_rows(cmp, &cmp.relative, true));
    if charts {
        // Each bar as the relative table paints its figure: undecided ones hatched.
        let values: Vec<Vec<Option<super::svg::Bar>>> = cmp
            .relative
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                r.cells
                    .iter()
                    .map(|c| {
                        Some(super::svg::Bar {
                            value: c.value?,
                            undecided: i != cmp.base && super::paint::undecided(c),
                            interval: c.interval,
                        })
                    })
                    .collect()
            })
            .collect();
        let keys: Vec<&str> = cmp.keys.iter().map(String::as_str).collect();
        let steps: Vec<String> = cmp.steps.iter().map(ToString::to_string).collect();
        b.push(Block::Chart(super::svg::bar_chart(
            "Throughput per step, relative to the base",
            "relative throughput",
            &steps,
            &keys,
            &values,
        )));
    }
}

/// The microbenchmark tables in their published groups.
fn micro(b: &mut Vec<Block>, cmp: &Comparison, m: &MicroView) {
    let grouped = |b: &mut Vec<Block>, t: &StepRows, ratio: bool| {
        for (group, part) in micro_groups(t) {
            b.push(heading(3, group));
            push_table(b, runs_as_columns(cmp, &part, ratio));
        }
    };
    b.push(heading(2, "Microbenchmarks: operations/s"));
    b.push(Block::Note(
        "A scan's figure is rows/s. Green: the top quarter of a microbenchmark's figures over the runs; red: the bottom quarter.".into(),
    ));
    grouped(b, &m.absolute, false);
    if cmp.runs.len() > 1 {
        b.push(heading(2, "Relative to the base"));
        b.push(Block::Note(RELATIVE_COLOURS.into()));
        grouped(b, &m.relative, true);
    }
    for (name, meaning, t) in &m.per_op {
        b.push(heading(2, &format!("{name}: {meaning}")));
        grouped(b, t, true);
    }
}

/// The background insert rates of the query steps, with the targets as the last row.
fn background(b: &mut Vec<Block>, cmp: &Comparison) {
    if cmp.background.columns.is_empty() {
        return;
    }
    b.push(heading(2, "Background insert rate (rows/s)"));
    b.push(Block::Note(
        "Red: below 95% of the target (last row).".into(),
    ));
    let mut t = runs_as_rows(cmp, &cmp.background, false);
    t.footer = Some(DocRow {
        label: "target".into(),
        title: None,
        link: None,
        cells: cmp
            .background_targets
            .iter()
            .map(|v| DocCell::plain(v.map_or("-".into(), group_f)))
            .collect(),
    });
    push_table(b, t);
}

/// The host: each run's probe beside the base's, the warnings, and the host-affected steps.
fn host(b: &mut Vec<Block>, cmp: &Comparison) {
    let h = &cmp.host;
    if !h.probed()
        && h.flags.is_empty()
        && h.warnings.is_empty()
        && h.unclear.is_empty()
        && h.not_compared.is_empty()
    {
        return;
    }
    b.push(heading(2, "Host"));
    for w in &h.warnings {
        b.push(Block::Warning(format!(
            "{}: {}",
            cmp.key_of(&w.run),
            w.text
        )));
    }
    if h.probed() {
        b.push(Block::Note(format!(
            "The host probe (--host-probe-ms) before and after every step: the median of each figure over the run's probes, a time per unit (larger = slower host), and ×its ratio to the base's. A run is warned about when a figure differs from the base's by more than the probe's own noise: CPU {:.0}%, memory {:.0}%, loopback {:.0}%; fsync is shown only (after a step it waits for the step's own writeback). Steal and iowait: the largest share of the host's CPU time in a step (/proc/stat).",
            h.thresholds.cpu * 100.0,
            h.thresholds.memory * 100.0,
            h.thresholds.loopback * 100.0,
        )));
        b.push(Block::Table(host_table(cmp)));
    }
    if !h.flags.is_empty() {
        b.push(Block::Paragraph(format!(
            "{} step(s) of runs are host-affected: their relative figures end in ~ and are not painted as a DBMS change.",
            h.flags.len()
        )));
        b.push(Block::Fold {
            summary: "Host-affected steps and why".into(),
            blocks: vec![Block::List(flag_lines(cmp, &h.flags))],
        });
    }
    host_notes(b, cmp);
}

/// One line per host flag: `step key: reasons`.
fn flag_lines(cmp: &Comparison, flags: &[super::host::HostFlag]) -> Vec<String> {
    flags
        .iter()
        .map(|f| {
            format!(
                "{} {}: {}",
                f.step,
                cmp.key_of(&f.run),
                f.reasons.join("; ")
            )
        })
        .collect()
}

/// The steps whose client CPU per op was unclear as a host signal, and those not compared on
/// it (another shape than the base's step), one line per run.
fn host_notes(b: &mut Vec<Block>, cmp: &Comparison) {
    let h = &cmp.host;
    if !h.unclear.is_empty() {
        b.push(Block::Paragraph(format!(
            "{} step(s) are unclear, not flagged: the client's CPU per op moved, but nothing else says the host did.",
            h.unclear.len()
        )));
        b.push(Block::List(flag_lines(cmp, &h.unclear)));
    }
    let mut lines: Vec<(String, String, Vec<String>)> = Vec::new();
    for f in &h.not_compared {
        let why = f.reasons.join("; ");
        match lines.iter_mut().find(|(r, w, _)| *r == f.run && *w == why) {
            Some((.., steps)) => steps.push(f.step.to_string()),
            None => lines.push((f.run.clone(), why, vec![f.step.to_string()])),
        }
    }
    // In the runs' order (stable: a run's reasons keep the order of its first step).
    lines.sort_by_key(|(run, ..)| cmp.labels.iter().position(|l| l == run));
    if !lines.is_empty() {
        b.push(Block::Note(
            "Not comparable on the client's CPU per op (a host signal only between steps of one shape: the client's work per op differs), so never a host verdict:".into(),
        ));
        b.push(Block::List(
            lines
                .iter()
                .map(|(run, why, steps)| format!("{} {}: {why}", cmp.key_of(run), steps.join(", ")))
                .collect(),
        ));
    }
}

/// The steps that slowed down inside themselves: when, how long, who, and the server's
/// evidence.
fn shifts(b: &mut Vec<Block>, cmp: &Comparison) {
    if cmp.shifts.is_empty() {
        return;
    }
    b.push(heading(2, "Slowdowns inside steps"));
    b.push(Block::Note(format!(
        "A step whose per-second rate held at one level for a stretch while another stretch of it ran ×{:.1} or more faster (medians; a load step's tail, once its first connections are done, left out). Who slowed down: the DBMS when the server's CPU per op rose ×{:.1} or more in the slow stretch, and ×{:.1} more than ibench's own; the host when other processes took {:.2} more cores or {:.0}% of the CPUs, or ibench's CPU per op rose ×{:.1} and the server's no more than that (the same work costing both sides more: a slower CPU).",
        super::shift::SHIFT_FACTOR,
        super::shift::COST_RATIO,
        super::shift::COST_RATIO,
        super::shift::OTHERS_CORES,
        super::shift::OTHERS_SHARE * 100.0,
        super::shift::COST_RATIO,
    )));
    let items = cmp
        .shifts
        .iter()
        .map(|s| s.describe(Some(cmp.key_of(&s.run))))
        .collect();
    b.push(Block::List(items));
}

/// Rows: runs; columns: the probe's figures (with their ratio to the base's), MHz, steal and
/// iowait.
fn host_table(cmp: &Comparison) -> DocTable {
    use crate::results::probe::ProbeFigure;
    let mut columns: Vec<String> = ProbeFigure::ALL
        .iter()
        .map(|f| f.short().to_string())
        .collect();
    columns.extend(["MHz", "steal max", "iowait max"].map(String::from));
    let rows = cmp
        .host
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut cells: Vec<DocCell> = r
                .figures
                .iter()
                .zip(&r.relative)
                .zip(ProbeFigure::ALL)
                .map(|((v, rel), f)| {
                    let Some(v) = v else {
                        return DocCell::plain("n/a");
                    };
                    let mut c = match rel.filter(|_| i != cmp.base) {
                        Some(rel) => DocCell::plain(format!("{v:.2} ×{rel:.2}")),
                        None => DocCell::plain(format!("{v:.2}")),
                    };
                    if let Some(rel) = rel.filter(|_| i != cmp.base)
                        && let Some(t) = cmp.host.thresholds.of(f)
                        && super::host::beyond(rel, 1.0, t).is_some()
                    {
                        c.colour = Colour::Grey;
                    }
                    c
                })
                .collect();
            cells.push(DocCell::plain(
                r.cpu_mhz.map_or("n/a".into(), |m| format!("{m:.0}")),
            ));
            cells.push(DocCell::plain(super::host::pct(r.steal_share_max)));
            cells.push(DocCell::plain(super::host::pct(r.iowait_share_max)));
            DocRow {
                label: cmp.keys.get(i).cloned().unwrap_or_else(|| r.run.clone()),
                title: Some(super::load::clean_label(&r.run)),
                link: None,
                cells,
            }
        })
        .collect();
    DocTable::new("run", columns, rows)
}

/// The diagnosis: a summary per step family and run, then every line, folded.
fn diagnosis(b: &mut Vec<Block>, cmp: &Comparison) {
    if cmp.runs.len() < 2 {
        return;
    }
    b.push(heading(2, "Diagnosis"));
    b.extend(super::setup::diagnosis_lead(cmp));
    if !cmp.host.warnings.is_empty() || !cmp.host.flags.is_empty() {
        let runs: Vec<&str> = cmp
            .labels
            .iter()
            .filter(|l| {
                cmp.host.warnings.iter().any(|w| w.run == **l)
                    || cmp.host.flags.iter().any(|f| f.run == **l)
            })
            .map(|l| cmp.key_of(l))
            .collect();
        b.push(Block::Paragraph(format!(
            "The host first: the host's speed differed for {} (section Host), a candidate explanation before any per-op figure below; rerun those steps on a quiet host, or interleave the runs, before blaming the DBMS.",
            runs.join(", ")
        )));
    }
    let mut families: Vec<&str> = Vec::new();
    for s in &cmp.summary {
        if !families.contains(&s.family.as_str()) {
            families.push(&s.family);
        }
    }
    if !families.is_empty() {
        b.push(Block::Note("Per step family and run: the range of relative throughput over the family's steps, and the per-op figure that moved with it most often (as run / base) in the steps outside the noise band (±5%, or the base's spread over repeats).".into()));
        b.push(Block::Table(summary_table(cmp, &families)));
        let mut named: Vec<String> = Vec::new();
        for (figure, ..) in cmp.summary.iter().filter_map(|s| s.mover.as_ref()) {
            let meaning = cmp
                .diagnoses
                .iter()
                .flat_map(|d| &d.movers)
                .find(|m| m.figure == *figure)
                .map_or("", |m| m.meaning.as_str());
            let line = format!("{figure}: {meaning}");
            if !named.contains(&line) {
                named.push(line);
            }
        }
        if !named.is_empty() {
            b.push(Block::Note(format!("Figures: {}.", named.join("; "))));
        }
    }
    if cmp.diagnoses.is_empty() {
        b.push(Block::Paragraph(
            "No relative throughput lies outside the noise band.".into(),
        ));
        return;
    }
    b.push(Block::Fold {
        summary: format!(
            "Details: {} step(s) outside the noise band, the figure that accounts for most of each change first",
            cmp.diagnoses.len()
        ),
        blocks: vec![Block::List(
            cmp.diagnoses
                .iter()
                .map(|d| {
                    let key = cmp
                        .labels
                        .iter()
                        .position(|l| *l == d.run)
                        .and_then(|i| cmp.keys.get(i))
                        .map_or(d.run.as_str(), String::as_str);
                    d.line_for(key)
                })
                .collect(),
        )],
    });
}

/// Rows: runs but the base; per family a column of relative range and one of the top mover.
fn summary_table(cmp: &Comparison, families: &[&str]) -> DocTable {
    let mut columns = Vec::new();
    for f in families {
        columns.push((*f).to_string());
        columns.push(format!("{f}: moved"));
    }
    let rows = (0..cmp.runs.len())
        .filter(|&i| i != cmp.base)
        .map(|i| {
            let label = &cmp.labels[i];
            let mut cells = Vec::new();
            for f in families {
                let s = cmp
                    .summary
                    .iter()
                    .find(|s| s.run == *label && s.family == *f);
                cells.push(s.map_or_else(
                    || DocCell::plain("-"),
                    |s| {
                        let mark = if s.host_affected > 0 { "~" } else { "" };
                        let mut c =
                            DocCell::plain(range_text(s.relative_min, s.relative_max, "") + mark);
                        c.colour = s.colour;
                        c
                    },
                ));
                cells.push(DocCell::plain(
                    s.and_then(|s| s.mover.as_ref())
                        .map_or("-".into(), |(f, lo, hi)| {
                            range_text(*lo, *hi, &format!("{f} ×"))
                        }),
                ));
            }
            DocRow {
                label: cmp.keys[i].clone(),
                title: Some(super::load::clean_label(label)),
                link: None,
                cells,
            }
        })
        .collect();
    DocTable::new("run", columns, rows)
}

/// `0.85-0.94`, or `0.91` when both ends are one figure.
fn range_text(lo: f64, hi: f64, prefix: &str) -> String {
    let (a, b) = (format!("{lo:.2}"), format!("{hi:.2}"));
    if a == b {
        format!("{prefix}{a}")
    } else {
        format!("{prefix}{a}-{b}")
    }
}

/// One step: its latency distributions, figures, charts and profiles.
fn step(b: &mut Vec<Block>, cmp: &Comparison, runs: &[LoadedRun], d: &StepDetail, charts: bool) {
    b.push(Block::Heading {
        level: 2,
        text: format!("{} ({})", d.step, d.unit),
        anchor: Some(format!("step-{}", d.step)),
    });
    for (kind, rows) in &d.latency {
        b.push(heading(
            3,
            &format!("{kind} latency: % of operations per bucket"),
        ));
        b.push(Block::Table(latency_table(cmp, rows)));
    }
    b.push(heading(3, "Figures"));
    b.push(Block::Table(figures_table(cmp, d.step, &d.metrics, false)));
    if cmp.runs.len() > 1 {
        b.push(heading(3, "Figures relative to the base"));
        b.push(Block::Note(FIGURE_COLOURS.into()));
        b.push(Block::Table(figures_table(cmp, d.step, &d.metrics, true)));
    }
    counters(b, cmp, d);
    if charts {
        step_charts(b, cmp, runs, d);
    }
    if !d.profiles.is_empty() {
        b.push(heading(3, "Server CPU profile"));
        b.push(Block::Note("perf record on the server's processes (cpu-clock); top functions by their own share of samples.".into()));
        b.push(Block::List(
            d.profiles
                .iter()
                .map(|(label, p)| format!("{}: {}", cmp.key_of(label), profile_line(p, 8)))
                .collect(),
        ));
        if charts {
            b.extend(super::html::flamegraphs(cmp, runs, d));
        }
    }
}

/// Largest difference of a run's clock from the base's before the counters get a warning.
pub const CLOCK_TOLERANCE: f64 = 0.05;

/// With `--perf`: the counters per operation, the clock checked first, beside each run's
/// build (flags and binary size), absolute and relative to the base.
fn counters(b: &mut Vec<Block>, cmp: &Comparison, d: &StepDetail) {
    if d.counters.is_empty() && d.counters_na.is_empty() {
        return;
    }
    b.push(heading(3, "Counters per operation (perf)"));
    if let Some(w) = clock_warning(cmp, d) {
        b.push(Block::Warning(w));
    }
    b.push(Block::Note("perf stat on the server's processes in seven groups taken in turn; each count is divided by the operations done in its own group's intervals. GHz is cycles / cpu-clock: compare counters only between runs at one clock.".into()));
    let builds: Vec<String> = cmp
        .runs
        .iter()
        .filter(|r| r.build_flags.is_some() || r.binary_bytes.is_some())
        .map(|r| {
            format!(
                "{} {}, {}",
                r.key,
                r.build_flags.as_deref().unwrap_or("flags n/a"),
                fmt_binary(r.binary_bytes)
            )
        })
        .collect();
    if !builds.is_empty() {
        b.push(Block::Note(format!("Builds: {}.", builds.join("; "))));
    }
    if !d.counters.is_empty() {
        b.push(Block::Table(figures_table(cmp, d.step, &d.counters, false)));
        if cmp.runs.len() > 1 {
            b.push(heading(3, "Counters per operation relative to the base"));
            b.push(Block::Note(FIGURE_COLOURS.into()));
            b.push(Block::Table(figures_table(cmp, d.step, &d.counters, true)));
        }
    }
    if !d.counters_na.is_empty() {
        b.push(Block::Note(format!(
            "n/a in every run: {}.",
            d.counters_na.join("; ")
        )));
    }
}

/// A warning when a run's clock differs from the base's by more than [`CLOCK_TOLERANCE`].
fn clock_warning(cmp: &Comparison, d: &StepDetail) -> Option<String> {
    let ghz = d.counters.iter().find(|r| r.name == "GHz")?;
    let base = ghz.values.get(cmp.base).copied().flatten()?;
    let off: Vec<String> = ghz
        .values
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != cmp.base)
        .filter_map(|(i, v)| {
            let v = (*v)?;
            ((v / base - 1.0).abs() > CLOCK_TOLERANCE)
                .then(|| format!("{} {v:.2} GHz", cmp.keys[i]))
        })
        .collect();
    (!off.is_empty()).then(|| {
        format!(
            "Clock check: {} against the base's {base:.2} GHz (more than {:.0}% apart): the per-op counter ratios of these runs compare different clocks.",
            off.join(", "),
            CLOCK_TOLERANCE * 100.0
        )
    })
}

fn latency_table(cmp: &Comparison, rows: &[super::model::LatencyRow]) -> DocTable {
    let mut columns: Vec<String> = BUCKET_LABELS.iter().map(|b| (*b).to_string()).collect();
    columns.extend(["p50", "p99", "p99.9", "max"].map(String::from));
    DocTable {
        corner: "run".into(),
        columns,
        rows: rows
            .iter()
            .map(|r| {
                let mut cells: Vec<DocCell> = r
                    .bucket_shares
                    .iter()
                    .map(|s| {
                        let mut c = DocCell::plain(super::text::share_text(*s, 2));
                        c.shade = Some(if *s < super::text::SHARE_LEFTOVER {
                            0.0
                        } else {
                            *s
                        });
                        c
                    })
                    .collect();
                for us in [r.p50_us, r.p99_us, r.p99_9_us, r.max_us] {
                    cells.push(DocCell::plain(fmt_us(us)));
                }
                DocRow {
                    label: cmp.key_of(&r.label).to_string(),
                    title: Some(super::load::clean_label(&r.label)),
                    link: None,
                    cells,
                }
            })
            .collect(),
        footer: None,
        text_columns: false,
        columns_are: String::new(),
    }
}

/// The paint of figure `m`'s ratio `r` of run `i` in `step`'s table: the step's throughput
/// takes the relative table's paint (decided there on its measures), and so does every
/// figure of a step too short to judge; the others the rule's for a figure without measures,
/// the DBMS's work per op that `ibench check` judges as work
/// (`results::metrics::judged_work`), every other figure (rates, latencies, the host's and
/// the client's CPU, IO per op) as a figure the host moves.
fn step_figure_paint(
    cmp: &Comparison,
    step: StepName,
    i: usize,
    m: &MetricRow,
    r: f64,
) -> super::paint::Paint {
    let decided = cmp
        .relative
        .columns
        .iter()
        .position(|c| *c == step)
        .and_then(|j| cmp.relative.rows.get(i)?.cells.get(j));
    let too_short = |c: &Cell| matches!(&c.note, Some(CellNote::Undecided(why)) if why.starts_with(crate::stats::decision::Reason::TooShort.text()));
    if let Some(cell) = decided.filter(|c| m.name == "throughput" || too_short(c)) {
        return super::paint::of_cell(cell);
    }
    let flag = cmp.host.flag(step, &cmp.labels[i]);
    super::paint::paint(&super::paint::Evidence {
        higher_is_better: m.lower_is_better.map(|l| !l),
        host: flag.map(|f| f.reasons.as_slice()),
        kind: if crate::results::metrics::judged_work(&m.name) {
            crate::stats::decision::FigureKind::Work
        } else {
            crate::stats::decision::FigureKind::Rate
        },
        steady_host: cmp.host.steady(&cmp.labels[i]),
        ..super::paint::Evidence::of_rate(r)
    })
}

/// A step's figures, one row per figure and a column per run; `relative`: run / base, the
/// base's own column left out, each ratio painted by [`super::paint::paint`] (a host-affected
/// step's figures grey, marked ~).
fn figures_table(
    cmp: &Comparison,
    step: StepName,
    figures: &[MetricRow],
    relative: bool,
) -> DocTable {
    let keep: Vec<usize> = (0..cmp.runs.len())
        .filter(|&i| !relative || i != cmp.base)
        .collect();
    DocTable {
        corner: "figure".into(),
        columns: keep.iter().map(|&i| cmp.keys[i].clone()).collect(),
        rows: figures
            .iter()
            .map(|m| DocRow {
                label: m.name.clone(),
                title: Some(m.meaning.clone()),
                link: None,
                cells: keep
                    .iter()
                    .map(|&i| {
                        let v = if relative { m.relative[i] } else { m.values[i] };
                        match (v, relative) {
                            (Some(r), true) => {
                                let p = step_figure_paint(cmp, step, i, m, r);
                                let mark = p.note.as_ref().map_or("", CellNote::mark);
                                let mut c = DocCell::plain(format!("{r:.2}{mark}"));
                                c.colour = p.colour;
                                c.title = p.note.as_ref().map(ToString::to_string);
                                c
                            }
                            (Some(v), false) => DocCell::plain(fmt_metric(v)),
                            (None, _) => DocCell::plain(if relative { "-" } else { "n/a" }),
                        }
                    })
                    .collect(),
            })
            .collect(),
        footer: None,
        text_columns: false,
        columns_are: "run".into(),
    }
}

/// What the colours of a relative throughput table mean (`report::paint`).
const RELATIVE_COLOURS: &str = "Throughput / the base's, painted by the rule of `ibench check`: red or green only when the 90% interval of the ratio (over the repeats, paired by round where they ran interleaved, or from each run's per-second rates where the host probes show the host steady) lies wholly below 0.95 or above 1.05; grey otherwise: no change, or not decided (marked).";

/// What the colours of a relative figures table mean.
const FIGURE_COLOURS: &str = "Run / base. Red: worse by more than 5% (a cost up or a rate down); green: better by more than 5%; grey: within 5%, moved with no better or worse (seconds, the clock), or not decided (ending in ~: the step is host-affected).";

/// The glossary of the per-step figures: name and meaning, once.
fn glossary(b: &mut Vec<Block>, cmp: &Comparison) {
    let Some(d) = cmp.details.iter().max_by_key(|d| d.metrics.len()) else {
        return;
    };
    b.push(heading(2, "What the figures mean"));
    b.push(Block::Table(DocTable {
        corner: "figure".into(),
        columns: vec!["meaning".into()],
        rows: d
            .metrics
            .iter()
            .map(|m| DocRow {
                label: m.name.clone(),
                title: None,
                link: None,
                cells: vec![DocCell::plain(&m.meaning)],
            })
            .collect(),
        footer: None,
        text_columns: true,
        columns_are: String::new(),
    }));
}

/// Per-second series of one op kind in one step for every run: `(key, points)`. A run's last
/// line when it covers only part of a second (the step ended inside it: its `second` is past
/// the step's length) is left out: drawn as a rate, it would read as a drop towards 0.
fn series(
    cmp: &Comparison,
    runs: &[LoadedRun],
    step: StepName,
    kind: &str,
    value: impl Fn(&crate::stats::SecondCounts) -> f64,
) -> Vec<(String, Vec<(f64, f64)>)> {
    runs.iter()
        .map(|r| {
            let length = r.record.step(step).map(|s| s.seconds);
            let points = r
                .timeline
                .iter()
                .filter(|l| {
                    l.step == step
                        && length.is_none_or(|len| super::tables::whole_second(l.second, len))
                })
                .filter_map(|l| Some((f64::from(l.second), value(l.ops.get(kind)?))))
                .collect();
            (cmp.key_of(&r.label).to_string(), points)
        })
        .collect()
}

/// A per-second series of one step for every run, `point` read from each of its timeline
/// lines (`None`: no point that second): `(key, points)`.
fn timeline_series(
    cmp: &Comparison,
    runs: &[LoadedRun],
    step: StepName,
    point: impl Fn(&crate::results::TimelineLine) -> Option<f64>,
) -> Vec<(String, Vec<(f64, f64)>)> {
    runs.iter()
        .map(|r| {
            let points = r
                .timeline
                .iter()
                .filter(|l| l.step == step)
                .filter_map(|l| Some((f64::from(l.second), point(l)?)))
                .collect();
            (cmp.key_of(&r.label).to_string(), points)
        })
        .collect()
}

fn chart(title: &str, y_label: &str, data: &[(String, Vec<(f64, f64)>)]) -> Block {
    let refs: Vec<(&str, Vec<(f64, f64)>)> =
        data.iter().map(|(l, p)| (l.as_str(), p.clone())).collect();
    Block::Chart(super::svg::line_chart(
        title,
        "seconds into the step",
        y_label,
        &refs,
    ))
}

/// The longest any run spent in the step, seconds.
fn longest_seconds(runs: &[LoadedRun], step: StepName) -> f64 {
    runs.iter()
        .flat_map(|r| r.record.steps.iter())
        .filter(|s| s.name == step)
        .map(|s| s.seconds)
        .fold(0.0, f64::max)
}

/// A step's charts over time (rates, database size, max latency per second), or a note when
/// the step was too short for per-second charts.
fn step_charts(b: &mut Vec<Block>, cmp: &Comparison, runs: &[LoadedRun], d: &StepDetail) {
    let longest = longest_seconds(runs, d.step);
    if longest < MIN_CHART_SECONDS {
        b.push(Block::Note(format!(
            "{} lasted {longest:.1} s at most: too short for per-second charts (they need {MIN_CHART_SECONDS:.0} s); its figures are in the tables above.",
            d.step
        )));
        return;
    }
    let mut kinds: BTreeMap<String, ()> = BTreeMap::new();
    for r in runs {
        for l in r.timeline.iter().filter(|l| l.step == d.step) {
            for k in l.ops.keys() {
                kinds.insert(k.clone(), ());
            }
        }
    }
    for kind in kinds.keys() {
        let op = crate::stats::OpKind::from_name(kind);
        let data = series(cmp, runs, d.step, kind, |c| {
            count_f64(op.map_or(c.ops, |k| c.rate(k)))
        });
        let unit = op.map_or("ops/s", crate::stats::OpKind::rate_unit);
        b.push(chart(&format!("{} {kind} rate", d.step), unit, &data));
    }
    let builds = index_build_series(cmp, runs, d.step);
    if builds.iter().any(|(_, points)| !points.is_empty()) {
        b.push(chart(
            &format!("{} index build: work done of its count", d.step),
            "%",
            &builds,
        ));
    }
    let (size, unit) = size_series(cmp, runs, d.step);
    if !size.is_empty() {
        b.push(chart(&format!("{} database size", d.step), unit, &size));
    }
    if let Some((main, _)) = d.latency.first() {
        let data = series(cmp, runs, d.step, main, |c| {
            count_f64(c.max_latency_us) / 1000.0
        });
        b.push(chart(
            &format!("{} {main} max latency per second", d.step),
            "ms",
            &data,
        ));
    }
}

/// The first index build's work done, in % of its count's total, per second of l.x (from the
/// timeline's `index_builds`), per run; PostgreSQL starts a new count at each phase that
/// counts something else and at each index, InnoDB counts one over the whole build.
fn index_build_series(
    cmp: &Comparison,
    runs: &[LoadedRun],
    step: StepName,
) -> Vec<(String, Vec<(f64, f64)>)> {
    timeline_series(cmp, runs, step, |l| {
        let b = l.index_builds.first().filter(|b| b.total > 0)?;
        Some(count_f64(b.done) / count_f64(b.total) * 100.0)
    })
}

/// Charted series: each run's key (or key and what) and its `(x, y)` points.
type Series = Vec<(String, Vec<(f64, f64)>)>;

/// Database size over the step, from the sampler's time series: logical and on disk per run,
/// in GB, or MB when every figure is under a GB; and the unit.
fn size_series(cmp: &Comparison, runs: &[LoadedRun], step: StepName) -> (Series, &'static str) {
    let bytes: Series = runs
        .iter()
        .flat_map(|r| {
            let in_step: Vec<_> = r
                .samples
                .iter()
                .filter(|l| l.step.as_deref().and_then(|s| s.parse().ok()) == Some(step))
                .collect();
            let t0 = in_step.first().map_or(0.0, |l| l.t - l.interval_seconds);
            let curve = |pick: fn(&crate::results::metrics::SampleLine) -> Option<u64>| {
                in_step
                    .iter()
                    .filter_map(|l| pick(l).map(|b| (l.t - t0, count_f64(b))))
                    .collect::<Vec<_>>()
            };
            let key = cmp.key_of(&r.label);
            [
                (format!("{key} (DBMS)"), curve(|l| l.db_size_bytes)),
                (format!("{key} (on disk)"), curve(|l| l.data_dir_bytes)),
            ]
        })
        .filter(|(_, points)| !points.is_empty())
        .collect();
    let largest = bytes
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let (scale, unit) = if largest < 1e9 {
        (1e6, "MB")
    } else {
        (1e9, "GB")
    };
    let scaled = bytes
        .into_iter()
        .map(|(k, p)| (k, p.into_iter().map(|(x, y)| (x, y / scale)).collect()))
        .collect();
    (scaled, unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn postgres_fixture() -> Vec<LoadedRun> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let (runs, problems) = super::super::load::load_runs(&[dir]);
        assert!(problems.is_empty(), "{problems:?}");
        runs
    }

    #[test]
    fn a_steps_last_partial_second_is_not_drawn_as_a_drop() {
        let mut runs = postgres_fixture();
        let qr100: StepName = "qr100".parse().unwrap();
        // The fixture's qr100 lasted 3.000007 s: seconds 1-3 are whole. A fourth line, as the
        // monitor writes for a step that ends inside a second, covers a sliver of it.
        let mut partial = runs[0]
            .timeline
            .iter()
            .rfind(|l| l.step == qr100)
            .unwrap()
            .clone();
        partial.second = 4;
        for c in partial.ops.values_mut() {
            c.ops /= 50;
            c.rows /= 50;
        }
        runs[0].timeline.push(partial);
        let cmp = super::super::compare::compare(&runs, None, Vec::new());
        let data = series(&cmp, &runs, qr100, "range_query", |c| count_f64(c.ops));
        let xs: Vec<f64> = data[0].1.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 2.0, 3.0]);
        // The decision rule reads the same whole seconds.
        assert!(super::super::tables::whole_second(3, 3.000_007));
        assert!(!super::super::tables::whole_second(4, 3.000_007));
    }

    #[test]
    fn a_database_size_of_megabytes_is_charted_in_mb_with_its_one_sample() {
        let runs = postgres_fixture();
        let cmp = super::super::compare::compare(&runs, None, Vec::new());
        // qp100 has one size sample (the sampler reads sizes every few seconds).
        let (size, unit) = size_series(&cmp, &runs, "qp100".parse().unwrap());
        assert_eq!(unit, "MB");
        assert_eq!(size.len(), 2, "{size:?}");
        assert!((size[0].1[0].1 - 14.482_791).abs() < 1e-6, "{size:?}");
        let Block::Chart(svg) = chart("qp100 database size", unit, &size) else {
            panic!("a chart");
        };
        assert_eq!(
            svg.matches("class=\"point\"").count(),
            2,
            "a dot per one-sample series"
        );
    }

    #[test]
    fn two_runs_fit_about_150_lines_by_default_and_details_add_the_steps() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let dirs = [
            fixtures.join("postgres"),
            fixtures.join("postgres-commit-delay"),
        ];
        let short = super::super::render_dirs_with(
            &dirs,
            None,
            super::super::Format::Text,
            false,
            false,
            super::super::lag_sla::DEFAULT_LAG_SLA_MS,
        )
        .unwrap()
        .text;
        let full = super::super::render_dirs(&dirs, None, super::super::Format::Text, false)
            .unwrap()
            .text;
        let lines = short.lines().count();
        assert!(lines <= 150, "{lines} lines:\n{short}");
        assert!(
            short.contains("== tl;dr") && short.contains("--details"),
            "{short}"
        );
        assert!(!short.contains("latency: % of operations per bucket"));
        assert!(full.contains("latency: % of operations per bucket"));
        assert!(full.lines().count() > 2 * lines);
    }
}
