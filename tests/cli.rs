//! The binary's behaviour on bad input and signals: one clear line naming the fix, a non-zero
//! exit, no panic; Ctrl-C leaves a readable run.json marked interrupted.

mod common;
use common::{ibench, ok};

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::fresh_dir;

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

/// `ibench run --url URL` with `extra` arguments.
fn run_url(url: &str, extra: &[&str]) -> Output {
    ibench(&[&["run", "--url", url][..], extra].concat())
}

/// A small run of every default step on a SQLite file of its own (`TAG-db`) into a fresh
/// results dir (`TAG`, returned with the run's output), with `extra` flags.
fn small_sqlite_run(tag: &str, extra: &[&str]) -> (std::path::PathBuf, Output) {
    let out_dir = fresh_dir(tag);
    let mut args = vec![
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
    ];
    args.extend(extra);
    let out = run_url(&sqlite_url(&format!("{tag}-db")), &args);
    (out_dir, out)
}

fn sqlite_url(tag: &str) -> String {
    let dir = fresh_dir(tag);
    std::fs::create_dir_all(&dir).unwrap();
    format!("sqlite:{}", dir.join("t.db").display())
}

#[test]
fn fails_for_an_unknown_url_scheme() {
    let out = run_url("oracle://scott@db/x", &["--quiet"]);
    assert_clear_error(&out, &["unknown URL scheme", "--url"]);
    // A URL ibench does not read is a command line that is wrong.
    assert_eq!(out.status.code(), Some(2));
}

/// TLS settings that cannot work are refused before any connection, in one line that names
/// the setting and the fix, without the password: a verify mode with no CA, a mode that does
/// not exist, a CA file that is not there.
#[test]
fn tls_settings_that_cannot_work_are_refused_naming_the_setting() {
    let out = run_url(
        "postgres://u:SECRET@127.0.0.1:1/db?sslmode=verify-full",
        &["--quiet"],
    );
    assert_clear_error(&out, &["sslrootcert=", "--url"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("SECRET"));
    // A URL setting that cannot work is a command line to fix.
    assert_eq!(out.status.code(), Some(2));
    let out = run_url(
        "mysql://u:SECRET@127.0.0.1:1/db?ssl-mode=VERIFY_CA&ssl-ca=/no/such/ca.pem",
        &["--quiet"],
    );
    assert_clear_error(&out, &["/no/such/ca.pem", "--url"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("SECRET"));
    let out = run_url("postgres://u@127.0.0.1:1/db?sslmode=always", &["--quiet"]);
    assert_clear_error(&out, &["sslmode=always", "verify-full"]);
}

/// A libpq setting or URL parameter ibench does not support is refused in one line, never
/// silently ignored.
#[test]
fn unsupported_connection_settings_are_refused_in_one_line() {
    let out = run_url(
        "postgres://u@127.0.0.1:1/db?gssencmode=require",
        &["--quiet"],
    );
    assert_clear_error(&out, &["'gssencmode'", "--url"]);
    let out = common::ibench_with_env(
        &["run", "--url", "postgres://u@127.0.0.1:1/db", "--quiet"],
        &[("PGSERVICE", "prod")],
    );
    assert_clear_error(&out, &["PGSERVICE=prod", "unset it"]);
    let out = run_url("mysql://u@127.0.0.1:1/db?compress=true", &["--quiet"]);
    assert_clear_error(&out, &["'compress'", "--url"]);
}

/// A `target_session_attrs` libpq does not take is a URL error: one line naming the values
/// it takes, exit 2.
#[test]
fn a_bad_target_session_attrs_is_one_line_and_exit_2() {
    let out = run_url(
        "postgres://u@127.0.0.1:1,127.0.0.1:2/db?target_session_attrs=master",
        &["--quiet"],
    );
    assert_clear_error(
        &out,
        &["target_session_attrs=master", "read-write", "--url"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

/// A libpq key/value string is not a URL: the error says so without echoing its password.
#[test]
fn a_key_value_connection_string_is_refused_with_its_password_masked() {
    let out = run_url("host=127.0.0.1 password=SECRET dbname=x", &["--quiet"]);
    assert_clear_error(&out, &["unknown URL scheme", "password=***", "--url"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("SECRET"));
}

#[test]
fn fails_for_an_unreachable_server() {
    let out = dir_run(&["--url", "postgres://postgres@127.0.0.1:1/postgres"]);
    assert_clear_error(&out, &["cannot reach", "--url"]);
    // Work that failed, not a wrong command line.
    assert_eq!(out.status.code(), Some(1));
    let out = dir_run(&["--url", "mysql://root@127.0.0.1:1/ibench"]);
    assert_clear_error(&out, &["cannot reach", "--url"]);
    assert_eq!(out.status.code(), Some(1));
}

fn dir_run(extra: &[&str]) -> Output {
    let out_dir = fresh_dir("cli-out");
    let mut args = vec!["run", "--quiet", "--out", out_dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    ibench(&args)
}

/// l.i0 of 1,000 rows into `url`, which must succeed.
fn load_1000_rows(url: &str) {
    ok(&dir_run(&[
        "--url",
        url,
        "--steps",
        "l.i0",
        "--load-rows",
        "1000",
    ]));
}

/// The run in `out_dir`, which must be marked interrupted, and its first step too.
fn interrupted_in_its_first_step(out_dir: &Path) -> ibench::results::RunRecord {
    let run = ibench::results::read_run(out_dir).unwrap();
    assert_eq!(run.status, ibench::results::Status::Interrupted);
    assert_eq!(run.steps[0].status, ibench::results::Status::Interrupted);
    run
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
    let out = dir_run(&[
        "--url",
        &url,
        "--workload",
        "micro",
        "--micro-tables",
        "3000",
    ]);
    assert_clear_error(&out, &["--micro-tables 3000", "lower --micro-tables"]);
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
    let server = mariadb_server();
    // The instance's password is in its password file: a wrong one in the URL wins and is
    // refused by the server.
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
    for word in [
        "run",
        "server",
        "matrix",
        "completions",
        "man",
        "Exit status",
    ] {
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

/// `run --help` groups its flags under headings, wraps its lines (to 100 columns when
/// standard output is no terminal) and shows no source comment; plain `ibench` and `ibench
/// server` list their subcommands.
#[test]
fn help_is_grouped_wrapped_and_plain_ibench_lists_the_commands() {
    let text = ok(&ibench(&["run", "--help"]));
    for heading in [
        "Connection:",
        "Steps:",
        "Sizes:",
        "Rows and tables:",
        "Measurement:",
        "Output:",
    ] {
        assert!(text.contains(heading), "{heading} missing:\n{text}");
    }
    let at = |h: &str| text.find(h).unwrap();
    assert!(at("Connection:") < at("--url") && at("--url") < at("Steps:"));
    assert!(at("Sizes:") < at("--load-rows") && at("Output:") < at("--out <OUT>"));
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 100, "a line of {widest} characters:\n{text}");
    assert!(!text.contains("the one place"), "{text}");
    for args in [&[][..], &["server"][..], &["matrix"][..]] {
        let out = ibench(args);
        assert_eq!(out.status.code(), Some(2), "ibench {args:?}");
        let help = String::from_utf8_lossy(&out.stderr);
        let commands: &[&str] = match args {
            [] => &[
                "run",
                "report",
                "server",
                "matrix",
                "check",
                "completions",
                "man",
            ],
            ["server"] => &["start", "stop", "list"],
            _ => &["plan", "run", "report"],
        };
        for c in commands {
            assert!(help.contains(&format!("  {c} ")), "{c} not listed:\n{help}");
        }
    }
}

/// Usage errors exit 2 in every command, work that failed 1, each with one line naming the
/// fix.
#[test]
fn a_wrong_command_line_exits_2_and_failed_work_1() {
    let url = sqlite_url("cli-exit");
    let usage: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "--clients", "0"], "--clients"),
        (vec!["run", "--clients", "abc"], "--clients"),
        (vec!["run", "--url", &url, "--steps", "l.i9"], "--steps"),
        (
            vec!["run", "--url", &url, "--engine", "rocksdb"],
            "--engine",
        ),
        (vec!["run", "--nosuch"], "--nosuch"),
        (vec!["report"], "RUNS"),
        (vec!["report", "--format", "otava", "x"], "--output"),
        (vec!["server", "start", "oracle"], "oracle"),
        (
            vec![
                "matrix", "plan", "m.toml", "--shard", "1/2", "--shards", "2",
            ],
            "--shard",
        ),
        (vec!["completions", "cmd"], "cmd"),
        (vec!["check"], "DIRS"),
    ];
    for (args, needle) in &usage {
        let mut full = args.clone();
        if full[0] == "run" {
            full.extend(["--quiet", "--out"]);
            let out_dir = fresh_dir("cli-exit-out");
            let out_dir = out_dir.to_str().unwrap().to_string();
            let out = ibench(&[&full[..], &[out_dir.as_str()][..]].concat());
            check_usage(&out, args, needle);
        } else {
            check_usage(&ibench(&full), args, needle);
        }
    }
    // Failed work: a file that is not there, a server that does not answer.
    let out = ibench(&["report", "/no/such/run"]);
    assert_clear_error(&out, &["no run could be read"]);
    assert_eq!(out.status.code(), Some(1));
    let out = ibench(&["server", "stop", "--dir", "/no/such/instance"]);
    assert_clear_error(&out, &["--dir"]);
    assert_eq!(out.status.code(), Some(1));
}

fn check_usage(out: &Output, args: &[&str], needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "ibench {args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(needle),
        "ibench {args:?}: {needle} not in {stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "ibench {args:?}: {stderr}");
}

/// The fixture runs under new directories named `names`, relabelled `labels`.
fn fixture_copies(names: &[&str], labels: &[&str]) -> Vec<String> {
    let root = fresh_dir("cli-fixtures");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let sources = ["postgres", "postgres-commit-delay"];
    names
        .iter()
        .zip(labels)
        .zip(sources)
        .map(|((name, label), source)| {
            let dir = root.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            for e in std::fs::read_dir(fixtures.join(source)).unwrap().flatten() {
                if e.path().is_file() {
                    std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
                }
            }
            let run = dir.join("run.json");
            let mut json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
            json["label"] = serde_json::Value::from(*label);
            std::fs::write(&run, serde_json::to_string(&json).unwrap()).unwrap();
            dir.to_str().unwrap().to_string()
        })
        .collect()
}

/// `report --base` that names no run is a wrong command line (exit 2, as in `check`); runs
/// whose labels give no short key are named by their directories, not r1 and r2.
#[test]
fn report_refuses_an_unknown_base_and_names_runs_by_their_dirs() {
    let dirs = fixture_copies(
        &["pg15", "maria"],
        &[
            "PostgreSQL-15.18-built-from-source-with-debug",
            "MariaDB-10.11.19-built-from-source-with-debug",
        ],
    );
    let out = ibench(&["report", "--base", "nosuch", &dirs[0], &dirs[1]]);
    assert_clear_error(&out, &["no run is labelled \"nosuch\"", "--base"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let text = ok(&ibench(&[
        "report", "--format", "markdown", &dirs[0], &dirs[1],
    ]));
    assert!(text.contains("| pg15 |") || text.contains("pg15"), "{text}");
    assert!(text.contains("maria"), "{text}");
    assert!(
        !text.contains("| r1 |") && !text.contains("| r2 |"),
        "{text}"
    );
}

/// A reader that closes the pipe early (`ibench report A B | head`) ends ibench quietly:
/// no panic, exit 0; a run goes on to its end.
#[test]
fn a_closed_pipe_ends_a_report_quietly_and_a_run_goes_on() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let (a, b) = (
        fixtures.join("postgres"),
        fixtures.join("postgres-commit-delay"),
    );
    for format in ["text", "html"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ibench"))
            .args(["report", "--format", format])
            .args([&a, &b])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before ibench writes (or after its first 64 KB at most).
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{stderr}"
        );
        assert_eq!(out.status.code(), Some(0), "{format}: {stderr}");
    }
    // `ibench run 2>&1 | head`: a run whose standard output and error both lose their reader
    // goes on to its end, writes its results and exits with the run's status.
    let out_dir = fresh_dir("cli-pipe-run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args([
            "run",
            "--url",
            &sqlite_url("cli-pipe-db"),
            "--steps",
            "l.i0,l.x",
        ])
        .args(["--load-rows", "2000", "--out", out_dir.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let run = ibench::results::read_run(&out_dir).unwrap();
    assert_eq!(run.status, ibench::results::Status::Completed);
    assert!(out_dir.join("report.html").is_file());
}

/// `ibench completions SHELL` and `ibench man` are made from the same definitions as the
/// parser: every command and flag is in them.
#[test]
fn completions_and_man_pages_come_from_the_definitions() {
    let bash = ok(&ibench(&["completions", "bash"]));
    assert!(
        bash.contains("_ibench") && bash.contains("--load-rows"),
        "{bash}"
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let text = ok(&ibench(&["completions", shell]));
        assert!(
            text.contains("completions") && text.contains("load-rows"),
            "{shell}"
        );
    }
    let page = ok(&ibench(&["man"]));
    assert!(
        page.starts_with(".ie") || page.contains(".TH ibench"),
        "{page}"
    );
    for c in ["run", "report", "server", "completions"] {
        assert!(page.contains(c), "{c} missing from the man page");
    }
    let dir = fresh_dir("cli-man");
    let out = ibench(&["man", "--dir", dir.to_str().unwrap()]);
    ok(&out);
    let run_page = std::fs::read_to_string(dir.join("ibench-run.1")).unwrap();
    assert!(run_page.contains("load\\-rows"), "{run_page}");
    assert!(dir.join("ibench.1").is_file() && dir.join("ibench-server-list.1").is_file());
}

/// On a terminal each step's start line also gives the time left in the whole run (run under
/// `script`, util-linux's pseudo-terminal, which Debian always has: bsdutils).
#[test]
fn on_a_terminal_each_step_says_the_time_left_in_the_run() {
    let out_dir = fresh_dir("cli-tty");
    let command = format!(
        "{} run --url {} --steps l.i0,l.x --load-rows 2000 --out {}",
        env!("CARGO_BIN_EXE_ibench"),
        sqlite_url("cli-tty-db"),
        out_dir.display()
    );
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("script (bsdutils) runs a command on a pseudo-terminal");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for step in [
        "step 1/2: l.i0 (the run: about ",
        "step 2/2: l.x (the run: about ",
    ] {
        assert!(text.contains(step), "{step} missing:\n{text}");
    }
    assert!(text.contains(" left)"), "{text}");
}

#[test]
fn a_small_run_prints_the_summary_and_the_results_dir() {
    let (out_dir, out) = small_sqlite_run("cli-ok", &["--details"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    ok(&out);
    // The summary's rows, then with --details the latency and efficiency tables.
    for s in [
        "l.i0",
        "l.x",
        "l.i1",
        "l.i2",
        "qr100",
        "qp100",
        "p99.9",
        "256us",
        ">16s",
        "(service)",
        "cpupq",
    ] {
        assert!(stdout.contains(s), "{s} missing from summary:\n{stdout}");
    }
    assert!(stdout.contains("integrity: checked after"), "{stdout}");
    assert!(stdout.contains("results: "), "{stdout}");
    assert!(out_dir.join("run.json").exists());
    // The closing line says the sizes were not the profile's.
    assert!(
        stdout.contains("profile small with --load-rows 3,000 --i1-rows 500 --i2-rows 100"),
        "{stdout}"
    );
    // The run speaks first: the banner (target, steps, sizes, results dir), then each step
    // announced as it starts, before its line.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let at = |needle: &str| {
        stderr
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} missing:\n{stderr}"))
    };
    let banner = at("run: SQLite");
    assert!(banner < at("  steps    l.i0 l.x l.i1 l.i2 qr100 qp100 (6)"));
    assert!(at("  sizes    1 client; l.i0 3,000 rows per table") > banner);
    let results = at("  results  ");
    assert!(stderr[results..].starts_with(&format!(
        "  results  {}",
        out_dir.canonicalize().unwrap().display()
    )));
    // Off a terminal, each step's line as it ends, in order (the start lines are a
    // terminal's).
    assert!(results < at("\nl.i0 "));
    assert!(at("\nl.i0 ") < at("\nl.x "));
    assert!(at("\nqp100 ") > at("\nqr100 "));
    assert!(!stderr.contains("step 1/6"), "{stderr}");
}

/// The default run's summary is short: one row per step, no latency table, no efficiency
/// table (those are --details'), no per-step warning about `ibench check`'s floor.
#[test]
fn the_summary_is_one_row_per_step_and_the_floor_is_said_once() {
    let (_, out) = small_sqlite_run("cli-short", &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    ok(&out);
    for absent in ["(service)", "p99.9", "cpupq", "256us"] {
        assert!(
            !stdout.contains(absent),
            "{absent} in the short summary:\n{stdout}"
        );
    }
    let rows = stdout
        .lines()
        .filter(|l| {
            ["l.i0 ", "l.x ", "l.i1 ", "l.i2 ", "qr100 ", "qp100 "]
                .iter()
                .any(|s| l.starts_with(s))
        })
        .count();
    assert_eq!(rows, 6, "{stdout}");
    // Every step lasted under 3 s: one line says so, at the end, naming them all.
    let floor: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| l.contains("ibench check"))
        .collect();
    assert_eq!(floor.len(), 1, "{stdout}\n{stderr}");
    assert!(
        floor[0].contains("l.i0") && floor[0].contains("qp100"),
        "{}",
        floor[0]
    );
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
        libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT);
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
    ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let url = stdout.lines().last().unwrap_or("").trim().to_string();
    assert!(
        url.starts_with("postgres://") && !url.contains(' '),
        "{stdout}"
    );
    let handle = ibench::server::ServerHandle::load(&dir).unwrap();
    assert_eq!(handle.url, url);
    assert!(handle.is_running());
    // `server list` shows it: its dir, pid, port and URL.
    let list = ok(&ibench(&["server", "list"]));
    let line = list
        .lines()
        .find(|l| l.contains(dir.to_str().unwrap()))
        .unwrap_or_else(|| panic!("not listed:\n{list}"));
    assert!(line.starts_with("postgres "), "{line}");
    assert!(line.contains(" standalone "), "its role: {line}");
    assert!(
        line.contains(&handle.pid.to_string()) && line.ends_with(&url),
        "{line}"
    );
    assert!(line.contains(" MB "), "{line}");
    // The URL works for a run.
    let run_out = dir_run(&["--url", &url, "--steps", "l.i0", "--load-rows", "1000"]);
    let stop = ibench(&["server", "stop", "--dir", dir.to_str().unwrap()]);
    ok(&run_out);
    ok(&stop);
    assert!(!handle.is_running());
    // Stop says what it leaves, and leaves it; --remove deletes it.
    let said = String::from_utf8_lossy(&stop.stderr);
    assert!(said.contains("stopped the postgres server"), "{said}");
    assert!(
        said.contains("stays") && said.contains(" MB") && said.contains("--remove"),
        "{said}"
    );
    assert!(dir.join("data").is_dir());
    let list = ok(&ibench(&["server", "list"]));
    assert!(!list.contains(dir.to_str().unwrap()), "{list}");
    let remove = ibench(&["server", "stop", "--dir", dir.to_str().unwrap(), "--remove"]);
    ok(&remove);
    let said = String::from_utf8_lossy(&remove.stderr);
    assert!(
        said.contains("was not running") && said.contains("removed"),
        "{said}"
    );
    assert!(!dir.exists());
}

/// The one private MariaDB of this test binary.
fn mariadb_server() -> &'static ibench::server::ServerHandle {
    common::shared_server(
        ibench::server::ServerKind::Mariadb,
        ibench::results::target::Engine::Innodb,
    )
}

/// The one private Postgres of this test binary.
fn postgres_server() -> &'static ibench::server::ServerHandle {
    common::shared_server(
        ibench::server::ServerKind::Postgres,
        ibench::results::target::Engine::Innodb,
    )
}

/// Every regular file under `dir`, read as text.
fn files_text(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
                out.push((p, text));
            }
        }
    }
    out
}

/// A password written in --url (both `--url URL` and `--url=URL`) reaches no output and no
/// results file: run.json's command_line used to hold it in clear.
#[test]
fn a_password_in_the_url_is_in_no_output_and_no_file() {
    let server = postgres_server();
    let clear = common::client_url(&server.url);
    let password = std::fs::read_to_string(server.dir.join(ibench::server::PASSWORD_FILE))
        .unwrap()
        .trim_end()
        .to_string();
    assert!(clear.contains(&password));
    for form in ["separate", "joined"] {
        let out_dir = fresh_dir("cli-secret");
        let joined = format!("--url={clear}");
        let mut args = vec!["run", "--out", out_dir.to_str().unwrap()];
        match form {
            "separate" => args.extend(["--url", clear.as_str()]),
            _ => args.push(joined.as_str()),
        }
        args.extend(["--steps", "l.i0", "--load-rows", "1000"]);
        let out = ibench(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(!stdout.contains(&password) && !stderr.contains(&password));
        let files = files_text(&out_dir);
        assert!(files.iter().any(|(p, _)| p.ends_with("run.json")));
        for (path, text) in files {
            assert!(
                !text.contains(&password),
                "{form}: the password is in {}",
                path.display()
            );
        }
        let run = ibench::results::read_run(&out_dir).unwrap();
        assert!(
            run.command_line.iter().any(|a| a.contains("postgres:***@")),
            "{:?}",
            run.command_line
        );
    }
}

#[test]
fn fails_for_an_unreadable_password_file() {
    let out = dir_run(&[
        "--url",
        "postgres://postgres@127.0.0.1:1/postgres?password_file=/no/such/password",
    ]);
    assert_clear_error(&out, &["/no/such/password", "password_file=", "--url"]);
    // A file that cannot be read is failed work, not a wrong command line.
    assert_eq!(out.status.code(), Some(1));
}

/// `--bindir` without the server binary is refused, never replaced by the system's server
/// found in a sibling `../sbin` (`/nonexistent` → `/sbin/mariadbd` before).
#[test]
fn server_start_refuses_a_bindir_without_the_server() {
    for bindir in ["/nonexistent", "/usr/bin"] {
        let out = ibench(&["server", "start", "mariadb", "--bindir", bindir]);
        assert_clear_error(&out, &["--bindir", bindir, "mariadbd"]);
    }
}

/// `--server-pid` of a process that is not the server at --url is refused.
#[test]
fn fails_for_a_server_pid_that_is_not_the_server() {
    let server = postgres_server();
    let out = dir_run(&["--url", &server.url, "--steps", "l.i0", "--server-pid", "1"]);
    assert_clear_error(&out, &["--server-pid 1", &server.pid.to_string()]);
}

/// Start `ibench run ARGS` in the background (stdout and stderr discarded).
fn spawn_run(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_ibench"))
        .arg("run")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Send `signal` to the child.
fn signal(child: &std::process::Child, signal: i32) {
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(i32::try_from(child.id()).unwrap(), signal);
    }
}

/// Wait for the child to exit, at most `limit`; its exit code. Kills it when it overstays.
fn exit_code_within(child: &mut std::process::Child, limit: Duration) -> Option<i32> {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code();
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ibench did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Wait until `check` holds, at most `limit`.
fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// An admin connection to the shared private Postgres of this test binary.
fn pg_admin(db: &str) -> ibench::backend::postgres::wire::PgWire {
    common::pg_connect(&common::url_with_database(&postgres_server().url, db))
}

#[test]
fn fails_for_too_many_clients() {
    let out = dir_run(&["--url", &sqlite_url("cli-clients"), "--clients", "100000"]);
    assert_clear_error(&out, &["--clients 100000", "1024"]);
}

/// Ctrl-C while l.i0 creates a thousand tables (and then would open a thousand connections)
/// stops at once: it used to print "stopping" and carry on for minutes.
#[test]
fn ctrl_c_during_table_setup_stops_at_once() {
    // A server of its own that takes a thousand clients: a run refuses, before its first
    // step, more clients than the server's max_connections allows.
    let server = common::start_configured(
        ibench::server::ServerKind::Postgres,
        ibench::results::target::Engine::Innodb,
        "many-clients.conf",
        "max_connections = 1100\n",
    );
    common::register_server(server.clone());
    let url = common::new_database(&server, "cli_setup_stop");
    let out_dir = fresh_dir("cli-setup-stop");
    let mut child = spawn_run(&[
        "--url",
        &url,
        "--out",
        out_dir.to_str().unwrap(),
        "--steps",
        "l.i0",
        "--clients",
        "1000",
        "--load-rows",
        "100",
    ]);
    // run.json is written just before the first step's setup begins.
    assert!(wait_until(Duration::from_secs(30), || out_dir
        .join("run.json")
        .exists()));
    let mut admin = common::pg_connect(&common::url_with_database(&server.url, "cli_setup_stop"));
    let tables = |admin: &mut ibench::backend::postgres::wire::PgWire| -> i64 {
        common::pg_number(
            admin,
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'pi%'",
        )
    };
    assert!(wait_until(Duration::from_secs(30), || tables(&mut admin) > 0));
    signal(&child, libc::SIGINT);
    assert_eq!(
        exit_code_within(&mut child, Duration::from_secs(10)),
        Some(130)
    );
    let made = tables(&mut admin);
    assert!(
        made < 1000,
        "all {made} tables were made: the stop was ignored"
    );
    let run = interrupted_in_its_first_step(&out_dir);
    assert_eq!(run.steps.len(), 1);
}

/// Ctrl-C during l.x cancels the index build on the server. The build here waits on a lock
/// the test holds, so without the cancel it would never end.
#[test]
fn ctrl_c_during_l_x_cancels_the_index_build_on_the_server() {
    let url = common::new_database(postgres_server(), "cli_lx_stop");
    load_1000_rows(&url);
    let mut locker = pg_admin("cli_lx_stop");
    // EXCLUSIVE blocks CREATE INDEX (SHARE) but not the reads l.x does before it.
    locker
        .query("BEGIN; LOCK TABLE pi1 IN EXCLUSIVE MODE")
        .unwrap();
    let out_dir = fresh_dir("cli-lx-stop");
    let mut child = spawn_run(&[
        "--url",
        &url,
        "--out",
        out_dir.to_str().unwrap(),
        "--steps",
        "l.x",
    ]);
    let mut watcher = pg_admin("cli_lx_stop");
    let building = |w: &mut ibench::backend::postgres::wire::PgWire| -> i64 {
        common::pg_number(
            w,
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX%' AND state = 'active'",
        )
    };
    assert!(
        wait_until(Duration::from_secs(30), || building(&mut watcher) > 0),
        "the index build never started"
    );
    signal(&child, libc::SIGINT);
    let code = exit_code_within(&mut child, Duration::from_secs(10));
    assert_eq!(code, Some(130));
    assert_eq!(
        building(&mut watcher),
        0,
        "the CREATE INDEX still runs on the server"
    );
    let run = interrupted_in_its_first_step(&out_dir);
    assert_eq!(run.steps[0].error, None);
    locker.query("ROLLBACK").unwrap();
}

/// A second Ctrl-C exits at once, and run.json says interrupted, not running. The server is
/// frozen (SIGSTOP) so that the first stop cannot finish by itself.
#[test]
fn a_second_ctrl_c_leaves_run_json_interrupted() {
    let (code, _) = interrupt_a_frozen_server(2, Duration::from_secs(10), &[]);
    assert_eq!(code, Some(130));
}

/// One Ctrl-C against a server that never answers the cancel (frozen with SIGSTOP): the
/// cancel is bounded and, after a grace period, the run is recorded interrupted all the same
/// instead of waiting for ever.
#[test]
fn one_ctrl_c_against_a_server_that_ignores_the_cancel_still_ends_the_run() {
    let (code, stderr) = interrupt_a_frozen_server(1, Duration::from_secs(90), &[]);
    assert_eq!(code, Some(130), "{stderr}");
    // The waits give up at once (issue 44), or the stop bound gives up on them.
    assert!(
        stderr.contains("recorded interrupted") || stderr.contains("giving up"),
        "{stderr}"
    );
}

/// The same with 24 clients: their cancels (each waiting its whole 5 s on the frozen server)
/// go out at once, so the run ends as soon as with one client. One after another they took
/// 24 × 5 s before the 15 s grace (`--clients 8` once took 59 s to exit); now the stop is
/// bounded at 20 s whatever the client count.
#[test]
fn one_ctrl_c_with_many_clients_ends_the_run_in_bounded_time() {
    let (code, stderr) =
        interrupt_a_frozen_server(1, Duration::from_secs(60), &["--clients", "24"]);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("recorded interrupted") || stderr.contains("giving up"),
        "{stderr}"
    );
}

/// `pid` and its children (from `/proc`).
fn server_processes(pid: u32) -> Vec<i32> {
    let mut out = vec![i32::try_from(pid).unwrap()];
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The parent pid is the second field after the command's closing parenthesis.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if parent == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// Start l.i0 on a private server, freeze the server, send `sigints` SIGINTs and wait up to
/// `within` for the exit: its code and stderr. run.json must say interrupted.
fn interrupt_a_frozen_server(
    sigints: usize,
    within: Duration,
    extra: &[&str],
) -> (Option<i32>, String) {
    let server = common::start_server(
        ibench::server::ServerKind::Postgres,
        ibench::results::target::Engine::Innodb,
    );
    let out_dir = fresh_dir("cli-frozen-sigint");
    let log = fresh_dir("cli-frozen-sigint-log");
    std::fs::create_dir_all(&log).unwrap();
    let log = log.join("stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(["run", "--url", &server.url, "--out"])
        .arg(&out_dir)
        .args(["--steps", "l.i0", "--load-rows", "100000000"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let timeline = out_dir.join("timeline.jsonl");
    assert!(
        wait_for_line(&timeline, "\"l.i0\"", Duration::from_secs(60)),
        "l.i0 never started"
    );
    // The whole server, the postmaster and the backend serving the run, so that neither the
    // statement in flight nor the cancel request can end.
    let frozen = server_processes(server.pid);
    for pid in &frozen {
        // SAFETY: freezing the private server this test started.
        unsafe {
            libc::kill(*pid, libc::SIGSTOP);
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    for _ in 0..sigints {
        signal(&child, libc::SIGINT);
        std::thread::sleep(Duration::from_millis(500));
    }
    let code = exit_code_within(&mut child, within);
    for pid in &frozen {
        // SAFETY: thawing it again.
        unsafe {
            libc::kill(*pid, libc::SIGCONT);
        }
    }
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    let run = ibench::results::read_run(&out_dir).unwrap();
    assert_eq!(run.status, ibench::results::Status::Interrupted);
    assert!(run.ended_at.is_some());
    (code, stderr)
}

/// The same on MariaDB: Ctrl-C during l.x kills the `ALTER TABLE` with `KILL QUERY`. The
/// ALTER waits on the test's table lock, so without the kill it would never end.
#[test]
fn ctrl_c_during_l_x_kills_the_alter_on_mariadb() {
    let server = mariadb_server();
    let mut admin = common::my_connect(&server.url);
    admin
        .query("CREATE DATABASE IF NOT EXISTS cli_lx_my")
        .unwrap();
    let url = common::url_with_database(&server.url, "cli_lx_my");
    load_1000_rows(&url);
    let mut locker = common::my_connect(&common::url_with_database(&server.url, "cli_lx_my"));
    locker.query("LOCK TABLES pi1 READ").unwrap();
    let out_dir = fresh_dir("cli-lx-my");
    let mut child = spawn_run(&[
        "--url",
        &url,
        "--out",
        out_dir.to_str().unwrap(),
        "--steps",
        "l.x",
    ]);
    let mut altering = || -> u64 {
        admin
            .query(
                "SELECT count(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'ALTER TABLE pi1%'",
            )
            .unwrap()
            .first()
            .map_or(0, |n| n.parse().unwrap())
    };
    assert!(
        wait_until(Duration::from_secs(30), || altering() > 0),
        "the ALTER never started"
    );
    signal(&child, libc::SIGINT);
    assert_eq!(
        exit_code_within(&mut child, Duration::from_secs(10)),
        Some(130)
    );
    assert!(
        wait_until(Duration::from_secs(5), || altering() == 0),
        "the ALTER still runs on the server"
    );
    interrupted_in_its_first_step(&out_dir);
    locker.query("UNLOCK TABLES").unwrap();
}

/// A run that fails part-way still writes report.html of what it measured (it wrote none).
#[test]
fn a_failed_run_still_writes_its_report() {
    let out_dir = fresh_dir("cli-failed-report");
    // The table options break CREATE TABLE: l.i0 fails after run.json was written.
    let out = ibench(&[
        "run",
        "--quiet",
        "--url",
        &sqlite_url("cli-failed-report-db"),
        "--out",
        out_dir.to_str().unwrap(),
        "--steps",
        "l.i0",
        "--table-options",
        "THIS IS NOT SQL",
    ]);
    assert_clear_error(&out, &["l.i0"]);
    let run = ibench::results::read_run(&out_dir).unwrap();
    assert_eq!(run.status, ibench::results::Status::Failed);
    let html = std::fs::read_to_string(out_dir.join("report.html")).expect("report.html");
    assert!(html.contains("</html>"));
}

/// A SQLite file on a read-only filesystem was told "is the server running?".
#[test]
fn a_sqlite_file_on_a_read_only_filesystem_names_the_cause() {
    let mount = fresh_dir("cli-ro-fs");
    std::fs::create_dir_all(&mount).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"])
        .arg(&mount)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("cannot mount a read-only tmpfs here (not root?): skipping");
        return;
    }
    let url = format!("sqlite:{}", mount.join("x.db").display());
    let out = dir_run(&["--url", &url, "--steps", "l.i0"]);
    let _ = Command::new("umount").arg(&mount).status();
    assert_clear_error(&out, &["read-only filesystem", "--url"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("server running"));
}

/// `--query-rates` was silently ignored when `--steps` was given.
#[test]
fn query_rates_with_steps_is_refused() {
    let out = dir_run(&[
        "--url",
        &sqlite_url("cli-rates"),
        "--steps",
        "l.i0",
        "--query-rates",
        "200",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--steps") && stderr.contains("--query-rates"),
        "{stderr}"
    );
}

/// A flavour the URL's driver does not serve is refused in one line naming --flavour.
#[test]
fn fails_for_a_flavour_of_another_protocol() {
    let out = dir_run(&[
        "--url",
        "postgres://postgres@127.0.0.1:1/postgres",
        "--flavour",
        "tidb",
    ]);
    assert_clear_error(&out, &["--flavour tidb", "mysql://"]);
}

/// A URL given where clap does not expect it is quoted in the usage error: its password is
/// masked there too.
#[test]
fn a_misplaced_url_has_its_password_masked_in_the_usage_error() {
    let out = ibench(&["run", "postgres://u:secret@127.0.0.1:1/db"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(!stderr.contains("secret"), "{stderr}");
    assert!(stderr.contains("u:***@"), "{stderr}");
}

#[test]
fn profile_server_needs_a_server_process() {
    let db = sqlite_url("cli-profile");
    let out = run_url(&db, &["--steps", "l.i0", "--profile-server"]);
    assert_clear_error(&out, &["--profile-server", "SQLite"]);
    let out = run_url(&db, &["--profile-seconds", "5"]);
    assert_clear_error(&out, &["--profile-server"]);
    let out = run_url(
        "postgres://u@127.0.0.1:1/x",
        &["--profile-server", "--profile-seconds", "0"],
    );
    assert_clear_error(&out, &["--profile-seconds"]);
}

#[test]
fn perf_interval_is_checked() {
    let db = sqlite_url("cli-perf");
    // Without --perf it has nothing to pace.
    let out = run_url(&db, &["--perf-interval", "5"]);
    assert_clear_error(&out, &["--perf"]);
    for bad in ["0", "0.01", "-1", "inf"] {
        let out = run_url(
            &db,
            &[
                "--steps",
                "l.i0",
                "--perf",
                &format!("--perf-interval={bad}"),
            ],
        );
        assert_clear_error(&out, &["--perf-interval must be at least 0.1"]);
    }
}

#[test]
fn microbenchmark_steps_and_workload_flags_are_checked() {
    let db = sqlite_url("cli-micro");
    let out = run_url(&db, &["--steps", "point-query_range=100"]);
    assert_clear_error(&out, &["point-query_range=100", "--workload micro"]);
    let out = run_url(&db, &["--workload", "micro", "--steps", "l.i0"]);
    assert_clear_error(&out, &["l.i0", "--workload"]);
    let out = run_url(&db, &["--workload", "macro"]);
    assert_clear_error(&out, &["macro", "--workload"]);
    let out = run_url(&db, &["--workload", "micro", "--micro-rows", "0"]);
    assert_clear_error(&out, &["--micro-rows"]);
    let out = run_url(&db, &["--workload", "micro", "--steps", "nope_range=5"]);
    assert_clear_error(&out, &["nope_range=5", "--steps"]);
}

#[test]
fn docs_name_every_microbenchmark() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/micro.md")).unwrap();
    for step in ibench::workload::micro::MicroStep::suite() {
        let name = step.bench.name();
        assert!(
            doc.contains(&format!("`{name}")),
            "docs/micro.md lacks {name}"
        );
    }
}

#[test]
fn a_microbenchmark_without_its_tables_names_m_load() {
    let db = sqlite_url("cli-micro-load");
    let out = run_url(&db, &["--workload", "micro", "--steps", "scan_range=100"]);
    assert_clear_error(&out, &["sbtest1", "m.load"]);
}

/// The integrity check's flag is `--no-integrity-check`; `--no-check`, its old name, still
/// works (hidden), and both turn the check off in the recorded options.
#[test]
fn the_integrity_check_flag_and_its_old_name_both_turn_it_off() {
    for flag in ["--no-integrity-check", "--no-check"] {
        let tag = format!("cli-{}", flag.trim_start_matches('-'));
        let out_dir = fresh_dir(&tag);
        let out = run_url(
            &sqlite_url(&format!("{tag}-db")),
            &[
                flag,
                "--steps",
                "l.i0",
                "--load-rows",
                "100",
                "--host-probe-ms",
                "0",
                "--quiet",
                "--out",
                out_dir.to_str().unwrap(),
            ],
        );
        ok(&out);
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out_dir.join("run.json")).unwrap())
                .unwrap();
        assert_eq!(run["options"]["check"], false, "{flag}");
        assert!(
            run["steps"][0]["integrity"].is_null(),
            "{flag}: {}",
            run["steps"][0]
        );
    }
    let help = ok(&ibench(&["run", "--help"]));
    assert!(help.contains("--no-integrity-check"), "{help}");
}
