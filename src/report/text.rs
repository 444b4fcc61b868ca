//! Terminal text: the summary of one run as it ends, and the text syntax of `ibench report`.

use crate::stats::convert::{count_f64, round_to_u64};
use std::fmt::Write;

use super::document::{DocCell, DocTable, Syntax, joined, wrap};
use super::model::{Colour, Span};
use crate::results::{CheckFailure, RunRecord, Status, StepRecord};
use crate::stats::thousands::group;
pub use crate::stats::thousands::group_f;
use crate::stats::{BUCKET_LABELS, LatencySummary};

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
        s.throughput_unit.short()
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
    line.push_str(&host_note(s));
    line
}

/// `  host CPU 2.73/2.75 ns/iter`: the host probe's CPU figure before and after the step, so
/// a host that slowed down shows while the run goes; empty without the probe.
fn host_note(s: &StepRecord) -> String {
    use crate::results::probe::ProbeFigure;
    let Some(h) = &s.host_probe else {
        return String::new();
    };
    let cpu = |p: &Option<crate::results::probe::HostProbe>| {
        p.as_ref()
            .and_then(|p| ProbeFigure::Cpu.of(p))
            .map_or("n/a".into(), |v| format!("{v:.2}"))
    };
    format!("  host CPU {}/{} ns/iter", cpu(&h.before), cpu(&h.after))
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
    share_text(x, 1)
}

/// Below this a latency bucket's share is a leftover of floating-point sums (the last
/// bucket is 1 - the others: 2.2e-16 when it holds nothing), not an operation: a real share
/// is at least 1 / the count.
pub const SHARE_LEFTOVER: f64 = 1e-12;

/// A latency bucket's share in % with `decimals`, or `.` when it holds nothing (a leftover
/// below [`SHARE_LEFTOVER`] included).
pub fn share_text(x: f64, decimals: usize) -> String {
    if x < SHARE_LEFTOVER {
        ".".into()
    } else {
        format!("{:.*}", decimals, x * 100.0)
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
/// and the 10 bucket shares. With a replica, each step's notes say whether it held the
/// replica-lag SLA's bound `lag_sla_ms` (`report::lag_sla`).
pub fn summary(run: &RunRecord, lag_sla_ms: f64) -> String {
    let mut out = String::new();
    let w = step_column_width(&run.steps);
    let target = run
        .target
        .as_ref()
        .map(|t| format!("{} {} ({})", t.dbms, t.version, t.url))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "ibench {} — {} — {} client(s), {}, run {:?}",
        run.ibench_version,
        target,
        run.options.clients,
        run.options.sizes_source(),
        run.status
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
        if let Some(v) = super::lag_sla::verdict(&run.label, s, &[], lag_sla_ms) {
            let _ = write!(notes, "{} ", super::lag_sla::summary_note(&v, lag_sla_ms));
        }
        notes.push_str(status_note(s).trim());
        let _ = writeln!(
            out,
            "{:<w$} {:>10.1} {:>14} {:<10} {:>9} {:>9} {:>10}  {}",
            s.name.to_string(),
            s.seconds,
            group(round_to_u64(s.throughput.round())),
            s.throughput_unit.short(),
            s.rate_p50.map_or("n/a".into(), |r| group(round_to_u64(r))),
            s.rate_p1low
                .map_or("n/a".into(), |r| group(round_to_u64(r))),
            cpu,
            notes.trim_end()
        );
    }
    out.push('\n');
    out.push_str(&latency_table(run));
    out
}

/// The latency table of a run: per step and op kind the count, percentiles and the 10 bucket
/// shares, a paced op's service time on a row of its own (`ibench run --details`).
pub fn latency_table(run: &RunRecord) -> String {
    let mut out = String::new();
    let w = step_column_width(&run.steps);
    let _ = write!(
        out,
        "latency: from the intended start (paced background ops: from their due time; '(service)': from the send)\n{:<w$} {:<18} {:>8} {:>8} {:>8} {:>8} {:>8} ",
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
        if settle.unsettled.is_some() {
            let _ = write!(notes, "UNSETTLED after {:.0} s ", settle.seconds);
        } else {
            let _ = write!(notes, "settled {:.0} s ", settle.seconds);
        }
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

/// A binary's size for people: `8.9 MB`.
pub fn fmt_binary(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "n/a".to_string(),
        |b| format!("{:.1} MB", count_f64(b) / 1e6),
    )
}

/// Widest line of a text or Markdown report, in characters.
pub const MAX_LINE_CHARS: usize = 160;

/// Widest row label of a text table (a microbenchmark's name); longer ones are cut.
const MAX_ROW_LABEL_CHARS: usize = 40;

/// Terminal text: tables in aligned columns (cut by columns to fit [`MAX_LINE_CHARS`]),
/// prose wrapped, charts left out; `colour` paints cells with ANSI colours.
pub struct TextSyntax {
    /// Paint cells with ANSI colours.
    pub colour: bool,
}

impl TextSyntax {
    /// A cell as shown: its text and marks (`*` an SLA failure when not painted grey, `!`
    /// a partial figure).
    fn shown(&self, c: &DocCell) -> String {
        let mut v = c.text.clone();
        if c.sla_failed && !self.colour {
            v.push('*');
        }
        if c.partial.is_some() {
            v.push('!');
        }
        v
    }

    fn one_table(&self, out: &mut String, t: &DocTable, label_w: usize) {
        let widths: Vec<usize> = (0..t.columns.len())
            .map(|j| self.column_width(t, j).min(MAX_LINE_CHARS - label_w - 2))
            .collect();
        let left = t.text_columns;
        let _ = write!(out, "{:<label_w$}", truncate(&t.corner, label_w));
        for (head, w) in t.columns.iter().zip(&widths) {
            let head = truncate(head, *w);
            let _ = if left {
                write!(out, "  {head:<w$}")
            } else {
                write!(out, "  {head:>w$}")
            };
        }
        trim_line(out);
        for row in t.rows.iter().chain(t.footer.iter()) {
            let _ = write!(out, "{:<label_w$}", truncate(&row.label, label_w));
            for (c, w) in row.cells.iter().zip(&widths) {
                let v = truncate(&self.shown(c), *w);
                let padded = if left {
                    format!("  {v:<w$}")
                } else {
                    format!("  {v:>w$}")
                };
                out.push_str(&paint(&padded, c.colour, self.colour));
            }
            trim_line(out);
        }
    }

    fn column_width(&self, t: &DocTable, j: usize) -> usize {
        t.column_cells(j)
            .map(|c| self.shown(c).chars().count())
            .chain(t.columns.get(j).map(|h| h.chars().count()))
            .max()
            .unwrap_or(1)
    }
}

/// `spans` (whose texts joined are `text`) wrapped as a list item, each piece in its ANSI
/// colour. The wrapped lines keep the text's characters in order and drop only spaces, so
/// each character of a line is found in the text, and takes its piece's colour.
fn painted_lines(spans: &[Span], text: &str) -> Vec<String> {
    let colours: Vec<(char, Colour)> = spans
        .iter()
        .flat_map(|s| s.text.chars().map(move |c| (c, s.colour)))
        .collect();
    let mut at = 0;
    let mut lines = Vec::new();
    for line in wrap(text, MAX_LINE_CHARS, "- ", "  ") {
        let mut out: String = line.chars().take(2).collect();
        let mut run = (Colour::None, String::new());
        for c in line.chars().skip(2) {
            while colours.get(at).is_some_and(|&(t, _)| t != c) {
                at += 1;
            }
            let colour = colours.get(at).map_or(Colour::None, |&(_, k)| k);
            at += 1;
            if colour != run.0 {
                if !run.1.is_empty() {
                    out.push_str(&paint(&run.1, run.0, true));
                }
                run = (colour, String::new());
            }
            run.1.push(c);
        }
        out.push_str(&paint(&run.1, run.0, true));
        lines.push(out);
    }
    lines
}

/// End a line without trailing spaces.
fn trim_line(out: &mut String) {
    while out.ends_with(' ') {
        out.pop();
    }
    out.push('\n');
}

fn wrapped(out: &mut String, text: &str, first: &str, rest: &str) {
    for l in wrap(text, MAX_LINE_CHARS, first, rest) {
        out.push_str(&l);
        out.push('\n');
    }
}

impl Syntax for TextSyntax {
    fn heading(&self, out: &mut String, level: u8, text: &str, _anchor: Option<&str>) {
        let text = truncate(text, MAX_LINE_CHARS - 3);
        match level {
            1 => {
                let _ = writeln!(out, "{text}\n{}", "=".repeat(text.chars().count()));
            }
            2 => {
                let _ = writeln!(out, "\n== {text}");
            }
            _ => {
                let _ = writeln!(out, "-- {text}");
            }
        }
    }

    fn paragraph(&self, out: &mut String, text: &str) {
        wrapped(out, text, "", "");
    }

    fn warning(&self, out: &mut String, text: &str) {
        wrapped(out, text, "!! ", "   ");
    }

    fn list(&self, out: &mut String, items: &[String]) {
        for i in items {
            wrapped(out, i, "- ", "  ");
        }
    }

    /// With colour, each piece in its ANSI colour (wrapped as the plain text is); without,
    /// the plain list.
    fn painted_list(&self, out: &mut String, items: &[Vec<Span>]) {
        for i in items {
            let text = joined(i);
            if !self.colour {
                wrapped(out, &text, "- ", "  ");
                continue;
            }
            for line in painted_lines(i, &text) {
                out.push_str(&line);
                out.push('\n');
            }
        }
    }

    fn table(&self, out: &mut String, t: &DocTable) {
        let label_w = t
            .labels()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(6)
            .clamp(3, MAX_ROW_LABEL_CHARS);
        let parts = t.split_to_width(MAX_LINE_CHARS, label_w, |j| self.column_width(t, j) + 2);
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            self.one_table(out, part, label_w);
        }
    }
}

/// `s` cut to `n` characters (`…` ends a cut one).
pub(super) fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n.saturating_sub(1)).collect::<String>() + "…"
    }
}

/// `s` on one line: its lines trimmed and joined by spaces, blank ones dropped.
pub fn one_line(s: &str) -> String {
    s.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_bucket_is_a_dot_even_with_a_leftover_of_the_sum() {
        assert_eq!(share_text(0.0, 1), ".");
        assert_eq!(share_text(2.220446049250313e-16, 2), ".");
        assert_eq!(share_text(1.0 - 0.1 - 0.2 - 0.7, 1), ".");
        assert_eq!(share_text(0.5, 2), "50.00");
        assert_eq!(share_text(1e-7, 1), "0.0");
    }

    #[test]
    fn a_painted_item_wraps_as_the_plain_one_and_keeps_its_colours() {
        let spans = vec![
            Span::plain("r2 against r1: relative throughput "),
            Span {
                text: "writes 0.50x-0.70x".into(),
                colour: Colour::Red,
            },
            Span::plain("; "),
            Span {
                text: "point queries ~1.00x (no change) ".repeat(8),
                colour: Colour::Grey,
            },
            Span::plain("."),
        ];
        let text = joined(&spans);
        let plain = wrap(&text, MAX_LINE_CHARS, "- ", "  ");
        let painted = painted_lines(&spans, &text);
        assert!(plain.len() > 1);
        let strip = |l: &str| {
            let mut out = String::new();
            let mut chars = l.chars();
            while let Some(c) = chars.next() {
                if c == '\x1b' {
                    chars.by_ref().take_while(|&c| c != 'm').for_each(drop);
                } else {
                    out.push(c);
                }
            }
            out
        };
        let stripped: Vec<String> = painted.iter().map(|l| strip(l)).collect();
        assert_eq!(stripped, plain);
        assert!(
            painted[0].contains("\x1b[31mwrites 0.50x-0.70x\x1b[0m"),
            "{}",
            painted[0]
        );
        assert!(painted[1].contains("\x1b[90m"), "{}", painted[1]);
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
