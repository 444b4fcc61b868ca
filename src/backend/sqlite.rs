//! SQLite backend: embedded, `sqlite:PATH`.
//!
//! Every connection opens the same file in WAL mode with `synchronous=NORMAL`; concurrent
//! writers wait on each other through a busy handler that polls every 100 µs (SQLite's own
//! handler sleeps up to 100 ms between tries, which would turn lock waits into stalls).

use crate::stats::convert::{i64_u64, usize_u64};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::micro_sql::{self, Outcome, Placeholders};
use super::{
    BackendError, BackendKind, BackendResult, BuildFacts, Canceller, Conn, DbSize, Driver,
    SecondaryIndex, ServerFiles, SettleAction, TableOptions, TargetInfo,
};
use crate::workload::RowBatch;
use crate::workload::micro::{MicroStatement, MicroStatementKind};
use crate::workload::row::format_timestamp;

/// SQLite marks parameters with `?`.
const PLACEHOLDERS: Placeholders = Placeholders::Question;

/// The pragmas every connection sets, recorded in the results.
pub const PRAGMAS: &[(&str, &str)] = &[("journal_mode", "WAL"), ("synchronous", "NORMAL")];

/// How long a statement waits for another connection's write lock before failing.
const BUSY_WAIT: Duration = Duration::from_secs(30);

/// Driver for one SQLite database file.
pub struct SqliteDriver {
    path: PathBuf,
    url: String,
}

/// What a `sqlite:` URL says, read once: the database file and the URL as given (it holds no
/// password, so it is also what messages and `run.json` show).
#[derive(Clone, Debug)]
pub struct SqliteSettings {
    path: PathBuf,
    url: String,
}

impl SqliteSettings {
    /// Read `sqlite:PATH` (also `sqlite://PATH`). The file is created when missing; its
    /// directory must exist.
    pub fn from_url(url: &str) -> anyhow::Result<Self> {
        let path = parse_url(url)?;
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
            && !parent.is_dir()
        {
            anyhow::bail!(
                "the directory of the SQLite file {} does not exist; create it or fix --url",
                path.display()
            );
        }
        Ok(SqliteSettings {
            path,
            url: url.to_string(),
        })
    }
}

impl SqliteDriver {
    /// The driver of the database file `settings` name. Does not open it yet.
    pub fn new(settings: SqliteSettings) -> Self {
        SqliteDriver {
            path: settings.path,
            url: settings.url,
        }
    }
}

/// The file a `sqlite:` URL names; `None` for another URL or one without a path.
pub fn path_of_url(url: &str) -> Option<PathBuf> {
    url.starts_with("sqlite:")
        .then(|| parse_url(url).ok())
        .flatten()
}

fn parse_url(url: &str) -> Result<PathBuf, crate::url::UrlError> {
    let rest = url
        .get("sqlite:".len()..)
        .map(|r| r.strip_prefix("//").unwrap_or(r))
        .unwrap_or("");
    if rest.is_empty() {
        return Err(crate::url::UrlError::Malformed {
            url: url.to_string(),
            detail: "no file path; use sqlite:PATH, e.g. sqlite:ibench.db".into(),
        });
    }
    Ok(PathBuf::from(rest))
}

fn busy_poll(tries: i32) -> bool {
    // 100 µs per try; give up after BUSY_WAIT.
    let waited = Duration::from_micros(100) * u32::try_from(tries).unwrap_or(0);
    if waited >= BUSY_WAIT {
        return false;
    }
    std::thread::sleep(Duration::from_micros(100));
    true
}

fn map_err(context: &str, e: rusqlite::Error) -> BackendError {
    if let rusqlite::Error::SqliteFailure(f, _) = &e
        && matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    {
        return BackendError::Retryable(format!("{context}: {e}"));
    }
    BackendError::sql(context, e)
}

/// Whether SQLite says it cannot create or write the file.
fn is_unwritable(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, ErrorCode::CannotOpen | ErrorCode::ReadOnly))
}

/// The error of a SQLite file that cannot be opened: said plainly for an embedded file (there
/// is no server to be running), naming a read-only filesystem when that is the cause.
fn open_error(path: &Path, e: &rusqlite::Error) -> BackendError {
    let target = format!("sqlite:{}", path.display());
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if crate::filesystem::is_read_only(&dir) {
        return BackendError::Unwritable {
            target,
            detail: format!("{} is on a read-only filesystem ({e})", dir.display()),
        };
    }
    BackendError::Unwritable {
        target,
        detail: format!("SQLite cannot create or open it in {} ({e})", dir.display()),
    }
}

fn open(path: &Path) -> BackendResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, &e))?;
    let context = format!("set up sqlite:{}", path.display());
    for (name, value) in PRAGMAS {
        conn.pragma_update(None, name, value).map_err(|e| {
            if is_unwritable(&e) {
                open_error(path, &e)
            } else {
                map_err(&context, e)
            }
        })?;
    }
    conn.busy_handler(Some(busy_poll))
        .map_err(|e| map_err(&context, e))?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

impl Driver for SqliteDriver {
    fn connect(&self) -> BackendResult<Box<dyn Conn>> {
        Ok(Box::new(SqliteConn {
            conn: open(&self.path)?,
            insert_sql: HashMap::new(),
            point_sql: HashMap::new(),
            micro_sql: HashMap::new(),
        }))
    }

    fn describe(&self) -> BackendResult<TargetInfo> {
        let conn = open(&self.path)?;
        let version: String = conn
            .query_row("SELECT sqlite_version()", [], |r| r.get(0))
            .map_err(|e| map_err("read sqlite_version()", e))?;
        Ok(TargetInfo {
            backend: BackendKind::Sqlite,
            url: self.url.clone(),
            dbms: "SQLite".into(),
            version,
            engine: None,
            flavour: Some(crate::results::target::Flavour::Sqlite),
            tls: None,
        })
    }

    fn settle(&self, tables: &[String], _budget: Duration) -> BackendResult<Vec<SettleAction>> {
        let conn = open(&self.path)?;
        let mut actions = Vec::new();
        for table in tables {
            actions.push(timed(format!("ANALYZE {table}"), || {
                conn.execute_batch(&format!("ANALYZE {table}"))
            }));
        }
        actions.push(timed("PRAGMA wal_checkpoint(TRUNCATE)".into(), || {
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        }));
        Ok(actions)
    }

    fn session_settings(&self) -> std::collections::BTreeMap<String, String> {
        PRAGMAS
            .iter()
            .map(|(k, v)| (format!("pragma {k}"), (*v).to_string()))
            .collect()
    }
}

fn timed(action: String, f: impl FnOnce() -> rusqlite::Result<()>) -> SettleAction {
    let start = Instant::now();
    let error = f().err().map(|e| e.to_string());
    SettleAction::done(action, start.elapsed().as_secs_f64(), error)
}

/// The text of the multi-row insert for `rows` rows.
pub fn insert_sql(table: &str, rows: usize, client_ids: bool) -> String {
    let (cols, one) = if client_ids {
        (
            "transactionid, dateandtime, cashregisterid, customerid, productid, price, data",
            "(?,?,?,?,?,?,?)",
        )
    } else {
        (
            "dateandtime, cashregisterid, customerid, productid, price, data",
            "(?,?,?,?,?,?)",
        )
    };
    let mut sql = format!("INSERT INTO {table} ({cols}) VALUES ");
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        sql.push_str(one);
    }
    sql
}

/// The text of the covering range query through `index`.
pub fn range_sql(table: &str, index: SecondaryIndex) -> String {
    let cols = index.column_list();
    format!(
        "SELECT {cols} FROM {table} INDEXED BY {} WHERE {} >= ?1 ORDER BY {cols} LIMIT 10",
        index.name(table),
        index.columns()[0]
    )
}

/// The text of the point query for `n` ids.
fn point_sql(table: &str, n: usize) -> String {
    micro_sql::point_sql(table, n, Placeholders::Question)
}

/// The text of the delete of the oldest rows.
pub fn delete_sql(table: &str) -> String {
    format!(
        "DELETE FROM {table} WHERE transactionid IN (SELECT transactionid FROM {table} \
         WHERE transactionid >= ?1 ORDER BY transactionid LIMIT ?2)"
    )
}

/// The text of `CREATE TABLE`.
pub fn create_table_sql(table: &str, options: &TableOptions) -> String {
    format!(
        "CREATE TABLE {table} (transactionid INTEGER PRIMARY KEY, dateandtime TEXT, \
         cashregisterid INTEGER NOT NULL, customerid INTEGER NOT NULL, \
         productid INTEGER NOT NULL, price INTEGER NOT NULL, data VARCHAR(4000)){}",
        options
            .table_suffix
            .as_deref()
            .map(|s| format!(" {s}"))
            .unwrap_or_default()
    )
}

/// Statement texts per table and key: a lookup allocates nothing (the table name is only
/// copied the first time a table is seen).
type SqlCache<K> = HashMap<String, HashMap<K, String>>;

/// The text cached for `table` and `key`, made by `make` on first use.
fn cached_sql<'a, K: std::hash::Hash + Eq>(
    cache: &'a mut SqlCache<K>,
    table: &str,
    key: K,
    make: impl FnOnce() -> String,
) -> BackendResult<&'a str> {
    if !cache.contains_key(table) {
        cache.insert(table.to_string(), HashMap::new());
    }
    cache
        .get_mut(table)
        .map(|per_table| per_table.entry(key).or_insert_with(make).as_str())
        .ok_or_else(|| BackendError::sql(format!("statement on {table}"), "statement cache"))
}

struct SqliteConn {
    conn: Connection,
    insert_sql: SqlCache<(usize, bool)>,
    point_sql: SqlCache<usize>,
    micro_sql: SqlCache<(MicroStatementKind, usize)>,
}

/// Interrupts a SQLite connection's statement (`sqlite3_interrupt`).
struct SqliteCanceller(rusqlite::InterruptHandle);

impl Canceller for SqliteCanceller {
    fn cancel(&self) -> Result<(), String> {
        self.0.interrupt();
        Ok(())
    }
}

impl SqliteConn {
    /// One microbenchmark statement: rows read (a scan: rows counted) or changed.
    fn micro_statement(&mut self, table: &str, s: &MicroStatement) -> BackendResult<u64> {
        let context = || format!("{:?} on {table}", s.kind);
        let outcome = micro_sql::outcome(s.kind);
        if outcome == Outcome::Control {
            let sql = micro_sql::statement_sql(s.kind, table, 0, PLACEHOLDERS);
            self.conn
                .execute_batch(&sql)
                .map_err(|e| map_err(&context(), e))?;
            return Ok(0);
        }
        let sql = cached_sql(&mut self.micro_sql, table, (s.kind, s.ints.len()), || {
            micro_sql::statement_sql(s.kind, table, s.ints.len(), PLACEHOLDERS)
        })?;
        let mut stmt = self
            .conn
            .prepare_cached(sql)
            .map_err(|e| map_err(&context(), e))?;
        let params: Vec<rusqlite::types::Value> = micro_sql::params(
            s,
            |v| rusqlite::types::Value::Integer(i64::from(*v)),
            |t| rusqlite::types::Value::Text(t.clone()),
        );
        if outcome != Outcome::Changed {
            let mut rows = stmt
                .query(rusqlite::params_from_iter(params))
                .map_err(|e| map_err(&context(), e))?;
            let mut n = 0;
            while let Some(row) = rows.next().map_err(|e| map_err(&context(), e))? {
                if outcome == Outcome::Count {
                    let c: i64 = row.get(0).map_err(|e| map_err(&context(), e))?;
                    return Ok(i64_u64(c));
                }
                let _: rusqlite::types::Value = row.get(0).map_err(|e| map_err(&context(), e))?;
                n += 1;
            }
            Ok(n)
        } else {
            let n = stmt
                .execute(rusqlite::params_from_iter(params))
                .map_err(|e| map_err(&context(), e))?;
            Ok(usize_u64(n))
        }
    }
}

impl Conn for SqliteConn {
    fn canceller(&self) -> Option<Box<dyn Canceller>> {
        Some(Box::new(SqliteCanceller(self.conn.get_interrupt_handle())))
    }

    fn create_table(&mut self, table: &str, options: &TableOptions) -> BackendResult<()> {
        self.drop_table(table)?;
        self.conn
            .execute_batch(&create_table_sql(table, options))
            .map_err(|e| map_err(&format!("create table {table}"), e))
    }

    fn drop_table(&mut self, table: &str) -> BackendResult<()> {
        self.conn
            .execute_batch(&format!("DROP TABLE IF EXISTS {table}"))
            .map_err(|e| map_err(&format!("drop table {table}"), e))
    }

    fn create_micro_table(&mut self, table: &str, _options: &TableOptions) -> BackendResult<()> {
        self.drop_table(table)?;
        for sql in micro_sql::create_table_sql(table, "") {
            self.conn
                .execute_batch(&sql)
                .map_err(|e| map_err(&format!("create table {table}"), e))?;
        }
        Ok(())
    }

    fn micro(&mut self, table: &str, statements: &[MicroStatement]) -> BackendResult<u64> {
        micro_sql::run_operation(
            self,
            statements,
            |c, s| c.micro_statement(table, s),
            |c| {
                if !c.conn.is_autocommit() {
                    let _ = c.conn.execute_batch("ROLLBACK");
                }
            },
        )
    }

    fn create_secondary_indexes(&mut self, table: &str) -> BackendResult<()> {
        for index in SecondaryIndex::ALL {
            let sql = format!(
                "CREATE INDEX {} ON {table} ({})",
                index.name(table),
                index.column_list()
            );
            self.conn
                .execute_batch(&sql)
                .map_err(|e| map_err(&format!("create index {}", index.name(table)), e))?;
        }
        Ok(())
    }

    fn has_secondary_indexes(&mut self, table: &str) -> BackendResult<bool> {
        let mut found = 0;
        for index in SecondaryIndex::ALL {
            let n: i64 = self
                .conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = ?1 AND name = ?2",
                    [table, &index.name(table)],
                    |r| r.get(0),
                )
                .map_err(|e| map_err(&format!("look up indexes of {table}"), e))?;
            found += n;
        }
        Ok(found == 3)
    }

    fn insert(&mut self, table: &str, batch: &RowBatch) -> BackendResult<u64> {
        let client_ids = batch.has_client_ids();
        let sql = cached_sql(
            &mut self.insert_sql,
            table,
            (batch.len(), client_ids),
            || insert_sql(table, batch.len(), client_ids),
        )?;
        let context = || format!("insert into {table}");
        let mut stmt = self
            .conn
            .prepare_cached(sql)
            .map_err(|e| map_err(&context(), e))?;
        let ts = format_timestamp(batch.timestamp());
        let mut p = 1usize;
        let bind_err = |e| map_err(&context(), e);
        for i in 0..batch.len() {
            if client_ids {
                stmt.raw_bind_parameter(p, batch.transactionid[i])
                    .map_err(bind_err)?;
                p += 1;
            }
            stmt.raw_bind_parameter(p, ts.as_str()).map_err(bind_err)?;
            stmt.raw_bind_parameter(p + 1, batch.cashregisterid[i])
                .map_err(bind_err)?;
            stmt.raw_bind_parameter(p + 2, batch.customerid[i])
                .map_err(bind_err)?;
            stmt.raw_bind_parameter(p + 3, batch.productid[i])
                .map_err(bind_err)?;
            stmt.raw_bind_parameter(p + 4, batch.price[i])
                .map_err(bind_err)?;
            stmt.raw_bind_parameter(p + 5, batch.data(i))
                .map_err(bind_err)?;
            p += 6;
        }
        let n = stmt.raw_execute().map_err(bind_err)?;
        Ok(n as u64)
    }

    fn delete_oldest(&mut self, table: &str, min_id: i64, limit: u32) -> BackendResult<u64> {
        let context = || format!("delete from {table}");
        let mut stmt = self
            .conn
            .prepare_cached(&delete_sql(table))
            .map_err(|e| map_err(&context(), e))?;
        let n = stmt
            .execute(rusqlite::params![min_id, limit])
            .map_err(|e| map_err(&context(), e))?;
        Ok(n as u64)
    }

    fn min_max_id(&mut self, table: &str) -> BackendResult<Option<(i64, i64)>> {
        let (lo, hi): (Option<i64>, Option<i64>) = self
            .conn
            .prepare_cached(&micro_sql::min_max_sql(table))
            .and_then(|mut s| s.query_row([], |r| Ok((r.get(0)?, r.get(1)?))))
            .map_err(|e| map_err(&format!("read min/max id of {table}"), e))?;
        Ok(lo.zip(hi))
    }

    fn range_query(&mut self, table: &str, index: SecondaryIndex, from: i32) -> BackendResult<u64> {
        let context = || format!("range query on {}", index.name(table));
        let mut stmt = self
            .conn
            .prepare_cached(&range_sql(table, index))
            .map_err(|e| map_err(&context(), e))?;
        let mut rows = stmt.query([from]).map_err(|e| map_err(&context(), e))?;
        let mut n = 0;
        while rows.next().map_err(|e| map_err(&context(), e))?.is_some() {
            n += 1;
        }
        Ok(n)
    }

    fn point_query(&mut self, table: &str, ids: &[i64]) -> BackendResult<u64> {
        let context = || format!("point query on {table}");
        let sql = cached_sql(&mut self.point_sql, table, ids.len(), || {
            point_sql(table, ids.len())
        })?;
        let mut stmt = self
            .conn
            .prepare_cached(sql)
            .map_err(|e| map_err(&context(), e))?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(ids.iter()))
            .map_err(|e| map_err(&context(), e))?;
        let mut n = 0;
        while let Some(row) = rows.next().map_err(|e| map_err(&context(), e))? {
            // Read the columns so the work is done as with a networked client.
            let _: Option<String> = row.get(2).map_err(|e| map_err(&context(), e))?;
            n += 1;
        }
        Ok(n)
    }

    fn count_rows(&mut self, table: &str) -> BackendResult<u64> {
        let n: i64 = self
            .conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .map_err(|e| map_err(&format!("count rows of {table}"), e))?;
        Ok(i64_u64(n))
    }

    fn count_rows_via_index(&mut self, table: &str, index: SecondaryIndex) -> BackendResult<u64> {
        let sql = format!(
            "SELECT count(*) FROM {table} INDEXED BY {} WHERE {} IS NOT NULL",
            index.name(table),
            index.columns()[0]
        );
        let n: i64 = self.conn.query_row(&sql, [], |r| r.get(0)).map_err(|e| {
            map_err(
                &format!("count rows of {table} via {}", index.name(table)),
                e,
            )
        })?;
        Ok(i64_u64(n))
    }

    fn database_size_bytes(&mut self, _tables: &[String]) -> BackendResult<Option<DbSize>> {
        // Per-table sizes would need dbstat, which reads every page of the file: left out.
        let context = "read page_count and page_size";
        let pages: i64 = self
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .map_err(|e| map_err(context, e))?;
        let page_size: i64 = self
            .conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(|e| map_err(context, e))?;
        Ok(Some(DbSize {
            total_bytes: u64::try_from(pages * page_size).unwrap_or(0),
            tables: std::collections::BTreeMap::new(),
            source: "PRAGMA page_count * page_size".to_string(),
        }))
    }

    fn server_files(&mut self) -> BackendResult<Option<ServerFiles>> {
        let Some(path) = self.conn.path().filter(|p| !p.is_empty()) else {
            return Ok(None);
        };
        let path = PathBuf::from(path);
        let with = |suffix: &str| {
            let mut p = path.clone().into_os_string();
            p.push(suffix);
            PathBuf::from(p)
        };
        Ok(Some(ServerFiles {
            data_paths: vec![path.clone(), with("-wal"), with("-shm")],
            pid_file: None,
            embedded: true,
        }))
    }

    fn index_build_progress(&mut self) -> BackendResult<super::IndexProgress> {
        Ok(super::IndexProgress::NotReported(
            "SQLite does not report an index build's progress".to_string(),
        ))
    }

    fn build_facts(&mut self) -> BackendResult<BuildFacts> {
        let context = "read the SQLite version and compile options";
        let version: String = self
            .conn
            .query_row("SELECT sqlite_version()", [], |r| r.get(0))
            .map_err(|e| map_err(context, e))?;
        let mut stmt = self
            .conn
            .prepare("PRAGMA compile_options")
            .map_err(|e| map_err(context, e))?;
        let compile_options = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .and_then(Iterator::collect)
            .map_err(|e| map_err(context, e))?;
        Ok(BuildFacts {
            version_string: Some(format!("SQLite {version} (bundled in ibench)")),
            compile_options,
            ..BuildFacts::default()
        })
    }

    fn server_settings(&mut self) -> BackendResult<Option<serde_json::Value>> {
        let mut out = serde_json::Map::new();
        for name in [
            "page_size",
            "journal_mode",
            "synchronous",
            "cache_size",
            "auto_vacuum",
            "wal_autocheckpoint",
            "mmap_size",
        ] {
            let v: rusqlite::Result<String> =
                self.conn.query_row(&format!("PRAGMA {name}"), [], |r| {
                    r.get::<_, rusqlite::types::Value>(0).map(|v| match v {
                        rusqlite::types::Value::Integer(i) => i.to_string(),
                        rusqlite::types::Value::Text(t) => t,
                        other => format!("{other:?}"),
                    })
                });
            let v = v.map_or_else(|e| serde_json::json!({"error": e.to_string()}), Into::into);
            out.insert(format!("pragma {name}"), v);
        }
        let version: rusqlite::Result<String> =
            self.conn
                .query_row("SELECT sqlite_version()", [], |r| r.get(0));
        if let Ok(v) = version {
            out.insert("sqlite_version".into(), v.into());
        }
        Ok(Some(serde_json::Value::Object(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Rng, RowGenerator, RowShape};

    #[test]
    fn sql_text() {
        assert_eq!(
            insert_sql("pi1", 2, false),
            "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) VALUES (?,?,?,?,?,?),(?,?,?,?,?,?)"
        );
        assert!(insert_sql("pi1", 1, true).starts_with("INSERT INTO pi1 (transactionid, "));
        assert_eq!(
            range_sql("pi2", SecondaryIndex::Pdc),
            "SELECT price, dateandtime, customerid FROM pi2 INDEXED BY pi2_pdc WHERE price >= ?1 ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        assert_eq!(
            point_sql("pi1", 3),
            "SELECT transactionid, productid, data FROM pi1 WHERE transactionid IN (?, ?, ?)"
        );
    }

    #[test]
    fn url_needs_a_path() {
        assert!(SqliteSettings::from_url("sqlite:").is_err());
        assert!(SqliteSettings::from_url("sqlite:/no/such/dir/x.db").is_err());
        assert_eq!(
            parse_url("sqlite://a/b.db").unwrap(),
            PathBuf::from("a/b.db")
        );
    }

    #[test]
    fn every_operation_against_a_real_file() {
        let dir = std::env::temp_dir().join(format!("ibench-sqlite-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite:{}", dir.join("t.db").display());
        let driver = SqliteDriver::new(SqliteSettings::from_url(&url).unwrap());
        let mut conn = driver.connect().unwrap();
        conn.create_table("pi1", &TableOptions::default()).unwrap();
        let mut g = RowGenerator::new(Rng::for_stream(1, 0, 0), RowShape::default(), None);
        let mut b = RowBatch::default();
        for _ in 0..3 {
            g.fill(&mut b, 100);
            assert_eq!(conn.insert("pi1", &b).unwrap(), 100);
        }
        assert!(!conn.has_secondary_indexes("pi1").unwrap());
        conn.create_secondary_indexes("pi1").unwrap();
        assert!(conn.has_secondary_indexes("pi1").unwrap());
        assert_eq!(conn.count_rows("pi1").unwrap(), 300);
        for ix in SecondaryIndex::ALL {
            assert_eq!(conn.count_rows_via_index("pi1", ix).unwrap(), 300);
            assert_eq!(conn.range_query("pi1", ix, 0).unwrap(), 10);
        }
        assert_eq!(conn.min_max_id("pi1").unwrap(), Some((1, 300)));
        assert_eq!(conn.delete_oldest("pi1", 1, 50).unwrap(), 50);
        assert_eq!(conn.min_max_id("pi1").unwrap(), Some((51, 300)));
        assert_eq!(conn.point_query("pi1", &[1, 51, 52, 400]).unwrap(), 2);
        let info = driver.describe().unwrap();
        assert_eq!(info.dbms, "SQLite");
        let actions = driver
            .settle(&["pi1".to_string()], Duration::from_secs(5))
            .unwrap();
        assert!(actions.iter().all(|a| a.error.is_none()), "{actions:?}");
        conn.drop_table("pi1").unwrap();
        drop(conn);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
