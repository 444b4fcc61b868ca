//! Benchmark: the client CPU of ibench's point query against `pgbench` running the same
//! statement on the same private PostgreSQL.
//!
//! It starts a throw-away PostgreSQL with ibench's own [`server::start`], loads table `pi1`
//! with ibench (`l.i0`, `l.x`), then for a few rounds (the order reversed every other round)
//! runs for `IBENCH_BENCH_SECONDS` with one client each:
//!
//! - **ibench**: a `qp100` step; the point-query connection's own CPU per query
//!   (`ops.point_query.connection_cpu_seconds / ops`: that thread's CPU only, not the paced
//!   background writers');
//! - **pgbench**: `pgbench -n -M prepared -c 1 -T N -f SCRIPT` where the script draws 10 ids
//!   uniformly from the loaded range and runs ibench's statement
//!   `SELECT transactionid, productid, data FROM pi1 WHERE transactionid IN (…10 ids…)`;
//!   its CPU from `getrusage(RUSAGE_CHILDREN)` around the run, per query.
//!
//! Run with `cargo bench --bench point_pgbench` (pgbench comes with Debian's `postgresql`).
//! Environment: `IBENCH_BENCH_ROWS` (default 200,000), `IBENCH_BENCH_SECONDS` (default 10),
//! `IBENCH_BENCH_ROUNDS` (default 3), `IBENCH_BENCH_TLS=1` (the server gets a self-signed
//! certificate; ibench connects with `sslmode=require`, pgbench with `PGSSLMODE=require`).

use std::process::Command;

use anyhow::{Context, Result, bail};
use ibench::runner::{self, RunOptions};
use ibench::server::ServerHandle;
use ibench::stats::convert::{count_f64, round_to_u64, round_to_usize};
use ibench::workload::steps::{Profile, parse_step_list};

const OVERLAY: &str = "shared_buffers = 512MB\nsynchronous_commit = off\nfsync = off\n";

fn options(url: &str, steps: &str, rows: u64, out: std::path::PathBuf) -> Result<RunOptions> {
    let mut o = RunOptions::from_profile(url, &Profile::named("small").context("profile")?);
    o.steps = parse_step_list(steps)?;
    o.load_rows = rows;
    o.out_dir = out;
    o.quiet = true;
    Ok(o)
}

/// (queries/s, the query connection's CPU µs per query).
fn ibench_round(url: &str, rows: u64, seconds: f64, out: std::path::PathBuf) -> Result<(f64, f64)> {
    let mut o = options(url, "qp100", rows, out)?;
    o.query_seconds = seconds;
    let outcome = runner::run(o, vec!["bench".into()], &mut |_| {})?;
    let s = outcome.record.steps.first().context("no step")?;
    let q = s.ops.get("point_query").context("no point queries")?;
    Ok((
        s.throughput,
        q.connection_cpu_seconds * 1e6 / count_f64(q.ops.max(1)),
    ))
}

/// (queries/s, pgbench's CPU µs per query).
fn pgbench_round(
    handle: &ServerHandle,
    script: &std::path::Path,
    seconds: f64,
    tls: bool,
) -> Result<(f64, f64)> {
    let password = std::fs::read_to_string(handle.dir.join("password"))?;
    let password = password.trim();
    let cpu0 = children_cpu_seconds();
    let out = Command::new("pgbench")
        .args([
            "-n",
            "-M",
            "prepared",
            "-c",
            "1",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
        ])
        .arg("-p")
        .arg(handle.port.to_string())
        .arg("-T")
        .arg(format!("{}", round_to_u64(seconds)))
        .arg("-f")
        .arg(script)
        .arg("postgres")
        .env("PGPASSWORD", password)
        .env("PGSSLMODE", if tls { "require" } else { "disable" })
        .output()
        .context("cannot run pgbench")?;
    let cpu = children_cpu_seconds() - cpu0;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!(
            "pgbench failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let tx: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|v| v.split('/').next())
        .and_then(|v| v.trim().parse().ok())
        .with_context(|| format!("no transaction count in pgbench's report:\n{text}"))?;
    Ok((tx / seconds, cpu * 1e6 / tx.max(1.0)))
}

#[path = "common.rs"]
mod common;

use common::{children_cpu_seconds, env_number, median};

fn main() -> Result<()> {
    let rows = round_to_u64(env_number("IBENCH_BENCH_ROWS", 200_000.0)?);
    let seconds = env_number("IBENCH_BENCH_SECONDS", 10.0)?;
    let rounds = round_to_usize(env_number("IBENCH_BENCH_ROUNDS", 3.0)?).max(1);
    let tls = std::env::var("IBENCH_BENCH_TLS").is_ok_and(|v| v == "1");
    let certs = if tls {
        Some(common::SelfSigned::make()?)
    } else {
        None
    };
    let tls_lines = certs.as_ref().map(common::SelfSigned::postgres_lines);
    let overlay = format!("{OVERLAY}{}", tls_lines.transpose()?.unwrap_or_default());
    let pg = common::PrivateServer::start("pgbench", &overlay)?;
    let handle = pg.handle.clone();
    let scratch = pg.scratch.clone();
    let url = format!(
        "{}&sslmode={}",
        handle.url,
        if tls { "require" } else { "disable" }
    );
    println!("server: {} ({url})", handle.version);
    runner::run(
        options(&url, "l.i0,l.x", rows, scratch.join("load"))?,
        vec!["bench".into()],
        &mut |_| {},
    )?;
    let mut script = String::new();
    for i in 1..=10 {
        script.push_str(&format!("\\set id{i} random(1, {rows})\n"));
    }
    let ids: Vec<String> = (1..=10).map(|i| format!(":id{i}")).collect();
    script.push_str(&format!(
        "SELECT transactionid, productid, data FROM pi1 WHERE transactionid IN ({});\n",
        ids.join(", ")
    ));
    let script_path = scratch.join("point.sql");
    std::fs::write(&script_path, script)?;
    println!("table pi1: {rows} rows; {seconds} s per client and round; {rounds} rounds");
    let (mut ib, mut pb) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let out = scratch.join(format!("qp-{round}"));
        let (i, p) = if round % 2 == 0 {
            let i = ibench_round(&url, rows, seconds, out)?;
            (i, pgbench_round(&handle, &script_path, seconds, tls)?)
        } else {
            let p = pgbench_round(&handle, &script_path, seconds, tls)?;
            (ibench_round(&url, rows, seconds, out)?, p)
        };
        println!(
            "round {round}: ibench {:.0} queries/s at {:.1} µs (query connection's CPU per query); pgbench {:.0}/s at {:.1} µs",
            i.0, i.1, p.0, p.1
        );
        ib.push(i);
        pb.push(p);
    }
    let (iq, ic) = (
        median(ib.iter().map(|x| x.0).collect()),
        median(ib.iter().map(|x| x.1).collect()),
    );
    let (pq, pc) = (
        median(pb.iter().map(|x| x.0).collect()),
        median(pb.iter().map(|x| x.1).collect()),
    );
    println!(
        "median: ibench {iq:.0} queries/s, {ic:.1} µs client CPU per query; pgbench {pq:.0}/s, {pc:.1} µs; ibench/pgbench client CPU {:.2}",
        ic / pc
    );
    drop(pg);
    Ok(())
}
