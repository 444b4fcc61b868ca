//! PostgreSQL backend.
//!
//! The benchmark's connections (`PostgresConn`: the generic `ServerConn`, in
//! `backend/server_conn.rs`, with this module's `PgDialect`: its SQL, SQLSTATEs and the
//! operations PostgreSQL does its own way) run on [`wire`], a blocking protocol client that
//! costs what libpq costs or less: the thread blocks on its own socket, a statement's `Bind`
//! is encoded into one reused buffer, replies are read in place. The driver's short
//! connections (describe, the settle phase's VACUUM and CHECKPOINT, a cancel) are the same
//! client.
//!
//! The URL is completed as libpq completes it ([`config`]: `PGHOST`, `PGPORT`, `PGUSER`,
//! `PGPASSWORD`, `PGDATABASE`, ... for the parts it leaves out, then the password file). Every
//! statement of the hot path is prepared once per connection and bound in the binary format
//! without allocating per row.

pub mod codec;
pub mod config;
mod login;
pub mod replication;
pub mod session_attrs;
pub mod slot;
pub mod standby;
mod transport;
pub mod wire;

use std::time::Instant;

use super::micro_sql::Placeholders;
use super::server_conn::{self, Dialect, ErrorClass, ServerConn};
use super::*;
use crate::results::statistics::{Part, PgServer, PgStatistics, PgView, Statistics};
use crate::results::target::Flavour;
use crate::stats::convert::i64_u64;
use crate::url::{ServerUrl, Url};
use config::PgConfig;
use wire::{PgWire, ServerError, WireError};

/// How long a connection attempt may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The first value of `int`: a predicate `col >= INT_MIN` holds for every row.
const INT_MIN_LITERAL: &str = "-2147483648";

/// SQLSTATEs a caller branches on.
mod sqlstate {
    pub const DEADLOCK_DETECTED: &str = "40P01";
    pub const SERIALIZATION_FAILURE: &str = "40001";
    pub const LOCK_NOT_AVAILABLE: &str = "55P03";
    pub const INVALID_PASSWORD: &str = "28P01";
    pub const INVALID_AUTHORIZATION_SPECIFICATION: &str = "28000";
    pub const INVALID_CATALOG_NAME: &str = "3D000";
    pub const QUERY_CANCELED: &str = "57014";
    pub const DISK_FULL: &str = "53100";
}

/// PostgreSQL's major version of a version as the server or its binaries write it
/// (`postgres (PostgreSQL) 15.4 (Debian ...)`, `15.4`, `10.23`; `9.6.24` is 9): the first
/// word that starts with a number. The one reading of a major version from text; from
/// `server_version_num` it is [`major_of_version_num`].
pub fn major_of_version(version: &str) -> Option<u32> {
    version
        .split_whitespace()
        .find_map(|w| w.split('.').next()?.parse::<u32>().ok())
}

/// PostgreSQL's major version of a `server_version_num` (`150004` is 15; `90624` is 9).
pub fn major_of_version_num(version_num: u32) -> u32 {
    version_num / 10_000
}

/// PostgreSQL driver: a parsed connection configuration.
pub struct PostgresDriver {
    config: PgConfig,
    /// The completed URL, password redacted: what error messages and `run.json` show.
    target: String,
    /// The flavour given with `--flavour`.
    forced: Option<Flavour>,
    /// The flavour, once known (given, or detected from `version()` on first connect).
    flavour: std::sync::OnceLock<Flavour>,
}

/// What a `postgres://` URL says, read once: the settings completed as libpq completes them
/// (the URL, the `PG*` variables, the password file, the service defaults) and the completed
/// URL with its password masked.
pub type PgSettings = super::wire::ServerSettings<PgConfig>;

impl PgSettings {
    /// Read a `postgres://` or `postgresql://` URL. `?password_file=PATH` reads the password
    /// from a file. Parts the URL leaves out come from the libpq environment and files
    /// ([`config`]); with no host at all the Unix socket directory `/var/run/postgresql` is
    /// tried, then `localhost`. Does not connect.
    pub fn from_url(url: &str) -> anyhow::Result<Self> {
        PgSettings::read(&Url::parse(url))
    }

    /// [`PgSettings::from_url`] of a URL already split: its parts are completed once, and the
    /// settings and the text messages show are both made from the completed parts.
    pub fn read(url: &Url<'_>) -> anyhow::Result<Self> {
        let parts = url.parts.as_ref().ok_or_else(|| {
            anyhow::anyhow!("bad --url '{}': not a postgres:// URL", url.masked())
        })?;
        let given = ServerUrl::with_password_file(parts, None)?;
        let completed = config::complete(&given, &config::process_var);
        let shown = completed.redacted();
        // A parameter or a setting the URL's parts add up to that cannot work is a command
        // line to fix (exit 2), as a malformed URL is.
        let mut config = PgConfig::from_completed(&completed).map_err(|e| {
            let (config::ConfigError::Url(detail) | config::ConfigError::Setup(detail)) = e;
            UrlError::Malformed {
                url: given.redacted(),
                detail,
            }
        })?;
        if config.connect_timeout.is_none() {
            config.connect_timeout = Some(CONNECT_TIMEOUT);
        }
        if config.application_name.is_none() {
            config.application_name = Some("ibench".to_string());
        }
        Ok(PgSettings { config, shown })
    }
}

impl PostgresDriver {
    /// The driver of the server `settings` name, of flavour `forced` when given. Does not
    /// connect.
    pub fn new(settings: PgSettings, forced: Option<Flavour>) -> Self {
        PostgresDriver {
            config: settings.config,
            target: settings.shown,
            forced,
            flavour: std::sync::OnceLock::new(),
        }
    }

    /// The server's flavour: as given, else from `version()` (asked once per driver).
    fn flavour(&self, version: impl FnOnce() -> String) -> Flavour {
        *self.flavour.get_or_init(|| {
            self.forced
                .unwrap_or_else(|| Flavour::detect(BackendKind::Postgres, &version()))
        })
    }

    /// A connection of the driver's own (describe, settle).
    fn admin(&self) -> BackendResult<PgWire> {
        PgWire::connect(&self.config).map_err(|e| {
            server_conn::connect_error::<PgDialect>(&self.target, self.config.dbname.as_deref(), &e)
        })
    }

    /// `SELECT version()` (empty when it fails).
    fn version_of(wire: &mut PgWire) -> String {
        wire.query_value("SELECT version()")
            .ok()
            .flatten()
            .unwrap_or_default()
    }
}

impl Driver for PostgresDriver {
    fn connect(&self) -> BackendResult<Box<dyn Conn>> {
        let mut wire = self.admin()?;
        let flavour = self.flavour(|| Self::version_of(&mut wire));
        let dialect = PgDialect {
            flavour,
            server_version_num: None,
        };
        Ok(Box::new(PostgresConn::new(
            wire,
            self.target.clone(),
            dialect,
        )))
    }

    fn describe(&self) -> BackendResult<TargetInfo> {
        let mut wire = self.admin()?;
        let version = wire
            .query_value("SHOW server_version")
            .map_err(|e| wire_error(&self.target, "read server_version", &e))?
            .map(|v| protocol::server_text(v.as_bytes()))
            .unwrap_or_default();
        let flavour = self.flavour(|| Self::version_of(&mut wire));
        Ok(TargetInfo {
            backend: BackendKind::Postgres,
            url: self.target.clone(),
            dbms: flavour.dbms().to_string(),
            version,
            engine: None,
            flavour: Some(flavour),
            tls: wire.tls_info(),
        })
    }

    fn settle(&self, tables: &[String], budget: Duration) -> BackendResult<Vec<SettleAction>> {
        let deadline = Instant::now() + budget;
        // Connect first so that an unreachable server is an error, not a list of failures.
        let mut main = self.admin()?;
        if !self
            .flavour(|| Self::version_of(&mut main))
            .has_engine_maintenance()
        {
            // No VACUUM or CHECKPOINT here: refresh the statistics only.
            return Ok(tables
                .iter()
                .map(|t| {
                    let sql = format!("ANALYZE {t}");
                    let started = Instant::now();
                    let result = run_bounded(&mut main, &sql, deadline)
                        .map_err(|e| wire_error(&self.target, &sql, &e));
                    settle_action(sql, started, result)
                })
                .collect());
        }
        let mut actions: Vec<SettleAction> = std::thread::scope(|scope| {
            let handles: Vec<_> = tables
                .iter()
                .map(|table| scope.spawn(move || self.vacuum(table, deadline)))
                .collect();
            handles
                .into_iter()
                .zip(tables)
                .map(|(handle, table)| {
                    handle.join().unwrap_or_else(|_| {
                        SettleAction::done(
                            vacuum_sql(table),
                            0.0,
                            Some("the VACUUM thread panicked".to_string()),
                        )
                    })
                })
                .collect()
        });
        let started = Instant::now();
        let result = run_bounded(&mut main, "CHECKPOINT", deadline)
            .map_err(|e| wire_error(&self.target, "CHECKPOINT", &e));
        actions.push(settle_action("CHECKPOINT".to_string(), started, result));
        Ok(actions)
    }
}

impl PostgresDriver {
    /// `VACUUM (ANALYZE)` of one table on a connection of its own. VACUUM reports some
    /// failures (e.g. "permission denied to vacuum, skipping it") only as a WARNING: those
    /// are the action's error.
    fn vacuum(&self, table: &str, deadline: Instant) -> SettleAction {
        let sql = vacuum_sql(table);
        let started = Instant::now();
        let result = self.admin().and_then(|mut wire| {
            run_bounded(&mut wire, &sql, deadline).map_err(|e| wire_error(&self.target, &sql, &e))
        });
        match result {
            Ok(Bounded::Done(warnings)) if !warnings.is_empty() => SettleAction::done(
                sql,
                started.elapsed().as_secs_f64(),
                Some(warnings.join("; ")),
            ),
            other => settle_action(sql, started, other),
        }
    }
}

/// What a maintenance statement under the settle budget came to.
#[derive(Debug)]
enum Bounded {
    /// It finished, with these warnings.
    Done(Vec<String>),
    /// `statement_timeout` (what was left of the budget) cancelled it: the budget ran out.
    RanOut,
}

/// Run one maintenance statement with `statement_timeout` set to what is left of the budget
/// (at least one second: 0 would mean no limit). A cancel (SQLSTATE 57014) is the timeout's:
/// nothing else cancels the settle phase's own connections (Ctrl-C cancels only the
/// steps' connections), so it means the budget ran out, not that the statement failed.
fn run_bounded(wire: &mut PgWire, sql: &str, deadline: Instant) -> Result<Bounded, WireError> {
    let left = deadline.saturating_duration_since(Instant::now());
    let ms = left.as_millis().max(1000);
    wire.query(&format!("SET statement_timeout = {ms}"))?;
    let result = match wire.query(sql) {
        Ok(_) => Ok(Bounded::Done(wire.warnings().to_vec())),
        Err(e) if is_query_canceled(&e) => Ok(Bounded::RanOut),
        Err(e) => Err(e),
    };
    // Best effort: the connection is dropped right after anyway.
    let _ = wire.query("SET statement_timeout = 0");
    result
}

/// Whether the server cancelled the statement (SQLSTATE 57014: a cancel request or
/// `statement_timeout`).
fn is_query_canceled(e: &WireError) -> bool {
    e.server()
        .is_some_and(|s| s.sqlstate == sqlstate::QUERY_CANCELED)
}

/// A settle action from its outcome: done, failed, or cut short by the budget's end.
fn settle_action(action: String, started: Instant, result: BackendResult<Bounded>) -> SettleAction {
    let seconds = started.elapsed().as_secs_f64();
    match result {
        Ok(Bounded::Done(_)) => SettleAction::done(action, seconds, None),
        Ok(Bounded::RanOut) => SettleAction {
            action,
            seconds,
            error: None,
            unsettled: Some(
                "not finished: statement_timeout cancelled it when the budget ran out".to_string(),
            ),
        },
        Err(e) => SettleAction::done(action, seconds, Some(e.to_string())),
    }
}

/// One PostgreSQL connection with its prepared statements: the generic server connection
/// with PostgreSQL's dialect, on the blocking protocol client ([`wire`]).
pub(crate) type PostgresConn = ServerConn<PgDialect>;

/// What a PostgreSQL connection knows of its server: the flavour, and the server's version
/// number once read.
pub(crate) struct PgDialect {
    flavour: Flavour,
    server_version_num: Option<i32>,
}

/// Cancels a Postgres connection's statement with the protocol's cancel request.
struct PgCanceller(wire::CancelKey);

impl Canceller for PgCanceller {
    fn cancel(&self) -> Result<(), String> {
        self.0.cancel().map_err(|e| e.to_string())
    }
}

/// `SHOW server_version_num`, read once per connection.
fn server_version_num(c: &mut PostgresConn) -> BackendResult<i32> {
    if let Some(v) = c.dialect.server_version_num {
        return Ok(v);
    }
    let context = "read server_version_num";
    let v = i32::try_from(c.number("SHOW server_version_num", context)?)
        .map_err(|e| BackendError::sql(context, e))?;
    c.dialect.server_version_num = Some(v);
    Ok(v)
}

impl Dialect for PgDialect {
    type Wire = PgWire;
    const PLACEHOLDERS: Placeholders = Placeholders::Numbered;

    /// Only asks (`pg_promote(false)`): the caller polls [`Conn::accepts_writes`], so it
    /// sees Ctrl-C and its own bound while the standby finishes recovery.
    fn promote(c: &mut PostgresConn, _wait_seconds: u32) -> BackendResult<()> {
        let version = server_version_num(c)?;
        crate::backend::promote::promote_postgres(c, version, 0)
    }

    fn accepts_writes(c: &mut PostgresConn) -> BackendResult<bool> {
        crate::backend::promote::postgres_accepts_writes(c)
    }

    fn server_identity(
        c: &mut PostgresConn,
    ) -> BackendResult<Option<crate::backend::identity::ServerIdentity>> {
        crate::backend::identity::read(c, crate::backend::identity::PG_IDENTITY_SQL, "timeline")
    }

    fn class(e: &ServerError) -> ErrorClass {
        match e.sqlstate.as_str() {
            sqlstate::DEADLOCK_DETECTED
            | sqlstate::SERIALIZATION_FAILURE
            | sqlstate::LOCK_NOT_AVAILABLE => ErrorClass::Retryable,
            sqlstate::INVALID_PASSWORD | sqlstate::INVALID_AUTHORIZATION_SPECIFICATION => {
                ErrorClass::Auth
            }
            sqlstate::DISK_FULL => ErrorClass::DiskFull,
            _ => ErrorClass::Other,
        }
    }

    /// The server's error with its SQLSTATE, as psql's `\set VERBOSITY` shows the code.
    fn detail(e: &WireError) -> String {
        match e {
            WireError::Server(s) => format!("{s} (SQLSTATE {})", s.sqlstate),
            other => other.to_string(),
        }
    }

    fn connect_refusal(e: &ServerError, _database: Option<&str>) -> Option<String> {
        (e.sqlstate == sqlstate::INVALID_CATALOG_NAME).then(|| {
            format!(
                "{e} (SQLSTATE {}); create the database (createdb, or CREATE DATABASE) or name \
                 an existing one in --url",
                e.sqlstate
            )
        })
    }

    /// The multi-row insert: `$1` is the batch timestamp, shared by every row.
    fn insert_sql(table: &str, rows: usize, client_ids: bool) -> String {
        use std::fmt::Write;
        let per_row = if client_ids { 6 } else { 5 };
        let mut sql = String::with_capacity(100 + rows * 40);
        sql.push_str("INSERT INTO ");
        sql.push_str(table);
        if client_ids {
            sql.push_str(" (transactionid, dateandtime, cashregisterid, customerid, productid, price, data) VALUES ");
        } else {
            sql.push_str(
                " (dateandtime, cashregisterid, customerid, productid, price, data) VALUES ",
            );
        }
        for row in 0..rows {
            if row > 0 {
                sql.push_str(", ");
            }
            let base = 2 + row * per_row;
            // Writing to a String cannot fail.
            let _ = if client_ids {
                write!(
                    sql,
                    "(${}, $1, ${}, ${}, ${}, ${}, ${})",
                    base,
                    base + 1,
                    base + 2,
                    base + 3,
                    base + 4,
                    base + 5
                )
            } else {
                write!(
                    sql,
                    "($1, ${}, ${}, ${}, ${}, ${})",
                    base,
                    base + 1,
                    base + 2,
                    base + 3,
                    base + 4
                )
            };
        }
        sql
    }

    fn delete_sql(&self, table: &str) -> String {
        self.flavour.pg_delete_sql(table)
    }

    fn range_sql(table: &str, index: SecondaryIndex) -> String {
        let cols = index.column_list();
        let first = index.columns()[0];
        format!("SELECT {cols} FROM {table} WHERE {first} >= $1 ORDER BY {cols} LIMIT 10")
    }

    fn count_sql(table: &str) -> String {
        format!("SELECT count(*) FROM {table}")
    }

    fn count_indexes_sql(table: &str) -> String {
        count_indexes_sql(table)
    }

    fn micro_table_suffix(_options: &TableOptions) -> String {
        String::new()
    }

    fn canceller(c: &PostgresConn) -> Option<Box<dyn Canceller>> {
        Some(Box::new(PgCanceller(c.wire.cancel_key())))
    }

    fn create_table(
        c: &mut PostgresConn,
        table: &str,
        options: &TableOptions,
    ) -> BackendResult<()> {
        let version = server_version_num(c)?;
        let context = format!("create table {table}");
        for sql in create_table_sql(table, options, version, c.dialect.flavour) {
            c.query(&sql, &context)?;
        }
        Ok(())
    }

    fn create_secondary_indexes(c: &mut PostgresConn, table: &str) -> BackendResult<()> {
        for index in SecondaryIndex::ALL {
            let sql = create_index_sql(table, index);
            c.query(&sql, &format!("create index {}", index.name(table)))?;
        }
        Ok(())
    }

    fn count_rows_via_index(
        c: &mut PostgresConn,
        table: &str,
        index: SecondaryIndex,
    ) -> BackendResult<u64> {
        let name = index.name(table);
        let context = format!("count rows of {table} via {name}");
        let sql = count_via_index_sql(table, index);
        let settings = force_index_settings(server_version_num(c)?);
        c.query(&format!("BEGIN; {settings}"), &context)?;
        let counted = count_in_transaction(c, &sql, &name, &context);
        let end = if counted.is_ok() {
            "COMMIT"
        } else {
            "ROLLBACK"
        };
        let ended = c.query(end, &context);
        let n = counted?;
        ended?;
        Ok(n)
    }

    fn database_size_bytes(
        c: &mut PostgresConn,
        tables: &[String],
    ) -> BackendResult<Option<DbSize>> {
        let context = "read the database size";
        let total = c.number("SELECT pg_database_size(current_database())", context)?;
        let mut sizes = std::collections::BTreeMap::new();
        for t in tables {
            let sql = format!(
                "SELECT pg_total_relation_size(to_regclass({}))",
                quote_literal(t)
            );
            if let Some(size) = c.value(&sql, context)? {
                let size: i64 = size
                    .parse()
                    .map_err(|e| BackendError::sql(context, format!("'{size}': {e}")))?;
                sizes.insert(t.clone(), u64::try_from(size).unwrap_or(0));
            }
        }
        Ok(Some(DbSize {
            total_bytes: u64::try_from(total).unwrap_or(0),
            tables: sizes,
            source: "pg_database_size, pg_total_relation_size".to_string(),
        }))
    }

    fn server_files(c: &mut PostgresConn) -> BackendResult<Option<ServerFiles>> {
        let dir = c
            .value("SHOW data_directory", "SHOW data_directory")?
            .unwrap_or_default();
        let dir = std::path::PathBuf::from(dir);
        Ok(Some(ServerFiles {
            pid_file: Some(dir.join("postmaster.pid")),
            data_paths: vec![dir],
            embedded: false,
        }))
    }

    fn server_statistics(c: &mut PostgresConn) -> BackendResult<Option<Statistics>> {
        let version = server_version_num(c)?;
        let flavour = c.dialect.flavour;
        if flavour == Flavour::Postgres {
            await_ended_sessions(&mut c.wire);
        }
        let mut out = PgStatistics::default();
        for view in stat_views(version) {
            let sql = format!(
                "SELECT coalesce(json_agg(t), '[]'::json)::text FROM {} t",
                view.name()
            );
            let rows = c
                .wire
                .query_value(&sql)
                .map_err(|e| e.to_string())
                .and_then(|text| {
                    serde_json::from_str(&text.unwrap_or_default()).map_err(|e| e.to_string())
                });
            out.views.insert(view.name().to_string(), Part::of(rows));
        }
        if flavour == Flavour::Postgres {
            out.server = Some(wal_position(&mut c.wire));
        }
        Ok(Some(Statistics::Postgres(out)))
    }

    fn server_settings(c: &mut PostgresConn) -> BackendResult<Option<serde_json::Value>> {
        let context = "read pg_settings";
        let text = c
            .value(
                "SELECT coalesce(json_object_agg(name, json_build_object('setting', setting, \
                 'unit', unit, 'source', source) ORDER BY name), '{}'::json)::text FROM pg_settings",
                context,
            )?
            .unwrap_or_default();
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| BackendError::sql(context, e))
    }

    fn build_facts(c: &mut PostgresConn) -> BackendResult<BuildFacts> {
        read_build_facts(c)
    }

    fn index_build_progress(c: &mut PostgresConn) -> BackendResult<IndexProgress> {
        let flavour = c.dialect.flavour;
        if flavour != Flavour::Postgres {
            return Ok(IndexProgress::NotReported(format!(
                "{} does not report an index build's progress",
                flavour.dbms()
            )));
        }
        let version = server_version_num(c)?;
        if version < 120_000 {
            return Ok(IndexProgress::NotReported(format!(
                "PostgreSQL {} does not report an index build's progress \
                 (pg_stat_progress_create_index came in 12)",
                version / 10_000
            )));
        }
        let result = c.query(
            "SELECT phase, blocks_done, blocks_total, tuples_done, tuples_total \
             FROM pg_stat_progress_create_index WHERE datname = current_database()",
            "read pg_stat_progress_create_index",
        )?;
        Ok(IndexProgress::merged(
            result.rows.iter().map(|r| pg_index_build(r)),
        ))
    }
}

/// Inside the forced-index transaction: check the plan reads `index_name`, then count.
fn count_in_transaction(
    c: &mut PostgresConn,
    sql: &str,
    index_name: &str,
    context: &str,
) -> BackendResult<u64> {
    // Check that the planner really reads this index, so the count means what it says.
    let plan: Vec<String> = c
        .query(&format!("EXPLAIN {sql}"), context)?
        .rows
        .into_iter()
        .filter_map(|row| row.into_iter().next().flatten())
        .collect();
    let uses_index = plan
        .iter()
        .any(|line| line.contains(&format!("using {} ", index_name.to_lowercase())));
    if !uses_index {
        return Err(BackendError::sql(
            context,
            format!(
                "the planner would not read {index_name}: {}",
                plan.join(" / ")
            ),
        ));
    }
    Ok(i64_u64(c.number(sql, context)?))
}

/// Wait, at most [`SESSIONS_SETTLE_MAX`], until no client session of this database has
/// ended for [`SESSIONS_STABLE`]: a backend adds its last counts to the statistics when it
/// exits (before it leaves `pg_stat_activity`), so a read just after a step's connections
/// closed would miss up to a second of their work.
fn await_ended_sessions(wire: &mut PgWire) {
    let sql = "SELECT count(*) FROM pg_stat_activity \
               WHERE datname = current_database() AND backend_type = 'client backend'";
    let started = Instant::now();
    let (mut last, mut stable_since) = (None, Instant::now());
    while started.elapsed() < SESSIONS_SETTLE_MAX {
        let Ok(now) = wire.query_value(sql) else {
            return;
        };
        if now != last {
            (last, stable_since) = (now, Instant::now());
        } else if stable_since.elapsed() >= SESSIONS_STABLE {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The statistics' `server` object: the database the run's `pg_stat_database` row is
/// named by, whether the server is in recovery, and the WAL insert position in bytes
/// (`null` in recovery, where there is none), or `{"error": ...}`.
fn wal_position(wire: &mut PgWire) -> Part<PgServer> {
    let sql = "SELECT json_build_object('current_database', current_database(), \
               'in_recovery', pg_is_in_recovery(), 'wal_insert_lsn_bytes', \
               CASE WHEN pg_is_in_recovery() THEN NULL \
               ELSE pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0') END)::text";
    Part::of(
        wire.query_value(sql)
            .map_err(|e| PgDialect::detail(&e))
            .and_then(|text| {
                serde_json::from_str(&text.unwrap_or_default()).map_err(|e| e.to_string())
            }),
    )
}

/// `version()` and, when this user may read it, `pg_config`'s CONFIGURE, CC and CFLAGS.
fn read_build_facts(c: &mut PostgresConn) -> BackendResult<BuildFacts> {
    let version_string = c
        .value("SELECT version()", "SELECT version()")?
        .map(|v| protocol::server_text(v.as_bytes()));
    let mut facts = BuildFacts {
        version_string,
        ..BuildFacts::default()
    };
    // pg_config is readable by superusers (and members of pg_read_all_settings from 10).
    let rows = c
        .wire
        .query("SELECT name, setting FROM pg_config WHERE name IN ('CONFIGURE', 'CC', 'CFLAGS')");
    match rows {
        Ok(result) => {
            for row in result.rows {
                let mut cells = row.into_iter();
                let (Some(Some(name)), Some(Some(setting))) = (cells.next(), cells.next()) else {
                    continue;
                };
                let setting = protocol::server_text(setting.as_bytes());
                match name.as_str() {
                    "CONFIGURE" => facts.configure = Some(setting),
                    "CC" => facts.cc = Some(setting),
                    "CFLAGS" => facts.cflags = Some(setting),
                    _ => {}
                }
            }
        }
        Err(e) => facts.na.push(format!(
            "pg_config: {} (reading it needs a superuser)",
            PgDialect::detail(&e)
        )),
    }
    Ok(facts)
}

/// How long the count of a database's client sessions must stay the same before the
/// statistics are read (see [`await_ended_sessions`]).
const SESSIONS_STABLE: Duration = Duration::from_millis(40);

/// The longest wait for a database's client sessions to stop ending.
const SESSIONS_SETTLE_MAX: Duration = Duration::from_secs(1);

/// The statistics views a server of `server_version_num` has, each saved at every step end.
fn stat_views(server_version_num: i32) -> impl Iterator<Item = PgView> {
    PgView::ALL
        .into_iter()
        .filter(move |view| server_version_num >= view.since())
}

/// Settings that leave the planner only index scans, and no sort, for the forced count
/// (`enable_incremental_sort` came in 13; older servers have no incremental sort to turn off).
fn force_index_settings(server_version_num: i32) -> &'static str {
    if server_version_num >= 130_000 {
        "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; \
         SET LOCAL enable_sort = off; SET LOCAL enable_incremental_sort = off"
    } else {
        "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; \
         SET LOCAL enable_sort = off"
    }
}

/// `s` as an SQL string literal (quotes doubled; `standard_conforming_strings` is on in
/// every supported server).
fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

// ---------------------------------------------------------------------------------------------
// SQL text, as pure functions.

/// `CREATE TABLE` (and for servers before 10, the sequence cache) for spec section 1.
fn create_table_sql(
    table: &str,
    options: &TableOptions,
    server_version_num: i32,
    flavour: Flavour,
) -> Vec<String> {
    let identity = server_version_num >= 100_000;
    let pk = flavour.primary_key();
    let id_column = if options.client_assigns_ids {
        format!("transactionid bigint {pk}")
    } else if identity {
        format!("transactionid bigint GENERATED BY DEFAULT AS IDENTITY (CACHE 1000) {pk}")
    } else {
        format!("transactionid bigserial {pk}")
    };
    let suffix = match options.table_suffix.as_deref().map(str::trim) {
        Some(s) if !s.is_empty() => format!(" {s}"),
        _ => String::new(),
    };
    let mut sql = vec![format!(
        "CREATE TABLE {table} ({id_column}, dateandtime timestamp, \
         cashregisterid int NOT NULL, customerid int NOT NULL, productid int NOT NULL, \
         price int NOT NULL, data varchar(4000)){suffix}"
    )];
    if !options.client_assigns_ids && !identity {
        sql.push(format!(
            "ALTER SEQUENCE {table}_transactionid_seq CACHE 1000"
        ));
    }
    sql
}

/// How many of the table's three secondary indexes exist (names folded to lower case, as
/// PostgreSQL folds unquoted names).
fn count_indexes_sql(table: &str) -> String {
    let names: Vec<String> = SecondaryIndex::ALL
        .iter()
        .map(|i| quote_literal(&i.name(table).to_lowercase()))
        .collect();
    format!(
        "SELECT count(DISTINCT indexname) FROM pg_indexes \
         WHERE schemaname = current_schema() AND tablename = {} AND indexname IN ({})",
        quote_literal(&table.to_lowercase()),
        names.join(", ")
    )
}

fn create_index_sql(table: &str, index: SecondaryIndex) -> String {
    format!(
        "CREATE INDEX {} ON {table} ({})",
        index.name(table),
        index.column_list()
    )
}

/// A count that only `index` can answer without a sort: a predicate on its first column that
/// every row satisfies, and its full key order.
fn count_via_index_sql(table: &str, index: SecondaryIndex) -> String {
    let cols = index.column_list();
    let first = index.columns()[0];
    format!(
        "SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {first} >= {INT_MIN_LITERAL} \
         ORDER BY {cols}) AS s"
    )
}

/// One row of `pg_stat_progress_create_index` (phase, blocks done and total, tuples done
/// and total) as a build's progress: blocks while the phase scans the table, tuples while
/// it sorts or loads them, whichever the phase counts.
fn pg_index_build(row: &[Option<String>]) -> IndexBuildProgress {
    let text = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
    let number = |i: usize| text(i).trim().parse::<u64>().unwrap_or(0);
    let phase = text(0);
    let (blocks, tuples) = ((number(1), number(2)), (number(3), number(4)));
    let ((done, total), unit) = if phase.contains("scanning") && blocks.1 > 0 {
        (blocks, "blocks")
    } else if tuples.1 > 0 {
        (tuples, "tuples")
    } else if blocks.1 > 0 {
        (blocks, "blocks")
    } else {
        ((0, 0), "")
    };
    IndexBuildProgress {
        phase,
        done,
        total,
        unit: unit.to_string(),
        builds: 1,
    }
}

fn vacuum_sql(table: &str) -> String {
    format!("VACUUM (ANALYZE) {table}")
}

// ---------------------------------------------------------------------------------------------
// Errors.

/// Map an error of a statement (see [`server_conn::wire_error`]).
fn wire_error(target: &str, context: &str, e: &WireError) -> BackendError {
    server_conn::wire_error::<PgDialect>(target, context, e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::server_conn::InsertParams;
    use crate::backend::wire::Value;

    #[test]
    fn forced_count_settings_follow_the_version() {
        assert!(!force_index_settings(100_023).contains("incremental"));
        assert!(!force_index_settings(120_022).contains("incremental"));
        assert!(force_index_settings(130_000).contains("enable_incremental_sort = off"));
        assert!(force_index_settings(180_004).contains("enable_sort = off"));
    }

    #[test]
    fn statistics_views_follow_the_version() {
        let of = |v| stat_views(v).map(PgView::name).collect::<Vec<_>>();
        assert!(of(100_023).contains(&"pg_stat_bgwriter"));
        assert!(!of(130_023).contains(&"pg_stat_wal"));
        assert!(of(140_000).contains(&"pg_stat_wal"));
        assert!(!of(150_018).contains(&"pg_stat_io"));
        assert!(of(160_014).contains(&"pg_stat_io"));
        assert!(!of(160_014).contains(&"pg_stat_checkpointer"));
        assert!(of(180_004).contains(&"pg_stat_checkpointer"));
    }

    #[test]
    fn create_table_text() {
        let opts = TableOptions::default();
        assert_eq!(
            create_table_sql("pi1", &opts, 150_004, Flavour::Postgres),
            vec![
                "CREATE TABLE pi1 (transactionid bigint GENERATED BY DEFAULT AS IDENTITY \
                 (CACHE 1000) PRIMARY KEY, dateandtime timestamp, cashregisterid int NOT NULL, \
                 customerid int NOT NULL, productid int NOT NULL, price int NOT NULL, \
                 data varchar(4000))"
                    .to_string()
            ]
        );
        let old = create_table_sql("pi2", &opts, 90_624, Flavour::Postgres);
        assert_eq!(old.len(), 2);
        assert!(old[0].starts_with("CREATE TABLE pi2 (transactionid bigserial PRIMARY KEY, "));
        assert_eq!(old[1], "ALTER SEQUENCE pi2_transactionid_seq CACHE 1000");
        let client = TableOptions {
            client_assigns_ids: true,
            table_suffix: Some("USING heap".to_string()),
            ..TableOptions::default()
        };
        let sql = create_table_sql("pi1", &client, 90_000, Flavour::Postgres);
        assert_eq!(sql.len(), 1);
        assert!(sql[0].starts_with("CREATE TABLE pi1 (transactionid bigint PRIMARY KEY, "));
        assert!(sql[0].ends_with("data varchar(4000)) USING heap"));
    }

    #[test]
    fn index_text() {
        assert_eq!(
            create_index_sql("pi1", SecondaryIndex::Pdc),
            "CREATE INDEX pi1_pdc ON pi1 (price, dateandtime, customerid)"
        );
    }

    #[test]
    fn insert_text() {
        assert_eq!(
            PgDialect::insert_sql("pi1", 2, false),
            "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) \
             VALUES ($1, $2, $3, $4, $5, $6), ($1, $7, $8, $9, $10, $11)"
        );
        assert_eq!(
            PgDialect::insert_sql("pi3", 2, true),
            "INSERT INTO pi3 (transactionid, dateandtime, cashregisterid, customerid, productid, \
             price, data) VALUES ($2, $1, $3, $4, $5, $6, $7), ($8, $1, $9, $10, $11, $12, $13)"
        );
        let hundred = PgDialect::insert_sql("pi1", 100, false);
        assert!(hundred.ends_with("($1, $497, $498, $499, $500, $501)"));
    }

    #[test]
    fn insert_params_follow_the_placeholders() {
        use crate::workload::{Rng, RowGenerator, RowShape};
        let mut g = RowGenerator::new(Rng::for_stream(1, 1, 0), RowShape::default(), Some(7));
        let mut b = RowBatch::default();
        g.fill(&mut b, 3);
        let params: Vec<Value<'_>> = InsertParams::new(&b, Placeholders::Numbered).collect();
        assert_eq!(params.len(), 1 + 3 * 6);
        assert_eq!(InsertParams::new(&b, Placeholders::Numbered).len(), 19);
        assert!(matches!(params[0], Value::Timestamp(_)));
        assert!(matches!(params[1], Value::Int(7)));
        assert!(matches!(params[8], Value::Int(v) if v == i64::from(b.cashregisterid[1])));
        assert!(matches!(params[18], Value::Text(s) if s == b.data(2)));
        let mut g = RowGenerator::new(Rng::for_stream(1, 1, 0), RowShape::default(), None);
        g.fill(&mut b, 2);
        let params: Vec<Value<'_>> = InsertParams::new(&b, Placeholders::Numbered).collect();
        assert_eq!(params.len(), 11);
        assert!(matches!(params[9], Value::Int(v) if v == i64::from(b.price[1])));
    }

    #[test]
    fn query_text() {
        assert_eq!(
            Flavour::Postgres.pg_delete_sql("pi1"),
            "DELETE FROM pi1 WHERE transactionid = ANY(ARRAY(SELECT transactionid \
             FROM pi1 WHERE transactionid >= $1 ORDER BY transactionid LIMIT $2))"
        );
        assert_eq!(
            PgDialect::range_sql("pi1", SecondaryIndex::MarketSegment),
            "SELECT productid, customerid, price FROM pi1 WHERE productid >= $1 \
             ORDER BY productid, customerid, price LIMIT 10"
        );
        assert_eq!(
            PgDialect::range_sql("pi2", SecondaryIndex::RegisterSegment),
            "SELECT cashregisterid, customerid, price FROM pi2 WHERE cashregisterid >= $1 \
             ORDER BY cashregisterid, customerid, price LIMIT 10"
        );
        assert_eq!(
            PgDialect::range_sql("pi1", SecondaryIndex::Pdc),
            "SELECT price, dateandtime, customerid FROM pi1 WHERE price >= $1 \
             ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        assert_eq!(
            micro_sql::point_sql("pi1", 3, Placeholders::Numbered),
            "SELECT transactionid, productid, data FROM pi1 WHERE transactionid IN ($1, $2, $3)"
        );
        assert_eq!(
            micro_sql::min_max_sql("pi1"),
            "SELECT min(transactionid), max(transactionid) FROM pi1"
        );
        assert_eq!(
            count_via_index_sql("pi1", SecondaryIndex::Pdc),
            "SELECT count(*) FROM (SELECT 1 FROM pi1 WHERE price >= -2147483648 \
             ORDER BY price, dateandtime, customerid) AS s"
        );
        assert_eq!(vacuum_sql("pi2"), "VACUUM (ANALYZE) pi2");
    }

    #[test]
    fn errors_are_classified_by_their_sqlstate() {
        let e = |code: &str| {
            WireError::Server(Box::new(ServerError {
                sqlstate: code.to_string(),
                severity: Some("ERROR".to_string()),
                message: "m".to_string(),
                ..ServerError::default()
            }))
        };
        for retryable in ["40P01", "40001", "55P03"] {
            let mapped = wire_error("t", "c", &e(retryable));
            assert_eq!(
                mapped.to_string(),
                format!("transient conflict: c: ERROR: m (SQLSTATE {retryable})")
            );
        }
        assert!(matches!(
            wire_error("t", "c", &e("28P01")),
            BackendError::Auth { .. }
        ));
        assert!(matches!(
            wire_error("t", "c", &e("42P01")),
            BackendError::Sql { .. }
        ));
        // Out of space: one line naming the server's disk, without the HINT's line.
        let full = WireError::Server(Box::new(ServerError {
            sqlstate: "53100".to_string(),
            severity: Some("ERROR".to_string()),
            message: "could not extend file \"base/5/16384\": No space left on device".to_string(),
            hint: Some("Check free disk space.".to_string()),
            ..ServerError::default()
        }));
        let text = wire_error("t", "insert into pi1", &full).to_string();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.starts_with(
                "insert into pi1: the server's own disk is full (t): could not extend"
            ) && text.contains("(SQLSTATE 53100)")
                && text.contains("free space on the disk that holds the server's data directory"),
            "{text}"
        );
        let io = WireError::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(matches!(
            wire_error("t", "c", &io),
            BackendError::Unreachable { .. }
        ));
        let broken = WireError::Protocol("bad message length 3".to_string());
        assert_eq!(
            wire_error("t", "c", &broken).to_string(),
            "c: protocol error: bad message length 3 (server t)"
        );
    }

    #[test]
    fn driver_redacts_the_password() {
        let settings = PgSettings::from_url("postgres://bob:secret@127.0.0.1:1/db").unwrap();
        let d = PostgresDriver::new(settings, None);
        assert_eq!(d.target, "postgres://bob:***@127.0.0.1:1/db");
    }
}
