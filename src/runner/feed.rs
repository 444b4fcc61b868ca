//! The batch feed: an inserter's rows made ahead on a thread of their own, so the connection's
//! thread only sends and waits.
//!
//! The builder thread fills batches from the inserter's generator in the order it would have
//! (the same seeded stream, the same sizes: `rows_per_insert` rows, the last one shorter when a
//! total is given) and hands them over a bounded channel, at most [`DEPTH`] ahead; used batches
//! come back to be refilled, so a step allocates a handful of batches, not one per statement.
//! The inserter stamps each batch with the wall clock when it sends it, as before.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

use crate::stats::u64_usize;
use crate::workload::{RowBatch, RowGenerator};

/// Batches made ahead of the connection.
pub const DEPTH: usize = 2;

/// The receiving end of an inserter's batch builder.
pub struct BatchFeed {
    ready: Receiver<RowBatch>,
    spent: SyncSender<RowBatch>,
    builder: Option<JoinHandle<()>>,
}

impl BatchFeed {
    /// Start the builder: batches of `rows_per_insert` rows, `total` rows in all (`None`:
    /// until the feed is dropped).
    pub fn start(mut generator: RowGenerator, rows_per_insert: u64, total: Option<u64>) -> Self {
        let (ready_tx, ready) = sync_channel::<RowBatch>(DEPTH);
        let (spent, spent_rx) = sync_channel::<RowBatch>(DEPTH + 2);
        let per_insert = rows_per_insert.max(1);
        let build = move || {
            let mut remaining = total;
            loop {
                let rows = match remaining {
                    Some(0) => return,
                    Some(r) => r.min(per_insert),
                    None => per_insert,
                };
                let mut batch = spent_rx.try_recv().unwrap_or_default();
                generator.fill(&mut batch, u64_usize(rows));
                if ready_tx.send(batch).is_err() {
                    return; // The inserter is gone: the step ended.
                }
                if let Some(r) = remaining.as_mut() {
                    *r -= rows;
                }
            }
        };
        let builder = std::thread::Builder::new()
            .name("ibench-batches".into())
            .spawn(build)
            .ok();
        BatchFeed {
            ready,
            spent,
            builder,
        }
    }

    /// The next batch, waiting for the builder when it is behind; `None` when it made all.
    pub fn next_batch(&mut self) -> Option<RowBatch> {
        self.ready.recv().ok()
    }

    /// Give a sent batch back for reuse.
    pub fn give_back(&self, batch: RowBatch) {
        match self.spent.try_send(batch) {
            Ok(()) | Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {}
        }
    }
}

impl Drop for BatchFeed {
    fn drop(&mut self) {
        // Closing the channel ends the builder (its next send fails); wait for it so no thread
        // outlives the step.
        let (_, closed) = sync_channel::<RowBatch>(0);
        drop(std::mem::replace(&mut self.ready, closed));
        if let Some(b) = self.builder.take() {
            let _ = b.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Rng, RowShape};

    fn generator() -> RowGenerator {
        RowGenerator::new(Rng::for_stream(7, 0, 0), RowShape::default(), Some(1))
    }

    #[test]
    fn the_feed_gives_the_same_rows_in_the_same_order_as_the_generator() {
        let mut direct = generator();
        let mut feed = BatchFeed::start(generator(), 3, Some(8));
        let mut sizes = Vec::new();
        while let Some(b) = feed.next_batch() {
            let mut expected = RowBatch::default();
            direct.fill(&mut expected, b.len());
            assert_eq!(b.transactionid, expected.transactionid);
            assert_eq!(b.price, expected.price);
            assert_eq!(b.customerid, expected.customerid);
            sizes.push(b.len());
            feed.give_back(b);
        }
        assert_eq!(sizes, [3, 3, 2], "8 rows in batches of 3, the last shorter");
    }

    #[test]
    fn an_endless_feed_stops_its_thread_when_dropped() {
        let mut feed = BatchFeed::start(generator(), 5, None);
        for _ in 0..10 {
            assert_eq!(feed.next_batch().map(|b| b.len()), Some(5));
        }
        drop(feed); // Joins the builder: the test would hang if it did not stop.
    }
}
