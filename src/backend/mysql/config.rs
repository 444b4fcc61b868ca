//! A MySQL/MariaDB connection's settings, read as the `mysql` client reads them: the URL
//! first (like the command line), then the `[client]` group of `~/.my.cnf`, then `MYSQL_PWD`
//! for the password. TLS as the client's `ssl-mode` (`DISABLED`, `PREFERRED`, the default,
//! `REQUIRED`, `VERIFY_CA`, `VERIFY_IDENTITY`) with `ssl-ca`, `ssl-cert` and `ssl-key`. The
//! logins that would hand a password to whoever asks need an explicit opt-in:
//! `enable-cleartext-plugin` (and TLS or a Unix socket), `get-server-public-key` or
//! `server-public-key-path`. A setting ibench does not support is refused in one line.
//! A URL may name several servers, tried in order, with ibench's `target_session_attrs`
//! ([`super::hosts`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::hosts::{Endpoint, TargetSession, endpoints, parse_port, split_hosts};
use crate::backend::protocol::TlsLedger;
use crate::backend::tls::{Roots, TlsPolicy, Verify};
use crate::url::{ServerUrl, UrlParts, percent_decode};

/// The client's `ssl-mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SslMode {
    /// Never TLS.
    Disabled,
    /// TLS when the server offers it, else plain (the client's default).
    #[default]
    Preferred,
    /// TLS or nothing; the certificate is not checked (unless `ssl-ca` is given: then as
    /// `VerifyCa`, as the client does).
    Required,
    /// TLS with a certificate that chains to `ssl-ca`.
    VerifyCa,
    /// TLS with a certificate that chains to `ssl-ca` and names the host.
    VerifyIdentity,
}

impl SslMode {
    fn parse(text: &str) -> Option<SslMode> {
        Some(match text.to_ascii_uppercase().as_str() {
            "DISABLED" => SslMode::Disabled,
            "PREFERRED" => SslMode::Preferred,
            "REQUIRED" => SslMode::Required,
            "VERIFY_CA" => SslMode::VerifyCa,
            "VERIFY_IDENTITY" => SslMode::VerifyIdentity,
            _ => return None,
        })
    }

    /// The client's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disabled => "DISABLED",
            SslMode::Preferred => "PREFERRED",
            SslMode::Required => "REQUIRED",
            SslMode::VerifyCa => "VERIFY_CA",
            SslMode::VerifyIdentity => "VERIFY_IDENTITY",
        }
    }

    /// A TCP connection in this mode fails rather than go without TLS.
    pub fn requires_tls(self) -> bool {
        !matches!(self, SslMode::Disabled | SslMode::Preferred)
    }
}

/// Everything a connection to a MySQL or MariaDB server needs.
#[derive(Clone)]
pub struct MyConfig {
    /// Where to connect: one server, or several tried in order (a URL naming several hosts).
    pub endpoints: Vec<Endpoint>,
    /// Which of them a connection may stay on (`target_session_attrs`; `any` by default).
    pub target_session: TargetSession,
    /// The user (empty: the server's anonymous user).
    pub user: String,
    /// The password, if any.
    pub password: Option<String>,
    /// The database to use (`None`: none).
    pub database: Option<String>,
    /// How long the whole connect and login may take.
    pub connect_timeout: Option<Duration>,
    /// `ssl-mode`.
    pub ssl_mode: SslMode,
    /// The rustls client configuration, built once (`None` for `DISABLED`).
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// Whether [`MyConfig::tls`] checks the server's certificate (`VERIFY_CA`,
    /// `VERIFY_IDENTITY`, `REQUIRED` with `ssl-ca`): only then may a password go in clear
    /// over TLS without an opt-in.
    pub tls_verified: bool,
    /// What TLS the connections made from this configuration (and its clones) got.
    pub tls_ledger: TlsLedger,
    /// `enable-cleartext-plugin`: the server may ask for the password in clear (over TLS or
    /// a Unix socket only).
    pub cleartext_plugin: bool,
    /// `server-public-key-path`: the server's RSA key for `caching_sha2_password` over plain
    /// TCP (PEM).
    pub server_public_key: Option<Vec<u8>>,
    /// `get-server-public-key`: fetch that key from the server (trusting whoever answers).
    pub get_server_public_key: bool,
}

impl std::fmt::Debug for MyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MyConfig")
            .field("endpoints", &self.endpoints)
            .field("target_session", &self.target_session)
            .field("user", &self.user)
            .field("database", &self.database)
            .field("ssl_mode", &self.ssl_mode)
            .finish_non_exhaustive()
    }
}

/// The settings ibench reads, by their option-file names (`_` and `-` are the same).
const SETTINGS: &[&str] = &[
    "user",
    "password",
    "host",
    "port",
    "socket",
    "database",
    "connect-timeout",
    "ssl-mode",
    "ssl-ca",
    "ssl-cert",
    "ssl-key",
    "enable-cleartext-plugin",
    "server-public-key-path",
    "get-server-public-key",
    "target-session-attrs",
];

/// One setting, from wherever it came.
#[derive(Default)]
struct Given {
    values: Vec<(String, String)>,
}

impl Given {
    fn get(&self, key: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Add `key=value` unless already given; refuse a key ibench does not read.
    fn add(&mut self, key: &str, value: String, source: &str) -> Result<(), String> {
        let key = key.trim().replace('_', "-").to_ascii_lowercase();
        // The `mysql` crate's URL option, kept working: ibench always goes where the URL says.
        if key == "prefer-socket" {
            return Ok(());
        }
        if !SETTINGS.contains(&key.as_str()) {
            return Err(format!(
                "{source}: ibench does not support the setting '{key}'{} (it reads {})",
                crate::suggest::did_you_mean(&key, SETTINGS.iter().copied()),
                SETTINGS.join(", ")
            ));
        }
        if self.get(&key).is_none() {
            self.values.push((key, value));
        }
        Ok(())
    }
}

impl MyConfig {
    /// Read a `mysql://` URL (password already resolved from `password_file=`), completed
    /// from `~/.my.cnf` (under `home`) and `MYSQL_PWD` (`env`).
    pub fn from_url_in(
        url: &str,
        env: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Result<MyConfig, String> {
        let parts = UrlParts::parse(url).ok_or_else(|| "not a mysql:// URL".to_string())?;
        MyConfig::from_parts_in(&ServerUrl::of(&parts), env, home)
    }

    /// Read a `mysql://` URL completed from the process's environment and `~/.my.cnf`.
    pub fn from_url(url: &str) -> Result<MyConfig, String> {
        let parts = UrlParts::parse(url).ok_or_else(|| "not a mysql:// URL".to_string())?;
        MyConfig::from_parts(&ServerUrl::of(&parts))
    }

    /// Read a `mysql://` URL's parts (password already resolved from `password_file=`),
    /// completed from the process's environment and `~/.my.cnf`.
    pub fn from_parts(url: &ServerUrl) -> Result<MyConfig, String> {
        let home = std::env::var("HOME").ok().map(PathBuf::from);
        MyConfig::from_parts_in(url, &|name| std::env::var(name).ok(), home.as_deref())
    }

    /// Read a `mysql://` URL's parts, completed from `~/.my.cnf` (under `home`) and
    /// `MYSQL_PWD` (`env`).
    pub fn from_parts_in(
        url: &ServerUrl,
        env: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Result<MyConfig, String> {
        let mut given = Given::default();
        if !url.user.is_empty() {
            given.add("user", percent_decode(&url.user), "--url")?;
        }
        if let Some(p) = &url.password {
            given.add("password", percent_decode(p), "--url")?;
        }
        let mut hosts = split_hosts(&url.hosts)?;
        if let [(host, port)] = hosts.as_slice() {
            if !host.is_empty() {
                given.add("host", host.clone(), "--url")?;
            }
            if let Some(p) = port {
                given.add("port", p.clone(), "--url")?;
            }
            hosts.clear();
        }
        if !url.path.is_empty() {
            given.add("database", percent_decode(&url.path), "--url")?;
        }
        for (k, v) in url.params() {
            given.add(k, percent_decode(v), "--url")?;
        }
        if let Some(home) = home {
            let file = home.join(".my.cnf");
            if let Ok(text) = read_option_file(&file) {
                for (k, v) in client_group(&text) {
                    given.add(&k, v, &file.display().to_string())?;
                }
            }
        }
        if let Some(p) = env("MYSQL_PWD").filter(|p| !p.is_empty()) {
            given.add("password", p, "MYSQL_PWD")?;
        }
        MyConfig::from_given(&given, &hosts)
    }

    /// The settings `given`; `several` are the URL's hosts when it names more than one.
    fn from_given(given: &Given, several: &[(String, Option<String>)]) -> Result<MyConfig, String> {
        let flag = |key: &str| -> Result<bool, String> {
            match given.get(key).map(str::to_ascii_lowercase).as_deref() {
                None => Ok(false),
                Some("" | "1" | "true" | "on" | "yes") => Ok(true),
                Some("0" | "false" | "off" | "no") => Ok(false),
                Some(other) => Err(format!("{key}={other}: give true or false")),
            }
        };
        let port = match given.get("port") {
            None => 3306,
            Some(p) => parse_port(p, None)?,
        };
        let endpoints = match (given.get("socket"), several) {
            (Some(path), []) => vec![Endpoint::Socket(PathBuf::from(path))],
            (None, []) => vec![Endpoint::Tcp {
                host: given.get("host").unwrap_or("localhost").to_string(),
                port,
            }],
            (Some(_), _) => {
                return Err(
                    "a URL naming several hosts connects to each over TCP: leave socket= out of --url (and ~/.my.cnf)"
                        .to_string(),
                );
            }
            (None, hosts) => endpoints(hosts, port)?,
        };
        let target_session = match given.get("target-session-attrs") {
            None => TargetSession::Any,
            Some(v) => TargetSession::parse(v)?,
        };
        let ssl_mode = match given.get("ssl-mode") {
            None => SslMode::Preferred,
            Some(m) => SslMode::parse(m).ok_or_else(|| {
                format!(
                    "ssl-mode={m}: use DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY"
                )
            })?,
        };
        let (tls, tls_verified) = tls_config(given, ssl_mode)?;
        let server_public_key = match given.get("server-public-key-path") {
            None => None,
            Some(p) => Some(
                std::fs::read(p)
                    .map_err(|e| format!("cannot read server-public-key-path {p}: {e}"))?,
            ),
        };
        let connect_timeout = match given.get("connect-timeout") {
            None => None,
            Some(t) => {
                let seconds: u64 = t
                    .trim()
                    .parse()
                    .map_err(|_| format!("connect-timeout={t}: give whole seconds"))?;
                (seconds > 0).then(|| Duration::from_secs(seconds))
            }
        };
        Ok(MyConfig {
            endpoints,
            target_session,
            user: given.get("user").unwrap_or_default().to_string(),
            password: given.get("password").map(str::to_string),
            database: given
                .get("database")
                .filter(|d| !d.is_empty())
                .map(str::to_string),
            connect_timeout,
            ssl_mode,
            tls,
            tls_verified,
            tls_ledger: TlsLedger::default(),
            cleartext_plugin: flag("enable-cleartext-plugin")?,
            server_public_key,
            get_server_public_key: flag("get-server-public-key")?,
        })
    }
}

impl MyConfig {
    /// The same settings for the one server `endpoint` (of a URL's several: the one a
    /// connection reached, where its `KILL QUERY` must go).
    pub fn pinned_to(&self, endpoint: &Endpoint) -> MyConfig {
        MyConfig {
            endpoints: vec![endpoint.clone()],
            target_session: TargetSession::Any,
            ..self.clone()
        }
    }
}

/// The rustls configuration of `ssl-mode`, `ssl-ca`, `ssl-cert` and `ssl-key` (`None` for
/// `DISABLED`), and whether it checks the server's certificate.
fn tls_config(
    given: &Given,
    ssl_mode: SslMode,
) -> Result<(Option<Arc<rustls::ClientConfig>>, bool), String> {
    if ssl_mode == SslMode::Disabled {
        return Ok((None, false));
    }
    let roots = given
        .get("ssl-ca")
        .map_or(Roots::None, |p| Roots::File(PathBuf::from(p)));
    let verify = match ssl_mode {
        SslMode::VerifyIdentity => Verify::ChainAndName,
        SslMode::VerifyCa => Verify::Chain,
        // The client: `REQUIRED` with `ssl-ca` verifies the chain.
        SslMode::Required if roots != Roots::None => Verify::Chain,
        _ => Verify::Nothing,
    };
    let client_cert = match (given.get("ssl-cert"), given.get("ssl-key")) {
        (Some(c), Some(k)) => Some((PathBuf::from(c), PathBuf::from(k))),
        (None, None) => None,
        _ => return Err("give ssl-cert and ssl-key together".to_string()),
    };
    let policy = TlsPolicy {
        verify,
        roots,
        client_cert,
    };
    let config = policy.client_config().map_err(|e| e.to_string())?;
    Ok((Some(Arc::new(config)), verify != Verify::Nothing))
}

/// The text of an option file, unless anyone may write it: such a file is ignored with a
/// warning (once per process), as the MySQL client ignores it, since whoever wrote it chose
/// the host, the user and the TLS mode the password goes to.
fn read_option_file(file: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(file)?.permissions().mode();
    if mode & 0o002 != 0 {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            crate::say!(
                "warning: {} is world-writable and is ignored (as the MySQL client ignores \
                 it): chmod o-w it",
                file.display()
            );
        });
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "world-writable",
        ));
    }
    std::fs::read_to_string(file)
}

/// The `key=value` lines of the `[client]` group of an option file (a key alone is `true`;
/// quotes around a value are taken off; `#` and `;` start comments).
fn client_group(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut in_client = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(group) = line.strip_prefix('[') {
            in_client = group
                .trim_end_matches(']')
                .trim()
                .eq_ignore_ascii_case("client");
            continue;
        }
        if !in_client {
            continue;
        }
        let (k, v) = line.split_once('=').unwrap_or((line, ""));
        let v = v.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(v);
        out.push((k.trim().to_string(), v.to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str) -> Result<MyConfig, String> {
        MyConfig::from_url_in(url, &|_| None, None)
    }

    #[test]
    fn urls_read_as_the_client_reads_its_options() {
        let c = config("mysql://bob:p%40ss@db.example:3307/ibench").unwrap();
        assert_eq!(
            c.endpoints,
            [Endpoint::Tcp {
                host: "db.example".into(),
                port: 3307
            }]
        );
        assert_eq!(
            (c.user.as_str(), c.password.as_deref()),
            ("bob", Some("p@ss"))
        );
        assert_eq!(c.database.as_deref(), Some("ibench"));
        assert_eq!(c.ssl_mode, SslMode::Preferred, "the client's default");
        assert!(!c.cleartext_plugin && !c.get_server_public_key);
        let c = config("mysql://root@localhost/x?socket=/tmp/my.sock&prefer_socket=false").unwrap();
        assert_eq!(c.endpoints, [Endpoint::Socket("/tmp/my.sock".into())]);
        let c = config("mysql://u@[::1]/x?ssl-mode=disabled&get_server_public_key=true").unwrap();
        assert_eq!(c.ssl_mode, SslMode::Disabled);
        assert!(c.tls.is_none() && c.get_server_public_key);
    }

    #[test]
    fn a_url_may_name_several_hosts_tried_in_order() {
        let c = config("mysql://u@h1:3307,h2/x?port=3310&target_session_attrs=read-write").unwrap();
        let tcp = |host: &str, port| Endpoint::Tcp {
            host: host.into(),
            port,
        };
        assert_eq!(c.endpoints, [tcp("h1", 3307), tcp("h2", 3310)]);
        assert_eq!(c.target_session, TargetSession::ReadWrite);
        let c = config("mysql://u@h1/x").unwrap();
        assert_eq!(c.target_session, TargetSession::Any, "the default");
        let e = config("mysql://u@h1,h2/x?socket=/tmp/s").unwrap_err();
        assert!(e.contains("socket="), "{e}");
        let e = config("mysql://u@h1,h2/x?target_session_attrs=primary").unwrap_err();
        assert!(e.contains("read-write"), "{e}");
        let e = config("mysql://u@h1,/x").unwrap_err();
        assert!(e.contains("empty host"), "{e}");
    }

    #[test]
    fn unsupported_or_bad_settings_are_refused_in_one_line() {
        let e = config("mysql://u@h/x?compress=true").unwrap_err();
        assert!(e.contains("'compress'") && e.contains("--url"), "{e}");
        let e = config("mysql://u@h/x?ssl-mode=SOMETIMES").unwrap_err();
        assert!(e.contains("VERIFY_IDENTITY"), "{e}");
        let e = config("mysql://u@h/x?ssl-mode=VERIFY_CA").unwrap_err();
        assert!(e.contains("ssl-ca="), "{e}");
        let e = config("mysql://u@h/x?ssl-cert=/a.pem").unwrap_err();
        assert!(e.contains("together"), "{e}");
    }

    #[test]
    fn the_option_file_and_mysql_pwd_fill_what_the_url_leaves_out() {
        let dir = std::env::temp_dir().join(format!("ibench-mycnf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(".my.cnf"),
            "[mysqld]\nbind=x\n[client]\nuser = carol\npassword=\"fromfile\"\nssl_mode=REQUIRED\n",
        )
        .unwrap();
        let env = |name: &str| (name == "MYSQL_PWD").then(|| "fromenv".to_string());
        let c = MyConfig::from_url_in("mysql://h/x", &env, Some(&dir)).unwrap();
        assert_eq!(c.user, "carol");
        assert_eq!(c.password.as_deref(), Some("fromfile"));
        assert_eq!(c.ssl_mode, SslMode::Required);
        let c = MyConfig::from_url_in("mysql://dan:url@h/x", &env, Some(&dir)).unwrap();
        assert_eq!(
            (c.user.as_str(), c.password.as_deref()),
            ("dan", Some("url"))
        );
        std::fs::write(
            dir.join(".my.cnf"),
            "[client]\ndefault-character-set=latin1\n",
        )
        .unwrap();
        let e = MyConfig::from_url_in("mysql://h/x", &env, Some(&dir)).unwrap_err();
        assert!(
            e.contains(".my.cnf") && e.contains("default-character-set"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
