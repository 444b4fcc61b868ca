//! Benchmark: ibench's `l.i0` load against a private PostgreSQL, compared with the server
//! inserting the same rows by itself.
//!
//! It starts a throw-away PostgreSQL with ibench's own [`server::start`] (fresh temp dir, the
//! config overlay [`OVERLAY`]) and then, for a few rounds (the order of the phases reversed
//! every other round, fresh tables every time):
//!
//! - **a, ibench**: the `l.i0` step through [`ibench::runner::run`]: 1 client, 100 rows per
//!   insert, N rows. From the returned record it takes the inserted rows/s
//!   (`steps[0].throughput`) and ibench's client CPU per inserted row
//!   (`steps[0].client_cpu_us_per_op`).
//! - **b, server alone**: the same N rows inserted by the server itself into an identical
//!   fresh table (`pi_server`, made by ibench's own `Conn::create_table`), in 100-row
//!   `INSERT ... SELECT ... FROM generate_series` statements with a `COMMIT` after each, inside
//!   one server-side `DO` block: no client, no protocol, no parsing per statement. Timed by
//!   the wall clock of that one call. The values are made in SQL with the shapes of ibench's
//!   rows: the ids and price from `random()`, the data string from `repeat` ([`DATA_SQL`]),
//!   which costs the server about what receiving ibench's strings costs it (an `md5` per
//!   row, as before, cost the server 1.6 µs per row of extra work and made this baseline
//!   slower than what it stands for).
//!   shapes of ibench's rows.
//! - **c, server alone from pre-made values**: like b, but each 100-row `INSERT ... SELECT`
//!   copies a primary-key range of an unlogged table filled once before the rounds, so the
//!   server does not spend time making values (which ibench does in the client). This is
//!   the tighter bound on what one connection can insert.
//!
//! Each round also times b's value expressions alone for N rows (one `SELECT sum(...)`, no
//! insert): the wall µs per row one backend spends making values in b.
//!
//! It prints per round and as median and range: ibench rows/s, ibench client CPU µs per row,
//! the server-alone rows/s of b and c, the ratios a/b and a/c, the server's CPU per row in
//! each phase (postmaster and all its children, from `/proc/PID/stat`), and the whole-host CPU
//! use in % of one core for each phase (from `/proc/stat`, every process: it shows what else
//! ran).
//! Targets: client CPU ≤ 0.6 µs per row; ratio a/b ≥ 0.8.
//!
//! Run with `cargo bench --bench load`. Environment:
//! - `IBENCH_BENCH_ROWS`: rows per phase (default 3,000,000);
//! - `IBENCH_BENCH_ROUNDS`: rounds (default 3).
//!
//! The server is stopped and its directory removed at the end, also on error (a guard's
//! `Drop`). A first Ctrl-C ends the bench after the current phase (an ibench phase at once)
//! and stops the server; a second one exits at once and leaves the server running (stop it
//! with `ibench server stop --dir DIR`, DIR as printed at the start).

use ibench::stats::convert::{count_f64, i64_f64, u64_i64};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use ibench::backend::postgres::{config::PgConfig, wire::PgWire as Client};
use ibench::backend::{DriverOptions, driver_for_url};
use ibench::results::Status;
use ibench::results::options::TableOptions;
use ibench::runner::{self, RunOptions};
use ibench::server::{self, ServerHandle, ServerKind, ServerSpec};
use ibench::workload::steps::{Profile, StepName};

/// The config overlay appended to `postgresql.conf`.
///
/// - `shared_buffers = 1GB`: the loaded table and the pre-made values (their sizes are printed
///   per round) stay in the buffer pool.
/// - `synchronous_commit = off`: a commit does not wait for the WAL fsync (about 110 µs
///   here), so what is compared is the cost of getting rows into the server, not the disk.
/// - `fsync = off`: nothing is synced at all (a throw-away instance), so the WAL writer's
///   fsyncs (4.6 ms each on average on this shared virtual disk in a trial, while the
///   inserting backend waited for `WALWrite`) and the checkpoints between phases do not add
///   disk noise to a comparison of CPU and protocol costs.
/// - `max_wal_size`, `min_wal_size`, `checkpoint_timeout`: no checkpoint is forced by WAL
///   volume or time inside a phase (each phase starts right after a `CHECKPOINT`).
/// - `autovacuum = off`: no vacuum of a freshly loaded table runs during any phase, which
///   would only add noise to the comparison.
const OVERLAY: &str = "\
shared_buffers = 1GB
synchronous_commit = off
fsync = off
max_wal_size = 16GB
min_wal_size = 1GB
checkpoint_timeout = 30min
autovacuum = off
";

/// Table the server-alone phase writes.
const SERVER_TABLE: &str = "pi_server";

/// Unlogged table of pre-made rows that phase c copies from.
const VALUES_TABLE: &str = "pi_values";

/// Table ibench's l.i0 writes (1 client).
const IBENCH_TABLE: &str = "pi1";

/// Client CPU per inserted row the load must stay under, µs.
const TARGET_CLIENT_CPU_US: f64 = 0.6;

/// ibench rows/s divided by server-alone rows/s must be at least this.
const TARGET_RATIO: f64 = 0.8;

/// Stops the server and removes its directory and the bench's scratch dir when dropped.
struct Guard {
    handle: Option<ServerHandle>,
    scratch: PathBuf,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            match handle.stop() {
                Ok(()) => {
                    if let Err(e) = std::fs::remove_dir_all(&handle.dir) {
                        eprintln!("note: cannot remove {}: {e}", handle.dir.display());
                    }
                }
                Err(e) => eprintln!(
                    "warning: could not stop the server in {}: {e:#}",
                    handle.dir.display()
                ),
            }
        }
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// What one phase of one round measured.
#[derive(Clone, Copy, Debug, Default)]
struct Phase {
    /// Inserted rows per second.
    rows_per_sec: f64,
    /// Seconds the inserts took.
    seconds: f64,
    /// ibench's own CPU µs per inserted row (ibench phase only).
    client_cpu_us_per_row: Option<f64>,
    /// CPU µs per inserted row of the connection's own thread (ibench phase only): the client
    /// work on the critical path.
    connection_cpu_us_per_row: Option<f64>,
    /// CPU µs per inserted row of the server's processes (postmaster and all its children,
    /// background processes included) over the phase.
    server_cpu_us_per_row: f64,
    /// Whole-host CPU use over the phase, % of one core (200% = both cores busy), every
    /// process included: shows how much else ran.
    host_cpu_pct: f64,
    /// Average length of the data column, a check that the tables look alike.
    avg_data_len: f64,
    /// Size of the loaded table with its primary key, bytes.
    table_bytes: i64,
}

/// One round: the three phases and the value-generation timing.
#[derive(Clone, Copy, Debug)]
struct Round {
    /// a: ibench's l.i0.
    ibench: Phase,
    /// b: the server alone, values made in SQL.
    server: Phase,
    /// c: the server alone, values pre-made.
    premade: Phase,
    /// Wall µs per row one backend spends computing phase b's values (no insert).
    value_gen_us_per_row: f64,
}

impl Round {
    /// ibench rows/s over server-alone (b) rows/s: the figure with the 0.8 target.
    fn ratio(&self) -> f64 {
        self.ibench.rows_per_sec / self.server.rows_per_sec
    }

    /// ibench rows/s over pre-made server-alone (c) rows/s.
    fn ratio_premade(&self) -> f64 {
        self.ibench.rows_per_sec / self.premade.rows_per_sec
    }
}

/// One reading of the CPU counters, µs (`USER_HZ` is 100 on Linux: a tick is 10 ms).
#[derive(Clone, Copy, Debug)]
struct CpuSample {
    /// When it was read.
    at: Instant,
    /// Busy time of the whole host: user + nice + system + irq + softirq of `/proc/stat`.
    host_busy_us: f64,
    /// User + system time of the postmaster, of its children that it has reaped (cutime,
    /// cstime) and of its live children (backends and background processes).
    server_us: f64,
}

/// Microseconds per clock tick of `/proc` (`USER_HZ` = 100).
const TICK_US: f64 = 1e4;

/// Fields of `/proc/PID/stat` after the command name: index 0 is the state (field 3 of
/// proc(5)), so field n is at index n - 3.
fn proc_stat_fields(pid: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    Some(after.split_whitespace().map(str::to_string).collect())
}

/// Field `n` (proc(5) numbering) of a `/proc/PID/stat` split by [`proc_stat_fields`].
fn field(fields: &[String], n: usize) -> f64 {
    fields
        .get(n - 3)
        .and_then(|f| f.parse().ok())
        .unwrap_or(0.0)
}

/// Read the host and the server's CPU counters.
fn cpu_sample(server_pid: u32) -> Result<CpuSample> {
    let at = Instant::now();
    let text = std::fs::read_to_string("/proc/stat").context("cannot read /proc/stat")?;
    let line = text.lines().next().context("/proc/stat is empty")?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    ensure!(v.len() >= 7, "unexpected /proc/stat line: {line}");
    let host_busy_us = (v[0] + v[1] + v[2] + v[5] + v[6]) * TICK_US;

    let own = server_pid.to_string();
    let main = proc_stat_fields(&own).context("the server's main process is gone")?;
    // utime 14, stime 15, cutime 16, cstime 17; ppid 4.
    let mut ticks = field(&main, 14) + field(&main, 15) + field(&main, 16) + field(&main, 17);
    for entry in std::fs::read_dir("/proc")
        .context("cannot list /proc")?
        .flatten()
    {
        let name = entry.file_name();
        let Some(pid) = name.to_str() else { continue };
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == own {
            continue;
        }
        if let Some(f) = proc_stat_fields(pid)
            && field(&f, 4) == f64::from(server_pid)
        {
            ticks += field(&f, 14) + field(&f, 15) + field(&f, 16) + field(&f, 17);
        }
    }
    Ok(CpuSample {
        at,
        host_busy_us,
        server_us: ticks * TICK_US,
    })
}

/// CPU used since `before`: (server µs, host busy in % of one core).
fn cpu_since(before: CpuSample, server_pid: u32) -> Result<(f64, f64)> {
    let after = cpu_sample(server_pid)?;
    let wall_us = (after.at - before.at).as_secs_f64() * 1e6;
    Ok((
        after.server_us - before.server_us,
        (after.host_busy_us - before.host_busy_us) / wall_us * 100.0,
    ))
}

/// The 1-minute load average, from `/proc/loadavg`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "n/a".to_string())
}

/// A positive integer from the environment, or `default`.
fn env_count(name: &str, default: u64) -> Result<u64> {
    match std::env::var(name) {
        Ok(s) => {
            let v: u64 = s
                .trim()
                .replace('_', "")
                .parse()
                .with_context(|| format!("{name}: '{s}' is not a whole number"))?;
            ensure!(v > 0, "{name} must be at least 1");
            Ok(v)
        }
        Err(_) => Ok(default),
    }
}

/// Row count, average data length and total size (heap + primary key, bytes) of a table.
fn table_shape(admin: &mut Client, table: &str) -> Result<(i64, f64, i64)> {
    let rows = admin
        .query(&format!(
            "SELECT count(*), coalesce(avg(length(data)), 0)::float8, \
             pg_total_relation_size('{table}') FROM {table}"
        ))
        .with_context(|| format!("cannot read the shape of {table}"))?;
    let cell = |i: usize| -> Result<String> {
        rows.rows
            .first()
            .and_then(|r| r.get(i).cloned().flatten())
            .with_context(|| format!("no shape of {table}"))
    };
    Ok((cell(0)?.parse()?, cell(1)?.parse()?, cell(2)?.parse()?))
}

/// Phase a: ibench's l.i0 into `pi1`, `rows` rows, 1 client, 100 rows per insert.
fn ibench_phase(
    url: &str,
    server_pid: u32,
    admin: &mut Client,
    rows: u64,
    out_dir: &Path,
) -> Result<Phase> {
    admin.query(&format!("DROP TABLE IF EXISTS {SERVER_TABLE}"))?;
    admin.query("CHECKPOINT")?;
    let profile = Profile::named("small").context("the small profile is missing")?;
    let mut opts = RunOptions::from_profile(url, &profile);
    opts.steps = vec![StepName::LoadInitial];
    opts.clients = 1;
    opts.load_rows = rows;
    opts.load_rows_per_insert = 100;
    opts.check = false; // counted below, outside the CPU window
    opts.quiet = true;
    opts.out_dir = out_dir.to_path_buf();
    opts.label = Some("bench load".to_string());

    let cpu0 = cpu_sample(server_pid)?;
    let outcome = runner::run(
        opts,
        vec!["cargo bench --bench load".to_string()],
        &mut |_| {},
    )?;
    let (server_us, host_pct) = cpu_since(cpu0, server_pid)?;

    if outcome.record.status != Status::Completed {
        bail!("the ibench run ended {:?}", outcome.record.status);
    }
    let step = outcome
        .record
        .steps
        .first()
        .context("the run recorded no step")?;
    let (count, avg_len, bytes) = table_shape(admin, IBENCH_TABLE)?;
    ensure!(
        count == u64_i64(rows),
        "{IBENCH_TABLE} holds {count} rows, not {rows}"
    );
    Ok(Phase {
        rows_per_sec: step.throughput,
        seconds: step.seconds,
        client_cpu_us_per_row: step.client_cpu_us_per_op,
        connection_cpu_us_per_row: step
            .ops
            .get("insert")
            .map(|o| o.connection_cpu_seconds * 1e6 / count_f64(rows)),
        server_cpu_us_per_row: server_us / count_f64(rows),
        host_cpu_pct: host_pct,
        avg_data_len: avg_len,
        table_bytes: bytes,
    })
}

/// The data column of the server-alone load, for a length `l`: as long as ibench's, made by
/// `repeat` (a copy, as cheap for the server as taking ibench's string off the wire) rather
/// than from random characters, which would cost the server work ibench's load never asks
/// of it. The contents do not matter to the insert: no compression or TOAST at 10-20 bytes.
const DATA_SQL: &str = "repeat('x', (l * 3) / 8) || repeat('a', l - (l * 3) / 8)";

/// The server-side load: `rows` rows in 100-row `INSERT ... SELECT` statements, one
/// transaction each, in one `DO` block. The values have the shapes of ibench's rows (spec
/// section 1, data_random_pct 50): data length uniform in [10, 20], of which
/// `floor(L * 0.375)` characters (random base64 in ibench; `x`s here, see [`DATA_SQL`]), then
/// `a`s.
fn server_load_sql(rows: u64) -> String {
    format!(
        "DO $$
DECLARE
  n bigint := {rows};
  done bigint := 0;
  k int;
BEGIN
  WHILE done < n LOOP
    k := least(100, n - done);
    INSERT INTO {SERVER_TABLE} (dateandtime, cashregisterid, customerid, productid, price, data)
    SELECT localtimestamp, floor(random() * 1000)::int, floor(random() * 100000)::int,
           floor(random() * 10000)::int, floor(random() * 500)::int,
           {DATA_SQL}
    FROM (SELECT 10 + floor(random() * 11)::int AS l FROM generate_series(1, k)) AS s;
    COMMIT;
    done := done + k;
  END LOOP;
END
$$"
    )
}

/// The same value expressions as [`server_load_sql`], for `rows` rows, computed and summed but
/// not inserted: what the server-alone phase spends on making values rather than inserting.
fn value_generation_sql(rows: u64) -> String {
    format!(
        "SELECT sum(c + cu + p + pr + length(d) + extract(epoch FROM t)::bigint) FROM (
  SELECT localtimestamp AS t, floor(random() * 1000)::int AS c,
         floor(random() * 100000)::int AS cu, floor(random() * 10000)::int AS p,
         floor(random() * 500)::int AS pr,
         {DATA_SQL} AS d
  FROM (SELECT 10 + floor(random() * 11)::int AS l FROM generate_series(1, {rows})) AS s
) AS v"
    )
}

/// Seconds the server takes to compute the values of `rows` rows without inserting them.
fn value_generation_seconds(admin: &mut Client, rows: u64) -> Result<f64> {
    let sql = value_generation_sql(rows);
    let t0 = Instant::now();
    admin
        .query(&sql)
        .context("the value-generation query failed")?;
    Ok(t0.elapsed().as_secs_f64())
}

/// `CREATE` and fill the unlogged table [`VALUES_TABLE`] with `rows` pre-made rows of the same
/// shapes as [`server_load_sql`] makes, keyed by `id` 1..=rows, then `VACUUM (ANALYZE)` it so
/// that reading it later writes nothing (hint bits set, all-visible).
fn prepare_values(admin: &mut Client, rows: u64) -> Result<()> {
    admin.query(&format!(
        "DROP TABLE IF EXISTS {VALUES_TABLE};
CREATE UNLOGGED TABLE {VALUES_TABLE} (id bigint PRIMARY KEY, dateandtime timestamp,
  cashregisterid int NOT NULL, customerid int NOT NULL, productid int NOT NULL,
  price int NOT NULL, data varchar(4000));
INSERT INTO {VALUES_TABLE}
SELECT i, localtimestamp, floor(random() * 1000)::int, floor(random() * 100000)::int,
       floor(random() * 10000)::int, floor(random() * 500)::int,
       substr(md5(random()::text), 1, (l * 3) / 8) || repeat('a', l - (l * 3) / 8)
FROM (SELECT i, 10 + floor(random() * 11)::int AS l FROM generate_series(1, {rows}) AS i) AS s"
    ))?;
    admin.query(&format!("VACUUM (ANALYZE) {VALUES_TABLE}"))?;
    Ok(())
}

/// The server-side load from pre-made values: `rows` rows copied from [`VALUES_TABLE`], 100
/// per `INSERT ... SELECT` (a primary-key range), one transaction each, in one `DO` block.
fn server_premade_sql(rows: u64) -> String {
    format!(
        "DO $$
DECLARE
  n bigint := {rows};
  done bigint := 0;
BEGIN
  WHILE done < n LOOP
    INSERT INTO {SERVER_TABLE} (dateandtime, cashregisterid, customerid, productid, price, data)
    SELECT dateandtime, cashregisterid, customerid, productid, price, data
    FROM {VALUES_TABLE} WHERE id > done AND id <= done + 100;
    COMMIT;
    done := done + 100;
  END LOOP;
END
$$"
    )
}

/// Phases b and c: the server runs `sql` (one `DO` block) to insert `rows` rows into a fresh
/// [`SERVER_TABLE`] by itself, timed by the wall clock of that one call.
fn server_phase(
    url: &str,
    server_pid: u32,
    admin: &mut Client,
    rows: u64,
    sql: &str,
) -> Result<Phase> {
    admin.query(&format!("DROP TABLE IF EXISTS {IBENCH_TABLE}"))?;
    let driver = driver_for_url(url, &DriverOptions::default())?;
    let mut conn = driver.connect()?;
    conn.create_table(SERVER_TABLE, &TableOptions::default())?;
    drop(conn);
    admin.query("CHECKPOINT")?;

    let cpu0 = cpu_sample(server_pid)?;
    let t0 = Instant::now();
    admin.query(sql).context("the server-side load failed")?;
    let seconds = t0.elapsed().as_secs_f64();
    let (server_us, host_pct) = cpu_since(cpu0, server_pid)?;

    let (count, avg_len, bytes) = table_shape(admin, SERVER_TABLE)?;
    ensure!(
        count == u64_i64(rows),
        "{SERVER_TABLE} holds {count} rows, not {rows}"
    );
    Ok(Phase {
        rows_per_sec: count_f64(rows) / seconds,
        seconds,
        client_cpu_us_per_row: None,
        connection_cpu_us_per_row: None,
        server_cpu_us_per_row: server_us / count_f64(rows),
        host_cpu_pct: host_pct,
        avg_data_len: avg_len,
        table_bytes: bytes,
    })
}

/// Median and range of some values.
struct Spread {
    median: f64,
    min: f64,
    max: f64,
}

fn spread(values: impl IntoIterator<Item = f64>) -> Spread {
    let mut v: Vec<f64> = values.into_iter().collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Spread {
            median: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
        };
    }
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Spread {
        median,
        min: v[0],
        max: v[n - 1],
    }
}

/// One summary line: name, median, range, with `digits` decimals.
fn summary_line(name: &str, s: &Spread, digits: usize) {
    println!(
        "{name:<40} {:>12.digits$}   {:>12.digits$} .. {:<12.digits$}",
        s.median, s.min, s.max
    );
}

fn main() -> Result<()> {
    let rows = env_count("IBENCH_BENCH_ROWS", 3_000_000)?;
    let rounds = env_count("IBENCH_BENCH_ROUNDS", 3)?;
    runner::stop::install_interrupt_handler();

    let scratch = std::env::temp_dir().join(format!("ibench-bench-load-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    let mut guard = Guard {
        handle: None,
        scratch: scratch.clone(),
    };
    let config = scratch.join("bench-load.conf");
    std::fs::write(&config, OVERLAY)
        .with_context(|| format!("cannot write {}", config.display()))?;
    let handle = server::start(&ServerSpec {
        kind: ServerKind::Postgres,
        config: Some(config),
        ..ServerSpec::default()
    })?;
    let url = handle.url.clone();
    let server_pid = handle.pid;
    println!(
        "server: {} in {} ({})",
        handle.version,
        handle.dir.display(),
        url
    );
    guard.handle = Some(handle);
    println!("config overlay: {}", OVERLAY.trim_end().replace('\n', "; "));
    println!(
        "rows per phase: {rows}; rounds: {rounds}; load average at start: {}",
        load_average()
    );

    // The client crate does not know `?password_file=`: give it the password itself.
    let client_url = ibench::url::resolve_password(&url, None)?;
    let config = PgConfig::from_url(&client_url).map_err(anyhow::Error::msg)?;
    let mut admin = Client::connect(&config).context("cannot connect to the server")?;
    let t0 = Instant::now();
    prepare_values(&mut admin, rows)?;
    let made_in = t0.elapsed().as_secs_f64();
    let values_bytes: i64 = admin
        .query_value(&format!("SELECT pg_total_relation_size('{VALUES_TABLE}')"))?
        .context("no size of the values table")?
        .parse()?;
    println!(
        "pre-made values for phase c: {rows} rows in {VALUES_TABLE}, {:.0} MB with its key \
         ({made_in:.1} s to make)",
        i64_f64(values_bytes) / 1e6
    );
    let premade_sql = server_premade_sql(rows);
    let server_sql = server_load_sql(rows);

    let mut results: Vec<Round> = Vec::new();
    println!();
    println!(
        "a = ibench l.i0; b = server alone, values made in SQL; c = server alone, pre-made values"
    );
    println!(
        "cli = ibench's CPU, srv = the server's CPU, us per row; host % = whole host, 200 = both cores"
    );
    println!(
        "{:>5} {:>10} {:>7} {:>7} {:>10} {:>7} {:>10} {:>7} {:>6} {:>6} {:>13} {:>7}",
        "round",
        "a rows/s",
        "a cli",
        "a srv",
        "b rows/s",
        "b srv",
        "c rows/s",
        "c srv",
        "a/b",
        "a/c",
        "host % a/b/c",
        "gen us"
    );
    for round in 0..rounds {
        let out_dir = scratch.join(format!("run-{round}"));
        // Alternate the order so that no phase always runs on a warmer (or colder) server.
        let (ibench, server, premade) = if round % 2 == 0 {
            let a = ibench_phase(&url, server_pid, &mut admin, rows, &out_dir)?;
            let b = server_phase(&url, server_pid, &mut admin, rows, &server_sql)?;
            let c = server_phase(&url, server_pid, &mut admin, rows, &premade_sql)?;
            (a, b, c)
        } else {
            let c = server_phase(&url, server_pid, &mut admin, rows, &premade_sql)?;
            let b = server_phase(&url, server_pid, &mut admin, rows, &server_sql)?;
            let a = ibench_phase(&url, server_pid, &mut admin, rows, &out_dir)?;
            (a, b, c)
        };
        if runner::stop::interrupted() {
            bail!("interrupted");
        }
        let value_gen_us_per_row =
            value_generation_seconds(&mut admin, rows)? * 1e6 / count_f64(rows);
        let r = Round {
            ibench,
            server,
            premade,
            value_gen_us_per_row,
        };
        let host = format!(
            "{:.0}/{:.0}/{:.0}",
            r.ibench.host_cpu_pct, r.server.host_cpu_pct, r.premade.host_cpu_pct
        );
        println!(
            "{:>5} {:>10.0} {:>7.3} {:>7.2} {:>10.0} {:>7.2} {:>10.0} {:>7.2} {:>6.3} {:>6.3} {:>13} {:>7.2}",
            round + 1,
            r.ibench.rows_per_sec,
            r.ibench.client_cpu_us_per_row.unwrap_or(f64::NAN),
            r.ibench.server_cpu_us_per_row,
            r.server.rows_per_sec,
            r.server.server_cpu_us_per_row,
            r.premade.rows_per_sec,
            r.premade.server_cpu_us_per_row,
            r.ratio(),
            r.ratio_premade(),
            host,
            r.value_gen_us_per_row,
        );
        let mb = |p: &Phase| i64_f64(p.table_bytes) / 1e6;
        eprintln!(
            "      (a {:.1} s, b {:.1} s, c {:.1} s; average data length a {:.2}, b {:.2}, c {:.2}; \
             table + pk MB a {:.0}, b {:.0}, c {:.0})",
            r.ibench.seconds,
            r.server.seconds,
            r.premade.seconds,
            r.ibench.avg_data_len,
            r.server.avg_data_len,
            r.premade.avg_data_len,
            mb(&r.ibench),
            mb(&r.server),
            mb(&r.premade)
        );
        results.push(r);
    }

    let of = |f: fn(&Round) -> f64| spread(results.iter().map(f));
    let ccpu = of(|r| r.ibench.client_cpu_us_per_row.unwrap_or(f64::NAN));
    let ratio = of(Round::ratio);
    println!();
    println!(
        "{:<40} {:>12}   {:>12}    {:<12}",
        "", "median", "min", "max"
    );
    summary_line("a ibench rows/s", &of(|r| r.ibench.rows_per_sec), 0);
    summary_line("a ibench client CPU us/row", &ccpu, 3);
    summary_line(
        "a ibench connection-thread CPU us/row",
        &of(|r| r.ibench.connection_cpu_us_per_row.unwrap_or(f64::NAN)),
        3,
    );
    summary_line(
        "a server CPU us/row",
        &of(|r| r.ibench.server_cpu_us_per_row),
        2,
    );
    summary_line("b server-alone rows/s", &of(|r| r.server.rows_per_sec), 0);
    summary_line(
        "b server CPU us/row",
        &of(|r| r.server.server_cpu_us_per_row),
        2,
    );
    summary_line(
        "b value generation only, wall us/row",
        &of(|r| r.value_gen_us_per_row),
        2,
    );
    summary_line(
        "c server-alone pre-made rows/s",
        &of(|r| r.premade.rows_per_sec),
        0,
    );
    summary_line(
        "c server CPU us/row",
        &of(|r| r.premade.server_cpu_us_per_row),
        2,
    );
    summary_line("ratio a/b (ibench / server alone)", &ratio, 3);
    summary_line(
        "ratio a/c (ibench / pre-made)",
        &of(Round::ratio_premade),
        3,
    );
    summary_line(
        "host CPU % during a (200 = both cores)",
        &of(|r| r.ibench.host_cpu_pct),
        0,
    );
    summary_line("host CPU % during b", &of(|r| r.server.host_cpu_pct), 0);
    summary_line("host CPU % during c", &of(|r| r.premade.host_cpu_pct), 0);
    println!();
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    println!(
        "target client CPU <= {TARGET_CLIENT_CPU_US} us/row: {} (median {:.3})",
        verdict(ccpu.median <= TARGET_CLIENT_CPU_US),
        ccpu.median
    );
    println!(
        "target ratio >= {TARGET_RATIO}: {} (median {:.3})",
        verdict(ratio.median >= TARGET_RATIO),
        ratio.median
    );
    println!("load average at end: {}", load_average());
    drop(admin);
    drop(guard);
    Ok(())
}
