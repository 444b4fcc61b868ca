//! The servers of a matrix file: how each is reached (a managed build or a URL), its label
//! from its own version line, and its configs; every workload is checked against it now.

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::configs::resolve_config_set;
use super::file::{ConfigSetEntry, ServerEntry, Source};
use super::plan::*;
use crate::backend::descriptor_of_url;
use crate::results::target::Engine;
use crate::server::ServerKind;

/// The label prefix from a version line (`postgres (PostgreSQL) 15.14 (Debian …)`,
/// `mariadbd  Ver 10.11.14-MariaDB-0+deb12u1 for …`).
pub fn version_label(kind: ServerKind, engine: Engine, version_line: &str) -> String {
    match kind {
        ServerKind::Postgres => {
            let v = version_line
                .split(')')
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .unwrap_or(version_line);
            format!("PostgreSQL {v}")
        }
        ServerKind::Mariadb => {
            let mut words = version_line.split_whitespace();
            let v = words
                .by_ref()
                .skip_while(|w| *w != "Ver")
                .nth(1)
                .unwrap_or(version_line);
            let (num, rest) = v.split_once('-').unwrap_or((v, ""));
            let dbms = if rest.to_ascii_lowercase().contains("mariadb") {
                "MariaDB"
            } else {
                "MySQL"
            };
            format!("{dbms} {num} {}", format!("{engine:?}").to_lowercase())
        }
    }
}

/// `BINDIR/postgres --version` or `BINDIR/mariadbd --version` (the server binary must be in
/// the bindir itself, as `ibench server start --bindir` requires).
fn probe_version(
    src: &Source,
    entry: &str,
    kind: ServerKind,
    bindir: &std::path::Path,
) -> Result<String> {
    let candidates: Vec<PathBuf> = match kind {
        ServerKind::Postgres => vec![bindir.join("postgres")],
        ServerKind::Mariadb => vec![bindir.join("mariadbd"), bindir.join("mysqld")],
    };
    let Some(binary) = candidates.iter().find(|p| p.is_file()) else {
        let wanted = match kind {
            ServerKind::Postgres => "initdb, pg_ctl and postgres",
            ServerKind::Mariadb => "mariadbd and mariadb-install-db",
        };
        return Err(src.err(
            entry,
            format!(
                "no {} in bindir {}; set bindir to the directory holding {wanted}",
                candidates[0]
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                bindir.display()
            ),
        ));
    };
    let out = std::process::Command::new(binary)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("cannot run {} --version", binary.display()))
        .map_err(|e| src.err(entry, format!("{e:#}; fix bindir")))?;
    if !out.status.success() {
        return Err(src.err(
            entry,
            format!(
                "{} --version failed ({}); set bindir to a working build",
                binary.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// One server of the file: how to reach it, its label, its configs; every workload is checked
/// against its kind now, not hours later.
pub(super) fn plan_server(
    src: &Source,
    name: &str,
    s: &ServerEntry,
    sets: &[(String, ConfigSetEntry)],
    workloads: &[PlanWorkload],
) -> Result<PlanServer> {
    let entry = format!("servers.{name}");
    let (source, label) = match &s.url {
        Some(url) => {
            if s.kind.is_some()
                || s.bindir.is_some()
                || !s.init_args.is_empty()
                || s.config_set.is_some()
                || s.replica.is_some()
                || s.failover.is_some()
            {
                return Err(src.err(&entry, "url is a server ibench does not manage: drop kind, bindir, init_args, config_set, replica and failover, or drop url"));
            }
            let backend =
                descriptor_of_url(url).map_err(|e| src.err(&entry, format!("{e}; fix url")))?;
            // An embedded DBMS's URL is the database itself: every cell would share it.
            if backend.embedded && !url.contains(CELL_PLACEHOLDER) {
                return Err(src.err(
                    &entry,
                    format!(
                        "every cell of a {} server would share {url} (shards running at once collide, and each cell starts from the last one's tables); give each cell its own file: url = \"{}DIR/{CELL_PLACEHOLDER}.db\"",
                        backend.name, backend.schemes()[0]
                    ),
                ));
            }
            let source = ServerSource::Url {
                url: url.clone(),
                engine: s.engine,
            };
            (source, s.label.clone().unwrap_or_else(|| name.to_string()))
        }
        None => managed_source(src, &entry, s)?,
    };
    let configs = server_configs(src, &entry, s, &source, sets)?;
    for w in workloads {
        run_options(
            w,
            (
                &placeholder_url(&source),
                super::plan::placeholder_replica_url(&source).as_deref(),
                source.failover(),
            ),
            source.engine(),
            std::path::Path::new("x"),
            "x",
            None,
            true,
        )
        .and_then(|o| Ok(crate::backend::validate_options(&o)?))
        .map_err(|e| {
            src.err(
                &format!("workloads.{}", w.name),
                format!("{e:#} (fix it in the workload)"),
            )
        })?;
    }
    Ok(PlanServer {
        name: name.to_string(),
        source,
        label,
        configs,
    })
}

/// A server ibench starts itself: its kind and binaries checked, its label from `--version`.
fn managed_source(src: &Source, entry: &str, s: &ServerEntry) -> Result<(ServerSource, String)> {
    let kind = match s.kind.as_deref() {
        Some("postgres") | Some("postgresql") => ServerKind::Postgres,
        Some("mariadb") | Some("mysql") => ServerKind::Mariadb,
        Some(other) => {
            return Err(src.err(
                entry,
                format!(
                    "unknown kind '{other}'; set kind = \"postgres\", \"mariadb\" or \"mysql\""
                ),
            ));
        }
        None => {
            return Err(src.err(entry, "no kind; set kind = \"postgres\", \"mariadb\" or \"mysql\" (or url for a server ibench does not manage)"));
        }
    };
    if kind == ServerKind::Postgres && s.engine.is_some() {
        return Err(src.err(
            entry,
            "engine applies to mariadb/mysql servers only; remove engine",
        ));
    }
    let Some(bindir) = &s.bindir else {
        let example = match kind {
            ServerKind::Postgres => "/usr/lib/postgresql/15/bin",
            ServerKind::Mariadb => "/usr/sbin",
        };
        return Err(src.err(entry, format!("no bindir; set bindir to the directory holding the {kind} binaries (e.g. {example})")));
    };
    let bindir = src.resolve(bindir);
    if !bindir.is_dir() {
        return Err(src.err(
            entry,
            format!("bindir {} does not exist; fix bindir", bindir.display()),
        ));
    }
    let engine = s.engine.unwrap_or_default();
    if let Some(mode) = s.replica
        && let Err(e) = crate::replication::pair::check_mode(mode, kind)
    {
        return Err(src.err(
            entry,
            format!(
                "replica = \"{mode}\": {e}; set replica = \"async\" or {}",
                match kind {
                    ServerKind::Postgres => "\"sync\"",
                    ServerKind::Mariadb => "\"semisync\"",
                }
            ),
        ));
    }
    let failover = cell_failover(src, entry, s)?;
    let version = probe_version(src, entry, kind, &bindir)?;
    let label = s.label.clone().unwrap_or_else(|| {
        let label = version_label(kind, engine, &version);
        match (s.replica, failover) {
            (Some(mode), Some(at)) => format!("{label} ({mode} replica, failover {at})"),
            (Some(mode), None) => format!("{label} ({mode} replica)"),
            _ => label,
        }
    });
    let source = ServerSource::Managed {
        kind,
        engine,
        bindir,
        init_args: s.init_args.clone(),
        replica: s.replica,
        failover,
    };
    Ok((source, label))
}

/// The server's `failover` (`--failover` for each of its cells): read as the flag reads it,
/// and only with a `replica` to promote.
fn cell_failover(
    src: &Source,
    entry: &str,
    s: &ServerEntry,
) -> Result<Option<crate::results::failover::FailoverAt>> {
    let Some(text) = &s.failover else {
        return Ok(None);
    };
    let at = text
        .parse()
        .map_err(|e| src.err(&format!("{entry}.failover"), format!("{e}; fix failover")))?;
    if s.replica.is_none() {
        return Err(src.err(
            &format!("{entry}.failover"),
            format!("failover = \"{text}\" needs a replica to promote; set replica = \"async\" or \"sync\" (MariaDB: \"semisync\"), or drop failover"),
        ));
    }
    Ok(Some(at))
}

/// A server's configs: its `config_set` (or the set named after its kind), cut to `configs`.
fn server_configs(
    src: &Source,
    entry: &str,
    s: &ServerEntry,
    source: &ServerSource,
    sets: &[(String, ConfigSetEntry)],
) -> Result<Vec<PlanConfig>> {
    let set_name = match (&s.config_set, source) {
        (Some(n), _) => Some(n.clone()),
        (None, ServerSource::Managed { kind, .. }) => {
            let k = kind.name();
            sets.iter()
                .find(|(n, _)| n == k || (k == "mariadb" && n == "mysql"))
                .map(|(n, _)| n.clone())
        }
        (None, ServerSource::Url { .. }) => None,
    };
    let mut configs = match &set_name {
        Some(set_name) => {
            let Some((_, set)) = sets.iter().find(|(n, _)| n == set_name) else {
                return Err(src.err(entry, format!("config_set '{set_name}' is not defined; add [configs.{set_name}] or fix config_set")));
            };
            resolve_config_set(src, set_name, set, source.postgres_syntax())?
        }
        None => vec![PlanConfig {
            name: "base".into(),
            entry: entry.to_string(),
            text: None,
        }],
    };
    if let Some(only) = &s.configs {
        if let Some(c) = only.iter().find(|c| !configs.iter().any(|x| &x.name == *c)) {
            let there: Vec<&str> = configs.iter().map(|c| c.name.as_str()).collect();
            return Err(src.err(
                &format!("{entry}.configs"),
                format!(
                    "no config named '{c}' (there are: {}); fix the name",
                    there.join(", ")
                ),
            ));
        }
        configs.retain(|c| only.contains(&c.name));
    }
    Ok(configs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_from_version_lines() {
        assert_eq!(
            version_label(
                ServerKind::Postgres,
                Engine::Innodb,
                "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)"
            ),
            "PostgreSQL 15.14"
        );
        assert_eq!(
            version_label(
                ServerKind::Mariadb,
                Engine::Rocksdb,
                "mariadbd  Ver 10.11.14-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)"
            ),
            "MariaDB 10.11.14 rocksdb"
        );
    }
}
