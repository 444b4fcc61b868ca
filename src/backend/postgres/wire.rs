//! A blocking PostgreSQL protocol connection: what the benchmark's own connections use.
//!
//! It does what libpq does for one statement at a time, and no more: one socket per
//! connection, the thread blocks in the kernel on it (no async runtime, no `epoll` between a
//! send and its reply), a prepared statement's `Bind`, `Execute` and `Sync` are encoded into
//! one reused buffer and sent with one `write`, and the replies are read into one reused
//! buffer and walked in place (rows are counted, not decoded). Parameters are sent in binary,
//! encoded by the types the server described at `Parse`; results are asked for in binary.
//!
//! The statements are the same, in the same transactions, as with any other client: no
//! pipelining (a statement's reply is read before the next is sent), so a statement's
//! latency means what it always meant. Every connection ibench opens to a PostgreSQL server
//! is one of these: the benchmark's, the driver's describe and settle, the sampler's.
//!
//! The messages' bytes (encoding into the send buffer, decoding a body read in place) are
//! [`super::codec`]'s; this file does the I/O, the login and the reply loops.
//!
//! TLS as libpq's `sslmode` says ([`super::config`], [`crate::backend::tls`]).
//! Authentication: trust, cleartext password (over a Unix socket or TLS whose certificate was
//! checked, or elsewhere with `require_auth=password`), MD5, SCRAM-SHA-256 and
//! SCRAM-SHA-256-PLUS (channel binding as `channel_binding` says; the server's final
//! signature is checked), limited by `require_auth`. Every message length is capped by its
//! kind, a text query's rows and bytes are capped, server text is escaped and cut where it is
//! read, the login has one deadline, and a reply ibench did not ask for is an
//! error, never a hang.

use std::io::{self, Read, Write};
use std::net::ToSocketAddrs;
use std::time::{Duration, Instant};

use super::config::{AuthMethods, ChannelBinding, Host, PgConfig, SslMode, socket_file};
use crate::backend::protocol::{self, Address, Channel, Stream};
use crate::backend::tls;
use crate::backend::tls::Verify;
use crate::results::target::TlsInfo;
use postgres_protocol::authentication::{md5_hash, sasl};

use super::codec::*;
pub use crate::backend::wire::{Executed, ServerError, TextResult, Value, WireError};
use crate::backend::wire::{Wire, WireResult};

/// Protocol version 3.0.
const PROTOCOL_3_0: i32 = 196_608;

/// The code of a `CancelRequest`.
const CANCEL_REQUEST_CODE: i32 = 80_877_102;

/// A statement prepared on one connection.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The server-side name (`ibN`).
    name: String,
    /// The type of each parameter, as the server described it.
    param_types: Vec<u32>,
}

/// Logins that go on longer than this many messages are a protocol error, not a loop.
const MAX_AUTH_ROUNDS: usize = 16;

/// The longest message of a kind that can be long (rows, row descriptions, errors, notices,
/// notifications, copy data): PostgreSQL's own limit on one allocation.
const MAX_LONG_MESSAGE_BYTES: usize = 1 << 30;

/// The longest message of any other kind, as libpq allows.
const MAX_SHORT_MESSAGE_BYTES: usize = 30_000;

/// The longest message during the login (authentication requests, errors, parameters).
const MAX_LOGIN_MESSAGE_BYTES: usize = 65_536;

/// The most warnings one simple query keeps.
const MAX_NOTICES: usize = 100;

/// The code of an `SSLRequest`.
const SSL_REQUEST_CODE: i32 = 80_877_103;

/// Sends a `CancelRequest` for a connection's running statement, from any thread.
#[derive(Debug, Clone)]
pub struct CancelKey {
    address: Address,
    process_id: i32,
    secret_key: i32,
}

impl CancelKey {
    /// Ask the server to cancel whatever the connection runs now.
    /// The request is bounded by [`protocol::CANCEL_TIMEOUT`]: connect, send and the wait for
    /// the server to close.
    pub fn cancel(&self) -> io::Result<()> {
        let mut stream = self.address.connect(Some(protocol::CANCEL_TIMEOUT))?;
        stream.set_read_timeout(Some(protocol::CANCEL_TIMEOUT))?;
        stream.set_write_timeout(Some(protocol::CANCEL_TIMEOUT))?;
        let mut msg = Vec::with_capacity(16);
        msg.extend_from_slice(&16i32.to_be_bytes());
        msg.extend_from_slice(&CANCEL_REQUEST_CODE.to_be_bytes());
        msg.extend_from_slice(&self.process_id.to_be_bytes());
        msg.extend_from_slice(&self.secret_key.to_be_bytes());
        stream.write_all(&msg)?;
        // The server closes the connection when it has read the request.
        let mut sink = [0u8; 1];
        let _ = stream.read(&mut sink);
        Ok(())
    }
}

/// One blocking protocol connection.
pub struct PgWire {
    ch: Channel,
    address: Address,
    process_id: i32,
    secret_key: i32,
    next_statement: u32,
    /// Still logging in: messages are held to the login's length limit.
    in_login: bool,
    /// The warnings of the last simple query.
    notices: Vec<String>,
}

/// One message's tag and where its body lies in the receive buffer.
#[derive(Clone, Copy)]
struct Frame {
    tag: u8,
    at: usize,
    len: usize,
}

impl PgWire {
    /// Connect to the first host of `config` that accepts, and log in; TLS as its `sslmode`
    /// says. The whole exchange, connect, TLS and login, is bounded by the connect timeout.
    pub fn connect(config: &PgConfig) -> WireResult<PgWire> {
        let mut last: Option<WireError> = None;
        for (i, host) in config.hosts.iter().enumerate() {
            let port = config.port_of(i);
            let addresses = match addresses(host, port) {
                Ok(a) => a,
                Err(e) => {
                    last = Some(WireError::Io(e));
                    continue;
                }
            };
            for address in addresses {
                let optional_tls =
                    !address.is_local() && config.tls.is_some() && !config.ssl_mode.requires_tls();
                match Self::connect_to(config, i, host, address) {
                    Ok(conn) if optional_tls => {
                        let target = format!("{}:{port}", host_name(host));
                        let mode = format!("sslmode={}", ssl_mode_name(config.ssl_mode));
                        config
                            .tls_ledger
                            .check_on(
                                conn.tls_info(),
                                &target,
                                &mode,
                                conn.ch.stream.is_loopback(),
                            )
                            .map_err(WireError::Tls)?;
                        return Ok(conn);
                    }
                    Ok(conn) => return Ok(conn),
                    // The server answered and refused: trying the next address would only
                    // repeat the refusal (or reach another server with other rules).
                    Err(e @ (WireError::Server(_) | WireError::Auth(_) | WireError::Tls(_))) => {
                        return Err(e);
                    }
                    Err(e) => last = Some(e),
                }
            }
        }
        Err(last.unwrap_or_else(|| {
            WireError::Io(io::Error::new(
                io::ErrorKind::NotFound,
                "no host to connect to",
            ))
        }))
    }

    /// One address, in the order `sslmode` gives: `allow` tries plain first and TLS after a
    /// refusal; `prefer` tries TLS first and plain when the TLS handshake fails.
    fn connect_to(
        config: &PgConfig,
        i: usize,
        host: &Host,
        address: Address,
    ) -> WireResult<PgWire> {
        let tls_possible = !address.is_local() && config.tls.is_some();
        match config.ssl_mode {
            SslMode::Allow if tls_possible => {
                match Self::attempt(config, i, host, address.clone(), false) {
                    Err(WireError::Server(_)) => Self::attempt(config, i, host, address, true),
                    other => other,
                }
            }
            SslMode::Prefer if tls_possible => {
                match Self::attempt(config, i, host, address.clone(), true) {
                    Err(WireError::Tls(_)) => Self::attempt(config, i, host, address, false),
                    other => other,
                }
            }
            _ => Self::attempt(
                config,
                i,
                host,
                address,
                tls_possible && config.ssl_mode != SslMode::Allow,
            ),
        }
    }

    /// One connection attempt, with or without asking for TLS.
    fn attempt(
        config: &PgConfig,
        i: usize,
        host: &Host,
        address: Address,
        ask_tls: bool,
    ) -> WireResult<PgWire> {
        let started = Instant::now();
        let timeout = config.connect_timeout;
        let deadline = timeout.map(|t| started + t);
        let stream = address.connect(timeout)?;
        stream.set_write_timeout(timeout)?;
        let stream = match (ask_tls, stream, &config.tls) {
            (true, Stream::Tcp(tcp), Some(tls_config)) => {
                let name = match host {
                    Host::Tcp(name) => name.as_str(),
                    Host::Unix(_) => "localhost",
                };
                let verified = config
                    .tls_policy
                    .as_ref()
                    .is_some_and(|p| p.verify != Verify::Nothing);
                let tls = TlsRequest {
                    config: tls_config,
                    host: name,
                    mode: config.ssl_mode,
                    verified,
                };
                negotiate_tls(tcp, &tls, deadline)?
            }
            (_, stream, _) => stream,
        };
        if !stream.is_tls() && !address.is_local() && config.ssl_mode.requires_tls() {
            return Err(WireError::Tls(format!(
                "sslmode={} needs TLS, and this connection has none",
                ssl_mode_name(config.ssl_mode)
            )));
        }
        let mut conn = PgWire {
            ch: Channel::new(stream),
            address,
            process_id: 0,
            secret_key: 0,
            next_statement: 1,
            in_login: true,
            notices: Vec::new(),
        };
        conn.ch.deadline = deadline;
        conn.startup(config, i)?;
        conn.ch.bound(None)?;
        conn.ch.stream.set_write_timeout(None)?;
        conn.in_login = false;
        Ok(conn)
    }

    /// What TLS negotiated on this connection (`None`: plain, or a Unix socket).
    pub fn tls_info(&self) -> Option<TlsInfo> {
        self.ch.stream.tls_info()
    }

    /// What a [`CancelKey`] needs to cancel this connection's statement.
    pub fn cancel_key(&self) -> CancelKey {
        CancelKey {
            address: self.address.clone(),
            process_id: self.process_id,
            secret_key: self.secret_key,
        }
    }

    fn startup(&mut self, config: &PgConfig, i: usize) -> WireResult<()> {
        if config.user.is_empty() {
            return Err(WireError::Auth("no user given".to_string()));
        }
        let mut params: Vec<(&str, &str)> =
            vec![("user", config.user.as_str()), ("client_encoding", "UTF8")];
        if let Some(db) = &config.dbname {
            params.push(("database", db));
        }
        if let Some(app) = &config.application_name {
            params.push(("application_name", app));
        }
        if let Some(options) = &config.options {
            params.push(("options", options));
        }
        self.ch.out.clear();
        let at = begin_untagged(&mut self.ch.out);
        put_i32(&mut self.ch.out, PROTOCOL_3_0);
        for (k, v) in params {
            put_cstr(&mut self.ch.out, k)?;
            put_cstr(&mut self.ch.out, v)?;
        }
        self.ch.out.push(0);
        end_message(&mut self.ch.out, at)?;
        if let Err(e) = self.ch.send() {
            // The server may have said why before it closed (too many clients, ...).
            return Err(self.error_sent_before_close().unwrap_or(WireError::Io(e)));
        }
        let password = config.password_for(i);
        let login = Login {
            user: config.user.as_bytes(),
            password: password.as_deref().map(str::as_bytes),
            allowed: &config.require_auth,
            binding: config.channel_binding,
        };
        self.authenticate(&login)?;
        // Then: ParameterStatus, BackendKeyData, ReadyForQuery; or an error, after which the
        // server closes the connection.
        loop {
            let f = self.next_frame()?;
            match f.tag {
                b'K' => {
                    // A short one would leave the cancel key at 0/0: Ctrl-C could not cancel.
                    let body = self.body(f);
                    if body.len() < 8 {
                        let n = body.len();
                        return Err(self.protocol(format!(
                            "a BackendKeyData of {n} bytes (8 expected): without its key, \
                             ibench could not cancel a statement"
                        )));
                    }
                    let (pid, key) = (be_i32(&body[0..4]), be_i32(&body[4..8]));
                    self.process_id = pid;
                    self.secret_key = key;
                }
                b'E' => {
                    self.ch.broken = true;
                    return Err(self.server_error(f));
                }
                b'Z' => return Ok(()),
                b'S' | b'N' => {}
                t => return Err(self.protocol(format!("unexpected message {:?}", t as char))),
            }
        }
    }

    /// The `ErrorResponse` a server sent before it closed, if one is in the socket.
    fn error_sent_before_close(&mut self) -> Option<WireError> {
        let f = self.read_frame().ok()?;
        (f.tag == b'E').then(|| self.server_error(f))
    }

    fn authenticate(&mut self, login: &Login<'_>) -> WireResult<()> {
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
            let f = self.next_auth_request()?;
            let body = self.body(f);
            let code = be_i32(&body[0..4]);
            match code {
                0 => {
                    let scram_state = (scram.is_some(), scram_verified);
                    self.authentication_ok(scram_state, rounds, allowed)?;
                    return binding_kept(login.binding, bound);
                }
                3 => {
                    refuse_unless(allowed.password, "a cleartext password")?;
                    refuse_unbound(login.binding, "a cleartext password")?;
                    self.cleartext_allowed(allowed)?;
                    let pw = login.password.ok_or_else(need_password)?;
                    self.password_message(pw)?;
                }
                5 => {
                    refuse_unless(allowed.md5, "an MD5 password")?;
                    refuse_unbound(login.binding, "an MD5 password")?;
                    let salt = body.get(4..8).map(<[u8]>::to_vec);
                    let pw = login.password.ok_or_else(need_password)?;
                    self.answer_md5(login.user, pw, salt)?;
                }
                10 => {
                    refuse_unless(allowed.scram, "SCRAM-SHA-256")?;
                    if scram.is_some() {
                        return Err(self.protocol("a second SASL start".to_string()));
                    }
                    let pw = login.password.ok_or_else(need_password)?;
                    let mechanisms = body[4..].to_vec();
                    let (s, b) = self.start_scram(&mechanisms, pw, login.binding)?;
                    (scram, bound) = (Some(s), b);
                }
                11 | 12 => {
                    let data = body[4..].to_vec();
                    let s = scram
                        .as_mut()
                        .ok_or_else(|| WireError::Protocol("SASL reply before SASL".into()))?;
                    scram_verified = self.continue_scram(s, code == 12, &data)?;
                }
                other => {
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
    fn next_auth_request(&mut self) -> WireResult<Frame> {
        let f = self.next_frame()?;
        if f.tag == b'E' {
            self.ch.broken = true;
            return Err(self.server_error(f));
        }
        if f.tag != b'R' || f.len < 4 {
            return Err(self.protocol(format!(
                "expected an authentication request, got {:?}",
                f.tag as char
            )));
        }
        Ok(f)
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
        salt: Option<Vec<u8>>,
    ) -> WireResult<()> {
        let salt: [u8; 4] = salt
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| WireError::Protocol("short MD5 request".into()))?;
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
        let at = begin_message(&mut self.ch.out, b'p');
        put_cstr(&mut self.ch.out, mechanism)?;
        let data = s.message();
        put_i32(&mut self.ch.out, len_i32(data.len())?);
        self.ch.out.extend_from_slice(data);
        end_message(&mut self.ch.out, at)?;
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
        let reply = s.message().to_vec();
        self.ch.out.clear();
        let at = begin_message(&mut self.ch.out, b'p');
        self.ch.out.extend_from_slice(&reply);
        end_message(&mut self.ch.out, at)?;
        self.ch.send()?;
        Ok(false)
    }

    fn password_message(&mut self, password: &[u8]) -> WireResult<()> {
        self.ch.out.clear();
        let at = begin_message(&mut self.ch.out, b'p');
        self.ch.out.extend_from_slice(password);
        self.ch.out.push(0);
        end_message(&mut self.ch.out, at)?;
        Ok(self.ch.send()?)
    }

    /// Before a command: nothing may wait in the buffer but the messages a server sends on
    /// its own (notices, parameter changes, notifications). Anything else, an extra
    /// `ReadyForQuery` say, means the server and ibench no longer agree where a reply ends.
    fn start_command(&mut self) -> WireResult<()> {
        self.ch.usable()?;
        while self.ch.received.pending().len() >= 5 {
            let tag = self.ch.received.pending()[0];
            if tag == b'E' {
                // An error sent while idle (a FATAL before the server closed: an idle-session
                // timeout, a terminated backend) is the reason the connection is gone.
                let f = self.next_frame()?;
                self.ch.broken = true;
                return Err(self.server_error(f));
            }
            if !matches!(tag, b'N' | b'S' | b'A') {
                return Err(self.protocol(format!(
                    "the server sent a {:?} message nobody asked for",
                    tag as char
                )));
            }
            self.next_frame()?;
        }
        if !self.ch.received.pending().is_empty() {
            return Err(self.protocol("the server sent bytes nobody asked for".to_string()));
        }
        self.notices.clear();
        Ok(())
    }

    /// The warnings the server sent with the last simple query (e.g. VACUUM's "skipping").
    pub fn warnings(&self) -> &[String] {
        &self.notices
    }

    /// Run `sql` (one or more statements) with the simple protocol, the text query that
    /// `MyWire::query` is for MySQL: the column names of the first result, and the rows of
    /// every result as text (NULL is `None`).
    pub fn query(&mut self, sql: &str) -> WireResult<TextResult> {
        self.start_command()?;
        self.ch.out.clear();
        let at = begin_message(&mut self.ch.out, b'Q');
        put_cstr(&mut self.ch.out, sql)?;
        end_message(&mut self.ch.out, at)?;
        self.ch.send()?;
        let mut result = TextResult::default();
        let mut described = false;
        let mut error = None;
        loop {
            let f = self.reply_frame(&mut error)?;
            match f.tag {
                b'D' => {
                    let body = self.ch.received.get(f.at, f.len);
                    if let Err(why) = result.keep_row(f.len, || Some(text_row(body))) {
                        return Err(self.protocol(why));
                    }
                }
                b'T' if !described => {
                    described = true;
                    result.columns = column_names(self.body(f));
                }
                b'E' => error = Some(self.server_error(f)),
                b'Z' => break,
                b'N' => {
                    let notice = parse_error_fields(self.body(f));
                    if notice.severity.as_deref() == Some("WARNING")
                        && self.notices.len() < MAX_NOTICES
                    {
                        self.notices.push(format!("WARNING: {}", notice.message));
                    }
                }
                b'T' | b'C' | b'I' | b'S' | b'A' => {}
                t => return Err(self.protocol(format!("unexpected message {:?}", t as char))),
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(result),
        }
    }

    /// The first column of the first row of `sql`, as text.
    pub fn query_value(&mut self, sql: &str) -> WireResult<Option<String>> {
        Ok(self
            .query(sql)?
            .rows
            .into_iter()
            .next()
            .and_then(|row| row.into_iter().next().flatten()))
    }

    fn protocol(&mut self, what: String) -> WireError {
        self.ch.broken = true;
        WireError::Protocol(what)
    }

    fn body(&self, f: Frame) -> &[u8] {
        self.ch.received.get(f.at, f.len)
    }

    fn server_error(&self, f: Frame) -> WireError {
        WireError::Server(Box::new(parse_error_fields(self.body(f))))
    }

    /// The next whole message; its body stays in the buffer until the next call.
    fn next_frame(&mut self) -> WireResult<Frame> {
        let r = self.read_frame();
        if matches!(r, Err(WireError::Io(_) | WireError::Protocol(_))) {
            self.ch.broken = true;
        }
        r
    }

    /// The next message of a reply in which the server may already have sent an error:
    /// when the connection then ends, that error is the one to show (a FATAL such as
    /// "terminating connection due to administrator command" or an idle-session timeout,
    /// sent before the server closed), not "the server closed the connection".
    fn reply_frame(&mut self, error: &mut Option<WireError>) -> WireResult<Frame> {
        match self.next_frame() {
            Err(WireError::Io(e)) => match error.take() {
                Some(fatal @ WireError::Server(_))
                    if fatal.server().is_some_and(|s| {
                        matches!(s.severity.as_deref(), Some("FATAL" | "PANIC"))
                    }) =>
                {
                    Err(fatal)
                }
                _ => Err(WireError::Io(e)),
            },
            other => other,
        }
    }

    fn read_frame(&mut self) -> WireResult<Frame> {
        self.ch.fill(5)?;
        let head = self.ch.received.pending();
        let tag = head[0];
        let len_field = be_i32(&head[1..5]);
        let len = usize::try_from(len_field)
            .ok()
            .filter(|l| *l >= 4)
            .ok_or_else(|| WireError::Protocol(format!("bad message length {len_field}")))?
            - 4;
        let limit = if self.in_login {
            MAX_LOGIN_MESSAGE_BYTES
        } else if matches!(tag, b'D' | b'T' | b'E' | b'N' | b'A' | b'd') {
            MAX_LONG_MESSAGE_BYTES
        } else {
            MAX_SHORT_MESSAGE_BYTES
        };
        if len > limit {
            return Err(WireError::Protocol(format!(
                "a {:?} message of {len} bytes, more than the {limit} ibench accepts",
                tag as char
            )));
        }
        self.ch.fill(5 + len)?;
        let at = self.ch.received.take(5 + len) + 5;
        Ok(Frame { tag, at, len })
    }
}

impl Wire for PgWire {
    type Config = PgConfig;
    type Prepared = Prepared;

    fn connect(config: &PgConfig) -> WireResult<PgWire> {
        PgWire::connect(config)
    }

    /// Prepare `sql` as a named statement and learn its parameter types.
    fn prepare(&mut self, sql: &str) -> WireResult<Prepared> {
        self.start_command()?;
        let name = format!("ib{}", self.next_statement);
        self.next_statement += 1;
        self.ch.out.clear();
        let at = begin_message(&mut self.ch.out, b'P');
        put_cstr(&mut self.ch.out, &name)?;
        put_cstr(&mut self.ch.out, sql)?;
        put_i16(&mut self.ch.out, 0);
        end_message(&mut self.ch.out, at)?;
        let at = begin_message(&mut self.ch.out, b'D');
        self.ch.out.push(b'S');
        put_cstr(&mut self.ch.out, &name)?;
        end_message(&mut self.ch.out, at)?;
        sync(&mut self.ch.out);
        self.ch.send()?;
        let mut param_types = Vec::new();
        let mut error = None;
        loop {
            let f = self.reply_frame(&mut error)?;
            match f.tag {
                b't' => {
                    let body = self.body(f);
                    if body.len() >= 2 {
                        param_types = body[2..].chunks_exact(4).map(be_u32).collect();
                    }
                }
                b'E' => error = Some(self.server_error(f)),
                b'Z' => break,
                b'1' | b'T' | b'n' | b'S' | b'N' | b'A' => {}
                t => return Err(self.protocol(format!("unexpected message {:?}", t as char))),
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(Prepared { name, param_types }),
        }
    }

    /// Run a prepared statement with `params` (one per `$n`, in order) and wait for its end.
    fn execute<'a>(
        &mut self,
        statement: &Prepared,
        params: impl IntoIterator<Item = Value<'a>>,
    ) -> WireResult<Executed> {
        self.start_command()?;
        self.ch.out.clear();
        let at = begin_message(&mut self.ch.out, b'B');
        self.ch.out.push(0); // unnamed portal
        put_cstr(&mut self.ch.out, &statement.name)?;
        put_i16(&mut self.ch.out, 1);
        put_i16(&mut self.ch.out, 1); // every parameter in binary
        let n = statement.param_types.len();
        put_i16(&mut self.ch.out, len_i16(n)?);
        let mut given = 0;
        for value in params {
            let Some(&ty) = statement.param_types.get(given) else {
                given += 1;
                continue;
            };
            given += 1;
            encode(&mut self.ch.out, value, ty, given)?;
        }
        if given != n {
            return Err(WireError::Param(format!(
                "the statement takes {n} parameters, {given} were given"
            )));
        }
        put_i16(&mut self.ch.out, 1);
        put_i16(&mut self.ch.out, 1); // every result column in binary
        end_message(&mut self.ch.out, at)?;
        // Execute the unnamed portal, all rows.
        self.ch
            .out
            .extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]);
        sync(&mut self.ch.out);
        self.ch.send()?;
        let mut done = Executed::default();
        let mut error = None;
        loop {
            let f = self.reply_frame(&mut error)?;
            match f.tag {
                b'D' => {
                    if done.rows_returned == 0 {
                        done.first_int = first_int(self.body(f));
                    }
                    done.rows_returned += 1;
                }
                b'C' => done.rows_affected = tag_count(self.body(f)),
                b'E' => error = Some(self.server_error(f)),
                b'Z' => break,
                b'2' | b'I' | b'n' | b'S' | b'N' | b'A' | b's' => {}
                t => return Err(self.protocol(format!("unexpected message {:?}", t as char))),
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }

    fn query(&mut self, sql: &str) -> WireResult<TextResult> {
        PgWire::query(self, sql)
    }

    /// A no-op: the server keeps a named statement until the connection ends, and ibench
    /// never reuses a name on one connection.
    fn close(&mut self, _statement: &Prepared) -> WireResult<()> {
        Ok(())
    }

    fn tls_info(&self) -> Option<TlsInfo> {
        PgWire::tls_info(self)
    }
}

impl Drop for PgWire {
    fn drop(&mut self) {
        // Terminate: the server ends the backend at once instead of at the socket's EOF.
        self.ch.say_goodbye(&[b'X', 0, 0, 0, 4]);
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

/// The addresses of one host: a TCP host resolved, a socket directory as its `.s.PGSQL.PORT`
/// file.
fn addresses(host: &Host, port: u16) -> io::Result<Vec<Address>> {
    match host {
        Host::Tcp(name) => {
            let resolved: Vec<Address> = (name.as_str(), port)
                .to_socket_addrs()?
                .map(Address::Tcp)
                .collect();
            if resolved.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{name} does not resolve"),
                ));
            }
            Ok(resolved)
        }
        Host::Unix(dir) => Ok(vec![Address::Unix(socket_file(dir, port))]),
    }
}

/// What one connection asks of TLS: the rustls configuration, the host name the certificate
/// is checked against, the `sslmode`, and whether the configuration checks the certificate.
struct TlsRequest<'a> {
    config: &'a std::sync::Arc<rustls::ClientConfig>,
    host: &'a str,
    mode: SslMode,
    verified: bool,
}

/// Ask for TLS (`SSLRequest`) and shake hands when the server agrees; the plain stream when
/// it declines and the mode allows that.
fn negotiate_tls(
    mut tcp: std::net::TcpStream,
    tls: &TlsRequest<'_>,
    deadline: Option<Instant>,
) -> WireResult<Stream> {
    let mode = tls.mode;
    let mut request = Vec::with_capacity(8);
    request.extend_from_slice(&8i32.to_be_bytes());
    request.extend_from_slice(&SSL_REQUEST_CODE.to_be_bytes());
    tcp.write_all(&request)?;
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(Instant::now());
        tcp.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
    }
    // One byte, read straight from the socket: nothing the server sends before the handshake
    // may be taken as if it came over TLS.
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer).map_err(|e| match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => WireError::Io(io::Error::new(
            io::ErrorKind::TimedOut,
            "the server did not answer the TLS request in time (connect timeout)",
        )),
        _ => WireError::Io(e),
    })?;
    match answer[0] {
        b'S' => {
            let stream = tls::connect(std::sync::Arc::clone(tls.config), tls.host, tcp, deadline)
                .map_err(|e| WireError::Tls(e.to_string()))?;
            Ok(Stream::Tls {
                tls: Box::new(stream),
                verified: tls.verified,
            })
        }
        b'N' if mode.requires_tls() => Err(WireError::Tls(format!(
            "the server does not accept TLS, and sslmode={} needs it",
            ssl_mode_name(mode)
        ))),
        b'N' => Ok(Stream::Tcp(tcp)),
        // An error instead of an answer (a server out of slots or unable to start a backend,
        // or one too old to know the request): said as such, its text not shown, as libpq
        // does since 17.2: nothing has checked who sent it.
        b'E' => Err(WireError::Protocol(
            "the server answered the TLS request with an error message (out of connection \
             slots, unable to start a backend, or too old to know the request; its text is \
             not shown, as nothing has checked who sent it): see the server's log"
                .to_string(),
        )),
        other => Err(WireError::Protocol(format!(
            "the server answered the TLS request with {other:#04x}, not 'S' or 'N'"
        ))),
    }
}

/// A host as the user wrote it.
fn host_name(host: &Host) -> String {
    match host {
        Host::Tcp(name) => name.clone(),
        Host::Unix(dir) => dir.display().to_string(),
    }
}

/// libpq's name of a mode.
fn ssl_mode_name(mode: SslMode) -> &'static str {
    match mode {
        SslMode::Disable => "disable",
        SslMode::Allow => "allow",
        SslMode::Prefer => "prefer",
        SslMode::Require => "require",
        SslMode::VerifyCa => "verify-ca",
        SslMode::VerifyFull => "verify-full",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_accepts_but_never_answers_is_an_error_not_a_hang() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let holder = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
        let mut config =
            PgConfig::from_url(&format!("postgres://u@127.0.0.1:{port}/d?sslmode=disable"))
                .unwrap();
        config.connect_timeout = Some(Duration::from_millis(300));
        let started = std::time::Instant::now();
        let e = PgWire::connect(&config).err().unwrap();
        assert!(matches!(e, WireError::Io(_)), "{e}");
        assert!(started.elapsed() < Duration::from_secs(20));
        drop(holder.join());
    }
}
