//! Helpers the comparison benchmarks share: a private Postgres or MariaDB that is stopped and
//! removed when the bench ends (also on error), numbers from the environment, the CPU of
//! finished child processes, medians.

use std::path::PathBuf;

use anyhow::{Context, Result};
use ibench::server::{self, ServerHandle, ServerKind, ServerSpec};
use ibench::stats::convert::i64_f64;

/// A private server with a config of the bench's, and a scratch dir; both are removed when
/// dropped.
pub struct PrivateServer {
    /// The running server.
    pub handle: ServerHandle,
    /// The bench's scratch dir.
    pub scratch: PathBuf,
}

impl PrivateServer {
    /// Start a Postgres with `overlay` appended to its config; `tag` names the scratch dir.
    pub fn start(tag: &str, overlay: &str) -> Result<PrivateServer> {
        Self::start_kind(ServerKind::Postgres, tag, overlay)
    }

    /// Start a server of `kind` with `config` (Postgres: appended to postgresql.conf;
    /// MariaDB: its whole option file, `[mysqld]` and all); `tag` names the scratch dir.
    pub fn start_kind(kind: ServerKind, tag: &str, config: &str) -> Result<PrivateServer> {
        let scratch =
            std::env::temp_dir().join(format!("ibench-bench-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&scratch)
            .with_context(|| format!("cannot create {}", scratch.display()))?;
        let file = scratch.join("overlay.conf");
        std::fs::write(&file, config)?;
        let handle = server::start(&ServerSpec {
            kind,
            config: Some(file),
            ..ServerSpec::default()
        })?;
        Ok(PrivateServer { handle, scratch })
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = self.handle.stop();
        let _ = std::fs::remove_dir_all(&self.handle.dir);
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// A self-signed certificate for `localhost`, made with `openssl` in a scratch dir (removed
/// when dropped), for benches over TLS.
pub struct SelfSigned {
    dir: PathBuf,
}

impl SelfSigned {
    /// Make the key and certificate.
    pub fn make() -> Result<SelfSigned> {
        let dir = std::env::temp_dir().join(format!("ibench-bench-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let out = std::process::Command::new("openssl")
            .current_dir(&dir)
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args([
                "-keyout",
                "server.key",
                "-out",
                "server.pem",
                "-subj",
                "/CN=localhost",
            ])
            .output()
            .context("cannot run openssl (apt-get install openssl)")?;
        anyhow::ensure!(
            out.status.success(),
            "openssl failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        std::fs::set_permissions(
            dir.join("server.pem"),
            std::fs::Permissions::from_mode(0o644),
        )?;
        std::fs::set_permissions(
            dir.join("server.key"),
            std::fs::Permissions::from_mode(0o644),
        )?;
        // The files sysbench 1.0's mysql driver reads from its working directory.
        for (from, to) in [
            ("server.pem", "cacert.pem"),
            ("server.pem", "client-cert.pem"),
            ("server.key", "client-key.pem"),
        ] {
            std::fs::copy(dir.join(from), dir.join(to))?;
        }
        Ok(SelfSigned { dir })
    }

    /// The directory holding the files.
    #[allow(dead_code)]
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// postgresql.conf lines: TLS on with a copy of the key owned by `postgres`, mode 0600
    /// (PostgreSQL refuses a key others can read).
    pub fn postgres_lines(&self) -> Result<String> {
        let key = self.dir.join("pg.key");
        std::fs::copy(self.dir.join("server.key"), &key)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600))?;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let ok = std::process::Command::new("chown")
                .arg("postgres:")
                .arg(&key)
                .status()?
                .success();
            anyhow::ensure!(ok, "cannot chown {} to postgres", key.display());
        }
        Ok(format!(
            "ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n",
            self.dir.join("server.pem").display(),
            key.display()
        ))
    }

    /// `[mysqld]` lines: TLS on and required over TCP, the certificate its own CA. (Only micro_sysbench starts a MariaDB.)
    #[allow(dead_code)]
    pub fn mariadb_lines(&self) -> String {
        format!(
            "ssl_cert = {}\nssl_key = {}\nssl_ca = {}\nrequire_secure_transport = ON\n",
            self.dir.join("server.pem").display(),
            self.dir.join("server.key").display(),
            // sysbench presents client-cert.pem (the same self-signed certificate): the
            // server must know its issuer, or it refuses the handshake ("unknown ca").
            self.dir.join("server.pem").display()
        )
    }
}

impl Drop for SelfSigned {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `name` from the environment as a number, or `default`.
pub fn env_number(name: &str, default: f64) -> Result<f64> {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .with_context(|| format!("{name}={v} is not a number")),
        Err(_) => Ok(default),
    }
}

/// CPU seconds (user + system) of this process's finished, waited-for children so far.
pub fn children_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe {
        libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut ru);
    }
    let tv = |t: libc::timeval| i64_f64(t.tv_sec) + i64_f64(t.tv_usec) / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The median (the upper one of an even count); NaN for none.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
