//! The decision rule of `ibench check` and of the reports' relative cells, as pure functions:
//! from what each side measured of one figure (its [`Evidence`]) to a [`Decision`]: regressed,
//! improved, no change, or cannot tell with the reason, the ratio and its interval, and how
//! much more measuring would decide.
//!
//! The rule is an equivalence rule (two one-sided tests, docs/method.md):
//! - the interval is the `1 - 2·alpha` confidence interval (90% at alpha 0.05) of the ratio
//!   candidate / base, from the log of each side's figure: Welch's t interval over the
//!   repeats (one value a repeat, two or more a side), or, for a side with a single run, the
//!   run's own per-second samples by the method of batch means (which respects their
//!   autocorrelation);
//! - **no change** only when the whole interval lies inside ±threshold;
//! - **regressed** (or **improved**) only when the whole interval lies beyond the threshold on
//!   the worse (better) side;
//! - otherwise **cannot tell: too noisy**, with the interval;
//! - a side of one run with no per-second samples has no measure of its noise: **cannot tell:
//!   too few repeats**, never "no change";
//! - a step whose measured part is below the [`Floor`] is **cannot tell: too short**.
//!
//! This module is a leaf: it imports nothing of the crate, so the report and the check both
//! call it.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The default level of each one-sided test: the interval is `1 - 2·alpha` (90%).
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Repeats a side that measure the noise between repeats.
pub const MIN_REPEATS_FOR_NOISE: usize = 2;

/// Most repeats a side the planning names; beyond it the figure is too noisy to plan for.
pub const MAX_PLANNED_REPEATS: usize = 1000;

/// What the check concludes for one figure of one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Worse, the whole interval beyond the threshold.
    Regressed,
    /// Better, the whole interval beyond the threshold.
    Improved,
    /// The whole interval inside ±threshold.
    NoChange,
    /// Not decided; the reason says why.
    CannotTell,
}

impl Verdict {
    /// As the text and Markdown outputs write it.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Regressed => "REGRESSED",
            Verdict::Improved => "improved",
            Verdict::NoChange => "no change",
            Verdict::CannotTell => "cannot tell",
        }
    }
}

/// Why a figure cannot tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The host screening flagged repeats of the step, leaving too few to judge.
    HostAffected,
    /// One run on a side and nothing to measure its noise with.
    TooFewRepeats,
    /// The step failed, was cut short, failed a check, or is missing in a repeat.
    FailedOrPartial,
    /// The interval reaches both inside and beyond the threshold.
    TooNoisy,
    /// The step's measured part is shorter than the floor.
    TooShort,
    /// A side's figure is 0 (or missing) where the other's is not: no ratio.
    NoRatio,
    /// A rate or latency with one run on a side and no evidence that the host was steady
    /// between the runs: a single run's interval cannot see a host slower for a whole run.
    OneRun,
}

impl Reason {
    /// As the outputs write it.
    pub fn text(self) -> &'static str {
        match self {
            Reason::HostAffected => "host-affected",
            Reason::TooFewRepeats => "too few repeats",
            Reason::FailedOrPartial => "failed or partial step",
            Reason::TooNoisy => "too noisy",
            Reason::TooShort => "too short",
            Reason::NoRatio => "no ratio",
            Reason::OneRun => "one run a side",
        }
    }
}

/// The kind of a figure: the work the DBMS did per operation (counted, little noise), or a
/// rate or latency (timed, noisy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FigureKind {
    /// Work per operation: server CPU, WAL bytes, buffer hits, instructions per op.
    Work,
    /// A throughput or a latency.
    Rate,
}

/// Which figures a check judges and counts in its exit code (`ibench check --judge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Judge {
    /// Throughputs and latencies only.
    Rates,
    /// Work per op only (server CPU, the DBMS's counters, perf's counters).
    Work,
    /// Both (the default).
    All,
}

impl Judge {
    /// Whether a figure of `kind` is judged.
    pub fn takes(self, kind: FigureKind) -> bool {
        match self {
            Judge::All => true,
            Judge::Rates => kind == FigureKind::Rate,
            Judge::Work => kind == FigureKind::Work,
        }
    }
}

impl FigureKind {
    /// As the outputs write it: `work` or `rate/latency`.
    pub fn text(self) -> &'static str {
        match self {
            FigureKind::Work => "work",
            FigureKind::Rate => "rate/latency",
        }
    }
}

/// Where the interval's noise came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Welch's t interval over the repeats of both sides, taken as two independent samples.
    Repeats,
    /// At least one side is a single run: its noise from its own per-second samples (batch
    /// means), which cannot see a host slower for the whole run.
    PerSecond,
    /// The sides ran in rounds (base and candidate one after the other, or at the same time):
    /// a paired t interval of the per-round log ratios, so the host's drift that both sides of
    /// a round shared cancels.
    Paired,
}

impl Method {
    /// As every output names it: `paired`, `Welch` or `single run`.
    pub fn text(self) -> &'static str {
        match self {
            Method::Repeats => "Welch",
            Method::PerSecond => "single run",
            Method::Paired => "paired",
        }
    }
}

/// The shortest step that is judged: its measured part must last `seconds` and hold
/// `samples` per-second samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Floor {
    /// Seconds of the measured part.
    pub seconds: f64,
    /// Per-second samples (timeline lines) of the step.
    pub samples: usize,
}

/// The default floor: 3 seconds and 3 per-second samples (docs/method.md).
pub const DEFAULT_FLOOR: Floor = Floor {
    seconds: 3.0,
    samples: 3,
};

/// What one side measured of one figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Evidence {
    /// The figure, one value per repeat.
    pub values: Vec<f64>,
    /// With a single repeat: the figure in each second of its measured part, in order (used
    /// only when `values` holds one value).
    pub per_second: Vec<f64>,
    /// The measured part's length, seconds (the shortest repeat's); `None` when unknown: then
    /// no floor applies.
    pub seconds: Option<f64>,
    /// The per-second samples of the step (the fewest of the repeats'); `None` when unknown.
    pub samples: Option<usize>,
    /// Work or rate.
    pub kind: FigureKind,
    /// The round each of `values` ran in, when the sides ran in rounds (an interleaved
    /// matrix, `ibench check --run`): [`decide_paired`] pairs the sides' values by it. Empty
    /// when the repeats ran apart.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<usize>,
}

impl Evidence {
    /// One value per repeat.
    pub fn repeats(values: &[f64], kind: FigureKind) -> Evidence {
        Evidence {
            values: values.to_vec(),
            per_second: Vec::new(),
            seconds: None,
            samples: None,
            kind,
            rounds: Vec::new(),
        }
    }

    /// A single run: its figure and that figure in each second of the measured part.
    pub fn single_run(value: f64, per_second: &[f64], kind: FigureKind) -> Evidence {
        Evidence {
            values: vec![value],
            per_second: per_second.to_vec(),
            seconds: None,
            samples: Some(per_second.len()),
            kind,
            rounds: Vec::new(),
        }
    }

    /// With the round each value ran in (one per value), for [`decide_paired`].
    pub fn in_rounds(mut self, rounds: &[usize]) -> Evidence {
        self.rounds = rounds.to_vec();
        self
    }

    /// With the measured part's length and per-second samples, for the floor.
    pub fn with_length(mut self, seconds: f64, samples: usize) -> Evidence {
        self.seconds = Some(seconds);
        self.samples = Some(samples);
        self
    }
}

/// The settings of a decision beyond the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Settings {
    /// The smallest change that counts, as a fraction (0.05 = ±5%).
    pub threshold: f64,
    /// The level of each one-sided test; the interval is `1 - 2·alpha`.
    pub alpha: f64,
    /// The shortest step judged.
    pub floor: Floor,
    /// Evidence that the host was steady between the runs (their host probes within
    /// `results::probe::STEADY_BOUND`): only then does one run a side decide a rate or a
    /// latency ([`Reason::OneRun`]). Work per op decides without it.
    pub steady_host: bool,
}

impl Settings {
    /// `threshold_pct` percent, the default alpha and floor.
    pub fn with_threshold_pct(threshold_pct: f64) -> Settings {
        Settings {
            threshold: threshold_pct / 100.0,
            alpha: DEFAULT_ALPHA,
            floor: DEFAULT_FLOOR,
            steady_host: false,
        }
    }

    /// The interval's level: `1 - 2·alpha`.
    pub fn level(&self) -> f64 {
        1.0 - 2.0 * self.alpha
    }
}

/// What [`decide`] concludes for one figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Decision {
    /// The verdict.
    pub verdict: Verdict,
    /// Why it cannot tell.
    pub reason: Option<Reason>,
    /// Candidate / base: the ratio of the geometric means of the repeats (of the figures
    /// for single runs).
    pub ratio: Option<f64>,
    /// The ratio's interval at `level`.
    pub interval: Option<(f64, f64)>,
    /// The interval's level (0.90).
    pub level: f64,
    /// Where the noise came from.
    pub method: Option<Method>,
    /// The smallest regression, in percent (signed: -12.3 for a throughput, +12.3 for a
    /// cost), these repeats could have decided: the change whose interval, as wide as this
    /// one, would lie just beyond the threshold.
    pub smallest_regression_pct: Option<f64>,
    /// The repeats a side that would decide a change of the threshold's size at the noise
    /// measured (the interval's half-width at most half the threshold); `None` when the
    /// noise was not measured between repeats.
    pub repeats_needed: Option<usize>,
    /// With a single run a side, or a step too short: the measured part, seconds, that would
    /// decide (or reach the floor).
    pub seconds_needed: Option<f64>,
    /// One sentence for people.
    pub detail: String,
}

impl Decision {
    fn cannot(reason: Reason, level: f64, detail: String) -> Decision {
        Decision::without_ratio(Verdict::CannotTell, Some(reason), level, detail)
    }

    /// A decision made without a ratio: every figure of the interval empty.
    fn without_ratio(
        verdict: Verdict,
        reason: Option<Reason>,
        level: f64,
        detail: String,
    ) -> Decision {
        Decision {
            verdict,
            reason,
            ratio: None,
            interval: None,
            level,
            method: None,
            smallest_regression_pct: None,
            repeats_needed: None,
            seconds_needed: None,
            detail,
        }
    }

    /// Whether the figure was decided (regressed, improved or no change).
    pub fn decided(&self) -> bool {
        self.verdict != Verdict::CannotTell
    }
}

/// One relative figure decided: `base` against `cand`, a change within ±`threshold_pct`
/// percent is none; `lower_is_better` for a cost or a latency. The default alpha (a 90%
/// interval) and floor.
pub fn decide(
    base: &Evidence,
    cand: &Evidence,
    threshold_pct: f64,
    lower_is_better: bool,
) -> Decision {
    decide_with(
        base,
        cand,
        &Settings::with_threshold_pct(threshold_pct),
        lower_is_better,
    )
}

/// One side's estimate of the log of its figure.
#[derive(Clone, Copy, Debug)]
struct Estimate {
    /// The mean of the logs (the log of the single run's figure).
    log_mean: f64,
    /// The variance of `log_mean`.
    var: f64,
    /// Its degrees of freedom.
    df: f64,
    /// The standard deviation of one repeat's log, when measured between repeats.
    sd_repeat: Option<f64>,
    /// The measured seconds behind a per-second estimate.
    per_second_seconds: Option<f64>,
}

/// Why a side has no estimate.
enum NoEstimate {
    /// No value, or a value not above 0.
    NoValue,
    /// One run and no per-second samples.
    OneRun,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / count(v.len())
}

fn count(n: usize) -> f64 {
    // Counts of repeats and seconds are far below 2^52: exact.
    #[allow(clippy::cast_precision_loss)]
    let f = n as f64;
    f
}

fn sample_var(v: &[f64]) -> f64 {
    let m = mean(v);
    v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (count(v.len()) - 1.0)
}

/// The batches the method of batch means splits `n` per-second samples into: about √n of
/// about √n seconds each, at least 2.
pub fn batch_count(n: usize) -> usize {
    let mut k = 1;
    while (k + 1) * (k + 1) <= n {
        k += 1;
    }
    k.max(2).min(n)
}

fn estimate(e: &Evidence) -> Result<Estimate, NoEstimate> {
    if e.values.is_empty() || e.values.iter().any(|v| *v <= 0.0 || !v.is_finite()) {
        return Err(NoEstimate::NoValue);
    }
    if e.values.len() >= MIN_REPEATS_FOR_NOISE {
        let logs: Vec<f64> = e.values.iter().map(|v| v.ln()).collect();
        let s2 = sample_var(&logs);
        return Ok(Estimate {
            log_mean: mean(&logs),
            var: s2 / count(logs.len()),
            df: count(logs.len() - 1),
            sd_repeat: Some(s2.sqrt()),
            per_second_seconds: None,
        });
    }
    let ps: Vec<f64> = e
        .per_second
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    if ps.len() < 2 {
        return Err(NoEstimate::OneRun);
    }
    let k = batch_count(ps.len());
    let size = ps.len() / k;
    // The first seconds that do not fill a batch are left out: the tail is the steadier part.
    let skip = ps.len() - k * size;
    let batches: Vec<f64> = ps[skip..].chunks(size).map(mean).collect();
    let m = mean(&batches);
    if m <= 0.0 || !m.is_finite() {
        return Err(NoEstimate::OneRun);
    }
    // The variance of the mean of the batches, relative to it (the delta method for the log).
    let var = sample_var(&batches) / count(k) / (m * m);
    Ok(Estimate {
        log_mean: e.values[0].ln(),
        var,
        df: count(k - 1),
        sd_repeat: None,
        per_second_seconds: Some(e.seconds.unwrap_or(count(ps.len()))),
    })
}

/// Whether a side is below the floor, and its length in seconds then.
fn too_short(e: &Evidence, floor: &Floor) -> Option<f64> {
    let short_s = e.seconds.filter(|s| *s < floor.seconds);
    let short_n = e.samples.filter(|n| *n < floor.samples);
    match (short_s, short_n) {
        (None, None) => None,
        (s, _) => Some(s.or(e.seconds).unwrap_or(count(e.samples.unwrap_or(0)))),
    }
}

fn pct(r: f64) -> String {
    format!("{:+.1}%", (r - 1.0) * 100.0)
}

/// The decision with explicit settings.
pub fn decide_with(
    base: &Evidence,
    cand: &Evidence,
    settings: &Settings,
    lower_is_better: bool,
) -> Decision {
    let level = settings.level();
    let shortest = [
        too_short(base, &settings.floor),
        too_short(cand, &settings.floor),
    ]
    .into_iter()
    .flatten()
    .reduce(f64::min);
    if let Some(s) = shortest {
        let mut d = Decision::cannot(
            Reason::TooShort,
            level,
            format!(
                "the measured part lasted {s:.1} s; the floor is {:.0} s and {} per-second samples",
                settings.floor.seconds, settings.floor.samples
            ),
        );
        d.seconds_needed = Some(settings.floor.seconds);
        d.ratio = geometric_ratio(base, cand);
        return d;
    }
    let (b, c) = match (estimate(base), estimate(cand)) {
        (Ok(b), Ok(c)) => (b, c),
        (Err(NoEstimate::NoValue), _) | (_, Err(NoEstimate::NoValue)) => {
            return no_value(base, cand, level);
        }
        _ if !settings.steady_host && base.kind == FigureKind::Rate => {
            let mut d = Decision::cannot(Reason::OneRun, level, ONE_RUN_DETAIL.to_string());
            d.ratio = geometric_ratio(base, cand);
            d.method = Some(Method::PerSecond);
            return d;
        }
        _ => {
            let n = format!("n={} vs {}", base.values.len(), cand.values.len());
            let mut d = Decision::cannot(
                Reason::TooFewRepeats,
                level,
                format!(
                    "{n}: one run a side without per-second samples does not measure the noise; {MIN_REPEATS_FOR_NOISE} repeats a side would"
                ),
            );
            d.ratio = geometric_ratio(base, cand);
            return d;
        }
    };
    let single = b.per_second_seconds.is_some() || c.per_second_seconds.is_some();
    if single
        && !settings.steady_host
        && (base.kind, cand.kind) != (FigureKind::Work, FigureKind::Work)
    {
        let mut d = Decision::cannot(Reason::OneRun, level, ONE_RUN_DETAIL.to_string());
        d.ratio = geometric_ratio(base, cand);
        d.method = Some(Method::PerSecond);
        return d;
    }
    let mut d = interval_decision(&b, &c, settings, lower_is_better);
    if single && base.kind == FigureKind::Rate {
        d.detail = format!("{}; {STEADY_HOST_DETAIL}", d.detail);
    }
    d
}

/// The measured part of a side's typical repeat, for the floor: the median of the repeats'
/// seconds and the median of their per-second samples (each the lower middle one for an even
/// count; `None` for none), so that one repeat a busy host made fast or slow does not decide
/// whether the step is long enough. `ibench check` and `matrix report` hold a step to the
/// floor by it.
pub fn typical_length(seconds: &[f64], samples: &[usize]) -> (Option<f64>, Option<usize>) {
    let mut seconds = seconds.to_vec();
    seconds.sort_by(f64::total_cmp);
    let mut samples = samples.to_vec();
    samples.sort_unstable();
    let mid = |n: usize| n.saturating_sub(1) / 2;
    (
        seconds.get(mid(seconds.len())).copied(),
        samples.get(mid(samples.len())).copied(),
    )
}

/// Why a duet's rate is judged with the host screening's flags aside, for people: the words
/// `ibench check` and the reports both give.
pub const DUET_SAME_HOST: &str = "a duet's sides met the same host";

/// Why a figure of `kind` of a duet (the base and the candidate ran at the same time on one
/// host) is not held to the host screening's flags, or `None` when it is: a rate or latency
/// is not (both sides met the host's moves in the same seconds, so a flag says the host
/// moved, not that it moved for one side); work per op still is (a query step's work per
/// query moves with the queries the host let each side run). The one rule of `ibench check`
/// (`check::verdicts::Rules`) and of the reports (`report::paint`).
pub fn duet_waives_host_flags(kind: FigureKind) -> Option<&'static str> {
    (kind == FigureKind::Rate).then_some(DUET_SAME_HOST)
}

/// What lets one run a side decide a rate, for people: the method `single run, steady host`.
pub const STEADY_HOST_DETAIL: &str = "one run a side decides this rate because the host was shown steady between the runs (every host probe of both within ±10% of their median, or the runs were a duet's sides)";

/// Why one run a side does not decide a rate, for people.
pub const ONE_RUN_DETAIL: &str = "a single run's interval, from its own per-second rates, cannot see a host slower for the whole run, and nothing showed the host steady between the runs (every host probe of both within ±10% of their median)";

/// Decided from rounds where the sides ran in rounds: the values of the two sides that ran in
/// the same round (their `rounds`, one after the other or at the same time) are paired, and
/// the figure is judged on the per-round log ratios ([`paired_decision`]). Where the rounds
/// cannot be paired (a side without rounds, fewer than [`MIN_REPEATS_FOR_NOISE`] rounds in
/// common, a value not above 0) this is [`decide_with`] (Welch's t, or a single run's rule).
pub fn decide_paired(
    base: &Evidence,
    cand: &Evidence,
    settings: &Settings,
    lower_is_better: bool,
) -> Decision {
    let log_ratios = paired_log_ratios(base, cand);
    let short = too_short(base, &settings.floor).or(too_short(cand, &settings.floor));
    match log_ratios {
        Some(r) if r.len() >= MIN_REPEATS_FOR_NOISE && short.is_none() => {
            paired_decision(&r, settings, lower_is_better)
        }
        // The floor's and the missing values' verdicts are the same either way.
        _ => decide_with(base, cand, settings, lower_is_better),
    }
}

/// `ln(candidate / base)` of each round both sides ran, in the base's order; `None` when a
/// side has no rounds (or not one per value) or a value is not above 0.
fn paired_log_ratios(base: &Evidence, cand: &Evidence) -> Option<Vec<f64>> {
    let ok = |e: &Evidence| {
        e.rounds.len() == e.values.len()
            && !e.rounds.is_empty()
            && e.values.iter().all(|v| *v > 0.0 && v.is_finite())
    };
    if !ok(base) || !ok(cand) {
        return None;
    }
    Some(
        base.rounds
            .iter()
            .zip(&base.values)
            .filter_map(|(round, b)| {
                let i = cand.rounds.iter().position(|r| r == round)?;
                Some((cand.values[i] / b).ln())
            })
            .collect(),
    )
}

/// The paired rule: one figure decided from its per-round log ratios `ln(candidate / base)`,
/// one a round (a round ran both sides on the same host in the same minutes). The interval is
/// the paired t interval of their mean at the settings' level (`n - 1` degrees of freedom);
/// the verdict is read from it as [`decide_with`] reads Welch's; the planning names the
/// rounds that would decide a change of the threshold's size at the per-round noise measured.
/// Fewer than [`MIN_REPEATS_FOR_NOISE`] finite ratios: cannot tell, too few repeats.
pub fn paired_decision(log_ratios: &[f64], settings: &Settings, lower_is_better: bool) -> Decision {
    let level = settings.level();
    let finite: Vec<f64> = log_ratios
        .iter()
        .copied()
        .filter(|r| r.is_finite())
        .collect();
    if finite.len() < MIN_REPEATS_FOR_NOISE {
        let mut d = Decision::cannot(
            Reason::TooFewRepeats,
            level,
            format!(
                "{} round(s): one round does not measure the noise between rounds; {MIN_REPEATS_FOR_NOISE} rounds would",
                finite.len()
            ),
        );
        d.ratio = finite.first().map(|r| r.exp());
        d.method = Some(Method::Paired);
        return d;
    }
    let n = count(finite.len());
    let d = mean(&finite);
    let sd = sample_var(&finite).sqrt();
    let t = if sd > 0.0 {
        t_quantile(1.0 - settings.alpha, n - 1.0)
    } else {
        0.0
    };
    let h = t * sd / n.sqrt();
    let measure = Measure {
        method: Method::Paired,
        interval: &format!("paired interval over {} rounds", finite.len()),
        note: "",
        these: "rounds",
        unit: "rounds",
        repeats_needed: rounds_needed(sd, settings, |k| k - 1.0, 1.0),
        seconds_needed: None,
    };
    decision_of(d, h, &measure, settings, lower_is_better)
}

/// How an interval was measured: what its decision and its sentence say of it.
struct Measure<'a> {
    method: Method,
    /// The interval's name in the sentence: `interval`, `paired interval over 4 rounds`.
    interval: &'a str,
    /// What the sentence adds after the verdict (a single run's caveat), or nothing.
    note: &'a str,
    /// What was measured, in "the smallest regression these … could decide".
    these: &'a str,
    /// What the planning counts: `repeats a side` or `rounds`.
    unit: &'a str,
    repeats_needed: Option<usize>,
    seconds_needed: Option<f64>,
}

/// The decision of the interval `d ± h` of the log ratio, measured as `m` says.
fn decision_of(
    d: f64,
    h: f64,
    m: &Measure,
    settings: &Settings,
    lower_is_better: bool,
) -> Decision {
    let (level, tau) = (settings.level(), settings.threshold);
    let (lo, hi) = ((d - h).exp(), (d + h).exp());
    let ratio = d.exp();
    let ci = format!(
        "{} ({:.0}% {} {} .. {})",
        pct(ratio),
        level * 100.0,
        m.interval,
        pct(lo),
        pct(hi)
    );
    let (verdict, reason, detail) = verdict_of((lo, hi), tau, lower_is_better, &ci);
    let smallest = smallest_regression_pct(tau, h, lower_is_better);
    let detail = format!("{detail}{}", m.note);
    let detail = if verdict == Verdict::CannotTell {
        format!(
            "{detail}; the smallest regression these {} could decide is {smallest:+.1}%; {}",
            m.these,
            plan_text(m.repeats_needed, m.seconds_needed, tau, m.unit)
        )
    } else {
        detail
    };
    Decision {
        verdict,
        reason,
        ratio: Some(ratio),
        interval: Some((lo, hi)),
        level,
        method: Some(m.method),
        smallest_regression_pct: Some(smallest),
        repeats_needed: m.repeats_needed,
        seconds_needed: m.seconds_needed,
        detail,
    }
}

/// The ratio of the geometric means, when every value is above 0.
fn geometric_ratio(base: &Evidence, cand: &Evidence) -> Option<f64> {
    let log_mean = |e: &Evidence| {
        (!e.values.is_empty() && e.values.iter().all(|v| *v > 0.0 && v.is_finite()))
            .then(|| mean(&e.values.iter().map(|v| v.ln()).collect::<Vec<_>>()))
    };
    Some((log_mean(cand)? - log_mean(base)?).exp())
}

/// Both sides without a ratio: all zero on both is no change (no work either side).
fn no_value(base: &Evidence, cand: &Evidence, level: f64) -> Decision {
    let zero = |e: &Evidence| !e.values.is_empty() && e.values.iter().all(|v| *v == 0.0);
    if zero(base) && zero(cand) {
        return Decision::without_ratio(Verdict::NoChange, None, level, "0 on both sides".into());
    }
    Decision::cannot(
        Reason::NoRatio,
        level,
        "a value of 0 or none on one side: no ratio".into(),
    )
}

fn interval_decision(
    b: &Estimate,
    c: &Estimate,
    settings: &Settings,
    lower_is_better: bool,
) -> Decision {
    let d = c.log_mean - b.log_mean;
    let h = half_width(b, c, settings);
    let single = b.per_second_seconds.is_some() || c.per_second_seconds.is_some();
    let (repeats_needed, seconds_needed) = plan(b, c, settings, h);
    let measure = Measure {
        method: if single {
            Method::PerSecond
        } else {
            Method::Repeats
        },
        interval: "interval",
        note: if single {
            " (a single run's interval from its per-second samples: blind to a host slower for the whole run)"
        } else {
            ""
        },
        these: "measures",
        unit: "repeats a side",
        repeats_needed,
        seconds_needed,
    };
    decision_of(d, h, &measure, settings, lower_is_better)
}

/// The half-width, in logs, of the interval of the difference of the two sides' log means
/// (Welch's t at the settings' alpha; 0 when neither side varies).
fn half_width(b: &Estimate, c: &Estimate, settings: &Settings) -> f64 {
    let se = (b.var + c.var).sqrt();
    let t = if se > 0.0 {
        t_quantile(1.0 - settings.alpha, welch_df(b, c))
    } else {
        0.0
    };
    t * se
}

/// The verdict of the ratio's interval `(lo, hi)` against the threshold `tau`, with its
/// reason and its sentence (`ci` is the interval as the sentence writes it).
fn verdict_of(
    (lo, hi): (f64, f64),
    tau: f64,
    lower_is_better: bool,
    ci: &str,
) -> (Verdict, Option<Reason>, String) {
    let (worse_beyond, better_beyond) = if lower_is_better {
        (lo > 1.0 + tau, hi < 1.0 - tau)
    } else {
        (hi < 1.0 - tau, lo > 1.0 + tau)
    };
    let inside = lo > 1.0 - tau && hi < 1.0 + tau;
    let band = format!("±{:.0}%", tau * 100.0);
    if worse_beyond {
        (Verdict::Regressed, None, format!("{ci}, beyond {band}"))
    } else if better_beyond {
        (Verdict::Improved, None, format!("{ci}, beyond {band}"))
    } else if inside {
        (Verdict::NoChange, None, format!("{ci}, inside {band}"))
    } else {
        (
            Verdict::CannotTell,
            Some(Reason::TooNoisy),
            format!("{ci} reaches both inside and beyond {band}"),
        )
    }
}

/// The smallest regression, in percent, that an interval of half-width `h` (in logs) could
/// decide beyond the threshold `tau`: signed, negative for a throughput.
fn smallest_regression_pct(tau: f64, h: f64, lower_is_better: bool) -> f64 {
    if lower_is_better {
        ((1.0 + tau) * h.exp() - 1.0) * 100.0
    } else {
        -(1.0 - (1.0 - tau) * (-h).exp()) * 100.0
    }
}

/// Welch-Satterthwaite degrees of freedom; a side with no variance adds none.
fn welch_df(b: &Estimate, c: &Estimate) -> f64 {
    let var = b.var + c.var;
    let term = |e: &Estimate| {
        if e.var > 0.0 && e.df > 0.0 {
            e.var * e.var / e.df
        } else {
            0.0
        }
    };
    let den = term(b) + term(c);
    if den > 0.0 {
        (var * var / den).max(1.0)
    } else {
        b.df.max(c.df).max(1.0)
    }
}

/// The half-width the planning aims at: half the threshold, in logs.
fn target_half_width(settings: &Settings) -> f64 {
    (1.0 + settings.threshold).ln() / 2.0
}

/// The repeats a side (both measured between repeats) or the seconds (a single-run side) at
/// which the interval's half-width is at most half the threshold.
fn plan(b: &Estimate, c: &Estimate, settings: &Settings, h: f64) -> (Option<usize>, Option<f64>) {
    let target = target_half_width(settings);
    if let (Some(sb), Some(sc)) = (b.sd_repeat, c.sd_repeat) {
        let sd = f64::midpoint(sb * sb, sc * sc).sqrt();
        // Welch with n a side: 2n - 2 degrees of freedom, the variance of the difference 2/n.
        return (rounds_needed(sd, settings, |n| 2.0 * n - 2.0, 2.0), None);
    }
    let seconds = b.per_second_seconds.or(c.per_second_seconds);
    match seconds {
        Some(s) if h > 0.0 => (None, Some(s * (h / target).powi(2).max(1.0))),
        Some(s) => (None, Some(s)),
        None => (None, None),
    }
}

/// The fewest repeats a side (or rounds) `n` at which the half-width
/// `t(1 - alpha, df(n)) · sd · √(spread / n)` is at most half the threshold, by bisection;
/// `None` beyond [`MAX_PLANNED_REPEATS`]. `sd` is one repeat's (one round's) standard
/// deviation in logs; `spread` is 2 for two independent sides, 1 for paired rounds.
fn rounds_needed(
    sd: f64,
    settings: &Settings,
    df: impl Fn(f64) -> f64,
    spread: f64,
) -> Option<usize> {
    if sd == 0.0 {
        return Some(MIN_REPEATS_FOR_NOISE);
    }
    let target = target_half_width(settings);
    let enough = |n: usize| {
        let nf = count(n);
        t_quantile(1.0 - settings.alpha, df(nf)) * sd * (spread / nf).sqrt() <= target
    };
    // The half-width falls as n grows: the fewest n that is enough, by bisection.
    if !enough(MAX_PLANNED_REPEATS) {
        return None;
    }
    let (mut lo, mut hi) = (MIN_REPEATS_FOR_NOISE - 1, MAX_PLANNED_REPEATS);
    while hi - lo > 1 {
        let mid = usize::midpoint(lo, hi);
        if enough(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// What would decide a change of the threshold's size, for people.
/// `unit` counts them: `repeats a side` or `rounds`.
fn plan_text(repeats: Option<usize>, seconds: Option<f64>, tau: f64, unit: &str) -> String {
    let change = format!("a ±{:.0}% change", tau * 100.0);
    match (repeats, seconds) {
        (Some(n), _) => format!("{n} {unit} would decide {change}"),
        (None, Some(s)) => format!(
            "a measured part of about {s:.0} s a side (or {MIN_REPEATS_FOR_NOISE} or more repeats a side) would decide {change}"
        ),
        (None, None) => format!(
            "no number of {unit} up to {MAX_PLANNED_REPEATS} would decide {change} at this noise"
        ),
    }
}

/// The fewest rounds (repeats a side) before `ibench check --run` may give a figure up as
/// beyond its cap: two rounds measure the noise with one degree of freedom, an estimate that
/// can be off by a factor of several either way.
pub const MIN_ROUNDS_TO_GIVE_UP: usize = 3;

/// Whether `max` rounds (repeats a side) could decide a figure still undecided after `n`:
/// its interval's half-width, projected to `max` at the noise measured (the t quantile at the
/// method's degrees of freedom, and √n), held against the distance from the change seen to the
/// threshold: beyond it by more than the half-width decides a change, within it by more
/// decides "no change". True where there is nothing to project (no interval, a single run
/// a side, `n` under 2): such a figure is not given up on this ground.
pub fn could_decide_within(d: &Decision, n: usize, max: usize, settings: &Settings) -> bool {
    let (Some((lo, hi)), Some(method)) = (d.interval, d.method) else {
        return true;
    };
    let df = |k: f64| match method {
        Method::Paired => k - 1.0,
        Method::Repeats => 2.0 * k - 2.0,
        Method::PerSecond => f64::NAN,
    };
    if n < MIN_REPEATS_FOR_NOISE || lo <= 0.0 || hi <= 0.0 || df(count(n)).is_nan() {
        return true;
    }
    let (n, max) = (count(n), count(max.max(n)));
    let p = 1.0 - settings.alpha;
    let half_now = (hi.ln() - lo.ln()) / 2.0;
    let half_at_max = half_now * t_quantile(p, df(max)) / t_quantile(p, df(n)) * (n / max).sqrt();
    let change = ((hi.ln() + lo.ln()) / 2.0).abs();
    let tau = (1.0 + settings.threshold).ln();
    change - half_at_max > tau || change + half_at_max < tau
}

/// Above these degrees of freedom `statrs`' inverse of Student's t loses digits (1.6e-6
/// relative at 1e5, 9e-4 at 1e6 and p = 0.8, against the bisection this module carried
/// before), so the quantile is the normal one with Cornish-Fisher's terms in `1/df`, whose
/// error there is below 1e-12.
const LARGE_DF: f64 = 1e4;

/// The quantile `p` (above 0.5) of Student's t with `df` degrees of freedom (`statrs`);
/// infinite for degrees of freedom that are not above 0, so such an interval decides nothing.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !(0.0..1.0).contains(&p) || df.is_nan() || df <= 0.0 {
        return f64::INFINITY;
    }
    if df > LARGE_DF {
        let Ok(normal) = Normal::new(0.0, 1.0) else {
            return f64::INFINITY;
        };
        let z = normal.inverse_cdf(p);
        let (z3, z5) = (z.powi(3), z.powi(5));
        return z + (z3 + z) / (4.0 * df) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(p),
        Err(_) => f64::INFINITY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reps(v: &[f64]) -> Evidence {
        Evidence::repeats(v, FigureKind::Rate)
    }

    fn paired(ratio: f64, lo: f64, hi: f64) -> Decision {
        let mut d = Decision::cannot(Reason::TooNoisy, 0.9, String::new());
        d.ratio = Some(ratio);
        d.interval = Some((lo, hi));
        d.method = Some(Method::Paired);
        d
    }

    #[test]
    fn a_change_twice_the_threshold_seen_in_two_noisy_rounds_is_not_given_up_at_a_cap_of_10() {
        // The first two duet rounds of log_statement = 'all' (docs/method.md): 0.92x, paired
        // interval 0.717 .. 1.176; the planning for a change of the threshold's size asked 16.
        let settings = Settings::with_threshold_pct(5.0);
        let d = paired(0.918, 0.717, 1.176);
        assert!(could_decide_within(&d, 2, 10, &settings));
        // Cut to 3 rounds a side, the same noise cannot reach the threshold.
        assert!(!could_decide_within(&d, 2, 3, &settings));
    }

    #[test]
    fn a_change_at_the_threshold_with_wide_noise_cannot_be_decided_within_a_small_cap() {
        let settings = Settings::with_threshold_pct(5.0);
        // 0.95x, ±20% after 3 rounds: at 10 rounds still about ±9%, astride the edge.
        let d = paired(0.95, 0.95 / 1.2, 0.95 * 1.2);
        assert!(!could_decide_within(&d, 3, 10, &settings));
        // No interval, or a single run a side: nothing to project, never given up on this.
        let mut none = d.clone();
        none.interval = None;
        assert!(could_decide_within(&none, 3, 10, &settings));
        let mut single = d;
        single.method = Some(Method::PerSecond);
        assert!(could_decide_within(&single, 3, 10, &settings));
    }

    #[test]
    fn no_change_is_decidable_when_the_projected_interval_fits_inside_the_band() {
        let settings = Settings::with_threshold_pct(5.0);
        // 1.00x ±6% after 3 rounds, Welch: at 10 a side about ±2.5%, inside ±5%.
        let mut d = paired(1.0, 1.0 / 1.06, 1.06);
        d.method = Some(Method::Repeats);
        assert!(could_decide_within(&d, 3, 10, &settings));
        assert!(!could_decide_within(&d, 3, 3, &settings));
    }

    #[test]
    fn the_typical_length_is_the_median_repeats() {
        // One repeat a busy host made short does not make the step too short.
        assert_eq!(
            typical_length(&[1.0, 10.0, 9.0], &[1, 10, 9]),
            (Some(9.0), Some(9))
        );
        // An even count: the lower middle one.
        assert_eq!(
            typical_length(&[4.0, 2.0, 8.0, 6.0], &[]),
            (Some(4.0), None)
        );
        assert_eq!(typical_length(&[], &[]), (None, None));
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        assert!((t_quantile(0.95, 1.0) - 6.314).abs() < 1e-3);
        assert!((t_quantile(0.95, 4.0) - 2.132).abs() < 1e-3);
        assert!((t_quantile(0.975, 10.0) - 2.228).abs() < 1e-3);
        assert!((t_quantile(0.95, 1e6) - 1.645).abs() < 1e-3);
        // The values the hand-written bisection gave before statrs (commit "Student's t
        // quantile from statrs"), within 1e-7 relative on both sides of LARGE_DF.
        for (p, df, old) in [
            (0.95, 3.0, 2.353_363_434_801_823),
            (0.9, 1e4, 1.281_636_229_725_863_9),
            (0.8, 1e6, 0.841_621_592_577_501_7),
            (0.95, 1e5, 1.644_868_865_125_063),
        ] {
            let rel = (t_quantile(p, df) - old).abs() / old;
            assert!(
                rel < 1e-7,
                "p {p} df {df}: {} against {old}",
                t_quantile(p, df)
            );
        }
        assert!(t_quantile(0.95, 0.0).is_infinite());
        assert!(t_quantile(0.95, f64::NAN).is_infinite());
    }

    #[test]
    fn an_interval_inside_the_band_is_no_change() {
        let d = decide(
            &reps(&[100.0, 101.0, 99.0, 100.5]),
            &reps(&[100.2, 99.8, 100.4, 99.6]),
            5.0,
            false,
        );
        assert_eq!(d.verdict, Verdict::NoChange, "{d:?}");
        let (lo, hi) = d.interval.expect("an interval");
        assert!(lo > 0.95 && hi < 1.05);
        assert_eq!(d.method, Some(Method::Repeats));
    }

    #[test]
    fn an_interval_straddling_the_band_cannot_tell() {
        // The case: a median within ±5% and an interval of about ±20%.
        let d = decide(
            &reps(&[100.0, 80.0, 120.0]),
            &reps(&[103.0, 85.0, 125.0]),
            5.0,
            false,
        );
        assert_eq!(
            (d.verdict, d.reason),
            (Verdict::CannotTell, Some(Reason::TooNoisy)),
            "{d:?}"
        );
        assert!(d.repeats_needed.expect("a plan") > 3, "{d:?}");
        assert!(d.smallest_regression_pct.expect("a size") < -5.0, "{d:?}");
    }

    #[test]
    fn an_interval_beyond_the_band_decides_the_direction() {
        let base = reps(&[100.0, 101.0, 99.0]);
        let slow = reps(&[80.0, 81.0, 79.0]);
        let d = decide(&base, &slow, 5.0, false);
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        assert!(d.interval.expect("ci").1 < 0.95);
        assert_eq!(decide(&slow, &base, 5.0, false).verdict, Verdict::Improved);
        // For a cost the rise is the regression.
        assert_eq!(decide(&slow, &base, 5.0, true).verdict, Verdict::Regressed);
    }

    #[test]
    fn a_change_beyond_the_threshold_with_an_interval_reaching_inside_cannot_tell() {
        let d = decide(
            &reps(&[100.0, 104.0, 96.0]),
            &reps(&[92.0, 96.0, 88.0]),
            5.0,
            false,
        );
        assert_eq!(d.verdict, Verdict::CannotTell, "{d:?}");
    }

    #[test]
    fn one_repeat_a_side_without_samples_is_never_no_change() {
        let d = decide(&reps(&[100.0]), &reps(&[100.0]), 5.0, false);
        assert_eq!(
            (d.verdict, d.reason),
            (Verdict::CannotTell, Some(Reason::OneRun))
        );
        let steady = Settings {
            steady_host: true,
            ..Settings::with_threshold_pct(5.0)
        };
        let d = decide_with(&reps(&[100.0]), &reps(&[100.0]), &steady, false);
        assert_eq!(
            (d.verdict, d.reason),
            (Verdict::CannotTell, Some(Reason::TooFewRepeats))
        );
        let d = decide(&reps(&[100.0]), &reps(&[50.0]), 5.0, false);
        assert_eq!(d.verdict, Verdict::CannotTell);
    }

    #[test]
    fn two_repeats_a_side_give_a_wide_interval() {
        let d = decide(&reps(&[100.0, 104.0]), &reps(&[101.0, 103.0]), 5.0, false);
        assert_eq!(d.verdict, Verdict::CannotTell, "{d:?}");
        let (lo, hi) = d.interval.expect("ci");
        assert!(lo < 0.95 || hi > 1.05);
        // Quiet enough, two repeats decide.
        let d = decide(&reps(&[100.0, 100.1]), &reps(&[100.05, 100.0]), 5.0, false);
        assert_eq!(d.verdict, Verdict::NoChange, "{d:?}");
    }

    #[test]
    fn a_work_figure_with_zero_noise_is_decided_exactly() {
        let w = |v: &[f64]| Evidence::repeats(v, FigureKind::Work);
        let d = decide(&w(&[1000.0, 1000.0]), &w(&[1031.0, 1031.0]), 2.0, true);
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        let (lo, hi) = d.interval.expect("an interval");
        assert!(
            (lo - 1.031).abs() < 1e-9 && (hi - 1.031).abs() < 1e-9,
            "{d:?}"
        );
        assert_eq!(d.repeats_needed, Some(2));
        let d = decide(&w(&[0.0, 0.0]), &w(&[0.0, 0.0]), 2.0, true);
        assert_eq!(d.verdict, Verdict::NoChange);
        let d = decide(&w(&[0.0, 0.0]), &w(&[3.0, 3.0]), 2.0, true);
        assert_eq!(d.reason, Some(Reason::NoRatio));
    }

    #[test]
    fn a_step_below_the_floor_is_too_short() {
        let short = reps(&[100.0, 101.0, 99.0]).with_length(0.2, 1);
        let long = reps(&[50.0, 51.0, 49.0]).with_length(60.0, 60);
        let d = decide(&short, &long, 5.0, false);
        assert_eq!(
            (d.verdict, d.reason),
            (Verdict::CannotTell, Some(Reason::TooShort))
        );
        assert_eq!(d.seconds_needed, Some(3.0));
        assert_eq!(decide(&long, &long, 5.0, false).verdict, Verdict::NoChange);
    }

    fn series(level: f64, wobble: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| level + wobble * if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect()
    }

    #[test]
    fn a_single_run_a_side_is_judged_on_its_per_second_samples() {
        let steady = Settings {
            steady_host: true,
            ..Settings::with_threshold_pct(5.0)
        };
        let b = Evidence::single_run(1000.0, &series(1000.0, 20.0, 100), FigureKind::Rate);
        let c = Evidence::single_run(700.0, &series(700.0, 15.0, 100), FigureKind::Rate);
        let d = decide_with(&b, &c, &steady, false);
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        assert_eq!(d.method, Some(Method::PerSecond));
        assert!(d.detail.contains("blind to a host slower"), "{}", d.detail);
        assert!(d.detail.contains("host was shown steady"), "{}", d.detail);
        let same = Evidence::single_run(1010.0, &series(1010.0, 20.0, 100), FigureKind::Rate);
        assert_eq!(
            decide_with(&b, &same, &steady, false).verdict,
            Verdict::NoChange
        );
        // Seconds that wander widely leave it open, and say how long a step would decide.
        let noisy: Vec<f64> = (0..20)
            .map(|i| if i < 10 { 600.0 } else { 1400.0 })
            .collect();
        let n = Evidence::single_run(1000.0, &noisy, FigureKind::Rate);
        let d = decide_with(&b, &n, &steady, false);
        assert_eq!(d.verdict, Verdict::CannotTell, "{d:?}");
        assert!(d.seconds_needed.expect("seconds") > 20.0, "{d:?}");
    }

    #[test]
    fn one_run_a_side_decides_no_rate_without_a_steady_host_but_decides_work() {
        let b = Evidence::single_run(1000.0, &series(1000.0, 20.0, 100), FigureKind::Rate);
        let c = Evidence::single_run(700.0, &series(700.0, 15.0, 100), FigureKind::Rate);
        let d = decide(&b, &c, 5.0, false);
        assert_eq!(
            (d.verdict, d.reason),
            (Verdict::CannotTell, Some(Reason::OneRun)),
            "{d:?}"
        );
        assert!((d.ratio.expect("the ratio") - 0.7).abs() < 1e-9);
        // A side of repeats against one run is still one run on a side.
        let d = decide(&reps(&[1000.0, 1010.0, 990.0]), &c, 5.0, false);
        assert_eq!(d.reason, Some(Reason::OneRun), "{d:?}");
        // Work per op decides from one run a side.
        let w = |v: f64, w: f64| Evidence::single_run(v, &series(v, w, 100), FigureKind::Work);
        let d = decide(&w(100.0, 1.0), &w(130.0, 1.0), 5.0, true);
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
    }

    #[test]
    fn paired_rounds_cancel_the_drift_that_welch_keeps() {
        // The host drifts by ±30% from round to round; within a round the candidate is 10%
        // slower, give or take 1%.
        let drift = [1.0, 1.3, 0.7, 1.2, 0.8, 1.0];
        let wobble = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0];
        let base: Vec<f64> = drift.iter().map(|d| 1000.0 * d).collect();
        let cand: Vec<f64> = drift
            .iter()
            .zip(wobble)
            .map(|(d, w)| 900.0 * d * w)
            .collect();
        let s = Settings::with_threshold_pct(5.0);
        let welch = decide_with(&reps(&base), &reps(&cand), &s, false);
        assert_eq!(welch.verdict, Verdict::CannotTell, "{welch:?}");
        assert_eq!(welch.method, Some(Method::Repeats));
        let rounds = [1, 2, 3, 4, 5, 6];
        let paired = decide_paired(
            &reps(&base).in_rounds(&rounds),
            &reps(&cand).in_rounds(&rounds),
            &s,
            false,
        );
        assert_eq!(paired.verdict, Verdict::Regressed, "{paired:?}");
        assert_eq!(paired.method, Some(Method::Paired));
        let (lo, hi) = paired.interval.expect("an interval");
        assert!(lo < 0.9 && hi > 0.9 && hi < 0.95, "{paired:?}");
        // The planning uses the paired noise: far fewer rounds than Welch's repeats.
        let rounds = paired.repeats_needed.expect("a plan");
        assert!(rounds <= 3, "{paired:?}");
        assert!(
            welch.repeats_needed.expect("a plan") > 10 * rounds,
            "{welch:?}"
        );
    }

    #[test]
    fn the_paired_interval_is_the_t_interval_of_the_log_ratios() {
        let r = [0.01_f64, -0.02, 0.03, 0.0];
        let s = Settings::with_threshold_pct(5.0);
        let d = paired_decision(&r, &s, false);
        let m = r.iter().sum::<f64>() / 4.0;
        let sd = (r.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 3.0).sqrt();
        // t(0.95, 3) = 2.353 (the tables).
        let h = 2.353 * sd / 2.0;
        let (lo, hi) = d.interval.expect("an interval");
        assert!((lo.ln() - (m - h)).abs() < 1e-3, "{d:?}");
        assert!((hi.ln() - (m + h)).abs() < 1e-3, "{d:?}");
        assert_eq!(d.verdict, Verdict::NoChange, "{d:?}");
        assert!(
            d.detail.contains("paired interval over 4 rounds"),
            "{}",
            d.detail
        );
    }

    #[test]
    fn rounds_that_cannot_be_paired_fall_back_to_welch() {
        let s = Settings::with_threshold_pct(5.0);
        // Repeats that ran apart (no rounds): Welch.
        let d = decide_paired(
            &reps(&[100.0, 101.0, 99.0]),
            &reps(&[100.0, 100.5, 99.5]),
            &s,
            false,
        );
        assert_eq!(d.method, Some(Method::Repeats), "{d:?}");
        // Rounds with one in common: Welch.
        let d = decide_paired(
            &reps(&[100.0, 101.0]).in_rounds(&[1, 2]),
            &reps(&[100.0, 100.5]).in_rounds(&[2, 3]),
            &s,
            false,
        );
        assert_eq!(d.method, Some(Method::Repeats), "{d:?}");
        // One run a side: the single run's rule.
        let b = Evidence::single_run(1000.0, &series(1000.0, 20.0, 100), FigureKind::Rate);
        let d = decide_paired(&b, &b, &s, false);
        assert_eq!(d.reason, Some(Reason::OneRun), "{d:?}");
        // A single round's ratio decides nothing.
        let d = paired_decision(&[0.5], &s, false);
        assert_eq!(
            (d.verdict, d.reason),
            (Verdict::CannotTell, Some(Reason::TooFewRepeats))
        );
        assert_eq!(d.method, Some(Method::Paired));
        // Identical rounds: an exact ratio, decided.
        let d = paired_decision(&[0.2, 0.2, 0.2], &s, true);
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        assert_eq!(d.repeats_needed, Some(MIN_REPEATS_FOR_NOISE));
    }

    #[test]
    fn batches_are_about_the_square_root() {
        assert_eq!(batch_count(2), 2);
        assert_eq!(batch_count(10), 3);
        assert_eq!(batch_count(100), 10);
    }
}
