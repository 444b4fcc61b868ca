//! PostgreSQL backend.
//!
//! The benchmark's connections ([`PostgresConn`]) run on [`wire`], a blocking protocol client
//! that costs what libpq costs or less: the thread blocks on its own socket, a statement's
//! `Bind` is encoded into one reused buffer, replies are read in place. The admin connections
//! of the driver (describe, the settle phase's VACUUM and CHECKPOINT) use the synchronous
//! `postgres` crate.
//!
//! The URL is completed from the libpq environment variables (`PGHOST`, `PGPORT`, `PGUSER`,
//! `PGPASSWORD`, `PGDATABASE`) for the parts it leaves out, since the `postgres` crate reads no
//! environment. Every statement of the hot path is prepared once per connection and bound in
//! the binary format without allocating per row.

pub mod wire;

use crate::stats::convert::i64_u64;
use std::collections::HashMap;
use std::error::Error as StdError;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use ::postgres as pg;
use pg::error::SqlState;
use pg::{Client, Config, NoTls};

use super::flavour::Flavour;
use super::micro_sql::{self, Outcome, Placeholders};
use super::*;
use crate::workload::micro::MicroStatement;
use wire::{Executed, Prepared, Value, WireConn, WireError};

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
        if config.get_ssl_mode() == pg::config::SslMode::Require {
            anyhow::bail!(
                "--url '{}' asks for sslmode=require, but ibench connects without TLS: remove \
                 sslmode from --url (reach the server over a trusted network or its Unix socket)",
                redact_url(url)
            );
        }
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
    fn flavour(&self, version: impl FnOnce() -> String) -> Flavour {
        *self.flavour.get_or_init(|| {
            self.forced
                .unwrap_or_else(|| Flavour::detect(BackendKind::Postgres, &version()))
        })
    }

    /// `SELECT version()` on an admin connection (empty when it fails).
    fn client_version(client: &mut Client) -> String {
        client
            .query_one("SELECT version()", &[])
            .and_then(|r| r.try_get(0))
            .unwrap_or_default()
    }

    fn client(&self) -> BackendResult<Client> {
        self.config
            .connect(NoTls)
            .map_err(|e| connect_error(&self.target, &e))
    }
}

impl Driver for PostgresDriver {
    fn connect(&self) -> BackendResult<Box<dyn Conn>> {
        let mut wire =
            WireConn::connect(&self.config).map_err(|e| wire_connect_error(&self.target, &e))?;
        let flavour = self.flavour(|| {
            wire.simple_value("SELECT version()")
                .ok()
                .flatten()
                .unwrap_or_default()
        });
        Ok(Box::new(PostgresConn {
            wire,
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
        let flavour = self.flavour(|| Self::client_version(&mut client));
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
        if !self
            .flavour(|| Self::client_version(&mut main))
            .has_engine_maintenance()
        {
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

/// One PostgreSQL connection with its prepared statements, on the blocking protocol client
/// ([`wire`]): every statement the steps send, admin ones included, goes over it.
pub struct PostgresConn {
    wire: WireConn,
    flavour: Flavour,
    target: String,
    statements: HashMap<String, TableStatements<Prepared>>,
    server_version_num: Option<i32>,
}

/// Cancels a Postgres connection's statement with the protocol's cancel request.
struct PgCanceller(wire::CancelKey);

impl Canceller for PgCanceller {
    fn cancel(&self) -> Result<(), String> {
        self.0.cancel().map_err(|e| e.to_string())
    }
}

impl PostgresConn {
    fn err(&self, context: &str, e: &WireError) -> BackendError {
        wire_error(&self.target, context, e)
    }

    /// Run `sql` with the simple protocol; its rows as text.
    fn run(&mut self, sql: &str, context: &str) -> BackendResult<Vec<Vec<Option<String>>>> {
        self.wire.simple(sql).map_err(|e| self.err(context, &e))
    }

    /// The first column of the first row of `sql`, as text (`None` for no row or NULL).
    fn value(&mut self, sql: &str, context: &str) -> BackendResult<Option<String>> {
        self.wire
            .simple_value(sql)
            .map_err(|e| self.err(context, &e))
    }

    /// The first column of the first row of `sql`, as a number.
    fn number(&mut self, sql: &str, context: &str) -> BackendResult<i64> {
        let text = self.value(sql, context)?.unwrap_or_default();
        text.trim()
            .parse::<i64>()
            .map_err(|e| BackendError::sql(context, format!("'{text}': {e}")))
    }

    fn server_version_num(&mut self) -> BackendResult<i32> {
        if let Some(v) = self.server_version_num {
            return Ok(v);
        }
        let context = "read server_version_num";
        let v = i32::try_from(self.number("SHOW server_version_num", context)?)
            .map_err(|e| BackendError::sql(context, e))?;
        self.server_version_num = Some(v);
        Ok(v)
    }

    /// Run the statement `key` of `table` with `params`, preparing it from `sql()` on first
    /// use. The hot path looks the statement up once and clones nothing.
    fn execute<'a>(
        &mut self,
        table: &str,
        key: StatementKey,
        sql: impl FnOnce() -> String,
        context: &dyn Fn() -> String,
        params: impl IntoIterator<Item = Value<'a>>,
    ) -> BackendResult<Executed> {
        let target = &self.target;
        with_cached_statement(
            &mut self.statements,
            table,
            key,
            &mut self.wire,
            |wire| {
                wire.prepare(&sql())
                    .map_err(|e| wire_error(target, &context(), &e))
            },
            |wire, stmt| {
                wire.execute(stmt, params)
                    .map_err(|e| wire_error(target, &context(), &e))
            },
        )
    }
}

impl Conn for PostgresConn {
    fn canceller(&self) -> Option<Box<dyn Canceller>> {
        Some(Box::new(PgCanceller(self.wire.cancel_key())))
    }

    fn create_table(&mut self, table: &str, options: &TableOptions) -> BackendResult<()> {
        self.drop_table(table)?;
        let version = self.server_version_num()?;
        let context = format!("create table {table}");
        for sql in create_table_sql(table, options, version, self.flavour) {
            self.run(&sql, &context)?;
        }
        Ok(())
    }

    fn drop_table(&mut self, table: &str) -> BackendResult<()> {
        self.statements.remove(table);
        self.run(
            &format!("DROP TABLE IF EXISTS {table}"),
            &format!("drop table {table}"),
        )
        .map(drop)
    }

    fn create_micro_table(&mut self, table: &str, _options: &TableOptions) -> BackendResult<()> {
        self.drop_table(table)?;
        for sql in micro_sql::create_table_sql(table, "") {
            self.run(&sql, &format!("create table {table}"))?;
        }
        Ok(())
    }

    fn micro(&mut self, table: &str, statements: &[MicroStatement]) -> BackendResult<u64> {
        micro_sql::run_operation(
            self,
            statements,
            |c, s| c.micro_statement(table, s),
            |c| {
                let _ = c.wire.simple("ROLLBACK");
            },
        )
    }

    fn create_secondary_indexes(&mut self, table: &str) -> BackendResult<()> {
        for index in SecondaryIndex::ALL {
            let sql = create_index_sql(table, index);
            self.run(&sql, &format!("create index {}", index.name(table)))?;
        }
        Ok(())
    }

    fn has_secondary_indexes(&mut self, table: &str) -> BackendResult<bool> {
        let names: Vec<String> = SecondaryIndex::ALL
            .iter()
            .map(|i| quote_literal(&i.name(table).to_lowercase()))
            .collect();
        let sql = format!(
            "SELECT count(DISTINCT indexname) FROM pg_indexes \
             WHERE schemaname = current_schema() AND tablename = {} AND indexname IN ({})",
            quote_literal(&table.to_lowercase()),
            names.join(", ")
        );
        let n = self.number(&sql, &format!("list the indexes of {table}"))?;
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
        let done = self.execute(
            table,
            key,
            || insert_sql(table, rows, ids),
            &|| insert_context(table),
            InsertParams::new(batch),
        )?;
        Ok(done.rows_affected)
    }

    fn delete_oldest(&mut self, table: &str, min_id: i64, limit: u32) -> BackendResult<u64> {
        let flavour = self.flavour;
        let done = self.execute(
            table,
            StatementKey::Delete,
            || flavour.pg_delete_sql(table),
            &|| format!("delete from {table}"),
            [Value::Int(min_id), Value::Int(i64::from(limit))],
        )?;
        Ok(done.rows_affected)
    }

    fn min_max_id(&mut self, table: &str) -> BackendResult<Option<(i64, i64)>> {
        let context = format!("read min and max transactionid of {table}");
        let rows = self.run(&min_max_sql(table), &context)?;
        min_max_of_text(rows.into_iter().next(), &context)
    }

    fn range_query(&mut self, table: &str, index: SecondaryIndex, from: i32) -> BackendResult<u64> {
        let done = self.execute(
            table,
            StatementKey::Range(index),
            || range_sql(table, index),
            &|| format!("range query on {table} via {}", index.name(table)),
            [Value::Int(i64::from(from))],
        )?;
        Ok(done.rows_returned)
    }

    fn point_query(&mut self, table: &str, ids: &[i64]) -> BackendResult<u64> {
        if ids.is_empty() {
            return Ok(0);
        }
        let n = ids.len();
        let done = self.execute(
            table,
            StatementKey::Point(n),
            || point_sql(table, n),
            &|| format!("point query on {table}"),
            ids.iter().map(|id| Value::Int(*id)),
        )?;
        Ok(done.rows_returned)
    }

    fn count_rows(&mut self, table: &str) -> BackendResult<u64> {
        let n = self.number(
            &format!("SELECT count(*) FROM {table}"),
            &format!("count rows of {table}"),
        )?;
        Ok(i64_u64(n))
    }

    fn count_rows_via_index(&mut self, table: &str, index: SecondaryIndex) -> BackendResult<u64> {
        let name = index.name(table);
        let context = format!("count rows of {table} via {name}");
        let sql = count_via_index_sql(table, index);
        let settings = force_index_settings(self.server_version_num()?);
        self.run(&format!("BEGIN; {settings}"), &context)?;
        let counted = self.count_in_transaction(&sql, &name, &context);
        let end = if counted.is_ok() {
            "COMMIT"
        } else {
            "ROLLBACK"
        };
        let ended = self.run(end, &context);
        let n = counted?;
        ended?;
        Ok(n)
    }

    fn database_size_bytes(&mut self, tables: &[String]) -> BackendResult<Option<DbSize>> {
        let context = "read the database size";
        let total = self.number("SELECT pg_database_size(current_database())", context)?;
        let mut sizes = std::collections::BTreeMap::new();
        for t in tables {
            let sql = format!(
                "SELECT pg_total_relation_size(to_regclass({}))",
                quote_literal(t)
            );
            if let Some(size) = self.value(&sql, context)? {
                let size: i64 = size
                    .parse()
                    .map_err(|e| BackendError::sql(context, format!("'{size}': {e}")))?;
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
        let dir = self
            .value("SHOW data_directory", "SHOW data_directory")?
            .unwrap_or_default();
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
                .wire
                .simple_value(&sql)
                .map_err(|e| e.to_string())
                .and_then(|text| {
                    serde_json::from_str(&text.unwrap_or_default()).map_err(|e| e.to_string())
                })
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
        let text = self
            .value(
                "SELECT coalesce(json_object_agg(name, json_build_object('setting', setting, \
                 'unit', unit, 'source', source) ORDER BY name), '{}'::json)::text FROM pg_settings",
                context,
            )?
            .unwrap_or_default();
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| BackendError::sql(context, e))
    }
}

impl PostgresConn {
    /// Inside the forced-index transaction: check the plan reads `index_name`, then count.
    fn count_in_transaction(
        &mut self,
        sql: &str,
        index_name: &str,
        context: &str,
    ) -> BackendResult<u64> {
        // Check that the planner really reads this index, so the count means what it says.
        let plan: Vec<String> = self
            .run(&format!("EXPLAIN {sql}"), context)?
            .into_iter()
            .filter_map(|row| row.into_iter().next().flatten())
            .collect();
        let uses_index = plan
            .iter()
            .any(|line| line.contains(&format!("using {} ", index_name.to_lowercase())));
        if !uses_index {
            return Err(BackendError::sql(
                context,
                format!(
                    "the planner would not read {index_name}: {}",
                    plan.join(" / ")
                ),
            ));
        }
        Ok(i64_u64(self.number(sql, context)?))
    }

    /// `version()` and, when this user may read it, `pg_config`'s CONFIGURE, CC and CFLAGS.
    fn read_build_facts(&mut self) -> BackendResult<BuildFacts> {
        let version_string = self.value("SELECT version()", "SELECT version()")?;
        let mut facts = BuildFacts {
            version_string,
            ..BuildFacts::default()
        };
        // pg_config is readable by superusers (and members of pg_read_all_settings from 10).
        let rows = self.wire.simple(
            "SELECT name, setting FROM pg_config WHERE name IN ('CONFIGURE', 'CC', 'CFLAGS')",
        );
        match rows {
            Ok(rows) => {
                for row in rows {
                    let mut cells = row.into_iter();
                    let (Some(Some(name)), Some(Some(setting))) = (cells.next(), cells.next())
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
                wire_detail(&e)
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

/// `s` as an SQL string literal (quotes doubled; `standard_conforming_strings` is on in
/// every supported server).
fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl PostgresConn {
    /// One microbenchmark statement: rows read (a scan: rows counted) or changed.
    fn micro_statement(&mut self, table: &str, s: &MicroStatement) -> BackendResult<u64> {
        let context = || format!("{:?} on {table}", s.kind);
        let outcome = micro_sql::outcome(s.kind);
        if outcome == Outcome::Control {
            let sql = micro_sql::statement_sql(s.kind, table, 0, PLACEHOLDERS);
            self.run(&sql, &context())?;
            return Ok(0);
        }
        let n = s.ints.len();
        let params = micro_sql::params(s, |v| Value::Int(i64::from(*v)), |v| Value::Text(v));
        let done = self.execute(
            table,
            StatementKey::Micro(s.kind, n),
            || micro_sql::statement_sql(s.kind, table, n, PLACEHOLDERS),
            &context,
            params,
        )?;
        Ok(match outcome {
            Outcome::Count => i64_u64(done.first_int.unwrap_or(0)),
            Outcome::Changed => done.rows_affected,
            Outcome::Rows | Outcome::Control => done.rows_returned,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Parameters of the insert: borrowed from the batch, no allocation per row.

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
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Value<'a>> {
        if self.next >= self.total {
            return None;
        }
        let n = self.next;
        self.next += 1;
        if n == 0 {
            return Some(Value::Timestamp(self.timestamp));
        }
        let row = (n - 1) / self.per_row;
        let mut col = (n - 1) % self.per_row;
        let b = self.batch;
        if self.per_row == 6 {
            if col == 0 {
                return Some(Value::Int(b.transactionid[row]));
            }
            col -= 1;
        }
        Some(match col {
            0 => Value::Int(i64::from(b.cashregisterid[row])),
            1 => Value::Int(i64::from(b.customerid[row])),
            2 => Value::Int(i64::from(b.productid[row])),
            3 => Value::Int(i64::from(b.price[row])),
            _ => Value::Text(b.data(row)),
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
    classify(target, context, e.code(), pg_detail(e), is_connectivity(e))
}

/// What a caller branches on, from an error's SQLSTATE (if the server sent one), its text,
/// and whether the connection is gone.
fn classify(
    target: &str,
    context: &str,
    code: Option<&SqlState>,
    detail: String,
    connectivity: bool,
) -> BackendError {
    match code {
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
        None if connectivity => BackendError::Unreachable {
            target: target.to_string(),
            detail,
        },
        None => BackendError::sql(context, detail),
    }
}

/// A [`WireError`] as text: the server's message with its SQLSTATE, as [`pg_detail`] writes it.
fn wire_detail(e: &WireError) -> String {
    match e.server() {
        Some(s) => format!("{s} (SQLSTATE {})", s.code),
        None => e.to_string(),
    }
}

/// Map an error of a statement on the benchmark's connection.
fn wire_error(target: &str, context: &str, e: &WireError) -> BackendError {
    let code = e.server().map(|s| SqlState::from_code(&s.code));
    match e {
        WireError::Auth(_) => BackendError::Auth {
            target: target.to_string(),
            detail: wire_detail(e),
        },
        _ => classify(
            target,
            context,
            code.as_ref(),
            wire_detail(e),
            matches!(e, WireError::Io(_)),
        ),
    }
}

/// Map an error of opening the benchmark's connection (as [`connect_error`] does for the
/// admin connections).
fn wire_connect_error(target: &str, e: &WireError) -> BackendError {
    let context = format!("connect to {target}");
    match e {
        WireError::Server(s) if s.code == SqlState::INVALID_CATALOG_NAME.code() => {
            BackendError::sql(context, missing_database(&wire_detail(e)))
        }
        WireError::Server(_) | WireError::Auth(_) => wire_error(target, &context, e),
        WireError::Io(_) => BackendError::Unreachable {
            target: target.to_string(),
            detail: wire_detail(e),
        },
        WireError::Param(_) | WireError::Protocol(_) => BackendError::sql(context, wire_detail(e)),
    }
}

/// The message for a database that does not exist: what to do about it.
fn missing_database(detail: &str) -> String {
    format!(
        "{detail}; create the database (createdb, or CREATE DATABASE) or name an existing one \
         in --url"
    )
}

/// Map an error of opening a connection.
fn connect_error(target: &str, e: &pg::Error) -> BackendError {
    let detail = pg_detail(e);
    if let Some(db) = e.as_db_error() {
        if *db.code() == SqlState::INVALID_CATALOG_NAME {
            return BackendError::sql(format!("connect to {target}"), missing_database(&detail));
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
        let params: Vec<Value<'_>> = InsertParams::new(&b).collect();
        assert_eq!(params.len(), 1 + 3 * 6);
        assert_eq!(InsertParams::new(&b).len(), 19);
        assert!(matches!(params[0], Value::Timestamp(_)));
        assert!(matches!(params[1], Value::Int(7)));
        assert!(matches!(params[8], Value::Int(v) if v == i64::from(b.cashregisterid[1])));
        assert!(matches!(params[18], Value::Text(s) if s == b.data(2)));
        let mut g = RowGenerator::new(Rng::for_stream(1, 1, 0), RowShape::default(), None);
        g.fill(&mut b, 2);
        let params: Vec<Value<'_>> = InsertParams::new(&b).collect();
        assert_eq!(params.len(), 11);
        assert!(matches!(params[9], Value::Int(v) if v == i64::from(b.price[1])));
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
