//! The DBMS's own counters per op: the statistics a step reads over SQL before and after its
//! measured part (two [`Statistics`], the second the snapshot `stats/<step>.json` saves at
//! its end), turned into the figures of [`DbmsMetrics`], each divided as its row of
//! `results/counters.rs` says. Only SQL: a server on another host, or a managed one, has
//! them all. Nothing here fails: a counter the server lacks is n/a with the reason.
//!
//! Which counter each figure reads, from which version, and what it does not count:
//! docs/method.md, "The DBMS's own counters".

use std::collections::BTreeMap;

use serde_json::Value;

use crate::results::counters::Per;
use crate::results::metrics::{DbmsMetrics, Metric};
use crate::results::statistics::{MyStatistics, PgStatistics, PgView, Row, Statistics};
use crate::results::target::Engine;
use crate::stats::convert::count_f64;

/// What a run tells the counters: the engine of its tables (the MySQL family) and the tables
/// whose own statistics count (PostgreSQL's autovacuum runs and dead rows).
#[derive(Clone, Debug, Default)]
pub struct RunFacts {
    /// `--engine`, when given (the MySQL family's default is InnoDB).
    pub engine: Option<Engine>,
    /// The run's tables.
    pub tables: Vec<String>,
}

/// The statistics read around one step's measured part, or why they were not.
#[derive(Clone, Debug)]
pub struct StepStats {
    /// Read just before the measured part began.
    pub before: Result<Statistics, String>,
    /// Read just after it ended.
    pub after: Result<Statistics, String>,
    /// The run's engine and tables.
    pub facts: RunFacts,
}

impl StepStats {
    /// The DBMS's figures of a step of `ops` ops (each an `op`) and `inserted_rows` rows.
    pub fn figures(&self, op: &str, ops: u64, inserted_rows: u64) -> DbmsMetrics {
        dbms_metrics(
            self,
            &Divisors {
                op,
                ops,
                inserted_rows,
            },
        )
    }
}

/// What a step's counters are divided by.
#[derive(Clone, Copy, Debug)]
pub struct Divisors<'a> {
    /// What an op is (`inserted row`, `indexed row`, `query`).
    pub op: &'a str,
    /// Ops in the step.
    pub ops: u64,
    /// Rows inserted in the step, the background writers' included.
    pub inserted_rows: u64,
}

impl Divisors<'_> {
    /// A counter's change over the step divided by what its entry in the table says.
    fn divide(&self, per: Per, m: &Metric) -> Metric {
        match per {
            Per::Op => m.per(count_f64(self.ops), &format!("no {}s in the step", self.op)),
            Per::Row => m.per(
                count_f64(self.inserted_rows),
                "no rows inserted in this step",
            ),
            Per::Step => m.clone(),
        }
    }
}

/// The DBMS's figures of a step from the statistics read around it.
pub fn dbms_metrics(stats: &StepStats, div: &Divisors) -> DbmsMetrics {
    let (before, after) = match (&stats.before, &stats.after) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), _) | (_, Err(e)) => return DbmsMetrics::all_na(e),
    };
    let mut read = BTreeMap::new();
    let mut m = match (before, after) {
        (Statistics::Postgres(before), Statistics::Postgres(after))
            if after.views.contains_key(PgView::Database.name()) =>
        {
            let mut c = Counters::new(before, after, &mut read);
            postgres(&mut c, &stats.facts)
        }
        (Statistics::Mysql(before), Statistics::Mysql(after)) => {
            let mut c = Counters::new(before, after, &mut read);
            mysql(&mut c, stats.facts.engine.unwrap_or(Engine::Innodb))
        }
        _ => DbmsMetrics::all_na("the DBMS keeps none of these counters"),
    };
    for (per, figure) in m.figures_mut() {
        *figure = div.divide(per, figure);
    }
    m.counters = read;
    m
}

/// The two snapshots of one DBMS, and every counter read from them so far (for the record).
struct Counters<'a, S> {
    before: &'a S,
    after: &'a S,
    read: &'a mut BTreeMap<String, f64>,
}

impl<'a, S> Counters<'a, S> {
    fn new(before: &'a S, after: &'a S, read: &'a mut BTreeMap<String, f64>) -> Self {
        Counters {
            before,
            after,
            read,
        }
    }

    /// A cumulative counter's change over the step.
    fn delta(&mut self, name: &str, read: impl Fn(&S) -> Result<f64, String>) -> Metric {
        let change = read(self.before).and_then(|b| {
            let a = read(self.after)?;
            if a < b {
                return Err(format!(
                    "{name} went back during the step: the server's statistics were reset"
                ));
            }
            Ok(a - b)
        });
        if let Ok(d) = change {
            self.read.insert(name.to_string(), d);
        }
        Metric::from(&change)
    }

    /// A level at the step's end.
    fn level(&mut self, name: &str, read: impl Fn(&S) -> Result<f64, String>) -> Metric {
        let v = read(self.after);
        if let Ok(v) = v {
            self.read.insert(format!("{name} at step end"), v);
        }
        Metric::from(&v)
    }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL.

/// Whether a pg_stat_user_tables row is one of the run's tables (all rows when none given).
fn is_run_table(row: &Row, tables: &[String]) -> bool {
    let name = row.get("relname").and_then(Value::as_str).unwrap_or("");
    tables.is_empty()
        || tables.iter().any(|t| {
            let last = t.rsplit('.').next().unwrap_or(t).trim_matches('"');
            last.eq_ignore_ascii_case(name)
        })
}

/// Checkpoints so far: `num_done` (18), `num_timed + num_requested` (17, skipped ones
/// included), `checkpoints_timed + checkpoints_req` before 17.
fn checkpoints(s: &PgStatistics) -> Result<f64, String> {
    let (view, cols): (PgView, &[&str]) = match s.rows(PgView::Checkpointer) {
        Ok(r) if r.iter().any(|x| x.get("num_done").is_some()) => {
            (PgView::Checkpointer, &["num_done"])
        }
        Ok(_) => (PgView::Checkpointer, &["num_timed", "num_requested"]),
        Err(_) => (PgView::Bgwriter, &["checkpoints_timed", "checkpoints_req"]),
    };
    cols.iter()
        .map(|c| s.column_sum(view, c, |_| true))
        .sum::<Result<f64, String>>()
}

/// Buffers written by checkpoints so far.
fn checkpoint_buffers(s: &PgStatistics) -> Result<f64, String> {
    match s.rows(PgView::Checkpointer) {
        Ok(_) => s.column_sum(PgView::Checkpointer, "buffers_written", |_| true),
        Err(_) => s.column_sum(PgView::Bgwriter, "buffers_checkpoint", |_| true),
    }
}

/// pg_stat_io's `column` summed over the client backends (`client`) or every other backend
/// type, for relations only (PostgreSQL 18's WAL rows are left out: WAL is `walbpi`'s).
fn io_sum(s: &PgStatistics, column: &str, client: bool) -> Result<f64, String> {
    s.column_sum(PgView::Io, column, |r| {
        let kind = r.get("backend_type").and_then(Value::as_str);
        let object = r.get("object").and_then(Value::as_str).unwrap_or("");
        (kind == Some("client backend")) == client && object != "wal"
    })
}

fn postgres(c: &mut Counters<PgStatistics>, facts: &RunFacts) -> DbmsMetrics {
    let mut m = DbmsMetrics::all_na("a MySQL/MariaDB counter: the server is PostgreSQL");
    m.walbpi = c.delta("WAL insert position, bytes", PgStatistics::wal_insert_bytes);
    let wal_stat =
        |col: &'static str| move |s: &PgStatistics| s.column_sum(PgView::Wal, col, |_| true);
    // Recorded beside the WAL position's advance, which walbpi reads (docs/method.md).
    let _ = c.delta("pg_stat_wal.wal_bytes", wal_stat("wal_bytes"));
    m.fpipi = c.delta("pg_stat_wal.wal_fpi", wal_stat("wal_fpi"));
    let database = c.after.current_database();
    let db_col = |col: &'static str| {
        let database = database.clone();
        move |s: &PgStatistics| {
            let db = database.clone()?;
            s.column_sum(PgView::Database, col, |r| {
                r.get("datname").and_then(Value::as_str) == Some(db.as_str())
            })
        }
    };
    m.shrpq = c.delta("pg_stat_database.blks_read", db_col("blks_read"));
    m.shhpq = c.delta("pg_stat_database.blks_hit", db_col("blks_hit"));
    for (client, who) in [(true, "client backends"), (false, "other backends")] {
        let mut io = |col: &'static str| {
            let name = format!("pg_stat_io.{col} ({who})");
            c.delta(&name, |s| io_sum(s, col, client))
        };
        let figures = [io("reads"), io("writes"), io("extends"), io("fsyncs")];
        let [r, w, x, f] = figures;
        if client {
            (m.iorpq, m.iowpq, m.ioxpq, m.iofpq) = (r, w, x, f);
        } else {
            (m.bgiorpq, m.bgiowpq, m.bgioxpq, m.bgiofpq) = (r, w, x, f);
        }
    }
    m.ckpts = c.delta("checkpoints", checkpoints);
    m.ckbufs = c.delta("buffers written by checkpoints", checkpoint_buffers);
    let tables = |col: &'static str| {
        move |s: &PgStatistics| {
            s.column_sum(PgView::UserTables, col, |r| is_run_table(r, &facts.tables))
        }
    };
    m.avacs = c.delta(
        "pg_stat_user_tables.autovacuum_count",
        tables("autovacuum_count"),
    );
    m.deadtup = c.level("pg_stat_user_tables.n_dead_tup", tables("n_dead_tup"));
    m
}

// ---------------------------------------------------------------------------------------------
// MySQL, MariaDB: InnoDB and MyRocks.

/// The first status variable of `names` the server has (newer and older names of a counter).
fn first_status<'a>(after: &MyStatistics, names: &[&'a str]) -> &'a str {
    names
        .iter()
        .copied()
        .find(|n| after.status(n).is_ok())
        .unwrap_or(names[0])
}

fn mysql(c: &mut Counters<MyStatistics>, engine: Engine) -> DbmsMetrics {
    let mut m = DbmsMetrics::all_na("a PostgreSQL counter: the server is MySQL/MariaDB");
    let after = c.after;
    let mut delta = |name: &str| c.delta(name, |s| s.status(name));
    match engine {
        Engine::Innodb => {
            let rows_read = first_status(after, &["Innodb_rows_read", "Rows_read"]);
            let redo = first_status(after, &["Innodb_os_log_written", "Innodb_lsn_current"]);
            m.rowspq = delta(rows_read);
            m.redobpi = delta(redo);
            m.bprpq = delta("Innodb_buffer_pool_reads");
            m.idrpq = delta("Innodb_data_reads");
            m.idwpi = delta("Innodb_data_writes");
            m.idwkbpi = delta("Innodb_data_written").scale(1.0 / 1024.0);
            m.hll = c.level("history list length", MyStatistics::history_list_length);
            let why = "an InnoDB run: its tables are not MyRocks";
            for f in [
                &mut m.rbwpi,
                &mut m.rflbpi,
                &mut m.rcrbpi,
                &mut m.rcwbpi,
                &mut m.stalls,
            ] {
                *f = Metric::na(why);
            }
        }
        Engine::Rocksdb => {
            m.rowspq = delta("Rocksdb_rows_read");
            m.rbwpi = delta("Rocksdb_bytes_written");
            m.rflbpi = delta("Rocksdb_flush_write_bytes");
            m.rcrbpi = delta("Rocksdb_compact_read_bytes");
            m.rcwbpi = delta("Rocksdb_compact_write_bytes");
            m.stalls = delta("Rocksdb_stall_micros").scale(1e-6);
            let why = "a MyRocks run: its tables are not InnoDB";
            for f in [
                &mut m.redobpi,
                &mut m.bprpq,
                &mut m.idrpq,
                &mut m.idwpi,
                &mut m.idwkbpi,
                &mut m.hll,
            ] {
                *f = Metric::na(why);
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pg_snapshot(wal: u64, fpi: u64, hit: u64, client_writes: u64, dead: u64) -> Value {
        json!({
            "server": {"current_database": "bench", "in_recovery": false,
                       "wal_insert_lsn_bytes": wal},
            "pg_stat_wal": [{"wal_bytes": wal - 100, "wal_fpi": fpi}],
            "pg_stat_database": [
                {"datname": "postgres", "blks_read": 1000, "blks_hit": 9000},
                {"datname": "bench", "blks_read": 10, "blks_hit": hit},
                {"datname": null, "blks_read": 5, "blks_hit": 5}
            ],
            "pg_stat_io": [
                {"backend_type": "client backend", "object": "relation", "context": "normal",
                 "reads": 4, "writes": client_writes, "extends": 7, "fsyncs": 0},
                {"backend_type": "client backend", "object": "relation", "context": "bulkread",
                 "reads": 1, "writes": 0, "extends": null, "fsyncs": null},
                {"backend_type": "client backend", "object": "wal", "context": "normal",
                 "reads": 0, "writes": 999_999, "extends": null, "fsyncs": 999},
                {"backend_type": "checkpointer", "object": "relation", "context": "normal",
                 "reads": null, "writes": client_writes * 3, "extends": null, "fsyncs": 2}
            ],
            "pg_stat_bgwriter": [{"checkpoints_timed": 1, "checkpoints_req": fpi / 100,
                                  "buffers_checkpoint": client_writes * 3}],
            "pg_stat_user_tables": [
                {"relname": "pi1", "autovacuum_count": fpi / 100, "n_dead_tup": dead},
                {"relname": "other", "autovacuum_count": 50, "n_dead_tup": 1_000_000}
            ]
        })
    }

    fn st(v: Value) -> Statistics {
        serde_json::from_value(v).unwrap()
    }

    fn facts() -> RunFacts {
        RunFacts {
            engine: None,
            tables: vec!["pi1".into()],
        }
    }

    fn div(ops: u64, rows: u64) -> Divisors<'static> {
        Divisors {
            op: "inserted row",
            ops,
            inserted_rows: rows,
        }
    }

    fn v(m: &Metric) -> f64 {
        m.value().unwrap_or_else(|| panic!("{m:?}"))
    }

    #[test]
    fn postgres_counters_become_figures_per_row_per_op_and_per_step() {
        let stats = StepStats {
            before: Ok(st(pg_snapshot(1_000_000, 100, 5_000, 10, 7))),
            after: Ok(st(pg_snapshot(3_000_000, 300, 25_000, 30, 40))),
            facts: facts(),
        };
        let m = dbms_metrics(&stats, &div(1_000, 500));
        assert_eq!(v(&m.walbpi), 4_000.0);
        assert_eq!(v(&m.fpipi), 0.4);
        // Only the run's database; hits per op (ops, not rows).
        assert_eq!(v(&m.shhpq), 20.0);
        assert_eq!(v(&m.shrpq), 0.0);
        // Client backends' relation IO only: the WAL rows of PostgreSQL 18 are left out.
        assert_eq!(v(&m.iowpq), 0.02);
        assert_eq!(v(&m.iofpq), 0.0);
        assert_eq!(v(&m.bgiowpq), 0.06);
        assert_eq!(v(&m.ckpts), 2.0);
        assert_eq!(v(&m.ckbufs), 60.0);
        // The run's tables only; dead rows are the level at the end.
        assert_eq!(v(&m.avacs), 2.0);
        assert_eq!(v(&m.deadtup), 40.0);
        assert!(matches!(&m.redobpi, Metric::Na(r) if r.contains("PostgreSQL")));
        assert_eq!(m.counters["WAL insert position, bytes"], 2_000_000.0);
        assert_eq!(
            m.counters["pg_stat_user_tables.n_dead_tup at step end"],
            40.0
        );
    }

    #[test]
    fn views_a_version_lacks_and_reset_counters_are_na_with_the_reason() {
        let strip = |mut s: Value| {
            let o = s.as_object_mut().unwrap();
            o.remove("pg_stat_wal");
            o.remove("pg_stat_io");
            s
        };
        let stats = StepStats {
            before: Ok(st(strip(pg_snapshot(1_000_000, 100, 5_000, 10, 7)))),
            after: Ok(st(strip(pg_snapshot(3_000_000, 300, 4_000, 30, 40)))),
            facts: facts(),
        };
        let m = dbms_metrics(&stats, &div(1_000, 0));
        // The WAL position exists on every version; no rows inserted: n/a per row.
        assert!(matches!(&m.walbpi, Metric::Na(r) if r == "no rows inserted in this step"));
        let m = dbms_metrics(&stats, &div(1_000, 500));
        assert_eq!(v(&m.walbpi), 4_000.0);
        assert!(
            matches!(&m.fpipi, Metric::Na(r) if r.contains("pg_stat_wal came in PostgreSQL 14"))
        );
        assert!(matches!(&m.iorpq, Metric::Na(r) if r.contains("PostgreSQL 16")));
        assert!(matches!(&m.shhpq, Metric::Na(r) if r.contains("reset")));
        let failed = StepStats {
            before: Err("connection lost".into()),
            ..stats
        };
        let m = dbms_metrics(&failed, &div(1_000, 500));
        assert_eq!(m.walbpi, Metric::na("connection lost"));
        assert!(m.counters.is_empty());
    }

    #[test]
    fn postgres_17_counts_checkpoints_in_pg_stat_checkpointer() {
        let snap = |n: u64| {
            let mut s = pg_snapshot(1_000 + n, 0, 0, 0, 0);
            s["pg_stat_checkpointer"] = json!([{"num_timed": n, "num_requested": 1,
                                               "buffers_written": n * 10}]);
            s["pg_stat_bgwriter"] = json!([{"buffers_clean": 0}]);
            s
        };
        let stats = StepStats {
            before: Ok(st(snap(2))),
            after: Ok(st(snap(5))),
            facts: facts(),
        };
        let m = dbms_metrics(&stats, &div(10, 10));
        assert_eq!(v(&m.ckpts), 3.0);
        assert_eq!(v(&m.ckbufs), 30.0);
    }

    fn my_snapshot(scale: u64, extra: Value) -> Value {
        let mut status = json!({
            "Rows_read": (100 * scale).to_string(),
            "Innodb_os_log_written": (10_000 * scale).to_string(),
            "Innodb_buffer_pool_reads": (2 * scale).to_string(),
            "Innodb_data_reads": (3 * scale).to_string(),
            "Innodb_data_writes": (4 * scale).to_string(),
            "Innodb_data_written": (4096 * scale).to_string(),
            "Innodb_history_list_length": "12",
            "Rocksdb_rows_read": (7 * scale).to_string(),
            "Rocksdb_bytes_written": (500 * scale).to_string(),
            "Rocksdb_flush_write_bytes": "0",
            "Rocksdb_compact_read_bytes": (50 * scale).to_string(),
            "Rocksdb_compact_write_bytes": (60 * scale).to_string(),
            "Rocksdb_stall_micros": (250_000 * scale).to_string()
        });
        if let (Some(s), Some(e)) = (status.as_object_mut(), extra.as_object()) {
            for (k, x) in e {
                if x.is_null() {
                    s.remove(k);
                } else {
                    s.insert(k.clone(), x.clone());
                }
            }
        }
        json!({"global_status": status, "innodb_status": [
            {"type": "InnoDB", "name": "", "status": "---\nHistory list length 34\n..."}
        ]})
    }

    #[test]
    fn innodb_and_myrocks_counters_follow_the_runs_engine() {
        let stats = |engine, extra: Value| StepStats {
            before: Ok(st(my_snapshot(1, extra.clone()))),
            after: Ok(st(my_snapshot(3, extra))),
            facts: RunFacts {
                engine,
                tables: Vec::new(),
            },
        };
        let m = dbms_metrics(&stats(None, json!({})), &div(100, 50));
        // MariaDB has no Innodb_rows_read: Rows_read, every engine's.
        assert_eq!(v(&m.rowspq), 2.0);
        assert_eq!(m.counters["Rows_read"], 200.0);
        assert_eq!(v(&m.redobpi), 400.0);
        assert_eq!(v(&m.bprpq), 0.04);
        assert_eq!(v(&m.idwpi), 0.16);
        assert_eq!(v(&m.idwkbpi), 0.16);
        assert_eq!(v(&m.hll), 12.0);
        assert!(matches!(&m.rbwpi, Metric::Na(r) if r.contains("InnoDB run")));
        assert!(matches!(&m.walbpi, Metric::Na(r) if r.contains("PostgreSQL counter")));
        // MySQL: Innodb_rows_read, and the history list length from the engine status.
        let mysql = json!({"Innodb_rows_read": "1000", "Innodb_history_list_length": null});
        let m = dbms_metrics(&stats(Some(Engine::Innodb), mysql), &div(100, 50));
        assert_eq!(m.counters["Innodb_rows_read"], 0.0);
        assert_eq!(v(&m.hll), 34.0);
        let m = dbms_metrics(&stats(Some(Engine::Rocksdb), json!({})), &div(100, 50));
        assert_eq!(v(&m.rowspq), 0.14);
        assert_eq!(v(&m.rbwpi), 20.0);
        assert_eq!(v(&m.rflbpi), 0.0);
        assert_eq!(v(&m.rcwbpi), 2.4);
        assert_eq!(v(&m.stalls), 0.5);
        assert!(matches!(&m.redobpi, Metric::Na(r) if r.contains("MyRocks run")));
    }
}
