//! What `ibench check` concludes, as data: a verdict per step and figure for each pair
//! ([`PairReport`]), the exit code and the summary ([`CheckReport`]), and the rule for which
//! undecided figures more repeats could decide. The outputs render it; `--run` reads it after
//! each round.

use serde::Serialize;

use super::verdicts::{self, Rules, StepVerdict, Verdict};
use crate::report::differs::Difference;

/// Exit status: no regression.
pub const EXIT_OK: u8 = 0;
/// Exit status: a regression (or, with `--fail-on-inconclusive`, a step that cannot tell).
pub const EXIT_REGRESSED: u8 = 1;
/// Exit status: bad input, or runs that are not like for like.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit status: nothing regressed, but some steps cannot tell.
pub const EXIT_INCONCLUSIVE: u8 = 3;

/// One candidate against the base, judged.
#[derive(Debug, Serialize)]
pub struct PairReport {
    /// `group / workload` for a matrix; empty for run directories.
    pub title: String,
    /// The base's label.
    pub base: String,
    /// The candidate's label.
    pub candidate: String,
    /// The base's runs read.
    pub base_repeats: usize,
    /// The candidate's runs read.
    pub candidate_repeats: usize,
    /// What differs in the server (DBMS, build, settings): what the comparison varies.
    pub differences: Vec<Difference>,
    /// Problems met reading the runs.
    pub problems: Vec<String>,
    /// Per step and figure.
    pub verdicts: Vec<StepVerdict>,
    /// Whether the runs were the two sides of a duet (base and candidate at the same time on
    /// one host, each step judged on the seconds both sides ran).
    pub duet: bool,
    /// What would decide the figures more repeats can decide (too noisy, one run a side,
    /// too few repeats, host-affected), with the command; `None` when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
}

/// Everything `ibench check` concludes.
#[derive(Debug, Serialize)]
pub struct CheckReport {
    /// The thresholds.
    pub rules: Rules,
    /// One per candidate (and workload, for a matrix).
    pub pairs: Vec<PairReport>,
    /// The process's exit status.
    pub exit_code: u8,
    /// One line: what regressed, or that nothing did.
    pub summary: String,
}

/// The default of `--max-repeats`, the cap the next step names when the noise between runs
/// is not measured yet.
pub const DEFAULT_MAX_REPEATS: usize = 10;

/// The command that would decide a pair's open figures: rounds of the matrix `matrix` into
/// `out`, at most `repeats` a side (they stop once every figure is decided); `duet`: each
/// round a duet (`--duet`). The one place that names it.
pub fn decide_command(matrix: &str, out: &str, duet: bool, repeats: usize) -> String {
    let duet = if duet { " --duet" } else { "" };
    format!("ibench check --run {matrix} {out}{duet} --max-repeats {repeats}")
}

/// Whether more rounds could decide a figure that cannot tell: not when its step is too short,
/// failed, or has no ratio.
pub fn rounds_can_decide(v: &StepVerdict) -> bool {
    v.judgement.verdict == Verdict::CannotTell
        && !matches!(
            v.judgement.reason,
            Some(
                verdicts::Reason::TooShort
                    | verdicts::Reason::FailedOrPartial
                    | verdicts::Reason::NoRatio
            )
        )
}
