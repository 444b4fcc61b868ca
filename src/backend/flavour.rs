//! What flavours change in SQL. A flavour is a server that speaks a backend's protocol but
//! differs in some SQL (CockroachDB and YugabyteDB over `postgres://`, TiDB over
//! `mysql://`); the flavour itself (its family, its detection from the server's version
//! string, its DBMS name) is the record [`Flavour`] of `run.json`, and what it changes here
//! (the DDL, the delete form, the settle actions) stays inside the backend, never in the
//! runner.
//!
//! The differences written here are the documented ones (docs/backends.md); these servers
//! cannot be run on the test machines, so the SQL per flavour is checked by unit tests only.

use crate::results::target::Flavour;

impl Flavour {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::target::BackendKind;
    use clap::ValueEnum;

    /// Which operations of each flavour take its family's base SQL (PostgreSQL's, MySQL's),
    /// said flavour by flavour: the methods above give a flavour without an arm of its own the
    /// base's SQL, so a new flavour fails here until its line says which operations it takes
    /// from the base, and a flavour that gains or loses SQL of its own fails until its line
    /// is changed.
    #[test]
    fn each_flavour_says_which_operations_take_its_familys_sql() {
        // Each operation, the families whose driver asks the flavour for it, and its SQL.
        type Sql = fn(Flavour) -> String;
        let ops: [(&str, &[BackendKind], Sql); 3] = [
            ("primary key", &[BackendKind::Postgres], |f| {
                f.primary_key().to_string()
            }),
            ("delete of the oldest rows", &[BackendKind::Postgres], |f| {
                f.pg_delete_sql("t")
            }),
            (
                "settle",
                &[BackendKind::Postgres, BackendKind::Mysql],
                |f| f.has_engine_maintenance().to_string(),
            ),
        ];
        let declared: [(Flavour, &[&str]); 7] = [
            (Flavour::Postgres, &[]),
            (Flavour::Cockroachdb, &["primary key"]),
            (Flavour::Yugabytedb, &["delete of the oldest rows"]),
            (Flavour::Mysql, &[]),
            (Flavour::Mariadb, &["settle"]),
            (Flavour::Tidb, &[]),
            (Flavour::Sqlite, &[]),
        ];
        for &f in Flavour::value_variants() {
            let Some((_, says)) = declared.iter().find(|(d, _)| *d == f) else {
                panic!("{f}: say which operations take its family's SQL");
            };
            let base = Flavour::detect(f.family(), "");
            let takes: Vec<&str> = ops
                .iter()
                .filter(|(_, families, sql)| {
                    f != base && families.contains(&f.family()) && sql(f) == sql(base)
                })
                .map(|(name, _, _)| *name)
                .collect();
            assert_eq!(takes, *says, "{f} takes {base}'s SQL for these");
        }
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
