//! The one seam between the benchmark and a DBMS.
//!
//! A [`Driver`] is chosen from the URL scheme (`sqlite:`, `postgres://`, `mysql://`) and opens
//! [`Conn`]s. Every SQL statement ibench sends is built inside a backend module; the steps only
//! call the methods of [`Conn`] and never ask which database they talk to.

pub mod deadline;
pub mod flavour;
pub mod identity;
pub mod link;
pub(crate) mod micro_sql;
#[cfg(test)]
pub(crate) mod mock;
pub mod mysql;
pub mod postgres;
pub mod promote;
pub mod protocol;
pub mod replication;
pub(crate) mod server_conn;
pub mod side;
pub mod sqlite;
pub mod target;
pub(crate) mod text_sql;
pub mod tls;
pub mod wire;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::results::metrics::DbSize;
use crate::results::options::{OptionsError, RunOptions, TableOptions};
use crate::results::target::{BackendKind, BuildFacts, Engine, Flavour, TargetInfo};
use crate::results::{IndexBuildProgress, SettleAction};
use crate::url::{Url, UrlError, redact_key_value, redact_url};
use crate::workload::RowBatch;

impl Engine {
    /// The name used in `ENGINE=` clauses.
    pub fn sql_name(self) -> &'static str {
        match self {
            Engine::Innodb => "InnoDB",
            Engine::Rocksdb => "ROCKSDB",
        }
    }
}

/// One of the three secondary indexes of spec section 1, in creation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SecondaryIndex {
    /// `<table>_marketsegment (productid, customerid, price)`
    MarketSegment,
    /// `<table>_registersegment (cashregisterid, customerid, price)`
    RegisterSegment,
    /// `<table>_pdc (price, dateandtime, customerid)`
    Pdc,
}

impl SecondaryIndex {
    /// All three, in the order they are created.
    pub const ALL: [SecondaryIndex; 3] = [
        SecondaryIndex::MarketSegment,
        SecondaryIndex::RegisterSegment,
        SecondaryIndex::Pdc,
    ];

    /// Suffix of the index name: the index is called `<table>_<suffix>`.
    pub fn suffix(self) -> &'static str {
        match self {
            SecondaryIndex::MarketSegment => "marketsegment",
            SecondaryIndex::RegisterSegment => "registersegment",
            SecondaryIndex::Pdc => "pdc",
        }
    }

    /// The index name for a table.
    pub fn name(self, table: &str) -> String {
        format!("{table}_{}", self.suffix())
    }

    /// The indexed columns, in key order. The first is the one range queries start from.
    pub fn columns(self) -> [&'static str; 3] {
        match self {
            SecondaryIndex::MarketSegment => ["productid", "customerid", "price"],
            SecondaryIndex::RegisterSegment => ["cashregisterid", "customerid", "price"],
            SecondaryIndex::Pdc => ["price", "dateandtime", "customerid"],
        }
    }

    /// Comma-separated column list, used both as the select list and the ORDER BY of the
    /// covering range query.
    pub fn column_list(self) -> String {
        self.columns().join(", ")
    }
}

/// Why a server could not be reached, with its fix: a host name that does not resolve is
/// named as such (no server can be running there); otherwise the server may be down.
fn unreachable_text(target: &str, detail: &str) -> String {
    const NO_SUCH_HOST: [&str; 4] = [
        "failed to lookup address",
        "Name or service not known",
        "No address associated with hostname",
        "nodename nor servname",
    ];
    if NO_SUCH_HOST.iter().any(|m| detail.contains(m)) {
        let host = crate::url::UrlParts::parse(target).map_or("", |u| {
            u.hosts.rsplit_once(':').map_or(u.hosts, |(host, _)| host)
        });
        return format!(
            "cannot reach {target}: no host named '{host}' is known here ({detail}); fix the host name in --url"
        );
    }
    format!(
        "cannot reach {target}: {detail}; is the server running? Start a private one with `ibench server start` or fix --url"
    )
}

/// Errors a caller branches on.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The server could not be reached at all (refused, no such host, no socket).
    #[error("{}", unreachable_text(target, detail))]
    Unreachable {
        /// What we tried to reach, password redacted.
        target: String,
        /// The driver's message.
        detail: String,
    },
    /// The server refused the credentials, or ibench stopped the login (a password it may
    /// not send, a method `require_auth` or `channel_binding` refuses).
    #[error("{}", login_refused(target, detail))]
    Auth {
        /// What we tried to reach, password redacted.
        target: String,
        /// The driver's message.
        detail: String,
    },
    /// An embedded database file that cannot be created or written (a read-only filesystem, a
    /// directory ibench may not write).
    #[error("cannot write {target}: {detail}; choose a writable path in --url")]
    Unwritable {
        /// The file, as in the URL.
        target: String,
        /// What is wrong.
        detail: String,
    },
    /// An established connection that failed: the server closed it (a crash, a restart, an
    /// idle timeout) or the network path broke. Not a wrong URL: the connection worked.
    #[error("{context}: lost the connection to {target}: {detail}")]
    Lost {
        /// What ibench was doing, e.g. `insert into pi1`.
        context: String,
        /// The server, password redacted.
        target: String,
        /// What the socket or the server said.
        detail: String,
    },
    /// No connection of the run received anything from the server for the stall limit
    /// (`--stall-limit`): a frozen server or network path; ibench gave up on the connection.
    #[error(
        "{context}: no reply from the server for {seconds} s ({target}); ibench gave up on it (--stall-limit sets how long it waits)"
    )]
    Stalled {
        /// What ibench was doing.
        context: String,
        /// The server, password redacted.
        target: String,
        /// The stall limit, seconds.
        seconds: u64,
    },
    /// The server ran out of space where it writes its data: its own disk is full, not
    /// ibench's (`--out`).
    #[error(
        "{context}: the server's own disk is full ({target}): {detail}; free space on the disk that holds the server's data directory (or give the server a larger one), then run again"
    )]
    DiskFull {
        /// What ibench was doing.
        context: String,
        /// The server, password redacted.
        target: String,
        /// What the server said.
        detail: String,
    },
    /// A transient conflict (deadlock, lock wait timeout, SQLITE_BUSY): the operation may be retried.
    #[error("transient conflict: {0}")]
    Retryable(String),
    /// Any other failure of a statement.
    #[error("{context}: {detail}")]
    Sql {
        /// What ibench was doing, e.g. `insert into pi1`.
        context: String,
        /// The driver's message.
        detail: String,
    },
}

/// The message of [`BackendError::Auth`]: the password hint only where the password may be
/// what is wrong, naming the places the backend of `target` reads it from. A login ibench
/// stopped itself (the client's `authentication error: ...`) names its own fix.
fn login_refused(target: &str, detail: &str) -> String {
    if let Some(own) = detail.strip_prefix("authentication error: ") {
        return format!("ibench stopped the login to {target}: {own}");
    }
    let places = if target.starts_with("mysql") || target.starts_with("mariadb") {
        "MYSQL_PWD or ~/.my.cnf"
    } else {
        "PGPASSWORD or ~/.pgpass"
    };
    format!(
        "{target} refused the login: {detail}; fix the user or password in --url (or give it \
         in {places}, or a file with ?password_file=PATH)"
    )
}

impl BackendError {
    /// Shorthand for [`BackendError::Sql`].
    pub fn sql(context: impl Into<String>, detail: impl std::fmt::Display) -> Self {
        BackendError::Sql {
            context: context.into(),
            detail: detail.to_string(),
        }
    }
}

/// Result of a backend call.
pub type BackendResult<T> = Result<T, BackendError>;

/// Where the server keeps its files, as the server itself says: lets the sampler find its
/// processes and storage when it runs on this host.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerFiles {
    /// The data directory (Postgres `data_directory`, MySQL `@@datadir`) or, for SQLite, the
    /// database file and its `-wal` and `-shm` files.
    pub data_paths: Vec<std::path::PathBuf>,
    /// The file holding the server's pid (first line), when it has one.
    pub pid_file: Option<std::path::PathBuf>,
    /// The DBMS runs inside ibench (SQLite): there is no server process.
    pub embedded: bool,
}

/// A backend: knows how to reach one database and opens connections to it.
pub trait Driver: Send + Sync {
    /// Open a new connection (prepared statements are cached per connection).
    fn connect(&self) -> BackendResult<Box<dyn Conn>>;

    /// Product, version and the redacted URL.
    fn describe(&self) -> BackendResult<TargetInfo>;

    /// The settle-phase maintenance of spec section 3 for these tables (Postgres: VACUUM
    /// (ANALYZE) every table in parallel then CHECKPOINT; InnoDB: ANALYZE TABLE and a forced
    /// dirty-page flush; MyRocks: wait for compactions, flush the memtable, compact L0; SQLite:
    /// ANALYZE and a WAL checkpoint). Must return within about `budget` where it can; the
    /// caller sleeps whatever is left of the settle time.
    fn settle(&self, tables: &[String], budget: Duration) -> BackendResult<Vec<SettleAction>>;

    /// Settings ibench applies on its own connections (e.g. SQLite pragmas), recorded in the
    /// results. Empty by default: server backends run with the server's configuration.
    fn session_settings(&self) -> std::collections::BTreeMap<String, String> {
        std::collections::BTreeMap::new()
    }
}

/// Cancels the statement one connection is running, from another thread (Postgres: the
/// protocol's cancel request; MySQL: `KILL QUERY` over a second connection; SQLite:
/// `sqlite3_interrupt`).
pub trait Canceller: Send + Sync {
    /// Ask the server to cancel the connection's running statement; harmless when none runs.
    /// The statement then fails with the backend's "cancelled" error.
    fn cancel(&self) -> Result<(), String>;
}

/// One connection. All SQL dialect lives behind these methods.
pub trait Conn: Send {
    /// A handle that cancels this connection's running statement from another thread, so
    /// that Ctrl-C stops a long statement (an index build) at once. `None` when the backend
    /// cannot cancel.
    fn canceller(&self) -> Option<Box<dyn Canceller>> {
        None
    }

    /// Drop the table if it exists and create it with its primary key only (spec section 1).
    fn create_table(&mut self, table: &str, options: &TableOptions) -> BackendResult<()>;

    /// Drop the table if it exists.
    fn drop_table(&mut self, table: &str) -> BackendResult<()>;

    /// Drop the table if it exists and create the microbenchmarks' sysbench table with its
    /// `k` index (`workload::micro`).
    fn create_micro_table(&mut self, table: &str, _options: &TableOptions) -> BackendResult<()> {
        Err(BackendError::sql(
            format!("create table {table}"),
            "this backend has no microbenchmark tables",
        ))
    }

    /// Run one microbenchmark operation (one statement, or a transaction from `BEGIN` to
    /// `COMMIT`, rolled back if a statement fails). Returns the rows the statements read or
    /// changed; a scan's figure is the rows it counted.
    fn micro(
        &mut self,
        table: &str,
        _statements: &[crate::workload::micro::MicroStatement],
    ) -> BackendResult<u64> {
        Err(BackendError::sql(
            format!("microbenchmark on {table}"),
            "this backend has no microbenchmarks",
        ))
    }

    /// Create the three secondary indexes in the order of [`SecondaryIndex::ALL`] (InnoDB: one
    /// `ALTER TABLE` for all three; MyRocks: one `ALTER` per index; others one `CREATE INDEX`
    /// each).
    fn create_secondary_indexes(&mut self, table: &str) -> BackendResult<()>;

    /// Whether the table exists with all three secondary indexes.
    fn has_secondary_indexes(&mut self, table: &str) -> BackendResult<bool>;

    /// One multi-row `INSERT` of every row in the batch, one transaction (autocommit),
    /// through a prepared statement cached per (table, row count). Returns rows inserted.
    fn insert(&mut self, table: &str, batch: &RowBatch) -> BackendResult<u64>;

    /// Delete the `limit` rows with the smallest `transactionid >= min_id`, one transaction.
    /// Returns the rows actually deleted.
    fn delete_oldest(&mut self, table: &str, min_id: i64, limit: u32) -> BackendResult<u64>;

    /// `min(transactionid)` and `max(transactionid)`, `None` when the table is empty.
    fn min_max_id(&mut self, table: &str) -> BackendResult<Option<(i64, i64)>>;

    /// The covering, ordered, index-only range query through `index`, starting at `from` on its
    /// first column, `LIMIT 10`. Returns rows read.
    fn range_query(&mut self, table: &str, index: SecondaryIndex, from: i32) -> BackendResult<u64>;

    /// `SELECT transactionid, productid, data FROM t WHERE transactionid IN (ids)`.
    /// Returns rows found.
    fn point_query(&mut self, table: &str, ids: &[i64]) -> BackendResult<u64>;

    /// `count(*)` through the primary key.
    fn count_rows(&mut self, table: &str) -> BackendResult<u64>;

    /// The row count read through one secondary index (forced where the dialect can).
    fn count_rows_via_index(&mut self, table: &str, index: SecondaryIndex) -> BackendResult<u64>;

    /// Logical size of the database and of each of `tables` (spec section 5, dbgb1).
    /// `None` when the backend cannot tell.
    fn database_size_bytes(&mut self, _tables: &[String]) -> BackendResult<Option<DbSize>> {
        Ok(None)
    }

    /// Where the server keeps its data and pid file, as it reports them. `None` when unknown.
    fn server_files(&mut self) -> BackendResult<Option<ServerFiles>> {
        Ok(None)
    }

    /// The DBMS's own statistics, saved at every step end (Postgres `pg_stat_*` views,
    /// MySQL `SHOW GLOBAL STATUS` and engine status). A view that cannot be read holds
    /// `{"error": "..."}`. `None` when the backend keeps none.
    fn server_statistics(
        &mut self,
    ) -> BackendResult<Option<crate::results::statistics::Statistics>> {
        Ok(None)
    }

    /// The server's settings (Postgres `pg_settings`, MySQL `SHOW GLOBAL VARIABLES`), saved
    /// once per run. `None` when the backend has none.
    fn server_settings(&mut self) -> BackendResult<Option<serde_json::Value>> {
        Ok(None)
    }

    /// How the server was built, as far as it reports it over SQL (the binary's facts come
    /// from the sampler, which knows the server's process).
    fn build_facts(&mut self) -> BackendResult<BuildFacts> {
        Ok(BuildFacts::default())
    }

    /// How far the index builds running on the server now have got (l.x's progress, polled
    /// once a second from a connection of its own). `NotReported` with the reason when the
    /// server does not report it (the default).
    fn index_build_progress(&mut self) -> BackendResult<IndexProgress> {
        Ok(IndexProgress::NotReported(
            "this server does not report an index build's progress".to_string(),
        ))
    }

    /// Make this replica a primary with the DBMS's own means (PostgreSQL 12+:
    /// `pg_promote(false)`, which only asks: poll [`Conn::accepts_writes`] until it is done;
    /// MariaDB: `STOP SLAVE IO_THREAD`, wait up to `wait_seconds` until the relay log is
    /// applied, then `STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = OFF`). An error when
    /// the server is no replica, or the promotion failed or did not finish in time.
    fn promote(&mut self, _wait_seconds: u32) -> BackendResult<()> {
        Err(BackendError::sql(
            "promote",
            "this backend has no replicas to promote",
        ))
    }

    /// Whether the server takes writes now (PostgreSQL: not in recovery; MariaDB:
    /// `@@read_only` off).
    fn accepts_writes(&mut self) -> BackendResult<bool> {
        Ok(true)
    }

    /// Which server this connection reached, as it says (`backend::identity`); `None` for a
    /// backend without servers to tell apart (SQLite).
    fn server_identity(&mut self) -> BackendResult<Option<identity::ServerIdentity>> {
        Ok(None)
    }

    /// In one statement (one snapshot): the table's smallest `transactionid` (`None` when
    /// empty) and how many rows have a `transactionid` from `max(lo, smallest)` to `hi`,
    /// inclusive (the failover audit's read: the deleters remove the oldest rows meanwhile).
    fn count_ids_between(
        &mut self,
        table: &str,
        _lo: i64,
        _hi: i64,
    ) -> BackendResult<(Option<i64>, u64)> {
        Err(BackendError::sql(
            format!("count the audited ids of {table}"),
            "this backend cannot be audited after a failover",
        ))
    }
}

/// What a server says of its index builds.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexProgress {
    /// The builds running now, one entry per phase and unit (none between builds).
    Running(Vec<IndexBuildProgress>),
    /// The server does not report it, and why.
    NotReported(String),
}

impl IndexProgress {
    /// Builds read one by one, merged per phase and unit (their work summed), in the order
    /// each phase was first seen.
    pub fn merged(builds: impl IntoIterator<Item = IndexBuildProgress>) -> IndexProgress {
        let mut out: Vec<IndexBuildProgress> = Vec::new();
        for b in builds {
            match out
                .iter_mut()
                .find(|o| o.phase == b.phase && o.unit == b.unit)
            {
                Some(o) => {
                    o.done += b.done;
                    o.total += b.total;
                    o.builds += b.builds;
                }
                None => out.push(b),
            }
        }
        IndexProgress::Running(out)
    }
}

/// Which prepared statement of a table: the key of a connection's statement cache, for
/// backends with server-side prepared statements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum StatementKey {
    /// A multi-row insert of this many rows, with or without client-assigned ids.
    Insert {
        /// Rows in the statement.
        rows: usize,
        /// Whether the client assigns `transactionid`.
        client_ids: bool,
    },
    /// The delete of the oldest rows.
    Delete,
    /// The range query through this index.
    Range(SecondaryIndex),
    /// The point query for this many ids.
    Point(usize),
    /// A microbenchmark statement, with its IN-list length (0 without one).
    Micro(crate::workload::micro::MicroStatementKind, usize),
}

/// The prepared statements of one table on one connection (`S` is the driver's handle).
pub(crate) type TableStatements<S> = std::collections::HashMap<StatementKey, S>;

/// Run the statement `key` of `table` from a connection's cache with `run`, preparing it
/// with `prepare` on first use. The hot path looks it up once and clones nothing; the table's
/// name is copied only when its first statement is prepared. `client` is what both need.
pub(crate) fn with_cached_statement<C, S, R, E>(
    cache: &mut std::collections::HashMap<String, TableStatements<S>>,
    table: &str,
    key: StatementKey,
    client: &mut C,
    prepare: impl FnOnce(&mut C) -> Result<S, E>,
    run: impl FnOnce(&mut C, &S) -> Result<R, E>,
) -> Result<R, E> {
    use std::collections::hash_map::Entry;
    let of_table = match cache.get_mut(table) {
        Some(t) => t,
        None => cache.entry(table.to_string()).or_default(),
    };
    let statement = match of_table.entry(key) {
        Entry::Occupied(o) => o.into_mut(),
        Entry::Vacant(v) => v.insert(prepare(client)?),
    };
    run(client, statement)
}

/// `min(transactionid), max(transactionid)` from a text row (`None` when the table is empty).
pub(crate) fn min_max_of_text(
    row: Option<Vec<Option<String>>>,
    context: &str,
) -> BackendResult<Option<(i64, i64)>> {
    let row = row.unwrap_or_default();
    let int = |i: usize| -> BackendResult<Option<i64>> {
        row.get(i)
            .cloned()
            .flatten()
            .map(|t| t.parse::<i64>().map_err(|e| BackendError::sql(context, e)))
            .transpose()
    };
    Ok(int(0)?.zip(int(1)?))
}

/// Options that shape how a driver connects, beyond the URL.
#[derive(Clone, Debug, Default)]
pub struct DriverOptions {
    /// Storage engine for the MySQL family.
    pub engine: Option<Engine>,
    /// The flavour, when given (`--flavour`); detected from the server's version otherwise.
    pub flavour: Option<Flavour>,
}

/// What ibench knows of a backend before it connects: its name, the URL schemes that choose
/// it, what it can measure, its engines and flavours, and how to build its driver. Adding a
/// backend is one more entry here and a driver module (docs/backends.md).
pub struct BackendDescriptor {
    /// The family.
    pub kind: BackendKind,
    /// Its name in messages and docs.
    pub name: &'static str,
    /// The DBMS runs inside ibench (no server process, no server-side metrics).
    pub embedded: bool,
    /// The DBMS keeps statistics worth saving per step (`stats/<step>.json`).
    pub server_statistics: bool,
    /// Storage engines `--engine` may choose (empty: the option does not apply).
    pub engines: &'static [Engine],
    /// The flavours served by this driver.
    pub flavours: &'static [Flavour],
    /// Functions a CPU profile of the server passes through while it plans a statement (the
    /// planner's share of a step's profile; empty: none to look for).
    pub planner_frames: &'static [&'static str],
    /// Read a URL of this backend into its family's settings (see [`target::ConnectTarget`]).
    read: fn(&Url<'_>) -> anyhow::Result<target::Settings>,
}

/// Every backend ibench drives.
pub static BACKENDS: [BackendDescriptor; 3] = [
    BackendDescriptor {
        kind: BackendKind::Sqlite,
        name: "SQLite",
        embedded: true,
        server_statistics: false,
        engines: &[],
        flavours: &[Flavour::Sqlite],
        planner_frames: &[],
        read: |url| sqlite::SqliteSettings::from_url(url.text).map(target::Settings::Sqlite),
    },
    BackendDescriptor {
        kind: BackendKind::Postgres,
        name: "PostgreSQL",
        embedded: false,
        server_statistics: true,
        engines: &[],
        flavours: &[Flavour::Postgres, Flavour::Cockroachdb, Flavour::Yugabytedb],
        planner_frames: &["standard_planner", "planner", "pg_plan_query"],
        read: |url| postgres::PgSettings::read(url).map(target::Settings::Postgres),
    },
    BackendDescriptor {
        kind: BackendKind::Mysql,
        name: "MySQL",
        embedded: false,
        server_statistics: true,
        engines: &[Engine::Innodb, Engine::Rocksdb],
        flavours: &[Flavour::Mysql, Flavour::Mariadb, Flavour::Tidb],
        planner_frames: &["JOIN::optimize", "JOIN::optimize_inner", "mysql_make_join"],
        read: |url| mysql::MySettings::read(url).map(target::Settings::Mysql),
    },
];

/// The registry's entry of a backend family.
pub fn descriptor_of_kind(kind: BackendKind) -> &'static BackendDescriptor {
    BACKENDS
        .iter()
        .find(|d| d.kind == kind)
        .unwrap_or(&BACKENDS[0])
}

/// The backend a URL names, by its scheme (the test-only `mock:` scheme counts as embedded:
/// SQLite's). For a matrix file's servers; a run looks its scheme up once, in
/// [`target::ConnectTarget::for_run`].
pub fn descriptor_of_url(url: &str) -> Result<&'static BackendDescriptor, UrlError> {
    by_scheme(url).ok_or_else(|| UrlError::UnknownScheme(redact_key_value(&redact_url(url))))
}

/// The backend an already split URL names, by its scheme.
pub fn descriptor_of(url: &Url<'_>) -> Result<&'static BackendDescriptor, UrlError> {
    by_scheme(url.text).ok_or_else(|| UrlError::UnknownScheme(redact_key_value(&url.masked())))
}

fn by_scheme(url: &str) -> Option<&'static BackendDescriptor> {
    let lower = url.to_ascii_lowercase();
    #[cfg(test)]
    let lower = match lower.strip_prefix(MOCK_SCHEME) {
        Some(path) => format!("sqlite:{path}"),
        None => lower,
    };
    BACKENDS
        .iter()
        .find(|d| d.schemes().iter().any(|s| lower.starts_with(s)))
}

/// Check a matrix cell's options against the backend its URL names, as a run checks them
/// when it builds its target ([`target::ConnectTarget::for_run`]): the options' own checks
/// are `RunOptions::validate`'s, made when they are built.
pub fn validate_options(opts: &RunOptions) -> Result<(), OptionsError> {
    let d = descriptor_of_url(&opts.url).map_err(|e| OptionsError(e.to_string()))?;
    d.check(opts)
}

impl BackendDescriptor {
    /// URL prefixes that choose it (lowercase): its family's, from the one table
    /// ([`BackendKind::schemes`]).
    pub fn schemes(&self) -> &'static [&'static str] {
        self.kind.schemes()
    }

    /// Check the options that depend on the backend against this entry: `--engine` is one of
    /// its engines, `--profile-server` has a server process to profile, `--flavour` is one it
    /// serves. The error names the flag to fix.
    pub fn check(&self, opts: &RunOptions) -> Result<(), OptionsError> {
        if let Some(engine) = opts.engine
            && !self.engines.contains(&engine)
        {
            let schemes: Vec<&str> = BACKENDS
                .iter()
                .filter(|b| b.engines.contains(&engine))
                .map(|b| b.schemes()[0])
                .collect();
            let schemes = schemes.join(" or ");
            return Err(OptionsError(format!(
                "--engine applies to {schemes} URLs only; drop --engine or use a {schemes} --url"
            )));
        }
        if opts.profile_seconds.is_some() && self.embedded {
            return Err(OptionsError(format!(
                "--profile-server profiles a server's processes, and {} runs inside ibench: drop --profile-server (or profile ibench itself with perf)",
                self.name
            )));
        }
        self.check_flavour(opts.flavour)
    }

    /// Check that `--flavour` (when given) is one this entry serves.
    pub fn check_flavour(&self, flavour: Option<Flavour>) -> Result<(), OptionsError> {
        match flavour {
            Some(f) if !self.flavours.contains(&f) => Err(OptionsError(format!(
                "--flavour {} is not served by {} URLs ({}); use a {} URL or drop --flavour",
                format!("{f:?}").to_lowercase(),
                self.name,
                self.schemes().join(", "),
                BACKENDS
                    .iter()
                    .find(|b| b.flavours.contains(&f))
                    .map_or("matching", |b| b.schemes()[0])
            ))),
            _ => Ok(()),
        }
    }
}

/// The hidden scheme of the in-memory test backend (unit tests only; see `backend::mock`).
#[cfg(test)]
pub(crate) const MOCK_SCHEME: &str = "mock:";

/// Read `url` into its [`target::ConnectTarget`] and build that target's driver (for callers
/// that hold a URL alone; a run builds its target once, in its shape). Does not connect yet.
pub fn driver_for_url(url: &str, options: &DriverOptions) -> anyhow::Result<Box<dyn Driver>> {
    Ok(target::ConnectTarget::parse(url, options)?.driver())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_backend_family_has_its_registry_entry() {
        for kind in [
            BackendKind::Sqlite,
            BackendKind::Postgres,
            BackendKind::Mysql,
        ] {
            assert_eq!(descriptor_of_kind(kind).kind, kind);
        }
    }

    /// A flavour's family is said twice: by `Flavour::family` (results, which cannot import
    /// the registry) and by the registry entry that lists it. They must agree, and every
    /// flavour must be listed once.
    #[test]
    fn each_flavour_is_listed_by_the_registry_entry_of_its_family() {
        use crate::results::target::Flavour;
        use clap::ValueEnum;
        for flavour in Flavour::value_variants() {
            let listed: Vec<BackendKind> = BACKENDS
                .iter()
                .filter(|d| d.flavours.contains(flavour))
                .map(|d| d.kind)
                .collect();
            assert_eq!(listed, [flavour.family()], "{flavour:?}");
        }
    }

    #[test]
    fn an_unknown_scheme_masks_a_key_value_password() {
        let err = driver_for_url(
            "host=db password=SECRET dbname=x",
            &DriverOptions::default(),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            !err.contains("SECRET") && err.contains("password=***"),
            "{err}"
        );
    }

    #[test]
    fn options_are_checked_against_the_registry() {
        let small = || {
            RunOptions::from_profile(
                "sqlite:x.db",
                &crate::workload::steps::Profile::named("small").unwrap(),
            )
        };
        validate_options(&small()).unwrap();
        let mut o = small();
        o.engine = Some(Engine::Rocksdb);
        let e = validate_options(&o).unwrap_err().to_string();
        assert_eq!(
            e,
            "--engine applies to mysql:// URLs only; drop --engine or use a mysql:// --url"
        );
        o.url = "mysql://root@h/x".into();
        validate_options(&o).unwrap();
        let mut o = small();
        o.profile_seconds = Some(10.0);
        let e = validate_options(&o).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "--profile-server profiles a server's processes, and SQLite runs inside ibench"
            ),
            "{e}"
        );
        o.url = "postgres://u@h/db".into();
        validate_options(&o).unwrap();
        let mut o = small();
        o.url = "oracle://x".into();
        assert!(
            validate_options(&o)
                .unwrap_err()
                .to_string()
                .contains("--url")
        );
    }

    #[test]
    fn scheme_picks_backend() {
        assert_eq!(
            descriptor_of_url("sqlite:x.db").map(|d| d.kind).unwrap(),
            BackendKind::Sqlite
        );
        assert_eq!(
            descriptor_of_url("postgres://u@h/db")
                .map(|d| d.kind)
                .unwrap(),
            BackendKind::Postgres
        );
        assert_eq!(
            descriptor_of_url("postgresql://u@h/db")
                .map(|d| d.kind)
                .unwrap(),
            BackendKind::Postgres
        );
        assert_eq!(
            descriptor_of_url("mysql://root@h/db")
                .map(|d| d.kind)
                .unwrap(),
            BackendKind::Mysql
        );
        assert!(matches!(
            descriptor_of_url("oracle://x").map(|d| d.kind),
            Err(UrlError::UnknownScheme(_))
        ));
    }

    #[test]
    fn index_names_and_columns() {
        assert_eq!(SecondaryIndex::Pdc.name("pi3"), "pi3_pdc");
        assert_eq!(
            SecondaryIndex::RegisterSegment.column_list(),
            "cashregisterid, customerid, price"
        );
    }
}
