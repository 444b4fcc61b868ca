//! A PostgreSQL primary's physical replication slots as `pg_replication_slots` shows them,
//! read over a [`SqlLink`]: how much WAL each holds back (the bytes between
//! `pg_current_wal_lsn()` and its `restart_lsn`), and from PostgreSQL 13 on its `wal_status`
//! and `safe_wal_size` under `max_slot_wal_keep_size` (docs/replication.md). The run's
//! heartbeat reads its standby's slot once a second; `ibench server list` and `server stop`
//! read a primary's slots.

use crate::backend::link::{SqlLink, column};
use crate::results::replication::SlotReading;

/// The first major version with `max_slot_wal_keep_size`, `wal_status` and `safe_wal_size`.
pub const KEEP_SIZE_SINCE: u32 = 13;

/// The first major version with `invalidation_reason`.
const INVALIDATION_REASON_SINCE: u32 = 17;

/// The server's major version, from `server_version_num`.
pub fn major_version(link: &mut SqlLink) -> Result<u32, String> {
    link.value("SHOW server_version_num")?
        .and_then(|v| v.trim().parse::<u32>().ok())
        .map(super::major_of_version_num)
        .ok_or_else(|| "server_version_num is not a number".to_string())
}

/// The query of the physical slots (only `slot` when given), the columns in the order
/// [`read_slots`] reads them, for a server of major version `major`.
pub fn slots_sql(major: u32, slot: Option<&str>) -> String {
    let (status, safe) = if major >= KEEP_SIZE_SINCE {
        ("wal_status", "safe_wal_size::text")
    } else {
        ("NULL::text", "NULL::text")
    };
    let reason = if major >= INVALIDATION_REASON_SINCE {
        "invalidation_reason"
    } else {
        "NULL::text"
    };
    let only = slot.map_or(String::new(), |s| {
        format!(" AND slot_name = '{}'", s.replace('\'', "''"))
    });
    format!(
        "SELECT slot_name, {status}, {safe}, \
         pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint::text, active::text, {reason} \
         FROM pg_replication_slots WHERE slot_type = 'physical'{only} ORDER BY slot_name"
    )
}

/// The physical slots of the primary at `link` (only `slot` when given), of major version
/// `major`. Fails on a standby (`pg_current_wal_lsn()` cannot run during recovery).
pub fn read_slots(
    link: &mut SqlLink,
    major: u32,
    slot: Option<&str>,
) -> Result<Vec<SlotReading>, String> {
    let result = link.query(&slots_sql(major, slot))?;
    Ok(result.rows.iter().map(|row| reading_of(row)).collect())
}

/// One row of [`slots_sql`] as a reading.
fn reading_of(row: &[Option<String>]) -> SlotReading {
    let text = |i: usize| {
        row.get(i)
            .and_then(Option::as_deref)
            .filter(|v| !v.is_empty())
    };
    SlotReading {
        name: text(0).unwrap_or_default().to_string(),
        wal_status: text(1).map(str::to_string),
        safe_wal_size_bytes: text(2).and_then(|v| v.parse().ok()),
        // A restart_lsn ahead of the current one (never, but not ours to trust) holds nothing.
        retained_bytes: text(3)
            .and_then(|v| v.parse::<i64>().ok())
            .map(|b| u64::try_from(b).unwrap_or(0)),
        active: text(4) == Some("true"),
        invalidation_reason: text(5).map(str::to_string),
    }
}

/// The primary's `max_slot_wal_keep_size` in MB (`-1`: unbounded) and the file that set it
/// (empty when none did), 13 and later.
pub fn keep_size_setting(link: &mut SqlLink) -> Result<(String, String), String> {
    let row = link.row(
        "SELECT setting, coalesce(sourcefile, '') AS sourcefile FROM pg_settings WHERE name = 'max_slot_wal_keep_size'",
    )?;
    let setting = column(&row, "setting").unwrap_or("-1").to_string();
    let source = column(&row, "sourcefile").unwrap_or("").to_string();
    Ok((setting, source))
}

/// Set the primary's `max_slot_wal_keep_size` to `value` (`1024MB`, `-1`) with `ALTER
/// SYSTEM` and reload its configuration.
pub fn set_keep_size(link: &mut SqlLink, value: &str) -> Result<(), String> {
    link.query(&format!(
        "ALTER SYSTEM SET max_slot_wal_keep_size = '{}'",
        value.replace('\'', "''")
    ))?;
    link.query("SELECT pg_reload_conf()")?;
    Ok(())
}

/// The primary's `max_slot_wal_keep_size` as it shows it (`1MB`, `-1`), 13 and later.
pub fn keep_size(link: &mut SqlLink, major: u32) -> Option<String> {
    if major < KEEP_SIZE_SINCE {
        return None;
    }
    link.value("SHOW max_slot_wal_keep_size").ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_asks_what_the_version_has() {
        let old = slots_sql(12, None);
        assert!(old.contains("NULL::text, NULL::text,"), "{old}");
        assert!(!old.contains("wal_status"), "{old}");
        let new = slots_sql(15, Some("ibench_replica_1"));
        assert!(new.contains("wal_status, safe_wal_size::text,"), "{new}");
        assert!(new.ends_with("AND slot_name = 'ibench_replica_1' ORDER BY slot_name"));
        assert!(!new.contains("invalidation_reason"), "{new}");
        assert!(slots_sql(17, None).contains(", invalidation_reason FROM"));
        assert_eq!(super::super::major_of_version_num(150_004), 15);
        assert_eq!(super::super::major_of_version_num(100_023), 10);
    }

    #[test]
    fn a_row_reads_as_a_reading() {
        let row = |v: &[Option<&str>]| v.iter().map(|c| c.map(str::to_string)).collect::<Vec<_>>();
        let r = reading_of(&row(&[
            Some("s"),
            Some("unreserved"),
            Some("-4096"),
            Some("20971520"),
            Some("false"),
            None,
        ]));
        assert_eq!(r.name, "s");
        assert_eq!(r.wal_status.as_deref(), Some("unreserved"));
        assert_eq!(r.safe_wal_size_bytes, Some(-4096));
        assert_eq!(r.retained_bytes, Some(20_971_520));
        assert!(!r.active);
        let lost = reading_of(&row(&[
            Some("s"),
            Some("lost"),
            None,
            None,
            Some("f"),
            None,
        ]));
        assert!(lost.is_lost());
        assert_eq!(lost.retained_bytes, None);
        // Short or junk rows read as nothing, never a panic.
        let junk = reading_of(&row(&[Some("s"), None, Some("x")]));
        assert_eq!(junk.safe_wal_size_bytes, None);
    }
}
