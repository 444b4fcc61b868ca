//! Server-side metrics against a private MariaDB: the sampler finds mariadbd from the server's
//! own `@@pid_file`, and its CPU and bytes written agree with the test's own /proc reading;
//! the InnoDB and MyRocks counters per row agree with the server's own status counters, and
//! a server reached through another address of this host (as if remote) has them all.

mod common;
mod proc_reading;

use common::*;
use ibench::results::statistics::{EngineStatus, Part, Statistics};
use ibench::results::target::Engine;
use ibench::sampler::Metric;
use ibench::server::ServerHandle;
use ibench::server::ServerKind;
use ibench::stats::convert::count_f64;
use ibench::workload::steps::parse_step_list;
use proc_reading::run_between_own_readings;

/// The runs share one server (MyRocks loaded, InnoDB the default engine); they run one at a
/// time (`one_at_a_time`) so each sees only its own load.
fn server() -> &'static ServerHandle {
    shared_server(ServerKind::Mariadb, Engine::Rocksdb)
}

#[test]
fn mariadb_figures_match_the_tests_own_proc_reading() {
    let _serial = one_at_a_time();
    let s = server();
    let mut opts = small_options(&s.url, "maria-metrics");
    opts.steps = parse_step_list("l.i0,l.x,l.i1,qr100").unwrap();
    opts.load_rows = 20_000;
    opts.i1_rows = 4_000;
    let (run, dir, own_cpu, own_written) = run_between_own_readings(s.pid, opts);

    let info = run.metrics.as_ref().expect("run.json has metrics");
    assert_eq!(info.server.pid, Some(s.pid), "{:?}", info.server);
    assert!(info.server.how.contains("pid file"), "{}", info.server.how);
    let totals = info.totals.as_ref().unwrap();
    check_totals_match_own_reading(totals, own_cpu, own_written);

    for step in &run.steps {
        let m = step.metrics.as_ref().unwrap();
        assert!(value(&m.cpupq, "cpupq") > 0.0, "{}", step.name);
        value(&m.dbgb1, "dbgb1");
        assert!(value(&m.dbgb2, "dbgb2") > 0.0);
        assert!(value(&m.rss, "rss") > 0.01);
        let stats = m.stats_file.path().expect("stats saved");
        let saved = Statistics::read(&dir, stats).unwrap();
        let my = saved.mysql().expect("MySQL's statistics");
        assert!(my.status("Com_insert").is_ok(), "{stats}");
        let engine =
            |s: &Option<Part<Vec<EngineStatus>>>| s.as_ref().is_some_and(|p| p.read().is_ok());
        assert!(engine(&my.innodb_status), "{stats}");
        assert!(engine(&my.rocksdb_status), "{stats}");
    }
    let settings = std::fs::read_to_string(dir.join(ibench::sampler::SETTINGS_FILE)).unwrap();
    assert!(settings.contains("innodb_buffer_pool_size"));
}

/// `SHOW GLOBAL STATUS` values, read by the test's own connection.
fn status(c: &mut ibench::backend::mysql::wire::MyWire, names: &[&str]) -> Vec<f64> {
    names
        .iter()
        .map(|n| {
            let sql = format!("SHOW GLOBAL STATUS LIKE '{n}'");
            let rows = c.query(&sql).unwrap().rows;
            rows[0][1].as_deref().unwrap().parse().unwrap()
        })
        .collect()
}

/// Run l.i0 and l.i1 on a table of `engine`, with the test reading `names` as each step's
/// record comes out: l.i1's metrics and the counters' changes between the two reads. An open
/// read view holds InnoDB's purge of l.i1's deletes back, or it would write redo between the
/// step's end and the test's read.
fn l_i1_between_reads(
    engine: Engine,
    database: &str,
    names: &[&str],
) -> (ibench::results::metrics::StepMetrics, Vec<f64>) {
    let s = server();
    let mut admin = my_connect(&s.url);
    admin
        .query(&format!("DROP DATABASE IF EXISTS {database}"))
        .unwrap();
    admin.query(&format!("CREATE DATABASE {database}")).unwrap();
    let mut holder = my_connect(&s.url);
    holder
        .query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    let mut opts = small_options(&url_with_database(&s.url, database), "maria-dbms");
    opts.steps = parse_step_list("l.i0,l.i1").unwrap();
    opts.load_rows = 10_000;
    opts.i1_rows = 10_000;
    opts.check = false;
    use_engine(&mut opts, engine);
    let mut reads = Vec::new();
    let outcome = ibench::runner::run(opts, vec![], &mut |_| {
        reads.push(status(&mut admin, names));
    })
    .unwrap();
    holder.query("COMMIT").unwrap();
    let run = ibench::results::read_run(&outcome.dir).unwrap();
    let deltas = reads[1].iter().zip(&reads[0]).map(|(a, b)| a - b).collect();
    (run.steps[1].metrics.clone().unwrap(), deltas)
}

/// Checked against the source: over l.i1, redo bytes (InnoDB) and bytes written (MyRocks) per
/// row, and rows read per op, times the step's rows or ops equal the change of the status
/// counter each reads, read by the test around the step, within 1%.
#[test]
fn innodb_and_myrocks_figures_times_the_steps_rows_match_the_status_counters() {
    let _serial = one_at_a_time();
    let (m, d) = l_i1_between_reads(
        Engine::Innodb,
        "dbms_innodb",
        &["Innodb_os_log_written", "Rows_read"],
    );
    let (rows, ops) = (count_f64(m.inserted_rows), count_f64(m.ops));
    within_1pct("redo bytes", value(&m.dbms.redobpi, "redobpi") * rows, d[0]);
    within_1pct("rows read", value(&m.dbms.rowspq, "rowspq") * ops, d[1]);
    for (name, figure) in [
        ("bprpq", &m.dbms.bprpq),
        ("idrpq", &m.dbms.idrpq),
        ("idwpi", &m.dbms.idwpi),
        ("idwkbpi", &m.dbms.idwkbpi),
        ("hll", &m.dbms.hll),
    ] {
        value(figure, name);
    }
    assert!(matches!(&m.dbms.rbwpi, Metric::Na(r) if r.contains("InnoDB run")));
    assert!(matches!(&m.dbms.walbpi, Metric::Na(_)));

    let (m, d) = l_i1_between_reads(
        Engine::Rocksdb,
        "dbms_rocksdb",
        &["Rocksdb_bytes_written", "Rocksdb_rows_read"],
    );
    let (rows, ops) = (count_f64(m.inserted_rows), count_f64(m.ops));
    assert!(d[0] > 0.0 && d[1] > 0.0, "MyRocks counted nothing: {d:?}");
    within_1pct(
        "MyRocks bytes written",
        value(&m.dbms.rbwpi, "rbwpi") * rows,
        d[0],
    );
    within_1pct(
        "MyRocks rows read",
        value(&m.dbms.rowspq, "rowspq") * ops,
        d[1],
    );
    for (name, figure) in [
        ("rflbpi", &m.dbms.rflbpi),
        ("rcrbpi", &m.dbms.rcrbpi),
        ("rcwbpi", &m.dbms.rcwbpi),
        ("stalls", &m.dbms.stalls),
    ] {
        value(figure, name);
    }
    assert!(matches!(&m.dbms.redobpi, Metric::Na(r) if r.contains("MyRocks run")));
}

/// `socat` forwarding a non-loopback address of this host to the private server; killed (by
/// its pid) when dropped.
struct Forward {
    child: std::process::Child,
    /// `ADDRESS:PORT` to put in a URL.
    address: String,
}

impl Forward {
    fn to(port: u16) -> Forward {
        let out = std::process::Command::new("hostname")
            .arg("-I")
            .output()
            .unwrap();
        let addr = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .find(|a| {
                a.parse::<std::net::Ipv4Addr>()
                    .is_ok_and(|ip| !ip.is_loopback())
            })
            .expect("this host has a non-loopback IPv4 address (hostname -I)")
            .to_string();
        let free = std::net::TcpListener::bind((addr.as_str(), 0)).unwrap();
        let listen = free.local_addr().unwrap().port();
        drop(free);
        let child = std::process::Command::new("socat")
            .arg(format!("TCP-LISTEN:{listen},bind={addr},fork,reuseaddr"))
            .arg(format!("TCP:127.0.0.1:{port}"))
            .spawn()
            .expect("socat runs (Debian package socat; scripts/test.sh installs it)");
        let address = format!("{addr}:{listen}");
        for _ in 0..100 {
            if std::net::TcpStream::connect(&address).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Forward { child, address }
    }
}

impl Drop for Forward {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Remote-ready: reached through a non-loopback address of this host, the server counts as
/// remote. Its process and host figures are n/a with the reason; its own counters are all
/// there.
#[test]
fn a_server_reached_through_another_address_has_its_counters_and_no_proc_figures() {
    let _serial = one_at_a_time();
    let s = server();
    let forward = Forward::to(s.port);
    let url = s
        .url
        .replacen(&format!("127.0.0.1:{}", s.port), &forward.address, 1);
    let mut opts = small_options(&url, "maria-remote");
    opts.steps = parse_step_list("l.i0,l.x,qp100").unwrap();
    opts.load_rows = 3_000;
    let (run, _) = run_and_read(opts);
    let info = run.metrics.as_ref().unwrap();
    assert!(
        info.server.remote && info.server.pid.is_none(),
        "{:?}",
        info.server
    );
    for step in &run.steps {
        let m = step.metrics.as_ref().unwrap();
        for figure in [&m.cpupq, &m.hcpupq, &m.rss, &m.wkbpi] {
            assert!(matches!(figure, Metric::Na(_)), "{}: {figure:?}", step.name);
        }
        let mut figures = vec![
            ("rowspq", &m.dbms.rowspq),
            ("bprpq", &m.dbms.bprpq),
            ("idrpq", &m.dbms.idrpq),
            ("hll", &m.dbms.hll),
        ];
        // Per inserted row: l.x inserts none.
        if m.inserted_rows > 0 {
            figures.extend([
                ("redobpi", &m.dbms.redobpi),
                ("idwpi", &m.dbms.idwpi),
                ("idwkbpi", &m.dbms.idwkbpi),
            ]);
        }
        for (name, figure) in figures {
            value(figure, &format!("{} {name}", step.name));
        }
    }
    let qp = run.steps[2].metrics.as_ref().unwrap();
    assert!(
        value(&qp.dbms.rowspq, "rowspq") >= 1.0,
        "a point query reads rows"
    );
    let table = ibench::report::efficiency::metrics_table(&run);
    assert!(table.contains("redobpi: InnoDB redo"), "{table}");
    drop(forward);
}
