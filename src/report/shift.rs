//! Slowdowns inside a step: a step whose per-second rate held at one level for a stretch and
//! at another, [`SHIFT_FACTOR`] or more away, for the rest. The published case: PostgreSQL's
//! l.i2 at 30M rows ran under 1k rows/s for four minutes, while each delete's plan walked the
//! dead index entries at the head of the primary key, then ran many times faster once
//! autovacuum had run. The step's one throughput figure hides that; this names when the slow
//! stretch was, how long it lasted, who slowed down, and the server's own evidence.
//!
//! Who slowed down: ibench's client does the same work per operation throughout a step, so
//! - **the host** when ibench's CPU per op rose by [`COST_RATIO`] in the slow stretch (the
//!   same work took more CPU: a slower CPU), or other processes took [`OTHERS_CORES`] more
//!   cores of the host in it;
//! - **the DBMS** when neither did, the host probe before and after the step agree, and the
//!   server's CPU per op rose by [`COST_RATIO`] (the server did more work per op);
//! - **unclear** otherwise (the server waited on IO or locks, or the figures are missing),
//!   said with the figures.
//!
//! The seconds looked at: the step's whole seconds while all its connections ran (a load
//! step's tail, where its first connections are done, is left out).

use serde::Serialize;

use super::load::LoadedRun;
use crate::results::metrics::SavedFile;
use crate::results::probe::median;
use crate::results::statistics::{PgView, Row, Statistics, number};
use crate::results::target::BackendKind;
use crate::results::{StepRecord, rfc3339_seconds};
use crate::stats::convert::{count_f64, round_to_u64, round_to_usize, usize_f64};
use crate::stats::thousands::{group, group_f};
use crate::workload::steps::StepName;

/// The factor between a step's slow stretch and the rest of it that counts as a slowdown
/// (a DBMS stall is a dip of a few seconds and leaves the medians alone).
pub const SHIFT_FACTOR: f64 = 2.5;

/// A CPU per op this many times the rest's, in the slow stretch, moved.
pub const COST_RATIO: f64 = 1.5;

/// Cores other processes took more in the slow stretch than in the rest: the host was busy
/// with something else.
pub const OTHERS_CORES: f64 = 0.25;

/// Share of the host's CPUs other processes took in the slow stretch beyond which the host
/// was busy with something else.
pub const OTHERS_SHARE: f64 = 0.5;

/// Shortest stretch, seconds; and as a share of the seconds looked at.
const MIN_SIDE_SECONDS: usize = 3;
const MIN_SIDE_SHARE: f64 = 0.05;

/// Fewest operations per second the faster level must reach: below it a second's count is
/// too coarse to call a level.
const MIN_RATE: f64 = 20.0;

/// Who slowed down.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ShiftCause {
    /// The server did more work per op while the client and the host held.
    Dbms,
    /// The client's same work took more CPU, or other processes took the CPU.
    Host,
    /// Neither side's CPU per op says (a wait on IO or locks, or no figures).
    Unclear,
}

/// One step of one run that slowed down (or sped up) inside itself.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StepShift {
    /// The run's label.
    pub run: String,
    /// The step.
    pub step: StepName,
    /// The slow stretch: seconds since the step started, from and to.
    pub slow_from_s: u32,
    /// End of the slow stretch, seconds since the step started.
    pub slow_to_s: u32,
    /// The seconds looked at (the step's, less a load step's tail).
    pub seconds_looked_at: u32,
    /// The median per-second rate in the slow stretch, in `unit`.
    pub slow_rate: f64,
    /// The median per-second rate in the rest of the step (all but the slow stretch).
    pub rest_rate: f64,
    /// `rows/s` or `ops/s`.
    pub unit: &'static str,
    /// `fastest_rate / slow_rate`.
    pub factor: f64,
    /// The step's fastest stretch (the rest itself when the step ran at two speeds; a
    /// stretch of it when at three), seconds into the step, from and to.
    pub fastest_from_s: u32,
    /// End of the fastest stretch.
    pub fastest_to_s: u32,
    /// Its median per-second rate, in `unit`.
    pub fastest_rate: f64,
    /// ibench's CPU per op in the slow stretch over the rest's.
    pub client_cpu_ratio: Option<f64>,
    /// The server's CPU per op in the slow stretch over the rest's.
    pub server_cpu_ratio: Option<f64>,
    /// Cores other processes on the host took in the slow stretch, less in the rest.
    pub others_cores: Option<f64>,
    /// Other processes' share (0..1) of the host's CPUs in the slow stretch.
    pub others_share: Option<f64>,
    /// Who slowed down.
    pub cause: ShiftCause,
    /// Why, in words: the figures behind the cause.
    pub why: String,
    /// The server's own evidence: its profile, its vacuum or purge counters.
    pub evidence: Vec<String>,
}

impl StepShift {
    /// One line: the step, the run (as `run`, when there are several), the slow stretch, who
    /// slowed down and the server's evidence.
    pub fn describe(&self, run: Option<&str>) -> String {
        let run = run.map(|r| format!(" {r}")).unwrap_or_default();
        let mut text = format!(
            "{}{run}: {} {} from second {} to {} ({} s of {}), ×{:.1} slower than its fastest stretch ({} from second {} to {}). Who: {}.",
            self.step,
            group_f(self.slow_rate),
            self.unit,
            self.slow_from_s,
            self.slow_to_s,
            self.slow_to_s - self.slow_from_s,
            self.seconds_looked_at,
            self.factor,
            group_f(self.fastest_rate),
            self.fastest_from_s,
            self.fastest_to_s,
            self.why
        );
        if !self.evidence.is_empty() {
            text.push_str(&format!(" Evidence: {}.", self.evidence.join("; ")));
        }
        text
    }
}

/// A stretch `[from, to)` of a series (indexes), its median and the rest's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    /// First index.
    pub from: usize,
    /// One past the last index.
    pub to: usize,
    /// Median of the stretch.
    pub slow: f64,
    /// Median of the rest.
    pub rest: f64,
    /// The fastest piece of the step: `[from, to)` and its median (the rest itself when the
    /// step is cut in two).
    pub fastest: (usize, usize, f64),
}

impl Span {
    /// How many times faster the fastest stretch ran (a stalled stretch counts as 1 per
    /// second).
    pub fn factor(&self) -> f64 {
        self.fastest.2 / self.slow.max(1.0)
    }
}

/// Prefix sums of a series and of its squares: the squared error of any stretch about its
/// mean in O(1).
struct Prefix {
    sum: Vec<f64>,
    squares: Vec<f64>,
}

impl Prefix {
    fn new(x: &[f64]) -> Self {
        let (mut sum, mut squares) = (vec![0.0], vec![0.0]);
        for v in x {
            sum.push(sum.last().copied().unwrap_or(0.0) + v);
            squares.push(squares.last().copied().unwrap_or(0.0) + v * v);
        }
        Prefix { sum, squares }
    }

    /// The squared error of `[a, b)` about its mean.
    fn sse(&self, a: usize, b: usize) -> f64 {
        let n = usize_f64(b - a);
        let s = self.sum[b] - self.sum[a];
        (self.squares[b] - self.squares[a]) - s * s / n.max(1.0)
    }

    /// Where `[a, b)` splits best in two (least squared error about the two means), each part
    /// at least `min_side` long.
    fn best_cut(&self, a: usize, b: usize, min_side: usize) -> Option<usize> {
        if min_side == 0 || b < a + 2 * min_side {
            return None;
        }
        (a + min_side..=b - min_side).min_by(|&x, &y| {
            (self.sse(a, x) + self.sse(x, b)).total_cmp(&(self.sse(a, y) + self.sse(y, b)))
        })
    }
}

/// How many times the faster of `rates[a..k]` and `rates[k..b]` ran the slower (medians).
fn level_factor(rates: &[f64], a: usize, k: usize, b: usize) -> Option<f64> {
    let (x, y) = (
        median(rates[a..k].iter().copied())?,
        median(rates[k..b].iter().copied())?,
    );
    Some(x.max(y) / x.min(y).max(1.0))
}

fn span_of(rates: &[f64], from: usize, to: usize) -> Option<Span> {
    let slow = median(rates[from..to].iter().copied())?;
    Some(Span {
        from,
        to,
        slow,
        rest: median(rates[..from].iter().chain(&rates[to..]).copied())?,
        fastest: (from, to, slow),
    })
}

/// The slow stretch of `rates` (per-second, whole seconds), when the step's fastest stretch
/// ran [`SHIFT_FACTOR`] or more times faster (medians). The level changes are placed by least
/// squares on the rates' logarithms (a change point): one cut, then a second where one side
/// holds a level change of its own (a slow stretch in the middle of a step, or a step that ran
/// at three speeds). The slowest piece is the stretch, the fastest its measure.
pub fn slow_span(rates: &[f64]) -> Option<Span> {
    let n = rates.len();
    let share = (usize_f64(n) * MIN_SIDE_SHARE).ceil();
    let min_side = MIN_SIDE_SECONDS.max(round_to_usize(share));
    let logs: Vec<f64> = rates.iter().map(|r| r.max(1.0).ln()).collect();
    let prefix = Prefix::new(&logs);
    let first = prefix.best_cut(0, n, min_side)?;
    let mut cuts = vec![0, first, n];
    let second = [(0, first), (first, n)]
        .into_iter()
        .filter_map(|(a, b)| {
            let k = prefix.best_cut(a, b, min_side)?;
            Some((level_factor(rates, a, k, b)?, k))
        })
        .filter(|(f, _)| *f >= SHIFT_FACTOR)
        .max_by(|x, y| x.0.total_cmp(&y.0));
    if let Some((_, k)) = second {
        cuts.push(k);
        cuts.sort_unstable();
    }
    let pieces: Vec<Span> = cuts
        .windows(2)
        .filter_map(|w| span_of(rates, w[0], w[1]))
        .collect();
    let fastest = pieces
        .iter()
        .max_by(|x, y| x.slow.total_cmp(&y.slow))
        .map(|p| (p.from, p.to, p.slow))?;
    let slowest = pieces.into_iter().min_by(|x, y| {
        x.slow
            .total_cmp(&y.slow)
            .then((y.to - y.from).cmp(&(x.to - x.from)))
    })?;
    let span = Span { fastest, ..slowest };
    (fastest.2 >= MIN_RATE && span.factor() >= SHIFT_FACTOR).then_some(span)
}

/// A step's per-second series of its main op, one entry per whole second while all its
/// connections ran.
struct Series {
    /// The second of each entry (its line covers `(second - 1, second]`).
    seconds: Vec<u32>,
    /// Rows for the load steps' inserts and deletes, else ops.
    rates: Vec<f64>,
    /// Ops.
    ops: Vec<f64>,
    /// The main op's connections' own CPU, µs, when every line has it.
    cpu_us: Option<Vec<f64>>,
}

fn step_series(run: &LoadedRun, step: &StepRecord) -> Series {
    let kind = step.main_op();
    let mut lines: Vec<_> = run
        .timeline
        .iter()
        .filter(|l| l.step == step.name)
        .collect();
    lines.sort_unstable_by_key(|l| l.second);
    lines.pop();
    let mut out = Series {
        seconds: Vec::new(),
        rates: Vec::new(),
        ops: Vec::new(),
        cpu_us: Some(Vec::new()),
    };
    for l in lines
        .into_iter()
        .take_while(|l| l.finished_connections == 0)
    {
        let c = l.ops.get(kind.name()).copied().unwrap_or_default();
        out.seconds.push(l.second);
        out.rates.push(count_f64(c.rate(kind)));
        out.ops.push(count_f64(c.ops));
        out.cpu_us = out.cpu_us.zip(c.cpu_us).map(|(mut v, us)| {
            v.push(count_f64(us));
            v
        });
    }
    out
}

/// CPU of one part of a step, from the sampler's series.
#[derive(Clone, Copy, Debug, Default)]
struct Part {
    seconds: f64,
    client_cpu: f64,
    server_cpu: Option<f64>,
    host_cpu: Option<f64>,
}

impl Part {
    fn add(&mut self, l: &crate::results::metrics::SampleLine) {
        self.seconds += l.interval_seconds;
        self.client_cpu += l.client_cpu_seconds;
        let add = |acc: Option<f64>, v: Option<f64>| Some(acc.unwrap_or(0.0) + v?);
        self.server_cpu = add(self.server_cpu, l.server_cpu_seconds);
        self.host_cpu = add(self.host_cpu, l.host_cpu_seconds);
    }

    /// Cores other processes took: the host's busy CPU less the server's and ibench's.
    fn others_cores(&self) -> Option<f64> {
        let others = self.host_cpu? - self.server_cpu.unwrap_or(0.0) - self.client_cpu;
        (self.seconds > 0.0).then(|| others.max(0.0) / self.seconds)
    }
}

/// The step's samples split into the slow stretch `[from_s, to_s)` and the rest of the seconds
/// looked at (`< end_s`), each sample by the middle of its interval.
fn split_samples(
    run: &LoadedRun,
    step: &StepRecord,
    from_s: f64,
    to_s: f64,
    end_s: f64,
) -> (Part, Part) {
    let name = step.name.to_string();
    let in_step: Vec<_> = run
        .samples
        .iter()
        .filter(|l| l.step.as_deref() == Some(name.as_str()))
        .collect();
    let t0 = in_step.first().map_or(0.0, |l| l.t - l.interval_seconds);
    let (mut slow, mut rest) = (Part::default(), Part::default());
    for l in in_step {
        let mid = l.t - l.interval_seconds / 2.0 - t0;
        if (from_s..to_s).contains(&mid) {
            slow.add(l);
        } else if mid < end_s {
            rest.add(l);
        }
    }
    (slow, rest)
}

fn per_op_ratio(slow: (f64, f64), rest: (f64, f64)) -> Option<f64> {
    let (s, r) = (slow.0 / slow.1, rest.0 / rest.1);
    (slow.1 > 0.0 && rest.1 > 0.0 && r > 0.0 && s.is_finite()).then(|| s / r)
}

/// The slow stretch's costs against the rest's: ibench's CPU per op, the server's CPU per op
/// (ratios), the cores other processes took more, and their share of the host's CPUs in the
/// slow stretch.
fn cost_ratios(
    run: &LoadedRun,
    step: &StepRecord,
    series: &Series,
    span: &Span,
    (from_s, to_s, end_s): (u32, u32, u32),
) -> (Option<f64>, Option<f64>, Option<f64>, Option<f64>) {
    let (slow, rest) = split_samples(
        run,
        step,
        f64::from(from_s),
        f64::from(to_s),
        f64::from(end_s),
    );
    let in_span = |v: &[f64]| -> (f64, f64) {
        let slow: f64 = v[span.from..span.to].iter().sum();
        (slow, v.iter().sum::<f64>() - slow)
    };
    let (slow_ops, rest_ops) = in_span(&series.ops);
    // The connections' own CPU per op when the timeline has it (ibench's other threads cost
    // the same per second whatever the rate); else ibench's whole CPU from the sampler.
    let client = match &series.cpu_us {
        Some(cpu) => {
            let (s, r) = in_span(cpu);
            per_op_ratio((s, slow_ops), (r, rest_ops))
        }
        None => per_op_ratio((slow.client_cpu, slow_ops), (rest.client_cpu, rest_ops)),
    };
    let server = slow
        .server_cpu
        .zip(rest.server_cpu)
        .and_then(|(s, r)| per_op_ratio((s, slow_ops), (r, rest_ops)));
    let others = slow
        .others_cores()
        .zip(rest.others_cores())
        .map(|(s, r)| s - r);
    let cpus = crate::stats::convert::usize_f64(run.record.host.cpus);
    let busy = slow.others_cores().filter(|_| cpus > 0.0).map(|c| c / cpus);
    (client, server, others, busy)
}

/// Find the step's slowdown, if it has one, and say who slowed down and what the server
/// recorded.
pub fn step_shift(run: &LoadedRun, step: &StepRecord) -> Option<StepShift> {
    if matches!(step.name, StepName::CreateIndexes)
        || step.status != crate::results::Status::Completed
    {
        return None;
    }
    let series = step_series(run, step);
    let span = slow_span(&series.rates)?;
    let from_s = series.seconds.get(span.from)?.saturating_sub(1);
    let to_s = *series.seconds.get(span.to - 1)?;
    let end_s = *series.seconds.last()?;
    let (client_cpu_ratio, server_cpu_ratio, others_cores, others_share) =
        cost_ratios(run, step, &series, &span, (from_s, to_s, end_s));
    let embedded = backend_of(run).is_some_and(|k| crate::backend::descriptor_of_kind(k).embedded);
    let probe_moved = probe_moved(step, span.from == 0, span.to == series.rates.len());
    let (cause, why) = if span.slow <= 0.0 {
        // Nothing finished in the slow stretch: costs per op are no figures (every bit of
        // CPU over zero ops), so neither the host nor the DBMS is blamed by them.
        (
            ShiftCause::Unclear,
            "unclear: no operation finished in the slow stretch (a total stall: the server or \
             the network path stopped answering; see the server's log)"
                .to_string(),
        )
    } else {
        cause_of(
            client_cpu_ratio.filter(|_| !embedded),
            server_cpu_ratio,
            (others_cores, others_share),
            probe_moved,
        )
    };
    let unit = step.main_op().rate_unit();
    Some(StepShift {
        run: run.label.clone(),
        step: step.name,
        slow_from_s: from_s,
        slow_to_s: to_s,
        seconds_looked_at: end_s,
        slow_rate: span.slow,
        rest_rate: span.rest,
        unit,
        factor: span.factor(),
        fastest_from_s: series.seconds.get(span.fastest.0)?.saturating_sub(1),
        fastest_to_s: *series.seconds.get(span.fastest.1 - 1)?,
        fastest_rate: span.fastest.2,
        client_cpu_ratio,
        server_cpu_ratio,
        others_cores,
        others_share,
        cause,
        why,
        evidence: server_evidence(run, step, from_s),
    })
}

fn backend_of(run: &LoadedRun) -> Option<BackendKind> {
    run.record.target.as_ref().map(|t| t.backend)
}

/// The host probe's figures that were slower on the slow stretch's side of the step (the
/// probe before the step for a slow start, after it for a slow end) by more than their
/// thresholds, in words; nothing for a stretch in the middle, which neither probe saw.
fn probe_moved(step: &StepRecord, slow_at_start: bool, slow_at_end: bool) -> Vec<String> {
    use crate::results::probe::ProbeFigure;
    let Some(h) = &step.host_probe else {
        return Vec::new();
    };
    let (Some(before), Some(after)) = (&h.before, &h.after) else {
        return Vec::new();
    };
    let (slow, fast) = match (slow_at_start, slow_at_end) {
        (true, false) => (before, after),
        (false, true) => (after, before),
        _ => return Vec::new(),
    };
    ProbeFigure::ALL
        .iter()
        .filter_map(|&f| {
            let t = crate::results::probe::THRESHOLDS.of(f)?;
            let r = f.of(slow)? / f.of(fast)?;
            (r > 1.0 + t).then(|| format!("{} ×{r:.2}", f.short()))
        })
        .collect()
}

/// Who slowed down, from the ratios of the slow stretch's costs per op to the rest's, and
/// why in words. A slower host makes the same work cost both sides more CPU, alike; a DBMS
/// doing more work per op raises the server's cost by [`COST_RATIO`] more than ibench's (whose
/// own cost per op moves a little too when the server's work evicts the shared caches, as
/// measured: ×9 for a server whose cost rose ×166).
pub fn cause_of(
    client_cpu_ratio: Option<f64>,
    server_cpu_ratio: Option<f64>,
    (others_cores, others_share): (Option<f64>, Option<f64>),
    probe_moved: Vec<String>,
) -> (ShiftCause, String) {
    let x = |r: Option<f64>| r.map_or("n/a".to_string(), |r| format!("×{r:.2}"));
    let costs = format!(
        "the server's CPU per op {} in the slow stretch, ibench's {}",
        x(server_cpu_ratio),
        x(client_cpu_ratio)
    );
    let server_beyond_client = match (server_cpu_ratio, client_cpu_ratio) {
        (Some(s), Some(c)) => s >= COST_RATIO && s >= COST_RATIO * c.max(1.0),
        _ => false,
    };
    if let Some(c) = others_cores.filter(|c| *c >= OTHERS_CORES) {
        return (
            ShiftCause::Host,
            format!("the host: other processes took {c:.2} more cores of it in the slow stretch"),
        );
    }
    if let Some(share) = others_share.filter(|s| *s >= OTHERS_SHARE) {
        return (
            ShiftCause::Host,
            format!(
                "the host: other processes took {:.0}% of its CPUs in the slow stretch ({costs})",
                share * 100.0
            ),
        );
    }
    let probe = if probe_moved.is_empty() {
        String::new()
    } else {
        format!(
            "; the host probe was slower on the slow stretch's side of the step ({})",
            probe_moved.join(", ")
        )
    };
    if server_beyond_client {
        return (
            ShiftCause::Dbms,
            format!("the DBMS: {costs}, and the other processes held{probe}"),
        );
    }
    if client_cpu_ratio.is_some_and(|c| c >= COST_RATIO) {
        return (
            ShiftCause::Host,
            format!("the host: {costs}: the same work cost more CPU{probe}"),
        );
    }
    let mut why = format!("unclear: {costs}{probe}");
    if probe_moved.is_empty() && server_cpu_ratio.is_some_and(|s| s < COST_RATIO) {
        why.push_str("; neither side did more CPU work per op: the server waited (on IO, locks or the host's storage)");
    }
    if client_cpu_ratio.is_none() {
        why.push_str("; no client/server split (SQLite runs inside ibench, or no CPU figures)");
    }
    (ShiftCause::Unclear, why)
}

/// The server's own evidence for the step: its CPU profile (and the planner's share of it),
/// its vacuum counters (PostgreSQL) or purge lag (InnoDB), as the step left them.
fn server_evidence(run: &LoadedRun, step: &StepRecord, from_s: u32) -> Vec<String> {
    let mut out = Vec::new();
    let metrics = step.metrics.as_ref();
    match metrics.and_then(|m| m.profile.as_ref()) {
        Some(p) if p.error.is_none() => {
            let covers = if f64::from(from_s) < p.seconds {
                "overlapping the slow stretch"
            } else {
                "before the slow stretch"
            };
            let mut text = format!(
                "the server's CPU profile covers the step's first {:.0} s ({covers})",
                p.seconds
            );
            if let Some(svg) = &p.svg_file {
                text.push_str(&format!(": flamegraph {svg}"));
            }
            if let Some(share) = p.folded_file.as_ref().and_then(|f| planner_share(run, f)) {
                text.push_str(&format!(
                    "; the planner took {:.0}% of the server's CPU in it",
                    share * 100.0
                ));
            }
            out.push(text);
        }
        _ => out
            .push("no server profile: --profile-server records where the server's CPU went".into()),
    }
    let stats = |s: &StepRecord| match s.metrics.as_ref().map(|m| &m.stats_file) {
        Some(SavedFile::File(f)) => Statistics::read(&run.dir, f).ok(),
        _ => None,
    };
    let previous = run
        .record
        .steps
        .iter()
        .take_while(|s| !std::ptr::eq(*s, step))
        .last();
    if let Some(now) = stats(step) {
        let before = previous.and_then(stats);
        let window = step_window(step);
        out.extend(vacuum_evidence(&now, before.as_ref(), window));
        out.extend(purge_evidence(&now, before.as_ref()));
    }
    out
}

/// The step's wall-clock start and end, seconds since the epoch.
fn step_window(step: &StepRecord) -> Option<(f64, f64)> {
    Some((
        rfc3339_seconds(&step.started_at)?,
        rfc3339_seconds(&step.ended_at)?,
    ))
}

/// The share of a folded profile's weight whose stacks pass through the planner.
fn planner_share(run: &LoadedRun, folded_file: &str) -> Option<f64> {
    let frames = crate::backend::descriptor_of_kind(backend_of(run)?).planner_frames;
    if frames.is_empty() {
        return None;
    }
    let text = std::fs::read_to_string(run.dir.join(folded_file)).ok()?;
    let stacks = crate::sampler::profile::parse_folded(&text);
    let total: u64 = stacks.iter().map(|(_, w)| w).sum();
    let planned: u64 = stacks
        .iter()
        .filter(|(s, _)| {
            s.iter().any(|f| {
                let name = f.split(['(', ' ']).next().unwrap_or(f);
                frames.contains(&name)
            })
        })
        .map(|(_, w)| w)
        .sum();
    (total > 0).then(|| count_f64(planned) / count_f64(total))
}

/// PostgreSQL's `pg_stat_user_tables` at the step's end against the previous step's end: per
/// table, the vacuums in the step (autovacuum's and any other, such as the settle phase's)
/// and when the last ended, and the dead rows left.
pub fn vacuum_evidence(
    now: &Statistics,
    before: Option<&Statistics>,
    window: Option<(f64, f64)>,
) -> Vec<String> {
    let rows = |s: &Statistics| -> Vec<Row> {
        s.postgres()
            .and_then(|p| p.rows(PgView::UserTables).ok())
            .map(<[Row]>::to_vec)
            .unwrap_or_default()
    };
    let before_rows = before.map(rows).unwrap_or_default();
    rows(now)
        .iter()
        .filter_map(|t| {
            let table = t.get("relname")?.as_str()?;
            let was = before_rows
                .iter()
                .find(|b| b.get("relname").and_then(|r| r.as_str()) == Some(table));
            let ran = |count: &str, last: &str, who: &str| -> String {
                let n = t.get(count).and_then(number).unwrap_or(0.0)
                    - was
                        .and_then(|b| b.get(count))
                        .and_then(number)
                        .unwrap_or(0.0);
                if n <= 0.0 {
                    return String::new();
                }
                let at = t
                    .get(last)
                    .and_then(|v| v.as_str())
                    .and_then(pg_timestamp_seconds)
                    .zip(window)
                    .filter(|(at, (start, end))| at >= start && at <= end)
                    .map(|(at, (start, _))| {
                        format!(", the last ending {:.0} s into the step", at - start)
                    })
                    .unwrap_or_default();
                format!("{who} ran {n:.0} time(s) during the step{at}; ")
            };
            let vacuums = ran("autovacuum_count", "last_autovacuum", "autovacuum")
                + &ran("vacuum_count", "last_vacuum", "VACUUM");
            let vacuums = if vacuums.is_empty() {
                "no vacuum finished during the step; ".to_string()
            } else {
                vacuums
            };
            Some(format!(
                "{table}: {vacuums}{} dead rows beside {} live at its end (pg_stat_user_tables)",
                group(round_to_u64(number(t.get("n_dead_tup")?)?)),
                group(round_to_u64(
                    t.get("n_live_tup").and_then(number).unwrap_or(0.0)
                )),
            ))
        })
        .collect()
}

/// InnoDB's history list length (the undo purge has not caught up with) at the step's end
/// and the previous step's: MariaDB's status variable, or MySQL's line of `SHOW ENGINE INNODB
/// STATUS` ([`MyStatistics::history_list_length`](crate::results::statistics::MyStatistics::history_list_length)).
pub fn purge_evidence(now: &Statistics, before: Option<&Statistics>) -> Option<String> {
    let hll = |s: &Statistics| s.mysql()?.history_list_length().ok();
    let n = hll(now)?;
    let was = before
        .and_then(hll)
        .map(|b| format!(" (at the previous step's end: {})", group(round_to_u64(b))))
        .unwrap_or_default();
    Some(format!(
        "InnoDB history list length (undo not yet purged) at the step's end: {}{was}",
        group(round_to_u64(n))
    ))
}

/// Seconds since the epoch of a PostgreSQL `timestamptz` as text (`2026-11-25
/// 14:53:42.123456+00`, `+05:30`, `-07`); `None` for any other shape.
pub fn pg_timestamp_seconds(text: &str) -> Option<f64> {
    let text = text.trim();
    let (date, rest) = text.split_once([' ', 'T'])?;
    let sign_at = rest.rfind(['+', '-'])?;
    let (time, offset) = rest.split_at(sign_at);
    let sign = if offset.starts_with('-') { -1.0 } else { 1.0 };
    let mut hm = offset[1..].split(':');
    let h: f64 = hm.next()?.parse().ok()?;
    let m: f64 = hm.next().map_or(Some(0.0), |m| m.parse().ok())?;
    let local = rfc3339_seconds(&format!("{date}T{time}"))?;
    Some(local - sign * (h * 3600.0 + m * 60.0))
}

/// Every run's step slowdowns, in run then step order.
pub fn shifts(runs: &[LoadedRun]) -> Vec<StepShift> {
    runs.iter()
        .flat_map(|r| r.record.steps.iter().filter_map(move |s| step_shift(r, s)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(levels: &[(usize, f64)]) -> Vec<f64> {
        levels
            .iter()
            .flat_map(|&(n, v)| std::iter::repeat_n(v, n))
            .collect()
    }

    #[test]
    fn a_slow_start_is_found_with_its_length() {
        // l.i2 as published: ~800 rows/s for 240 s, then ~6k.
        let r = series(&[(240, 800.0), (100, 6000.0)]);
        let s = slow_span(&r).unwrap();
        assert_eq!((s.from, s.to), (0, 240));
        assert_eq!((s.slow, s.rest), (800.0, 6000.0));
        assert!((s.factor() - 7.5).abs() < 1e-9);
    }

    #[test]
    fn a_short_query_step_whose_host_sped_up_is_found_to_a_second() {
        // 8k/s for 4 s, then 36k/s: PostgreSQL 10's qr100 on a VM whose speed changed.
        let r = [
            8000.0, 7400.0, 8400.0, 8000.0, 32000.0, 42000.0, 36000.0, 38000.0,
        ];
        let s = slow_span(&r).unwrap();
        assert_eq!((s.from, s.to), (0, 4));
        assert!(s.factor() > 4.0, "{}", s.factor());
        // A two-second stall in a steady step moves neither side's median much.
        let dip = [
            10000.0, 9800.0, 1000.0, 900.0, 10100.0, 9900.0, 10000.0, 10200.0,
        ];
        assert_eq!(slow_span(&dip), None);
        assert_eq!(slow_span(&[1.0, 2.0, 3.0]), None);
    }

    #[test]
    fn a_slow_stretch_in_the_middle_is_found() {
        let r = series(&[(50, 1000.0), (30, 200.0), (60, 1000.0)]);
        let s = slow_span(&r).unwrap();
        assert_eq!((s.from, s.to, s.slow, s.rest), (50, 80, 200.0, 1000.0));
        assert_eq!(s.fastest.2, 1000.0);
        // Three speeds: the slowest stretch, and the fastest named beside the rest's median.
        let r = series(&[(150, 500.0), (120, 9000.0), (200, 700.0)]);
        let s = slow_span(&r).unwrap();
        assert_eq!((s.from, s.to, s.fastest), (0, 150, (150, 270, 9000.0)));
        assert_eq!((s.slow, s.rest), (500.0, 700.0));
        assert!((s.factor() - 18.0).abs() < 1e-9);
    }

    #[test]
    fn a_stall_of_a_few_seconds_or_a_small_change_is_not_a_shift() {
        // A 3 s stall in 200 s: shorter than 5% of the step.
        assert_eq!(
            slow_span(&series(&[(100, 1000.0), (3, 0.0), (97, 1000.0)])),
            None
        );
        // ×2 is within the factor.
        assert_eq!(slow_span(&series(&[(50, 1000.0), (50, 500.0)])), None);
        // Too few ops per second to call a level.
        assert_eq!(slow_span(&series(&[(50, 2.0), (50, 10.0)])), None);
        assert_eq!(slow_span(&[]), None);
    }

    #[test]
    fn a_long_step_is_cut_in_linear_time() {
        let r = series(&[(20_000, 5000.0), (30_000, 900.0)]);
        let s = slow_span(&r).unwrap();
        assert_eq!((s.from, s.to), (20_000, 50_000));
    }

    #[test]
    fn the_cause_is_told_from_the_costs_per_op() {
        let (c, why) = cause_of(Some(1.05), Some(6.0), (Some(0.0), Some(0.1)), Vec::new());
        assert_eq!(c, ShiftCause::Dbms, "{why}");
        assert!(why.contains("×6.00"), "{why}");
        // Measured: dropped indexes made the server's cost ×166, ibench's ×9 (caches).
        let (c, why) = cause_of(Some(9.2), Some(166.0), (Some(0.1), Some(0.1)), Vec::new());
        assert_eq!(c, ShiftCause::Dbms, "{why}");
        // A slower host: both sides alike.
        let (c, why) = cause_of(Some(2.4), Some(2.5), (Some(0.0), Some(0.1)), Vec::new());
        assert_eq!(c, ShiftCause::Host, "{why}");
        assert!(why.contains("ibench's ×2.40"), "{why}");
        let (c, _) = cause_of(Some(2.0), None, (None, Some(0.1)), Vec::new());
        assert_eq!(
            c,
            ShiftCause::Host,
            "a remote server: only the client's cost is seen"
        );
        let (c, _) = cause_of(Some(1.0), Some(1.0), (Some(0.9), Some(0.1)), Vec::new());
        assert_eq!(c, ShiftCause::Host, "a busy neighbour");
        // Measured: a host busy with builds throughout a 30M-row l.i0 (others 0.25 more
        // cores in the slow stretch, most of the CPUs in it).
        let (c, why) = cause_of(Some(1.08), Some(1.07), (Some(0.2), Some(0.85)), Vec::new());
        assert_eq!(c, ShiftCause::Host, "{why}");
        assert!(why.contains("85% of its CPUs"), "{why}");
        // The probe after a step also meets the step's aftermath: a note, not a veto.
        let slower = || vec!["CPU ns/iter ×1.80".to_string()];
        let (c, why) = cause_of(Some(1.0), Some(3.0), (Some(0.0), Some(0.1)), slower());
        assert_eq!(c, ShiftCause::Dbms);
        assert!(why.contains("host probe was slower"), "{why}");
        let (c, why) = cause_of(Some(1.0), Some(1.0), (Some(0.0), Some(0.1)), slower());
        assert_eq!(c, ShiftCause::Unclear);
        assert!(why.contains("host probe was slower"), "{why}");
        let (c, why) = cause_of(Some(1.0), Some(1.1), (Some(0.0), Some(0.1)), Vec::new());
        assert_eq!(c, ShiftCause::Unclear);
        assert!(why.contains("waited"), "{why}");
        let (c, why) = cause_of(None, None, (Some(0.0), Some(0.1)), Vec::new());
        assert_eq!(c, ShiftCause::Unclear);
        assert!(why.contains("SQLite"), "{why}");
    }

    #[test]
    fn postgres_timestamps_are_read_with_their_offset() {
        let utc = pg_timestamp_seconds("2023-11-14 22:13:20.5+00").unwrap();
        assert!((utc - 1_700_000_000.5).abs() < 1e-6);
        let east = pg_timestamp_seconds("2023-11-15 03:43:20.5+05:30").unwrap();
        assert!((east - utc).abs() < 1e-6);
        let west = pg_timestamp_seconds("2023-11-14 15:13:20.5-07").unwrap();
        assert!((west - utc).abs() < 1e-6);
        assert_eq!(pg_timestamp_seconds("yesterday"), None);
    }

    fn st(v: serde_json::Value) -> Statistics {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn vacuum_and_purge_evidence_come_from_the_saved_statistics() {
        let before = st(serde_json::json!({"pg_stat_user_tables": [
            {"relname": "pi1", "n_dead_tup": "5", "n_live_tup": "100", "autovacuum_count": "1",
             "last_autovacuum": null}]}));
        let now = st(serde_json::json!({"pg_stat_user_tables": [
            {"relname": "pi1", "n_dead_tup": "1204", "n_live_tup": "30000000",
             "autovacuum_count": "2", "last_autovacuum": "2023-11-14 22:17:20+00"}]}));
        let window = Some((1_700_000_000.0, 1_700_000_400.0));
        assert_eq!(
            vacuum_evidence(&now, Some(&before), window),
            [
                "pi1: autovacuum ran 1 time(s) during the step, the last ending 240 s into the step; 1,204 dead rows beside 30,000,000 live at its end (pg_stat_user_tables)"
            ]
        );
        assert!(vacuum_evidence(&now, Some(&now), window)[0].contains("no vacuum finished"));
        let by_hand = st(serde_json::json!({"pg_stat_user_tables": [
            {"relname": "pi1", "n_dead_tup": "0", "n_live_tup": "30000000",
             "autovacuum_count": "1", "vacuum_count": "1",
             "last_vacuum": "2023-11-14 22:14:20+00"}]}));
        assert_eq!(
            vacuum_evidence(&by_hand, Some(&before), window),
            [
                "pi1: VACUUM ran 1 time(s) during the step, the last ending 60 s into the step; 0 dead rows beside 30,000,000 live at its end (pg_stat_user_tables)"
            ]
        );
        let now = st(serde_json::json!({"global_status": {"Innodb_history_list_length": "43210"}}));
        let was = st(serde_json::json!({"global_status": {"Innodb_history_list_length": "12"}}));
        assert_eq!(
            purge_evidence(&now, Some(&was)).unwrap(),
            "InnoDB history list length (undo not yet purged) at the step's end: 43,210 (at the previous step's end: 12)"
        );
    }

    #[test]
    fn purge_evidence_finds_the_history_list_of_mariadb_and_of_mysql() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mariadb-replica/stats");
        let read = |f: &str| Statistics::read(&dir, f).unwrap();
        let expected = "InnoDB history list length (undo not yet purged) at the step's end: 804 (at the previous step's end: 10)";
        // MariaDB: the status variable.
        let (was, now) = (read("l.i1.json"), read("l.i2.json"));
        assert_eq!(purge_evidence(&now, Some(&was)).unwrap(), expected);
        // MySQL has no such status variable: the same snapshots without it are read from
        // SHOW ENGINE INNODB STATUS's "History list length" line.
        let as_mysql = |f: &str| {
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join(f)).unwrap()).unwrap();
            let status = v["global_status"].as_object_mut().unwrap();
            assert!(status.remove("Innodb_history_list_length").is_some());
            st(v)
        };
        let (was, now) = (as_mysql("l.i1.json"), as_mysql("l.i2.json"));
        assert_eq!(purge_evidence(&now, Some(&was)).unwrap(), expected);
    }
}
