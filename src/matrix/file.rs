//! The matrix file (TOML) as data, read strictly: an unknown key, a missing bindir, a duplicate
//! or an empty axis is one error line naming the file, the entry and the fix.
//!
//! The format is documented with examples in docs/matrix.md.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Deserialize;

use crate::results::target::Engine;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixFile {
    /// How many times each cell runs (default 1).
    #[serde(default = "one")]
    pub repeats: u32,
    /// Order of the cells when repeats > 1.
    #[serde(default)]
    pub order: Order,
    /// Named servers (in file order).
    #[serde(default)]
    pub servers: toml::Table,
    /// Named config sets; a server uses the set named after its kind unless it names one.
    #[serde(default)]
    pub configs: toml::Table,
    /// Named workloads.
    #[serde(default)]
    pub workloads: toml::Table,
    /// Named groups of cells compared in one report each.
    #[serde(default)]
    pub groups: toml::Table,
}

fn one() -> u32 {
    1
}

/// The order cells run in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Every repeat of a cell back to back: A A B B.
    #[default]
    Sequential,
    /// One repeat of every cell, then the next: A B A B (slow drift of the host does not
    /// favour one cell).
    Interleaved,
}

/// `[servers.NAME]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerEntry {
    /// `postgres`, `mariadb` or `mysql` (the same: MariaDB binaries); not with `url`.
    pub kind: Option<String>,
    /// Storage engine (MariaDB/MySQL): innodb or rocksdb.
    pub engine: Option<Engine>,
    /// Directory of the server binaries.
    pub bindir: Option<PathBuf>,
    /// Extra arguments for initdb / mariadb-install-db.
    #[serde(default)]
    pub init_args: Vec<String>,
    /// Config set to use (default: the set named after the kind).
    pub config_set: Option<String>,
    /// Only these configs of the set (default: all).
    pub configs: Option<Vec<String>>,
    /// Label prefix in reports (default: DBMS, version and engine).
    pub label: Option<String>,
    /// A server ibench does not manage: runs go to this URL; no config is applied.
    pub url: Option<String>,
}

/// `[configs.NAME]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigSetEntry {
    /// The base config file (relative to the matrix file), applied to every config of the set.
    pub base: Option<PathBuf>,
    /// Whether the base alone is a config named `base` (default true).
    #[serde(default = "yes")]
    pub include_base: bool,
    /// Named variants: settings added to (or overriding) the base.
    #[serde(default)]
    pub variants: toml::Table,
    /// Axes whose cartesian product gives generated configs.
    #[serde(default)]
    pub axes: Vec<AxisEntry>,
}

fn yes() -> bool {
    true
}

/// `[[configs.NAME.axes]]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxisEntry {
    /// The setting this axis varies.
    pub setting: String,
    /// Its values.
    pub values: Vec<toml::Value>,
    /// Short names of the values for generated config names (default: setting=value).
    pub names: Option<Vec<String>>,
}

/// `[[workloads.NAME.axes]]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadAxisEntry {
    /// The run option this axis varies: any `ibench run` option's name with `_` (`clients`,
    /// `load_rows`, `load_batch` for `--load-batch`).
    pub option: String,
    /// Its values.
    pub values: Vec<toml::Value>,
    /// Short names of the values for the variants' names (default: option-value).
    pub names: Option<Vec<String>>,
}

/// `[groups.NAME]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupEntry {
    /// Servers in the group (default: all).
    pub servers: Option<Vec<String>>,
    /// Configs in the group (default: all of each server).
    pub configs: Option<Vec<String>>,
    /// Workloads (default: all); one report per workload.
    pub workloads: Option<Vec<String>>,
    /// The base, `SERVER.CONFIG` (default: the group's first server and config).
    pub base: Option<String>,
}

/// A parsed file with where it came from.
#[derive(Debug)]
pub struct Source {
    /// The file's path as given.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// Its contents.
    pub file: MatrixFile,
}

impl Source {
    /// An error line: `FILE: ENTRY: what; fix`.
    pub fn err(&self, entry: &str, what: impl std::fmt::Display) -> anyhow::Error {
        anyhow::anyhow!("{}: {entry}: {what}", self.path.display())
    }

    /// A path in the file, relative to the file's directory.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.path.parent().unwrap_or_else(|| Path::new(".")).join(p)
        }
    }
}

/// Read and parse a matrix file.
pub fn read(path: &Path) -> Result<Source> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        anyhow::anyhow!(
            "cannot read the matrix file {}: {e}; give the path of a matrix TOML file (see docs/matrix.md)",
            path.display()
        )
    })?;
    let file: MatrixFile = toml::from_str(&text).map_err(|e| {
        let duplicate = e
            .message()
            .contains("duplicate")
            .then(|| e.span().and_then(|s| text.get(s)))
            .flatten();
        match duplicate {
            Some(key) => anyhow::anyhow!(
                "{}: {} `{}`; every server, config set, workload and group needs its own name: rename or remove one",
                path.display(),
                toml_error(&e),
                key.trim()
            ),
            None => anyhow::anyhow!(
                "{}: {}; see docs/matrix.md for the keys",
                path.display(),
                toml_error(&e)
            ),
        }
    })?;
    Ok(Source {
        path: path.to_path_buf(),
        text,
        file,
    })
}

/// A toml error as one line: its message and where.
pub fn toml_error(e: &toml::de::Error) -> String {
    let msg = nearest_key(&e.message().trim().replace('\n', " "));
    match e.span() {
        Some(_) => {
            // The Display form starts with "TOML parse error at line L, column C".
            let shown = e.to_string();
            let at = shown
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("TOML parse error at "))
                .map(|s| format!(" (at {s})"))
                .unwrap_or_default();
            format!("{msg}{at}")
        }
        None => msg,
    }
}

/// Deserialize one entry of a table, errors naming `section.name`.
pub fn entry<T: serde::de::DeserializeOwned>(
    src: &Source,
    section: &str,
    name: &str,
    value: &toml::Value,
) -> Result<T> {
    check_name(src, section, name)?;
    value.clone().try_into::<T>().map_err(|e| {
        src.err(
            &format!("{section}.{name}"),
            format!("{}; see docs/matrix.md for the keys", toml_error(&e)),
        )
    })
}

/// Names become parts of directory names: letters, digits, `-` and `_` only.
pub fn check_name(src: &Source, section: &str, name: &str) -> Result<()> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!(
            "{}",
            src.err(
                &format!("{section}.{name}"),
                "a name may hold only letters, digits, '-' and '_'; rename it"
            )
        );
    }
    Ok(())
}

/// A setting's value as config text for a server kind.
pub fn setting_text(v: &toml::Value, postgres: bool) -> Option<String> {
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
pub fn setting_problem(name: &str, value: &toml::Value) -> Option<String> {
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

/// serde's `unknown field `x`, expected one of `a`, `b`, ...` as `unknown key `x` (the
/// nearest key is `b`)`: the list of every key is long, the nearest one is the likely fix.
fn nearest_key(msg: &str) -> String {
    let Some((head, list)) = msg.split_once(", expected one of ") else {
        return msg.to_string();
    };
    let Some(unknown) = head.strip_prefix("unknown field ") else {
        return msg.to_string();
    };
    let name = unknown.trim_matches('`');
    let nearest = list
        .split(", ")
        .map(|k| k.trim_matches('`'))
        .min_by_key(|k| edit_distance(name, k));
    match nearest {
        Some(k) => format!("unknown key `{name}` (the nearest key is `{k}`)"),
        None => msg.to_string(),
    }
}

/// Levenshtein distance between two short names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A value as it appears in a generated name (`lz4`, `on`, `256kB`).
pub fn value_name(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_key_names_the_nearest_one() {
        assert_eq!(
            nearest_key(
                "unknown field `load_bach`, expected one of `url`, `load_batch`, `clients`"
            ),
            "unknown key `load_bach` (the nearest key is `load_batch`)"
        );
        assert_eq!(nearest_key("invalid type: string"), "invalid type: string");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

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

    #[test]
    fn unknown_keys_are_refused() {
        let e = toml::from_str::<MatrixFile>("repeat = 2\n").unwrap_err();
        assert!(
            toml_error(&e).contains("unknown key `repeat` (the nearest key is `repeats`)"),
            "{}",
            toml_error(&e)
        );
    }
}
