//! A side connection (the run's admin connection for setup and the integrity checks, the
//! sampler's for sizes and statistics): a [`Conn`] that opens itself again, once, when the
//! server closed it while it sat idle (PostgreSQL's `idle_session_timeout`, MySQL's
//! `wait_timeout`), instead of failing every later check.

use super::{
    BackendError, BackendResult, BuildFacts, Canceller, Conn, DbSize, Driver, IndexProgress,
    SecondaryIndex, ServerFiles, TableOptions,
};
use crate::results::statistics::Statistics;
use crate::workload::RowBatch;
use crate::workload::micro::MicroStatement;

/// How a side connection opens itself (again).
type Connector<'a> = Box<dyn Fn() -> BackendResult<Box<dyn Conn>> + Send + 'a>;

/// A connection that reconnects once through its driver when it was lost.
pub struct SideConn<'a> {
    connect: Connector<'a>,
    conn: Box<dyn Conn>,
}

impl<'a> SideConn<'a> {
    /// Connect through `driver`, which the connection keeps to reconnect.
    pub fn connect(driver: &'a dyn Driver) -> BackendResult<SideConn<'a>> {
        Self::with(Box::new(move || driver.connect()))
    }

    /// Connect through a driver of its own (a side connection on another thread).
    pub fn owning(driver: Box<dyn Driver>) -> BackendResult<SideConn<'static>> {
        SideConn::with(Box::new(move || driver.connect()))
    }

    fn with(connect: Connector<'a>) -> BackendResult<SideConn<'a>> {
        let conn = connect()?;
        Ok(SideConn { connect, conn })
    }

    /// Run `op`; when the connection was lost (not a stall: a frozen server would only hold
    /// the new login too), open it again and run `op` once more.
    fn again<T>(&mut self, op: impl Fn(&mut dyn Conn) -> BackendResult<T>) -> BackendResult<T> {
        match op(self.conn.as_mut()) {
            Err(BackendError::Lost { .. }) => {
                self.reopen()?;
                op(self.conn.as_mut())
            }
            other => other,
        }
    }

    /// Open the connection again after it was lost. A server that cannot be reached now was
    /// reached before: that is a lost server, not a wrong URL.
    fn reopen(&mut self) -> BackendResult<()> {
        self.conn = (self.connect)().map_err(|e| match e {
            BackendError::Unreachable { target, detail } => BackendError::Lost {
                context: "opening a side connection again".into(),
                target,
                detail,
            },
            other => other,
        })?;
        Ok(())
    }
}

/// Whether a statistics snapshot has a part that failed because the connection was lost
/// (a backend records a view it could not read as `{"error": "..."}`).
fn lost_in(stats: &Statistics) -> bool {
    stats
        .errors()
        .iter()
        .any(|(_, e)| e.contains("lost the connection") || e.contains("the connection was lost"))
}

impl Conn for SideConn<'_> {
    fn canceller(&self) -> Option<Box<dyn Canceller>> {
        self.conn.canceller()
    }
    fn create_table(&mut self, table: &str, options: &TableOptions) -> BackendResult<()> {
        self.again(|c| c.create_table(table, options))
    }
    fn drop_table(&mut self, table: &str) -> BackendResult<()> {
        self.again(|c| c.drop_table(table))
    }
    fn create_micro_table(&mut self, table: &str, options: &TableOptions) -> BackendResult<()> {
        self.again(|c| c.create_micro_table(table, options))
    }
    fn micro(&mut self, table: &str, statements: &[MicroStatement]) -> BackendResult<u64> {
        self.conn.micro(table, statements)
    }
    fn create_secondary_indexes(&mut self, table: &str) -> BackendResult<()> {
        self.conn.create_secondary_indexes(table)
    }
    fn has_secondary_indexes(&mut self, table: &str) -> BackendResult<bool> {
        self.again(|c| c.has_secondary_indexes(table))
    }
    fn insert(&mut self, table: &str, batch: &RowBatch) -> BackendResult<u64> {
        self.conn.insert(table, batch)
    }
    fn delete_oldest(&mut self, table: &str, min_id: i64, limit: u32) -> BackendResult<u64> {
        self.conn.delete_oldest(table, min_id, limit)
    }
    fn min_max_id(&mut self, table: &str) -> BackendResult<Option<(i64, i64)>> {
        self.again(|c| c.min_max_id(table))
    }
    fn range_query(&mut self, table: &str, index: SecondaryIndex, from: i32) -> BackendResult<u64> {
        self.conn.range_query(table, index, from)
    }
    fn point_query(&mut self, table: &str, ids: &[i64]) -> BackendResult<u64> {
        self.conn.point_query(table, ids)
    }
    fn count_rows(&mut self, table: &str) -> BackendResult<u64> {
        self.again(|c| c.count_rows(table))
    }
    fn count_rows_via_index(&mut self, table: &str, index: SecondaryIndex) -> BackendResult<u64> {
        self.again(|c| c.count_rows_via_index(table, index))
    }
    fn database_size_bytes(&mut self, tables: &[String]) -> BackendResult<Option<DbSize>> {
        self.again(|c| c.database_size_bytes(tables))
    }
    fn server_files(&mut self) -> BackendResult<Option<ServerFiles>> {
        self.again(|c| c.server_files())
    }
    fn server_identity(&mut self) -> BackendResult<Option<super::identity::ServerIdentity>> {
        self.again(|c| c.server_identity())
    }
    fn server_statistics(&mut self) -> BackendResult<Option<Statistics>> {
        match self.again(|c| c.server_statistics()) {
            Ok(Some(stats)) if lost_in(&stats) => {
                self.reopen()?;
                self.conn.server_statistics()
            }
            other => other,
        }
    }
    fn server_settings(&mut self) -> BackendResult<Option<serde_json::Value>> {
        self.again(|c| c.server_settings())
    }
    fn build_facts(&mut self) -> BackendResult<BuildFacts> {
        self.again(|c| c.build_facts())
    }
    fn index_build_progress(&mut self) -> BackendResult<IndexProgress> {
        self.conn.index_build_progress()
    }
}
