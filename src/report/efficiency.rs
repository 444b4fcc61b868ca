//! The server efficiency table the terminal shows after a run: the per-op metrics of every
//! step, with the reasons for any `n/a` listed below it.

use std::fmt::Write as _;

use crate::results::metrics::{EMBEDDED_NA, METRICS, Metric, MetricDef, StepMetrics};
use crate::results::{RunRecord, StepRecord};

/// The metrics of every step as a text table, with the reasons for any `n/a` listed below it.
/// Empty when the run has no metrics.
pub fn metrics_table(run: &RunRecord) -> String {
    let steps: Vec<(&StepRecord, &StepMetrics)> = run
        .steps
        .iter()
        .filter_map(|s| s.metrics.as_ref().map(|m| (s, m)))
        .collect();
    if steps.is_empty() {
        return String::new();
    }
    let cols: Vec<&MetricDef> = METRICS.iter().filter(|d| d.shown.terminal).collect();
    // One footnote per reason, naming every figure it holds for: `[1] wpi, wkbpi: no rows
    // inserted in this step`.
    let mut reasons: Vec<(String, Vec<&str>)> = Vec::new();
    let mut out = String::from("\nserver efficiency per op (cpu in µs, sizes in GB, maxop in s)\n");
    let w = steps
        .iter()
        .map(|(s, _)| s.name.to_string().chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    let _ = write!(out, "{:<w$}", "step");
    for d in &cols {
        let _ = write!(out, " {:>8}", d.name);
    }
    out.push('\n');
    for (s, m) in &steps {
        let _ = write!(out, "{:<w$}", s.name.to_string());
        for d in &cols {
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
