//! A step's connections before it runs: one per worker of each client's roles (an inserter
//! and its deleter for writers), each with its table, pace and recorder, and the step's stop
//! condition.

use std::sync::mpsc::sync_channel;

use crate::backend::{Conn, Driver};
use crate::stats::{OpKind, OpRecorder};
use crate::workload::plan::{DELETE_QUEUE_STATEMENTS, Role, StepPlan, StopRule};
use crate::workload::steps::QueryKind;
use crate::workload::{Rng, RowGenerator};

use super::client::{Deleter, Indexer, Inserter, Querier, Worker};
use super::micro;
use super::monitor::Goal;
use super::shape::{RunShape, WorkerSettings};
use super::stop;
use super::tables::TableState;

/// One connection's work in a step, before it runs.
pub(super) struct Slot {
    pub(super) worker: Box<dyn Worker>,
    pub(super) conn: Box<dyn Conn>,
    pub(super) ops_per_sec: Option<f64>,
    pub(super) table: String,
    pub(super) client: u32,
    pub(super) recorder: OpRecorder,
}

/// The connections of a step before it runs, with its stop condition.
pub(super) struct StepConnections {
    pub(super) slots: Vec<Slot>,
    pub(super) goal: Goal,
    /// Query steps run for a fixed time.
    pub(super) deadline_seconds: Option<f64>,
    /// l.x: a connection of its own that polls the server's index builds (or why none).
    pub(super) index_progress: Option<Result<Box<dyn Conn>, String>>,
    /// With `--failover` or `--reconnect-for`: where the clients reconnect, and ibench's
    /// kill of the primary in the failover's step.
    pub(super) failover: Option<super::failover::StepFailoverPlan>,
}

/// Open the connections of a step's plan and give each its worker: one per role, two for an
/// inserter and the deleter that follows it.
pub(super) fn plan_connections(
    shape: &RunShape,
    driver: &dyn Driver,
    admin: &mut dyn Conn,
    state: &TableState,
    plan: &StepPlan,
    ordinal: u32,
) -> anyhow::Result<StepConnections> {
    let mut slots = Vec::new();
    // With --query-on replica the queriers read the replica; the writers stay on `driver`.
    let replica = shape.query_target.as_ref().map(|t| t.driver());
    for client in &plan.clients {
        let c = client.client;
        let table = table_of(&shape.tables, c);
        for role in &client.roles {
            let stream = |r: u32| Rng::for_stream(shape.workers.seed, c, ordinal * 8 + r);
            let on = (&shape.workers, shape.tables.as_slice());
            let workers = role_workers(on, state, admin, (c, table), role, &stream)?;
            for (worker, ops_per_sec) in workers {
                stop::check_interrupted()?;
                let recorder = OpRecorder::new(worker.kind());
                let on = match (&replica, role) {
                    (Some(r), Role::Queries(_)) => r.as_ref(),
                    _ => driver,
                };
                slots.push(Slot {
                    worker,
                    conn: on.connect().map_err(reconnect_error)?,
                    ops_per_sec,
                    table: table.to_string(),
                    client: c,
                    recorder,
                });
            }
        }
    }
    let (goal, deadline_seconds) = match (plan.stop, plan.goal_rows) {
        (StopRule::AfterSeconds(s), _) => (Goal::Seconds(s), Some(s)),
        (StopRule::WorkDone, Some((kind, total))) => (Goal::Rows { kind, total }, None),
        (StopRule::WorkDone, None) => (Goal::None, None),
    };
    let index_progress = (plan.throughput.kind() == OpKind::CreateIndexes)
        .then(|| driver.connect().map_err(|e| format!("{e:#}")));
    let mut failover = super::failover::step_plan(shape.reconnect.as_ref(), admin, plan.step)?;
    if let Some(f) = failover.as_mut().filter(|_| shape.check) {
        for s in &mut slots {
            s.worker.track_keys();
            if let Some(l) = s.worker.key_ledger() {
                f.ledgers.push((s.table.clone(), l));
            }
        }
    }
    Ok(StepConnections {
        slots,
        goal,
        deadline_seconds,
        index_progress,
        failover,
    })
}

/// The table client `client` works on, of the run's `tables`: its own, or with one shared
/// table (or fewer microbenchmark tables than clients) the one it falls on in turn.
fn table_of(tables: &[String], client: u32) -> &str {
    let at = usize::try_from(client).unwrap_or(usize::MAX) % tables.len().max(1);
    tables.get(at).map_or("", String::as_str)
}

/// A connection the run could open before that fails now: the server went away (or stopped
/// answering) during the run, which no change of `--url` fixes.
pub(super) fn reconnect_error(e: crate::backend::BackendError) -> anyhow::Error {
    match e {
        crate::backend::BackendError::Unreachable { target, detail } => anyhow::anyhow!(
            "cannot connect to {target} again: {detail}; the run reached it before, so the \
             server stopped, restarted or stopped answering during the run (see its log)"
        ),
        other => other.into(),
    }
}

/// A worker and its pace (operations per second), when paced.
pub(super) type PacedWorker = (Box<dyn Worker>, Option<f64>);

/// The workers of one role of client `c` on its `table` (an inserter and its deleter for
/// writers), each with its pace, built from the run's worker settings `w` and its `tables`.
pub(super) fn role_workers(
    (w, tables): (&WorkerSettings, &[String]),
    state: &TableState,
    admin: &mut dyn Conn,
    (c, table): (u32, &str),
    role: &Role,
    stream: &dyn Fn(u32) -> Rng,
) -> anyhow::Result<Vec<PacedWorker>> {
    let table = table.to_string();
    let mut out: Vec<PacedWorker> = Vec::new();
    match role {
        Role::Load {
            rows,
            rows_per_insert,
        } => {
            let generator = row_generator(w, &table, state, admin, c, stream(0))?;
            let per_insert = u64::from(*rows_per_insert);
            let ins = Inserter::new(table.clone(), generator, per_insert, Some(*rows), None);
            out.push((Box::new(ins), None));
        }
        Role::Index => {
            let rows = state.expected_rows.get(&table).copied().unwrap_or(0);
            out.push((Box::new(Indexer::new(table.clone(), rows)), None));
        }
        Role::Writers {
            rows,
            rows_per_insert,
            statements_per_sec,
        } => {
            let generator = row_generator(w, &table, state, admin, c, stream(0))?;
            let (tx, rx) = sync_channel(DELETE_QUEUE_STATEMENTS);
            let per_insert = u64::from(*rows_per_insert);
            let ins = Inserter::new(table.clone(), generator, per_insert, *rows, Some(tx));
            let del = Deleter::new(table.clone(), rx, w.delete_min_refresh);
            out.push((Box::new(ins), *statements_per_sec));
            out.push((Box::new(del), *statements_per_sec));
        }
        Role::MicroLoad { rows } => {
            let count = u32::try_from(tables.len()).unwrap_or(u32::MAX);
            let own = crate::workload::plan::micro_loader_tables(c, count)
                .filter_map(|t| tables.get(usize::try_from(t).ok()?).cloned())
                .collect();
            let loader = micro::MicroLoader::new(own, *rows, stream(3));
            out.push((Box::new(loader), None));
        }
        Role::Micro(step) => {
            let worker = micro::MicroWorker::new(
                *step,
                tables.to_vec(),
                w.micro_rows,
                stream(4),
                (c, w.clients),
            );
            out.push((Box::new(worker), None));
        }
        Role::Queries(kind) => {
            let point = *kind == QueryKind::Point;
            let q = Querier::new(table.clone(), stream(2), w.row_shape.clone(), point);
            out.push((Box::new(q), None));
        }
    }
    Ok(out)
}

/// The row generator of client `c`. Where the client assigns ids, each client goes on from
/// where it stopped, or from the table's max id (on a shared table, client c starts c × 2^40
/// higher).
pub(super) fn row_generator(
    w: &WorkerSettings,
    table: &str,
    state: &TableState,
    admin: &mut dyn Conn,
    c: u32,
    stream: Rng,
) -> anyhow::Result<RowGenerator> {
    let first_id = if !w.client_assigns_ids {
        None
    } else if let Some(&id) = state.next_client_id.get(&c) {
        Some(id)
    } else {
        let base = admin.min_max_id(table)?.map_or(1, |(_, hi)| hi + 1);
        let offset = if w.shared_table {
            i64::from(c) << 40
        } else {
            0
        };
        Some(base + offset)
    };
    Ok(RowGenerator::new(stream, w.row_shape.clone(), first_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::options::{RunOptions, Workload};
    use crate::workload::steps::Profile;

    #[test]
    fn each_client_works_on_its_table() {
        let mut o = RunOptions::from_profile("sqlite:x.db", &Profile::small());
        o.clients = 3;
        let tables = RunShape::of(&o).unwrap().tables;
        assert_eq!(tables, ["pi1", "pi2", "pi3"]);
        assert_eq!(table_of(&tables, 2), "pi3");
        o.shared_table = true;
        assert_eq!(table_of(&RunShape::of(&o).unwrap().tables, 2), "pi1");
        o.workload = Workload::Micro;
        o.micro.tables = 2;
        let tables = RunShape::of(&o).unwrap().tables;
        assert_eq!(tables, ["sbtest1", "sbtest2"]);
        assert_eq!(table_of(&tables, 2), "sbtest1");
        assert_eq!(table_of(&tables, 3), "sbtest2");
    }
}
