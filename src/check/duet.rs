//! Duet rounds judged on the seconds both sides ran. In a duet (`order = "duet"`) the base
//! and the candidate ran each step at the same time; the side that finished first then had
//! the host alone, and its last seconds would favour it. So each step of each round is cut to
//! the whole seconds where both sides ran it (their per-second timelines, aligned on the
//! steps' wall-clock starts), and the step's rate is taken over those seconds alone. The
//! paired rule then judges the per-round ratios (one per round: the two sides' rates over the
//! same seconds).
//!
//! The cut itself, and the pairing of seconds, are `report::overlap`'s (the matrix report
//! makes the same cut).

use anyhow::{Result, bail};

use super::input::Pair;
use crate::report::overlap::cut_round;

/// Whether any run of the pair is a duet side, and whether all are.
fn duet_sides(pair: &Pair) -> (bool, bool) {
    let n = pair.runs.iter().filter(|r| r.record.duet.is_some()).count();
    (n > 0, n == pair.runs.len())
}

/// Whether the pair's runs are duet sides (all of them); an error when some are and some are
/// not: a duet side's rates are not a solo run's.
pub fn is_duet(pair: &Pair) -> Result<bool> {
    match duet_sides(pair) {
        (false, _) => Ok(false),
        (true, true) => Ok(true),
        (true, false) => {
            let who = |duet: bool| {
                pair.runs
                    .iter()
                    .enumerate()
                    .find(|(_, r)| r.record.duet.is_some() == duet)
                    .map_or_else(String::new, |(i, r)| {
                        let side = if i < pair.base_count {
                            "base"
                        } else {
                            "candidate"
                        };
                        format!("{side} {} ({})", pair.names[i], r.dir.display())
                    })
            };
            bail!(
                "{}{} ran as one side of a duet and {} ran solo: a duet's rates are not a solo run's; compare duet sides with duet sides (ibench check --run FILE --duet) or solo runs with solo runs",
                pair.error_prefix(),
                who(true),
                who(false)
            )
        }
    }
}

/// The rules a pair is judged by: a duet's rates are not held to the host screening's flags,
/// as both sides met the same host in the same seconds, so the host's moves are in the
/// pairing, not in one side; a figure the host moves per query still is (measured: 2 of 20
/// same-against-same duet checks called a query step's work per query regressed when it was
/// not, docs/method.md).
pub fn rules_for(pair: &Pair, rules: super::verdicts::Rules) -> super::verdicts::Rules {
    let duet = !pair.runs.is_empty() && pair.runs.iter().all(|r| r.record.duet.is_some());
    super::verdicts::Rules { duet, ..rules }
}

/// The pair's duet rounds: base run index and candidate run index per round.
fn rounds(pair: &Pair) -> Vec<(u32, usize, usize)> {
    let round_of = |i: usize| pair.runs[i].record.duet.as_ref().map(|d| d.round);
    (0..pair.base_count)
        .filter_map(|b| {
            let r = round_of(b)?;
            let c = (pair.base_count..pair.runs.len()).find(|&c| round_of(c) == Some(r))?;
            Some((r, b, c))
        })
        .collect()
}

/// Cut every step of every duet round of the pair to the seconds both sides ran; a problem
/// line for a round without a partner and a step with no second in common.
pub fn cut_to_shared_seconds(pair: &mut Pair) {
    let rounds = rounds(pair);
    pair.problems.insert(
        0,
        format!(
            "duet: the base and the candidate ran at the same time on one host, {} rounds (their absolute rates are not those of a solo run): each step's rate is judged on the seconds both sides ran, and a change in a rate is not held to the host screening's flags (both sides met the same host)",
            rounds.len()
        ),
    );
    let paired: Vec<usize> = rounds.iter().flat_map(|&(_, b, c)| [b, c]).collect();
    for i in (0..pair.runs.len()).filter(|i| !paired.contains(i)) {
        pair.problems.push(format!(
            "{} {}: its duet partner is missing: judged on its whole steps",
            if i < pair.base_count {
                "base"
            } else {
                "candidate"
            },
            pair.names[i]
        ));
    }
    for (round, b, c) in rounds {
        // b is a base run, c a candidate's: b < base_count <= c.
        let (left, right) = pair.runs.split_at_mut(c);
        pair.problems
            .extend(cut_round(&mut left[b], &mut right[0], round));
    }
}
