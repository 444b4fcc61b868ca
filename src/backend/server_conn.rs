//! One connection to a server, generic over its protocol: [`ServerConn`] holds a [`Wire`]
//! connection, the redacted target, the prepared-statement cache and the benchmark's
//! operations (insert, delete, the queries, the counts, the microbenchmarks), and implements
//! [`Conn`] once. What differs per protocol is its [`Dialect`]: the SQL text, how a server's
//! error maps to a [`BackendError`], and the operations that really differ (creating the
//! table and its indexes, the forced-index count, sizes, statistics, settings, build facts,
//! an index build's progress, the canceller). `PostgresConn` and `MysqlConn` are this type
//! with PostgreSQL's and MySQL's dialects (`postgres/mod.rs`, `mysql/mod.rs`).
//!
//! Everything is generic, nothing `dyn` below [`Conn`]: a statement of the hot path is one
//! cache look-up, then the protocol's `execute`, monomorphized per protocol.

use std::collections::HashMap;

use super::micro_sql::{self, Outcome, Placeholders};
use super::text_sql::TextSql;
use super::wire::{Executed, ServerError, TextResult, Value, Wire, WireError};
use super::*;
use crate::stats::convert::i64_u64;
use crate::workload::micro::MicroStatement;

/// What a server's error means to a caller, by its code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// A deadlock, a lock wait timeout, a serialization failure: the operation may be retried.
    Retryable,
    /// The login was refused (bad user or password, no access).
    Auth,
    /// The server is out of space where it writes its data (PostgreSQL's `53100 disk_full`,
    /// MariaDB's "table is full" or errno 28).
    DiskFull,
    /// Any other failure of a statement.
    Other,
}

/// What one wire protocol's servers speak, beyond the wire: the SQL of the benchmark's
/// statements, the meaning of their errors, and the operations that differ per DBMS. A
/// value of it is a connection's own state (PostgreSQL: the flavour and the server's
/// version number; MySQL: the settings a `KILL QUERY` connection is opened from).
pub trait Dialect: Sized + Send {
    /// The protocol client.
    type Wire: Wire;

    /// How the SQL marks its parameters (`$1` or `?`).
    const PLACEHOLDERS: Placeholders;

    /// What a server error means to a caller (by its SQLSTATE or error number).
    fn class(e: &ServerError) -> ErrorClass;

    /// An error as the messages show it (PostgreSQL adds the SQLSTATE).
    fn detail(e: &WireError) -> String {
        e.to_string()
    }

    /// A refusal of a login that the dialect explains itself, saying what to do: a database
    /// that does not exist (PostgreSQL's `3D000`, MySQL's 1049), `database` being the one the
    /// URL named. `None` for any other error, which [`connect_error`] maps as a statement's.
    fn connect_refusal(e: &ServerError, database: Option<&str>) -> Option<String>;

    /// The multi-row insert of `rows` rows (with `transactionid` when `client_ids`); its
    /// parameters are [`InsertParams`]: with numbered placeholders the batch's timestamp is
    /// `$1`, bound once; with `?` it is bound in each row.
    fn insert_sql(table: &str, rows: usize, client_ids: bool) -> String;

    /// The delete of the oldest rows: parameters `min_id`, `limit`.
    fn delete_sql(&self, table: &str) -> String;

    /// The covering range query through `index`: parameter `from`.
    fn range_sql(table: &str, index: SecondaryIndex) -> String;

    /// `count(*)` through the primary key.
    fn count_sql(table: &str) -> String;

    /// How many of the table's three secondary indexes exist.
    fn count_indexes_sql(table: &str) -> String;

    /// What follows the microbenchmark tables' `CREATE TABLE (...)`.
    fn micro_table_suffix(options: &TableOptions) -> String;

    /// The handle that cancels the connection's running statement.
    fn canceller(c: &ServerConn<Self>) -> Option<Box<dyn Canceller>>;

    /// See [`Conn::create_table`] (the table is dropped first by the caller).
    fn create_table(c: &mut ServerConn<Self>, table: &str, o: &TableOptions) -> BackendResult<()>;

    /// See [`Conn::create_secondary_indexes`].
    fn create_secondary_indexes(c: &mut ServerConn<Self>, table: &str) -> BackendResult<()>;

    /// See [`Conn::count_rows_via_index`].
    fn count_rows_via_index(
        c: &mut ServerConn<Self>,
        table: &str,
        index: SecondaryIndex,
    ) -> BackendResult<u64>;

    /// See [`Conn::database_size_bytes`].
    fn database_size_bytes(
        c: &mut ServerConn<Self>,
        tables: &[String],
    ) -> BackendResult<Option<DbSize>>;

    /// See [`Conn::server_files`].
    fn server_files(c: &mut ServerConn<Self>) -> BackendResult<Option<ServerFiles>>;

    /// See [`Conn::server_statistics`].
    fn server_statistics(
        c: &mut ServerConn<Self>,
    ) -> BackendResult<Option<crate::results::statistics::Statistics>>;

    /// See [`Conn::server_settings`].
    fn server_settings(c: &mut ServerConn<Self>) -> BackendResult<Option<serde_json::Value>>;

    /// See [`Conn::build_facts`].
    fn build_facts(c: &mut ServerConn<Self>) -> BackendResult<BuildFacts>;

    /// See [`Conn::index_build_progress`].
    fn index_build_progress(c: &mut ServerConn<Self>) -> BackendResult<IndexProgress>;

    /// See [`Conn::promote`] (`backend/promote.rs` holds the SQL).
    fn promote(c: &mut ServerConn<Self>, wait_seconds: u32) -> BackendResult<()>;

    /// See [`Conn::accepts_writes`].
    fn accepts_writes(c: &mut ServerConn<Self>) -> BackendResult<bool>;

    /// See [`Conn::server_identity`] (`backend/identity.rs` holds the SQL).
    fn server_identity(
        c: &mut ServerConn<Self>,
    ) -> BackendResult<Option<super::identity::ServerIdentity>>;
}

/// One connection to a server of dialect `D`, with its prepared statements: every
/// statement the steps send, admin ones included, goes over its wire.
pub struct ServerConn<D: Dialect> {
    /// The protocol connection.
    pub(crate) wire: D::Wire,
    /// The server, password redacted: what error messages show.
    pub(crate) target: String,
    /// The connection's own state of its dialect.
    pub(crate) dialect: D,
    statements: HashMap<String, TableStatements<<D::Wire as Wire>::Prepared>>,
}

impl<D: Dialect> ServerConn<D> {
    /// A connection over `wire` to `target` (redacted), with the dialect's state.
    pub(crate) fn new(wire: D::Wire, target: String, dialect: D) -> Self {
        ServerConn {
            wire,
            target,
            dialect,
            statements: HashMap::new(),
        }
    }

    /// `e` of a statement run while doing `context`, as a [`BackendError`].
    pub(crate) fn err(&self, context: &str, e: &WireError) -> BackendError {
        statement_error::<D>(&self.target, context, e)
    }

    /// Run `sql` as text; its result.
    pub(crate) fn query(&mut self, sql: &str, context: &str) -> BackendResult<TextResult> {
        self.wire.query(sql).map_err(|e| self.err(context, &e))
    }

    /// The first column of the first row of `sql`, as text (`None` for no row or NULL).
    pub(crate) fn value(&mut self, sql: &str, context: &str) -> BackendResult<Option<String>> {
        Ok(self.query(sql, context)?.first().map(str::to_string))
    }

    /// The first column of the first row of `sql`, as a number (no row or NULL is an
    /// error).
    pub(crate) fn number(&mut self, sql: &str, context: &str) -> BackendResult<i64> {
        let text = self.value(sql, context)?.unwrap_or_default();
        text.trim()
            .parse::<i64>()
            .map_err(|e| BackendError::sql(context, format!("'{text}': {e}")))
    }

    /// Run the statement `key` of `table` with `params`, preparing it from `sql` on first
    /// use. The hot path looks the statement up once and clones nothing.
    #[inline]
    fn execute<'a>(
        &mut self,
        table: &str,
        key: StatementKey,
        sql: impl FnOnce(&D) -> String,
        context: &dyn Fn() -> String,
        params: impl IntoIterator<Item = Value<'a>>,
    ) -> BackendResult<Executed> {
        let (target, dialect) = (&self.target, &self.dialect);
        with_cached_statement(
            &mut self.statements,
            table,
            key,
            &mut self.wire,
            |wire| {
                wire.prepare(&sql(dialect))
                    .map_err(|e| statement_error::<D>(target, &context(), &e))
            },
            |wire, stmt| {
                wire.execute(stmt, params)
                    .map_err(|e| statement_error::<D>(target, &context(), &e))
            },
        )
    }

    /// One microbenchmark statement: rows read (a scan: rows counted) or changed.
    fn micro_statement(&mut self, table: &str, s: &MicroStatement) -> BackendResult<u64> {
        let context = || format!("{:?} on {table}", s.kind);
        let outcome = micro_sql::outcome(s.kind);
        if outcome == Outcome::Control {
            let sql = micro_sql::statement_sql(s.kind, table, 0, D::PLACEHOLDERS);
            self.query(&sql, &context())?;
            return Ok(0);
        }
        let n = s.ints.len();
        let params = micro_sql::params(s, |v| Value::Int(i64::from(*v)), |v| Value::Text(v));
        let done = self.execute(
            table,
            StatementKey::Micro(s.kind, n),
            |_| micro_sql::statement_sql(s.kind, table, n, D::PLACEHOLDERS),
            &context,
            params,
        )?;
        Ok(match outcome {
            Outcome::Count => i64_u64(done.first_int.unwrap_or(0)),
            Outcome::Changed => done.rows_affected,
            Outcome::Rows | Outcome::Control => done.rows_returned,
        })
    }
}

impl<D: Dialect> Conn for ServerConn<D> {
    fn canceller(&self) -> Option<Box<dyn Canceller>> {
        D::canceller(self)
    }

    fn create_table(&mut self, table: &str, options: &TableOptions) -> BackendResult<()> {
        self.drop_table(table)?;
        D::create_table(self, table, options)
    }

    fn drop_table(&mut self, table: &str) -> BackendResult<()> {
        if let Some(old) = self.statements.remove(table) {
            for s in old.into_values() {
                // Best effort: the server forgets them with the connection anyway.
                let _ = self.wire.close(&s);
            }
        }
        self.query(
            &format!("DROP TABLE IF EXISTS {table}"),
            &format!("drop table {table}"),
        )
        .map(drop)
    }

    fn create_micro_table(&mut self, table: &str, options: &TableOptions) -> BackendResult<()> {
        self.drop_table(table)?;
        let suffix = D::micro_table_suffix(options);
        for sql in micro_sql::create_table_sql(table, &suffix) {
            self.query(&sql, &format!("create table {table}"))?;
        }
        Ok(())
    }

    fn micro(&mut self, table: &str, statements: &[MicroStatement]) -> BackendResult<u64> {
        micro_sql::run_operation(
            self,
            statements,
            |c, s| c.micro_statement(table, s),
            |c| {
                let _ = c.wire.query("ROLLBACK");
            },
        )
    }

    fn create_secondary_indexes(&mut self, table: &str) -> BackendResult<()> {
        D::create_secondary_indexes(self, table)
    }

    fn has_secondary_indexes(&mut self, table: &str) -> BackendResult<bool> {
        let n = self.number(
            &D::count_indexes_sql(table),
            &format!("list the indexes of {table}"),
        )?;
        Ok(usize::try_from(n).is_ok_and(|n| n == SecondaryIndex::ALL.len()))
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
        let done = self.execute(
            table,
            key,
            |_| D::insert_sql(table, rows, ids),
            &|| format!("insert into {table}"),
            InsertParams::new(batch, D::PLACEHOLDERS),
        )?;
        Ok(done.rows_affected)
    }

    fn delete_oldest(&mut self, table: &str, min_id: i64, limit: u32) -> BackendResult<u64> {
        let done = self.execute(
            table,
            StatementKey::Delete,
            |d| d.delete_sql(table),
            &|| format!("delete from {table}"),
            [Value::Int(min_id), Value::Int(i64::from(limit))],
        )?;
        Ok(done.rows_affected)
    }

    fn min_max_id(&mut self, table: &str) -> BackendResult<Option<(i64, i64)>> {
        let context = format!("read min and max transactionid of {table}");
        let result = self.query(&micro_sql::min_max_sql(table), &context)?;
        min_max_of_text(result.rows.into_iter().next(), &context)
    }

    fn range_query(&mut self, table: &str, index: SecondaryIndex, from: i32) -> BackendResult<u64> {
        let done = self.execute(
            table,
            StatementKey::Range(index),
            |_| D::range_sql(table, index),
            &|| format!("range query on {table} via {}", index.name(table)),
            [Value::Int(i64::from(from))],
        )?;
        Ok(done.rows_returned)
    }

    fn point_query(&mut self, table: &str, ids: &[i64]) -> BackendResult<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let n = ids.len();
        let done = self.execute(
            table,
            StatementKey::Point(n),
            |_| micro_sql::point_sql(table, n, D::PLACEHOLDERS),
            &|| format!("point query on {table}"),
            ids.iter().map(|&id| Value::Int(id)),
        )?;
        Ok(done.rows_returned)
    }

    fn count_rows(&mut self, table: &str) -> BackendResult<u64> {
        let n = self.number(&D::count_sql(table), &format!("count rows of {table}"))?;
        Ok(i64_u64(n))
    }

    fn count_rows_via_index(&mut self, table: &str, index: SecondaryIndex) -> BackendResult<u64> {
        D::count_rows_via_index(self, table, index)
    }

    fn database_size_bytes(&mut self, tables: &[String]) -> BackendResult<Option<DbSize>> {
        D::database_size_bytes(self, tables)
    }

    fn server_files(&mut self) -> BackendResult<Option<ServerFiles>> {
        D::server_files(self)
    }

    fn server_statistics(
        &mut self,
    ) -> BackendResult<Option<crate::results::statistics::Statistics>> {
        D::server_statistics(self)
    }

    fn server_settings(&mut self) -> BackendResult<Option<serde_json::Value>> {
        D::server_settings(self)
    }

    fn build_facts(&mut self) -> BackendResult<BuildFacts> {
        D::build_facts(self)
    }

    fn index_build_progress(&mut self) -> BackendResult<IndexProgress> {
        D::index_build_progress(self)
    }

    fn promote(&mut self, wait_seconds: u32) -> BackendResult<()> {
        D::promote(self, wait_seconds)
    }

    fn accepts_writes(&mut self) -> BackendResult<bool> {
        D::accepts_writes(self)
    }

    fn server_identity(&mut self) -> BackendResult<Option<super::identity::ServerIdentity>> {
        D::server_identity(self)
    }

    fn count_ids_between(
        &mut self,
        table: &str,
        lo: i64,
        hi: i64,
    ) -> BackendResult<(Option<i64>, u64)> {
        let sql = super::promote::count_ids_between_sql(table, lo, hi);
        let context = format!("count the audited ids of {table}");
        let result = self.query(&sql, &context)?;
        super::promote::lowest_and_count(result.rows.into_iter().next(), &context)
    }
}

/// Map an error of a statement on an established connection: a socket that failed is a
/// lost connection ([`BackendError::Lost`], not a wrong URL), a wait the stall limit ended is
/// [`BackendError::Stalled`], and a server's FATAL (PostgreSQL) or a disconnect error
/// (MySQL's idle timeout, a killed connection) means the connection is gone too; the rest is
/// [`wire_error`].
pub(crate) fn statement_error<D: Dialect>(
    target: &str,
    context: &str,
    e: &WireError,
) -> BackendError {
    if e.server().map(D::class) == Some(ErrorClass::DiskFull) {
        // Before the lost connection: a PANIC for want of space ends the connection too.
        return wire_error::<D>(target, context, e);
    }
    match e {
        WireError::Io(io) if super::deadline::wait_end(io).is_none() => BackendError::Lost {
            context: context.to_string(),
            target: target.to_string(),
            detail: D::detail(e),
        },
        WireError::Server(s) if connection_ended(s) => BackendError::Lost {
            context: context.to_string(),
            target: target.to_string(),
            detail: D::detail(e),
        },
        _ => wire_error::<D>(target, context, e),
    }
}

/// A wait the stall limit or Ctrl-C ended, as its error (never "cannot reach": the server
/// was reached).
fn wait_ended(target: &str, context: &str, e: &WireError) -> Option<BackendError> {
    let WireError::Io(io) = e else {
        return None;
    };
    Some(match super::deadline::wait_end(io)? {
        super::deadline::WaitEnd::Stalled(s) => BackendError::Stalled {
            context: context.to_string(),
            target: target.to_string(),
            seconds: s.seconds,
        },
        super::deadline::WaitEnd::Abandoned => BackendError::sql(context, io),
    })
}

/// Whether a server's error ends its connection: PostgreSQL's FATAL or PANIC (an idle-session
/// timeout, a terminated backend, a shutdown); MySQL's disconnect for inactivity (4031), a
/// killed connection (1927) or a shutdown (1053).
fn connection_ended(s: &ServerError) -> bool {
    matches!(s.severity.as_deref(), Some("FATAL" | "PANIC"))
        || matches!(s.number, Some(4031 | 1927 | 1053))
}

/// Map an error of a statement (or of a login, for the callers that add their own cases):
/// a protocol error names the server that broke the protocol; a refused login is
/// [`BackendError::Auth`]; a server's error is what its code says ([`Dialect::class`]); a
/// socket that failed without the server saying why means the server is unreachable.
pub(crate) fn wire_error<D: Dialect>(target: &str, context: &str, e: &WireError) -> BackendError {
    if let Some(ended) = wait_ended(target, context, e) {
        return ended;
    }
    let detail = D::detail(e);
    let class = match e {
        WireError::Protocol(_) => {
            return BackendError::sql(context, format!("{e} (server {target})"));
        }
        WireError::Auth(_) => Some(ErrorClass::Auth),
        _ => e.server().map(D::class),
    };
    match class {
        Some(ErrorClass::Retryable) => BackendError::Retryable(format!("{context}: {detail}")),
        Some(ErrorClass::Auth) => BackendError::Auth {
            target: target.to_string(),
            detail,
        },
        Some(ErrorClass::DiskFull) => BackendError::DiskFull {
            context: context.to_string(),
            target: target.to_string(),
            // The message alone: its HINT ("Check free disk space.") is the error's own.
            detail: e.server().map_or(detail, |s| match s.number {
                Some(n) => format!("ERROR {n} ({}): {}", s.sqlstate, s.message),
                None => format!("{} (SQLSTATE {})", s.message, s.sqlstate),
            }),
        },
        Some(ErrorClass::Other) => BackendError::sql(context, detail),
        None if matches!(e, WireError::Io(_)) => BackendError::Unreachable {
            target: target.to_string(),
            detail,
        },
        None => BackendError::sql(context, detail),
    }
}

/// Map an error of opening a connection to `target` (whose URL named `database`), for every
/// dialect: what the dialect explains itself ([`Dialect::connect_refusal`]); a TLS or protocol
/// failure as the connect's; anything else as [`wire_error`] maps a statement's (a refused
/// login, an unreachable server, a server's error by its class).
pub(crate) fn connect_error<D: Dialect>(
    target: &str,
    database: Option<&str>,
    e: &WireError,
) -> BackendError {
    let context = format!("connect to {target}");
    match e {
        WireError::Server(s) => match D::connect_refusal(s, database) {
            Some(explained) => BackendError::sql(context, explained),
            None => wire_error::<D>(target, &context, e),
        },
        WireError::Tls(_) | WireError::Protocol(_) => BackendError::sql(context, D::detail(e)),
        _ => wire_error::<D>(target, &context, e),
    }
}

// ---------------------------------------------------------------------------------------------
// Parameters of the insert: borrowed from the batch, no allocation per row.

/// The parameters of a dialect's multi-row insert, in its placeholders' order: with
/// numbered placeholders `$1` is the batch timestamp, then per row (`transactionid`,)
/// `cashregisterid`, `customerid`, `productid`, `price`, `data`; with `?`, per row
/// (`transactionid`,) `dateandtime`, `cashregisterid`, `customerid`, `productid`, `price`,
/// `data`.
pub(crate) struct InsertParams<'a> {
    batch: &'a RowBatch,
    timestamp: Value<'a>,
    /// The timestamp is bound once, first (`$1`), not in each row.
    shared_timestamp: bool,
    /// The client assigns `transactionid`: each row starts with it.
    ids: bool,
    per_row: usize,
    next: usize,
    total: usize,
}

impl<'a> InsertParams<'a> {
    /// The parameters of `batch` for SQL with `placeholders`.
    pub(crate) fn new(batch: &'a RowBatch, placeholders: Placeholders) -> Self {
        let ids = batch.has_client_ids();
        let shared_timestamp = placeholders == Placeholders::Numbered;
        let per_row = 5 + usize::from(ids) + usize::from(!shared_timestamp);
        InsertParams {
            batch,
            timestamp: Value::Timestamp(batch.timestamp()),
            shared_timestamp,
            ids,
            per_row,
            next: 0,
            total: usize::from(shared_timestamp) + per_row * batch.len(),
        }
    }
}

impl<'a> Iterator for InsertParams<'a> {
    type Item = Value<'a>;

    #[inline]
    fn next(&mut self) -> Option<Value<'a>> {
        if self.next >= self.total {
            return None;
        }
        let mut n = self.next;
        self.next += 1;
        if self.shared_timestamp {
            if n == 0 {
                return Some(self.timestamp);
            }
            n -= 1;
        }
        let (row, mut col) = (n / self.per_row, n % self.per_row);
        let b = self.batch;
        if self.ids {
            if col == 0 {
                return Some(Value::Int(b.transactionid[row]));
            }
            col -= 1;
        }
        if !self.shared_timestamp {
            if col == 0 {
                return Some(self.timestamp);
            }
            col -= 1;
        }
        Some(match col {
            0 => Value::Int(i64::from(b.cashregisterid[row])),
            1 => Value::Int(i64::from(b.customerid[row])),
            2 => Value::Int(i64::from(b.productid[row])),
            3 => Value::Int(i64::from(b.price[row])),
            _ => Value::Text(b.data(row)),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.total - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for InsertParams<'_> {}
/// The failover's short statements (`identity.rs`, `promote.rs`) run through this.
impl<D: Dialect> TextSql for ServerConn<D> {
    fn query_text(&mut self, sql: &str, context: &str) -> BackendResult<TextResult> {
        self.query(sql, context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::postgres::PgDialect;
    use crate::workload::{Rng, RowGenerator, RowShape};

    fn server_error(sqlstate: &str, severity: &str, number: Option<u16>) -> WireError {
        WireError::Server(Box::new(ServerError {
            sqlstate: sqlstate.into(),
            number,
            severity: Some(severity.into()),
            message: "the server said no".into(),
            detail: None,
            hint: None,
        }))
    }

    fn batch(rows: usize, first_client_id: Option<i64>) -> RowBatch {
        let rng = Rng::for_stream(7, 0, 0);
        let mut g = RowGenerator::new(rng, RowShape::default(), first_client_id);
        let mut b = RowBatch::default();
        g.fill(&mut b, rows);
        b
    }

    /// `$1` is the batch's timestamp, bound once; then five values a row.
    #[test]
    fn numbered_insert_params_bind_the_timestamp_once_then_each_row() {
        let b = batch(3, None);
        let params: Vec<Value<'_>> = InsertParams::new(&b, Placeholders::Numbered).collect();
        assert_eq!(params.len(), 1 + 3 * 5);
        assert_eq!(InsertParams::new(&b, Placeholders::Numbered).len(), 16);
        assert!(matches!(params[0], Value::Timestamp(_)));
        assert!(
            params[1..]
                .iter()
                .all(|v| !matches!(v, Value::Timestamp(_)))
        );
        assert!(matches!(params[1], Value::Int(c) if c == i64::from(b.cashregisterid[0])));
        assert!(matches!(params[5], Value::Text(t) if t == b.data(0)));
        assert!(matches!(params[6], Value::Int(c) if c == i64::from(b.cashregisterid[1])));
    }

    /// With `?` each row carries its id (the client assigns them) and the timestamp.
    #[test]
    fn question_mark_insert_params_repeat_the_id_and_timestamp_per_row() {
        let b = batch(2, Some(100));
        let params: Vec<Value<'_>> = InsertParams::new(&b, Placeholders::Question).collect();
        assert_eq!(params.len(), 2 * 7);
        for (row, id) in [(0, 100), (1, 101)] {
            let r = &params[row * 7..(row + 1) * 7];
            assert!(matches!(r[0], Value::Int(i) if i == id), "{r:?}");
            assert!(matches!(r[1], Value::Timestamp(_)));
            assert!(matches!(r[5], Value::Int(p) if p == i64::from(b.price[row])));
            assert!(matches!(r[6], Value::Text(t) if t == b.data(row)));
        }
    }

    #[test]
    fn a_fatal_error_or_a_mysql_disconnect_ends_the_connection() {
        let e =
            |sqlstate: &str, severity: &str, number| match server_error(sqlstate, severity, number)
            {
                WireError::Server(s) => *s,
                _ => unreachable!(),
            };
        assert!(connection_ended(&e("57P01", "FATAL", None)));
        assert!(connection_ended(&e("XX000", "PANIC", None)));
        assert!(!connection_ended(&e("40P01", "ERROR", None)));
        assert!(connection_ended(&e("HY000", "ERROR", Some(4031))));
        assert!(!connection_ended(&e("40001", "ERROR", Some(1213))));
    }

    /// A broken socket or a FATAL on an established connection is a lost connection, not a
    /// wrong URL; a deadlock may be retried; a protocol error names the server.
    #[test]
    fn a_statement_s_errors_map_by_what_broke() {
        let t = "postgres://u@db:5432/x";
        let broken = WireError::Io(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        let lost = statement_error::<PgDialect>(t, "insert into pi1", &broken);
        assert!(matches!(lost, BackendError::Lost { ref target, .. } if target == t));
        let fatal = server_error("57P01", "FATAL", None);
        assert!(matches!(
            statement_error::<PgDialect>(t, "insert", &fatal),
            BackendError::Lost { .. }
        ));
        let deadlock = server_error("40P01", "ERROR", None);
        assert!(matches!(
            statement_error::<PgDialect>(t, "insert", &deadlock),
            BackendError::Retryable(_)
        ));
        let full = server_error("53100", "ERROR", None);
        assert!(matches!(
            statement_error::<PgDialect>(t, "insert", &full),
            BackendError::DiskFull { .. }
        ));
        let garbled = WireError::Protocol("unexpected message 'Q'".into());
        let e = statement_error::<PgDialect>(t, "insert", &garbled);
        assert!(
            e.to_string().contains("(server postgres://u@db:5432/x)"),
            "{e}"
        );
    }

    /// Opening a connection: a socket refused is an unreachable server, a refused password a
    /// refused login, a missing database what the dialect explains, TLS the connect's own.
    #[test]
    fn a_connect_s_errors_map_by_what_refused_it() {
        let t = "postgres://u@db:5432/x";
        let refused = WireError::Io(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(matches!(
            connect_error::<PgDialect>(t, Some("x"), &refused),
            BackendError::Unreachable { .. }
        ));
        let password = server_error("28P01", "FATAL", None);
        assert!(matches!(
            connect_error::<PgDialect>(t, Some("x"), &password),
            BackendError::Auth { .. }
        ));
        let no_db = server_error("3D000", "FATAL", None);
        let e = connect_error::<PgDialect>(t, Some("x"), &no_db).to_string();
        assert!(e.contains("create the database"), "{e}");
        let tls = WireError::Tls("the server does not support TLS".into());
        let e = connect_error::<PgDialect>(t, None, &tls).to_string();
        assert!(e.contains("connect to postgres://u@db:5432/x"), "{e}");
    }
}
