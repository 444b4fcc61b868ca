//! Change detection over time: `ibench report --format otava` on a series of 10 runs with a
//! step change in the middle, analysed by the real Apache Otava (installed from PyPI by
//! `scripts/test.sh`), and `--format nyrkio` on the same series.
//!
//! The series is derived from the real Postgres fixture run (tests/fixtures/postgres): each
//! copy gets its own start time (one day apart) and label, and every step's throughput is
//! scaled by a deterministic noise of ±2%; from the sixth run on, also by 0.7 (a 30%
//! regression). Nothing else of the run is changed.

mod common;
use common::ibench;

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres")
}

/// Noise factors of the ten runs (±2%).
const NOISE: [f64; 10] = [
    1.0, 1.012, 0.987, 1.02, 0.992, 1.008, 0.981, 1.015, 0.996, 1.004,
];

/// The ten derived runs, in fresh dirs (written in a shuffled order: time decides).
fn series() -> Vec<PathBuf> {
    let text = std::fs::read_to_string(fixture().join("run.json")).unwrap();
    let original: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut dirs = Vec::new();
    for i in [3usize, 7, 0, 9, 5, 1, 8, 2, 6, 4] {
        let dir = common::fresh_dir(&format!("series-{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixture().join("timeline.jsonl"), dir.join("timeline.jsonl")).unwrap();
        let mut run = original.clone();
        run["label"] = format!("PostgreSQL 15 build {i}").into();
        run["started_at"] = format!("2026-11-{:02}T10:00:00.000Z", 10 + i).into();
        let factor = NOISE[i] * if i >= 5 { 0.7 } else { 1.0 };
        for step in run["steps"].as_array_mut().unwrap() {
            let t = step["throughput"].as_f64().unwrap();
            step["throughput"] = (t * factor).into();
        }
        std::fs::write(dir.join("run.json"), serde_json::to_vec(&run).unwrap()).unwrap();
        dirs.push(dir);
    }
    dirs
}

/// The otava binary `scripts/test.sh` installed.
fn otava() -> PathBuf {
    let path = std::env::var_os("IBENCH_OTAVA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/ibench/otava/bin/otava"));
    assert!(
        path.exists(),
        "{} is missing: run ./scripts/test.sh (it installs Apache Otava) or set IBENCH_OTAVA",
        path.display()
    );
    path
}

fn report(dirs: &[PathBuf], format: &str, out: Option<&Path>) -> std::process::Output {
    let mut args: Vec<String> = vec!["report".into()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.extend(["--format".into(), format.into()]);
    if let Some(o) = out {
        args.extend(["--output".into(), o.display().to_string()]);
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    ibench(&refs)
}

#[test]
fn otava_finds_the_step_change_at_the_right_run() {
    let dirs = series();
    let out_dir = common::fresh_dir("series-otava");
    let out = report(&dirs, "otava", Some(&out_dir));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(out_dir.join("ibench.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 11, "a header and one row per run");
    // Rows in time order, whatever the order of the directories.
    assert!(lines[1].contains("build 0") && lines[10].contains("build 9"));
    let yaml = std::fs::read_to_string(out_dir.join("otava.yaml")).unwrap();
    assert!(yaml.contains("\"l.i0.throughput\":") && yaml.contains("direction: -1"));

    let analysis = Command::new(otava())
        .current_dir(&out_dir)
        .args([
            "analyze",
            "--config-file",
            "otava.yaml",
            "ibench",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&analysis.stdout);
    assert!(
        analysis.status.success(),
        "otava failed: {}",
        String::from_utf8_lossy(&analysis.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("otava's output is not JSON ({e}): {stdout}");
    });
    // Every change point Otava reports on a throughput metric.
    let mut changes = Vec::new();
    for point in json["ibench"].as_array().unwrap() {
        let label = point["attributes"]["label"]
            .as_str()
            .unwrap_or("")
            .to_string();
        for c in point["changes"].as_array().unwrap() {
            let metric = c["metric"].as_str().unwrap().to_string();
            let pct: f64 = c["forward_change_percent"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .unwrap();
            changes.push((label.clone(), metric, pct));
        }
    }
    let li0: Vec<_> = changes
        .iter()
        .filter(|(_, m, _)| m == "l.i0.throughput")
        .collect();
    assert_eq!(li0.len(), 1, "one change point on l.i0: {changes:?}");
    assert_eq!(li0[0].0, "PostgreSQL 15 build 5", "{changes:?}");
    assert!((-35.0..=-25.0).contains(&li0[0].2), "{changes:?}");
    // The latencies did not change: no change point on them.
    assert!(
        changes.iter().all(|(_, m, _)| !m.ends_with("p99_us")),
        "{changes:?}"
    );
}

#[test]
fn nyrkio_gets_one_result_per_run_in_time_order() {
    let dirs = series();
    let out = report(&dirs, "nyrkio", None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = json.as_array().unwrap();
    assert_eq!(results.len(), 10);
    let times: Vec<i64> = results
        .iter()
        .map(|r| r["timestamp"].as_i64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[1] - w[0] == 86_400), "{times:?}");
    let first = &results[0];
    assert_eq!(first["attributes"]["label"], "PostgreSQL 15 build 0");
    let metrics = first["metrics"].as_array().unwrap();
    let li0 = metrics
        .iter()
        .find(|m| m["name"] == "l.i0.throughput")
        .unwrap();
    assert_eq!(li0["unit"], "rows/s");
    assert_eq!(li0["direction"], "higher_is_better");
    let p99 = metrics.iter().find(|m| m["name"] == "l.i0.p99_us").unwrap();
    assert_eq!(p99["direction"], "lower_is_better");
}

#[test]
fn otava_without_an_output_dir_names_the_flag() {
    let out = report(&series()[..2], "otava", None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--output DIR"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}
