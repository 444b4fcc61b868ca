//! The binary's behaviour on bad input and signals: one clear line naming the fix, a non-zero
//! exit, no panic; Ctrl-C leaves a readable run.json marked interrupted.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::fresh_dir;

fn ibench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run ibench")
}

/// Assert a failure with one error line on stderr that contains every `needle`.
fn assert_clear_error(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "expected failure, got success: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    assert!(!stderr.contains("backtrace"), "backtrace: {stderr}");
    let first = stderr.lines().next().unwrap_or("");
    assert!(first.starts_with("error"), "{stderr}");
    for n in needles {
        assert!(first.contains(n), "'{n}' not in: {first}");
    }
}

fn sqlite_url(tag: &str) -> String {
    let dir = fresh_dir(tag);
    std::fs::create_dir_all(&dir).unwrap();
    format!("sqlite:{}", dir.join("t.db").display())
}

#[test]
fn fails_for_an_unknown_url_scheme() {
    let out = ibench(&["run", "--url", "oracle://scott@db/x", "--quiet"]);
    assert_clear_error(&out, &["unknown URL scheme", "--url"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn fails_for_an_unreachable_server() {
    let out = dir_run(&["--url", "postgres://postgres@127.0.0.1:1/postgres"]);
    assert_clear_error(&out, &["cannot reach", "--url"]);
    let out = dir_run(&["--url", "mysql://root@127.0.0.1:1/ibench"]);
    assert_clear_error(&out, &["cannot reach", "--url"]);
}

fn dir_run(extra: &[&str]) -> Output {
    let out_dir = fresh_dir("cli-out");
    let mut args = vec!["run", "--quiet", "--out", out_dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    ibench(&args)
}

#[test]
fn fails_for_an_unknown_step() {
    let out = dir_run(&["--url", &sqlite_url("cli-step"), "--steps", "l.i0,l.i9"]);
    assert_clear_error(&out, &["unknown step 'l.i9'", "--steps"]);
}

#[test]
fn fails_for_conflicting_flags() {
    let out = dir_run(&["--url", &sqlite_url("cli-engine"), "--engine", "rocksdb"]);
    assert_clear_error(&out, &["--engine", "mysql://"]);
}

#[test]
fn fails_for_bad_numbers() {
    let url = sqlite_url("cli-num");
    let out = dir_run(&["--url", &url, "--query-seconds", "abc"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--query-seconds"));
    let out = dir_run(&["--url", &url, "--query-seconds", "-1"]);
    assert!(!out.status.success());
    let out = dir_run(&["--url", &url, "--query-seconds", "0"]);
    assert_clear_error(&out, &["--query-seconds"]);
    let out = dir_run(&["--url", &url, "--query-rates", "100,0"]);
    assert_clear_error(&out, &["--query-rates"]);
    let out = dir_run(&["--url", &url, "--profile", "huge"]);
    assert_clear_error(&out, &["unknown profile", "--profile"]);
    let out = dir_run(&["--url", &url, "--data-min-len", "50"]);
    assert_clear_error(&out, &["--data-min-len"]);
}

#[test]
fn fails_when_the_out_dir_cannot_be_written_or_holds_a_run() {
    let url = sqlite_url("cli-outdir");
    let out = ibench(&[
        "run",
        "--quiet",
        "--url",
        &url,
        "--out",
        "/proc/ibench-cannot-write",
    ]);
    assert_clear_error(&out, &["--out"]);

    let dir = fresh_dir("cli-taken");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("run.json"), "{}").unwrap();
    let out = ibench(&[
        "run",
        "--quiet",
        "--url",
        &url,
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_clear_error(&out, &["already holds a run", "--out"]);
}

#[test]
fn fails_for_a_sqlite_file_in_a_missing_directory() {
    let out = dir_run(&["--url", "sqlite:/no/such/dir/x.db"]);
    assert_clear_error(&out, &["does not exist", "--url"]);
}

#[test]
fn fails_for_a_query_step_without_the_secondary_indexes() {
    let out = dir_run(&["--url", &sqlite_url("cli-noidx"), "--steps", "l.i0,qr100"]);
    assert_clear_error(
        &out,
        &["qr100 needs the secondary indexes", "l.x", "--steps"],
    );
    // Before anything ran: the precheck refuses the plan as a whole.
    let out = dir_run(&["--url", &sqlite_url("cli-notable"), "--steps", "l.i1"]);
    assert_clear_error(&out, &["needs table pi1", "l.i0"]);
}

#[test]
fn server_start_fails_for_missing_binaries_and_an_existing_dir() {
    let out = ibench(&["server", "start", "postgres", "--bindir", "/no/such/bindir"]);
    assert_clear_error(&out, &["--bindir"]);
    let dir = fresh_dir("cli-srvdir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("something"), "x").unwrap();
    let out = ibench(&["server", "start", "mariadb", "--dir", dir.to_str().unwrap()]);
    assert_clear_error(&out, &["--dir"]);
    let out = ibench(&["server", "stop", "--dir", "/no/such/instance"]);
    assert_clear_error(&out, &["--dir"]);
}

#[test]
fn fails_for_a_wrong_password() {
    let server = common::start_server(
        ibench::server::ServerKind::Mariadb,
        ibench::backend::Engine::Innodb,
    );
    // root has no password: giving one is refused by the server.
    let url = server.url.replacen("root@", "root:wrong@", 1);
    let out = dir_run(&["--url", &url]);
    assert_clear_error(&out, &["refused the login", "--url"]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("wrong"),
        "password leaked"
    );
}

#[test]
fn help_explains_every_subcommand() {
    let out = ibench(&["--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for word in ["run", "server", "matrix"] {
        assert!(text.contains(word), "{text}");
    }
    let out = ibench(&["run", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--url",
        "--steps",
        "--clients",
        "--load-rows",
        "--query-seconds",
        "--out",
    ] {
        assert!(text.contains(flag), "{flag} missing from run --help");
    }
}

#[test]
fn a_small_run_prints_the_summary_and_the_results_dir() {
    let out_dir = fresh_dir("cli-ok");
    let out = ibench(&[
        "run",
        "--url",
        &sqlite_url("cli-ok-db"),
        "--out",
        out_dir.to_str().unwrap(),
        "--load-rows",
        "3000",
        "--i1-rows",
        "500",
        "--i2-rows",
        "100",
        "--query-seconds",
        "1",
        "--query-rates",
        "100",
        "--settle-seconds",
        "0",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for s in [
        "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "p99.9", "256us", ">16s",
    ] {
        assert!(stdout.contains(s), "{s} missing from summary:\n{stdout}");
    }
    assert!(stdout.contains("results: "), "{stdout}");
    assert!(out_dir.join("run.json").exists());
}

/// Wait until `path` holds a line containing `needle`.
fn wait_for_line(path: &Path, needle: &str, limit: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if std::fs::read_to_string(path).is_ok_and(|s| s.contains(needle)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

#[test]
fn ctrl_c_stops_the_step_quickly_and_leaves_run_json_interrupted() {
    let out_dir = fresh_dir("cli-sigint");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args([
            "run",
            "--quiet",
            "--url",
            &sqlite_url("cli-sigint-db"),
            "--out",
            out_dir.to_str().unwrap(),
            "--steps",
            "l.i0,l.x,qp100,qr100",
            "--load-rows",
            "2000",
            "--query-seconds",
            "120",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let timeline = out_dir.join("timeline.jsonl");
    assert!(
        wait_for_line(&timeline, "\"qp100\",\"second\":2", Duration::from_secs(60)),
        "the query step never started"
    );
    // SAFETY: sending SIGINT to our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "did not stop within 10 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    let run = ibench::results::read_run(&out_dir).unwrap();
    assert_eq!(run.status, ibench::results::Status::Interrupted);
    let names: Vec<String> = run.steps.iter().map(|s| s.name.to_string()).collect();
    assert_eq!(names, ["l.i0", "l.x", "qp100"], "qr100 must not start");
    let qp = &run.steps[2];
    assert_eq!(qp.status, ibench::results::Status::Interrupted);
    assert!(qp.seconds < 60.0);
    assert!(qp.ops["point_query"].ops > 0, "what it measured is kept");
}

#[test]
fn server_start_prints_the_url_on_its_own_line_and_stop_stops_it() {
    let dir = fresh_dir("cli-server");
    let out = ibench(&[
        "server",
        "start",
        "postgres",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let url = stdout.lines().last().unwrap_or("").trim().to_string();
    assert!(
        url.starts_with("postgres://") && !url.contains(' '),
        "{stdout}"
    );
    let handle = ibench::server::ServerHandle::load(&dir).unwrap();
    assert_eq!(handle.url, url);
    assert!(handle.is_running());
    // The URL works for a run.
    let run_out = dir_run(&["--url", &url, "--steps", "l.i0", "--load-rows", "1000"]);
    let stop = ibench(&["server", "stop", "--dir", dir.to_str().unwrap()]);
    assert!(
        run_out.status.success(),
        "{}",
        String::from_utf8_lossy(&run_out.stderr)
    );
    assert!(
        stop.status.success(),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    assert!(!handle.is_running());
    let _ = std::fs::remove_dir_all(&dir);
}
