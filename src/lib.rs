//! ibench: the Insert Benchmark as one binary.
//!
//! The library holds everything; `main.rs` only calls [`commands::main_entry`], which parses
//! the command line, runs, and turns an error into one line and an exit code. This file only
//! declares the modules: it imports none of them.

pub mod backend;
pub mod calendar;
pub mod check;
pub mod cli;
pub mod commands;
pub mod console;
pub mod filesystem;
pub mod flame;
pub mod leftovers;
pub mod matrix;
pub mod process;
pub mod progress;
pub mod replication;
pub mod report;
pub mod results;
pub mod run_part;
pub mod runner;
pub mod sampler;
pub mod server;
pub mod stats;
pub mod suggest;
pub mod summary;
pub mod url;
pub mod workload;
