//! `ibench report` on fixture runs recorded once with real servers (tests/fixtures/): the
//! table values and colours match expectations computed by hand from the fixtures'
//! throughputs, including an SLA failure and a missing step; bad input gives one line per
//! problem and what can be rendered is rendered.
//!
//! The fixtures: `sqlite-base` (SQLite; qp1000 failed its SLA at 908 of 1000 rows/s),
//! `sqlite-slow-writes` (SQLite with 1-row background inserts; qp1000 failed at 656 rows/s),
//! `postgres` (a private Postgres 15; no qp1000 step).

mod common;

use std::path::PathBuf;
use std::process::Command;

use ibench::report::compare::{Colour, Comparison, compare};
use ibench::report::load::load_runs;

use Colour::{Green as G, Grey as Y, None as N, Red as R};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn three() -> Vec<PathBuf> {
    vec![
        fixture("sqlite-base"),
        fixture("sqlite-slow-writes"),
        fixture("postgres"),
    ]
}

fn comparison(dirs: &[PathBuf], base: Option<&str>) -> Comparison {
    let (runs, problems) = load_runs(dirs);
    compare(&runs, base, problems)
}

fn colours(t: &ibench::report::compare::Table, row: usize) -> Vec<Colour> {
    t.rows[row].cells.iter().map(|c| c.colour).collect()
}

fn values(t: &ibench::report::compare::Table, row: usize) -> Vec<Option<f64>> {
    t.rows[row].cells.iter().map(|c| c.value).collect()
}

fn close(a: &[Option<f64>], b: &[Option<f64>], tol: f64) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Some(x), Some(y)) => (x - y).abs() <= tol,
            (None, None) => true,
            _ => false,
        })
}

#[test]
fn absolute_table_values_and_colours_match_the_hand_computed_ones() {
    let cmp = comparison(&three(), None);
    assert_eq!(
        cmp.steps,
        [
            "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr1000", "qp1000"
        ]
    );
    let t = &cmp.absolute;
    assert!(close(
        &values(t, 0),
        &[
            Some(349516.5),
            Some(321917.6),
            Some(13281.8),
            Some(5985.4),
            Some(34163.4),
            Some(37698.9),
            Some(26406.9),
            Some(31028.5)
        ],
        0.06
    ));
    assert!(close(
        &values(t, 2),
        &[
            Some(5507.8),
            Some(110339.6),
            Some(7328.0),
            Some(1549.1),
            Some(4459.9),
            Some(4768.2),
            Some(5630.2),
            None
        ],
        0.06
    ));
    // l.i0: range 5507.8..374668.3, quarter 92290: both SQLite runs in the top quarter,
    // Postgres in the bottom one. qr100: green from 26737.5, so the slow-writes run
    // (24162.2) is plain. qp1000: both SQLite runs failed the SLA (grey), Postgres lacks it.
    assert_eq!(colours(t, 0), [G, G, G, G, G, G, G, Y]);
    assert_eq!(colours(t, 1), [G, G, N, G, N, N, N, Y]);
    assert_eq!(colours(t, 2), [R, R, R, R, R, R, R, N]);
    assert_eq!(t.rows[2].cells[7].note.as_deref(), Some("missing"));
    assert_eq!(t.rows[0].cells[7].note.as_deref(), Some("SLA failed"));
}

#[test]
fn relative_table_divides_by_the_base_and_colours_by_the_thresholds() {
    let cmp = comparison(&three(), None);
    let t = &cmp.relative;
    assert!(
        t.rows[0]
            .cells
            .iter()
            .all(|c| c.value == Some(1.0) && c.colour == Y)
    );
    // 374668.3 / 349516.5 = 1.072; 281473.8 / 321917.6 = 0.874; 6555.4 / 5985.4 = 1.095 …
    assert!(close(
        &values(t, 1),
        &[
            Some(1.072),
            Some(0.874),
            Some(0.735),
            Some(1.095),
            Some(0.707),
            Some(0.643),
            Some(0.748),
            Some(0.850)
        ],
        0.001
    ));
    assert_eq!(colours(t, 1), [G, R, R, G, R, R, R, R]);
    assert_eq!(colours(t, 2)[..7], [R; 7]);
    assert_eq!(t.rows[2].cells[7].value, None);

    // With the slow-writes run as base, the base's own row is 1.00 and the others flip.
    let cmp = comparison(&three(), Some("SQLite 1-row writes"));
    assert_eq!(cmp.base, 1);
    assert!(close(&values(&cmp.relative, 0)[..1], &[Some(0.933)], 0.001));
    assert_eq!(cmp.relative.rows[0].cells[0].colour, R);
}

#[test]
fn background_table_marks_rates_below_95_percent_and_ends_with_the_targets() {
    let cmp = comparison(&three(), None);
    let t = &cmp.background;
    assert_eq!(t.columns, ["qr100", "qp100", "qr1000", "qp1000"]);
    assert_eq!(
        cmp.background_targets,
        [Some(100.0), Some(100.0), Some(1000.0), Some(1000.0)]
    );
    // 908.4 and 655.6 are below 950; 977.9 is not.
    assert!(close(
        &values(t, 1),
        &[Some(100.0), Some(100.0), Some(977.9), Some(655.6)],
        0.06
    ));
    assert_eq!(colours(t, 0), [N, N, N, R]);
    assert_eq!(colours(t, 1), [N, N, N, R]);
    assert_eq!(colours(t, 2), [N, N, N, N]);
}

#[test]
fn per_step_details_cover_every_step_and_run() {
    let cmp = comparison(&three(), None);
    assert_eq!(cmp.details.len(), 8);
    let qr = cmp.details.iter().find(|d| d.step == "qr1000").unwrap();
    let kinds: Vec<&str> = qr.latency.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["range_query", "insert"]);
    assert_eq!(qr.latency[0].1.len(), 3);
    for row in &qr.latency[0].1 {
        let total: f64 = row.bucket_shares.iter().sum();
        assert!((total - 1.0).abs() < 1e-6, "{total}");
    }
    let thr = qr.metrics.iter().find(|m| m.name == "throughput").unwrap();
    assert!(close(
        &thr.relative,
        &[Some(1.0), Some(0.748), Some(0.213)],
        0.001
    ));
    let qp1000 = cmp.details.iter().find(|d| d.step == "qp1000").unwrap();
    assert_eq!(qp1000.latency[0].1.len(), 2, "Postgres has no qp1000 row");
}

#[test]
fn markdown_json_and_text_render_the_same_tables() {
    for format in ["markdown", "json", "text"] {
        let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
            .arg("report")
            .args(three())
            .args(["--format", format])
            .output()
            .unwrap();
        assert!(out.status.success(), "{format}");
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(
            s.contains("374,668") || s.contains("374668.3"),
            "{format}: {s}"
        );
        assert!(!s.contains("\x1b["), "{format}: colours when piped");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("PostgreSQL 15 has no qp1000"),
            "{format}: {err}"
        );
        if format == "markdown" {
            assert!(s.contains("| SQLite base | 349,517 ▲ |"), "{s}");
            assert!(s.contains("~~31,028~~ (SLA)"), "{s}");
            assert!(s.contains("| target | 100 | 100 | 1,000 | 1,000 |"), "{s}");
        }
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&s).unwrap();
            assert_eq!(v["absolute"]["rows"][2]["cells"][0]["colour"], "red");
        }
    }
}

#[test]
fn bad_input_is_one_line_per_problem_and_the_rest_renders() {
    let tmp = common::fresh_dir("report-bad");
    std::fs::create_dir_all(&tmp).unwrap();
    // A directory that is not a run.
    let not_a_run = tmp.join("empty");
    std::fs::create_dir_all(&not_a_run).unwrap();
    // A newer schema version.
    let newer = tmp.join("newer");
    std::fs::create_dir_all(&newer).unwrap();
    let text = std::fs::read_to_string(fixture("postgres").join("run.json")).unwrap();
    std::fs::write(
        newer.join("run.json"),
        text.replacen("\"schema_version\": 1", "\"schema_version\": 2", 1),
    )
    .unwrap();
    // A truncated run.json.
    let truncated = tmp.join("truncated");
    std::fs::create_dir_all(&truncated).unwrap();
    std::fs::write(truncated.join("run.json"), &text[..text.len() / 2]).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .arg("report")
        .arg(fixture("sqlite-base"))
        .args([&not_a_run, &newer, &truncated])
        .arg(fixture("postgres"))
        .args(["--base", "nobody"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines.iter().any(|l| l.contains("empty: not a run")),
        "{err}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("schema version 2") && l.contains("upgrade ibench")),
        "{err}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("truncated: run.json is unreadable")),
        "{err}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("no run is labelled 'nobody'") && l.contains("--base")),
        "{err}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("PostgreSQL 15 has no qp1000")),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Runs: SQLite base, PostgreSQL 15 (base: SQLite base)"),
        "{stdout}"
    );

    // Nothing readable at all: an error naming what to give.
    let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["report"])
        .arg(&not_a_run)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: no run could be read"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
