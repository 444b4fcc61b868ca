//! Markdown: tables pasteable into a blog post, colours as readable markers.
//!
//! Markers: `▲` green (good), `▼` red (bad), `~~value~~ (SLA)` an SLA failure; grey values
//! carry no marker.

use std::fmt::Write;

use super::cell_text;
use super::compare::{
    Cell, Colour, Comparison, MicroView, StepDetail, Table, micro_groups, profile_line,
};
use super::text::{fmt_metric, fmt_us, group_f};
use crate::stats::BUCKET_LABELS;

fn cell_md(c: &Cell, ratio: bool) -> String {
    let v = cell_text(c, ratio);
    if c.value.is_none() {
        return format!("_{v}_");
    }
    let v = if c.note.as_deref() == Some(super::compare::SLA_FAILED) {
        format!("~~{v}~~ (SLA)")
    } else if let Some(note) = super::partial_note(c) {
        format!("{v} ⚠ ({note})")
    } else {
        v
    };
    match c.colour {
        Colour::Green => format!("{v} ▲"),
        Colour::Red => format!("{v} ▼"),
        _ => v,
    }
}

/// A label as Markdown text: HTML in it is shown, not interpreted, and it cannot break a
/// table row or start emphasis, a link or code.
fn escape_md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

fn table_md(out: &mut String, t: &Table, ratio: bool, extra: Option<(&str, &[Option<f64>])>) {
    table_md_corner(out, "run", t, ratio, extra);
}

/// A table whose row labels are `corner`s (runs, or microbenchmarks).
fn table_md_corner(
    out: &mut String,
    corner: &str,
    t: &Table,
    ratio: bool,
    extra: Option<(&str, &[Option<f64>])>,
) {
    let _ = write!(out, "| {corner} |");
    for c in &t.columns {
        let _ = write!(out, " {c} |");
    }
    out.push_str("\n|---|");
    for _ in &t.columns {
        out.push_str("---:|");
    }
    out.push('\n');
    for row in &t.rows {
        let _ = write!(out, "| {} |", escape_md(&row.label));
        for c in &row.cells {
            let _ = write!(out, " {} |", cell_md(c, ratio));
        }
        out.push('\n');
    }
    if let Some((label, values)) = extra {
        let _ = write!(out, "| {label} |");
        for v in values {
            let _ = write!(out, " {} |", v.map_or("-".into(), group_f));
        }
        out.push('\n');
    }
}

/// The microbenchmark tables: microbenchmarks as rows, runs as columns.
fn micro_md(out: &mut String, m: &MicroView) {
    let grouped = |out: &mut String, t: &Table, ratio: bool| {
        for (group, part) in micro_groups(t) {
            let _ = writeln!(out, "\n*{group}*\n");
            table_md_corner(out, "microbenchmark", &part, ratio, None);
        }
    };
    out.push_str("## Microbenchmarks: operations/s (scan: rows/s)\n");
    grouped(out, &m.absolute, false);
    out.push_str("\n## Relative to the base\n");
    grouped(out, &m.relative, true);
    for (name, meaning, t) in &m.per_op {
        let _ = writeln!(out, "\n## {name}: {meaning}");
        grouped(out, t, true);
    }
}

/// The comparison as Markdown.
pub fn render(cmp: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {}\n\nRuns: {}. Base: **{}**.\n\nMarkers: ▲ good (top quarter; ≥ 1.05× the base), ▼ bad (bottom quarter; ≤ 0.95× the base; below 95% of the target rate), ~~struck~~ (SLA) the step failed its background-insert SLA, ⚠ (failed) or ⚠ (interrupted) the figure covers only the part of the step that ran.\n",
        super::compare::title(cmp),
        cmp.labels
            .iter()
            .map(|l| escape_md(l))
            .collect::<Vec<_>>()
            .join(", "),
        cmp.labels
            .get(cmp.base)
            .map_or(String::new(), |l| escape_md(l))
    );
    runs_md(&mut out, cmp);
    if let Some(m) = &cmp.micro {
        micro_md(&mut out, m);
    } else {
        out.push_str("## Absolute throughput\n\nInserted rows/s for l.i0, l.i1, l.i2; indexed rows/s for l.x; queries/s for the query steps.\n\n");
        table_md(&mut out, &cmp.absolute, false, None);
        out.push_str("\n## Relative to the base\n\n");
        table_md(&mut out, &cmp.relative, true, None);
    }
    if !cmp.background.columns.is_empty() {
        out.push_str("\n## Background insert rate (rows/s)\n\n");
        table_md(
            &mut out,
            &cmp.background,
            false,
            Some(("target", &cmp.background_targets)),
        );
    }
    if !cmp.diagnoses.is_empty() {
        out.push_str("\n## Diagnosis\n\nPer-op figures that moved with each relative throughput outside the noise band (±5%, or the base's spread over repeats), as run / base, the one that accounts for most of the change first.\n\n");
        for d in &cmp.diagnoses {
            let _ = writeln!(out, "- {}", escape_md(&d.line()));
        }
    }
    for d in &cmp.details {
        let _ = writeln!(out, "\n## {}\n", d.step);
        latency_md(&mut out, d);
        figures_md(&mut out, cmp, d);
    }
    if !cmp.problems.is_empty() {
        out.push_str("\n## Notes\n\n");
        for p in &cmp.problems {
            let _ = writeln!(out, "- {}", escape_md(p));
        }
    }
    out
}

/// The run table (DBMS, build flags, binary size, results dir) and the build warning.
fn runs_md(out: &mut String, cmp: &Comparison) {
    out.push_str("| run | DBMS | build flags | binary | results |\n|---|---|---|---:|---|\n");
    for r in &cmp.runs {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            escape_md(&r.label),
            escape_md(&r.dbms),
            escape_md(r.build_flags.as_deref().unwrap_or("n/a")),
            super::text::fmt_binary(r.binary_bytes),
            escape_md(&r.dir)
        );
    }
    if let Some(w) = &cmp.build_warning {
        let _ = writeln!(out, "\n**{}**", escape_md(w));
    }
    out.push('\n');
}

/// A step's latency bucket tables.
fn latency_md(out: &mut String, d: &StepDetail) {
    for (kind, rows) in &d.latency {
        let _ = write!(
            out,
            "{kind} latency, % of operations per bucket:\n\n| run |"
        );
        for b in BUCKET_LABELS {
            let _ = write!(out, " {b} |");
        }
        out.push_str(" p50 | p99 | p99.9 | max |\n|---|");
        for _ in 0..14 {
            out.push_str("---:|");
        }
        out.push('\n');
        for r in rows {
            let _ = write!(out, "| {} |", escape_md(&r.label));
            for s in r.bucket_shares {
                let cell = if s <= 0.0 {
                    String::new()
                } else {
                    format!("{:.2}", s * 100.0)
                };
                let _ = write!(out, " {cell} |");
            }
            let _ = writeln!(
                out,
                " {} | {} | {} | {} |",
                fmt_us(r.p50_us),
                fmt_us(r.p99_us),
                fmt_us(r.p99_9_us),
                fmt_us(r.max_us)
            );
        }
        out.push('\n');
    }
}

/// A step's figures for every run side by side, and their ratio to the base.
fn figures_md(out: &mut String, cmp: &Comparison, d: &StepDetail) {
    if !d.profiles.is_empty() {
        out.push_str("Server CPU profile, top functions by their own share of samples:\n\n");
        for (label, p) in &d.profiles {
            let _ = writeln!(
                out,
                "- {}: {}",
                escape_md(label),
                escape_md(&profile_line(p, 5))
            );
        }
        out.push('\n');
    }
    let _ = write!(out, "| metric |");
    for l in &cmp.labels {
        let _ = write!(out, " {} |", escape_md(l));
    }
    for l in &cmp.labels {
        let _ = write!(out, " {} / base |", escape_md(l));
    }
    out.push_str("\n|---|");
    for _ in 0..cmp.labels.len() * 2 {
        out.push_str("---:|");
    }
    out.push('\n');
    for m in &d.metrics {
        let _ = write!(out, "| {} |", m.name);
        for v in &m.values {
            let _ = write!(out, " {} |", v.map_or("n/a".into(), fmt_metric));
        }
        for r in &m.relative {
            let _ = write!(out, " {} |", r.map_or("-".into(), |r| format!("{r:.2}")));
        }
        out.push('\n');
    }
}
