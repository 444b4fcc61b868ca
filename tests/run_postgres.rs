//! Full run on a private PostgreSQL started with ibench's own server code. One server serves
//! every test of this binary, each test in its own database.

mod common;
mod micro_checks;

use std::sync::OnceLock;

use common::*;
use ibench::backend::Engine;
use ibench::server::{ServerHandle, ServerKind};

fn server() -> &'static ServerHandle {
    static SERVER: OnceLock<ServerHandle> = OnceLock::new();
    SERVER.get_or_init(|| start_server(ServerKind::Postgres, Engine::Innodb))
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
        Some(ibench::backend::flavour::Flavour::Postgres),
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
    let mut opts = small_options(&url, "pg-shared");
    opts.clients = 2;
    opts.shared_table = true;
    opts.steps = ibench::workload::steps::parse_step_list("l.i0,l.x,l.i1,l.i2").unwrap();
    let (run, _) = run_and_read(opts);
    check_shared_table_keeps_its_rows(&run, 2);
}

/// Eight deleters of one table with 7-row inserts: PostgreSQL re-checked the `IN (SELECT ...
/// LIMIT n)` subquery when another deleter had taken a row, and a statement could delete more
/// than n rows (l.i1 ended with 39,960 of 40,000). The ids are now picked once per statement.
#[test]
fn eight_deleters_of_a_shared_table_keep_its_count_exact() {
    let url = new_database(server(), "shared_eight");
    let mut opts = small_options(&url, "pg-shared-8");
    opts.clients = 8;
    opts.shared_table = true;
    opts.load_rows = 2000;
    opts.i1_rows = 2000;
    opts.i1_rows_per_insert = 7;
    opts.steps = ibench::workload::steps::parse_step_list("l.i0,l.x,l.i1").unwrap();
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
        let mut c = postgres::Client::connect(&client_url(&url), postgres::NoTls).unwrap();
        let mut rows = 0i64;
        let mut sum_k = 0i64;
        for t in 1..=micro_checks::TABLES {
            let r = c
                .query_one(
                    &format!("SELECT COUNT(*), COALESCE(SUM(k), 0)::bigint FROM sbtest{t}"),
                    &[],
                )
                .unwrap();
            rows += r.get::<_, i64>(0);
            sum_k += r.get::<_, i64>(1);
        }
        (rows, sum_k)
    };
    micro_checks::check_suite(&url, "pg-micro", 2, &read);
}
