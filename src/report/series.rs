//! Runs as a time series, for change detection over time: the CSV and test config that Apache
//! Otava reads (`--format otava`), and Nyrkiö's result JSON (`--format nyrkio`).
//!
//! One row (Otava) or one result (Nyrkiö) per run, in the order the runs started; per step
//! that completed, its throughput (higher is better) and the p99 latency of its main op in µs
//! (lower is better), and the DBMS's own counters it measured (`l.i1.walbpi`: WAL bytes per
//! inserted row, lower is better; docs/results.md); Otava gets the metrics every run has, as
//! it reads no empty cell; as attributes the label, DBMS, version, flavour/engine, the config name
//! when the run names one, and the ibench version. How to run Otava on it: docs/tracking.md.

use crate::stats::convert::{count_f64, round_to_u64};
use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::load::LoadedRun;
use crate::results::Status;
use crate::results::metrics::METRICS;

/// The name of the Otava test the config describes.
pub const OTAVA_TEST: &str = "ibench";

/// The CSV file name the Otava config points to.
pub const OTAVA_CSV: &str = "ibench.csv";

/// The Otava test config's file name.
pub const OTAVA_YAML: &str = "otava.yaml";

/// One figure of one run.
struct Figure {
    name: String,
    unit: &'static str,
    value: f64,
    higher_is_better: bool,
}

/// The figures of a run: per completed step, throughput, main-op p99 and the DBMS's own
/// counters it measured.
fn figures(run: &LoadedRun) -> Vec<Figure> {
    let mut out = Vec::new();
    for s in &run.record.steps {
        if s.status != Status::Completed {
            continue;
        }
        out.push(Figure {
            name: format!("{}.throughput", s.name),
            unit: s.throughput_unit.series_unit(),
            value: s.throughput,
            higher_is_better: true,
        });
        if let Some(op) = s.ops.get(s.main_op().name()) {
            out.push(Figure {
                name: format!("{}.p99_us", s.name),
                unit: "us",
                value: count_f64(op.latency_us.p99_us),
                higher_is_better: false,
            });
        }
        // The DBMS's own counters the step measured (a server anywhere has them).
        let measured = METRICS.iter().filter(|d| d.shown.series).filter_map(|d| {
            let v = (d.get)(s.metrics.as_ref()?).value()?;
            Some((d, v))
        });
        for (d, value) in measured {
            out.push(Figure {
                name: format!("{}.{}", s.name, d.name),
                unit: d.unit,
                value,
                higher_is_better: !d.lower_is_better,
            });
        }
    }
    out
}

/// The attributes of a run (name, value).
fn attributes(run: &LoadedRun) -> Vec<(&'static str, String)> {
    let t = run.record.target.as_ref();
    let engine = t
        .and_then(|t| t.engine)
        .map(|e| format!("{e:?}").to_lowercase())
        .unwrap_or_default();
    vec![
        ("label", run.label.clone()),
        ("dbms", t.map(|t| t.dbms.clone()).unwrap_or_default()),
        ("version", t.map(|t| t.version.clone()).unwrap_or_default()),
        ("engine", engine),
        ("profile", run.record.options.profile.clone()),
        ("ibench_version", run.record.ibench_version.clone()),
    ]
}

/// The runs in the order they started (RFC 3339 UTC times sort as text).
fn in_time_order(runs: &[LoadedRun]) -> Vec<&LoadedRun> {
    let mut v: Vec<&LoadedRun> = runs.iter().collect();
    v.sort_by(|a, b| a.record.started_at.cmp(&b.record.started_at));
    v
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Otava's input: the CSV (one row per run) and the YAML test config that reads it.
pub fn otava(runs: &[LoadedRun]) -> (String, String) {
    let runs = in_time_order(runs);
    // The metrics every run has (Otava reads no empty cell), in the first run's order.
    let mut common: Option<BTreeSet<String>> = None;
    for r in &runs {
        let here: BTreeSet<String> = figures(r).into_iter().map(|f| f.name).collect();
        common = Some(match common {
            Some(c) => c.intersection(&here).cloned().collect(),
            None => here,
        });
    }
    let common = common.unwrap_or_default();
    let names: Vec<(String, bool)> = runs
        .first()
        .map(|r| {
            figures(r)
                .into_iter()
                .filter(|f| common.contains(&f.name))
                .map(|f| (f.name, f.higher_is_better))
                .collect()
        })
        .unwrap_or_default();
    let attr_names: Vec<&str> = runs
        .first()
        .map(|r| attributes(r).into_iter().map(|(k, _)| k).collect())
        .unwrap_or_default();

    let mut csv = String::from("time");
    for a in &attr_names {
        let _ = write!(csv, ",{a}");
    }
    for (n, _) in &names {
        let _ = write!(csv, ",{n}");
    }
    csv.push('\n');
    for r in &runs {
        csv.push_str(&csv_field(&r.record.started_at));
        for (_, v) in attributes(r) {
            let _ = write!(csv, ",{}", csv_field(&v));
        }
        let figs = figures(r);
        for (n, _) in &names {
            if let Some(f) = figs.iter().find(|f| &f.name == n) {
                let _ = write!(csv, ",{}", f.value);
            }
        }
        csv.push('\n');
    }

    let mut yaml = format!(
        "# Apache Otava test config written by `ibench report --format otava`.\n\
         # Run from this directory: otava analyze --config-file {OTAVA_YAML} {OTAVA_TEST}\n\
         tests:\n  {OTAVA_TEST}:\n    type: csv\n    file: {OTAVA_CSV}\n    time_column: time\n    attributes: [{}]\n    metrics:\n",
        attr_names.join(", ")
    );
    for (n, higher) in &names {
        let _ = writeln!(
            yaml,
            "      \"{n}\":\n        column: \"{n}\"\n        direction: {}",
            if *higher { 1 } else { -1 }
        );
    }
    (csv, yaml)
}

/// Nyrkiö's result JSON: one result per run, in time order.
pub fn nyrkio(runs: &[LoadedRun]) -> serde_json::Value {
    let results: Vec<serde_json::Value> = in_time_order(runs)
        .into_iter()
        .map(|r| {
            let metrics: Vec<serde_json::Value> = figures(r)
                .into_iter()
                .map(|f| {
                    serde_json::json!({
                        "name": f.name,
                        "unit": f.unit,
                        "value": f.value,
                        "direction": if f.higher_is_better { "higher_is_better" } else { "lower_is_better" },
                    })
                })
                .collect();
            let attributes: serde_json::Map<String, serde_json::Value> = attributes(r)
                .into_iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::from(v)))
                .collect();
            serde_json::json!({
                "timestamp": unix_seconds(&r.record.started_at),
                "metrics": metrics,
                "attributes": attributes,
            })
        })
        .collect();
    serde_json::Value::Array(results)
}

/// Seconds since the epoch of an RFC 3339 UTC time (`2026-11-22T20:01:02.345Z`), 0 when it
/// cannot be read.
fn unix_seconds(rfc3339: &str) -> i64 {
    crate::results::rfc3339_seconds(rfc3339)
        .map_or(0, |s| i64::try_from(round_to_u64(s.floor())).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_become_unix_seconds() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), 0);
        assert_eq!(unix_seconds("2026-11-22T20:01:02.345Z"), 1_795_377_662);
        assert_eq!(unix_seconds("garbage"), 0);
    }

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("PostgreSQL 15.18"), "PostgreSQL 15.18");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
