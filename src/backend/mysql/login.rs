//! The login of a MySQL connection: the server's greeting, TLS (`CLIENT_SSL`, then the
//! handshake), the handshake response, one auth switch at most, and each method's answer
//! (`mysql_native_password`, `caching_sha2_password` with its fast path and its full
//! exchange, the opted-in `mysql_clear_password`). The packets' bytes are [`super::codec`]'s;
//! the connection and its reply loops are [`super::wire`]'s.

use std::os::unix::net::UnixStream;
use std::time::Instant;

use sha1::{Digest, Sha1};
use sha2::Sha256;

use super::codec::*;
use super::config::MyConfig;
use super::wire::MyWire;
use crate::backend::protocol::{self, Stream};
use crate::backend::tls;
use crate::backend::wire::{WireError, WireResult};

/// Logins that go on longer than this many packets are a protocol error, not a loop.
const MAX_LOGIN_ROUNDS: usize = 8;

impl MyWire {
    pub(super) fn handshake(
        &mut self,
        config: &MyConfig,
        host: Option<&str>,
        deadline: Option<Instant>,
    ) -> WireResult<()> {
        let p = self.next_packet()?;
        let hello = self.body(p).to_vec();
        if hello.first() == Some(&header::ERR) {
            return Err(self.server_error_of(&hello));
        }
        let greeting = Greeting::parse(&hello)
            .ok_or_else(|| self.protocol("a server greeting ibench cannot read".into()))?;
        self.connection_id = greeting.connection_id;
        let mut caps = cap::LONG_PASSWORD
            | cap::PROTOCOL_41
            | cap::TRANSACTIONS
            | cap::SECURE_CONNECTION
            | cap::MULTI_STATEMENTS
            | cap::MULTI_RESULTS
            | cap::PS_MULTI_RESULTS
            | cap::PLUGIN_AUTH;
        caps |= greeting.caps
            & (cap::LONG_FLAG | cap::PLUGIN_AUTH_LENENC_CLIENT_DATA | cap::DEPRECATE_EOF);
        let db = config.database.as_deref();
        if db.is_some() {
            caps |= cap::CONNECT_WITH_DB;
        }
        caps &= greeting.caps | cap::CONNECT_WITH_DB;
        if let (Some(host), Some(tls_config)) = (host, &config.tls) {
            if greeting.caps & cap::SSL != 0 {
                caps |= cap::SSL;
                self.start_tls(caps, tls_config, config.tls_verified, host, deadline)?;
            } else if config.ssl_mode.requires_tls() {
                return Err(WireError::Tls(format!(
                    "the server does not offer TLS, and ssl-mode={} needs it",
                    config.ssl_mode.name()
                )));
            }
        }
        self.caps = caps;
        let password = config.password.clone().unwrap_or_default().into_bytes();
        let plugin = greeting.plugin.clone();
        let response = self.auth_response(config, &plugin, &password, &greeting.scramble)?;

        self.ch.out.clear();
        let at = self.begin_packet();
        put_login_header(&mut self.ch.out, caps);
        put_cstr(&mut self.ch.out, config.user.as_bytes());
        if caps & cap::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
            put_lenenc_bytes(&mut self.ch.out, &response);
        } else {
            let len = u8::try_from(response.len())
                .map_err(|_| WireError::Auth("the auth response is too long".into()))?;
            self.ch.out.push(len);
            self.ch.out.extend_from_slice(&response);
        }
        if let Some(db) = db {
            put_cstr(&mut self.ch.out, db.as_bytes());
        }
        put_cstr(&mut self.ch.out, plugin.as_bytes());
        self.end_packet(at)?;
        if let Err(e) = self.ch.send() {
            // The server may have said why before it closed.
            return Err(self.error_sent_before_close().unwrap_or(WireError::Io(e)));
        }
        self.finish_login(config, plugin, greeting.scramble, &password)
    }

    /// Ask for TLS (an `SSLRequest` packet) and shake hands.
    fn start_tls(
        &mut self,
        caps: u32,
        tls_config: &std::sync::Arc<rustls::ClientConfig>,
        verified: bool,
        host: &str,
        deadline: Option<Instant>,
    ) -> WireResult<()> {
        if !self.ch.received.pending().is_empty() {
            return Err(self.protocol("the server sent more than its greeting".into()));
        }
        self.ch.out.clear();
        let at = self.begin_packet();
        put_login_header(&mut self.ch.out, caps);
        self.end_packet(at)?;
        self.ch.send()?;
        let placeholder = Stream::Unix(UnixStream::pair()?.0);
        let Stream::Tcp(tcp) = std::mem::replace(&mut self.ch.stream, placeholder) else {
            return Err(WireError::Tls("TLS is only for TCP connections".into()));
        };
        let tls = tls::connect(std::sync::Arc::clone(tls_config), host, tcp, deadline)
            .map_err(|e| WireError::Tls(e.to_string()))?;
        self.ch.stream = Stream::Tls {
            tls: Box::new(tls),
            verified,
        };
        Ok(())
    }

    /// The ERR packet a server sent before it closed, if one is in the socket.
    fn error_sent_before_close(&mut self) -> Option<WireError> {
        let p = self.read_packet().ok()?;
        let body = self.body(p);
        (body.first() == Some(&header::ERR)).then(|| self.server_error_of(body))
    }

    /// Whether the connection is TLS (checked or not) or a Unix socket: where the opted-in
    /// `mysql_clear_password` may send the password.
    fn is_encrypted_or_local(&self) -> bool {
        self.ch.stream.is_tls() || self.ch.stream.is_local()
    }

    /// The first answer of `plugin` to `scramble`.
    fn auth_response(
        &self,
        config: &MyConfig,
        plugin: &str,
        password: &[u8],
        scramble: &[u8],
    ) -> WireResult<Vec<u8>> {
        if plugin == "mysql_clear_password" {
            if !config.cleartext_plugin {
                return Err(WireError::Auth(
                    "the server asks for the password in clear (mysql_clear_password): opt in \
                     with enable-cleartext-plugin=true in --url, over TLS or a Unix socket"
                        .to_string(),
                ));
            }
            if !self.is_encrypted_or_local() {
                return Err(WireError::Auth(
                    "the server asks for the password in clear (mysql_clear_password) over TCP \
                     without TLS: use ssl-mode=REQUIRED or a Unix socket"
                        .to_string(),
                ));
            }
        }
        auth_response(plugin, password, scramble)
    }

    /// The rest of the login: one auth switch at most, `caching_sha2_password`'s extra
    /// round, then OK.
    fn finish_login(
        &mut self,
        config: &MyConfig,
        mut plugin: String,
        mut scramble: Vec<u8>,
        password: &[u8],
    ) -> WireResult<()> {
        let mut switched = false;
        let mut rounds = 0;
        loop {
            rounds += 1;
            if rounds > MAX_LOGIN_ROUNDS {
                return Err(self.protocol("the login goes on and on".into()));
            }
            let p = self.next_packet()?;
            let body = self.body(p).to_vec();
            match body.first() {
                Some(&header::OK) => return Ok(()),
                Some(&header::ERR) => {
                    self.ch.broken = true;
                    return Err(self.server_error_of(&body));
                }
                Some(&header::EOF) if !switched => {
                    // Auth switch: plugin name, then its scramble.
                    switched = true;
                    let rest = &body[1..];
                    let end = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
                    plugin = protocol::server_text(&rest[..end]);
                    scramble = rest.get(end + 1..).unwrap_or_default().to_vec();
                    if scramble.last() == Some(&0) {
                        scramble.pop();
                    }
                    let response = self.auth_response(config, &plugin, password, &scramble)?;
                    self.send_raw(&response)?;
                }
                Some(&header::EOF) => {
                    return Err(self.protocol("a second auth switch in one login".into()));
                }
                Some(&header::AUTH_MORE_DATA) if plugin == "caching_sha2_password" => {
                    match body.get(1) {
                        Some(3) => {} // fast auth done: OK follows
                        Some(4) => self.caching_sha2_full(config, password, &scramble)?,
                        _ => return Err(self.protocol("an unknown caching_sha2 reply".into())),
                    }
                }
                _ => return Err(self.protocol("an unexpected login reply".into())),
            }
        }
    }

    /// `caching_sha2_password`'s full exchange: the password in clear over a Unix socket or
    /// TLS whose certificate was checked; over TLS with an unchecked certificate (which
    /// anyone can show) only with `get-server-public-key=true`, the opt-in that trusts whoever
    /// answers; over plain TCP encrypted with the server's RSA key, which comes from
    /// `server-public-key-path`, or from the server only with `get-server-public-key`.
    fn caching_sha2_full(
        &mut self,
        config: &MyConfig,
        password: &[u8],
        scramble: &[u8],
    ) -> WireResult<()> {
        let mut clear = password.to_vec();
        clear.push(0);
        if self.ch.stream.is_private() {
            return self.send_raw(&clear);
        }
        if let Some(dir) = self.ch.stream.shared_socket_dir() {
            // A socket anyone could have put there: in clear only with the opt-in.
            if config.get_server_public_key {
                return self.send_raw(&clear);
            }
            return Err(WireError::Auth(format!(
                "caching_sha2_password needs the password in clear, and the server's socket is \
                 in {}, a directory every user can write (anyone could have put a socket there \
                 under the server's name): give the server a socket directory of its own, or \
                 opt in with get-server-public-key=true (which trusts whoever answers)",
                dir.display()
            )));
        }
        if self.ch.stream.is_tls() {
            // Over TLS the server takes the password in clear, never RSA-encrypted.
            if config.get_server_public_key {
                return self.send_raw(&clear);
            }
            return Err(WireError::Auth(
                "caching_sha2_password needs the password in clear, and this TLS connection's \
                 certificate was not checked (ssl-mode=PREFERRED and REQUIRED do not check \
                 it): use ssl-mode=VERIFY_IDENTITY (or VERIFY_CA) with ssl-ca=, a Unix socket, \
                 or opt in with get-server-public-key=true (which trusts whoever answers)"
                    .to_string(),
            ));
        }
        let key = match (&config.server_public_key, config.get_server_public_key) {
            (Some(key), _) => key.clone(),
            (None, true) => {
                self.send_raw(&[2])?; // ask for the public key
                let p = self.next_packet()?;
                let body = self.body(p).to_vec();
                if body.first() != Some(&header::AUTH_MORE_DATA) {
                    return Err(self.protocol("no RSA public key from the server".into()));
                }
                body[1..].to_vec()
            }
            (None, false) => {
                return Err(WireError::Auth(
                    "caching_sha2_password needs the password sent over TCP without TLS: use \
                     ssl-mode=REQUIRED, give the server's key with server-public-key-path=PATH, \
                     or opt in with get-server-public-key=true (which trusts whoever answers)"
                        .to_string(),
                ));
            }
        };
        for (i, b) in clear.iter_mut().enumerate() {
            *b ^= scramble
                .get(i % scramble.len().max(1))
                .copied()
                .unwrap_or(0);
        }
        let encrypted = rsa_encrypt(&clear, &key)?;
        self.send_raw(&encrypted)
    }
}

/// The server's first packet.
struct Greeting {
    connection_id: u32,
    caps: u32,
    scramble: Vec<u8>,
    plugin: String,
}

impl Greeting {
    fn parse(b: &[u8]) -> Option<Greeting> {
        if *b.first()? != 10 {
            return None;
        }
        let mut i = 1 + b[1..].iter().position(|x| *x == 0)? + 1;
        let connection_id = u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?);
        i += 4;
        let mut scramble = b.get(i..i + 8)?.to_vec();
        i += 9;
        let caps_low = u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?);
        i += 2;
        let mut caps = u32::from(caps_low);
        let mut plugin = "mysql_native_password".to_string();
        if b.len() > i {
            i += 3; // charset, status
            let caps_high = u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?);
            caps |= u32::from(caps_high) << 16;
            i += 2;
            let data_len = usize::from(*b.get(i)?);
            i += 11; // length byte, 10 reserved
            if caps & cap::SECURE_CONNECTION != 0 {
                let part2 = data_len.saturating_sub(8).max(13);
                let p2 = b.get(i..(i + part2).min(b.len()))?;
                scramble.extend_from_slice(p2.strip_suffix(&[0]).unwrap_or(p2));
                i += part2;
            }
            if caps & cap::PLUGIN_AUTH != 0 && i < b.len() {
                let rest = &b[i..];
                let end = rest.iter().position(|x| *x == 0).unwrap_or(rest.len());
                plugin = protocol::server_text(&rest[..end]);
            }
        }
        Some(Greeting {
            connection_id,
            caps,
            scramble,
            plugin,
        })
    }
}

/// The first answer of `plugin` to `scramble`.
fn auth_response(plugin: &str, password: &[u8], scramble: &[u8]) -> WireResult<Vec<u8>> {
    let scramble = &scramble[..scramble.len().min(20)];
    match plugin {
        _ if password.is_empty() && plugin != "mysql_clear_password" => Ok(Vec::new()),
        // SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))).
        "mysql_native_password" => Ok(xor_hash::<Sha1>(password, scramble, true)),
        // SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + scramble).
        "caching_sha2_password" => Ok(xor_hash::<Sha256>(password, scramble, false)),
        "mysql_clear_password" => {
            let mut v = password.to_vec();
            v.push(0);
            Ok(v)
        }
        other => Err(WireError::Auth(format!(
            "the server asks for the {other} login, which ibench does not have \
             (mysql_native_password, caching_sha2_password and mysql_clear_password work): \
             give the user one of those"
        ))),
    }
}

/// `data` encrypted with RSA-OAEP (SHA-1) under the PEM public key `key`, as the server
/// expects for `caching_sha2_password` and `sha256_password`. A key that does not parse is
/// an error, not a panic.
fn rsa_encrypt(data: &[u8], key: &[u8]) -> WireResult<Vec<u8>> {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::DecodePublicKey;
    let text = std::str::from_utf8(key)
        .map_err(|_| WireError::Auth("the server's RSA key is not PEM text".into()))?;
    let text = text.trim_end_matches('\0');
    let public = rsa::RsaPublicKey::from_public_key_pem(text)
        .or_else(|_| rsa::RsaPublicKey::from_pkcs1_pem(text))
        .map_err(|e| WireError::Auth(format!("the server's RSA key does not parse: {e}")))?;
    public
        .encrypt(&mut rsa::rand_core::OsRng, rsa::Oaep::new::<Sha1>(), data)
        .map_err(|e| WireError::Auth(format!("RSA encryption of the password failed: {e}")))
}

/// `H(pw) XOR H(scramble + H(H(pw)))` (`scramble_first`) or `H(pw) XOR H(H(H(pw)) + scramble)`.
fn xor_hash<D: Digest>(password: &[u8], scramble: &[u8], scramble_first: bool) -> Vec<u8> {
    let h1 = D::digest(password);
    let h2 = D::digest(&h1);
    let mut h = D::new();
    if scramble_first {
        h.update(scramble);
        h.update(&h2);
    } else {
        h.update(&h2);
        h.update(scramble);
    }
    let h3 = h.finalize();
    h1.iter().zip(h3.iter()).map(|(a, b)| a ^ b).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_password_answers_the_scramble() {
        // mysql_native_password: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))).
        let scramble = [1u8; 20];
        let r = auth_response("mysql_native_password", b"secret", &scramble).unwrap();
        assert_eq!(r.len(), 20);
        let h1 = Sha1::digest(b"secret");
        let mut h = Sha1::new();
        h.update(scramble);
        h.update(Sha1::digest(h1));
        let back: Vec<u8> = r
            .iter()
            .zip(h.finalize().iter())
            .map(|(a, b)| a ^ b)
            .collect();
        assert_eq!(back, h1.to_vec());
        assert!(
            auth_response("mysql_native_password", b"", &scramble)
                .unwrap()
                .is_empty()
        );
        let e = auth_response("client_ed25519", b"x", &scramble).unwrap_err();
        assert!(e.to_string().contains("client_ed25519"), "{e}");
    }

    #[test]
    fn a_greeting_gives_the_scramble_and_plugin() {
        let mut g = vec![10];
        g.extend_from_slice(b"10.11.19-MariaDB\0");
        g.extend_from_slice(&7u32.to_le_bytes());
        g.extend_from_slice(b"abcdefgh\0");
        let caps = cap::PROTOCOL_41 | cap::SECURE_CONNECTION | cap::PLUGIN_AUTH;
        g.extend_from_slice(&u16::try_from(caps & 0xFFFF).unwrap().to_le_bytes());
        g.extend_from_slice(&[45, 2, 0]);
        g.extend_from_slice(&u16::try_from(caps >> 16).unwrap().to_le_bytes());
        g.push(21);
        g.extend_from_slice(&[0; 10]);
        g.extend_from_slice(b"ijklmnopqrst\0");
        g.extend_from_slice(b"mysql_native_password\0");
        let p = Greeting::parse(&g).unwrap();
        assert_eq!(p.connection_id, 7);
        assert_eq!(p.scramble, b"abcdefghijklmnopqrst");
        assert_eq!(p.plugin, "mysql_native_password");
    }
}
