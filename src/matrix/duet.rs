//! Duet rounds (`order = "duet"`): the two cells of a round run at the same time on this host,
//! each on its own private server with the same clients, in two threads of this process. A
//! step barrier sits in the step sequencing (the runner's `step_starts`, before each step):
//! neither side starts step k before both finished step k-1 (and their setup), so every
//! step starts together on both sides; the client loop is the one of every run.
//!
//! Each round swaps what could favour one side: which server starts first (the other waits
//! for it to be up), the slot (its instance dir and, with `pin = true`, its half of the CPUs);
//! every server gets a fresh free port. A side that fails or stops leaves the barrier, so the
//! other side never waits for it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::cell::{
    CellJob, CellState, CellStatus, Summary, cell_dir, definition, execute_cell, finished_before,
    read_state,
};
use super::plan::{Cell, Plan, PlanConfig, Shard};
use super::side::{DuetContext, Gate, LeaveOnDrop, StepBarrier, cpu_halves, cpu_list};

use crate::results::duet::DuetSide;
use crate::runner::stop;

/// Run the plan's cells two at a time, a round's two cells as a duet (resuming: a round
/// whose two cells finished before is kept; a round with one left is run again whole).
pub(super) fn execute_rounds(
    plan: &Plan,
    cells: &[&Cell],
    out: &Path,
    shard: Shard,
    quiet: bool,
) -> Result<Summary> {
    if shard.count > 1 {
        bail!(
            "order = \"duet\" runs both sides of a round on one host: run it without --shard/--shards"
        );
    }
    let halves = if plan.pin { Some(cpu_halves()?) } else { None };
    let mut summary = Summary::default();
    let rounds = cells.len() / 2;
    for (i, round) in cells.chunks(2).enumerate() {
        let &[a, b] = round else {
            bail!("a duet round needs two cells, and the plan's last round has one");
        };
        let jobs = [job_of(plan, a, out), job_of(plan, b, out)];
        let done = jobs
            .iter()
            .all(|(c, d, def)| finished_before(read_state(d).as_ref(), def, d) && c.is_some());
        if done {
            summary.skipped += 2;
            continue;
        }
        crate::say!(
            "[matrix] duet round {}/{rounds}: {} and {} at the same time{}",
            i + 1,
            a.name,
            b.name,
            halves.as_ref().map_or_else(String::new, |h| format!(
                ", pinned to CPUs {} and {}",
                cpu_list(&h[0]),
                cpu_list(&h[1])
            ))
        );
        let states = run_round(plan, [a, b], &jobs, halves.as_ref(), (shard, quiet))?;
        for (cell, state) in [a, b].iter().zip(states) {
            match state.status {
                CellStatus::Completed => summary.completed += 1,
                CellStatus::Interrupted => summary.interrupted = true,
                _ => summary
                    .failed
                    .push((cell.name.clone(), state.error.clone().unwrap_or_default())),
            }
        }
        if summary.interrupted || stop::interrupted() {
            summary.interrupted = true;
            return Ok(summary);
        }
    }
    Ok(summary)
}

/// A cell's config (none when the plan lacks it), dir and definition.
fn job_of<'p>(
    plan: &'p Plan,
    cell: &Cell,
    out: &Path,
) -> (Option<&'p PlanConfig>, PathBuf, serde_json::Value) {
    let dir = cell_dir(out, &cell.name);
    let config = plan
        .server(&cell.server)
        .and_then(|s| s.configs.iter().find(|c| c.name == cell.config));
    let def = config.map_or(serde_json::Value::Null, |c| definition(plan, cell, c));
    (config, dir, def)
}

type Job<'p> = (Option<&'p PlanConfig>, PathBuf, serde_json::Value);

/// One round: the two cells in two threads, slot 0 started first; each side's state.
fn run_round(
    plan: &Plan,
    cells: [&Cell; 2],
    jobs: &[Job; 2],
    halves: Option<&[Vec<usize>; 2]>,
    (shard, quiet): (Shard, bool),
) -> Result<Vec<CellState>> {
    let barrier = StepBarrier::new(2);
    let gate = Gate::default();
    let contexts: Vec<DuetContext> = (0..2)
        .map(|slot| DuetContext {
            side: DuetSide {
                round: cells[slot].repeat,
                slot: u32::try_from(slot).unwrap_or(0),
                started_first: slot == 0,
                partner_cell: cells[1 - slot].name.clone(),
                partner_label: cells[1 - slot].label.clone(),
                cpus: halves.map(|h| cpu_list(&h[slot])),
            },
            barrier: &barrier,
            started: &gate,
            cpus: halves.map(|h| h[slot].clone()),
        })
        .collect();
    let outcomes: Vec<Result<CellState>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|slot| {
                let ctx = &contexts[slot];
                let (config, dir, def) = &jobs[slot];
                let cell = cells[slot];
                s.spawn(move || {
                    let _leave = LeaveOnDrop(ctx);
                    let config = config.context("the plan has no such config")?;
                    let job = CellJob {
                        plan,
                        cell,
                        config,
                        dir,
                        quiet,
                        duet: Some(ctx),
                    };
                    execute_cell(job, def.clone(), shard)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a duet side's thread panicked")))
            })
            .collect()
    });
    outcomes.into_iter().collect()
}
