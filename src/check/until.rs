//! `ibench check --run MATRIX.toml OUT`: run the matrix's interleaved repeats one round at a
//! time (a repeat of every cell, the matrix's `order` deciding A B B A; with `--duet` the two
//! cells of a round at the same time, `matrix::duet`), and check after each
//! round, until every figure more repeats can decide is decided, or `--max-repeats` or
//! `--max-time` is reached. Resumable: the rounds are the cells of one matrix output dir, so
//! the same command again skips the cells done.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::assessment;
use super::model::CheckReport;
use super::options::CheckOptions;
use super::verdicts::Reason;
use crate::calendar::{DurationStyle::Compact, duration_text};
use crate::matrix::Shard;
use crate::matrix::run::SHARD_FILE;

use super::model::rounds_can_decide as repeats_can_decide;

/// The figures still open after a round, and the repeats a side the noisiest of them needs.
fn open_figures(report: &CheckReport) -> (Vec<String>, Option<usize>) {
    let mut open = Vec::new();
    let mut needed: Option<usize> = None;
    for p in &report.pairs {
        for v in p.verdicts.iter().filter(|v| repeats_can_decide(v)) {
            let n = v.judgement.repeats_needed;
            open.push(format!(
                "{}{} ({}{})",
                if report.pairs.len() > 1 {
                    format!("{}: ", p.candidate)
                } else {
                    String::new()
                },
                v.name(),
                v.judgement.reason.map_or("", |r| r.text()),
                n.map_or_else(String::new, |n| format!(", ~{n} repeats a side"))
            ));
            if let Some(n) = n {
                needed = Some(needed.map_or(n, |m: usize| m.max(n)));
            }
        }
    }
    (open, needed)
}

/// Whether no figure more repeats can decide would be decided within `max` repeats a side:
/// each needs more by the planning, or is too noisy for any number up to its limit.
fn beyond_the_cap(report: &CheckReport, max: u32) -> bool {
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    report
        .pairs
        .iter()
        .flat_map(|p| p.verdicts.iter().filter(|v| repeats_can_decide(v)))
        .all(|v| match v.judgement.repeats_needed {
            Some(n) => n > max,
            None => {
                v.judgement.reason == Some(Reason::TooNoisy) && v.judgement.seconds_needed.is_none()
            }
        })
}

/// The command: rounds until decided or a cap, then the last round's check.
pub fn run_until_decided(args: &CheckOptions, file: &Path) -> Result<CheckReport> {
    let [out] = args.dirs.as_slice() else {
        bail!(
            "--run takes one output dir (where the matrix's cells go), not {}",
            args.dirs.len()
        );
    };
    if args.base.is_some() {
        bail!("--base is for run directories; with --run the matrix's group names its base");
    }
    let (mut src, _) = crate::matrix::load(file)?;
    if args.duet {
        src.file.order = crate::matrix::file::Order::Duet;
    }
    let started = Instant::now();
    let first = src.file.repeats.max(2);
    let max = args.max_repeats.max(first);
    let whole = Shard::ALL;
    let mut repeats = first;
    loop {
        src.file.repeats = repeats;
        let plan = crate::matrix::build::build(&src)?;
        // A round adds cells, so the plan's identity changes: this dir is the --run's own.
        let shard_file = out.join(SHARD_FILE);
        if shard_file.is_file() {
            std::fs::remove_file(&shard_file)
                .with_context(|| format!("cannot replace {}", shard_file.display()))?;
        }
        let text = format!(
            "{}\n# ibench check --run{}: {repeats} repeats in this round\n",
            src.text,
            if args.duet { " --duet" } else { "" }
        );
        let s = crate::matrix::run::execute_plan(&plan, &text, out, whole, true)?;
        if s.interrupted {
            bail!(
                "interrupted after {} cells; run the same command again to resume",
                s.completed
            );
        }
        let report = assessment::check(args)?;
        let (open, needed) = open_figures(&report);
        let elapsed = started.elapsed().as_secs_f64();
        let left = needed.map(|n| n.saturating_sub(usize::try_from(repeats).unwrap_or(0)));
        if open.is_empty() {
            crate::say!(
                "[check --run] {repeats} repeats a side: every figure more repeats can decide is decided"
            );
            return Ok(report);
        }
        crate::say!(
            "[check --run] {repeats} repeats a side, {}: {} undecided: {}; estimated repeats left: {}",
            duration_text(elapsed, Compact),
            open.len(),
            open.join(", "),
            left.map_or_else(|| "unknown".into(), |n| n.to_string())
        );
        if beyond_the_cap(&report, max) {
            crate::say!(
                "[check --run] every undecided figure needs more than --max-repeats {max} a side at the noise measured: stopping; the verdict so far"
            );
            return Ok(report);
        }
        let capped = repeats >= max || args.max_time.is_some_and(|t| elapsed >= t);
        if capped {
            crate::say!(
                "[check --run] stopped at the cap ({} repeats a side{}); the verdict so far",
                repeats.min(max),
                args.max_time.map_or_else(String::new, |t| format!(
                    ", --max-time {}",
                    duration_text(t, Compact)
                ))
            );
            return Ok(report);
        }
        repeats += 1;
    }
}
