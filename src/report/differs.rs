//! What differs between two runs' setups, named before any figure is read: the DBMS, its
//! build, ibench's options, the server's settings (the seeds' `conf.diff`), the host and
//! ibench's own version. A comparison of unlike runs reads the setup first; signals that
//! assume like for like (the client's CPU per op as a host signal) apply only to like runs,
//! and `ibench check` judges only runs that differ in what the comparison means to vary. A
//! step's shape (its clients, a shared table, the rows per insert) decides whether two steps
//! are like for like (`host::shape_difference`): the client's CPU per op is a host signal
//! only between steps of one shape.
//!
//! What always differs between two runs and says nothing of the setup (ports, paths, data
//! directories, pids, the host's name) is left out, and listed in one place each:
//! [`OPTIONS_LEFT_OUT`], [`SETTINGS_LEFT_OUT`] and [`HOST_LEFT_OUT`].

use serde::Serialize;

use super::load::LoadedRun;
use crate::results::RunRecord;
use crate::results::settings::{ServerSettings, SettingValue};
use crate::results::target::TargetInfo;

/// Run options (`run.json` `options`) that differ between any two runs or name no setup:
/// where the results go, the label, the terminal's quietness, how the sampler finds the
/// server; the URL's host and port are a place (its DBMS, TLS and host are compared), and the
/// engine and flavour are compared as the DBMS's.
pub const OPTIONS_LEFT_OUT: &[&str] = &[
    "url",
    "replica_url",
    "out_dir",
    "label",
    "quiet",
    "server_dir",
    "server_pid",
    "engine",
    "flavour",
    "table.engine",
    "stall_limit_seconds",
];

/// Server settings that differ between any two instances (ports, sockets, paths, pids,
/// identities, positions in a log), or repeat the DBMS's version, which is compared as the
/// DBMS's. Values are compared after each run's instance directory is replaced by one
/// placeholder, so a path inside it never differs.
pub const SETTINGS_LEFT_OUT: &[&str] = &[
    // PostgreSQL
    "port",
    "data_directory",
    "config_file",
    "hba_file",
    "ident_file",
    "external_pid_file",
    "unix_socket_directories",
    "application_name",
    "listen_addresses",
    "ssl_cert_file",
    "ssl_key_file",
    "ssl_ca_file",
    "server_version",
    "server_version_num",
    // The bound `server start --replica-of` sets from the primary's free disk space
    // (`--slot-keep auto`): it moves with the disk between cells of one setup, and it holds
    // back nothing unless a standby stops; the replication mode is compared instead.
    "max_slot_wal_keep_size",
    // MySQL and MariaDB
    "socket",
    "datadir",
    "basedir",
    "pid_file",
    "log_error",
    "hostname",
    "bind_address",
    "server_uuid",
    "server_uid",
    "report_port",
    "general_log_file",
    "slow_query_log_file",
    "log_bin_basename",
    "log_bin_index",
    "relay_log_basename",
    "relay_log_index",
    "tmpdir",
    "innodb_tmpdir",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "plugin_dir",
    "character_sets_dir",
    "lc_messages_dir",
    "aria_log_dir_path",
    "rocksdb_datadir",
    "rocksdb_wal_dir",
    "secure_file_priv",
    "gtid_binlog_pos",
    "gtid_binlog_state",
    "gtid_current_pos",
    "gtid_slave_pos",
    "ssl_cert",
    "ssl_key",
    "ssl_ca",
    "version",
    "version_comment",
    "version_compile_machine",
    "version_compile_os",
    "innodb_version",
    "protocol_version",
    // SQLite
    "sqlite_version",
];

/// Options that are listed when they differ but leave the runs alike: which steps ran (a step
/// one run lacks is shown missing, the others compare), the seed (another sample of the same
/// workload, as repeats may take), the integrity check after a step and the host probe's
/// budget (both outside the measured part), and what a run does if its replica dies.
pub const OPTIONS_STILL_LIKE: &[&str] = &[
    "--on-replica-loss",
    "--steps",
    "--seed",
    "--no-integrity-check",
    "--host-probe-ms",
];

/// PostgreSQL's shared memory's parts and the huge page's size: what
/// `shared_memory_size_in_huge_pages` is computed from.
const PG_SHARED_MEMORY_HUGE: &[&str] = &[
    "shared_buffers",
    "max_connections",
    "wal_buffers",
    "max_worker_processes",
    "max_wal_senders",
    "autovacuum_max_workers",
    "max_locks_per_transaction",
    "max_pred_locks_per_transaction",
    "max_prepared_transactions",
    "huge_page_size",
];

/// PostgreSQL's parts of its main shared memory (all of [`PG_SHARED_MEMORY_HUGE`] but the
/// huge page's size): a change in any of them changes the computed `shared_memory_size`.
const PG_SHARED_MEMORY: &[&str] = match PG_SHARED_MEMORY_HUGE.split_last() {
    Some((_, parts)) => parts,
    None => &[],
};

/// Server settings whose value follows from other settings: `(setting, its causes, only when
/// left to the server)`. Where one of its causes differs too, such a setting is a consequence,
/// not a difference of its own: "What differs" shows it under its cause and the diagnosis and
/// the tl;dr name only the cause. "Only when left to the server": the setting follows only when
/// nobody set it (PostgreSQL says `default`; MySQL and MariaDB say nothing, which counts as
/// left to the server); otherwise it is read from the server as computed, whoever set what.
pub const DERIVED_SETTINGS: &[(&str, &[&str], bool)] = &[
    // PostgreSQL computes these at start (read-only).
    ("shared_memory_size", PG_SHARED_MEMORY, false),
    (
        "shared_memory_size_in_huge_pages",
        PG_SHARED_MEMORY_HUGE,
        false,
    ),
    // -1, the default: 1/32 of shared_buffers, from 64kB to one WAL segment.
    ("wal_buffers", &["shared_buffers"], true),
    // PostgreSQL 17's SLRU caches: 0, the default, sizes them from shared_buffers.
    ("commit_timestamp_buffers", &["shared_buffers"], true),
    ("subtransaction_buffers", &["shared_buffers"], true),
    ("transaction_buffers", &["shared_buffers"], true),
    // InnoDB: MariaDB 10.8+ sizes the chunk as 1/64 of the buffer pool; MySQL 8 takes 8
    // instances for a pool of 1 GB or more, else 1, and a page cleaner per instance at most.
    (
        "innodb_buffer_pool_chunk_size",
        &["innodb_buffer_pool_size"],
        true,
    ),
    (
        "innodb_buffer_pool_instances",
        &["innodb_buffer_pool_size"],
        true,
    ),
    (
        "innodb_page_cleaners",
        &["innodb_buffer_pool_instances"],
        true,
    ),
    // Twice innodb_io_capacity (at least 2000) when not set.
    ("innodb_io_capacity_max", &["innodb_io_capacity"], true),
    // MySQL and MariaDB size these from the connections and the table cache when not set.
    (
        "open_files_limit",
        &["max_connections", "table_open_cache"],
        true,
    ),
    ("table_definition_cache", &["table_open_cache"], true),
    ("thread_cache_size", &["max_connections"], true),
    ("host_cache_size", &["max_connections"], true),
];

/// Host facts (`run.json` `host`) that name a machine rather than its kind, or a path.
pub const HOST_LEFT_OUT: &[&str] = &["hostname", "data_dir"];

/// The part of the setup a difference belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Area {
    /// The DBMS: product, version, flavour, engine, TLS.
    Dbms,
    /// How the server was built (compiler flags, configure options, binary).
    Build,
    /// The server's settings (`server-settings.json`) and what ibench set per session.
    Settings,
    /// ibench's run options (clients, sizes, rows per insert, steps, seed, ...).
    Options,
    /// The machine: CPU model, CPUs, memory, kernel, the data directory's filesystem/device.
    Host,
    /// ibench's own version.
    Ibench,
}

impl Area {
    /// The area's name as the reports write it.
    pub fn name(self) -> &'static str {
        match self {
            Area::Dbms => "DBMS",
            Area::Build => "build",
            Area::Settings => "setting",
            Area::Options => "option",
            Area::Host => "host",
            Area::Ibench => "ibench",
        }
    }

    /// True for what a comparison of versions, builds or configs means to vary: the server,
    /// its build and its settings. Runs that differ elsewhere (options, host) are not like
    /// runs.
    pub fn is_the_servers(self) -> bool {
        matches!(self, Area::Dbms | Area::Build | Area::Settings)
    }
}

/// One way a run's setup differs from the base's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// Where it belongs.
    pub area: Area,
    /// What differs, as a user names it: a flag (`--clients`), a setting (`shared_buffers`),
    /// a host fact (`cpus`), a DBMS fact (`version`).
    pub name: String,
    /// The base's value (`-` when the base has none).
    pub base: String,
    /// The run's value (`-` when the run has none).
    pub run: String,
    /// Where the run's value came from, when the server says (PostgreSQL's
    /// `pg_settings.source`: `configuration file`, `default`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The setting this one follows from, when that differs too ([`DERIVED_SETTINGS`]): a
    /// consequence, shown under its cause, not a difference of its own. The first cause of a
    /// chain (`innodb_page_cleaners` follows from `innodb_buffer_pool_instances`, which
    /// follows from `innodb_buffer_pool_size`: the pool's size).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follows: Option<String>,
}

impl Difference {
    /// `name base → run`, as the reports write one difference.
    pub fn text(&self) -> String {
        format!("{} {} → {}", self.name, self.base, self.run)
    }
}

/// How one run's setup differs from the base's.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SetupDifferences {
    /// Every difference, in area order, then by name.
    pub differences: Vec<Difference>,
    /// Settings at their built-in default on both sides whose defaults differ: counted, not
    /// listed, when the two runs' DBMS versions differ (a new major changes dozens).
    pub default_settings_differing: usize,
    /// Settings only one side has (added or removed between two versions, or a plugin or
    /// extension one side loaded, e.g. MyRocks' 170 `rocksdb_*` variables): counted, not
    /// listed, unless the side that has one says it was set (a configuration file, the
    /// command line). A server that does not say where a value came from (MySQL, MariaDB)
    /// counts as not having set it.
    pub settings_on_one_side: usize,
    /// True when one of the runs recorded no server settings (an older run, or a server
    /// that could not be asked), so the settings could not be compared.
    pub settings_unknown: bool,
    /// True when the two runs are different products (SQLite against MariaDB): their
    /// settings are not compared, and a report shows `n/a` for this run's settings.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub settings_of_another_product: bool,
    /// Build facts (`binary size`, `CC`, ...) one of the two runs could not tell (an
    /// embedded DBMS has no server binary; a remote server's binary cannot be read): not a
    /// difference, and not the same either; a report shows `n/a`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_build_facts: Vec<String>,
}

impl SetupDifferences {
    /// True when nothing differs (and the settings could be compared).
    pub fn is_empty(&self) -> bool {
        self.differences.is_empty()
            && self.default_settings_differing == 0
            && self.settings_on_one_side == 0
    }

    /// The differences that are not consequences of another ([`Difference::follows`]): the
    /// causes, what a diagnosis names.
    pub fn causes(&self) -> impl Iterator<Item = &Difference> {
        self.differences.iter().filter(|d| d.follows.is_none())
    }

    /// The differences in one area.
    pub fn in_area(&self, area: Area) -> impl Iterator<Item = &Difference> {
        self.differences.iter().filter(move |d| d.area == area)
    }

    /// The difference named `name` (a flag such as `--clients`, a setting), if any.
    pub fn named(&self, name: &str) -> Option<&Difference> {
        self.differences.iter().find(|d| d.name == name)
    }

    /// The differences outside the server (options, host): what makes two runs unlike for a
    /// comparison that means to vary only the server, its build or its config. ibench's
    /// own version is not among them, nor the options that leave each step's work alike
    /// ([`OPTIONS_STILL_LIKE`]).
    pub fn unlike(&self) -> Vec<&Difference> {
        self.differences
            .iter()
            .filter(|d| !d.area.is_the_servers() && d.area != Area::Ibench)
            .filter(|d| !(d.area == Area::Options && OPTIONS_STILL_LIKE.contains(&d.name.as_str())))
            .collect()
    }
}

/// How `run`'s setup differs from `base`'s.
pub fn setup_differences(base: &LoadedRun, run: &LoadedRun) -> SetupDifferences {
    let (b, r) = (&base.record, &run.record);
    let mut out = SetupDifferences::default();
    let mut push = |area: Area, name: &str, base: String, run: String| {
        if base != run {
            out.differences.push(Difference {
                area,
                name: name.to_string(),
                base,
                run,
                source: None,
                follows: None,
            });
        }
    };
    for (name, bv, rv) in dbms_facts(b, r) {
        push(Area::Dbms, name, bv, rv);
    }
    let (bm, rm) = (
        crate::results::replication::mode_name(b.replica.as_ref()),
        crate::results::replication::mode_name(r.replica.as_ref()),
    );
    push(Area::Dbms, "replication", bm, rm);
    for (name, values) in build_facts(b, r) {
        match values {
            Some((bv, rv)) => push(Area::Build, name, bv, rv),
            None => out.unknown_build_facts.push(name.to_string()),
        }
    }
    for (name, bv, rv) in flat_pairs(&options_json(b), &options_json(r)) {
        push(Area::Options, &option_flag(&name), bv, rv);
    }
    for (name, bv, rv) in flat_pairs(&host_json(b), &host_json(r)) {
        push(Area::Host, &name, bv, rv);
    }
    push(
        Area::Ibench,
        "version",
        b.ibench_version.clone(),
        r.ibench_version.clone(),
    );
    compare_settings(base, run, &mut out);
    out.differences
        .sort_by(|x, y| (x.area, &x.name).cmp(&(y.area, &y.name)));
    out
}

type Facts = Vec<(&'static str, String, String)>;

fn dbms_facts(b: &RunRecord, r: &RunRecord) -> Facts {
    type Getter = fn(&TargetInfo) -> String;
    let fact = |rec: &RunRecord, f: &Getter| rec.target.as_ref().map_or_else(|| "-".to_string(), f);
    let facts: [(&'static str, Getter); 5] = [
        ("DBMS", |t| t.dbms.clone()),
        ("version", |t| t.version.clone()),
        ("flavour", |t| {
            t.flavour.map_or("-".into(), |f| f.to_string())
        }),
        ("engine", |t| {
            t.engine
                .map_or("-".into(), |e| format!("{e:?}").to_lowercase())
        }),
        ("TLS", |t| {
            t.tls.as_ref().map_or("none".into(), |t| t.to_string())
        }),
    ];
    facts
        .iter()
        .map(|(name, f)| (*name, fact(b, f), fact(r, f)))
        .collect()
}

/// The build facts, each with both runs' values, or `None` when one side could not tell it
/// and the other could (both unknown: not listed at all).
fn build_facts(b: &RunRecord, r: &RunRecord) -> Vec<(&'static str, Option<(String, String)>)> {
    type Getter = fn(&crate::results::target::BuildFacts) -> Option<String>;
    let facts: [(&'static str, Getter); 7] = [
        ("compiler flags", |f| f.flags_summary()),
        ("CC", |f| f.cc.clone()),
        ("configure", |f| f.configure.clone()),
        ("packager", |f| f.version_comment.clone()),
        ("machine", |f| f.compile_machine.clone()),
        ("binary size", |f| {
            f.binary_bytes.map(|n| format!("{n} bytes"))
        }),
        ("binary SHA-256", |f| {
            f.binary_sha256
                .as_ref()
                .map(|s| s.chars().take(12).collect())
        }),
    ];
    // A fact one side could not tell is not a difference: it is unknown.
    facts
        .iter()
        .filter_map(|(name, f)| {
            match (b.build.as_ref().and_then(f), r.build.as_ref().and_then(f)) {
                (Some(bv), Some(rv)) => Some((*name, Some((bv, rv)))),
                (None, None) => None,
                _ => Some((*name, None)),
            }
        })
        .collect()
}

fn options_json(rec: &RunRecord) -> serde_json::Value {
    let mut v = serde_json::to_value(&rec.options).unwrap_or_default();
    for path in OPTIONS_LEFT_OUT {
        remove_path(&mut v, path);
    }
    v
}

fn host_json(rec: &RunRecord) -> serde_json::Value {
    let h = &rec.host;
    serde_json::json!({
        "CPU": h.cpu_model,
        "CPUs": h.cpus,
        "memory GiB": h.memory_gib,
        "kernel": h.kernel,
        "data dir filesystem": h.data_dir_mount.as_ref().map(|m| m.fs_type.clone()),
        "data dir device": h.data_dir_device.as_ref().map(|d| d.name.clone()),
    })
}

fn remove_path(v: &mut serde_json::Value, path: &str) {
    let mut parts: Vec<&str> = path.split('.').collect();
    let Some(last) = parts.pop() else { return };
    let mut at = v;
    for p in parts {
        match at.get_mut(p) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(o) = at.as_object_mut() {
        o.remove(last);
    }
}

/// Both sides' leaves as `(dotted.path, base text, run text)`, every path of either side.
fn flat_pairs(b: &serde_json::Value, r: &serde_json::Value) -> Vec<(String, String, String)> {
    let (mut bl, mut rl) = (Vec::new(), Vec::new());
    flatten("", b, &mut bl);
    flatten("", r, &mut rl);
    let bm: std::collections::BTreeMap<_, _> = bl.into_iter().collect();
    let rm: std::collections::BTreeMap<_, _> = rl.into_iter().collect();
    let mut names: Vec<&String> = bm.keys().chain(rm.keys()).collect();
    names.sort();
    names.dedup();
    let text = |m: &std::collections::BTreeMap<String, String>, n: &String| {
        m.get(n).cloned().unwrap_or_else(|| "-".to_string())
    };
    names
        .into_iter()
        .map(|n| (n.clone(), text(&bm, n), text(&rm, n)))
        .collect()
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        serde_json::Value::Object(o) => o.iter().for_each(|(k, v)| flatten(&key(k), v, out)),
        serde_json::Value::Array(a) => {
            let items: Vec<String> = a.iter().map(leaf_text).collect();
            out.push((prefix.to_string(), items.join(",")));
        }
        leaf => out.push((prefix.to_string(), leaf_text(leaf))),
    }
}

fn leaf_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// A run option's field (as in run.json) named by the flag that sets it.
pub fn option_flag(field: &str) -> String {
    let named = match field {
        "load_rows_per_insert" => "--load-batch",
        "i1_rows_per_insert" => "--i1-batch",
        "i2_rows_per_insert" => "--i2-batch",
        "query_rows_per_insert" => "--query-batch",
        "settle_max_seconds" => "--settle-seconds",
        "check" => "--no-integrity-check",
        "perf_interval_seconds" => "--perf-interval",
        "profile_seconds" => "--profile-seconds",
        "table.client_assigns_ids" => "--client-ids",
        "table.table_suffix" => "--table-options",
        _ => "",
    };
    if !named.is_empty() {
        return named.to_string();
    }
    let last = field.rsplit('.').next().unwrap_or(field);
    let flag = if field.starts_with("micro.") {
        format!("micro_{last}")
    } else {
        last.to_string()
    };
    format!("--{}", flag.replace('_', "-"))
}

/// The run's instance directory (the data directory's parent), whose paths never differ.
fn instance_dir(rec: &RunRecord) -> Option<String> {
    let data = rec.host.data_dir.as_deref()?;
    let parent = std::path::Path::new(data).parent()?.to_str()?;
    (parent.len() > 1).then(|| parent.to_string())
}

fn normalised(value: &SettingValue, instance: Option<&str>) -> SettingValue {
    let mut v = value.clone();
    if let Some(dir) = instance {
        v.value = v.value.replace(dir, "<instance>");
    }
    v
}

fn compare_settings(base: &LoadedRun, run: &LoadedRun, out: &mut SetupDifferences) {
    let (b, r) = (&base.record, &run.record);
    // Two products (SQLite against MariaDB) share no settings: the DBMS row says they differ,
    // and hundreds of settings of one side against none of the other would say nothing more.
    let fact = |name: &str| dbms_facts(b, r).into_iter().find(|(n, _, _)| *n == name);
    if fact("DBMS").is_some_and(|(_, bv, rv)| bv != rv) {
        out.settings_of_another_product = true;
        return;
    }
    let session = |rec: &RunRecord| ServerSettings {
        values: rec
            .session_settings
            .iter()
            .map(|(k, v)| {
                let value = SettingValue {
                    value: v.clone(),
                    unit: None,
                    source: Some("set by ibench".into()),
                };
                (k.clone(), value)
            })
            .collect(),
    };
    compare_setting_maps(&session(b), &session(r), false, None, out);
    match (&base.settings, &run.settings) {
        (Some(bs), Some(rs)) => {
            let versions_differ = fact("version").is_some_and(|(_, bv, rv)| bv != rv);
            let dirs = (instance_dir(b), instance_dir(r));
            compare_setting_maps(bs, rs, versions_differ, Some(dirs), out);
        }
        (None, None) => {}
        _ => out.settings_unknown = true,
    }
}

fn compare_setting_maps(
    b: &ServerSettings,
    r: &ServerSettings,
    versions_differ: bool,
    dirs: Option<(Option<String>, Option<String>)>,
    out: &mut SetupDifferences,
) {
    let (bdir, rdir) = dirs.unwrap_or_default();
    let mut names: Vec<&String> = b.values.keys().chain(r.values.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        if SETTINGS_LEFT_OUT.contains(&name.as_str()) {
            continue;
        }
        let bv = b.values.get(name).map(|v| normalised(v, bdir.as_deref()));
        let rv = r.values.get(name).map(|v| normalised(v, rdir.as_deref()));
        if bv == rv
            || bv.as_ref().map(|v| (&v.value, &v.unit)) == rv.as_ref().map(|v| (&v.value, &v.unit))
        {
            continue;
        }
        // Set on purpose: the server says so (a source other than the built-in default).
        let set = |v: &Option<SettingValue>| {
            v.as_ref()
                .is_some_and(|v| v.source.is_some() && !v.is_default())
        };
        match (&bv, &rv) {
            (Some(x), Some(y)) if versions_differ && x.is_default() && y.is_default() => {
                out.default_settings_differing += 1;
            }
            (None, _) | (_, None) if !set(&bv) && !set(&rv) => {
                out.settings_on_one_side += 1;
            }
            _ => out.differences.push(Difference {
                area: Area::Settings,
                name: name.clone(),
                base: bv.as_ref().map_or("-".into(), SettingValue::display),
                run: rv.as_ref().map_or("-".into(), SettingValue::display),
                source: rv.as_ref().and_then(|v| v.source.clone()),
                follows: None,
            }),
        }
    }
    mark_consequences(b, r, out);
}

/// True when both runs left setting `name` to the server (PostgreSQL says `default`; a
/// server that says nothing counts as having left it).
fn left_to_server(b: &ServerSettings, r: &ServerSettings, name: &str) -> bool {
    [b, r].iter().all(|s| {
        s.values
            .get(name)
            .is_none_or(|v| v.source.is_none() || v.is_default())
    })
}

/// Mark each setting difference that only follows from another that differs too
/// ([`DERIVED_SETTINGS`]) with its first cause: `follows`.
fn mark_consequences(b: &ServerSettings, r: &ServerSettings, out: &mut SetupDifferences) {
    let differs = |out: &SetupDifferences, name: &str| {
        out.differences
            .iter()
            .any(|d| d.area == Area::Settings && d.name == name)
    };
    // The direct cause of each consequence.
    let direct: Vec<(String, String)> = DERIVED_SETTINGS
        .iter()
        .filter(|(name, _, only_left)| {
            differs(out, name) && (!only_left || left_to_server(b, r, name))
        })
        .filter_map(|(name, causes, _)| {
            let cause = causes.iter().find(|c| differs(out, c))?;
            Some(((*name).to_string(), (*cause).to_string()))
        })
        .collect();
    for d in out
        .differences
        .iter_mut()
        .filter(|d| d.area == Area::Settings)
    {
        let mut cause = None;
        let mut at = d.name.as_str();
        // Up the chain to its first cause (a chain is short: a guard against a cycle).
        for _ in 0..DERIVED_SETTINGS.len() {
            match direct.iter().find(|(n, _)| n == at) {
                Some((_, c)) => {
                    cause = Some(c.clone());
                    at = c;
                }
                None => break,
            }
        }
        d.follows = cause;
    }
}

/// Each run's setup against the base's, for every run but the base.
pub(super) fn differences_from_base(runs: &[LoadedRun], base_index: usize) -> Vec<RunSetup> {
    runs.iter()
        .enumerate()
        .filter(|&(i, _)| i != base_index)
        .map(|(_, r)| RunSetup {
            run: r.label.clone(),
            setup: super::differs::setup_differences(&runs[base_index], r),
        })
        .collect()
}

/// How one run's setup differs from the base's.
#[derive(Clone, Debug, Serialize)]
pub struct RunSetup {
    /// The run's label.
    pub run: String,
    /// What differs.
    #[serde(flatten)]
    pub setup: super::differs::SetupDifferences,
}

/// `--clients 1 → 16, shared_buffers 128MB → 1GB and 2 more` (a host fact named `host CPUs`).
pub fn names_text(diffs: &[&Difference], most: usize) -> String {
    let shown: Vec<String> = diffs
        .iter()
        .take(most)
        .map(|d| format!("{} {} → {}", row_name(d), d.base, d.run))
        .collect();
    let rest = diffs.len().saturating_sub(most);
    if rest > 0 {
        format!("{} and {rest} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// What a difference is called in the What differs rows and lists: a flag or a setting by its own name,
/// the other areas' facts with the area first where the name alone is ambiguous.
pub(super) fn row_name(d: &Difference) -> String {
    match d.area {
        Area::Dbms if d.name != "DBMS" => format!("DBMS {}", d.name),
        Area::Host => format!("host {}", d.name),
        Area::Ibench => format!("ibench {}", d.name),
        _ => d.name.clone(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn the_shared_memorys_parts_are_the_huge_pages_causes_but_the_page_size() {
        assert_eq!(PG_SHARED_MEMORY.len() + 1, PG_SHARED_MEMORY_HUGE.len());
        assert!(PG_SHARED_MEMORY.contains(&"shared_buffers"));
        assert!(!PG_SHARED_MEMORY.contains(&"huge_page_size"));
    }
    use std::path::PathBuf;

    fn fixture(name: &str) -> LoadedRun {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let (runs, problems) = super::super::load::load_runs(&[dir]);
        assert!(problems.is_empty(), "{problems:?}");
        runs.into_iter().next().expect("fixture run")
    }

    #[test]
    fn a_run_against_itself_differs_in_nothing() {
        let run = fixture("postgres");
        let d = setup_differences(&run, &run);
        assert!(d.is_empty(), "{d:?}");
        assert!(d.unlike().is_empty());
        assert!(!d.settings_unknown);
    }

    /// The postgres fixture with `shared_buffers` (16MB) and what the server computes from it
    /// changed, as a server started with `shared_buffers = 16MB` reports them.
    pub(crate) fn smaller_shared_buffers() -> (LoadedRun, LoadedRun) {
        let base = fixture("postgres");
        let mut run = base.clone();
        let settings = run.settings.as_mut().unwrap();
        for (name, value) in [
            ("shared_buffers", "2048"),
            ("shared_memory_size", "33"),
            ("shared_memory_size_in_huge_pages", "17"),
            ("wal_buffers", "64"),
        ] {
            settings.values.get_mut(name).unwrap().value = value.into();
        }
        run.label = "sb16".into();
        (base, run)
    }

    #[test]
    fn a_setting_computed_from_shared_buffers_follows_it() {
        let (base, run) = smaller_shared_buffers();
        let d = setup_differences(&base, &run);
        let follows: Vec<(&str, Option<&str>)> = d
            .in_area(Area::Settings)
            .map(|d| (d.name.as_str(), d.follows.as_deref()))
            .collect();
        assert_eq!(
            follows,
            [
                ("shared_buffers", None),
                ("shared_memory_size", Some("shared_buffers")),
                ("shared_memory_size_in_huge_pages", Some("shared_buffers")),
                ("wal_buffers", Some("shared_buffers")),
            ]
        );
        let causes: Vec<String> = d.causes().map(Difference::text).collect();
        assert_eq!(causes, ["shared_buffers 128MB → 16MB"]);
        // wal_buffers set by hand is a difference of its own; shared_memory_size, computed
        // by the server whatever was set, still follows.
        let mut by_hand = run.clone();
        let settings = by_hand.settings.as_mut().unwrap();
        settings.values.get_mut("wal_buffers").unwrap().source = Some("configuration file".into());
        let d = setup_differences(&base, &by_hand);
        assert_eq!(d.named("wal_buffers").unwrap().follows, None);
        assert_eq!(
            d.named("shared_memory_size").unwrap().follows.as_deref(),
            Some("shared_buffers")
        );
        // A computed setting that differs with no cause differing stays a difference.
        let mut alone = base.clone();
        let settings = alone.settings.as_mut().unwrap();
        settings.values.get_mut("shared_memory_size").unwrap().value = "150".into();
        let d = setup_differences(&base, &alone);
        assert_eq!(d.named("shared_memory_size").unwrap().follows, None);
    }

    #[test]
    fn innodb_s_sized_settings_follow_a_chain_to_its_first_cause() {
        let mut base = fixture("mariadb-replica");
        let value = |v: &str| SettingValue {
            value: v.into(),
            unit: None,
            source: None,
        };
        // As MySQL 8 reports them for a pool of 128 MB: 1 instance, 1 page cleaner.
        let settings = base.settings.as_mut().unwrap();
        for name in ["innodb_buffer_pool_instances", "innodb_page_cleaners"] {
            settings.values.insert(name.into(), value("1"));
        }
        let mut run = base.clone();
        let settings = run.settings.as_mut().unwrap();
        for (name, v) in [
            ("innodb_buffer_pool_size", "1073741824"),
            ("innodb_buffer_pool_instances", "8"),
            ("innodb_page_cleaners", "8"),
            ("innodb_io_capacity", "1000"),
            ("innodb_io_capacity_max", "4000"),
        ] {
            settings.values.insert(name.into(), value(v));
        }
        let d = setup_differences(&base, &run);
        let follows = |n: &str| d.named(n).and_then(|d| d.follows.as_deref());
        assert_eq!(follows("innodb_buffer_pool_size"), None);
        assert_eq!(
            follows("innodb_buffer_pool_instances"),
            Some("innodb_buffer_pool_size")
        );
        assert_eq!(
            follows("innodb_page_cleaners"),
            Some("innodb_buffer_pool_size")
        );
        assert_eq!(follows("innodb_io_capacity"), None);
        assert_eq!(
            follows("innodb_io_capacity_max"),
            Some("innodb_io_capacity")
        );
    }

    /// The query steps on the replica make two runs unlike; what a run does if its replica
    /// dies is listed, and leaves them alike.
    #[test]
    fn the_replica_s_options_are_named() {
        use crate::results::options::{QueryOn, ReplicaLoss};
        let base = fixture("postgres");
        let mut run = base.clone();
        run.record.options.query_on = QueryOn::Replica;
        run.record.options.on_replica_loss = ReplicaLoss::Stop;
        let d = setup_differences(&base, &run);
        let texts: Vec<String> = d.differences.iter().map(Difference::text).collect();
        assert!(
            texts.contains(&"--query-on primary → replica".to_string()),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"--on-replica-loss continue → stop".to_string()),
            "{texts:?}"
        );
        let unlike: Vec<&str> = d.unlike().iter().map(|d| d.name.as_str()).collect();
        assert_eq!(unlike, ["--query-on"]);
    }

    #[test]
    fn options_are_named_by_their_flags_and_make_runs_unlike() {
        let base = fixture("postgres");
        let mut run = base.clone();
        run.record.options.clients = 16;
        run.record.options.load_rows_per_insert = 10;
        run.record.options.out_dir = PathBuf::from("/elsewhere");
        run.record.options.server_pid = Some(4242);
        let d = setup_differences(&base, &run);
        let names: Vec<&str> = d.differences.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["--clients", "--load-batch"], "{d:?}");
        let clients = d.named("--clients").expect("clients differ");
        assert_eq!(
            (clients.base.as_str(), clients.run.as_str()),
            (base.record.options.clients.to_string().as_str(), "16")
        );
        assert_eq!(d.unlike().len(), 2);
    }

    #[test]
    fn a_setting_is_named_with_both_values_and_its_source() {
        let base = fixture("postgres");
        let mut run = base.clone();
        let settings = run.settings.as_mut().expect("fixture has settings");
        let sb = settings
            .values
            .get_mut("shared_buffers")
            .expect("shared_buffers");
        sb.value = (sb.value.parse::<u64>().expect("a number") * 2).to_string();
        sb.source = Some("configuration file".into());
        // Paths inside the instance and ports are left out.
        settings.values.get_mut("port").expect("port").value = "1".into();
        let d = setup_differences(&base, &run);
        assert_eq!(d.differences.len(), 1, "{d:?}");
        let s = &d.differences[0];
        assert_eq!(
            (s.area, s.name.as_str()),
            (Area::Settings, "shared_buffers")
        );
        assert_ne!(s.base, s.run);
        assert_eq!(s.source.as_deref(), Some("configuration file"));
        assert!(d.unlike().is_empty(), "a setting is the server's");
    }

    #[test]
    fn between_versions_differing_defaults_are_counted_not_listed() {
        let base = fixture("postgres");
        let mut run = base.clone();
        if let Some(t) = run.record.target.as_mut() {
            t.version = "99.0".into();
        }
        let settings = run.settings.as_mut().expect("fixture has settings");
        let default_name = settings
            .values
            .iter()
            .find(|(n, v)| v.is_default() && !SETTINGS_LEFT_OUT.contains(&n.as_str()))
            .map(|(n, _)| n.clone())
            .expect("a default setting");
        settings.values.get_mut(&default_name).expect("it").value = "changed".into();
        settings.values.insert(
            "new_in_99".into(),
            SettingValue {
                value: "on".into(),
                unit: None,
                source: Some("default".into()),
            },
        );
        let d = setup_differences(&base, &run);
        assert_eq!(d.default_settings_differing, 1, "{d:?}");
        assert_eq!(d.settings_on_one_side, 1);
        let names: Vec<&str> = d.differences.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["version"]);
    }

    #[test]
    fn the_host_kind_differs_but_not_its_name() {
        let base = fixture("postgres");
        let mut run = base.clone();
        run.record.host.hostname = "other".into();
        run.record.host.cpus = base.record.host.cpus + 14;
        let d = setup_differences(&base, &run);
        assert_eq!(d.differences.len(), 1, "{d:?}");
        assert_eq!(
            (d.differences[0].area, d.differences[0].name.as_str()),
            (Area::Host, "CPUs")
        );
        assert_eq!(d.unlike().len(), 1);
    }

    /// Two private MariaDB instances of one setup differed in `report_port` and `server_uid`
    /// (checked 2026-11-26, MariaDB 10.11, InnoDB and MyRocks): left out with the ports.
    #[test]
    fn per_instance_mysql_variables_never_differ() {
        let base = fixture("postgres");
        let instance = |port: &str, uid: &str| {
            let json = serde_json::json!({
                "port": port, "report_port": port, "server_uid": uid,
                "socket": format!("/tmp/{port}/mysqld.sock"), "innodb_buffer_pool_size": "134217728"
            });
            Some(ServerSettings::from_json(&json))
        };
        let (mut a, mut b) = (base.clone(), base);
        a.settings = instance("46703", "brv60JRB0tLDkq7+8eUp/JpXYWM=");
        b.settings = instance("42983", "MJnVpnHCrtDRKnxdkC3oWHewQv4=");
        let d = setup_differences(&a, &b);
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn the_settings_of_two_products_are_not_compared() {
        let mut base = fixture("postgres");
        base.record.build = Some(crate::results::target::BuildFacts {
            binary_bytes: Some(8_448_616),
            ..Default::default()
        });
        let mut run = fixture("sqlite-base");
        run.record.build = None;
        run.record.options = base.record.options.clone();
        run.record.host = base.record.host.clone();
        let d = setup_differences(&base, &run);
        assert!(
            d.in_area(Area::Settings).next().is_none(),
            "{:?}",
            d.differences
        );
        assert_eq!(
            (d.default_settings_differing, d.settings_on_one_side),
            (0, 0)
        );
        assert!(d.named("DBMS").is_some());
        assert!(d.settings_of_another_product);
        // SQLite has no server binary: its build facts are unknown, not the base's.
        assert!(
            d.unknown_build_facts.iter().any(|f| f == "binary size"),
            "{:?}",
            d.unknown_build_facts
        );
        assert!(d.in_area(Area::Build).next().is_none(), "{d:?}");
    }

    /// MyRocks against InnoDB on one MariaDB: the plugin's variables exist on one side only
    /// and MariaDB says nothing of where a value came from, so they are counted (170 rows of
    /// `rocksdb_*` once filled the section); a setting one side set in its configuration file
    /// is still listed.
    #[test]
    fn settings_one_run_alone_has_are_counted_unless_it_set_them() {
        let base = fixture("postgres");
        let mut run = base.clone();
        let settings = run.settings.as_mut().expect("fixture has settings");
        for (name, source) in [
            ("rocksdb_block_size", None),
            ("rocksdb_bulk_load", None),
            ("pg_stat_statements.max", Some("default")),
            ("auto_explain.log_min_duration", Some("configuration file")),
        ] {
            let value = SettingValue {
                value: "1".into(),
                unit: None,
                source: source.map(str::to_string),
            };
            settings.values.insert(name.into(), value);
        }
        let d = setup_differences(&base, &run);
        assert_eq!(d.settings_on_one_side, 3, "{d:?}");
        let names: Vec<&str> = d.differences.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["auto_explain.log_min_duration"]);
        assert!(!d.settings_of_another_product && d.unknown_build_facts.is_empty());
    }

    #[test]
    fn the_steps_and_the_seed_are_listed_but_leave_runs_alike() {
        let base = fixture("postgres");
        let mut run = base.clone();
        run.record.options.seed += 1;
        run.record.options.steps.pop();
        let d = setup_differences(&base, &run);
        let names: Vec<&str> = d.differences.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["--seed", "--steps"]);
        assert!(d.unlike().is_empty(), "{d:?}");
    }

    #[test]
    fn flags_name_the_options() {
        assert_eq!(option_flag("clients"), "--clients");
        assert_eq!(option_flag("row_shape.data_min_len"), "--data-min-len");
        assert_eq!(option_flag("micro.tables"), "--micro-tables");
        assert_eq!(option_flag("i2_rows_per_insert"), "--i2-batch");
        assert_eq!(option_flag("host_probe_ms"), "--host-probe-ms");
    }
}
