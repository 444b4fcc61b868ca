//! Each step's detail (its latency distributions, figures and counters per operation, its
//! charts and profiles), shown as a report's [`Detail`] says; and the glossary of the
//! figures.

use super::charts;
use super::throughput::column_decimals;
use crate::report::details::profile_line;
use crate::report::document::{Block, DocCell, DocRow, DocTable};
use crate::report::load::{LoadedRun, clean_label};
use crate::report::model::{
    Cell, CellNote, Comparison, LatencyRow, MetricRow, StepDetail, grouped,
};
use crate::report::paint;
use crate::report::text::{SHARE_LEFTOVER, fmt_binary, fmt_us, share_text};
use crate::stats::BUCKET_LABELS;
use crate::workload::steps::StepName;

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

/// Each step's detail as `detail` says: left out with a note naming `--details`, in full (a
/// section per step), or each step's section folded.
pub fn details(
    b: &mut Vec<Block>,
    cmp: &Comparison,
    runs: &[LoadedRun],
    detail: Detail,
    charts: bool,
) {
    if detail == Detail::Short {
        if !cmp.details.is_empty() {
            b.push(Block::heading(2, "Per step"));
            b.push(Block::Note(format!(
                "Each step's latency distribution, figures per operation and counters are left out: `ibench report --details` shows them ({} step(s)); the HTML report has them folded.",
                cmp.details.len()
            )));
        }
        return;
    }
    for d in &cmp.details {
        let mut inner = Vec::new();
        step(&mut inner, cmp, runs, d, charts);
        if detail == Detail::Folded {
            b.push(Block::Fold {
                summary: format!(
                    "{} ({}): latency, figures per operation{}",
                    d.step,
                    d.unit,
                    if charts { ", charts" } else { "" }
                ),
                blocks: inner,
            });
        } else {
            b.extend(inner);
        }
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
        b.push(Block::heading(
            3,
            &format!("{kind} latency: % of operations per bucket"),
        ));
        b.push(Block::Table(latency_table(cmp, rows)));
    }
    b.push(Block::heading(3, "Figures"));
    b.push(Block::Table(figures_table(cmp, d.step, &d.metrics, false)));
    if cmp.runs.len() > 1 {
        b.push(Block::heading(3, "Figures relative to the base"));
        b.push(Block::Note(FIGURE_COLOURS.into()));
        b.push(Block::Table(figures_table(cmp, d.step, &d.metrics, true)));
    }
    counters(b, cmp, d);
    if charts {
        charts::step_charts(b, cmp, runs, d);
    }
    if !d.profiles.is_empty() {
        b.push(Block::heading(3, "Server CPU profile"));
        b.push(Block::Note("perf record on the server's processes (cpu-clock); top functions by their own share of samples.".into()));
        b.push(Block::List(
            d.profiles
                .iter()
                .map(|(label, p)| format!("{}: {}", cmp.key_of(label), profile_line(p, 8)))
                .collect(),
        ));
        if charts {
            b.extend(charts::flamegraphs(cmp, runs, d));
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
    b.push(Block::heading(3, "Counters per operation (perf)"));
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
            b.push(Block::heading(
                3,
                "Counters per operation relative to the base",
            ));
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

fn latency_table(cmp: &Comparison, rows: &[LatencyRow]) -> DocTable {
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
                        let mut c = DocCell::plain(share_text(*s, 2));
                        c.shade = Some(if *s < SHARE_LEFTOVER { 0.0 } else { *s });
                        c
                    })
                    .collect();
                for us in [r.p50_us, r.p99_us, r.p99_9_us, r.max_us] {
                    cells.push(DocCell::plain(fmt_us(us)));
                }
                DocRow {
                    label: cmp.key_of(&r.label).to_string(),
                    title: Some(clean_label(&r.label)),
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
/// the client's CPU, IO per op) as a figure the host moves. A duet's figures here are held to
/// the host flags, and one run a side decides them only on a host the probes showed steady:
/// a step's detail shows one run a side (in a matrix report each side's typical repeat, from
/// different rounds), not the rounds whose shared seconds let the relative throughput's rule
/// set the flags aside. Set aside here too, a same-against-same duet matrix of 60 rounds
/// painted 44 of its step figures red or green.
fn step_figure_paint(
    cmp: &Comparison,
    step: StepName,
    i: usize,
    m: &MetricRow,
    r: f64,
) -> paint::Paint {
    let decided = cmp
        .relative
        .columns
        .iter()
        .position(|c| *c == step)
        .and_then(|j| cmp.relative.rows.get(i)?.cells.get(j));
    let too_short = |c: &Cell| matches!(&c.note, Some(CellNote::Undecided(why)) if why.starts_with(crate::stats::decision::Reason::TooShort.text()));
    if let Some(cell) = decided.filter(|c| m.name == "throughput" || too_short(c)) {
        return paint::of_cell(cell);
    }
    let flag = cmp.host.flag(step, &cmp.labels[i]);
    paint::paint(&paint::Evidence {
        higher_is_better: m.lower_is_better.map(|l| !l),
        host: flag.map(|f| f.reasons.as_slice()),
        kind: if crate::results::metrics::judged_work(&m.name) {
            crate::stats::decision::FigureKind::Work
        } else {
            crate::stats::decision::FigureKind::Rate
        },
        steady_host: cmp.host.steady(&cmp.labels[i]),
        ..paint::Evidence::of_rate(r)
    })
}

/// A step's figures, one row per figure and a column per run; `relative`: run / base, the
/// base's own column left out, each ratio painted by [`crate::report::paint::paint`] (a host-affected
/// step's figures grey, marked ~).
pub fn figures_table(
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
                cells: {
                    // A figure over the runs is one kind of number: one precision.
                    let decimals = column_decimals(m.values.iter().flatten().copied());
                    keep.iter()
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
                                (Some(v), false) => DocCell::plain(grouped(v, decimals)),
                                (None, _) => DocCell::plain(if relative { "-" } else { "n/a" }),
                            }
                        })
                        .collect()
                },
            })
            .collect(),
        footer: None,
        text_columns: false,
        columns_are: "run".into(),
    }
}

/// What the colours of a relative figures table mean.
const FIGURE_COLOURS: &str = "Run / base. Red: worse by more than 5% (a cost up or a rate down); green: better by more than 5%; grey: within 5%, moved with no better or worse (seconds, the clock), or not decided (ending in ~: the step is host-affected).";

/// The glossary of the per-step figures: name and meaning, once.
pub fn glossary(b: &mut Vec<Block>, cmp: &Comparison) {
    let Some(d) = cmp.details.iter().max_by_key(|d| d.metrics.len()) else {
        return;
    };
    b.push(Block::heading(2, "What the figures mean"));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::layout::tests::{decimals_of, postgres_pair};

    #[test]
    fn each_figures_row_over_the_runs_shares_one_precision() {
        let cmp = postgres_pair();
        assert!(!cmp.details.is_empty());
        for d in &cmp.details {
            let t = figures_table(&cmp, d.step, &d.metrics, false);
            for r in &t.rows {
                let row: Vec<usize> = r
                    .cells
                    .iter()
                    .filter_map(|c| decimals_of(&c.text))
                    .collect();
                assert!(
                    row.windows(2).all(|w| w[0] == w[1]),
                    "{} {}: {row:?}",
                    d.step,
                    r.label
                );
            }
        }
    }

    #[test]
    fn a_steps_detail_is_left_out_shown_in_full_or_folded_with_the_same_blocks() {
        let cmp = postgres_pair();
        let shown = |detail| {
            let mut b = Vec::new();
            details(&mut b, &cmp, &[], detail, false);
            b
        };
        let short = shown(Detail::Short);
        assert_eq!(short.len(), 2);
        assert!(matches!(&short[0], Block::Heading { text, .. } if text == "Per step"));
        let full = shown(Detail::Full);
        let folded = shown(Detail::Folded);
        assert_eq!(folded.len(), cmp.details.len());
        let mut unfolded: Vec<String> = Vec::new();
        for f in &folded {
            let Block::Fold { blocks, .. } = f else {
                panic!("a fold: {f:?}");
            };
            unfolded.extend(blocks.iter().map(|x| format!("{x:?}")));
        }
        let full: Vec<String> = full.iter().map(|x| format!("{x:?}")).collect();
        assert_eq!(full, unfolded);
        let Block::Fold { summary, .. } = &folded[0] else {
            unreachable!()
        };
        assert_eq!(
            summary,
            &format!(
                "{} ({}): latency, figures per operation",
                cmp.details[0].step, cmp.details[0].unit
            )
        );
    }
}
