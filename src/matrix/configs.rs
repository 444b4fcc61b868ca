//! The config sets of a matrix file: a base file, one-line variants, and axes whose cartesian
//! product gives generated configs.

use std::collections::BTreeSet;

use anyhow::Result;

use super::file::{self, AxisEntry, ConfigSetEntry, Source};
use super::plan::*;

/// Rendered settings: (name, value as config text).
type Settings = Vec<(String, String)>;

/// The text of the base config file of a set, if it names one.
fn read_base_text(
    src: &Source,
    at: &dyn Fn(&str) -> String,
    set: &ConfigSetEntry,
) -> Result<Option<String>> {
    let Some(p) = &set.base else {
        return Ok(None);
    };
    let path = src.resolve(p);
    std::fs::read_to_string(&path).map(Some).map_err(|e| {
        src.err(
            &at(".base"),
            format!(
                "cannot read {} ({e}); fix the path (relative to the matrix file)",
                path.display()
            ),
        )
    })
}

/// A generated config file: the base text, then the settings under a comment naming them.
fn config_text(
    base_text: Option<&str>,
    postgres: bool,
    settings: &[(String, String)],
    title: &str,
) -> String {
    let section_header = if postgres { "" } else { "[mysqld]\n" };
    let mut t = base_text.unwrap_or_default().to_string();
    if !t.is_empty() && !t.ends_with('\n') {
        t.push('\n');
    }
    t.push_str(&format!("\n# ibench matrix: {title}\n{section_header}"));
    for (k, v) in settings {
        t.push_str(&format!("{k} = {v}\n"));
    }
    t
}

/// The settings of one variant, rendered as config text.
fn variant_settings(
    src: &Source,
    entry: &str,
    table: &toml::Table,
    postgres: bool,
) -> Result<Settings> {
    if table.is_empty() {
        return Err(src.err(
            entry,
            "no settings; give at least one, e.g. { wal_compression = \"lz4\" }",
        ));
    }
    table
        .iter()
        .map(|(k, v)| {
            if let Some(problem) = file::setting_problem(k, v) {
                return Err(src.err(entry, problem));
            }
            file::setting_text(v, postgres)
                .map(|t| (k.clone(), t))
                .ok_or_else(|| {
                    src.err(
                        entry,
                        format!(
                            "setting {k} is not a string, number or boolean; write its value as one"
                        ),
                    )
                })
        })
        .collect()
}

/// The names of an axis' values: given, or `SETTING-VALUE`.
pub fn axis_names(src: &Source, entry: &str, axis: &AxisEntry) -> Result<Vec<String>> {
    let AxisEntry {
        setting,
        values,
        names,
    } = axis;
    if values.is_empty() {
        return Err(src.err(
            entry,
            "the axis has no values; give at least one in values = [...] or remove the axis",
        ));
    }
    let names: Vec<String> = match names {
        Some(n) if n.len() != values.len() => {
            return Err(src.err(
                entry,
                format!(
                    "{} names for {} values; give one name per value",
                    n.len(),
                    values.len()
                ),
            ));
        }
        Some(n) => n.clone(),
        None => values
            .iter()
            .map(|v| format!("{setting}-{}", file::value_name(v)))
            .collect(),
    };
    for n in &names {
        file::check_name(src, entry, n)?;
    }
    Ok(names)
}

/// Refuse axes whose product (of `lengths`, the axes' value counts) has more `what`
/// (configs, variants) than a matrix may have cells, before anything is allocated.
pub fn check_axes_product(
    src: &Source,
    entry: &str,
    lengths: impl Iterator<Item = usize>,
    what: &str,
) -> Result<()> {
    let product = lengths
        .into_iter()
        .try_fold(1usize, usize::checked_mul)
        .unwrap_or(usize::MAX);
    if product > MAX_CELLS {
        return Err(src.err(
            entry,
            format!(
                "the axes give {} {what}, more than a matrix may have ({MAX_CELLS} cells); shrink the axes' values",
                if product == usize::MAX { "too many".to_string() } else { product.to_string() }
            ),
        ));
    }
    Ok(())
}

/// The cartesian product of the axes: (value names, settings) per combination.
fn axis_product(
    src: &Source,
    at: &dyn Fn(&str) -> String,
    axes: &[AxisEntry],
    postgres: bool,
) -> Result<Vec<(Vec<String>, Settings)>> {
    check_axes_product(
        src,
        &at(".axes"),
        axes.iter().map(|a| a.values.len()),
        "configs",
    )?;
    let mut combos: Vec<(Vec<String>, Settings)> = vec![(Vec::new(), Vec::new())];
    for (i, axis) in axes.iter().enumerate() {
        let entry = at(&format!(".axes[{i}] ({})", axis.setting));
        let names = axis_names(src, &entry, axis)?;
        let mut next = Vec::new();
        for (done_names, done_settings) in &combos {
            for (v, n) in axis.values.iter().zip(&names) {
                if let Some(problem) = file::setting_problem(&axis.setting, v) {
                    return Err(src.err(&entry, problem));
                }
                let text = file::setting_text(v, postgres).ok_or_else(|| {
                    src.err(
                        &entry,
                        "a value is not a string, number or boolean; write it as one",
                    )
                })?;
                let mut nn = done_names.clone();
                nn.push(n.clone());
                let mut ss = done_settings.clone();
                ss.push((axis.setting.clone(), text));
                next.push((nn, ss));
            }
        }
        combos = next;
    }
    Ok(combos)
}

/// The configs of one set, in order: base, variants, then the axes' product.
pub(super) fn resolve_config_set(
    src: &Source,
    set_name: &str,
    set: &ConfigSetEntry,
    postgres: bool,
) -> Result<Vec<PlanConfig>> {
    let at = |rest: &str| format!("configs.{set_name}{rest}");
    let base_text = read_base_text(src, &at, set)?;
    let mut out: Vec<PlanConfig> = Vec::new();
    if set.include_base {
        out.push(PlanConfig {
            name: "base".into(),
            entry: at(".base"),
            text: base_text.clone(),
        });
    }
    for (name, value) in &set.variants {
        let entry = at(&format!(".variants.{name}"));
        file::check_name(src, &at(".variants"), name)?;
        let toml::Value::Table(table) = value else {
            return Err(src.err(&entry, "a variant is a table of settings, e.g. lz4 = { wal_compression = \"lz4\" }; write it as one"));
        };
        let settings = variant_settings(src, &entry, table, postgres)?;
        out.push(PlanConfig {
            name: name.clone(),
            entry: entry.clone(),
            text: Some(config_text(
                base_text.as_deref(),
                postgres,
                &settings,
                &format!("variant {name}"),
            )),
        });
    }
    if !set.axes.is_empty() {
        // Names joined with '_'.
        for (names, settings) in axis_product(src, &at, &set.axes, postgres)? {
            let name = names.join("_");
            out.push(PlanConfig {
                entry: at(&format!(".axes ({name})")),
                text: Some(config_text(
                    base_text.as_deref(),
                    postgres,
                    &settings,
                    &format!("axes {name}"),
                )),
                name,
            });
        }
    }
    let mut seen = BTreeSet::new();
    for c in &out {
        if !seen.insert(c.name.clone()) {
            return Err(src.err(
                &c.entry,
                format!(
                    "config name '{}' is used twice; rename the variant or the axis value names",
                    c.name
                ),
            ));
        }
    }
    if out.is_empty() {
        return Err(src.err(&at(""), "the set has no config (include_base = false and no variants or axes); add a variant or set include_base = true"));
    }
    Ok(out)
}
