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
use crate::stats::decision::{MIN_ROUNDS_TO_GIVE_UP, could_decide_within};

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

/// The repeats a side still to run by the planning (`needed`, the noisiest open figure's),
/// with `have` run: "unknown" without a planning, and said so when the planning's count is
/// reached and a figure is still open (its ratio sits at the threshold's edge, where more
/// repeats narrow the interval but need not move it off the edge).
fn repeats_left_text(needed: Option<usize>, have: usize) -> String {
    match needed {
        Some(n) if n > have => (n - have).to_string(),
        Some(n) => format!(
            "unknown (the planning's ~{n} a side are run; a ratio this close to the threshold may not decide: --max-repeats caps it)"
        ),
        None => "unknown".into(),
    }
}

/// Whether no figure more repeats can decide would be decided within `max` repeats a side,
/// after `have`: each needs more by the planning (or is too noisy for any number up to its
/// limit) AND the change it shows, at the noise measured, would still sit astride the
/// threshold at `max` (`stats::decision::could_decide_within`: a regression twice the
/// threshold is decided long before the planning's count, which sizes a change of the
/// threshold's own size). Never before `MIN_ROUNDS_TO_GIVE_UP` rounds.
fn beyond_the_cap(report: &CheckReport, have: u32, max: u32) -> bool {
    let to_usize = |k: u32| usize::try_from(k).unwrap_or(usize::MAX);
    let (have, max) = (to_usize(have), to_usize(max));
    if have < MIN_ROUNDS_TO_GIVE_UP {
        return false;
    }
    let settings = report.rules.settings();
    report
        .pairs
        .iter()
        .flat_map(|p| p.verdicts.iter().filter(|v| repeats_can_decide(v)))
        .all(|v| {
            let j = &v.judgement;
            let planned_beyond = match j.repeats_needed {
                Some(n) => n > max,
                None => j.reason == Some(Reason::TooNoisy) && j.seconds_needed.is_none(),
            };
            planned_beyond && !could_decide_within(j, have, max, &settings)
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
            repeats_left_text(needed, usize::try_from(repeats).unwrap_or(usize::MAX))
        );
        if beyond_the_cap(&report, repeats, max) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repeats_left_never_read_zero_while_a_figure_is_open() {
        assert_eq!(repeats_left_text(Some(9), 4), "5");
        let reached = repeats_left_text(Some(9), 11);
        assert!(
            reached.starts_with("unknown (the planning's ~9"),
            "{reached}"
        );
        assert!(reached.contains("--max-repeats"), "{reached}");
        assert_eq!(repeats_left_text(None, 3), "unknown");
    }
}
