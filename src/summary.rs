//! The summary `ibench run` prints on standard output as it ends: one row per step with the
//! figures that matter (its time, throughput, the main op's p99, the CPU per op, the
//! background writes folded into their step, and what went wrong), then one line each for
//! the checks, the replica's lag and `ibench check`'s floor when they have something to say.
//! `--details` adds the full tables ([`crate::report::text::latency_table`],
//! [`crate::report::efficiency::metrics_table`]).

use std::fmt::Write as _;

use crate::report::lag_sla;
use crate::report::text::{check_failure_note, fmt_us, step_column_width};
use crate::results::{RunRecord, Status, StepRecord};
use crate::stats::convert::round_to_u64;
use crate::stats::thousands::group;

/// The run's summary: a title line, a table of one row per step, and the closing lines
/// (checks, replica lag, `ibench check`'s floor); see the module's documentation. With
/// `colour`, what failed is red.
pub fn summary(run: &RunRecord, lag_sla_ms: f64, colour: bool) -> String {
    let w = step_column_width(&run.steps);
    let mut out = format!("{}\n\n", title(run));
    let _ = writeln!(
        out,
        "{:<w$} {:>7} {:>11} {:<10} {:>8} {:>9}  {:<29} notes",
        "step", "seconds", "throughput", "", "p99", "cpu µs/op", "background writes"
    );
    for s in &run.steps {
        let row = step_row(s, w);
        let row = row.trim_end();
        let _ = writeln!(
            out,
            "{}",
            crate::console::red(row, colour && step_failed(s))
        );
    }
    out.push('\n');
    for line in [
        checks_line(run),
        lag_line(run, lag_sla_ms),
        crate::check::verdicts::too_short_line(&run.steps),
    ]
    .into_iter()
    .flatten()
    {
        let failed = line.contains("FAILED");
        let _ = writeln!(out, "{}", crate::console::red(&line, colour && failed));
    }
    out
}

/// `SQLite 3.50.2, 1 client, profile small: completed`.
fn title(run: &RunRecord) -> String {
    let target = run.target.as_ref().map_or_else(
        || run.options.url.clone(),
        |t| format!("{} {}", t.dbms, t.version),
    );
    let clients = run.options.clients;
    format!(
        "{target}, {clients} client{}, {}: {}",
        if clients == 1 { "" } else { "s" },
        run.options.sizes_source(),
        format!("{:?}", run.status).to_lowercase()
    )
}

/// Whether the step's row says a failure: the step, a check after it, or its background
/// writes' SLA.
fn step_failed(s: &StepRecord) -> bool {
    s.status != Status::Completed
        || !s.check_failures.is_empty()
        || s.sla.as_ref().is_some_and(|sla| !sla.passed)
        || s.settle.as_ref().is_some_and(|x| x.unsettled.is_some())
}

/// One step's row: name, seconds, throughput and unit, the main op's p99 latency, the CPU
/// per op, the background writes (paced inserts and deletes of a query step) and the notes.
fn step_row(s: &StepRecord, w: usize) -> String {
    let main = s.main_op();
    let p99 = s
        .ops
        .iter()
        .find(|(k, _)| k.as_str() == main.name())
        .map_or("n/a".to_string(), |(_, op)| fmt_us(op.latency_us.p99_us));
    format!(
        "{:<w$} {:>7.1} {:>11} {:<10} {:>8} {:>9}  {:<29} {}",
        s.name.to_string(),
        s.seconds,
        group(round_to_u64(s.throughput.round())),
        s.throughput_unit.short(),
        p99,
        cpu_per_op(s),
        background_writes(s),
        notes(s)
    )
}

/// The CPU the DBMS spent per op, µs: the server's, or ibench's own when the DBMS runs in it
/// (SQLite) or the server's CPU was not read.
fn cpu_per_op(s: &StepRecord) -> String {
    let server = s.metrics.as_ref().and_then(|m| m.cpupq.value());
    let client = s
        .metrics
        .as_ref()
        .and_then(|m| m.ccpupq.value())
        .or(s.client_cpu_us_per_op);
    server
        .or(client)
        .map_or("n/a".to_string(), |v| format!("{v:.1}"))
}

/// A query step's background writes: `100/100 rows/s ok, p99 65ms` (achieved and target
/// insert rate, the SLA's verdict, the worst p99 of the paced inserts and deletes); empty
/// for a step without them.
fn background_writes(s: &StepRecord) -> String {
    let Some(sla) = &s.sla else {
        return String::new();
    };
    let p99 = s
        .ops
        .values()
        .filter(|op| op.target_rows_per_sec.is_some())
        .map(|op| op.latency_us.p99_us)
        .max();
    let mut text = format!(
        "{:.0}/{:.0} rows/s {}",
        sla.achieved_rows_per_sec,
        sla.target_rows_per_sec,
        if sla.passed { "ok" } else { "SLOW" }
    );
    if let Some(p) = p99 {
        let _ = write!(text, ", p99 {}", fmt_us(p));
    }
    text
}

/// What the step's row must say beyond its figures: a failed check, the settle phase, a step
/// that did not complete.
fn notes(s: &StepRecord) -> String {
    let mut notes: Vec<String> = s.check_failures.iter().map(check_failure_note).collect();
    if let Some(settle) = &s.settle {
        notes.push(if settle.unsettled.is_some() {
            format!("UNSETTLED after {:.0} s", settle.seconds)
        } else {
            format!("settled {:.0} s", settle.seconds)
        });
    }
    match s.status {
        Status::Completed => {}
        Status::Failed => notes.push(format!(
            "FAILED: {}",
            s.error.as_deref().unwrap_or("unknown error")
        )),
        Status::Interrupted => notes.push("INTERRUPTED".into()),
        Status::Running => notes.push("RUNNING".into()),
    }
    notes.join("; ")
}

/// `integrity: checked after 9 steps, all ok`; `None` when no step was checked.
fn checks_line(run: &RunRecord) -> Option<String> {
    let checked: Vec<&StepRecord> = run.steps.iter().filter(|s| s.integrity.is_some()).collect();
    if checked.is_empty() {
        return None;
    }
    let failed: Vec<String> = checked
        .iter()
        .filter(|s| s.integrity.as_ref().is_some_and(|i| !i.ok))
        .map(|s| s.name.to_string())
        .collect();
    let n = checked.len();
    let steps = if n == 1 { "step" } else { "steps" };
    Some(if failed.is_empty() {
        format!("integrity: checked after {n} {steps}, all ok")
    } else {
        format!(
            "integrity: checked after {n} {steps}, FAILED after {}",
            failed.join(", ")
        )
    })
}

/// With a replica: `replica lag p99 (SLA 250 ms): l.i0 12 ms, l.x 840 ms FAILED, ...`.
fn lag_line(run: &RunRecord, lag_sla_ms: f64) -> Option<String> {
    run.replica.as_ref()?;
    let cells: Vec<String> = run
        .steps
        .iter()
        .map(|s| {
            // A step too short for a heartbeat reading has no verdict: `n/a`.
            let Some(v) = lag_sla::verdict(&run.label, s, &[], lag_sla_ms) else {
                return format!("{} n/a", s.name);
            };
            let figure = match (v.lost_from_second, v.lag_p99_ms) {
                (Some(at), _) => format!("lost from {at:.1} s"),
                (None, Some(p)) => format!("{} ms", lag_sla::format_ms(p)),
                (None, None) => "n/a".to_string(),
            };
            let mark = if v.passed { "" } else { " FAILED" };
            format!("{} {figure}{mark}", s.name)
        })
        .collect();
    if cells.is_empty() {
        return None;
    }
    Some(format!(
        "replica lag p99 (SLA {} ms): {}",
        lag_sla::bound_text(lag_sla_ms),
        cells.join(", ")
    ))
}
