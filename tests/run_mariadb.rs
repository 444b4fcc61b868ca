//! Full runs on a private MariaDB (InnoDB and MyRocks) started with ibench's own server code.
//! One server with the RocksDB engine loaded serves both, each in its own database.

mod common;
mod micro_checks;

use common::*;
use ibench::backend::mysql::config::MyConfig;
use ibench::results::target::Engine;
use ibench::server::{ServerHandle, ServerKind};

fn server() -> &'static ServerHandle {
    shared_server(ServerKind::Mariadb, Engine::Rocksdb)
}

/// A URL to a new database of the shared server.
fn database_url(name: &str) -> String {
    let s = server();
    let mut conn = my_connect(&s.url);
    conn.query(&format!("CREATE DATABASE IF NOT EXISTS {name}"))
        .unwrap();
    url_with_database(&s.url, name)
}

#[test]
fn all_ten_steps_on_innodb() {
    let mut opts = small_options(&database_url("it_innodb"), "maria-innodb");
    use_engine(&mut opts, Engine::Innodb);
    let (run, dir) = run_and_read(opts);
    check_full_run(&run, &dir);
    let target = run.target.as_ref().unwrap();
    assert_eq!(target.dbms, "MariaDB");
    assert_eq!(
        target.flavour,
        Some(ibench::results::target::Flavour::Mariadb)
    );
    assert_eq!(target.engine, Some(Engine::Innodb));
    let build = run.build.as_ref().expect("run.json has the build facts");
    assert!(
        build
            .version_string
            .as_deref()
            .is_some_and(|v| v.contains("MariaDB")),
        "{build:?}"
    );
    assert!(
        build.version_comment.is_some() && build.compile_machine.is_some(),
        "{build:?}"
    );
    assert!(build.compile_os.is_some(), "{build:?}");
    check_server_binary(build, "mariadbd");
    assert!(
        build.na.iter().any(|n| n.contains("compiler flags")),
        "{:?}",
        build.na
    );
}

/// Two deleters of one table: each deletes as many rows as its inserter added.
#[test]
fn deleters_of_a_shared_table_delete_as_many_rows_as_were_inserted() {
    let url = database_url("it_shared");
    let mut opts = shared_table_options(&url, "maria-shared", 2, "l.i0,l.x,l.i1,l.i2");
    use_engine(&mut opts, Engine::Innodb);
    let (run, _) = run_and_read(opts);
    check_shared_table_keeps_its_rows(&run, 2);
}

#[test]
fn all_ten_steps_on_rocksdb() {
    let mut opts = small_options(&database_url("it_rocksdb"), "maria-rocksdb");
    use_engine(&mut opts, Engine::Rocksdb);
    let (run, dir) = run_and_read(opts);
    check_full_run(&run, &dir);
    assert_eq!(run.target.as_ref().unwrap().engine, Some(Engine::Rocksdb));
    assert!(run.label.ends_with("rocksdb"), "{}", run.label);
    // The tables really are MyRocks tables.
    let mut conn = my_connect(&database_url("it_rocksdb"));
    let engine = conn
        .query(
            "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'it_rocksdb' AND TABLE_NAME = 'pi1'",
        )
        .unwrap();
    assert_eq!(engine.first(), Some("ROCKSDB"));
}

#[test]
fn the_microbenchmark_suite_keeps_its_invariants_on_innodb() {
    let url = database_url("it_micro");
    let read = || {
        let mut c = my_connect(&url);
        micro_checks::rows_and_sum_k("CAST(COALESCE(SUM(k), 0) AS SIGNED)", |sql| {
            let r = c.query(sql).unwrap();
            let cell = |i: usize| -> i64 { r.rows[0][i].as_deref().unwrap().parse().unwrap() };
            (cell(0), cell(1))
        })
    };
    micro_checks::check_suite(&url, "maria-micro", 2, &read);
}

/// The benchmark's connections run on ibench's own protocol client: over TCP and the Unix
/// socket; a failed statement names its error and leaves the connection usable; a wrong
/// password is a login error and a missing database says how to make one; `KILL QUERY` (the
/// canceller) stops a running statement.
#[test]
fn the_protocol_client_connects_reports_errors_and_is_cancelled() {
    use ibench::backend::mysql::wire::MyWire;
    use ibench::backend::{BackendError, DriverOptions, driver_for_url};
    let url = database_url("it_wire");
    check_driver_basics(&url, |detail| detail.starts_with("ERROR 1146 (42S02)"));

    let s = server();
    let wrong = driver_for_url(
        &format!("mysql://root:nope@127.0.0.1:{}/it_wire", s.port),
        &DriverOptions::default(),
    )
    .unwrap();
    let e = wrong.connect().err().unwrap();
    assert!(matches!(e, BackendError::Auth { .. }), "{e}");
    let missing = driver_for_url(
        &url_with_database(&s.url, "no_such_db"),
        &DriverOptions::default(),
    )
    .unwrap();
    let e = missing.connect().err().unwrap().to_string();
    assert!(e.contains("CREATE DATABASE no_such_db"), "{e}");

    let resolved = client_url(&url);
    let config = MyConfig::from_url(&resolved).unwrap();
    let socket = s.socket_dir.join("mysqld.sock");
    let over_socket =
        MyConfig::from_url(&format!("{resolved}?socket={}", socket.display())).unwrap();
    let mut w = MyWire::connect(&over_socket).unwrap();
    assert_eq!(w.query("SELECT 6 * 7").unwrap().first(), Some("42"));
    // `localhost` may resolve to ::1 first; the server listens on 127.0.0.1 only.
    let by_name = MyConfig::from_url(&resolved.replace("127.0.0.1", "localhost")).unwrap();
    let mut w = MyWire::connect(&by_name).unwrap();
    assert_eq!(w.query("SELECT 1").unwrap().first(), Some("1"));

    let mut w = MyWire::connect(&config).unwrap();
    let id = w.connection_id();
    let kill = move || {
        let mut admin = my_connect(&resolved);
        admin.query(&format!("KILL QUERY {id}")).unwrap();
    };
    // An interrupted SLEEP fails with ER_QUERY_INTERRUPTED (MySQL returns 1 instead).
    match cancelled_after_300ms(kill, || w.query("SELECT SLEEP(60)")) {
        Ok(r) => assert_eq!(r.first(), Some("1")),
        Err(e) => assert_eq!(e.server().and_then(|s| s.number), Some(1317), "{e}"),
    }
    assert_eq!(
        w.query("SELECT 1").unwrap().first(),
        Some("1"),
        "usable after"
    );
}

/// A user whose login method ibench lacks (MariaDB's `client_ed25519`, asked for by an auth
/// switch) gets one error naming the methods that work, not a hang or a protocol error.
#[test]
fn a_login_method_ibench_lacks_is_named() {
    use ibench::backend::mysql::wire::MyWire;
    let s = server();
    let resolved = client_url(&database_url("it_ed25519"));
    let mut admin = my_connect(&resolved);
    admin
        .query("INSTALL SONAME 'auth_ed25519'")
        .map(drop)
        .or_else(|e| {
            // Installed by an earlier run of this test binary's server: fine.
            if e.to_string().contains("already") {
                Ok(())
            } else {
                Err(e)
            }
        })
        .unwrap();
    admin
        .query(
            "CREATE OR REPLACE USER ib_ed@'127.0.0.1' IDENTIFIED VIA ed25519 USING PASSWORD('pw')",
        )
        .unwrap();
    let config =
        MyConfig::from_url(&format!("mysql://ib_ed:pw@127.0.0.1:{}/it_ed25519", s.port)).unwrap();
    let e = MyWire::connect(&config).err().unwrap().to_string();
    assert!(e.starts_with("authentication error:"), "{e}");
    assert!(
        e.contains("client_ed25519") && e.contains("mysql_native_password"),
        "{e}"
    );
}

/// l.x reads InnoDB's `ALTER TABLE` stages from performance_schema when the server has it on
/// (MariaDB's default is off; tests/defaults.rs checks that ibench says so): the timeline
/// holds the stages' work done of the estimate. The table is filled server-side (2M rows in
/// seconds) so the build lasts long enough for once-a-second polls to see it.
#[test]
fn index_builds_report_their_progress_with_performance_schema_on() {
    let conf_dir = fresh_dir("maria-ps-conf");
    std::fs::create_dir_all(&conf_dir).unwrap();
    let conf = conf_dir.join("ps.cnf");
    std::fs::write(
        &conf,
        "[mysqld]\nperformance_schema=ON\nperformance-schema-instrument=stage/%=ON\n\
         performance-schema-consumer-events-stages-current=ON\n",
    )
    .unwrap();
    let handle = ibench::server::start(&ibench::server::ServerSpec {
        kind: ServerKind::Mariadb,
        engine: Engine::Innodb,
        bindir: None,
        config: Some(conf),
        dir: None,
        port: None,
        init_args: Vec::new(),
    })
    .unwrap_or_else(|e| panic!("cannot start MariaDB with performance_schema on: {e:#}"));
    register_server(handle.clone());
    let options = |tag: &str, steps: &str| {
        let mut o = small_options(&handle.url, tag);
        use_engine(&mut o, Engine::Innodb);
        o.steps = ibench::workload::steps::parse_step_list(steps).unwrap();
        o
    };
    run_and_read(options("maria-lx-load", "l.i0"));
    my_connect(&handle.url)
        .query(
            "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) \
             SELECT now(), seq % 1000, seq % 100000, seq % 10000, seq % 500, md5(seq) \
             FROM seq_1_to_2000000",
        )
        .unwrap();
    let (run, dir) = run_and_read(options("maria-lx-progress", "l.x"));
    assert_eq!(run.steps[0].status, ibench::results::Status::Completed);
    let timeline = ibench::results::read_timeline(&dir).unwrap();
    let builds: Vec<_> = timeline
        .iter()
        .flat_map(|l| l.index_builds.iter())
        .collect();
    assert!(
        !builds.is_empty(),
        "no second of l.x ({:.1} s) saw a build: {timeline:?}",
        run.steps[0].seconds
    );
    for b in &builds {
        // A poll may land in the SQL layer's "preparing for alter table" (no work counts yet)
        // before InnoDB's "alter table (read PK and internal sort)" and the others.
        assert!(b.phase.contains("alter table"), "{b:?}");
        assert_eq!((b.unit.as_str(), b.builds), ("work units", 1), "{b:?}");
    }
    assert!(
        builds.iter().any(|b| b.total > 0 && b.done > 0),
        "{builds:?}"
    );
}
