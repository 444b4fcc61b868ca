//! A PostgreSQL connection's settings, read as libpq reads them: the URL first, then the
//! environment (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, `PGAPPNAME`,
//! `PGOPTIONS`, `PGCONNECT_TIMEOUT`, `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY`,
//! `PGREQUIREAUTH`, `PGTARGETSESSIONATTRS`), then the password file (`PGPASSFILE`, else
//! `~/.pgpass`), then libpq's defaults (`~/.postgresql/root.crt` and `postgresql.crt`/`.key`
//! when they exist). A setting ibench does not support, in the URL or the environment, is
//! refused in one line.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::session_attrs::TargetSessionAttrs;
use crate::backend::protocol::TlsLedger;
use crate::backend::tls::{Roots, TlsPolicy, Verify};
use crate::url::{ServerUrl, UrlParts, percent_decode, percent_encode};

/// One host of the URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    /// A host name or address, reached over TCP.
    Tcp(String),
    /// A directory holding the server's Unix socket (`.s.PGSQL.PORT`).
    Unix(PathBuf),
}

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// Plain first; TLS when the server refuses plain.
    Allow,
    /// TLS when the server offers it, else plain (libpq's default).
    #[default]
    Prefer,
    /// TLS or nothing; the certificate is not checked (unless a root certificate file is
    /// there: then as `VerifyCa`, as libpq does).
    Require,
    /// TLS with a certificate that chains to the trusted roots.
    VerifyCa,
    /// TLS with a certificate that chains to the trusted roots and names the host.
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> Option<SslMode> {
        Some(match text {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    /// A connection in this mode fails rather than go without TLS (over TCP).
    pub fn requires_tls(self) -> bool {
        matches!(
            self,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
        )
    }
}

/// The logins a connection may answer: libpq's `require_auth`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthMethods {
    /// Cleartext password (`password`).
    pub password: bool,
    /// MD5 (`md5`).
    pub md5: bool,
    /// SCRAM-SHA-256 (`scram-sha-256`).
    pub scram: bool,
    /// No authentication at all (`none`: the server lets the user in without asking).
    pub none: bool,
    /// `password` was named by the user: a cleartext password may go over TCP without TLS.
    pub cleartext_opted_in: bool,
}

impl Default for AuthMethods {
    fn default() -> Self {
        AuthMethods {
            password: true,
            md5: true,
            scram: true,
            none: true,
            cleartext_opted_in: false,
        }
    }
}

impl AuthMethods {
    /// Parse a `require_auth` list: methods, or methods each negated with `!` (not both).
    pub fn parse(text: &str) -> Result<AuthMethods, String> {
        let names: Vec<&str> = text.split(',').map(str::trim).collect();
        let negated = names.iter().filter(|n| n.starts_with('!')).count();
        if negated != 0 && negated != names.len() {
            return Err(format!(
                "require_auth={text}: negated (!) and plain methods cannot be mixed"
            ));
        }
        let allow = negated == 0;
        let mut m = AuthMethods {
            password: !allow,
            md5: !allow,
            scram: !allow,
            none: !allow,
            cleartext_opted_in: false,
        };
        for name in names {
            let field = match name.trim_start_matches('!') {
                "password" => {
                    m.cleartext_opted_in = allow;
                    &mut m.password
                }
                "md5" => &mut m.md5,
                "scram-sha-256" => &mut m.scram,
                "none" => &mut m.none,
                "gss" | "sspi" => continue,
                other => {
                    return Err(format!(
                        "require_auth: unknown method '{other}' (password, md5, scram-sha-256, \
                         none, gss, sspi, each optionally negated with !)"
                    ));
                }
            };
            *field = allow;
        }
        Ok(m)
    }
}

/// One line of a password file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PassEntry {
    fields: [String; 4],
    password: String,
}

/// libpq's `channel_binding`: whether SCRAM binds the login to the TLS session
/// (`SCRAM-SHA-256-PLUS` with `tls-server-end-point`), so that a man in the middle who relays
/// a SCRAM exchange between two TLS sessions is caught.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelBinding {
    /// Never bind (the SCRAM header says `n`: no binding supported).
    Disable,
    /// Bind when the connection is TLS and the server offers `SCRAM-SHA-256-PLUS`; libpq's
    /// default.
    Prefer,
    /// Bind, or refuse the login: no TLS, a server without `-PLUS`, or a login that is not
    /// SCRAM at all.
    Require,
}

impl ChannelBinding {
    fn parse(text: &str) -> Result<ChannelBinding, String> {
        match text {
            "disable" => Ok(ChannelBinding::Disable),
            "prefer" => Ok(ChannelBinding::Prefer),
            "require" => Ok(ChannelBinding::Require),
            other => Err(format!(
                "channel_binding={other}: use disable, prefer or require"
            )),
        }
    }
}

/// Why a URL's settings could not be read: the URL as written is wrong (a command line to
/// fix), or the environment or a file it names is.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A query parameter ibench does not read, or a value it does not take.
    #[error("{0}")]
    Url(String),
    /// The environment, a file, or what the parts add up to.
    #[error("{0}")]
    Setup(String),
}

impl From<String> for ConfigError {
    fn from(e: String) -> Self {
        ConfigError::Setup(e)
    }
}

/// What the query parameters give beside the configuration's own fields, read further once
/// all are seen.
struct QueryParts {
    hosts: Vec<String>,
    ports: Vec<String>,
    timeout: Option<String>,
    ssl: SslSettings,
}

/// Everything a connection to a PostgreSQL server needs.
#[derive(Clone)]
pub struct PgConfig {
    /// The hosts, tried in order.
    pub hosts: Vec<Host>,
    /// One port for all hosts, or one per host.
    pub ports: Vec<u16>,
    /// The user to log in as.
    pub user: String,
    /// The password (URL, `PGPASSWORD`), if given; the password file is asked per host.
    pub password: Option<String>,
    /// The database (the user's name when none).
    pub dbname: Option<String>,
    /// `application_name`.
    pub application_name: Option<String>,
    /// Command-line options for the server (`-c name=value`).
    pub options: Option<String>,
    /// How long the whole connect and login may take (`None`: unbounded).
    pub connect_timeout: Option<Duration>,
    /// `sslmode`.
    pub ssl_mode: SslMode,
    /// What the TLS session checks, as given; `None` for `sslmode=disable`.
    pub tls_policy: Option<TlsPolicy>,
    /// The rustls client configuration of [`PgConfig::tls_policy`], built once.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// The logins the connection may answer.
    pub require_auth: AuthMethods,
    /// `channel_binding` (`PGCHANNELBINDING`).
    pub channel_binding: ChannelBinding,
    /// What TLS the connections made from this configuration (and its clones) got.
    pub tls_ledger: TlsLedger,
    /// Which of the hosts a connection may stay on (`target_session_attrs`,
    /// `PGTARGETSESSIONATTRS`).
    pub target_session_attrs: TargetSessionAttrs,
    passfile: Vec<PassEntry>,
}

impl std::fmt::Debug for PgConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConfig")
            .field("hosts", &self.hosts)
            .field("ports", &self.ports)
            .field("user", &self.user)
            .field("dbname", &self.dbname)
            .field("ssl_mode", &self.ssl_mode)
            .finish_non_exhaustive()
    }
}

/// The URL query parameters ibench reads (libpq's names).
const URL_PARAMS: &[&str] = &[
    "host",
    "port",
    "user",
    "password",
    "dbname",
    "application_name",
    "options",
    "connect_timeout",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "require_auth",
    "channel_binding",
    "target_session_attrs",
];

/// libpq environment variables ibench does not support: refused when set, never ignored
/// (with the values that change nothing accepted).
const UNSUPPORTED_ENV: &[(&str, &[&str])] = &[
    ("PGSERVICE", &[]),
    ("PGSERVICEFILE", &[]),
    ("PGHOSTADDR", &[]),
    ("PGSSLCRL", &[]),
    ("PGSSLCRLDIR", &[]),
    ("PGSSLSNI", &["1"]),
    ("PGSSLNEGOTIATION", &["postgres"]),
    ("PGSSLCOMPRESSION", &["0"]),
    ("PGSSLCERTMODE", &["allow"]),
    ("PGSSLMINPROTOCOLVERSION", &[]),
    ("PGSSLMAXPROTOCOLVERSION", &[]),
    ("PGGSSENCMODE", &["disable", "prefer"]),
    ("PGGSSDELEGATION", &["0"]),
    ("PGKRBSRVNAME", &[]),
    ("PGGSSLIB", &[]),
    ("PGREQUIREPEER", &[]),
    ("PGLOADBALANCEHOSTS", &["disable"]),
    ("PGCLIENTENCODING", &["UTF8", "utf8", "UTF-8"]),
    ("PGDATESTYLE", &[]),
    ("PGTZ", &[]),
    ("PGGEQO", &[]),
];

/// The environment and home directory a configuration is read from (the process's own, or a
/// test's).
pub struct Environment<'a> {
    /// A variable's value.
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// The home directory (`~/.pgpass`, `~/.postgresql/`).
    pub home: Option<PathBuf>,
}

impl Environment<'_> {
    fn get(&self, name: &str) -> Option<String> {
        (self.var)(name).filter(|v| !v.is_empty())
    }
}

impl Environment<'static> {
    /// The process's environment and home directory.
    pub fn process() -> Environment<'static> {
        Environment {
            var: &process_var,
            home: process_var("HOME").map(PathBuf::from),
        }
    }
}

/// The process's environment variable `name`.
pub fn process_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl PgConfig {
    /// Read a `postgres://` URL (password already resolved), completed from the process's
    /// environment and files.
    pub fn from_url(url: &str) -> Result<PgConfig, String> {
        PgConfig::from_url_in(url, &Environment::process())
    }

    /// Read a `postgres://` URL completed from `env`.
    pub fn from_url_in(url: &str, env: &Environment<'_>) -> Result<PgConfig, String> {
        let parts = UrlParts::parse(url).ok_or_else(|| "not a postgres:// URL".to_string())?;
        PgConfig::from_completed_in(&complete(&ServerUrl::of(&parts), env.var), env)
            .map_err(|e| e.to_string())
    }

    /// Read a `postgres://` URL's parts already completed by [`complete`] (so that they are
    /// completed once, for both the settings and the text messages show), with the process's
    /// environment and files.
    pub fn from_completed(url: &ServerUrl) -> Result<PgConfig, ConfigError> {
        PgConfig::from_completed_in(url, &Environment::process())
    }

    /// Read a `postgres://` URL's parts already completed from `env` by [`complete`].
    fn from_completed_in(url: &ServerUrl, env: &Environment<'_>) -> Result<PgConfig, ConfigError> {
        check_unsupported_env(env)?;
        let mut config = PgConfig {
            hosts: Vec::new(),
            ports: Vec::new(),
            user: percent_decode(&url.user),
            password: url.password.as_deref().map(percent_decode),
            dbname: Some(percent_decode(&url.path)).filter(|d| !d.is_empty()),
            application_name: env.get("PGAPPNAME"),
            options: env.get("PGOPTIONS"),
            connect_timeout: None,
            ssl_mode: SslMode::Prefer,
            tls_policy: None,
            tls: None,
            require_auth: AuthMethods::default(),
            channel_binding: ChannelBinding::Prefer,
            tls_ledger: TlsLedger::default(),
            target_session_attrs: TargetSessionAttrs::Any,
            passfile: Vec::new(),
        };
        config.read_hosts(&url.hosts)?;
        let ssl = SslSettings::from_env(env)?;
        if let Some(methods) = env.get("PGREQUIREAUTH") {
            config.require_auth = AuthMethods::parse(&methods)?;
        }
        if let Some(binding) = env.get("PGCHANNELBINDING") {
            config.channel_binding = ChannelBinding::parse(&binding)?;
        }
        if let Some(attrs) = env.get("PGTARGETSESSIONATTRS") {
            config.target_session_attrs = TargetSessionAttrs::parse(&attrs)?;
        }
        let mut query = QueryParts {
            hosts: Vec::new(),
            ports: Vec::new(),
            timeout: env.get("PGCONNECT_TIMEOUT"),
            ssl,
        };
        config
            .read_params(url, &mut query)
            .map_err(ConfigError::Url)?;
        let QueryParts {
            hosts: query_hosts,
            ports: query_ports,
            timeout,
            ssl,
        } = query;
        config.add_query_hosts(&query_hosts, &query_ports)?;
        config.connect_timeout = timeout
            .as_deref()
            .map(connect_timeout)
            .transpose()?
            .flatten();
        config.ssl_mode = ssl.resolve_mode(env)?;
        config.tls_policy = ssl.policy(config.ssl_mode, env);
        config.tls = match &config.tls_policy {
            Some(p) => Some(Arc::new(p.client_config().map_err(|e| e.to_string())?)),
            None => None,
        };
        if config.password.is_none() {
            config.passfile = read_passfile(env)?;
        }
        Ok(config)
    }

    /// Read the URL's query parameters into `self` and `query`: an error here is the URL as
    /// written (a parameter ibench does not read, a value it does not take).
    fn read_params(&mut self, url: &ServerUrl, query: &mut QueryParts) -> Result<(), String> {
        for (key, value) in url.params() {
            let value = percent_decode(value);
            match key {
                "host" => query.hosts.extend(value.split(',').map(str::to_string)),
                "port" => query.ports.extend(value.split(',').map(str::to_string)),
                "user" => self.user = value,
                "password" => self.password = Some(value),
                "dbname" => self.dbname = Some(value),
                "application_name" => self.application_name = Some(value),
                "options" => self.options = Some(value),
                "connect_timeout" => query.timeout = Some(value),
                "sslmode" => query.ssl.mode = Some(value),
                "sslrootcert" => query.ssl.root_cert = Some(value),
                "sslcert" => query.ssl.cert = Some(value),
                "sslkey" => query.ssl.key = Some(value),
                "require_auth" => self.require_auth = AuthMethods::parse(&value)?,
                "channel_binding" => self.channel_binding = ChannelBinding::parse(&value)?,
                "target_session_attrs" => {
                    self.target_session_attrs = TargetSessionAttrs::parse(&value)?;
                }
                other => {
                    return Err(format!(
                        "ibench does not support the parameter '{other}'{} (it reads {})",
                        crate::suggest::did_you_mean(other, URL_PARAMS.iter().copied()),
                        URL_PARAMS.join(", ")
                    ));
                }
            }
        }
        Ok(())
    }

    /// Add the hosts and ports given as query parameters (`?host=/tmp&port=5433`); `localhost`
    /// when no host was given at all. Several ports must be one per host.
    fn add_query_hosts(&mut self, hosts: &[String], ports: &[String]) -> Result<(), String> {
        for h in hosts {
            self.hosts.push(host_of(h));
        }
        for p in ports {
            self.ports.push(parse_port(p)?);
        }
        if self.hosts.is_empty() {
            self.hosts.push(Host::Tcp("localhost".to_string()));
        }
        if self.ports.len() > 1 && self.ports.len() != self.hosts.len() {
            return Err(format!(
                "{} ports for {} hosts: give one port, or one per host",
                self.ports.len(),
                self.hosts.len()
            ));
        }
        Ok(())
    }

    /// Add the URL's authority hosts (`h1:5432,[::1]:5433,%2Ftmp`).
    fn read_hosts(&mut self, hosts: &str) -> Result<(), String> {
        if hosts.is_empty() {
            return Ok(());
        }
        let mut ports = Vec::new();
        for item in hosts.split(',') {
            let (host, port) = split_host_port(item);
            self.hosts.push(host_of(&percent_decode(host)));
            ports.push(port.map(parse_port).transpose()?);
        }
        if ports.iter().any(Option::is_some) {
            self.ports = ports.into_iter().map(|p| p.unwrap_or(5432)).collect();
        }
        Ok(())
    }

    /// The port of host `i`.
    pub fn port_of(&self, i: usize) -> u16 {
        match self.ports.len() {
            0 => 5432,
            1 => self.ports[0],
            _ => self.ports.get(i).copied().unwrap_or(5432),
        }
    }

    /// The password to answer host `i` with: the given one, else the password file's.
    pub fn password_for(&self, i: usize) -> Option<String> {
        if let Some(p) = &self.password {
            return Some(p.clone());
        }
        let host = match self.hosts.get(i)? {
            // libpq matches a socket connection as `localhost`.
            Host::Unix(_) => "localhost".to_string(),
            Host::Tcp(name) => name.clone(),
        };
        let port = self.port_of(i).to_string();
        let db = self.dbname.clone().unwrap_or_else(|| self.user.clone());
        let wanted = [
            host.as_str(),
            port.as_str(),
            db.as_str(),
            self.user.as_str(),
        ];
        self.passfile
            .iter()
            .find(|e| {
                e.fields
                    .iter()
                    .zip(wanted)
                    .all(|(field, want)| field == "*" || field == want)
            })
            .map(|e| e.password.clone())
    }
}

/// The TLS settings as given, before they are resolved into a mode and a policy.
#[derive(Default)]
struct SslSettings {
    mode: Option<String>,
    root_cert: Option<String>,
    cert: Option<String>,
    key: Option<String>,
}

impl SslSettings {
    fn from_env(env: &Environment<'_>) -> Result<SslSettings, String> {
        Ok(SslSettings {
            mode: env.get("PGSSLMODE"),
            root_cert: env.get("PGSSLROOTCERT"),
            cert: env.get("PGSSLCERT"),
            key: env.get("PGSSLKEY"),
        })
    }

    /// The mode: as given, else `verify-full` with `sslrootcert=system`, else `prefer`.
    fn resolve_mode(&self, _env: &Environment<'_>) -> Result<SslMode, String> {
        let system = self.root_cert.as_deref() == Some("system");
        let mode = match &self.mode {
            None if system => SslMode::VerifyFull,
            None => SslMode::Prefer,
            Some(m) => SslMode::parse(m).ok_or_else(|| {
                format!(
                    "sslmode={m}: use disable, allow, prefer, require, verify-ca or verify-full"
                )
            })?,
        };
        if system && mode != SslMode::VerifyFull {
            return Err(format!(
                "sslrootcert=system needs sslmode=verify-full (libpq refuses a weaker mode with \
                 the system's roots), not {}",
                self.mode.as_deref().unwrap_or("prefer")
            ));
        }
        Ok(mode)
    }

    /// What TLS checks in `mode`, with libpq's default files under `~/.postgresql/`.
    fn policy(&self, mode: SslMode, env: &Environment<'_>) -> Option<TlsPolicy> {
        if mode == SslMode::Disable {
            return None;
        }
        let default_file = |name: &str| {
            env.home
                .as_ref()
                .map(|h| h.join(".postgresql").join(name))
                .filter(|p| p.exists())
        };
        let roots = match self.root_cert.as_deref() {
            Some("system") => Roots::System,
            Some(path) => Roots::File(PathBuf::from(path)),
            None => default_file("root.crt").map_or(Roots::None, Roots::File),
        };
        let verify = match mode {
            SslMode::VerifyFull => Verify::ChainAndName,
            SslMode::VerifyCa => Verify::Chain,
            // libpq: `require` with a root certificate file verifies as `verify-ca`.
            SslMode::Require if roots != Roots::None => Verify::Chain,
            _ => Verify::Nothing,
        };
        let cert = self
            .cert
            .as_ref()
            .map(PathBuf::from)
            .or_else(|| default_file("postgresql.crt"));
        let key = self
            .key
            .as_ref()
            .map(PathBuf::from)
            .or_else(|| default_file("postgresql.key"));
        Some(TlsPolicy {
            verify,
            roots,
            client_cert: cert.zip(key),
        })
    }
}

fn check_unsupported_env(env: &Environment<'_>) -> Result<(), String> {
    for (name, harmless) in UNSUPPORTED_ENV {
        if let Some(v) = env.get(name)
            && !harmless.contains(&v.as_str())
        {
            return Err(format!(
                "the environment sets {name}={v}, which ibench does not support: unset it"
            ));
        }
    }
    Ok(())
}

/// The password file's entries: `PGPASSFILE`, else `~/.pgpass`; none when it does not
/// exist. A file that others can read is refused, as libpq ignores it (with a warning).
fn read_passfile(env: &Environment<'_>) -> Result<Vec<PassEntry>, String> {
    let path = match env.get("PGPASSFILE") {
        Some(p) => PathBuf::from(p),
        None => match &env.home {
            Some(h) => h.join(".pgpass"),
            None => return Ok(Vec::new()),
        },
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(Vec::new());
    };
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "the password file {} has group or world access: chmod 0600 it (libpq ignores \
             such a file)",
            path.display()
        ));
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read the password file {}: {e}", path.display()))?;
    Ok(parse_passfile(&text))
}

/// `hostname:port:database:username:password` lines; `\:` and `\\` escape; `#` comments.
fn parse_passfile(text: &str) -> Vec<PassEntry> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::new();
        let mut current = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => current.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut current)),
                c => current.push(c),
            }
        }
        if let Ok(fields) = <[String; 4]>::try_from(fields) {
            out.push(PassEntry {
                fields,
                password: current,
            });
        }
    }
    out
}

fn host_of(text: &str) -> Host {
    if text.starts_with('/') {
        Host::Unix(PathBuf::from(text))
    } else {
        Host::Tcp(text.to_string())
    }
}

/// `name:port`, `[v6]:port`, `name` (a percent-encoded socket path has no raw `:`).
fn split_host_port(item: &str) -> (&str, Option<&str>) {
    if let Some(rest) = item.strip_prefix('[') {
        let (host, after) = rest.split_once(']').unwrap_or((rest, ""));
        return (host, after.strip_prefix(':'));
    }
    match item.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (item, None),
    }
}

/// `connect_timeout` as libpq reads it: whole seconds, anything below 2 s is 2 s, 0 is no
/// limit (`None`).
fn connect_timeout(text: &str) -> Result<Option<Duration>, String> {
    let seconds: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("connect_timeout={text}: give whole seconds (0 means no limit)"))?;
    Ok((seconds > 0).then(|| Duration::from_secs(seconds.max(2))))
}

fn parse_port(text: &str) -> Result<u16, String> {
    text.trim()
        .parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("'{text}' is not a port"))
}

/// The socket file of a socket directory.
pub fn socket_file(dir: &Path, port: u16) -> PathBuf {
    dir.join(format!(".s.PGSQL.{port}"))
}

// ---------------------------------------------------------------------------------------------
// URL completion from the environment.

/// Complete a Postgres URL's parts from the libpq environment variables for the parts it
/// leaves out: user (`PGUSER`, else `USER`/`LOGNAME`, else `postgres`), password
/// (`PGPASSWORD`), hosts (`PGHOST`, else the socket directory `/var/run/postgresql` then
/// `localhost`), the port of every host without one (`PGPORT`) and the database
/// (`PGDATABASE`). Parts given as query parameters (`?host=...`) count as given.
pub fn complete(url: &ServerUrl, env: &dyn Fn(&str) -> Option<String>) -> ServerUrl {
    let env_set = |name: &str| env(name).filter(|v| !v.is_empty());
    let mut out = url.clone();
    out.has_userinfo = true;
    if out.user.is_empty() && !url.has_param("user") {
        let name = env_set("PGUSER")
            .or_else(|| env_set("USER"))
            .or_else(|| env_set("LOGNAME"))
            .unwrap_or_else(|| "postgres".to_string());
        out.user = percent_encode(&name);
    }
    if out.password.is_none() && !url.has_param("password") {
        out.password = env_set("PGPASSWORD").map(|p| percent_encode(&p));
    }
    let port = if url.has_param("port") {
        None
    } else {
        env_set("PGPORT")
    };
    let (hosts, extra_query) =
        pg_hosts(&url.hosts, url.has_param("host"), port.as_deref(), &env_set);
    out.hosts = hosts;
    if out.path.is_empty() && !url.has_param("dbname") {
        out.path = env_set("PGDATABASE")
            .map(|d| percent_encode(&d))
            .unwrap_or_default();
    }
    out.params.extend(extra_query);
    out
}

/// The host list of a completed URL (with `PGHOST` and `PGPORT` where the URL leaves them
/// out), and the query parameters to add (`port` when the hosts come from the query).
fn pg_hosts(
    hosts: &str,
    host_in_query: bool,
    port: Option<&str>,
    env_set: &dyn Fn(&str) -> Option<String>,
) -> (String, Vec<String>) {
    let mut extra_query = Vec::new();
    let hosts = if hosts.is_empty() && host_in_query {
        if let Some(p) = port {
            extra_query.push(format!("port={}", percent_encode(p)));
        }
        String::new()
    } else {
        let given: Vec<String> = if hosts.is_empty() {
            env_set("PGHOST")
                .unwrap_or_else(|| "/var/run/postgresql,localhost".to_string())
                .split(',')
                .map(percent_encode)
                .collect()
        } else {
            hosts.split(',').map(str::to_string).collect()
        };
        given
            .into_iter()
            .map(|h| match port {
                Some(p) if !host_has_port(&h) => format!("{h}:{}", percent_encode(p)),
                _ => h,
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    (hosts, extra_query)
}

fn host_has_port(host: &str) -> bool {
    if host.starts_with('[') {
        host.contains("]:")
    } else {
        host.contains(':')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<String> + use<> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn config(
        url: &str,
        pairs: &'static [(&'static str, &'static str)],
    ) -> Result<PgConfig, String> {
        let var = env_of(pairs);
        PgConfig::from_url_in(
            url,
            &Environment {
                var: &var,
                home: None,
            },
        )
    }

    /// `url` completed from `env`, the password in clear.
    fn filled(url: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
        complete(&ServerUrl::of(&UrlParts::parse(url).unwrap()), env).render()
    }

    /// The URLs and environments of the rendering's table.
    const URLS: &[&str] = &[
        "postgres://bob:pw@db.example:6000/ibench",
        "postgres://bob:pw@h:1/db",
        "postgresql://",
        "postgres://",
        "postgres:///ibench",
        "postgres://bob@h1,h2:7/x",
        "postgres:///db?host=/tmp/s",
        "postgres://u@/db?host=/run/pg&port=5433",
        "postgres://u:p%40ss@[::1]:7,h:8/d?sslmode=disable",
        "postgres://u@[::1]/d",
        "postgres://bob:se/c@ret@h1:5,h2/db?sslmode=disable&x",
        "postgres://u:pa?ss@h/db",
        "postgres://u:S3c?x=retPW@host/db",
        "postgres://h/db?user=bob@corp",
        "postgres://h/db?user=bob&password=secret&application_name=a",
        "postgres://u@h/db?PASSWORD=s&sslmode=require&",
        "postgres://u@h/db?&&connect_timeout=3&&",
        "postgres://:pw@h/db?user=x",
        "postgres://@h:5/db",
        "postgres://u@h/",
        "postgres://u@h?dbname=x&user=y",
        "postgres://u@%2Ftmp%2Fsock/db",
        "POSTGRES://u@H/db",
        "postgres://h:5432?user=bob@corp",
        "postgres://u:pw@h?application_name=a@b",
    ];

    /// The environments of the rendering's table (each variable `libpq` reads, or none).
    const ENVS: &[&[(&str, &str)]] = &[
        &[],
        &[("USER", "root")],
        &[
            ("PGHOST", "/tmp/sock"),
            ("PGPORT", "55432"),
            ("PGUSER", "alice"),
            ("PGPASSWORD", "s/cret"),
            ("PGDATABASE", "bench"),
        ],
        &[
            ("PGHOST", "a,[::1]:9,b"),
            ("PGPORT", "6"),
            ("LOGNAME", "l o"),
        ],
        &[("PGPASSWORD", "p@:ss"), ("PGDATABASE", "d/b")],
    ];

    /// What the table renders: `ENV URL => completed URL, password masked`. The last two URLs
    /// have no path, so their query stands in the authority, where the redaction's safety net
    /// masks everything between the user's `:` and the last `@`: more than the password, as it
    /// always did (`redact_url`).
    const RENDERED: &str = "\
0 postgres://bob:pw@db.example:6000/ibench => postgres://bob:***@db.example:6000/ibench\n\
0 postgres://bob:pw@h:1/db => postgres://bob:***@h:1/db\n\
0 postgresql:// => postgresql://postgres@%2Fvar%2Frun%2Fpostgresql,localhost\n\
0 postgres:// => postgres://postgres@%2Fvar%2Frun%2Fpostgresql,localhost\n\
0 postgres:///ibench => postgres://postgres@%2Fvar%2Frun%2Fpostgresql,localhost/ibench\n\
0 postgres://bob@h1,h2:7/x => postgres://bob@h1,h2:7/x\n\
0 postgres:///db?host=/tmp/s => postgres://postgres@/db?host=/tmp/s\n\
0 postgres://u@/db?host=/run/pg&port=5433 => postgres://u@/db?host=/run/pg&port=5433\n\
0 postgres://u:p%40ss@[::1]:7,h:8/d?sslmode=disable => postgres://u:***@[::1]:7,h:8/d?sslmode=disable\n\
0 postgres://u@[::1]/d => postgres://u@[::1]/d\n\
0 postgres://bob:se/c@ret@h1:5,h2/db?sslmode=disable&x => postgres://bob:***@h1:5,h2/db?sslmode=disable&x\n\
0 postgres://u:pa?ss@h/db => postgres://u:***@h/db\n\
0 postgres://u:S3c?x=retPW@host/db => postgres://u:***@host/db\n\
0 postgres://h/db?user=bob@corp => postgres://@h/db?user=bob@corp\n\
0 postgres://h/db?user=bob&password=secret&application_name=a => postgres://@h/db?user=bob&password=***&application_name=a\n\
0 postgres://u@h/db?PASSWORD=s&sslmode=require& => postgres://u@h/db?PASSWORD=***&sslmode=require\n\
0 postgres://u@h/db?&&connect_timeout=3&& => postgres://u@h/db?connect_timeout=3\n\
0 postgres://:pw@h/db?user=x => postgres://:***@h/db?user=x\n\
0 postgres://@h:5/db => postgres://postgres@h:5/db\n\
0 postgres://u@h/ => postgres://u@h\n\
0 postgres://u@h?dbname=x&user=y => postgres://u@h?dbname=x&user=y\n\
0 postgres://u@%2Ftmp%2Fsock/db => postgres://u@%2Ftmp%2Fsock/db\n\
0 POSTGRES://u@H/db => POSTGRES://u@H/db\n\
0 postgres://h:5432?user=bob@corp => postgres://h:***@corp\n\
0 postgres://u:pw@h?application_name=a@b => postgres://u:***@b\n\
1 postgres://bob:pw@db.example:6000/ibench => postgres://bob:***@db.example:6000/ibench\n\
1 postgres://bob:pw@h:1/db => postgres://bob:***@h:1/db\n\
1 postgresql:// => postgresql://root@%2Fvar%2Frun%2Fpostgresql,localhost\n\
1 postgres:// => postgres://root@%2Fvar%2Frun%2Fpostgresql,localhost\n\
1 postgres:///ibench => postgres://root@%2Fvar%2Frun%2Fpostgresql,localhost/ibench\n\
1 postgres://bob@h1,h2:7/x => postgres://bob@h1,h2:7/x\n\
1 postgres:///db?host=/tmp/s => postgres://root@/db?host=/tmp/s\n\
1 postgres://u@/db?host=/run/pg&port=5433 => postgres://u@/db?host=/run/pg&port=5433\n\
1 postgres://u:p%40ss@[::1]:7,h:8/d?sslmode=disable => postgres://u:***@[::1]:7,h:8/d?sslmode=disable\n\
1 postgres://u@[::1]/d => postgres://u@[::1]/d\n\
1 postgres://bob:se/c@ret@h1:5,h2/db?sslmode=disable&x => postgres://bob:***@h1:5,h2/db?sslmode=disable&x\n\
1 postgres://u:pa?ss@h/db => postgres://u:***@h/db\n\
1 postgres://u:S3c?x=retPW@host/db => postgres://u:***@host/db\n\
1 postgres://h/db?user=bob@corp => postgres://@h/db?user=bob@corp\n\
1 postgres://h/db?user=bob&password=secret&application_name=a => postgres://@h/db?user=bob&password=***&application_name=a\n\
1 postgres://u@h/db?PASSWORD=s&sslmode=require& => postgres://u@h/db?PASSWORD=***&sslmode=require\n\
1 postgres://u@h/db?&&connect_timeout=3&& => postgres://u@h/db?connect_timeout=3\n\
1 postgres://:pw@h/db?user=x => postgres://:***@h/db?user=x\n\
1 postgres://@h:5/db => postgres://root@h:5/db\n\
1 postgres://u@h/ => postgres://u@h\n\
1 postgres://u@h?dbname=x&user=y => postgres://u@h?dbname=x&user=y\n\
1 postgres://u@%2Ftmp%2Fsock/db => postgres://u@%2Ftmp%2Fsock/db\n\
1 POSTGRES://u@H/db => POSTGRES://u@H/db\n\
1 postgres://h:5432?user=bob@corp => postgres://h:***@corp\n\
1 postgres://u:pw@h?application_name=a@b => postgres://u:***@b\n\
2 postgres://bob:pw@db.example:6000/ibench => postgres://bob:***@db.example:6000/ibench\n\
2 postgres://bob:pw@h:1/db => postgres://bob:***@h:1/db\n\
2 postgresql:// => postgresql://alice:***@%2Ftmp%2Fsock:55432/bench\n\
2 postgres:// => postgres://alice:***@%2Ftmp%2Fsock:55432/bench\n\
2 postgres:///ibench => postgres://alice:***@%2Ftmp%2Fsock:55432/ibench\n\
2 postgres://bob@h1,h2:7/x => postgres://bob:***@h1:55432,h2:7/x\n\
2 postgres:///db?host=/tmp/s => postgres://alice:***@/db?host=/tmp/s&port=55432\n\
2 postgres://u@/db?host=/run/pg&port=5433 => postgres://u:***@/db?host=/run/pg&port=5433\n\
2 postgres://u:p%40ss@[::1]:7,h:8/d?sslmode=disable => postgres://u:***@[::1]:7,h:8/d?sslmode=disable\n\
2 postgres://u@[::1]/d => postgres://u:***@[::1]:55432/d\n\
2 postgres://bob:se/c@ret@h1:5,h2/db?sslmode=disable&x => postgres://bob:***@h1:5,h2:55432/db?sslmode=disable&x\n\
2 postgres://u:pa?ss@h/db => postgres://u:***@h:55432/db\n\
2 postgres://u:S3c?x=retPW@host/db => postgres://u:***@host:55432/db\n\
2 postgres://h/db?user=bob@corp => postgres://:***@h:55432/db?user=bob@corp\n\
2 postgres://h/db?user=bob&password=secret&application_name=a => postgres://@h:55432/db?user=bob&password=***&application_name=a\n\
2 postgres://u@h/db?PASSWORD=s&sslmode=require& => postgres://u:***@h:55432/db?PASSWORD=***&sslmode=require\n\
2 postgres://u@h/db?&&connect_timeout=3&& => postgres://u:***@h:55432/db?connect_timeout=3\n\
2 postgres://:pw@h/db?user=x => postgres://:***@h:55432/db?user=x\n\
2 postgres://@h:5/db => postgres://alice:***@h:5/db\n\
2 postgres://u@h/ => postgres://u:***@h:55432/bench\n\
2 postgres://u@h?dbname=x&user=y => postgres://u:***@h:55432?dbname=x&user=y\n\
2 postgres://u@%2Ftmp%2Fsock/db => postgres://u:***@%2Ftmp%2Fsock:55432/db\n\
2 POSTGRES://u@H/db => POSTGRES://u:***@H:55432/db\n\
2 postgres://h:5432?user=bob@corp => postgres://h:***@corp:55432/bench\n\
2 postgres://u:pw@h?application_name=a@b => postgres://u:***@b:55432/bench\n\
3 postgres://bob:pw@db.example:6000/ibench => postgres://bob:***@db.example:6000/ibench\n\
3 postgres://bob:pw@h:1/db => postgres://bob:***@h:1/db\n\
3 postgresql:// => postgresql://l%20o@a:6,%5B%3A%3A1%5D%3A9:6,b:6\n\
3 postgres:// => postgres://l%20o@a:6,%5B%3A%3A1%5D%3A9:6,b:6\n\
3 postgres:///ibench => postgres://l%20o@a:6,%5B%3A%3A1%5D%3A9:6,b:6/ibench\n\
3 postgres://bob@h1,h2:7/x => postgres://bob@h1:6,h2:7/x\n\
3 postgres:///db?host=/tmp/s => postgres://l%20o@/db?host=/tmp/s&port=6\n\
3 postgres://u@/db?host=/run/pg&port=5433 => postgres://u@/db?host=/run/pg&port=5433\n\
3 postgres://u:p%40ss@[::1]:7,h:8/d?sslmode=disable => postgres://u:***@[::1]:7,h:8/d?sslmode=disable\n\
3 postgres://u@[::1]/d => postgres://u@[::1]:6/d\n\
3 postgres://bob:se/c@ret@h1:5,h2/db?sslmode=disable&x => postgres://bob:***@h1:5,h2:6/db?sslmode=disable&x\n\
3 postgres://u:pa?ss@h/db => postgres://u:***@h:6/db\n\
3 postgres://u:S3c?x=retPW@host/db => postgres://u:***@host:6/db\n\
3 postgres://h/db?user=bob@corp => postgres://@h:6/db?user=bob@corp\n\
3 postgres://h/db?user=bob&password=secret&application_name=a => postgres://@h:6/db?user=bob&password=***&application_name=a\n\
3 postgres://u@h/db?PASSWORD=s&sslmode=require& => postgres://u@h:6/db?PASSWORD=***&sslmode=require\n\
3 postgres://u@h/db?&&connect_timeout=3&& => postgres://u@h:6/db?connect_timeout=3\n\
3 postgres://:pw@h/db?user=x => postgres://:***@h:6/db?user=x\n\
3 postgres://@h:5/db => postgres://l%20o@h:5/db\n\
3 postgres://u@h/ => postgres://u@h:6\n\
3 postgres://u@h?dbname=x&user=y => postgres://u@h:6?dbname=x&user=y\n\
3 postgres://u@%2Ftmp%2Fsock/db => postgres://u@%2Ftmp%2Fsock:6/db\n\
3 POSTGRES://u@H/db => POSTGRES://u@H:6/db\n\
3 postgres://h:5432?user=bob@corp => postgres://h:***@corp:6\n\
3 postgres://u:pw@h?application_name=a@b => postgres://u:***@b:6\n\
4 postgres://bob:pw@db.example:6000/ibench => postgres://bob:***@db.example:6000/ibench\n\
4 postgres://bob:pw@h:1/db => postgres://bob:***@h:1/db\n\
4 postgresql:// => postgresql://postgres:***@%2Fvar%2Frun%2Fpostgresql,localhost/d%2Fb\n\
4 postgres:// => postgres://postgres:***@%2Fvar%2Frun%2Fpostgresql,localhost/d%2Fb\n\
4 postgres:///ibench => postgres://postgres:***@%2Fvar%2Frun%2Fpostgresql,localhost/ibench\n\
4 postgres://bob@h1,h2:7/x => postgres://bob:***@h1,h2:7/x\n\
4 postgres:///db?host=/tmp/s => postgres://postgres:***@/db?host=/tmp/s\n\
4 postgres://u@/db?host=/run/pg&port=5433 => postgres://u:***@/db?host=/run/pg&port=5433\n\
4 postgres://u:p%40ss@[::1]:7,h:8/d?sslmode=disable => postgres://u:***@[::1]:7,h:8/d?sslmode=disable\n\
4 postgres://u@[::1]/d => postgres://u:***@[::1]/d\n\
4 postgres://bob:se/c@ret@h1:5,h2/db?sslmode=disable&x => postgres://bob:***@h1:5,h2/db?sslmode=disable&x\n\
4 postgres://u:pa?ss@h/db => postgres://u:***@h/db\n\
4 postgres://u:S3c?x=retPW@host/db => postgres://u:***@host/db\n\
4 postgres://h/db?user=bob@corp => postgres://:***@h/db?user=bob@corp\n\
4 postgres://h/db?user=bob&password=secret&application_name=a => postgres://@h/db?user=bob&password=***&application_name=a\n\
4 postgres://u@h/db?PASSWORD=s&sslmode=require& => postgres://u:***@h/db?PASSWORD=***&sslmode=require\n\
4 postgres://u@h/db?&&connect_timeout=3&& => postgres://u:***@h/db?connect_timeout=3\n\
4 postgres://:pw@h/db?user=x => postgres://:***@h/db?user=x\n\
4 postgres://@h:5/db => postgres://postgres:***@h:5/db\n\
4 postgres://u@h/ => postgres://u:***@h/d%2Fb\n\
4 postgres://u@h?dbname=x&user=y => postgres://u:***@h?dbname=x&user=y\n\
4 postgres://u@%2Ftmp%2Fsock/db => postgres://u:***@%2Ftmp%2Fsock/db\n\
4 POSTGRES://u@H/db => POSTGRES://u:***@H/db\n\
4 postgres://h:5432?user=bob@corp => postgres://h:***@corp/d%2Fb\n\
4 postgres://u:pw@h?application_name=a@b => postgres://u:***@b/d%2Fb\n\
";

    /// The completed text that errors and `run.json` show, rendered from the completed parts
    /// (never from text parsed again), byte for byte what the text round trip it replaced
    /// (`fill_pg_url`, then `redact_url`) gave, over every URL form and environment above.
    #[test]
    fn the_completed_text_is_rendered_as_before() {
        let mut rendered = String::new();
        for (i, env) in ENVS.iter().enumerate() {
            let var = env_of(env);
            for url in URLS {
                let parts = UrlParts::parse(url).unwrap();
                let given = ServerUrl::with_password_file(&parts, None).unwrap();
                let shown = complete(&given, &var).redacted();
                rendered.push_str(&format!("{i} {url} => {shown}\n"));
            }
        }
        for (want, got) in RENDERED.lines().zip(rendered.lines()) {
            assert_eq!(got, want);
        }
        assert_eq!(rendered, RENDERED);
    }

    #[test]
    fn url_is_completed_from_the_environment() {
        let none = env_of(&[]);
        assert_eq!(
            filled("postgres://bob:pw@db.example:6000/ibench", &none),
            "postgres://bob:pw@db.example:6000/ibench"
        );
        // Host and port in the URL win; nothing is added when all parts are there.
        let all = env_of(&[
            ("PGHOST", "/tmp/sock"),
            ("PGPORT", "55432"),
            ("PGUSER", "alice"),
            ("PGPASSWORD", "s/cret"),
            ("PGDATABASE", "bench"),
        ]);
        assert_eq!(
            filled("postgres://bob:pw@h:1/db", &all),
            "postgres://bob:pw@h:1/db"
        );
        assert_eq!(
            filled("postgresql://", &all),
            "postgresql://alice:s%2Fcret@%2Ftmp%2Fsock:55432/bench"
        );
        assert_eq!(
            filled("postgres://bob@h1,h2:7/x", &all),
            "postgres://bob:s%2Fcret@h1:55432,h2:7/x"
        );
        assert_eq!(
            filled("postgres:///db?host=/tmp/s", &all),
            "postgres://alice:s%2Fcret@/db?host=/tmp/s&port=55432"
        );
        let user_only = env_of(&[("USER", "root")]);
        assert_eq!(
            filled("postgres://", &user_only),
            "postgres://root@%2Fvar%2Frun%2Fpostgresql,localhost"
        );
        assert_eq!(
            filled("postgres://", &none),
            "postgres://postgres@%2Fvar%2Frun%2Fpostgresql,localhost"
        );
    }

    /// A multi-host URL as libpq reads it: the hosts in order, a port each, and which of
    /// them may be kept (`target_session_attrs`, or `PGTARGETSESSIONATTRS`; the URL wins).
    #[test]
    fn multi_host_urls_read_their_target_session_attrs() {
        let c = config(
            "postgres://u@127.0.0.1:5433,127.0.0.1:5434/db?target_session_attrs=read-write",
            &[],
        )
        .unwrap();
        assert_eq!(c.hosts.len(), 2);
        assert_eq!((c.port_of(0), c.port_of(1)), (5433, 5434));
        assert_eq!(c.target_session_attrs, TargetSessionAttrs::ReadWrite);
        let c = config("postgres://u@a,b/db", &[]).unwrap();
        assert_eq!(c.target_session_attrs, TargetSessionAttrs::Any);
        let c = config(
            "postgres://u@a,b/db",
            &[("PGTARGETSESSIONATTRS", "standby")],
        )
        .unwrap();
        assert_eq!(c.target_session_attrs, TargetSessionAttrs::Standby);
        let c = config(
            "postgres://u@a,b/db?target_session_attrs=prefer-standby",
            &[("PGTARGETSESSIONATTRS", "primary")],
        )
        .unwrap();
        assert_eq!(c.target_session_attrs, TargetSessionAttrs::PreferStandby);
        let e = config("postgres://u@a,b/db?target_session_attrs=master", &[]).unwrap_err();
        assert!(
            e.contains("target_session_attrs=master") && e.contains("read-write"),
            "{e}"
        );
        let e = config("postgres://u@a/db", &[("PGTARGETSESSIONATTRS", "rw")]).unwrap_err();
        assert!(e.contains("target_session_attrs=rw"), "{e}");
    }

    #[test]
    fn completed_urls_parse() {
        let c = config(
            "postgres:///ibench",
            &[("PGHOST", "/tmp/sock"), ("PGPORT", "55432"), ("USER", "u")],
        )
        .unwrap();
        assert_eq!(c.ports, [55432]);
        assert_eq!(c.user, "u");
        assert_eq!(c.dbname.as_deref(), Some("ibench"));
        assert_eq!(c.hosts, [Host::Unix(PathBuf::from("/tmp/sock"))]);
        let c = config("postgres://", &[]).unwrap();
        assert_eq!(c.hosts.len(), 2);
        assert_eq!((c.port_of(0), c.port_of(1)), (5432, 5432));
        let c = config("postgres://u:p%40ss@[::1]:7,h:8/d?sslmode=disable", &[]).unwrap();
        assert_eq!(c.hosts, [Host::Tcp("::1".into()), Host::Tcp("h".into())]);
        assert_eq!(c.ports, [7, 8]);
        assert_eq!(c.password.as_deref(), Some("p@ss"));
        assert_eq!(c.ssl_mode, SslMode::Disable);
        assert!(c.tls.is_none());
    }

    #[test]
    fn channel_binding_is_read_from_the_url_or_the_environment() {
        let c = PgConfig::from_url("postgres://u@h/d").unwrap();
        assert_eq!(c.channel_binding, ChannelBinding::Prefer, "libpq's default");
        let c = PgConfig::from_url("postgres://u@h/d?channel_binding=require").unwrap();
        assert_eq!(c.channel_binding, ChannelBinding::Require);
        let var = |k: &str| (k == "PGCHANNELBINDING").then(|| "disable".to_string());
        let env = Environment {
            var: &var,
            home: None,
        };
        let c = PgConfig::from_url_in("postgres://u@h/d", &env).unwrap();
        assert_eq!(c.channel_binding, ChannelBinding::Disable);
        let e = PgConfig::from_url("postgres://u@h/d?channel_binding=yes").unwrap_err();
        assert!(e.contains("disable, prefer or require"), "{e}");
    }

    #[test]
    fn tls_settings_follow_libpq() {
        let c = config("postgres://u@h/d", &[]).unwrap();
        assert_eq!(c.ssl_mode, SslMode::Prefer, "libpq's default");
        assert_eq!(c.tls_policy.as_ref().unwrap().verify, Verify::Nothing);
        let c = config("postgres://u@h/d", &[("PGSSLMODE", "require")]).unwrap();
        assert_eq!(c.ssl_mode, SslMode::Require);
        let c = config(
            "postgres://u@h/d?sslmode=require",
            &[("PGSSLMODE", "disable")],
        )
        .unwrap();
        assert_eq!(
            c.ssl_mode,
            SslMode::Require,
            "the URL wins over the environment"
        );
        let e = config("postgres://u@h/d?sslmode=verify-full", &[]).unwrap_err();
        assert!(e.contains("sslrootcert="), "{e}");
        let e = config("postgres://u@h/d?sslmode=sometimes", &[]).unwrap_err();
        assert!(e.contains("verify-full"), "{e}");
        let e = config("postgres://u@h/d?sslrootcert=system&sslmode=require", &[]).unwrap_err();
        assert!(e.contains("verify-full"), "{e}");
        let e = config(
            "postgres://u@h/d?sslrootcert=/no/such/ca.pem",
            &[("PGSSLMODE", "verify-ca")],
        )
        .unwrap_err();
        assert!(e.contains("/no/such/ca.pem"), "{e}");
    }

    #[test]
    fn unsupported_settings_are_refused_in_one_line() {
        let e = config("postgres://u@h/d?gssencmode=require", &[]).unwrap_err();
        assert!(e.contains("'gssencmode'"), "{e}");
        let e = config("postgres://u@h/d", &[("PGSERVICE", "x")]).unwrap_err();
        assert!(e.contains("PGSERVICE=x") && e.contains("unset"), "{e}");
        assert!(config("postgres://u@h/d", &[("PGGSSENCMODE", "disable")]).is_ok());
        let c = config(
            "postgres://u@h/d",
            &[("PGAPPNAME", "me"), ("PGCONNECT_TIMEOUT", "1")],
        )
        .unwrap();
        assert_eq!(c.application_name.as_deref(), Some("me"));
        assert_eq!(c.connect_timeout, Some(Duration::from_secs(2)));
    }

    #[test]
    fn require_auth_reads_libpq_lists() {
        let m = AuthMethods::parse("scram-sha-256").unwrap();
        assert!(m.scram && !m.md5 && !m.password && !m.none);
        let m = AuthMethods::parse("!password,!md5").unwrap();
        assert!(m.scram && m.none && !m.md5 && !m.password && !m.cleartext_opted_in);
        let m = AuthMethods::parse("password,scram-sha-256").unwrap();
        assert!(m.password && m.cleartext_opted_in);
        assert!(AuthMethods::parse("md5,!none").is_err());
        assert!(AuthMethods::parse("kerberos").is_err());
        assert!(!AuthMethods::default().cleartext_opted_in);
    }

    #[test]
    fn the_password_file_matches_host_port_database_and_user() {
        let entries = parse_passfile(
            "# comment\nother:*:*:*:no\nh:5433:*:bob:first\nh:*:d:*:se\\:cret\n*:*:*:*:any\n",
        );
        let mut c = config("postgres://bob@h:5433/d", &[]).unwrap();
        c.passfile = entries.clone();
        assert_eq!(c.password_for(0).as_deref(), Some("first"));
        let mut c = config("postgres://eve@h:5432/d", &[]).unwrap();
        c.passfile = entries.clone();
        assert_eq!(c.password_for(0).as_deref(), Some("se:cret"));
        let mut c = config("postgres://eve@x/y", &[]).unwrap();
        c.passfile = entries;
        assert_eq!(c.password_for(0).as_deref(), Some("any"));
    }

    #[test]
    fn a_password_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("ibench-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pgpass");
        std::fs::write(&file, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let var = |name: &str| (name == "PGPASSFILE").then(|| file.display().to_string());
        let env = Environment {
            var: &var,
            home: None,
        };
        let e = PgConfig::from_url_in("postgres://u@h/d", &env).unwrap_err();
        assert!(e.contains("chmod 0600"), "{e}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let c = PgConfig::from_url_in("postgres://u@h/d", &env).unwrap();
        assert_eq!(c.password_for(0).as_deref(), Some("pw"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
