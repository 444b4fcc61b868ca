//! What the commands write on the terminal and the status they end with: standard output that
//! a closed pipe ends quietly, standard error that never panics (`say!`, `say_inline!`), and
//! the exit statuses (2 for a command line that is wrong, 1 for work that failed, 130 for a
//! run interrupted; which error is which is [`crate::commands`]'s). It imports nothing of the
//! crate, so every room may write through it. What `ibench run` says as it goes is [`crate::progress`]'s.

use std::io::Write;

/// Exit status of work that failed: a server unreachable, a file unreadable, a step or a
/// check that failed.
pub const EXIT_FAILURE: u8 = 1;
/// Exit status of a command line that is wrong: an unknown flag, a value out of its range,
/// flags that conflict, a name that matches nothing. Clap's own usage errors exit 2 too.
pub const EXIT_USAGE: u8 = 2;
/// Exit status of a run stopped by Ctrl-C / SIGTERM.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Write `text` to standard output and flush it. A reader that went away (`ibench report … |
/// head`) is an error of kind `BrokenPipe` that [`is_broken_pipe`] recognises, never a panic.
pub fn print_out(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Write to standard error, never panicking: `eprint!` panics when its reader went away
/// (`ibench run 2>&1 | head`), which would stop a run half-way; this writes nothing then.
pub fn say_text(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// [`say_text`] with a newline.
pub fn say_line(args: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args);
    let _ = err.write_all(b"\n");
}

/// `eprintln!` that never panics ([`console::say_line`](crate::console::say_line)).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::console::say_line(format_args!($($arg)*))
    };
}

/// `eprint!` that never panics ([`console::say_text`](crate::console::say_text)).
#[macro_export]
macro_rules! say_inline {
    ($($arg:tt)*) => {
        $crate::console::say_text(format_args!($($arg)*))
    };
}

/// What starts a whole line on standard error: on a terminal, a return and an erase, so that
/// it replaces the transient line there (a step's start, its progress); nothing elsewhere.
pub fn line_start() -> &'static str {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        "\r\x1b[2K"
    } else {
        ""
    }
}

/// Whether `e` is standard output closed by its reader: the program then ends quietly.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// When to colour the output (`--color`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColourChoice {
    /// On a terminal, unless the `NO_COLOR` variable is set (and not empty).
    #[default]
    Auto,
    /// Always, even into a pipe or a file, and whatever `NO_COLOR` says.
    Always,
    /// Never.
    Never,
}

/// The choice of this process (`--color`), [`ColourChoice::Auto`] until set.
static COLOUR_CHOICE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Set the process's colour choice (the command line's `--color`).
pub fn set_colour_choice(choice: ColourChoice) {
    let n = match choice {
        ColourChoice::Auto => 0,
        ColourChoice::Always => 1,
        ColourChoice::Never => 2,
    };
    COLOUR_CHOICE.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// Whether text written to standard output (`stdout`) or standard error is coloured: as
/// `--color` says, and with `auto` when that stream is a terminal and `NO_COLOR` is unset.
pub fn colour_on(stdout: bool) -> bool {
    use std::io::IsTerminal;
    match COLOUR_CHOICE.load(std::sync::atomic::Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let terminal = if stdout {
                std::io::stdout().is_terminal()
            } else {
                std::io::stderr().is_terminal()
            };
            terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// `text` in red when `on` (a failure: `SLA FAILED`, `INTEGRITY CHECK FAILED`).
pub fn red(text: &str, on: bool) -> String {
    if on {
        format!("\x1b[31m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_colour_choice_overrides_the_terminal_and_no_color() {
        set_colour_choice(ColourChoice::Always);
        assert!(colour_on(true) && colour_on(false));
        assert_eq!(red("x", true), "\x1b[31mx\x1b[0m");
        set_colour_choice(ColourChoice::Never);
        assert!(!colour_on(true) && !colour_on(false));
        assert_eq!(red("x", false), "x");
        set_colour_choice(ColourChoice::Auto);
    }

    #[test]
    fn a_closed_pipe_is_told_apart_from_failures() {
        let failed = anyhow::anyhow!("cannot reach the server");
        let pipe = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&pipe.context("writing the report")));
        assert!(!is_broken_pipe(&failed));
    }
}
