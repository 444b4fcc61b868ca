//! `ibench matrix` on bad matrix files: one error line naming the file, the entry and the fix;
//! a config the server refuses is a failed cell (recorded, the matrix goes on) and a clear error.

mod common;
use common::{ibench, matrix_run, ok};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::fresh_dir;

const PG15: &str = "/usr/lib/postgresql/15/bin";

fn write(tag: &str, text: &str) -> PathBuf {
    let dir = fresh_dir(tag);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The last stderr line is the one error line; it contains every needle.
fn assert_clear_error(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected failure: {stderr}");
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    let last = stderr.lines().last().unwrap_or("");
    assert!(last.starts_with("error: "), "{stderr}");
    for n in needles {
        assert!(last.contains(n), "'{n}' not in: {last}");
    }
}

fn matrix_plan(path: &Path) -> Output {
    ibench(&["matrix", "plan", path.to_str().unwrap()])
}

/// The cell names (second word of each line) of `matrix plan`'s output that `keep` keeps.
fn cells_of(plan: &str, keep: impl Fn(&str) -> bool) -> Vec<&str> {
    plan.lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter(|n| keep(n))
        .collect()
}

const GOOD_SERVER: &str =
    "[servers.pg15]\nkind = \"postgres\"\nbindir = \"/usr/lib/postgresql/15/bin\"\n";
const GOOD_WORKLOAD: &str = "[workloads.tiny]\nload_rows = 100\n";

#[test]
fn unknown_keys_name_the_file_and_the_entry() {
    let f = write(
        "mx-unknown",
        &format!("{GOOD_SERVER}{GOOD_WORKLOAD}repeat = 2\n"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &["m.toml", "unknown key `repeat`", "docs/matrix.md"],
    );
    let f = write(
        "mx-unknown2",
        &format!("[servers.pg15]\nkind = \"postgres\"\nbindr = \"{PG15}\"\n{GOOD_WORKLOAD}"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &[
            "m.toml",
            "servers.pg15",
            "unknown key `bindr` (the nearest key is `bindir`)",
        ],
    );
}

#[test]
fn a_missing_bindir_names_the_fix() {
    let f = write(
        "mx-nobindir",
        &format!("[servers.pg17]\nkind = \"postgres\"\n{GOOD_WORKLOAD}"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &["m.toml", "servers.pg17", "no bindir", "set bindir"],
    );
    let f = write(
        "mx-badbindir",
        &format!(
            "[servers.pg17]\nkind = \"postgres\"\nbindir = \"/nonexistent/pg17/bin\"\n{GOOD_WORKLOAD}"
        ),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &[
            "m.toml",
            "servers.pg17",
            "/nonexistent/pg17/bin does not exist",
            "fix bindir",
        ],
    );
    let f = write(
        "mx-emptybindir",
        &format!("[servers.pg17]\nkind = \"postgres\"\nbindir = \"/tmp\"\n{GOOD_WORKLOAD}"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &["servers.pg17", "no postgres in bindir /tmp", "set bindir"],
    );
}

#[test]
fn duplicate_names_are_refused() {
    // The same server twice: TOML itself refuses the key.
    let f = write(
        "mx-dup",
        &format!("{GOOD_SERVER}{GOOD_SERVER}{GOOD_WORKLOAD}"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &[
            "m.toml",
            "duplicate key",
            "line",
            "`pg15`",
            "rename or remove one",
        ],
    );
    // A variant named like a generated axis config.
    let f = write(
        "mx-dup2",
        &format!(
            "{GOOD_SERVER}{GOOD_WORKLOAD}[configs.postgres]\nvariants.sync1 = {{ fsync = \"on\" }}\n[[configs.postgres.axes]]\nsetting = \"fsync\"\nvalues = [\"on\", \"off\"]\nnames = [\"sync1\", \"sync0\"]\n"
        ),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &[
            "m.toml",
            "configs.postgres",
            "'sync1' is used twice",
            "rename",
        ],
    );
}

#[test]
fn an_empty_axis_is_refused() {
    let f = write(
        "mx-axis",
        &format!(
            "{GOOD_SERVER}{GOOD_WORKLOAD}[configs.postgres]\n[[configs.postgres.axes]]\nsetting = \"wal_compression\"\nvalues = []\n"
        ),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &[
            "m.toml",
            "configs.postgres.axes[0] (wal_compression)",
            "no values",
            "give at least one",
        ],
    );
}

/// Replication as an axis: `replica = [..]` plans one server per mode, and a bad list is
/// one line naming the key and the fix.
#[test]
fn a_replica_axis_plans_one_server_per_mode() {
    let f = write(
        "mx-replica-axis",
        &format!("{GOOD_SERVER}replica = [\"none\", \"async\", \"sync\"]\n{GOOD_WORKLOAD}"),
    );
    let out = matrix_plan(&f);
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        cells_of(&plan, |n| n.contains(".r1")),
        [
            "pg15-none.base.tiny.r1",
            "pg15-async.base.tiny.r1",
            "pg15-sync.base.tiny.r1"
        ]
    );
    let f = write(
        "mx-replica-axis-bad",
        &format!("{GOOD_SERVER}replica = [\"none\", \"none\"]\n{GOOD_WORKLOAD}"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &[
            "m.toml",
            "servers.pg15.replica",
            "\"none\" twice",
            "each once",
        ],
    );
}

/// Failover as an axis beside replication: `replica = [..]` × `failover = [..]` plans a server
/// per combination (a failover without a replica left out), and a bad value is one line
/// naming `servers.NAME.failover` and the fix.
#[test]
fn a_failover_axis_plans_beside_the_replica_axis() {
    let workload = "[workloads.tiny]\nload_rows = 100\nsteps = [\"l.i0\", \"l.x\", \"l.i1\"]\n";
    let f = write(
        "mx-failover-axis",
        &format!(
            "{GOOD_SERVER}replica = [\"none\", \"async\", \"sync\"]\nfailover = [\"none\", \"l.i1+10s\"]\n{workload}"
        ),
    );
    let out = matrix_plan(&f);
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        cells_of(&plan, |n| n.contains(".r1")),
        [
            "pg15-none-none.base.tiny.r1",
            "pg15-async-none.base.tiny.r1",
            "pg15-async-failover-l_i1_10s.base.tiny.r1",
            "pg15-sync-none.base.tiny.r1",
            "pg15-sync-failover-l_i1_10s.base.tiny.r1",
        ]
    );
    let f = write(
        "mx-failover-axis-bad",
        &format!(
            "{GOOD_SERVER}replica = \"async\"\nfailover = [\"none\", \"l.i1+later\"]\n{workload}"
        ),
    );
    let out = matrix_plan(&f);
    assert_clear_error(
        &out,
        &[
            "m.toml",
            "servers.pg15.failover",
            "STEP+SECONDS",
            "failover = [\"none\", \"l.i1+10s\"]",
        ],
    );
    let f = write(
        "mx-failover-no-replica",
        &format!("{GOOD_SERVER}failover = \"l.i1+10s\"\n{workload}"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &[
            "servers.pg15.failover",
            "needs a replica",
            "replica = \"async\"",
        ],
    );
}

/// Files that would take all memory or write into the server's config are refused with one
/// line before anything is allocated or written.
#[test]
fn huge_matrices_and_config_injection_are_refused() {
    let f = write(
        "mx-huge",
        &format!("repeats = 100000000\n{GOOD_SERVER}{GOOD_WORKLOAD}"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &["m.toml", "repeats", "more cells than a matrix may have"],
    );
    let axes: String = (0..8)
        .map(|i| {
            format!(
                "[[configs.postgres.axes]]\nsetting = \"work_mem\"\nvalues = [{}]\nnames = [{}]\n",
                (0..10)
                    .map(|v| format!("\"{i}{v}kB\""))
                    .collect::<Vec<_>>()
                    .join(", "),
                (0..10)
                    .map(|v| format!("\"a{i}{v}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    let f = write("mx-axes", &format!("{GOOD_SERVER}{GOOD_WORKLOAD}{axes}"));
    assert_clear_error(
        &matrix_plan(&f),
        &["configs.postgres.axes", "100000000 configs", "shrink"],
    );
    let f = write(
        "mx-inject-name",
        &format!(
            "{GOOD_SERVER}{GOOD_WORKLOAD}[configs.postgres]\nvariants.evil = {{ \"fsync = off\\nshared_preload_libraries\" = \"'evil'\" }}\n"
        ),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &["m.toml", "variants.evil", "is not a setting name"],
    );
    let f = write(
        "mx-inject-value",
        &format!(
            "{GOOD_SERVER}{GOOD_WORKLOAD}[configs.postgres]\nvariants.evil = {{ fsync = \"off\\nshared_preload_libraries = 'evil'\" }}\n"
        ),
    );
    assert_clear_error(&matrix_plan(&f), &["m.toml", "variants.evil", "line break"]);
}

/// A results dir records its shard and plan: another shard (or another split) is refused
/// before anything runs, naming both.
#[test]
fn a_results_dir_of_another_shard_is_refused() {
    let f = write("mx-shard-dir", &format!("{GOOD_SERVER}{GOOD_WORKLOAD}"));
    let (_, plan) = ibench::matrix::load(&f).unwrap();
    let out_dir = fresh_dir("mx-shard-out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let zero = ibench::matrix::Shard { index: 0, count: 2 }.identity(&plan);
    std::fs::write(
        out_dir.join("shard.json"),
        serde_json::to_string(&zero).unwrap(),
    )
    .unwrap();
    let out = matrix_run(&f, &out_dir, &["--shard", "1/2"]);
    let hash = &zero.plan_hash;
    assert_clear_error(
        &out,
        &[
            &format!("holds shard 0/2 of plan {hash}"),
            &format!("this is shard 1/2 of plan {hash}"),
            "its own --out",
        ],
    );
    assert!(!out_dir.join("cells").exists(), "nothing ran");
}

#[test]
fn bad_workloads_groups_and_shards_name_the_entry() {
    let f = write(
        "mx-wl",
        &format!("{GOOD_SERVER}[workloads.tiny]\nsteps = [\"l.i9\"]\n"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &["m.toml", "workloads.tiny", "unknown step 'l.i9'"],
    );
    let f = write(
        "mx-wl2",
        &format!("{GOOD_SERVER}[workloads.tiny]\nurl = \"sqlite:x\"\n"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &["workloads.tiny", "url is set by the matrix"],
    );
    // Every run option is a key; the old list of flags is refused with the fix.
    let f = write(
        "mx-wl3",
        &format!("{GOOD_SERVER}[workloads.tiny]\nargs = [\"--load-batch\", \"10\"]\n"),
    );
    assert_clear_error(&matrix_plan(&f), &["workloads.tiny", "load_batch = 10"]);
    let f = write(
        "mx-wl4",
        &format!("{GOOD_SERVER}[workloads.tiny]\nload_bach = 10\n"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &[
            "workloads.tiny",
            "unknown key `load_bach` (the nearest key is `load_batch`)",
        ],
    );
    let f = write(
        "mx-group",
        &format!("{GOOD_SERVER}{GOOD_WORKLOAD}[groups.g]\nbase = \"pg16.base\"\n"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &["m.toml", "groups.g.base", "'pg16.base' is not in the group"],
    );
    let f = write("mx-shard", &format!("{GOOD_SERVER}{GOOD_WORKLOAD}"));
    let out = ibench(&["matrix", "plan", f.to_str().unwrap(), "--shard", "2/2"]);
    assert_clear_error(&out, &["--shard '2/2'", "0 <= I < N"]);
    let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["matrix", "plan", f.to_str().unwrap(), "--shards", "2"])
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    assert_clear_error(
        &out,
        &["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "--shard I/2"],
    );
    // The task id is the shard index: task 2 of --shards 2 is refused, naming the variable.
    let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["matrix", "plan", f.to_str().unwrap(), "--shards", "2"])
        .env_remove("JOB_COMPLETION_INDEX")
        .env("SLURM_ARRAY_TASK_ID", "2")
        .env("SLURM_ARRAY_TASK_MIN", "1")
        .env("SLURM_ARRAY_TASK_MAX", "2")
        .output()
        .unwrap();
    assert_clear_error(
        &out,
        &[
            "SLURM_ARRAY_TASK_ID=2 is not below --shards 2",
            "--array=0-1",
        ],
    );
    // A rerun of task 1 alone runs shard 1 (not shard 0), and says the array is partial.
    let out = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["matrix", "plan", f.to_str().unwrap(), "--shards", "2"])
        .env_remove("JOB_COMPLETION_INDEX")
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("SLURM_ARRAY_TASK_MIN", "1")
        .env("SLURM_ARRAY_TASK_MAX", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("shard 1/2"), "{stdout}");
    assert!(stderr.contains("rerun of one shard"), "{stderr}");
    let out = ibench(&["matrix", "plan", "/nonexistent/m.toml"]);
    assert_clear_error(&out, &["cannot read the matrix file /nonexistent/m.toml"]);
    let out = ibench(&["matrix", "report", "/nonexistent/out"]);
    assert_clear_error(&out, &["/nonexistent/out is not a matrix output dir"]);
}

#[test]
fn a_config_the_server_refuses_fails_its_cell_and_the_matrix_goes_on() {
    let f = write(
        "mx-refused",
        &format!(
            "{GOOD_SERVER}[workloads.tiny]\nload_rows = 200\nsteps = [\"l.i0\"]\n[configs.postgres]\ninclude_base = false\nvariants.bad = {{ shared_buffers = \"lots\" }}\nvariants.good = {{ work_mem = \"8MB\" }}\n"
        ),
    );
    let out_dir = fresh_dir("mx-refused-out");
    let out = matrix_run(&f, &out_dir, &["--quiet"]);
    assert_clear_error(
        &out,
        &[
            "1 of the matrix's cells failed",
            "pg15.bad.tiny.r1",
            "configs.postgres.variants.bad",
            "shared_buffers",
            "fix that entry",
        ],
    );
    // The bad cell is recorded as failed with its error and the server log; the cell after it
    // still ran.
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("cells/pg15.bad.tiny.r1/state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["status"], "failed");
    assert!(state["error"].as_str().unwrap().contains("shared_buffers"));
    assert!(
        out_dir
            .join("cells/pg15.bad.tiny.r1/server/server.log")
            .exists()
    );
    let base: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("cells/pg15.good.tiny.r1/state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(base["status"], "completed", "{base}");
}

/// Every cell of a SQLite server gets its own file, or the server is refused: a shared file
/// made concurrent shards collide.
#[test]
fn a_sqlite_server_needs_a_file_per_cell() {
    let f = write(
        "mx-sqlite-shared",
        "[servers.lite]\nurl = \"sqlite:/tmp/one.db\"\n[workloads.tiny]\nload_rows = 100\n",
    );
    assert_clear_error(
        &matrix_plan(&f),
        &[
            "m.toml",
            "servers.lite",
            "would share",
            "sqlite:DIR/{cell}.db",
        ],
    );
}

#[test]
fn repeats_report_the_median_and_mark_changes_only_outside_the_base_spread() {
    // Two SQLite databases ibench does not manage (url servers), three interleaved repeats.
    let work = fresh_dir("mx-repeats");
    std::fs::create_dir_all(&work).unwrap();
    let f = work.join("m.toml");
    std::fs::write(
        &f,
        format!(
            "repeats = 3\norder = \"interleaved\"\n[servers.a]\nurl = \"sqlite:{a}\"\nlabel = \"sqlite-a\"\n[servers.b]\nurl = \"sqlite:{b}\"\nlabel = \"sqlite-b\"\n[workloads.tiny]\nload_rows = 2000\nsteps = [\"l.i0\", \"l.x\"]\n[groups.ab]\nbase = \"a.base\"\n",
            a = work.join("a-{cell}.db").display(),
            b = work.join("b-{cell}.db").display()
        ),
    )
    .unwrap();
    let plan = String::from_utf8_lossy(&matrix_plan(&f).stdout).into_owned();
    let order = cells_of(&plan, |n| n.contains(".r"));
    assert_eq!(
        order,
        [
            "a.base.tiny.r1",
            "b.base.tiny.r1",
            "b.base.tiny.r2",
            "a.base.tiny.r2",
            "a.base.tiny.r3",
            "b.base.tiny.r3"
        ],
        "interleaved, every other round backwards: A B B A A B"
    );
    let out_dir = work.join("out");
    run_and_report(&f, &out_dir);
    let report = out_dir.join("report");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("ab.tiny.json")).unwrap())
            .unwrap();
    assert_eq!(json["repeats"], 3);
    let cmp = &json["comparison"];
    assert_eq!(cmp["labels"], serde_json::json!(["sqlite-a", "sqlite-b"]));
    // Each figure is the median of the three run.json throughputs; the spread is min-max.
    let throughput = |server: &str, r: u32, step: &str| -> f64 {
        let run: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                out_dir.join(format!("cells/{server}.base.tiny.r{r}/run/run.json")),
            )
            .unwrap(),
        )
        .unwrap();
        run["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == step)
            .unwrap()["throughput"]
            .as_f64()
            .unwrap()
    };
    let columns: Vec<String> = cmp["absolute"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    assert_eq!(columns, ["l.i0", "l.x"]);
    let mut base_spread = Vec::new();
    for (row, server) in ["a", "b"].iter().enumerate() {
        for (col, step) in columns.iter().enumerate() {
            let mut v: Vec<f64> = (1..=3).map(|r| throughput(server, r, step)).collect();
            v.sort_by(f64::total_cmp);
            let shown = cmp["absolute"]["rows"][row]["cells"][col]["value"]
                .as_f64()
                .unwrap();
            assert_eq!(shown, v[1], "{server} {step}: the median");
            let spread = &json["spread"][row]["steps"][col];
            assert_eq!(spread[1].as_f64().unwrap(), v[1]);
            assert_eq!(
                (spread[2].as_f64().unwrap(), spread[3].as_f64().unwrap()),
                (v[0], v[2])
            );
            if row == 0 {
                base_spread.push((v[0] / v[1], v[2] / v[1]));
            }
        }
    }
    // A relative value is marked as a change only when the decision rule of `ibench check`
    // decides it on the repeats (report::paint): never when host-affected or not decided,
    // never inside ±5%; a value inside the base's spread is never decided as a change.
    for (col, (lo, hi)) in base_spread.iter().enumerate() {
        let cell = &cmp["relative"]["rows"][1]["cells"][col];
        let r = cell["value"].as_f64().unwrap();
        let note = cell["note"].as_str().unwrap_or("");
        if note.starts_with("host-affected") || note.starts_with("not decided") {
            assert_eq!(cell["colour"], "grey", "{cell}");
        }
        match cell["colour"].as_str().unwrap() {
            "red" => assert!(r < 0.95 && !(r >= *lo && r <= *hi), "{cell}"),
            "green" => assert!(r > 1.05 && !(r >= *lo && r <= *hi), "{cell}"),
            c => assert_eq!(c, "grey", "{cell}"),
        }
    }
    let text = std::fs::read_to_string(report.join("ab.tiny.txt")).unwrap();
    assert!(
        text.contains("Spread of throughput over the repeats (min-max)"),
        "{text}"
    );
    // The host probe of each of the six cells over the matrix's wall time.
    assert!(
        text.contains("The host over the matrix's wall time"),
        "{text}"
    );
    assert!(text.contains("The probe of each of the 6 cells"), "{text}");
    let html = std::fs::read_to_string(report.join("ab.tiny.html")).unwrap();
    assert!(html.contains("Spread of throughput") && html.trim_end().ends_with("</html>"));
    assert!(
        html.contains("Host probe per cell, relative to the matrix&#39;s median")
            || html.contains("Host probe per cell, relative to the matrix's median")
    );
    let index = std::fs::read_to_string(report.join("index.md")).unwrap();
    assert!(index.contains("[ab.tiny.html](ab.tiny.html)"), "{index}");
    // The index page is a report document: the group links its HTML report, and its reports
    // cell links every format.
    let index = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        index.contains("<a href=\"ab.tiny.html\">ab / tiny</a>")
            && index.contains("<a href=\"ab.tiny.txt\">txt</a> <a href=\"ab.tiny.md\">md</a>")
            && index.trim_end().ends_with("</html>"),
        "{index}"
    );
    // Its tl;dr is painted as the group report's: each family's range in a span of its paint.
    assert!(index.contains("<ul class=\"tldr\"><li>"), "{index}");
    assert!(index.contains("<span class=\""), "{index}");
    // Short by default; --details adds each step's detail to the text and Markdown reports.
    assert!(
        !text.contains("latency: % of operations per bucket"),
        "{text}"
    );
    let detailed = out_dir.join("detailed");
    ok(&ibench(&[
        "matrix",
        "report",
        out_dir.to_str().unwrap(),
        "--out",
        detailed.to_str().unwrap(),
        "--details",
    ]));
    for ext in ["txt", "md"] {
        let full = std::fs::read_to_string(detailed.join(format!("ab.tiny.{ext}"))).unwrap();
        assert!(
            full.contains("latency: % of operations per bucket"),
            "{ext}: {full}"
        );
    }
    // A bound that is not a positive number of ms is a usage error, in one line.
    let out = ibench(&[
        "matrix",
        "report",
        out_dir.to_str().unwrap(),
        "--lag-sla-ms",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--lag-sla-ms") && err.trim().lines().count() == 1,
        "{err}"
    );
}

#[test]
fn a_matrix_workload_can_be_the_microbenchmarks() {
    let f = write(
        "mx-micro",
        &format!(
            "{GOOD_SERVER}[workloads.micro]\nworkload = \"micro\"\nmicro_rows = 1000\nmicro_seconds = 2\n"
        ),
    );
    let out = matrix_plan(&f);
    let stdout = String::from_utf8_lossy(&out.stdout);
    ok(&out);
    assert!(stdout.contains("pg15.base.micro.r1"), "{stdout}");
    // 42 microbenchmarks of 2 s each, the load and the server's start: 1m29s.
    assert!(stdout.contains("1m29s"), "{stdout}");
    let f = write(
        "mx-micro-bad",
        &format!("{GOOD_SERVER}[workloads.micro]\nworkload = \"micro\"\nsteps = [\"l.i0\"]\n"),
    );
    assert_clear_error(&matrix_plan(&f), &["workloads.micro", "--workload"]);
}

/// A workload with a clients axis (1 and 4) and a batch-size axis: the variants run as cells of their own, each with its options, and
/// one report compares them (the server's runs at every combination) against the group's base
/// at the first variant.
#[test]
fn workload_axes_run_each_variant_and_one_report_compares_them() {
    let work = fresh_dir("mx-axes");
    std::fs::create_dir_all(&work).unwrap();
    let f = work.join("m.toml");
    std::fs::write(
        &f,
        format!(
            "[servers.lite]\nurl = \"sqlite:{db}\"\nlabel = \"SQLite\"\n\
             [workloads.w]\nload_rows = 400\nsteps = [\"l.i0\", \"l.x\"]\n\
             [[workloads.w.axes]]\noption = \"clients\"\nvalues = [1, 4]\nnames = [\"c1\", \"c4\"]\n\
             [[workloads.w.axes]]\noption = \"load_batch\"\nvalues = [10, 50]\n",
            db = work.join("{cell}.db").display(),
        ),
    )
    .unwrap();
    let plan = String::from_utf8_lossy(&matrix_plan(&f).stdout).into_owned();
    let cells = cells_of(&plan, |n| n.ends_with(".r1"));
    assert_eq!(
        cells,
        [
            "lite.base.w_c1_load_batch-10.r1",
            "lite.base.w_c1_load_batch-50.r1",
            "lite.base.w_c4_load_batch-10.r1",
            "lite.base.w_c4_load_batch-50.r1"
        ],
        "{plan}"
    );
    assert!(plan.contains("SQLite c4_load_batch-50"), "{plan}");
    let out_dir = work.join("out");
    run_matrix(&f, &out_dir);
    // Each variant ran with its own options.
    let run = |cell: &str| -> serde_json::Value {
        let p = out_dir.join("cells").join(cell).join("run/run.json");
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let r = run("lite.base.w_c4_load_batch-50.r1");
    assert_eq!(r["options"]["clients"], 4);
    assert_eq!(r["options"]["load_rows_per_insert"], 50);
    assert_eq!(r["options"]["load_rows"], 400);
    let r = run("lite.base.w_c1_load_batch-10.r1");
    assert_eq!(r["options"]["clients"], 1);
    assert_eq!(r["options"]["load_rows_per_insert"], 10);

    report_matrix(&out_dir);
    // One report for the workload, comparing the four variants against the first.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report/all.w.json")).unwrap())
            .unwrap();
    assert_eq!(
        json["comparison"]["labels"],
        serde_json::json!([
            "SQLite c1_load_batch-10",
            "SQLite c1_load_batch-50",
            "SQLite c4_load_batch-10",
            "SQLite c4_load_batch-50"
        ])
    );
    assert_eq!(json["comparison"]["base"], 0);
    assert_eq!(
        json["comparison"]["keys"],
        serde_json::json!([
            "c1_load_batch-10",
            "c1_load_batch-50",
            "c4_load_batch-10",
            "c4_load_batch-50"
        ])
    );
    let text = std::fs::read_to_string(out_dir.join("report/all.w.txt")).unwrap();
    assert!(text.contains("Relative to the base"), "{text}");
    // The report names what its group varies (the two axes), and nothing else differs.
    let axis = &json["comparison"]["axis"];
    assert_eq!(
        axis["varies"], "--clients (1, 4), --load-batch (10, 50)",
        "{axis}"
    );
    assert_eq!(axis["warnings"], serde_json::json!([]), "{axis}");
    assert!(
        text.contains("This matrix group varies --clients (1, 4), --load-batch (10, 50)"),
        "{text}"
    );
    // Every run but the base, in order: the last is c4 with batches of 50.
    let differs = &json["comparison"]["differences"];
    assert_eq!(differs[2]["run"], "SQLite c4_load_batch-50", "{differs}");
    let names: Vec<&str> = differs[2]["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["--clients", "--load-batch"], "{differs}");
    // The runs differ in clients: throughput per client and scaling efficiency are shown.
    assert!(text.contains("Scaling efficiency"), "{text}");

    // A value of the wrong type for its option is refused as the key itself would be.
    let bad = write(
        "mx-axes-bad",
        &format!(
            "[servers.lite]\nurl = \"sqlite:{db}\"\n[workloads.w]\n[[workloads.w.axes]]\noption = \"clients\"\nvalues = [\"four\"]\n",
            db = work.join("{cell}.db").display()
        ),
    );
    assert_clear_error(&matrix_plan(&bad), &["workloads.w", "clients"]);
    // An option ibench run does not have is named with the variant.
    let bad = write(
        "mx-axes-unknown",
        &format!(
            "[servers.lite]\nurl = \"sqlite:{db}\"\n[workloads.w]\n[[workloads.w.axes]]\noption = \"colour\"\nvalues = [1]\n",
            db = work.join("{cell}.db").display()
        ),
    );
    assert_clear_error(
        &matrix_plan(&bad),
        &["workloads.w.axes (variant colour-1)", "colour"],
    );
}

/// `ibench matrix run FILE --out DIR --quiet`, which must succeed.
fn run_matrix(file: &Path, out_dir: &Path) {
    let out = matrix_run(file, out_dir, &["--quiet"]);
    ok(&out);
}

/// `ibench matrix report DIR`, which must succeed.
fn report_matrix(out_dir: &Path) {
    let out = ibench(&["matrix", "report", out_dir.to_str().unwrap()]);
    ok(&out);
}

fn run_and_report(file: &Path, out_dir: &Path) {
    run_matrix(file, out_dir);
    report_matrix(out_dir);
}

/// `order = "duet"` needs exactly two combinations, `pin` needs a duet, and a duet runs on
/// one host: each refused in one line naming the fix.
#[test]
fn a_duet_needs_two_combinations_and_one_host() {
    let three = "[configs.postgres]\ninclude_base = false\nvariants.a = { work_mem = \"4MB\" }\nvariants.b = { work_mem = \"8MB\" }\nvariants.c = { work_mem = \"16MB\" }\n";
    let f = write(
        "mx-duet3",
        &format!("order = \"duet\"\n{GOOD_SERVER}{three}{GOOD_WORKLOAD}"),
    );
    assert_clear_error(
        &matrix_plan(&f),
        &["m.toml", "order", "the matrix has 3", "exactly two"],
    );
    let two = "[configs.postgres]\ninclude_base = false\nvariants.a = { work_mem = \"4MB\" }\nvariants.b = { work_mem = \"8MB\" }\n";
    let f = write(
        "mx-pin",
        &format!("order = \"interleaved\"\npin = true\n{GOOD_SERVER}{two}{GOOD_WORKLOAD}"),
    );
    assert_clear_error(&matrix_plan(&f), &["m.toml", "pin", "order = \"duet\""]);
    let f = write(
        "mx-duet-shard",
        &format!("order = \"duet\"\n{GOOD_SERVER}{two}{GOOD_WORKLOAD}"),
    );
    let out_dir = f.parent().unwrap().join("out");
    let out = ibench(&[
        "matrix",
        "run",
        f.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--shard",
        "1/2",
    ]);
    assert_clear_error(&out, &["duet", "without --shard"]);
    let out = ibench(&["check", "somewhere", "--duet"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--run"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
