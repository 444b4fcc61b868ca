//! Flavours: servers that speak a backend's protocol but differ in some SQL (CockroachDB and
//! YugabyteDB over `postgres://`, TiDB over `mysql://`). A flavour is detected from the
//! server's version string or chosen with `--flavour`; it changes the DDL, the delete form,
//! the settle actions and the DBMS name, inside the backend, never in the runner.
//!
//! The differences written here are the documented ones (docs/backends.md); these servers
//! cannot be run on the test machines, so the SQL per flavour is checked by unit tests only.

use serde::{Deserialize, Serialize};

use super::BackendKind;

/// A server of one backend family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Flavour {
    /// PostgreSQL itself.
    Postgres,
    /// CockroachDB (Postgres wire protocol).
    Cockroachdb,
    /// YugabyteDB YSQL (Postgres wire protocol).
    Yugabytedb,
    /// Oracle MySQL.
    Mysql,
    /// MariaDB.
    Mariadb,
    /// TiDB (MySQL wire protocol).
    Tidb,
    /// SQLite, embedded.
    Sqlite,
}

impl Flavour {
    /// The backend family whose driver serves it.
    pub fn family(self) -> BackendKind {
        match self {
            Flavour::Postgres | Flavour::Cockroachdb | Flavour::Yugabytedb => BackendKind::Postgres,
            Flavour::Mysql | Flavour::Mariadb | Flavour::Tidb => BackendKind::Mysql,
            Flavour::Sqlite => BackendKind::Sqlite,
        }
    }

    /// The flavour a server of `family` is, from its version string (Postgres `version()`,
    /// MySQL `VERSION()`).
    pub fn detect(family: BackendKind, version: &str) -> Flavour {
        let v = version.to_ascii_lowercase();
        match family {
            BackendKind::Postgres if v.contains("cockroachdb") => Flavour::Cockroachdb,
            BackendKind::Postgres if v.contains("-yb-") || v.contains("yugabyte") => {
                Flavour::Yugabytedb
            }
            BackendKind::Postgres => Flavour::Postgres,
            BackendKind::Mysql if v.contains("tidb") => Flavour::Tidb,
            BackendKind::Mysql if v.contains("mariadb") => Flavour::Mariadb,
            BackendKind::Mysql => Flavour::Mysql,
            BackendKind::Sqlite => Flavour::Sqlite,
        }
    }

    /// The product name reports show.
    pub fn dbms(self) -> &'static str {
        match self {
            Flavour::Postgres => "PostgreSQL",
            Flavour::Cockroachdb => "CockroachDB",
            Flavour::Yugabytedb => "YugabyteDB",
            Flavour::Mysql => "MySQL",
            Flavour::Mariadb => "MariaDB",
            Flavour::Tidb => "TiDB",
            Flavour::Sqlite => "SQLite",
        }
    }

    /// The primary key clause of `transactionid`. YugabyteDB hash-shards a primary key by
    /// default, which turns the deleter's "oldest rows" and the PK-ordered load into scans
    /// of every tablet: ask for range sharding.
    pub fn primary_key(self) -> &'static str {
        match self {
            Flavour::Yugabytedb => "PRIMARY KEY (transactionid ASC)",
            _ => "PRIMARY KEY",
        }
    }

    /// The delete of the `$2` oldest rows from `$1` on, for the Postgres family. PostgreSQL
    /// has no `DELETE … LIMIT`, so it deletes through a subquery; CockroachDB has
    /// `DELETE … ORDER BY … LIMIT` and plans it as one ordered range scan.
    pub fn pg_delete_sql(self, table: &str) -> String {
        match self {
            Flavour::Cockroachdb => format!(
                "DELETE FROM {table} WHERE transactionid >= $1 ORDER BY transactionid LIMIT $2"
            ),
            // `= ANY(ARRAY(...))`: the ids are picked once, before any row is deleted. With
            // `IN (SELECT ... LIMIT n)` a row another deleter removed first makes PostgreSQL
            // re-check the subquery, and the statement could delete more than n rows (a
            // shared table lost rows under 8 deleters); now it deletes at most n, and the
            // deleter makes up a short count itself.
            _ => format!(
                "DELETE FROM {table} WHERE transactionid = ANY(ARRAY(SELECT transactionid \
                 FROM {table} WHERE transactionid >= $1 ORDER BY transactionid LIMIT $2))"
            ),
        }
    }

    /// Whether the settle phase is the engine's own maintenance (PostgreSQL: VACUUM and
    /// CHECKPOINT; InnoDB: a dirty-page flush; MyRocks: compactions). CockroachDB, YugabyteDB
    /// and TiDB have none of those statements: they only refresh statistics (`ANALYZE`).
    pub fn has_engine_maintenance(self) -> bool {
        !matches!(
            self,
            Flavour::Cockroachdb | Flavour::Yugabytedb | Flavour::Tidb
        )
    }
}

impl std::fmt::Display for Flavour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.dbms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flavours_are_told_from_the_version_string() {
        let pg = BackendKind::Postgres;
        let my = BackendKind::Mysql;
        assert_eq!(
            Flavour::detect(pg, "PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64"),
            Flavour::Postgres
        );
        assert_eq!(
            Flavour::detect(pg, "CockroachDB CCL v24.1.0 (x86_64-pc-linux-gnu)"),
            Flavour::Cockroachdb
        );
        assert_eq!(
            Flavour::detect(pg, "PostgreSQL 11.2-YB-2.20.1.0-b0 on x86_64-pc-linux-gnu"),
            Flavour::Yugabytedb
        );
        assert_eq!(Flavour::detect(my, "8.0.11-TiDB-v7.5.0"), Flavour::Tidb);
        assert_eq!(
            Flavour::detect(my, "10.11.19-MariaDB-0+deb12u1"),
            Flavour::Mariadb
        );
        assert_eq!(Flavour::detect(my, "8.0.36"), Flavour::Mysql);
        assert_eq!(Flavour::Tidb.family(), BackendKind::Mysql);
        assert_eq!(Flavour::Yugabytedb.family(), BackendKind::Postgres);
    }

    #[test]
    fn the_delete_form_and_primary_key_differ_per_flavour() {
        assert!(
            Flavour::Postgres
                .pg_delete_sql("pi1")
                .contains("= ANY(ARRAY(SELECT transactionid")
        );
        assert_eq!(
            Flavour::Cockroachdb.pg_delete_sql("pi1"),
            "DELETE FROM pi1 WHERE transactionid >= $1 ORDER BY transactionid LIMIT $2"
        );
        assert_eq!(
            Flavour::Yugabytedb.primary_key(),
            "PRIMARY KEY (transactionid ASC)"
        );
        assert_eq!(Flavour::Postgres.primary_key(), "PRIMARY KEY");
        assert!(Flavour::Postgres.has_engine_maintenance());
        assert!(!Flavour::Cockroachdb.has_engine_maintenance());
        assert!(!Flavour::Tidb.has_engine_maintenance());
    }
}
