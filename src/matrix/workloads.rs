//! The workloads of a matrix file. A `[workloads.NAME]` entry holds `ibench run`'s own
//! options (`RunArgs`, the struct the command line fills) as keys, read with their types and
//! unknown keys refused; one with `[[workloads.NAME.axes]]` becomes a variant per combination of
//! its axes' values (`writes_clients-1`, `writes_clients-4`), as config axes make configs. An
//! axis value is set on the entry's own table and read the same way, so `clients = "four"` is
//! refused as the key itself would be.

use anyhow::Result;

use super::configs::{axis_names, check_axes_product};
use super::file::{AxisEntry, RESERVED_KEYS, Source, WorkloadEntry, toml_error};
use super::plan::PlanWorkload;
use crate::cli::RunArgs;

/// The workloads of the file in order, variants of a workload with axes in the order of its
/// axes' product.
pub fn plan_workloads(src: &Source) -> Result<Vec<PlanWorkload>> {
    let mut workloads = Vec::new();
    for (name, w) in &src.file.workloads {
        let entry = format!("workloads.{name}");
        for (variant, table) in variants(src, &entry, w)? {
            let at = match &variant {
                Some(v) => format!("{entry}.axes (variant {v})"),
                None => entry.clone(),
            };
            let options: RunArgs = toml::Value::Table(table).try_into().map_err(|e| {
                src.err(
                    &at,
                    format!(
                        "{}; the keys are ibench run's options with _ (load_batch for --load-batch), see docs/matrix.md",
                        toml_error(&e)
                    ),
                )
            })?;
            workloads.push(PlanWorkload {
                name: variant
                    .as_ref()
                    .map_or_else(|| name.clone(), |v| format!("{name}_{v}")),
                options,
                family: variant.as_ref().map(|_| name.clone()),
                variant,
            });
        }
    }
    Ok(workloads)
}

/// The entry's variants: `(None, the entry)` without axes; with axes, per combination its
/// value names joined by `_` and the entry with the axes' options set.
fn variants(
    src: &Source,
    entry: &str,
    w: &WorkloadEntry,
) -> Result<Vec<(Option<String>, toml::Table)>> {
    let base = w.options.clone();
    let Some(axes) = &w.axes else {
        return Ok(vec![(None, base)]);
    };
    check_axes_product(
        src,
        &format!("{entry}.axes"),
        axes.iter().map(|a| a.values.len()),
        "variants",
    )?;
    let mut combos: Vec<(Vec<String>, toml::Table)> = vec![(Vec::new(), base)];
    for (i, axis) in axes.iter().enumerate() {
        let at = format!("{entry}.axes[{i}] ({})", axis.option);
        if axis.option == "axes" || RESERVED_KEYS.contains(&axis.option.as_str()) {
            return Err(src.err(
                &at,
                "an axis varies a run option of the workload (clients, load_rows, load_batch, ...), not one the matrix sets",
            ));
        }
        let names = axis_names(
            src,
            &at,
            &AxisEntry {
                setting: axis.option.clone(),
                values: axis.values.clone(),
                names: axis.names.clone(),
            },
        )?;
        let mut next = Vec::new();
        for (done, table) in &combos {
            for (value, n) in axis.values.iter().zip(&names) {
                let mut t = table.clone();
                t.insert(axis.option.clone(), value.clone());
                let mut nn = done.clone();
                nn.push(n.clone());
                next.push((nn, t));
            }
        }
        combos = next;
    }
    Ok(combos
        .into_iter()
        .map(|(names, t)| (Some(names.join("_")), t))
        .collect())
}
