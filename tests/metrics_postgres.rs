//! Server-side metrics against a private PostgreSQL: the sampler's figures agree with the
//! test's own reading of /proc over the same interval, exclude ibench's own CPU, and become
//! `n/a` with a reason when the server's processes are not on this host.

mod common;
mod proc_reading;

use ibench::stats::convert::count_f64;

use common::*;
use ibench::results::target::Engine;
use ibench::sampler::{self, Metric};
use ibench::server::{ServerHandle, ServerKind};
use ibench::workload::steps::parse_step_list;
use proc_reading::run_between_own_readings;

/// The runs share one server; they run one at a time (`one_at_a_time`) so each sees only its
/// own load.
fn server() -> &'static ServerHandle {
    shared_server(ServerKind::Postgres, Engine::Innodb)
}

#[test]
fn server_figures_match_the_tests_own_proc_reading() {
    let _serial = one_at_a_time();
    let s = server();
    let mut opts = small_options(&s.url, "pg-metrics");
    opts.steps = parse_step_list("l.i0,l.x,l.i1,qp100").unwrap();
    opts.load_rows = 30_000;
    opts.i1_rows = 5_000;
    let (run, dir, own_cpu, own_written) = run_between_own_readings(s.pid, opts);

    let info = run.metrics.as_ref().expect("run.json has metrics");
    assert_eq!(info.server.pid, Some(s.pid), "{:?}", info.server);
    assert!(
        info.server.how.contains("postmaster.pid"),
        "{}",
        info.server.how
    );
    assert!(info.storage.device.is_some(), "{:?}", info.storage);
    let totals = info.totals.as_ref().expect("run totals");
    let server_cpu = check_totals_match_own_reading(totals, own_cpu, own_written);

    // Every step has the spec's metrics; the measurable ones are numbers.
    let mut step_cpu = 0.0;
    for step in &run.steps {
        let m = step.metrics.as_ref().expect("step metrics");
        for (name, metric) in [
            ("cpupq", &m.cpupq),
            ("ccpupq", &m.ccpupq),
            ("hcpupq", &m.hcpupq),
            ("cspq", &m.cspq),
            ("dbgb1", &m.dbgb1),
            ("dbgb2", &m.dbgb2),
            ("rss", &m.rss),
            ("maxop", &m.maxop),
            ("rpq", &m.rpq),
        ] {
            let v = value(metric, &format!("{} {name}", step.name));
            assert!(v >= 0.0, "{} {name} = {v}", step.name);
        }
        assert!(m.cpupq.value().unwrap() > 0.0, "{} cpupq", step.name);
        if step.name.to_string() == "qp100" {
            // A point query (bind, execute, 10 index lookups) costs Postgres well over 5 µs of
            // CPU; less means the CPU of the backends that exit at the step's end went missing.
            assert!(m.cpupq.value().unwrap() >= 5.0, "qp100 cpupq {:?}", m.cpupq);
        }
        assert!(m.rss.value().unwrap() > 0.001, "{} rss", step.name);
        step_cpu += value(&m.totals.server_cpu_seconds, "step cpu");
        let stats = m.stats_file.path().expect("stats saved");
        let saved = ibench::results::statistics::Statistics::read(&dir, stats).unwrap();
        let pg = saved.postgres().expect("PostgreSQL's statistics");
        use ibench::results::statistics::PgView;
        for view in [PgView::Database, PgView::Bgwriter, PgView::UserTables] {
            assert!(pg.rows(view).is_ok(), "{stats}: {view:?}");
        }
        if step.name.to_string() != "l.x" {
            value(&m.wpi, "wpi");
            value(&m.wkbpi, "wkbpi");
        } else {
            assert!(matches!(&m.wpi, Metric::Na(r) if r.contains("no rows inserted")));
        }
    }
    assert!(
        step_cpu <= server_cpu * 1.02 + 0.02,
        "{step_cpu} > {server_cpu}"
    );
    let li0 = run.steps[0].metrics.as_ref().unwrap();
    assert!(li0.db_size.as_ref().unwrap().tables["pi1"] > 1_000_000);

    // Settings once, a time series with a line per second.
    let settings = std::fs::read_to_string(dir.join(sampler::SETTINGS_FILE)).unwrap();
    assert!(settings.contains("shared_buffers"));
    let lines = sampler::read_metrics(&dir).unwrap();
    assert!(lines.len() >= 2, "{} lines", lines.len());
    assert!(lines.iter().all(|l| l.server_cpu_seconds.is_some()));
    assert!(lines.iter().any(|l| l.db_size_bytes.is_some()));
    let fs = run
        .host
        .data_dir_mount
        .as_ref()
        .expect("filesystem of the data dir");
    assert!(!fs.fs_type.is_empty());
}

#[test]
fn server_dir_gives_the_pid() {
    let _serial = one_at_a_time();
    let s = server();
    let mut opts = small_options(&s.url, "pg-metrics-dir");
    opts.steps = parse_step_list("l.i0").unwrap();
    opts.load_rows = 2_000;
    opts.server_dir = Some(s.dir.clone());
    let (run, _) = run_and_read(opts);
    let info = run.metrics.unwrap();
    assert_eq!(info.server.pid, Some(s.pid));
    assert!(info.server.how.contains("--server-dir"));
    assert_eq!(info.storage.data_paths, vec![s.data_dir.clone()]);
}

/// A server on another host: the process and storage figures are n/a with the reason, never
/// 0, and what does not need them is measured, the DBMS's own counters included. The same private server is reached through
/// its IPv4-mapped IPv6 address, which ibench (rightly) cannot tell is this host.
#[test]
fn a_server_not_on_this_host_gives_na_with_reasons() {
    let _serial = one_at_a_time();
    let s = server();
    let url = s.url.replacen("127.0.0.1", "[::ffff:127.0.0.1]", 1);
    let mut opts = small_options(&url, "pg-metrics-remote");
    opts.steps = parse_step_list("l.i0").unwrap();
    opts.load_rows = 2_000;
    let (run, dir) = run_and_read(opts);
    assert_eq!(run.status, ibench::results::Status::Completed);
    let m = run.steps[0].metrics.as_ref().unwrap();
    for metric in [&m.cpupq, &m.rss, &m.totals.server_write_bytes] {
        assert!(
            matches!(metric, Metric::Na(r) if r.contains("not this one")),
            "{metric:?}"
        );
    }
    // What does not need the server's processes is still measured.
    value(&m.ccpupq, "ccpupq");
    value(&m.dbgb1, "dbgb1");
    // The DBMS's own counters need only SQL: every one this server has is measured.
    for (name, figure) in [
        ("walbpi", &m.dbms.walbpi),
        ("fpipi", &m.dbms.fpipi),
        ("shrpq", &m.dbms.shrpq),
        ("shhpq", &m.dbms.shhpq),
        ("ckpts", &m.dbms.ckpts),
        ("ckbufs", &m.dbms.ckbufs),
        ("avacs", &m.dbms.avacs),
        ("deadtup", &m.dbms.deadtup),
    ] {
        value(figure, name);
    }
    assert!(
        value(&m.dbms.walbpi, "walbpi") > 50.0,
        "a row is more than 50 bytes of WAL"
    );
    let raw = std::fs::read_to_string(dir.join("run.json")).unwrap();
    assert!(
        raw.contains(r#""cpupq": {"#) && raw.contains(r#""na": "#),
        "{raw}"
    );
    assert!(!raw.contains(r#""cpupq": 0"#));
    let table = ibench::report::efficiency::metrics_table(&run);
    assert!(
        table.contains("n/a[1]") && table.contains("not this one"),
        "{table}"
    );
    assert!(
        table.contains("the DBMS's own counters") && table.contains("walbpi: WAL bytes"),
        "{table}"
    );
    // And in the time series for change detection, with their units.
    let (runs, _) = ibench::report::load::load_runs(std::slice::from_ref(&dir));
    let series = ibench::report::series::nyrkio(&runs).to_string();
    assert!(
        series.contains(r#""name":"l.i0.walbpi""#) && series.contains(r#""unit":"bytes/row""#),
        "{series}"
    );
}

/// `--server-pid` or `--server-dir` naming another process or instance would measure the
/// wrong thing quietly (it was accepted before): the server's own pid file and data directory
/// decide, and the run is refused before anything is written. (A server on another host,
/// whose figures are n/a with reasons, is covered by the sampler's unit tests.)
#[test]
fn a_server_pid_or_dir_of_another_server_is_refused() {
    let _serial = one_at_a_time();
    let s = server();
    for pid in [1, u32::MAX - 3] {
        let mut opts = small_options(&s.url, "pg-metrics-otherpid");
        opts.steps = parse_step_list("l.i0").unwrap();
        opts.server_pid = Some(pid);
        let out_dir = opts.out_dir.clone();
        let err = format!(
            "{:#}",
            ibench::runner::run(opts, vec![], &mut |_| {}).unwrap_err()
        );
        assert!(
            err.contains(&format!("--server-pid {pid}")) && err.contains(&s.pid.to_string()),
            "{err}"
        );
        assert!(!out_dir.join("run.json").exists());
    }
    // The instance dir of another (stopped) server.
    let other = fresh_dir("pg-other-instance");
    let handle = ibench::server::start(&ibench::server::ServerSpec {
        dir: Some(other.clone()),
        ..ibench::server::ServerSpec::default()
    })
    .unwrap();
    handle.stop().unwrap();
    let mut opts = small_options(&s.url, "pg-metrics-otherdir");
    opts.steps = parse_step_list("l.i0").unwrap();
    opts.server_dir = Some(other.clone());
    let err = format!(
        "{:#}",
        ibench::runner::run(opts, vec![], &mut |_| {}).unwrap_err()
    );
    assert!(
        err.contains("--server-dir") && err.contains("another server"),
        "{err}"
    );
}

/// `--perf` on a private Postgres: the seven counter groups take turns during a step, each
/// event is counted or n/a with perf's reason, the software events per operation are
/// positive (their own group's operations), and the report shows the counters table.
#[test]
fn perf_counts_every_group_per_operation_of_its_own_intervals() {
    use ibench::sampler::perf::GROUPS;
    let _serial = one_at_a_time();
    let s = server();
    let mut opts = small_options(&s.url, "pg-perf");
    opts.steps = parse_step_list("l.i0,l.x,qp100").unwrap();
    opts.query_seconds = 4.0;
    opts.perf = true;
    opts.perf_interval_seconds = 0.4;
    let (run, dir) = run_and_read(opts);
    let qp = run
        .steps
        .iter()
        .find(|s| s.name.to_string() == "qp100")
        .unwrap();
    let perf = qp.metrics.as_ref().unwrap().perf.as_ref().unwrap();
    assert!(perf.error.is_none(), "{:?}", perf.error);
    assert_eq!(perf.groups.len(), GROUPS.len());
    let mut reasons = Vec::new();
    for (g, events) in perf.groups.iter().zip(GROUPS) {
        assert!(
            !g.intervals.is_empty(),
            "group {} was not attempted",
            g.group
        );
        assert!(g.ops > 0.0, "group {}: no ops in its intervals", g.group);
        assert!(g.seconds > 0.0 && g.seconds < qp.seconds + 1.0, "{g:?}");
        for e in events {
            match &g.counts[*e] {
                Metric::Value(v) => assert!(*v >= 0.0, "{e}: {v}"),
                Metric::Na(r) => {
                    assert!(!r.is_empty(), "{e}: n/a without a reason");
                    reasons.push(format!("{e}: {r}"));
                }
            }
        }
    }
    eprintln!("n/a: {reasons:#?}");
    // The software events, each per op of its own group's intervals.
    let per_op = |g: usize, e: &str| value(&perf.groups[g].per_op[e], e);
    assert!(per_op(0, "cpu-clock") > 0.0);
    assert!(per_op(6, "context-switches") > 0.0);
    // The query connection's statements make the backend switch at least once per query
    // that waits for its client; less than one per op would mean the wrong divisor.
    let cs = per_op(6, "context-switches");
    assert!(cs > 0.1 && cs < 1000.0, "context switches per query {cs}");
    assert!(dir.join(perf.file.as_deref().unwrap()).exists());
    // Steps take turns at the first group: l.i0 (the first step) started with group 1,
    // qp100 (the third) with group 3.
    let li0 = run.steps[0]
        .metrics
        .as_ref()
        .unwrap()
        .perf
        .as_ref()
        .unwrap();
    assert!(!li0.groups[0].intervals.is_empty());
    let first = perf
        .groups
        .iter()
        .min_by(|a, b| a.intervals[0][0].total_cmp(&b.intervals[0][0]))
        .unwrap();
    assert_eq!(first.group, 3);

    // The report shows the counters table, with the events perf could not count named.
    use ibench::report::{Format, render_dirs};
    let text = render_dirs(std::slice::from_ref(&dir), None, Format::Text, false)
        .unwrap()
        .text;
    assert!(text.contains("Counters per operation (perf)"), "{text}");
    let table = text
        .split("== qp100")
        .nth(1)
        .and_then(|s| s.split("Counters per operation (perf)").nth(1))
        .unwrap_or_default();
    eprintln!("{table}");
    assert!(
        table.lines().any(|l| l.starts_with("context-switches")),
        "{text}"
    );
    if !reasons.is_empty() {
        assert!(text.contains("n/a in every run"), "{text}");
    }
}

/// Autovacuum off on the whole server while it lives (ALTER SYSTEM, reloaded), back on when
/// dropped: a vacuum of another test's tables would write WAL into a window the test reads.
struct AutovacuumOff(String);

impl AutovacuumOff {
    fn new(url: &str) -> AutovacuumOff {
        let mut c = pg_connect(url);
        c.query("ALTER SYSTEM SET autovacuum = off").unwrap();
        c.query("SELECT pg_reload_conf()").unwrap();
        AutovacuumOff(url.to_string())
    }
}

impl Drop for AutovacuumOff {
    fn drop(&mut self) {
        let mut c = pg_connect(&self.0);
        let _ = c.query("ALTER SYSTEM RESET autovacuum");
        let _ = c.query("SELECT pg_reload_conf()");
    }
}

/// The server's counters as the test reads them with its own SQL, from another database:
/// WAL insert position in bytes, full-page images, and database `db`'s shared-buffer hits
/// and reads.
fn pg_counters(c: &mut ibench::backend::postgres::wire::PgWire, db: &str) -> [f64; 4] {
    [
        "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint".to_string(),
        "SELECT wal_fpi FROM pg_stat_wal".to_string(),
        format!("SELECT blks_hit FROM pg_stat_database WHERE datname = '{db}'"),
        format!("SELECT blks_read FROM pg_stat_database WHERE datname = '{db}'"),
    ]
    .map(|sql| count_f64(u64::try_from(pg_number(c, &sql)).unwrap()))
}

/// Checked against the source: over one step, each DBMS figure times the step's rows or ops
/// equals the change of the counter it reads, read by the test with its own SQL just before
/// the run and as the step's record comes out, within 1%.
#[test]
fn dbms_figures_times_the_steps_rows_match_the_servers_own_counters() {
    let _serial = one_at_a_time();
    let s = server();
    let url = new_database(s, "dbms_counters");
    let _quiet = AutovacuumOff::new(&s.url);
    let mut opts = small_options(&url, "pg-dbms-load");
    opts.steps = parse_step_list("l.i0").unwrap();
    opts.load_rows = 20_000;
    run_and_read(opts);
    // The test's connection reads from another database, so its own reads count elsewhere.
    let mut c = pg_connect(&s.url);
    // l.i1's first change to each page after a checkpoint writes a full-page image.
    c.query("CHECKPOINT").unwrap();
    let before = pg_counters(&mut c, "dbms_counters");
    let mut opts = small_options(&url, "pg-dbms-i1");
    opts.steps = parse_step_list("l.i1").unwrap();
    opts.i1_rows = 20_000;
    opts.check = false;
    let mut after = before;
    let outcome = ibench::runner::run(opts, vec![], &mut |_| {
        after = pg_counters(&mut c, "dbms_counters");
    })
    .unwrap();
    let run = ibench::results::read_run(&outcome.dir).unwrap();
    let [wal, fpi, hits, _reads] = [0, 1, 2, 3].map(|i| after[i] - before[i]);
    let m = run.steps[0].metrics.as_ref().unwrap();
    let (rows, ops) = (count_f64(m.inserted_rows), count_f64(m.ops));
    assert!(rows >= 20_000.0 && fpi > 0.0, "{rows} rows, {fpi} FPIs");
    within_1pct("WAL bytes", value(&m.dbms.walbpi, "walbpi") * rows, wal);
    within_1pct(
        "full-page images",
        value(&m.dbms.fpipi, "fpipi") * rows,
        fpi,
    );
    within_1pct("buffer hits", value(&m.dbms.shhpq, "shhpq") * ops, hits);
    assert_eq!(
        m.dbms.counters["WAL insert position, bytes"].round(),
        (value(&m.dbms.walbpi, "walbpi") * rows).round()
    );
    // The figures the sampler read on this server (15): none of PostgreSQL 16's pg_stat_io.
    value(&m.dbms.shrpq, "shrpq");
    assert!(
        value(&m.dbms.deadtup, "deadtup") >= 20_000.0,
        "the deletes' dead rows"
    );
    assert!(matches!(&m.dbms.iorpq, Metric::Na(r) if r.contains("PostgreSQL 16")));
    assert!(matches!(&m.dbms.redobpi, Metric::Na(_)));
}
