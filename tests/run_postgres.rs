//! Full run on a private PostgreSQL started with ibench's own server code. One server serves
//! every test of this binary, each test in its own database.

mod common;
mod micro_checks;

use common::*;
use ibench::results::target::Engine;
use ibench::server::{ServerHandle, ServerKind};

fn server() -> &'static ServerHandle {
    shared_server(ServerKind::Postgres, Engine::Innodb)
}

#[test]
fn all_ten_steps_on_a_private_postgres() {
    let server = server();
    let (run, dir) = run_and_read(small_options(&server.url, "pg-run"));
    check_full_run(&run, &dir);
    let target = run.target.as_ref().unwrap();
    assert_eq!(target.dbms, "PostgreSQL");
    assert_eq!(
        target.flavour,
        Some(ibench::results::target::Flavour::Postgres),
        "detected from version()"
    );
    let build = run.build.as_ref().expect("run.json has the build facts");
    assert!(
        build
            .version_string
            .as_deref()
            .is_some_and(|v| v.starts_with("PostgreSQL"))
    );
    assert!(
        build.cflags.as_deref().is_some_and(|f| f.contains("-O")),
        "{build:?}"
    );
    assert!(build.configure.is_some() && build.cc.is_some(), "{build:?}");
    check_server_binary(build, "/postgres");
    let settle = run.steps[3].settle.as_ref().unwrap();
    let actions: Vec<&str> = settle.actions.iter().map(|a| a.action.as_str()).collect();
    assert!(actions.iter().any(|a| a.contains("VACUUM")), "{actions:?}");
    assert!(
        actions.iter().any(|a| a.contains("CHECKPOINT")),
        "{actions:?}"
    );
}

/// Two deleters of one table race for the same oldest rows; before the fix the loser deleted
/// nothing and the table grew (10,000 inserted, 5,800 deleted).
#[test]
fn deleters_of_a_shared_table_delete_as_many_rows_as_were_inserted() {
    let url = new_database(server(), "shared_table");
    let opts = shared_table_options(&url, "pg-shared", 2, "l.i0,l.x,l.i1,l.i2");
    let (run, _) = run_and_read(opts);
    check_shared_table_keeps_its_rows(&run, 2);
}

/// Eight deleters of one table with 7-row inserts: PostgreSQL re-checked the `IN (SELECT ...
/// LIMIT n)` subquery when another deleter had taken a row, and a statement could delete more
/// than n rows (l.i1 ended with 39,960 of 40,000). The ids are now picked once per statement.
#[test]
fn eight_deleters_of_a_shared_table_keep_its_count_exact() {
    let url = new_database(server(), "shared_eight");
    let mut opts = shared_table_options(&url, "pg-shared-8", 8, "l.i0,l.x,l.i1");
    opts.load_rows = 2000;
    opts.i1_rows = 2000;
    opts.i1_rows_per_insert = 7;
    let (run, _) = run_and_read(opts);
    let li1 = &run.steps[2];
    let t = &li1.integrity.as_ref().unwrap().tables[0];
    assert_eq!((t.pk_rows, t.expected_rows), (16_000, 16_000), "{t:?}");
    assert!(
        t.ok && li1.check_failures.is_empty(),
        "{:?}",
        li1.check_failures
    );
    assert_eq!(li1.ops["delete"].rows, 16_000);
}

#[test]
fn the_microbenchmark_suite_keeps_its_invariants() {
    let url = new_database(server(), "it_micro");
    let read = || {
        let mut c = common::pg_connect(&url);
        micro_checks::rows_and_sum_k("COALESCE(SUM(k), 0)::bigint", |sql| {
            let r = c.query(sql).unwrap();
            let cell = |i: usize| -> i64 { r.rows[0][i].as_deref().unwrap().parse().unwrap() };
            (cell(0), cell(1))
        })
    };
    micro_checks::check_suite(&url, "pg-micro", 2, &read);
}

/// The benchmark's connections run on ibench's own protocol client: it logs in with every
/// password method a server may ask for (SCRAM-SHA-256 over TCP, as the private server asks;
/// MD5 and cleartext when pg_hba.conf says so), and over the Unix socket too.
#[test]
fn the_protocol_client_logs_in_with_scram_md5_cleartext_and_over_the_socket() {
    use ibench::backend::postgres::config::PgConfig;
    use ibench::backend::postgres::wire::PgWire;
    let server = server();
    let url = client_url(&server.url);
    let mut admin = common::pg_connect(&url);
    admin
        .query(
            "SET password_encryption = 'md5'; \
             DROP ROLE IF EXISTS ib_md5; CREATE ROLE ib_md5 LOGIN PASSWORD 'md5 pw'; \
             DROP ROLE IF EXISTS ib_clear; CREATE ROLE ib_clear LOGIN PASSWORD 'clear pw'",
        )
        .unwrap();
    let hba = admin.query_value("SHOW hba_file").unwrap().unwrap();
    let rules = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(
        &hba,
        format!(
            "host all ib_md5 127.0.0.1/32 md5\nhost all ib_clear 127.0.0.1/32 password\n{rules}"
        ),
    )
    .unwrap();
    admin.query("SELECT pg_reload_conf()").unwrap();

    let config = |user: &str, password: &str, extra: &str| {
        PgConfig::from_url(&format!(
            "postgres://{user}:{}@127.0.0.1:{}/postgres?sslmode=disable{extra}",
            password.replace(' ', "%20"),
            server.port
        ))
        .unwrap()
    };
    let who = |c: &PgConfig| {
        // The reload is asynchronous: retry for a few seconds.
        let mut last = String::new();
        for _ in 0..50 {
            match PgWire::connect(c).and_then(|mut w| w.query_value("SELECT current_user")) {
                Ok(user) => return user.unwrap_or_default(),
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("cannot log in: {last}");
    };
    let password = std::fs::read_to_string(server.dir.join("password")).unwrap();
    let password = password.trim();
    assert_eq!(who(&config("postgres", password, "")), "postgres");
    assert_eq!(who(&config("ib_md5", "md5 pw", "")), "ib_md5");
    // A cleartext password over TCP without TLS goes out only when the user opts in.
    assert_eq!(
        who(&config("ib_clear", "clear pw", "&require_auth=password")),
        "ib_clear"
    );
    let e = PgWire::connect(&config("ib_clear", "clear pw", ""))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("require_auth=password"), "{e}");
    // require_auth refuses a method it does not name.
    let e = PgWire::connect(&config("ib_md5", "md5 pw", "&require_auth=scram-sha-256"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("MD5") && e.contains("require_auth"), "{e}");
    let only_socket = PgConfig::from_url(&format!(
        "postgres://postgres:{password}@/postgres?host={}&port={}",
        server.socket_dir.display(),
        server.port
    ))
    .unwrap();
    assert_eq!(who(&only_socket), "postgres");

    let wrong = PgWire::connect(&config("ib_md5", "not it", ""))
        .err()
        .unwrap();
    let code = wrong.server().map(|s| s.sqlstate.clone());
    assert_eq!(code.as_deref(), Some("28P01"), "{wrong}");
    let no_password = PgConfig::from_url(&format!(
        "postgres://ib_md5@127.0.0.1:{}/postgres?sslmode=disable",
        server.port
    ))
    .unwrap();
    let e = PgWire::connect(&no_password).err().unwrap().to_string();
    assert!(e.contains("none was given"), "{e}");
    std::fs::write(&hba, rules).unwrap();
    admin.query("SELECT pg_reload_conf()").unwrap();
}

/// A failed statement names its SQLSTATE and leaves the connection usable; a wrong password
/// is a login error and a missing database says how to make one; a cancel request stops a
/// running statement.
#[test]
fn the_protocol_client_reports_errors_and_cancels() {
    use ibench::backend::postgres::config::PgConfig;
    use ibench::backend::postgres::wire::PgWire;
    use ibench::backend::{BackendError, DriverOptions, driver_for_url};
    let url = new_database(server(), "wire_errors");
    check_driver_basics(&url, |detail| detail.contains("SQLSTATE 42P01"));

    let resolved = client_url(&url);
    let wrong = driver_for_url(
        &format!(
            "postgres://postgres:nope@127.0.0.1:{}/wire_errors",
            server().port
        ),
        &DriverOptions::default(),
    )
    .unwrap();
    let e = wrong.connect().err().unwrap();
    assert!(matches!(e, BackendError::Auth { .. }), "{e}");
    let missing = driver_for_url(
        &url_with_database(&server().url, "no_such_db"),
        &DriverOptions::default(),
    )
    .unwrap();
    let e = missing.connect().err().unwrap().to_string();
    assert!(e.contains("create the database"), "{e}");

    let config = PgConfig::from_url(&resolved).unwrap();
    let mut wire = PgWire::connect(&config).unwrap();
    let key = wire.cancel_key();
    let e = cancelled_after_300ms(
        move || key.cancel().unwrap(),
        || wire.query("SELECT pg_sleep(60)").unwrap_err(),
    );
    assert_eq!(
        e.server().map(|s| s.sqlstate.as_str()),
        Some("57014"),
        "{e}"
    );
    assert_eq!(
        wire.query_value("SELECT 1").unwrap().as_deref(),
        Some("1"),
        "usable after the cancel"
    );
}

/// l.x polls `pg_stat_progress_create_index` from a connection of its own: its timeline
/// holds the builds' phase and work done. The table is filled server-side (4M rows in
/// seconds) so the build lasts long enough for once-a-second polls to see it.
#[test]
fn index_builds_report_their_progress_in_the_timeline() {
    let url = new_database(server(), "index_progress");
    let mut opts = small_options(&url, "pg-lx-load");
    opts.steps = ibench::workload::steps::parse_step_list("l.i0").unwrap();
    run_and_read(opts);
    let mut admin = pg_connect(&url);
    admin
        .query(
            "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) \
             SELECT now(), g % 1000, g % 100000, g % 10000, g % 500, md5(g::text) \
             FROM generate_series(1, 4000000) g",
        )
        .unwrap();
    let mut opts = small_options(&url, "pg-lx-progress");
    opts.steps = ibench::workload::steps::parse_step_list("l.x").unwrap();
    let (run, dir) = run_and_read(opts);
    assert_eq!(run.steps[0].status, ibench::results::Status::Completed);
    let timeline = ibench::results::read_timeline(&dir).unwrap();
    let builds: Vec<_> = timeline
        .iter()
        .filter(|l| l.step.to_string() == "l.x")
        .flat_map(|l| l.index_builds.iter())
        .collect();
    assert!(
        !builds.is_empty(),
        "no second of l.x ({:.1} s) saw a build: {timeline:?}",
        run.steps[0].seconds
    );
    for b in &builds {
        assert!(
            b.phase.starts_with("building index")
                || b.phase.starts_with("initializing")
                || b.phase.starts_with("waiting"),
            "{b:?}"
        );
        assert_eq!(b.builds, 1, "one table, one build at a time: {b:?}");
        if b.total > 0 {
            assert!(["blocks", "tuples"].contains(&b.unit.as_str()), "{b:?}");
            assert!(b.done <= b.total, "{b:?}");
        }
    }
    assert!(
        builds.iter().any(|b| b.total > 0),
        "a build counted its work: {builds:?}"
    );
    // The HTML report charts it: 4M rows so that l.x lasts well over the 2 s per-second
    // charts need (on 2M rows it took 2.9 s here).
    let html = ibench::report::render_dirs(&[dir], None, ibench::report::Format::Html, false)
        .unwrap()
        .text;
    assert!(html.contains("l.x index build: work done of its count"));
}

/// A VACUUM that the settle budget's `statement_timeout` cancels (SQLSTATE 57014) ran out of
/// time: it is recorded as unsettled, not as an error. A lock held by another transaction
/// makes it wait past the 1 s the driver gives it at least.
#[test]
fn a_vacuum_cut_short_by_the_settle_budget_is_unsettled_not_an_error() {
    use ibench::backend::{DriverOptions, driver_for_url};
    let url = new_database(server(), "settle_ran_out");
    let mut opts = small_options(&url, "pg-settle-ran-out");
    opts.steps = ibench::workload::steps::parse_step_list("l.i0").unwrap();
    run_and_read(opts);
    let mut holder = pg_connect(&url);
    holder
        .query("BEGIN; LOCK TABLE pi1 IN SHARE UPDATE EXCLUSIVE MODE")
        .unwrap();
    let driver = driver_for_url(&client_url(&url), &DriverOptions::default()).unwrap();
    let actions = driver
        .settle(&["pi1".to_string()], std::time::Duration::ZERO)
        .unwrap();
    holder.query("ROLLBACK").unwrap();
    let vacuum = &actions[0];
    assert_eq!(vacuum.action, "VACUUM (ANALYZE) pi1");
    assert_eq!(vacuum.error, None, "{actions:?}");
    assert!(
        vacuum
            .unsettled
            .as_deref()
            .is_some_and(|u| u.contains("statement_timeout")),
        "{actions:?}"
    );
    assert!(
        vacuum.seconds >= 0.9,
        "it waited for the timeout: {actions:?}"
    );
    let checkpoint = &actions[1];
    assert_eq!(checkpoint.action, "CHECKPOINT");
    assert_eq!(checkpoint.error, None, "{actions:?}");
}
