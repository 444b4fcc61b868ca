//! What each command does: the command line parsed ([`crate::cli`]), dispatched to the
//! work, and an error turned into one line and an exit status ([`crate::console`]).

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::cli::{self, Cli, Command, MatrixCommand, ServerCommand};
use crate::progress::RunConsole;
use crate::{check, console, matrix, replication, report, results, runner, server};

/// Parse `args`, do the work, print an error as one line; returns the process exit code: 2
/// for a command line that is wrong, 1 for work that failed (`console`), `ibench check`'s own.
pub fn main_entry(args: Vec<String>) -> ExitCode {
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => return clap_error(&e),
    };
    console::set_colour_choice(cli.color);
    match dispatch(cli, args) {
        Ok(code) => code,
        // The reader of standard output went away (`ibench report … | head`): end quietly.
        Err(e) if console::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // Server text is escaped where it enters (protocol::server_text); this covers
            // what came in any other way (a value a query returned, a file's text).
            crate::say!(
                "error: {}",
                crate::backend::protocol::escape_controls(&crate::url::redact_in_text(
                    &report::text::one_line(&format!("{e:#}"))
                ))
            );
            ExitCode::from(exit_status(&e))
        }
    }
}

/// Whether `e` says the command line is wrong (its options break their own rules, or the URL
/// is not one ibench reads), rather than that the work failed.
fn is_usage_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<results::options::OptionsError>()
            || c.downcast_ref::<crate::url::UrlError>()
                .is_some_and(crate::url::UrlError::is_usage)
    })
}

/// The exit status of a command that failed with `e`.
fn exit_status(e: &anyhow::Error) -> u8 {
    if is_usage_error(e) {
        console::EXIT_USAGE
    } else {
        console::EXIT_FAILURE
    }
}

/// What clap found instead of a command: the help or the version (exit 0), the help of a
/// command given without its subcommand (`ibench`, `ibench server`: exit 2), or a usage error
/// in one line (exit 2).
fn clap_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if !e.use_stderr() {
        // --help, --version (clap returns a closed pipe as an error, which is no error here).
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let _ = e.print();
        return ExitCode::from(console::EXIT_USAGE);
    }
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
    if e.kind() == ErrorKind::UnknownArgument && looks_like_url(&text) {
        parts.push("tip: a database URL goes after --url");
    }
    let line = crate::url::redact_in_text(&parts.join("; "));
    crate::say!("{line}; see --help");
    ExitCode::from(console::EXIT_USAGE)
}

/// Whether clap's message quotes a database URL (`unexpected argument 'postgres://...'`).
fn looks_like_url(message: &str) -> bool {
    ["'postgres://", "'postgresql://", "'mysql://", "'sqlite:"]
        .iter()
        .any(|scheme| message.contains(scheme))
}

/// The HTML report of the run in `dir`, its replica's lag judged against `lag_sla_ms`.
fn html_report(dir: &std::path::Path, lag_sla_ms: f64) -> anyhow::Result<report::Rendered> {
    report::render_dirs_with(
        std::slice::from_ref(&dir.to_path_buf()),
        None,
        report::Format::Html,
        false,
        true,
        lag_sla_ms,
    )
}

/// Write `rendered` as `DIR/report.html` and say where; a failure is a warning.
fn write_html_report(dir: &std::path::Path, rendered: anyhow::Result<report::Rendered>) {
    match rendered.and_then(|r| {
        let path = dir.join(format!("report.{}", report::Format::Html.extension()));
        std::fs::write(&path, r.text)?;
        Ok(path)
    }) {
        // When the reader of standard output went away there is nothing more to do.
        Ok(path) => {
            let _ = console::print_out(&format!("report: {}\n", path.display()));
        }
        Err(e) => crate::say!("warning: could not write the HTML report: {e:#}"),
    }
}

/// `ibench run`: the run, its summary and report.html; exit 130 when interrupted, 1 when a
/// check after a step failed (integrity, settle, statistics).
fn run_command(run_args: &cli::RunArgs, args: Vec<String>) -> anyhow::Result<ExitCode> {
    let opts = run_args.to_options()?;
    let quiet = opts.quiet;
    let out_dir = opts.out_dir.clone();
    // Refused before anything is made (the SQLite file included). A directory another
    // ibench is writing is left to the lock, which names that ibench.
    let held = matches!(
        results::dir::holder(&out_dir),
        results::dir::Holder::Held(_)
    );
    if !held && out_dir.join(results::RUN_FILE).exists() {
        anyhow::bail!(
            "{} already holds a run (run.json); choose another --out",
            out_dir.display()
        );
    }
    let leftovers = crate::leftovers::Leftovers::before(&out_dir, &opts.url);
    runner::stop::install_interrupt_handler();
    let mut console = RunConsole::new(quiet);
    let outcome = match runner::run_observed(opts, args, &mut console) {
        Ok(o) => o,
        Err(e) if e.is::<runner::stop::SetupInterrupted>() => {
            leftovers.failed(&out_dir);
            crate::say!("interrupted before the run started: nothing was recorded");
            return Ok(ExitCode::from(console::EXIT_INTERRUPTED));
        }
        Err(e) => {
            // A run that failed part-way still gets its report of what it measured
            // (run.json says failed and why); one that failed before its first step leaves
            // nothing it made (`leftovers`).
            if leftovers.failed(&out_dir) {
                write_html_report(&out_dir, html_report(&out_dir, run_args.lag_sla_ms));
            }
            return Err(e);
        }
    };
    // Standard output whose reader went away (`ibench run | head`) does not stop the command:
    // report.html is still written and the exit status still tells the run's outcome.
    let mut printed = Ok(());
    if !quiet {
        printed = console::print_out(&run_summary_text(&outcome.record, run_args));
    }
    let html = html_report(&outcome.dir, run_args.lag_sla_ms);
    if let Some(r) = html
        .as_ref()
        .ok()
        .filter(|r| !quiet && !r.slowdowns.is_empty())
    {
        printed = printed
            .and_then(|()| console::print_out(&slowdowns_text(&r.slowdowns, run_args.details)));
    }
    printed =
        printed.and_then(|()| console::print_out(&format!("results: {}\n", outcome.dir.display())));
    write_html_report(&outcome.dir, html);
    if let Err(e) = printed
        && !console::is_broken_pipe(&e)
    {
        return Err(e);
    }
    if outcome.record.status == results::Status::Interrupted {
        return Ok(ExitCode::from(console::EXIT_INTERRUPTED));
    }
    outcome.record.checks_passed(&outcome.dir)?;
    Ok(ExitCode::SUCCESS)
}

/// The summary `ibench run` prints as it ends; with `--details` the latency and efficiency
/// tables after it.
fn run_summary_text(record: &results::RunRecord, run_args: &cli::RunArgs) -> String {
    let mut text = crate::summary::summary(record, run_args.lag_sla_ms, console::colour_on(true));
    if run_args.details {
        text.push('\n');
        text.push_str(&report::text::latency_table(record));
        text.push_str(&report::efficiency::metrics_table(record));
        text.push('\n');
    }
    text
}

/// The slowdowns seen inside steps: the first three, and how many more (all of them with
/// `--details`; every one is in report.html).
fn slowdowns_text(slowdowns: &[String], details: bool) -> String {
    const SHOWN: usize = 3;
    let mut text = "slowdowns inside steps (docs/method.md):\n".to_string();
    let shown = if details { slowdowns.len() } else { SHOWN };
    for line in slowdowns.iter().take(shown) {
        text.push_str(&format!("  {line}\n"));
    }
    if slowdowns.len() > shown {
        text.push_str(&format!(
            "  ... {} more in report.html (all of them with --details)\n",
            slowdowns.len() - shown
        ));
    }
    text
}

/// `ibench report --format F --output DIR` for a format that writes several files (Otava's
/// CSV and test config), side by side in DIR.
fn files_command(a: &cli::ReportArgs) -> anyhow::Result<ExitCode> {
    let names = a.format.file_names();
    let Some(dir) = &a.output else {
        return Err(results::options::OptionsError(format!(
            "--format {} writes {} files ({}): give --output DIR",
            a.format.name(),
            match names.len() {
                2 => "two".to_string(),
                n => n.to_string(),
            },
            names.join(" and ")
        ))
        .into());
    };
    let (runs, problems) = report::load::load_runs(&a.runs);
    for p in &problems {
        crate::say!("warning: {p}");
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
        crate::say!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `ibench report`: render the runs in one format, to a file or standard output.
fn report_command(a: &cli::ReportArgs) -> anyhow::Result<ExitCode> {
    if a.format.writes_several_files() {
        return files_command(a);
    }
    let colour = a.output.is_none() && a.format == report::Format::Text && console::colour_on(true);
    let rendered = report::render_dirs_with(
        &a.runs,
        a.base.as_deref(),
        a.format,
        colour,
        a.details,
        a.lag_sla_ms,
    )?;
    for p in &rendered.problems {
        crate::say!("warning: {p}");
    }
    match &a.output {
        Some(path) => {
            std::fs::write(path, &rendered.text).map_err(|e| {
                anyhow::anyhow!(
                    "cannot write {}: {e}; choose another --output",
                    path.display()
                )
            })?;
            crate::say!("wrote {}", path.display());
        }
        None => console::print_out(&rendered.text)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn dispatch(cli: Cli, args: Vec<String>) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(run_args) => run_command(&run_args, args),
        Command::Report(a) => report_command(&a),
        Command::Server(ServerCommand::Start(a)) => {
            let mode = a.replica_mode();
            let spec = server::ServerSpec {
                kind: a.kind,
                engine: a.engine,
                bindir: a.bindir,
                config: a.config,
                dir: a.dir,
                port: a.port,
                init_args: Vec::new(),
            };
            let handle = match &a.replica_of {
                Some(primary) => {
                    replication::pair::start_replica_keeping(&spec, primary, mode, a.slot_keep)?
                }
                None if a.log_bin => replication::pair::start_logging_primary(&spec)?,
                None => server::start(&spec)?,
            };
            crate::say!(
                "started in {}; stop it with: ibench server stop --dir {} (--remove also deletes the dir)",
                handle.dir.display(),
                handle.dir.display()
            );
            console::print_out(&format!("{}\n", handle.url))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Server(ServerCommand::Stop { dir, remove }) => {
            let left = replication::stop::stop(&dir, remove)?;
            crate::say!("{left}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Server(ServerCommand::List) => {
            let running = server::instances::running();
            if running.is_empty() {
                crate::say!(
                    "no private server is running (ibench lists those `ibench server start` started, found from the running processes)"
                );
            }
            let roles: Vec<String> = running
                .iter()
                .map(|i| replication::stop::role(&i.handle.dir))
                .collect();
            console::print_out(&server::instances::render(&running, &roles))?;
            for note in replication::stop::slot_notes(&running) {
                crate::say!("note: {note}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions { shell } => {
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut cli::Cli::command(), "ibench", &mut text);
            console::print_out(&String::from_utf8_lossy(&text))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir } => man_command(dir.as_deref()),
        Command::Matrix(m) => matrix_command(m),
        Command::Check(a) => Ok(check::command(&check_options(a))),
    }
}

/// `ibench check`'s options as the check takes them: plain data, no command line.
fn check_options(a: cli::CheckArgs) -> check::CheckOptions {
    check::CheckOptions {
        dirs: a.dirs,
        base: a.base,
        group: a.group,
        alpha: a.alpha,
        threshold: a.threshold,
        judge: a.judge,
        min_step_seconds: a.min_step_seconds,
        run: a.run,
        duet: a.duet,
        max_repeats: a.max_repeats,
        max_time: a.max_time,
        fail_on_inconclusive: a.fail_on_inconclusive,
        keep_host_affected: a.keep_host_affected,
        format: a.format,
        junit: a.junit,
    }
}

/// `ibench man`: the manual page on standard output, or with `--dir` a page per command
/// written there (`ibench.1`, `ibench-run.1`, ...).
fn man_command(dir: Option<&std::path::Path>) -> anyhow::Result<ExitCode> {
    let cmd = cli::Cli::command();
    let Some(dir) = dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut page)?;
        console::print_out(&String::from_utf8_lossy(&page))?;
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(dir).map_err(|e| {
        anyhow::anyhow!("cannot create {}: {e}; choose another --dir", dir.display())
    })?;
    clap_mangen::generate_to(cmd, dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot write the pages into {}: {e}; choose another --dir",
            dir.display()
        )
    })?;
    crate::say!("wrote the manual pages into {}", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// The shard `--shard` or `--shards` names; a wrong one is a wrong command line.
fn shard_of(args: &cli::ShardArgs) -> anyhow::Result<matrix::Shard> {
    matrix::Shard::from_args(args)
        .map_err(|e| results::options::OptionsError(format!("{e:#}")).into())
}

fn matrix_command(m: MatrixCommand) -> anyhow::Result<ExitCode> {
    match m {
        MatrixCommand::Plan { file, shard } => {
            let shard = shard_of(&shard)?;
            let (_, plan) = matrix::load(&file)?;
            console::print_out(&plan.render(shard))?;
            Ok(ExitCode::SUCCESS)
        }
        MatrixCommand::Run {
            file,
            out,
            shard,
            quiet,
        } => {
            let shard = shard_of(&shard)?;
            let (src, plan) = matrix::load(&file)?;
            let s = matrix::run::execute_plan(&plan, &src.text, &out, shard, quiet)?;
            crate::say!(
                "[matrix] {} completed now, {} already done, {} failed; results in {}",
                s.completed,
                s.skipped,
                s.failed.len(),
                out.display()
            );
            if s.interrupted {
                return Ok(ExitCode::from(console::EXIT_INTERRUPTED));
            }
            if let Some((first, err)) = s.failed.first() {
                anyhow::bail!(
                    "{} of the matrix's cells failed (first: {first}: {}); see {} and rerun the same command to redo the failed cells",
                    s.failed.len(),
                    report::text::one_line(err),
                    matrix::cell::cell_dir(&out, first)
                        .join(matrix::cell::STATE_FILE)
                        .display()
                );
            }
            console::print_out(&format!("next: ibench matrix report {}\n", out.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        MatrixCommand::Report {
            dirs,
            out,
            details,
            lag_sla_ms,
        } => {
            let out = out.unwrap_or_else(|| dirs[0].join("report"));
            let choices = matrix::report::Choices {
                details,
                lag_sla_ms,
            };
            let w = matrix::report::write_with(&dirs, &out, choices)?;
            for p in &w.problems {
                crate::say!("warning: {p}");
            }
            let mut text = format!("index: {}\n", w.index.display());
            for r in w.reports.iter().filter(|r| {
                r.extension()
                    .is_some_and(|e| e == report::Format::Html.extension())
            }) {
                text.push_str(&format!("report: {}\n", r.display()));
            }
            console::print_out(&text)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_are_told_apart_from_failures() {
        let usage = anyhow::Error::new(results::options::OptionsError(
            "--clients must be at least 1".into(),
        ));
        assert_eq!(exit_status(&usage), console::EXIT_USAGE);
        let wrapped = usage.context("reading the options");
        assert_eq!(exit_status(&wrapped), console::EXIT_USAGE);
        let failed = anyhow::anyhow!("cannot reach the server");
        assert_eq!(exit_status(&failed), console::EXIT_FAILURE);
    }
}
