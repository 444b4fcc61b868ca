//! The defaults pass: `ibench server start` and `ibench run` through the binary, as a user
//! types them, with the `small` profile's sizes and settle budget, exit 0 on a default private
//! MariaDB (InnoDB and MyRocks) and PostgreSQL. Before issue 28, InnoDB's settle ran out of
//! the small profile's 2 s with thousands of dirty pages left, and the run exited 1.
//!
//! Each test runs l.i0, l.x, l.i1 and l.i2 (the steps the settle follows) at the profile's
//! sizes; the query steps add nothing the settle depends on. One test at a time: three runs
//! at once on two cores would each take three times as long.

mod common;
use common::ibench;

use std::path::PathBuf;
use std::sync::Mutex;

use ibench::results::{self, Status};
use ibench::workload::steps::Profile;

/// One of these tests at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A server started with `ibench server start`, stopped with `ibench server stop --dir` when
/// dropped (a failed test included).
struct Server {
    dir: PathBuf,
    url: String,
}

impl Server {
    fn start(args: &[&str], tag: &str) -> Server {
        let dir = common::fresh_dir(tag);
        let dir_arg = dir.to_string_lossy().to_string();
        let mut all = vec!["server", "start"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--dir", &dir_arg]);
        let out = ibench(&all);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "server start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = stdout
            .lines()
            .last()
            .expect("the URL line")
            .trim()
            .to_string();
        Server { dir, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let dir = self.dir.to_string_lossy().to_string();
        let out = ibench(&["server", "stop", "--dir", &dir]);
        if !std::thread::panicking() {
            assert!(
                out.status.success(),
                "server stop: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// `ibench run` of l.i0..l.i2 with the small profile's defaults against `server`; checks it
/// exits 0 with every step completed and no check failed, and returns its stderr and dir.
fn run_small(server: &Server, engine: Option<&str>, tag: &str) -> (String, PathBuf) {
    let out_dir = common::fresh_dir(tag);
    let out_arg = out_dir.to_string_lossy().to_string();
    let server_dir = server.dir.to_string_lossy().to_string();
    let mut args = vec!["run", "--url", &server.url, "--server-dir", &server_dir];
    if let Some(e) = engine {
        args.extend_from_slice(&["--engine", e]);
    }
    args.extend_from_slice(&["--steps", "l.i0,l.x,l.i1,l.i2", "--out", &out_arg]);
    let out = ibench(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "ibench run: {stderr}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let run = results::read_run(&out_dir).expect("run.json reads back");
    assert_eq!(run.status, Status::Completed, "{:?}", run.error);
    let small = Profile::small();
    assert_eq!(run.options.load_rows, small.load_rows);
    assert_eq!(run.options.settle_max_seconds, small.settle_max_seconds);
    for s in &run.steps {
        assert_eq!(s.status, Status::Completed, "{}: {:?}", s.name, s.error);
        assert!(
            s.check_failures.is_empty(),
            "{}: {:?}",
            s.name,
            s.check_failures
        );
    }
    let settle = run.steps[3].settle.as_ref().expect("l.i2 settled");
    assert!(!settle.actions.is_empty());
    assert!(
        settle.actions.iter().all(|a| a.error.is_none()),
        "{settle:?}"
    );
    if let Some(left) = &settle.unsettled {
        // Allowed (a busy host flushes slower), but it must say what was left, and the
        // summary line says so.
        eprintln!("{tag}: the settle ran out: {left}");
        assert!(settle.actions.iter().any(|a| a.unsettled.is_some()));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("UNSETTLED after"), "{stdout}");
        assert!(stderr.contains("budget ran out"), "{stderr}");
    }
    (stderr, out_dir)
}

fn lock() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How often stderr says `what`.
fn times(stderr: &str, what: &str) -> usize {
    stderr.matches(what).count()
}

#[test]
fn the_defaults_pass_on_a_default_mariadb_innodb() {
    let _one = lock();
    let server = Server::start(&["mariadb"], "defaults-innodb-server");
    let (stderr, _) = run_small(&server, Some("innodb"), "defaults-innodb-run");
    // MariaDB 10.11 starts with performance_schema off: l.x says so, once.
    assert_eq!(
        times(
            &stderr,
            "index build progress: not reported: performance_schema is off"
        ),
        1,
        "{stderr}"
    );
}

#[test]
fn the_defaults_pass_on_a_default_postgres() {
    let _one = lock();
    let server = Server::start(&["postgres"], "defaults-pg-server");
    let (stderr, _) = run_small(&server, None, "defaults-pg-run");
    assert_eq!(times(&stderr, "index build progress: not"), 0, "{stderr}");
}

#[test]
fn the_defaults_pass_on_a_default_mariadb_myrocks() {
    let _one = lock();
    let server = Server::start(&["mariadb", "--engine", "rocksdb"], "defaults-rocks-server");
    run_small(&server, Some("rocksdb"), "defaults-rocks-run");
}
