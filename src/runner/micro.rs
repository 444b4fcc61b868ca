//! The microbenchmarks' workers: the loader of a sysbench table and the worker that runs one
//! microbenchmark's operations, both driven by the one client loop.

use crate::backend::{BackendError, Conn};
use crate::stats::OpKind;
use crate::workload::Rng;
use crate::workload::micro::{
    MicroOps, MicroStatement, MicroStatementKind, MicroStep, MicroTable, c_value, pad_value,
};

use super::client::Worker;

/// Rows per load transaction.
const LOAD_ROWS_PER_TRANSACTION: u32 = 100;

/// Loads ids `1..=rows` into each of its tables in turn, `k` uniform in `1..=rows`, 100 rows
/// per transaction. One loader serves several tables when there are more tables than loader
/// connections (`MAX_MICRO_LOADERS`).
pub struct MicroLoader {
    /// The tables still to load, the current one first.
    tables: std::collections::VecDeque<String>,
    rows: u32,
    next_id: u32,
    rng: Rng,
    statements: Vec<MicroStatement>,
}

impl MicroLoader {
    /// The loader of `tables`, one after the other, with its own stream.
    pub fn new(tables: Vec<String>, rows: u32, rng: Rng) -> Self {
        MicroLoader {
            tables: tables.into(),
            rows,
            next_id: 1,
            rng,
            statements: Vec::new(),
        }
    }
}

impl Worker for MicroLoader {
    fn kind(&self) -> OpKind {
        OpKind::Insert
    }

    fn op(&mut self, conn: &mut dyn Conn) -> Result<Option<u64>, BackendError> {
        if self.next_id > self.rows {
            // This table is full: on to the next.
            self.tables.pop_front();
            self.next_id = 1;
        }
        let Some(table) = self.tables.front() else {
            return Ok(None);
        };
        let last = self
            .rows
            .min(self.next_id.saturating_add(LOAD_ROWS_PER_TRANSACTION - 1));
        if self.statements.is_empty() {
            // A retried transaction sends the same rows again.
            let bound = i32::try_from(self.rows).unwrap_or(i32::MAX);
            self.statements.push(MicroStatement {
                kind: MicroStatementKind::Begin,
                ints: Vec::new(),
                texts: Vec::new(),
            });
            for id in self.next_id..=last {
                let k = self.rng.below_i32(bound) + 1;
                self.statements.push(MicroStatement {
                    kind: MicroStatementKind::Insert,
                    ints: vec![i32::try_from(id).unwrap_or(i32::MAX), k],
                    texts: vec![c_value(&mut self.rng), pad_value(&mut self.rng)],
                });
            }
            self.statements.push(MicroStatement {
                kind: MicroStatementKind::Commit,
                ints: Vec::new(),
                texts: Vec::new(),
            });
        }
        let n = conn.micro(table, &self.statements)?;
        self.statements.clear();
        self.next_id = last + 1;
        Ok(Some(n))
    }

    fn finished_work(&self) -> bool {
        self.tables.len() <= 1 && self.next_id > self.rows || self.tables.is_empty()
    }
}

/// Runs one microbenchmark's operations back to back, each on a table picked at random.
pub struct MicroWorker {
    tables: Vec<String>,
    pick: Rng,
    ops: MicroOps,
    pending: Option<(usize, Vec<MicroStatement>)>,
}

impl MicroWorker {
    /// The worker of client `client` of `clients` for `step` over `tables` of `rows` rows each.
    pub fn new(
        step: MicroStep,
        tables: Vec<String>,
        rows: u32,
        rng: Rng,
        (client, clients): (u32, u32),
    ) -> Self {
        let mut pick = rng.clone();
        // A stream of its own for picking tables, so the operations do not depend on it.
        let _ = pick.next_u64();
        MicroWorker {
            tables,
            pick,
            ops: MicroOps::new(step, MicroTable { rows }, rng, client, clients),
            pending: None,
        }
    }
}

impl Worker for MicroWorker {
    fn kind(&self) -> OpKind {
        OpKind::Micro
    }

    fn op(&mut self, conn: &mut dyn Conn) -> Result<Option<u64>, BackendError> {
        // A retried operation sends the same statements again.
        let (table, statements) = match self.pending.take() {
            Some(p) => p,
            None => {
                let n = u64::try_from(self.tables.len()).unwrap_or(1);
                let t = usize::try_from(self.pick.below(n)).unwrap_or(0);
                (t, self.ops.next_op())
            }
        };
        let name = self.tables.get(table).map_or("sbtest1", String::as_str);
        match conn.micro(name, &statements) {
            Ok(rows) => Ok(Some(rows)),
            Err(e) => {
                self.pending = Some((table, statements));
                Err(e)
            }
        }
    }
}
