//! Running a plan's cells (one at a time, or in duet rounds, `super::duet`), each as
//! `super::cell` runs it: a failed cell is recorded and the matrix goes on; finished cells are
//! skipped when the same command runs again.
//!
//! Layout of `--out DIR`:
//! - `matrix.toml`: a copy of the matrix file; `plan.json`: the resolved plan (what
//!   `matrix report` reads, so the report host needs no server binaries);
//! - `cells/CELL/state.json`: pending, running, completed, failed or interrupted (+ error);
//! - `cells/CELL/run/`: the run's results (run.json, timeline, metrics);
//! - `cells/CELL/server/`: the server's logs and config copy; `cells/CELL/CONFIG.conf`: the
//!   generated config file.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::cell::{
    CellJob, CellState, CellStatus, Summary, cell_dir, definition, execute_cell, finished_before,
    read_state,
};
use super::plan::{Plan, Shard, ShardIdentity};
use crate::calendar::{DurationStyle::Compact, duration_text};
use crate::results;
use crate::runner::stop;

/// The plan file in the output dir (defined with the results' files, so that `ibench report` tells a matrix's output from a run without the matrix).
pub use crate::results::MATRIX_PLAN_FILE as PLAN_FILE;

/// The out dir made ready: `cells/`, a copy of the matrix file, the plan.
fn prepare_out(plan: &Plan, source_text: &str, out: &Path, shard: Shard) -> Result<()> {
    check_shard_of_dir(plan, out, shard)?;
    std::fs::create_dir_all(out.join("cells")).with_context(|| {
        format!(
            "cannot create {}; choose another --out",
            out.join("cells").display()
        )
    })?;
    results::write_json_atomic(&out.join(SHARD_FILE), &shard.identity(plan))?;
    std::fs::write(out.join("matrix.toml"), source_text)
        .with_context(|| format!("cannot write {}", out.join("matrix.toml").display()))?;
    results::write_json_atomic(&out.join(PLAN_FILE), plan)
}

/// The file of a results dir that says which shard of which plan wrote it.
pub const SHARD_FILE: &str = "shard.json";

/// Refuse a results dir that another shard, or another split of the cells, has written.
fn check_shard_of_dir(plan: &Plan, out: &Path, shard: Shard) -> Result<()> {
    let path = out.join(SHARD_FILE);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(());
    };
    let had: ShardIdentity = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a shard record; choose another --out",
            path.display()
        )
    })?;
    let now = shard.identity(plan);
    if had != now {
        bail!(
            "--out {} holds shard {} of plan {}, and this is shard {} of plan {}: give each shard its own --out (e.g. shard-$SLURM_ARRAY_TASK_ID), or rerun the shard that dir belongs to",
            out.display(),
            had.shard,
            had.plan_hash,
            now.shard,
            now.plan_hash
        );
    }
    Ok(())
}

/// The ETA: the estimates of what is left, scaled by how long the cells run so far took
/// compared with their estimates.
struct Eta {
    started: Instant,
    spent_seconds: f64,
    estimated_done_seconds: f64,
}

impl Eta {
    fn new() -> Eta {
        Eta {
            started: Instant::now(),
            spent_seconds: 0.0,
            estimated_done_seconds: 0.0,
        }
    }

    /// A cell took `seconds`; it was estimated at `estimate_seconds`.
    fn record(&mut self, seconds: f64, estimate_seconds: f64) {
        self.spent_seconds += seconds;
        self.estimated_done_seconds += estimate_seconds;
    }

    /// `elapsed 1m 5s, ETA 3m` with `left_estimate_seconds` still to run.
    fn text(&self, left_estimate_seconds: f64) -> String {
        let scale = if self.estimated_done_seconds > 0.0 {
            self.spent_seconds / self.estimated_done_seconds
        } else {
            1.0
        };
        format!(
            "elapsed {}, ETA {}",
            duration_text(self.started.elapsed().as_secs_f64(), Compact),
            duration_text(left_estimate_seconds * scale, Compact)
        )
    }
}

/// Execute the shard's cells of `plan` into `out` (resuming: a cell finished before with the
/// same definition is kept). Named apart from `runner::run`, which one cell calls.
pub fn execute_plan(
    plan: &Plan,
    source_text: &str,
    out: &Path,
    shard: Shard,
    quiet: bool,
) -> Result<Summary> {
    // One --out, one matrix: a second one would take this one's running cell for abandoned.
    let _lock = results::dir::DirLock::take(out, "--out")?;
    prepare_out(plan, source_text, out, shard)?;
    stop::install_interrupt_handler();

    let cells = plan.cells_of(shard);
    if plan.order == super::file::Order::Duet {
        return super::duet::execute_rounds(plan, &cells, out, shard, quiet);
    }
    let n = cells.len();
    let mut summary = Summary::default();
    let mut eta = Eta::new();
    for (i, cell) in cells.iter().enumerate() {
        let Some(server) = plan.server(&cell.server) else {
            continue;
        };
        let Some(config) = server.configs.iter().find(|c| c.name == cell.config) else {
            continue;
        };
        let dir = cell_dir(out, &cell.name);
        let def = definition(plan, cell, config);
        let previous = read_state(&dir);
        if finished_before(previous.as_ref(), &def, &dir) {
            summary.skipped += 1;
            continue;
        }
        let left: f64 = cells[i..].iter().map(|c| c.estimate_seconds).sum();
        let redo = redo_note(previous.as_ref());
        crate::say!(
            "[matrix] cell {}/{n}: {} ({}){redo}; {}",
            i + 1,
            cell.name,
            cell.label,
            eta.text(left)
        );
        let t0 = Instant::now();
        let job = CellJob {
            plan,
            cell,
            config,
            dir: &dir,
            quiet,
            duet: None,
        };
        let state = execute_cell(job, def, shard)?;
        eta.record(t0.elapsed().as_secs_f64(), cell.estimate_seconds);
        match state.status {
            CellStatus::Completed => summary.completed += 1,
            CellStatus::Interrupted => {
                summary.interrupted = true;
                crate::say!(
                    "[matrix] interrupted in {}; run the same command again to resume",
                    cell.name
                );
                return Ok(summary);
            }
            _ => {
                let err = state.error.clone().unwrap_or_default();
                crate::say!(
                    "[matrix] cell {} failed: {}",
                    cell.name,
                    crate::report::text::one_line(&err)
                );
                summary.failed.push((cell.name.clone(), err));
            }
        }
        if stop::interrupted() {
            summary.interrupted = true;
            return Ok(summary);
        }
    }
    Ok(summary)
}

/// Why a cell run before runs again: ` (definition changed: redoing)`, ` (was failed:
/// redoing)`; empty for a new cell.
fn redo_note(previous: Option<&CellState>) -> String {
    match previous {
        Some(p) if p.status == CellStatus::Completed => " (definition changed: redoing)".into(),
        Some(p) => format!(" (was {:?}: redoing)", p.status).to_lowercase(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(status: CellStatus) -> CellState {
        CellState {
            cell: "c1".into(),
            status,
            error: None,
            label: "c1".into(),
            definition: serde_json::json!({}),
            shard: Shard { index: 0, count: 1 },
            started_at: None,
            ended_at: None,
            instance_dir: None,
        }
    }

    #[test]
    fn a_cell_run_again_says_why() {
        assert_eq!(redo_note(None), "");
        assert_eq!(
            redo_note(Some(&state(CellStatus::Completed))),
            " (definition changed: redoing)"
        );
        assert_eq!(
            redo_note(Some(&state(CellStatus::Failed))),
            " (was failed: redoing)"
        );
    }
}
