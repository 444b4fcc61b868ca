//! Terminal text: the line `ibench run` prints per step as it goes, a run's latency table
//! (`ibench run --details`), and the short forms of figures and lines that every report
//! format uses (`report::text_syntax` is the text format's writer).

use crate::stats::convert::{count_f64, round_to_u64};
use std::fmt::Write;

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

/// Width of the step-name column: the longest name, at least 7.
pub fn step_column_width(steps: &[StepRecord]) -> usize {
    steps
        .iter()
        .map(|s| s.name.to_string().chars().count())
        .max()
        .unwrap_or(0)
        .max(7)
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

/// `s` cut to `n` characters (`…` ends a cut one).
pub fn truncate(s: &str, n: usize) -> String {
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
    fn microseconds_read_naturally() {
        assert_eq!(fmt_us(250), "250us");
        assert_eq!(fmt_us(1_500), "1.5ms");
        assert_eq!(fmt_us(2_500_000), "2.50s");
        assert_eq!(share(0.0), ".");
        assert_eq!(share(0.1234), "12.3");
    }
}
