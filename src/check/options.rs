//! What `ibench check` is asked to do, as plain data: `cli` parses the command line and
//! `commands` hands these options to the check, which knows no command line (its flags are
//! named in its messages, as the user wrote them).

use std::path::PathBuf;

use crate::report::Format;
use crate::stats::decision::Judge;

/// The options of one check (`ibench check --help` says each).
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// A matrix output dir, or results directories of runs.
    pub dirs: Vec<PathBuf>,
    /// `--base`: the base's label (or one of the directories).
    pub base: Option<String>,
    /// `--group`: the matrix group to check.
    pub group: Option<String>,
    /// `--alpha`: the level of each one-sided test.
    pub alpha: f64,
    /// `--threshold`: the smallest change that counts, in percent.
    pub threshold: f64,
    /// `--judge`: which figures are judged and counted.
    pub judge: Judge,
    /// `--min-step-seconds`: the shortest step judged.
    pub min_step_seconds: f64,
    /// `--run`: the matrix file run a round at a time until decided.
    pub run: Option<PathBuf>,
    /// `--duet`: each round as a duet.
    pub duet: bool,
    /// `--max-repeats`: the most repeats a side with `--run`.
    pub max_repeats: u32,
    /// `--max-time`: stop starting rounds after this many seconds.
    pub max_time: Option<f64>,
    /// `--fail-on-inconclusive`: exit 1 instead of 3 when some steps cannot tell.
    pub fail_on_inconclusive: bool,
    /// `--keep-host-affected`: judge the repeats the host screening flags too.
    pub keep_host_affected: bool,
    /// `--format`: the report's format written on standard output (text, Markdown or JSON).
    pub format: Format,
    /// `--junit`: also write a JUnit XML file.
    pub junit: Option<PathBuf>,
}
