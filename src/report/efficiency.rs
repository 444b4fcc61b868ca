//! The server efficiency table the terminal shows after a run: the per-op metrics of every
//! step read on the host, then the DBMS's own counters (which any server has, local or not)
//! with a key to their names, and the reasons for any `n/a` listed below them.

use std::fmt::Write as _;

use crate::results::metrics::{EMBEDDED_NA, METRICS, Metric, MetricDef, Source, StepMetrics};
use crate::results::{RunRecord, StepRecord};

/// Columns per DBMS table: wider tables are split, so a line stays under about 100 characters.
const DBMS_COLUMNS: usize = 9;

/// The metrics of every step as text tables, with the reasons for any `n/a` listed below
/// them. Empty when the run has no metrics.
pub fn metrics_table(run: &RunRecord) -> String {
    let steps: Vec<(&StepRecord, &StepMetrics)> = run
        .steps
        .iter()
        .filter_map(|s| s.metrics.as_ref().map(|m| (s, m)))
        .collect();
    if steps.is_empty() {
        return String::new();
    }
    // One footnote per reason, naming every figure it holds for: `[1] wpi, wkbpi: no rows
    // inserted in this step`.
    let mut reasons: Vec<(String, Vec<&str>)> = Vec::new();
    let mut out = String::from("\nserver efficiency per op (cpu in µs, sizes in GB, maxop in s)\n");
    let host: Vec<&MetricDef> = METRICS
        .iter()
        .filter(|d| d.shown.terminal && d.source == Source::Host)
        .collect();
    table(&mut out, &steps, &host, &mut reasons);
    key(&mut out, &host);
    let dbms = dbms_columns(run, &steps);
    if !dbms.is_empty() {
        out.push_str("\nthe DBMS's own counters (per op, per inserted row, or in the step)\n");
        for chunk in dbms.chunks(DBMS_COLUMNS) {
            table(&mut out, &steps, chunk, &mut reasons);
        }
        key(&mut out, &dbms);
    }
    if let Some(info) = &run.metrics {
        if info.server.na.as_deref() == Some(EMBEDDED_NA) {
            let _ = writeln!(
                out,
                "server: none: SQLite runs inside ibench, so its CPU is counted in ccpupq (the client's) and its memory in ibench's own"
            );
        } else {
            let _ = writeln!(out, "server: {}", info.server.describe());
        }
        let _ = writeln!(out, "storage: {}", info.storage.describe());
    }
    for (i, (reason, names)) in reasons.iter().enumerate() {
        let _ = writeln!(out, "[{}] {}: {reason}", i + 1, names.join(", "));
    }
    out
}

/// The key under a table: each column's name and what it is (with its unit), a few to a line.
fn key(out: &mut String, cols: &[&MetricDef]) {
    let entries: Vec<String> = cols
        .iter()
        .map(|d| format!("{}: {}", d.name, d.meaning))
        .collect();
    let text = format!("key: {}", entries.join("; "));
    for line in super::document::wrap(&text, 100, "  ", "    ") {
        let _ = writeln!(out, "{line}");
    }
}

/// The DBMS counters this run's server has: those of its DBMS and engine (every one measured
/// in some step when the run names no target).
fn dbms_columns(run: &RunRecord, steps: &[(&StepRecord, &StepMetrics)]) -> Vec<&'static MetricDef> {
    METRICS
        .iter()
        .filter(|d| d.shown.terminal && d.source != Source::Host)
        .filter(|d| match &run.target {
            Some(t) => d.source.applies(t.backend, t.engine),
            None => steps.iter().any(|(_, m)| (d.get)(m).value().is_some()),
        })
        .collect()
}

/// One table: a row per step, a column per figure; an n/a cell points to its reason.
fn table<'a>(
    out: &mut String,
    steps: &[(&StepRecord, &StepMetrics)],
    cols: &[&'a MetricDef],
    reasons: &mut Vec<(String, Vec<&'a str>)>,
) {
    let w = steps
        .iter()
        .map(|(s, _)| s.name.to_string().chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    let _ = write!(out, "{:<w$}", "step");
    for d in cols {
        let _ = write!(out, " {:>8}", d.name);
    }
    out.push('\n');
    for (s, m) in steps {
        let _ = write!(out, "{:<w$}", s.name.to_string());
        for d in cols {
            let (name, decimals) = (d.name, d.decimals);
            match &(d.get)(m) {
                Metric::Value(v) => {
                    let _ = write!(out, " {:>8}", format!("{v:.decimals$}"));
                }
                Metric::Na(r) => {
                    let idx = match reasons.iter().position(|(x, _)| *x == *r) {
                        Some(i) => i,
                        None => {
                            reasons.push((r.clone(), Vec::new()));
                            reasons.len() - 1
                        }
                    };
                    if !reasons[idx].1.contains(&name) {
                        reasons[idx].1.push(name);
                    }
                    let _ = write!(out, " {:>8}", format!("n/a[{}]", idx + 1));
                }
            }
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_has_a_key_naming_its_columns() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres");
        let run = crate::results::read_run(&dir).expect("the fixture reads");
        let out = metrics_table(&run);
        let keys: Vec<&str> = out.lines().filter(|l| l.starts_with("  key: ")).collect();
        assert_eq!(keys.len(), 2, "{out}");
        let joined: String = out.lines().map(str::trim).collect::<Vec<_>>().join(" ");
        for d in METRICS
            .iter()
            .filter(|d| d.shown.terminal && d.source == Source::Host)
        {
            assert!(
                joined.contains(&format!("{}: {}", d.name, d.meaning)),
                "{}: {out}",
                d.name
            );
        }
        assert!(
            out.lines()
                .filter(|l| l.starts_with("  "))
                .all(|l| l.chars().count() <= 100),
            "{out}"
        );
    }
}
