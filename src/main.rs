//! The `ibench` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    ibench::commands::main_entry(std::env::args().collect())
}
