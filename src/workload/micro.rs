//! The microbenchmark suite: the sysbench-style tests of the published results, as data.
//!
//! Tables have the sysbench shape (`id` PK, `k` with a secondary index, `c` char(120), `pad`
//! char(60)); `m.load` creates and loads them. Each microbenchmark is a step that runs for a
//! fixed time on every client: one operation is one statement or one transaction of
//! statements ([`MicroStatement`]), built here from the client's own seeded stream; the
//! backends turn each statement kind into SQL. The names and their order are the published
//! ones (`point-query.pre_range=100`, ..., `write-only_range=10000`); docs/micro.md lists the
//! statements of each.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::rng::Rng;

/// The sizes of the microbenchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MicroSizes {
    /// Tables (`sbtest1` ...); each operation picks one at random.
    pub tables: u32,
    /// Rows per table loaded by `m.load`.
    pub rows: u32,
    /// Seconds each microbenchmark runs.
    pub seconds: f64,
}

impl Default for MicroSizes {
    fn default() -> Self {
        MicroSizes {
            tables: 1,
            rows: 10_000,
            seconds: 3.0,
        }
    }
}

/// One microbenchmark (without the `.pre` mark).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MicroBench {
    /// 100-value IN-list of the PK over a hot set of 100 rows.
    HotPoints,
    /// One row by PK, one column.
    PointQuery,
    /// IN-list of `range` PK values, reading only the PK.
    PointsCoveredPk,
    /// IN-list of `range` `k` values, reading only `k`.
    PointsCoveredSi,
    /// IN-list of `range` PK values, reading `c` (not in the PK index on Postgres).
    PointsNotcoveredPk,
    /// IN-list of `range` `k` values, reading `c` (not in the `k` index).
    PointsNotcoveredSi,
    /// IN-list of `range` `k` values, whole rows.
    RandomPoints,
    /// `range` rows by PK, summing the PK.
    RangeCoveredPk,
    /// `range` rows by `k`, summing `k`.
    RangeCoveredSi,
    /// `range` rows by PK, summing the length of `c`.
    RangeNotcoveredPk,
    /// `range` rows by `k`, summing the length of `c`.
    RangeNotcoveredSi,
    /// sysbench's read-only transaction: 10 point lookups, a range, a range sum, an ordered
    /// range and a distinct ordered range of `range` rows.
    ReadOnly,
    /// A full scan; its figure is rows scanned per second.
    Scan,
    /// Delete a random row and insert it again (the row count stays).
    Delete,
    /// Insert a new row (the table grows).
    Insert,
    /// read-only's queries and write-only's writes in one transaction.
    ReadWrite,
    /// Add 1 to `k` of a random row (secondary index maintenance).
    UpdateIndex,
    /// Add 1 to `k` of 100 random rows in one statement.
    UpdateInlist,
    /// Replace `c` of a random row (no index maintenance).
    UpdateNonindex,
    /// Replace `c` of one hot row (id 1).
    UpdateOne,
    /// Replace `c` of a row drawn from a Zipf distribution (s = 0.99).
    UpdateZipf,
    /// sysbench's write-only transaction: update-index, update-nonindex, delete and insert of
    /// one row.
    WriteOnly,
}

/// Groups of the published report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MicroGroup {
    /// Point queries.
    Point,
    /// Range queries and scans.
    Range,
    /// Writes.
    Write,
}

/// A microbenchmark step: the test, its range, and whether it runs before the writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MicroStep {
    /// The test.
    pub bench: MicroBench,
    /// Rows per range or IN-list (`_range=N` in the name).
    pub range: u32,
    /// The `.pre` run of a read test, before the writes.
    pub pre: bool,
}

const NAMES: [(MicroBench, &str); 22] = [
    (MicroBench::HotPoints, "hot-points"),
    (MicroBench::PointQuery, "point-query"),
    (MicroBench::PointsCoveredPk, "points-covered-pk"),
    (MicroBench::PointsCoveredSi, "points-covered-si"),
    (MicroBench::PointsNotcoveredPk, "points-notcovered-pk"),
    (MicroBench::PointsNotcoveredSi, "points-notcovered-si"),
    (MicroBench::RandomPoints, "random-points"),
    (MicroBench::RangeCoveredPk, "range-covered-pk"),
    (MicroBench::RangeCoveredSi, "range-covered-si"),
    (MicroBench::RangeNotcoveredPk, "range-notcovered-pk"),
    (MicroBench::RangeNotcoveredSi, "range-notcovered-si"),
    (MicroBench::ReadOnly, "read-only"),
    (MicroBench::Scan, "scan"),
    (MicroBench::Delete, "delete"),
    (MicroBench::Insert, "insert"),
    (MicroBench::ReadWrite, "read-write"),
    (MicroBench::UpdateIndex, "update-index"),
    (MicroBench::UpdateInlist, "update-inlist"),
    (MicroBench::UpdateNonindex, "update-nonindex"),
    (MicroBench::UpdateOne, "update-one"),
    (MicroBench::UpdateZipf, "update-zipf"),
    (MicroBench::WriteOnly, "write-only"),
];

impl MicroBench {
    /// Its published name.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(b, _)| *b == self)
            .map_or("?", |(_, n)| n)
    }

    /// Whether it only reads (and so also runs as `.pre`, before the writes).
    pub fn reads_only(self) -> bool {
        self.group() != MicroGroup::Write
    }

    /// Its group in the report.
    pub fn group(self) -> MicroGroup {
        use MicroBench::*;
        match self {
            HotPoints | PointQuery | PointsCoveredPk | PointsCoveredSi | PointsNotcoveredPk
            | PointsNotcoveredSi | RandomPoints => MicroGroup::Point,
            RangeCoveredPk | RangeCoveredSi | RangeNotcoveredPk | RangeNotcoveredSi | ReadOnly
            | Scan => MicroGroup::Range,
            Delete | Insert | ReadWrite | UpdateIndex | UpdateInlist | UpdateNonindex
            | UpdateOne | UpdateZipf | WriteOnly => MicroGroup::Write,
        }
    }
}

impl MicroStep {
    /// The published suite in its published order: the `.pre` read tests, the writes, then
    /// the read tests again.
    pub fn suite() -> Vec<MicroStep> {
        use MicroBench::*;
        let reads: [(MicroBench, &[u32]); 12] = [
            (HotPoints, &[100]),
            (PointQuery, &[100]),
            (PointsCoveredPk, &[100]),
            (PointsCoveredSi, &[100]),
            (PointsNotcoveredPk, &[100]),
            (PointsNotcoveredSi, &[100]),
            (RandomPoints, &[1000, 100, 10]),
            (RangeCoveredPk, &[100]),
            (RangeCoveredSi, &[100]),
            (RangeNotcoveredPk, &[100]),
            (RangeNotcoveredSi, &[100]),
            (ReadOnly, &[10000, 100, 10]),
        ];
        let writes: [(MicroBench, &[u32]); 10] = [
            (Delete, &[100]),
            (Insert, &[100]),
            (ReadWrite, &[100, 10]),
            (UpdateIndex, &[100]),
            (UpdateInlist, &[100]),
            (UpdateNonindex, &[100]),
            (UpdateOne, &[100]),
            (UpdateZipf, &[100]),
            (WriteOnly, &[10000]),
            (Scan, &[100]),
        ];
        let expand = |list: &[(MicroBench, &[u32])], pre: bool| -> Vec<MicroStep> {
            list.iter()
                .flat_map(|(bench, ranges)| {
                    ranges.iter().map(move |&range| MicroStep {
                        bench: *bench,
                        range,
                        pre,
                    })
                })
                .collect()
        };
        // hot-points runs once, first; scan runs once, after the writes.
        let mut out: Vec<MicroStep> = expand(&reads, true)
            .into_iter()
            .filter(|s| s.bench != HotPoints)
            .collect();
        out.insert(
            0,
            MicroStep {
                bench: HotPoints,
                range: 100,
                pre: false,
            },
        );
        out.extend(expand(&writes, false));
        out.extend(
            expand(&reads, false)
                .into_iter()
                .filter(|s| s.bench != HotPoints),
        );
        out
    }

    /// Position in the published report: point queries, range queries, writes; by name
    /// within a group, `.pre` first, longer ranges first.
    pub fn report_order(self) -> u32 {
        let mut all = MicroStep::suite();
        all.sort_by_key(|s| {
            (
                s.bench.group() as u8,
                s.bench.name(),
                !s.pre,
                std::cmp::Reverse(s.range),
            )
        });
        all.iter()
            .position(|s| *s == self)
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(u32::MAX)
    }

    /// Parse `NAME[.pre]_range=N`.
    pub fn parse(s: &str) -> Option<MicroStep> {
        let (head, range) = s.split_once("_range=")?;
        let range: u32 = range.parse().ok().filter(|r| *r > 0)?;
        let (name, pre) = match head.strip_suffix(".pre") {
            Some(n) => (n, true),
            None => (head, false),
        };
        let bench = NAMES.iter().find(|(_, n)| *n == name)?.0;
        if pre && !bench.reads_only() {
            return None;
        }
        Some(MicroStep { bench, range, pre })
    }

    /// Whether its throughput counts rows (a scan) rather than operations.
    pub fn counts_rows(self) -> bool {
        self.bench == MicroBench::Scan
    }
}

impl fmt::Display for MicroStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pre = if self.pre { ".pre" } else { "" };
        write!(f, "{}{pre}_range={}", self.bench.name(), self.range)
    }
}

/// The kinds of statement the microbenchmarks send; each backend has the SQL of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MicroStatementKind {
    /// `SELECT c FROM t WHERE id = ?`
    PointC,
    /// `SELECT id FROM t WHERE id IN (...)`
    InPkCovered,
    /// `SELECT k FROM t WHERE k IN (...)`
    InSiCovered,
    /// `SELECT c FROM t WHERE id IN (...)`
    InPkNotcovered,
    /// `SELECT c FROM t WHERE k IN (...)`
    InSiNotcovered,
    /// `SELECT id, k, c, pad FROM t WHERE k IN (...)`
    InSiRows,
    /// `SELECT id, k, c, pad FROM t WHERE id IN (...)`
    InPkRows,
    /// `SELECT SUM(id) FROM t WHERE id BETWEEN ? AND ?`
    RangeSumPk,
    /// `SELECT SUM(k) FROM t WHERE k BETWEEN ? AND ?`
    RangeSumSi,
    /// `SELECT SUM(LENGTH(c)) FROM t WHERE id BETWEEN ? AND ?`
    RangeLenPk,
    /// `SELECT SUM(LENGTH(c)) FROM t WHERE k BETWEEN ? AND ?`
    RangeLenSi,
    /// `SELECT c FROM t WHERE id BETWEEN ? AND ?`
    RangeC,
    /// `SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?`
    RangeSumK,
    /// `SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c`
    RangeOrderC,
    /// `SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c`
    RangeDistinctC,
    /// `SELECT COUNT(*) FROM t WHERE LENGTH(pad) >= 0`: every row read.
    Scan,
    /// `UPDATE t SET k = k + 1 WHERE id = ?`
    UpdateK,
    /// `UPDATE t SET k = k + 1 WHERE id IN (...)`
    UpdateKIn,
    /// `UPDATE t SET c = ? WHERE id = ?`
    UpdateC,
    /// `DELETE FROM t WHERE id = ?`
    Delete,
    /// `INSERT INTO t (id, k, c, pad) VALUES (?, ?, ?, ?)`
    Insert,
    /// `BEGIN`
    Begin,
    /// `COMMIT`
    Commit,
}

/// One statement with its values.
#[derive(Clone, Debug, PartialEq)]
pub struct MicroStatement {
    /// Which statement.
    pub kind: MicroStatementKind,
    /// Its integer parameters in order (ids, `k` values, range bounds).
    pub ints: Vec<i32>,
    /// Its text parameter (`c` of an update, `c` and `pad` of an insert), in order.
    pub texts: Vec<String>,
}

impl MicroStatement {
    fn new(kind: MicroStatementKind, ints: Vec<i32>) -> Self {
        MicroStatement {
            kind,
            ints,
            texts: Vec::new(),
        }
    }
}

/// The values a loaded table holds: ids `1..=rows`, `k` uniform in `1..=rows`, `c` and `pad`
/// sysbench-like groups of digits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MicroTable {
    /// Rows loaded per table.
    pub rows: u32,
}

/// sysbench's `c`: 11 groups of 10 digits joined by `-` (119 characters).
pub fn c_value(rng: &mut Rng) -> String {
    digit_groups(rng, 11)
}

/// sysbench's `pad`: 5 groups of 10 digits joined by `-` (59 characters).
pub fn pad_value(rng: &mut Rng) -> String {
    digit_groups(rng, 5)
}

fn digit_groups(rng: &mut Rng, groups: usize) -> String {
    let mut s = String::with_capacity(groups * 11);
    for g in 0..groups {
        if g > 0 {
            s.push('-');
        }
        for _ in 0..10 {
            let d = u8::try_from(rng.below(10)).unwrap_or(0);
            s.push(char::from(b'0' + d));
        }
    }
    s
}

/// Builds the operations of one client of a microbenchmark from its own stream.
#[derive(Clone, Debug)]
pub struct MicroOps {
    step: MicroStep,
    table: MicroTable,
    rng: Rng,
    /// Next id this client inserts (`insert`): each client has its own range past the load.
    next_insert_id: i32,
    /// This client (0-based) and the number of clients: the rows a client deletes and
    /// re-inserts are its own (`id ≡ client + 1 mod clients`), so two clients never delete and
    /// re-insert the same row at once (on Postgres the second insert would then hit the
    /// first one's row).
    client: u32,
    clients: u32,
    zipf: Zipf,
}

impl MicroOps {
    /// The builder of `step` for client `client` of `clients`.
    pub fn new(step: MicroStep, table: MicroTable, rng: Rng, client: u32, clients: u32) -> Self {
        let first = i64::from(table.rows) + 1 + i64::from(client) * 100_000_000;
        MicroOps {
            step,
            table,
            rng,
            next_insert_id: i32::try_from(first).unwrap_or(i32::MAX),
            client,
            clients: clients.max(1),
            zipf: Zipf::new(table.rows, 0.99),
        }
    }

    fn id(&mut self) -> i32 {
        self.rng
            .below_i32(i32::try_from(self.table.rows).unwrap_or(i32::MAX))
            + 1
    }

    fn ids(&mut self, n: u32) -> Vec<i32> {
        (0..n).map(|_| self.id()).collect()
    }

    /// `[from, from + range - 1]` inside the loaded ids.
    fn bounds(&mut self) -> Vec<i32> {
        let rows = i32::try_from(self.table.rows).unwrap_or(i32::MAX);
        let range = i32::try_from(self.step.range).unwrap_or(i32::MAX).min(rows);
        let from = self.rng.below_i32(rows - range + 1) + 1;
        vec![from, from + range - 1]
    }

    /// The statements of the next operation.
    pub fn next_op(&mut self) -> Vec<MicroStatement> {
        use MicroBench as B;
        use MicroStatementKind as K;
        let range = self.step.range;
        match self.step.bench {
            B::HotPoints => {
                let hot = i32::try_from(range.min(self.table.rows))
                    .unwrap_or(1)
                    .max(1);
                let ids = (0..range).map(|_| self.rng.below_i32(hot) + 1).collect();
                vec![MicroStatement::new(K::InPkRows, ids)]
            }
            B::PointQuery => vec![MicroStatement::new(K::PointC, vec![self.id()])],
            B::PointsCoveredPk => vec![MicroStatement::new(K::InPkCovered, self.ids(range))],
            B::PointsCoveredSi => vec![MicroStatement::new(K::InSiCovered, self.ids(range))],
            B::PointsNotcoveredPk => {
                vec![MicroStatement::new(K::InPkNotcovered, self.ids(range))]
            }
            B::PointsNotcoveredSi => {
                vec![MicroStatement::new(K::InSiNotcovered, self.ids(range))]
            }
            B::RandomPoints => vec![MicroStatement::new(K::InSiRows, self.ids(range))],
            B::RangeCoveredPk => vec![MicroStatement::new(K::RangeSumPk, self.bounds())],
            B::RangeCoveredSi => vec![MicroStatement::new(K::RangeSumSi, self.bounds())],
            B::RangeNotcoveredPk => vec![MicroStatement::new(K::RangeLenPk, self.bounds())],
            B::RangeNotcoveredSi => vec![MicroStatement::new(K::RangeLenSi, self.bounds())],
            B::Scan => vec![MicroStatement::new(K::Scan, Vec::new())],
            B::ReadOnly => self.transaction(true, false),
            B::ReadWrite => self.transaction(true, true),
            B::WriteOnly => self.transaction(false, true),
            B::Delete => self.delete_insert(),
            B::Insert => {
                let id = self.next_insert_id;
                self.next_insert_id = self.next_insert_id.saturating_add(1);
                vec![self.insert_of(id)]
            }
            B::UpdateIndex => vec![MicroStatement::new(K::UpdateK, vec![self.id()])],
            B::UpdateInlist => vec![MicroStatement::new(K::UpdateKIn, self.ids(range))],
            B::UpdateNonindex => vec![self.update_c(None)],
            B::UpdateOne => vec![self.update_c(Some(1))],
            B::UpdateZipf => {
                let id = i32::try_from(self.zipf.sample(&mut self.rng)).unwrap_or(1);
                vec![self.update_c(Some(id))]
            }
        }
    }

    fn update_c(&mut self, id: Option<i32>) -> MicroStatement {
        let id = id.unwrap_or_else(|| self.id());
        MicroStatement {
            kind: MicroStatementKind::UpdateC,
            ints: vec![id],
            texts: vec![c_value(&mut self.rng)],
        }
    }

    fn insert_of(&mut self, id: i32) -> MicroStatement {
        let rows = i32::try_from(self.table.rows).unwrap_or(i32::MAX);
        let k = self.rng.below_i32(rows) + 1;
        MicroStatement {
            kind: MicroStatementKind::Insert,
            ints: vec![id, k],
            texts: vec![c_value(&mut self.rng), pad_value(&mut self.rng)],
        }
    }

    /// A random id of this client's own rows.
    fn own_id(&mut self) -> i32 {
        let slots = (self.table.rows / self.clients).max(1);
        let slot = self.rng.below(u64::from(slots));
        let id = u64::from(self.client % self.clients) + 1 + slot * u64::from(self.clients);
        i32::try_from(id.min(u64::from(self.table.rows))).unwrap_or(1)
    }

    /// Delete a random row of this client's and insert a row with the same id (sysbench's
    /// delete).
    fn delete_insert(&mut self) -> Vec<MicroStatement> {
        let id = self.own_id();
        vec![
            MicroStatement::new(MicroStatementKind::Delete, vec![id]),
            self.insert_of(id),
        ]
    }

    /// sysbench's transaction: the reads (10 point lookups and four ranges) and/or the writes
    /// (update-index, update-nonindex, delete and insert of one row).
    fn transaction(&mut self, reads: bool, writes: bool) -> Vec<MicroStatement> {
        use MicroStatementKind as K;
        let mut out = vec![MicroStatement::new(K::Begin, Vec::new())];
        if reads {
            for _ in 0..10 {
                out.push(MicroStatement::new(K::PointC, vec![self.id()]));
            }
            for kind in [K::RangeC, K::RangeSumK, K::RangeOrderC, K::RangeDistinctC] {
                out.push(MicroStatement::new(kind, self.bounds()));
            }
        }
        if writes {
            out.push(MicroStatement::new(K::UpdateK, vec![self.id()]));
            out.push(self.update_c(None));
            out.extend(self.delete_insert());
        }
        out.push(MicroStatement::new(K::Commit, Vec::new()));
        out
    }
}

/// Zipf-distributed ids in `1..=n` (rejection-inversion, Hörmann and Derflinger), so a few
/// rows take most updates.
#[derive(Clone, Debug)]
struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
}

impl Zipf {
    fn new(n: u32, s: f64) -> Zipf {
        let n = f64::from(n.max(1));
        let mut z = Zipf {
            n,
            s,
            h_x1: 0.0,
            h_n: 0.0,
        };
        z.h_x1 = z.h(1.5) - 1.0;
        z.h_n = z.h(n + 0.5);
        z
    }

    fn h(&self, x: f64) -> f64 {
        let e = 1.0 - self.s;
        if e.abs() < 1e-9 {
            x.ln()
        } else {
            (x.powf(e) - 1.0) / e
        }
    }

    fn h_inv(&self, x: f64) -> f64 {
        let e = 1.0 - self.s;
        if e.abs() < 1e-9 {
            x.exp()
        } else {
            (x * e + 1.0).powf(1.0 / e)
        }
    }

    fn sample(&self, rng: &mut Rng) -> u32 {
        loop {
            let u = self.h_n + rng.unit_f64() * (self.h_x1 - self.h_n);
            let x = self.h_inv(u);
            let k = x.round().clamp(1.0, self.n);
            if k - x <= 0.5 || u >= self.h(k + 0.5) - (-self.s * k.ln()).exp() {
                return u32::try_from(crate::stats::round_to_u64(k)).unwrap_or(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_has_the_published_names_in_order() {
        let names: Vec<String> = MicroStep::suite().iter().map(ToString::to_string).collect();
        assert_eq!(names[0], "hot-points_range=100");
        assert_eq!(names[1], "point-query.pre_range=100");
        assert!(names.contains(&"random-points.pre_range=1000".to_string()));
        assert!(names.contains(&"read-only_range=10000".to_string()));
        assert!(names.contains(&"write-only_range=10000".to_string()));
        let pos = |n: &str| names.iter().position(|x| x == n).unwrap();
        assert!(pos("read-only.pre_range=10") < pos("delete_range=100"));
        assert!(pos("update-zipf_range=100") < pos("point-query_range=100"));
        assert_eq!(names.len(), 42, "the published suite");
        for n in &names {
            assert_eq!(MicroStep::parse(n).unwrap().to_string(), *n);
        }
        assert!(MicroStep::parse("insert.pre_range=100").is_none());
        assert!(MicroStep::parse("nope_range=100").is_none());
        assert!(MicroStep::parse("scan").is_none());
    }

    #[test]
    fn operations_stay_inside_the_loaded_ids() {
        let table = MicroTable { rows: 500 };
        for step in MicroStep::suite() {
            let mut ops = MicroOps::new(step, table, Rng::for_stream(1, 0, 0), 0, 1);
            for _ in 0..50 {
                for s in ops.next_op() {
                    match s.kind {
                        MicroStatementKind::Insert if step.bench == MicroBench::Insert => {
                            assert!(s.ints[0] > 500);
                        }
                        MicroStatementKind::Begin
                        | MicroStatementKind::Commit
                        | MicroStatementKind::Scan => {}
                        _ => assert!(
                            s.ints.iter().all(|v| (1..=500).contains(v)),
                            "{step}: {s:?}"
                        ),
                    }
                }
            }
        }
    }

    #[test]
    fn zipf_favours_the_first_ids() {
        let z = Zipf::new(1000, 0.99);
        let mut rng = Rng::for_stream(3, 0, 0);
        let draws: Vec<u32> = (0..10_000).map(|_| z.sample(&mut rng)).collect();
        assert!(draws.iter().all(|d| (1..=1000).contains(d)));
        let ones = draws.iter().filter(|d| **d == 1).count();
        let top10 = draws.iter().filter(|d| **d <= 10).count();
        assert!(ones > 500, "{ones}");
        assert!(top10 > 2500, "{top10}");
    }

    #[test]
    fn clients_delete_and_reinsert_only_their_own_rows() {
        let table = MicroTable { rows: 1000 };
        let step = MicroStep::parse("delete_range=100").unwrap();
        for client in 0..3 {
            let mut ops = MicroOps::new(step, table, Rng::for_stream(1, client, 0), client, 3);
            for _ in 0..200 {
                let id = ops.next_op()[0].ints[0];
                assert_eq!((id - 1) % 3, i32::try_from(client).unwrap(), "{id}");
                assert!((1..=1000).contains(&id));
            }
        }
    }
}
