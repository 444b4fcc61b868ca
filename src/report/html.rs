//! One self-contained HTML file: tables with the published colours, inline SVG charts, no
//! scripts and nothing fetched, so it opens offline.

use crate::stats::convert::count_f64;
use std::collections::BTreeMap;
use std::fmt::Write;

use super::cell_text;
use super::compare::{
    Cell, Colour, Comparison, MicroView, StepDetail, Table, micro_groups, profile_line,
};
use super::load::LoadedRun;
use super::svg::{bar_chart, esc, line_chart};
use super::text::{fmt_metric, fmt_us, group_f};
use crate::flame::{differential_svg, flamegraph_svg};
use crate::results::metrics::ProfileRecord;
use crate::stats::BUCKET_LABELS;

const STYLE: &str = "img.flame{width:100%;border:1px solid #ddd;margin:6px 0}body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;font-variant-numeric:tabular-nums}
th{background:#f3f3f3}td.l,th.l{text-align:left}
.green{background:#b7e4b0}.red{background:#f4b6b6}.grey{background:#e2e2e2;color:#555}.missing{color:#999;font-style:italic}
.sla{text-decoration:line-through}.note{color:#666;font-size:13px}.charts svg{margin:4px 8px 12px 0;border:1px solid #eee}";

fn class_of(c: &Cell) -> &'static str {
    if c.value.is_none() {
        return "missing";
    }
    match c.colour {
        Colour::Green => "green",
        Colour::Red => "red",
        Colour::Grey => "grey",
        Colour::None => "",
    }
}

fn table_html(out: &mut String, t: &Table, ratio: bool, extra: Option<(&str, &[Option<f64>])>) {
    table_html_corner(out, "run", t, ratio, extra);
}

/// A table whose row labels are `corner`s (runs, or microbenchmarks).
fn table_html_corner(
    out: &mut String,
    corner: &str,
    t: &Table,
    ratio: bool,
    extra: Option<(&str, &[Option<f64>])>,
) {
    let _ = write!(out, "<table><tr><th class=\"l\">{}</th>", esc(corner));
    for c in &t.columns {
        let _ = write!(out, "<th>{}</th>", esc(c));
    }
    out.push_str("</tr>");
    for row in &t.rows {
        let _ = write!(out, "<tr><td class=\"l\">{}</td>", esc(&row.label));
        for c in &row.cells {
            let sla = c.note.as_deref() == Some(super::compare::SLA_FAILED) && c.value.is_some();
            let title = c
                .note
                .as_deref()
                .map(|n| format!(" title=\"{}\"", esc(n)))
                .unwrap_or_default();
            let mark = if super::partial_note(c).is_some() {
                " !"
            } else {
                ""
            };
            let _ = write!(
                out,
                "<td class=\"{}{}\"{title}>{}{mark}</td>",
                class_of(c),
                if sla { " sla" } else { "" },
                esc(&cell_text(c, ratio))
            );
        }
        out.push_str("</tr>");
    }
    if let Some((label, values)) = extra {
        let _ = write!(out, "<tr><th class=\"l\">{}</th>", esc(label));
        for v in values {
            let _ = write!(out, "<th>{}</th>", v.map_or("-".into(), group_f));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

/// Per-second series of one op kind in one step for every run: `(label, points)`.
fn series(
    runs: &[LoadedRun],
    step: &str,
    kind: &str,
    value: impl Fn(&crate::stats::SecondCounts) -> f64,
) -> Vec<(String, Vec<(f64, f64)>)> {
    runs.iter()
        .map(|r| {
            let points = r
                .timeline
                .iter()
                .filter(|l| l.step.to_string() == step)
                .filter_map(|l| l.ops.get(kind).map(|c| (f64::from(l.second), value(c))))
                .collect();
            (r.label.clone(), points)
        })
        .collect()
}

fn chart(title: &str, y_label: &str, data: &[(String, Vec<(f64, f64)>)]) -> String {
    let refs: Vec<(&str, Vec<(f64, f64)>)> =
        data.iter().map(|(l, p)| (l.as_str(), p.clone())).collect();
    line_chart(title, "seconds into the step", y_label, &refs)
}

/// The comparison as one HTML document.
pub fn render(cmp: &Comparison, runs: &[LoadedRun]) -> String {
    let mut out = header_html(cmp);
    summary_html(&mut out, cmp);
    diagnosis_html(&mut out, cmp);
    for d in &cmp.details {
        latency_html(&mut out, d);
        figures_html(&mut out, cmp, d);
        charts_html(&mut out, runs, d);
        profile_html(&mut out, cmp, runs, d);
    }
    if !cmp.problems.is_empty() {
        out.push_str("<h2>Notes</h2><ul>");
        for p in &cmp.problems {
            let _ = write!(out, "<li>{}</li>", esc(p));
        }
        out.push_str("</ul>");
    }
    let _ = writeln!(
        out,
        "<p class=\"note\">Written by ibench {}.</p></body></html>",
        env!("CARGO_PKG_VERSION")
    );
    out
}

/// The document's head, title and the table of runs.
fn header_html(cmp: &Comparison) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ibench: {}</title><style>{STYLE}</style></head><body>",
        esc(&cmp.labels.join(" vs "))
    );
    let _ = write!(
        out,
        "<h1>{}</h1><p>Runs: {}. Base: <b>{}</b>.</p>",
        super::compare::title(cmp),
        esc(&cmp.labels.join(", ")),
        esc(cmp.labels.get(cmp.base).map_or("", String::as_str))
    );
    out.push_str("<table class=\"note\"><tr><th class=\"l\">run</th><th class=\"l\">DBMS</th><th class=\"l\">build flags</th><th>binary</th><th class=\"l\">status</th><th class=\"l\">results</th></tr>");
    for r in &cmp.runs {
        let _ = write!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(&r.label),
            esc(&r.dbms),
            esc(r.build_flags.as_deref().unwrap_or("n/a")),
            super::text::fmt_binary(r.binary_bytes),
            esc(&r.status),
            esc(&r.dir)
        );
    }
    out.push_str("</table>");
    if let Some(w) = &cmp.build_warning {
        let _ = write!(out, "<p class=\"warn\"><b>{}</b></p>", esc(w));
    }
    out
}

/// The absolute, relative and background-rate tables and the relative bar chart.
fn summary_html(out: &mut String, cmp: &Comparison) {
    if let Some(m) = &cmp.micro {
        micro_html(out, m);
        return;
    }
    out.push_str("<h2>Absolute throughput</h2><p class=\"note\">Inserted rows/s for l.i0, l.i1, l.i2; indexed rows/s for l.x; queries/s for the query steps. Green: top quarter of the column; red: bottom quarter (none when min ≥ 0.8 × max); grey and struck: the step failed its SLA.</p>");
    table_html(out, &cmp.absolute, false, None);
    out.push_str("<h2>Relative to the base</h2><p class=\"note\">Red ≤ 0.95, green ≥ 1.05, grey between.</p>");
    table_html(out, &cmp.relative, true, None);
    let rel_values: Vec<Vec<Option<f64>>> = cmp
        .relative
        .rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.value).collect())
        .collect();
    let labels: Vec<&str> = cmp.labels.iter().map(String::as_str).collect();
    out.push_str("<div class=\"charts\">");
    out.push_str(&bar_chart(
        "Throughput per step, relative to the base",
        "relative throughput",
        &cmp.steps,
        &labels,
        &rel_values,
    ));
    out.push_str("</div>");
    if !cmp.background.columns.is_empty() {
        out.push_str("<h2>Background insert rate (rows/s)</h2><p class=\"note\">Red: below 95% of the target (last row).</p>");
        table_html(
            out,
            &cmp.background,
            false,
            Some(("target", &cmp.background_targets)),
        );
    }
}

/// The microbenchmark tables: microbenchmarks as rows, runs as columns (the published shape).
fn micro_html(out: &mut String, m: &MicroView) {
    let grouped = |out: &mut String, t: &Table, ratio: bool| {
        for (group, part) in micro_groups(t) {
            let _ = write!(out, "<h3>{}</h3>", esc(group));
            table_html_corner(out, "microbenchmark", &part, ratio, None);
        }
    };
    out.push_str("<h2>Microbenchmarks: operations/s</h2><p class=\"note\">A scan's figure is rows/s. Green: top quarter of the row; red: bottom quarter.</p>");
    grouped(out, &m.absolute, false);
    out.push_str("<h2>Relative to the base</h2><p class=\"note\">Red ≤ 0.95, green ≥ 1.05, grey between.</p>");
    grouped(out, &m.relative, true);
    for (name, meaning, t) in &m.per_op {
        let _ = write!(
            out,
            "<h2>{}</h2><p class=\"note\">{}</p>",
            esc(name),
            esc(meaning)
        );
        grouped(out, t, true);
    }
}

/// What moved with each change outside the noise band.
fn diagnosis_html(out: &mut String, cmp: &Comparison) {
    if !cmp.diagnoses.is_empty() {
        out.push_str("<h2>Diagnosis</h2><p class=\"note\">Per-op figures that moved with each relative throughput outside the noise band (±5%, or the base's spread over repeats), as run / base, the one that accounts for most of the change first.</p><ul>");
        for d in &cmp.diagnoses {
            let _ = write!(out, "<li>{}</li>", esc(&d.line()));
        }
        out.push_str("</ul>");
    }
}

/// A step's heading and its latency bucket tables.
fn latency_html(out: &mut String, d: &StepDetail) {
    let _ = write!(out, "<h2 id=\"step-{0}\">{0}</h2>", esc(&d.step));
    for (kind, rows) in &d.latency {
        let _ = write!(
            out,
            "<h3>{} latency: share of operations per bucket</h3><table><tr><th class=\"l\">run</th>",
            esc(kind)
        );
        for b in BUCKET_LABELS {
            let _ = write!(out, "<th>{}</th>", esc(b));
        }
        out.push_str("<th>p50</th><th>p99</th><th>p99.9</th><th>max</th></tr>");
        for r in rows {
            let _ = write!(out, "<tr><td class=\"l\">{}</td>", esc(&r.label));
            for s in r.bucket_shares {
                let alpha = (s.sqrt() * 0.85).clamp(0.0, 0.85);
                let _ = write!(
                    out,
                    "<td style=\"background:rgba(31,119,180,{alpha:.2})\">{}</td>",
                    if s > 0.0 {
                        format!("{:.2}", s * 100.0)
                    } else {
                        String::new()
                    }
                );
            }
            let _ = write!(
                out,
                "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                fmt_us(r.p50_us),
                fmt_us(r.p99_us),
                fmt_us(r.p99_9_us),
                fmt_us(r.max_us)
            );
        }
        out.push_str("</table>");
    }
}

/// A step's figures for every run side by side, and their ratio to the base.
fn figures_html(out: &mut String, cmp: &Comparison, d: &StepDetail) {
    out.push_str("<h3>Figures</h3><table><tr><th class=\"l\">metric</th>");
    for l in &cmp.labels {
        let _ = write!(out, "<th>{}</th>", esc(l));
    }
    for l in &cmp.labels {
        let _ = write!(out, "<th>{} / base</th>", esc(l));
    }
    out.push_str("<th class=\"l\">meaning</th></tr>");
    for m in &d.metrics {
        let _ = write!(out, "<tr><td class=\"l\">{}</td>", esc(&m.name));
        for v in &m.values {
            let _ = write!(out, "<td>{}</td>", v.map_or("n/a".into(), fmt_metric));
        }
        for r in &m.relative {
            let _ = write!(
                out,
                "<td>{}</td>",
                r.map_or("-".into(), |r| format!("{r:.2}"))
            );
        }
        let _ = write!(out, "<td class=\"l note\">{}</td></tr>", esc(&m.meaning));
    }
    out.push_str("</table>");
}

/// A step's charts over time: rates, database size, max latency per second.
fn charts_html(out: &mut String, runs: &[LoadedRun], d: &StepDetail) {
    // Charts over time.
    let mut kinds: BTreeMap<String, ()> = BTreeMap::new();
    for r in runs {
        for l in r.timeline.iter().filter(|l| l.step.to_string() == d.step) {
            for k in l.ops.keys() {
                kinds.insert(k.clone(), ());
            }
        }
    }
    out.push_str("<div class=\"charts\">");
    for kind in kinds.keys() {
        let rows_based = kind == "insert" || kind == "delete";
        let data = series(runs, &d.step, kind, |c| {
            if rows_based {
                count_f64(c.rows)
            } else {
                count_f64(c.ops)
            }
        });
        let unit = if rows_based { "rows/s" } else { "ops/s" };
        out.push_str(&chart(&format!("{} {kind} rate", d.step), unit, &data));
    }
    // Database size over the step, from the sampler's time series.
    let size: Vec<(String, Vec<(f64, f64)>)> = runs
        .iter()
        .flat_map(|r| {
            let in_step: Vec<_> = r
                .samples
                .iter()
                .filter(|l| l.step.as_deref() == Some(d.step.as_str()))
                .collect();
            let t0 = in_step.first().map_or(0.0, |l| l.t - l.interval_seconds);
            let curve = |pick: fn(&crate::results::metrics::SampleLine) -> Option<u64>| {
                in_step
                    .iter()
                    .filter_map(|l| pick(l).map(|b| (l.t - t0, count_f64(b) / 1e9)))
                    .collect::<Vec<_>>()
            };
            [
                (format!("{} (DBMS)", r.label), curve(|l| l.db_size_bytes)),
                (
                    format!("{} (on disk)", r.label),
                    curve(|l| l.data_dir_bytes),
                ),
            ]
        })
        .filter(|(_, points)| !points.is_empty())
        .collect();
    if !size.is_empty() {
        out.push_str(&chart(&format!("{} database size", d.step), "GB", &size));
    }
    if let Some((main, _)) = d.latency.first() {
        let data = series(runs, &d.step, main, |c| {
            count_f64(c.max_latency_us) / 1000.0
        });
        out.push_str(&chart(
            &format!("{} {main} max latency per second", d.step),
            "ms",
            &data,
        ));
    }
    out.push_str("</div>");
}

/// A step's server CPU profiles: each run's flamegraph and top functions, and each other
/// run's differential flamegraph against the base's same step.
fn profile_html(out: &mut String, cmp: &Comparison, runs: &[LoadedRun], d: &StepDetail) {
    if d.profiles.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<h3>{} server CPU profile</h3><p class=\"note\">perf record on the server's processes (cpu-clock); the widths are shares of its CPU samples. Top functions by their own share.</p>",
        esc(&d.step)
    );
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
    for (label, p) in &d.profiles {
        let _ = write!(
            out,
            "<p><b>{}</b>: {}</p>",
            esc(label),
            esc(&profile_line(p, 8))
        );
        let Some(folded) = folded_of(label, p) else {
            continue;
        };
        match flamegraph_svg(&folded, &format!("{} {}: server CPU", d.step, label), false) {
            Ok(svg) => out.push_str(&svg_img(&svg, "flamegraph")),
            Err(e) => {
                let _ = write!(out, "<p class=\"note\">{}</p>", esc(&e));
            }
        }
        if let Some(base) = base_folded.as_deref().filter(|_| label != base_label) {
            let title = format!("{} {label} against {base_label}", d.step);
            match differential_svg(base, &folded, &title) {
                Ok(svg) => out.push_str(&svg_img(&svg, "differential flamegraph")),
                Err(e) => {
                    let _ = write!(out, "<p class=\"note\">{}</p>", esc(&e));
                }
            }
        }
    }
}

/// An SVG as an image embedded in the page (its scripts do not run there: a static picture
/// that works offline).
fn svg_img(svg: &str, alt: &str) -> String {
    use base64::Engine as _;
    format!(
        "<img class=\"flame\" alt=\"{}\" src=\"data:image/svg+xml;base64,{}\">",
        esc(alt),
        base64::engine::general_purpose::STANDARD.encode(svg)
    )
}
