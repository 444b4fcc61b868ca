//! `ibench report` on fixture runs recorded once with real servers (tests/fixtures/): the
//! table values and colours match expectations computed by hand from the fixtures'
//! throughputs, including an SLA failure and a missing step; bad input gives one line per
//! problem and what can be rendered is rendered.
//!
//! The fixtures (small real runs: 20k rows, 3 s query steps, rates 100 and 1000):
//! `sqlite-base` (SQLite), `postgres` (a private Postgres 15 with its default config; no qp1000
//! step), `postgres-commit-delay` (the same server with `commit_delay = 100000` and
//! `commit_siblings = 0`: every commit waits 100 ms, so qr1000 and qp1000 fail their SLA at
//! 327.6 and 377.2 of 1000 rows/s).

mod common;

use ibench::stats::convert::count_f64;
use std::path::PathBuf;
use std::process::Command;

use ibench::report::compare::compare;
use ibench::report::load::load_runs;
use ibench::report::model::{CellNote, Colour, Comparison};

use Colour::{Green as G, Grey as Y, None as N, Red as R};
use ibench::workload::steps::StepName;

/// A step by its name.
fn step(name: &str) -> StepName {
    name.parse().unwrap()
}

/// Steps as their names.
fn names(steps: &[StepName]) -> Vec<String> {
    steps.iter().map(ToString::to_string).collect()
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn three() -> Vec<PathBuf> {
    vec![
        fixture("sqlite-base"),
        fixture("postgres"),
        fixture("postgres-commit-delay"),
    ]
}

fn comparison(dirs: &[PathBuf], base: Option<&str>) -> Comparison {
    let (runs, problems) = load_runs(dirs);
    compare(&runs, base, problems)
}

fn colours(t: &ibench::report::model::Table, row: usize) -> Vec<Colour> {
    t.rows[row].cells.iter().map(|c| c.colour).collect()
}

fn values(t: &ibench::report::model::Table, row: usize) -> Vec<Option<f64>> {
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
        names(&cmp.steps),
        [
            "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr1000", "qp1000"
        ]
    );
    let t = &cmp.absolute;
    assert!(close(
        &values(t, 0),
        &[
            Some(326233.1),
            Some(269697.3),
            Some(13497.8),
            Some(8229.4),
            Some(30909.9),
            Some(34904.6),
            Some(30863.0),
            Some(31718.8)
        ],
        0.06
    ));
    assert!(close(
        &values(t, 2),
        &[
            Some(879.8),
            Some(56071.6),
            Some(470.4),
            Some(46.4),
            Some(2894.5),
            Some(2689.5),
            Some(3653.3),
            Some(2196.5)
        ],
        0.06
    ));
    // l.i0: range 879.8..326233.1, quarter 81338.3: SQLite green (>= 244894.8), both Postgres
    // runs red (<= 82218.1). l.x: quarter 67005.4 over 56071.6..324093.3: SQLite (269697.3)
    // and Postgres green (>= 257087.9), commit_delay red. qr1000: commit_delay failed its SLA,
    // so it is grey and out of the range 3968.8..30863.0. qp1000: one value outside the SLA
    // failures, nothing to compare: no colour.
    //
    // But the load and write steps lasted under a second: too short for the decision rule;
    // and the query steps are one run a side without a host probe to show the host steady
    // (docs/method.md, "One run a side"): no relative figure is decided, so the absolute ones
    // of the two Postgres runs are grey and out of the range too; the base's alone is not
    // coloured.
    assert_eq!(colours(t, 0), [N, N, N, N, N, N, N, N]);
    assert_eq!(colours(t, 1), [Y, Y, Y, Y, Y, Y, Y, N]);
    assert_eq!(colours(t, 2), [Y, Y, Y, Y, Y, Y, Y, Y]);
    assert_eq!(t.rows[1].cells[7].note, Some(CellNote::Missing));
    assert_eq!(t.rows[2].cells[6].note, Some(CellNote::SlaFailed));
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
    // 72209.0 / 326233.1 = 0.2213; 324093.3 / 269697.3 = 1.2017; 7566.7 / 8229.4 = 0.9195 ...
    assert!(close(
        &values(t, 1),
        &[
            Some(0.2213),
            Some(1.2017),
            Some(1.2187),
            Some(0.9195),
            Some(0.1205),
            Some(0.1004),
            Some(0.1286),
            None
        ],
        0.0001
    ));
    // The load and write steps lasted under a second (under the rule's floor of 3 s and 3
    // per-second samples): not decided, grey, marked ?; the 3 s query steps are one run a
    // side with no host probe to show the host steady: not decided either, however far apart.
    assert_eq!(colours(t, 1), [Y, Y, Y, Y, Y, Y, Y, N]);
    assert!(matches!(
        &t.rows[1].cells[0].note,
        Some(CellNote::Undecided(why)) if why.starts_with("too short")
    ));
    assert!(matches!(
        &t.rows[1].cells[4].note,
        Some(CellNote::Undecided(why)) if why.starts_with("one run a side")
    ));
    assert!(close(
        &values(t, 2),
        &[
            Some(0.0027),
            Some(0.2079),
            Some(0.0349),
            Some(0.0056),
            Some(0.0936),
            Some(0.0771),
            Some(0.1184),
            Some(0.0692)
        ],
        0.0001
    ));
    // qr1000 and qp1000 failed their background-insert SLA: not decided, grey like their
    // absolute figures.
    assert_eq!(colours(t, 2), [Y, Y, Y, Y, Y, Y, Y, Y]);
    assert_eq!(t.rows[2].cells[7].note, Some(CellNote::SlaFailed));

    // With Postgres as the base: 326233.1 / 72209.0 = 4.5179.
    let cmp = comparison(&three(), Some("PostgreSQL 15"));
    assert_eq!(cmp.base, 1);
    assert!(close(
        &values(&cmp.relative, 0)[..1],
        &[Some(4.5179)],
        0.0001
    ));
    assert_eq!(cmp.relative.rows[0].cells[4].colour, Y);
    assert_eq!(cmp.relative.rows[0].cells[7].note, Some(CellNote::NoBase));
}

#[test]
fn background_table_marks_rates_below_95_percent_and_ends_with_the_targets() {
    let cmp = comparison(&three(), None);
    let t = &cmp.background;
    assert_eq!(names(&t.columns), ["qr100", "qp100", "qr1000", "qp1000"]);
    assert_eq!(
        cmp.background_targets,
        [Some(100.0), Some(100.0), Some(1000.0), Some(1000.0)]
    );
    assert!(close(
        &values(t, 2),
        &[Some(100.0), Some(100.0), Some(327.6), Some(377.2)],
        0.06
    ));
    assert!(close(&values(t, 1)[2..3], &[Some(999.9)], 0.06));
    assert_eq!(colours(t, 0), [N, N, N, N]);
    assert_eq!(colours(t, 1), [N, N, N, N]);
    assert_eq!(colours(t, 2), [N, N, R, R]);
    assert_eq!(t.rows[1].cells[3].note, Some(CellNote::Missing));
}

#[test]
fn per_step_details_cover_every_step_run_and_server_metric() {
    let cmp = comparison(&three(), None);
    assert_eq!(cmp.details.len(), 8);
    let qr = cmp
        .details
        .iter()
        .find(|d| d.step == step("qr1000"))
        .unwrap();
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
        &[Some(1.0), Some(0.1286), Some(0.1184)],
        0.0001
    ));
    let qp1000 = cmp
        .details
        .iter()
        .find(|d| d.step == step("qp1000"))
        .unwrap();
    assert_eq!(qp1000.latency[0].1.len(), 2, "Postgres has no qp1000 row");

    // Server metrics: n/a for SQLite (no server process), so no ratio to it either; the
    // recorded value for Postgres (qr100 cpupq 76.96 µs per query).
    let qr100 = cmp
        .details
        .iter()
        .find(|d| d.step == step("qr100"))
        .unwrap();
    let cpupq = qr100.metrics.iter().find(|m| m.name == "cpupq").unwrap();
    assert_eq!(cpupq.values[0], None);
    assert!(close(&cpupq.values[1..2], &[Some(76.957)], 0.001));
    assert_eq!(cpupq.relative, [None, None, None]);
    for name in ["hcpupq", "rpq", "wkbpi", "csps", "dbgb1", "dbgb2", "rss"] {
        assert!(qr100.metrics.iter().any(|m| m.name == name), "{name}");
    }
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
            s.contains("326,233") || s.contains("326233.1"),
            "{format}: {s}"
        );
        assert!(!s.contains("\x1b["), "{format}: colours when piped");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("PostgreSQL 15 has no qp1000"),
            "{format}: {err}"
        );
        if format == "markdown" {
            // Runs are named by short keys (the labels do not tell them apart in a few
            // words, so their directories' names); the run table maps each key to its label.
            assert!(
                s.contains("| sqlite-base | SQLite base | SQLite 3.50.2 |"),
                "{s}"
            );
            assert!(s.contains("| sqlite-base | 326,233 |"), "{s}");
            assert!(s.contains("| postgres | 0.22? |"), "{s}");
            assert!(s.contains("~~3,653~~ (SLA)"), "{s}");
            // The targets share their column's precision (the rates just under 100/s).
            assert!(
                s.contains("| **target** | 100.0 | 100.0 | 1,000 | 1,000 |"),
                "{s}"
            );
        }
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&s).unwrap();
            assert_eq!(v["absolute"]["rows"][2]["cells"][0]["colour"], "grey");
            assert_eq!(v["absolute"]["rows"][2]["cells"][4]["colour"], "grey");
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
        text.replacen("\"schema_version\": 1", "\"schema_version\": 3", 1),
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
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for words in [
        &["empty: not a run"][..],
        &["schema version 3", "upgrade ibench"],
        &["truncated: run.json is unreadable"],
        &["PostgreSQL 15 has no qp1000"],
    ] {
        assert!(
            err.lines().any(|l| words.iter().all(|w| l.contains(w))),
            "no line with {words:?}: {err}"
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("2 runs; the base is SQLite base."),
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

/// A copy of a fixture run in a fresh dir, with its run.json edited by `edit`.
fn edited_fixture(name: &str, tag: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    // A directory name of its own that is too long to be a run's key, whatever the test's
    // pid: the runs are keyed r1, r2, ... as the tests below expect.
    let dir = common::fresh_dir(tag).join(format!("{tag}-an-edited-copy-of-a-fixture"));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(fixture(name)).unwrap().flatten() {
        if entry.path().is_file() {
            std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
    }
    let path = dir.join("run.json");
    let mut run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut run);
    std::fs::write(&path, serde_json::to_string(&run).unwrap()).unwrap();
    dir
}

fn render(dirs: &[PathBuf], format: ibench::report::Format, colour: bool) -> String {
    ibench::report::render_dirs(dirs, None, format, colour)
        .unwrap()
        .text
}

/// A 70,000-character label used to panic the text report (a format width over 65,535); a
/// label's escape sequences reached the terminal and its HTML went raw into Markdown.
#[test]
fn hostile_labels_render_safely_in_every_format() {
    let long = edited_fixture("sqlite-base", "label-long", |r| {
        r["label"] = "L".repeat(70_000).into();
    });
    let nasty = edited_fixture("postgres", "label-nasty", |r| {
        r["label"] = "\u{1b}[2J\u{1b}[31mred <script>alert(1)</script> | *x*".into();
    });
    let dirs = [long, nasty];
    use ibench::report::Format;
    for colour in [false, true] {
        let text = render(&dirs, Format::Text, colour);
        assert!(
            !text.contains("\u{1b}[2J"),
            "a label's escape reached the terminal"
        );
        assert!(
            text.contains("\\u{1b}[2J"),
            "the escape is shown, not dropped"
        );
        assert!(
            text.lines().all(|l| l.chars().count() < 1000),
            "a 70k-char line"
        );
    }
    let md = render(&dirs, Format::Markdown, false);
    let raw: Vec<&str> = md.lines().filter(|l| l.contains("<script>")).collect();
    assert!(raw.is_empty(), "raw HTML in Markdown: {raw:?}");
    assert!(md.contains("&lt;script&gt;"));
    assert!(
        md.contains("\\| \\*x\\*"),
        "a label broke the table or started emphasis"
    );
    let html = render(&dirs, Format::Html, false);
    assert!(!html.contains("<script>alert"));
    assert!(!html.contains(&"L".repeat(100)), "the label is cut");
    let json = render(&dirs, Format::Json, false);
    assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
}

/// A failed or interrupted step's throughput covers only the part that ran: it was shown
/// unmarked in text and Markdown.
#[test]
fn a_failed_steps_partial_throughput_is_marked() {
    let failed = edited_fixture("postgres", "failed-step", |r| {
        r["steps"][2]["status"] = "failed".into();
        r["steps"][2]["error"] = "insert into pi1: disk full".into();
        r["status"] = "failed".into();
    });
    let dirs = [fixture("sqlite-base"), failed];
    use ibench::report::Format;
    let text = render(&dirs, Format::Text, false);
    // The Postgres row of the absolute-throughput table (the run table above it has one too).
    let row = text
        .lines()
        .skip_while(|l| !l.contains("Absolute throughput"))
        .find(|l| l.starts_with("PostgreSQL"))
        .expect("the Postgres row");
    assert!(row.contains('!'), "{row}");
    // The mark is explained under the table, and the notes say why.
    let squashed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        squashed.contains("marked ! or ⚠ covers only the part of its step that ran"),
        "{text}"
    );
    assert!(squashed.contains("disk full"), "{text}");
    let md = render(&dirs, Format::Markdown, false);
    assert!(md.contains("⚠ (failed)"), "{md}");
}

/// run.json of binary garbage was reported as "no run.json in it".
#[test]
fn a_run_json_of_garbage_is_named_as_unreadable() {
    let dir = common::fresh_dir("garbage-run");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("run.json"), [0xff, 0xfe, 0x00, 0x9c, 0x80, 0x01]).unwrap();
    let (runs, problems) = load_runs(std::slice::from_ref(&dir));
    assert!(runs.is_empty());
    assert_eq!(problems.len(), 1);
    assert!(!problems[0].contains("no run.json"), "{}", problems[0]);
    assert!(problems[0].contains("run.json is unreadable") && problems[0].contains("UTF-8"));
}

/// The diagnosis of the real commit_delay regression names the per-op figures that moved,
/// with the ratios the runs' own raw counters give (KB written by the data's block device
/// per inserted row, read here from `totals`, not from the computed metric).
#[test]
fn the_diagnosis_names_what_moved_with_the_ratio_of_the_raw_counters() {
    let cmp = comparison(
        &[fixture("postgres"), fixture("postgres-commit-delay")],
        None,
    );
    let li0 = cmp
        .diagnoses
        .iter()
        .find(|d| d.step == step("l.i0"))
        .expect("l.i0 lost 99% of its throughput: it is diagnosed");
    assert!(li0.relative < 0.05, "{li0:?}");
    let (runs, _) = load_runs(&[fixture("postgres"), fixture("postgres-commit-delay")]);
    let kb_per_row = |i: usize| {
        let s = &runs[i].record.steps[0];
        let m = s.metrics.as_ref().unwrap();
        let bytes = m.totals.device_write_bytes.value().unwrap();
        bytes / 1024.0 / count_f64(m.inserted_rows)
    };
    let expected = kb_per_row(1) / kb_per_row(0);
    let wkbpi = li0
        .movers
        .iter()
        .find(|m| m.figure == "wkbpi")
        .expect("KB written per row moved");
    assert!(
        (wkbpi.ratio - expected).abs() < 1e-6 * expected,
        "{wkbpi:?} vs {expected}"
    );
    assert_eq!(
        li0.movers[0].figure, "wkbpi",
        "the largest mover comes first: {li0:?}"
    );
    // A commit delay is a wait: per-op work explains only part of a 99% drop, and it says so.
    assert!(
        li0.line().contains("not work measured per op"),
        "{}",
        li0.line()
    );
    // The same diagnosis in every format.
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = ibench::report::render(&cmp, &runs, ibench::report::Format::Text, false).unwrap();
    let key = &cmp.keys[1];
    assert!(text.contains("Diagnosis") && squash(&text).contains(&squash(&li0.line_for(key))));
    let md = ibench::report::render(&cmp, &runs, ibench::report::Format::Markdown, false).unwrap();
    assert!(md.contains("## Diagnosis"));
    let json = serde_json::to_value(&cmp).unwrap();
    assert!(json["diagnoses"].as_array().is_some_and(|d| !d.is_empty()));
}

/// The perf record of one step: group 1 at `ghz` with `instructions_per_op`, group 7 with a
/// context switch per op, the other groups not supported.
fn perf_json(ghz: f64, instructions_per_op: f64) -> serde_json::Value {
    let ops = 1000.0;
    let cpu_ms = 500.0;
    let cycles = ghz * cpu_ms * 1e6;
    let instructions = instructions_per_op * ops;
    let v = |x: f64| serde_json::json!({ "value": x });
    let na = serde_json::json!({ "na": "perf: <not supported> (the machine exposes no such counter, as most VMs)" });
    serde_json::json!({
        "counters": {}, "per_op": {
            "cycles": v(cycles / ops), "instructions": v(instructions_per_op),
            "context-switches": v(1.0)
        },
        "file": "perf/l.i1.csv", "error": null,
        "groups": [
            {
                "group": 1, "events": ["cpu-clock", "cycles", "instructions", "branches"],
                "counts": { "cpu-clock": v(cpu_ms), "cycles": v(cycles),
                            "instructions": v(instructions), "branches": na },
                "running_pct": { "cycles": 100.0 }, "intervals": [[0.0, 10.0]],
                "seconds": 10.0, "ops": ops,
                "per_op": { "cpu-clock": v(cpu_ms / ops), "cycles": v(cycles / ops),
                            "instructions": v(instructions_per_op), "branches": na },
                "ipc": v(instructions / cycles), "ghz": v(ghz), "error": null
            },
            {
                "group": 7, "events": ["context-switches"],
                "counts": { "context-switches": v(ops) }, "running_pct": {},
                "intervals": [[10.0, 20.0]], "seconds": 10.0, "ops": ops,
                "per_op": { "context-switches": v(1.0) },
                "ipc": na, "ghz": na, "error": null
            }
        ]
    })
}

/// `--perf` in a report: the counters table per step, absolute and relative, the clock
/// checked first (a run 25% faster-clocked than the base gets a warning above the table),
/// events n/a in every run named once with the reason, and the counter ratios in the
/// diagnosis.
#[test]
fn counters_per_operation_are_compared_after_the_clock_check() {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let build = |cflags: &str, bytes: u64| {
        serde_json::json!({
            "version_string": "PostgreSQL 15.18", "configure": "'--with-lz4'", "cc": "gcc",
            "cflags": cflags, "version_comment": null, "compile_machine": null,
            "compile_os": null, "compile_options": [], "binary_path": "/x/postgres",
            "binary_bytes": bytes, "binary_sha256": "00", "na": []
        })
    };
    let base = edited_fixture("postgres", "perf-base", |r| {
        r["steps"][2]["metrics"]["perf"] = perf_json(2.0, 1000.0);
        r["build"] = build("-g -O2", 8_900_000);
    });
    let other = edited_fixture("postgres-commit-delay", "perf-other", |r| {
        r["steps"][2]["metrics"]["perf"] = perf_json(2.5, 1500.0);
        r["build"] = build("-g -Os", 6_100_000);
    });
    let dirs = [base, other];
    use ibench::report::Format;
    let text = render(&dirs, Format::Text, false);
    let li1 = text
        .split("== l.i1")
        .nth(1)
        .and_then(|s| s.split("\n== ").next())
        .unwrap();
    let at = |needle: &str| {
        li1.find(needle)
            .unwrap_or_else(|| panic!("no {needle} in:\n{li1}"))
    };
    assert!(at("Clock check:") < at("Counters per operation (perf)") + 200);
    assert!(
        li1.contains("2.50 GHz against the base's 2.00 GHz"),
        "{li1}"
    );
    // The builds sit beside the counters: more instructions and another binary read together.
    assert!(at("Builds:") > at("Counters per operation (perf)"));
    assert!(
        squash(li1).contains("Builds: r1 -O2, lz4, 8.9 MB; r2 -Os, lz4, 6.1 MB."),
        "{li1}"
    );
    // The warning above the tables names the runs by their keys, as the tables do.
    assert!(
        squash(&text).contains("Build flags differ: -O2, lz4 (r1); -Os, lz4 (r2)."),
        "{text}"
    );
    let row = |name: &str| {
        li1.lines()
            .filter(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    // Absolute, then relative.
    let instructions = row("instructions");
    assert_eq!(instructions[0][1..], ["1,000", "1,500"], "{li1}");
    // One run a side: a counter ibench check does not judge is not decided (`?`).
    assert_eq!(instructions[1][1..], ["1.50?"], "{li1}");
    // One precision per figure over the runs: 2.0 and 2.5 need 2 decimals for 3 digits.
    assert_eq!(row("GHz")[0][1..], ["2.00", "2.50"], "{li1}");
    assert_eq!(row("context-switches")[1][1..], ["1.00?"], "{li1}");
    // Asked for, counted in no run: named once, with perf's reason.
    assert!(
        squash(li1).contains("n/a in every run:")
            && squash(li1).contains("; branches: perf: <not supported>"),
        "{li1}"
    );
    // The diagnosis ranks the counter with the other per-op figures.
    let cmp = comparison(&dirs, None);
    let d = cmp
        .diagnoses
        .iter()
        .find(|d| d.step == step("l.i1"))
        .unwrap();
    let m = d
        .movers
        .iter()
        .find(|m| m.figure == "instructions")
        .unwrap();
    assert!((m.ratio - 1.5).abs() < 1e-9, "{m:?}");
    // HTML: the warning and the table are there too; the step without perf has none.
    let html = render(&dirs, Format::Html, false);
    assert_eq!(
        html.matches("Counters per operation (perf)</h3>").count(),
        1
    );
    assert!(html.contains("<p class=\"warn\"><b>Clock check:"));
}

/// A comparison of a run over TLS with a plain one shows each run's TLS in the run table and
/// warns above the tables, naming the runs by their keys; runs that agree say nothing.
#[test]
fn a_comparison_that_mixes_tls_and_plain_runs_warns() {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let tls = edited_fixture("postgres", "tls-on", |r| {
        r["target"]["tls"] =
            serde_json::json!({"version": "TLSv1.3", "cipher": "TLS13_AES_256_GCM_SHA384"});
    });
    let plain = edited_fixture("postgres-commit-delay", "tls-off", |_| {});
    use ibench::report::Format;
    let text = render(&[tls.clone(), plain.clone()], Format::Text, false);
    assert!(
        squash(&text).contains("TLS differs: r1 connected over TLS, r2 without."),
        "{text}"
    );
    assert!(text.contains("TLSv1.3 TLS13_AES_256_GCM_SHA384"), "{text}");
    let json = render(&[tls.clone(), plain], Format::Json, false);
    assert!(json.contains("\"tls_warning\""), "{json}");
    let both_plain = render(
        &[
            edited_fixture("postgres", "tls-off-a", |_| {}),
            edited_fixture("postgres-commit-delay", "tls-off-b", |_| {}),
        ],
        Format::Json,
        false,
    );
    assert!(
        !both_plain.contains("\"tls"),
        "plain runs keep the old JSON: {both_plain}"
    );
}

/// A settle phase that ran out of its budget is not a failure: the query steps after it are
/// noted as started from an unsettled server, unmarked as partial, and the notes say what
/// was left.
#[test]
fn query_steps_after_an_unsettled_settle_are_noted() {
    let unsettled = edited_fixture("postgres", "unsettled", |r| {
        let settle = &mut r["steps"][3]["settle"];
        settle["planned_seconds"] = 2.0.into();
        settle["actions"][0]["unsettled"] =
            "not finished: statement_timeout cancelled it when the budget ran out".into();
        settle["unsettled"] = "VACUUM (ANALYZE) pi1: not finished: statement_timeout cancelled \
             it when the budget ran out"
            .into();
    });
    let dirs = [fixture("sqlite-base"), unsettled];
    let cmp = comparison(&dirs, None);
    let notes: Vec<Option<&CellNote>> = cmp.absolute.rows[1]
        .cells
        .iter()
        .map(|c| c.note.as_ref())
        .collect();
    let step = |name: &str| cmp.steps.iter().position(|s| *s == step(name)).unwrap();
    assert_eq!(notes[step("l.i2")], None);
    for q in ["qr100", "qp100", "qr1000"] {
        assert_eq!(notes[step(q)], Some(&CellNote::UnsettledStart), "{q}");
    }
    let line = cmp
        .problems
        .iter()
        .find(|p| p.contains("settle phase ran out"))
        .expect("a note on the settle phase");
    assert!(
        line.contains("l.i2: the settle phase ran out of its 2 s budget with work left (VACUUM (ANALYZE) pi1: not finished"),
        "{line}"
    );
    assert!(
        line.contains("qr100, qp100, qr1000 started from an unsettled server"),
        "{line}"
    );
    use ibench::report::Format;
    let text = render(&dirs, Format::Text, false);
    let row = text
        .lines()
        .skip_while(|l| !l.contains("Absolute throughput"))
        .find(|l| l.starts_with("PostgreSQL"))
        .expect("the Postgres row");
    assert!(
        !row.contains('!'),
        "an unsettled start is not a partial figure: {row}"
    );
    let squashed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        squashed.contains("started from an unsettled server"),
        "{text}"
    );
}

/// A run.json written before `unsettled` existed loads, and a settle record without it
/// writes no `unsettled` key.
#[test]
fn a_settle_record_without_unsettled_loads_and_writes_as_before() {
    let (runs, problems) = load_runs(&[fixture("postgres")]);
    assert!(problems.is_empty(), "{problems:?}");
    let settle = runs[0].record.steps[3]
        .settle
        .clone()
        .expect("l.i2 settled");
    assert_eq!(settle.unsettled, None);
    let json = serde_json::to_string(&settle).unwrap();
    assert!(!json.contains("unsettled"), "{json}");
}

/// A host probe record (`run.json`'s `steps[].host_probe`) with the given CPU figure.
fn host_probe_json(cpu_ns: f64) -> serde_json::Value {
    let probe = serde_json::json!({
        "at": "2026-11-25T12:00:00.000Z",
        "cpu_ns_per_iteration": cpu_ns,
        "memory_ns_per_access": 15.0,
        "loopback_us_per_round_trip": 9.0,
        "fsync_us": 80.0,
        "cpu_mhz": 2596.0,
        "seconds": 0.2
    });
    serde_json::json!({"before": probe, "after": probe, "steal_share": 0.0, "iowait_share": 0.001})
}

/// The postgres fixture with a host probe of `cpu_ns` on every step, labelled `label`.
fn probed_fixture(label: &str, cpu_ns: f64) -> PathBuf {
    edited_fixture("postgres", &format!("host-{label}"), |run| {
        run["label"] = serde_json::json!(label);
        for step in run["steps"].as_array_mut().unwrap() {
            step["host_probe"] = host_probe_json(cpu_ns);
        }
    })
}

/// One run recorded on a host whose CPU loop ran 1.6x slower than the base's: the report
/// warns naming that run and the factor, greys its relative figures with ~ instead of painting
/// them red, and its diagnosis puts the host before the per-op figures. The same run
/// recorded on the base's host (a third copy) is not flagged. The relative throughputs are
/// made different (0.5) so that a DBMS regression would otherwise be painted.
#[test]
fn a_run_whose_host_probe_is_slower_than_the_bases_is_warned_about_and_not_painted() {
    let base = probed_fixture("base", 2.7);
    let slow = edited_fixture("postgres", "host-slow", |run| {
        run["label"] = serde_json::json!("slow host");
        for step in run["steps"].as_array_mut().unwrap() {
            step["host_probe"] = host_probe_json(2.7 * 1.6);
            let t = step["throughput"].as_f64().unwrap();
            step["throughput"] = serde_json::json!(t * 0.5);
        }
    });
    let same = probed_fixture("same host", 2.75);
    let cmp = comparison(&[base.clone(), slow.clone(), same.clone()], None);
    let w: Vec<&ibench::report::host::HostWarning> = cmp.host.warnings.iter().collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].run, "slow host");
    assert!(
        w[0].text.contains("slower than the base's"),
        "{}",
        w[0].text
    );
    assert!(w[0].text.contains("CPU ns/iter ×1.60"), "{}", w[0].text);
    // Every step of the slow run is host-affected and grey; none of the other two.
    for (i, c) in cmp.relative.rows[1].cells.iter().enumerate() {
        assert!((c.value.unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(c.colour, Y, "step {}", cmp.relative.columns[i]);
        assert!(ibench::report::model::host_affected(c), "{c:?}");
    }
    assert!(
        cmp.host.flags.iter().all(|f| f.run == "slow host"),
        "{:?}",
        cmp.host.flags
    );
    assert_eq!(cmp.host.flags.len(), cmp.relative.columns.len());
    // The diagnosis names the host first.
    let d = cmp.diagnoses.iter().find(|d| d.run == "slow host").unwrap();
    assert!(
        d.line()
            .contains("[the host first: host probe CPU ns/iter ×1.60"),
        "{}",
        d.line()
    );
    // Every format says so: the warning and the marked cells.
    let text = render(&[base, slow, same], ibench::report::Format::Text, false);
    assert!(
        text.contains("its host was slower than the base's"),
        "{text}"
    );
    assert!(text.contains("0.50~"), "{text}");
    assert!(text.contains("The host first"), "{text}");
}

/// Triples qr100's client CPU per op in an edited run.json.
fn triple_qr100_client_cpu(run: &mut serde_json::Value) {
    let qr = run["steps"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["name"] == "qr100")
        .unwrap();
    let c = qr["client_cpu_us_per_op"].as_f64().unwrap();
    qr["client_cpu_us_per_op"] = serde_json::json!(c * 3.0);
}

/// Runs recorded before the probe existed are still checked with what they hold: a server
/// run whose client CPU per query is 3x the base's (the client does the same work per query
/// for every server) is host-affected in that step.
#[test]
fn a_client_cpu_per_op_that_tripled_flags_the_step_without_a_probe() {
    let base = fixture("postgres");
    let other = edited_fixture("postgres", "host-client-cpu", |run| {
        run["label"] = serde_json::json!("client slower");
        triple_qr100_client_cpu(run);
    });
    let cmp = comparison(&[base, other], None);
    assert_eq!(cmp.host.flags.len(), 1, "{:?}", cmp.host.flags);
    let f = &cmp.host.flags[0];
    assert_eq!((f.step, f.run.as_str()), (step("qr100"), "client slower"));
    assert!(
        f.reasons[0].starts_with("client CPU/op ×3.00"),
        "{:?}",
        f.reasons
    );
    assert!(cmp.host.warnings.is_empty());
    assert!(!cmp.host.probed());
}

/// A base whose qr100 ran at 800 queries/s for 4 s and then at 3,600/s (a level shift of the
/// per-second rate within one step, as issue 31's PostgreSQL 10 showed) is host-affected in
/// that step, without any probe; so is the other run's same step ("the base's step"), whose
/// relative figure is then greyed rather than painted. A two-second stall in the other run's
/// qr100 would not be a jump: its medians stay put (`report::host` unit tests).
#[test]
fn a_level_shift_of_the_bases_per_second_rate_flags_the_step_in_every_run() {
    let base = edited_fixture("postgres", "host-jump", |run| {
        run["label"] = serde_json::json!("jumpy base");
    });
    let timeline = base.join("timeline.jsonl");
    let text = std::fs::read_to_string(&timeline).unwrap();
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !l.contains("\"step\":\"qr100\""))
        .map(String::from)
        .collect();
    for second in 1..=9u32 {
        let ops = if second <= 4 { 800 } else { 3600 };
        lines.push(format!(
            "{{\"step\":\"qr100\",\"second\":{second},\"ops\":{{\"range_query\":{{\"ops\":{ops},\"rows\":{},\"max_latency_us\":900}}}}}}",
            ops * 10
        ));
    }
    std::fs::write(&timeline, lines.join("\n") + "\n").unwrap();
    let other = fixture("postgres");
    let cmp = comparison(&[base, other], None);
    let flagged: Vec<(String, &str)> = cmp
        .host
        .flags
        .iter()
        .map(|f| (f.step.to_string(), f.run.as_str()))
        .collect();
    assert_eq!(
        flagged,
        [
            ("qr100".to_string(), "jumpy base"),
            ("qr100".to_string(), "PostgreSQL 15")
        ],
        "{:?}",
        cmp.host.flags
    );
    assert!(
        cmp.host.flags[0].reasons[0].starts_with("its per-second rate moved ×4.5"),
        "{:?}",
        cmp.host.flags[0].reasons
    );
    assert!(
        cmp.host.flags[1].reasons[0].starts_with("the base's step: its per-second rate"),
        "{:?}",
        cmp.host.flags[1].reasons
    );
    let col = cmp
        .relative
        .columns
        .iter()
        .position(|c| *c == step("qr100"))
        .unwrap();
    let cell = &cmp.relative.rows[1].cells[col];
    assert_eq!(cell.colour, Y, "{cell:?}");
    assert!(ibench::report::model::host_affected(cell), "{cell:?}");
}

/// 20 runs, each with 30 settings of its own (a config per run): What differs comes first,
/// a table of the fields that differ with a column per run, within 160 characters in text and
/// Markdown; the settings are capped with "and N more" there, and every one is in the JSON.
#[test]
fn twenty_runs_with_many_settings_of_their_own_fit_and_the_json_keeps_every_one() {
    const SETTINGS: usize = 30;
    let dirs: Vec<PathBuf> = (0..20)
        .map(|i| {
            let dir = edited_fixture("postgres", &format!("conf{i}"), |run| {
                run["label"] = serde_json::json!(format!("PostgreSQL 15 config{i:02}"));
            });
            let path = dir.join("server-settings.json");
            let mut s: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for j in 0..SETTINGS {
                s[format!("custom.setting_{j:02}")] = serde_json::json!({
                    "setting": format!("{}", i * 100 + j),
                    "unit": null,
                    "source": "configuration file"
                });
            }
            std::fs::write(&path, serde_json::to_string(&s).unwrap()).unwrap();
            dir
        })
        .collect();
    let cmp = comparison(&dirs, None);
    assert_eq!(cmp.differences.len(), 19);
    for d in &cmp.differences {
        assert_eq!(d.setup.differences.len(), SETTINGS, "{d:?}");
    }
    let json: serde_json::Value = serde_json::to_value(&cmp).unwrap();
    assert_eq!(
        json["differences"][18]["differences"]
            .as_array()
            .map(Vec::len),
        Some(SETTINGS)
    );
    for format in [
        ibench::report::Format::Text,
        ibench::report::Format::Markdown,
    ] {
        let s = render(&dirs, format, false);
        let too_wide: Vec<&str> = s.lines().filter(|l| l.chars().count() > 160).collect();
        assert!(too_wide.is_empty(), "{format:?}: {too_wide:#?}");
        let what = s.find("What differs").expect("the section");
        assert!(what < s.find("Absolute throughput").unwrap(), "{format:?}");
        let shown = ibench::report::setup::MAX_SETTING_ROWS;
        assert!(
            s.contains(&format!(
                "And {} more settings that differ",
                SETTINGS - shown
            )),
            "{format:?}: {s}"
        );
        assert!(s.contains("config19"), "{format:?}");
    }
}

/// Two runs of one setup: What differs says so in one line, first.
#[test]
fn runs_of_one_setup_differ_in_nothing() {
    let other = edited_fixture("postgres", "same-setup", |run| {
        run["label"] = serde_json::json!("again");
    });
    let cmp = comparison(&[fixture("postgres"), other.clone()], None);
    assert!(cmp.differences[0].setup.is_empty());
    let text = render(
        &[fixture("postgres"), other],
        ibench::report::Format::Text,
        false,
    );
    assert!(
        text.contains("No difference: every run's setup is the base's"),
        "{text}"
    );
}

/// The client's CPU per op alone is no host verdict when the probe says the host held
/// (`synchronous_commit` off moved it ×1.68 with the probe at ×1.01): the step is unclear,
/// with the figures, not flagged. Between steps of another shape (more clients) it is not
/// compared at all, and says why.
#[test]
fn the_clients_cpu_per_op_needs_another_signal_and_one_shape() {
    let base = probed_fixture("base", 2.7);
    let other = edited_fixture("postgres", "host-unclear", |run| {
        run["label"] = serde_json::json!("client busier");
        for step in run["steps"].as_array_mut().unwrap() {
            step["host_probe"] = host_probe_json(2.72);
        }
        triple_qr100_client_cpu(run);
    });
    let cmp = comparison(&[base.clone(), other.clone()], None);
    assert!(cmp.host.flags.is_empty(), "{:?}", cmp.host.flags);
    assert_eq!(cmp.host.unclear.len(), 1, "{:?}", cmp.host.unclear);
    let u = &cmp.host.unclear[0];
    assert_eq!((u.step, u.run.as_str()), (step("qr100"), "client busier"));
    assert!(
        u.reasons[0].starts_with(
            "client CPU/op ×3.00 of the base's, but the host probe read CPU ns/iter ×1.01"
        ),
        "{:?}",
        u.reasons
    );
    let text = render(&[base.clone(), other], ibench::report::Format::Text, false);
    assert!(text.contains("unclear, not flagged"), "{text}");

    let four = edited_fixture("postgres", "host-four-clients", |run| {
        run["label"] = serde_json::json!("four clients");
        run["options"]["clients"] = serde_json::json!(4);
        for step in run["steps"].as_array_mut().unwrap() {
            step["clients"] = serde_json::json!(4);
            step["host_probe"] = host_probe_json(2.72);
        }
        triple_qr100_client_cpu(run);
    });
    let cmp = comparison(&[base.clone(), four.clone()], None);
    assert!(
        cmp.host.flags.is_empty() && cmp.host.unclear.is_empty(),
        "{:?}",
        cmp.host
    );
    let n = &cmp.host.not_compared;
    assert!(n.iter().any(|f| f.step == step("qr100")), "{n:?}");
    assert_eq!(n[0].reasons, ["--clients 1 → 4"], "{n:?}");
    let text = render(&[base, four], ibench::report::Format::Text, false);
    assert!(
        text.contains("Not comparable on the client's CPU per op"),
        "{text}"
    );
    assert!(text.contains("Scaling efficiency"), "{text}");
    assert!(
        text.contains("four clients differs from the base in --clients 1 → 4"),
        "{text}"
    );
}

/// The run recorded on a host 1.6x slower, at half the base's throughput everywhere: every
/// figure of it is host-affected, so no format paints any of them red or green (tables,
/// summary, tl;dr, chart, per-step figures), while each writes it with its ~ mark.
#[test]
fn host_affected_figures_are_never_red_or_green_in_any_format() {
    let base = probed_fixture("base", 2.7);
    let slow = edited_fixture("postgres", "host-slow-every-format", |run| {
        run["label"] = serde_json::json!("slow host");
        for step in run["steps"].as_array_mut().unwrap() {
            step["host_probe"] = host_probe_json(2.7 * 1.6);
            let t = step["throughput"].as_f64().unwrap();
            step["throughput"] = serde_json::json!(t * 0.5);
        }
    });
    let dirs = [base, slow];
    // JSON: the model itself.
    let json: serde_json::Value =
        serde_json::from_str(&render(&dirs, ibench::report::Format::Json, false)).unwrap();
    for table in ["relative", "absolute"] {
        let row = &json[table]["rows"][1];
        assert_eq!(row["label"], "slow host");
        for c in row["cells"].as_array().unwrap() {
            assert_eq!(c["colour"], "grey", "{table}: {c}");
            assert!(
                c["note"].as_str().unwrap().starts_with("host-affected"),
                "{c}"
            );
        }
    }
    let summary = json["summary"].as_array().unwrap();
    assert!(!summary.is_empty());
    for s in summary {
        assert_eq!(s["colour"], "grey", "{s}");
    }
    let line = &json["tldr"]["lines"][0];
    assert_eq!(line["run"], "slow host");
    for f in line["families"].as_array().unwrap() {
        assert_eq!(f["colour"], "grey", "{f}");
        assert_eq!(f["decided"], 0, "{f}");
    }
    assert!(
        line["text"]
            .as_str()
            .unwrap()
            .contains("not decided (host-affected"),
        "{line}"
    );
    assert!(
        line["caveat"].as_str().unwrap().starts_with("Host:"),
        "{line}"
    );

    // Text with colours: no red or green escape around a figure marked ~.
    let text = render(&dirs, ibench::report::Format::Text, true);
    assert!(text.contains("0.50~\x1b[0m"), "{text}");
    for paint in ["\x1b[31m", "\x1b[32m"] {
        for (at, _) in text.match_indices(paint) {
            let rest = &text[at + paint.len()..];
            let cell = &rest[..rest.find("\x1b[0m").unwrap()];
            assert!(!cell.trim_end().ends_with('~'), "painted: {cell:?}");
        }
    }
    // Markdown marks a change ▲ or ▼: never on a figure marked ~.
    let md = render(&dirs, ibench::report::Format::Markdown, false);
    assert!(md.contains("0.50~"), "{md}");
    assert!(!md.contains("~ ▲") && !md.contains("~ ▼"), "{md}");
    // HTML: every cell marked ~ is grey (the per-step figures included), and the chart's bars
    // of the slow run are hatched.
    let html = render(&dirs, ibench::report::Format::Html, false);
    let marked: Vec<&str> = html
        .match_indices("~</td>")
        .map(|(at, _)| {
            let open = html[..at].rfind("<td").unwrap();
            &html[open..at]
        })
        .collect();
    assert!(marked.len() > 16, "{} marked cells", marked.len());
    for cell in &marked {
        assert!(cell.starts_with("<td class=\"grey"), "{cell}");
    }
    let steps = json["steps"].as_array().unwrap().len();
    assert_eq!(html.matches("class=\"bar undecided\"").count(), steps);
    assert!(html.contains("hatched: not decided"));
}

/// `ibench report` is short by default (the tl;dr first, no per-step sections); `--details`
/// adds each step's latency and figures in text and Markdown.
#[test]
fn the_default_report_is_short_and_details_add_the_steps() {
    let run = |format: &str, details: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ibench"));
        cmd.arg("report")
            .args([fixture("postgres"), fixture("postgres-commit-delay")])
            .args(["--format", format]);
        if details {
            cmd.arg("--details");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{format}");
        String::from_utf8(out.stdout).unwrap()
    };
    for format in ["text", "markdown"] {
        let short = run(format, false);
        let full = run(format, true);
        assert!(short.lines().count() <= 150, "{format}: {short}");
        let tldr = short.find("tl;dr").expect("a tl;dr");
        assert!(tldr < short.find("What differs").unwrap(), "{format}");
        assert!(
            !short.contains("latency: % of operations per bucket"),
            "{format}"
        );
        assert!(
            full.contains("latency: % of operations per bucket"),
            "{format}"
        );
        assert!(short.contains("--details"), "{format}");
    }
}

/// `tests/fixtures/mariadb-replica`, a small real run with a MariaDB 10.11 async replica, is
/// held to the replica-lag SLA: at 250 ms its l.i1 (p99 998 ms), qr1000 (322 ms) and qp1000
/// (343 ms) fail, in every format and in the tl;dr; at the default 1,000 ms every step holds
/// and the tl;dr says nothing of it; runs without a replica show nothing of it.
#[test]
fn a_run_with_a_replica_is_held_to_the_lag_sla_in_every_format() {
    let report = |dirs: &[PathBuf], format: &str, bound: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ibench"));
        cmd.arg("report").args(dirs).args(["--format", format]);
        if let Some(b) = bound {
            cmd.args(["--lag-sla-ms", b]);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{format}");
        String::from_utf8(out.stdout).unwrap()
    };
    let dirs = [fixture("postgres"), fixture("mariadb-replica")];
    let text = report(&dirs, "text", Some("250"));
    assert!(
        text.contains("== Replica lag SLA (p99 lag ≤ 250 ms)"),
        "{text}"
    );
    assert!(
        text.contains("replica lag SLA (p99 ≤ 250 ms) failed in l.i1 (p99 lag 998 ms), qr1000 (p99 lag 322 ms), qp1000 (p99 lag 343 ms)."),
        "{text}"
    );
    assert!(
        text.contains("998*") && text.contains("3 of 8 step(s) failed"),
        "{text}"
    );
    let tldr = text.find("replica lag SLA (p99").unwrap();
    assert!(tldr < text.find("What differs").unwrap(), "in the tl;dr");
    let md = report(&dirs, "markdown", Some("250"));
    assert!(md.contains("~~998~~ (SLA)"), "{md}");
    let html = report(&dirs, "html", Some("250"));
    assert!(html.contains("<td class=\"red sla\" title=\"SLA failed: p99 lag 998 ms over the 250 ms bound\">998</td>"), "{html}");
    assert!(
        html.contains("<span class=\"red\">replica lag SLA (p99 ≤ 250 ms) failed in l.i1"),
        "{html}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&report(&dirs, "json", Some("250"))).unwrap();
    let sla = &json["lag_sla"];
    assert_eq!(sla["bound_ms"], 250.0);
    let verdicts = sla["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 8, "one per step of the run with a replica");
    let failed: Vec<&str> = verdicts
        .iter()
        .filter(|v| v["passed"] == false)
        .map(|v| v["step"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["l.i1", "qr1000", "qp1000"]);
    assert_eq!(json["tldr"]["lag_sla"].as_array().unwrap().len(), 1);

    // The default bound: every step holds; the section stays, the tl;dr says nothing of it.
    let text = report(&dirs, "text", None);
    assert!(
        text.contains("Replica lag SLA (p99 lag ≤ 1,000 ms)")
            && text.contains("0 of 8 step(s) failed"),
        "{text}"
    );
    assert!(!text.contains("replica lag SLA (p99"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&report(&dirs, "json", None)).unwrap();
    assert!(json["tldr"].get("lag_sla").is_none());

    // Without a replica: nothing of it, no empty column or field.
    let plain = [fixture("postgres"), fixture("postgres-commit-delay")];
    for format in ["text", "markdown", "html"] {
        let out = report(&plain, format, Some("250"));
        assert!(!out.to_lowercase().contains("lag sla"), "{format}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&report(&plain, "json", Some("250"))).unwrap();
    assert!(json.get("lag_sla").is_none());

    // A bound that is not a positive number of ms is a usage error, in one line.
    for bad in ["0", "abc", "inf"] {
        let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
            .arg("report")
            .args(&dirs)
            .args(["--lag-sla-ms", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--lag-sla-ms") && err.trim().lines().count() == 1,
            "{err}"
        );
    }
}

/// Several runs with a replica: the Replication section gives a table per figure, a row per
/// run by its key and a column per step (nine runs read as nine rows, not 63 columns).
#[test]
fn several_replicas_read_as_a_table_per_figure_with_a_row_per_run() {
    let copy = edited_fixture("mariadb-replica", "rep-two", |run| {
        run["label"] = serde_json::json!("maria async again");
    });
    let text = render(
        &[fixture("mariadb-replica"), copy],
        ibench::report::Format::Text,
        false,
    );
    let section = &text[text.find("== Replication").expect("the section")..];
    for figure in ["max lag ms, run", "p99 lag ms, run", "catch-up s, run"] {
        let at = section
            .find(figure)
            .unwrap_or_else(|| panic!("{figure}: {section}"));
        let table: Vec<&str> = section[at..].lines().take(3).collect();
        assert!(
            table[0].contains("l.i0") && table[0].contains("qp1000"),
            "{table:?}"
        );
        assert!(table[1].starts_with("r1 "), "{table:?}");
        assert!(table[2].starts_with("r2 "), "{table:?}");
    }
    assert!(!section.contains(": max lag ms"), "{section}");
    assert!(section.contains("- r2: asynchronous replica"), "{section}");
}

/// `tests/fixtures/sqlite-noisy-a` and `-b`: the same SQLite setup run twice, one after the
/// other, while a background load switched between 0, 1 and 2 busy cores every 2 s
/// (`scripts/noisy-fixture.sh`; probe off, so the host screening sees nothing). The runs
/// measured the same setup 0.35x to 1.29x apart. One run a side with nothing to show the host
/// steady: no rate is painted red or green in any format's table (the relative table, the
/// per-step tables, the absolute ranking, the summary and the tl;dr), and `ibench check`
/// decides none.
#[test]
fn identical_runs_on_a_noisy_host_paint_no_rate() {
    use ibench::report::Format;
    let dirs = vec![fixture("sqlite-noisy-a"), fixture("sqlite-noisy-b")];
    let cmp = comparison(&dirs, None);
    for t in [&cmp.relative, &cmp.absolute] {
        for (i, _) in t.rows.iter().enumerate() {
            assert!(
                colours(t, i).iter().all(|c| !matches!(c, R | G)),
                "{:?}",
                colours(t, i)
            );
        }
    }
    // The same pair as if the second had run twice the clients: its scaling efficiency is a
    // rate of one run a side too, never painted.
    let (mut runs, problems) = load_runs(&dirs);
    runs[1].record.options.clients *= 2;
    let scaled = compare(&runs, None, problems);
    let efficiency = &scaled.scaling.as_ref().expect("a scaling table").efficiency;
    assert!(
        efficiency.rows[1].cells.iter().any(|c| c.value.is_some()),
        "{efficiency:?}"
    );
    for (i, _) in efficiency.rows.iter().enumerate() {
        let c = colours(efficiency, i);
        assert!(c.iter().all(|c| !matches!(c, R | G)), "{c:?}");
    }
    // qr100 measured 1.29x: grey, not decided, one run a side.
    assert!(matches!(
        &cmp.relative.rows[1].cells[4].note,
        Some(CellNote::Undecided(why)) if why.starts_with("one run a side")
    ));
    let text = render(&dirs, Format::Text, true);
    assert!(
        !text.contains("\x1b[31m") && !text.contains("\x1b[32m"),
        "{text}"
    );
    assert!(text.contains("one run a side"), "{text}");
    let md = render(&dirs, Format::Markdown, false);
    assert!(!md.contains('▲') && !md.contains('▼'), "{md}");
    let html = render(&dirs, Format::Html, false);
    assert!(
        !html.contains("class=\"red\"") && !html.contains("class=\"green\""),
        "{html}"
    );
    let json = render(&dirs, Format::Json, false);
    assert!(
        !json.contains("\"colour\": \"red\"") && !json.contains("\"colour\": \"green\""),
        "{json}"
    );
    let d: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args([
            "check", &d[0], &d[1], "--base", "noisy a", "--judge", "rates",
        ])
        .output()
        .unwrap();
    let check = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{check}");
    assert!(
        !check.contains("REGRESSED") && !check.contains("improved"),
        "{check}"
    );
    assert!(check.contains("cannot tell: one run a side"), "{check}");
    // The note is said once for all the figures it holds for, and the next step once.
    assert_eq!(
        check.matches("cannot see a host slower").count(),
        1,
        "{check}"
    );
    assert_eq!(check.matches("ibench check --run").count(), 1, "{check}");
}
