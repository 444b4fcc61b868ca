//! The DBMS's statistics at one moment, as the backends read them over SQL and the sampler
//! saves them at every step end: `stats/<step>.json`. This module owns the file's keys; the
//! backends fill a [`Statistics`], and the sampler's counters (`sampler::dbms`) and the
//! report's evidence of a slowdown (`report::shift`) read it through the accessors here.
//! The views' rows stay as the server sent them (their columns differ by version); a part
//! that could not be read holds `{"error": "..."}` in its place. docs/results.md,
//! "`stats/<step>.json`".

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// One row of a PostgreSQL statistics view: column → value, as the server sent it.
pub type Row = serde_json::Map<String, Value>;

/// A part of a snapshot: what was read, or why it could not be.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Part<T> {
    /// It could not be read: `{"error": "..."}`.
    Failed {
        /// Why.
        error: String,
    },
    /// What was read.
    Read(T),
}

impl<T> Part<T> {
    /// A part from a reading, its error written as its text.
    pub fn of<E: std::fmt::Display>(r: Result<T, E>) -> Part<T> {
        match r {
            Ok(v) => Part::Read(v),
            Err(e) => Part::Failed {
                error: e.to_string(),
            },
        }
    }

    /// What was read, or why not.
    pub fn read(&self) -> Result<&T, &str> {
        match self {
            Part::Read(v) => Ok(v),
            Part::Failed { error } => Err(error),
        }
    }

    fn error(&self) -> Option<&str> {
        self.read().err()
    }
}

/// A PostgreSQL statistics view the snapshot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PgView {
    /// `pg_stat_database`.
    Database,
    /// `pg_stat_bgwriter`.
    Bgwriter,
    /// `pg_stat_checkpointer` (17 and later).
    Checkpointer,
    /// `pg_stat_wal` (14 and later).
    Wal,
    /// `pg_stat_io` (16 and later).
    Io,
    /// `pg_stat_user_tables`.
    UserTables,
    /// `pg_stat_user_indexes`.
    UserIndexes,
    /// `pg_statio_user_tables`.
    StatioUserTables,
}

impl PgView {
    /// Every view, in the order a backend reads them.
    pub const ALL: [PgView; 8] = [
        PgView::Database,
        PgView::Bgwriter,
        PgView::Checkpointer,
        PgView::Wal,
        PgView::Io,
        PgView::UserTables,
        PgView::UserIndexes,
        PgView::StatioUserTables,
    ];

    /// Its name, the key in the file.
    pub const fn name(self) -> &'static str {
        match self {
            PgView::Database => "pg_stat_database",
            PgView::Bgwriter => "pg_stat_bgwriter",
            PgView::Checkpointer => "pg_stat_checkpointer",
            PgView::Wal => "pg_stat_wal",
            PgView::Io => "pg_stat_io",
            PgView::UserTables => "pg_stat_user_tables",
            PgView::UserIndexes => "pg_stat_user_indexes",
            PgView::StatioUserTables => "pg_statio_user_tables",
        }
    }

    /// The `server_version_num` it came in (0: every supported version has it).
    pub const fn since(self) -> i32 {
        match self {
            PgView::Checkpointer => 170_000,
            PgView::Wal => 140_000,
            PgView::Io => 160_000,
            _ => 0,
        }
    }
}

/// PostgreSQL's own facts beside the views (PostgreSQL itself, not its flavours).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PgServer {
    /// The run's database.
    pub current_database: Option<String>,
    /// Whether the server is a standby in recovery.
    pub in_recovery: Option<bool>,
    /// The WAL insert position in bytes (`null` on a standby).
    pub wal_insert_lsn_bytes: Option<serde_json::Number>,
}

/// A PostgreSQL snapshot: one key per view, each the view's rows, and `server`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PgStatistics {
    /// View name → its rows, or why they could not be read.
    #[serde(flatten)]
    pub views: BTreeMap<String, Part<Vec<Row>>>,
    /// The database and the WAL position; absent for the flavours and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Part<PgServer>>,
}

impl PgStatistics {
    /// A view's rows, or why there are none.
    pub fn rows(&self, view: PgView) -> Result<&[Row], String> {
        let name = view.name();
        match self.views.get(name) {
            Some(Part::Read(rows)) => Ok(rows),
            Some(Part::Failed { error }) => Err(format!("{name} could not be read: {error}")),
            None if view.since() > 0 => Err(format!(
                "{name} came in PostgreSQL {}: this server has none",
                view.since() / 10_000
            )),
            None => Err(format!("the statistics hold no {name}")),
        }
    }

    /// The sum of `column` over the rows of `view` that `keep` selects; a `null` (an
    /// operation a context cannot do, in pg_stat_io) counts 0. An error when no row has the
    /// column.
    pub fn column_sum(
        &self,
        view: PgView,
        column: &str,
        keep: impl Fn(&Row) -> bool,
    ) -> Result<f64, String> {
        let rows = self.rows(view)?;
        if !rows.iter().any(|r| r.get(column).is_some()) {
            return Err(format!(
                "{} has no column {column} on this server",
                view.name()
            ));
        }
        Ok(rows
            .iter()
            .filter(|r| keep(r))
            .filter_map(|r| r.get(column).and_then(number))
            .sum())
    }

    /// The server's own facts, or why there are none (a standby writes no WAL of its own).
    pub fn server(&self) -> Result<&PgServer, String> {
        let server = self
            .server
            .as_ref()
            .ok_or("this server does not report its WAL position and database")?
            .read()
            .map_err(|e| format!("the WAL position could not be read: {e}"))?;
        if server.in_recovery == Some(true) {
            return Err("the server is a standby in recovery: it writes no WAL of its own".into());
        }
        Ok(server)
    }

    /// The WAL insert position, bytes.
    pub fn wal_insert_bytes(&self) -> Result<f64, String> {
        let n = self
            .server()?
            .wal_insert_lsn_bytes
            .as_ref()
            .ok_or("the statistics hold no wal_insert_lsn_bytes")?;
        n.as_f64()
            .ok_or_else(|| format!("the WAL position {n} is not a number"))
    }

    /// The run's database.
    pub fn current_database(&self) -> Result<String, String> {
        self.server()?
            .current_database
            .clone()
            .ok_or_else(|| "the statistics hold no current_database".to_string())
    }
}

/// One row of `SHOW ENGINE … STATUS`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineStatus {
    /// `Name`.
    pub name: Option<String>,
    /// `Status`: the engine's report, as text.
    pub status: Option<String>,
    /// `Type`: the engine.
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// A MySQL or MariaDB snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MyStatistics {
    /// `SHOW GLOBAL STATUS`: name → value.
    pub global_status: Part<BTreeMap<String, Option<String>>>,
    /// `SHOW ENGINE INNODB STATUS`, when InnoDB is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub innodb_status: Option<Part<Vec<EngineStatus>>>,
    /// `SHOW ENGINE ROCKSDB STATUS`, when MyRocks is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rocksdb_status: Option<Part<Vec<EngineStatus>>>,
}

impl MyStatistics {
    /// A `SHOW GLOBAL STATUS` value, or why there is none.
    pub fn status(&self, name: &str) -> Result<f64, String> {
        let all = self
            .global_status
            .read()
            .map_err(|e| format!("SHOW GLOBAL STATUS failed: {e}"))?;
        let v = all
            .get(name)
            .ok_or_else(|| format!("the server has no status variable {name}"))?;
        v.as_deref()
            .and_then(|t| t.trim().parse().ok())
            .ok_or_else(|| format!("{name} is not a number: {}", Value::from(v.clone())))
    }

    /// InnoDB's history list length: the status variable (MariaDB), else the line of `SHOW
    /// ENGINE INNODB STATUS` (MySQL).
    pub fn history_list_length(&self) -> Result<f64, String> {
        self.status("Innodb_history_list_length").or_else(|e| {
            let text = self
                .innodb_status
                .as_ref()
                .and_then(|p| p.read().ok())
                .and_then(|rows| rows.first())
                .and_then(|r| r.status.as_deref())
                .ok_or(e)?;
            text.lines()
                .find_map(|l| l.trim().strip_prefix("History list length "))
                .and_then(|n| n.trim().parse().ok())
                .ok_or_else(|| "SHOW ENGINE INNODB STATUS has no history list length".to_string())
        })
    }
}

/// What `stats/<step>.json` holds: one DBMS's statistics at one moment.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Statistics {
    /// PostgreSQL and its flavours.
    Postgres(PgStatistics),
    /// MySQL and MariaDB.
    Mysql(MyStatistics),
}

impl<'de> Deserialize<'de> for Statistics {
    /// A MySQL snapshot has `global_status`; any other object is PostgreSQL's.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let parsed = if v.get("global_status").is_some() {
            serde_json::from_value(v).map(Statistics::Mysql)
        } else {
            serde_json::from_value(v).map(Statistics::Postgres)
        };
        parsed.map_err(serde::de::Error::custom)
    }
}

impl Statistics {
    /// The snapshot saved in `dir` (a run's results directory) under `file` (as its
    /// `stats_file` names it).
    pub fn read(dir: &Path, file: &str) -> anyhow::Result<Statistics> {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("{} is not statistics", path.display()))
    }

    /// Each part that could not be read, by name, with its error.
    pub fn errors(&self) -> Vec<(&str, &str)> {
        match self {
            Statistics::Postgres(p) => p
                .views
                .iter()
                .filter_map(|(name, part)| Some((name.as_str(), part.error()?)))
                .chain(
                    p.server
                        .as_ref()
                        .and_then(Part::error)
                        .map(|e| ("server", e)),
                )
                .collect(),
            Statistics::Mysql(m) => [
                ("global_status", m.global_status.error()),
                (
                    "innodb_status",
                    m.innodb_status.as_ref().and_then(Part::error),
                ),
                (
                    "rocksdb_status",
                    m.rocksdb_status.as_ref().and_then(Part::error),
                ),
            ]
            .into_iter()
            .filter_map(|(name, e)| Some((name, e?)))
            .collect(),
        }
    }

    /// The parts that could not be read: the first as `name: error` in full, the others by
    /// name (one lost connection fails every view, with one long error each); `None` when
    /// every part was.
    pub fn failures(&self) -> Option<String> {
        let failed = self.errors();
        let (first, error) = failed.first()?;
        let mut text = format!("{first}: {error}");
        if failed.len() > 1 {
            let others: Vec<&str> = failed[1..].iter().map(|(n, _)| *n).collect();
            text.push_str(&format!(
                "; {} more could not be read either ({})",
                others.len(),
                others.join(", ")
            ));
        }
        Some(text)
    }

    /// PostgreSQL's views, when this is PostgreSQL's snapshot.
    pub fn postgres(&self) -> Option<&PgStatistics> {
        match self {
            Statistics::Postgres(p) => Some(p),
            Statistics::Mysql(_) => None,
        }
    }

    /// MySQL's status, when this is MySQL's snapshot.
    pub fn mysql(&self) -> Option<&MyStatistics> {
        match self {
            Statistics::Mysql(m) => Some(m),
            Statistics::Postgres(_) => None,
        }
    }
}

/// A JSON number, or a number written as text (PostgreSQL's numerics in older files).
pub fn number(v: &Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_str()?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_saved_files_read_into_the_snapshot_and_write_back_the_same() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
        let mut files = 0;
        for run in std::fs::read_dir(root).unwrap() {
            let stats = run.unwrap().path().join("stats");
            let Ok(dir) = std::fs::read_dir(&stats) else {
                continue;
            };
            for f in dir {
                let path = f.unwrap().path();
                let text = std::fs::read_to_string(&path).unwrap();
                let s: Statistics = serde_json::from_str(&text).unwrap();
                assert!(
                    s.postgres().is_some() || s.mysql().is_some(),
                    "{}",
                    path.display()
                );
                let mut again = serde_json::to_string_pretty(&s).unwrap();
                again.push('\n');
                assert_eq!(again, text, "{}", path.display());
                files += 1;
            }
        }
        assert!(files >= 10, "{files} files");
    }

    #[test]
    fn a_mysql_snapshot_and_its_failed_parts_round_trip() {
        let v = serde_json::json!({
            "global_status": {"Com_insert": "12", "Innodb_history_list_length": null},
            "innodb_status": [{"name": "", "status": "x\nHistory list length 34\n", "type": "InnoDB"}],
            "rocksdb_status": {"error": "no such engine"}
        });
        let s: Statistics = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), v);
        let m = s.mysql().unwrap();
        assert_eq!(m.status("Com_insert"), Ok(12.0));
        assert!(m.status("Innodb_history_list_length").is_err());
        assert_eq!(m.history_list_length(), Ok(34.0));
        assert_eq!(
            s.failures().as_deref(),
            Some("rocksdb_status: no such engine")
        );
        let pg: Statistics = serde_json::from_value(serde_json::json!({
            "pg_stat_io": {"error": "permission denied"},
            "server": {"error": "timeout"}
        }))
        .unwrap();
        assert_eq!(
            pg.failures().as_deref(),
            Some("pg_stat_io: permission denied; 1 more could not be read either (server)")
        );
        let p = pg.postgres().unwrap();
        assert!(p.rows(PgView::Wal).unwrap_err().contains("PostgreSQL 14"));
        assert!(
            p.rows(PgView::Io)
                .unwrap_err()
                .contains("permission denied")
        );
    }
}
