//! ibench: the Insert Benchmark as one binary.
//!
//! The library holds everything; `main.rs` only calls [`main_entry`], which parses the command
//! line, runs, and turns an error into one line and an exit code.

pub mod backend;
pub mod calendar;
pub mod check;
pub mod cli;
pub mod flame;
pub mod matrix;
pub mod process;
pub mod report;
pub mod results;
pub mod runner;
pub mod sampler;
pub mod server;
pub mod stats;
pub mod url;
pub mod workload;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command, MatrixCommand, ServerCommand};

/// Exit status of a run stopped by Ctrl-C / SIGTERM.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Parse `args`, do the work, print an error as one line; returns the process exit code.
pub fn main_entry(args: Vec<String>) -> ExitCode {
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            // A usage error: one line (clap's first line and its tip), not the usage block.
            let text = e.render().to_string();
            // The first paragraph: the message, and what it lists (the missing arguments).
            let head: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let head = head.join(" ");
            let mut parts: Vec<&str> = vec![head.as_str()];
            parts.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| l.starts_with("tip:")),
            );
            // clap quotes what it did not understand: a URL given without --url, say.
            let line = crate::url::redact_in_text(&parts.join("; "));
            eprintln!("{line}; see --help");
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help, --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    match dispatch(cli, args) {
        Ok(code) => code,
        Err(e) => {
            // Server text is escaped where it enters (protocol::server_text); this covers
            // what came in any other way (a value a query returned, a file's text).
            eprintln!(
                "error: {}",
                crate::backend::protocol::escape_controls(&crate::url::redact_in_text(
                    &report::text::one_line(&format!("{e:#}"))
                ))
            );
            ExitCode::FAILURE
        }
    }
}

/// The HTML report of the run in `dir`.
fn html_report(dir: &std::path::Path) -> anyhow::Result<report::Rendered> {
    report::render_dirs(
        std::slice::from_ref(&dir.to_path_buf()),
        None,
        report::Format::Html,
        false,
    )
}

/// Write `rendered` as `DIR/report.html` and say where; a failure is a warning.
fn write_html_report(dir: &std::path::Path, rendered: anyhow::Result<report::Rendered>) {
    match rendered.and_then(|r| {
        let path = dir.join(format!("report.{}", report::Format::Html.extension()));
        std::fs::write(&path, r.text)?;
        Ok(path)
    }) {
        Ok(path) => println!("report: {}", path.display()),
        Err(e) => eprintln!("warning: could not write the HTML report: {e:#}"),
    }
}

/// `ibench run`: the run, its summary and report.html; exit 130 when interrupted, 1 when a
/// check after a step failed (integrity, settle, statistics).
fn run_command(run_args: &cli::RunArgs, args: Vec<String>) -> anyhow::Result<ExitCode> {
    let opts = run_args.to_options()?;
    let quiet = opts.quiet;
    let out_dir = opts.out_dir.clone();
    let had_run = out_dir.join(results::RUN_FILE).exists();
    runner::stop::install_interrupt_handler();
    let mut print_step = |step: &results::StepRecord| {
        if !quiet {
            eprintln!("{}", report::text::step_line(step));
        }
        if let Some(w) = check::verdicts::too_short_warning(step) {
            eprintln!("{w}");
        }
    };
    let outcome = match runner::run(opts, args, &mut print_step) {
        Ok(o) => o,
        Err(e) => {
            // A run that failed part-way still gets its report of what it measured
            // (run.json says failed and why). A run.json that was there before is
            // not ours: the run refused to start.
            if !had_run && out_dir.join(results::RUN_FILE).exists() {
                write_html_report(&out_dir, html_report(&out_dir));
            }
            return Err(e);
        }
    };
    if !quiet {
        println!("{}", report::text::summary(&outcome.record));
        print!("{}", report::efficiency::metrics_table(&outcome.record));
    }
    let html = html_report(&outcome.dir);
    if let Some(r) = html
        .as_ref()
        .ok()
        .filter(|r| !quiet && !r.slowdowns.is_empty())
    {
        println!("slowdowns inside steps (docs/method.md):");
        for line in &r.slowdowns {
            println!("  {line}");
        }
    }
    println!("results: {}", outcome.dir.display());
    write_html_report(&outcome.dir, html);
    if outcome.record.status == results::Status::Interrupted {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    outcome.record.checks_passed(&outcome.dir)?;
    Ok(ExitCode::SUCCESS)
}

/// `ibench report --format F --output DIR` for a format that writes several files (Otava's
/// CSV and test config), side by side in DIR.
fn files_command(a: &cli::ReportArgs) -> anyhow::Result<ExitCode> {
    let names = a.format.file_names();
    let Some(dir) = &a.output else {
        anyhow::bail!(
            "--format {} writes {} files ({}): give --output DIR",
            a.format.name(),
            match names.len() {
                2 => "two".to_string(),
                n => n.to_string(),
            },
            names.join(" and ")
        );
    };
    let (runs, problems) = report::load::load_runs(&a.runs);
    for p in &problems {
        eprintln!("warning: {p}");
    }
    if runs.is_empty() {
        anyhow::bail!("no run could be read: give results directories (each holds a run.json)");
    }
    let files = report::render_files(&runs, a.format);
    std::fs::create_dir_all(dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot create {}: {e}; choose another --output",
            dir.display()
        )
    })?;
    for (name, text) in &files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| {
            anyhow::anyhow!(
                "cannot write {}: {e}; choose another --output",
                path.display()
            )
        })?;
        eprintln!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `ibench report`: render the runs in one format, to a file or standard output.
fn report_command(a: &cli::ReportArgs) -> anyhow::Result<ExitCode> {
    if a.format.writes_several_files() {
        return files_command(a);
    }
    use std::io::IsTerminal;
    let colour = a.output.is_none()
        && a.format == report::Format::Text
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let rendered =
        report::render_dirs_with(&a.runs, a.base.as_deref(), a.format, colour, a.details)?;
    for p in &rendered.problems {
        eprintln!("warning: {p}");
    }
    match &a.output {
        Some(path) => {
            std::fs::write(path, &rendered.text).map_err(|e| {
                anyhow::anyhow!(
                    "cannot write {}: {e}; choose another --output",
                    path.display()
                )
            })?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{}", rendered.text),
    }
    Ok(ExitCode::SUCCESS)
}

fn dispatch(cli: Cli, args: Vec<String>) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(run_args) => run_command(&run_args, args),
        Command::Report(a) => report_command(&a),
        Command::Server(ServerCommand::Start(a)) => {
            let handle = server::start(&server::ServerSpec {
                kind: a.kind,
                engine: a.engine,
                bindir: a.bindir,
                config: a.config,
                dir: a.dir,
                port: a.port,
                init_args: Vec::new(),
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
        Command::Matrix(m) => matrix_command(m),
        Command::Check(a) => Ok(check::command(&a)),
    }
}

fn matrix_command(m: MatrixCommand) -> anyhow::Result<ExitCode> {
    match m {
        MatrixCommand::Plan { file, shard } => {
            let shard = matrix::Shard::from_args(&shard)?;
            let (_, plan) = matrix::load(&file)?;
            print!("{}", plan.render(shard));
            Ok(ExitCode::SUCCESS)
        }
        MatrixCommand::Run {
            file,
            out,
            shard,
            quiet,
        } => {
            let shard = matrix::Shard::from_args(&shard)?;
            let (src, plan) = matrix::load(&file)?;
            let s = matrix::run::run(&plan, &src.text, &out, shard, quiet)?;
            eprintln!(
                "[matrix] {} completed now, {} already done, {} failed; results in {}",
                s.completed,
                s.skipped,
                s.failed.len(),
                out.display()
            );
            if s.interrupted {
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            if let Some((first, err)) = s.failed.first() {
                anyhow::bail!(
                    "{} of the matrix's cells failed (first: {first}: {}); see {} and rerun the same command to redo the failed cells",
                    s.failed.len(),
                    report::text::one_line(err),
                    matrix::run::cell_dir(&out, first)
                        .join(matrix::run::STATE_FILE)
                        .display()
                );
            }
            println!("next: ibench matrix report {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        MatrixCommand::Report { dirs, out } => {
            let out = out.unwrap_or_else(|| dirs[0].join("report"));
            let w = matrix::report::write(&dirs, &out)?;
            for p in &w.problems {
                eprintln!("warning: {p}");
            }
            println!("index: {}", w.index.display());
            for r in w.reports.iter().filter(|r| {
                r.extension()
                    .is_some_and(|e| e == report::Format::Html.extension())
            }) {
                println!("report: {}", r.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
