//! The steps of a run in sequence: the precheck that every step finds the tables and indexes
//! it needs, then each step in turn, its record handed to the caller and written into
//! `run.json` as it ends (a failed step's record too).

use std::path::Path;

use anyhow::bail;

use crate::backend::{Conn, Driver};
use crate::results::{self, RunRecord, Status, StepRecord, TimelineWriter};
use crate::run_part::RunPart;
use crate::workload::plan::{Needs, StepPlan};

use super::shape::RunShape;
use super::step::{StepRig, StepSeat, run_step};
use super::stop;
use super::tables::TableState;

/// What the caller hears of a run as it goes, to print it (the runner prints none of it).
pub trait RunObserver {
    /// The run starts, its target reached, its results dir made and every step found what it
    /// needs (the precheck): the record as first written (target, options as recorded,
    /// label), the dir, every step's plan and the run's sizes in one line (resolved from
    /// the options once, `RunOptions::sizes_line`).
    fn run_starts(&mut self, _record: &RunRecord, _dir: &Path, _plans: &[StepPlan], _sizes: &str) {}
    /// Step `index` (0-based) of the plans given to `run_starts` starts.
    fn step_starts(&mut self, _index: usize, _plan: &StepPlan) {}
    /// A step ended (or failed): its record.
    fn step_ends(&mut self, record: &StepRecord);
}

/// The steps of the run in order, each written into `run.json` (`run_file`) as it ends; the
/// first failed step ends the run with its error.
pub(super) fn run_steps(
    shape: &RunShape,
    driver: &dyn Driver,
    (timeline, run_file): (&mut TimelineWriter, &Path),
    record: &mut RunRecord,
    parts: &mut dyn RunPart,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<()> {
    // Ctrl-C while the first connection logs in is the interruption, not a failure.
    // A side connection: opened again once when the server closed it while idle.
    let mut admin: Box<dyn Conn> = match crate::backend::side::SideConn::connect(driver) {
        Err(_) if stop::interrupted() => return Ok(()),
        other => Box::new(other?),
    };
    if let Some(dir) = run_file.parent() {
        check_max_connections(&shape.steps, shape.workers.clients, dir)?;
    }
    match precheck(&shape.steps, &shape.tables, admin.as_mut()) {
        Err(_) if stop::interrupted() => return Ok(()),
        other => other?,
    }
    let dir = run_file.parent().unwrap_or(run_file);
    observer.run_starts(record, dir, &shape.steps, &shape.run.sizes_line);
    let mut state = TableState::default();
    let rig = StepRig { shape, driver };
    let mut seat = StepSeat {
        parts,
        admin: admin.as_mut(),
        state: &mut state,
        timeline,
    };
    for (ordinal, plan) in shape.steps.iter().enumerate() {
        if stop::interrupted() {
            break;
        }
        let step = plan.step;
        observer.step_starts(ordinal, plan);
        let step_record = run_step(
            rig,
            &mut seat,
            plan,
            u32::try_from(ordinal).unwrap_or(u32::MAX),
        );
        let failed = step_record.status == Status::Failed;
        let error = step_record.error.clone();
        observer.step_ends(&step_record);
        record.steps.push(step_record);
        seat.parts.steps_so_far(record);
        if let Some(w) = seat.timeline.take_warning() {
            crate::say!("warning: {w}");
            record.warnings.push(w);
        }
        results::dir::write_run(run_file, record)?;
        if failed {
            bail!(
                "step {step} failed: {}",
                error.unwrap_or_else(|| "unknown error".into())
            );
        }
    }
    Ok(())
}

/// The most connections a step holds at once: one per worker of its clients' roles (an
/// inserter and its deleter for writers), l.x's progress poller, and the run's two side
/// connections (the admin's and the sampler's).
fn connections_needed(plan: &StepPlan) -> u64 {
    let workers: u64 = plan
        .clients
        .iter()
        .flat_map(|c| &c.roles)
        .map(|r| match r {
            crate::workload::plan::Role::Writers { .. } => 2,
            _ => 1,
        })
        .sum();
    workers + u64::from(plan.creates_indexes) + 2
}

/// Before the first step: a server whose `max_connections` (as the sampler recorded it in
/// `server-settings.json`) is below what a step needs would fail that step mid-run.
fn check_max_connections(plans: &[StepPlan], clients: u32, dir: &Path) -> anyhow::Result<()> {
    let Ok(Some(settings)) = crate::results::settings::ServerSettings::read(dir) else {
        return Ok(());
    };
    let Some(max) = settings
        .values
        .get("max_connections")
        .and_then(|v| v.value.trim().parse::<u64>().ok())
    else {
        return Ok(());
    };
    if let Some((plan, need)) = plans
        .iter()
        .map(|p| (p, connections_needed(p)))
        .find(|(_, need)| *need > max)
    {
        bail!(
            "step {} opens {need} connections at once (--clients {clients}), and the server \
             allows {max} (max_connections): raise max_connections, or lower --clients",
            plan.step
        );
    }
    Ok(())
}

/// Before anything runs: every step finds the tables and indexes it needs, either made by an
/// earlier step of this run or already there.
fn precheck(plans: &[StepPlan], tables: &[String], conn: &mut dyn Conn) -> anyhow::Result<()> {
    let mut tables_made = false;
    let mut indexes: Option<bool> = None;
    for plan in plans {
        let step = plan.step;
        if plan.creates_tables {
            tables_made = true;
            indexes = Some(false);
            continue;
        }
        if !tables_made {
            for t in tables {
                stop::check_interrupted()?;
                if conn.count_rows(t).is_err() {
                    let first = if step.is_micro() { "m.load" } else { "l.i0" };
                    bail!(
                        "step {step} needs table {t}, which does not exist: run {first} first (add it to --steps)"
                    );
                }
            }
            tables_made = true;
        }
        let have = match indexes {
            Some(h) => h,
            None => {
                let mut all = true;
                for t in tables {
                    stop::check_interrupted()?;
                    all &= conn.has_secondary_indexes(t)?;
                }
                all
            }
        };
        match plan.needs {
            Needs::TablesWithoutIndexes if have => bail!(
                "step {step} would create the secondary indexes, but they exist already: run l.i0 first to recreate the tables (--steps)"
            ),
            Needs::TablesWithIndexes if !have => bail!(
                "step {step} needs the secondary indexes: run l.x before it (add it to --steps)"
            ),
            _ => {}
        }
        indexes = Some(have || plan.creates_indexes);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::options::RunOptions;
    use crate::workload::steps::{Profile, StepName};

    /// Each client of a query step holds an inserter, its deleter and a querier; l.x adds
    /// its progress poller; every step the admin and sampler connections.
    #[test]
    fn a_step_needs_its_workers_connections_and_the_side_ones() {
        let mut o = RunOptions::from_profile("sqlite:x.db", &Profile::small());
        o.clients = 4;
        let sizes = o.step_sizes();
        let need = |name: &str| {
            let step = StepName::default_list(&[100])
                .into_iter()
                .find(|s| s.to_string() == name)
                .unwrap();
            connections_needed(&StepPlan::for_step(step, &sizes))
        };
        assert_eq!(need("l.i0"), 4 + 2);
        assert_eq!(need("l.x"), 4 + 1 + 2);
        assert_eq!(need("qr100"), 4 * 3 + 2);
    }
}
