//! Finding the server's processes and storage on this host: from `--server-dir` (an
//! `ibench server start` instance), `--server-pid`, or the server itself (its data directory
//! and pid file); remote servers and embedded SQLite are n/a with the reason.

use std::path::{Path, PathBuf};

use super::procfs;
use crate::backend::{Conn, ServerFiles};
use crate::results::metrics::EMBEDDED_NA;
pub use crate::results::metrics::{ServerLocation, StorageLocation};

/// Where a run says its server is: the host its URL names and the instance
/// (`--server-dir`) or process (`--server-pid`) it was given, if any.
#[derive(Clone, Debug, Default)]
pub struct ServerClaim {
    /// The URL's first host (`""` for a Unix socket or none given), as the run's
    /// `ConnectTarget` read it.
    pub host: String,
    /// `--server-dir`: the instance dir of an `ibench server start` server.
    pub server_dir: Option<PathBuf>,
    /// `--server-pid`: the server's main process on this host.
    pub server_pid: Option<u32>,
}

/// Whether a URL host is this machine: empty (socket), a socket path, loopback, or this
/// host's own name.
pub fn is_local_host(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    if h.is_empty() || h.starts_with('/') || h.starts_with("%2f") || h == "localhost" {
        return true;
    }
    if let Ok(ip) = h.parse::<std::net::IpAddr>() {
        return ip.is_loopback();
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|n| n.trim().eq_ignore_ascii_case(&h))
        .unwrap_or(false)
}

/// Read the server's pid file, saying where the server may be when it cannot.
fn read_pid_file(path: &Path) -> Result<u32, String> {
    crate::process::read_pid_file(path).map_err(|e| format!("{e}: is the server on another host?"))
}

/// Storage of the given data paths on this host.
fn storage_of(paths: Vec<PathBuf>) -> StorageLocation {
    let Some(first) = paths.first().cloned() else {
        return StorageLocation {
            na: Some("the server does not say where its data is".into()),
            ..StorageLocation::default()
        };
    };
    // SQLite's file may not exist yet: its directory holds it.
    let probe = if first.exists() {
        first.clone()
    } else {
        match first.parent() {
            Some(p) if !p.as_os_str().is_empty() && p.exists() => p.to_path_buf(),
            Some(p) if p.as_os_str().is_empty() => PathBuf::from("."),
            _ => {
                return StorageLocation {
                    na: Some(format!(
                        "the data directory {} does not exist on this host",
                        first.display()
                    )),
                    data_paths: Vec::new(),
                    device: None,
                };
            }
        }
    };
    match procfs::block_device_of(&probe) {
        Ok(d) => StorageLocation {
            data_paths: paths,
            device: Some(d),
            na: None,
        },
        Err(e) => StorageLocation {
            data_paths: paths,
            device: None,
            na: Some(e),
        },
    }
}

/// Names of a server's main process (postmaster, mariadbd, mysqld).
const SERVER_PROCESS_NAMES: &[&str] = &["postgres", "postmaster", "mariadbd", "mysqld"];

/// Refuse `--server-dir` or `--server-pid` when they name something other than the server at
/// the URL: the figures would then measure another process. The server's own word (its data
/// directory and pid file, `files`) decides; where it cannot tell (a remote server, no pid
/// file), a `--server-pid` must at least be a running database server process.
pub fn check_server_claims(claim: &ServerClaim, files: Option<&ServerFiles>) -> Result<(), String> {
    if claim.server_dir.is_none() && claim.server_pid.is_none() {
        return Ok(());
    }
    let flag = if claim.server_dir.is_some() {
        "--server-dir"
    } else {
        "--server-pid"
    };
    if files.is_some_and(|f| f.embedded) {
        return Err(format!(
            "{flag} names a server process, but SQLite runs inside ibench; drop {flag}"
        ));
    }
    let reported_pid = files
        .and_then(|f| f.pid_file.as_deref())
        .and_then(|pf| read_pid_file(pf).ok());
    let same_path = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b))
    {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if let Some(dir) = &claim.server_dir {
        let handle = crate::server::ServerHandle::load(dir).map_err(|e| format!("{e:#}"))?;
        if let Some(reported) = files.and_then(|f| f.data_paths.first())
            && !same_path(&handle.data_dir, reported)
        {
            return Err(format!(
                "--server-dir {} is the instance of another server: its data directory is {}, but the server at --url uses {}; pass the --server-dir of that server or drop --server-dir",
                dir.display(),
                handle.data_dir.display(),
                reported.display()
            ));
        }
        if let Some(pid) = reported_pid
            && pid != handle.pid
        {
            return Err(format!(
                "--server-dir {} holds server pid {}, but the server at --url has pid {pid}; pass the --server-dir of that server or drop --server-dir",
                dir.display(),
                handle.pid
            ));
        }
        return Ok(());
    }
    let Some(pid) = claim.server_pid else {
        return Ok(());
    };
    if let Some(reported) = reported_pid {
        if reported != pid {
            return Err(format!(
                "--server-pid {pid} is not the server at --url, whose pid is {reported}; pass --server-pid {reported} or drop it"
            ));
        }
        return Ok(());
    }
    // The server cannot say: at least it must be a database server running here.
    match crate::process::name(pid) {
        Some(name) if SERVER_PROCESS_NAMES.contains(&name.as_str()) => Ok(()),
        Some(name) => Err(format!(
            "--server-pid {pid} is {name}, not a database server (postgres, mariadbd, mysqld); pass the pid of the server's main process or drop --server-pid"
        )),
        None => Err(format!(
            "--server-pid {pid} is not running on this host; pass the pid of the server's main process or drop --server-pid"
        )),
    }
}

/// Locate the server's processes and storage, asking the server where its files are.
pub fn locate(claim: &ServerClaim, conn: &mut dyn Conn) -> (ServerLocation, StorageLocation) {
    let files = conn.server_files().map_err(|e| e.to_string());
    locate_with(claim, files)
}

/// Locate without a connection (the sampler could not connect).
pub fn locate_without_conn(claim: &ServerClaim, error: &str) -> (ServerLocation, StorageLocation) {
    locate_with(
        claim,
        Err(format!("the sampler cannot connect to the server: {error}")),
    )
}

/// Where the server is, by the first source that applies: `--server-dir`, `--server-pid`, a
/// remote URL host (nothing can be read here), or the server's own pid file.
fn find_server(
    claim: &ServerClaim,
    files: &Result<Option<ServerFiles>, String>,
    remote: bool,
) -> (Result<u32, String>, String, Result<Vec<PathBuf>, String>) {
    let from_server = || -> Result<ServerFiles, String> {
        match files {
            Ok(Some(f)) => Ok(f.clone()),
            Ok(None) => Err("the backend does not report where the server's files are".into()),
            Err(e) => Err(format!("cannot ask the server where its files are: {e}")),
        }
    };
    if let Some(dir) = &claim.server_dir {
        let how = format!("--server-dir {}", dir.display());
        match crate::server::ServerHandle::load(dir) {
            Ok(h) => (Ok(h.pid), how, Ok(vec![h.data_dir])),
            Err(e) => {
                let e = format!("{e:#}");
                (Err(e.clone()), how, Err(e))
            }
        }
    } else if let Some(p) = claim.server_pid {
        (
            Ok(p),
            "--server-pid".into(),
            from_server().map(|f| f.data_paths),
        )
    } else if remote {
        let e = format!(
            "the server is on host {}, not this one: its processes and storage cannot be read here",
            claim.host
        );
        (Err(e.clone()), format!("URL host {}", claim.host), Err(e))
    } else {
        match from_server() {
            Ok(f) => match &f.pid_file {
                Some(pf) => (
                    read_pid_file(pf),
                    format!("the server's pid file {}", pf.display()),
                    Ok(f.data_paths),
                ),
                None => (
                    Err("the server reports no pid file".into()),
                    "the server".into(),
                    Ok(f.data_paths),
                ),
            },
            Err(e) => (Err(e.clone()), "the server".into(), Err(e)),
        }
    }
}

/// The decision, from the options and what the server said about its files.
pub fn locate_with(
    claim: &ServerClaim,
    files: Result<Option<ServerFiles>, String>,
) -> (ServerLocation, StorageLocation) {
    if let Ok(Some(f)) = &files
        && f.embedded
    {
        return (
            ServerLocation {
                pid: None,
                how: "embedded".into(),
                na: Some(EMBEDDED_NA.into()),
                remote: false,
            },
            storage_of(f.data_paths.clone()),
        );
    }
    let remote = !is_local_host(&claim.host);
    let (pid, how, data_paths) = find_server(claim, &files, remote);
    let pid = pid.and_then(|p| {
        if procfs::read_stat(p).is_some() {
            Ok(p)
        } else {
            Err(format!(
                "process {p} is not running on this host: is the server on another host?"
            ))
        }
    });
    let storage = match data_paths {
        Ok(paths) => storage_of(paths),
        Err(e) => StorageLocation {
            na: Some(e),
            ..StorageLocation::default()
        },
    };
    let server = match pid {
        Ok(p) => ServerLocation {
            pid: Some(p),
            how,
            na: None,
            remote,
        },
        Err(e) => ServerLocation {
            pid: None,
            how,
            na: Some(e),
            remote,
        },
    };
    (server, storage)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The claim of a run against a server on `host` given neither --server-dir nor
    /// --server-pid (the host as the run's target reads it from its URL: `Url::host`).
    fn claim_of(host: &str) -> ServerClaim {
        ServerClaim {
            host: host.to_string(),
            ..ServerClaim::default()
        }
    }

    #[test]
    fn local_hosts() {
        assert!(is_local_host("127.0.0.1"));
        assert!(is_local_host("::1"));
        assert!(is_local_host(""));
        assert!(is_local_host("/tmp/sock"));
        assert!(!is_local_host("10.0.0.5"));
        assert!(!is_local_host("db.example"));
    }

    #[test]
    fn remote_url_is_na_with_a_reason() {
        let o = claim_of("db.example");
        let (server, storage) = locate_with(&o, Ok(None));
        assert!(server.remote && server.pid.is_none());
        assert!(server.na.as_deref().unwrap().contains("db.example"));
        assert!(storage.na.is_some() && storage.device.is_none());
    }

    #[test]
    fn a_server_pid_that_is_not_the_server_is_refused() {
        let mut o = claim_of("127.0.0.1");
        o.server_pid = Some(1);
        // The server cannot say (no pid file): pid 1 is no database server.
        let err = check_server_claims(&o, None).unwrap_err();
        assert!(
            err.contains("--server-pid 1") && err.contains("not a database server"),
            "{err}"
        );
        // The server's own pid file disagrees.
        let dir = std::env::temp_dir().join(format!("ibench-claims-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("x.pid");
        std::fs::write(&pid_file, "4242\n").unwrap();
        let files = ServerFiles {
            data_paths: vec![dir.clone()],
            pid_file: Some(pid_file),
            embedded: false,
        };
        let err = check_server_claims(&o, Some(&files)).unwrap_err();
        assert!(err.contains("4242"), "{err}");
        o.server_pid = Some(4242);
        assert!(check_server_claims(&o, Some(&files)).is_ok());
        // SQLite has no server process.
        let sqlite = ServerFiles {
            embedded: true,
            ..ServerFiles::default()
        };
        assert!(check_server_claims(&o, Some(&sqlite)).is_err());
        o.server_pid = None;
        assert!(check_server_claims(&o, Some(&sqlite)).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_pid_is_na() {
        let mut o = claim_of("127.0.0.1");
        o.server_pid = Some(u32::MAX - 7);
        let files = ServerFiles {
            data_paths: vec![std::env::temp_dir()],
            pid_file: None,
            embedded: false,
        };
        let (server, storage) = locate_with(&o, Ok(Some(files)));
        assert!(
            server
                .na
                .as_deref()
                .unwrap()
                .contains("not running on this host")
        );
        assert!(!server.remote);
        assert_eq!(storage.data_paths, vec![std::env::temp_dir()]);
    }
}
