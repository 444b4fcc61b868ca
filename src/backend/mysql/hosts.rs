//! A MySQL/MariaDB URL that names several servers, for a pair behind an HA manager
//! (docs/failover.md, "Multi-host URLs"): `mysql://u@h1:3306,h2:3307/db?target_session_attrs=read-write`.
//! The hosts are tried in order, as libpq tries a PostgreSQL URL's; a host without a port
//! takes the URL's `port=` (else `~/.my.cnf`'s, else 3306).
//!
//! `target_session_attrs` is ibench's, named after libpq's (the MySQL client has no such
//! setting): `any` (the default: the first server that accepts the login), `read-write` (the
//! first whose `@@global.read_only` is 0: a primary) or `read-only` (the first whose
//! `read_only` is 1: a replica). One question per connection, [`READ_ONLY_SQL`], answers it on
//! MySQL and MariaDB alike: MySQL's `super_read_only` turns `read_only` on with it and off
//! with it, so `read_only = 0` means neither is set. A server that does not fit is left (its
//! connection ended) and the next is tried.

use std::path::PathBuf;

/// Where a connection goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// TCP to a host and port.
    Tcp {
        /// The host name or address (what `VERIFY_IDENTITY` checks).
        host: String,
        /// The port.
        port: u16,
    },
    /// A Unix socket file.
    Socket(PathBuf),
}

/// Which of a URL's servers a connection may stay on (`target_session_attrs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TargetSession {
    /// The first server that accepts the login.
    #[default]
    Any,
    /// A server that takes writes: `@@global.read_only` is 0.
    ReadWrite,
    /// A server that refuses ordinary users' writes: `@@global.read_only` is 1.
    ReadOnly,
}

/// What a connection asks the server when the URL's [`TargetSession`] is not `any`.
pub const READ_ONLY_SQL: &str = "SELECT @@global.read_only";

impl TargetSession {
    /// The values taken.
    pub const VALUES: &'static str = "any, read-write or read-only";

    /// Read a value; the error is one line naming the values taken.
    pub fn parse(text: &str) -> Result<TargetSession, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "any" => Ok(TargetSession::Any),
            "read-write" => Ok(TargetSession::ReadWrite),
            "read-only" => Ok(TargetSession::ReadOnly),
            other => Err(format!(
                "target_session_attrs={other}: a MySQL URL takes {} (a primary is a server whose @@global.read_only is 0)",
                TargetSession::VALUES
            )),
        }
    }

    /// Its name in a URL.
    pub fn name(self) -> &'static str {
        match self {
            TargetSession::Any => "any",
            TargetSession::ReadWrite => "read-write",
            TargetSession::ReadOnly => "read-only",
        }
    }

    /// Whether a connection must ask the server what it is.
    pub fn asks(self) -> bool {
        self != TargetSession::Any
    }

    /// Whether a server whose `read_only` is `read_only` fits.
    pub fn accepts(self, read_only: bool) -> bool {
        match self {
            TargetSession::Any => true,
            TargetSession::ReadWrite => !read_only,
            TargetSession::ReadOnly => read_only,
        }
    }
}

/// The answer to [`READ_ONLY_SQL`] as a flag; `None` for anything but 0 or 1.
pub fn read_only_of(value: Option<&str>) -> Option<bool> {
    match value?.trim() {
        "0" | "OFF" | "off" => Some(false),
        "1" | "ON" | "on" => Some(true),
        _ => None,
    }
}

/// The URL's hosts (`h1:p1,[::1]:p2,h3`), each with its port if it has one (still to be
/// checked); one host for a URL that names one, or none. An empty host in a list is an error
/// naming the fix.
pub fn split_hosts(hosts: &str) -> Result<Vec<(String, Option<String>)>, String> {
    if !hosts.contains(',') {
        return Ok(vec![split_host_port(hosts)]);
    }
    hosts
        .split(',')
        .map(|item| match split_host_port(item) {
            (h, _) if h.is_empty() => Err(format!(
                "an empty host in '{hosts}': give HOST or HOST:PORT for each, comma-separated"
            )),
            hp => Ok(hp),
        })
        .collect()
}

/// `host:port`, `[v6]:port`, `host`.
fn split_host_port(item: &str) -> (String, Option<String>) {
    if let Some(rest) = item.strip_prefix('[') {
        let (host, after) = rest.split_once(']').unwrap_or((rest, ""));
        return (
            host.to_string(),
            after.strip_prefix(':').map(str::to_string),
        );
    }
    match item.rsplit_once(':') {
        Some((h, p)) => (crate::url::percent_decode(h), Some(p.to_string())),
        None => (crate::url::percent_decode(item), None),
    }
}

/// A port as written; the error names the host it belongs to when there are several.
pub fn parse_port(text: &str, host: Option<&str>) -> Result<u16, String> {
    text.trim()
        .parse()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| match host {
            Some(h) => format!("'{text}' is not a port (host {h} of --url)"),
            None => format!("'{text}' is not a port"),
        })
}

/// The TCP endpoints of a URL's several hosts; `default_port` for a host without one.
pub fn endpoints(
    hosts: &[(String, Option<String>)],
    default_port: u16,
) -> Result<Vec<Endpoint>, String> {
    hosts
        .iter()
        .map(|(host, port)| {
            Ok(Endpoint::Tcp {
                host: host.clone(),
                port: match port {
                    Some(p) => parse_port(p, Some(host))?,
                    None => default_port,
                },
            })
        })
        .collect()
}

/// How an endpoint is named in a message: `127.0.0.1:3307`, or the socket's path.
pub fn describe(endpoint: &Endpoint) -> String {
    match endpoint {
        Endpoint::Tcp { host, port } => format!("{host}:{port}"),
        Endpoint::Socket(path) => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_keeps_the_servers_it_names() {
        use TargetSession::*;
        for v in ["any", "read-write", "read-only"] {
            assert_eq!(TargetSession::parse(v).unwrap().name(), v);
        }
        assert!(ReadWrite.accepts(false) && !ReadWrite.accepts(true));
        assert!(ReadOnly.accepts(true) && !ReadOnly.accepts(false));
        assert!(Any.accepts(true) && Any.accepts(false) && !Any.asks());
        let e = TargetSession::parse("primary").unwrap_err();
        assert!(e.contains("primary") && e.contains("read-write"), "{e}");
        assert!(!e.contains('\n'));
        assert_eq!(read_only_of(Some("0")), Some(false));
        assert_eq!(read_only_of(Some("1")), Some(true));
        assert_eq!(read_only_of(Some("maybe")), None);
        assert_eq!(read_only_of(None), None);
    }

    #[test]
    fn a_host_list_is_split_and_each_host_gets_a_port() {
        let hosts = split_hosts("db1:3307,[::1]:3308,db3").unwrap();
        assert_eq!(
            endpoints(&hosts, 3306).unwrap(),
            [
                Endpoint::Tcp {
                    host: "db1".into(),
                    port: 3307
                },
                Endpoint::Tcp {
                    host: "::1".into(),
                    port: 3308
                },
                Endpoint::Tcp {
                    host: "db3".into(),
                    port: 3306
                },
            ]
        );
        assert_eq!(
            split_hosts("h:1").unwrap(),
            [("h".into(), Some("1".into()))]
        );
        assert_eq!(split_hosts("").unwrap(), [(String::new(), None)]);
        for bad in ["h1,,h2", "h1,", ",h2", "h1,:3307"] {
            let e = split_hosts(bad).unwrap_err();
            assert!(e.contains("empty host") && e.contains("HOST:PORT"), "{e}");
        }
        let e = endpoints(&split_hosts("h1:1,h2:x").unwrap(), 3306).unwrap_err();
        assert_eq!(e, "'x' is not a port (host h2 of --url)");
    }
}
