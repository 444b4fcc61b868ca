//! Shared helpers of the integration tests: private servers started with ibench's own server
//! code (one per test binary, stopped at exit), small run options, and the checks every full
//! run must pass.

#![allow(dead_code)]

use ibench::stats::convert::count_f64;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Mutex, OnceLock};

use ibench::results::target::Engine;
use ibench::results::{self, RunRecord, Status};
use ibench::runner::RunOptions;
use ibench::server::{self, ServerHandle, ServerKind, ServerSpec};
use ibench::workload::plan::StepPlan;
use ibench::workload::steps::{Profile, StepName};

/// Run the ibench binary built for these tests with `args` (no colours, no CI step summary),
/// and wait for it.
pub fn ibench(args: &[&str]) -> Output {
    ibench_with_env(args, &[])
}

/// [`ibench`] with `env` set on top.
pub fn ibench_with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ibench"));
    c.args(args)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run ibench")
}

/// `ibench matrix run FILE --out DIR` with `extra` arguments.
pub fn matrix_run(file: &Path, out_dir: &Path, extra: &[&str]) -> Output {
    let (file, out_dir) = (file.to_str().unwrap(), out_dir.to_str().unwrap());
    ibench(&[&["matrix", "run", file, "--out", out_dir][..], extra].concat())
}

/// Debian's PostgreSQL 15, which must be installed.
pub fn pg15_bindir() -> PathBuf {
    let dir = PathBuf::from("/usr/lib/postgresql/15/bin");
    assert!(
        dir.join("postgres").is_file(),
        "PostgreSQL 15 is missing (apt-get install postgresql; ./scripts/test.sh does it)"
    );
    dir
}

/// Asserts that the command succeeded (its stderr in the message); its stdout.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether the step writes rows (and so gets an integrity check), as its plan says.
fn writes_rows(run: &RunRecord, step: &results::StepRecord) -> bool {
    StepPlan::for_step(step.name, &run.options.step_sizes()).writes_rows()
}

/// Servers this test binary started; stopped when the process exits.
static STARTED: Mutex<Vec<ServerHandle>> = Mutex::new(Vec::new());

/// Directories this test binary made; removed when the process exits.
static MADE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn clean_up_at_exit() {
    if let Ok(mut servers) = STARTED.lock() {
        for s in servers.drain(..) {
            let _ = s.stop();
            let _ = std::fs::remove_dir_all(&s.dir);
        }
    }
    if let Ok(mut dirs) = MADE.lock() {
        for d in dirs.drain(..) {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

fn register_clean_up() {
    static REGISTERED: OnceLock<()> = OnceLock::new();
    REGISTERED.get_or_init(|| {
        // SAFETY: registering a plain extern "C" function with no arguments.
        unsafe {
            libc::atexit(clean_up_at_exit);
        }
    });
}

/// Start a private server and have it stopped (and its dir removed) when the process exits.
pub fn start_server(kind: ServerKind, engine: Engine) -> ServerHandle {
    register_clean_up();
    let handle = server::start(&ServerSpec {
        kind,
        engine,
        bindir: None,
        config: None,
        dir: None,
        port: None,
        init_args: Vec::new(),
    })
    .unwrap_or_else(|e| panic!("cannot start a private {kind:?}: {e:#}"));
    register_server(handle.clone());
    handle
}

/// The one private server of `kind` and `engine` that the tests of this binary share, started
/// on first use.
pub fn shared_server(kind: ServerKind, engine: Engine) -> &'static ServerHandle {
    static SHARED: Mutex<Vec<(ServerKind, Engine, &'static ServerHandle)>> = Mutex::new(Vec::new());
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((.., s)) = shared.iter().find(|(k, e, _)| (*k, *e) == (kind, engine)) {
        return s;
    }
    let s: &'static ServerHandle = Box::leak(Box::new(start_server(kind, engine)));
    shared.push((kind, engine, s));
    s
}

/// The tests of this binary that hold it run one at a time (a test that measures the host or
/// a shared server must see only its own load).
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `statement` while another thread runs `cancel` 300 ms in, and again every 5 s while
/// the statement still runs (a starved test thread may not have sent it by 300 ms, and a
/// server drops a cancel that finds its session idle); asserts that the statement came back
/// well before its 60 s; what it returned.
pub fn cancelled_after_300ms<T>(
    cancel: impl Fn() + Send + 'static,
    statement: impl FnOnce() -> T,
) -> T {
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        cancel();
        while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            finished.recv_timeout(std::time::Duration::from_secs(5))
        {
            cancel();
        }
    });
    let started = std::time::Instant::now();
    let result = statement();
    let _ = done.send(());
    canceller.join().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    result
}

/// A private server of `kind` whose configuration adds `settings` (a file `name` in a fresh
/// dir), not registered: the caller registers it or stops it itself.
pub fn start_configured(
    kind: ServerKind,
    engine: Engine,
    name: &str,
    settings: &str,
) -> ServerHandle {
    let dir = fresh_dir("config");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join(name);
    std::fs::write(&config, settings).unwrap();
    server::start(&ServerSpec {
        kind,
        engine,
        config: Some(config),
        ..ServerSpec::default()
    })
    .unwrap_or_else(|e| panic!("a private {kind:?} with {name} starts: {e:#}"))
}

/// Have a server this test started stopped (and its dir removed) when the process exits.
pub fn register_server(handle: ServerHandle) {
    register_clean_up();
    STARTED.lock().unwrap().push(handle);
}

/// A private replica of `primary` in `mode` (what `ibench server start --replica-of` makes),
/// stopped at exit (before its primary: the servers stop in the order they were started,
/// and a primary's stop stops its live replicas first).
pub fn start_replica_of(
    primary: &ServerHandle,
    mode: ibench::replication::ReplicaMode,
) -> ServerHandle {
    let spec = ServerSpec {
        kind: primary.kind,
        engine: primary.engine,
        ..ServerSpec::default()
    };
    let handle = ibench::replication::pair::start_replica(&spec, &primary.dir, mode)
        .unwrap_or_else(|e| panic!("cannot start a {mode} replica: {e:#}"));
    register_server(handle.clone());
    handle
}

/// A private MariaDB (InnoDB) that writes a binary log, so that a replica can follow it
/// (`ibench server start mariadb --log-bin`), stopped at exit.
pub fn start_mariadb_primary() -> ServerHandle {
    let spec = ServerSpec {
        kind: ServerKind::Mariadb,
        engine: Engine::Innodb,
        ..ServerSpec::default()
    };
    let primary = ibench::replication::pair::start_logging_primary(&spec)
        .unwrap_or_else(|e| panic!("cannot start a MariaDB primary with a binary log: {e:#}"));
    register_server(primary.clone());
    primary
}

/// `ibench ARGS`, which must fail with one line on stderr that says `says`; that line.
pub fn refused_in_one_line(args: &[&str], says: &str) -> String {
    let out = ibench(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} succeeded: {err}");
    assert!(err.contains(says), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    err
}

/// A directory under the temp dir that does not exist yet (removed when the process exits).
pub fn fresh_dir(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("ibench-it-{tag}-{}-{n}", std::process::id()));
    register_clean_up();
    MADE.lock().unwrap().push(dir.clone());
    dir
}

/// Sizes of the small full runs.
pub const LOAD_ROWS: u64 = 5000;
pub const I1_ROWS: u64 = 2000;
pub const I2_ROWS: u64 = 500;

/// Options for a small run of all ten steps against `url`, results in a fresh dir.
pub fn small_options(url: &str, tag: &str) -> RunOptions {
    let mut o = RunOptions::from_profile(url, &Profile::named("small").unwrap());
    o.load_rows = LOAD_ROWS;
    o.i1_rows = I1_ROWS;
    o.i2_rows = I2_ROWS;
    o.query_seconds = 2.0;
    o.settle_max_seconds = Some(0.5);
    o.out_dir = fresh_dir(tag);
    o.quiet = true;
    // The host probe is exercised, at a tenth of its default budget (it runs twice per step).
    o.host_probe_ms = 20;
    o
}

/// The MySQL-family storage engine of a run and of its tables (`--engine`).
pub fn use_engine(o: &mut RunOptions, engine: Engine) {
    o.engine = Some(engine);
    o.table.engine = engine;
}

/// Options for a small run of `steps` by `clients` clients that share one table.
pub fn shared_table_options(url: &str, tag: &str, clients: u32, steps: &str) -> RunOptions {
    let mut o = small_options(url, tag);
    o.clients = clients;
    o.shared_table = true;
    o.steps = ibench::workload::steps::parse_step_list(steps).unwrap();
    o
}

/// Run and return the record read back from disk (not the in-memory copy).
pub fn run_and_read(opts: RunOptions) -> (RunRecord, PathBuf) {
    let outcome = ibench::runner::run(opts, vec!["test".into()], &mut |_| {})
        .unwrap_or_else(|e| panic!("run failed: {e:#}"));
    let on_disk = results::read_run(&outcome.dir).expect("run.json reads back");
    (on_disk, outcome.dir)
}

/// The checks every small full run (one client, one table) must pass.
pub fn check_full_run(run: &RunRecord, dir: &Path) {
    assert_eq!(run.status, Status::Completed, "{:?}", run.error);
    assert_eq!(run.schema_version, results::SCHEMA_VERSION);
    // Each step records the op kind its throughput counts (schema version 2).
    for s in &run.steps {
        assert_eq!(s.main_op, Some(s.name.main_op()), "{}", s.name);
    }
    let names: Vec<String> = run.steps.iter().map(|s| s.name.to_string()).collect();
    assert_eq!(
        names.join(" "),
        "l.i0 l.x l.i1 l.i2 qr100 qp100 qr500 qp500 qr1000 qp1000"
    );
    for s in &run.steps {
        assert_eq!(s.status, Status::Completed, "{}: {:?}", s.name, s.error);
        assert!(s.throughput > 0.0, "{} throughput", s.name);
        assert!(s.seconds > 0.0);
        if writes_rows(run, s) {
            let i = s.integrity.as_ref().expect("integrity checked");
            assert!(i.ok, "{}: {:?}", s.name, i.tables);
        }
    }
    let step = |n: &str| run.steps.iter().find(|s| s.name.to_string() == n).unwrap();

    // l.i0: the table holds exactly X rows, no secondary index yet.
    let li0 = step("l.i0");
    assert_eq!(li0.ops["insert"].rows, LOAD_ROWS);
    assert_eq!(li0.ops["insert"].ops, LOAD_ROWS / 100);
    let t = &li0.integrity.as_ref().unwrap().tables[0];
    assert_eq!((t.pk_rows, t.index_rows.len()), (LOAD_ROWS, 0));

    // l.x: one index-building op; the indexed rows are the table's rows.
    let lx = step("l.x");
    assert_eq!(lx.ops["create_indexes"].ops, 1);
    assert_eq!(lx.ops["create_indexes"].rows, LOAD_ROWS);

    // l.i1 / l.i2: as many rows deleted as inserted; every index agrees with the PK.
    for (name, rows, batch) in [("l.i1", I1_ROWS, 50), ("l.i2", I2_ROWS, 5)] {
        let s = step(name);
        assert_eq!(s.ops["insert"].rows, rows, "{name}");
        assert_eq!(s.ops["insert"].ops, rows / batch, "{name}");
        assert_eq!(s.ops["delete"].rows, rows, "{name}");
        let t = &s.integrity.as_ref().unwrap().tables[0];
        assert_eq!(t.pk_rows, LOAD_ROWS, "{name}");
        assert_eq!(t.index_rows.len(), 3, "{name}");
        assert!(t.index_rows.values().all(|&n| n == LOAD_ROWS), "{name}");
    }
    let settle = step("l.i2").settle.as_ref().expect("settle phase recorded");
    assert!(!settle.actions.is_empty());
    assert!(settle.seconds >= settle.planned_seconds * 0.9);

    // Query steps: queries ran, the background writers were paced at the target.
    for s in run
        .steps
        .iter()
        .filter(|s| matches!(s.name, StepName::Query { .. }))
    {
        let sla = s.sla.as_ref().expect("SLA verdict");
        let StepName::Query {
            rate_rows_per_sec, ..
        } = s.name
        else {
            unreachable!()
        };
        assert_eq!(sla.target_rows_per_sec, f64::from(rate_rows_per_sec));
        let q = s
            .ops
            .get("range_query")
            .or_else(|| s.ops.get("point_query"))
            .expect("queries recorded");
        assert!(q.ops > 0);
        assert!(q.latency_us.p50_us > 0 && q.latency_us.max_us >= q.latency_us.p99_us);
        let ins = &s.ops["insert"];
        assert_eq!(ins.target_rows_per_sec, Some(f64::from(rate_rows_per_sec)));
        // Paced: never more than the schedule allows (plus the op due at the start).
        let allowed = f64::from(rate_rows_per_sec) * s.seconds + 50.0;
        assert!(
            count_f64(ins.rows) <= allowed + 50.0,
            "{}: {} rows",
            s.name,
            ins.rows
        );
        assert!(s.ops["delete"].rows <= ins.rows + 8 * 50);
    }

    // run.json is complete JSON with the documented top-level fields; the timeline has lines
    // for every step.
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    for key in [
        "schema_version",
        "ibench_version",
        "status",
        "label",
        "options",
        "target",
        "host",
        "steps",
        "timeline_file",
    ] {
        assert!(raw.get(key).is_some(), "run.json lacks {key}");
    }
    let buckets = &raw["steps"][0]["ops"]["insert"]["latency_us"]["bucket_shares"];
    assert_eq!(buckets.as_array().map(Vec::len), Some(10));
    let timeline = results::read_timeline(dir).unwrap();
    for s in &run.steps {
        assert!(
            timeline.iter().any(|l| l.step == s.name),
            "no timeline line for {}",
            s.name
        );
    }
}

/// The checks of a shared-table run of l.i0, l.x, l.i1 and l.i2 with `clients` clients: every
/// delete step removed exactly as many rows as it inserted, so the one table still holds the
/// rows l.i0 loaded, and the integrity check (which compares with that intent) passed.
pub fn check_shared_table_keeps_its_rows(run: &RunRecord, clients: u64) {
    assert_eq!(run.status, Status::Completed, "{:?}", run.error);
    for s in &run.steps {
        let i = s.integrity.as_ref();
        if writes_rows(run, s) {
            let i = i.expect("integrity checked");
            assert!(i.ok, "{}: {:?}", s.name, i.tables);
            assert_eq!(i.tables.len(), 1);
            assert_eq!(i.tables[0].pk_rows, clients * LOAD_ROWS, "{}", s.name);
            assert_eq!(i.tables[0].intended_rows, Some(clients * LOAD_ROWS));
        }
        if matches!(s.name, StepName::InsertDelete1 | StepName::InsertDelete2) {
            let inserted = s.ops["insert"].rows;
            let deleted = s.ops["delete"].rows;
            assert_eq!(
                inserted, deleted,
                "{}: inserted {inserted}, deleted {deleted}",
                s.name
            );
            assert_eq!(i.unwrap().tables[0].allowed_drift_rows, 0);
        }
    }
}

/// A measured figure's value; panics, naming `what`, when it is n/a.
pub fn value(m: &ibench::sampler::Metric, what: &str) -> f64 {
    m.value()
        .unwrap_or_else(|| panic!("{what} should be measured, is {m:?}"))
}

/// Asserts that `figure` is within 1% of the counter's own change `delta`.
pub fn within_1pct(what: &str, figure: f64, delta: f64) {
    eprintln!("{what}: figure × divisor {figure:.0}, the counter's own change {delta:.0}");
    assert!(
        (figure - delta).abs() <= 0.01 * delta,
        "{what}: {figure} against the server's own {delta}"
    );
}

/// Asserts that a run's server totals agree with the test's own reading of the server's
/// process tree over the run (`own_cpu` seconds, `own_written` bytes), and that ibench's own
/// CPU is large enough that counting it would break the bound; the server's CPU seconds.
pub fn check_totals_match_own_reading(
    totals: &ibench::results::metrics::Totals,
    own_cpu: f64,
    own_written: f64,
) -> f64 {
    let server_cpu = value(&totals.server_cpu_seconds, "server cpu");
    let client_cpu = value(&totals.client_cpu_seconds, "client cpu");
    let written = value(&totals.server_write_bytes, "server write_bytes");
    eprintln!(
        "server cpu {server_cpu:.3} s (own reading {own_cpu:.3}), client cpu {client_cpu:.3} s, \
         written {written} (own reading {own_written})"
    );
    // Same tree, same interval but for the few ms around the sampler's start and stop.
    assert!(
        (server_cpu - own_cpu).abs() <= 0.1 * own_cpu + 0.03,
        "server cpu {server_cpu} vs the test's own reading {own_cpu}"
    );
    assert!(
        (written - own_written).abs() <= 0.1 * own_written + 256.0 * 1024.0,
        "written {written} vs {own_written}"
    );
    // ibench's own CPU is real and large enough that counting it would break the 10% bound.
    assert!(
        client_cpu > 0.1 * own_cpu,
        "client {client_cpu} vs server {own_cpu}: the check would not discriminate"
    );
    server_cpu
}

/// The benchmark's driver for `url` connects; counting the rows of a missing table is an SQL
/// error whose detail `is_missing_table` accepts (the server's own code for it); a new `pi1`
/// is empty.
pub fn check_driver_basics(url: &str, is_missing_table: impl Fn(&str) -> bool) {
    use ibench::backend::{BackendError, DriverOptions, driver_for_url};
    let driver = driver_for_url(url, &DriverOptions::default()).unwrap();
    let mut conn = driver.connect().unwrap();
    let e = conn.count_rows("no_such_table").unwrap_err();
    assert!(
        matches!(&e, BackendError::Sql { detail, .. } if is_missing_table(detail)),
        "{e}"
    );
    conn.create_table("pi1", &ibench::results::options::TableOptions::default())
        .unwrap();
    assert_eq!(conn.count_rows("pi1").unwrap(), 0);
    assert_eq!(conn.min_max_id("pi1").unwrap(), None);
}

/// A URL of a new, empty database `name` on a private Postgres server (created here), so that
/// tests sharing one server do not share tables.
pub fn new_database(server: &ServerHandle, name: &str) -> String {
    let mut admin = pg_connect(&server.url);
    for sql in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        admin.query(&sql).unwrap();
    }
    url_with_database(&server.url, name)
}

/// The URL with its password filled in from `?password_file=`.
pub fn client_url(url: &str) -> String {
    ibench::url::resolve_password(url, None).expect("the password file reads")
}

/// A test's own connection to a PostgreSQL server, on ibench's protocol client.
pub fn pg_connect(url: &str) -> ibench::backend::postgres::wire::PgWire {
    let config = ibench::backend::postgres::config::PgConfig::from_url(&client_url(url))
        .unwrap_or_else(|e| panic!("bad URL {url}: {e}"));
    ibench::backend::postgres::wire::PgWire::connect(&config)
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"))
}

/// The first column of the first row of `sql` as a number.
pub fn pg_number(c: &mut ibench::backend::postgres::wire::PgWire, sql: &str) -> i64 {
    c.query_value(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or_else(|| panic!("{sql}: no value"))
        .parse()
        .unwrap()
}

/// A test's own connection to a MySQL/MariaDB server, on ibench's protocol client.
pub fn my_connect(url: &str) -> ibench::backend::mysql::wire::MyWire {
    let config = ibench::backend::mysql::config::MyConfig::from_url(&client_url(url))
        .unwrap_or_else(|e| panic!("bad URL {url}: {e}"));
    ibench::backend::mysql::wire::MyWire::connect(&config)
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"))
}

/// The same server and query, another database.
pub fn url_with_database(url: &str, name: &str) -> String {
    let (main, query) = match url.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (url, None),
    };
    let base = &main[..main.rfind('/').unwrap()];
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

/// Run headless Chromium on a file with the flags this machine needs; returns (stdout, stderr).
pub fn chromium(page: &Path, extra: &[&str]) -> (String, String) {
    let profile = fresh_dir("chromium-profile");
    let out = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium is installed (scripts/test.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The console messages and uncaught errors in Chromium's log.
pub fn console_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

/// run.json's build facts name the server's binary (its path contains `name`), its size and
/// its SHA-256.
pub fn check_server_binary(build: &ibench::results::target::BuildFacts, name: &str) {
    assert!(
        build
            .binary_path
            .as_deref()
            .is_some_and(|p| p.contains(name)),
        "{build:?}"
    );
    assert!(
        build.binary_bytes.is_some_and(|b| b > 1_000_000),
        "{build:?}"
    );
    assert_eq!(
        build.binary_sha256.as_ref().map(String::len),
        Some(64),
        "{build:?}"
    );
}

/// The failover an observe-only run saw in its last step, l.i1: the run and the step
/// completed, the step records a failover driven by someone else (its kill unknown to ibench)
/// with no error. `what` names it in the line printed for the test's log.
pub fn observed_failover(run: &RunRecord, what: &str) -> ibench::results::failover::StepFailover {
    use ibench::results::failover::{DrivenBy, KillMethod};
    assert_eq!(run.status, Status::Completed, "{:?}", run.error);
    let s = run.steps.last().unwrap();
    assert_eq!(s.name.to_string(), "l.i1");
    assert_eq!(s.status, Status::Completed, "{:?}", s.error);
    let f = s
        .failover
        .clone()
        .expect("l.i1 records the failover it saw");
    eprintln!(
        "observed {what} failover: {}",
        serde_json::to_string(&f).unwrap()
    );
    assert_eq!(
        (f.driven_by, f.kill_method),
        (DrivenBy::Observed, KillMethod::Unknown)
    );
    assert_eq!(f.error, None, "{f:?}");
    f
}
