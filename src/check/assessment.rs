//! The whole check as data: the options' rules, the pairs read ([`super::input`]), unlike
//! runs refused, each pair judged ([`super::verdicts`]), the next step that would decide what
//! is open, the exit code and the one-line summary.

use anyhow::{Result, bail};

use super::duet;
use super::input;
use super::model::{
    CheckReport, DEFAULT_MAX_REPEATS, EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSED, PairReport,
    decide_command, rounds_can_decide,
};
use super::options::CheckOptions;
use super::verdicts::{self, Rules, StepVerdict, Verdict};
use crate::report::differs::Difference;
use crate::stats::decision::Floor;

fn rules(args: &CheckOptions) -> Result<Rules> {
    if !(args.alpha > 0.0 && args.alpha < 0.5) {
        bail!(
            "--alpha {} is not the level of a one-sided test: give one between 0 and 0.5, such as 0.05",
            args.alpha
        );
    }
    if !(0.0..100.0).contains(&args.threshold) {
        bail!(
            "--threshold {} is not a percentage of change: give one from 0 to below 100, such as 5",
            args.threshold
        );
    }
    if !(0.0..=86_400.0).contains(&args.min_step_seconds) {
        bail!(
            "--min-step-seconds {} is not a number of seconds: give one from 0 to 86400, such as 3",
            args.min_step_seconds
        );
    }
    Ok(Rules {
        alpha: args.alpha,
        threshold: args.threshold / 100.0,
        keep_host_affected: args.keep_host_affected,
        judge: args.judge,
        floor: Floor {
            seconds: args.min_step_seconds,
            samples: crate::stats::round_to_usize(args.min_step_seconds.floor()),
        },
    })
}

/// Read, refuse unlike runs, judge: the whole check as data.
pub fn check(args: &CheckOptions) -> Result<CheckReport> {
    let rules = rules(args)?;
    if let Some(j) = args.junit.as_ref().filter(|j| j.is_dir()) {
        bail!("--junit {} is a directory: give a file name", j.display());
    }
    let mut pairs = input::read_pairs(args)?;
    for p in &mut pairs {
        if duet::is_duet(p)? {
            duet::cut_to_shared_seconds(p);
        }
    }
    for p in &pairs {
        let unlike = p.unlike();
        if !unlike.is_empty() {
            let what: Vec<String> = unlike.iter().map(difference_text).collect();
            bail!(
                "{}the runs are not like for like: they differ outside the server in {}; check runs that differ only in the server, its build or its config (same options, same kind of host)",
                p.error_prefix(),
                what.join(", ")
            );
        }
    }
    for p in &pairs {
        if p.runs.iter().all(|r| r.record.steps.is_empty()) {
            let why = p
                .runs
                .iter()
                .find_map(|r| r.record.error.clone())
                .unwrap_or_else(|| "no run recorded a step".into());
            bail!(
                "{}no step to judge: {}; fix that and rerun",
                p.error_prefix(),
                crate::report::text::one_line(&why)
            );
        }
    }
    let reports: Vec<PairReport> = pairs
        .iter()
        .map(|p| PairReport {
            title: p.title.clone(),
            base: p.base_label.clone(),
            candidate: p.candidate_label.clone(),
            base_repeats: p.base_count,
            candidate_repeats: p.runs.len() - p.base_count,
            differences: p.server_differences(),
            problems: p.problems.clone(),
            verdicts: verdicts::pair_verdicts(p, &duet::rules_for(p, rules)),
            next_step: None,
        })
        .map(|mut r| {
            r.next_step = next_step(args, &r);
            r
        })
        .collect();
    let (exit_code, summary) = conclusion(&reports, args.fail_on_inconclusive);
    Ok(CheckReport {
        rules,
        pairs: reports,
        exit_code,
        summary,
    })
}

/// The pair's next step, said once: the figures more rounds could decide and the command,
/// with the most repeats a side the planning asks of them (the default cap,
/// [`DEFAULT_MAX_REPEATS`], where the noise between runs is not measured yet).
fn next_step(args: &CheckOptions, p: &PairReport) -> Option<String> {
    let open: Vec<&StepVerdict> = p.verdicts.iter().filter(|v| rounds_can_decide(v)).collect();
    if open.is_empty() {
        return None;
    }
    let have = p.base_repeats.min(p.candidate_repeats);
    let planned = open.iter().filter_map(|v| v.judgement.repeats_needed).max();
    let repeats = planned
        .unwrap_or(DEFAULT_MAX_REPEATS)
        .max(have + 1)
        .max(verdicts::MIN_REPEATS);
    let out = args
        .dirs
        .first()
        .map_or_else(|| "OUT".into(), |d| d.display().to_string());
    let names: Vec<String> = open.iter().map(|v| v.name()).collect();
    let how = match (&args.run, p.title.is_empty()) {
        (Some(file), _) => decide_command(&file.display().to_string(), &out, repeats),
        (None, false) => decide_command("MATRIX.toml", &out, repeats),
        (None, true) => format!(
            "write the base's and the candidate's setups as one matrix group with order = \"interleaved\" (docs/matrix.md), then: {}",
            decide_command("MATRIX.toml", "OUT", repeats)
        ),
    };
    let why = if planned.is_some() {
        format!("the planning asks for {repeats} repeats a side")
    } else {
        format!("{repeats} repeats a side at most: the rounds stop once every figure is decided")
    };
    Some(format!("to decide {} ({why}): {how}", first_of(&names, 6)))
}

/// `--clients 1 (base) → 4`, `host CPUs 2 → 4`.
fn difference_text(d: &Difference) -> String {
    let area = match d.area {
        crate::report::differs::Area::Options => String::new(),
        a => format!("{} ", a.name()),
    };
    format!("{area}{} (base {}, candidate {})", d.name, d.base, d.run)
}

/// The first `n` names, and how many more.
fn first_of(names: &[String], n: usize) -> String {
    if names.len() <= n {
        return names.join(", ");
    }
    format!(
        "{} and {} more figures",
        names[..n].join(", "),
        names.len() - n
    )
}

/// The exit code and the one-line summary.
fn conclusion(pairs: &[PairReport], fail_on_inconclusive: bool) -> (u8, String) {
    let named = |want: Verdict| -> Vec<String> {
        pairs
            .iter()
            .flat_map(|p| {
                p.verdicts
                    .iter()
                    .filter(move |v| v.judgement.verdict == want)
                    .map(move |v| {
                        let change = v
                            .judgement
                            .ratio
                            .map_or_else(String::new, |r| format!(" {r:.2}x"));
                        let who = if pairs.len() > 1 {
                            format!(" ({})", p.candidate)
                        } else {
                            String::new()
                        };
                        format!("{}{change}{who}", v.name())
                    })
            })
            .collect()
    };
    let regressed = named(Verdict::Regressed);
    if !regressed.is_empty() {
        return (
            EXIT_REGRESSED,
            format!("regressed: {}", regressed.join(", ")),
        );
    }
    let unsure = named(Verdict::CannotTell);
    if !unsure.is_empty() {
        let code = if fail_on_inconclusive {
            EXIT_REGRESSED
        } else {
            EXIT_INCONCLUSIVE
        };
        return (
            code,
            format!(
                "no regression found, but cannot tell: {}",
                first_of(&unsure, 8)
            ),
        );
    }
    (EXIT_OK, "no regression".into())
}
