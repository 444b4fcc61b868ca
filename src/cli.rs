//! The command line: clap definitions, converted once into validated options.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use serde::{Deserialize, Serialize};

use crate::results::options::RunOptions;
use crate::results::options::{MicroSizes, OptionsError, Workload};
use crate::results::target::Engine;
use crate::server::ServerKind;
use crate::workload::steps::{Profile, StepName, parse_step_list};

/// Heading of `ibench run --help`: where the database is and which server process it is.
const CONNECTION: &str = "Connection";
/// Heading: which steps run.
const STEPS: &str = "Steps";
/// Heading: rows, clients, durations.
const SIZES: &str = "Sizes";
/// Heading: what the rows and tables hold.
const ROWS: &str = "Rows and tables";
/// Heading: what is measured besides throughput and latency.
const MEASUREMENT: &str = "Measurement";
/// Heading: where the results go and what is printed.
const OUTPUT: &str = "Output";

/// What `ibench --help` says after the commands: the exit statuses and where to read more.
const AFTER_HELP: &str = "Exit status: 0 done; 1 the work failed (a server unreachable, a \
file unreadable, a failed step or check); 2 the command line is wrong (the error names the \
flag); 130 interrupted. `ibench check` has its own: 0 no regression, 1 regressed, 2 bad input, \
3 some steps cannot tell.\n\nStart with `ibench run` (SQLite, about a minute); \
`ibench COMMAND --help` for each command; the README and docs/ for the method.";

/// `ibench --version`: the version, the commit it was built from and how it was built
/// (`0.1.0 (commit a41335d, release build, opt-level 3)`; build.rs).
pub const VERSION_TEXT: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("IBENCH_COMMIT"),
    ", ",
    env!("IBENCH_BUILD"),
    ")"
);

/// The Insert Benchmark as one binary: loads, indexes, inserts and deletes, then queries with
/// paced background writes, on PostgreSQL, MySQL/MariaDB (InnoDB, MyRocks) and SQLite.
#[derive(Debug, Parser)]
#[command(
    name = "ibench",
    version = VERSION_TEXT,
    about,
    long_about = None,
    after_help = AFTER_HELP,
    arg_required_else_help = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Colours in the run's output and the text report: auto (on a terminal, unless NO_COLOR
    /// is set), always, never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = crate::console::ColourChoice::Auto)]
    pub color: crate::console::ColourChoice,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the benchmark steps against a database and write the results.
    Run(Box<RunArgs>),
    /// Render one run or compare several: summary tables, latency distributions, charts.
    Report(ReportArgs),
    /// Start, stop or list private server instances (own data dir, loopback port, private
    /// socket).
    #[command(subcommand)]
    Server(ServerCommand),
    /// Run versions × configs × workloads from one matrix file and compare them by group.
    #[command(subcommand)]
    Matrix(MatrixCommand),
    /// Did the candidate get slower than the base? One verdict per step, and an exit code:
    /// 0 no regression, 1 regressed, 2 bad input or unlike runs, 3 some steps cannot tell.
    Check(CheckArgs),
    /// Print a shell completion script, e.g. `ibench completions bash >
    /// ~/.local/share/bash-completion/completions/ibench`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) on standard output, e.g. `ibench man | man -l -`; with
    /// --dir, write one page per command there.
    Man {
        /// Write ibench.1 and a page per command (ibench-run.1, ...) into this directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// `ibench check ...`
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A matrix output dir (`ibench matrix run --out`), or results directories of runs (each
    /// holds a run.json) with --base naming the base's label.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// With run directories: the label of the base's runs; the other runs (one label) are the
    /// candidate. Or one of the directories given: it is the base and every other run the
    /// candidate (for runs that share a label).
    #[arg(long)]
    pub base: Option<String>,
    /// With a matrix: the group to check (required when the matrix has several); each of its
    /// members is checked against the group's base, workload by workload.
    #[arg(long)]
    pub group: Option<String>,
    /// Level of each one-sided test: a figure is judged on the 1 - 2·alpha confidence
    /// interval of its ratio (90% at 0.05; docs/method.md).
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Smallest change, in percent, that counts: "no change" needs the whole interval inside
    /// ±threshold, a regression or an improvement the whole interval beyond it.
    #[arg(long, default_value_t = crate::report::diagnosis::THRESHOLD_PCT)]
    pub threshold: f64,
    /// Which figures are judged and counted in the exit code: rates (throughput, latency),
    /// work (work per op: server CPU, the DBMS's counters, perf), or all.
    #[arg(long, value_enum, default_value = "all")]
    pub judge: crate::stats::decision::Judge,
    /// The shortest step judged: its measured part must last this many seconds and hold as
    /// many per-second samples; a shorter one is "cannot tell: too short".
    #[arg(long, default_value_t = 3.0)]
    pub min_step_seconds: f64,
    /// Run this matrix file into the output dir (the one directory given) a repeat of every
    /// cell at a time, checking after each round, until every figure more repeats can decide
    /// is decided or a cap is reached; resumable.
    #[arg(long, value_name = "MATRIX.toml")]
    pub run: Option<PathBuf>,
    /// With --run: run each round as a duet (the matrix's `order = "duet"`): the base and the
    /// candidate at the same time on this host, every step started together on both sides,
    /// each step judged on the seconds both ran (docs/method.md).
    #[arg(long, requires = "run")]
    pub duet: bool,
    /// With --run: the most repeats a side.
    #[arg(long, default_value_t = 10, requires = "run")]
    pub max_repeats: u32,
    /// With --run: stop starting rounds after this long (90s, 15m, 2h).
    #[arg(long, value_parser = parse_duration, requires = "run")]
    pub max_time: Option<f64>,
    /// Exit 1 instead of 3 when nothing regressed but some steps cannot tell.
    #[arg(long)]
    pub fail_on_inconclusive: bool,
    /// Judge every repeat, also those the host screening flags (by default a change seen only
    /// with them is "cannot tell: host-affected"); for a host known to be noisy, at the price
    /// of more false regressions (docs/method.md).
    #[arg(long)]
    pub keep_host_affected: bool,
    /// Output format on standard output (Markdown is also appended to $GITHUB_STEP_SUMMARY
    /// when that is set): text, markdown or json, named as `ibench report --format` names them.
    #[arg(long, default_value = "text", value_parser = check_format())]
    pub format: crate::report::Format,
    /// Also write a JUnit XML file: one test case per step and figure (failed = regressed,
    /// skipped = cannot tell).
    #[arg(long)]
    pub junit: Option<PathBuf>,
}

/// `ibench matrix ...`
#[derive(Debug, Subcommand)]
pub enum MatrixCommand {
    /// Print the cells (name, server, config, workload, repeat, label) and the estimate.
    Plan {
        /// The matrix file (TOML; see docs/matrix.md).
        file: PathBuf,
        /// Which shard to show.
        #[command(flatten)]
        shard: ShardArgs,
    },
    /// Run the cells (each on a fresh private server); rerun the same command to resume.
    Run {
        /// The matrix file (TOML; see docs/matrix.md).
        file: PathBuf,
        /// Output directory: one dir per cell, its state, results and server logs.
        #[arg(long)]
        out: PathBuf,
        /// Which shard this host runs.
        #[command(flatten)]
        shard: ShardArgs,
        /// No per-step progress lines (the per-cell line stays).
        #[arg(long, short)]
        quiet: bool,
    },
    /// Render one report per group and workload (all formats) and an index page.
    Report {
        /// Output dirs of `matrix run` (the shards of one matrix).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where to write the reports (default: FIRST_DIR/report).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Show each step's detail in the text and Markdown reports: its latency
        /// distribution, figures per operation, counters and profile (the HTML reports always
        /// have them, folded).
        #[arg(long)]
        details: bool,
        /// The replica-lag SLA's bound: a step of a run with a replica fails it when its p99
        /// lag exceeds this many ms, or its replica was lost (docs/replication.md).
        #[arg(long, value_name = "MS", default_value_t = crate::report::lag_sla::DEFAULT_LAG_SLA_MS, value_parser = parse_lag_sla_ms)]
        lag_sla_ms: f64,
    },
}

/// `--shard I/N` or `--shards N` (index from the scheduler).
#[derive(Debug, Args)]
pub struct ShardArgs {
    /// Run only shard I of N (0-based, I < N); the hosts of a matrix each run one.
    #[arg(long, conflicts_with = "shards")]
    pub shard: Option<String>,
    /// Number of shards, the index being the task's own id: JOB_COMPLETION_INDEX (Kubernetes
    /// indexed Job) or SLURM_ARRAY_TASK_ID (Slurm job array, --array=0-(N-1); rerun shard I
    /// with --array=I).
    #[arg(long)]
    pub shards: Option<u32>,
}

/// `ibench report ...`
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results directories (each holds a run.json); the first is the base unless --base.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// Label of the base run that relative figures divide by.
    #[arg(long)]
    pub base: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: crate::report::Format,
    /// Write to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Show each step's detail in text and Markdown: its latency distribution, figures per
    /// operation, counters and profile (the HTML report always has them, folded).
    #[arg(long)]
    pub details: bool,
    /// The replica-lag SLA's bound: a step of a run with a replica (--replica-url) fails it
    /// when its p99 lag exceeds this many ms, or its replica was lost (docs/replication.md).
    #[arg(long, value_name = "MS", default_value_t = crate::report::lag_sla::DEFAULT_LAG_SLA_MS, value_parser = parse_lag_sla_ms)]
    pub lag_sla_ms: f64,
}

/// `ibench server ...`
#[derive(Debug, Subcommand)]
pub enum ServerCommand {
    /// Create a fresh instance and start it; prints the URL to use on a line of its own.
    Start(ServerStartArgs),
    /// Stop an instance started with `ibench server start`; says what it leaves on disk.
    Stop {
        /// The instance directory given to (or printed by) `server start`.
        #[arg(long)]
        dir: PathBuf,
        /// Also delete the instance directory (data, logs, password) once the server is down.
        #[arg(long)]
        remove: bool,
    },
    /// List the private servers running on this host that `ibench server start` started
    /// (found from the running processes; no registry).
    List,
}

/// `ibench server start ...`
#[derive(Debug, Args)]
pub struct ServerStartArgs {
    /// Which server.
    #[arg(value_enum)]
    pub kind: ServerKind,
    /// Storage engine to load (MariaDB only): rocksdb loads MyRocks at server start.
    #[arg(long, value_enum, default_value_t = Engine::default())]
    pub engine: Engine,
    /// Directory holding the server binaries (found automatically when not given).
    #[arg(long)]
    pub bindir: Option<PathBuf>,
    /// Config file applied to the instance (appended to postgresql.conf; MariaDB --defaults-file).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Instance directory to create; must not exist (default: a new one under the temp dir).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// TCP port on 127.0.0.1 (default: a free one).
    #[arg(long)]
    pub port: Option<u16>,
    /// Make the new instance a replica of the private primary in this instance dir:
    /// PostgreSQL a streaming standby (a replication slot; pg_basebackup, or where the bindir
    /// has none a file copy under the low-level backup API), MariaDB a GTID replica (the primary started with --log-bin, before it holds tables). See
    /// docs/replication.md.
    #[arg(long, value_name = "PRIMARY_DIR")]
    pub replica_of: Option<PathBuf>,
    /// With --replica-of (PostgreSQL): a synchronous standby (synchronous_standby_names,
    /// synchronous_commit = remote_apply).
    #[arg(long, requires = "replica_of", conflicts_with = "semisync")]
    pub sync: bool,
    /// With --replica-of (MariaDB): semi-synchronous replication.
    #[arg(long, requires = "replica_of")]
    pub semisync: bool,
    /// With --replica-of (PostgreSQL 13 and later): the most WAL the primary keeps for its
    /// standbys' replication slots (max_slot_wal_keep_size), so that a stopped standby cannot
    /// fill its disk; a standby further behind loses its slot. auto: a quarter of the space
    /// free on the primary's data disk, at most 64 GB (a bound in the primary's config is
    /// kept); a size such as 512MB or 4GB; or unlimited.
    #[arg(
        long,
        requires = "replica_of",
        value_name = "SIZE",
        default_value = "auto"
    )]
    pub slot_keep: crate::replication::wal_keep::SlotKeep,
    /// MariaDB: write a binary log (server_id 1, row format), so replicas can attach.
    #[arg(long, conflicts_with = "replica_of")]
    pub log_bin: bool,
}

impl ServerStartArgs {
    /// The replica mode the flags ask for (`async` without --sync or --semisync).
    pub fn replica_mode(&self) -> crate::replication::ReplicaMode {
        use crate::replication::ReplicaMode;
        match (self.sync, self.semisync) {
            (true, _) => ReplicaMode::Sync,
            (_, true) => ReplicaMode::Semisync,
            _ => ReplicaMode::Async,
        }
    }
}

/// `ibench run ...`: every run option, declared once. The same struct is the command line
/// (clap) and a matrix file's `[workloads.NAME]` (serde, unknown keys refused); its defaults
/// are its `Default`, which both read.
#[derive(Clone, Debug, Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunArgs {
    /// The database: sqlite:PATH, postgres://USER[:PASS]@HOST:PORT/DB or
    /// mysql://USER[:PASS]@HOST:PORT/DB.
    ///
    /// The default, sqlite:ibench.db, is made inside the results directory (--out), so a run
    /// leaves nothing in the working directory.
    /// postgres:// is read as libpq reads it: PG* variables and ~/.pgpass fill the gaps; TLS
    /// with ?sslmode=verify-full&sslrootcert=CA.pem. mysql:// serves MySQL and MariaDB:
    /// ~/.my.cnf and MYSQL_PWD fill the gaps; TLS with ?ssl-mode=VERIFY_IDENTITY&ssl-ca=CA.pem.
    /// `?password_file=PATH` reads the password from a file; a password written here is
    /// visible in `ps`.
    #[arg(help_heading = CONNECTION, long, default_value_t = defaults().url)]
    pub url: String,
    /// A replica of the server at --url: the run writes a heartbeat row on the primary every
    /// 100 ms and reads it here, and records the replica's lag per second and per step
    /// (max, p99, seconds to catch up after it) beside the DBMS's own view (docs/replication.md).
    #[arg(help_heading = CONNECTION, long, value_name = "URL")]
    pub replica_url: Option<String>,
    /// Where the query steps (qr*, qp*) run their queries: on the primary, or on the replica
    /// at --replica-url while their background writers stay on the primary, so they measure
    /// a replica under apply load (needs --replica-url).
    #[arg(help_heading = CONNECTION, long, default_value_t = defaults().query_on, value_enum)]
    pub query_on: crate::results::options::QueryOn,
    /// When the replica at --replica-url stops answering: `continue` keeps measuring on the
    /// primary and records the lag lost from that second; `stop` fails the step in progress
    /// (what it measured is kept) and ends the run with status 1.
    #[arg(help_heading = CONNECTION, long, default_value_t = defaults().on_replica_loss, value_enum)]
    pub on_replica_loss: crate::results::options::ReplicaLoss,
    /// Lose the primary during a step and fail over to the replica at --replica-url:
    /// STEP+SECONDS (l.i1+10s) into that step's measured part, ibench sends SIGKILL to the
    /// primary's server process (a private one on this host), promotes the replica
    /// (PostgreSQL 12+: pg_promote(); MariaDB: STOP SLAVE IO_THREAD, the relay log applied,
    /// STOP SLAVE, RESET SLAVE ALL, read_only = OFF), and once it takes writes the clients
    /// reconnect to it and go on; the step records the failover and audits
    /// the acknowledged rows on the new primary (docs/failover.md). The step must be the
    /// last of --steps; implies --client-ids (the audit needs the keys ibench chose).
    #[arg(help_heading = CONNECTION, long, value_name = "STEP+SECONDS")]
    pub failover: Option<String>,
    /// How long a client that lost its connection keeps trying to connect again (90s, 2m)
    /// before the step fails, and with --failover how long the promotion may take;
    /// statements that fail meanwhile are counted by kind. Default 60s with --failover;
    /// without either flag a lost connection fails the step.
    #[arg(help_heading = CONNECTION, long, value_name = "DURATION", value_parser = parse_duration)]
    pub reconnect_for: Option<f64>,
    /// Storage engine of the tables (mysql:// only).
    #[arg(help_heading = CONNECTION, long, value_enum)]
    pub engine: Option<Engine>,
    /// The server's flavour, when its version string does not tell (detected otherwise).
    ///
    /// cockroachdb or yugabytedb over postgres://, tidb over mysql://.
    #[arg(help_heading = CONNECTION, long, value_enum)]
    pub flavour: Option<crate::results::target::Flavour>,
    /// Instance dir of a server started with `ibench server start`, to measure its CPU,
    /// memory and IO.
    ///
    /// Its pid and data dir let ibench find the server's processes (otherwise found from the
    /// server itself). Must be the instance of the server at --url.
    #[arg(help_heading = CONNECTION, long, conflicts_with = "server_pid")]
    pub server_dir: Option<PathBuf>,
    /// Pid of the server's main process (postmaster, mariadbd) on this host.
    ///
    /// Must be the server at --url.
    #[arg(help_heading = CONNECTION, long)]
    pub server_pid: Option<u32>,
    /// Steps to run, comma-separated, in order.
    ///
    /// Default: l.i0,l.x,l.i1,l.i2 then qr/qp per --query-rates; with --workload micro: m.load
    /// then the whole microbenchmark suite.
    #[arg(help_heading = STEPS, long, value_delimiter = ',')]
    pub steps: Option<Vec<String>>,
    /// Background insert rates (rows/s per client) of the default query steps.
    ///
    /// Default 100,500,1000. With --steps, name the query steps instead (e.g.
    /// qr2000,qp2000).
    #[arg(help_heading = STEPS, long, value_delimiter = ',', conflicts_with = "steps")]
    pub query_rates: Option<Vec<u32>>,
    /// The benchmark: the insert benchmark, or the microbenchmark suite.
    ///
    /// The microbenchmarks are sysbench-style tests on tables sbtestN (docs/micro.md).
    #[arg(help_heading = STEPS, long, default_value_t = defaults().workload, value_enum)]
    pub workload: Workload,
    /// Skip the integrity check (row counts and indexes) after each step that writes.
    ///
    /// Formerly `--no-check`, still accepted; a matrix key `no_check` or `no_integrity_check`.
    #[arg(help_heading = STEPS, long = "no-integrity-check", alias = "no-check")]
    #[serde(alias = "no_integrity_check")]
    pub no_check: bool,
    /// Sizes and durations: small, cached or io-bound; the flags below change them.
    ///
    /// small: under a minute on SQLite, a 5 s settle after l.i2; cached: 30M/40M/10M rows,
    /// 1800 s query steps; io-bound: 800M/4M/1M rows, 1800 s.
    #[arg(help_heading = SIZES, long, default_value_t = defaults().profile)]
    pub profile: String,
    /// Number of clients (1 to 1024); each has its own table pi1..piN unless --shared-table.
    #[arg(help_heading = SIZES, long, default_value_t = defaults().clients)]
    pub clients: u32,
    /// All clients use one table, pi1.
    #[arg(help_heading = SIZES, long)]
    pub shared_table: bool,
    /// X: rows per table inserted by l.i0 (default from --profile).
    #[arg(help_heading = SIZES, long)]
    pub load_rows: Option<u64>,
    /// Y: rows per table inserted and deleted by l.i1 (default from --profile).
    #[arg(help_heading = SIZES, long)]
    pub i1_rows: Option<u64>,
    /// Z: rows per table inserted and deleted by l.i2 (default from --profile).
    #[arg(help_heading = SIZES, long)]
    pub i2_rows: Option<u64>,
    /// Seconds each query step runs (default from --profile).
    #[arg(help_heading = SIZES, long)]
    pub query_seconds: Option<f64>,
    /// Cap on the settle phase after l.i2, seconds (default from --profile; 0 skips the rest).
    #[arg(help_heading = SIZES, long)]
    pub settle_seconds: Option<f64>,
    /// Rows per insert in l.i0.
    #[arg(help_heading = SIZES, long, default_value_t = defaults().load_batch)]
    pub load_batch: u32,
    /// Rows per insert and per delete in l.i1.
    #[arg(help_heading = SIZES, long, default_value_t = defaults().i1_batch)]
    pub i1_batch: u32,
    /// Rows per insert and per delete in l.i2.
    #[arg(help_heading = SIZES, long, default_value_t = defaults().i2_batch)]
    pub i2_batch: u32,
    /// Rows per background insert and delete in the query steps.
    #[arg(help_heading = SIZES, long, default_value_t = defaults().query_batch)]
    pub query_batch: u32,
    /// Microbenchmark tables (each operation picks one at random).
    #[arg(help_heading = SIZES, long, default_value_t = defaults().micro_tables)]
    pub micro_tables: u32,
    /// Rows per microbenchmark table loaded by m.load.
    #[arg(help_heading = SIZES, long, default_value_t = defaults().micro_rows)]
    pub micro_rows: u32,
    /// Seconds each microbenchmark runs.
    #[arg(help_heading = SIZES, long, default_value_t = defaults().micro_seconds)]
    pub micro_seconds: f64,
    /// Seed of every random stream.
    #[arg(help_heading = ROWS, long, default_value_t = defaults().seed)]
    pub seed: u64,
    /// The client assigns transactionid instead of the server.
    #[arg(help_heading = ROWS, long)]
    pub client_ids: bool,
    /// Text appended to CREATE TABLE (...), e.g. "USING heap" or a partitioning clause.
    #[arg(help_heading = ROWS, long)]
    pub table_options: Option<String>,
    /// cashregisterid is uniform in [0, N).
    #[arg(help_heading = ROWS, long, default_value_t = defaults().cashregisters)]
    pub cashregisters: i32,
    /// customerid is uniform in [0, N).
    #[arg(help_heading = ROWS, long, default_value_t = defaults().customers)]
    pub customers: i32,
    /// productid is uniform in [0, N).
    #[arg(help_heading = ROWS, long, default_value_t = defaults().products)]
    pub products: i32,
    /// price is uniform in [0, N).
    #[arg(help_heading = ROWS, long, default_value_t = defaults().max_price)]
    pub max_price: i32,
    /// Shortest data value, characters.
    #[arg(help_heading = ROWS, long, default_value_t = defaults().data_min_len)]
    pub data_min_len: u32,
    /// Longest data value, characters.
    #[arg(help_heading = ROWS, long, default_value_t = defaults().data_max_len)]
    pub data_max_len: u32,
    /// Percent of random characters in data (floor(L * 0.75 * pct / 100) are random).
    #[arg(help_heading = ROWS, long, default_value_t = defaults().data_random_pct)]
    pub data_random_pct: u32,
    /// The deleter re-reads min(transactionid) every N deletes.
    #[arg(help_heading = ROWS, long, default_value_t = defaults().delete_min_refresh)]
    pub delete_min_refresh: u64,
    /// Time the host before and after every step for this many ms, so reports can tell a
    /// slow host from a slow DBMS; 0 turns the probe off.
    ///
    /// A CPU loop, a memory walk, loopback round trips and fsyncs on the data dir's
    /// filesystem (docs/method.md).
    #[arg(help_heading = MEASUREMENT, long, default_value_t = defaults().host_probe_ms, value_name = "MS")]
    pub host_probe_ms: u32,
    /// Give up on the server when no connection of the run has received anything from it for
    /// this many seconds; 0 waits for ever.
    ///
    /// A frozen server or network path: the step fails with "no reply from the server for N
    /// s", keeping what it measured.
    #[arg(help_heading = MEASUREMENT, long, default_value_t = defaults().stall_limit, value_name = "SECONDS")]
    pub stall_limit: u32,
    /// Count hardware and software events on the server's processes during each step.
    ///
    /// `perf stat`, which must be installed: seven groups in turn, each divided by the
    /// operations of its own intervals (docs/method.md).
    #[arg(help_heading = MEASUREMENT, long)]
    pub perf: bool,
    /// Seconds each --perf group is counted before the next one's turn.
    ///
    /// A step shorter than 7 turns counts only some groups (steps take turns at the first
    /// group).
    #[arg(help_heading = MEASUREMENT, long, default_value_t = defaults().perf_interval, value_name = "SECONDS", requires = "perf")]
    pub perf_interval: f64,
    /// Profile the server's CPU in each step: folded stacks, a flamegraph and the top
    /// functions per step.
    ///
    /// `perf record` on its processes: needs perf and a server on this host.
    #[arg(help_heading = MEASUREMENT, long)]
    pub profile_server: bool,
    /// Seconds of each step's measured part that --profile-server records.
    #[arg(help_heading = MEASUREMENT, long, default_value_t = defaults().profile_seconds, requires = "profile_server")]
    pub profile_seconds: f64,
    /// Results directory (default: ibench-results/<date>-<time>-<pid>).
    #[arg(help_heading = OUTPUT, long)]
    pub out: Option<PathBuf>,
    /// Label of the run in reports (default: DBMS and version).
    #[arg(help_heading = OUTPUT, long)]
    pub label: Option<String>,
    /// No progress lines and no summary.
    #[arg(help_heading = OUTPUT, long, short)]
    pub quiet: bool,
    /// After the summary, the full tables: latency per op kind (percentiles and buckets,
    /// the background writes' service time) and the server efficiency per op.
    #[arg(help_heading = OUTPUT, long, conflicts_with = "quiet")]
    #[serde(skip)]
    pub details: bool,
    /// The replica-lag SLA's bound in the summary and report.html: with --replica-url, a step
    /// fails it when its p99 lag exceeds this many ms, or the replica was lost.
    ///
    /// A report's judgement, not recorded in run.json: `ibench report --lag-sla-ms` judges the
    /// same run against another bound (docs/replication.md). Not a matrix key: `ibench matrix
    /// report --lag-sla-ms` sets it for a matrix.
    #[arg(help_heading = OUTPUT, long, value_name = "MS", default_value_t = defaults().lag_sla_ms, value_parser = parse_lag_sla_ms)]
    #[serde(skip)]
    pub lag_sla_ms: f64,
}

/// The run options' defaults (clap's `default_value_t` reads them too).
fn defaults() -> RunArgs {
    RunArgs::default()
}

impl Default for RunArgs {
    /// The defaults of a run: the small profile's options (`RunOptions::from_profile`, the
    /// one home of the numbers) with the profile's sizes left to the profile.
    fn default() -> RunArgs {
        let small = Profile::small();
        let o = RunOptions::from_profile(DEFAULT_URL, &small);
        RunArgs {
            url: o.url,
            replica_url: None,
            query_on: o.query_on,
            on_replica_loss: o.on_replica_loss,
            failover: None,
            reconnect_for: None,
            engine: None,
            flavour: None,
            profile: small.name.clone(),
            steps: None,
            workload: o.workload,
            micro_tables: o.micro.tables,
            micro_rows: o.micro.rows,
            micro_seconds: o.micro.seconds,
            query_rates: None,
            clients: o.clients,
            shared_table: o.shared_table,
            load_rows: None,
            i1_rows: None,
            i2_rows: None,
            load_batch: o.load_rows_per_insert,
            i1_batch: o.i1_rows_per_insert,
            i2_batch: o.i2_rows_per_insert,
            query_batch: o.query_rows_per_insert,
            query_seconds: None,
            settle_seconds: None,
            seed: o.seed,
            client_ids: o.table.client_assigns_ids,
            table_options: None,
            cashregisters: o.row_shape.cashregisters,
            customers: o.row_shape.customers,
            products: o.row_shape.products,
            max_price: o.row_shape.max_price,
            data_min_len: o.row_shape.data_min_len,
            data_max_len: o.row_shape.data_max_len,
            data_random_pct: o.row_shape.data_random_pct,
            delete_min_refresh: o.delete_min_refresh,
            no_check: !o.check,
            out: None,
            label: None,
            quiet: o.quiet,
            details: false,
            lag_sla_ms: crate::report::lag_sla::DEFAULT_LAG_SLA_MS,
            server_dir: None,
            server_pid: None,
            perf: o.perf,
            perf_interval: o.perf_interval_seconds,
            profile_server: false,
            profile_seconds: DEFAULT_PROFILE_SECONDS,
            host_probe_ms: o.host_probe_ms,
            stall_limit: o.stall_limit_seconds,
        }
    }
}

/// Seconds of each step `--profile-server` records, by default.
pub const DEFAULT_PROFILE_SECONDS: f64 = 10.0;

impl RunArgs {
    /// Turn the flags into validated options. A flag that breaks its own rules is an
    /// [`OptionsError`] (the command line is wrong: exit 2); a missing tool is another error.
    pub fn to_options(&self) -> anyhow::Result<RunOptions> {
        let profile = Profile::named(&self.profile).ok_or_else(|| {
            OptionsError(format!(
                "unknown profile '{}': use one of {} (--profile)",
                self.profile,
                crate::workload::steps::PROFILE_NAMES.join(", ")
            ))
        })?;
        let mut o = RunOptions::from_profile(&self.url, &profile);
        let rates = self
            .query_rates
            .as_deref()
            .unwrap_or(&crate::workload::steps::DEFAULT_QUERY_RATES_ROWS_PER_SEC);
        if rates.contains(&0) {
            return Err(OptionsError("--query-rates must be above 0 rows/s".into()).into());
        }
        o.workload = self.workload;
        o.micro = MicroSizes {
            tables: self.micro_tables,
            rows: self.micro_rows,
            seconds: self.micro_seconds,
        };
        o.steps = match (&self.steps, self.workload) {
            (Some(s), _) => once_each(
                parse_step_list(&s.join(",")).map_err(|e| OptionsError(format!("{e:#}")))?,
            )?,
            (None, Workload::Insert) => StepName::default_list(rates),
            (None, Workload::Micro) => StepName::micro_list(),
        };
        o.replica_url.clone_from(&self.replica_url);
        o.query_on = self.query_on;
        o.on_replica_loss = self.on_replica_loss;
        o.failover = match &self.failover {
            Some(text) => Some(text.parse().map_err(OptionsError)?),
            None => None,
        };
        o.reconnect_for_seconds = self
            .reconnect_for
            .or(o.failover.map(|_| DEFAULT_RECONNECT_FOR_SECONDS));
        o.engine = self.engine;
        o.flavour = self.flavour;
        self.put_sizes(&mut o);
        self.put_table(&mut o);
        o.delete_min_refresh = self.delete_min_refresh;
        o.check = !self.no_check;
        self.put_output_and_sampling(&mut o);
        o.url = default_sqlite_in_results(&self.url, &o.out_dir);
        // What depends on the backend is checked where the run reads its URL, once
        // (`ConnectTarget::for_run`).
        o.validate()?;
        need_perf(&o)?;
        Ok(o)
    }

    /// The sizes: clients, rows per step, rows per insert, query and settle seconds, the seed.
    fn put_sizes(&self, o: &mut RunOptions) {
        o.clients = self.clients;
        o.shared_table = self.shared_table;
        o.load_rows = self.load_rows.unwrap_or(o.load_rows);
        o.i1_rows = self.i1_rows.unwrap_or(o.i1_rows);
        o.i2_rows = self.i2_rows.unwrap_or(o.i2_rows);
        o.load_rows_per_insert = self.load_batch;
        o.i1_rows_per_insert = self.i1_batch;
        o.i2_rows_per_insert = self.i2_batch;
        o.query_rows_per_insert = self.query_batch;
        o.query_seconds = self.query_seconds.unwrap_or(o.query_seconds);
        if self.settle_seconds.is_some() {
            o.settle_max_seconds = self.settle_seconds;
        }
        o.seed = self.seed;
    }

    /// The table and its rows: who assigns the ids, the engine and DDL options, the row shape.
    fn put_table(&self, o: &mut RunOptions) {
        // The failover's audit needs the keys ibench chose.
        o.table.client_assigns_ids = self.client_ids || self.failover.is_some();
        o.table.engine = self.engine.unwrap_or_default();
        o.table.table_suffix = self.table_options.clone();
        o.row_shape.cashregisters = self.cashregisters;
        o.row_shape.customers = self.customers;
        o.row_shape.products = self.products;
        o.row_shape.max_price = self.max_price;
        o.row_shape.data_min_len = self.data_min_len;
        o.row_shape.data_max_len = self.data_max_len;
        o.row_shape.data_random_pct = self.data_random_pct;
    }

    /// Where the results go and what is sampled beside the run: the directory and label, the
    /// server's directory and pid, perf, the server profile, the host probe, the stall limit.
    fn put_output_and_sampling(&self, o: &mut RunOptions) {
        o.out_dir = match &self.out {
            Some(p) => p.clone(),
            None => default_out_dir(),
        };
        o.label = self.label.clone();
        o.quiet = self.quiet;
        o.server_dir.clone_from(&self.server_dir);
        o.server_pid = self.server_pid;
        o.perf = self.perf;
        o.perf_interval_seconds = self.perf_interval;
        o.profile_seconds = self.profile_server.then_some(self.profile_seconds);
        o.host_probe_ms = self.host_probe_ms;
        o.stall_limit_seconds = self.stall_limit;
    }
}

/// `--steps` with each step once: a step given twice would run twice on the same tables, and
/// its second record would shadow the first in every report.
fn once_each(steps: Vec<StepName>) -> Result<Vec<StepName>, OptionsError> {
    for (i, s) in steps.iter().enumerate() {
        if steps[..i].contains(s) {
            return Err(OptionsError(format!(
                "step {s} is given twice in --steps; give each step once (a run with a step again goes into another --out)"
            )));
        }
    }
    Ok(steps)
}

/// The URL a run uses: the default SQLite file (`sqlite:ibench.db`) lives in the results
/// directory, so a run leaves nothing in the working directory; any other URL as given.
fn default_sqlite_in_results(url: &str, out_dir: &std::path::Path) -> String {
    if url == DEFAULT_URL {
        format!("sqlite:{}", out_dir.join("ibench.db").display())
    } else {
        url.to_string()
    }
}

/// `--url`'s default: an SQLite file `ibench.db`, made in the results directory.
pub const DEFAULT_URL: &str = "sqlite:ibench.db";

/// `perf` on the path when the options ask for it (`--perf`, `--profile-server`).
fn need_perf(o: &RunOptions) -> anyhow::Result<()> {
    if o.perf && !crate::process::program_on_path("perf") {
        anyhow::bail!(
            "--perf needs perf, which is not installed: apt-get install linux-perf (or drop --perf)"
        );
    }
    if o.profile_seconds.is_some() && !crate::process::program_on_path("perf") {
        anyhow::bail!(
            "--profile-server needs perf, which is not installed: apt-get install linux-perf (or drop --profile-server)"
        );
    }
    Ok(())
}

fn default_out_dir() -> PathBuf {
    let stamp = crate::results::now_rfc3339();
    // 2026-11-22T13:01:02.345Z -> 20261122-130102
    let digits: String = stamp
        .chars()
        .take(19)
        .filter(char::is_ascii_digit)
        .collect();
    let (date, time) = digits.split_at(8.min(digits.len()));
    // The pid keeps two runs started in the same second apart.
    PathBuf::from("ibench-results").join(format!("{date}-{time}-{}", std::process::id()))
}

/// `ibench check --format`: the report's formats a check writes (text, Markdown, JSON).
fn check_format() -> impl clap::builder::TypedValueParser<Value = crate::report::Format> {
    use clap::ValueEnum;
    use clap::builder::TypedValueParser;

    use crate::report::Format;
    let values = [Format::Text, Format::Markdown, Format::Json]
        .iter()
        .filter_map(ValueEnum::to_possible_value);
    clap::builder::PossibleValuesParser::new(values)
        .try_map(|name: String| Format::from_str(&name, false))
}

/// `--lag-sla-ms`: a positive number of milliseconds.
pub fn parse_lag_sla_ms(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!(
            "{text:?}: give the bound on a step's p99 replica lag as a positive number of milliseconds, such as 1000"
        )),
    }
}

/// How long clients keep reconnecting with `--failover` when `--reconnect-for` is not given.
pub const DEFAULT_RECONNECT_FOR_SECONDS: f64 = 60.0;

/// `90`, `90s`, `15m`, `2h` as seconds.
pub fn parse_duration(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], &t[i..]),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "{text:?}: give seconds, or a number with s, m or h (90s, 15m, 2h)"
            ));
        }
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v * scale),
        _ => Err(format!(
            "{text:?}: give a positive duration such as 90s, 15m or 2h"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A matrix workload's `failover` and `reconnect_for` keys reach the run's options.
    #[test]
    fn a_matrix_workload_passes_the_failover_through() {
        let args: RunArgs = toml::from_str(
            "url = \"postgres://u@h:1/x\"\nreplica_url = \"postgres://u@h:2/x\"\n\
             steps = [\"l.i0,l.x,l.i1\"]\nfailover = \"l.i1+10s\"\nreconnect_for = 30.0\n",
        )
        .unwrap();
        let o = args.to_options().unwrap();
        let at = o.failover.unwrap();
        assert_eq!(at.to_string(), "l.i1+10s");
        assert_eq!(o.reconnect_for_seconds, Some(30.0));
        assert!(
            o.table.client_assigns_ids,
            "the audit needs the keys ibench chose"
        );
    }

    #[test]
    fn durations_take_seconds_minutes_and_hours() {
        assert_eq!(parse_duration("90"), Ok(90.0));
        assert_eq!(parse_duration("15m"), Ok(900.0));
        assert_eq!(parse_duration("2h"), Ok(7200.0));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-3s").is_err());
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("ibench").chain(args.iter().copied()))
    }

    fn run_args(args: &[&str]) -> RunArgs {
        match parse(args).unwrap().command {
            Command::Run(r) => *r,
            _ => panic!("not run"),
        }
    }

    #[test]
    fn defaults_give_the_small_profile_and_ten_steps() {
        let o = run_args(&["run"]).to_options().unwrap();
        assert_eq!(o.profile, "small");
        assert_eq!(o.steps.len(), 10);
        assert!(o.out_dir.starts_with("ibench-results"));
    }

    #[test]
    fn flags_override_the_profile() {
        let o = run_args(&[
            "run",
            "--profile",
            "cached",
            "--load-rows",
            "5",
            "--steps",
            "l.i0,qp2000",
            "--query-seconds",
            "2.5",
        ])
        .to_options()
        .unwrap();
        assert_eq!(o.load_rows, 5);
        assert_eq!(o.i1_rows, 40_000_000);
        assert_eq!(o.query_seconds, 2.5);
        assert_eq!(o.steps.len(), 2);
    }

    #[test]
    fn bad_input_names_the_flag() {
        let e = run_args(&["run", "--steps", "l.i9"])
            .to_options()
            .unwrap_err();
        assert!(e.to_string().contains("--steps"), "{e}");
        let e = run_args(&["run", "--profile", "x"])
            .to_options()
            .unwrap_err();
        assert!(e.to_string().contains("--profile"), "{e}");
        let e = run_args(&["run", "--query-rates", "0"])
            .to_options()
            .unwrap_err();
        assert!(e.to_string().contains("--query-rates"), "{e}");
        let e = parse(&["run", "--query-seconds", "abc"]).unwrap_err();
        assert!(e.to_string().contains("--query-seconds"), "{e}");
    }
}
