//! A real duet: `ibench check --run FILE --duet` on two private PostgreSQL 15 servers of the
//! same config (two named variants with the same setting), two rounds of small steps. Both
//! sides ran every step; the step barrier held (neither side started a step before the other
//! finished the step before it, whatever the host's speed); each round swapped the slots and
//! which server started first; the check and the matrix report say duet, and the report judges
//! the duet's rates as the check does (the repeats' rule, not held to the host flags); a duet
//! side against a solo run is refused with one line naming the fix. About 40 s.

mod common;

use std::path::Path;

use common::{fresh_dir, ibench};
use ibench::results::{RunRecord, Status, rfc3339_seconds};

fn matrix(dir: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join("matrix.toml");
    std::fs::write(
        &file,
        r#"
repeats = 2
order = "interleaved"
[servers.pg]
kind = "postgres"
bindir = "/usr/lib/postgresql/15/bin"
[configs.postgres]
include_base = false
variants.a = { work_mem = "4MB" }
variants.b = { work_mem = "4MB" }
[workloads.w]
load_rows = 3000
i1_rows = 1000
query_seconds = 2
settle_seconds = 0
steps = ["l.i0", "l.x", "l.i1", "qp100"]
"#,
    )
    .unwrap();
    file
}

fn record(out: &Path, cell: &str) -> RunRecord {
    ibench::results::read_run(&out.join("cells").join(cell).join("run")).unwrap()
}

/// Neither side started step k before the other side ended step k - 1 (RFC 3339 times with
/// milliseconds: equal counts as after).
fn assert_barrier_held(a: &RunRecord, b: &RunRecord) {
    for (x, y) in [(a, b), (b, a)] {
        for k in 1..x.steps.len() {
            let start = rfc3339_seconds(&x.steps[k].started_at).unwrap();
            let before = rfc3339_seconds(&y.steps[k - 1].ended_at).unwrap();
            assert!(
                start >= before,
                "{} started {} before the other side ended {}",
                x.steps[k].name,
                x.steps[k].started_at,
                y.steps[k - 1].ended_at
            );
        }
    }
}

#[test]
fn a_duet_runs_both_sides_step_by_step_and_says_so() {
    let dir = fresh_dir("duet-pg");
    let file = matrix(&dir);
    let out = dir.join("out");
    let (f, o) = (file.display().to_string(), out.display().to_string());
    let run = ibench(&[
        "check",
        "--run",
        &f,
        &o,
        "--duet",
        "--max-repeats",
        "2",
        "--min-step-seconds",
        "0",
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(matches!(run.status.code(), Some(0 | 1 | 3)), "{err}");
    assert!(err.contains("duet round 1/2"), "{err}");
    assert!(
        text.contains("duet: the base and the candidate ran at the same time"),
        "{text}"
    );
    let mut first = Vec::new();
    for round in 1..=2u32 {
        let a = record(&out, &format!("pg.a.w.r{round}"));
        let b = record(&out, &format!("pg.b.w.r{round}"));
        for r in [&a, &b] {
            assert_eq!(r.status, Status::Completed, "{:?}", r.error);
            let names: Vec<String> = r.steps.iter().map(|s| s.name.to_string()).collect();
            assert_eq!(names, ["l.i0", "l.x", "l.i1", "qp100"]);
            assert!(r.steps.iter().all(|s| s.status == Status::Completed));
        }
        assert_barrier_held(&a, &b);
        let (da, db) = (a.duet.clone().unwrap(), b.duet.clone().unwrap());
        assert_eq!((da.round, db.round), (round, round));
        assert_eq!(da.partner_cell, format!("pg.b.w.r{round}"));
        assert_ne!(da.slot, db.slot);
        assert_ne!(da.started_first, db.started_first);
        first.push(da.started_first);
    }
    // The rounds swap which side starts first (and so its slot).
    assert_ne!(first[0], first[1]);

    let report = ibench(&["matrix", "report", &o]);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let md = std::fs::read_to_string(out.join("report").join("index.md")).unwrap_or_default();
    let all_md: String = std::fs::read_dir(out.join("report"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(all_md.contains("ran as one side of a duet"), "{md}");
    // Two rounds a side: the tl;dr names the repeats' rule, never "one run a side", and no
    // relative throughput is greyed by the host screening (a duet's rates are not held to
    // its flags, as in `ibench check`), whatever this host did during the rounds.
    assert!(!all_md.contains("One run a side:"), "{all_md}");
    assert!(all_md.contains("A change is decided as"), "{all_md}");
    let reports: Vec<serde_json::Value> = std::fs::read_dir(out.join("report"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap())
        .collect();
    assert!(!reports.is_empty());
    for v in &reports {
        let rows = v["comparison"]["relative"]["rows"].as_array().unwrap();
        for cell in rows.iter().flat_map(|r| r["cells"].as_array().unwrap()) {
            let note = cell["note"].as_str().unwrap_or("");
            assert!(!note.starts_with("host-affected"), "{note}");
        }
    }

    // A duet side against a solo run (the same run with its duet record taken out).
    let solo = dir.join("solo");
    std::fs::create_dir_all(&solo).unwrap();
    let b_run = out.join("cells/pg.b.w.r1/run");
    for e in std::fs::read_dir(&b_run).unwrap().flatten() {
        if !e.file_type().unwrap().is_file() {
            continue;
        }
        std::fs::copy(e.path(), solo.join(e.file_name())).unwrap();
    }
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(solo.join("run.json")).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("duet");
    std::fs::write(solo.join("run.json"), v.to_string()).unwrap();
    let a_run = out.join("cells/pg.a.w.r1/run");
    let label = record(&out, "pg.a.w.r1").label;
    let refused = ibench(&[
        "check",
        &a_run.display().to_string(),
        &solo.display().to_string(),
        "--base",
        &label,
    ]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("ran as one side of a duet"), "{err}");
    assert!(err.contains("--duet"), "{err}");
}
