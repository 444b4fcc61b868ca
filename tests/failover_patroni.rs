//! A failover ibench only observes, with a real HA manager (docs/failover.md, "Patroni"): on
//! loopback, one etcd and two PostgreSQL 15 nodes under Patroni (Debian's `patroni` and
//! `etcd-server`), bootstrapped by Patroni's own initdb, run as the `postgres` user, data
//! under a fresh temporary dir, every port free. ibench runs l.i0, l.x, l.i1 against the
//! multi-host URL with `target_session_attrs=read-write` and `--reconnect-for`; during l.i1
//! the test SIGKILLs the leader's postmaster, Patroni promotes the other node, the clients
//! reconnect to it, and l.i1 records an observed failover naming the new primary, with the
//! audit of the acknowledged keys read there. Skipped, with a line saying so, only when
//! Patroni is not installed. Nothing is left running: the Drop of the cluster stops Patroni,
//! then kills any postmaster and etcd left.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::fresh_dir;
use ibench::workload::steps::parse_step_list;

const PATRONI: &str = "/usr/bin/patroni";
const ETCD: &str = "/usr/bin/etcd";
const PG_BINDIR: &str = "/usr/lib/postgresql/15/bin";

/// How long the cluster may take to elect a leader and stream to its replica.
const READY_WITHIN: Duration = Duration::from_secs(90);

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The uid and gid of the `postgres` user, from /etc/passwd.
fn postgres_ids() -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let line = passwd
        .lines()
        .find(|l| l.starts_with("postgres:"))
        .expect("a postgres user (Debian's postgresql package makes it)");
    let f: Vec<&str> = line.split(':').collect();
    (f[2].parse().unwrap(), f[3].parse().unwrap())
}

/// One etcd and two Patroni nodes, stopped on drop.
struct Cluster {
    dir: PathBuf,
    etcd: Child,
    patroni: Vec<Child>,
    pg_ports: [u16; 2],
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        std::fs::create_dir_all(dir).unwrap();
        let (uid, gid) = postgres_ids();
        let (etcd_client, etcd_peer) = (free_port(), free_port());
        let pg_ports = [free_port(), free_port()];
        for (n, port) in pg_ports.iter().enumerate() {
            let node = dir.join(format!("node{n}"));
            std::fs::create_dir_all(&node).unwrap();
            std::fs::write(
                dir.join(format!("node{n}.yml")),
                node_yaml(n, *port, free_port(), etcd_client, &node),
            )
            .unwrap();
        }
        chown_tree(dir, uid, gid);
        let as_postgres = |program: &str| {
            let mut c = Command::new(program);
            std::os::unix::process::CommandExt::uid(&mut c, uid);
            std::os::unix::process::CommandExt::gid(&mut c, gid);
            c.stdin(Stdio::null());
            c
        };
        let log = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
        let peer = format!("http://127.0.0.1:{etcd_peer}");
        let client = format!("http://127.0.0.1:{etcd_client}");
        let etcd = as_postgres(ETCD)
            .args(["--name", "e", "--data-dir"])
            .arg(dir.join("etcd"))
            .args([
                "--listen-client-urls",
                &client,
                "--advertise-client-urls",
                &client,
            ])
            .args([
                "--listen-peer-urls",
                &peer,
                "--initial-advertise-peer-urls",
                &peer,
            ])
            .args(["--initial-cluster", &format!("e={peer}")])
            .stdout(log("etcd.log"))
            .stderr(log("etcd.err"))
            .spawn()
            .expect("etcd starts");
        let mut cluster = Cluster {
            dir: dir.to_path_buf(),
            etcd,
            patroni: Vec::new(),
            pg_ports,
        };
        for n in 0..2 {
            let child = as_postgres(PATRONI)
                .arg(dir.join(format!("node{n}.yml")))
                .stdout(log(&format!("patroni{n}.log")))
                .stderr(log(&format!("patroni{n}.err")))
                .spawn()
                .expect("patroni starts");
            cluster.patroni.push(child);
            if n == 0 {
                // The first node bootstraps alone, so that it is the leader.
                cluster.wait_for(|c| c.leader().is_some(), "node0 to lead");
            }
        }
        cluster.wait_for(|c| c.streaming(), "the replica to stream");
        cluster
    }

    fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write&sslmode=disable",
            self.pg_ports[0], self.pg_ports[1]
        )
    }

    fn node_url(&self, n: usize) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/postgres?sslmode=disable",
            self.pg_ports[n]
        )
    }

    /// A query's first value on node `n`; `None` when it does not answer.
    fn value(&self, n: usize, sql: &str) -> Option<String> {
        let config =
            ibench::backend::postgres::config::PgConfig::from_url(&self.node_url(n)).ok()?;
        let mut c = ibench::backend::postgres::wire::PgWire::connect(&config).ok()?;
        c.query_value(sql).ok().flatten()
    }

    /// The node that takes writes, if one does.
    fn leader(&self) -> Option<usize> {
        (0..2).find(|&n| self.value(n, "SELECT pg_is_in_recovery()").as_deref() == Some("f"))
    }

    fn streaming(&self) -> bool {
        self.leader().is_some_and(|l| {
            self.value(
                l,
                "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
            )
            .as_deref()
                == Some("1")
        })
    }

    fn wait_for(&self, ready: impl Fn(&Cluster) -> bool, what: &str) {
        let since = Instant::now();
        while !ready(self) {
            assert!(
                since.elapsed() < READY_WITHIN,
                "waited {READY_WITHIN:?} for {what}; see the logs in {}",
                self.dir.display()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The postmaster's pid of node `n`, from its pid file.
    fn postmaster(&self, n: usize) -> Option<i32> {
        let file = self.dir.join(format!("node{n}/data/postmaster.pid"));
        std::fs::read_to_string(file)
            .ok()?
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Keep the logs of a failed test where the clean-up of its dirs does not reach.
            let keep =
                std::env::temp_dir().join(format!("ibench-patroni-logs-{}", std::process::id()));
            let _ = std::fs::create_dir_all(&keep);
            for name in [
                "patroni0.log",
                "patroni1.log",
                "patroni0.err",
                "patroni1.err",
                "etcd.err",
            ] {
                let _ = std::fs::copy(self.dir.join(name), keep.join(name));
            }
            eprintln!("the cluster's logs are kept in {}", keep.display());
        }
        for p in &self.patroni {
            // SAFETY: a signal to a child this test started.
            unsafe { libc::kill(p.id().cast_signed(), libc::SIGTERM) };
        }
        let since = Instant::now();
        for p in &mut self.patroni {
            while p.try_wait().ok().flatten().is_none() && since.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = p.kill();
            let _ = p.wait();
        }
        for n in 0..2 {
            if let Some(pid) = self.postmaster(n) {
                // SAFETY: the postmaster this cluster's Patroni started (a stale pid file of
                // a server already stopped names no process, or one not ours: checked below).
                let ours = std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.contains(&*self.dir.to_string_lossy()));
                if ours {
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
        let _ = self.etcd.kill();
        let _ = self.etcd.wait();
    }
}

fn chown_tree(dir: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::chown(dir, Some(uid), Some(gid)).unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            chown_tree(&p, uid, gid);
        } else {
            std::os::unix::fs::chown(&p, Some(uid), Some(gid)).unwrap();
        }
    }
}

/// A Patroni node's configuration: etcd v3 on loopback, a fast failover (`ttl` 20 s is
/// Patroni's least; `master_start_timeout: 0` fails over at once when the leader's
/// postmaster dies instead of restarting it in place), trust on loopback, no `pg_rewind`.
fn node_yaml(n: usize, pg_port: u16, rest_port: u16, etcd_port: u16, node: &Path) -> String {
    let node = node.display();
    format!(
        "scope: ibench
namespace: /ibench/
name: node{n}
restapi:
  listen: 127.0.0.1:{rest_port}
  connect_address: 127.0.0.1:{rest_port}
etcd3:
  host: 127.0.0.1:{etcd_port}
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    master_start_timeout: 0
    maximum_lag_on_failover: 1073741824
    postgresql:
      use_pg_rewind: false
      use_slots: true
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - auth: trust
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:{pg_port}
  connect_address: 127.0.0.1:{pg_port}
  data_dir: {node}/data
  bin_dir: {PG_BINDIR}
  pgpass: {node}/pgpass
  authentication:
    replication:
      username: replicator
      password: rep
    superuser:
      username: postgres
      password: pg
  parameters:
    unix_socket_directories: {node}
"
    )
}

#[test]
fn a_patroni_failover_is_observed_and_audited() {
    if !Path::new(PATRONI).exists() || !Path::new(ETCD).exists() {
        eprintln!(
            "SKIPPED: {PATRONI} or {ETCD} is not installed (Debian packages patroni and etcd-server)"
        );
        return;
    }
    let dir = fresh_dir("patroni");
    let cluster = Cluster::start(&dir);
    let leader = cluster.leader().expect("a leader");
    let url = cluster.url();
    let run = std::thread::spawn({
        let url = url.clone();
        move || {
            let mut o = common::small_options(&url, "patroni-run");
            o.steps = parse_step_list("l.i0,l.x,l.i1").unwrap();
            // A table large enough that the keys acknowledged before the loss are still
            // there when the audit reads them (l.i1's deleters remove the oldest rows).
            o.load_rows = 100_000;
            o.i1_rows = 100_000;
            o.clients = 2;
            o.host_probe_ms = 0;
            o.reconnect_for_seconds = Some(60.0);
            o.table.client_assigns_ids = true;
            common::run_and_read(o).0
        }
    });
    // l.i1 runs: each client's table has its primary key and 3 secondary indexes (l.x
    // done), and more rows than the load inserted. Then kill the leader.
    cluster.wait_for(
        |c| {
            let n = |sql| c.value(leader, sql).and_then(|v| v.parse::<u64>().ok());
            n("SELECT count(*) FROM pg_indexes WHERE schemaname = 'public'").is_some_and(|n| n >= 8)
                && n("SELECT max(transactionid) FROM pi1").is_some_and(|n| n > 101_000)
        },
        "l.i1 to run",
    );
    // Well into l.i1, so that whole seconds before the loss measure the rate before.
    std::thread::sleep(Duration::from_secs(2));
    let pid = cluster.postmaster(leader).expect("the leader's postmaster");
    // SAFETY: the postmaster this test's Patroni started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let run = run.join().expect("the run's thread");
    let f = common::observed_failover(&run, "Patroni");
    let other = cluster.pg_ports[1 - leader];
    let new_primary = f.new_primary_url.clone().unwrap();
    assert!(
        new_primary.starts_with(&format!("127.0.0.1:{other} (timeline ")),
        "{new_primary}"
    );
    assert!(
        f.reconnects >= 1 && f.failed_statements.total() >= 1,
        "{f:?}"
    );
    assert!(f.writers_unavailable_seconds.is_some(), "{f:?}");
    let audit = f.audit.expect("the audit on the new primary");
    assert_eq!(audit.error, None);
    assert!(audit.acknowledged_keys_audited > 0, "{audit:?}");
    // The step went on after the loss: it inserted all its rows.
    assert_eq!(run.steps.last().unwrap().ops["insert"].rows, 2 * 100_000);
    drop(cluster);
}
