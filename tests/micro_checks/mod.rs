//! The microbenchmark suite's checks, shared by the SQLite, Postgres and MariaDB tests: the
//! whole suite runs with tiny sizes, every microbenchmark does work, and the tables keep the
//! invariants the statements promise, read by the test's own SQL (`count` and `sum(k)` over
//! every table, passed in as `read`).

#![allow(dead_code)]

use ibench::results::options::{MicroSizes, Workload};
use ibench::results::{RunRecord, Status};
use ibench::runner::RunOptions;
use ibench::workload::steps::{StepName, parse_step_list};

use super::common::{run_and_read, small_options};

/// Tables and rows of the tiny suite.
pub const TABLES: u32 = 2;
pub const ROWS: u32 = 1000;

/// Options of a tiny microbenchmark run of `steps` (`None`: the whole suite).
pub fn micro_options(url: &str, tag: &str, steps: Option<&str>) -> RunOptions {
    let mut o = small_options(url, tag);
    o.workload = Workload::Micro;
    o.micro = MicroSizes {
        tables: TABLES,
        rows: ROWS,
        seconds: 0.2,
    };
    o.steps = match steps {
        Some(s) => parse_step_list(s).unwrap(),
        None => StepName::micro_list(),
    };
    o
}

/// (rows, sum of k) over every table, `count_and_sum` giving both for one table from the SQL
/// `SELECT COUNT(*), {sum_k} FROM sbtestN` (`sum_k`: the dialect's `COALESCE(SUM(k), 0)` as
/// a 64-bit integer).
pub fn rows_and_sum_k(
    sum_k: &str,
    mut count_and_sum: impl FnMut(&str) -> (i64, i64),
) -> (i64, i64) {
    (1..=TABLES)
        .map(|t| count_and_sum(&format!("SELECT COUNT(*), {sum_k} FROM sbtest{t}")))
        .fold((0, 0), |(rows, sum_k), (n, k)| (rows + n, sum_k + k))
}

fn ops_of(run: &RunRecord, step: &str) -> (u64, u64) {
    let s = run
        .steps
        .iter()
        .find(|s| s.name.to_string() == step)
        .unwrap_or_else(|| panic!("no step {step}"));
    let o = &s.ops["micro"];
    (o.ops, o.rows)
}

/// The whole suite with `clients` clients, then the writes that leave `k` alone or move it
/// by a known amount. `read` returns (rows, sum of k) over every table.
pub fn check_suite(url: &str, tag: &str, clients: u32, read: &dyn Fn() -> (i64, i64)) {
    let mut opts = micro_options(url, tag, None);
    opts.clients = clients;
    let (run, _) = run_and_read(opts);
    assert_eq!(run.status, Status::Completed);
    assert_eq!(run.steps.len(), 43, "m.load and the 42 microbenchmarks");
    for s in &run.steps {
        assert_eq!(s.status, Status::Completed, "{}: {:?}", s.name, s.error);
        assert!(s.throughput > 0.0, "{} did no work", s.name);
    }
    let load = &run.steps[0];
    assert_eq!(load.ops["insert"].rows, u64::from(TABLES * ROWS));
    // Every point lookup of point-query finds its row: ids 1..=ROWS are always there (a
    // delete is followed by the insert of the same id in the same operation).
    let (ops, rows) = ops_of(&run, "point-query_range=100");
    if clients == 1 {
        assert_eq!(ops, rows, "one row per point query");
    } else {
        // Another client's delete and re-insert of the same id may be under way.
        assert!(
            rows <= ops && rows * 10 >= ops * 9,
            "{rows} rows for {ops} point queries"
        );
    }
    // The scan counts every row of a table.
    let (count, _) = read();
    let (scans, scanned) = ops_of(&run, "scan_range=100");
    let (scans, scanned) = (
        i64::try_from(scans).unwrap(),
        i64::try_from(scanned).unwrap(),
    );
    assert!(
        scanned >= scans * i64::from(ROWS) && scanned <= scans * count,
        "{scans} scans counted {scanned} rows; tables hold {ROWS} to {count}"
    );
    // Only insert_range=100 adds rows; delete, read-write and write-only delete and insert.
    let (inserts, inserted) = ops_of(&run, "insert_range=100");
    assert_eq!(inserts, inserted, "one row per insert");
    assert_eq!(
        count,
        i64::from(TABLES * ROWS) + i64::try_from(inserts).unwrap(),
        "rows after the suite: the load plus the inserts"
    );

    // The updates: k moves by exactly what update-index and update-inlist changed; the others
    // change c only.
    let (count0, k0) = read();
    let steps = "update-nonindex_range=100,update-one_range=100,update-zipf_range=100,\
                 update-index_range=100,update-inlist_range=100";
    let mut opts = micro_options(url, &format!("{tag}-updates"), Some(steps));
    opts.clients = clients;
    let (run, _) = run_and_read(opts);
    let (count1, k1) = read();
    assert_eq!(count1, count0, "updates keep the row count");
    let (index_ops, index_rows) = ops_of(&run, "update-index_range=100");
    assert_eq!(index_ops, index_rows, "update-index changes one row");
    let (_, inlist_rows) = ops_of(&run, "update-inlist_range=100");
    assert_eq!(
        k1 - k0,
        i64::try_from(index_rows + inlist_rows).unwrap(),
        "sum(k) moves by the rows update-index and update-inlist changed, not by the others"
    );
}
