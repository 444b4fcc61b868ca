//! ibench: the Insert Benchmark as one binary.
//!
//! The library holds everything; `main.rs` only parses the command line, calls [`main_entry`]
//! and turns an error into one line and an exit code.

pub mod backend;
pub mod server;
pub mod workload;
