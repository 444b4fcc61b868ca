//! The database a run connects to, read once from its URL: the backend's descriptor (its
//! scheme looked up once), the family's parsed settings, the URL as `run.json`'s options
//! record it and the host the sampler looks for. Drivers are built from this value, never
//! from URL text.

use std::time::Duration;

use super::link::SqlLink;
use super::mysql::replication::MY_REPLICATION;
use super::mysql::wire::MyWire;
use super::mysql::{MySettings, MysqlDriver};
use super::postgres::replication::PG_REPLICATION;
use super::postgres::wire::PgWire;
use super::postgres::{PgSettings, PostgresDriver};
use super::replication::ReplicaLink;
use super::sqlite::{SqliteDriver, SqliteSettings};
use super::{BackendDescriptor, Driver, DriverOptions, descriptor_of};
use crate::results::options::{OptionsError, RunOptions};
use crate::url::Url;

/// A backend family's settings, parsed once from the URL (and, for a server, completed from
/// the environment and files its client reads).
#[derive(Clone)]
pub enum Settings {
    /// SQLite's database file.
    Sqlite(SqliteSettings),
    /// PostgreSQL's completed settings (URL, `PG*`, the password file, the service defaults).
    Postgres(PgSettings),
    /// MySQL's completed settings (URL, `~/.my.cnf`, `MYSQL_PWD`).
    Mysql(MySettings),
    /// The in-memory test backend's URL (unit tests only).
    #[cfg(test)]
    Mock(String),
}

/// The database a run connects to, built once by [`ConnectTarget::parse`].
#[derive(Clone)]
pub struct ConnectTarget {
    descriptor: &'static BackendDescriptor,
    settings: Settings,
    options: DriverOptions,
    /// The URL as given with its password masked (what `run.json`'s options record).
    pub redacted_url: String,
    /// The URL as messages show it (masked as `url::redact_url` masks it).
    pub shown_url: String,
    /// The URL's first host (`""` for a Unix socket, none given, or SQLite).
    pub host: String,
}

impl ConnectTarget {
    /// A run's target: its URL split once, its scheme looked up once, the options that depend
    /// on the backend (`--engine`, `--profile-server`, `--flavour`) checked against it, and the
    /// family's settings read (and completed). The errors name the flag to fix.
    pub fn for_run(opts: &RunOptions) -> anyhow::Result<ConnectTarget> {
        let options = DriverOptions {
            engine: opts.engine,
            flavour: opts.flavour,
        };
        ConnectTarget::read(&Url::parse(&opts.url), options, |d| d.check(opts))
    }

    /// Read `url` once: its scheme chooses the backend, `options.flavour` must be one it
    /// serves, and the family's settings are parsed (and completed) here. The errors name
    /// `--url` or `--flavour`.
    pub fn parse(url: &str, options: &DriverOptions) -> anyhow::Result<ConnectTarget> {
        ConnectTarget::read(&Url::parse(url), options.clone(), |d| {
            d.check_flavour(options.flavour)
        })
    }

    /// The target of `url`: its backend (checked by `check`) and the family's settings.
    fn read(
        url: &Url<'_>,
        options: DriverOptions,
        check: impl FnOnce(&BackendDescriptor) -> Result<(), OptionsError>,
    ) -> anyhow::Result<ConnectTarget> {
        #[cfg(test)]
        if url.text.starts_with(super::MOCK_SCHEME) {
            return Ok(ConnectTarget {
                descriptor: &super::BACKENDS[0],
                settings: Settings::Mock(url.text.to_string()),
                options,
                redacted_url: url.redacted(),
                shown_url: url.masked(),
                host: String::new(),
            });
        }
        let descriptor = descriptor_of(url)?;
        check(descriptor)?;
        Ok(ConnectTarget {
            descriptor,
            settings: (descriptor.read)(url)?,
            options,
            redacted_url: url.redacted(),
            shown_url: url.masked(),
            host: url.host(),
        })
    }

    /// The backend's registry entry.
    pub fn descriptor(&self) -> &'static BackendDescriptor {
        self.descriptor
    }

    /// The family's parsed settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// A connection for the replication's statements ([`ReplicaLink`]), the login bounded by
    /// `connect_timeout`. The error is one line, with the URL's password masked.
    pub fn replica_link(&self, connect_timeout: Duration) -> Result<ReplicaLink, String> {
        let shown = &self.shown_url;
        let reach = |e: &dyn std::fmt::Display| format!("cannot reach {shown}: {e}");
        match &self.settings {
            Settings::Postgres(s) => {
                let mut config = s.config.clone();
                config.connect_timeout = Some(connect_timeout);
                let wire = PgWire::connect(&config).map_err(|e| reach(&e))?;
                Ok(ReplicaLink::new(
                    SqlLink::Postgres(Box::new(wire)),
                    &PG_REPLICATION,
                ))
            }
            Settings::Mysql(s) => {
                let mut config = s.config.clone();
                config.connect_timeout = Some(connect_timeout);
                let wire = MyWire::connect(&config).map_err(|e| reach(&e))?;
                Ok(ReplicaLink::new(
                    SqlLink::Mysql(Box::new(wire)),
                    &MY_REPLICATION,
                ))
            }
            _ => Err(format!("{shown} is not a postgres:// or mysql:// URL")),
        }
    }

    /// The driver of this target. Does not connect yet.
    pub fn driver(&self) -> Box<dyn Driver> {
        let o = &self.options;
        match self.settings.clone() {
            Settings::Sqlite(s) => Box::new(SqliteDriver::new(s)),
            Settings::Postgres(s) => Box::new(PostgresDriver::new(s, o.flavour)),
            Settings::Mysql(s) => {
                Box::new(MysqlDriver::new(s, o.engine.unwrap_or_default(), o.flavour))
            }
            #[cfg(test)]
            Settings::Mock(url) => Box::new(super::mock::MockDriver::new(&url)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::target::BackendKind;

    #[test]
    fn the_url_is_read_once_into_the_family_settings_the_record_and_the_host() {
        let t = ConnectTarget::parse(
            "postgres://u:secret@db.example:5432/x",
            &DriverOptions::default(),
        )
        .unwrap();
        assert_eq!(t.descriptor().kind, BackendKind::Postgres);
        assert_eq!(t.host, "db.example");
        assert_eq!(t.redacted_url, "postgres://u:***@db.example:5432/x");
        match t.settings() {
            Settings::Postgres(s) => assert!(!s.shown().contains("secret"), "{}", s.shown()),
            _ => panic!("not PostgreSQL settings"),
        }
        let t = ConnectTarget::parse("mysql://root@h:1/ibench", &DriverOptions::default()).unwrap();
        assert!(matches!(t.settings(), Settings::Mysql(_)));
        assert_eq!(t.host, "h");
        let t = ConnectTarget::parse("sqlite:x.db", &DriverOptions::default()).unwrap();
        assert!(matches!(t.settings(), Settings::Sqlite(_)));
        assert_eq!(
            (t.host.as_str(), t.redacted_url.as_str()),
            ("", "sqlite:x.db")
        );
    }

    #[test]
    fn an_unknown_scheme_names_the_url_flag() {
        let e = ConnectTarget::parse("oracle://u:pw@x", &DriverOptions::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("--url") && !e.contains("pw"), "{e}");
    }
}
