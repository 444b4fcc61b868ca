//! Benchmark: ibench's microbenchmarks against Debian's `sysbench` on the same private
//! PostgreSQL, and on the same private MariaDB (InnoDB), for `point-query` (sysbench
//! `oltp_point_select`) and `read-only` range 100 (sysbench `oltp_read_only
//! --range_size=100`).
//!
//! For each server it starts a throw-away instance with ibench's own [`server::start`] (the
//! configs [`OVERLAY`] and [`MARIADB_CNF`]), loads one table `sbtest1` with ibench's `m.load`
//! (the sysbench table shape; sysbench reads the same table), then for a few rounds (the order
//! of the two clients reversed every other round) runs each test for `IBENCH_BENCH_SECONDS`
//! with one client:
//!
//! - **ibench**: the step through [`ibench::runner::run`]; its operations per second and its
//!   own CPU per operation (`client_cpu_us_per_op`, from the process's CPU over the step);
//! - **sysbench**: `sysbench oltp_point_select` / `oltp_read_only` with `--db-driver=pgsql`,
//!   (`--db-driver=mysql` on MariaDB), server-side prepared statements (its default), one
//!   thread; its queries or transactions
//!   per second from its report, and its CPU from `getrusage(RUSAGE_CHILDREN)` around the run
//!   (the sysbench process only).
//!
//! It prints per round and as medians: operations/s and client CPU µs per operation of each,
//! and their ratio. An operation is one point query (point-query) or one read-only
//! transaction of 14 queries (read-only).
//!
//! Run with `cargo bench --bench micro_sysbench` (needs `apt-get install sysbench`).
//! Environment: `IBENCH_BENCH_ROWS` (table rows, default 100,000), `IBENCH_BENCH_SECONDS`
//! (per test and client, default 10), `IBENCH_BENCH_ROUNDS` (default 3),
//! `IBENCH_BENCH_SERVERS` (`postgres,mariadb` by default), `IBENCH_BENCH_TLS=1` (the servers
//! get a self-signed certificate made with `openssl`; ibench connects with `sslmode=require`
//! / `ssl-mode=REQUIRED`, sysbench with `PGSSLMODE=require` / `--mysql-ssl=on`, which
//! MariaDB's `require_secure_transport = ON` makes a requirement).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};
use ibench::results::options::{MicroSizes, Workload};
use ibench::runner::{self, RunOptions};
use ibench::server::{ServerHandle, ServerKind};
use ibench::stats::convert::{round_to_u64, round_to_usize};
use ibench::workload::steps::{Profile, parse_step_list};

/// The config overlay: everything cached, no disk waits.
const OVERLAY: &str = "\
shared_buffers = 512MB
synchronous_commit = off
fsync = off
autovacuum = off
";

/// MariaDB's option file: everything cached, no disk waits (as [`OVERLAY`] for Postgres).
const MARIADB_CNF: &str = "\
[mysqld]
innodb_buffer_pool_size = 512M
innodb_flush_log_at_trx_commit = 0
sync_binlog = 0
";

/// One client's figures for one test.
#[derive(Clone, Copy, Debug)]
struct Figures {
    ops_per_sec: f64,
    client_cpu_us_per_op: f64,
}

fn options(url: &str, steps: &str, rows: u32, seconds: f64, out: PathBuf) -> Result<RunOptions> {
    let mut o = RunOptions::from_profile(url, &Profile::named("small").context("profile")?);
    o.workload = Workload::Micro;
    o.micro = MicroSizes {
        tables: 1,
        rows,
        seconds,
    };
    o.steps = parse_step_list(steps)?;
    o.out_dir = out;
    o.quiet = true;
    Ok(o)
}

fn ibench_run(url: &str, step: &str, rows: u32, seconds: f64, out: PathBuf) -> Result<Figures> {
    let outcome = runner::run(
        options(url, step, rows, seconds, out)?,
        vec!["bench".into()],
        &mut |_| {},
    )?;
    if url.contains("sslmode=require") || url.contains("ssl-mode=REQUIRED") {
        let tls = outcome.record.target.as_ref().and_then(|t| t.tls.as_ref());
        let tls = tls.context("a TLS run recorded no TLS")?;
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| println!("ibench over {tls}"));
    }
    let s = outcome.record.steps.first().context("no step")?;
    Ok(Figures {
        ops_per_sec: s.throughput,
        client_cpu_us_per_op: s.client_cpu_us_per_op.context("no client CPU")?,
    })
}

/// sysbench's `queries: N (X per sec.)` or `transactions: N (X per sec.)`.
fn per_sec(report: &str, what: &str) -> Option<f64> {
    let line = report.lines().find(|l| l.trim_start().starts_with(what))?;
    let open = line.find('(')?;
    line[open + 1..].split_whitespace().next()?.parse().ok()
}

/// sysbench's connection options for the server: its driver, host, port, user, password and
/// database (the one in ibench's URL).
fn sysbench_connection(handle: &ServerHandle) -> Result<Vec<String>> {
    let password = std::fs::read_to_string(handle.dir.join("password"))?;
    let password = password.trim();
    let db = handle
        .url
        .split('?')
        .next()
        .and_then(|u| u.rsplit('/').next())
        .context("no database in the server's URL")?;
    let (driver, user) = match handle.kind {
        ServerKind::Postgres => ("pgsql", "postgres"),
        ServerKind::Mariadb => ("mysql", "root"),
    };
    Ok(vec![
        format!("--db-driver={driver}"),
        format!("--{driver}-host=127.0.0.1"),
        format!("--{driver}-port={}", handle.port),
        format!("--{driver}-user={user}"),
        format!("--{driver}-password={password}"),
        format!("--{driver}-db={db}"),
    ])
}

fn sysbench_run(
    handle: &ServerHandle,
    test: &str,
    rows: u32,
    seconds: f64,
    tls: Option<&std::path::Path>,
) -> Result<Figures> {
    let connection = sysbench_connection(handle)?;
    let cpu0 = children_cpu_seconds();
    let mut cmd = Command::new("sysbench");
    if let Some(certs) = tls {
        match handle.kind {
            ServerKind::Postgres => {
                cmd.env("PGSSLMODE", "require");
            }
            ServerKind::Mariadb => {
                // sysbench 1.0 takes on/off, and reads client-key.pem, client-cert.pem and
                // cacert.pem from its working directory; the server requires TLS, so a plain
                // connection would fail rather than pass unseen.
                cmd.arg("--mysql-ssl=on").current_dir(certs);
            }
        }
    }
    cmd.arg(test)
        .args(&connection)
        .args(["--tables=1", "--threads=1"])
        .arg(format!("--table-size={rows}"))
        .arg(format!("--time={}", seconds.round()))
        .args(["--range_size=100", "run"]);
    let out = cmd
        .output()
        .context("cannot run sysbench (apt-get install sysbench)")?;
    let cpu = children_cpu_seconds() - cpu0;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!(
            "sysbench failed: {}{}",
            text,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (ops, what) = if test == "oltp_point_select" {
        (per_sec(&text, "queries:"), "queries")
    } else {
        (per_sec(&text, "transactions:"), "transactions")
    };
    let ops = ops.with_context(|| format!("no {what} per second in sysbench's report:\n{text}"))?;
    Ok(Figures {
        ops_per_sec: ops,
        client_cpu_us_per_op: cpu * 1e6 / (ops * seconds),
    })
}

#[path = "common.rs"]
mod common;

use common::{children_cpu_seconds, env_number, median};

fn main() -> Result<()> {
    let rows = u32::try_from(round_to_u64(env_number("IBENCH_BENCH_ROWS", 100_000.0)?))
        .context("IBENCH_BENCH_ROWS is too large")?;
    let seconds = env_number("IBENCH_BENCH_SECONDS", 10.0)?;
    let rounds = round_to_usize(env_number("IBENCH_BENCH_ROUNDS", 3.0)?).max(1);
    let servers =
        std::env::var("IBENCH_BENCH_SERVERS").unwrap_or_else(|_| "postgres,mariadb".into());
    let tls = std::env::var("IBENCH_BENCH_TLS").is_ok_and(|v| v == "1");
    let certs = if tls {
        Some(common::SelfSigned::make()?)
    } else {
        None
    };
    for name in servers.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let server = match name {
            "postgres" => {
                let tls_lines = certs.as_ref().map(common::SelfSigned::postgres_lines);
                let overlay = format!("{OVERLAY}{}", tls_lines.transpose()?.unwrap_or_default());
                common::PrivateServer::start("micro", &overlay)?
            }
            "mariadb" => {
                let tls_lines = certs.as_ref().map(common::SelfSigned::mariadb_lines);
                let cnf = format!("{MARIADB_CNF}{}", tls_lines.unwrap_or_default());
                common::PrivateServer::start_kind(ServerKind::Mariadb, "micro-mariadb", &cnf)?
            }
            other => bail!("IBENCH_BENCH_SERVERS: unknown server '{other}' (postgres, mariadb)"),
        };
        compare_on(
            &server,
            rows,
            seconds,
            rounds,
            certs.as_ref().map(common::SelfSigned::dir),
        )?;
    }
    Ok(())
}

/// Both clients on one server: load the table, then each test for `rounds` rounds.
fn compare_on(
    server: &common::PrivateServer,
    rows: u32,
    seconds: f64,
    rounds: usize,
    tls: Option<&std::path::Path>,
) -> Result<()> {
    let handle = server.handle.clone();
    let scratch = server.scratch.clone();
    let url = if tls.is_some() {
        let mode = match handle.kind {
            ServerKind::Postgres => "sslmode=require",
            ServerKind::Mariadb => "ssl-mode=REQUIRED",
        };
        format!("{}&{mode}", handle.url)
    } else {
        handle.url.clone()
    };
    println!("server: {} ({url})", handle.version);
    runner::run(
        options(&url, "m.load", rows, seconds, scratch.join("load"))?,
        vec!["bench".into()],
        &mut |_| {},
    )?;
    println!("table sbtest1: {rows} rows; {seconds} s per test and client; {rounds} rounds");
    let tests = [
        ("point-query_range=100", "oltp_point_select", "point query"),
        (
            "read-only_range=100",
            "oltp_read_only",
            "read-only transaction",
        ),
    ];
    for (step, sysbench_test, op) in tests {
        let mut ib = Vec::new();
        let mut sb = Vec::new();
        for round in 0..rounds {
            let dir = scratch.join(format!("{step}-{round}"));
            let (i, s) = if round % 2 == 0 {
                let i = ibench_run(&url, step, rows, seconds, dir)?;
                (i, sysbench_run(&handle, sysbench_test, rows, seconds, tls)?)
            } else {
                let s = sysbench_run(&handle, sysbench_test, rows, seconds, tls)?;
                (ibench_run(&url, step, rows, seconds, dir)?, s)
            };
            println!(
                "{step} round {round}: ibench {:.0}/s at {:.1} µs client CPU per {op}; sysbench {:.0}/s at {:.1} µs",
                i.ops_per_sec, i.client_cpu_us_per_op, s.ops_per_sec, s.client_cpu_us_per_op
            );
            ib.push(i);
            sb.push(s);
        }
        let m = |v: &[Figures], f: fn(&Figures) -> f64| median(v.iter().map(f).collect());
        let (iops, icpu) = (
            m(&ib, |f| f.ops_per_sec),
            m(&ib, |f| f.client_cpu_us_per_op),
        );
        let (sops, scpu) = (
            m(&sb, |f| f.ops_per_sec),
            m(&sb, |f| f.client_cpu_us_per_op),
        );
        println!(
            "{step} median: ibench {iops:.0}/s, {icpu:.1} µs client CPU per {op}; sysbench {sops:.0}/s, {scpu:.1} µs; ibench/sysbench: rate {:.2}, client CPU {:.2}",
            iops / sops,
            icpu / scpu
        );
    }
    Ok(())
}
