//! The matrix file (TOML) as data, read strictly: an unknown key, a missing bindir, a duplicate
//! or an empty axis is one error line naming the file, the entry and the fix.
//!
//! The format is documented with examples in docs/matrix.md.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Deserialize;

use crate::results::replication::{NO_REPLICA, ReplicaMode};
use crate::results::target::Engine;

/// The whole file, every entry read into its type (in file order).
#[derive(Debug)]
pub struct MatrixFile {
    /// How many times each cell runs (default 1).
    pub repeats: u32,
    /// Order of the cells when repeats > 1.
    pub order: Order,
    /// With `order = "duet"`: pin each side's server and clients to its own half of the
    /// host's CPUs, the halves swapping sides every round.
    pub pin: bool,
    /// Named servers.
    pub servers: Vec<(String, ServerEntry)>,
    /// Named config sets; a server uses the set named after its kind unless it names one.
    pub configs: Vec<(String, ConfigSetEntry)>,
    /// Named workloads.
    pub workloads: Vec<(String, WorkloadEntry)>,
    /// Named groups of cells compared in one report each.
    pub groups: Vec<(String, GroupEntry)>,
}

/// The file as written: its sections as TOML tables, each entry still to be read (so that an
/// error names the entry).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default = "one")]
    repeats: u32,
    #[serde(default)]
    order: Order,
    #[serde(default)]
    pin: bool,
    #[serde(default)]
    servers: toml::Table,
    #[serde(default)]
    configs: toml::Table,
    #[serde(default)]
    workloads: toml::Table,
    #[serde(default)]
    groups: toml::Table,
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
    /// One repeat of every cell, then the next, every other round backwards: A B B A A B
    /// (neither a slow drift of the host nor the position in a pair favours one cell).
    Interleaved,
    /// The two combinations of a round at the same time on one host, each on its own private
    /// server, every step started together on both sides (`matrix::duet`).
    Duet,
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
    /// Attach a private replica to each cell's server and measure it (`--replica-url`):
    /// `async` or `sync` (PostgreSQL), `async` or `semisync` (MariaDB; its primary then
    /// writes a binary log). docs/replication.md.
    pub replica: Option<crate::replication::ReplicaMode>,
    /// Lose the primary during a step and promote the replica (`--failover STEP+SECONDS`,
    /// e.g. `"l.i1+10s"`): needs a `replica`. A list (`["none", "l.i1+10s"]`) is an axis, as
    /// `replica`'s is. docs/failover.md.
    pub failover: Option<String>,
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

/// `[workloads.NAME]`: `ibench run`'s options and the axes that vary them.
#[derive(Debug, Clone)]
pub struct WorkloadEntry {
    /// The run options as written, `axes` taken out: read as `RunArgs` once per variant,
    /// after its axes' values are set (see `matrix::workloads`).
    pub options: toml::Table,
    /// `[[workloads.NAME.axes]]`, when the entry has them.
    pub axes: Option<Vec<WorkloadAxisEntry>>,
}

/// Keys the matrix sets for each cell; a workload may not.
pub const RESERVED_KEYS: [&str; 7] = [
    "url",
    "out",
    "label",
    "engine",
    "server_dir",
    "server_pid",
    "quiet",
];

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
#[derive(Debug, Clone, Default, Deserialize)]
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
        entry_error(&self.path, entry, what)
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
    let raw: RawFile = toml::from_str(&text).map_err(|e| {
        let duplicate = e
            .message()
            .contains("duplicate")
            .then(|| e.span().and_then(|s| Some((text.get(s.clone())?, s.start))))
            .flatten();
        match duplicate {
            Some((key, at)) if !in_table_header(&text, at) => anyhow::anyhow!(
                "{}: {} `{}`: the key is set twice in one table; keep one (a list takes several values, e.g. steps = [\"l.i0\", \"l.x\"])",
                path.display(),
                toml_error(&e),
                key.trim()
            ),
            Some((key, _)) => anyhow::anyhow!(
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
    let file = decode(path, raw)?;
    Ok(Source {
        path: path.to_path_buf(),
        text,
        file,
    })
}

/// Whether byte `at` of `text` is on a table header line (`[servers.a]`), not a key's.
fn in_table_header(text: &str, at: usize) -> bool {
    let start = text
        .get(..at)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    text.get(start..)
        .is_some_and(|l| l.trim_start().starts_with('['))
}

/// The most cells a matrix may have: past it, a file is a typo (`repeats = 100000000`, an axis
/// product of millions), not a plan; refused before anything is allocated for the cells.
pub const MAX_CELLS: usize = 10_000;

/// Refuse a file without a server or a workload, or whose repeats are 0 or more than
/// [`MAX_CELLS`].
fn check_file(path: &Path, raw: &RawFile) -> Result<()> {
    if raw.repeats == 0 {
        return Err(entry_error(
            path,
            "repeats",
            "must be at least 1; set repeats = 1 or more",
        ));
    }
    if usize::try_from(raw.repeats).map_or(true, |r| r > MAX_CELLS) {
        return Err(entry_error(
            path,
            "repeats",
            format!(
                "{} is more cells than a matrix may have ({MAX_CELLS}); set repeats = 1 to 10 as the published runs do",
                raw.repeats
            ),
        ));
    }
    if raw.servers.is_empty() {
        return Err(entry_error(
            path,
            "servers",
            "no server; add one, e.g. [servers.pg15] kind = \"postgres\" bindir = \"/usr/lib/postgresql/15/bin\"",
        ));
    }
    if raw.workloads.is_empty() {
        return Err(entry_error(
            path,
            "workloads",
            "no workload; add one, e.g. [workloads.small] profile = \"small\"",
        ));
    }
    Ok(())
}

/// Check the file, then read every entry into its type, in file order: config sets,
/// workloads, servers, groups. An error names the entry.
fn decode(path: &Path, raw: RawFile) -> Result<MatrixFile> {
    check_file(path, &raw)?;
    let configs = raw
        .configs
        .iter()
        .map(|(name, v)| Ok((name.clone(), entry(path, "configs", name, v)?)))
        .collect::<Result<_>>()?;
    let workloads = raw
        .workloads
        .iter()
        .map(|(name, v)| Ok((name.clone(), workload_entry(path, name, v)?)))
        .collect::<Result<_>>()?;
    let mut servers = Vec::new();
    for (name, v) in &raw.servers {
        let failover_listed = v.get("failover").is_some_and(|f| f.as_array().is_some());
        for (name, v) in replica_axis(path, name, v)? {
            for (name, v) in failover_axis(path, &name, &v)? {
                // The axes' product leaves out a failover without a replica: there is
                // nothing to promote (a single failover without one is refused at plan).
                if failover_listed && v.get("failover").is_some() && v.get("replica").is_none() {
                    continue;
                }
                let server = entry(path, "servers", &name, &v)?;
                servers.push((name, server));
            }
        }
    }
    let groups = raw
        .groups
        .iter()
        .map(|(name, v)| Ok((name.clone(), entry(path, "groups", name, v)?)))
        .collect::<Result<_>>()?;
    Ok(MatrixFile {
        repeats: raw.repeats,
        order: raw.order,
        pin: raw.pin,
        servers,
        configs,
        workloads,
        groups,
    })
}

/// `FILE: ENTRY: what`.
fn entry_error(path: &Path, entry: &str, what: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{}: {entry}: {what}", path.display())
}

/// One `[workloads.NAME]`: a table of run options with no key the matrix sets itself, and
/// its axes.
fn workload_entry(path: &Path, name: &str, v: &toml::Value) -> Result<WorkloadEntry> {
    check_name_in(path, "workloads", name)?;
    let entry = format!("workloads.{name}");
    let Some(table) = v.as_table() else {
        return Err(entry_error(
            path,
            &entry,
            "a workload is a table of run options; write [workloads.NAME]",
        ));
    };
    if table.contains_key("args") {
        return Err(entry_error(
            path,
            &entry,
            "args is no longer read: write each ibench run flag as a key of its own (--load-batch 10 becomes load_batch = 10)",
        ));
    }
    if let Some(k) = RESERVED_KEYS.iter().find(|k| table.contains_key(**k)) {
        return Err(entry_error(
            path,
            &entry,
            format!("{k} is set by the matrix for each cell; remove it from the workload"),
        ));
    }
    let mut options = table.clone();
    let axes = match options.remove("axes") {
        None => None,
        Some(a) => Some(a.try_into().map_err(|e: toml::de::Error| {
            entry_error(
                path,
                &format!("{entry}.axes"),
                format!("{}; see docs/matrix.md", toml_error(&e)),
            )
        })?),
    };
    Ok(WorkloadEntry { options, axes })
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
fn entry<T: serde::de::DeserializeOwned>(
    path: &Path,
    section: &str,
    name: &str,
    value: &toml::Value,
) -> Result<T> {
    check_name_in(path, section, name)?;
    value.clone().try_into::<T>().map_err(|e| {
        entry_error(
            path,
            &format!("{section}.{name}"),
            format!("{}; see docs/matrix.md for the keys", toml_error(&e)),
        )
    })
}

/// A server whose `replica` is a list (`["none", "async", "sync"]`: replication as an axis)
/// becomes one server per value, named `NAME-VALUE`, each with that one mode (`none`: no
/// replica); any other server is itself.
fn replica_axis(path: &Path, name: &str, v: &toml::Value) -> Result<Vec<(String, toml::Value)>> {
    let Some(modes) = v.get("replica").and_then(toml::Value::as_array) else {
        return Ok(vec![(name.to_string(), v.clone())]);
    };
    let entry = format!("servers.{name}.replica");
    let fix = "write replica = [\"none\", \"async\", \"sync\"] (MariaDB: \"semisync\"), each once";
    if modes.is_empty() {
        return Err(entry_error(path, &entry, format!("an empty list; {fix}")));
    }
    let mut out: Vec<(String, toml::Value)> = Vec::new();
    for mode in modes {
        let Some(mode) = mode.as_str() else {
            return Err(entry_error(
                path,
                &entry,
                format!("{mode} is not a mode's name; {fix}"),
            ));
        };
        if mode != NO_REPLICA && ReplicaMode::of_name(mode).is_none() {
            return Err(entry_error(
                path,
                &entry,
                format!("unknown mode \"{mode}\"; {fix}"),
            ));
        }
        let member = format!("{name}-{mode}");
        if out.iter().any(|(n, _)| *n == member) {
            return Err(entry_error(
                path,
                &entry,
                format!("\"{mode}\" twice; {fix}"),
            ));
        }
        let mut table = v.clone();
        if let Some(t) = table.as_table_mut() {
            if mode == NO_REPLICA {
                t.remove("replica");
            } else {
                t.insert("replica".to_string(), toml::Value::String(mode.to_string()));
            }
        }
        out.push((member, table));
    }
    Ok(out)
}

/// A server whose `failover` is a list (`["none", "l.i1+10s"]`: failover as an axis) becomes
/// one server per value: `NAME-none` without a failover, `NAME-failover-l_i1_10s` with one
/// (the moment's `.` and `+` as `_`); any other server is itself. Each value is read as
/// `--failover` reads it.
fn failover_axis(path: &Path, name: &str, v: &toml::Value) -> Result<Vec<(String, toml::Value)>> {
    let entry = format!("servers.{name}.failover");
    let fix = "write failover = [\"none\", \"l.i1+10s\"] (none, or STEP+SECONDS: the step and how far into it the primary is lost), each once";
    let values = match v.get("failover") {
        None => return Ok(vec![(name.to_string(), v.clone())]),
        Some(toml::Value::Array(values)) => values.clone(),
        Some(toml::Value::String(one)) => {
            one.parse::<crate::results::failover::FailoverAt>()
                .map_err(|e| entry_error(path, &entry, format!("{e}; {fix}")))?;
            return Ok(vec![(name.to_string(), v.clone())]);
        }
        Some(other) => {
            return Err(entry_error(
                path,
                &entry,
                format!("{other} is not a moment; {fix}"),
            ));
        }
    };
    if values.is_empty() {
        return Err(entry_error(path, &entry, format!("an empty list; {fix}")));
    }
    let mut out: Vec<(String, toml::Value)> = Vec::new();
    for value in &values {
        let Some(text) = value.as_str() else {
            return Err(entry_error(
                path,
                &entry,
                format!("{value} is not a moment; {fix}"),
            ));
        };
        let member = if text == "none" {
            format!("{name}-none")
        } else {
            let at: crate::results::failover::FailoverAt = text
                .parse()
                .map_err(|e| entry_error(path, &entry, format!("{e}; {fix}")))?;
            let tag: String = at
                .to_string()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            format!("{name}-failover-{tag}")
        };
        if out.iter().any(|(n, _)| *n == member) {
            return Err(entry_error(
                path,
                &entry,
                format!("\"{text}\" twice; {fix}"),
            ));
        }
        let mut table = v.clone();
        if let Some(t) = table.as_table_mut() {
            if text == "none" {
                t.remove("failover");
            } else {
                t.insert(
                    "failover".to_string(),
                    toml::Value::String(text.to_string()),
                );
            }
        }
        out.push((member, table));
    }
    Ok(out)
}

/// Names become parts of directory names: letters, digits, `-` and `_` only.
pub fn check_name(src: &Source, section: &str, name: &str) -> Result<()> {
    check_name_in(&src.path, section, name)
}

/// [`check_name`] in the file at `path`.
fn check_name_in(path: &Path, section: &str, name: &str) -> Result<()> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        bail!(
            "{}",
            entry_error(
                path,
                &format!("{section}.{name}"),
                "a name may hold only letters, digits, '-' and '_'; rename it"
            )
        );
    }
    Ok(())
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
        .min_by_key(|k| crate::suggest::edit_distance(name, k));
    match nearest {
        Some(k) => format!("unknown key `{name}` (the nearest key is `{k}`)"),
        None => msg.to_string(),
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
    }

    #[test]
    fn unknown_keys_are_refused() {
        let e = toml::from_str::<RawFile>("repeat = 2\n").unwrap_err();
        assert!(
            toml_error(&e).contains("unknown key `repeat` (the nearest key is `repeats`)"),
            "{}",
            toml_error(&e)
        );
    }

    /// `replica` × `failover` in one file: a server per combination, the failover without a
    /// replica left out; a bad value names `servers.NAME.failover` and the fix.
    #[test]
    fn a_list_of_failovers_is_an_axis_beside_the_replicas() {
        let raw: RawFile = toml::from_str(
            "[servers.pg]\nkind = \"postgres\"\nbindir = \"/b\"\nreplica = [\"none\", \"async\", \"sync\"]\n\
             failover = [\"none\", \"l.i1+10s\"]\n[workloads.w]\nload_rows = 10\n",
        )
        .unwrap();
        let f = decode(Path::new("m.toml"), raw).unwrap();
        let got: Vec<(&str, Option<&str>, Option<&str>)> = f
            .servers
            .iter()
            .map(|(n, s)| {
                (
                    n.as_str(),
                    s.replica.map(|m| m.name()),
                    s.failover.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("pg-none-none", None, None),
                ("pg-async-none", Some("async"), None),
                (
                    "pg-async-failover-l_i1_10s",
                    Some("async"),
                    Some("l.i1+10s")
                ),
                ("pg-sync-none", Some("sync"), None),
                ("pg-sync-failover-l_i1_10s", Some("sync"), Some("l.i1+10s")),
            ]
        );
        for (value, says) in [
            ("[]", "an empty list"),
            ("[\"l.i1+1s\", \"l.i1+1s\"]", "twice"),
            ("[\"none\", \"soon\"]", "give STEP+SECONDS"),
            ("\"l.i9+1s\"", "give STEP+SECONDS"),
            ("[\"none\", 3]", "3 is not a moment"),
        ] {
            let raw: RawFile = toml::from_str(&format!(
                "[servers.pg]\nkind = \"postgres\"\nreplica = \"async\"\nfailover = {value}\n[workloads.w]\nload_rows = 10\n"
            ))
            .unwrap();
            let e = format!("{:#}", decode(Path::new("m.toml"), raw).unwrap_err());
            assert!(
                e.starts_with("m.toml: servers.pg.failover: ") && e.contains(says),
                "{e}"
            );
            assert!(e.contains("failover = [\"none\", \"l.i1+10s\"]"), "{e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    #[test]
    fn a_list_of_replica_modes_is_one_server_per_mode() {
        let raw: RawFile = toml::from_str(
            "[servers.pg]\nkind = \"postgres\"\nbindir = \"/b\"\nreplica = [\"none\", \"async\", \"sync\"]\n\
             [servers.my]\nkind = \"mariadb\"\nbindir = \"/b\"\nreplica = \"semisync\"\n\
             [workloads.w]\nload_rows = 10\n",
        )
        .unwrap();
        let f = decode(Path::new("m.toml"), raw).unwrap();
        let got: Vec<(&str, Option<&str>)> = f
            .servers
            .iter()
            .map(|(n, s)| (n.as_str(), s.replica.map(|m| m.name())))
            .collect();
        assert_eq!(
            got,
            [
                ("pg-none", None),
                ("pg-async", Some("async")),
                ("pg-sync", Some("sync")),
                ("my", Some("semisync")),
            ]
        );
        for (list, says) in [
            ("[]", "an empty list"),
            ("[\"async\", \"async\"]", "\"async\" twice"),
            ("[\"none\", \"fast\"]", "unknown mode \"fast\""),
            ("[\"none\", 1]", "1 is not a mode's name"),
        ] {
            let raw: RawFile = toml::from_str(&format!(
                "[servers.pg]\nkind = \"postgres\"\nreplica = {list}\n[workloads.w]\nload_rows = 10\n"
            ))
            .unwrap();
            let e = format!("{:#}", decode(Path::new("m.toml"), raw).unwrap_err());
            assert!(
                e.starts_with("m.toml: servers.pg.replica: ") && e.contains(says),
                "{e}"
            );
            assert!(
                e.contains("replica = [\"none\", \"async\", \"sync\"]"),
                "{e}"
            );
        }
    }
}
