//! A step as a plan: which connections it opens and what each does, when it ends, what it
//! needs before it starts, what it checks after, its settle phase and its throughput figure.
//! The ten insert-benchmark steps are ten plans built here; the runner drives any plan with
//! the one client loop and never asks which step it is.

use crate::stats::OpKind;
use crate::stats::convert::count_f64;

use super::micro::MicroStep;
use super::steps::{QueryKind, StepName, ThroughputUnit};

/// How many statements a deleter may fall behind its inserter before the inserter waits (the
/// original used a queue of 8).
pub const DELETE_QUEUE_STATEMENTS: usize = 8;

/// The sizes a plan is built from: the run's options as far as the workload needs them.
#[derive(Clone, Debug, PartialEq)]
pub struct StepSizes {
    /// Clients.
    pub clients: u32,
    /// All clients share one table.
    pub shared_table: bool,
    /// X: rows per client of l.i0.
    pub load_rows: u64,
    /// Y: rows per client of l.i1.
    pub i1_rows: u64,
    /// Z: rows per client of l.i2.
    pub i2_rows: u64,
    /// Rows per insert of l.i0.
    pub load_rows_per_insert: u32,
    /// Rows per insert and delete of l.i1.
    pub i1_rows_per_insert: u32,
    /// Rows per insert and delete of l.i2.
    pub i2_rows_per_insert: u32,
    /// Rows per background insert and delete of the query steps.
    pub query_rows_per_insert: u32,
    /// Seconds a query step runs.
    pub query_seconds: f64,
    /// Cap on l.i2's settle phase, seconds (`None`: the formula alone).
    pub settle_max_seconds: Option<f64>,
    /// The microbenchmarks' tables, rows and seconds.
    pub micro: super::micro::MicroSizes,
}

impl StepSizes {
    /// Tables in the run: one per client, or one shared.
    pub fn table_count(&self) -> u32 {
        if self.shared_table { 1 } else { self.clients }
    }

    /// Clients writing to each table.
    pub fn writers_per_table(&self) -> u64 {
        if self.shared_table {
            u64::from(self.clients)
        } else {
            1
        }
    }
}

/// What one connection (or pair of connections) of a step does.
#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    /// Insert `rows` rows in PK order, `rows_per_insert` per statement (l.i0).
    Load {
        /// Rows to insert.
        rows: u64,
        /// Rows per statement.
        rows_per_insert: u32,
    },
    /// Create the secondary indexes of the table (l.x).
    Index,
    /// An inserter and the deleter that follows it: two connections. `rows` rows (`None`:
    /// until the step ends), paced at `statements_per_sec` when given.
    Writers {
        /// Rows to insert and delete.
        rows: Option<u64>,
        /// Rows per insert and per delete.
        rows_per_insert: u32,
        /// Statements per second of each, when paced.
        statements_per_sec: Option<f64>,
    },
    /// Queries back to back.
    Queries(QueryKind),
    /// Load `rows` rows into a microbenchmark table (ids `1..=rows`), 100 per transaction.
    MicroLoad {
        /// Rows to load.
        rows: u32,
    },
    /// A microbenchmark's operations back to back.
    Micro(MicroStep),
}

/// The work of one client of a step: its table is the client's (the runner's
/// `connections::table_of`).
#[derive(Clone, Debug, PartialEq)]
pub struct ClientPlan {
    /// The client (0-based); for l.x, the table's index.
    pub client: u32,
    /// What its connections do.
    pub roles: Vec<Role>,
}

/// What the tables must be like before a step starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: the step (re)creates the tables.
    Nothing,
    /// The tables exist.
    Tables,
    /// The tables exist without the secondary indexes (the step creates them).
    TablesWithoutIndexes,
    /// The tables exist with the secondary indexes.
    TablesWithIndexes,
}

/// When a step ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopRule {
    /// When every connection has done its work.
    WorkDone,
    /// After this many seconds.
    AfterSeconds(f64),
}

/// What a step's throughput figure counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Throughput {
    /// Rows of this op kind per second, with a per-second series.
    Rows(OpKind),
    /// Rows of this op kind per second, one operation per table (no per-second series).
    RowsOnce(OpKind),
    /// Operations of this op kind per second, with a per-second series.
    Ops(OpKind),
}

impl Throughput {
    /// What the figure counts, per second: rows inserted or indexed, queries, a
    /// microbenchmark's operations or the rows it scanned.
    pub fn unit(self) -> ThroughputUnit {
        match self {
            Throughput::Rows(OpKind::Micro) => ThroughputUnit::RowsScanned,
            Throughput::Rows(_) => ThroughputUnit::InsertedRows,
            Throughput::RowsOnce(_) => ThroughputUnit::IndexedRows,
            Throughput::Ops(OpKind::Micro) => ThroughputUnit::Operations,
            Throughput::Ops(_) => ThroughputUnit::Queries,
        }
    }

    /// The op kind counted.
    pub fn kind(self) -> OpKind {
        match self {
            Throughput::Rows(k) | Throughput::RowsOnce(k) | Throughput::Ops(k) => k,
        }
    }
}

/// The shape of the tables a step creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableShape {
    /// The insert benchmark's table (spec section 1).
    InsertBenchmark,
    /// The microbenchmarks' sysbench table.
    Sysbench,
}

/// What a step means each table to hold afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowsIntent {
    /// Nothing to check (the step writes no rows).
    None,
    /// Exactly this many rows (a load into new tables).
    Exactly(u64),
    /// The rows it held before: inserts and deletes balance. A step stopped early or on time
    /// may leave what its deleters still had queued, `queued_rows` per table.
    Keep {
        /// Rows the deleters of one table may have had queued.
        queued_rows: u64,
        /// Whether a step that ran to its end must match exactly (l.i1, l.i2) or may always
        /// be off by the queue (query steps end on time, with deletes queued).
        exact_when_done: bool,
    },
}

/// A step as data.
#[derive(Clone, Debug, PartialEq)]
pub struct StepPlan {
    /// The step.
    pub step: StepName,
    /// The step drops and creates the tables before it starts.
    pub creates_tables: bool,
    /// The shape of the tables it creates.
    pub table_shape: TableShape,
    /// What must be there before it starts.
    pub needs: Needs,
    /// The step creates the secondary indexes (later steps may then need them).
    pub creates_indexes: bool,
    /// Its clients' work.
    pub clients: Vec<ClientPlan>,
    /// When it ends.
    pub stop: StopRule,
    /// Rows of an op kind the progress line counts toward, when it has a total.
    pub goal_rows: Option<(OpKind, u64)>,
    /// Its throughput figure.
    pub throughput: Throughput,
    /// The background insert rate its SLA holds it to (rows/s, all clients), if any.
    pub sla_target_rows_per_sec: Option<f64>,
    /// It ends with the settle phase (the engine's maintenance, then rest).
    pub settle: bool,
    /// What the integrity check after it expects.
    pub rows_intent: RowsIntent,
    /// Its estimated duration on a small host, seconds (the matrix's plan and ETA).
    pub estimate_seconds: f64,
}

/// Rows per second the estimates assume for l.i0 and m.load, l.x, l.i1 and l.i2 on a small
/// host (2 cores; docs/matrix.md).
const EST_LOAD_ROWS_PER_SEC: f64 = 40_000.0;
const EST_INDEX_ROWS_PER_SEC: f64 = 200_000.0;
const EST_I1_ROWS_PER_SEC: f64 = 10_000.0;
const EST_I2_ROWS_PER_SEC: f64 = 2_000.0;

/// The most connections `m.load` uses: more tables than this are loaded by these, in turn
/// (one connection and thread per table made thousands of them).
pub const MAX_MICRO_LOADERS: u32 = 8;

/// The loader connections of `m.load` for `tables` tables.
pub fn micro_loaders(tables: u32) -> u32 {
    tables.clamp(1, MAX_MICRO_LOADERS)
}

/// The tables (0-based) loader `client` of `m.load` fills: every `micro_loaders`-th from it.
pub fn micro_loader_tables(client: u32, tables: u32) -> impl Iterator<Item = u32> {
    let loaders = micro_loaders(tables);
    (client..tables).step_by(usize::try_from(loaders).unwrap_or(1))
}

/// `count` clients, numbered from 0, each with `roles`.
fn clients(count: u32, roles: &[Role]) -> Vec<ClientPlan> {
    (0..count)
        .map(|client| ClientPlan {
            client,
            roles: roles.to_vec(),
        })
        .collect()
}

impl StepPlan {
    /// The plan of `step` for these sizes.
    pub fn for_step(step: StepName, sizes: &StepSizes) -> StepPlan {
        let base = StepPlan {
            step,
            creates_tables: false,
            table_shape: TableShape::InsertBenchmark,
            needs: Needs::Tables,
            creates_indexes: false,
            clients: Vec::new(),
            stop: StopRule::WorkDone,
            goal_rows: None,
            throughput: Throughput::Rows(OpKind::Insert),
            sla_target_rows_per_sec: None,
            settle: false,
            rows_intent: RowsIntent::None,
            estimate_seconds: 0.0,
        };
        let all_load_rows = count_f64(sizes.load_rows) * f64::from(sizes.clients);
        match step {
            StepName::LoadInitial => StepPlan {
                creates_tables: true,
                needs: Needs::Nothing,
                clients: clients(
                    sizes.clients,
                    &[Role::Load {
                        rows: sizes.load_rows,
                        rows_per_insert: sizes.load_rows_per_insert,
                    }],
                ),
                goal_rows: Some((OpKind::Insert, sizes.load_rows * u64::from(sizes.clients))),
                rows_intent: RowsIntent::Exactly(sizes.load_rows * sizes.writers_per_table()),
                estimate_seconds: all_load_rows / EST_LOAD_ROWS_PER_SEC,
                ..base
            },
            StepName::CreateIndexes => StepPlan {
                needs: Needs::TablesWithoutIndexes,
                creates_indexes: true,
                clients: (0..sizes.table_count())
                    .map(|client| ClientPlan {
                        client,
                        roles: vec![Role::Index],
                    })
                    .collect(),
                throughput: Throughput::RowsOnce(OpKind::CreateIndexes),
                estimate_seconds: all_load_rows / EST_INDEX_ROWS_PER_SEC,
                ..base
            },
            StepName::InsertDelete1 | StepName::InsertDelete2 => {
                Self::insert_delete(base, step == StepName::InsertDelete1, sizes)
            }
            StepName::Query {
                kind,
                rate_rows_per_sec,
            } => Self::query(base, kind, rate_rows_per_sec, sizes),
            StepName::MicroLoad => Self::micro_load(base, sizes),
            StepName::Micro(m) => Self::micro(base, m, sizes),
        }
    }

    /// l.i1 (`first`) or l.i2: inserts and deletes as fast as they go, each client on its
    /// table, the settle phase after l.i2.
    fn insert_delete(base: StepPlan, first: bool, sizes: &StepSizes) -> StepPlan {
        let (rows, rows_per_insert) = if first {
            (sizes.i1_rows, sizes.i1_rows_per_insert)
        } else {
            (sizes.i2_rows, sizes.i2_rows_per_insert)
        };
        let queued_rows = (DELETE_QUEUE_STATEMENTS as u64 + 1)
            * u64::from(rows_per_insert)
            * sizes.writers_per_table();
        StepPlan {
            clients: clients(
                sizes.clients,
                &[Role::Writers {
                    rows: Some(rows),
                    rows_per_insert,
                    statements_per_sec: None,
                }],
            ),
            goal_rows: Some((OpKind::Insert, rows * u64::from(sizes.clients))),
            settle: !first,
            estimate_seconds: if first {
                count_f64(rows) * f64::from(sizes.clients) / EST_I1_ROWS_PER_SEC
            } else {
                count_f64(rows) * f64::from(sizes.clients) / EST_I2_ROWS_PER_SEC
                    + super::steps::settle_seconds(
                        sizes.load_rows * u64::from(sizes.clients),
                        sizes.settle_max_seconds,
                    )
            },
            rows_intent: RowsIntent::Keep {
                queued_rows,
                exact_when_done: true,
            },
            ..base
        }
    }

    /// `m.load`: create the sysbench tables and load them, one loader per table up to
    /// [`MAX_MICRO_LOADERS`], each loading every that-many-th table past it.
    fn micro_load(base: StepPlan, sizes: &StepSizes) -> StepPlan {
        let tables = sizes.micro.tables.max(1);
        let loaders = micro_loaders(tables);
        StepPlan {
            creates_tables: true,
            table_shape: TableShape::Sysbench,
            needs: Needs::Nothing,
            clients: clients(
                loaders,
                &[Role::MicroLoad {
                    rows: sizes.micro.rows,
                }],
            ),
            goal_rows: Some((
                OpKind::Insert,
                u64::from(sizes.micro.rows) * u64::from(tables),
            )),
            estimate_seconds: f64::from(sizes.micro.rows) * f64::from(tables)
                / EST_LOAD_ROWS_PER_SEC,
            ..base
        }
    }

    /// A microbenchmark: its operations back to back on every client, for a fixed time.
    fn micro(base: StepPlan, m: MicroStep, sizes: &StepSizes) -> StepPlan {
        StepPlan {
            clients: clients(sizes.clients, &[Role::Micro(m)]),
            stop: StopRule::AfterSeconds(sizes.micro.seconds),
            estimate_seconds: sizes.micro.seconds,
            throughput: if m.counts_rows() {
                Throughput::Rows(OpKind::Micro)
            } else {
                Throughput::Ops(OpKind::Micro)
            },
            ..base
        }
    }

    /// A query step: queries back to back on one connection per client, with an inserter and
    /// its deleter paced at the step's rate beside them, for a fixed time.
    fn query(
        base: StepPlan,
        kind: QueryKind,
        rate_rows_per_sec: u32,
        sizes: &StepSizes,
    ) -> StepPlan {
        let step = base.step;
        let queued = (DELETE_QUEUE_STATEMENTS as u64 + 1)
            * u64::from(sizes.query_rows_per_insert)
            * sizes.writers_per_table();
        let per_insert = sizes.query_rows_per_insert;
        let writers = Role::Writers {
            rows: None,
            rows_per_insert: per_insert,
            statements_per_sec: Some(f64::from(rate_rows_per_sec) / f64::from(per_insert.max(1))),
        };
        StepPlan {
            needs: Needs::TablesWithIndexes,
            clients: clients(sizes.clients, &[Role::Queries(kind), writers.clone()]),
            stop: StopRule::AfterSeconds(sizes.query_seconds),
            estimate_seconds: sizes.query_seconds,
            throughput: Throughput::Ops(step.main_op()),
            sla_target_rows_per_sec: Some(f64::from(rate_rows_per_sec) * f64::from(sizes.clients)),
            rows_intent: RowsIntent::Keep {
                queued_rows: queued,
                exact_when_done: false,
            },
            ..base
        }
    }

    /// What the integrity check expects of one table that held `rows_before` rows when the
    /// step began: `(intended_rows, allowed_drift_rows)`, `(None, 0)` when it checks nothing.
    /// `ran_to_end` is false for a step that was stopped early.
    pub fn intended_rows(&self, rows_before: u64, ran_to_end: bool) -> (Option<u64>, u64) {
        match self.rows_intent {
            RowsIntent::None => (None, 0),
            RowsIntent::Exactly(_) if !ran_to_end => (None, 0),
            RowsIntent::Exactly(n) => (Some(n), 0),
            RowsIntent::Keep {
                queued_rows,
                exact_when_done,
            } => {
                let drift = if ran_to_end && exact_when_done {
                    0
                } else {
                    queued_rows
                };
                (Some(rows_before), drift)
            }
        }
    }

    /// Whether the step writes rows (and so gets an integrity check).
    pub fn writes_rows(&self) -> bool {
        self.rows_intent != RowsIntent::None
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn micro_loaders_are_bounded_and_cover_every_table_once() {
        for tables in [1, 3, 8, 9, 1000] {
            let loaders = micro_loaders(tables);
            assert!((1..=MAX_MICRO_LOADERS).contains(&loaders) && loaders <= tables);
            let mut seen: Vec<u32> = (0..loaders)
                .flat_map(|c| micro_loader_tables(c, tables))
                .collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..tables).collect::<Vec<_>>(), "{tables}");
        }
    }

    use super::*;
    use crate::workload::steps::parse_step_list;

    fn sizes() -> StepSizes {
        StepSizes {
            clients: 2,
            shared_table: false,
            load_rows: 1000,
            i1_rows: 300,
            i2_rows: 100,
            load_rows_per_insert: 100,
            i1_rows_per_insert: 50,
            i2_rows_per_insert: 5,
            query_rows_per_insert: 50,
            query_seconds: 5.0,
            settle_max_seconds: Some(2.0),
            micro: crate::workload::micro::MicroSizes {
                tables: 3,
                rows: 1000,
                seconds: 2.0,
            },
        }
    }

    #[test]
    fn each_step_estimates_its_own_duration() {
        let s = sizes();
        let est = |name: &str| plan(name, &s).estimate_seconds;
        // 2 clients x 1000 rows at 40,000 rows/s, and indexed at 200,000.
        assert!((est("l.i0") - 0.05).abs() < 1e-9);
        assert!((est("l.x") - 0.01).abs() < 1e-9);
        // l.i2: 2 x 100 rows at 2,000 rows/s, then the settle phase (capped at 2 s).
        assert!((est("l.i2") - (0.1 + 2.0)).abs() < 1e-9);
        // Timed steps: their time.
        assert_eq!(est("qp500"), 5.0);
        assert_eq!(est("point-query_range=100"), 2.0);
    }

    fn plan(step: &str, sizes: &StepSizes) -> StepPlan {
        StepPlan::for_step(parse_step_list(step).unwrap()[0], sizes)
    }

    #[test]
    fn the_ten_steps_are_ten_plans() {
        let s = sizes();
        let li0 = plan("l.i0", &s);
        assert!(li0.creates_tables && li0.needs == Needs::Nothing);
        assert_eq!(li0.clients.len(), 2);
        assert_eq!(li0.goal_rows, Some((OpKind::Insert, 2000)));
        let lx = plan("l.x", &s);
        assert_eq!(lx.needs, Needs::TablesWithoutIndexes);
        assert!(lx.creates_indexes && !lx.writes_rows());
        assert_eq!(lx.throughput, Throughput::RowsOnce(OpKind::CreateIndexes));
        let li2 = plan("l.i2", &s);
        assert!(li2.settle && li2.stop == StopRule::WorkDone);
        assert!(!plan("l.i1", &s).settle);
        let qp500 = plan("qp500", &s);
        assert_eq!(qp500.needs, Needs::TablesWithIndexes);
        assert_eq!(qp500.stop, StopRule::AfterSeconds(5.0));
        assert_eq!(qp500.sla_target_rows_per_sec, Some(1000.0));
        assert_eq!(qp500.throughput, Throughput::Ops(OpKind::PointQuery));
        assert_eq!(
            qp500.clients[1].roles,
            vec![
                Role::Queries(QueryKind::Point),
                Role::Writers {
                    rows: None,
                    rows_per_insert: 50,
                    statements_per_sec: Some(10.0),
                }
            ]
        );
    }

    #[test]
    fn a_step_means_the_table_to_keep_its_rows() {
        let mut s = sizes();
        s.clients = 1;
        let queue = (DELETE_QUEUE_STATEMENTS as u64 + 1) * 50;
        assert_eq!(plan("l.i0", &s).intended_rows(0, true), (Some(1000), 0));
        assert_eq!(plan("l.i0", &s).intended_rows(0, false), (None, 0));
        assert_eq!(plan("l.x", &s).intended_rows(1000, true), (None, 0));
        assert_eq!(plan("l.i1", &s).intended_rows(1000, true), (Some(1000), 0));
        // Stopped early: the deleter may have left its queue and one statement undone.
        assert_eq!(
            plan("l.i1", &s).intended_rows(1000, false),
            (Some(1000), queue)
        );
        // Query steps end on time with deletes queued.
        assert_eq!(
            plan("qr100", &s).intended_rows(1000, true),
            (Some(1000), queue)
        );
        // A shared table: every client loads into it and has a deleter on it.
        s.clients = 3;
        s.shared_table = true;
        assert_eq!(plan("l.i0", &s).intended_rows(0, true), (Some(3000), 0));
        assert_eq!(
            plan("qr100", &s).intended_rows(3000, true),
            (Some(3000), 3 * queue)
        );
        assert_eq!(
            plan("l.x", &s).clients.len(),
            1,
            "one index build per table"
        );
    }

    #[test]
    fn the_microbenchmarks_are_plans_too() {
        let s = sizes();
        let load = plan("m.load", &s);
        assert!(load.creates_tables && load.table_shape == TableShape::Sysbench);
        assert_eq!(load.clients.len(), 3, "one loader per table");
        assert_eq!(load.goal_rows, Some((OpKind::Insert, 3000)));
        let pq = plan("point-query.pre_range=100", &s);
        assert_eq!(pq.stop, StopRule::AfterSeconds(2.0));
        assert_eq!(pq.clients.len(), 2, "one worker per client");
        assert_eq!(pq.throughput, Throughput::Ops(OpKind::Micro));
        assert_eq!(
            plan("scan_range=100", &s).throughput,
            Throughput::Rows(OpKind::Micro)
        );
        assert!(!pq.writes_rows());
    }
}
