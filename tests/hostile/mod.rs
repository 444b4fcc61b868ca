//! Fake servers for `tests/hostile_server.rs`: a loopback listener whose thread speaks just
//! enough of the PostgreSQL or MySQL protocol to misbehave, and the byte helpers they share.
//!
//! Every fake server ends on its own: the listener gives up accepting after
//! [`ACCEPT_PATIENCE`], and its sockets have read and write timeouts, so a client that fails
//! early never leaves a thread blocked (and a test that joins the server never hangs).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a fake server waits for the client's connection.
const ACCEPT_PATIENCE: Duration = Duration::from_secs(30);

/// How long one read or write of a fake server may block.
pub const SOCKET_PATIENCE: Duration = Duration::from_secs(20);

/// A fake server's listener, handed to its script.
pub struct Listener(TcpListener);

impl Listener {
    /// The next client connection, with the fake server's timeouts set; `None` when no
    /// client came within [`ACCEPT_PATIENCE`].
    pub fn accept(&self) -> Option<TcpStream> {
        let until = Instant::now() + ACCEPT_PATIENCE;
        while Instant::now() < until {
            match self.0.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false).ok()?;
                    s.set_read_timeout(Some(SOCKET_PATIENCE)).ok()?;
                    s.set_write_timeout(Some(SOCKET_PATIENCE)).ok()?;
                    s.set_nodelay(true).ok()?;
                    return Some(s);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(_) => return None,
            }
        }
        None
    }
}

/// A fake server running `script` on its own thread.
pub struct Fake<T> {
    /// The loopback port it listens on.
    pub port: u16,
    handle: JoinHandle<T>,
}

impl<T> Fake<T> {
    /// What the script returned (it ends on its own; see the module's comment).
    pub fn join(self) -> T {
        match self.handle.join() {
            Ok(v) => v,
            Err(p) => std::panic::resume_unwind(p),
        }
    }
}

/// Start a fake server on `127.0.0.1:0` that runs `script` with its listener.
pub fn serve<T: Send + 'static>(script: impl FnOnce(Listener) -> T + Send + 'static) -> Fake<T> {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.set_nonblocking(true).expect("non-blocking accept");
    let port = listener.local_addr().expect("local address").port();
    let handle = std::thread::spawn(move || script(Listener(listener)));
    Fake { port, handle }
}

/// Start a fake server that serves one connection with `script` (`None` when none came, or
/// the script gave up: the client went away early).
pub fn serve_one<T: Send + 'static>(
    script: impl FnOnce(TcpStream) -> Option<T> + Send + 'static,
) -> Fake<Option<T>> {
    serve(move |l| l.accept().and_then(script))
}

/// Everything the peer sends until it closes (or goes quiet for `quiet`).
pub fn drain(s: &mut TcpStream, quiet: Duration) -> Vec<u8> {
    let _ = s.set_read_timeout(Some(quiet));
    let mut all = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return all,
            Ok(n) => all.extend_from_slice(&buf[..n]),
        }
    }
}

/// Exactly `n` bytes, or `None` at EOF or a timeout.
pub fn read_n(s: &mut impl Read, n: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; n];
    s.read_exact(&mut buf).ok()?;
    Some(buf)
}

/// Whether `needle` occurs in `hay`.
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Write `bytes` one at a time, `pause` apart, until the peer is gone or `limit` bytes went.
pub fn trickle(s: &mut TcpStream, bytes: &[u8], pause: Duration, limit: usize) {
    for b in bytes.iter().cycle().take(limit) {
        if s.write_all(&[*b]).is_err() {
            return;
        }
        std::thread::sleep(pause);
    }
}

/// The peak resident set of this process so far (`VmHWM`), in KiB.
pub fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Run `f`, asserting it returns within `bound`; its result and how long it took.
pub fn within<T>(bound: Duration, f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let r = f();
    let took = started.elapsed();
    assert!(took < bound, "took {took:?}, more than {bound:?}");
    (r, took)
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL.

pub mod pg {
    use super::*;

    /// A tagged server message.
    pub fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(i32::try_from(body.len() + 4).unwrap()).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    /// An authentication request with `code` and `data` after it.
    pub fn auth(code: i32, data: &[u8]) -> Vec<u8> {
        let mut body = code.to_be_bytes().to_vec();
        body.extend_from_slice(data);
        msg(b'R', &body)
    }

    /// AuthenticationOk, BackendKeyData (`pid`, `key`), ReadyForQuery idle.
    pub fn login_ok(pid: i32, key: i32) -> Vec<u8> {
        let mut m = auth(0, &[]);
        let mut k = pid.to_be_bytes().to_vec();
        k.extend_from_slice(&key.to_be_bytes());
        m.extend(msg(b'K', &k));
        m.extend(msg(b'Z', b"I"));
        m
    }

    /// An ErrorResponse.
    pub fn error(severity: &str, code: &str, message: &str) -> Vec<u8> {
        let mut body = Vec::new();
        for (kind, value) in [
            (b'S', severity),
            (b'V', severity),
            (b'C', code),
            (b'M', message),
        ] {
            body.push(kind);
            body.extend_from_slice(value.as_bytes());
            body.push(0);
        }
        body.push(0);
        msg(b'E', &body)
    }

    /// The client's startup packet's body (an SSLRequest first is declined with 'N').
    pub fn read_startup(s: &mut TcpStream) -> Option<Vec<u8>> {
        loop {
            let len = i32::from_be_bytes(read_n(s, 4)?.try_into().ok()?);
            let body = read_n(s, usize::try_from(len).ok()?.checked_sub(4)?)?;
            if body.len() == 4 && body == 80_877_103i32.to_be_bytes() {
                s.write_all(b"N").ok()?;
                continue;
            }
            return Some(body);
        }
    }

    /// One message from the client: its tag and body (`None` at EOF or a timeout).
    pub fn read_msg(s: &mut impl Read) -> Option<(u8, Vec<u8>)> {
        let head = read_n(s, 5)?;
        let len = i32::from_be_bytes(head[1..5].try_into().ok()?);
        let body = read_n(s, usize::try_from(len).ok()?.checked_sub(4)?)?;
        Some((head[0], body))
    }

    /// The tags of the messages in `bytes` (a client's stream after its startup).
    pub fn tags(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        while i + 5 <= bytes.len() {
            out.push(bytes[i]);
            let len = i32::from_be_bytes(bytes[i + 1..i + 5].try_into().unwrap());
            i += 1 + usize::try_from(len).unwrap_or(usize::MAX / 2);
        }
        out
    }

    /// Read the startup and log the client in (no password asked).
    pub fn accept_login(s: &mut TcpStream, pid: i32, key: i32) -> Option<()> {
        read_startup(s)?;
        s.write_all(&login_ok(pid, key)).ok()
    }
}

// ---------------------------------------------------------------------------------------------
// MySQL.

pub mod my {
    use super::*;

    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const DEPRECATE_EOF: u32 = 1 << 24;
    pub const MULTI_RESULTS: u32 = 1 << 17;

    /// What a fake server offers: protocol 4.1, plugin auth, no TLS (so `ssl-mode`
    /// PREFERRED goes on in plain TCP).
    pub const CAPS: u32 = PROTOCOL_41
        | SECURE_CONNECTION
        | PLUGIN_AUTH
        | CONNECT_WITH_DB
        | MULTI_RESULTS
        | (1 << 13)
        | (1 << 16);

    /// A packet: 3-byte length, sequence id, payload.
    pub fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let len = u32::try_from(payload.len()).unwrap().to_le_bytes();
        let mut p = vec![len[0], len[1], len[2], seq];
        p.extend_from_slice(payload);
        p
    }

    /// A protocol-10 greeting with `caps` and the first auth `plugin`.
    pub fn greeting(caps: u32, plugin: &str) -> Vec<u8> {
        let mut g = vec![10];
        g.extend_from_slice(b"10.11.99-FakeDB\0");
        g.extend_from_slice(&77u32.to_le_bytes());
        g.extend_from_slice(b"abcdefgh\0");
        g.extend_from_slice(&u16::try_from(caps & 0xFFFF).unwrap().to_le_bytes());
        g.push(45);
        g.extend_from_slice(&2u16.to_le_bytes());
        g.extend_from_slice(&u16::try_from(caps >> 16).unwrap().to_le_bytes());
        g.push(21);
        g.extend_from_slice(&[0; 10]);
        g.extend_from_slice(b"ijklmnopqrst\0");
        g.extend_from_slice(plugin.as_bytes());
        g.push(0);
        g
    }

    /// An OK packet's payload.
    pub fn ok() -> Vec<u8> {
        vec![0, 0, 0, 2, 0, 0, 0]
    }

    /// An ERR packet's payload.
    pub fn err(code: u16, state: &str, message: &str) -> Vec<u8> {
        let mut p = vec![0xFF];
        p.extend_from_slice(&code.to_le_bytes());
        p.push(b'#');
        p.extend_from_slice(state.as_bytes());
        p.extend_from_slice(message.as_bytes());
        p
    }

    /// An auth switch to `plugin` with a 20-byte scramble.
    pub fn auth_switch(plugin: &str) -> Vec<u8> {
        let mut p = vec![0xFE];
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        p.extend_from_slice(b"ABCDEFGHIJKLMNOPQRST\0");
        p
    }

    /// One packet from the client: sequence id and payload.
    pub fn read_packet(s: &mut impl Read) -> Option<(u8, Vec<u8>)> {
        let h = read_n(s, 4)?;
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        Some((h[3], read_n(s, len)?))
    }

    /// Greet with `caps` and `plugin`, read the handshake response; its payload.
    pub fn greet(s: &mut TcpStream, caps: u32, plugin: &str) -> Option<Vec<u8>> {
        s.write_all(&packet(0, &greeting(caps, plugin))).ok()?;
        let (seq, response) = read_packet(s)?;
        assert_eq!(seq, 1, "the handshake response's sequence id");
        Some(response)
    }

    /// A whole login: greeting, handshake response, OK.
    pub fn accept_login(s: &mut TcpStream, caps: u32) -> Option<()> {
        greet(s, caps, "mysql_native_password")?;
        s.write_all(&packet(2, &ok())).ok()
    }
}

// ---------------------------------------------------------------------------------------------
// TLS: a fake server's side of the handshake, with a certificate made for the test.

pub mod tls {
    use super::*;
    use std::path::PathBuf;
    use std::sync::{Arc, OnceLock};

    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use rustls::{ServerConfig, ServerConnection, StreamOwned};

    /// A TLS session of a fake server.
    pub type Tls = StreamOwned<ServerConnection, TcpStream>;

    /// A self-signed certificate for `localhost` and its key, made once per test binary with
    /// `openssl`: `ca` says whether it is marked as a CA (as `openssl req -x509` makes it
    /// by default) or as an end entity (which a client can trust as its own root).
    pub struct Cert {
        /// The certificate's PEM file.
        pub pem: PathBuf,
        key: PathBuf,
    }

    /// The test's certificate: `ca` true for the one `openssl req -x509` makes by default.
    pub fn cert(ca: bool) -> &'static Cert {
        static CA: OnceLock<Cert> = OnceLock::new();
        static LEAF: OnceLock<Cert> = OnceLock::new();
        let slot = if ca { &CA } else { &LEAF };
        slot.get_or_init(|| {
            let dir = std::env::temp_dir().join(format!(
                "ibench-hostile-tls-{}-{}",
                std::process::id(),
                if ca { "ca" } else { "leaf" }
            ));
            std::fs::create_dir_all(&dir).expect("a temp dir");
            let (pem, key) = (dir.join("cert.pem"), dir.join("key.pem"));
            let constraint = if ca {
                "basicConstraints=critical,CA:TRUE"
            } else {
                "basicConstraints=critical,CA:FALSE"
            };
            let out = std::process::Command::new("openssl")
                .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
                .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
                .args(["-subj", "/CN=localhost", "-addext"])
                .arg("subjectAltName=DNS:localhost")
                .args(["-addext", constraint, "-keyout"])
                .arg(&key)
                .arg("-out")
                .arg(&pem)
                .output()
                .expect("openssl runs (apt-get install openssl)");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            Cert { pem, key }
        })
    }

    fn config(cert: &Cert) -> Arc<ServerConfig> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert.pem)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_file(&cert.key).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        Arc::new(config)
    }

    /// The server's side of a TLS handshake over `s` with `cert`; `None` when the client
    /// gave up (a certificate it refused).
    pub fn accept(s: TcpStream, cert: &Cert) -> Option<Tls> {
        let conn = ServerConnection::new(config(cert)).ok()?;
        let mut tls = StreamOwned::new(conn, s);
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock).ok()?;
        }
        Some(tls)
    }

    /// Everything the client sends over TLS until it closes (or goes quiet for `quiet`).
    pub fn drain(t: &mut Tls, quiet: Duration) -> Vec<u8> {
        let _ = t.sock.set_read_timeout(Some(quiet));
        let mut all = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match t.read(&mut buf) {
                Ok(0) | Err(_) => return all,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
    }
}
