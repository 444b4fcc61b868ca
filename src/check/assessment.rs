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
use crate::stats::decision::{FigureKind, Floor};

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
        duet: false,
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
    let mut duets = Vec::new();
    for p in &mut pairs {
        let is_duet = duet::is_duet(p)?;
        if is_duet {
            duet::cut_to_shared_seconds(p);
        }
        duets.push(is_duet);
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
        .zip(duets)
        .map(|(p, duet)| PairReport {
            title: p.title.clone(),
            base: p.base_label.clone(),
            candidate: p.candidate_label.clone(),
            base_repeats: p.base_count,
            candidate_repeats: p.runs.len() - p.base_count,
            differences: p.server_differences(),
            problems: p.problems.clone(),
            verdicts: verdicts::pair_verdicts(p, &duet::rules_for(p, rules)),
            duet,
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

/// The pair's next step, said once: the figures more rounds could decide and the command.
/// A rate or latency still open is decided best by a duet (docs/method.md, "Duet runs"), so
/// the command runs duet rounds (`--duet`) where a rate is open or the runs were a duet
/// already; only work per op open: interleaved rounds. The rounds: the most the planning asks
/// of the open figures (at the noise measured: a duet's own where the runs were one, else the
/// paired or Welch noise, an upper bound for a duet, so at most the default cap
/// [`DEFAULT_MAX_REPEATS`]), the default cap where nothing was planned; more than the runs
/// have. Duet rounds after solo runs go to a new dir (`OUT-duet`): a duet side is never
/// compared with a solo run.
fn next_step(args: &CheckOptions, p: &PairReport) -> Option<String> {
    let out = args
        .dirs
        .first()
        .map_or_else(|| "OUT".into(), |d| d.display().to_string());
    let file = args.run.as_ref().map(|f| f.display().to_string());
    next_step_of(p, file.as_deref(), &out)
}

/// [`next_step`] of a pair whose runs are in `out`, run by `ibench check --run FILE` when
/// `run_file` names it.
fn next_step_of(p: &PairReport, run_file: Option<&str>, out: &str) -> Option<String> {
    let open: Vec<&StepVerdict> = p.verdicts.iter().filter(|v| rounds_can_decide(v)).collect();
    if open.is_empty() {
        return None;
    }
    let rates_open = open.iter().any(|v| v.kind == FigureKind::Rate);
    let to_duet = rates_open && !p.duet;
    let have = if to_duet {
        0
    } else {
        p.base_repeats.min(p.candidate_repeats)
    };
    let planned = open.iter().filter_map(|v| v.judgement.repeats_needed).max();
    let repeats = match planned {
        Some(n) if to_duet => n.min(DEFAULT_MAX_REPEATS),
        Some(n) => n,
        None => DEFAULT_MAX_REPEATS,
    }
    .max(have + 1)
    .max(verdicts::MIN_REPEATS);
    let duet = p.duet || rates_open;
    let out = if to_duet {
        format!("{out}-duet")
    } else {
        out.to_string()
    };
    let names: Vec<String> = open.iter().map(|v| v.name()).collect();
    let how = match (run_file, p.title.is_empty()) {
        (Some(file), _) => decide_command(file, &out, duet, repeats),
        (None, false) => decide_command("MATRIX.toml", &out, duet, repeats),
        (None, true) => format!(
            "write the base's and the candidate's setups as one matrix group{} (docs/matrix.md), then: {}",
            if duet {
                ""
            } else {
                " with order = \"interleaved\""
            },
            decide_command("MATRIX.toml", "OUT", duet, repeats)
        ),
    };
    let why = match planned {
        _ if to_duet => format!(
            "a duet, the base and the candidate at the same time, decides rates this host moves; its noise is not measured yet: {repeats} rounds at most, they stop once every figure is decided"
        ),
        Some(_) => format!("the planning asks for {repeats} repeats a side"),
        None => {
            format!(
                "{repeats} repeats a side at most: the rounds stop once every figure is decided"
            )
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::decision::{Decision, Reason, Verdict};
    use crate::workload::steps::StepName;
    use verdicts::Figure;

    /// A figure that cannot tell, too noisy, with the planning's rounds.
    fn open(figure: Figure, repeats_needed: Option<usize>) -> StepVerdict {
        StepVerdict {
            step: StepName::LoadInitial,
            figure,
            kind: figure.kind(),
            unit: String::new(),
            base: vec![1.0, 1.0],
            candidate: vec![1.0, 1.0],
            base_median: Some(1.0),
            candidate_median: Some(1.0),
            judgement: Decision {
                verdict: Verdict::CannotTell,
                reason: Some(Reason::TooNoisy),
                ratio: Some(1.0),
                interval: Some((0.8, 1.2)),
                level: 0.9,
                method: None,
                smallest_regression_pct: None,
                repeats_needed,
                seconds_needed: None,
                detail: String::new(),
            },
            repeat_notes: Vec::new(),
        }
    }

    fn pair(verdicts: Vec<StepVerdict>, duet: bool) -> PairReport {
        PairReport {
            title: "g / w".into(),
            base: "a".into(),
            candidate: "b".into(),
            base_repeats: 3,
            candidate_repeats: 3,
            differences: Vec::new(),
            problems: Vec::new(),
            verdicts,
            duet,
            next_step: None,
        }
    }

    #[test]
    fn an_open_rate_is_sent_to_a_duet_and_a_duet_to_more_of_its_rounds() {
        // Interleaved rounds whose rate the planning gives 900 rounds: a duet, at most the
        // default cap, into a dir of its own.
        let p = pair(vec![open(Figure::Throughput, Some(900))], false);
        let next = next_step_of(&p, Some("m.toml"), "out").expect("a next step");
        assert!(
            next.ends_with("ibench check --run m.toml out-duet --duet --max-repeats 10"),
            "{next}"
        );
        assert_eq!(next.matches("ibench check").count(), 1, "{next}");
        // A duet already: more of its rounds, as many as its own planning asks.
        let p = pair(vec![open(Figure::Throughput, Some(7))], true);
        let next = next_step_of(&p, Some("m.toml"), "out").expect("a next step");
        assert!(
            next.ends_with("ibench check --run m.toml out --duet --max-repeats 7"),
            "{next}"
        );
        assert!(next.contains("the planning asks for 7"), "{next}");
        // Only work per op open: interleaved rounds, the planning's count.
        let p = pair(vec![open(Figure::Metric("walbpi"), Some(5))], false);
        let next = next_step_of(&p, None, "out").expect("a next step");
        assert!(
            next.ends_with("ibench check --run MATRIX.toml out --max-repeats 5"),
            "{next}"
        );
        // Nothing open: no next step.
        let mut done = open(Figure::Throughput, None);
        done.judgement.verdict = Verdict::NoChange;
        done.judgement.reason = None;
        assert_eq!(next_step_of(&pair(vec![done], false), None, "out"), None);
    }

    #[test]
    fn the_method_column_names_a_duet_and_a_single_run_on_a_steady_host() {
        use crate::stats::decision::Method;
        let mut v = open(Figure::Throughput, None);
        v.judgement.method = Some(Method::Paired);
        assert_eq!(
            super::super::outputs::method_text(&pair(Vec::new(), true), &v),
            "duet, paired"
        );
        assert_eq!(
            super::super::outputs::method_text(&pair(Vec::new(), false), &v),
            "paired"
        );
        v.judgement.method = Some(Method::PerSecond);
        assert_eq!(
            super::super::outputs::method_text(&pair(Vec::new(), false), &v),
            "single run, steady host"
        );
        v.judgement.reason = Some(Reason::OneRun);
        assert_eq!(
            super::super::outputs::method_text(&pair(Vec::new(), false), &v),
            "single run"
        );
    }
}
