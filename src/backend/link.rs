//! A plain text-SQL link to a PostgreSQL or MySQL/MariaDB server, on ibench's own protocol
//! clients: for the statements that are neither the benchmark's operations nor a driver's
//! (setting up a replica, the replication heartbeat, the replication views). One statement at
//! a time, answers as text.

use std::time::Duration;

use super::mysql::config::MyConfig;
use super::mysql::wire::MyWire;
use super::postgres::config::PgConfig;
use super::postgres::wire::PgWire;
use super::wire::TextResult;
use crate::results::target::BackendKind;

/// One open text-SQL connection.
pub enum SqlLink {
    /// A PostgreSQL connection.
    Postgres(Box<PgWire>),
    /// A MySQL/MariaDB connection.
    Mysql(Box<MyWire>),
}

impl SqlLink {
    /// Open a connection to `url` (its `?password_file=` read), the login bounded by
    /// `connect_timeout`. The error is one line, with the URL's password masked.
    pub fn connect(url: &str, connect_timeout: Duration) -> Result<SqlLink, String> {
        let shown = crate::url::redact_url(url);
        let kind = BackendKind::of_url(url).filter(|k| *k != BackendKind::Sqlite);
        let kind = kind.ok_or_else(|| format!("{shown} is not a postgres:// or mysql:// URL"))?;
        let resolved =
            crate::url::resolve_password(url, None).map_err(|e| format!("{shown}: {e}"))?;
        match kind {
            BackendKind::Postgres => {
                let mut config =
                    PgConfig::from_url(&resolved).map_err(|e| format!("{shown}: {e}"))?;
                config.connect_timeout = Some(connect_timeout);
                let wire =
                    PgWire::connect(&config).map_err(|e| format!("cannot reach {shown}: {e}"))?;
                Ok(SqlLink::Postgres(Box::new(wire)))
            }
            _ => {
                let mut config =
                    MyConfig::from_url(&resolved).map_err(|e| format!("{shown}: {e}"))?;
                config.connect_timeout = Some(connect_timeout);
                let wire =
                    MyWire::connect(&config).map_err(|e| format!("cannot reach {shown}: {e}"))?;
                Ok(SqlLink::Mysql(Box::new(wire)))
            }
        }
    }

    /// Run one statement; its rows as text. The error is the server's or the connection's,
    /// one line.
    pub fn query(&mut self, sql: &str) -> Result<TextResult, String> {
        match self {
            SqlLink::Postgres(w) => w.query(sql).map_err(|e| e.to_string()),
            SqlLink::Mysql(w) => w.query(sql).map_err(|e| e.to_string()),
        }
    }

    /// The first column of the first row of `sql` (`None`: no row, or NULL).
    pub fn value(&mut self, sql: &str) -> Result<Option<String>, String> {
        Ok(self.query(sql)?.first().map(str::to_string))
    }

    /// The first row of `sql` as (column name, value) pairs; empty when there is no row.
    pub fn row(&mut self, sql: &str) -> Result<Vec<(String, Option<String>)>, String> {
        let result = self.query(sql)?;
        Ok(match result.rows.first() {
            Some(row) => result
                .columns
                .iter()
                .cloned()
                .zip(row.iter().cloned())
                .collect(),
            None => Vec::new(),
        })
    }
}

/// The value of column `name` in a row from [`SqlLink::row`] (`None`: no such column, or NULL).
pub fn column<'a>(row: &'a [(String, Option<String>)], name: &str) -> Option<&'a str> {
    row.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_is_found_by_name() {
        let row = vec![
            ("Seconds_Behind_Master".to_string(), Some("3".to_string())),
            ("Last_IO_Error".to_string(), None),
        ];
        assert_eq!(column(&row, "seconds_behind_master"), Some("3"));
        assert_eq!(column(&row, "Last_IO_Error"), None);
        assert_eq!(column(&row, "x"), None);
    }
}
