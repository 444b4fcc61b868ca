//! The settle phase on MySQL and MariaDB: `ANALYZE TABLE`, InnoDB's dirty pages written
//! back (its flushing settings raised for the while, then restored), MyRocks' compactions
//! waited out, its memtable flushed and level 0 compacted; each a [`SettleAction`] with its
//! time and outcome. [`super::MysqlDriver`]'s `settle` chooses which.

use std::time::{Duration, Instant};

use super::ER_UNKNOWN_SYSTEM_VARIABLE;
use super::wire::{MyWire, WireError};
use crate::backend::SettleAction;

/// How often settle polls the server's status.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// Dirty pages at or below this count mean the InnoDB flush is done.
const DIRTY_PAGES_DONE: u64 = 16;

/// Run `f` and record it as a settle action.
pub(super) fn timed(action: &str, f: impl FnOnce() -> Result<(), String>) -> SettleAction {
    let started = Instant::now();
    let result = f();
    SettleAction::done(action, started.elapsed().as_secs_f64(), result.err())
}

/// `ANALYZE TABLE t`; a row with `Msg_type` `error` counts as a failure.
pub(super) fn analyze_table(conn: &mut MyWire, table: &str) -> SettleAction {
    let sql = format!("ANALYZE TABLE {table}");
    timed(&sql, || {
        let rows = conn.query(&sql).map_err(|e| e.to_string())?.rows;
        let cell =
            |row: &[Option<String>], i: usize| row.get(i).cloned().flatten().unwrap_or_default();
        let errors: Vec<String> = rows
            .iter()
            .filter(|row| cell(row, 2).eq_ignore_ascii_case("error"))
            .map(|row| cell(row, 3))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    })
}

/// A global status value as a number.
fn global_status(conn: &mut MyWire, name: &str) -> Result<Option<u64>, WireError> {
    let result = conn.query(&format!("SHOW GLOBAL STATUS LIKE '{name}'"))?;
    Ok(result
        .rows
        .first()
        .and_then(|row| row.get(1).cloned().flatten())
        .and_then(|v| v.trim().parse().ok()))
}

/// Run a statement whose result does not matter; its error as text.
pub(super) fn query_drop(conn: &mut MyWire, sql: &str) -> Result<(), String> {
    conn.query(sql).map(drop).map_err(|e| e.to_string())
}

/// A setting's value during the forced flush, from its value before.
type SettingDuringFlush = fn(f64) -> f64;

/// The InnoDB settings the forced flush changes, in the order they are set (and restored in
/// reverse): each with its value during the flush from its value before. The dirty-page
/// targets drop to 0 (the low-water mark first: it may not exceed the percentage); the IO
/// capacity rises to at least 2,000 (its ceiling first: the capacity may not exceed it), at
/// which a default private MariaDB flushed the small profile's dirty pages in about 3 s
/// against 4-37 s at its default 200 (docs/method.md).
const FLUSH_SETTINGS: [(&str, SettingDuringFlush); 4] = [
    ("innodb_max_dirty_pages_pct_lwm", |_| 0.0),
    ("innodb_max_dirty_pages_pct", |_| 0.0),
    ("innodb_io_capacity_max", |v| v.max(4000.0)),
    ("innodb_io_capacity", |v| v.max(2000.0)),
];

/// Force InnoDB to write back its dirty pages: set [`FLUSH_SETTINGS`], poll
/// `Innodb_buffer_pool_pages_dirty` until about 0 or the deadline, and restore what was
/// changed whatever happened.
pub(super) fn flush_dirty_pages(conn: &mut MyWire, deadline: Instant) -> Vec<SettleAction> {
    let mut actions = Vec::new();
    let started = Instant::now();
    let names: Vec<&str> = FLUSH_SETTINGS.iter().map(|(n, _)| *n).collect();
    let read = format!("read {}", names.join(", "));
    let select = names
        .iter()
        .map(|n| format!("@@GLOBAL.{n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let old: Result<Vec<f64>, String> = conn
        .query(&format!("SELECT {select}"))
        .map_err(|e| e.to_string())
        .and_then(|r| {
            let row = r.rows.first().cloned().unwrap_or_default();
            (0..names.len())
                .map(|i| {
                    let text = row.get(i).cloned().flatten().unwrap_or_default();
                    text.trim()
                        .parse::<f64>()
                        .map_err(|_| format!("unexpected value '{text}' of {}", names[i]))
                })
                .collect()
        });
    let old = match old {
        Ok(v) => v,
        Err(e) => {
            actions.push(SettleAction::done(
                &read,
                started.elapsed().as_secs_f64(),
                Some(e),
            ));
            return actions;
        }
    };
    let during: Vec<(String, f64, f64)> = FLUSH_SETTINGS
        .iter()
        .zip(&old)
        .map(|((name, value), was)| ((*name).to_string(), value(*was), *was))
        .collect();
    let lower = format!(
        "SET GLOBAL {}",
        during
            .iter()
            .map(|(n, v, _)| format!("{n} = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut changed = 0;
    actions.push(timed(&lower, || {
        for (name, value, _) in &during {
            query_drop(conn, &format!("SET GLOBAL {name} = {value}"))?;
            changed += 1;
        }
        Ok(())
    }));

    if actions.last().is_some_and(|a| a.error.is_none()) {
        actions.push(wait_for_clean_pages(conn, deadline));
    }

    if changed > 0 {
        let back: Vec<&(String, f64, f64)> = during[..changed].iter().rev().collect();
        let restore = format!(
            "SET GLOBAL {}",
            back.iter()
                .map(|(n, _, was)| format!("{n} = {was}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        actions.push(timed(&restore, || {
            for (name, _, was) in &back {
                query_drop(conn, &format!("SET GLOBAL {name} = {was}"))?;
            }
            Ok(())
        }));
    }
    actions
}

/// Poll `Innodb_buffer_pool_pages_dirty` until about 0 or the deadline.
fn wait_for_clean_pages(conn: &mut MyWire, deadline: Instant) -> SettleAction {
    let started = Instant::now();
    let mut first = None;
    let mut last = None;
    let mut error = None;
    let mut unsettled = None;
    loop {
        match global_status(conn, "Innodb_buffer_pool_pages_dirty") {
            Ok(v) => {
                first = first.or(v);
                last = v;
            }
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
        if last.is_none_or(|n| n <= DIRTY_PAGES_DONE) {
            break;
        }
        if Instant::now() + POLL_INTERVAL > deadline {
            unsettled = Some(format!(
                "{} InnoDB dirty pages left",
                last.unwrap_or_default()
            ));
            break;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
    let show = |v: Option<u64>| v.map_or_else(|| "?".to_string(), |n| n.to_string());
    SettleAction {
        action: format!(
            "wait for InnoDB dirty pages to be flushed: {} -> {}",
            show(first),
            show(last)
        ),
        seconds: started.elapsed().as_secs_f64(),
        error,
        unsettled,
    }
}

/// Wait, within the deadline, until RocksDB has no compaction or memtable flush pending.
///
/// MariaDB 10.11 has no status variable for running compactions (no
/// `rocksdb_num_running_compactions`), so this polls the per column family properties
/// `COMPACTION_PENDING` and `MEM_TABLE_FLUSH_PENDING` of `information_schema.ROCKSDB_CFSTATS`
/// (RocksDB's `rocksdb.compaction-pending` and `rocksdb.mem-table-flush-pending`) plus the
/// status variable `Rocksdb_manual_compactions_running`.
pub(super) fn wait_for_compactions(conn: &mut MyWire, deadline: Instant) -> SettleAction {
    let started = Instant::now();
    let mut error = None;
    let mut unsettled = None;
    let mut polls = 0u32;
    loop {
        polls += 1;
        let pending = conn.query(
            "SELECT CAST(SUM(VALUE) AS CHAR) FROM information_schema.ROCKSDB_CFSTATS \
             WHERE STAT_TYPE IN ('COMPACTION_PENDING', 'MEM_TABLE_FLUSH_PENDING')",
        );
        let pending = match pending {
            Ok(v) => v
                .first()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0),
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        };
        let manual = match global_status(conn, "Rocksdb_manual_compactions_running") {
            Ok(v) => v.unwrap_or(0),
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        };
        if pending == 0 && manual == 0 {
            break;
        }
        if Instant::now() + POLL_INTERVAL > deadline {
            unsettled = Some(format!(
                "RocksDB compactions still pending ({pending} column families pending, \
                 {manual} manual compactions running)"
            ));
            break;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
    SettleAction {
        action: format!("wait until no RocksDB compaction is pending ({polls} polls)"),
        seconds: started.elapsed().as_secs_f64(),
        error,
        unsettled,
    }
}

/// Compact L0: `rocksdb_compact_lzero_now` where the server has it (MySQL with MyRocks), else
/// MariaDB's `rocksdb_force_flush_memtable_and_lzero_now`.
pub(super) fn compact_l0(conn: &mut MyWire) -> SettleAction {
    let first = timed("SET GLOBAL rocksdb_compact_lzero_now = 1", || {
        query_drop(conn, "SET GLOBAL rocksdb_compact_lzero_now = 1")
    });
    match &first.error {
        Some(e) if e.contains(&format!("ERROR {ER_UNKNOWN_SYSTEM_VARIABLE} ")) => timed(
            "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1",
            || {
                query_drop(
                    conn,
                    "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1",
                )
            },
        ),
        _ => first,
    }
}
