//! The one client loop and the workers it drives.
//!
//! A step is a set of connections; each runs [`client_loop`] with a [`Worker`] (what one
//! operation is), an optional [`Pacer`] (when it is due), the step's [`StopSignal`] and, with
//! `--reconnect-for` or `--failover`, what it does when its connection is lost
//! ([`Reconnecting`]). The loop is the same for every step: wait until ready, wait until due,
//! do one operation, record its latency from the intended start and its service time from
//! the send.

use crate::stats::convert::u64_usize;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use crate::backend::{BackendError, Conn, SecondaryIndex};
use crate::stats::{OpKind, OpRecorder, duration_us};
use crate::workload::{Rng, RowBatch, RowGenerator, RowShape};

use super::pacer::Pacer;
use super::reconnect::Reconnecting;
use super::stop::StopSignal;

/// How often a transient conflict is retried before the step fails.
const MAX_RETRIES: u32 = 1000;

/// One kind of operation, done over and over by [`client_loop`].
pub trait Worker: Send {
    /// The op kind recorded.
    fn kind(&self) -> OpKind;

    /// Wait until the next operation may start (e.g. the deleter waits for an insert).
    /// Returns the instant it became ready, or `None` when the worker is done.
    fn ready(&mut self, _stop: &StopSignal) -> Option<Instant> {
        Some(Instant::now())
    }

    /// Do one operation. `Ok(None)` means there was nothing left to do.
    fn op(&mut self, conn: &mut dyn Conn) -> Result<Option<u64>, BackendError>;

    /// Called after each recorded operation, outside the measured time.
    fn after(&mut self, _stop: &StopSignal) {}

    /// Called once when the loop ends, however it ends (e.g. the inserter lets its deleter
    /// know no more rows are coming).
    fn finish(&mut self) {}

    /// For an inserter with client-assigned ids: the next id it would use.
    fn next_client_id(&self) -> Option<i64> {
        None
    }

    /// Whether the worker did all it was given (an inserter its rows, the indexer its
    /// indexes). Workers without an amount of work end at the step's deadline instead.
    fn finished_work(&self) -> bool {
        false
    }

    /// A statement failed and the client goes on (`--failover`, `--reconnect-for`):
    /// `in_flight` when the connection broke under it, so the server may or may not have
    /// committed it. An inserter then gives up the batch (its keys are audited as
    /// unacknowledged) instead of sending it again.
    fn connection_lost(&mut self, _in_flight: bool) {}

    /// Keep a ledger of the keys inserted (for the failover audit); only an inserter with
    /// client-assigned ids has one.
    fn track_keys(&mut self) {}

    /// The keys this worker inserted, acknowledged and not, when it tracks them.
    fn key_ledger(&self) -> Option<super::ledger::SharedLedger> {
        None
    }

    /// Statements that affected fewer rows than asked (a deleter of a shared table whose
    /// oldest rows another deleter took first); the worker made up the difference itself.
    fn short_statements(&self) -> u64 {
        0
    }
}

/// Drive one worker on one connection until it is done or the step stops. Returns whether
/// the worker reached its natural end (all its work done, or the step's deadline) rather than
/// being stopped early. With `on_loss` (`--reconnect-for`, `--failover`), a failed statement
/// is that policy's to recover from (it connects again and the operation is done again);
/// without, it ends the loop with its error.
pub fn client_loop(
    worker: &mut dyn Worker,
    conn: &mut dyn Conn,
    pacer: Option<Pacer>,
    stop: &StopSignal,
    rec: &mut OpRecorder,
    mut on_loss: Option<&mut Reconnecting<'_>>,
) -> Result<bool, BackendError> {
    let cpu0 = crate::stats::thread_cpu_seconds();
    let result = run_ops(worker, conn, pacer, stop, rec, &mut on_loss);
    rec.figures.thread_cpu_seconds += crate::stats::thread_cpu_seconds() - cpu0;
    worker.finish();
    rec.figures.short_statements += worker.short_statements();
    result.map(|()| worker.finished_work() || stop.deadline_passed() || !stop.stopped_early())
}

fn run_ops(
    worker: &mut dyn Worker,
    conn: &mut dyn Conn,
    mut pacer: Option<Pacer>,
    stop: &StopSignal,
    rec: &mut OpRecorder,
    on_loss: &mut Option<&mut Reconnecting<'_>>,
) -> Result<(), BackendError> {
    loop {
        if stop.should_stop() {
            return Ok(());
        }
        let Some(ready_at) = worker.ready(stop) else {
            return Ok(());
        };
        let intended = match pacer.as_mut() {
            Some(p) => {
                let due = p.next_due();
                if !stop.sleep_until(due) {
                    return Ok(());
                }
                // A paced op counts from its due time, even when it had to wait for the
                // worker to be ready (a deleter waiting for a stalled inserter was due too).
                due
            }
            None => ready_at,
        };
        let Some((rows, sent)) = one_op(worker, conn, stop, rec, on_loss)? else {
            return Ok(());
        };
        let end = Instant::now();
        rec.record(end - intended, end - sent, rows);
        if let Some(r) = on_loss.as_deref_mut() {
            r.ok(end, duration_us(end - intended));
        }
        worker.after(stop);
    }
}

/// One operation, its transient conflicts retried (and, with a policy for a lost
/// connection, done again after each failure it recovers from): its rows and when its last
/// attempt was sent; `None` when the worker had nothing left or the step stopped.
fn one_op(
    worker: &mut dyn Worker,
    conn: &mut dyn Conn,
    stop: &StopSignal,
    rec: &mut OpRecorder,
    on_loss: &mut Option<&mut Reconnecting<'_>>,
) -> Result<Option<(u64, Instant)>, BackendError> {
    let mut attempts = 0;
    loop {
        let sent = Instant::now();
        let done = match on_loss.as_deref_mut().and_then(Reconnecting::connection) {
            Some(again) => worker.op(again),
            None => worker.op(conn),
        };
        let e = match done {
            Ok(rows) => return Ok(rows.map(|r| (r, sent))),
            Err(e) => e,
        };
        let retryable = matches!(e, BackendError::Retryable(_));
        // The step ended while this op failed: it was never done, so it is neither counted
        // nor an error (a deadlock in a step's last moment would otherwise fail a finished
        // step; a client that reconnects ends quietly whatever the failure).
        if stop.should_stop() && (retryable || on_loss.is_some()) {
            return Ok(None);
        }
        if retryable && attempts < MAX_RETRIES {
            attempts += 1;
            rec.figures.retries += 1;
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let Some(policy) = on_loss.as_deref_mut() else {
            return Err(e);
        };
        if !policy.recover(e, stop, &mut |in_flight| worker.connection_lost(in_flight))? {
            return Ok(None);
        }
    }
}

/// Inserts rows in multi-row statements, up to a total or forever (until the step stops).
pub struct Inserter {
    /// Table written.
    pub table: String,
    generator: RowGenerator,
    batch: RowBatch,
    rows_per_insert: u64,
    remaining: Option<u64>,
    tokens: Option<SyncSender<u64>>,
    pending_token: Option<u64>,
    ledger: Option<super::ledger::SharedLedger>,
}

impl Inserter {
    /// An inserter of `rows_per_insert` rows per statement; `total` rows, or unbounded.
    /// With `tokens`, every insert hands the deleter permission to delete as many rows.
    pub fn new(
        table: String,
        generator: RowGenerator,
        rows_per_insert: u64,
        total: Option<u64>,
        tokens: Option<SyncSender<u64>>,
    ) -> Self {
        let rows_per_insert = rows_per_insert.max(1);
        Inserter {
            table,
            generator,
            batch: RowBatch::default(),
            rows_per_insert,
            remaining: total,
            tokens,
            pending_token: None,
            ledger: None,
        }
    }
}

impl Worker for Inserter {
    fn kind(&self) -> OpKind {
        OpKind::Insert
    }

    fn op(&mut self, conn: &mut dyn Conn) -> Result<Option<u64>, BackendError> {
        let rows = match self.remaining {
            Some(0) => return Ok(None),
            Some(r) => r.min(self.rows_per_insert),
            None => self.rows_per_insert,
        };
        if self.pending_token.is_none() {
            // A retried statement reuses its batch; a new one gets new rows.
            self.generator
                .fill(&mut self.batch, crate::stats::u64_usize(rows));
        }
        self.pending_token = Some(rows);
        let n = conn.insert(&self.table, &self.batch)?;
        if let Some(r) = self.remaining.as_mut() {
            *r -= rows;
        }
        if let Some(l) = &self.ledger {
            super::ledger::lock(l).acknowledged(&self.batch.transactionid);
        }
        Ok(Some(n))
    }

    fn connection_lost(&mut self, in_flight: bool) {
        if let Some(l) = &self.ledger {
            super::ledger::lock(l).failed(in_flight.then_some(self.batch.transactionid.as_slice()));
        }
        if in_flight {
            // The server may hold it: a new batch with new keys, never the same one again.
            self.pending_token = None;
        }
    }

    fn track_keys(&mut self) {
        self.ledger = Some(super::ledger::SharedLedger::default());
    }

    fn key_ledger(&self) -> Option<super::ledger::SharedLedger> {
        self.ledger.clone()
    }

    fn after(&mut self, stop: &StopSignal) {
        if let (Some(rows), Some(tx)) = (self.pending_token.take(), self.tokens.as_ref())
            && !send_token(tx, rows, stop)
        {
            // The deleter has gone (it finished, or the step is stopping): keep inserting
            // without it rather than wait for a peer that will never read.
            self.tokens = None;
        }
        self.pending_token = None;
    }

    fn finish(&mut self) {
        self.tokens = None;
    }

    fn next_client_id(&self) -> Option<i64> {
        self.generator.next_client_id()
    }

    fn finished_work(&self) -> bool {
        self.remaining == Some(0)
    }
}

/// How often a blocked token send looks at the stop signal and its deleter.
const TOKEN_WAIT: Duration = Duration::from_millis(20);

/// Hand the deleter the rows of one insert, waiting while its queue is full; `false` when the
/// deleter has gone or the step must stop, so an inserter never waits for ever on a peer that
/// ended (a full queue of a finished deleter used to hang the step).
fn send_token(tx: &SyncSender<u64>, rows: u64, stop: &StopSignal) -> bool {
    let mut rows = rows;
    loop {
        match tx.try_send(rows) {
            Ok(()) => return true,
            Err(TrySendError::Disconnected(_)) => return false,
            Err(TrySendError::Full(back)) => {
                if stop.should_stop() {
                    return false;
                }
                rows = back;
                std::thread::sleep(TOKEN_WAIT);
            }
        }
    }
}

/// How many extra statements one delete op may send to make up rows that another deleter of a
/// shared table removed first, before it gives up (the integrity check then reports the drift).
const MAX_MAKE_UP_STATEMENTS: u32 = 1000;

/// Deletes the oldest rows, one operation per insert it is allowed to follow. An operation
/// deletes exactly as many rows as the insert it follows added: when its statement finds fewer
/// (on a shared table another deleter took the same oldest rows first), it re-reads the oldest
/// id and deletes the rest, so the table keeps its row count on every backend.
pub struct Deleter {
    /// Table written.
    pub table: String,
    /// Dropped when the deleter's loop ends, so its inserter sees at once that it has gone.
    tokens: Option<Receiver<u64>>,
    rows_now: u64,
    cursor: Option<i64>,
    deletes_since_refresh: u64,
    refresh_every: u64,
    short_statements: u64,
    /// The inserter is done and every permission it gave was used.
    exhausted: bool,
}

impl Deleter {
    /// A deleter that follows the inserter through `tokens` and re-reads `min(transactionid)`
    /// every `refresh_every` deletes.
    pub fn new(table: String, tokens: Receiver<u64>, refresh_every: u64) -> Self {
        Deleter {
            table,
            tokens: Some(tokens),
            rows_now: 0,
            cursor: None,
            deletes_since_refresh: 0,
            refresh_every: refresh_every.max(1),
            short_statements: 0,
            exhausted: false,
        }
    }

    /// Re-read the oldest id; `false` when the table is empty.
    fn refresh_cursor(&mut self, conn: &mut dyn Conn) -> Result<bool, BackendError> {
        let lowest = conn.min_max_id(&self.table)?.map(|(lo, _)| lo);
        self.cursor = Some(lowest.unwrap_or(0));
        self.deletes_since_refresh = 0;
        Ok(lowest.is_some())
    }
}

impl Worker for Deleter {
    fn kind(&self) -> OpKind {
        OpKind::Delete
    }

    fn ready(&mut self, stop: &StopSignal) -> Option<Instant> {
        let tokens = self.tokens.as_ref()?;
        loop {
            match tokens.recv_timeout(Duration::from_millis(50)) {
                Ok(rows) => {
                    self.rows_now = rows;
                    return Some(Instant::now());
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.exhausted = true;
                    return None;
                }
                Err(RecvTimeoutError::Timeout) => {
                    if stop.should_stop() {
                        return None;
                    }
                }
            }
        }
    }

    fn finished_work(&self) -> bool {
        self.exhausted
    }

    fn finish(&mut self) {
        self.tokens = None;
    }

    fn op(&mut self, conn: &mut dyn Conn) -> Result<Option<u64>, BackendError> {
        if self.cursor.is_none() || self.deletes_since_refresh >= self.refresh_every {
            self.refresh_cursor(conn)?;
        }
        let mut deleted = 0u64;
        let mut make_ups = 0u32;
        while deleted < self.rows_now {
            let cursor = self.cursor.unwrap_or(0);
            let want = self.rows_now - deleted;
            let limit = u32::try_from(want).unwrap_or(u32::MAX);
            let n = conn.delete_oldest(&self.table, cursor, limit)?;
            deleted += n;
            self.deletes_since_refresh += 1;
            if n >= want {
                // Ids below the cursor are gone; with gaps in the ids the cursor stays at or
                // below the true minimum, which is safe, and the periodic re-read brings it
                // up again.
                self.cursor = Some(cursor.saturating_add(i64::try_from(n).unwrap_or(i64::MAX)));
                break;
            }
            // Short: another deleter took some of these rows (or the cursor is stale).
            self.short_statements += 1;
            make_ups += 1;
            if !self.refresh_cursor(conn)? || make_ups >= MAX_MAKE_UP_STATEMENTS {
                break;
            }
        }
        Ok(Some(deleted))
    }

    fn short_statements(&self) -> u64 {
        self.short_statements
    }
}

/// Runs range or point queries back to back.
pub struct Querier {
    /// Table read.
    pub table: String,
    rng: Rng,
    shape: RowShape,
    point: bool,
    ids: Vec<i64>,
    id_range: Option<(i64, i64)>,
    id_range_read_at: Option<Instant>,
}

impl Querier {
    /// A range-query (`point == false`) or point-query worker with its own stream.
    pub fn new(table: String, rng: Rng, shape: RowShape, point: bool) -> Self {
        Querier {
            table,
            rng,
            shape,
            point,
            ids: Vec::with_capacity(10),
            id_range: None,
            id_range_read_at: None,
        }
    }
}

impl Worker for Querier {
    fn kind(&self) -> OpKind {
        if self.point {
            OpKind::PointQuery
        } else {
            OpKind::RangeQuery
        }
    }

    fn op(&mut self, conn: &mut dyn Conn) -> Result<Option<u64>, BackendError> {
        if self.point {
            // The table's id range moves with the background inserts and deletes: re-read it
            // once a second (the read is not counted as a query).
            if self
                .id_range_read_at
                .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
            {
                self.id_range = conn.min_max_id(&self.table)?;
                self.id_range_read_at = Some(Instant::now());
            }
            let (lo, hi) = self.id_range.unwrap_or((0, 0));
            self.ids.clear();
            for _ in 0..10 {
                self.ids.push(self.rng.between_i64(lo, hi.max(lo)));
            }
            conn.point_query(&self.table, &self.ids).map(Some)
        } else {
            let index = SecondaryIndex::ALL[u64_usize(self.rng.below(3))];
            let domain = match index {
                SecondaryIndex::MarketSegment => self.shape.products,
                SecondaryIndex::RegisterSegment => self.shape.cashregisters,
                SecondaryIndex::Pdc => self.shape.max_price,
            };
            let from = self.rng.below_i32(domain);
            conn.range_query(&self.table, index, from).map(Some)
        }
    }
}

/// Creates the secondary indexes of one table: one operation.
pub struct Indexer {
    /// Table indexed.
    pub table: String,
    rows_in_table: u64,
    done: bool,
}

impl Indexer {
    /// An indexer for a table holding `rows_in_table` rows (its op counts them as indexed).
    pub fn new(table: String, rows_in_table: u64) -> Self {
        Indexer {
            table,
            rows_in_table,
            done: false,
        }
    }
}

impl Worker for Indexer {
    fn kind(&self) -> OpKind {
        OpKind::CreateIndexes
    }

    fn op(&mut self, conn: &mut dyn Conn) -> Result<Option<u64>, BackendError> {
        if self.done {
            return Ok(None);
        }
        conn.create_secondary_indexes(&self.table)?;
        self.done = true;
        Ok(Some(self.rows_in_table))
    }

    fn finished_work(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::sync_channel;

    use super::*;
    use crate::backend::mock::Ids;

    fn deleter_after_one_insert(rows: u64) -> Deleter {
        let (tx, rx) = sync_channel(1);
        tx.send(rows).unwrap();
        let mut d = Deleter::new("pi1".into(), rx, 1000);
        assert!(d.ready(&StopSignal::new(None)).is_some());
        d
    }

    #[test]
    fn a_deleter_makes_up_rows_another_deleter_took_first() {
        let mut conn = Ids::with_rows(100);
        let mut d = deleter_after_one_insert(10);
        // The first op reads the cursor (1); then the other deleter takes ids 1..=6.
        conn.steal_before_next_delete = 6;
        assert_eq!(d.op(&mut conn).unwrap(), Some(10));
        // 6 + 10 rows are gone, the 10 this deleter owed were all deleted by it.
        assert_eq!(conn.len(), 84);
        assert_eq!(conn.first(), Some(17));
        assert_eq!(d.short_statements(), 1);
        assert_eq!(conn.statements, 2);
    }

    #[test]
    fn an_unraced_deleter_sends_one_statement_per_op() {
        let mut conn = Ids::with_rows(100);
        let mut d = deleter_after_one_insert(10);
        assert_eq!(d.op(&mut conn).unwrap(), Some(10));
        assert_eq!(d.short_statements(), 0);
        assert_eq!(conn.statements, 1);
    }

    #[test]
    fn a_deleter_of_an_empty_table_counts_the_short_statement_and_stops() {
        let mut conn = Ids::with_rows(0);
        let mut d = deleter_after_one_insert(10);
        assert_eq!(d.op(&mut conn).unwrap(), Some(0));
        assert_eq!(d.short_statements(), 1);
        assert_eq!(conn.statements, 1);
    }

    fn generator() -> RowGenerator {
        RowGenerator::new(Rng::for_stream(1, 0, 0), RowShape::default(), None)
    }

    /// The hang seen under load: a deleter that ended early (its loop returned) while its
    /// inserter still had rows to hand over on a full queue. The inserter must end on the stop
    /// request instead of blocking in the send; with the deleter's queue still open (a peer
    /// that never reads) as well as with it closed.
    #[test]
    fn an_inserter_ends_on_stop_when_its_deleter_has_finished() {
        for deleter_finished in [true, false] {
            let (tx, rx) = sync_channel(1);
            let mut deleter = Deleter::new("pi1".into(), rx, 1000);
            if deleter_finished {
                // The deleter's loop ends at once (its step stopped for it first).
                let over = StopSignal::new(None);
                over.stop();
                let mut rec = OpRecorder::new(OpKind::Delete);
                let mut del_conn = Ids::with_rows(10);
                client_loop(&mut deleter, &mut del_conn, None, &over, &mut rec, None).unwrap();
            }
            // Otherwise: a peer that holds the queue open and never reads.
            let stop = std::sync::Arc::new(StopSignal::new(None));
            let (done_tx, done_rx) = std::sync::mpsc::channel();
            let inserter_stop = std::sync::Arc::clone(&stop);
            let mut inserter = Inserter::new("pi1".into(), generator(), 5, None, Some(tx));
            std::thread::spawn(move || {
                let mut conn = Ids::with_rows(0);
                let mut rec = OpRecorder::new(OpKind::Insert);
                let r = client_loop(
                    &mut inserter,
                    &mut conn,
                    None,
                    &inserter_stop,
                    &mut rec,
                    None,
                );
                let _ = done_tx.send((r.is_ok(), rec.figures.ops));
            });
            std::thread::sleep(Duration::from_millis(200));
            let asked = Instant::now();
            stop.stop();
            let (ok, ops) = done_rx
                .recv_timeout(Duration::from_secs(30))
                .expect("the inserter ends after the stop request instead of hanging");
            assert!(ok && ops > 0);
            assert!(
                asked.elapsed() < Duration::from_secs(10),
                "ended {:?} after the stop request",
                asked.elapsed()
            );
            drop(deleter);
        }
    }

    /// The inserter and its deleter on two connections (threads), as in l.i1: every row
    /// inserted is deleted, the table keeps its size, and both reach their natural end.
    #[test]
    fn the_inserter_hands_its_rows_to_the_deleter() {
        let mut ins_conn = Ids::with_rows(1000);
        let mut del_conn = ins_conn.sharing();
        let (tx, rx) = sync_channel(crate::workload::plan::DELETE_QUEUE_STATEMENTS);
        let mut inserter = Inserter::new("pi1".into(), generator(), 50, Some(2000), Some(tx));
        let mut deleter = Deleter::new("pi1".into(), rx, 1000);
        let stop = StopSignal::new(None);
        let (ins, del) = std::thread::scope(|scope| {
            let stop = &stop;
            let d = scope.spawn(move || {
                let mut rec = OpRecorder::new(OpKind::Delete);
                let end = client_loop(&mut deleter, &mut del_conn, None, stop, &mut rec, None);
                (end, rec)
            });
            let mut rec = OpRecorder::new(OpKind::Insert);
            let end = client_loop(&mut inserter, &mut ins_conn, None, stop, &mut rec, None);
            ((end, rec), d.join().unwrap())
        });
        assert!(ins.0.unwrap(), "the inserter did all its rows");
        assert!(del.0.unwrap(), "the deleter used every permission");
        assert_eq!((ins.1.figures.rows, ins.1.figures.ops), (2000, 40));
        assert_eq!((del.1.figures.rows, del.1.figures.ops), (2000, 40));
        assert_eq!(ins_conn.len(), 1000, "the table kept its rows");
    }

    /// A paced connection follows its schedule: at 200 ops/s for 0.5 s it does about 100 ops,
    /// never more than the schedule allows, and ends at the deadline as its natural end.
    #[test]
    fn a_paced_connection_keeps_to_its_schedule_and_ends_at_the_deadline() {
        let mut conn = Ids::with_rows(1000);
        let mut q = Querier::new(
            "pi1".into(),
            Rng::for_stream(1, 0, 1),
            RowShape::default(),
            true,
        );
        let start = Instant::now();
        let stop = StopSignal::new(Some(start + Duration::from_millis(500)));
        let mut rec = OpRecorder::new(OpKind::PointQuery);
        let end = client_loop(
            &mut q,
            &mut conn,
            Some(Pacer::new(start, 200.0)),
            &stop,
            &mut rec,
            None,
        );
        assert!(end.unwrap());
        // Due times start, start + 5 ms, ...: at most 100 fall before the deadline. A busy
        // machine may delay the loop, never run it ahead.
        assert!(rec.figures.ops <= 100, "{} ops", rec.figures.ops);
        assert!(
            rec.figures.ops >= 50,
            "{} ops: the pacer fell far behind",
            rec.figures.ops
        );
    }

    /// A transient conflict (deadlock, busy) is retried, counted, and the statement's rows
    /// are inserted once: the op's latency covers the retries.
    #[test]
    fn transient_conflicts_are_retried_and_counted() {
        let mut conn = Ids::with_rows(0);
        conn.conflicts_before_next_insert = 3;
        let mut inserter = Inserter::new("pi1".into(), generator(), 10, Some(20), None);
        let stop = StopSignal::new(None);
        let mut rec = OpRecorder::new(OpKind::Insert);
        assert!(client_loop(&mut inserter, &mut conn, None, &stop, &mut rec, None).unwrap());
        assert_eq!(
            (rec.figures.ops, rec.figures.rows, rec.figures.retries),
            (2, 20, 3)
        );
        assert_eq!(conn.len(), 20, "no batch inserted twice, none lost");
    }

    /// A conflict met once the step's deadline has passed ends the loop at its natural end:
    /// the op is not retried, not counted, and not an error.
    #[test]
    fn a_conflict_after_the_deadline_ends_the_step_cleanly() {
        let mut conn = Ids::with_rows(0);
        conn.conflicts_before_next_insert = 1_000_000;
        let mut inserter = Inserter::new("pi1".into(), generator(), 10, None, None);
        let stop = StopSignal::new(Some(Instant::now() + Duration::from_millis(20)));
        let mut rec = OpRecorder::new(OpKind::Insert);
        let reached_end = client_loop(&mut inserter, &mut conn, None, &stop, &mut rec, None);
        assert!(reached_end.unwrap(), "a deadline is the natural end");
        assert_eq!((rec.figures.ops, conn.len()), (0, 0));
        assert!(
            rec.figures.retries > 0,
            "conflicts before the deadline were retried"
        );
    }

    /// A stop (another connection failed, or Ctrl-C) ends the loop early: not its natural end.
    #[test]
    fn a_stopped_loop_says_it_was_cut_short() {
        let mut conn = Ids::with_rows(10);
        let mut inserter = Inserter::new("pi1".into(), generator(), 5, Some(1_000_000), None);
        let stop = StopSignal::new(None);
        stop.stop();
        let mut rec = OpRecorder::new(OpKind::Insert);
        let reached_end =
            client_loop(&mut inserter, &mut conn, None, &stop, &mut rec, None).unwrap();
        assert!(!reached_end);
        assert_eq!(rec.figures.ops, 0);
    }
}
