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

/// MariaDB's promotion: stop the replica threads, forget the primary, take writes.
pub(crate) const MARIADB_PROMOTE_SQL: [&str; 3] = [
    "STOP SLAVE",
    "RESET SLAVE ALL",
    "SET GLOBAL read_only = OFF",
];

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

/// Promote a MariaDB replica.
pub(crate) fn promote_mariadb<D: Dialect>(c: &mut ServerConn<D>) -> BackendResult<()> {
    for sql in MARIADB_PROMOTE_SQL {
        c.query(sql, &format!("promote the replica ({sql})"))?;
    }
    Ok(())
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
}
