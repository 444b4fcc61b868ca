//! `ibench check` on a real matrix: Debian's PostgreSQL 15 with `synchronous_commit = off` (the
//! base) against `on` (the "patch"), three interleaved repeats of small write and read steps
//! on private servers. The check must see the write steps slower and never call the read step
//! slower. Under a second in the check itself; about a minute for the six cells here.

mod common;

use std::path::Path;

use common::{fresh_dir, ibench};

fn matrix(dir: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("off.conf"), "synchronous_commit = off\n").unwrap();
    let file = dir.join("matrix.toml");
    std::fs::write(
        &file,
        r#"
repeats = 3
order = "interleaved"
[servers.pg]
kind = "postgres"
bindir = "/usr/lib/postgresql/15/bin"
[configs.postgres]
base = "off.conf"
variants.on = { synchronous_commit = "on" }
[workloads.w]
load_rows = 5000
i1_rows = 1000
i2_rows = 3000
query_seconds = 1
settle_seconds = 0
steps = ["l.i0", "l.x", "l.i1", "l.i2", "qp100"]
"#,
    )
    .unwrap();
    file
}

fn verdict<'a>(v: &'a serde_json::Value, step: &str, figure: &str) -> &'a serde_json::Value {
    v["pairs"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == step && s["figure"] == figure)
        .unwrap_or_else(|| panic!("no verdict on {step} {figure}: {v}"))
}

#[test]
fn synchronous_commit_on_is_seen_slower_on_the_write_steps_only() {
    let dir = fresh_dir("check-matrix-sync");
    let file = matrix(&dir);
    let out_dir = dir.join("out");
    let (f, o) = (file.display().to_string(), out_dir.display().to_string());
    let run = ibench(&["matrix", "run", &f, "--out", &o, "--quiet"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for extra in [&[][..], &["--keep-host-affected"][..]] {
        let mut args = vec!["check", o.as_str(), "--format", "json"];
        args.extend(extra);
        let out = ibench(&args);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
        });
        // Regressed, or (the host moved too many repeats) cannot tell; never "no regression".
        assert!(matches!(out.status.code(), Some(1 | 3)), "{v}");
        let pair = &v["pairs"][0];
        assert_eq!(pair["title"], "all / w");
        assert!(
            pair["differences"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["name"] == "synchronous_commit"),
            "{pair}"
        );
        // l.i2 commits every 5 rows: fsync makes it several times slower here. (With 500
        // rows the step lasted about 60 ms and once came out -1.8% on a quiet host: 3,000.)
        let i2 = verdict(&v, "l.i2", "throughput");
        assert!(
            matches!(i2["verdict"].as_str(), Some("regressed" | "cannot_tell")),
            "{i2}"
        );
        // (No ratio when a repeat's l.i2 failed a check on a loaded host: then it cannot tell.)
        match i2["ratio"].as_f64() {
            Some(r) => assert!(r < 0.9, "{i2}"),
            None => assert_eq!(i2["reason"], "failed_or_partial", "{i2}"),
        }
        // The query step's inserts are paced at 100 rows/s: waiting on fsync leaves the
        // queries more CPU, never less.
        let qp = verdict(&v, "qp100", "throughput");
        assert_ne!(qp["verdict"], "regressed", "{qp}");
        let summary = v["summary"].as_str().unwrap();
        if summary.starts_with("regressed") {
            assert!(!summary.contains("qp100 throughput"), "{summary}");
        }
    }
    // The text names the regressed write steps on its last line when it exits 1.
    let out = ibench(&["check", &o, "--keep-host-affected"]);
    let text = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(1) {
        let last = text.lines().last().unwrap_or("");
        assert!(last.starts_with("result: regressed: "), "{last}");
        assert!(last.contains("l.i"), "{last}");
    }
}
