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
            if let Some(problem) = setting_problem(k, v) {
                return Err(src.err(entry, problem));
            }
            setting_text(v, postgres)
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
            .map(|v| format!("{setting}-{}", value_name(v)))
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
                if let Some(problem) = setting_problem(&axis.setting, v) {
                    return Err(src.err(&entry, problem));
                }
                let text = setting_text(v, postgres).ok_or_else(|| {
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

/// A setting's value as config text for a server kind.
fn setting_text(v: &toml::Value, postgres: bool) -> Option<String> {
    Some(match v {
        toml::Value::String(s) if postgres => format!("'{}'", s.replace('\'', "''")),
        // MySQL option files: a value with blanks, quotes, `#` or `\` goes in double quotes,
        // with `\` and `"` escaped.
        toml::Value::String(s)
            if s.is_empty() || s.contains(|c: char| c.is_whitespace() || "\"'#\\;".contains(c)) =>
        {
            format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
        }
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) if postgres => (if *b { "on" } else { "off" }).to_string(),
        toml::Value::Boolean(b) => (if *b { "ON" } else { "OFF" }).to_string(),
        _ => return None,
    })
}

/// Why `name = value` cannot go into a generated config file, if it cannot: a name that is not
/// an identifier (letters, digits, `_`, `.`, `-`, starting with a letter or `_`), or a value
/// with a line break or another control character (either would write lines of its own).
fn setting_problem(name: &str, value: &toml::Value) -> Option<String> {
    let name_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    if !name_ok {
        return Some(format!(
            "setting name {name:?} is not a setting name (letters, digits, _ . -); fix the name"
        ));
    }
    if let toml::Value::String(s) = value
        && s.chars().any(char::is_control)
    {
        return Some(format!(
            "the value of {name} holds a line break or another control character; write it on one line"
        ));
    }
    None
}

/// A value as it appears in a generated name (`lz4`, `on`, `256kB`).
fn value_name(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_that_would_write_lines_of_their_own_are_refused() {
        let v = toml::Value::String("'evil'".into());
        assert!(setting_problem("fsync = off\nshared_preload_libraries", &v).is_some());
        assert!(setting_problem("fsync", &toml::Value::String("off\nevil = 1".into())).is_some());
        assert!(setting_problem("a b", &v).is_some());
        assert!(setting_problem("", &v).is_some());
        assert_eq!(setting_problem("auto_explain.log_min_duration", &v), None);
        assert_eq!(setting_problem("loose-rocksdb_x", &v), None);
        // MySQL option file values that need quoting get it.
        let spaced = toml::Value::String("a b#c".into());
        assert_eq!(setting_text(&spaced, false).unwrap(), "\"a b#c\"");
        let quoted = toml::Value::String("it's".into());
        assert_eq!(setting_text(&quoted, true).unwrap(), "'it''s'");
    }

    #[test]
    fn settings_render_per_kind() {
        let s = toml::Value::String("lz4".into());
        assert_eq!(setting_text(&s, true).unwrap(), "'lz4'");
        assert_eq!(setting_text(&s, false).unwrap(), "lz4");
        let b = toml::Value::Boolean(false);
        assert_eq!(setting_text(&b, true).unwrap(), "off");
        assert_eq!(setting_text(&b, false).unwrap(), "OFF");
        assert!(setting_text(&toml::Value::Array(vec![]), true).is_none());
    }
}
