//! The terminal summary of one run.

use crate::stats::convert::{count_f64, round_to_u64};
use std::fmt::Write;

use super::compare::{
    Colour, Comparison, MicroView, StepDetail, Table, micro_groups, profile_line,
};
use super::{cell_text, marked};
use crate::results::{CheckFailure, RunRecord, Status, StepRecord};
use crate::stats::{BUCKET_LABELS, LatencySummary};

/// A short unit for a throughput figure.
fn short_unit(unit: &str) -> &'static str {
    match unit {
        "inserted rows/s" => "ins/s",
        "indexed rows/s" => "idx rows/s",
        "queries/s" => "q/s",
        _ => "/s",
    }
}

fn status_note(s: &StepRecord) -> String {
    match s.status {
        Status::Completed => String::new(),
        Status::Interrupted => "  INTERRUPTED".into(),
        Status::Failed => format!(
            "  FAILED: {}",
            s.error.as_deref().unwrap_or("unknown error")
        ),
        Status::Running => "  RUNNING".into(),
    }
}

/// A failed check after a step, loud: `INTEGRITY CHECK FAILED: pi1 holds ...`.
pub fn check_failure_note(f: &CheckFailure) -> String {
    format!(
        "{} CHECK FAILED: {}",
        f.kind.to_string().to_uppercase(),
        f.message
    )
}

/// One line per finished step, printed as the run goes.
pub fn step_line(s: &StepRecord) -> String {
    // Microbenchmark names are long: one width for all of them keeps the lines aligned.
    let w = if s.name.is_micro() { 34 } else { 7 };
    let mut line = format!(
        "{:<w$} {:>8.1} s  {:>12} {}",
        s.name.to_string(),
        s.seconds,
        group(round_to_u64(s.throughput.round())),
        short_unit(&s.throughput_unit)
    );
    if let Some(sla) = &s.sla {
        let _ = write!(
            line,
            "  bg insert {:.0}/{:.0} rows/s {}",
            sla.achieved_rows_per_sec,
            sla.target_rows_per_sec,
            if sla.passed { "SLA ok" } else { "SLA FAILED" }
        );
    }
    for f in &s.check_failures {
        let _ = write!(line, "  {}", check_failure_note(f));
    }
    line.push_str(&status_note(s));
    line
}

/// Microseconds in a compact human form.
pub fn fmt_us(us: u64) -> String {
    if us < 1_000 {
        format!("{us}us")
    } else if us < 1_000_000 {
        format!("{:.1}ms", count_f64(us) / 1e3)
    } else {
        format!("{:.2}s", count_f64(us) / 1e6)
    }
}

/// A share in percent with one decimal, `.` for none.
fn share(x: f64) -> String {
    if x <= 0.0 {
        ".".into()
    } else {
        format!("{:.1}", x * 100.0)
    }
}

fn latency_row(out: &mut String, w: usize, step: &str, kind: &str, l: &LatencySummary) {
    let _ = write!(
        out,
        "{step:<w$} {kind:<18} {:>8} {:>8} {:>8} {:>8} {:>8} ",
        group(l.count),
        fmt_us(l.p50_us),
        fmt_us(l.p99_us),
        fmt_us(l.p99_9_us),
        fmt_us(l.max_us)
    );
    for s in l.bucket_shares {
        let _ = write!(out, "{:>6}", share(s));
    }
    out.push('\n');
}

/// The end-of-run summary: per step the throughput, then per op kind the latency percentiles
/// and the 10 bucket shares.
pub fn summary(run: &RunRecord) -> String {
    let mut out = String::new();
    let w = step_column_width(&run.steps);
    let target = run
        .target
        .as_ref()
        .map(|t| format!("{} {} ({})", t.dbms, t.version, t.url))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "ibench {} — {} — {} client(s), profile {}, run {:?}",
        run.ibench_version, target, run.options.clients, run.options.profile, run.status
    );
    let _ = writeln!(
        out,
        "\n{:<w$} {:>10} {:>14} {:<10} {:>9} {:>9} {:>10}  notes",
        "step", "seconds", "throughput", "", "p50/s", "1%low/s", "cpu us/op"
    );
    for s in &run.steps {
        let cpu = s
            .client_cpu_us_per_op
            .map_or("n/a".to_string(), |c| format!("{c:.2}"));
        let mut notes = step_notes(s);
        notes.push_str(status_note(s).trim());
        let _ = writeln!(
            out,
            "{:<w$} {:>10.1} {:>14} {:<10} {:>9} {:>9} {:>10}  {}",
            s.name.to_string(),
            s.seconds,
            group(round_to_u64(s.throughput.round())),
            short_unit(&s.throughput_unit),
            s.rate_p50.map_or("n/a".into(), |r| group(round_to_u64(r))),
            s.rate_p1low
                .map_or("n/a".into(), |r| group(round_to_u64(r))),
            cpu,
            notes.trim_end()
        );
    }
    let _ = write!(
        out,
        "\nlatency: from the intended start (paced background ops: from their due time; '(service)': from the send)\n{:<w$} {:<18} {:>8} {:>8} {:>8} {:>8} {:>8} ",
        "step", "op", "count", "p50", "p99", "p99.9", "max"
    );
    for b in BUCKET_LABELS {
        let _ = write!(out, "{b:>6}");
    }
    out.push_str("   (% of ops per bucket)\n");
    for s in &run.steps {
        for (kind, op) in &s.ops {
            latency_row(&mut out, w, &s.name.to_string(), kind, &op.latency_us);
            if op.target_rows_per_sec.is_some() {
                // Paced: also show the service time, from the real send.
                let label = format!("{kind} (service)");
                latency_row(&mut out, w, &s.name.to_string(), &label, &op.service_us);
            }
        }
    }
    out
}

/// The notes of a step's summary line: SLA, integrity, settle.
fn step_notes(s: &StepRecord) -> String {
    let mut notes = String::new();
    if let Some(sla) = &s.sla {
        let _ = write!(
            notes,
            "bg insert {:.0}/{:.0} rows/s {} ({:.0}% of seconds below 95%) ",
            sla.achieved_rows_per_sec,
            sla.target_rows_per_sec,
            if sla.passed { "SLA ok" } else { "SLA FAILED" },
            sla.share_of_seconds_below_95pct * 100.0
        );
    }
    if s.integrity.as_ref().is_some_and(|i| i.ok) {
        notes.push_str("integrity ok ");
    }
    for f in &s.check_failures {
        let _ = write!(notes, "{} ", check_failure_note(f));
    }
    if let Some(settle) = &s.settle {
        let _ = write!(notes, "settled {:.0} s ", settle.seconds);
    }
    notes
}

/// Width of the step-name column: the longest name, at least 7.
pub fn step_column_width(steps: &[StepRecord]) -> usize {
    steps
        .iter()
        .map(|s| s.name.to_string().chars().count())
        .max()
        .unwrap_or(0)
        .max(7)
}

/// An integer with thousands separators.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A float rounded and grouped in thousands.
pub fn group_f(v: f64) -> String {
    if v < 0.0 {
        format!("-{}", group(round_to_u64((-v).round())))
    } else {
        group(round_to_u64(v.round()))
    }
}

fn paint(s: &str, c: Colour, colour: bool) -> String {
    if !colour {
        return s.to_string();
    }
    match c {
        Colour::Green => format!("\x1b[32m{s}\x1b[0m"),
        Colour::Red => format!("\x1b[31m{s}\x1b[0m"),
        Colour::Grey => format!("\x1b[90m{s}\x1b[0m"),
        Colour::None => s.to_string(),
    }
}

fn table_text(
    out: &mut String,
    t: &Table,
    ratio: bool,
    colour: bool,
    extra: Option<(&str, &[Option<f64>])>,
) {
    let label_w = t
        .rows
        .iter()
        .map(|r| r.label.chars().count())
        .chain(std::iter::once(6))
        .max()
        .unwrap_or(6)
        .min(super::MAX_LABEL_CHARS);
    let _ = write!(out, "{:<label_w$}", "");
    for c in &t.columns {
        let _ = write!(out, " {c:>11}");
    }
    out.push('\n');
    for row in &t.rows {
        let _ = write!(out, "{:<label_w$}", truncate(&row.label, label_w));
        for c in &row.cells {
            let mut v = cell_text(c, ratio);
            if !colour && c.note.as_deref() == Some(super::compare::SLA_FAILED) && c.value.is_some()
            {
                v.push('*');
            }
            if super::partial_note(c).is_some() {
                v.push('!');
            }
            let padded = format!(" {v:>11}");
            out.push_str(&if marked(c.colour) {
                paint(&padded, c.colour, colour)
            } else {
                padded
            });
        }
        out.push('\n');
    }
    if let Some((label, values)) = extra {
        let _ = write!(out, "{label:<label_w$}");
        for v in values {
            let _ = write!(out, " {:>11}", v.map_or("-".to_string(), group_f));
        }
        out.push('\n');
    }
}

/// The microbenchmark tables: microbenchmarks as rows, runs as columns.
fn micro_text(out: &mut String, m: &MicroView, colour: bool) {
    let grouped = |out: &mut String, t: &Table, ratio: bool| {
        for (group, part) in micro_groups(t) {
            let _ = writeln!(out, "-- {group}");
            table_text(out, &part, ratio, colour, None);
        }
    };
    out.push_str("\nMicrobenchmarks, operations/s (scan: rows/s)\n");
    grouped(out, &m.absolute, false);
    out.push_str("\nRelative to the base (red <= 0.95, green >= 1.05)\n");
    grouped(out, &m.relative, true);
    for (name, meaning, t) in &m.per_op {
        let _ = writeln!(out, "\n{name}: {meaning}");
        grouped(out, t, true);
    }
}

/// A binary's size for people: `8.9 MB`.
pub fn fmt_binary(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "n/a".to_string(),
        |b| format!("{:.1} MB", count_f64(b) / 1e6),
    )
}

/// The run table (DBMS, build flags, binary size) and the build warning.
fn runs_text(out: &mut String, cmp: &Comparison) {
    let label_w = cmp
        .runs
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(3)
        .clamp(3, super::MAX_LABEL_CHARS);
    let _ = writeln!(
        out,
        "\n{:<label_w$}  {:<24} {:<16} {:>9}",
        "run", "DBMS", "build flags", "binary"
    );
    for r in &cmp.runs {
        let _ = writeln!(
            out,
            "{:<label_w$}  {:<24} {:<16} {:>9}",
            truncate(&r.label, label_w),
            truncate(&r.dbms, 24),
            r.build_flags.as_deref().unwrap_or("n/a"),
            fmt_binary(r.binary_bytes)
        );
    }
    if let Some(w) = &cmp.build_warning {
        let _ = writeln!(out, "\n!! {w}");
    }
}

/// The comparison as terminal text; `colour` adds ANSI colours.
pub fn comparison(cmp: &Comparison, colour: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Runs: {} (base: {})",
        cmp.labels.join(", "),
        cmp.labels.get(cmp.base).map_or("", String::as_str)
    );
    runs_text(&mut out, cmp);
    if let Some(m) = &cmp.micro {
        micro_text(&mut out, m, colour);
    } else {
        out.push_str("\nAbsolute throughput (inserted rows/s for l.i*, indexed rows/s for l.x, queries/s for q*)\n");
        table_text(&mut out, &cmp.absolute, false, colour, None);
        if !colour {
            out.push_str("(* SLA failed: the background inserts missed 95% of the target)\n");
        }
        out.push_str("\nRelative to the base (red <= 0.95, green >= 1.05)\n");
        table_text(&mut out, &cmp.relative, true, colour, None);
        if has_partial(&cmp.absolute) {
            out.push_str(
                "(! the step failed or was interrupted: its figure covers only the part that ran; or a check after it failed: the figure is as measured, the notes say why)\n",
            );
        }
    }
    if !cmp.background.columns.is_empty() {
        out.push_str("\nBackground insert rate, rows/s (red below 95% of target)\n");
        table_text(
            &mut out,
            &cmp.background,
            false,
            colour,
            Some(("target", &cmp.background_targets)),
        );
    }
    if !cmp.diagnoses.is_empty() {
        out.push_str(
            "\nDiagnosis: per-op figures that moved with each relative throughput outside the noise band\n(±5%, or the base's spread over repeats), as run / base\n",
        );
        for d in &cmp.diagnoses {
            let _ = writeln!(out, "  {}", d.line());
        }
    }
    for d in &cmp.details {
        step_detail_text(&mut out, cmp, d);
    }
    if !cmp.problems.is_empty() {
        out.push_str("\nNotes:\n");
        for p in &cmp.problems {
            let _ = writeln!(out, "- {p}");
        }
    }
    out
}

/// One step's latency tables and figures side by side.
fn step_detail_text(out: &mut String, cmp: &Comparison, d: &StepDetail) {
    let _ = writeln!(out, "\n== {} ({})", d.step, d.unit);
    for (kind, rows) in &d.latency {
        let _ = write!(out, "{kind} latency, % of ops per bucket\n{:<24}", "");
        for b in BUCKET_LABELS {
            let _ = write!(out, "{b:>6}");
        }
        let _ = writeln!(out, " {:>9} {:>9} {:>9}", "p50", "p99", "max");
        for r in rows {
            let _ = write!(out, "{:<24}", truncate(&r.label, 24));
            for s in r.bucket_shares {
                let _ = write!(out, "{:>6}", share(s));
            }
            let _ = writeln!(
                out,
                " {:>9} {:>9} {:>9}",
                fmt_us(r.p50_us),
                fmt_us(r.p99_us),
                fmt_us(r.max_us)
            );
        }
    }
    let _ = write!(out, "{:<10}", "metric");
    for l in &cmp.labels {
        let _ = write!(out, " {:>16}", truncate(l, 16));
    }
    out.push_str("  (relative to base)\n");
    for m in &d.metrics {
        let _ = write!(out, "{:<10}", m.name);
        for v in &m.values {
            let _ = write!(out, " {:>16}", v.map_or("n/a".to_string(), fmt_metric));
        }
        out.push_str("  ");
        for r in &m.relative {
            let _ = write!(out, " {}", r.map_or("-".to_string(), |r| format!("{r:.2}")));
        }
        out.push('\n');
    }
    if !d.profiles.is_empty() {
        out.push_str("server CPU profile, top functions by their own share of samples\n");
        for (label, p) in &d.profiles {
            let _ = writeln!(out, "  {}: {}", truncate(label, 24), profile_line(p, 5));
        }
    }
}

/// Whether any cell of the table covers only part of its step.
pub(crate) fn has_partial(t: &Table) -> bool {
    t.rows
        .iter()
        .flat_map(|r| &r.cells)
        .any(|c| super::partial_note(c).is_some())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

/// A metric value: grouped when large, 3 significant digits otherwise.
pub fn fmt_metric(v: f64) -> String {
    if v.abs() >= 1000.0 {
        group_f(v)
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1_234_567), "1,234,567");
    }

    #[test]
    fn microseconds_read_naturally() {
        assert_eq!(fmt_us(250), "250us");
        assert_eq!(fmt_us(1_500), "1.5ms");
        assert_eq!(fmt_us(2_500_000), "2.50s");
        assert_eq!(share(0.0), ".");
        assert_eq!(share(0.1234), "12.3");
    }
}
