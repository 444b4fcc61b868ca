//! The SQL of a failover: promoting a replica to a primary with the DBMS's own means, asking
//! a server whether it takes writes, and the audit's count of the ids ibench inserted.

use super::server_conn::{Dialect, ServerConn};
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

/// MariaDB's promotion, once the replica applied what it received ([`promote_mariadb`]):
/// stop the replica threads, forget the primary, take writes.
pub(crate) const MARIADB_PROMOTE_SQL: [&str; 3] = [
    "STOP SLAVE",
    "RESET SLAVE ALL",
    "SET GLOBAL read_only = OFF",
];

/// How long a MariaDB replica may take to apply the relay log it received before it is
/// promoted, when the caller gives no bound (`wait_seconds` 0).
const MARIADB_APPLY_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// How often the promotion asks whether the relay log is applied.
const MARIADB_APPLY_POLL: std::time::Duration = std::time::Duration::from_millis(50);

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
pub(crate) fn promote_postgres<D: Dialect>(
    c: &mut ServerConn<D>,
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
    if !truth(c.value(
        PG_IN_RECOVERY_SQL,
        "ask the replica whether it is a standby",
    )?) {
        return Err(BackendError::sql(
            "promote the replica",
            "it is not a standby (pg_is_in_recovery() is false): --replica-url must name a replica",
        ));
    }
    let done = c.value(
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
pub(crate) fn postgres_accepts_writes<D: Dialect>(c: &mut ServerConn<D>) -> BackendResult<bool> {
    Ok(!truth(c.value(
        PG_IN_RECOVERY_SQL,
        "ask the server whether it is a standby",
    )?))
}

/// Promote a MariaDB replica: stop receiving (`STOP SLAVE IO_THREAD`), wait until the SQL
/// thread applied every event the replica received (within `wait_seconds`, 60 s when 0),
/// then [`MARIADB_PROMOTE_SQL`]. `RESET SLAVE ALL` deletes the relay logs: a replica promoted
/// before it applied them would lose transactions it had received, and so that a
/// semi-synchronous primary acknowledged.
pub(crate) fn promote_mariadb<D: Dialect>(
    c: &mut ServerConn<D>,
    wait_seconds: u32,
) -> BackendResult<()> {
    let context = "promote the replica (STOP SLAVE IO_THREAD)";
    c.query("STOP SLAVE IO_THREAD", context)?;
    let bound = match wait_seconds {
        0 => MARIADB_APPLY_WAIT,
        s => std::time::Duration::from_secs(u64::from(s)),
    };
    let since = std::time::Instant::now();
    let context = "promote the replica (wait until it applied its relay log)";
    loop {
        let status = c.query("SHOW SLAVE STATUS", context)?;
        let column = |name: &str| {
            let i = status.columns.iter().position(|c| c == name)?;
            status.rows.first()?.get(i)?.clone()
        };
        match relay_log_applied(&column) {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => return Err(BackendError::sql(context, e)),
        }
        if since.elapsed() > bound {
            return Err(BackendError::sql(
                context,
                format!(
                    "it had not applied the events it received within {} s",
                    bound.as_secs()
                ),
            ));
        }
        std::thread::sleep(MARIADB_APPLY_POLL);
    }
    for sql in MARIADB_PROMOTE_SQL {
        c.query(sql, &format!("promote the replica ({sql})"))?;
    }
    Ok(())
}

/// From `SHOW SLAVE STATUS` (`column` reads one by name): whether the SQL thread executed
/// everything the I/O thread read from the primary's binary log (`Relay_Master_Log_File`
/// and `Exec_Master_Log_Pos` equal `Master_Log_File` and `Read_Master_Log_Pos`). An error
/// when it never will: no replication configured, or the SQL thread stopped.
pub(crate) fn relay_log_applied(column: &dyn Fn(&str) -> Option<String>) -> Result<bool, String> {
    let read = (column("Master_Log_File"), column("Read_Master_Log_Pos"));
    let exec = (
        column("Relay_Master_Log_File"),
        column("Exec_Master_Log_Pos"),
    );
    let (Some(_), Some(_)) = (&read.1, &exec.1) else {
        return Err("SHOW SLAVE STATUS is empty: it replicates from no primary".to_string());
    };
    if read == exec {
        return Ok(true);
    }
    if column("Slave_SQL_Running").as_deref() != Some("Yes") {
        let why = column("Last_SQL_Error").unwrap_or_default();
        return Err(format!(
            "its SQL thread is stopped before it applied what it received ({})",
            if why.is_empty() {
                "no error given"
            } else {
                why.as_str()
            }
        ));
    }
    Ok(false)
}

/// Whether a MariaDB server takes writes (`read_only` is off).
pub(crate) fn mariadb_accepts_writes<D: Dialect>(c: &mut ServerConn<D>) -> BackendResult<bool> {
    Ok(!truth(c.value(
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

    /// `SHOW SLAVE STATUS` as `relay_log_applied` reads it.
    fn status(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn a_mariadb_replica_is_promoted_only_once_its_relay_log_is_applied() {
        let behind = status(&[
            ("Master_Log_File", "binlog.000002"),
            ("Read_Master_Log_Pos", "9000"),
            ("Relay_Master_Log_File", "binlog.000002"),
            ("Exec_Master_Log_Pos", "4000"),
            ("Slave_SQL_Running", "Yes"),
        ]);
        assert_eq!(relay_log_applied(&behind), Ok(false));
        let other_file = status(&[
            ("Master_Log_File", "binlog.000003"),
            ("Read_Master_Log_Pos", "9000"),
            ("Relay_Master_Log_File", "binlog.000002"),
            ("Exec_Master_Log_Pos", "9000"),
            ("Slave_SQL_Running", "Yes"),
        ]);
        assert_eq!(relay_log_applied(&other_file), Ok(false));
        let applied = status(&[
            ("Master_Log_File", "binlog.000002"),
            ("Read_Master_Log_Pos", "9000"),
            ("Relay_Master_Log_File", "binlog.000002"),
            ("Exec_Master_Log_Pos", "9000"),
            ("Slave_SQL_Running", "No"),
        ]);
        assert_eq!(relay_log_applied(&applied), Ok(true));
        let stuck = status(&[
            ("Master_Log_File", "binlog.000002"),
            ("Read_Master_Log_Pos", "9000"),
            ("Relay_Master_Log_File", "binlog.000002"),
            ("Exec_Master_Log_Pos", "4000"),
            ("Slave_SQL_Running", "No"),
            ("Last_SQL_Error", "Duplicate entry"),
        ]);
        let e = relay_log_applied(&stuck).unwrap_err();
        assert!(
            e.contains("SQL thread is stopped") && e.contains("Duplicate entry"),
            "{e}"
        );
        assert!(relay_log_applied(&status(&[])).is_err());
    }
}
