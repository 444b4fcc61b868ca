//! The one rule that paints a relative figure: red (worse), green (better) or grey (not
//! decided, or no change), with its mark and the reason. Every table (absolute, relative,
//! per-step figures, the matrix's), the summary, the tl;dr, the index page and the charts take
//! a figure's paint from [`paint`], so no format can paint what the comparison did not decide.
//!
//! What is decided: a figure is a change only when nothing says its step measured the host
//! rather than the DBMS (`report::host`; a duet's rate is not held to the host's flags, as in
//! `ibench check`: `stats::decision::duet_waives_host_flags`), its step ran whole and passed
//! its checks, and the
//! decision rule of `ibench check` (`stats::decision`: the ratio's 90% interval, from the
//! repeats or a single run's per-second samples, wholly beyond ±5%) says it changed. A
//! figure the rule finds inside ±5% is grey, unmarked ("no change"); one it cannot decide
//! (too noisy, too short, too few repeats) is grey marked `?`. A figure with no measure of
//! its noise (the per-step figures) falls back on the band: painted outside ±5% (and outside
//! the base's spread over repeats in a matrix report). Marks (`CellNote::mark`): `~`
//! host-affected, `?` not decided; a partial step's figure and a failed SLA's carry the marks
//! every syntax gives them (`!`, `*`).
//!
//! A figure held to an SLA (a query step's background insert rate, a replica's lag) is not a
//! comparison: [`sla`] paints it, red when it failed.

use super::diagnosis::{NoiseBand, THRESHOLD_PCT};
use super::model::{Cell, CellNote, Colour};
use crate::stats::decision::{self, FigureKind, Method, Verdict};

/// What is known of one relative figure (a run's figure divided by the base's).
#[derive(Clone, Debug)]
pub struct Evidence<'a> {
    /// The run's figure / the base's.
    pub ratio: f64,
    /// Whether a larger figure is better (a rate: `Some(true)`), worse (a cost:
    /// `Some(false)`), or neither is known (`None`: a moved figure is grey).
    pub higher_is_better: Option<bool>,
    /// Why the host may have moved the figure (`report::host`), when it may have.
    pub host: Option<&'a [String]>,
    /// What the figure's step notes against it already: it covers only part of its step, a
    /// check after it failed, or it failed its SLA; such a figure is never painted.
    pub note: Option<&'a CellNote>,
    /// The base's spread over its repeats (min / median ..= max / median), in a matrix report.
    pub spread: Option<NoiseBand>,
    /// What the base and the run measured of the figure (their repeats, or a single run's
    /// per-second samples), for the decision rule; `None`: only the band decides.
    pub measured: Option<(&'a decision::Evidence, &'a decision::Evidence)>,
    /// A rate or latency (timed: the host moves it), or the DBMS's work per op (counted).
    pub kind: FigureKind,
    /// Whether the host probes show the host steady between the base and the run
    /// (`results::probe::steady_between`): only then does one run a side decide a rate.
    pub steady_host: bool,
    /// Whether the base and the run were a duet's sides: a rate is then not held to the
    /// host's flags (`stats::decision::duet_waives_host_flags`, the rule of `ibench check`).
    pub duet: bool,
}

impl<'a> Evidence<'a> {
    /// The evidence of a ratio with nothing else known: a rate, the default band.
    pub fn of_rate(ratio: f64) -> Evidence<'a> {
        Evidence {
            ratio,
            higher_is_better: Some(true),
            host: None,
            note: None,
            spread: None,
            measured: None,
            kind: FigureKind::Rate,
            steady_host: false,
            duet: false,
        }
    }

    /// Whether it is a rate (or latency) of one run a side with nothing to show the host
    /// steady: no measures, no repeats to measure the noise between runs (no spread), no
    /// steady probes. Such a figure is never painted red or green.
    fn one_run_rate(&self) -> bool {
        // With measures the decision rule says so itself, after the floor.
        self.measured.is_none()
            && self.spread.is_none()
            && self.kind == FigureKind::Rate
            && !self.steady_host
    }
}

/// The note of a rate that one run a side cannot decide.
pub fn one_run_note() -> CellNote {
    CellNote::Undecided(format!(
        "{}: {}",
        decision::Reason::OneRun.text(),
        decision::ONE_RUN_DETAIL
    ))
}

/// How one relative figure is painted, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Paint {
    /// Its colour.
    pub colour: Colour,
    /// Why it is grey (or what it carries), when there is a reason to say.
    pub note: Option<CellNote>,
    /// The ratio's interval over the repeats, when the decision rule had repeats.
    pub interval: Option<[f64; 2]>,
    /// The ratio the decision rule used, when it had measures: the geometric mean of the
    /// per-round ratios (paired rounds), the ratio of the geometric means (Welch), the ratio
    /// of the two figures (single runs). A table shows it in place of its own ratio (of
    /// medians), so every table shows the one ratio the verdict used, as `ibench check` does.
    pub ratio: Option<f64>,
}

impl Paint {
    /// Whether the figure is decided as a change (red or green).
    pub fn is_change(&self) -> bool {
        matches!(self.colour, Colour::Red | Colour::Green)
    }

    /// Whether the figure is grey because it could not be decided (host-affected, partial,
    /// within the base's spread), not because it lies inside the band.
    pub fn is_undecided(&self) -> bool {
        left_undecided(self.colour, self.note.as_ref())
    }
}

/// The paint of one relative figure: the one rule every format calls. A duet's rate is
/// painted as if the host had flagged nothing, and its note says why
/// ([`CellNote::HostFlagWaived`], or the reason it stayed undecided followed by it).
pub fn paint(e: &Evidence) -> Paint {
    let waived = e
        .host
        .filter(|_| e.duet)
        .zip(decision::duet_waives_host_flags(e.kind));
    let Some((reasons, why)) = waived else {
        return paint_held(e);
    };
    let p = paint_held(&Evidence {
        host: None,
        ..e.clone()
    });
    let note = match p.note {
        None => Some(CellNote::HostFlagWaived {
            reasons: reasons.to_vec(),
            why,
        }),
        Some(CellNote::Undecided(d)) => Some(CellNote::Undecided(format!(
            "{d} (not held to the host screening's flag: {why})"
        ))),
        other => other,
    };
    Paint { note, ..p }
}

/// The paint of one relative figure held to the host's flags (`e.host`).
fn paint_held(e: &Evidence) -> Paint {
    let settings = decision::Settings {
        steady_host: e.steady_host,
        ..decision::Settings::with_threshold_pct(THRESHOLD_PCT)
    };
    // One decision: its ratio is the one the rule uses whatever paints the figure (the
    // host, a partial step; it does not depend on the direction), its verdict paints a
    // figure with a direction.
    let lower_is_better = e.higher_is_better.is_some_and(|higher| !higher);
    let decision = e
        .measured
        .map(|(base, run)| decision::decide_paired(base, run, &settings, lower_is_better));
    let ratio = decision.as_ref().and_then(|d| d.ratio);
    let grey = |note: Option<CellNote>| Paint {
        colour: Colour::Grey,
        note,
        interval: None,
        ratio,
    };
    if let Some(reasons) = e.host {
        let note = match e.note {
            // A partial step or a failed check says more than the host does.
            Some(n) if n.is_partial() || *n == CellNote::SlaFailed => n.clone(),
            _ => CellNote::HostAffected(reasons.to_vec()),
        };
        return grey(Some(note));
    }
    if let Some(n) = e
        .note
        .filter(|n| n.is_partial() || **n == CellNote::SlaFailed)
    {
        return grey(Some(n.clone()));
    }
    let carried = e.note.filter(|n| **n != CellNote::UnsettledStart).cloned();
    if e.one_run_rate() {
        return grey(Some(one_run_note()));
    }
    if let Some(d) = decision.as_ref().filter(|_| e.higher_is_better.is_some()) {
        let p = decided(d, carried);
        // A change inside the base's own spread over repeats is not painted either.
        if p.is_change()
            && let Some(spread) = e.spread
            && spread.contains(p.ratio.unwrap_or(e.ratio))
        {
            return Paint {
                colour: Colour::Grey,
                note: Some(CellNote::WithinBaseSpread),
                ..p
            };
        }
        return p;
    }
    if NoiseBand::default_band().contains(e.ratio) {
        return grey(carried);
    }
    if let Some(spread) = e.spread
        && spread.contains(e.ratio)
    {
        return grey(Some(carried.unwrap_or(CellNote::WithinBaseSpread)));
    }
    let colour = match e.higher_is_better {
        None => Colour::Grey,
        Some(higher) if (e.ratio > 1.0) == higher => Colour::Green,
        Some(_) => Colour::Red,
    };
    Paint {
        colour,
        note: carried,
        interval: None,
        ratio,
    }
}

/// The paint of what the decision rule concluded: red or green for a change, grey for none,
/// grey marked `?` with the reason when it cannot tell. The interval is kept when it came
/// from repeats.
fn decided(d: &decision::Decision, carried: Option<CellNote>) -> Paint {
    let interval = d
        .interval
        .filter(|_| matches!(d.method, Some(Method::Repeats | Method::Paired)))
        .map(|(lo, hi)| [lo, hi]);
    let (colour, note) = match d.verdict {
        Verdict::Regressed => (Colour::Red, carried),
        Verdict::Improved => (Colour::Green, carried),
        Verdict::NoChange => (Colour::Grey, carried),
        Verdict::CannotTell => (
            Colour::Grey,
            Some(CellNote::Undecided(format!(
                "{}: {}",
                d.reason.map_or("cannot tell", |r| r.text()),
                d.detail
            ))),
        ),
    };
    Paint {
        colour,
        note,
        interval,
        ratio: d.ratio,
    }
}

/// Whether a painted cell was left undecided: grey with a reason (host-affected, partial,
/// failed SLA, within the base's spread), not grey for lying inside the band.
pub fn undecided(c: &Cell) -> bool {
    c.value.is_some() && left_undecided(c.colour, c.note.as_ref())
}

/// Grey with a note that leaves the figure undecided: the one test of [`Paint::is_undecided`]
/// and [`undecided`].
fn left_undecided(colour: Colour, note: Option<&CellNote>) -> bool {
    colour == Colour::Grey && note.is_some_and(CellNote::leaves_undecided)
}

/// The paint a cell holds.
pub fn of_cell(c: &Cell) -> Paint {
    Paint {
        colour: c.colour,
        note: c.note.clone(),
        interval: c.interval,
        ratio: c.value,
    }
}

/// The paint of a figure held to an SLA (a query step's background insert rate against its
/// target, a replica's lag against its bound): red when it failed, unpainted when it held.
/// An SLA judges one run's own figure against a bound, not a change against the base, so it
/// is never green, and grey is left to the relative figures it makes untrustworthy.
pub fn sla(failed: bool) -> Colour {
    if failed { Colour::Red } else { Colour::None }
}

/// The paint of a range of figures (a step family's in the summary and the tl;dr): a colour
/// only when every figure of it is decided and they agree; else grey. Its note is the first
/// figure's reason to be undecided, when some figure is.
pub fn paint_of_range(paints: &[Paint]) -> Paint {
    let first = paints.first().map(|p| p.colour);
    let agree = paints.iter().all(|p| Some(p.colour) == first);
    let colour = match first {
        Some(c @ (Colour::Red | Colour::Green)) if agree => c,
        _ => Colour::Grey,
    };
    Paint {
        colour,
        note: paints
            .iter()
            .find(|p| p.is_undecided())
            .and_then(|p| p.note.clone()),
        interval: None,
        ratio: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CheckKind, Status};

    /// A rate between runs on a host the probes show steady: the band decides.
    fn steady(r: f64) -> Evidence<'static> {
        Evidence {
            steady_host: true,
            ..Evidence::of_rate(r)
        }
    }

    fn rate(r: f64) -> Colour {
        paint(&steady(r)).colour
    }

    #[test]
    fn a_rate_of_one_run_a_side_is_never_painted_without_a_steady_host() {
        for r in [0.3, 0.949, 1.0, 1.051, 4.0] {
            let p = paint(&Evidence::of_rate(r));
            assert_eq!(p.colour, Colour::Grey, "{r}");
            assert_eq!(p.note, Some(one_run_note()), "{r}");
            assert!(p.is_undecided());
        }
        // Single runs measured: the same.
        let one = |v: f64| {
            decision::Evidence::single_run(v, &[v, v * 1.01, v * 0.99, v], FigureKind::Rate)
        };
        let (b, c) = (one(100.0), one(50.0));
        let p = paint(&Evidence {
            measured: Some((&b, &c)),
            ..Evidence::of_rate(0.5)
        });
        assert_eq!((p.colour, p.note), (Colour::Grey, Some(one_run_note())));
        // Work per op still decides from one run a side.
        let work = Evidence {
            higher_is_better: Some(false),
            kind: FigureKind::Work,
            ..Evidence::of_rate(1.5)
        };
        assert_eq!(paint(&work).colour, Colour::Red);
    }

    #[test]
    fn a_rate_is_painted_only_outside_the_band() {
        assert_eq!(rate(0.95), Colour::Grey);
        assert_eq!(rate(0.949), Colour::Red);
        assert_eq!(rate(1.05), Colour::Grey);
        assert_eq!(rate(1.051), Colour::Green);
        assert_eq!(rate(1.0), Colour::Grey);
    }

    #[test]
    fn a_cost_is_painted_the_other_way_and_a_figure_of_no_direction_grey() {
        let cost = |r| {
            paint(&Evidence {
                higher_is_better: Some(false),
                ..steady(r)
            })
            .colour
        };
        assert_eq!(cost(1.2), Colour::Red);
        assert_eq!(cost(0.8), Colour::Green);
        let neither = Evidence {
            higher_is_better: None,
            ..steady(1.5)
        };
        assert_eq!(paint(&neither).colour, Colour::Grey);
    }

    #[test]
    fn the_host_a_partial_step_and_a_failed_sla_are_never_painted() {
        let reasons = vec!["steal 12%".to_string()];
        let host = Evidence {
            host: Some(&reasons),
            ..Evidence::of_rate(0.5)
        };
        let p = paint(&host);
        assert_eq!(p.colour, Colour::Grey);
        assert_eq!(p.note.as_ref().map_or("", CellNote::mark), "~");
        assert!(p.is_undecided());
        let failed = CellNote::Unfinished(Status::Failed);
        let p = paint(&Evidence {
            note: Some(&failed),
            ..Evidence::of_rate(2.0)
        });
        assert_eq!((p.colour, p.note.as_ref()), (Colour::Grey, Some(&failed)));
        let check = CellNote::CheckFailed(vec![CheckKind::Integrity]);
        let p = paint(&Evidence {
            note: Some(&check),
            host: Some(&reasons),
            ..Evidence::of_rate(2.0)
        });
        assert_eq!((p.colour, p.note.as_ref()), (Colour::Grey, Some(&check)));
        let p = paint(&Evidence {
            note: Some(&CellNote::SlaFailed),
            ..Evidence::of_rate(0.5)
        });
        assert_eq!(
            (p.colour, p.note),
            (Colour::Grey, Some(CellNote::SlaFailed))
        );
    }

    #[test]
    fn inside_the_bases_spread_is_grey_and_says_so() {
        let spread = NoiseBand {
            low: 0.8,
            high: 1.3,
        };
        let p = paint(&Evidence {
            spread: Some(spread),
            ..Evidence::of_rate(1.24)
        });
        assert_eq!(p.colour, Colour::Grey);
        assert_eq!(p.note, Some(CellNote::WithinBaseSpread));
        let p = paint(&Evidence {
            spread: Some(spread),
            ..Evidence::of_rate(1.4)
        });
        assert_eq!(p.colour, Colour::Green);
    }

    #[test]
    fn with_measures_the_decision_rule_paints() {
        use decision::Evidence as Measured;
        // Three quiet repeats a side, 20% apart: regressed, with the repeats' interval.
        let base = Measured::repeats(&[100.0, 101.0, 99.0], FigureKind::Rate);
        let slow = Measured::repeats(&[80.0, 81.0, 79.0], FigureKind::Rate);
        let p = paint(&Evidence {
            measured: Some((&base, &slow)),
            ..Evidence::of_rate(0.8)
        });
        assert_eq!(p.colour, Colour::Red);
        let [lo, hi] = p.interval.unwrap();
        assert!(lo < 0.8 && hi > 0.8 && hi < 0.95, "{lo} {hi}");
        // Noisy repeats 20% apart on the median: not decided, marked ?.
        let noisy = Measured::repeats(&[60.0, 80.0, 110.0], FigureKind::Rate);
        let p = paint(&Evidence {
            measured: Some((&base, &noisy)),
            ..Evidence::of_rate(0.8)
        });
        assert_eq!(p.colour, Colour::Grey);
        assert_eq!(p.note.as_ref().map(CellNote::mark), Some("?"));
        assert!(p.is_undecided());
        // The host still comes first.
        let reasons = vec!["steal".to_string()];
        let p = paint(&Evidence {
            measured: Some((&base, &slow)),
            host: Some(&reasons),
            ..Evidence::of_rate(0.8)
        });
        assert_eq!(p.note.as_ref().map(CellNote::mark), Some("~"));
    }

    #[test]
    fn a_duets_rate_is_not_held_to_the_host_flags_but_its_work_per_op_is() {
        use decision::Evidence as Measured;
        let rounds = [1, 2, 3];
        let base = Measured::repeats(&[100.0, 101.0, 99.0], FigureKind::Rate).in_rounds(&rounds);
        let slow = Measured::repeats(&[80.0, 81.0, 79.0], FigureKind::Rate).in_rounds(&rounds);
        let reasons = vec!["steal 20%".to_string()];
        let flagged = Evidence {
            measured: Some((&base, &slow)),
            host: Some(&reasons),
            ..Evidence::of_rate(0.8)
        };
        // Solo runs: the flag greys it.
        assert_eq!(paint(&flagged).note.as_ref().map(CellNote::mark), Some("~"));
        // A duet's: decided as `ibench check` decides it, and the note says why, in its words.
        let duet = Evidence {
            duet: true,
            ..flagged.clone()
        };
        let p = paint(&duet);
        assert_eq!(p.colour, Colour::Red);
        assert_eq!(
            p.note,
            Some(CellNote::HostFlagWaived {
                reasons: reasons.clone(),
                why: decision::DUET_SAME_HOST
            })
        );
        assert!(!p.is_undecided());
        // Still undecided for its own reason, which the waiver follows.
        let noisy = Measured::repeats(&[60.0, 130.0, 70.0], FigureKind::Rate).in_rounds(&rounds);
        let p = paint(&Evidence {
            measured: Some((&base, &noisy)),
            ..duet.clone()
        });
        assert_eq!(p.note.as_ref().map(CellNote::mark), Some("?"));
        let text = p.note.map(|n| n.to_string()).unwrap_or_default();
        assert!(
            text.ends_with(
                "(not held to the host screening's flag: a duet's sides met the same host)"
            ),
            "{text}"
        );
        // No change is grey and decided.
        let same = Measured::repeats(&[100.0, 101.0, 99.0], FigureKind::Rate).in_rounds(&rounds);
        let p = paint(&Evidence {
            measured: Some((&base, &same)),
            ..duet.clone()
        });
        assert_eq!(p.colour, Colour::Grey);
        assert!(!p.is_undecided(), "{p:?}");
        // Work per op of a duet is held to the flags, as in `ibench check`.
        let work = Evidence {
            measured: None,
            higher_is_better: Some(false),
            kind: FigureKind::Work,
            ..duet
        };
        let p = paint(&work);
        assert_eq!(
            (p.colour, p.note),
            (Colour::Grey, Some(CellNote::HostAffected(reasons)))
        );
    }

    #[test]
    fn an_sla_paints_only_its_failures() {
        assert_eq!(sla(true), Colour::Red);
        assert_eq!(sla(false), Colour::None);
    }

    #[test]
    fn a_range_is_painted_only_when_all_its_figures_agree() {
        let p = |r| paint(&steady(r));
        assert_eq!(paint_of_range(&[p(0.5), p(0.7)]).colour, Colour::Red);
        assert_eq!(paint_of_range(&[p(1.5), p(1.7)]).colour, Colour::Green);
        assert_eq!(paint_of_range(&[p(0.5), p(1.0)]).colour, Colour::Grey);
        assert_eq!(paint_of_range(&[p(0.5), p(1.7)]).colour, Colour::Grey);
        assert_eq!(paint_of_range(&[]).colour, Colour::Grey);
    }
}
