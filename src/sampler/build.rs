//! How the server was built: what it reports over SQL, and its executable's path, size and
//! SHA-256 from the server's process on this host.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::backend::Conn;
use crate::results::metrics::ServerLocation;
use crate::results::target::BuildFacts;

/// The build facts of the server behind `conn`, whose process `server` found (or not).
pub fn collect(conn: &mut Result<Box<dyn Conn>, String>, server: &ServerLocation) -> BuildFacts {
    let mut facts = match conn {
        Ok(c) => c.build_facts().unwrap_or_else(|e| BuildFacts {
            na: vec![format!("the server's build facts: {e}")],
            ..BuildFacts::default()
        }),
        Err(e) => BuildFacts {
            na: vec![format!("no connection to read the build facts: {e}")],
            ..BuildFacts::default()
        },
    };
    match server.pid {
        Some(pid) if !server.remote => match executable(pid) {
            Ok((path, bytes, sha256)) => {
                facts.binary_path = Some(path);
                facts.binary_bytes = Some(bytes);
                facts.binary_sha256 = Some(sha256);
            }
            Err(e) => facts.na.push(format!("the server's binary: {e}")),
        },
        _ => facts.na.push(format!(
            "the server's binary: its process is not known ({})",
            server.describe()
        )),
    }
    facts
}

/// The executable of process `pid`: its path, size in bytes and SHA-256 (hex).
fn executable(pid: u32) -> Result<(String, u64, String), String> {
    let link = format!("/proc/{pid}/exe");
    let path = std::fs::read_link(&link).map_err(|e| format!("cannot read {link}: {e}"))?;
    let (bytes, sha256) = file_sha256(&path)?;
    Ok((path.display().to_string(), bytes, sha256))
}

/// A file's size and SHA-256 (hex).
pub fn file_sha256(path: &Path) -> Result<(u64, String), String> {
    let mut file =
        std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        bytes += n as u64;
    }
    let digest = hasher.finalize();
    let hex = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok((bytes, hex))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_a_known_file() {
        let dir = std::env::temp_dir().join(format!("ibench-sha-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("abc");
        std::fs::write(&f, b"abc").unwrap();
        let (bytes, hex) = file_sha256(&f).unwrap();
        assert_eq!(bytes, 3);
        assert_eq!(
            hex,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn this_process_has_a_binary() {
        let (path, bytes, hex) = executable(std::process::id()).unwrap();
        assert!(!path.is_empty() && bytes > 0 && hex.len() == 64);
    }
}
