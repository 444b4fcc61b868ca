//! Matrix runs: versions × configs × workloads from one TOML file, each cell on a fresh private
//! server, resumable, split over hosts with `--shard`, and one report per group against its
//! base. See docs/matrix.md.
//!
//! - [`file`]: the TOML model, read strictly;
//! - [`plan`]: the cells, labels, estimates, groups and shards;
//! - [`run`]: the executor (state per cell, resume, Ctrl-C);
//! - [`report`]: the group reports and the index page.

pub mod file;
pub mod plan;
pub mod report;
pub mod run;

use std::path::Path;

pub use plan::{Plan, Shard};

/// Read a matrix file and resolve its plan.
pub fn load(path: &Path) -> anyhow::Result<(file::Source, Plan)> {
    let src = file::read(path)?;
    let plan = plan::build(&src)?;
    Ok((src, plan))
}
