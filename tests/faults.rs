//! Faults a run must survive in bounded time, keeping what it measured (issue 44): a server
//! that stalls outside a step (a fake server: at the describe, the sampler, `DROP TABLE`,
//! `CREATE TABLE`), one Ctrl-C at any moment, a frozen server (SIGSTOP, never resumed) and a
//! cut TCP path (real private PostgreSQL), the server's own data disk full (a tmpfs under a
//! private PostgreSQL, and MariaDB), two writers on one results directory, a results directory deleted or
//! full mid-run, and an ibench killed with SIGKILL. Each asserts the exit code, a generous time
//! bound and what run.json keeps.

mod common;
mod hostile;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::fresh_dir;
use hostile::{pg, serve_one};
use ibench::results::target::Engine;
use ibench::results::{self, Status};
use ibench::server::ServerKind;

/// Generous: a busy 2-core host must not make these flaky.
const ENDS_WITHIN: Duration = Duration::from_secs(60);

/// `ibench run ARGS` started with its stderr piped.
fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ibench"))
        .arg("run")
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ibench")
}

/// `ibench run --url URL --out DIR ARGS` into a fresh results dir named by `tag`, its stderr
/// watched; and that dir.
fn watch_run(url: &str, tag: &str, args: &[&str]) -> (Watched, PathBuf) {
    let out = fresh_dir(tag);
    (watch_run_into(url, &out, args), out)
}

/// `ibench run --url URL --out OUT ARGS`, its stderr watched.
fn watch_run_into(url: &str, out: &Path, args: &[&str]) -> Watched {
    let mut all = vec!["--url", url, "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    Watched::new(spawn(&all))
}

/// The stderr of `child` line by line on a thread; `seen(text)` until then.
struct Watched {
    child: Child,
    lines: Arc<std::sync::Mutex<Vec<String>>>,
    started: Instant,
}

impl Watched {
    fn new(mut child: Child) -> Watched {
        let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
        let err = child.stderr.take().unwrap();
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Watched {
            child,
            lines,
            started: Instant::now(),
        }
    }

    fn text(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    /// Wait until stderr holds `needle` (panics after [`ENDS_WITHIN`]).
    fn wait_for(&self, needle: &str) {
        let until = Instant::now() + ENDS_WITHIN;
        while !self.text().contains(needle) {
            assert!(Instant::now() < until, "no {needle:?} in: {}", self.text());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal(&self, sig: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(pid, sig) };
    }

    /// The exit, which must be `code` within [`ENDS_WITHIN`]: stderr and the time it took.
    fn ends_with(self, code: i32) -> (String, Duration) {
        let (got, err, took) = self.ends();
        assert_eq!(got, code, "{err}");
        (err, took)
    }

    /// The exit code, which must come within [`ENDS_WITHIN`]; stderr.
    fn ends(mut self) -> (i32, String, Duration) {
        let until = Instant::now() + ENDS_WITHIN;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(100));
                let code = status.code().unwrap_or(-1);
                return (code, self.text(), self.started.elapsed());
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                panic!("ibench did not end within {ENDS_WITHIN:?}: {}", self.text());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A fake PostgreSQL that logs the client in and then never answers anything.
fn pg_that_logs_in_and_goes_silent() -> hostile::Fake<Option<()>> {
    serve_one(|mut s| {
        pg::accept_login(&mut s, 7, 7)?;
        // Read (and ignore) what comes until the client gives up.
        let mut sink = [0u8; 4096];
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
        Some(())
    })
}

/// The describe (`SHOW server_version`) to a server that never answers ends at the stall
/// limit with its line, before anything is written.
#[test]
fn a_describe_never_answered_ends_at_the_stall_limit() {
    let fake = pg_that_logs_in_and_goes_silent();
    let url = format!("postgres://u@127.0.0.1:{}/db", fake.port);
    let (run, out) = watch_run(&url, "faults-describe", &["--quiet", "--stall-limit", "2"]);
    let (err, _) = run.ends_with(1);
    assert!(err.contains("no reply from the server for 2 s"), "{err}");
    assert!(err.contains("--stall-limit"), "{err}");
    assert!(!err.contains("fix --url"), "{err}");
    assert!(!out.join("run.json").exists());
}

/// One Ctrl-C while the describe waits on a silent server (no stall limit: it would wait for
/// ever) ends ibench with 130, saying nothing was recorded, and never "interrupted again".
#[test]
fn one_ctrl_c_during_the_describe_ends_the_run() {
    let fake = pg_that_logs_in_and_goes_silent();
    let url = format!("postgres://u@127.0.0.1:{}/db", fake.port);
    let (run, _) = watch_run(&url, "faults-ctrl-c", &["--stall-limit", "0"]);
    std::thread::sleep(Duration::from_millis(1500));
    run.signal(libc::SIGINT);
    let (err, _) = run.ends_with(130);
    assert!(err.contains("interrupted before the run started"), "{err}");
    assert!(!err.contains("interrupted again"), "{err}");
}

/// A private PostgreSQL of this test's own (it is frozen or killed).
fn own_postgres() -> ibench::server::ServerHandle {
    common::start_server(ServerKind::Postgres, Engine::Innodb)
}

/// The server's processes: its main pid and every descendant.
fn server_tree(handle: &ibench::server::ServerHandle) -> Vec<i32> {
    let root = handle.pid;
    let mut pids = vec![i32::try_from(root).unwrap()];
    let mut i = 0;
    while i < pids.len() {
        let parent = pids[i];
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat
                .rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().nth(1))
                .and_then(|p| p.parse::<i32>().ok());
            if ppid == Some(parent) && !pids.contains(&pid) {
                pids.push(pid);
            }
        }
        i += 1;
    }
    pids
}

fn signal_all(pids: &[i32], sig: libc::c_int) {
    for &p in pids {
        // SAFETY: kill(2) on the test's own server processes.
        unsafe { libc::kill(p, sig) };
    }
}

/// The arguments of a small run (l.i0 of 20,000 rows, l.x, then a query step of
/// `query_seconds`, 30 being long enough to be frozen in), then `extra`.
fn small_run<'a>(query_seconds: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--steps",
        "l.i0,l.x,qr100",
        "--load-rows",
        "20000",
        "--query-seconds",
        query_seconds,
        "--host-probe-ms",
        "0",
    ];
    args.extend_from_slice(extra);
    args
}

/// A server frozen mid-run (SIGSTOP, never resumed): the step fails with "no reply from the
/// server for N s" at the stall limit, run.json says failed, and the steps before are kept.
#[test]
fn a_frozen_server_fails_the_step_at_the_stall_limit_keeping_the_steps_before() {
    let _one = common::one_at_a_time();
    let server = own_postgres();
    let args = small_run("30", &["--stall-limit", "3"]);
    let (run, out) = watch_run(&server.url, "faults-freeze", &args);
    run.wait_for(" idx rows/s"); // l.x ended (its line, not the banner's list of steps)
    // Into the query step, its connections open.
    std::thread::sleep(Duration::from_secs(3));
    let tree = server_tree(&server);
    signal_all(&tree, libc::SIGSTOP);
    let (code, err, _) = run.ends();
    signal_all(&tree, libc::SIGKILL);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no reply from the server for 3 s"), "{err}");
    assert!(
        err.contains("kept: l.i0, l.x completed (recorded in"),
        "{err}"
    );
    let record = results::read_run(&out).unwrap();
    assert_eq!(record.status, Status::Failed);
    assert!(
        record
            .error
            .as_deref()
            .is_some_and(|e| e.contains("no reply from the server for 3 s")),
        "{:?}",
        record.error
    );
    let names: Vec<String> = record.steps.iter().map(|s| s.name.to_string()).collect();
    assert_eq!(names, ["l.i0", "l.x", "qr100"]);
    assert_eq!(record.steps[0].status, Status::Completed);
    assert_eq!(record.steps[2].status, Status::Failed);
    assert!(
        record.steps[2].ops.contains_key("range_query"),
        "measured ops kept"
    );
}

/// A TCP forwarder from a loopback port to `to`; `cut` closes every connection through it.
fn forwarder(to: u16, cut: Arc<AtomicBool>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else {
                continue;
            };
            for (mut a, mut b) in [
                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                (server, client),
            ] {
                let cut = Arc::clone(&cut);
                std::thread::spawn(move || {
                    a.set_read_timeout(Some(Duration::from_millis(100))).ok();
                    let mut buf = [0u8; 16384];
                    loop {
                        if cut.load(Ordering::SeqCst) {
                            let _ = a.shutdown(std::net::Shutdown::Both);
                            let _ = b.shutdown(std::net::Shutdown::Both);
                            return;
                        }
                        match a.read(&mut buf) {
                            Ok(0) => return,
                            Ok(n) => {
                                if b.write_all(&buf[..n]).is_err() {
                                    return;
                                }
                            }
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                            Err(_) => return,
                        }
                    }
                });
            }
        }
    });
    port
}

/// The TCP path cut mid-run (the forwarder closes every connection): the step fails at once
/// with a lost connection, not "fix --url" advice, and the steps before are kept.
#[test]
fn a_cut_tcp_path_fails_the_step_as_a_lost_connection() {
    let _one = common::one_at_a_time();
    let server = common::shared_server(ServerKind::Postgres, Engine::Innodb);
    let cut = Arc::new(AtomicBool::new(false));
    let port = forwarder(server.port, Arc::clone(&cut));
    let url = server
        .url
        .replace(&format!(":{}/", server.port), &format!(":{port}/"));
    let (run, out) = watch_run(&url, "faults-cut", &small_run("30", &[]));
    run.wait_for(" idx rows/s"); // l.x ended (its line, not the banner's list of steps)
    std::thread::sleep(Duration::from_secs(3));
    cut.store(true, Ordering::SeqCst);
    let (err, _) = run.ends_with(1);
    assert!(err.contains("lost the connection"), "{err}");
    assert!(!err.contains("fix --url"), "{err}");
    let record = results::read_run(&out).unwrap();
    assert_eq!(record.status, Status::Failed);
    assert_eq!(record.steps[0].status, Status::Completed);
}

fn sqlite_url(dir: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    format!("sqlite:{}", dir.join("db.sqlite").display())
}

/// A second run into a results directory another run writes is refused, naming its pid; the
/// first goes on undisturbed. Then ibench killed with SIGKILL leaves run.json `running`, which
/// `ibench report` reads as ended without finishing.
#[test]
fn one_directory_takes_one_writer_and_a_killed_writer_is_read_as_unfinished() {
    let db = fresh_dir("faults-writers-db");
    let url = sqlite_url(&db);
    let (first, out) = watch_run(&url, "faults-writers", &small_run("30", &[]));
    first.wait_for(" ins/s"); // l.i0 ended (its line, not the banner's list of steps)
    let second = common::ibench(&["run", "--url", &url, "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("is in use by ibench pid {}", first.child.id())),
        "{err}"
    );
    first.signal(libc::SIGKILL);
    first.ends_with(-1); // killed
    let record = results::read_run(&out).unwrap();
    assert_eq!(record.status, Status::Running, "as the killed run left it");
    let why = results::dir::unfinished(&out, &record).expect("read as unfinished");
    assert!(why.starts_with("ended without finishing"), "{why}");
    let report = common::ibench(&["report", "--format", "json", out.to_str().unwrap()]);
    let text = common::ok(&report);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["runs"][0]["status"], "failed", "{text}");
}

/// The results directory deleted mid-run: made again with a warning of what was lost, and
/// run.json keeps every step.
#[test]
fn a_results_directory_deleted_mid_run_is_made_again_with_a_warning() {
    let db = fresh_dir("faults-deleted-db");
    let url = sqlite_url(&db);
    let (run, out) = watch_run(&url, "faults-deleted", &small_run("4", &[]));
    run.wait_for(" idx rows/s"); // l.x ended (its line, not the banner's list of steps)
    std::thread::sleep(Duration::from_millis(500));
    std::fs::remove_dir_all(&out).unwrap();
    let (err, _) = run.ends_with(0);
    assert!(err.contains("was deleted during the run"), "{err}");
    let record = results::read_run(&out).unwrap();
    assert_eq!(record.status, Status::Completed);
    assert_eq!(record.steps.len(), 3);
    assert!(
        record.warnings.iter().any(|w| w.contains("deleted")),
        "{:?}",
        record.warnings
    );
}

/// A small tmpfs at `dir`, or `None` when this host cannot mount one (not root): the test
/// then says so and checks nothing.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, options: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs", dir.to_str()?])
            .status()
            .ok()?
            .success();
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// A results filesystem that fills up mid-run: the run fails naming the file and the fix, and
/// its record is saved elsewhere; a read-only one is refused at the start, naming the fix.
#[test]
fn a_full_or_read_only_results_filesystem_is_named_with_its_fix() {
    let db = fresh_dir("faults-full-db");
    let url = sqlite_url(&db);
    let mount = fresh_dir("faults-full");
    let Some(fs) = Tmpfs::mount(&mount, "size=2m") else {
        eprintln!("cannot mount a tmpfs here (not root?): the full-disk case is not checked");
        return;
    };
    let out = fs.0.join("run");
    let args = ["--steps", "l.i0,l.x,qr100,qp100", "--load-rows", "20000"];
    let run = watch_run_into(&url, &out, &[&args[..], &["--query-seconds", "3"]].concat());
    run.wait_for(" ins/s"); // l.i0 ended (its line, not the banner's list of steps)
    let rescue = std::env::temp_dir().join(format!("ibench-run-{}.json", run.child.id()));
    // Fill what is left.
    let mut filler = std::fs::File::create(fs.0.join("filler")).unwrap();
    while filler.write_all(&[0u8; 65536]).is_ok() {}
    let (err, _) = run.ends_with(1);
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("free space on it"), "{err}");
    // The final record went where it could: run.json, or the rescue file the error names.
    let record = match results::read_run(&out) {
        Ok(r) if r.status != Status::Running => r,
        _ => {
            assert!(err.contains(&rescue.display().to_string()), "{err}");
            let text = std::fs::read_to_string(&rescue).unwrap();
            let _ = std::fs::remove_file(&rescue);
            serde_json::from_str(&text).unwrap()
        }
    };
    assert_eq!(record.status, Status::Failed);
    assert_eq!(record.steps[0].status, Status::Completed, "l.i0 kept");
    drop(filler);
    drop(fs);
    let ro = fresh_dir("faults-ro");
    let Some(ro_fs) = Tmpfs::mount(&ro, "ro,size=1m") else {
        return;
    };
    let refused = common::ibench(&["run", "--url", &url, "--out", ro_fs.0.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(err.contains("read-only"), "{err}");
    assert!(err.contains("--out"), "{err}");
}

/// A private PostgreSQL whose instance dir is on a tmpfs of its own; dropped, it empties the
/// tmpfs's filler, stops the server and unmounts.
struct ServerOnTmpfs {
    server: ibench::server::ServerHandle,
    fs: Tmpfs,
}

impl ServerOnTmpfs {
    /// A private server of `kind` on a tmpfs of `size`, `None` where no tmpfs can be mounted:
    /// its data files, not its log, fill the disk (PostgreSQL: 1 MB WAL segments and at most
    /// 4 MB of WAL; MariaDB: a 4 MB redo log).
    fn start(kind: ServerKind, tag: &str, size: &str) -> Option<ServerOnTmpfs> {
        let fs = Tmpfs::mount(&fresh_dir(tag), &format!("size={size}"))?;
        let conf = fresh_dir(&format!("{tag}-conf"));
        std::fs::create_dir_all(&conf).unwrap();
        let (name, settings, init_args) = match kind {
            ServerKind::Postgres => (
                "small-wal.conf",
                "min_wal_size = 2MB\nmax_wal_size = 4MB\n",
                vec!["--wal-segsize=1".to_string()],
            ),
            ServerKind::Mariadb => (
                "small-log.cnf",
                "[mysqld]\ninnodb_log_file_size = 4M\ninnodb_buffer_pool_size = 16M\n",
                Vec::new(),
            ),
        };
        let config = conf.join(name);
        std::fs::write(&config, settings).unwrap();
        let server = ibench::server::start(&ibench::server::ServerSpec {
            kind,
            config: Some(config),
            dir: Some(fs.0.join("server")),
            init_args,
            ..ibench::server::ServerSpec::default()
        })
        .unwrap_or_else(|e| panic!("a private {kind:?} on a tmpfs starts: {e:#}"));
        Some(ServerOnTmpfs { server, fs })
    }

    /// Fill what is left of the tmpfs.
    fn fill(&self) {
        let mut filler = std::fs::File::create(self.fs.0.join("filler")).unwrap();
        while filler.write_all(&[0u8; 65536]).is_ok() {}
    }
}

impl Drop for ServerOnTmpfs {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.fs.0.join("filler"));
        let _ = self.server.stop();
    }
}

/// The server's own data disk fills mid-run (a tmpfs under its data dir): the step fails with
/// one line that names the server's disk and the fix, the steps before are kept, exit 1.
#[test]
fn the_servers_own_disk_full_is_named_and_the_steps_before_are_kept() {
    server_disk_fills(
        ServerKind::Postgres,
        "64m",
        "No space left on device (SQLSTATE 53100)",
    );
}

/// The same on MariaDB (InnoDB), whose full disk is "The table is full" (error 1114).
#[test]
fn mariadbs_own_disk_full_is_named_too() {
    server_disk_fills(ServerKind::Mariadb, "160m", "ERROR 1114");
}

/// A private server of `kind` on a tmpfs of `size` that fills after l.x; the error line says
/// `says` beside the server's disk and the fix.
fn server_disk_fills(kind: ServerKind, size: &str, says: &str) {
    let Some(on_tmpfs) = ServerOnTmpfs::start(kind, "faults-server-disk", size) else {
        eprintln!("cannot mount a tmpfs here (not root?): the server's full disk is not checked");
        return;
    };
    let args = [
        "--steps",
        "l.i0,l.x,l.i1",
        "--load-rows",
        "5000",
        "--i1-rows",
        "10000000",
        "--host-probe-ms",
        "0",
    ];
    let (run, out) = watch_run(&on_tmpfs.server.url, "faults-server-disk-run", &args);
    run.wait_for(" idx rows/s"); // l.x ended (its line, not the banner's list of steps)
    on_tmpfs.fill();
    let (err, _) = run.ends_with(1);
    let line = err
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("no error line in: {err}"));
    assert!(
        line.contains("the server's own disk is full")
            && line.contains(says)
            && line.contains("free space on the disk that holds the server's data directory"),
        "{err}"
    );
    assert!(err.contains("kept: l.i0, l.x completed"), "{err}");
    let record = results::read_run(&out).unwrap();
    assert_eq!(record.status, Status::Failed);
    let names: Vec<String> = record.steps.iter().map(|s| s.name.to_string()).collect();
    assert_eq!(names, ["l.i0", "l.x", "l.i1"]);
    assert_eq!(record.steps[1].status, Status::Completed);
    assert_eq!(record.steps[2].status, Status::Failed);
    assert!(
        record.steps[2].ops.contains_key("insert"),
        "measured ops kept"
    );
}

/// Too few `max_connections` for a step is refused before the first step, naming the fix,
/// not found mid-run.
#[test]
fn too_few_max_connections_are_refused_before_the_first_step() {
    let server = common::start_configured(
        ServerKind::Postgres,
        Engine::Innodb,
        "few.conf",
        "max_connections = 10\n",
    );
    common::register_server(server.clone());
    let out = fresh_dir("faults-max-conn");
    let done = common::ibench(&[
        "run",
        "--url",
        &server.url,
        "--out",
        out.to_str().unwrap(),
        "--clients",
        "4",
        "--quiet",
    ]);
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{err}");
    assert!(
        err.contains("opens 14 connections at once (--clients 4)")
            && err.contains("max_connections"),
        "{err}"
    );
    // No step ran: the run leaves no results directory (issue 53).
    assert!(
        !out.exists(),
        "a run that failed before its first step left {}",
        out.display()
    );
}

/// A matrix locks its --out: a second `matrix run` into it is refused, naming the holder
/// (here this test, which holds the lock), instead of taking its running cell for abandoned.
#[test]
fn a_second_matrix_into_one_out_is_refused() {
    let dir = fresh_dir("faults-matrix");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.toml");
    std::fs::write(
        &file,
        format!(
            "[servers.lite]\nurl = \"sqlite:{}/{{cell}}.db\"\n[workloads.tiny]\nload_rows = 100\nsteps = [\"l.i0\"]\n",
            dir.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let _held = results::dir::DirLock::take(&out, "--out").unwrap();
    let refused = common::matrix_run(&file, &out, &[]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("is in use by ibench pid {}", std::process::id())),
        "{err}"
    );
    assert!(!out.join("cells").exists(), "nothing written");
}

/// One Ctrl-C while the login waits on a frozen server (SIGSTOP, never resumed; no stall
/// limit): the run ends all the same, within the stop bound, exit 130, saying nothing was
/// recorded.
#[test]
fn one_ctrl_c_during_a_login_to_a_frozen_server_ends_within_the_stop_bound() {
    let server = own_postgres();
    let tree = server_tree(&server);
    signal_all(&tree, libc::SIGSTOP);
    let (run, out) = watch_run(&server.url, "faults-frozen-login", &["--stall-limit", "0"]);
    std::thread::sleep(Duration::from_secs(1));
    run.signal(libc::SIGINT);
    let (code, err, took) = run.ends();
    signal_all(&tree, libc::SIGKILL);
    assert_eq!(code, 130, "{err}");
    assert!(took < ENDS_WITHIN, "{took:?}");
    assert!(err.contains("nothing was recorded"), "{err}");
    assert!(!err.contains("interrupted again"), "{err}");
    assert!(!out.join("run.json").exists());
}

/// A small run against `url` that must complete with every check passed (its side
/// connections sit idle through a 4 s query step).
fn completes_with_every_check(url: &str, tag: &str) {
    let out = fresh_dir(tag);
    let done = common::ibench(&[
        "run",
        "--url",
        url,
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "l.i0,l.x,qr100",
        "--load-rows",
        "5000",
        "--query-seconds",
        "4",
        "--host-probe-ms",
        "0",
        "--quiet",
    ]);
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(0), "{err}");
    let record = results::read_run(&out).unwrap();
    assert_eq!(record.status, Status::Completed);
    for s in &record.steps {
        assert!(
            s.check_failures.is_empty(),
            "{}: {:?}",
            s.name,
            s.check_failures
        );
    }
    assert!(record.steps[2].integrity.as_ref().is_some_and(|i| i.ok));
}

/// The server closes idle connections after 2 s (`idle_session_timeout`): the side
/// connections (the integrity checks', the sampler's) open again once and the run completes
/// with every check passed, instead of failing each later check with a long error.
#[test]
fn side_connections_closed_while_idle_open_again() {
    let server = common::start_configured(
        ServerKind::Postgres,
        Engine::Innodb,
        "idle.conf",
        "idle_session_timeout = 2000\n",
    );
    common::register_server(server.clone());
    completes_with_every_check(&server.url, "faults-idle");
}

/// The same on MariaDB, whose `wait_timeout` closes an idle connection without a word.
#[test]
fn side_connections_closed_by_wait_timeout_open_again() {
    let server = common::start_configured(
        ServerKind::Mariadb,
        Engine::Innodb,
        "idle.cnf",
        "[mysqld]\nwait_timeout = 2\n",
    );
    common::register_server(server.clone());
    completes_with_every_check(&server.url, "faults-idle-mariadb");
}

/// A reply of one text row holding `value` to a simple query.
fn pg_one_row(value: &str) -> Vec<u8> {
    let mut t = 1i16.to_be_bytes().to_vec();
    t.extend_from_slice(b"v\0");
    t.extend_from_slice(&0i32.to_be_bytes());
    t.extend_from_slice(&0i16.to_be_bytes());
    t.extend_from_slice(&25i32.to_be_bytes());
    t.extend_from_slice(&(-1i16).to_be_bytes());
    t.extend_from_slice(&(-1i32).to_be_bytes());
    t.extend_from_slice(&0i16.to_be_bytes());
    let mut d = 1i16.to_be_bytes().to_vec();
    d.extend_from_slice(&i32::try_from(value.len()).unwrap().to_be_bytes());
    d.extend_from_slice(value.as_bytes());
    let mut m = pg::msg(b'T', &t);
    m.extend(pg::msg(b'D', &d));
    m.extend(pg::msg(b'C', b"SELECT 1\0"));
    m.extend(pg::msg(b'Z', b"I"));
    m
}

/// A fake PostgreSQL 15 that logs every client in and answers what the describe asks (its
/// version), then nothing else: the sampler's first queries and the setup's `DROP TABLE`
/// wait on it.
fn pg_that_answers_only_the_describe() -> hostile::Fake<()> {
    pg_that_answers_the_describe_and(&[])
}

/// A fake PostgreSQL 15 that answers the describe and the simple queries that start with one
/// of `answered` (an empty command-complete), and nothing else.
fn pg_that_answers_the_describe_and(answered: &'static [&'static str]) -> hostile::Fake<()> {
    hostile::serve(move |l| {
        while let Some(mut s) = l.accept() {
            std::thread::spawn(move || {
                pg::accept_login(&mut s, 7, 7)?;
                while let Some((tag, body)) = pg::read_msg(&mut s) {
                    let sql = String::from_utf8_lossy(&body);
                    if tag == b'X' {
                        break;
                    }
                    if tag == b'Q' && sql.contains("server_version_num") {
                        s.write_all(&pg_one_row("150000")).ok()?;
                    } else if tag == b'Q' && sql.contains("server_version") {
                        s.write_all(&pg_one_row("15.0")).ok()?;
                    } else if tag == b'Q' && sql.contains("version()") {
                        s.write_all(&pg_one_row("PostgreSQL 15.0 on x86_64")).ok()?;
                    } else if tag == b'Q' && answered.iter().any(|a| sql.starts_with(a)) {
                        let mut done = pg::msg(b'C', b"OK\0");
                        done.extend(pg::msg(b'Z', b"I"));
                        s.write_all(&done).ok()?;
                    }
                }
                Some(())
            });
        }
    })
}

/// The stall points after the describe, outside any step: the sampler's first queries end
/// at the stall limit (its figures n/a), and so does the setup's `DROP TABLE`: l.i0 fails
/// with "no reply from the server for 2 s" and run.json says failed.
#[test]
fn the_sampler_and_setup_never_answered_end_at_the_stall_limit() {
    let fake = pg_that_answers_only_the_describe();
    let out = setup_stalls(fake.port, "faults-setup", "drop table pi1");
    let record = results::read_run(&out).unwrap();
    assert_eq!(record.status, Status::Failed);
    assert_eq!(record.steps.len(), 1, "l.i0, failed in its setup");
    assert_eq!(record.steps[0].status, Status::Failed);
    assert!(
        record.steps[0]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("no reply from the server for 2 s")),
        "{:?}",
        record.steps[0].error
    );
}

/// A run against the fake server on `port` with a stall limit of 2 s: it ends with exit 1 and
/// one line that names what waited (`waited`) and the stall limit; its results dir.
fn setup_stalls(port: u16, tag: &str, waited: &str) -> PathBuf {
    let url = format!("postgres://u@127.0.0.1:{port}/db");
    let args = ["--stall-limit", "2", "--host-probe-ms", "0"];
    let (run, out) = watch_run(&url, tag, &args);
    let (err, _) = run.ends_with(1);
    let line = err
        .lines()
        .find(|l| l.contains("no reply from the server for 2 s"))
        .unwrap_or_else(|| panic!("no stall line in: {err}"));
    assert!(
        line.contains(waited) && line.contains("--stall-limit"),
        "{err}"
    );
    out
}

/// The setup answered up to `CREATE TABLE`, which never is: l.i0 fails in its setup at the
/// stall limit with one line naming the statement, and run.json says failed.
#[test]
fn a_create_table_never_answered_ends_at_the_stall_limit() {
    let fake = pg_that_answers_the_describe_and(&["DROP TABLE"]);
    let out = setup_stalls(fake.port, "faults-create", "create table pi1");
    let record = results::read_run(&out).unwrap();
    assert_eq!(record.status, Status::Failed);
    assert_eq!(record.steps.len(), 1, "l.i0, failed in its setup");
    let error = record.steps[0].error.as_deref().unwrap_or_default();
    assert!(error.contains("create table pi1"), "{error}");
}

/// One Ctrl-C while the sampler's first query waits on a server that never answers (no
/// stall limit): the wait gives up, run.json is written and says interrupted, exit 130.
#[test]
fn one_ctrl_c_while_the_sampler_waits_records_the_run_interrupted() {
    let fake = pg_that_answers_only_the_describe();
    let url = format!("postgres://u@127.0.0.1:{}/db", fake.port);
    let args = ["--stall-limit", "0", "--host-probe-ms", "0"];
    let (run, out) = watch_run(&url, "faults-sampler-ctrl-c", &args);
    std::thread::sleep(Duration::from_millis(1500));
    run.signal(libc::SIGINT);
    let (err, _) = run.ends_with(130);
    assert!(!err.contains("interrupted again"), "{err}");
    let record = results::read_run(&out).unwrap();
    assert_eq!(record.status, Status::Interrupted, "{err}");
}
