//! The SQL of a failover: promoting a replica to a primary with the DBMS's own means, asking
//! a server whether it takes writes, and the audit's count of the ids ibench inserted.

use super::text_sql::TextSql;
use super::{BackendError, BackendResult};

/// PostgreSQL's promotion (12 and later): `pg_promote(true, wait_seconds)` returns true once
/// the standby left recovery, false when it had not within `wait_seconds`; with 0,
/// `pg_promote(false)` only asks for it (the caller polls).
pub(crate) fn pg_promote_sql(wait_seconds: u32) -> String {
    if wait_seconds == 0 {
        "SELECT pg_promote(false)".to_string()
    } else {
        format!("SELECT pg_promote(true, {wait_seconds})")
    }
}

/// PostgreSQL: true while the server is a standby.
pub(crate) const PG_IN_RECOVERY_SQL: &str = "SELECT pg_is_in_recovery()";

/// MariaDB's promotion, first step: stop receiving (the primary is gone), then wait until the
/// SQL thread applied every event already received ([`relay_log_applied`]): semi-sync
/// acknowledges a commit once the replica *received* it, so `RESET SLAVE ALL` before the
/// relay log is applied would drop acknowledged transactions.
pub(crate) const MARIADB_STOP_RECEIVING_SQL: &str = "STOP SLAVE IO_THREAD";

/// The replica's status, read until the relay log is applied.
pub(crate) const MARIADB_STATUS_SQL: &str = "SHOW SLAVE STATUS";

/// MariaDB's promotion once the relay log is applied: stop the replica threads, forget the
/// primary, take writes.
pub(crate) const MARIADB_PROMOTE_SQL: [&str; 3] = [
    "STOP SLAVE",
    "RESET SLAVE ALL",
    "SET GLOBAL read_only = OFF",
];

/// How often the promotion reads the replica's status while it applies its relay log.
const APPLY_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// MariaDB: 1 while the server refuses writes of ordinary users.
pub(crate) const MARIADB_READ_ONLY_SQL: &str = "SELECT @@GLOBAL.read_only";

/// The audit's read, one statement so one snapshot: the table's smallest id, and the count
/// of the rows whose `transactionid` lies in `[lo, hi]` and not below it.
pub(crate) fn count_ids_between_sql(table: &str, lo: i64, hi: i64) -> String {
    format!(
        "SELECT (SELECT min(transactionid) FROM {table}), count(*) FROM {table} \
         WHERE transactionid BETWEEN {lo} AND {hi} \
         AND transactionid >= (SELECT min(transactionid) FROM {table})"
    )
}

/// The row of [`count_ids_between_sql`]: the smallest id (NULL for an empty table) and
/// the count.
pub(crate) fn lowest_and_count(
    row: Option<Vec<Option<String>>>,
    context: &str,
) -> BackendResult<(Option<i64>, u64)> {
    let bad = |what: &str| BackendError::sql(context, format!("unexpected answer: {what}"));
    let row = row.ok_or_else(|| bad("no row"))?;
    let lowest = match row.first().cloned().flatten() {
        Some(t) => Some(t.trim().parse::<i64>().map_err(|_| bad(&t))?),
        None => None,
    };
    let count = row
        .get(1)
        .cloned()
        .flatten()
        .ok_or_else(|| bad("no count"))?;
    let count = count.trim().parse::<u64>().map_err(|_| bad(&count))?;
    Ok((lowest, count))
}

/// Promote a PostgreSQL standby of `version_num` (`server_version_num`).
pub(crate) fn promote_postgres(
    c: &mut impl TextSql,
    version_num: i32,
    wait_seconds: u32,
) -> BackendResult<()> {
    if version_num < 120_000 {
        return Err(BackendError::sql(
            "promote the replica",
            format!(
                "PostgreSQL {version_num} has no pg_promote() (12 and later): promote it by hand with pg_ctl promote"
            ),
        ));
    }
    if !truth(c.value_text(
        PG_IN_RECOVERY_SQL,
        "ask the replica whether it is a standby",
    )?) {
        return Err(BackendError::sql(
            "promote the replica",
            "it is not a standby (pg_is_in_recovery() is false): --replica-url must name a replica",
        ));
    }
    let done = c.value_text(
        &pg_promote_sql(wait_seconds),
        "promote the replica (pg_promote)",
    )?;
    if truth(done) {
        Ok(())
    } else {
        Err(BackendError::sql(
            "promote the replica",
            format!("pg_promote() did not finish within {wait_seconds} s"),
        ))
    }
}

/// Whether a PostgreSQL server takes writes (it is not in recovery).
pub(crate) fn postgres_accepts_writes(c: &mut impl TextSql) -> BackendResult<bool> {
    Ok(!truth(c.value_text(
        PG_IN_RECOVERY_SQL,
        "ask the server whether it is a standby",
    )?))
}

/// Promote a MariaDB replica: stop receiving, wait (up to `wait_seconds`) until the relay
/// log is applied, then make it a primary.
pub(crate) fn promote_mariadb(c: &mut impl TextSql, wait_seconds: u32) -> BackendResult<()> {
    let context = "promote the replica";
    c.query_text(MARIADB_STOP_RECEIVING_SQL, context)?;
    let since = std::time::Instant::now();
    // "Read it all" counts when two polls in a row say it at the same executed position: the
    // state of a moment before the last events reached the relay log does not.
    let mut read_all_at: Option<Option<String>> = None;
    loop {
        let status = c.query_text(MARIADB_STATUS_SQL, context)?;
        let col = |name: &str| -> Option<String> {
            let i = status.columns.iter().position(|c| c == name)?;
            status.rows.first()?.get(i)?.clone()
        };
        match relay_log_applied(&col) {
            Ok(RelayLog::Applied) => break,
            Ok(RelayLog::ReadAll) if read_all_at == Some(col("Exec_Master_Log_Pos")) => break,
            Ok(RelayLog::ReadAll) => read_all_at = Some(col("Exec_Master_Log_Pos")),
            Ok(RelayLog::Applying) => read_all_at = None,
            Err(e) => return Err(BackendError::sql(context, e)),
        }
        if since.elapsed().as_secs() >= u64::from(wait_seconds) {
            return Err(BackendError::sql(
                context,
                format!("the replica had not applied its relay log within {wait_seconds} s"),
            ));
        }
        std::thread::sleep(APPLY_POLL);
    }
    for sql in MARIADB_PROMOTE_SQL {
        c.query_text(sql, &format!("promote the replica ({sql})"))?;
    }
    Ok(())
}

/// What the SQL thread's state (`Slave_SQL_Running_State`) says once it has read the whole
/// relay log: MariaDB's "Slave has read all relay log; waiting for more updates" (MySQL's
/// older "... waiting for the slave I/O thread to update it", newer "Replica has read ...").
const READ_ALL_RELAY_LOG: &str = "has read all relay log";

/// From `SHOW SLAVE STATUS` (a column by name), once the IO thread is stopped: whether the SQL
/// thread executed every event the IO thread received, or has read the whole relay log. The
/// second is the case of a primary lost while it sent a transaction: the relay log ends in a
/// part of an event group, which no replica applies, so `Exec_Master_Log_Pos` stays behind
/// `Read_Master_Log_Pos` for good; that transaction was never acknowledged (semi-sync
/// acknowledges a group the replica received whole), and the promotion rolls it back. An
/// error when the SQL thread stopped or the server is no replica.
fn relay_log_applied(col: &dyn Fn(&str) -> Option<String>) -> Result<RelayLog, String> {
    let read = (col("Master_Log_File"), col("Read_Master_Log_Pos"));
    let exec = (col("Relay_Master_Log_File"), col("Exec_Master_Log_Pos"));
    if read.0.is_none() {
        return Err("it is not a replica (SHOW SLAVE STATUS is empty)".into());
    }
    if col("Slave_SQL_Running").as_deref() != Some("Yes") {
        let why = col("Last_SQL_Error").unwrap_or_default();
        return Err(format!("its SQL thread is not running: {why}"));
    }
    let read_all = col("Slave_SQL_Running_State").is_some_and(|s| s.contains(READ_ALL_RELAY_LOG));
    Ok(if read == exec {
        RelayLog::Applied
    } else if read_all {
        RelayLog::ReadAll
    } else {
        RelayLog::Applying
    })
}

/// Where a stopped replica's SQL thread stands in its relay log.
#[derive(Debug, PartialEq, Eq)]
enum RelayLog {
    /// Every event the IO thread received is executed.
    Applied,
    /// The SQL thread has read the whole relay log, which ends in part of a transaction.
    ReadAll,
    /// Still applying.
    Applying,
}

/// Whether a MariaDB server takes writes (`read_only` is off).
pub(crate) fn mariadb_accepts_writes(c: &mut impl TextSql) -> BackendResult<bool> {
    Ok(!truth(c.value_text(
        MARIADB_READ_ONLY_SQL,
        "ask the server whether it is read-only",
    )?))
}

/// A boolean as the servers write it in text (`t`, `true`, `1`, `ON`).
fn truth(v: Option<String>) -> bool {
    v.is_some_and(|t| {
        matches!(
            t.trim().to_ascii_lowercase().as_str(),
            "t" | "true" | "1" | "on"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_booleans_read_as_text() {
        for t in ["t", "true", "1", "ON"] {
            assert!(truth(Some(t.into())), "{t}");
        }
        for f in ["f", "false", "0", "OFF", ""] {
            assert!(!truth(Some(f.into())), "{f}");
        }
        assert!(!truth(None));
        assert_eq!(pg_promote_sql(0), "SELECT pg_promote(false)");
        assert_eq!(pg_promote_sql(5), "SELECT pg_promote(true, 5)");
        assert!(count_ids_between_sql("pi1", 3, 9).contains("BETWEEN 3 AND 9"));
        let row = |a: Option<&str>, b: &str| Some(vec![a.map(String::from), Some(b.to_string())]);
        assert_eq!(
            lowest_and_count(row(Some("7"), "3"), "x").unwrap(),
            (Some(7), 3)
        );
        assert_eq!(lowest_and_count(row(None, "0"), "x").unwrap(), (None, 0));
        assert!(lowest_and_count(None, "x").is_err());
    }

    fn slave_status(
        exec: &'static str,
        sql: &'static str,
        state: &'static str,
    ) -> impl Fn(&str) -> Option<String> {
        move |name: &str| -> Option<String> {
            Some(
                match name {
                    "Master_Log_File" | "Relay_Master_Log_File" => "bin.000001",
                    "Read_Master_Log_Pos" => "900",
                    "Exec_Master_Log_Pos" => exec,
                    "Slave_SQL_Running" => sql,
                    "Slave_SQL_Running_State" => state,
                    _ => "",
                }
                .to_string(),
            )
        }
    }

    #[test]
    fn the_relay_log_is_applied_when_the_sql_thread_reached_what_was_read() {
        let applying = "Reading event from the relay log";
        assert_eq!(
            relay_log_applied(&slave_status("900", "Yes", applying)),
            Ok(RelayLog::Applied)
        );
        assert_eq!(
            relay_log_applied(&slave_status("400", "Yes", applying)),
            Ok(RelayLog::Applying)
        );
        assert!(relay_log_applied(&slave_status("400", "No", "")).is_err());
        assert!(relay_log_applied(&|_: &str| None).is_err());
    }

    #[test]
    fn a_relay_log_ending_in_part_of_a_transaction_is_applied_once_the_sql_thread_read_it_all() {
        // The primary was lost while it sent a transaction: the IO thread read to 900, the
        // last whole group ends at 400, and the SQL thread waits for the rest.
        let waiting = "Slave has read all relay log; waiting for more updates";
        assert_eq!(
            relay_log_applied(&slave_status("400", "Yes", waiting)),
            Ok(RelayLog::ReadAll)
        );
        let mysql = "Replica has read all relay log; waiting for more updates";
        assert_eq!(
            relay_log_applied(&slave_status("400", "Yes", mysql)),
            Ok(RelayLog::ReadAll)
        );
    }
}
