//! A test-only backend: in-memory tables of ids behind the [`Conn`] seam: [`Ids`] for unit tests of
//! the client loop and the workers, and [`MockDriver`] on the hidden `mock:` scheme for
//! `runner::run` in-process (integration tests use real servers).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use super::{BackendResult, Conn, SecondaryIndex, TableOptions};
use crate::workload::RowBatch;

/// An in-memory table of ids, shared by every connection made with [`Ids::sharing`]: enough
/// of a connection to drive inserters and deleters. While the next delete waits on its rows,
/// `steal_before_next_delete` of the oldest rows vanish, as if another deleter took them
/// first (Postgres then deletes only what is left of the rows its subquery picked).
pub(crate) struct Ids {
    /// The ids in the table.
    pub table: Arc<Mutex<BTreeSet<i64>>>,
    /// Rows another deleter takes while the next delete waits.
    pub steal_before_next_delete: u64,
    /// Delete statements this connection sent.
    pub statements: u32,
    /// The next this many inserts fail with a transient conflict (as a deadlock would).
    pub conflicts_before_next_insert: u32,
}

impl Ids {
    /// A connection to a new table holding ids `1..=n`.
    pub fn with_rows(n: i64) -> Ids {
        Ids {
            table: Arc::new(Mutex::new((1..=n).collect())),
            steal_before_next_delete: 0,
            statements: 0,
            conflicts_before_next_insert: 0,
        }
    }

    /// Another connection to the same table.
    pub fn sharing(&self) -> Ids {
        Ids {
            table: Arc::clone(&self.table),
            steal_before_next_delete: 0,
            statements: 0,
            conflicts_before_next_insert: 0,
        }
    }

    /// Rows in the table.
    pub fn len(&self) -> usize {
        self.table.lock().unwrap().len()
    }

    /// The oldest id.
    pub fn first(&self) -> Option<i64> {
        self.table.lock().unwrap().first().copied()
    }
}

impl Conn for Ids {
    fn create_table(&mut self, _: &str, _: &TableOptions) -> BackendResult<()> {
        self.table.lock().unwrap().clear();
        Ok(())
    }
    fn drop_table(&mut self, _: &str) -> BackendResult<()> {
        Ok(())
    }
    fn create_secondary_indexes(&mut self, _: &str) -> BackendResult<()> {
        Ok(())
    }
    fn has_secondary_indexes(&mut self, _: &str) -> BackendResult<bool> {
        Ok(false)
    }
    fn insert(&mut self, _: &str, batch: &RowBatch) -> BackendResult<u64> {
        if self.conflicts_before_next_insert > 0 {
            self.conflicts_before_next_insert -= 1;
            return Err(super::BackendError::Retryable("deadlock detected".into()));
        }
        let mut t = self.table.lock().unwrap();
        let first = t.last().copied().unwrap_or(0) + 1;
        let rows = i64::try_from(batch.len()).unwrap();
        t.extend(first..first + rows);
        Ok(batch.len() as u64)
    }
    fn delete_oldest(&mut self, _: &str, min_id: i64, limit: u32) -> BackendResult<u64> {
        self.statements += 1;
        let mut t = self.table.lock().unwrap();
        let picked: Vec<i64> = t.range(min_id..).take(limit as usize).copied().collect();
        for _ in 0..std::mem::take(&mut self.steal_before_next_delete) {
            t.pop_first();
        }
        let deleted = picked.iter().filter(|id| t.remove(id)).count();
        Ok(deleted as u64)
    }
    fn min_max_id(&mut self, _: &str) -> BackendResult<Option<(i64, i64)>> {
        let t = self.table.lock().unwrap();
        Ok(t.first().copied().zip(t.last().copied()))
    }
    fn range_query(&mut self, _: &str, _: SecondaryIndex, _: i32) -> BackendResult<u64> {
        Ok(10)
    }
    fn point_query(&mut self, _: &str, ids: &[i64]) -> BackendResult<u64> {
        let t = self.table.lock().unwrap();
        Ok(ids.iter().filter(|id| t.contains(id)).count() as u64)
    }
    fn count_rows(&mut self, _: &str) -> BackendResult<u64> {
        Ok(self.len() as u64)
    }
    fn count_rows_via_index(&mut self, _: &str, _: SecondaryIndex) -> BackendResult<u64> {
        Ok(self.len() as u64)
    }
}

/// The hidden `mock:` scheme's driver (tests only): tables of ids in memory, shared by every
/// connection it opens, so that `runner::run` runs every insert-benchmark step in-process, its
/// integrity checks included, with no database at all. Queries return what their ids would
/// match; nothing is timed against a real engine, so its figures measure only ibench.
pub(crate) struct MockDriver {
    url: String,
    tables: Arc<Mutex<std::collections::BTreeMap<String, MockTable>>>,
}

/// One in-memory table.
#[derive(Default)]
struct MockTable {
    ids: BTreeSet<i64>,
    indexed: bool,
}

impl MockDriver {
    /// The driver of `url` (`mock:` and anything after it).
    pub(crate) fn new(url: &str) -> MockDriver {
        MockDriver {
            url: url.to_string(),
            tables: Arc::default(),
        }
    }
}

impl super::Driver for MockDriver {
    fn connect(&self) -> BackendResult<Box<dyn Conn>> {
        Ok(Box::new(MockConn {
            tables: Arc::clone(&self.tables),
        }))
    }

    fn describe(&self) -> BackendResult<super::TargetInfo> {
        Ok(super::TargetInfo {
            backend: super::BackendKind::Sqlite,
            url: self.url.clone(),
            dbms: "mock".into(),
            version: "in-memory tables of ids".into(),
            engine: None,
            flavour: None,
            tls: None,
        })
    }

    /// No maintenance; `mock:unsettled` reports an action the budget cut short and
    /// `mock:settle-error` one that failed, for the runner's tests of both.
    fn settle(
        &self,
        _: &[String],
        _: std::time::Duration,
    ) -> BackendResult<Vec<super::SettleAction>> {
        let mut actions = Vec::new();
        if self.url.contains("unsettled") {
            actions.push(super::SettleAction {
                action: "wait for the mock's dirty pages".into(),
                seconds: 0.0,
                error: None,
                unsettled: Some("7 dirty pages left".into()),
            });
        }
        if self.url.contains("settle-error") {
            actions.push(super::SettleAction::done(
                "ANALYZE mock",
                0.0,
                Some("ERROR 1146: no such table".into()),
            ));
        }
        Ok(actions)
    }
}

/// A connection of [`MockDriver`].
struct MockConn {
    tables: Arc<Mutex<std::collections::BTreeMap<String, MockTable>>>,
}

impl MockConn {
    /// Run `f` on `table`, which must exist.
    fn with<T>(&self, table: &str, f: impl FnOnce(&mut MockTable) -> T) -> BackendResult<T> {
        let mut tables = self
            .tables
            .lock()
            .map_err(|_| super::BackendError::sql(table, "the mock's lock is poisoned"))?;
        let t = tables
            .get_mut(table)
            .ok_or_else(|| super::BackendError::sql(table, "no such table"))?;
        Ok(f(t))
    }
}

impl Conn for MockConn {
    fn create_table(&mut self, table: &str, _: &TableOptions) -> BackendResult<()> {
        if let Ok(mut tables) = self.tables.lock() {
            tables.insert(table.to_string(), MockTable::default());
        }
        Ok(())
    }
    fn drop_table(&mut self, table: &str) -> BackendResult<()> {
        if let Ok(mut tables) = self.tables.lock() {
            tables.remove(table);
        }
        Ok(())
    }
    fn create_secondary_indexes(&mut self, table: &str) -> BackendResult<()> {
        self.with(table, |t| t.indexed = true)
    }
    fn has_secondary_indexes(&mut self, table: &str) -> BackendResult<bool> {
        self.with(table, |t| t.indexed)
    }
    fn insert(&mut self, table: &str, batch: &RowBatch) -> BackendResult<u64> {
        self.with(table, |t| {
            if batch.has_client_ids() {
                t.ids.extend(batch.transactionid.iter().copied());
            } else {
                let first = t.ids.last().copied().unwrap_or(0) + 1;
                let rows = i64::try_from(batch.len()).unwrap_or(i64::MAX);
                t.ids.extend(first..first.saturating_add(rows));
            }
            batch.len() as u64
        })
    }
    fn delete_oldest(&mut self, table: &str, min_id: i64, limit: u32) -> BackendResult<u64> {
        self.with(table, |t| {
            let picked: Vec<i64> = t
                .ids
                .range(min_id..)
                .take(limit as usize)
                .copied()
                .collect();
            picked.iter().filter(|id| t.ids.remove(id)).count() as u64
        })
    }
    fn min_max_id(&mut self, table: &str) -> BackendResult<Option<(i64, i64)>> {
        self.with(table, |t| t.ids.first().copied().zip(t.ids.last().copied()))
    }
    fn range_query(&mut self, table: &str, _: SecondaryIndex, _: i32) -> BackendResult<u64> {
        self.with(table, |t| t.ids.len().min(10) as u64)
    }
    fn point_query(&mut self, table: &str, ids: &[i64]) -> BackendResult<u64> {
        self.with(table, |t| {
            ids.iter().filter(|id| t.ids.contains(id)).count() as u64
        })
    }
    fn count_rows(&mut self, table: &str) -> BackendResult<u64> {
        self.with(table, |t| t.ids.len() as u64)
    }
    fn count_rows_via_index(&mut self, table: &str, _: SecondaryIndex) -> BackendResult<u64> {
        self.with(table, |t| if t.indexed { t.ids.len() as u64 } else { 0 })
    }
    fn server_files(&mut self) -> BackendResult<Option<super::ServerFiles>> {
        Ok(Some(super::ServerFiles {
            data_paths: Vec::new(),
            pid_file: None,
            embedded: true,
        }))
    }
}
