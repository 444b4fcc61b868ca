//! ibench: the Insert Benchmark as one binary.
//!
//! The library holds everything; `main.rs` only calls [`main_entry`], which parses the command
//! line, runs, and turns an error into one line and an exit code.

pub mod backend;
pub mod cli;
pub mod report;
pub mod results;
pub mod runner;
pub mod sampler;
pub mod server;
pub mod stats;
pub mod workload;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command, ServerCommand};

/// Exit status of a run stopped by Ctrl-C / SIGTERM.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Parse `args`, do the work, print an error as one line; returns the process exit code.
pub fn main_entry(args: Vec<String>) -> ExitCode {
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match dispatch(cli, args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", one_line(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

fn one_line(s: &str) -> String {
    s.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn dispatch(cli: Cli, args: Vec<String>) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(run_args) => {
            let opts = run_args.to_options()?;
            let quiet = opts.quiet;
            runner::stop::install_interrupt_handler();
            let outcome = runner::run(opts, args)?;
            if !quiet {
                println!("{}", report::text::summary(&outcome.record));
                print!("{}", sampler::metrics_table(&outcome.record));
            }
            println!("results: {}", outcome.dir.display());
            let integrity_failed = outcome
                .record
                .steps
                .iter()
                .filter_map(|s| s.integrity.as_ref())
                .any(|i| !i.ok);
            if outcome.record.status == results::Status::Interrupted {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            if integrity_failed {
                anyhow::bail!(
                    "the integrity check failed (row counts or indexes disagree); see the summary and {}",
                    outcome.dir.join(results::RUN_FILE).display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Server(ServerCommand::Start(a)) => {
            let handle = server::start(&server::ServerSpec {
                kind: a.kind,
                engine: a.engine,
                bindir: a.bindir,
                config: a.config,
                dir: a.dir,
                port: a.port,
            })?;
            eprintln!(
                "started in {}; stop it with: ibench server stop --dir {}",
                handle.dir.display(),
                handle.dir.display()
            );
            println!("{}", handle.url);
            Ok(ExitCode::SUCCESS)
        }
        Command::Server(ServerCommand::Stop { dir }) => {
            server::stop(&dir)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
