//! MySQL and MariaDB backend (InnoDB and MyRocks), on the synchronous `mysql` crate.
//!
//! Statements of the hot path are prepared once per connection and kept in this module's own
//! cache; the crate's statement cache is switched off so it never closes a statement we still
//! hold.

use std::collections::HashMap;
use std::time::Instant;

use ::mysql as my;
use my::prelude::Queryable;
use my::{Opts, OptsBuilder, Params, Statement, Value};

use super::flavour::Flavour;
use super::micro_sql::{self, Outcome, Placeholders};
use super::*;
use crate::workload::micro::MicroStatement;
use crate::workload::row::civil_from_system_time;

/// MySQL marks parameters with `?`.
const PLACEHOLDERS: Placeholders = Placeholders::Question;

/// How long a connection attempt may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How often settle polls the server's status.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// Dirty pages at or below this count mean the InnoDB flush is done.
const DIRTY_PAGES_DONE: u64 = 16;

/// The fix to name when the RocksDB engine is missing.
const ROCKSDB_FIX: &str = "start the server with --plugin-load-add=ha_rocksdb.so, e.g. \
                           `ibench server start mariadb --engine rocksdb`";

/// MySQL/MariaDB driver: parsed options and the storage engine.
pub struct MysqlDriver {
    opts: Opts,
    /// The URL, password redacted.
    target: String,
    engine: Engine,
    /// The flavour given with `--flavour` (else detected from `VERSION()`).
    forced: Option<Flavour>,
}

impl MysqlDriver {
    /// Build from a `mysql://` or `mariadb://` URL, e.g. `mysql://root@127.0.0.1:3306/ibench`
    /// (TCP) or `mysql://root@localhost/ibench?socket=/path/mysqld.sock` (Unix socket). The URL
    /// must name a database, which must exist. The password comes from the URL, else from the
    /// file named by `?password_file=PATH`, else from `MYSQL_PWD`. Does not connect.
    pub fn new(url: &str, engine: Engine, forced: Option<Flavour>) -> anyhow::Result<Self> {
        let target = redact_url(url);
        let url = mysql_scheme(&resolve_password(url, Some("MYSQL_PWD"))?);
        let opts =
            Opts::from_url(&url).map_err(|e| anyhow::anyhow!("bad --url '{target}': {e}"))?;
        if opts.get_db_name().is_none_or(str::is_empty) {
            anyhow::bail!(
                "--url '{target}' names no database: add one, e.g. mysql://root@127.0.0.1:3306/ibench \
                 (`ibench server start mariadb` creates `ibench`)"
            );
        }
        let mut builder = OptsBuilder::from_opts(opts)
            .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
            .stmt_cache_size(0);
        // Go where the URL says (TCP to host:port, or `?socket=PATH`): the crate would otherwise
        // switch a localhost TCP connection to the server's Unix socket behind our back.
        if !url.contains("prefer_socket=") {
            builder = builder.prefer_socket(false);
        }
        let opts = Opts::from(builder);
        Ok(MysqlDriver {
            opts,
            target,
            engine,
            forced,
        })
    }

    fn open(&self) -> BackendResult<my::Conn> {
        let mut conn = my::Conn::new(self.opts.clone()).map_err(|e| self.connect_error(e))?;
        if self.engine == Engine::Rocksdb {
            check_rocksdb(&mut conn, &self.target)?;
        }
        Ok(conn)
    }

    fn connect_error(&self, e: my::Error) -> BackendError {
        let context = format!("connect to {}", self.target);
        if let my::Error::MySqlError(m) = &e
            && m.code == ER_BAD_DB_ERROR
        {
            let db = self.opts.get_db_name().unwrap_or_default();
            return BackendError::sql(
                context,
                format!(
                    "database `{db}` does not exist ({m}); create it (CREATE DATABASE {db}) or \
                     use `ibench server start mariadb`, which creates `ibench`"
                ),
            );
        }
        match &e {
            my::Error::IoError(_) | my::Error::CodecError(_) => BackendError::Unreachable {
                target: self.target.clone(),
                detail: e.to_string(),
            },
            my::Error::DriverError(d) => match d {
                my::DriverError::UnknownAuthPlugin(_)
                | my::DriverError::OldMysqlPasswordDisabled
                | my::DriverError::CleartextPluginDisabled => BackendError::Auth {
                    target: self.target.clone(),
                    detail: e.to_string(),
                },
                _ => BackendError::Unreachable {
                    target: self.target.clone(),
                    detail: e.to_string(),
                },
            },
            _ => my_error(&self.target, &context, e),
        }
    }
}

/// The `mysql` crate knows only `mysql://`.
fn mysql_scheme(url: &str) -> String {
    match url.get(..10) {
        Some(p) if p.eq_ignore_ascii_case("mariadb://") => format!("mysql://{}", &url[10..]),
        _ => url.to_string(),
    }
}

/// Fail unless the server has the RocksDB engine enabled.
fn check_rocksdb(conn: &mut my::Conn, target: &str) -> BackendResult<()> {
    let context = "check the ROCKSDB engine";
    let support: Option<String> = conn
        .query_first("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'")
        .map_err(|e| my_error(target, context, e))?;
    match support.as_deref() {
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
    fn version_and_flavour(&self, conn: &mut my::Conn) -> BackendResult<(String, Flavour)> {
        let version: String = conn
            .query_first("SELECT VERSION()")
            .map_err(|e| my_error(&self.target, "read VERSION()", e))?
            .unwrap_or_default();
        let flavour = self
            .forced
            .unwrap_or_else(|| Flavour::detect(BackendKind::Mysql, &version));
        Ok((version, flavour))
    }
}

impl Driver for MysqlDriver {
    fn connect(&self) -> BackendResult<Box<dyn Conn>> {
        Ok(Box::new(MysqlConn {
            conn: self.open()?,
            opts: self.opts.clone(),
            target: self.target.clone(),
            statements: HashMap::new(),
        }))
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
                    || {
                        conn.query_drop("SET GLOBAL rocksdb_force_flush_memtable_now = 1")
                            .map_err(|e| my_detail(&e))
                    },
                ));
                actions.push(compact_l0(&mut conn));
            }
        }
        Ok(actions)
    }
}

/// Run `f` and record it as a settle action.
fn timed(action: &str, f: impl FnOnce() -> Result<(), String>) -> SettleAction {
    let started = Instant::now();
    let result = f();
    SettleAction {
        action: action.to_string(),
        seconds: started.elapsed().as_secs_f64(),
        error: result.err(),
    }
}

/// `ANALYZE TABLE t`; a row with `Msg_type` `error` counts as a failure.
fn analyze_table(conn: &mut my::Conn, table: &str) -> SettleAction {
    let sql = format!("ANALYZE TABLE {table}");
    timed(&sql, || {
        let rows: Vec<(String, String, String, String)> =
            conn.query(&sql).map_err(|e| my_detail(&e))?;
        let errors: Vec<String> = rows
            .into_iter()
            .filter(|(_, _, kind, _)| kind.eq_ignore_ascii_case("error"))
            .map(|(_, _, _, text)| text)
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    })
}

/// A global status value as a number.
fn global_status(conn: &mut my::Conn, name: &str) -> Result<Option<u64>, my::Error> {
    let row: Option<(String, String)> =
        conn.query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))?;
    Ok(row.and_then(|(_, v)| v.trim().parse().ok()))
}

/// Force InnoDB to write back its dirty pages: lower `innodb_max_dirty_pages_pct_lwm` and
/// `innodb_max_dirty_pages_pct` to 0, poll `Innodb_buffer_pool_pages_dirty` until about 0 or
/// the deadline, and restore both settings whatever happened.
fn flush_dirty_pages(conn: &mut my::Conn, deadline: Instant) -> Vec<SettleAction> {
    let mut actions = Vec::new();
    let started = Instant::now();
    let old: Result<Option<(String, String)>, my::Error> = conn.query_first(
        "SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm",
    );
    let (pct, lwm) = match old {
        Ok(Some((pct, lwm))) => match (pct.trim().parse::<f64>(), lwm.trim().parse::<f64>()) {
            (Ok(p), Ok(l)) => (p, l),
            _ => {
                actions.push(SettleAction {
                    action: "read innodb_max_dirty_pages_pct and _lwm".to_string(),
                    seconds: started.elapsed().as_secs_f64(),
                    error: Some(format!("unexpected values '{pct}', '{lwm}'")),
                });
                return actions;
            }
        },
        Ok(None) => return actions,
        Err(e) => {
            actions.push(SettleAction {
                action: "read innodb_max_dirty_pages_pct and _lwm".to_string(),
                seconds: started.elapsed().as_secs_f64(),
                error: Some(my_detail(&e)),
            });
            return actions;
        }
    };

    let lower = "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0, innodb_max_dirty_pages_pct = 0";
    let mut lowered = false;
    actions.push(timed(lower, || {
        conn.query_drop("SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0")
            .and_then(|_| {
                lowered = true;
                conn.query_drop("SET GLOBAL innodb_max_dirty_pages_pct = 0")
            })
            .map_err(|e| my_detail(&e))
    }));

    if actions.last().is_some_and(|a| a.error.is_none()) {
        actions.push(wait_for_clean_pages(conn, deadline));
    }

    if lowered {
        let restore = format!(
            "SET GLOBAL innodb_max_dirty_pages_pct = {pct}, innodb_max_dirty_pages_pct_lwm = {lwm}"
        );
        actions.push(timed(&restore, || {
            // The percentage first: the low-water mark may not exceed it.
            conn.query_drop(format!("SET GLOBAL innodb_max_dirty_pages_pct = {pct}"))
                .and_then(|_| {
                    conn.query_drop(format!("SET GLOBAL innodb_max_dirty_pages_pct_lwm = {lwm}"))
                })
                .map_err(|e| my_detail(&e))
        }));
    }
    actions
}

/// Poll `Innodb_buffer_pool_pages_dirty` until about 0 or the deadline.
fn wait_for_clean_pages(conn: &mut my::Conn, deadline: Instant) -> SettleAction {
    let started = Instant::now();
    let mut first = None;
    let mut last = None;
    let mut error = None;
    loop {
        match global_status(conn, "Innodb_buffer_pool_pages_dirty") {
            Ok(v) => {
                first = first.or(v);
                last = v;
            }
            Err(e) => {
                error = Some(my_detail(&e));
                break;
            }
        }
        if last.is_none_or(|n| n <= DIRTY_PAGES_DONE) {
            break;
        }
        if Instant::now() + POLL_INTERVAL > deadline {
            error = Some(format!(
                "the settle budget ran out with {} dirty pages left",
                last.unwrap_or_default()
            ));
            break;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
    let show = |v: Option<u64>| v.map_or_else(|| "?".to_string(), |n| n.to_string());
    SettleAction {
        action: format!(
            "wait for InnoDB dirty pages to be flushed: {} -> {}",
            show(first),
            show(last)
        ),
        seconds: started.elapsed().as_secs_f64(),
        error,
    }
}

/// Wait, within the deadline, until RocksDB has no compaction or memtable flush pending.
///
/// MariaDB 10.11 has no status variable for running compactions (no
/// `rocksdb_num_running_compactions`), so this polls the per column family properties
/// `COMPACTION_PENDING` and `MEM_TABLE_FLUSH_PENDING` of `information_schema.ROCKSDB_CFSTATS`
/// (RocksDB's `rocksdb.compaction-pending` and `rocksdb.mem-table-flush-pending`) plus the
/// status variable `Rocksdb_manual_compactions_running`.
fn wait_for_compactions(conn: &mut my::Conn, deadline: Instant) -> SettleAction {
    let started = Instant::now();
    let mut error = None;
    let mut polls = 0u32;
    loop {
        polls += 1;
        let pending: Result<Option<Option<String>>, my::Error> = conn.query_first(
            "SELECT CAST(SUM(VALUE) AS CHAR) FROM information_schema.ROCKSDB_CFSTATS \
             WHERE STAT_TYPE IN ('COMPACTION_PENDING', 'MEM_TABLE_FLUSH_PENDING')",
        );
        let pending = match pending {
            Ok(v) => v
                .flatten()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0),
            Err(e) => {
                error = Some(my_detail(&e));
                break;
            }
        };
        let manual = match global_status(conn, "Rocksdb_manual_compactions_running") {
            Ok(v) => v.unwrap_or(0),
            Err(e) => {
                error = Some(my_detail(&e));
                break;
            }
        };
        if pending == 0 && manual == 0 {
            break;
        }
        if Instant::now() + POLL_INTERVAL > deadline {
            error = Some(format!(
                "the settle budget ran out with compactions still pending \
                 ({pending} column families pending, {manual} manual compactions running)"
            ));
            break;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
    SettleAction {
        action: format!("wait until no RocksDB compaction is pending ({polls} polls)"),
        seconds: started.elapsed().as_secs_f64(),
        error,
    }
}

/// Compact L0: `rocksdb_compact_lzero_now` where the server has it (MySQL with MyRocks), else
/// MariaDB's `rocksdb_force_flush_memtable_and_lzero_now`.
fn compact_l0(conn: &mut my::Conn) -> SettleAction {
    let first = timed("SET GLOBAL rocksdb_compact_lzero_now = 1", || {
        conn.query_drop("SET GLOBAL rocksdb_compact_lzero_now = 1")
            .map_err(|e| my_detail(&e))
    });
    match &first.error {
        Some(e) if e.contains(&format!("ERROR {ER_UNKNOWN_SYSTEM_VARIABLE} ")) => timed(
            "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1",
            || {
                conn.query_drop("SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1")
                    .map_err(|e| my_detail(&e))
            },
        ),
        _ => first,
    }
}

/// One MySQL/MariaDB connection with its prepared statements.
pub struct MysqlConn {
    conn: my::Conn,
    /// How to open a second connection (for `KILL QUERY`).
    opts: Opts,
    target: String,
    statements: HashMap<String, TableStatements<Statement>>,
}

/// Cancels a MySQL connection's statement with `KILL QUERY` from a second connection.
struct MyCanceller {
    opts: Opts,
    connection_id: u32,
}

impl Canceller for MyCanceller {
    fn cancel(&self) -> Result<(), String> {
        let mut conn = my::Conn::new(self.opts.clone()).map_err(|e| e.to_string())?;
        conn.query_drop(format!("KILL QUERY {}", self.connection_id))
            .map_err(|e| e.to_string())
    }
}

impl MysqlConn {
    fn err(&self, context: &str, e: my::Error) -> BackendError {
        my_error(&self.target, context, e)
    }

    fn table_statements(&mut self, table: &str) -> &mut TableStatements<Statement> {
        // Only reached when a statement is prepared, so the key allocation is off the hot path.
        self.statements.entry(table.to_string()).or_default()
    }

    /// The cached prepared statement `key` of `table`, prepared from `sql()` on first use.
    fn statement(
        &mut self,
        table: &str,
        key: StatementKey,
        sql: impl FnOnce() -> String,
        context: &dyn Fn() -> String,
    ) -> BackendResult<Statement> {
        if let Some(s) = self.statements.get(table).and_then(|t| t.get(&key)) {
            return Ok(s.clone());
        }
        let s = self.prepare(&sql(), &context())?;
        self.table_statements(table).insert(key, s.clone());
        Ok(s)
    }

    /// Prepare `sql`, mapping the error to `context`.
    fn prepare(&mut self, sql: &str, context: &str) -> BackendResult<Statement> {
        self.conn
            .prep(sql)
            .map_err(|e| my_error(&self.target, context, e))
    }

    /// Run a one-off prepared query returning one value, closing the statement afterwards.
    fn exec_once<T: my::prelude::FromRow>(
        &mut self,
        sql: &str,
        params: Vec<Value>,
        context: &str,
    ) -> BackendResult<Option<T>> {
        let stmt = self.prepare(sql, context)?;
        let result = self.conn.exec_first(&stmt, Params::Positional(params));
        let _ = self.conn.close(stmt);
        result.map_err(|e| self.err(context, e))
    }

    /// Run a query and count its rows.
    fn count_result(&mut self, stmt: &Statement, params: Vec<Value>) -> Result<u64, my::Error> {
        let result = self.conn.exec_iter(stmt, Params::Positional(params))?;
        let mut n = 0;
        for row in result {
            row?;
            n += 1;
        }
        Ok(n)
    }

    /// The engine of an existing table, `None` when the table does not exist.
    fn table_engine(&mut self, table: &str) -> BackendResult<Option<String>> {
        self.exec_once(
            "SELECT ENGINE FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
            vec![Value::from(table)],
            &format!("read the engine of {table}"),
        )
    }
}

impl MysqlConn {
    /// One microbenchmark statement: rows read (a scan: rows counted) or changed.
    fn micro_statement(&mut self, table: &str, s: &MicroStatement) -> BackendResult<u64> {
        let context = || format!("{:?} on {table}", s.kind);
        let outcome = micro_sql::outcome(s.kind);
        if outcome == Outcome::Control {
            let sql = micro_sql::statement_sql(s.kind, table, 0, PLACEHOLDERS);
            self.conn
                .query_drop(&sql)
                .map_err(|e| self.err(&context(), e))?;
            return Ok(0);
        }
        let n = s.ints.len();
        let stmt = self.statement(
            table,
            StatementKey::Micro(s.kind, n),
            || micro_sql::statement_sql(s.kind, table, n, PLACEHOLDERS),
            &context,
        )?;
        let params: Vec<Value> = micro_sql::params(
            s,
            |v| Value::Int(i64::from(*v)),
            |t| Value::from(t.as_str()),
        );
        let result = match outcome {
            Outcome::Count => self
                .conn
                .exec_first::<u64, _, _>(&stmt, Params::Positional(params))
                .map(Option::unwrap_or_default),
            Outcome::Changed => self
                .conn
                .exec_drop(&stmt, Params::Positional(params))
                .map(|()| self.conn.affected_rows()),
            Outcome::Rows | Outcome::Control => self.count_result(&stmt, params),
        };
        result.map_err(|e| self.err(&context(), e))
    }
}

impl Conn for MysqlConn {
    fn create_micro_table(&mut self, table: &str, options: &TableOptions) -> BackendResult<()> {
        self.drop_table(table)?;
        let suffix = format!(" ENGINE={}", options.engine.sql_name());
        for sql in micro_sql::create_table_sql(table, &suffix) {
            self.conn
                .query_drop(&sql)
                .map_err(|e| self.err(&format!("create table {table}"), e))?;
        }
        Ok(())
    }

    fn micro(&mut self, table: &str, statements: &[MicroStatement]) -> BackendResult<u64> {
        micro_sql::run_operation(
            self,
            statements,
            |c, s| c.micro_statement(table, s),
            |c| {
                let _ = c.conn.query_drop("ROLLBACK");
            },
        )
    }

    fn canceller(&self) -> Option<Box<dyn Canceller>> {
        Some(Box::new(MyCanceller {
            opts: self.opts.clone(),
            connection_id: self.conn.connection_id(),
        }))
    }

    fn create_table(&mut self, table: &str, options: &TableOptions) -> BackendResult<()> {
        self.drop_table(table)?;
        let sql = create_table_sql(table, options);
        self.conn.query_drop(&sql).map_err(|e| {
            let unknown_engine =
                matches!(&e, my::Error::MySqlError(m) if m.code == ER_UNKNOWN_STORAGE_ENGINE);
            let mapped = my_error(&self.target, &format!("create table {table}"), e);
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

    fn drop_table(&mut self, table: &str) -> BackendResult<()> {
        if let Some(old) = self.statements.remove(table) {
            for s in old.into_values() {
                // Best effort: the server forgets them with the connection anyway.
                let _ = self.conn.close(s);
            }
        }
        self.conn
            .query_drop(format!("DROP TABLE IF EXISTS {table}"))
            .map_err(|e| self.err(&format!("drop table {table}"), e))
    }

    fn create_secondary_indexes(&mut self, table: &str) -> BackendResult<()> {
        let engine = self.table_engine(table)?;
        let rocksdb = engine.is_some_and(|e| e.eq_ignore_ascii_case("ROCKSDB"));
        for sql in create_indexes_sql(table, rocksdb) {
            self.conn
                .query_drop(&sql)
                .map_err(|e| self.err(&format!("create the secondary indexes of {table}"), e))?;
        }
        Ok(())
    }

    fn has_secondary_indexes(&mut self, table: &str) -> BackendResult<bool> {
        let mut params = vec![Value::from(table)];
        params.extend(
            SecondaryIndex::ALL
                .iter()
                .map(|i| Value::from(i.name(table))),
        );
        let n: Option<u64> = self.exec_once(
            "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME IN (?, ?, ?)",
            params,
            &format!("list the indexes of {table}"),
        )?;
        Ok(n == Some(3))
    }

    fn insert(&mut self, table: &str, batch: &RowBatch) -> BackendResult<u64> {
        let rows = batch.len();
        if rows == 0 {
            return Ok(0);
        }
        let ids = batch.has_client_ids();
        let key = StatementKey::Insert {
            rows,
            client_ids: ids,
        };
        let stmt = self.statement(table, key, || insert_sql(table, rows, ids), &|| {
            insert_context(table)
        })?;
        let params = insert_params(batch);
        match self.conn.exec_drop(&stmt, Params::Positional(params)) {
            Ok(()) => Ok(self.conn.affected_rows()),
            Err(e) => Err(self.err(&insert_context(table), e)),
        }
    }

    fn delete_oldest(&mut self, table: &str, min_id: i64, limit: u32) -> BackendResult<u64> {
        let context = || format!("delete from {table}");
        let stmt = self.statement(table, StatementKey::Delete, || delete_sql(table), &context)?;
        let params = vec![Value::Int(min_id), Value::UInt(u64::from(limit))];
        match self.conn.exec_drop(&stmt, Params::Positional(params)) {
            Ok(()) => Ok(self.conn.affected_rows()),
            Err(e) => Err(self.err(&context(), e)),
        }
    }

    fn min_max_id(&mut self, table: &str) -> BackendResult<Option<(i64, i64)>> {
        let row: Option<(Option<i64>, Option<i64>)> = self
            .conn
            .query_first(min_max_sql(table))
            .map_err(|e| self.err(&format!("read min and max transactionid of {table}"), e))?;
        Ok(row.and_then(|(min, max)| min.zip(max)))
    }

    fn range_query(&mut self, table: &str, index: SecondaryIndex, from: i32) -> BackendResult<u64> {
        let context = || format!("range query on {table} via {}", index.name(table));
        let stmt = self.statement(
            table,
            StatementKey::Range(index),
            || range_sql(table, index),
            &context,
        )?;
        self.count_result(&stmt, vec![Value::Int(i64::from(from))])
            .map_err(|e| self.err(&context(), e))
    }

    fn point_query(&mut self, table: &str, ids: &[i64]) -> BackendResult<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let n = ids.len();
        let context = || format!("point query on {table}");
        let stmt = self.statement(
            table,
            StatementKey::Point(n),
            || point_sql(table, n),
            &context,
        )?;
        let params = ids.iter().map(|&id| Value::Int(id)).collect();
        self.count_result(&stmt, params)
            .map_err(|e| self.err(&context(), e))
    }

    fn count_rows(&mut self, table: &str) -> BackendResult<u64> {
        let n: Option<u64> = self
            .conn
            .query_first(count_sql(table, "PRIMARY"))
            .map_err(|e| self.err(&format!("count rows of {table}"), e))?;
        Ok(n.unwrap_or(0))
    }

    fn count_rows_via_index(&mut self, table: &str, index: SecondaryIndex) -> BackendResult<u64> {
        let name = index.name(table);
        let context = format!("count rows of {table} via {name}");
        let sql = count_sql(table, &name);
        // Check that the optimizer really reads this index, so the count means what it says.
        let plan: Vec<my::Row> = self
            .conn
            .query(format!("EXPLAIN {sql}"))
            .map_err(|e| self.err(&context, e))?;
        let keys: Vec<String> = plan
            .iter()
            .filter_map(|row| row.get_opt::<Option<String>, _>("key"))
            .filter_map(Result::ok)
            .flatten()
            .collect();
        if !keys.iter().any(|k| k.eq_ignore_ascii_case(&name)) {
            return Err(BackendError::sql(
                &context,
                format!("the optimizer would not read {name} (keys used: {keys:?})"),
            ));
        }
        let n: Option<u64> = self
            .conn
            .query_first(&sql)
            .map_err(|e| self.err(&context, e))?;
        Ok(n.unwrap_or(0))
    }

    fn database_size_bytes(&mut self, tables: &[String]) -> BackendResult<Option<DbSize>> {
        let context = "read the table sizes from information_schema.TABLES";
        let rows = text_rows(
            &mut self.conn,
            "SELECT TABLE_NAME, DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = DATABASE()",
        )
        .map_err(|e| self.err(context, e))?;
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

    fn server_files(&mut self) -> BackendResult<Option<ServerFiles>> {
        let context = "read @@datadir and @@pid_file";
        let rows = text_rows(&mut self.conn, "SELECT @@datadir, @@pid_file")
            .map_err(|e| self.err(context, e))?;
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

    fn server_statistics(&mut self) -> BackendResult<Option<serde_json::Value>> {
        let mut out = serde_json::Map::new();
        let status = text_rows(&mut self.conn, "SHOW GLOBAL STATUS")
            .map(name_value_object)
            .unwrap_or_else(|e| serde_json::json!({ "error": my_detail(&e) }));
        out.insert("global_status".into(), status);
        let engines = text_rows(
            &mut self.conn,
            "SELECT ENGINE FROM information_schema.ENGINES WHERE SUPPORT IN ('YES', 'DEFAULT')",
        )
        .map_err(|e| self.err("list the engines", e))?;
        for (engine, key) in [("InnoDB", "innodb_status"), ("ROCKSDB", "rocksdb_status")] {
            let loaded = engines.iter().any(|r| {
                r.first()
                    .cloned()
                    .flatten()
                    .is_some_and(|e| e.eq_ignore_ascii_case(engine))
            });
            if !loaded {
                continue;
            }
            let value = text_rows(&mut self.conn, &format!("SHOW ENGINE {engine} STATUS"))
                .map(|rows| {
                    serde_json::Value::Array(
                        rows.into_iter()
                            .map(|r| {
                                let col = |i: usize| r.get(i).cloned().flatten();
                                serde_json::json!({"type": col(0), "name": col(1), "status": col(2)})
                            })
                            .collect(),
                    )
                })
                .unwrap_or_else(|e| serde_json::json!({ "error": my_detail(&e) }));
            out.insert(key.into(), value);
        }
        Ok(Some(serde_json::Value::Object(out)))
    }

    fn build_facts(&mut self) -> BackendResult<BuildFacts> {
        let sql = "SHOW GLOBAL VARIABLES WHERE Variable_name IN \
                   ('version', 'version_comment', 'version_compile_machine', 'version_compile_os')";
        let rows = text_rows(&mut self.conn, sql).map_err(|e| self.err(sql, e))?;
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
            *slot = Some(value.clone());
        }
        facts
            .na
            .push("compiler flags: MySQL and MariaDB do not report them".to_string());
        Ok(facts)
    }

    fn server_settings(&mut self) -> BackendResult<Option<serde_json::Value>> {
        text_rows(&mut self.conn, "SHOW GLOBAL VARIABLES")
            .map(|rows| Some(name_value_object(rows)))
            .map_err(|e| self.err("SHOW GLOBAL VARIABLES", e))
    }
}

/// Run a text query and return every column of every row as text (`None` for NULL); bytes
/// that are not UTF-8 are replaced, never a panic.
fn text_rows(conn: &mut my::Conn, sql: &str) -> Result<Vec<Vec<Option<String>>>, my::Error> {
    let rows: Vec<my::Row> = conn.query(sql)?;
    Ok(rows
        .iter()
        .map(|row| {
            (0..row.len())
                .map(|i| match row.as_ref(i) {
                    None | Some(Value::NULL) => None,
                    Some(Value::Bytes(b)) => Some(String::from_utf8_lossy(b).into_owned()),
                    Some(v) => Some(v.as_sql(true)),
                })
                .collect()
        })
        .collect())
}

/// Two-column rows (name, value) as a JSON object.
fn name_value_object(rows: Vec<Vec<Option<String>>>) -> serde_json::Value {
    serde_json::Value::Object(
        rows.into_iter()
            .filter_map(|r| {
                let mut it = r.into_iter();
                let name = it.next().flatten()?;
                let value = it.next().flatten();
                Some((
                    name,
                    value.map_or(serde_json::Value::Null, serde_json::Value::String),
                ))
            })
            .collect(),
    )
}

fn insert_context(table: &str) -> String {
    format!("insert into {table}")
}

/// A month, day, hour, minute or second (each below 256) as the `u8` MySQL's protocol takes.
fn calendar_u8(v: u32) -> u8 {
    u8::try_from(v).unwrap_or(0)
}

/// The values of [`insert_sql`], row by row: (`transactionid`,) `dateandtime`,
/// `cashregisterid`, `customerid`, `productid`, `price`, `data`.
fn insert_params(batch: &RowBatch) -> Vec<Value> {
    let (y, mo, d, h, mi, s, us) = civil_from_system_time(batch.timestamp());
    let timestamp = Value::Date(
        u16::try_from(y).unwrap_or(0),
        calendar_u8(mo),
        calendar_u8(d),
        calendar_u8(h),
        calendar_u8(mi),
        calendar_u8(s),
        us,
    );
    let ids = batch.has_client_ids();
    let mut params = Vec::with_capacity(batch.len() * if ids { 7 } else { 6 });
    for i in 0..batch.len() {
        if ids {
            params.push(Value::Int(batch.transactionid[i]));
        }
        params.push(timestamp.clone());
        params.push(Value::Int(i64::from(batch.cashregisterid[i])));
        params.push(Value::Int(i64::from(batch.customerid[i])));
        params.push(Value::Int(i64::from(batch.productid[i])));
        params.push(Value::Int(i64::from(batch.price[i])));
        params.push(Value::Bytes(batch.data(i).as_bytes().to_vec()));
    }
    params
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

fn delete_sql(table: &str) -> String {
    format!("DELETE FROM {table} WHERE transactionid >= ? ORDER BY transactionid LIMIT ?")
}

fn range_sql(table: &str, index: SecondaryIndex) -> String {
    let cols = index.column_list();
    let first = index.columns()[0];
    format!(
        "SELECT {cols} FROM {table} FORCE INDEX ({}) WHERE {first} >= ? ORDER BY {cols} LIMIT 10",
        index.name(table)
    )
}

fn point_sql(table: &str, n: usize) -> String {
    let marks = vec!["?"; n].join(", ");
    format!("SELECT transactionid, productid, data FROM {table} WHERE transactionid IN ({marks})")
}

fn min_max_sql(table: &str) -> String {
    format!("SELECT MIN(transactionid), MAX(transactionid) FROM {table}")
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
/// `ER_UNKNOWN_STORAGE_ENGINE`.
const ER_UNKNOWN_STORAGE_ENGINE: u16 = 1286;

fn my_detail(e: &my::Error) -> String {
    match e {
        my::Error::MySqlError(m) => m.to_string(),
        other => other.to_string(),
    }
}

/// Map an error of a statement.
fn my_error(target: &str, context: &str, e: my::Error) -> BackendError {
    let detail = my_detail(&e);
    match &e {
        my::Error::MySqlError(m) => match m.code {
            ER_LOCK_DEADLOCK | ER_LOCK_WAIT_TIMEOUT => {
                BackendError::Retryable(format!("{context}: {detail}"))
            }
            ER_ACCESS_DENIED | ER_DBACCESS_DENIED => BackendError::Auth {
                target: target.to_string(),
                detail,
            },
            _ => BackendError::sql(context, detail),
        },
        my::Error::IoError(_) | my::Error::CodecError(_) => BackendError::Unreachable {
            target: target.to_string(),
            detail,
        },
        my::Error::DriverError(
            my::DriverError::ConnectTimeout | my::DriverError::CouldNotConnect(_),
        ) => BackendError::Unreachable {
            target: target.to_string(),
            detail,
        },
        _ => BackendError::sql(context, detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            insert_sql("pi1", 2, false),
            "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) \
             VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)"
        );
        assert_eq!(
            insert_sql("pi1", 1, true),
            "INSERT INTO pi1 (transactionid, dateandtime, cashregisterid, customerid, \
             productid, price, data) VALUES (?, ?, ?, ?, ?, ?, ?)"
        );
        assert_eq!(insert_sql("pi1", 100, false).matches('?').count(), 600);
    }

    #[test]
    fn insert_values_follow_the_placeholders() {
        use crate::workload::{Rng, RowGenerator, RowShape};
        let mut g = RowGenerator::new(Rng::for_stream(1, 1, 0), RowShape::default(), Some(5));
        let mut b = RowBatch::default();
        g.fill(&mut b, 2);
        b.dateandtime =
            Some(std::time::SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456));
        let p = insert_params(&b);
        assert_eq!(p.len(), 14);
        assert_eq!(p[0], Value::Int(5));
        assert_eq!(p[1], Value::Date(2023, 11, 14, 22, 13, 20, 123_456));
        assert_eq!(p[7], Value::Int(6));
        assert_eq!(p[12], Value::Int(i64::from(b.price[1])));
        assert_eq!(p[13], Value::Bytes(b.data(1).as_bytes().to_vec()));
    }

    #[test]
    fn query_text() {
        assert_eq!(
            delete_sql("pi1"),
            "DELETE FROM pi1 WHERE transactionid >= ? ORDER BY transactionid LIMIT ?"
        );
        assert_eq!(
            range_sql("pi1", SecondaryIndex::MarketSegment),
            "SELECT productid, customerid, price FROM pi1 FORCE INDEX (pi1_marketsegment) \
             WHERE productid >= ? ORDER BY productid, customerid, price LIMIT 10"
        );
        assert_eq!(
            range_sql("pi1", SecondaryIndex::RegisterSegment),
            "SELECT cashregisterid, customerid, price FROM pi1 FORCE INDEX (pi1_registersegment) \
             WHERE cashregisterid >= ? ORDER BY cashregisterid, customerid, price LIMIT 10"
        );
        assert_eq!(
            range_sql("pi2", SecondaryIndex::Pdc),
            "SELECT price, dateandtime, customerid FROM pi2 FORCE INDEX (pi2_pdc) \
             WHERE price >= ? ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        assert_eq!(
            point_sql("pi1", 3),
            "SELECT transactionid, productid, data FROM pi1 WHERE transactionid IN (?, ?, ?)"
        );
        assert_eq!(
            min_max_sql("pi1"),
            "SELECT MIN(transactionid), MAX(transactionid) FROM pi1"
        );
        assert_eq!(
            count_sql("pi1", "pi1_pdc"),
            "SELECT COUNT(*) FROM pi1 FORCE INDEX (pi1_pdc)"
        );
    }

    #[test]
    fn url_scheme_and_database() {
        assert_eq!(
            mysql_scheme("MariaDB://root@h:1/ibench"),
            "mysql://root@h:1/ibench"
        );
        assert_eq!(mysql_scheme("mysql://root@h/x"), "mysql://root@h/x");
        let d = MysqlDriver::new(
            "mariadb://u:secret@127.0.0.1:1/ibench",
            Engine::Innodb,
            None,
        )
        .unwrap();
        assert_eq!(d.target, "mariadb://u:***@127.0.0.1:1/ibench");
        let e = MysqlDriver::new("mysql://root@127.0.0.1:1", Engine::Innodb, None)
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
            my::Error::MySqlError(my::MySqlError {
                state: "HY000".to_string(),
                message: "m".to_string(),
                code,
            })
        };
        assert!(matches!(
            my_error("t", "c", e(1213)),
            BackendError::Retryable(_)
        ));
        assert!(matches!(
            my_error("t", "c", e(1205)),
            BackendError::Retryable(_)
        ));
        assert!(matches!(
            my_error("t", "c", e(1045)),
            BackendError::Auth { .. }
        ));
        assert!(matches!(
            my_error("t", "c", e(1146)),
            BackendError::Sql { .. }
        ));
        let io = my::Error::IoError(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(matches!(
            my_error("t", "c", io),
            BackendError::Unreachable { .. }
        ));
    }
}
