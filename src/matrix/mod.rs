//! Matrix runs: versions × configs × workloads from one TOML file, each cell on a fresh private
//! server, resumable, split over hosts with `--shard`, and one report per group against its
//! base. See docs/matrix.md.
//!
//! - [`file`]: the TOML model, read strictly;
//! - [`plan`]: the plan's types (cells, labels, estimates), built by [`build`] from the parts below;
//! - [`servers`], [`configs`], [`groups`], [`shards`]: one job each;
//! - [`run`]: the executor (resume, Ctrl-C), one cell at a time or in [`duet`] rounds (each
//!   side's barrier, gate and CPUs: [`side`]); [`cell`]: one cell, its server, its run, its state;
//! - [`workloads`]: the workloads of the file and their axes' variants;
//! - [`report`]: the group reports and the index page.

pub mod build;
pub mod cell;
pub mod configs;
pub mod duet;
pub mod file;
pub mod groups;
pub mod plan;
pub mod report;
pub mod run;
pub mod servers;
pub mod shards;
pub mod side;
pub mod workloads;

use std::path::Path;

pub use plan::{Plan, Shard};

/// Read a matrix file and resolve its plan.
pub fn load(path: &Path) -> anyhow::Result<(file::Source, Plan)> {
    let src = file::read(path)?;
    let plan = build::build(&src)?;
    Ok((src, plan))
}

impl Shard {
    /// The shard this process runs, from `--shard I/N`, or `--shards N` with the index from the
    /// scheduler's environment, or all cells.
    pub fn from_args(args: &crate::cli::ShardArgs) -> anyhow::Result<Shard> {
        match (&args.shard, args.shards) {
            (Some(s), _) => Shard::parse(s),
            (None, Some(n)) => {
                let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
                if let Some(note) = Shard::array_note(n, &env) {
                    crate::say!("{note}");
                }
                Shard::from_env(n, &env)
            }
            (None, None) => Ok(Shard::ALL),
        }
    }
}
