//! Failover driven by ibench on real private PostgreSQL pairs (docs/failover.md): the primary
//! SIGKILLed during l.i1, the standby promoted, the clients reconnected, and the audit of the
//! acknowledged keys on the new primary. A synchronous standby loses none, in every round;
//! an asynchronous one's count is reported. Then the bad input: a failover without a
//! replica, at a step not run or not last, and a "replica" that takes writes. Small sizes:
//! figures are checked for being there and consistent, never for their size.

mod common;

use common::{fresh_dir, ibench, register_server, start_server};
use ibench::results::failover::{DrivenBy, KillMethod, StepFailover};
use ibench::results::target::Engine;
use ibench::results::{RunRecord, Status};
use ibench::server::replica::{ReplicaMode, start_replica};
use ibench::server::{ServerHandle, ServerKind, ServerSpec};
use ibench::workload::steps::parse_step_list;

/// Rounds of sync failover in [`a_synchronous_standby_loses_no_acknowledged_row`].
const SYNC_ROUNDS: usize = 3;

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

/// A small run of l.i0, l.x, l.i1 against `primary`, failed over to `replica` 1 s into l.i1.
fn failed_over(primary: &ServerHandle, replica: &ServerHandle, tag: &str) -> RunRecord {
    let mut o = common::small_options(&primary.url, tag);
    o.replica_url = Some(replica.url.clone());
    o.steps = parse_step_list("l.i0,l.x,l.i1").unwrap();
    o.load_rows = 2000;
    o.i1_rows = 40_000;
    o.clients = 2;
    o.host_probe_ms = 0;
    o.failover = Some("l.i1+1s".parse().unwrap());
    o.reconnect_for_seconds = Some(60.0);
    o.table.client_assigns_ids = true;
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
        let standby = replica_of(&primary, ReplicaMode::Sync);
        let run = failed_over(&primary, &standby, &format!("fo-sync-{round}"));
        assert_eq!(run.replica.as_ref().unwrap().mode, "sync");
        let f = checked(&run, &standby);
        let audit = f.audit.expect("the audit ran");
        assert_eq!(audit.error, None);
        assert!(audit.acknowledged_keys_audited > 0, "{audit:?}");
        assert_eq!(audit.acknowledged_rows_lost, 0, "round {round}: {audit:?}");
        assert!(audit.unacknowledged_rows_present <= audit.unacknowledged_keys_audited);
    }
}

/// An asynchronous standby may lose acknowledged rows: the count is reported, whatever it is.
#[test]
fn an_asynchronous_standby_reports_its_lost_rows() {
    let primary = start_server(ServerKind::Postgres, Engine::Innodb);
    let standby = replica_of(&primary, ReplicaMode::Async);
    let run = failed_over(&primary, &standby, "fo-async");
    let f = checked(&run, &standby);
    let audit = f.audit.expect("the audit ran");
    assert_eq!(audit.error, None);
    assert!(audit.acknowledged_keys_audited > 0, "{audit:?}");
    assert!(audit.acknowledged_rows_lost <= audit.acknowledged_keys_audited);
}

/// `ibench ARGS` fails with one line that says `says`.
fn refused(args: &[&str], says: &str) {
    let out = ibench(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(err.contains(says), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_failover_asked_wrongly_is_refused_in_one_line() {
    let url = "postgres://u@127.0.0.1:9/x";
    let replica = "postgres://u@127.0.0.1:10/x";
    let base = ["run", "--url", url, "--steps", "l.i0,l.i1"];
    let with = |extra: &[&'static str]| [&base[..], extra].concat();
    refused(
        &with(&["--failover", "l.i1+5s"]),
        "--failover l.i1+5s needs --replica-url",
    );
    refused(
        &with(&["--replica-url", replica, "--failover", "l.i2+5s"]),
        "step l.i2 is not in --steps (l.i0,l.i1)",
    );
    refused(
        &with(&["--replica-url", replica, "--failover", "l.i0+1s"]),
        "l.i0 must be the last step of --steps",
    );
    refused(
        &with(&["--replica-url", replica, "--failover", "l.i1"]),
        "give STEP+SECONDS",
    );
    refused(&with(&["--reconnect-for", "soon"]), "--reconnect-for");
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
