//! The login of a PostgreSQL connection: the authentication exchange (cleartext, MD5,
//! SCRAM-SHA-256 and SCRAM-SHA-256-PLUS, limited by `require_auth` and `channel_binding`), as
//! requests named by [`AuthRequest`], in methods of the client, [`PgWire`], over its frame
//! reader. The messages' bytes are [`super::codec`]'s; the connection and its reply loops are
//! [`super::wire`]'s, which imports nothing from here; the TLS request before the login is
//! [`super::transport`]'s.

use postgres_protocol::authentication::{md5_hash, sasl};

use super::codec::*;
use super::config::{AuthMethods, ChannelBinding, PgConfig};
use super::wire::PgWire;
use crate::backend::protocol::Stream;
use crate::backend::tls;
use crate::backend::wire::{WireError, WireResult};

/// Logins that go on longer than this many messages are a protocol error, not a loop.
const MAX_AUTH_ROUNDS: usize = 16;

impl PgWire {
    /// Log in as `config` says, with the password for its host `host_index`: answer the
    /// server's authentication requests up to `AuthenticationOk`.
    pub(super) fn authenticate(&mut self, config: &PgConfig, host_index: usize) -> WireResult<()> {
        let password = config.password_for(host_index);
        let login = Login {
            user: config.user.as_bytes(),
            password: password.as_deref().map(str::as_bytes),
            allowed: &config.require_auth,
            binding: config.channel_binding,
        };
        self.answer_requests(&login)
    }

    /// Answer the authentication requests for `login`, up to `AuthenticationOk`.
    fn answer_requests(&mut self, login: &Login<'_>) -> WireResult<()> {
        let need_password = || {
            WireError::Auth(
                "the server asks for a password and none was given: put it in --url, \
                 ?password_file=, PGPASSWORD or ~/.pgpass"
                    .to_string(),
            )
        };
        let allowed = login.allowed;
        let mut scram: Option<sasl::ScramSha256> = None;
        let mut scram_verified = false;
        let mut bound = false;
        let mut rounds = 0;
        loop {
            rounds += 1;
            if rounds > MAX_AUTH_ROUNDS {
                return Err(self.protocol("the login goes on and on".to_string()));
            }
            let request = self.next_auth_request()?;
            match request {
                AuthRequest::Ok => {
                    let scram_state = (scram.is_some(), scram_verified);
                    self.authentication_ok(scram_state, rounds, allowed)?;
                    return binding_kept(login.binding, bound);
                }
                AuthRequest::CleartextPassword => {
                    refuse_unless(allowed.password, "a cleartext password")?;
                    refuse_unbound(login.binding, "a cleartext password")?;
                    self.cleartext_allowed(allowed)?;
                    let pw = login.password.ok_or_else(need_password)?;
                    self.password_message(pw)?;
                }
                AuthRequest::Md5Password(salt) => {
                    refuse_unless(allowed.md5, "an MD5 password")?;
                    refuse_unbound(login.binding, "an MD5 password")?;
                    let pw = login.password.ok_or_else(need_password)?;
                    self.answer_md5(login.user, pw, salt)?;
                }
                AuthRequest::Sasl(mechanisms) => {
                    refuse_unless(allowed.scram, "SCRAM-SHA-256")?;
                    if scram.is_some() {
                        return Err(self.protocol("a second SASL start".to_string()));
                    }
                    let pw = login.password.ok_or_else(need_password)?;
                    let (s, b) = self.start_scram(&mechanisms, pw, login.binding)?;
                    (scram, bound) = (Some(s), b);
                }
                AuthRequest::SaslContinue(ref data) | AuthRequest::SaslFinal(ref data) => {
                    let last = matches!(request, AuthRequest::SaslFinal(_));
                    let s = scram
                        .as_mut()
                        .ok_or_else(|| WireError::Protocol("SASL reply before SASL".into()))?;
                    scram_verified = self.continue_scram(s, last, data)?;
                }
                AuthRequest::Other(other) => {
                    return Err(WireError::Auth(format!(
                        "the server asks for authentication method {other}, which ibench does \
                         not have (trust, password, md5 and scram-sha-256 work)"
                    )));
                }
            }
        }
    }

    /// The next message of the login, which must be an authentication request: the server's
    /// error (after which it closes) or a protocol error otherwise.
    fn next_auth_request(&mut self) -> WireResult<AuthRequest> {
        let f = self.next_frame()?;
        if f.tag == tag::ERROR_RESPONSE {
            self.ch.broken = true;
            return Err(self.server_error(f));
        }
        if f.tag != tag::AUTHENTICATION || f.len < 4 {
            return Err(self.protocol(format!(
                "expected an authentication request, got {:?}",
                f.tag as char
            )));
        }
        Ok(AuthRequest::parse(self.body(f)))
    }

    /// `AuthenticationOk` after `rounds` requests: refused when a SCRAM exchange did not end
    /// with the server's signature, or when the server asked for nothing and `require_auth`
    /// does not allow `none`.
    fn authentication_ok(
        &mut self,
        (scram_started, scram_verified): (bool, bool),
        rounds: usize,
        allowed: &AuthMethods,
    ) -> WireResult<()> {
        if scram_started && !scram_verified {
            return Err(self.protocol(
                "the server ended SCRAM without proving it knows the password (no server \
                 signature)"
                    .to_string(),
            ));
        }
        if rounds == 1 && !allowed.none {
            return Err(WireError::Auth(
                "the server let the user in without authentication, which require_auth does \
                 not allow"
                    .to_string(),
            ));
        }
        Ok(())
    }

    /// Answer `AuthenticationMD5Password` with its 4-byte `salt`, as libpq does.
    fn answer_md5(
        &mut self,
        user: &[u8],
        password: &[u8],
        salt: Option<[u8; 4]>,
    ) -> WireResult<()> {
        let salt = salt.ok_or_else(|| WireError::Protocol("short MD5 request".into()))?;
        let hash = md5_hash(user, password, salt);
        self.password_message(hash.as_bytes())
    }

    /// A cleartext password goes over a Unix socket or TLS whose certificate was checked;
    /// elsewhere (plain TCP, or TLS with an unchecked certificate, which anyone can show) only
    /// when the user named `password` in `require_auth`. Stricter than libpq, which sends it
    /// over any TLS.
    fn cleartext_allowed(&self, allowed: &AuthMethods) -> WireResult<()> {
        if self.ch.stream.is_private() || allowed.cleartext_opted_in {
            return Ok(());
        }
        if let Some(dir) = self.ch.stream.shared_socket_dir() {
            return Err(WireError::Auth(format!(
                "the server asks for the password in clear over a Unix socket in {}, a \
                 directory every user can write (anyone could have put a socket there under \
                 the server's name): give the server a socket directory of its own \
                 (unix_socket_directories), use TCP with sslmode=verify-full, or opt in with \
                 require_auth=password",
                dir.display()
            )));
        }
        let over = if self.ch.stream.is_tls() {
            "over TLS with an unchecked certificate (sslmode=prefer and require do not check \
             it)"
        } else {
            "over TCP without TLS"
        };
        Err(WireError::Auth(format!(
            "the server asks for the password in clear {over}: use sslmode=verify-full (or \
             verify-ca) with sslrootcert=, a Unix socket, or opt in with require_auth=password"
        )))
    }

    /// Answer `AuthenticationSASL` (the offered `mechanisms`) with SCRAM's first message:
    /// `SCRAM-SHA-256-PLUS` bound to the TLS session (`tls-server-end-point`) when the
    /// connection is TLS, the server offers it and `binding` allows it; else plain
    /// `SCRAM-SHA-256`, whose header says `y` over TLS (so that a server offering `-PLUS`
    /// sees an offer that was stripped on the way) and `n` otherwise. Whether it is bound.
    fn start_scram(
        &mut self,
        mechanisms: &[u8],
        password: &[u8],
        binding: ChannelBinding,
    ) -> WireResult<(sasl::ScramSha256, bool)> {
        let offers = |name: &[u8]| mechanisms.split(|b| *b == 0).any(|m| m == name);
        let end_point = match &self.ch.stream {
            Stream::Tls { tls, .. } if binding != ChannelBinding::Disable => {
                tls::server_end_point(&tls.conn)
            }
            _ => None,
        };
        let (mechanism, channel, bound) = match end_point {
            Some(hash) if offers(b"SCRAM-SHA-256-PLUS") => (
                "SCRAM-SHA-256-PLUS",
                sasl::ChannelBinding::tls_server_end_point(hash),
                true,
            ),
            _ if binding == ChannelBinding::Require => {
                return Err(WireError::Auth(unbound_refusal(self.ch.stream.is_tls())));
            }
            _ if !offers(b"SCRAM-SHA-256") => {
                return Err(WireError::Auth(
                    "the server offers no SASL mechanism ibench has (SCRAM-SHA-256)".to_string(),
                ));
            }
            // TLS and a hash to bind to, but no `-PLUS` offered: `y` (could have bound).
            Some(_) => ("SCRAM-SHA-256", sasl::ChannelBinding::unrequested(), false),
            None => ("SCRAM-SHA-256", sasl::ChannelBinding::unsupported(), false),
        };
        let s = sasl::ScramSha256::new(password, channel);
        self.ch.out.clear();
        sasl_initial_response(&mut self.ch.out, mechanism, s.message())?;
        self.ch.send()?;
        Ok((s, bound))
    }

    /// `SASLContinue` (answered with the client's proof) or, `last`, `SASLFinal` (the
    /// server's signature, checked); whether the server is verified.
    fn continue_scram(
        &mut self,
        s: &mut sasl::ScramSha256,
        last: bool,
        data: &[u8],
    ) -> WireResult<bool> {
        if last {
            s.finish(data).map_err(|e| {
                WireError::Auth(format!(
                    "SCRAM: the server's signature does not check out ({e})"
                ))
            })?;
            return Ok(true);
        }
        s.update(data)
            .map_err(|e| WireError::Auth(format!("SCRAM: {e}")))?;
        self.ch.out.clear();
        sasl_response(&mut self.ch.out, s.message())?;
        self.ch.send()?;
        Ok(false)
    }

    fn password_message(&mut self, pw: &[u8]) -> WireResult<()> {
        self.ch.out.clear();
        password(&mut self.ch.out, pw)?;
        Ok(self.ch.send()?)
    }
}

/// What one login answers with: the user, the password, the methods `require_auth` allows
/// and `channel_binding`.
struct Login<'a> {
    user: &'a [u8],
    password: Option<&'a [u8]>,
    allowed: &'a AuthMethods,
    binding: ChannelBinding,
}

/// A request `require_auth` does not allow.
fn refuse_unless(allowed: bool, method: &str) -> WireResult<()> {
    if allowed {
        return Ok(());
    }
    Err(WireError::Auth(format!(
        "the server asks for {method}, which require_auth does not allow"
    )))
}

/// A request that cannot be bound to the TLS session, under `channel_binding=require`.
fn refuse_unbound(binding: ChannelBinding, method: &str) -> WireResult<()> {
    if binding != ChannelBinding::Require {
        return Ok(());
    }
    Err(WireError::Auth(format!(
        "the server asks for {method}, and channel_binding=require needs SCRAM-SHA-256-PLUS \
         (a scram-sha-256 rule in pg_hba.conf and TLS)"
    )))
}

/// A login that ended without binding, under `channel_binding=require`.
fn binding_kept(binding: ChannelBinding, bound: bool) -> WireResult<()> {
    if binding == ChannelBinding::Require && !bound {
        return Err(WireError::Auth(
            "the server let the user in without SCRAM channel binding, which \
             channel_binding=require does not allow"
                .to_string(),
        ));
    }
    Ok(())
}

/// Why `channel_binding=require` cannot be met by a SCRAM request.
fn unbound_refusal(over_tls: bool) -> String {
    if over_tls {
        "channel_binding=require, and the server does not offer SCRAM-SHA-256-PLUS (or its \
         certificate's signature has no hash to bind to)"
            .to_string()
    } else {
        "channel_binding=require needs TLS (sslmode=require or stronger over TCP), and this \
         connection has none"
            .to_string()
    }
}
