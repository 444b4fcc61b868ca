//! The statements that make and unmake a private PostgreSQL standby
//! (`replication::pair`, `replication::data_copy`; docs/replication.md), over a
//! [`SqlLink`] to the primary: its replication slot, `pg_stat_replication`'s view of the
//! standby, the synchronous setting, and the low-level backup API a file copy of the primary's
//! data runs under. The pair's life cycle (when each is sent, how long to wait) stays in
//! `src/replication/`; this file is the SQL. Errors are one line.

use crate::backend::link::{SqlLink, column};

/// A text literal, its quotes doubled.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Create the physical replication slot `slot`, reserving WAL from now.
pub fn create_slot(p: &mut SqlLink, slot: &str) -> Result<(), String> {
    p.query(&format!(
        "SELECT pg_create_physical_replication_slot({}, true)",
        literal(slot)
    ))
    .map(|_| ())
}

/// Drop the replication slot `slot` when the primary has it (an error while a walsender still
/// holds it).
pub fn drop_slot(p: &mut SqlLink, slot: &str) -> Result<(), String> {
    p.query(&format!(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = {}",
        literal(slot)
    ))
    .map(|_| ())
}

/// The `state` of the standby `name` in `pg_stat_replication` (`streaming`), `None` when it
/// is not connected.
pub fn stream_state(p: &mut SqlLink, name: &str) -> Result<Option<String>, String> {
    p.value(&format!(
        "SELECT state FROM pg_stat_replication WHERE application_name = {}",
        literal(name)
    ))
}

/// The `sync_state` of the standby `name` in `pg_stat_replication` (`sync`, `async`), `None`
/// when it is not connected.
pub fn sync_state(p: &mut SqlLink, name: &str) -> Result<Option<String>, String> {
    p.value(&format!(
        "SELECT sync_state FROM pg_stat_replication WHERE application_name = {}",
        literal(name)
    ))
}

/// The primary's `synchronous_standby_names` (empty: none).
pub fn synchronous_standby_names(p: &mut SqlLink) -> Result<String, String> {
    Ok(p.value("SHOW synchronous_standby_names")?
        .unwrap_or_default())
}

/// Name the standby `name` the primary's one synchronous standby, with `synchronous_commit =
/// remote_apply` (a commit returns once the standby applied it), and reload the config.
pub fn make_synchronous(p: &mut SqlLink, name: &str) -> Result<(), String> {
    for sql in [
        format!(
            "ALTER SYSTEM SET synchronous_standby_names = {}",
            literal(&format!("\"{name}\""))
        ),
        "ALTER SYSTEM SET synchronous_commit = 'remote_apply'".to_string(),
        "SELECT pg_reload_conf()".to_string(),
    ] {
        p.query(&sql)?;
    }
    Ok(())
}

/// Undo [`make_synchronous`]: the primary's `synchronous_standby_names` and
/// `synchronous_commit` back to its config's, the config reloaded.
pub fn reset_synchronous(p: &mut SqlLink) -> Result<(), String> {
    for sql in [
        "ALTER SYSTEM RESET synchronous_standby_names",
        "ALTER SYSTEM RESET synchronous_commit",
        "SELECT pg_reload_conf()",
    ] {
        p.query(sql)?;
    }
    Ok(())
}

/// The SQL of the low-level backup API of PostgreSQL `major`: how a backup starts and stops
/// (non-exclusive, so that it lives as long as its connection; a fast checkpoint).
fn backup_sql(major: u32, label: &str) -> (String, &'static str) {
    if major >= 15 {
        (
            format!("SELECT pg_backup_start({}, true)", literal(label)),
            "SELECT labelfile, spcmapfile FROM pg_backup_stop(true)",
        )
    } else if major >= 10 {
        (
            format!("SELECT pg_start_backup({}, true, false)", literal(label)),
            "SELECT labelfile, spcmapfile FROM pg_stop_backup(false, true)",
        )
    } else {
        (
            format!("SELECT pg_start_backup({}, true, false)", literal(label)),
            "SELECT labelfile, spcmapfile FROM pg_stop_backup(false)",
        )
    }
}

/// Start a non-exclusive backup labelled `label` on PostgreSQL `major`, with a fast
/// checkpoint: it lasts as long as the connection `p` (closing it ends the backup).
pub fn backup_start(p: &mut SqlLink, major: u32, label: &str) -> Result<(), String> {
    p.query(&backup_sql(major, label).0).map(|_| ())
}

/// Stop the backup [`backup_start`] began on `p`: the backup's label file and tablespace map
/// (each `None` when empty).
pub fn backup_stop(
    p: &mut SqlLink,
    major: u32,
) -> Result<(Option<String>, Option<String>), String> {
    let row = p.row(backup_sql(major, "").1)?;
    let text = |name| {
        column(&row, name)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    Ok((text("labelfile"), text("spcmapfile")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_major_has_its_backup_functions() {
        let (start, stop) = backup_sql(16, "l");
        assert_eq!(start, "SELECT pg_backup_start('l', true)");
        assert!(stop.contains("pg_backup_stop(true)"), "{stop}");
        let (start, stop) = backup_sql(12, "l");
        assert_eq!(start, "SELECT pg_start_backup('l', true, false)");
        assert!(stop.contains("pg_stop_backup(false, true)"), "{stop}");
        assert!(backup_sql(9, "l").1.contains("pg_stop_backup(false)"));
    }

    #[test]
    fn names_are_quoted_as_literals() {
        assert_eq!(literal("ibench_replica_1"), "'ibench_replica_1'");
        assert_eq!(literal("a'b"), "'a''b'");
    }
}
