//! What a run measured: the backend family, its storage engine and flavour, the target as
//! the driver describes it (`run.json`'s `target`), what TLS negotiated and how the server was
//! built (`build`). Plain records: the backends and the sampler fill them.

use serde::{Deserialize, Serialize};

/// The DBMS family a URL names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// SQLite, embedded in ibench (`sqlite:PATH`).
    Sqlite,
    /// PostgreSQL (`postgres://` or `postgresql://`).
    Postgres,
    /// MySQL or MariaDB (`mysql://` or `mariadb://`).
    Mysql,
}

impl BackendKind {
    /// Every family, in the order the backend registry lists them.
    pub const ALL: [BackendKind; 3] = [
        BackendKind::Sqlite,
        BackendKind::Postgres,
        BackendKind::Mysql,
    ];

    /// The URL prefixes that choose this family (lowercase): the one table from a URL's
    /// scheme to its protocol.
    pub fn schemes(self) -> &'static [&'static str] {
        match self {
            BackendKind::Sqlite => &["sqlite:"],
            BackendKind::Postgres => &["postgres://", "postgresql://"],
            BackendKind::Mysql => &["mysql://", "mariadb://"],
        }
    }

    /// The family whose scheme `url` starts with (case-insensitive), `None` for another.
    pub fn of_url(url: &str) -> Option<BackendKind> {
        // The longest scheme is 13 characters: a prefix of 16 is enough to compare.
        let lower: String = url
            .chars()
            .take(16)
            .collect::<String>()
            .to_ascii_lowercase();
        BackendKind::ALL
            .into_iter()
            .find(|k| k.schemes().iter().any(|s| lower.starts_with(s)))
    }
}

/// Storage engine for the MySQL family.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// InnoDB, the default engine.
    // The one place the default engine is chosen.
    #[default]
    Innodb,
    /// MyRocks (the RocksDB engine).
    Rocksdb,
}

/// A server of one backend family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Flavour {
    /// PostgreSQL itself.
    Postgres,
    /// CockroachDB (Postgres wire protocol).
    Cockroachdb,
    /// YugabyteDB YSQL (Postgres wire protocol).
    Yugabytedb,
    /// Oracle MySQL.
    Mysql,
    /// MariaDB.
    Mariadb,
    /// TiDB (MySQL wire protocol).
    Tidb,
    /// SQLite, embedded.
    Sqlite,
}

impl Flavour {
    /// The backend family whose driver serves it.
    pub fn family(self) -> BackendKind {
        match self {
            Flavour::Postgres | Flavour::Cockroachdb | Flavour::Yugabytedb => BackendKind::Postgres,
            Flavour::Mysql | Flavour::Mariadb | Flavour::Tidb => BackendKind::Mysql,
            Flavour::Sqlite => BackendKind::Sqlite,
        }
    }

    /// The flavour a server of `family` is, from its version string (Postgres `version()`,
    /// MySQL `VERSION()`).
    pub fn detect(family: BackendKind, version: &str) -> Flavour {
        let v = version.to_ascii_lowercase();
        match family {
            BackendKind::Postgres if v.contains("cockroachdb") => Flavour::Cockroachdb,
            BackendKind::Postgres if v.contains("-yb-") || v.contains("yugabyte") => {
                Flavour::Yugabytedb
            }
            BackendKind::Postgres => Flavour::Postgres,
            BackendKind::Mysql if v.contains("tidb") => Flavour::Tidb,
            BackendKind::Mysql if v.contains("mariadb") => Flavour::Mariadb,
            BackendKind::Mysql => Flavour::Mysql,
            BackendKind::Sqlite => Flavour::Sqlite,
        }
    }

    /// The product name reports show.
    pub fn dbms(self) -> &'static str {
        match self {
            Flavour::Postgres => "PostgreSQL",
            Flavour::Cockroachdb => "CockroachDB",
            Flavour::Yugabytedb => "YugabyteDB",
            Flavour::Mysql => "MySQL",
            Flavour::Mariadb => "MariaDB",
            Flavour::Tidb => "TiDB",
            Flavour::Sqlite => "SQLite",
        }
    }
}

impl std::fmt::Display for Flavour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.dbms())
    }
}

/// What a target is: recorded in `run.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetInfo {
    /// Backend family.
    pub backend: BackendKind,
    /// The URL with any password replaced by `***`.
    pub url: String,
    /// Product name as the server reports it (`PostgreSQL`, `MariaDB`, `MySQL`, `SQLite`).
    pub dbms: String,
    /// Version string as the server reports it.
    pub version: String,
    /// Storage engine for the MySQL family, `None` elsewhere.
    pub engine: Option<Engine>,
    /// The server's flavour (CockroachDB, TiDB, ...), as detected from its version or given
    /// with `--flavour`. Absent in runs recorded before it existed.
    #[serde(default)]
    pub flavour: Option<Flavour>,
    /// What TLS negotiated on the run's connections (version and cipher); absent for a plain
    /// connection, a Unix socket, SQLite, and runs recorded before ibench had TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsInfo>,
}

/// What a TLS session negotiated: recorded per run, since TLS changes the figures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsInfo {
    /// The protocol version, e.g. `TLSv1.3`.
    pub version: String,
    /// The cipher suite, e.g. `TLS13_AES_256_GCM_SHA384`.
    pub cipher: String,
}

impl std::fmt::Display for TlsInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.version, self.cipher)
    }
}

/// How the server was built, as far as it tells (spec section 8: what a regression hunter
/// needs to explain two builds of one version that differ): recorded in run.json as `build`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildFacts {
    /// The full version string (PostgreSQL `version()`: version, platform, compiler; MySQL
    /// `@@version`).
    #[serde(default)]
    pub version_string: Option<String>,
    /// PostgreSQL `pg_config` `CONFIGURE`: the configure options (`--with-lz4`, ...).
    #[serde(default)]
    pub configure: Option<String>,
    /// PostgreSQL `pg_config` `CC`: the compiler.
    #[serde(default)]
    pub cc: Option<String>,
    /// PostgreSQL `pg_config` `CFLAGS`: the compiler flags (`-O2`, `-Os`, ...).
    #[serde(default)]
    pub cflags: Option<String>,
    /// MySQL/MariaDB `@@version_comment` (the packager: `Debian n/a`, `MariaDB Server`).
    #[serde(default)]
    pub version_comment: Option<String>,
    /// MySQL/MariaDB `@@version_compile_machine` (`x86_64`).
    #[serde(default)]
    pub compile_machine: Option<String>,
    /// MySQL/MariaDB `@@version_compile_os` (`debian-linux-gnu`).
    #[serde(default)]
    pub compile_os: Option<String>,
    /// SQLite `PRAGMA compile_options`.
    #[serde(default)]
    pub compile_options: Vec<String>,
    /// The server's executable (from `/proc/PID/exe` of the server's process), when the
    /// server runs on this host and was found.
    #[serde(default)]
    pub binary_path: Option<String>,
    /// Its size, bytes: code growth between versions is itself a published figure.
    #[serde(default)]
    pub binary_bytes: Option<u64>,
    /// Its SHA-256, hex: tells two builds of one version apart.
    #[serde(default)]
    pub binary_sha256: Option<String>,
    /// Why a fact above is missing (`pg_config: permission denied ...`), one line each.
    #[serde(default)]
    pub na: Vec<String>,
}

impl BuildFacts {
    /// The optimisation level and the options that change speed, in a few words: `-O2, lz4`,
    /// `-Os, no lz4` (lz4 from PostgreSQL 14, which brought it). `None` when the server does not report its flags (MySQL, MariaDB,
    /// SQLite).
    pub fn flags_summary(&self) -> Option<String> {
        let cflags = self.cflags.as_deref()?;
        let level = cflags
            .split_whitespace()
            .rfind(|f| f.starts_with("-O"))
            .unwrap_or("no -O");
        let mut out = level.to_string();
        // `--with-lz4` came in PostgreSQL 14: before it no build has lz4 to lack.
        let major = self
            .version_string
            .as_deref()
            .and_then(|v| v.strip_prefix("PostgreSQL "))
            .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|m| m.parse::<u32>().ok());
        if let Some(configure) = self.configure.as_ref().filter(|_| major >= Some(14)) {
            out.push_str(if configure.contains("--with-lz4") {
                ", lz4"
            } else {
                ", no lz4"
            });
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_picks_the_family() {
        assert_eq!(
            BackendKind::of_url("postgres://u@h/db"),
            Some(BackendKind::Postgres)
        );
        assert_eq!(
            BackendKind::of_url("PostgreSQL://u@h/db"),
            Some(BackendKind::Postgres)
        );
        assert_eq!(
            BackendKind::of_url("mariadb://u@h/db"),
            Some(BackendKind::Mysql)
        );
        assert_eq!(
            BackendKind::of_url("sqlite:x.db"),
            Some(BackendKind::Sqlite)
        );
        assert_eq!(BackendKind::of_url("oracle://x"), None);
        assert_eq!(BackendKind::of_url("pösträs://"), None);
    }

    fn pg(version: &str, cflags: &str, configure: &str) -> BuildFacts {
        BuildFacts {
            version_string: Some(format!("PostgreSQL {version} on x86_64-pc-linux-gnu")),
            cflags: Some(cflags.into()),
            configure: Some(configure.into()),
            ..BuildFacts::default()
        }
    }

    #[test]
    fn flags_summary_names_the_optimisation_level_and_lz4_where_it_exists() {
        let deb = pg(
            "15.18 (Debian)",
            "-Wall -g -O2 -fwrapv",
            "'--with-lz4' '--with-zstd'",
        );
        assert_eq!(deb.flags_summary().as_deref(), Some("-O2, lz4"));
        let reg = pg("17.10", "-Wall -O2 -Os", "'CFLAGS=-Os'");
        assert_eq!(reg.flags_summary().as_deref(), Some("-Os, no lz4"));
        let old = pg("10.23", "-Wall -O2", "'--with-icu'");
        assert_eq!(old.flags_summary().as_deref(), Some("-O2"));
        assert_eq!(BuildFacts::default().flags_summary(), None);
    }

    #[test]
    fn flavours_are_told_from_the_version_string() {
        let pg = BackendKind::Postgres;
        let my = BackendKind::Mysql;
        assert_eq!(
            Flavour::detect(pg, "PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64"),
            Flavour::Postgres
        );
        assert_eq!(
            Flavour::detect(pg, "CockroachDB CCL v24.1.0 (x86_64-pc-linux-gnu)"),
            Flavour::Cockroachdb
        );
        assert_eq!(
            Flavour::detect(pg, "PostgreSQL 11.2-YB-2.20.1.0-b0 on x86_64-pc-linux-gnu"),
            Flavour::Yugabytedb
        );
        assert_eq!(Flavour::detect(my, "8.0.11-TiDB-v7.5.0"), Flavour::Tidb);
        assert_eq!(
            Flavour::detect(my, "10.11.19-MariaDB-0+deb12u1"),
            Flavour::Mariadb
        );
        assert_eq!(Flavour::detect(my, "8.0.36"), Flavour::Mysql);
        assert_eq!(Flavour::Tidb.family(), BackendKind::Mysql);
        assert_eq!(Flavour::Yugabytedb.family(), BackendKind::Postgres);
    }
}
