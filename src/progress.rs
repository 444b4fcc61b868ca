//! What `ibench run` says on standard error as it goes: the banner before the first step
//! (the target, the steps, the sizes, the results directory), a line as each step starts with
//! an estimate of the time left on a terminal, and each step's line as it ends.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use crate::calendar::{DurationStyle, duration_text};
use crate::results::{RunRecord, StepRecord};
use crate::runner::RunObserver;
use crate::workload::plan::{StepPlan, StopRule};

/// The banner `ibench run` prints before its first step: the target (its URL redacted), the
/// steps, the sizes (`sizes`, the line the run's options resolved to once:
/// `RunOptions::sizes_line`) and the results directory.
pub fn run_banner(record: &RunRecord, dir: &Path, plans: &[StepPlan], sizes: &str) -> String {
    let target = record.target.as_ref().map_or_else(
        || record.options.url.clone(),
        |t| format!("{} {} at {}", t.dbms, t.version, t.url),
    );
    let steps: Vec<String> = plans.iter().map(|p| p.step.to_string()).collect();
    let mut text = format!("ibench {} run: {target}\n", record.ibench_version);
    text.push_str(&format!("  label    {}\n", record.label));
    text.push_str(&format!(
        "  steps    {} ({})\n",
        steps.join(" "),
        steps.len()
    ));
    if let Some(r) = &record.replica {
        text.push_str(&format!("  replica  {}\n", replica_line(r)));
    }
    text.push_str(&format!("  sizes    {sizes}\n"));
    text.push_str(&format!("  results  {}\n", dir.display()));
    text
}

/// The replica a run measures, in one line: its version, its URL (password masked), how the
/// primary waits for it, and where the query steps run.
fn replica_line(r: &crate::results::replication::ReplicaInfo) -> String {
    let mode = match &r.synchronous_commit {
        Some(c) => format!("{} (synchronous_commit = {c})", r.mode),
        None => r.mode.name().to_string(),
    };
    format!(
        "{} at {}, {mode}",
        r.version.split_whitespace().next().unwrap_or(&r.version),
        crate::url::redact_url(&r.url)
    )
}

/// A step of the run as the estimate sees it.
#[derive(Clone, Copy, Debug)]
struct StepEstimate {
    /// Its estimate on a small host, seconds (`StepPlan::estimate_seconds`).
    seconds: f64,
    /// It ends after a fixed time, so its estimate needs no correction.
    timed: bool,
}

/// The time left of a run: the steps not yet done, each timed step at its own duration and
/// each step that ends when its work is done at its estimate times how long the done ones
/// took against theirs.
#[derive(Debug, Default)]
struct Eta {
    steps: Vec<StepEstimate>,
    /// Seconds the finished work-bound steps took, and their estimates.
    worked: (f64, f64),
}

impl Eta {
    fn new(plans: &[StepPlan]) -> Eta {
        Eta {
            steps: plans
                .iter()
                .map(|p| StepEstimate {
                    seconds: p.estimate_seconds,
                    timed: matches!(p.stop, StopRule::AfterSeconds(_)),
                })
                .collect(),
            worked: (0.0, 0.0),
        }
    }

    /// How much slower (above 1) or faster this host does the work than the estimates assume.
    fn factor(&self) -> f64 {
        let (took, estimated) = self.worked;
        if estimated > 0.0 && took > 0.0 {
            took / estimated
        } else {
            1.0
        }
    }

    /// Seconds left from the start of step `index`.
    fn left_from(&self, index: usize) -> f64 {
        let factor = self.factor();
        self.steps
            .iter()
            .skip(index)
            .map(|s| {
                if s.timed {
                    s.seconds
                } else {
                    s.seconds * factor
                }
            })
            .sum()
    }

    /// Step `index` took `seconds`.
    fn done(&mut self, index: usize, seconds: f64) {
        if let Some(s) = self
            .steps
            .get(index)
            .filter(|s| !s.timed && s.seconds > 0.0)
        {
            self.worked.0 += seconds;
            self.worked.1 += s.seconds;
        }
    }
}

/// What `ibench run` says on standard error as it goes: the banner, on a terminal `step 3/10:
/// l.i1` with the time left in the run as each step starts (replaced by its progress line),
/// and the step's line as it ends. Nothing with `--quiet`.
pub struct RunConsole {
    quiet: bool,
    terminal: bool,
    eta: Eta,
    step_started: Option<(usize, Instant)>,
}

impl RunConsole {
    /// The console of a run; `quiet` silences it.
    pub fn new(quiet: bool) -> RunConsole {
        RunConsole {
            quiet,
            terminal: std::io::stderr().is_terminal(),
            eta: Eta::default(),
            step_started: None,
        }
    }
}

impl RunObserver for RunConsole {
    fn run_starts(&mut self, record: &RunRecord, dir: &Path, plans: &[StepPlan], sizes: &str) {
        self.eta = Eta::new(plans);
        if !self.quiet {
            crate::say_inline!("{}", run_banner(record, dir, plans, sizes));
        }
    }

    fn step_starts(&mut self, index: usize, plan: &StepPlan) {
        self.step_started = Some((index, Instant::now()));
        if self.quiet {
            return;
        }
        // On a terminal the step's start stays until its progress line (or its end line)
        // takes the place; a log gets the end line only, which names the step too.
        if self.terminal {
            let total = self.eta.steps.len();
            crate::say_inline!(
                "step {}/{total}: {} (the run: about {} left)",
                index + 1,
                plan.step,
                duration_text(self.eta.left_from(index), DurationStyle::Words)
            );
        }
    }

    fn step_ends(&mut self, record: &StepRecord) {
        if let Some((index, started)) = self.step_started.take() {
            self.eta.done(index, started.elapsed().as_secs_f64());
        }
        if !self.quiet {
            let clear = if self.terminal { "\r\x1b[2K" } else { "" };
            let line = crate::report::text::step_line(record);
            let failed = line.contains("FAILED") || line.contains("INTERRUPTED");
            let line = crate::console::red(&line, failed && crate::console::colour_on(false));
            crate::say!("{clear}{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_learns_the_hosts_speed_from_the_work_bound_steps() {
        let mut eta = Eta {
            steps: vec![
                StepEstimate {
                    seconds: 10.0,
                    timed: false,
                },
                StepEstimate {
                    seconds: 20.0,
                    timed: false,
                },
                StepEstimate {
                    seconds: 5.0,
                    timed: true,
                },
            ],
            worked: (0.0, 0.0),
        };
        assert_eq!(eta.left_from(0), 35.0);
        // The first step took half its estimate: the next is expected at half too; the
        // timed one keeps its length.
        eta.done(0, 5.0);
        assert_eq!(eta.left_from(1), 15.0);
        eta.done(2, 50.0);
        assert_eq!(eta.left_from(1), 15.0);
    }
}
