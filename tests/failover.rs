//! Failover on real private pairs (docs/failover.md). Driven by ibench: the primary
//! SIGKILLed during l.i1, the standby promoted, the clients reconnected, and the audit of the
//! acknowledged keys on the new primary; a synchronous standby loses none, in every round, an
//! asynchronous one's count is reported, and MariaDB's semi-sync replica is promoted too. A
//! failover during a query step (PostgreSQL's qr100, MariaDB's qp100) measures the readers'
//! unavailability beside the background writers'. Observed: a MariaDB pair the test fails
//! over itself, found by the run through a two-host `mysql://` URL. Then the bad input: a
//! failover without a replica, at a step not run or not last, a "replica" that takes writes,
//! a promotion that never completes, Ctrl-C. Small sizes: figures are checked for being there
//! and consistent, never for their size.

mod common;

use common::{fresh_dir, ibench, refused_in_one_line, start_replica_of, start_server};
use ibench::replication::ReplicaMode;
use ibench::results::failover::{DrivenBy, KillMethod, StepFailover};
use ibench::results::target::Engine;
use ibench::results::{RunRecord, Status};
use ibench::server::{ServerHandle, ServerKind};
use ibench::workload::steps::parse_step_list;

/// Rounds of sync failover in [`a_synchronous_standby_loses_no_acknowledged_row`].
const SYNC_ROUNDS: usize = 3;

/// A small run of l.i0, l.x, l.i1 against `primary`, failed over to `replica` 1 s into l.i1.
fn failed_over(primary: &ServerHandle, replica: &ServerHandle, tag: &str) -> RunRecord {
    failed_over_in(primary, replica, tag, ("l.i0,l.x,l.i1", "l.i1+1s"))
}

/// A small run of `steps` against `primary`, failed over to `replica` at `at` (`STEP+SECONDS`).
fn failed_over_in(
    primary: &ServerHandle,
    replica: &ServerHandle,
    tag: &str,
    (steps, at): (&str, &str),
) -> RunRecord {
    let mut o = common::small_options(&primary.url, tag);
    o.replica_url = Some(replica.url.clone());
    o.steps = parse_step_list(steps).unwrap();
    o.load_rows = 2000;
    o.i1_rows = 40_000;
    o.query_seconds = QUERY_SECONDS;
    o.clients = 2;
    o.host_probe_ms = 0;
    o.failover = Some(at.parse().unwrap());
    o.reconnect_for_seconds = Some(60.0);
    o.table.client_assigns_ids = true;
    if primary.kind == ServerKind::Mariadb {
        common::use_engine(&mut o, Engine::Innodb);
    }
    let outcome = ibench::runner::run(o, vec!["test".into()], &mut |_| {})
        .unwrap_or_else(|e| panic!("run failed: {e:#}"));
    ibench::results::read_run(&outcome.dir).expect("run.json reads back")
}

/// The failover record of l.i1, checked for what every driven failover has.
fn checked(run: &RunRecord, replica: &ServerHandle) -> StepFailover {
    assert_eq!(run.status, Status::Completed, "{:?}", run.error);
    let s = run.steps.last().expect("l.i1 ran");
    assert_eq!(s.name.to_string(), "l.i1");
    assert_eq!(s.status, Status::Completed, "{:?}", s.error);
    let f = s.failover.clone().expect("l.i1 records its failover");
    assert_eq!(
        (f.driven_by, f.kill_method),
        (DrivenBy::Ibench, KillMethod::Sigkill)
    );
    assert_eq!(f.error, None);
    let (loss, promoted) = (f.loss_at_second.unwrap(), f.promoted_at_second.unwrap());
    assert!(1.0 <= loss && loss <= promoted, "{f:?}");
    assert!(f.reconnects >= 1, "{f:?}");
    assert!(f.failed_statements.total() >= 1, "{f:?}");
    assert!(f.writers_unavailable_seconds.is_some(), "{f:?}");
    assert!(f.latency_max_us >= f.latency_p99_us, "{f:?}");
    let url = f.new_primary_url.as_deref().unwrap();
    assert!(
        replica.url.starts_with(url.split('?').next().unwrap()),
        "{url}"
    );
    // The step went on after the loss: it inserted all its rows.
    assert_eq!(s.ops["insert"].rows, 2 * 40_000);
    f
}

/// A synchronous standby is failed over to [`SYNC_ROUNDS`] times, a fresh pair each round
/// (a promoted standby cannot be given a standby of its own): no acknowledged row is ever
/// lost.
#[test]
fn a_synchronous_standby_loses_no_acknowledged_row() {
    for round in 0..SYNC_ROUNDS {
        let primary = start_server(ServerKind::Postgres, Engine::Innodb);
        let standby = start_replica_of(&primary, ReplicaMode::Sync);
        let run = failed_over(&primary, &standby, &format!("fo-sync-{round}"));
        assert_eq!(run.replica.as_ref().unwrap().mode, ReplicaMode::Sync);
        let f = checked(&run, &standby);
        let audit = f.audit.expect("the audit ran");
        assert_eq!(audit.error, None);
        assert!(audit.acknowledged_keys_audited > 0, "{audit:?}");
        assert_eq!(audit.acknowledged_rows_lost, 0, "round {round}: {audit:?}");
        assert!(audit.unacknowledged_rows_present <= audit.unacknowledged_keys_audited);
    }
}

/// The length of a query step failed over in [`a_failover_during_a_query_step`].
const QUERY_SECONDS: f64 = 8.0;

/// The failover record of a query step failed over 2 s in, checked for what the readers
/// and the step's background writers saw: every connection (a querier, an inserter and its
/// deleter per client) lost the primary, reconnected to the promoted replica and went on,
/// and the step ran its whole time.
fn checked_query_step(run: &RunRecord, replica: &ServerHandle, step: &str) -> StepFailover {
    assert_eq!(run.status, Status::Completed, "{:?}", run.error);
    let s = run.steps.last().expect("the query step ran");
    assert_eq!(s.name.to_string(), step);
    assert_eq!(s.status, Status::Completed, "{:?}", s.error);
    let f = s
        .failover
        .clone()
        .expect("the query step records its failover");
    eprintln!("failover in {step}: {}", serde_json::to_string(&f).unwrap());
    assert_eq!(
        (f.driven_by, f.kill_method),
        (DrivenBy::Ibench, KillMethod::Sigkill)
    );
    assert_eq!(f.error, None);
    let (loss, promoted) = (f.loss_at_second.unwrap(), f.promoted_at_second.unwrap());
    assert!(2.0 <= loss && loss <= promoted, "{f:?}");
    // Six connections (2 clients × querier, inserter, deleter), each lost the primary.
    let connections = 6;
    assert!(f.failed_statements.connection_lost >= connections, "{f:?}");
    let by_kind = &f.failed_statements;
    assert_eq!(
        by_kind.total(),
        by_kind.connection_lost + by_kind.read_only + by_kind.timeout + by_kind.other
    );
    assert!(f.reconnects >= connections, "{f:?}");
    let readers = f
        .readers_unavailable_seconds
        .expect("readers' unavailability");
    let writers = f
        .writers_unavailable_seconds
        .expect("writers' unavailability");
    assert!(readers > 0.0 && writers > 0.0, "{f:?}");
    // The main op of a query step is the query: its latency around the event is reported.
    let (p99, max) = (f.latency_p99_us.unwrap(), f.latency_max_us.unwrap());
    assert!(0.0 < p99 && p99 <= max, "{f:?}");
    assert!(f.rate_before_per_sec.is_some_and(|r| r > 0.0), "{f:?}");
    let url = f.new_primary_url.as_deref().unwrap();
    assert!(
        replica.url.starts_with(url.split('?').next().unwrap()),
        "{url}"
    );
    // The step ran its whole time after the loss, queries and background writes both.
    assert!(s.seconds >= QUERY_SECONDS, "{}", s.seconds);
    assert!(s.ops["insert"].rows > 0 && s.ops["delete"].rows > 0);
    let queries = s.main_op().name();
    assert!(s.ops[queries].ops > 0, "{:?}", s.ops.keys());
    f
}

/// A failover during qr100: the readers' unavailability and the background writers' are
/// measured, the failed statements counted, the inserted keys audited on the new primary,
/// and the step runs to its end.
#[test]
fn a_failover_during_a_query_step() {
    let primary = start_server(ServerKind::Postgres, Engine::Innodb);
    let standby = start_replica_of(&primary, ReplicaMode::Sync);
    let run = failed_over_in(
        &primary,
        &standby,
        "fo-query",
        ("l.i0,l.x,qr100", "qr100+2s"),
    );
    let f = checked_query_step(&run, &standby, "qr100");
    let audit = f.audit.expect("the audit ran");
    assert_eq!(audit.error, None);
    assert!(audit.acknowledged_keys_audited > 0, "{audit:?}");
    assert_eq!(audit.acknowledged_rows_lost, 0, "sync: {audit:?}");
    assert!(audit.unacknowledged_rows_present <= audit.unacknowledged_keys_audited);
}

/// An asynchronous standby may lose acknowledged rows: the count is reported, whatever it is.
#[test]
fn an_asynchronous_standby_reports_its_lost_rows() {
    let primary = start_server(ServerKind::Postgres, Engine::Innodb);
    let standby = start_replica_of(&primary, ReplicaMode::Async);
    let run = failed_over(&primary, &standby, "fo-async");
    let f = checked(&run, &standby);
    let audit = f.audit.expect("the audit ran");
    assert_eq!(audit.error, None);
    assert!(audit.acknowledged_keys_audited > 0, "{audit:?}");
    assert!(audit.acknowledged_rows_lost <= audit.acknowledged_keys_audited);
}

/// A MariaDB primary with a semi-synchronous replica, failed over by ibench: the clients
/// reconnect to the promoted replica and the audit reports its count.
#[test]
fn a_mariadb_semisync_replica_is_promoted_and_audited() {
    let primary = common::start_mariadb_primary();
    let replica = start_replica_of(&primary, ReplicaMode::Semisync);
    let run = failed_over(&primary, &replica, "fo-mariadb");
    assert_eq!(run.replica.as_ref().unwrap().mode, ReplicaMode::Semisync);
    let f = checked(&run, &replica);
    let audit = f.audit.expect("the audit ran");
    assert_eq!(audit.error, None);
    assert!(audit.acknowledged_keys_audited > 0, "{audit:?}");
    assert!(audit.acknowledged_rows_lost <= audit.acknowledged_keys_audited);
}

/// A failover during a MariaDB query step (qp100: point queries), semi-sync: the same
/// figures as PostgreSQL's.
#[test]
fn a_mariadb_failover_during_a_query_step() {
    let primary = common::start_mariadb_primary();
    let replica = start_replica_of(&primary, ReplicaMode::Semisync);
    let run = failed_over_in(
        &primary,
        &replica,
        "fo-mariadb-query",
        ("l.i0,l.x,qp100", "qp100+2s"),
    );
    let f = checked_query_step(&run, &replica, "qp100");
    let audit = f.audit.expect("the audit ran");
    assert_eq!(audit.error, None);
    assert!(audit.acknowledged_keys_audited > 0, "{audit:?}");
    assert_eq!(audit.acknowledged_rows_lost, 0, "semi-sync: {audit:?}");
    assert!(audit.unacknowledged_rows_present <= audit.unacknowledged_keys_audited);
}

/// On a MariaDB primary with binary logging, a user that the replica gets through
/// replication (the replica's own root has another password), so one URL logs in on both;
/// its password, once the replica has it.
fn user_on_both(primary: &ServerHandle, replica: &ServerHandle) -> String {
    let password = format!("ha{}", std::process::id());
    let mut p = common::my_connect(&primary.url);
    for sql in [
        format!("CREATE USER 'ibench_ha'@'127.0.0.1' IDENTIFIED BY '{password}'"),
        "GRANT ALL PRIVILEGES ON *.* TO 'ibench_ha'@'127.0.0.1'".to_string(),
    ] {
        p.query(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let url = format!(
        "mysql://ibench_ha:{password}@127.0.0.1:{}/ibench",
        replica.port
    );
    let config = ibench::backend::mysql::config::MyConfig::from_url(&url).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while ibench::backend::mysql::wire::MyWire::connect(&config).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the replica never got the user"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    password
}

/// What the test does that an HA manager would: SIGKILL the primary's server, then promote
/// the replica with ibench's own promotion code (not ibench's run: it only observes).
fn fail_over_by_hand(primary: &ServerHandle, replica: &ServerHandle) {
    let tree = ibench::sampler::procfs::process_tree(primary.pid).unwrap();
    for (pid, _) in tree {
        // SAFETY: signals to the processes of the test's own private server.
        unsafe { libc::kill(i32::try_from(pid).unwrap(), libc::SIGKILL) };
    }
    let options = ibench::backend::DriverOptions::default();
    let driver = ibench::backend::driver_for_url(&replica.url, &options).unwrap();
    let mut conn = driver.connect().expect("connect to the replica");
    conn.promote(60).expect("the replica is promoted");
}

/// The observe-only path on MySQL's side: a run with `--reconnect-for` on a two-host URL
/// (`target_session_attrs=read-write`) against a MariaDB pair with semi-sync. During l.i1
/// the test kills the primary and promotes the replica itself; the run's clients find the
/// new primary through the URL (the old one is gone, the replica was passed over while its
/// `read_only` was 1), the step records an observed failover naming the replica, and no
/// acknowledged row is lost. Before the run, a three-host URL whose first host is down keeps
/// the primary with `read-write`, the replica with `read-only`, the first that answers with
/// `any`.
#[test]
fn a_mariadb_failover_is_observed_through_a_two_host_url() {
    let primary = common::start_mariadb_primary();
    let replica = start_replica_of(&primary, ReplicaMode::Semisync);
    let password = user_on_both(&primary, &replica);
    let url = format!(
        "mysql://ibench_ha:{password}@127.0.0.1:{},127.0.0.1:{}/ibench?target_session_attrs=read-write",
        primary.port, replica.port
    );
    // Before the run: which server each kind of URL keeps.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_port = dead.local_addr().unwrap().port();
    drop(dead);
    let hosts = format!(
        "127.0.0.1:{dead_port},127.0.0.1:{},127.0.0.1:{}",
        replica.port, primary.port
    );
    for (attrs, port) in [
        ("read-write", primary.port),
        ("read-only", replica.port),
        ("any", replica.port),
    ] {
        let url =
            format!("mysql://ibench_ha:{password}@{hosts}/ibench?target_session_attrs={attrs}");
        let config = ibench::backend::mysql::config::MyConfig::from_url(&url).unwrap();
        let mut c = ibench::backend::mysql::wire::MyWire::connect(&config).unwrap();
        let reached = c.query("SELECT @@port").unwrap();
        assert_eq!(reached.first(), Some(port.to_string().as_str()), "{attrs}");
    }
    let mut o = common::small_options(&url, "fo-mariadb-observed");
    o.steps = parse_step_list("l.i0,l.x,l.i1").unwrap();
    o.load_rows = 10_000;
    o.i1_rows = 100_000;
    o.clients = 2;
    o.host_probe_ms = 0;
    o.reconnect_for_seconds = Some(60.0);
    o.table.client_assigns_ids = true;
    common::use_engine(&mut o, Engine::Innodb);
    let out_dir = o.out_dir.clone();
    let run = std::thread::spawn(move || common::run_and_read(o).0);
    // l.i0 and l.x recorded: l.i1 runs. Well into it, so that seconds before the loss count.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    while ibench::results::read_run(&out_dir).map_or(true, |r| r.steps.len() < 2) {
        assert!(std::time::Instant::now() < deadline, "l.i1 never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    fail_over_by_hand(&primary, &replica);
    let run = run.join().expect("the run's thread");
    let f = common::observed_failover(&run, "MariaDB");
    let port = replica.port;
    let new_primary = f.new_primary_url.clone().unwrap();
    assert!(
        new_primary.ends_with(&format!(":{port} (server_id {port})")),
        "{new_primary}"
    );
    assert!(f.promoted_at_second.is_some(), "{f:?}");
    assert!(f.reconnects >= 1 && f.failed_statements.connection_lost >= 1);
    assert!(f.writers_unavailable_seconds.is_some_and(|w| w > 0.0));
    let audit = f.audit.expect("the audit on the new primary");
    assert_eq!(audit.error, None);
    assert!(audit.acknowledged_keys_audited > 0, "{audit:?}");
    assert_eq!(audit.acknowledged_rows_lost, 0, "semi-sync: {audit:?}");
    // The step went on after the loss: it inserted all its rows.
    assert_eq!(run.steps.last().unwrap().ops["insert"].rows, 2 * 100_000);
}

#[test]
fn a_failover_asked_wrongly_is_refused_in_one_line() {
    let url = "postgres://u@127.0.0.1:9/x";
    let replica = "postgres://u@127.0.0.1:10/x";
    let base = ["run", "--url", url, "--steps", "l.i0,l.i1"];
    let with = |extra: &[&'static str]| [&base[..], extra].concat();
    refused_in_one_line(
        &with(&["--failover", "l.i1+5s"]),
        "--failover l.i1+5s needs --replica-url",
    );
    refused_in_one_line(
        &with(&["--replica-url", replica, "--failover", "l.i2+5s"]),
        "step l.i2 is not in --steps (l.i0,l.i1)",
    );
    refused_in_one_line(
        &with(&["--replica-url", replica, "--failover", "l.i0+1s"]),
        "l.i0 must be the last step of --steps",
    );
    refused_in_one_line(
        &with(&["--replica-url", replica, "--failover", "l.i1"]),
        "give STEP+SECONDS",
    );
    refused_in_one_line(&with(&["--reconnect-for", "soon"]), "--reconnect-for");
}

/// A "replica" that takes writes cannot be promoted: the run refuses it before anything
/// runs or is killed, in one line (the failover's own check, before the kill, says the same
/// for a replica promoted meanwhile).
#[test]
fn a_server_that_is_no_replica_is_not_failed_over_to() {
    let primary = start_server(ServerKind::Postgres, Engine::Innodb);
    let other = start_server(ServerKind::Postgres, Engine::Innodb);
    let out_dir = fresh_dir("fo-noreplica");
    let out = ibench(&[
        "run",
        "--url",
        &primary.url,
        "--replica-url",
        &other.url,
        "--steps",
        "l.i0,l.i1",
        "--load-rows",
        "1000",
        "--i1-rows",
        "1000",
        "--failover",
        "l.i1+1s",
        "--host-probe-ms",
        "0",
        "--quiet",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("is not a standby"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        ibench::server::pid_alive(primary.pid),
        "the primary was not killed"
    );
}

/// The arguments of a small CLI run of l.i0 and l.i1 failed over 1 s into l.i1.
fn cli_args<'a>(
    primary: &'a ServerHandle,
    standby: &'a ServerHandle,
    out: &'a str,
) -> Vec<&'a str> {
    vec![
        "run",
        "--url",
        &primary.url,
        "--replica-url",
        &standby.url,
        "--steps",
        "l.i0,l.i1",
        "--load-rows",
        "2000",
        "--i1-rows",
        "200000",
        "--failover",
        "l.i1+1s",
        "--host-probe-ms",
        "0",
        "--quiet",
        "--out",
        out,
    ]
}

/// The standby's startup process (the one that replays WAL and ends recovery on promotion).
fn startup_process(standby: &ServerHandle) -> u32 {
    let tree = ibench::sampler::procfs::process_tree(standby.pid).unwrap();
    tree.iter()
        .map(|(p, _)| *p)
        .find(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("startup"))
        })
        .expect("the standby has a startup process")
}

/// A promotion that never completes (the standby's startup process is frozen, so it never
/// leaves recovery) ends the run after `--reconnect-for` with one line; the steps measured,
/// the failed one's figures too, are kept.
#[test]
fn a_promotion_that_never_completes_ends_the_run_keeping_the_steps() {
    let primary = start_server(ServerKind::Postgres, Engine::Innodb);
    let standby = start_replica_of(&primary, ReplicaMode::Async);
    let startup = startup_process(&standby);
    let out_dir = fresh_dir("fo-stuck-promotion");
    let mut args = cli_args(&primary, &standby, out_dir.to_str().unwrap());
    args.extend(["--reconnect-for", "3s"]);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(&args)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run ibench");
    // Frozen once l.i0 is over (the run's start needs the standby to replay a heartbeat).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while ibench::results::read_run(&out_dir).map_or(true, |r| r.steps.is_empty()) {
        assert!(std::time::Instant::now() < deadline, "l.i0 never ended");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: signals to a process of the test's own private server.
    unsafe { libc::kill(i32::try_from(startup).unwrap(), libc::SIGSTOP) };
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    let mut err = String::new();
    for l in lines.by_ref().map_while(Result::ok) {
        err.push_str(&l);
        err.push('\n');
        if l.starts_with("failover: sent SIGKILL") {
            break;
        }
    }
    // Thawed once the bound has passed, so that the step's end does not wait two minutes
    // for the standby to apply the last heartbeat.
    std::thread::sleep(std::time::Duration::from_secs(6));
    unsafe { libc::kill(i32::try_from(startup).unwrap(), libc::SIGCONT) };
    for l in lines.map_while(Result::ok) {
        err.push_str(&l);
        err.push('\n');
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "{err}");
    let says = "the promotion did not complete within 3 s";
    assert_eq!(err.lines().filter(|l| l.contains(says)).count(), 1, "{err}");
    let run = ibench::results::read_run(&out_dir).expect("run.json is kept");
    assert_eq!(run.status, Status::Failed);
    assert_eq!(run.steps[0].status, Status::Completed);
    let s = &run.steps[1];
    assert_eq!(s.status, Status::Failed);
    assert!(s.error.as_deref().unwrap().contains(says), "{:?}", s.error);
    assert!(
        s.ops["insert"].rows > 0,
        "the rows before the loss are counted"
    );
    let f = s.failover.as_ref().expect("the failover is recorded");
    assert!(
        f.loss_at_second.is_some() && f.promoted_at_second.is_none(),
        "{f:?}"
    );
    assert!(f.error.as_deref().unwrap().contains(says));
}

/// Ctrl-C while the failover goes on: exit 130, the run recorded interrupted, l.i0 kept.
#[test]
fn ctrl_c_during_the_failover_keeps_what_was_measured() {
    use std::io::BufRead;
    let primary = start_server(ServerKind::Postgres, Engine::Innodb);
    let standby = start_replica_of(&primary, ReplicaMode::Sync);
    let out_dir = fresh_dir("fo-ctrl-c");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ibench"))
        .args(cli_args(&primary, &standby, out_dir.to_str().unwrap()))
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run ibench");
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut lines = stderr.lines();
    let killed = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.starts_with("failover: sent SIGKILL"));
    assert!(killed, "the failover never started");
    // SAFETY: sending SIGINT to our own child.
    unsafe {
        libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT);
    }
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    let run = ibench::results::read_run(&out_dir).expect("run.json is kept");
    assert_eq!(run.status, Status::Interrupted);
    assert_eq!(run.steps[0].status, Status::Completed);
    assert_eq!(
        run.steps[1].status,
        Status::Interrupted,
        "{:?}",
        run.steps[1].error
    );
    assert!(run.steps[1].ops["insert"].rows > 0);
}
