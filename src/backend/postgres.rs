//! PostgreSQL backend, on the synchronous `postgres` crate (one OS thread per connection).
//!
//! The URL is completed from the libpq environment variables (`PGHOST`, `PGPORT`, `PGUSER`,
//! `PGPASSWORD`, `PGDATABASE`) for the parts it leaves out, since the `postgres` crate reads no
//! environment. Every statement of the hot path is prepared once per connection and bound in
//! the binary format without allocating per row.

use crate::stats::convert::i64_u64;
use std::collections::HashMap;
use std::error::Error as StdError;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use ::postgres as pg;
use pg::error::SqlState;
use pg::fallible_iterator::FallibleIterator;
use pg::types::private::BytesMut;
use pg::types::{IsNull, ToSql, Type};
use pg::{Client, Config, NoTls, Statement};

use super::flavour::Flavour;
use super::micro_sql::{self, Outcome, Placeholders};
use super::*;
use crate::workload::micro::MicroStatement;

/// Postgres numbers its parameters.
const PLACEHOLDERS: Placeholders = Placeholders::Numbered;

/// How long a connection attempt may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The first value of `int`: a predicate `col >= INT_MIN` holds for every row.
const INT_MIN_LITERAL: &str = "-2147483648";

/// PostgreSQL driver: a parsed connection configuration.
pub struct PostgresDriver {
    config: Config,
    /// The completed URL, password redacted: what error messages and `run.json` show.
    target: String,
    /// The flavour given with `--flavour`.
    forced: Option<Flavour>,
    /// The flavour, once known (given, or detected from `version()` on first connect).
    flavour: std::sync::OnceLock<Flavour>,
}

impl PostgresDriver {
    /// Build from a `postgres://` or `postgresql://` URL. `?password_file=PATH` reads the
    /// password from a file. Parts the URL leaves out come from
    /// `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD` and `PGDATABASE`; with no host at all the
    /// Unix socket directory `/var/run/postgresql` is tried, then `localhost`. Does not connect.
    pub fn new(url: &str, forced: Option<Flavour>) -> anyhow::Result<Self> {
        let url = &resolve_password(url, None)?;
        let filled = fill_pg_url(url, &|name| std::env::var(name).ok());
        let target = redact_url(&filled);
        let mut config = Config::from_str(&filled)
            .map_err(|e| anyhow::anyhow!("bad --url '{}': {}", redact_url(url), pg_detail(&e)))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("ibench");
        }
        Ok(PostgresDriver {
            config,
            target,
            forced,
            flavour: std::sync::OnceLock::new(),
        })
    }

    /// The server's flavour: as given, else from `version()` (asked once per driver).
    fn flavour(&self, client: &mut Client) -> Flavour {
        *self.flavour.get_or_init(|| {
            self.forced.unwrap_or_else(|| {
                let version: String = client
                    .query_one("SELECT version()", &[])
                    .and_then(|r| r.try_get(0))
                    .unwrap_or_default();
                Flavour::detect(BackendKind::Postgres, &version)
            })
        })
    }

    fn client(&self) -> BackendResult<Client> {
        self.config
            .connect(NoTls)
            .map_err(|e| connect_error(&self.target, &e))
    }
}

impl Driver for PostgresDriver {
    fn connect(&self) -> BackendResult<Box<dyn Conn>> {
        let mut client = self.client()?;
        let flavour = self.flavour(&mut client);
        Ok(Box::new(PostgresConn {
            client,
            flavour,
            target: self.target.clone(),
            statements: HashMap::new(),
            server_version_num: None,
        }))
    }

    fn describe(&self) -> BackendResult<TargetInfo> {
        let mut client = self.client()?;
        let version = show(&mut client, "server_version")
            .map_err(|e| pg_error(&self.target, "read server_version", &e))?;
        let flavour = self.flavour(&mut client);
        Ok(TargetInfo {
            backend: BackendKind::Postgres,
            url: self.target.clone(),
            dbms: flavour.dbms().to_string(),
            version,
            engine: None,
            flavour: Some(flavour),
        })
    }

    fn settle(&self, tables: &[String], budget: Duration) -> BackendResult<Vec<SettleAction>> {
        let deadline = Instant::now() + budget;
        // Connect first so that an unreachable server is an error, not a list of failures.
        let mut main = self.client()?;
        if !self.flavour(&mut main).has_engine_maintenance() {
            // No VACUUM or CHECKPOINT here: refresh the statistics only.
            return Ok(tables
                .iter()
                .map(|t| {
                    let sql = format!("ANALYZE {t}");
                    let started = Instant::now();
                    let result = run_bounded(&mut main, &sql, deadline)
                        .map_err(|e| pg_error(&self.target, &sql, &e));
                    settle_action(sql, started, result)
                })
                .collect());
        }
        let mut actions: Vec<SettleAction> = std::thread::scope(|scope| {
            let handles: Vec<_> = tables
                .iter()
                .map(|table| {
                    scope.spawn(move || {
                        let sql = vacuum_sql(table);
                        let started = Instant::now();
                        // VACUUM reports some failures (e.g. "permission denied to vacuum,
                        // skipping it") only as a WARNING: collect them as the action's error.
                        let warnings = Arc::new(Mutex::new(Vec::new()));
                        let mut config = self.config.clone();
                        let sink = Arc::clone(&warnings);
                        config.notice_callback(move |notice| {
                            if notice.severity() == "WARNING"
                                && let Ok(mut w) = sink.lock()
                            {
                                w.push(format!("WARNING: {}", notice.message()));
                            }
                        });
                        let result = config
                            .connect(NoTls)
                            .map_err(|e| connect_error(&self.target, &e))
                            .and_then(|mut client| {
                                run_bounded(&mut client, &sql, deadline)
                                    .map_err(|e| pg_error(&self.target, &sql, &e))
                            });
                        let mut action = settle_action(sql, started, result);
                        if action.error.is_none()
                            && let Ok(w) = warnings.lock()
                            && !w.is_empty()
                        {
                            action.error = Some(w.join("; "));
                        }
                        action
                    })
                })
                .collect();
            handles
                .into_iter()
                .zip(tables)
                .map(|(handle, table)| {
                    handle.join().unwrap_or_else(|_| SettleAction {
                        action: vacuum_sql(table),
                        seconds: 0.0,
                        error: Some("the VACUUM thread panicked".to_string()),
                    })
                })
                .collect()
        });
        let started = Instant::now();
        let result = run_bounded(&mut main, "CHECKPOINT", deadline)
            .map_err(|e| pg_error(&self.target, "CHECKPOINT", &e));
        actions.push(settle_action("CHECKPOINT".to_string(), started, result));
        Ok(actions)
    }
}

/// Run one maintenance statement with `statement_timeout` set to what is left of the budget
/// (at least one second: 0 would mean no limit).
fn run_bounded(client: &mut Client, sql: &str, deadline: Instant) -> Result<(), pg::Error> {
    let left = deadline.saturating_duration_since(Instant::now());
    let ms = left.as_millis().max(1000);
    client.batch_execute(&format!("SET statement_timeout = {ms}"))?;
    let result = client.batch_execute(sql);
    // Best effort: the connection is dropped right after anyway.
    let _ = client.batch_execute("SET statement_timeout = 0");
    result
}

fn settle_action(action: String, started: Instant, result: BackendResult<()>) -> SettleAction {
    SettleAction {
        action,
        seconds: started.elapsed().as_secs_f64(),
        error: result.err().map(|e| e.to_string()),
    }
}

/// `SHOW name` as text.
fn show(client: &mut Client, name: &str) -> Result<String, pg::Error> {
    let row = client.query_one(&format!("SHOW {name}"), &[])?;
    row.try_get(0)
}

/// One PostgreSQL connection with its prepared statements.
pub struct PostgresConn {
    client: Client,
    flavour: Flavour,
    target: String,
    statements: HashMap<String, TableStatements<Statement>>,
    server_version_num: Option<i32>,
}

/// Cancels a Postgres connection's statement with the protocol's cancel request.
struct PgCanceller(pg::CancelToken);

impl Canceller for PgCanceller {
    fn cancel(&self) -> Result<(), String> {
        self.0.cancel_query(NoTls).map_err(|e| pg_detail(&e))
    }
}

impl PostgresConn {
    fn err(&self, context: &str, e: &pg::Error) -> BackendError {
        pg_error(&self.target, context, e)
    }

    /// The table's statement cache, created on first use.
    fn table_statements(&mut self, table: &str) -> &mut TableStatements<Statement> {
        // Only reached when a statement is prepared, so the key allocation is off the hot path.
        self.statements.entry(table.to_string()).or_default()
    }

    fn server_version_num(&mut self) -> BackendResult<i32> {
        if let Some(v) = self.server_version_num {
            return Ok(v);
        }
        let text = show(&mut self.client, "server_version_num")
            .map_err(|e| self.err("read server_version_num", &e))?;
        let v = text
            .trim()
            .parse::<i32>()
            .map_err(|e| BackendError::sql("read server_version_num", format!("'{text}': {e}")))?;
        self.server_version_num = Some(v);
        Ok(v)
    }

    /// The cached prepared statement `key` of `table`, prepared from `sql()` on first use.
    fn statement(
        &mut self,
        table: &str,
        key: StatementKey,
        sql: impl FnOnce() -> String,
        context: &dyn Fn() -> String,
    ) -> BackendResult<Statement> {
        if let Some(s) = self.statements.get(table).and_then(|t| t.get(&key)) {
            return Ok(s.clone());
        }
        let s = self
            .client
            .prepare(&sql())
            .map_err(|e| self.err(&context(), &e))?;
        self.table_statements(table).insert(key, s.clone());
        Ok(s)
    }
}

impl Conn for PostgresConn {
    fn canceller(&self) -> Option<Box<dyn Canceller>> {
        Some(Box::new(PgCanceller(self.client.cancel_token())))
    }

    fn create_table(&mut self, table: &str, options: &TableOptions) -> BackendResult<()> {
        self.drop_table(table)?;
        let version = self.server_version_num()?;
        let context = format!("create table {table}");
        for sql in create_table_sql(table, options, version, self.flavour) {
            self.client
                .batch_execute(&sql)
                .map_err(|e| self.err(&context, &e))?;
        }
        Ok(())
    }

    fn drop_table(&mut self, table: &str) -> BackendResult<()> {
        self.statements.remove(table);
        self.client
            .batch_execute(&format!("DROP TABLE IF EXISTS {table}"))
            .map_err(|e| self.err(&format!("drop table {table}"), &e))
    }

    fn create_micro_table(&mut self, table: &str, _options: &TableOptions) -> BackendResult<()> {
        self.drop_table(table)?;
        for sql in micro_sql::create_table_sql(table, "") {
            self.client
                .batch_execute(&sql)
                .map_err(|e| self.err(&format!("create table {table}"), &e))?;
        }
        Ok(())
    }

    fn micro(&mut self, table: &str, statements: &[MicroStatement]) -> BackendResult<u64> {
        micro_sql::run_operation(
            self,
            statements,
            |c, s| c.micro_statement(table, s),
            |c| {
                let _ = c.client.batch_execute("ROLLBACK");
            },
        )
    }

    fn create_secondary_indexes(&mut self, table: &str) -> BackendResult<()> {
        for index in SecondaryIndex::ALL {
            let sql = create_index_sql(table, index);
            self.client
                .batch_execute(&sql)
                .map_err(|e| self.err(&format!("create index {}", index.name(table)), &e))?;
        }
        Ok(())
    }

    fn has_secondary_indexes(&mut self, table: &str) -> BackendResult<bool> {
        let names: Vec<String> = SecondaryIndex::ALL
            .iter()
            .map(|i| i.name(table).to_lowercase())
            .collect();
        let row = self
            .client
            .query_one(
                "SELECT count(DISTINCT indexname) FROM pg_indexes \
                 WHERE schemaname = current_schema() AND tablename = $1 AND indexname = ANY($2)",
                &[&table.to_lowercase(), &names],
            )
            .map_err(|e| self.err(&format!("list the indexes of {table}"), &e))?;
        let n: i64 = row
            .try_get(0)
            .map_err(|e| self.err(&format!("list the indexes of {table}"), &e))?;
        Ok(usize::try_from(n).is_ok_and(|n| n == names.len()))
    }

    fn insert(&mut self, table: &str, batch: &RowBatch) -> BackendResult<u64> {
        let rows = batch.len();
        if rows == 0 {
            return Ok(0);
        }
        let ids = batch.has_client_ids();
        let key = StatementKey::Insert {
            rows,
            client_ids: ids,
        };
        let stmt = self.statement(table, key, || insert_sql(table, rows, ids), &|| {
            insert_context(table)
        })?;
        let params = InsertParams::new(batch);
        let result = (|| {
            let mut it = self.client.query_raw(&stmt, params)?;
            while it.next()?.is_some() {}
            Ok::<_, pg::Error>(it.rows_affected().unwrap_or(0))
        })();
        result.map_err(|e| self.err(&insert_context(table), &e))
    }

    fn delete_oldest(&mut self, table: &str, min_id: i64, limit: u32) -> BackendResult<u64> {
        let context = || format!("delete from {table}");
        let flavour = self.flavour;
        let stmt = self.statement(
            table,
            StatementKey::Delete,
            || flavour.pg_delete_sql(table),
            &context,
        )?;
        self.client
            .execute(&stmt, &[&min_id, &i64::from(limit)])
            .map_err(|e| self.err(&context(), &e))
    }

    fn min_max_id(&mut self, table: &str) -> BackendResult<Option<(i64, i64)>> {
        let context = format!("read min and max transactionid of {table}");
        let row = self
            .client
            .query_one(&min_max_sql(table), &[])
            .map_err(|e| self.err(&context, &e))?;
        let min: Option<i64> = row.try_get(0).map_err(|e| self.err(&context, &e))?;
        let max: Option<i64> = row.try_get(1).map_err(|e| self.err(&context, &e))?;
        Ok(min.zip(max))
    }

    fn range_query(&mut self, table: &str, index: SecondaryIndex, from: i32) -> BackendResult<u64> {
        let context = || format!("range query on {table} via {}", index.name(table));
        let stmt = self.statement(
            table,
            StatementKey::Range(index),
            || range_sql(table, index),
            &context,
        )?;
        count_rows_of(&mut self.client, &stmt, std::iter::once(from))
            .map_err(|e| self.err(&context(), &e))
    }

    fn point_query(&mut self, table: &str, ids: &[i64]) -> BackendResult<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let n = ids.len();
        let context = || format!("point query on {table}");
        let stmt = self.statement(
            table,
            StatementKey::Point(n),
            || point_sql(table, n),
            &context,
        )?;
        count_rows_of(&mut self.client, &stmt, ids.iter()).map_err(|e| self.err(&context(), &e))
    }

    fn count_rows(&mut self, table: &str) -> BackendResult<u64> {
        let context = format!("count rows of {table}");
        let row = self
            .client
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .map_err(|e| self.err(&context, &e))?;
        let n: i64 = row.try_get(0).map_err(|e| self.err(&context, &e))?;
        Ok(i64_u64(n))
    }

    fn count_rows_via_index(&mut self, table: &str, index: SecondaryIndex) -> BackendResult<u64> {
        let name = index.name(table);
        let context = format!("count rows of {table} via {name}");
        let sql = count_via_index_sql(table, index);
        let settings = force_index_settings(self.server_version_num()?);
        let target = self.target.clone();
        let err = |e: pg::Error| pg_error(&target, &context, &e);
        let mut tx = self.client.transaction().map_err(err)?;
        tx.batch_execute(settings).map_err(err)?;
        // Check that the planner really reads this index, so the count means what it says.
        let plan: Vec<String> = tx
            .query(&format!("EXPLAIN {sql}"), &[])
            .map_err(err)?
            .iter()
            .map(|row| row.try_get::<_, String>(0))
            .collect::<Result<_, _>>()
            .map_err(err)?;
        let uses_index = plan
            .iter()
            .any(|line| line.contains(&format!("using {} ", name.to_lowercase())));
        if !uses_index {
            return Err(BackendError::sql(
                &context,
                format!("the planner would not read {name}: {}", plan.join(" / ")),
            ));
        }
        let row = tx.query_one(&sql, &[]).map_err(err)?;
        let n: i64 = row.try_get(0).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(i64_u64(n))
    }

    fn database_size_bytes(&mut self, tables: &[String]) -> BackendResult<Option<DbSize>> {
        let context = "read the database size";
        let row = self
            .client
            .query_one("SELECT pg_database_size(current_database())", &[])
            .map_err(|e| self.err(context, &e))?;
        let total: i64 = row.try_get(0).map_err(|e| self.err(context, &e))?;
        let mut sizes = std::collections::BTreeMap::new();
        for t in tables {
            let row = self
                .client
                .query_one("SELECT pg_total_relation_size(to_regclass($1))", &[t])
                .map_err(|e| self.err(context, &e))?;
            let size: Option<i64> = row.try_get(0).map_err(|e| self.err(context, &e))?;
            if let Some(size) = size {
                sizes.insert(t.clone(), u64::try_from(size).unwrap_or(0));
            }
        }
        Ok(Some(DbSize {
            total_bytes: u64::try_from(total).unwrap_or(0),
            tables: sizes,
            source: "pg_database_size, pg_total_relation_size".to_string(),
        }))
    }

    fn server_files(&mut self) -> BackendResult<Option<ServerFiles>> {
        let dir = show(&mut self.client, "data_directory")
            .map_err(|e| self.err("SHOW data_directory", &e))?;
        let dir = std::path::PathBuf::from(dir);
        Ok(Some(ServerFiles {
            pid_file: Some(dir.join("postmaster.pid")),
            data_paths: vec![dir],
            embedded: false,
        }))
    }

    fn server_statistics(&mut self) -> BackendResult<Option<serde_json::Value>> {
        let version = self.server_version_num()?;
        let mut out = serde_json::Map::new();
        for view in stat_views(version) {
            let sql = format!("SELECT coalesce(json_agg(t), '[]'::json)::text FROM {view} t");
            let value = self
                .client
                .query_one(&sql, &[])
                .and_then(|r| r.try_get::<_, String>(0))
                .map_err(|e| pg_detail(&e))
                .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
                .unwrap_or_else(|e| serde_json::json!({ "error": e }));
            out.insert(view.to_string(), value);
        }
        Ok(Some(serde_json::Value::Object(out)))
    }

    fn build_facts(&mut self) -> BackendResult<BuildFacts> {
        self.read_build_facts()
    }

    fn server_settings(&mut self) -> BackendResult<Option<serde_json::Value>> {
        let context = "read pg_settings";
        let text: String = self
            .client
            .query_one(
                "SELECT coalesce(json_object_agg(name, json_build_object('setting', setting, \
                 'unit', unit, 'source', source) ORDER BY name), '{}'::json)::text FROM pg_settings",
                &[],
            )
            .and_then(|r| r.try_get(0))
            .map_err(|e| self.err(context, &e))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| BackendError::sql(context, e))
    }
}

impl PostgresConn {
    /// `version()` and, when this user may read it, `pg_config`'s CONFIGURE, CC and CFLAGS.
    fn read_build_facts(&mut self) -> BackendResult<BuildFacts> {
        let version_string: String = self
            .client
            .query_one("SELECT version()", &[])
            .and_then(|r| r.try_get(0))
            .map_err(|e| self.err("SELECT version()", &e))?;
        let mut facts = BuildFacts {
            version_string: Some(version_string),
            ..BuildFacts::default()
        };
        // pg_config is readable by superusers (and members of pg_read_all_settings from 10).
        let rows = self.client.query(
            "SELECT name, setting FROM pg_config WHERE name IN ('CONFIGURE', 'CC', 'CFLAGS')",
            &[],
        );
        match rows {
            Ok(rows) => {
                for row in rows {
                    let (Ok(name), Ok(setting)) =
                        (row.try_get::<_, String>(0), row.try_get::<_, String>(1))
                    else {
                        continue;
                    };
                    match name.as_str() {
                        "CONFIGURE" => facts.configure = Some(setting),
                        "CC" => facts.cc = Some(setting),
                        "CFLAGS" => facts.cflags = Some(setting),
                        _ => {}
                    }
                }
            }
            Err(e) => facts.na.push(format!(
                "pg_config: {} (reading it needs a superuser)",
                pg_detail(&e)
            )),
        }
        Ok(facts)
    }
}

/// The statistics views saved at every step end, with the `server_version_num` each came in.
const STAT_VIEWS: &[(&str, i32)] = &[
    ("pg_stat_database", 0),
    ("pg_stat_bgwriter", 0),
    ("pg_stat_checkpointer", 170_000),
    ("pg_stat_wal", 140_000),
    ("pg_stat_io", 160_000),
    ("pg_stat_user_tables", 0),
    ("pg_stat_user_indexes", 0),
    ("pg_statio_user_tables", 0),
];

/// The statistics views a server of `server_version_num` has.
fn stat_views(server_version_num: i32) -> impl Iterator<Item = &'static str> {
    STAT_VIEWS
        .iter()
        .filter(move |(_, since)| server_version_num >= *since)
        .map(|(view, _)| *view)
}

/// Settings that leave the planner only index scans, and no sort, for the forced count
/// (`enable_incremental_sort` came in 13; older servers have no incremental sort to turn off).
fn force_index_settings(server_version_num: i32) -> &'static str {
    if server_version_num >= 130_000 {
        "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; \
         SET LOCAL enable_sort = off; SET LOCAL enable_incremental_sort = off"
    } else {
        "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; \
         SET LOCAL enable_sort = off"
    }
}

fn insert_context(table: &str) -> String {
    format!("insert into {table}")
}

impl PostgresConn {
    /// One microbenchmark statement: rows read (a scan: rows counted) or changed.
    fn micro_statement(&mut self, table: &str, s: &MicroStatement) -> BackendResult<u64> {
        let context = || format!("{:?} on {table}", s.kind);
        let outcome = micro_sql::outcome(s.kind);
        if outcome == Outcome::Control {
            let sql = micro_sql::statement_sql(s.kind, table, 0, PLACEHOLDERS);
            self.client
                .batch_execute(&sql)
                .map_err(|e| self.err(&context(), &e))?;
            return Ok(0);
        }
        let n = s.ints.len();
        let stmt = self.statement(
            table,
            StatementKey::Micro(s.kind, n),
            || micro_sql::statement_sql(s.kind, table, n, PLACEHOLDERS),
            &context,
        )?;
        let params: Vec<&(dyn ToSql + Sync)> = micro_sql::params(
            s,
            |v| v as &(dyn ToSql + Sync),
            |v| v as &(dyn ToSql + Sync),
        );
        let result = match outcome {
            Outcome::Count => self
                .client
                .query_one(&stmt, &params)
                .and_then(|row| row.try_get::<_, i64>(0))
                .map(i64_u64),
            Outcome::Changed => self.client.execute(&stmt, &params),
            Outcome::Rows | Outcome::Control => {
                count_rows_of(&mut self.client, &stmt, params.iter().copied())
            }
        };
        result.map_err(|e| self.err(&context(), &e))
    }
}

/// Run a prepared query and count the rows it returns, without decoding them.
fn count_rows_of<P, I>(client: &mut Client, stmt: &Statement, params: I) -> Result<u64, pg::Error>
where
    P: pg::types::BorrowToSql,
    I: IntoIterator<Item = P>,
    I::IntoIter: ExactSizeIterator,
{
    let mut it = client.query_raw(stmt, params)?;
    let mut n = 0;
    while it.next()?.is_some() {
        n += 1;
    }
    Ok(n)
}

// ---------------------------------------------------------------------------------------------
// Parameters of the insert: borrowed from the batch, no allocation per row.

/// One bound value of the multi-row insert.
#[derive(Debug)]
enum Param<'a> {
    Timestamp(SystemTime),
    Int(i32),
    BigInt(i64),
    Text(&'a str),
}

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match self {
            Param::Timestamp(v) => v.to_sql(ty, out),
            Param::Int(v) => v.to_sql(ty, out),
            Param::BigInt(v) => v.to_sql(ty, out),
            Param::Text(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        // The real check is per variant, in `to_sql_checked` below.
        <SystemTime as ToSql>::accepts(ty)
            || <i32 as ToSql>::accepts(ty)
            || <i64 as ToSql>::accepts(ty)
            || <&str as ToSql>::accepts(ty)
    }

    fn to_sql_checked(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match self {
            Param::Timestamp(v) => v.to_sql_checked(ty, out),
            Param::Int(v) => v.to_sql_checked(ty, out),
            Param::BigInt(v) => v.to_sql_checked(ty, out),
            Param::Text(v) => v.to_sql_checked(ty, out),
        }
    }
}

/// The parameters of [`insert_sql`] in order: `$1` the batch timestamp, then per row
/// (`transactionid`,) `cashregisterid`, `customerid`, `productid`, `price`, `data`.
struct InsertParams<'a> {
    batch: &'a RowBatch,
    timestamp: SystemTime,
    per_row: usize,
    next: usize,
    total: usize,
}

impl<'a> InsertParams<'a> {
    fn new(batch: &'a RowBatch) -> Self {
        let per_row = if batch.has_client_ids() { 6 } else { 5 };
        InsertParams {
            batch,
            timestamp: batch.timestamp(),
            per_row,
            next: 0,
            total: 1 + per_row * batch.len(),
        }
    }
}

impl<'a> Iterator for InsertParams<'a> {
    type Item = Param<'a>;

    fn next(&mut self) -> Option<Param<'a>> {
        if self.next >= self.total {
            return None;
        }
        let n = self.next;
        self.next += 1;
        if n == 0 {
            return Some(Param::Timestamp(self.timestamp));
        }
        let row = (n - 1) / self.per_row;
        let mut col = (n - 1) % self.per_row;
        let b = self.batch;
        if self.per_row == 6 {
            if col == 0 {
                return Some(Param::BigInt(b.transactionid[row]));
            }
            col -= 1;
        }
        Some(match col {
            0 => Param::Int(b.cashregisterid[row]),
            1 => Param::Int(b.customerid[row]),
            2 => Param::Int(b.productid[row]),
            3 => Param::Int(b.price[row]),
            _ => Param::Text(b.data(row)),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.total - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for InsertParams<'_> {}

// ---------------------------------------------------------------------------------------------
// SQL text, as pure functions.

/// `CREATE TABLE` (and for servers before 10, the sequence cache) for spec section 1.
fn create_table_sql(
    table: &str,
    options: &TableOptions,
    server_version_num: i32,
    flavour: Flavour,
) -> Vec<String> {
    let identity = server_version_num >= 100_000;
    let pk = flavour.primary_key();
    let id_column = if options.client_assigns_ids {
        format!("transactionid bigint {pk}")
    } else if identity {
        format!("transactionid bigint GENERATED BY DEFAULT AS IDENTITY (CACHE 1000) {pk}")
    } else {
        format!("transactionid bigserial {pk}")
    };
    let suffix = match options.table_suffix.as_deref().map(str::trim) {
        Some(s) if !s.is_empty() => format!(" {s}"),
        _ => String::new(),
    };
    let mut sql = vec![format!(
        "CREATE TABLE {table} ({id_column}, dateandtime timestamp, \
         cashregisterid int NOT NULL, customerid int NOT NULL, productid int NOT NULL, \
         price int NOT NULL, data varchar(4000)){suffix}"
    )];
    if !options.client_assigns_ids && !identity {
        sql.push(format!(
            "ALTER SEQUENCE {table}_transactionid_seq CACHE 1000"
        ));
    }
    sql
}

fn create_index_sql(table: &str, index: SecondaryIndex) -> String {
    format!(
        "CREATE INDEX {} ON {table} ({})",
        index.name(table),
        index.column_list()
    )
}

/// The multi-row insert: `$1` is the batch timestamp, shared by every row.
fn insert_sql(table: &str, rows: usize, client_ids: bool) -> String {
    use std::fmt::Write;
    let per_row = if client_ids { 6 } else { 5 };
    let mut sql = String::with_capacity(100 + rows * 40);
    sql.push_str("INSERT INTO ");
    sql.push_str(table);
    if client_ids {
        sql.push_str(" (transactionid, dateandtime, cashregisterid, customerid, productid, price, data) VALUES ");
    } else {
        sql.push_str(" (dateandtime, cashregisterid, customerid, productid, price, data) VALUES ");
    }
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        let base = 2 + row * per_row;
        // Writing to a String cannot fail.
        let _ = if client_ids {
            write!(
                sql,
                "(${}, $1, ${}, ${}, ${}, ${}, ${})",
                base,
                base + 1,
                base + 2,
                base + 3,
                base + 4,
                base + 5
            )
        } else {
            write!(
                sql,
                "($1, ${}, ${}, ${}, ${}, ${})",
                base,
                base + 1,
                base + 2,
                base + 3,
                base + 4
            )
        };
    }
    sql
}

fn range_sql(table: &str, index: SecondaryIndex) -> String {
    let cols = index.column_list();
    let first = index.columns()[0];
    format!("SELECT {cols} FROM {table} WHERE {first} >= $1 ORDER BY {cols} LIMIT 10")
}

fn point_sql(table: &str, n: usize) -> String {
    let list: Vec<String> = (1..=n).map(|i| format!("${i}")).collect();
    format!(
        "SELECT transactionid, productid, data FROM {table} WHERE transactionid IN ({})",
        list.join(", ")
    )
}

fn min_max_sql(table: &str) -> String {
    format!("SELECT min(transactionid), max(transactionid) FROM {table}")
}

/// A count that only `index` can answer without a sort: a predicate on its first column that
/// every row satisfies, and its full key order.
fn count_via_index_sql(table: &str, index: SecondaryIndex) -> String {
    let cols = index.column_list();
    let first = index.columns()[0];
    format!(
        "SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {first} >= {INT_MIN_LITERAL} \
         ORDER BY {cols}) AS s"
    )
}

fn vacuum_sql(table: &str) -> String {
    format!("VACUUM (ANALYZE) {table}")
}

// ---------------------------------------------------------------------------------------------
// URL completion from the environment.

/// Complete a Postgres URL from the libpq environment variables for the parts it leaves out:
/// user (`PGUSER`, else `USER`/`LOGNAME`, else `postgres`), password (`PGPASSWORD`), hosts
/// (`PGHOST`, else the socket directory `/var/run/postgresql` then `localhost`), the port of
/// every host without one (`PGPORT`) and the database (`PGDATABASE`). Parts given as query
/// parameters (`?host=...`) count as given.
fn fill_pg_url(url: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let Some(parts) = super::url::UrlParts::parse(url) else {
        return url.to_string();
    };
    let scheme = parts.scheme;
    let query = parts.query;
    let path = parts.path;
    let hosts = parts.hosts;
    let userinfo = parts.userinfo.unwrap_or("");
    let keys: Vec<&str> = parts.params().map(|(k, _)| k).collect();
    let in_query = |k: &str| keys.contains(&k);
    let env_set = |name: &str| env(name).filter(|v| !v.is_empty());

    let (mut user, mut password) = match userinfo.find(':') {
        Some(i) => (
            userinfo[..i].to_string(),
            Some(userinfo[i + 1..].to_string()),
        ),
        None => (userinfo.to_string(), None),
    };
    if user.is_empty() && !in_query("user") {
        let name = env_set("PGUSER")
            .or_else(|| env_set("USER"))
            .or_else(|| env_set("LOGNAME"))
            .unwrap_or_else(|| "postgres".to_string());
        user = percent_encode(&name);
    }
    if password.is_none() && !in_query("password") {
        password = env_set("PGPASSWORD").map(|p| percent_encode(&p));
    }

    let port = if in_query("port") {
        None
    } else {
        env_set("PGPORT")
    };
    let (hosts, extra_query) = pg_hosts(hosts, in_query("host"), port.as_deref(), &env_set);
    let path = if path.is_empty() && !in_query("dbname") {
        env_set("PGDATABASE")
            .map(|d| percent_encode(&d))
            .unwrap_or_default()
    } else {
        path.to_string()
    };

    let mut out = String::from(scheme);
    out.push_str(&user);
    if let Some(p) = password {
        out.push(':');
        out.push_str(&p);
    }
    out.push('@');
    out.push_str(&hosts);
    if !path.is_empty() {
        out.push('/');
        out.push_str(&path);
    }
    let mut params: Vec<String> = query
        .filter(|q| !q.is_empty())
        .map(|q| vec![q.to_string()])
        .unwrap_or_default();
    params.extend(extra_query);
    if !params.is_empty() {
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

/// The host list of a completed URL (with `PGHOST` and `PGPORT` where the URL leaves them
/// out), and the query parameters to add (`port` when the hosts come from the query).
fn pg_hosts(
    hosts: &str,
    host_in_query: bool,
    port: Option<&str>,
    env_set: &dyn Fn(&str) -> Option<String>,
) -> (String, Vec<String>) {
    let mut extra_query = Vec::new();
    let hosts = if hosts.is_empty() && host_in_query {
        if let Some(p) = port {
            extra_query.push(format!("port={}", percent_encode(p)));
        }
        String::new()
    } else {
        let given: Vec<String> = if hosts.is_empty() {
            env_set("PGHOST")
                .unwrap_or_else(|| "/var/run/postgresql,localhost".to_string())
                .split(',')
                .map(percent_encode)
                .collect()
        } else {
            hosts.split(',').map(str::to_string).collect()
        };
        given
            .into_iter()
            .map(|h| match port {
                Some(p) if !host_has_port(&h) => format!("{h}:{}", percent_encode(p)),
                _ => h,
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    (hosts, extra_query)
}

fn host_has_port(host: &str) -> bool {
    if host.starts_with('[') {
        host.contains("]:")
    } else {
        host.contains(':')
    }
}

// ---------------------------------------------------------------------------------------------
// Errors.

/// The error's own text and its causes: the crate's `Display` omits the cause.
fn pg_detail(e: &pg::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{db} (SQLSTATE {})", db.code().code());
    }
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Whether the error means the connection is gone or never came up.
fn is_connectivity(e: &pg::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    let mut source = e.source();
    while let Some(s) = source {
        if s.is::<std::io::Error>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// Map an error of a statement.
fn pg_error(target: &str, context: &str, e: &pg::Error) -> BackendError {
    let detail = pg_detail(e);
    match e.code() {
        Some(c)
            if *c == SqlState::T_R_DEADLOCK_DETECTED
                || *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::LOCK_NOT_AVAILABLE =>
        {
            BackendError::Retryable(format!("{context}: {detail}"))
        }
        Some(c)
            if *c == SqlState::INVALID_PASSWORD
                || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION =>
        {
            BackendError::Auth {
                target: target.to_string(),
                detail,
            }
        }
        Some(_) => BackendError::sql(context, detail),
        None if is_connectivity(e) => BackendError::Unreachable {
            target: target.to_string(),
            detail,
        },
        None => BackendError::sql(context, detail),
    }
}

/// Map an error of opening a connection.
fn connect_error(target: &str, e: &pg::Error) -> BackendError {
    let detail = pg_detail(e);
    if let Some(db) = e.as_db_error() {
        if *db.code() == SqlState::INVALID_CATALOG_NAME {
            return BackendError::sql(
                format!("connect to {target}"),
                format!(
                    "{detail}; create the database (createdb, or CREATE DATABASE) or name an \
                     existing one in --url"
                ),
            );
        }
        return pg_error(target, &format!("connect to {target}"), e);
    }
    // No server message: the crate failed before or during the handshake.
    let text = detail.to_lowercase();
    if text.starts_with("authentication error") || text.contains("password missing") {
        return BackendError::Auth {
            target: target.to_string(),
            detail,
        };
    }
    if text.starts_with("invalid configuration") || text.starts_with("invalid connection string") {
        return BackendError::sql(format!("connect to {target}"), detail);
    }
    BackendError::Unreachable {
        target: target.to_string(),
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn forced_count_settings_follow_the_version() {
        assert!(!force_index_settings(100_023).contains("incremental"));
        assert!(!force_index_settings(120_022).contains("incremental"));
        assert!(force_index_settings(130_000).contains("enable_incremental_sort = off"));
        assert!(force_index_settings(180_004).contains("enable_sort = off"));
    }

    #[test]
    fn statistics_views_follow_the_version() {
        let of = |v| stat_views(v).collect::<Vec<_>>();
        assert!(of(100_023).contains(&"pg_stat_bgwriter"));
        assert!(!of(130_023).contains(&"pg_stat_wal"));
        assert!(of(140_000).contains(&"pg_stat_wal"));
        assert!(!of(150_018).contains(&"pg_stat_io"));
        assert!(of(160_014).contains(&"pg_stat_io"));
        assert!(!of(160_014).contains(&"pg_stat_checkpointer"));
        assert!(of(180_004).contains(&"pg_stat_checkpointer"));
    }

    #[test]
    fn create_table_text() {
        let opts = TableOptions::default();
        assert_eq!(
            create_table_sql("pi1", &opts, 150_004, Flavour::Postgres),
            vec![
                "CREATE TABLE pi1 (transactionid bigint GENERATED BY DEFAULT AS IDENTITY \
                 (CACHE 1000) PRIMARY KEY, dateandtime timestamp, cashregisterid int NOT NULL, \
                 customerid int NOT NULL, productid int NOT NULL, price int NOT NULL, \
                 data varchar(4000))"
                    .to_string()
            ]
        );
        let old = create_table_sql("pi2", &opts, 90_624, Flavour::Postgres);
        assert_eq!(old.len(), 2);
        assert!(old[0].starts_with("CREATE TABLE pi2 (transactionid bigserial PRIMARY KEY, "));
        assert_eq!(old[1], "ALTER SEQUENCE pi2_transactionid_seq CACHE 1000");
        let client = TableOptions {
            client_assigns_ids: true,
            table_suffix: Some("USING heap".to_string()),
            ..TableOptions::default()
        };
        let sql = create_table_sql("pi1", &client, 90_000, Flavour::Postgres);
        assert_eq!(sql.len(), 1);
        assert!(sql[0].starts_with("CREATE TABLE pi1 (transactionid bigint PRIMARY KEY, "));
        assert!(sql[0].ends_with("data varchar(4000)) USING heap"));
    }

    #[test]
    fn index_text() {
        assert_eq!(
            create_index_sql("pi1", SecondaryIndex::Pdc),
            "CREATE INDEX pi1_pdc ON pi1 (price, dateandtime, customerid)"
        );
    }

    #[test]
    fn insert_text() {
        assert_eq!(
            insert_sql("pi1", 2, false),
            "INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data) \
             VALUES ($1, $2, $3, $4, $5, $6), ($1, $7, $8, $9, $10, $11)"
        );
        assert_eq!(
            insert_sql("pi3", 2, true),
            "INSERT INTO pi3 (transactionid, dateandtime, cashregisterid, customerid, productid, \
             price, data) VALUES ($2, $1, $3, $4, $5, $6, $7), ($8, $1, $9, $10, $11, $12, $13)"
        );
        let hundred = insert_sql("pi1", 100, false);
        assert!(hundred.ends_with("($1, $497, $498, $499, $500, $501)"));
    }

    #[test]
    fn insert_params_follow_the_placeholders() {
        use crate::workload::{Rng, RowGenerator, RowShape};
        let mut g = RowGenerator::new(Rng::for_stream(1, 1, 0), RowShape::default(), Some(7));
        let mut b = RowBatch::default();
        g.fill(&mut b, 3);
        let params: Vec<Param<'_>> = InsertParams::new(&b).collect();
        assert_eq!(params.len(), 1 + 3 * 6);
        assert_eq!(InsertParams::new(&b).len(), 19);
        assert!(matches!(params[0], Param::Timestamp(_)));
        assert!(matches!(params[1], Param::BigInt(7)));
        assert!(matches!(params[8], Param::Int(v) if v == b.cashregisterid[1]));
        assert!(matches!(params[18], Param::Text(s) if s == b.data(2)));
        let mut g = RowGenerator::new(Rng::for_stream(1, 1, 0), RowShape::default(), None);
        g.fill(&mut b, 2);
        let params: Vec<Param<'_>> = InsertParams::new(&b).collect();
        assert_eq!(params.len(), 11);
        assert!(matches!(params[9], Param::Int(v) if v == b.price[1]));
    }

    #[test]
    fn query_text() {
        assert_eq!(
            Flavour::Postgres.pg_delete_sql("pi1"),
            "DELETE FROM pi1 WHERE transactionid = ANY(ARRAY(SELECT transactionid \
             FROM pi1 WHERE transactionid >= $1 ORDER BY transactionid LIMIT $2))"
        );
        assert_eq!(
            range_sql("pi1", SecondaryIndex::MarketSegment),
            "SELECT productid, customerid, price FROM pi1 WHERE productid >= $1 \
             ORDER BY productid, customerid, price LIMIT 10"
        );
        assert_eq!(
            range_sql("pi2", SecondaryIndex::RegisterSegment),
            "SELECT cashregisterid, customerid, price FROM pi2 WHERE cashregisterid >= $1 \
             ORDER BY cashregisterid, customerid, price LIMIT 10"
        );
        assert_eq!(
            range_sql("pi1", SecondaryIndex::Pdc),
            "SELECT price, dateandtime, customerid FROM pi1 WHERE price >= $1 \
             ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        assert_eq!(
            point_sql("pi1", 3),
            "SELECT transactionid, productid, data FROM pi1 WHERE transactionid IN ($1, $2, $3)"
        );
        assert_eq!(
            min_max_sql("pi1"),
            "SELECT min(transactionid), max(transactionid) FROM pi1"
        );
        assert_eq!(
            count_via_index_sql("pi1", SecondaryIndex::Pdc),
            "SELECT count(*) FROM (SELECT 1 FROM pi1 WHERE price >= -2147483648 \
             ORDER BY price, dateandtime, customerid) AS s"
        );
        assert_eq!(vacuum_sql("pi2"), "VACUUM (ANALYZE) pi2");
    }

    #[test]
    fn url_is_completed_from_the_environment() {
        let none = env_of(&[]);
        assert_eq!(
            fill_pg_url("postgres://bob:pw@db.example:6000/ibench", &none),
            "postgres://bob:pw@db.example:6000/ibench"
        );
        // Host and port in the URL win; nothing is added when all parts are there.
        let all = env_of(&[
            ("PGHOST", "/tmp/sock"),
            ("PGPORT", "55432"),
            ("PGUSER", "alice"),
            ("PGPASSWORD", "s/cret"),
            ("PGDATABASE", "bench"),
        ]);
        assert_eq!(
            fill_pg_url("postgres://bob:pw@h:1/db", &all),
            "postgres://bob:pw@h:1/db"
        );
        assert_eq!(
            fill_pg_url("postgresql://", &all),
            "postgresql://alice:s%2Fcret@%2Ftmp%2Fsock:55432/bench"
        );
        assert_eq!(
            fill_pg_url("postgres://bob@h1,h2:7/x", &all),
            "postgres://bob:s%2Fcret@h1:55432,h2:7/x"
        );
        assert_eq!(
            fill_pg_url("postgres:///db?host=/tmp/s", &all),
            "postgres://alice:s%2Fcret@/db?host=/tmp/s&port=55432"
        );
        let user_only = env_of(&[("USER", "root")]);
        assert_eq!(
            fill_pg_url("postgres://", &user_only),
            "postgres://root@%2Fvar%2Frun%2Fpostgresql,localhost"
        );
        assert_eq!(
            fill_pg_url("postgres://", &none),
            "postgres://postgres@%2Fvar%2Frun%2Fpostgresql,localhost"
        );
    }

    #[test]
    fn completed_urls_parse() {
        let all = env_of(&[("PGHOST", "/tmp/sock"), ("PGPORT", "55432"), ("USER", "u")]);
        let url = fill_pg_url("postgres:///ibench", &all);
        let config = Config::from_str(&url).unwrap();
        assert_eq!(config.get_ports(), &[55432]);
        assert_eq!(config.get_user(), Some("u"));
        assert_eq!(config.get_dbname(), Some("ibench"));
        assert!(matches!(
            &config.get_hosts()[0],
            pg::config::Host::Unix(p) if p.to_str() == Some("/tmp/sock")
        ));
        let none = env_of(&[]);
        let config = Config::from_str(&fill_pg_url("postgres://", &none)).unwrap();
        assert_eq!(config.get_hosts().len(), 2);
        assert_eq!(config.get_ports(), &[5432, 5432]);
    }

    #[test]
    fn driver_redacts_the_password() {
        let d = PostgresDriver::new("postgres://bob:secret@127.0.0.1:1/db", None).unwrap();
        assert_eq!(d.target, "postgres://bob:***@127.0.0.1:1/db");
    }
}
