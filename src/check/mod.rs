//! `ibench check`: did the candidate (a patched build, a new config) get slower than the
//! base? One verdict per step and figure and an exit code a CI job can act on:
//! - `input`: the pairs to judge, from a matrix output dir or from run directories, and
//!   whether each pair is like for like (the "what differs" model, `report::differs`);
//! - `statistics`: the median the outputs show;
//! - `verdicts`: each step's figures per repeat (rates, latencies, work per op) judged by the
//!   rule of `crate::stats::decision`, with the host screening's flags (`report::host`), failed or
//!   partial steps and the floor of a step's length;
//! - `options`: what the check is asked, as plain data (`cli` parses, `commands` hands it on);
//! - `assessment`: the whole check as data, its conclusion `model` (the exit code, the summary);
//! - `outputs`: text, Markdown and JSON (the report's formats) and JUnit XML;
//! - `until`: `--run`, a matrix run a round of repeats at a time until decided.

pub mod assessment;
pub mod duet;
pub mod input;
pub mod model;
pub mod options;
pub mod outputs;
pub mod statistics;
pub mod until;
pub mod verdicts;

use std::process::ExitCode;

pub use assessment::check;
pub use model::{
    CheckReport, DEFAULT_MAX_REPEATS, EXIT_BAD_INPUT, EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSED,
    PairReport, decide_command, rounds_can_decide,
};
pub use options::CheckOptions;

/// Run `ibench check`: print the verdicts, write the JUnit file and the step summary; the
/// exit code. Bad input is one line on standard error and exit 2.
pub fn command(args: &CheckOptions) -> ExitCode {
    let report = match &args.run {
        Some(file) => until::run_until_decided(args, file),
        None => check(args),
    };
    let outcome = report.and_then(|report| {
        outputs::write(&report, args)?;
        Ok(report.exit_code)
    });
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            crate::say!(
                "error: {}",
                crate::report::text::one_line(&format!("{e:#}"))
            );
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}
