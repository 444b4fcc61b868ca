//! The workloads of a matrix file: each `[workloads.NAME]` entry checked and turned into the
//! `ibench run` flags it stands for, and one with `[[workloads.NAME.axes]]` expanded into a
//! variant per combination of its axes' values (`writes_clients-1`, `writes_clients-4`), as
//! config axes are. An axis value is set on the entry's own table and read back with the
//! entry's types, so `clients = "four"` is refused as the key itself would be.

use anyhow::Result;

use super::file::{self, AxisEntry, Source, WorkloadAxisEntry, WorkloadEntry};
use super::plan::{PlanWorkload, axis_names, check_axes_product};

/// The workloads of the file in order, variants of a workload with axes in the order of its
/// axes' product.
pub fn plan_workloads(src: &Source) -> Result<Vec<PlanWorkload>> {
    let mut workloads = Vec::new();
    for (name, v) in &src.file.workloads {
        let entry = format!("workloads.{name}");
        let _: WorkloadEntry = file::entry(src, "workloads", name, v)?;
        for (variant, table) in variants(src, &entry, v)? {
            let w: WorkloadEntry = table.try_into().map_err(|e| {
                src.err(
                    &format!(
                        "{entry}.axes (variant {})",
                        variant.as_deref().unwrap_or("")
                    ),
                    format!(
                        "{}; give the axis values of the option's type",
                        file::toml_error(&e)
                    ),
                )
            })?;
            let args = workload_args(&w);
            if let Some(bad) = args.iter().find(|a| {
                RESERVED_FLAGS
                    .iter()
                    .any(|r| *a == r || a.starts_with(&format!("{r}=")))
            }) {
                return Err(src.err(
                    &entry,
                    format!("{bad} is set by the matrix for each cell; remove it from args"),
                ));
            }
            workloads.push(PlanWorkload {
                name: variant
                    .as_ref()
                    .map_or_else(|| name.clone(), |v| format!("{name}_{v}")),
                args,
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
    v: &toml::Value,
) -> Result<Vec<(Option<String>, toml::Value)>> {
    let Some(table) = v.as_table() else {
        return Ok(vec![(None, v.clone())]);
    };
    let mut base = table.clone();
    let axes: Vec<WorkloadAxisEntry> = match base.remove("axes") {
        None => return Ok(vec![(None, v.clone())]),
        Some(a) => a.try_into().map_err(|e: toml::de::Error| {
            src.err(
                &format!("{entry}.axes"),
                format!("{}; see docs/matrix.md", e.message()),
            )
        })?,
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
        if axis.option == "axes" || axis.option == "args" {
            return Err(src.err(
                &at,
                "an axis varies one run option (clients, load_rows, load_batch, ...), not axes or args",
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
                set_option(src, &at, &mut t, &axis.option, value)?;
                let mut nn = done.clone();
                nn.push(n.clone());
                next.push((nn, t));
            }
        }
        combos = next;
    }
    Ok(combos
        .into_iter()
        .map(|(names, t)| (Some(names.join("_")), toml::Value::Table(t)))
        .collect())
}

/// Set one run option on a workload entry's table: its key when the entry has one, else its
/// `ibench run` flag in `args`.
fn set_option(
    src: &Source,
    at: &str,
    table: &mut toml::Table,
    option: &str,
    value: &toml::Value,
) -> Result<()> {
    if WorkloadEntry::KEYS.contains(&option) {
        table.insert(option.to_string(), value.clone());
        return Ok(());
    }
    let flag = format!("--{}", option.replace('_', "-"));
    let mut words = Vec::new();
    match value {
        toml::Value::Boolean(true) => words.push(flag),
        toml::Value::Boolean(false) => {}
        toml::Value::String(s) => words.push(format!("{flag}={s}")),
        toml::Value::Integer(_) | toml::Value::Float(_) => words.push(format!("{flag}={value}")),
        _ => {
            return Err(src.err(
                at,
                "a value is not a string, number or boolean; write it as one",
            ));
        }
    }
    let args = table
        .entry("args")
        .or_insert_with(|| toml::Value::Array(Vec::new()));
    match args {
        toml::Value::Array(a) => a.extend(words.into_iter().map(toml::Value::String)),
        _ => return Err(src.err(at, "args is not a list of strings; write args = [\"...\"]")),
    }
    Ok(())
}

fn workload_args(w: &WorkloadEntry) -> Vec<String> {
    let mut a = Vec::new();
    let mut flag = |f: &str, v: Option<String>| {
        if let Some(v) = v {
            a.push(f.to_string());
            a.push(v);
        }
    };
    flag("--profile", w.profile.clone());
    flag("--load-rows", w.load_rows.map(|v| v.to_string()));
    flag("--i1-rows", w.i1_rows.map(|v| v.to_string()));
    flag("--i2-rows", w.i2_rows.map(|v| v.to_string()));
    flag("--query-seconds", w.query_seconds.map(|v| v.to_string()));
    flag("--settle-seconds", w.settle_seconds.map(|v| v.to_string()));
    flag("--clients", w.clients.map(|v| v.to_string()));
    flag("--steps", w.steps.as_ref().map(|s| s.join(",")));
    flag(
        "--query-rates",
        w.query_rates.as_ref().map(|r| {
            r.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(",")
        }),
    );
    flag("--workload", w.workload.clone());
    flag("--micro-tables", w.micro_tables.map(|v| v.to_string()));
    flag("--micro-rows", w.micro_rows.map(|v| v.to_string()));
    flag("--micro-seconds", w.micro_seconds.map(|v| v.to_string()));
    if w.shared_table == Some(true) {
        a.push("--shared-table".into());
    }
    a.extend(w.args.iter().cloned());
    a
}

/// Flags the matrix sets itself.
const RESERVED_FLAGS: [&str; 6] = [
    "--url",
    "--out",
    "--label",
    "--engine",
    "--server-dir",
    "--server-pid",
];
