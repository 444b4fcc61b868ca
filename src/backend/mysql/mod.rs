//! MySQL and MariaDB backend (InnoDB and MyRocks).
//!
//! Every connection runs on [`wire`], ibench's own blocking protocol client that reads results
//! in place: the benchmark's connections (`MysqlConn`: the generic `ServerConn`, in
//! `backend/server_conn.rs`, with this module's `MyDialect`: its SQL, error numbers and the
//! operations MySQL does its own way) and the driver's short ones
//! (describe, settle, the `KILL QUERY` of a cancel) alike. Statements of the hot path are
//! prepared once per connection and kept in the connection's cache. The settings come from
//! the URL, `~/.my.cnf` and `MYSQL_PWD` ([`config`]).

pub mod codec;
pub mod config;
pub mod hosts;
mod login;
pub mod replica_setup;
pub mod replication;
mod settle;
pub mod wire;

use std::collections::BTreeMap;
use std::time::Instant;

use super::micro_sql::Placeholders;
use super::server_conn::{self, Dialect, ErrorClass, ServerConn};
use super::*;
use crate::results::statistics::{EngineStatus, MyStatistics, Part, Statistics};
use crate::results::target::Flavour;
use crate::stats::convert::i64_u64;
use crate::url::{ServerUrl, Url};
use config::MyConfig;
use settle::{
    analyze_table, compact_l0, flush_dirty_pages, query_drop, timed, wait_for_compactions,
};
use wire::{MyWire, ServerError, WireError};

/// How long a connection attempt may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The fix to name when the RocksDB engine is missing.
const ROCKSDB_FIX: &str = "start the server with --plugin-load-add=ha_rocksdb.so, e.g. \
                           `ibench server start mariadb --engine rocksdb`";

/// MySQL/MariaDB driver: parsed options and the storage engine.
pub struct MysqlDriver {
    config: MyConfig,
    /// The URL, password redacted.
    target: String,
    engine: Engine,
    /// The flavour given with `--flavour` (else detected from `VERSION()`).
    forced: Option<Flavour>,
}

/// What a `mysql://` URL says, read once: the settings completed as the MySQL client
/// completes them (the URL, `~/.my.cnf`, `MYSQL_PWD`) and the URL with its password masked.
pub type MySettings = super::wire::ServerSettings<MyConfig>;

impl MySettings {
    /// Read a `mysql://` or `mariadb://` URL, e.g. `mysql://root@127.0.0.1:3306/ibench`
    /// (TCP) or `mysql://root@localhost/ibench?socket=/path/mysqld.sock` (Unix socket). The URL
    /// must name a database, which must exist. The password comes from the URL, else from the
    /// file named by `?password_file=PATH`, else from `~/.my.cnf`, else from `MYSQL_PWD`
    /// ([`config`]). Does not connect.
    pub fn from_url(url: &str) -> anyhow::Result<Self> {
        MySettings::read(&Url::parse(url))
    }

    /// [`MySettings::from_url`] of a URL already split: the settings are read from its parts.
    pub fn read(url: &Url<'_>) -> anyhow::Result<Self> {
        let shown = url.masked();
        let parts = url
            .parts
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("bad --url '{shown}': not a mysql:// URL"))?;
        let given = ServerUrl::with_password_file(parts, None)?;
        let mut config =
            MyConfig::from_parts(&given).map_err(|e| crate::url::UrlError::Malformed {
                url: shown.clone(),
                detail: e.to_string(),
            })?;
        if config.database.is_none() {
            anyhow::bail!(
                "--url '{shown}' names no database: add one, e.g. mysql://root@127.0.0.1:3306/ibench \
                 (`ibench server start mariadb` creates `ibench`)"
            );
        }
        if config.connect_timeout.is_none() {
            config.connect_timeout = Some(CONNECT_TIMEOUT);
        }
        Ok(MySettings { config, shown })
    }
}

impl MysqlDriver {
    /// The error of opening a connection ([`server_conn::connect_error`]).
    fn connect_error(&self, e: &WireError) -> BackendError {
        let database = self.config.database.as_deref();
        server_conn::connect_error::<MyDialect>(&self.target, database, e)
    }

    /// The driver of the server `settings` name, its tables on `engine`, of flavour `forced`
    /// when given. Does not connect.
    pub fn new(settings: MySettings, engine: Engine, forced: Option<Flavour>) -> Self {
        MysqlDriver {
            config: settings.config,
            target: settings.shown,
            engine,
            forced,
        }
    }

    /// A connection of the driver's own (describe, settle), checked for RocksDB when that is
    /// the engine.
    fn open(&self) -> BackendResult<MyWire> {
        let mut wire = MyWire::connect(&self.config).map_err(|e| self.connect_error(&e))?;
        if self.engine == Engine::Rocksdb {
            let support = wire
                .query(ROCKSDB_SUPPORT_SQL)
                .map_err(|e| wire_error(&self.target, "check the ROCKSDB engine", &e))?;
            rocksdb_usable(support.first(), &self.target)?;
        }
        Ok(wire)
    }
}

/// The RocksDB engine's `SUPPORT` (`YES`, `DEFAULT`, ...; no row when it is not loaded).
const ROCKSDB_SUPPORT_SQL: &str =
    "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'";

/// Whether the engine's `SUPPORT` means it can be used; the error names the fix.
fn rocksdb_usable(support: Option<&str>, target: &str) -> BackendResult<()> {
    match support {
        Some(s) if s.eq_ignore_ascii_case("YES") || s.eq_ignore_ascii_case("DEFAULT") => Ok(()),
        other => Err(BackendError::sql(
            format!("use the RocksDB engine on {target}"),
            format!(
                "the server has no usable ROCKSDB engine ({}); {ROCKSDB_FIX}",
                match other {
                    Some(s) => format!("SUPPORT = {s}"),
                    None => "not loaded".to_string(),
                }
            ),
        )),
    }
}

impl MysqlDriver {
    /// The server's `VERSION()` and its flavour (`--flavour` when given, else detected).
    fn version_and_flavour(&self, conn: &mut MyWire) -> BackendResult<(String, Flavour)> {
        let version = conn
            .query("SELECT VERSION()")
            .map_err(|e| wire_error(&self.target, "read VERSION()", &e))?
            .first()
            .map(|v| protocol::server_text(v.as_bytes()))
            .unwrap_or_default();
        let flavour = self
            .forced
            .unwrap_or_else(|| Flavour::detect(BackendKind::Mysql, &version));
        Ok((version, flavour))
    }
}

impl Driver for MysqlDriver {
    fn connect(&self) -> BackendResult<Box<dyn Conn>> {
        let wire = MyWire::connect(&self.config).map_err(|e| self.connect_error(&e))?;
        let dialect = MyDialect {
            config: self.config.pinned_to(wire.endpoint()),
        };
        let mut conn = MysqlConn::new(wire, self.target.clone(), dialect);
        if self.engine == Engine::Rocksdb {
            let support = conn.query(ROCKSDB_SUPPORT_SQL, "check the ROCKSDB engine")?;
            rocksdb_usable(support.first(), &self.target)?;
        }
        Ok(Box::new(conn))
    }

    fn describe(&self) -> BackendResult<TargetInfo> {
        let mut conn = self.open()?;
        let (version, flavour) = self.version_and_flavour(&mut conn)?;
        Ok(TargetInfo {
            backend: BackendKind::Mysql,
            url: self.target.clone(),
            dbms: flavour.dbms().to_string(),
            version,
            engine: Some(self.engine),
            flavour: Some(flavour),
            tls: conn.tls_info(),
        })
    }

    fn settle(&self, tables: &[String], budget: Duration) -> BackendResult<Vec<SettleAction>> {
        let deadline = Instant::now() + budget;
        let mut conn = self.open()?;
        let mut actions = Vec::new();
        let (_, flavour) = self.version_and_flavour(&mut conn)?;
        if !flavour.has_engine_maintenance() {
            // TiDB: no dirty pages to flush, no MyRocks: refresh the statistics only.
            return Ok(tables.iter().map(|t| analyze_table(&mut conn, t)).collect());
        }
        match self.engine {
            Engine::Innodb => {
                for table in tables {
                    actions.push(analyze_table(&mut conn, table));
                }
                actions.extend(flush_dirty_pages(&mut conn, deadline));
            }
            Engine::Rocksdb => {
                actions.push(wait_for_compactions(&mut conn, deadline));
                actions.push(timed(
                    "SET GLOBAL rocksdb_force_flush_memtable_now = 1",
                    || query_drop(&mut conn, "SET GLOBAL rocksdb_force_flush_memtable_now = 1"),
                ));
                actions.push(compact_l0(&mut conn));
            }
        }
        Ok(actions)
    }
}

/// One MySQL/MariaDB connection with its prepared statements: the generic server connection
/// with MySQL's dialect, on the blocking protocol client ([`wire`]).
pub(crate) type MysqlConn = ServerConn<MyDialect>;

/// What a MySQL connection keeps of its own: how to open a second connection (for
/// `KILL QUERY`).
pub(crate) struct MyDialect {
    config: MyConfig,
}

/// Cancels a MySQL connection's statement with `KILL QUERY` from a second connection: its
/// login and then the `KILL` are each bounded by [`protocol::CANCEL_TIMEOUT`] (10 s at most
/// in all).
struct MyCanceller {
    config: MyConfig,
    connection_id: u32,
}

impl Canceller for MyCanceller {
    fn cancel(&self) -> Result<(), String> {
        let mut config = self.config.clone();
        config.connect_timeout = Some(protocol::CANCEL_TIMEOUT);
        let mut conn = MyWire::connect(&config).map_err(|e| e.to_string())?;
        conn.set_statement_timeout(Some(protocol::CANCEL_TIMEOUT))
            .map_err(|e| e.to_string())?;
        conn.query(&format!("KILL QUERY {}", self.connection_id))
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

/// The engine of an existing table, `None` when the table does not exist.
fn table_engine(c: &mut MysqlConn, table: &str) -> BackendResult<Option<String>> {
    let sql = format!(
        "SELECT ENGINE FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = {}",
        quote_literal(table)
    );
    let result = c.query(&sql, &format!("read the engine of {table}"))?;
    Ok(result.first().map(str::to_string))
}

/// Every column of every row of `sql` as text.
fn text_rows(c: &mut MysqlConn, sql: &str) -> Result<Vec<Vec<Option<String>>>, WireError> {
    c.wire.query(sql).map(|r| r.rows)
}

/// `s` as an SQL string literal (backslashes and quotes escaped; ibench's own table and index
/// names never hold either).
fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

impl Dialect for MyDialect {
    type Wire = MyWire;
    const PLACEHOLDERS: Placeholders = Placeholders::Question;

    fn promote(c: &mut ServerConn<Self>, wait_seconds: u32) -> BackendResult<()> {
        crate::backend::promote::promote_mariadb(c, wait_seconds)
    }

    fn accepts_writes(c: &mut ServerConn<Self>) -> BackendResult<bool> {
        crate::backend::promote::mariadb_accepts_writes(c)
    }

    fn server_identity(
        c: &mut ServerConn<Self>,
    ) -> BackendResult<Option<crate::backend::identity::ServerIdentity>> {
        crate::backend::identity::read(
            c,
            crate::backend::identity::MARIADB_IDENTITY_SQL,
            "server_id",
        )
    }

    fn connect_refusal(e: &ServerError, database: Option<&str>) -> Option<String> {
        let db = database.unwrap_or_default();
        (e.number == Some(ER_BAD_DB_ERROR)).then(|| {
            format!(
                "database `{db}` does not exist ({e}); create it (CREATE DATABASE {db}) or use \
                 `ibench server start mariadb`, which creates `ibench`"
            )
        })
    }

    fn class(e: &ServerError) -> ErrorClass {
        match e.number {
            Some(ER_LOCK_DEADLOCK | ER_LOCK_WAIT_TIMEOUT) => ErrorClass::Retryable,
            Some(ER_ACCESS_DENIED | ER_DBACCESS_DENIED) => ErrorClass::Auth,
            Some(ER_RECORD_FILE_FULL | ER_DISK_FULL) => ErrorClass::DiskFull,
            // errno 28 (ENOSPC) in an error on a file ("Errcode: 28 ...").
            _ if e.message.contains("Errcode: 28") => ErrorClass::DiskFull,
            _ => ErrorClass::Other,
        }
    }

    fn insert_sql(table: &str, rows: usize, client_ids: bool) -> String {
        let (cols, row) = if client_ids {
            (
                "transactionid, dateandtime, cashregisterid, customerid, productid, price, data",
                "(?, ?, ?, ?, ?, ?, ?)",
            )
        } else {
            (
                "dateandtime, cashregisterid, customerid, productid, price, data",
                "(?, ?, ?, ?, ?, ?)",
            )
        };
        let mut sql = String::with_capacity(80 + rows * (row.len() + 2));
        sql.push_str("INSERT INTO ");
        sql.push_str(table);
        sql.push_str(" (");
        sql.push_str(cols);
        sql.push_str(") VALUES ");
        for i in 0..rows {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str(row);
        }
        sql
    }

    fn delete_sql(&self, table: &str) -> String {
        delete_sql(table)
    }

    fn range_sql(table: &str, index: SecondaryIndex) -> String {
        let cols = index.column_list();
        let first = index.columns()[0];
        format!(
            "SELECT {cols} FROM {table} FORCE INDEX ({}) WHERE {first} >= ? ORDER BY {cols} LIMIT 10",
            index.name(table)
        )
    }

    fn count_sql(table: &str) -> String {
        count_sql(table, "PRIMARY")
    }

    fn count_indexes_sql(table: &str) -> String {
        let names: Vec<String> = SecondaryIndex::ALL
            .iter()
            .map(|i| quote_literal(&i.name(table)))
            .collect();
        format!(
            "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = {} AND INDEX_NAME IN ({})",
            quote_literal(table),
            names.join(", ")
        )
    }

    fn micro_table_suffix(options: &TableOptions) -> String {
        format!(" ENGINE={}", options.engine.sql_name())
    }

    fn canceller(c: &MysqlConn) -> Option<Box<dyn Canceller>> {
        Some(Box::new(MyCanceller {
            config: c.dialect.config.clone(),
            connection_id: c.wire.connection_id(),
        }))
    }

    fn create_table(c: &mut MysqlConn, table: &str, options: &TableOptions) -> BackendResult<()> {
        let sql = create_table_sql(table, options);
        c.wire.query(&sql).map(drop).map_err(|e| {
            let unknown_engine = e
                .server()
                .is_some_and(|s| s.number == Some(ER_UNKNOWN_STORAGE_ENGINE));
            let mapped = c.err(&format!("create table {table}"), &e);
            match mapped {
                BackendError::Sql { context, detail }
                    if unknown_engine && options.engine == Engine::Rocksdb =>
                {
                    BackendError::Sql {
                        context,
                        detail: format!("{detail}; {ROCKSDB_FIX}"),
                    }
                }
                other => other,
            }
        })
    }

    fn create_secondary_indexes(c: &mut MysqlConn, table: &str) -> BackendResult<()> {
        let engine = table_engine(c, table)?;
        let rocksdb = engine.is_some_and(|e| e.eq_ignore_ascii_case("ROCKSDB"));
        for sql in create_indexes_sql(table, rocksdb) {
            c.query(&sql, &format!("create the secondary indexes of {table}"))?;
        }
        Ok(())
    }

    fn count_rows_via_index(
        c: &mut MysqlConn,
        table: &str,
        index: SecondaryIndex,
    ) -> BackendResult<u64> {
        let name = index.name(table);
        let context = format!("count rows of {table} via {name}");
        let sql = count_sql(table, &name);
        // Check that the optimizer really reads this index, so the count means what it says.
        let plan = c.query(&format!("EXPLAIN {sql}"), &context)?;
        let key_column = plan
            .columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case("key"));
        let keys: Vec<String> = plan
            .rows
            .iter()
            .filter_map(|row| row.get(key_column?).cloned().flatten())
            .collect();
        if !keys.iter().any(|k| k.eq_ignore_ascii_case(&name)) {
            return Err(BackendError::sql(
                &context,
                format!("the optimizer would not read {name} (keys used: {keys:?})"),
            ));
        }
        Ok(i64_u64(c.number(&sql, &context)?))
    }

    fn database_size_bytes(c: &mut MysqlConn, tables: &[String]) -> BackendResult<Option<DbSize>> {
        database_size_bytes(c, tables)
    }

    fn server_files(c: &mut MysqlConn) -> BackendResult<Option<ServerFiles>> {
        server_files(c)
    }

    fn server_statistics(c: &mut MysqlConn) -> BackendResult<Option<Statistics>> {
        server_statistics(c)
    }

    fn server_settings(c: &mut MysqlConn) -> BackendResult<Option<serde_json::Value>> {
        text_rows(c, "SHOW GLOBAL VARIABLES")
            .map(|rows| Some(name_value_object(rows)))
            .map_err(|e| c.err("SHOW GLOBAL VARIABLES", &e))
    }

    fn build_facts(c: &mut MysqlConn) -> BackendResult<BuildFacts> {
        build_facts(c)
    }

    fn index_build_progress(c: &mut MysqlConn) -> BackendResult<IndexProgress> {
        index_build_progress(c)
    }
}

fn database_size_bytes(c: &mut MysqlConn, tables: &[String]) -> BackendResult<Option<DbSize>> {
    let context = "read the table sizes from information_schema.TABLES";
    let rows = text_rows(
        c,
        "SELECT TABLE_NAME, DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = DATABASE()",
    )
    .map_err(|e| c.err(context, &e))?;
    let mut total = 0u64;
    let mut sizes = std::collections::BTreeMap::new();
    for row in rows {
        let (Some(Some(name)), Some(size)) = (row.first(), row.get(1)) else {
            continue;
        };
        let size = size
            .as_deref()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        total += size;
        if tables.iter().any(|t| t.eq_ignore_ascii_case(name)) {
            sizes.insert(name.clone(), size);
        }
    }
    Ok(Some(DbSize {
        total_bytes: total,
        tables: sizes,
        source: "information_schema.TABLES data_length + index_length (the engine's estimate)"
            .to_string(),
    }))
}

fn server_files(c: &mut MysqlConn) -> BackendResult<Option<ServerFiles>> {
    let context = "read @@datadir and @@pid_file";
    let rows = text_rows(c, "SELECT @@datadir, @@pid_file").map_err(|e| c.err(context, &e))?;
    let Some(Some(datadir)) = rows.first().and_then(|r| r.first()).cloned() else {
        return Ok(None);
    };
    let datadir = std::path::PathBuf::from(datadir);
    let pid_file = rows
        .first()
        .and_then(|r| r.get(1))
        .cloned()
        .flatten()
        .map(|p| datadir.join(p));
    Ok(Some(ServerFiles {
        data_paths: vec![datadir],
        pid_file,
        embedded: false,
    }))
}

fn server_statistics(c: &mut MysqlConn) -> BackendResult<Option<Statistics>> {
    let global_status = Part::of(
        text_rows(c, "SHOW GLOBAL STATUS")
            .map(name_value_map)
            .map_err(|e| MyDialect::detail(&e)),
    );
    let engines = text_rows(
        c,
        "SELECT ENGINE FROM information_schema.ENGINES WHERE SUPPORT IN ('YES', 'DEFAULT')",
    )
    .map_err(|e| c.err("list the engines", &e))?;
    let mut engine_status = |engine: &str| {
        let loaded = engines.iter().any(|r| {
            r.first()
                .cloned()
                .flatten()
                .is_some_and(|e| e.eq_ignore_ascii_case(engine))
        });
        loaded.then(|| {
            let rows = text_rows(c, &format!("SHOW ENGINE {engine} STATUS")).map(|rows| {
                rows.into_iter()
                    .map(|r| {
                        let col = |i: usize| r.get(i).cloned().flatten();
                        EngineStatus {
                            kind: col(0),
                            name: col(1),
                            status: col(2),
                        }
                    })
                    .collect()
            });
            Part::of(rows.map_err(|e| MyDialect::detail(&e)))
        })
    };
    let innodb_status = engine_status("InnoDB");
    let rocksdb_status = engine_status("ROCKSDB");
    Ok(Some(Statistics::Mysql(MyStatistics {
        global_status,
        innodb_status,
        rocksdb_status,
    })))
}

fn index_build_progress(c: &mut MysqlConn) -> BackendResult<IndexProgress> {
    let context = "read the index build's progress from performance_schema";
    if c.number("SELECT @@performance_schema", context)? == 0 {
        return Ok(IndexProgress::NotReported(
            "performance_schema is off (MariaDB's default); start the server with \
             performance_schema=ON to see it"
                .to_string(),
        ));
    }
    let sql = "SELECT (SELECT COUNT(*) FROM performance_schema.setup_consumers \
               WHERE NAME = 'events_stages_current' AND ENABLED = 'YES'), \
               (SELECT COUNT(*) FROM performance_schema.setup_instruments \
               WHERE NAME LIKE 'stage/innodb/alter table%' AND ENABLED = 'YES')";
    let rows = text_rows(c, sql).map_err(|e| c.err(context, &e))?;
    let count = |i: usize| {
        rows.first()
            .and_then(|r| r.get(i).cloned().flatten())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    if count(0) == 0 || count(1) == 0 {
        return Ok(IndexProgress::NotReported(
            "performance_schema's events_stages_current consumer or its \
             stage/innodb/alter table% instruments are off"
                .to_string(),
        ));
    }
    let rows = text_rows(
        c,
        "SELECT EVENT_NAME, WORK_COMPLETED, WORK_ESTIMATED \
         FROM performance_schema.events_stages_current \
         WHERE EVENT_NAME LIKE 'stage/%alter table%'",
    )
    .map_err(|e| c.err(context, &e))?;
    Ok(IndexProgress::merged(rows.iter().map(|r| {
        let text = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
        let number = |i: usize| text(i).trim().parse::<u64>().unwrap_or(0);
        let name = text(0);
        IndexBuildProgress {
            phase: name.rsplit('/').next().unwrap_or(&name).to_string(),
            done: number(1),
            total: number(2),
            unit: "work units".to_string(),
            builds: 1,
        }
    })))
}

fn build_facts(c: &mut MysqlConn) -> BackendResult<BuildFacts> {
    let sql = "SHOW GLOBAL VARIABLES WHERE Variable_name IN \
               ('version', 'version_comment', 'version_compile_machine', 'version_compile_os')";
    let rows = text_rows(c, sql).map_err(|e| c.err(sql, &e))?;
    let mut facts = BuildFacts::default();
    for row in rows {
        let (Some(Some(name)), Some(Some(value))) = (row.first(), row.get(1)) else {
            continue;
        };
        let slot = match name.as_str() {
            "version" => &mut facts.version_string,
            "version_comment" => &mut facts.version_comment,
            "version_compile_machine" => &mut facts.compile_machine,
            "version_compile_os" => &mut facts.compile_os,
            _ => continue,
        };
        *slot = Some(protocol::server_text(value.as_bytes()));
    }
    facts
        .na
        .push("compiler flags: MySQL and MariaDB do not report them".to_string());
    Ok(facts)
}

/// Two-column rows (name, value) as a map; a row without a value maps to `None`.
fn name_value_map(rows: Vec<Vec<Option<String>>>) -> BTreeMap<String, Option<String>> {
    rows.into_iter()
        .filter_map(|r| {
            let mut it = r.into_iter();
            Some((it.next().flatten()?, it.next().flatten()))
        })
        .collect()
}

/// Two-column rows (name, value) as a JSON object.
fn name_value_object(rows: Vec<Vec<Option<String>>>) -> serde_json::Value {
    serde_json::Value::Object(
        name_value_map(rows)
            .into_iter()
            .map(|(name, value)| (name, value.into()))
            .collect(),
    )
}

// ---------------------------------------------------------------------------------------------
// SQL text, as pure functions.

fn create_table_sql(table: &str, options: &TableOptions) -> String {
    let auto = if options.client_assigns_ids {
        ""
    } else {
        " AUTO_INCREMENT"
    };
    let suffix = match options.table_suffix.as_deref().map(str::trim) {
        Some(s) if !s.is_empty() => format!(" {s}"),
        _ => String::new(),
    };
    format!(
        "CREATE TABLE {table} (transactionid BIGINT NOT NULL{auto}, dateandtime DATETIME(6), \
         cashregisterid INT NOT NULL, customerid INT NOT NULL, productid INT NOT NULL, \
         price INT NOT NULL, data VARCHAR(4000), PRIMARY KEY (transactionid)) ENGINE={}{suffix}",
        options.engine.sql_name()
    )
}

/// InnoDB: one `ALTER TABLE` adding all three; MyRocks: one `ALTER TABLE` per index.
fn create_indexes_sql(table: &str, one_per_index: bool) -> Vec<String> {
    let clauses: Vec<String> = SecondaryIndex::ALL
        .iter()
        .map(|i| format!("ADD INDEX {} ({})", i.name(table), i.column_list()))
        .collect();
    if one_per_index {
        clauses
            .into_iter()
            .map(|c| format!("ALTER TABLE {table} {c}"))
            .collect()
    } else {
        vec![format!("ALTER TABLE {table} {}", clauses.join(", "))]
    }
}

fn delete_sql(table: &str) -> String {
    format!("DELETE FROM {table} WHERE transactionid >= ? ORDER BY transactionid LIMIT ?")
}

fn count_sql(table: &str, index: &str) -> String {
    format!("SELECT COUNT(*) FROM {table} FORCE INDEX ({index})")
}

// ---------------------------------------------------------------------------------------------
// Errors.

/// `ER_DBACCESS_DENIED_ERROR`: the user may not use that database.
const ER_DBACCESS_DENIED: u16 = 1044;
/// `ER_ACCESS_DENIED_ERROR`: bad user or password.
const ER_ACCESS_DENIED: u16 = 1045;
/// `ER_BAD_DB_ERROR`: unknown database.
const ER_BAD_DB_ERROR: u16 = 1049;
/// `ER_LOCK_WAIT_TIMEOUT`.
const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
/// `ER_LOCK_DEADLOCK`.
const ER_LOCK_DEADLOCK: u16 = 1213;
/// `ER_UNKNOWN_SYSTEM_VARIABLE`.
const ER_UNKNOWN_SYSTEM_VARIABLE: u16 = 1193;
/// `ER_RECORD_FILE_FULL`: "The table is full" (InnoDB out of space).
const ER_RECORD_FILE_FULL: u16 = 1114;
/// `ER_DISK_FULL`.
const ER_DISK_FULL: u16 = 1021;
/// `ER_UNKNOWN_STORAGE_ENGINE`.
const ER_UNKNOWN_STORAGE_ENGINE: u16 = 1286;

/// Map an error of a statement (see [`server_conn::wire_error`]).
fn wire_error(target: &str, context: &str, e: &WireError) -> BackendError {
    server_conn::wire_error::<MyDialect>(target, context, e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::server_conn::InsertParams;
    use crate::backend::wire::Value;

    #[test]
    fn create_table_text() {
        assert_eq!(
            create_table_sql("pi1", &TableOptions::default()),
            "CREATE TABLE pi1 (transactionid BIGINT NOT NULL AUTO_INCREMENT, \
             dateandtime DATETIME(6), cashregisterid INT NOT NULL, customerid INT NOT NULL, \
             productid INT NOT NULL, price INT NOT NULL, data VARCHAR(4000), \
             PRIMARY KEY (transactionid)) ENGINE=InnoDB"
        );
        let opts = TableOptions {
            client_assigns_ids: true,
            engine: Engine::Rocksdb,
            table_suffix: Some("PARTITION BY HASH (transactionid) PARTITIONS 4".to_string()),
        };
        assert_eq!(
            create_table_sql("pi2", &opts),
            "CREATE TABLE pi2 (transactionid BIGINT NOT NULL, \
             dateandtime DATETIME(6), cashregisterid INT NOT NULL, customerid INT NOT NULL, \
             productid INT NOT NULL, price INT NOT NULL, data VARCHAR(4000), \
             PRIMARY KEY (transactionid)) ENGINE=ROCKSDB \
             PARTITION BY HASH (transactionid) PARTITIONS 4"
        );
    }

    #[test]
    fn index_text() {
        assert_eq!(
            create_indexes_sql("pi1", false),
            vec![
                "ALTER TABLE pi1 ADD INDEX pi1_marketsegment (productid, customerid, price), \
                 ADD INDEX pi1_registersegment (cashregisterid, customerid, price), \
                 ADD INDEX pi1_pdc (price, dateandtime, customerid)"
                    .to_string()
            ]
        );
        assert_eq!(
            create_indexes_sql("pi1", true),
            vec![
                "ALTER TABLE pi1 ADD INDEX pi1_marketsegment (productid, customerid, price)",
                "ALTER TABLE pi1 ADD INDEX pi1_registersegment (cashregisterid, customerid, price)",
                "ALTER TABLE pi1 ADD INDEX pi1_pdc (price, dateandtime, customerid)",
            ]
        );
    }

    #[test]
    fn insert_text() {
        assert_eq!(
            MyDialect::insert_sql("pi1", 2, false),
            "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) \
             VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)"
        );
        assert_eq!(
            MyDialect::insert_sql("pi1", 1, true),
            "INSERT INTO pi1 (transactionid, dateandtime, cashregisterid, customerid, \
             productid, price, data) VALUES (?, ?, ?, ?, ?, ?, ?)"
        );
        assert_eq!(
            MyDialect::insert_sql("pi1", 100, false)
                .matches('?')
                .count(),
            600
        );
    }

    #[test]
    fn insert_values_follow_the_placeholders() {
        use crate::workload::{Rng, RowGenerator, RowShape};
        let mut g = RowGenerator::new(Rng::for_stream(1, 1, 0), RowShape::default(), Some(5));
        let mut b = RowBatch::default();
        g.fill(&mut b, 2);
        b.dateandtime =
            Some(std::time::SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456));
        fn of(b: &RowBatch) -> Vec<Value<'_>> {
            InsertParams::new(b, Placeholders::Question).collect()
        }
        assert_eq!(InsertParams::new(&b, Placeholders::Question).len(), 14);
        let p = of(&b);
        assert_eq!(p.len(), 14);
        assert!(matches!(p[0], Value::Int(5)));
        assert_eq!(p[1], Value::Timestamp(b.timestamp()));
        assert_eq!(p[8], Value::Timestamp(b.timestamp()));
        assert!(matches!(p[7], Value::Int(6)));
        assert!(matches!(p[12], Value::Int(v) if v == i64::from(b.price[1])));
        assert!(matches!(p[13], Value::Text(d) if d == b.data(1)));
        let mut g = RowGenerator::new(Rng::for_stream(1, 1, 0), RowShape::default(), None);
        g.fill(&mut b, 2);
        let p = of(&b);
        assert_eq!(p.len(), 12);
        assert_eq!(p[6], Value::Timestamp(b.timestamp()));
        assert!(matches!(p[7], Value::Int(v) if v == i64::from(b.cashregisterid[1])));
    }

    #[test]
    fn query_text() {
        assert_eq!(
            delete_sql("pi1"),
            "DELETE FROM pi1 WHERE transactionid >= ? ORDER BY transactionid LIMIT ?"
        );
        assert_eq!(
            MyDialect::range_sql("pi1", SecondaryIndex::MarketSegment),
            "SELECT productid, customerid, price FROM pi1 FORCE INDEX (pi1_marketsegment) \
             WHERE productid >= ? ORDER BY productid, customerid, price LIMIT 10"
        );
        assert_eq!(
            MyDialect::range_sql("pi1", SecondaryIndex::RegisterSegment),
            "SELECT cashregisterid, customerid, price FROM pi1 FORCE INDEX (pi1_registersegment) \
             WHERE cashregisterid >= ? ORDER BY cashregisterid, customerid, price LIMIT 10"
        );
        assert_eq!(
            MyDialect::range_sql("pi2", SecondaryIndex::Pdc),
            "SELECT price, dateandtime, customerid FROM pi2 FORCE INDEX (pi2_pdc) \
             WHERE price >= ? ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        assert_eq!(
            micro_sql::point_sql("pi1", 3, Placeholders::Question),
            "SELECT transactionid, productid, data FROM pi1 WHERE transactionid IN (?, ?, ?)"
        );
        assert_eq!(
            micro_sql::min_max_sql("pi1"),
            "SELECT min(transactionid), max(transactionid) FROM pi1"
        );
        assert_eq!(
            count_sql("pi1", "pi1_pdc"),
            "SELECT COUNT(*) FROM pi1 FORCE INDEX (pi1_pdc)"
        );
    }

    #[test]
    fn url_scheme_and_database() {
        let settings = MySettings::from_url("MariaDB://root@h:1/ibench").unwrap();
        let d = MysqlDriver::new(settings, Engine::Innodb, None);
        assert_eq!(d.config.database.as_deref(), Some("ibench"));
        let settings = MySettings::from_url("mariadb://u:secret@127.0.0.1:1/ibench").unwrap();
        let d = MysqlDriver::new(settings, Engine::Innodb, None);
        assert_eq!(d.target, "mariadb://u:***@127.0.0.1:1/ibench");
        let e = MySettings::from_url("mysql://root@127.0.0.1:1")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("names no database"), "{e}");
    }

    #[test]
    fn dbms_from_version() {
        let dbms = |v: &str| Flavour::detect(BackendKind::Mysql, v).dbms();
        assert_eq!(dbms("10.11.19-MariaDB-0+deb12u1"), "MariaDB");
        assert_eq!(dbms("8.0.36"), "MySQL");
    }

    #[test]
    fn errors_are_classified() {
        let e = |code| {
            WireError::Server(Box::new(wire::ServerError {
                sqlstate: "HY000".to_string(),
                number: Some(code),
                message: "m".to_string(),
                ..wire::ServerError::default()
            }))
        };
        assert!(matches!(
            wire_error("t", "c", &e(1213)),
            BackendError::Retryable(_)
        ));
        assert!(matches!(
            wire_error("t", "c", &e(1205)),
            BackendError::Retryable(_)
        ));
        assert!(matches!(
            wire_error("t", "c", &e(1045)),
            BackendError::Auth { .. }
        ));
        assert!(matches!(
            wire_error("t", "c", &e(1146)),
            BackendError::Sql { .. }
        ));
        for full in [1114, 1021] {
            assert!(matches!(
                wire_error("t", "c", &e(full)),
                BackendError::DiskFull { .. }
            ));
        }
        let errno_28 = WireError::Server(Box::new(wire::ServerError {
            sqlstate: "HY000".to_string(),
            number: Some(1026),
            message: "Error writing file './x' (Errcode: 28 \"No space left on device\")"
                .to_string(),
            ..wire::ServerError::default()
        }));
        assert!(matches!(
            wire_error("t", "c", &errno_28),
            BackendError::DiskFull { .. }
        ));
        let io = WireError::Io(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(matches!(
            wire_error("t", "c", &io),
            BackendError::Unreachable { .. }
        ));
    }
}
