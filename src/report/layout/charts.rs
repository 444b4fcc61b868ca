//! A step's pictures, HTML only: its charts over time (the rate of each op kind, the index
//! build's progress, the database size, the max latency per second), each run in its own
//! colour, or a note when the step was too short for them; and its flamegraphs.

use std::collections::BTreeMap;

use crate::flame::{differential_svg, flamegraph_svg};
use crate::report::document::Block;
use crate::report::load::LoadedRun;
use crate::report::model::{Comparison, StepDetail};
use crate::report::svg::{self, Line};
use crate::report::tables::whole_second;
use crate::results::metrics::ProfileRecord;
use crate::stats::convert::count_f64;
use crate::workload::steps::StepName;

/// A step shorter than this (in every run) gets a note instead of per-second charts.
pub const MIN_CHART_SECONDS: f64 = 2.0;

/// Per-second series of one op kind in one step for every run: a line per run, in its run's
/// colour. A run's last
/// line when it covers only part of a second (the step ended inside it: its `second` is past
/// the step's length) is left out: drawn as a rate, it would read as a drop towards 0.
fn series(
    cmp: &Comparison,
    runs: &[LoadedRun],
    step: StepName,
    kind: &str,
    value: impl Fn(&crate::stats::SecondCounts) -> f64,
) -> Series {
    runs.iter()
        .map(|r| {
            let length = r.record.step(step).map(|s| s.seconds);
            let points = r
                .timeline
                .iter()
                .filter(|l| l.step == step && length.is_none_or(|len| whole_second(l.second, len)))
                .filter_map(|l| Some((f64::from(l.second), value(l.ops.get(kind)?))))
                .collect();
            run_line(cmp, &r.label, "", points)
        })
        .collect()
}

/// The line of the run labelled `label` (its key and `what`) in a chart: in its run's colour,
/// the same in every chart of the report.
fn run_line(cmp: &Comparison, label: &str, what: &str, points: Vec<(f64, f64)>) -> Line {
    let run = cmp.labels.iter().position(|l| l == label).unwrap_or(0);
    Line {
        label: format!("{}{what}", cmp.key_of(label)),
        run,
        second: false,
        points,
    }
}

/// A per-second series of one step for every run, `point` read from each of its timeline
/// lines (`None`: no point that second): a line per run.
fn timeline_series(
    cmp: &Comparison,
    runs: &[LoadedRun],
    step: StepName,
    point: impl Fn(&crate::results::TimelineLine) -> Option<f64>,
) -> Series {
    runs.iter()
        .map(|r| {
            let points = r
                .timeline
                .iter()
                .filter(|l| l.step == step)
                .filter_map(|l| Some((f64::from(l.second), point(l)?)))
                .collect();
            run_line(cmp, &r.label, "", points)
        })
        .collect()
}

fn chart(title: &str, y_label: &str, data: &[Line]) -> Block {
    Block::Chart(svg::run_line_chart(
        title,
        "seconds into the step",
        y_label,
        data,
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
pub fn step_charts(b: &mut Vec<Block>, cmp: &Comparison, runs: &[LoadedRun], d: &StepDetail) {
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
    if builds.iter().any(|l| !l.points.is_empty()) {
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
fn index_build_series(cmp: &Comparison, runs: &[LoadedRun], step: StepName) -> Series {
    timeline_series(cmp, runs, step, |l| {
        let b = l.index_builds.first().filter(|b| b.total > 0)?;
        Some(count_f64(b.done) / count_f64(b.total) * 100.0)
    })
}

/// Charted series: a line per run (or two), each in its run's colour.
type Series = Vec<Line>;

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
            [
                run_line(cmp, &r.label, " (DBMS)", curve(|l| l.db_size_bytes)),
                Line {
                    second: true,
                    ..run_line(cmp, &r.label, " (on disk)", curve(|l| l.data_dir_bytes))
                },
            ]
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    let largest = bytes
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let (scale, unit) = if largest < 1e9 {
        (1e6, "MB")
    } else {
        (1e9, "GB")
    };
    let scaled = bytes
        .into_iter()
        .map(|l| Line {
            points: l.points.iter().map(|&(x, y)| (x, y / scale)).collect(),
            ..l
        })
        .collect();
    (scaled, unit)
}

/// A step's flamegraphs: each run's, and each other run's differential flamegraph against
/// the base's same step; a note where one cannot be drawn.
pub fn flamegraphs(cmp: &Comparison, runs: &[LoadedRun], d: &StepDetail) -> Vec<Block> {
    let folded_of = |label: &str, p: &ProfileRecord| -> Option<String> {
        let run = runs.iter().find(|r| r.label == label)?;
        std::fs::read_to_string(run.dir.join(p.folded_file.as_ref()?)).ok()
    };
    let base_label = cmp.labels.get(cmp.base).map_or("", String::as_str);
    let base_folded = d
        .profiles
        .iter()
        .find(|(l, _)| l == base_label)
        .and_then(|(l, p)| folded_of(l, p));
    let mut out = Vec::new();
    let mut picture = |svg: Result<String, String>, alt: &str| {
        out.push(match svg {
            Ok(svg) => Block::Image {
                svg,
                alt: alt.to_string(),
            },
            Err(e) => Block::Note(e),
        });
    };
    for (label, p) in &d.profiles {
        let Some(folded) = folded_of(label, p) else {
            continue;
        };
        let key = cmp.key_of(label);
        let title = format!("{} {key}: server CPU", d.step);
        picture(flamegraph_svg(&folded, &title, false), "flamegraph");
        if let Some(base) = base_folded.as_deref().filter(|_| label != base_label) {
            let base_key = cmp.key_of(base_label);
            let title = format!("{} {key} against {base_key}", d.step);
            picture(
                differential_svg(base, &folded, &title),
                "differential flamegraph",
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare::compare;
    use crate::report::layout::tests::postgres_fixture;
    use crate::report::svg::run_colour;

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
        let cmp = compare(&runs, None, Vec::new());
        let data = series(&cmp, &runs, qr100, "range_query", |c| count_f64(c.ops));
        let xs: Vec<f64> = data[0].points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 2.0, 3.0]);
        // The decision rule reads the same whole seconds.
        assert!(whole_second(3, 3.000_007));
        assert!(!whole_second(4, 3.000_007));
    }

    #[test]
    fn a_database_size_of_megabytes_is_charted_in_mb_with_its_one_sample() {
        let runs = postgres_fixture();
        let cmp = compare(&runs, None, Vec::new());
        // qp100 has one size sample (the sampler reads sizes every few seconds).
        let (size, unit) = size_series(&cmp, &runs, "qp100".parse().unwrap());
        assert_eq!(unit, "MB");
        assert_eq!(size.len(), 2, "{size:?}");
        assert!((size[0].points[0].1 - 14.482_791).abs() < 1e-6, "{size:?}");
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
    fn each_of_13_runs_keeps_one_colour_in_every_chart_even_where_others_have_no_line() {
        let one = postgres_fixture().remove(0);
        let mut runs: Vec<LoadedRun> = (0..13)
            .map(|i| LoadedRun {
                label: format!("run{i}"),
                ..one.clone()
            })
            .collect();
        // The first run sampled no sizes: the database-size chart has no line of it, and its
        // second run must not take its colour (it did: colours went by line, not by run).
        runs[0].samples.clear();
        let cmp = compare(&runs, None, Vec::new());
        let qr100: StepName = "qr100".parse().unwrap();
        let (size, _) = size_series(&cmp, &runs, "qp100".parse().unwrap());
        let rates = series(&cmp, &runs, qr100, "range_query", |c| count_f64(c.ops));
        assert_eq!(rates.len(), 13);
        assert_eq!(size.len(), 24, "two curves for each run but the first");
        for l in rates.iter().chain(&size) {
            let key = l.label.split(' ').next().unwrap();
            assert_eq!(key, format!("run{}", l.run), "{l:?}");
        }
        let Block::Chart(svg) = chart("qp100 database size", "MB", &size) else {
            panic!("a chart");
        };
        let colour = run_colour;
        let drawn =
            |run: usize| svg.contains(&format!("fill=\"{}\"><title>run{run} (DBMS)", colour(run)));
        assert!(!svg.contains("<title>run0 "), "run0 has no line");
        assert!((1..13).all(drawn), "{svg}");
        // 12 colours, each once; the 13th run takes the first colour again, dashed.
        let palette: std::collections::BTreeSet<&str> = (0..12).map(colour).collect();
        assert_eq!(palette.len(), 12);
        assert_eq!(colour(12), colour(0));
        let Block::Chart(rates_svg) = chart("qr100 rate", "queries/s", &rates) else {
            panic!("a chart");
        };
        assert_eq!(rates_svg.matches("stroke-dasharray=\"6 3\"").count(), 1);
    }
}
