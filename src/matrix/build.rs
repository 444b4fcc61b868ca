//! Building the plan from a matrix file: its servers, workloads, cells (server × config ×
//! workload × repeat, in run order, bounded) and groups.

use anyhow::Result;

use super::file::{Order, Source};
use super::groups::plan_groups;
use super::plan::*;
use super::servers::plan_server;
use super::workloads::plan_workloads;

/// Refuse a plan of more than [`MAX_CELLS`] cells, saying how many and what to shrink.
fn check_cell_count(
    src: &Source,
    repeats: u32,
    servers: &[PlanServer],
    workloads: &[PlanWorkload],
) -> Result<()> {
    let configs: usize = servers.iter().map(|s| s.configs.len()).sum();
    let cells = configs
        .checked_mul(workloads.len())
        .and_then(|n| n.checked_mul(usize::try_from(repeats).unwrap_or(usize::MAX)))
        .unwrap_or(usize::MAX);
    if cells > MAX_CELLS {
        return Err(src.err(
            "cells",
            format!(
                "{configs} server configs x {} workloads x {repeats} repeats = {cells} cells, more than a matrix may have ({MAX_CELLS}); shrink the axes, workloads or repeats",
                workloads.len()
            ),
        ));
    }
    Ok(())
}

/// Resolve the matrix file into a plan (runs the servers' `--version`, nothing else).
pub fn build(src: &Source) -> Result<Plan> {
    let f = &src.file;
    let workloads = plan_workloads(src)?;
    let mut servers = f
        .servers
        .iter()
        .map(|(name, s)| plan_server(src, name, s, &f.configs, &workloads))
        .collect::<Result<Vec<_>>>()?;
    // Two servers with the same label prefix: add the server name.
    let prefixes: Vec<String> = servers.iter().map(|s| s.label.clone()).collect();
    for s in &mut servers {
        if prefixes.iter().filter(|p| **p == s.label).count() > 1 {
            s.label = format!("{} ({})", s.label, s.name);
        }
    }
    check_cell_count(src, f.repeats, &servers, &workloads)?;
    let combos = servers.iter().map(|s| s.configs.len()).sum::<usize>() * workloads.len();
    if f.pin && f.order != Order::Duet {
        return Err(src.err(
            "pin",
            "pin = true pins the two sides of a duet: use it with order = \"duet\" (or ibench check --run --duet), or remove it",
        ));
    }
    if f.order == Order::Duet && combos != 2 {
        return Err(src.err(
            "order",
            format!(
                "order = \"duet\" runs two combinations at a time, and the matrix has {combos} (server configs x workloads): give it exactly two (a base and a candidate), or use order = \"interleaved\""
            ),
        ));
    }
    let cells = plan_cells(f.order, f.repeats, &servers, &workloads)?;
    let groups = plan_groups(src, &servers, &workloads)?;
    Ok(Plan {
        file: src.path.clone(),
        repeats: f.repeats,
        order: f.order,
        pin: f.pin,
        servers,
        workloads,
        cells,
        groups,
    })
}

/// Every cell in run order: server × config × workload, each repeated.
fn plan_cells(
    order: Order,
    repeats: u32,
    servers: &[PlanServer],
    workloads: &[PlanWorkload],
) -> Result<Vec<Cell>> {
    let mut combos = Vec::new();
    for s in servers {
        for c in &s.configs {
            for w in workloads {
                let url = placeholder_url(&s.source);
                let replica = super::plan::placeholder_replica_url(&s.source);
                let opts = run_options(
                    w,
                    (&url, replica.as_deref(), s.source.failover()),
                    s.source.engine(),
                    std::path::Path::new("x"),
                    "x",
                    None,
                    true,
                )?;
                let managed = matches!(s.source, ServerSource::Managed { .. });
                let est = estimate_seconds(&opts) + if managed { EST_SERVER_SECONDS } else { 0.0 };
                let mut label = if !managed && c.name == "base" {
                    s.label.clone()
                } else {
                    format!("{} {}", s.label, c.name)
                };
                if let Some(v) = &w.variant {
                    label = format!("{label} {v}");
                }
                combos.push((s.name.clone(), c.name.clone(), w.name.clone(), label, est));
            }
        }
    }
    let make = |(s, c, w, label, est): &(String, String, String, String, f64), r: u32| Cell {
        name: format!("{s}.{c}.{w}.r{r}"),
        combo: format!("{s}.{c}.{w}"),
        server: s.clone(),
        config: c.clone(),
        workload: w.clone(),
        repeat: r,
        label: label.clone(),
        estimate_seconds: *est,
    };
    let mut cells = Vec::new();
    match order {
        Order::Sequential => {
            for combo in &combos {
                cells.extend((1..=repeats).map(|r| make(combo, r)));
            }
        }
        Order::Interleaved | Order::Duet => {
            // Every other round backwards (A B, B A, A B, ...): each combination runs first
            // in a pair as often as second, so neither the host's drift nor the position in
            // a pair (right after another cell's server stopped) favours one.
            for r in 1..=repeats {
                let round = combos.iter().map(|combo| make(combo, r));
                if r % 2 == 0 {
                    cells.extend(round.rev());
                } else {
                    cells.extend(round);
                }
            }
        }
    }
    Ok(cells)
}
