//! The rows of spec section 1 and the generator that makes them.

use std::time::SystemTime;

use crate::calendar::civil_from_system_time;

use serde::{Deserialize, Serialize};

use super::rng::Rng;

/// Value domains and the shape of the `data` column (spec section 1). All settable.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RowShape {
    /// `cashregisterid` is uniform in `[0, cashregisters)`.
    pub cashregisters: i32,
    /// `customerid` is uniform in `[0, customers)`.
    pub customers: i32,
    /// `productid` is uniform in `[0, products)`.
    pub products: i32,
    /// `price` is uniform in `[0, max_price)`.
    pub max_price: i32,
    /// Shortest `data` value, characters.
    pub data_min_len: u32,
    /// Longest `data` value, characters.
    pub data_max_len: u32,
    /// Percent of random characters; `floor(L * 0.75 * random_pct / 100)` are random base64.
    pub data_random_pct: u32,
}

impl Default for RowShape {
    fn default() -> Self {
        RowShape {
            cashregisters: 1000,
            customers: 100_000,
            products: 10_000,
            max_price: 500,
            data_min_len: 10,
            data_max_len: 20,
            data_random_pct: 50,
        }
    }
}

/// A batch of rows for one multi-row insert, stored column by column and reused between
/// inserts so the hot path does not allocate.
#[derive(Debug, Default)]
pub struct RowBatch {
    /// Client-assigned ids; empty when the server assigns them.
    pub transactionid: Vec<i64>,
    /// The client's wall clock when the batch was built (one value for the statement).
    pub dateandtime: Option<SystemTime>,
    /// `cashregisterid` per row.
    pub cashregisterid: Vec<i32>,
    /// `customerid` per row.
    pub customerid: Vec<i32>,
    /// `productid` per row.
    pub productid: Vec<i32>,
    /// `price` per row.
    pub price: Vec<i32>,
    data_text: String,
    data_end: Vec<u32>,
}

impl RowBatch {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.price.len()
    }

    /// Whether the batch holds no rows.
    pub fn is_empty(&self) -> bool {
        self.price.is_empty()
    }

    /// Whether the client assigned the ids (then [`RowBatch::transactionid`] has one per row).
    pub fn has_client_ids(&self) -> bool {
        !self.transactionid.is_empty()
    }

    /// The `data` value of row `i`.
    pub fn data(&self, i: usize) -> &str {
        let start = if i == 0 {
            0
        } else {
            self.data_end[i - 1] as usize
        };
        &self.data_text[start..self.data_end[i] as usize]
    }

    /// The batch's timestamp, as the `dateandtime` of every row.
    pub fn timestamp(&self) -> SystemTime {
        self.dateandtime.unwrap_or(SystemTime::UNIX_EPOCH)
    }

    fn clear(&mut self) {
        self.transactionid.clear();
        self.cashregisterid.clear();
        self.customerid.clear();
        self.productid.clear();
        self.price.clear();
        self.data_text.clear();
        self.data_end.clear();
    }
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Makes rows for one connection from its own seeded stream.
#[derive(Clone, Debug)]
pub struct RowGenerator {
    rng: Rng,
    shape: RowShape,
    /// Next client-assigned id, `None` when the server assigns ids.
    next_id: Option<i64>,
}

impl RowGenerator {
    /// A generator with its own stream. `first_client_id` is `Some(first id)` when the client
    /// assigns ids.
    pub fn new(rng: Rng, shape: RowShape, first_client_id: Option<i64>) -> Self {
        RowGenerator {
            rng,
            shape,
            next_id: first_client_id,
        }
    }

    /// The id the next client-assigned row gets (`None` when the server assigns ids).
    pub fn next_client_id(&self) -> Option<i64> {
        self.next_id
    }

    /// Refill `batch` with `rows` new rows stamped with the current wall clock.
    pub fn fill(&mut self, batch: &mut RowBatch, rows: usize) {
        batch.clear();
        batch.dateandtime = Some(SystemTime::now());
        let s = &self.shape;
        let len_span = u64::from(s.data_max_len.saturating_sub(s.data_min_len)) + 1;
        for _ in 0..rows {
            if let Some(id) = self.next_id.as_mut() {
                batch.transactionid.push(*id);
                *id += 1;
            }
            batch
                .cashregisterid
                .push(self.rng.below_i32(s.cashregisters));
            batch.customerid.push(self.rng.below_i32(s.customers));
            batch.productid.push(self.rng.below_i32(s.products));
            batch.price.push(self.rng.below_i32(s.max_price));
            let len = s.data_min_len as u64 + self.rng.below(len_span);
            let random_chars = len * 3 * u64::from(s.data_random_pct) / 400;
            let mut bits = 0u64;
            let mut bits_left = 0u32;
            for _ in 0..random_chars {
                if bits_left < 6 {
                    bits = self.rng.next_u64();
                    bits_left = 64;
                }
                batch.data_text.push(BASE64[(bits & 63) as usize] as char);
                bits >>= 6;
                bits_left -= 6;
            }
            for _ in random_chars..len {
                batch.data_text.push('a');
            }
            batch
                .data_end
                .push(u32::try_from(batch.data_text.len()).unwrap_or(u32::MAX));
        }
    }
}

/// Format a wall-clock time as `YYYY-MM-DD HH:MM:SS.ffffff` (UTC), the text form SQLite and
/// MySQL-family backends bind for `dateandtime`.
pub fn format_timestamp(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s, us) = civil_from_system_time(t);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{us:06}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rows_respect_the_domains_and_data_shape() {
        let shape = RowShape::default();
        let mut g = RowGenerator::new(Rng::for_stream(1, 1, 0), shape.clone(), None);
        let mut b = RowBatch::default();
        g.fill(&mut b, 500);
        assert_eq!(b.len(), 500);
        assert!(!b.has_client_ids());
        for i in 0..b.len() {
            assert!((0..1000).contains(&b.cashregisterid[i]));
            assert!((0..100_000).contains(&b.customerid[i]));
            assert!((0..10_000).contains(&b.productid[i]));
            assert!((0..500).contains(&b.price[i]));
            let d = b.data(i);
            assert!((10..=20).contains(&d.len()), "{d}");
            let random = d.len() * 3 * 50 / 400;
            assert!(d[random..].bytes().all(|c| c == b'a'), "{d}");
            assert!(d.bytes().all(|c| BASE64.contains(&c)));
        }
    }

    #[test]
    fn same_seed_same_rows_and_client_ids_count_up() {
        let mut a = RowGenerator::new(Rng::for_stream(9, 2, 0), RowShape::default(), Some(100));
        let mut b = RowGenerator::new(Rng::for_stream(9, 2, 0), RowShape::default(), Some(100));
        let (mut ba, mut bb) = (RowBatch::default(), RowBatch::default());
        a.fill(&mut ba, 10);
        b.fill(&mut bb, 10);
        assert_eq!(ba.price, bb.price);
        assert_eq!(ba.data(3), bb.data(3));
        assert_eq!(ba.transactionid, (100..110).collect::<Vec<i64>>());
        a.fill(&mut ba, 2);
        assert_eq!(ba.transactionid, vec![110, 111]);
    }

    #[test]
    fn timestamps_format_as_utc() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456);
        assert_eq!(format_timestamp(t), "2023-11-14 22:13:20.123456");
        assert_eq!(
            format_timestamp(SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29 00:00:00.000000"
        );
    }
}
