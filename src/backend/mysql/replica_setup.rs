//! The statements that make and unmake a private MariaDB replica (`replication::pair`;
//! docs/replication.md), over a [`SqlLink`]: on the primary its binary log, its replication
//! user (made and dropped outside the binary log) and semi-synchronous replication; on the
//! replica `CHANGE MASTER TO`, `START SLAVE` and its replication threads. The pair's life
//! cycle (when each is sent, how long to wait) stays in `src/replication/`; this file is the
//! SQL. Errors are one line.

use crate::backend::link::{SqlLink, column};

/// Whether the primary at `p` writes a binary log (`@@log_bin`).
pub fn logs_binary(p: &mut SqlLink) -> Result<bool, String> {
    Ok(p.value("SELECT @@log_bin")?.as_deref() == Some("1"))
}

/// The tables outside the system schemas, `schema.table` joined by commas (`None`: none).
pub fn user_tables(p: &mut SqlLink) -> Result<Option<String>, String> {
    Ok(p
        .value(
            "SELECT GROUP_CONCAT(CONCAT(TABLE_SCHEMA, '.', TABLE_NAME)) FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')",
        )?
        .filter(|t| !t.is_empty()))
}

/// The primary's current GTID position (`@@gtid_binlog_pos`; empty before any write).
pub fn binlog_position(p: &mut SqlLink) -> Result<String, String> {
    Ok(p.value("SELECT @@gtid_binlog_pos")?.unwrap_or_default())
}

/// Make the replication user `user` (from 127.0.0.1, with `password`) on the primary, outside
/// its binary log.
pub fn create_replication_user(p: &mut SqlLink, user: &str, password: &str) -> Result<(), String> {
    for sql in [
        "SET sql_log_bin = 0".to_string(),
        format!("CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY '{password}'"),
        format!("GRANT REPLICATION SLAVE ON *.* TO '{user}'@'127.0.0.1'"),
    ] {
        p.query(&sql)?;
    }
    Ok(())
}

/// Drop the replication user `user` from the primary, outside its binary log.
pub fn drop_replication_user(p: &mut SqlLink, user: &str) -> Result<(), String> {
    p.query("SET sql_log_bin = 0")?;
    p.query(&format!("DROP USER IF EXISTS '{user}'@'127.0.0.1'"))?;
    Ok(())
}

/// Turn the primary's semi-synchronous replication on or off
/// (`rpl_semi_sync_master_enabled`).
pub fn set_semisync_primary(p: &mut SqlLink, on: bool) -> Result<(), String> {
    let value = if on { "ON" } else { "OFF" };
    p.query(&format!(
        "SET GLOBAL rpl_semi_sync_master_enabled = {value}"
    ))
    .map(|_| ())
}

/// The semi-synchronous replicas the primary counts (`Rpl_semi_sync_master_clients`).
pub fn semisync_clients(p: &mut SqlLink) -> Result<u32, String> {
    let row = p.row("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_clients'")?;
    Ok(column(&row, "Value")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// Point the replica at `r` at the primary on 127.0.0.1:`primary_port` from the GTID
/// `position`, as `user` with `password`, and start it.
pub fn follow(
    r: &mut SqlLink,
    primary_port: u16,
    (user, password): (&str, &str),
    position: &str,
) -> Result<(), String> {
    for sql in [
        format!("SET GLOBAL gtid_slave_pos = '{position}'"),
        format!(
            "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {primary_port}, MASTER_USER = '{user}', \
             MASTER_PASSWORD = '{password}', MASTER_USE_GTID = slave_pos"
        ),
        "START SLAVE".to_string(),
    ] {
        r.query(&sql)?;
    }
    Ok(())
}

/// The replica's replication threads as `SHOW SLAVE STATUS` shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaThreads {
    /// Both the I/O and the SQL thread run.
    pub running: bool,
    /// The last I/O or SQL error, when one is reported.
    pub error: Option<String>,
}

/// The replica's replication threads now.
pub fn replica_threads(r: &mut SqlLink) -> Result<ReplicaThreads, String> {
    let status = r.row("SHOW SLAVE STATUS")?;
    let running = |c| column(&status, c) == Some("Yes");
    let error = [
        column(&status, "Last_IO_Error"),
        column(&status, "Last_SQL_Error"),
    ]
    .into_iter()
    .flatten()
    .find(|e| !e.is_empty())
    .map(str::to_string);
    Ok(ReplicaThreads {
        running: running("Slave_IO_Running") && running("Slave_SQL_Running"),
        error,
    })
}
