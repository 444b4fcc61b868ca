//! The common mistakes of a first hour with ibench (issue 53's list of 32), each answered in
//! one line that says what is wrong and what fixes it, with the exit status the README gives
//! (2 for a command line that is wrong, 1 for work that failed), and nothing left behind.
//! None needs a server: a mistake is answered before one is needed.

mod common;
use common::{fresh_dir, ibench};

use std::path::Path;
use std::process::{Command, Output};

/// A mistake: what the user typed, the exit status, and what the one error line must say.
struct Mistake {
    what: &'static str,
    args: Vec<String>,
    status: i32,
    says: &'static [&'static str],
}

fn mistake(
    what: &'static str,
    args: &[&str],
    status: i32,
    says: &'static [&'static str],
) -> Mistake {
    Mistake {
        what,
        args: args.iter().map(|a| (*a).to_string()).collect(),
        status,
        says,
    }
}

/// The last line of standard error is the one error line, and says every needle.
fn check(m: &Mistake, out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(m.status), "{}: {stderr}", m.what);
    assert!(!stderr.contains("panicked"), "{}: {stderr}", m.what);
    let last = stderr.lines().last().unwrap_or("");
    for n in m.says {
        assert!(last.contains(n), "{}: '{n}' not in: {last}", m.what);
    }
    assert!(
        !last.contains("secret"),
        "{}: a password shown: {last}",
        m.what
    );
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The mistakes of the command line, flags and URLs: none reaches a database.
#[test]
fn every_command_line_mistake_is_answered_with_its_fix() {
    let list = [
        mistake(
            "a flag mistyped",
            &["run", "--stpes", "l.i0"],
            2,
            &["'--steps'"],
        ),
        mistake(
            "a step mistyped",
            &["run", "--steps", "l.i0,qr10O"],
            2,
            &["did you mean 'qr100'?"],
        ),
        mistake(
            "a step that is not",
            &["run", "--steps", "l.i9"],
            2,
            &["unknown step 'l.i9'", "--steps"],
        ),
        mistake(
            "a step twice",
            &["run", "--steps", "l.i0,l.x,l.i0"],
            2,
            &["l.i0 is given twice"],
        ),
        mistake(
            "an unknown scheme",
            &["run", "--url", "oracle://scott@db/x"],
            2,
            &["unknown URL scheme", "--url"],
        ),
        mistake(
            "a libpq parameter mistyped",
            &[
                "run",
                "--url",
                "postgres://u:secret@127.0.0.1:1/db?sslmod=require",
            ],
            2,
            &["did you mean 'sslmode'?"],
        ),
        mistake(
            "a MySQL parameter mistyped",
            &[
                "run",
                "--url",
                "mysql://u:secret@127.0.0.1:1/db?ssl-mod=REQUIRED",
            ],
            2,
            &["did you mean 'ssl-mode'?"],
        ),
        mistake(
            "an empty host in a MySQL URL's list",
            &["run", "--url", "mysql://u@127.0.0.1:1,,127.0.0.1:2/db"],
            2,
            &["empty host in '127.0.0.1:1,,127.0.0.1:2'", "HOST:PORT"],
        ),
        mistake(
            "a port that is not, in a MySQL URL's list",
            &[
                "run",
                "--url",
                "mysql://u:secret@127.0.0.1:1,127.0.0.1:x/db",
            ],
            2,
            &["'x' is not a port (host 127.0.0.1 of --url)"],
        ),
        mistake(
            "a socket with several MySQL hosts",
            &[
                "run",
                "--url",
                "mysql://u@127.0.0.1:1,127.0.0.1:2/db?socket=/tmp/s",
            ],
            2,
            &["leave socket= out"],
        ),
        mistake(
            "a MySQL target_session_attrs that is not",
            &[
                "run",
                "--url",
                "mysql://u@127.0.0.1:1,127.0.0.1:2/db?target_session_attrs=primary",
            ],
            2,
            &["any, read-write or read-only"],
        ),
        mistake(
            "a TLS mode that is not",
            &["run", "--url", "postgres://u@127.0.0.1:1/db?sslmode=strict"],
            2,
            &["sslmode"],
        ),
        mistake(
            "a MySQL URL without a database",
            &["run", "--url", "mysql://u@127.0.0.1:1"],
            1,
            &["names no database"],
        ),
        mistake(
            "a host that does not exist",
            &[
                "run",
                "--url",
                "postgres://u:secret@nosuchhost.invalid:5432/db",
            ],
            1,
            &["no host named 'nosuchhost.invalid'", "--url"],
        ),
        mistake(
            "no server at the port",
            &["run", "--url", "postgres://u@127.0.0.1:1/db"],
            1,
            &["is the server running?", "ibench server start"],
        ),
        mistake(
            "a SQLite path without a file",
            &["run", "--url", "sqlite:"],
            2,
            &["no file path"],
        ),
        mistake(
            "a SQLite file in a missing directory",
            &["run", "--url", "sqlite:/nonexistent-ibench-dir/x.db"],
            1,
            &["does not exist", "--url"],
        ),
        mistake(
            "the URL without --url",
            &["run", "postgres://u:secret@h/db"],
            2,
            &["after --url"],
        ),
        mistake(
            "a profile that is not",
            &["run", "--profile", "huge"],
            2,
            &["small, cached, io-bound"],
        ),
        mistake(
            "no clients",
            &["run", "--clients", "0"],
            2,
            &["--clients must be at least 1"],
        ),
        mistake(
            "a query rate of 0",
            &["run", "--query-rates", "0"],
            2,
            &["--query-rates"],
        ),
        mistake(
            "rows that are not a number",
            &["run", "--load-rows", "abc"],
            2,
            &["--load-rows"],
        ),
        mistake("a flag without its value", &["run", "--out"], 2, &["--out"]),
        mistake(
            "queries on a replica without one",
            &["run", "--query-on", "replica"],
            2,
            &["needs --replica-url"],
        ),
        mistake(
            "quiet with details",
            &["run", "--details", "--quiet"],
            2,
            &["--details", "--quiet"],
        ),
        mistake(
            "a report format that is not",
            &["report", "x", "--format", "pdf"],
            2,
            &["possible values"],
        ),
        mistake(
            "a report of a path that is not",
            &["report", "/nonexistent-ibench-run"],
            1,
            &["no such directory"],
        ),
        mistake(
            "a server kind that is not",
            &["server", "start", "oracle"],
            2,
            &["postgres, mariadb"],
        ),
        mistake(
            "stopping a server that is not there",
            &["server", "stop", "--dir", "/nonexistent-ibench-server"],
            1,
            &["pass the --dir given to `ibench server start`"],
        ),
        mistake(
            "a matrix file that is not there",
            &["matrix", "plan", "/nonexistent-ibench.toml"],
            1,
            &["cannot read the matrix file"],
        ),
        mistake("no command", &[], 2, &[]),
    ];
    for m in &list {
        let args: Vec<&str> = m.args.iter().map(String::as_str).collect();
        check(m, &ibench(&args));
    }
}

/// `ibench report` on something that is not a run says what it is and what to give: a file,
/// a parent of runs (give them), a matrix's output (`ibench matrix report`).
#[test]
fn a_report_of_what_is_not_a_run_says_what_it_is() {
    let dir = fresh_dir("mistake-report");
    write(&dir.join("runs/a/run.json"), "{}");
    write(&dir.join("matrix/plan.json"), "{}");
    write(&dir.join("file.txt"), "x");
    let at = |p: &str| dir.join(p).display().to_string();
    for (what, path, says) in [
        (
            "a file",
            at("file.txt"),
            &["a file, not a results directory"][..],
        ),
        ("a parent of runs", at("runs"), &["holds 1 run", "/*`"][..]),
        (
            "a matrix's output",
            at("matrix"),
            &["`ibench matrix report "][..],
        ),
    ] {
        let m = Mistake {
            what,
            args: vec!["report".into(), path.clone()],
            status: 1,
            says,
        };
        check(&m, &ibench(&["report", &path]));
    }
}

/// A matrix file with a key set twice is told so, apart from a name used twice; a key
/// mistyped gets the nearest key.
#[test]
fn a_matrix_file_mistake_names_the_key() {
    let dir = fresh_dir("mistake-matrix");
    let server = "[servers.a]\nurl = \"sqlite:/tmp/{cell}.db\"\n";
    for (what, text, says) in [
        (
            "steps twice",
            format!("{server}[workloads.w]\nsteps = [\"l.i0\"]\nsteps = [\"l.x\"]\n"),
            &["`steps`", "set twice in one table"][..],
        ),
        (
            "a server named twice",
            format!("{server}[servers.a]\nurl = \"x\"\n[workloads.w]\n"),
            &["its own name"][..],
        ),
        (
            "a key mistyped",
            format!("{server}[workloads.w]\nload_bach = 10\n"),
            &["the nearest key is `load_batch`"][..],
        ),
    ] {
        let path = dir.join(format!("{}.toml", what.replace(' ', "-")));
        write(&path, &text);
        let m = Mistake {
            what,
            args: Vec::new(),
            status: 1,
            says,
        };
        check(&m, &ibench(&["matrix", "plan", path.to_str().unwrap()]));
    }
}

/// `ibench run` in `cwd` with `args`.
fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ibench"))
        .arg("run")
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("run ibench")
}

/// What a directory holds, names sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A run that fails before its first step (a query step on an empty database) leaves no
/// results directory and no database file, and names no report; a run refused because --out
/// holds a run made nothing first; the quick start's SQLite file is in its results directory.
#[test]
fn nothing_is_left_behind() {
    let cwd = fresh_dir("mistake-leftovers");
    std::fs::create_dir_all(&cwd).unwrap();
    let out = run_in(&cwd, &["--steps", "qr100"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    check(
        &Mistake {
            what: "a query step on an empty database",
            args: Vec::new(),
            status: 1,
            says: &["run l.i0 first"],
        },
        &out,
    );
    assert!(!stdout.contains("report:"), "{stdout}");
    assert!(listing(&cwd).is_empty(), "{:?}", listing(&cwd));

    let used = cwd.join("used");
    write(&used.join("run.json"), "{}");
    let db = cwd.join("new.db");
    let url = format!("sqlite:{}", db.display());
    let out = run_in(&cwd, &["--url", &url, "--out", used.to_str().unwrap()]);
    check(
        &Mistake {
            what: "--out holding a run",
            args: Vec::new(),
            status: 1,
            says: &["already holds a run", "--out"],
        },
        &out,
    );
    assert!(!db.exists(), "the refused run made its SQLite file");
    std::fs::remove_dir_all(&used).unwrap();

    let out = run_in(
        &cwd,
        &[
            "--steps",
            "l.i0",
            "--load-rows",
            "500",
            "--quiet",
            "--host-probe-ms",
            "0",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(listing(&cwd), ["ibench-results"]);
    let results = cwd.join("ibench-results");
    let run = results.join(&listing(&results)[0]);
    assert!(run.join("ibench.db").is_file() && run.join("run.json").is_file());
}
