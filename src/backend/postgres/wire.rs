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
use std::sync::Arc;
use std::time::Instant;

use super::config::{Host, PgConfig, SslMode};
use super::session_attrs::{SESSION_SQL, SessionState};
use super::transport::{TlsRequest, addresses, host_name, negotiate_tls, ssl_mode_name};
use crate::backend::protocol::{self, Address, Channel, Stream};
use crate::backend::tls::Verify;
use crate::results::target::TlsInfo;

use super::codec::*;
pub use crate::backend::wire::{Executed, ServerError, TextResult, Value, WireError};
use crate::backend::wire::{Wire, WireResult};

/// A statement prepared on one connection.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The server-side name (`ibN`).
    name: String,
    /// The type of each parameter, as the server described it.
    param_types: Vec<u32>,
}

/// The most warnings one simple query keeps.
const MAX_NOTICES: usize = 100;

/// The most messages a reply may hold beside what was asked for (`ParameterStatus`,
/// `NoticeResponse`, `NotificationResponse`): a server that sends them for ever is an error,
/// not a reply that never ends.
const MAX_ASIDE_MESSAGES: usize = 10_000;

/// The most bytes of those messages in one reply.
const MAX_ASIDE_BYTES: usize = protocol::MAX_TEXT_BYTES;

/// Sends a `CancelRequest` for a connection's running statement, from any thread: over TLS
/// when the connection is TLS (the `SSLRequest` first, then the handshake with the
/// connection's own configuration; every PostgreSQL accepts a cancel inside it), in clear
/// otherwise.
#[derive(Debug, Clone)]
pub struct CancelKey {
    address: Address,
    process_id: i32,
    secret_key: i32,
    /// The TLS of the connection to cancel, which the cancel gets too.
    tls: Option<CancelTls>,
}

/// How a cancel sets up TLS: as its connection did.
#[derive(Debug, Clone)]
struct CancelTls {
    config: Arc<rustls::ClientConfig>,
    host: String,
    mode: SslMode,
    verified: bool,
}

impl CancelKey {
    /// Ask the server to cancel whatever the connection runs now.
    /// The request is bounded by [`protocol::CANCEL_TIMEOUT`]: connect, TLS, send and the
    /// wait for the server to close.
    pub fn cancel(&self) -> io::Result<()> {
        let deadline = Instant::now() + protocol::CANCEL_TIMEOUT;
        let stream = self.address.connect(Some(protocol::CANCEL_TIMEOUT))?;
        stream.set_read_timeout(Some(protocol::CANCEL_TIMEOUT))?;
        stream.set_write_timeout(Some(protocol::CANCEL_TIMEOUT))?;
        let mut stream = match (&self.tls, stream) {
            (Some(t), Stream::Tcp(tcp)) => {
                let request = TlsRequest {
                    config: &t.config,
                    host: &t.host,
                    // The connection got TLS: its cancel must too, whatever the mode.
                    mode: if t.mode.requires_tls() {
                        t.mode
                    } else {
                        SslMode::Require
                    },
                    verified: t.verified,
                };
                negotiate_tls(tcp, &request, Some(deadline)).map_err(|e| {
                    io::Error::other(format!(
                        "the cancel request could not get the TLS its connection has: {e}"
                    ))
                })?
            }
            (_, stream) => stream,
        };
        let mut msg = Vec::with_capacity(16);
        cancel_request(&mut msg, self.process_id, self.secret_key);
        stream.write_all(&msg)?;
        stream.flush()?;
        // The server closes the connection when it has read the request.
        let mut sink = [0u8; 1];
        let _ = stream.read(&mut sink);
        Ok(())
    }

    /// Whether the request goes over TLS.
    pub fn over_tls(&self) -> bool {
        self.tls.is_some()
    }
}

/// One blocking protocol connection.
pub struct PgWire {
    pub(super) ch: Channel,
    address: Address,
    process_id: i32,
    secret_key: i32,
    next_statement: u32,
    /// Still logging in: messages are held to the login's length limit.
    in_login: bool,
    /// The longest `DataRow` the reply being read may still take (see [`max_body_bytes`]).
    row_budget: usize,
    /// The warnings of the last simple query.
    notices: Vec<String>,
    /// How a cancel of this connection sets up TLS (`None`: the connection has none).
    cancel_tls: Option<CancelTls>,
}

/// One message's tag and where its body lies in the receive buffer.
#[derive(Clone, Copy)]
pub(super) struct Frame {
    pub(super) tag: u8,
    at: usize,
    pub(super) len: usize,
}

/// What a reply's reader asks of it: how long its rows may be, and whether its warnings are
/// kept.
#[derive(Clone, Copy)]
struct Reply {
    /// The longest `DataRow` it takes.
    row_bytes: usize,
    /// The most bytes of `DataRow`s in all (a text query keeps them).
    total_row_bytes: usize,
    /// Keep the `WARNING` notices (a simple query's, for [`PgWire::warnings`]).
    warnings: bool,
}

impl Reply {
    /// A prepared statement's: rows counted, not kept.
    const BINARY: Reply = Reply {
        row_bytes: MAX_BINARY_ROW_BYTES,
        total_row_bytes: usize::MAX,
        warnings: false,
    };
    /// A text query's: rows kept, up to the text caps.
    const TEXT: Reply = Reply {
        row_bytes: protocol::MAX_TEXT_BYTES,
        total_row_bytes: protocol::MAX_TEXT_BYTES,
        warnings: true,
    };
    /// The login's and a `Parse`'s: no rows (one is read as far as its header says, to be
    /// named as unexpected).
    const NO_ROWS: Reply = Reply {
        row_bytes: MAX_SHORT_MESSAGE_BYTES,
        total_row_bytes: MAX_SHORT_MESSAGE_BYTES,
        warnings: false,
    };
}

/// What a reply's reader made of a message handed to it.
enum Seen {
    /// Read.
    Read,
    /// Not a message of this reply.
    Unexpected,
}

impl PgWire {
    /// Connect to the first host of `config` that accepts and fits its
    /// `target_session_attrs`, and log in; TLS as its `sslmode` says. Each host's exchange,
    /// connect, TLS and login, is bounded by the connect timeout. The hosts are tried in
    /// order, once per pass ([`TargetSessionAttrs::passes`]); a server that answers
    /// "cannot connect now" (SQLSTATE 57P03: starting up, shutting down, in crash recovery)
    /// counts as a host that did not answer, and the next is tried.
    pub fn connect(config: &PgConfig) -> WireResult<PgWire> {
        let mut last: Option<WireError> = None;
        for pass in config.target_session_attrs.passes() {
            for (i, host) in config.hosts.iter().enumerate() {
                let mut conn = match Self::connect_host(config, i, host) {
                    Ok(conn) => conn,
                    // A server that refused the login: the next host would refuse it too
                    // (libpq tries no further host after a failed authentication).
                    Err(e @ (WireError::Server(_) | WireError::Auth(_) | WireError::Tls(_)))
                        if !cannot_connect_now(&e) =>
                    {
                        return Err(e);
                    }
                    Err(e) => {
                        last = Some(e);
                        continue;
                    }
                };
                if !pass.asks() {
                    return Ok(conn);
                }
                match conn.session_state() {
                    Ok(state) if pass.accepts(state) => return Ok(conn),
                    Ok(state) => {
                        last = Some(not_fitting(config, i, host, state));
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

    /// What the server of this connection is: in recovery, read-only ([`SESSION_SQL`]).
    pub fn session_state(&mut self) -> WireResult<SessionState> {
        let result = self.query(SESSION_SQL)?;
        let row = result.rows.first().map(Vec::as_slice).unwrap_or(&[]);
        SessionState::of_row(row).ok_or_else(|| {
            self.protocol(
                "the server's answer to what it is (in recovery, read-only) is not two booleans"
                    .to_string(),
            )
        })
    }

    /// Connect to host `i` of `config` at the first of its addresses that accepts, and log in.
    fn connect_host(config: &PgConfig, i: usize, host: &Host) -> WireResult<PgWire> {
        let port = config.port_of(i);
        let addresses = addresses(host, port)?;
        let mut last: Option<WireError> = None;
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
        Err(last.unwrap_or_else(|| {
            WireError::Io(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}:{port} has no address", host_name(host)),
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
        let mut cancel_tls = None;
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
                let stream = negotiate_tls(tcp, &tls, deadline)?;
                if stream.is_tls() {
                    cancel_tls = Some(CancelTls {
                        config: Arc::clone(tls_config),
                        host: name.to_string(),
                        mode: config.ssl_mode,
                        verified,
                    });
                }
                stream
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
            row_budget: 0,
            notices: Vec::new(),
            cancel_tls,
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
            tls: self.cancel_tls.clone(),
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
        startup(&mut self.ch.out, &params)?;
        if let Err(e) = self.ch.send() {
            // The server may have said why before it closed (too many clients, ...).
            return Err(self.error_sent_before_close().unwrap_or(WireError::Io(e)));
        }
        self.authenticate(config, i)?;
        // Then: ParameterStatus, BackendKeyData, ReadyForQuery; or an error, after which the
        // server closes the connection.
        let mut key = None;
        self.reply(Reply::NO_ROWS, |t, body| {
            if t != tag::BACKEND_KEY_DATA {
                return Ok(Seen::Unexpected);
            }
            // A short one would leave the cancel key at 0/0: Ctrl-C could not cancel.
            if body.len() < 8 {
                let n = body.len();
                return Err(format!(
                    "a BackendKeyData of {n} bytes (8 expected): without its key, ibench could \
                     not cancel a statement"
                ));
            }
            key = Some((be_i32(&body[0..4]), be_i32(&body[4..8])));
            Ok(Seen::Read)
        })?;
        if let Some((pid, secret)) = key {
            self.process_id = pid;
            self.secret_key = secret;
        }
        Ok(())
    }

    /// The `ErrorResponse` a server sent before it closed, if one is in the socket.
    fn error_sent_before_close(&mut self) -> Option<WireError> {
        let f = self.read_frame().ok()?;
        (f.tag == tag::ERROR_RESPONSE).then(|| self.server_error(f))
    }

    /// Before a command: nothing may wait in the buffer but the messages a server sends on
    /// its own (notices, parameter changes, notifications). Anything else, an extra
    /// `ReadyForQuery` say, means the server and ibench no longer agree where a reply ends.
    fn start_command(&mut self) -> WireResult<()> {
        self.ch.usable()?;
        while self.ch.received.pending().len() >= 5 {
            let tag = self.ch.received.pending()[0];
            if tag == tag::ERROR_RESPONSE {
                // An error sent while idle (a FATAL before the server closed: an idle-session
                // timeout, a terminated backend) is the reason the connection is gone.
                let f = self.next_frame()?;
                self.ch.broken = true;
                return Err(self.server_error(f));
            }
            if !is_aside(tag) {
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

    /// Read one reply up to its `ReadyForQuery`: the server's error, if it sent one (during
    /// the login, at once: the server closes after it); the messages a server sends on its
    /// own, counted and bounded ([`MAX_ASIDE_MESSAGES`], [`MAX_ASIDE_BYTES`]), their warnings
    /// kept when `reply` asks; every other message handed to `read` (its tag and body), which
    /// says whether it belongs to the reply or why the reply cannot be read on. Each message's
    /// length is checked at its header against its kind's cap, a `DataRow`'s against what
    /// `reply` still takes.
    #[inline]
    fn reply(
        &mut self,
        reply: Reply,
        mut read: impl FnMut(u8, &[u8]) -> Result<Seen, String>,
    ) -> WireResult<()> {
        let mut error = None;
        let (mut asides, mut aside_bytes, mut row_bytes) = (0usize, 0usize, 0usize);
        loop {
            self.row_budget = reply
                .row_bytes
                .min(reply.total_row_bytes.saturating_sub(row_bytes));
            let f = self.reply_frame(&mut error)?;
            match f.tag {
                tag::ERROR_RESPONSE => {
                    let e = self.server_error(f);
                    if self.in_login {
                        self.ch.broken = true;
                        return Err(e);
                    }
                    error = Some(e);
                }
                tag::READY_FOR_QUERY => break,
                t if is_aside(t) => {
                    asides += 1;
                    aside_bytes = aside_bytes.saturating_add(f.len);
                    if asides > MAX_ASIDE_MESSAGES || aside_bytes > MAX_ASIDE_BYTES {
                        return Err(self.protocol(format!(
                            "a reply with more than {MAX_ASIDE_MESSAGES} notices, parameter \
                             changes or notifications, or {} MiB of them, more than ibench \
                             reads",
                            MAX_ASIDE_BYTES >> 20
                        )));
                    }
                    if reply.warnings && t == tag::NOTICE_RESPONSE {
                        self.keep_warning(f);
                    }
                }
                t => {
                    if t == tag::DATA_ROW {
                        row_bytes = row_bytes.saturating_add(f.len);
                    }
                    match read(t, self.ch.received.get(f.at, f.len)) {
                        Ok(Seen::Read) => {}
                        Ok(Seen::Unexpected) => {
                            return Err(
                                self.protocol(format!("unexpected message {:?}", t as char))
                            );
                        }
                        Err(why) => return Err(self.protocol(why)),
                    }
                }
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Keep a notice's text when it is a warning (at most [`MAX_NOTICES`]).
    fn keep_warning(&mut self, f: Frame) {
        if self.notices.len() >= MAX_NOTICES {
            return;
        }
        let notice = parse_error_fields(self.body(f));
        if notice.severity.as_deref() == Some("WARNING") {
            self.notices.push(format!("WARNING: {}", notice.message));
        }
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
        query(&mut self.ch.out, sql)?;
        self.ch.send()?;
        let mut result = TextResult::default();
        let mut described = false;
        self.reply(Reply::TEXT, |t, body| {
            match t {
                tag::DATA_ROW => result.keep_row(body.len(), || Some(text_row(body)))?,
                tag::ROW_DESCRIPTION if !described => {
                    described = true;
                    result.keep_columns(body.len(), || column_names(body))?;
                }
                tag::ROW_DESCRIPTION | tag::COMMAND_COMPLETE | tag::EMPTY_QUERY_RESPONSE => {}
                _ => return Ok(Seen::Unexpected),
            }
            Ok(Seen::Read)
        })?;
        Ok(result)
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

    pub(super) fn protocol(&mut self, what: String) -> WireError {
        self.ch.broken = true;
        WireError::Protocol(what)
    }

    pub(super) fn body(&self, f: Frame) -> &[u8] {
        self.ch.received.get(f.at, f.len)
    }

    pub(super) fn server_error(&self, f: Frame) -> WireError {
        WireError::Server(Box::new(parse_error_fields(self.body(f))))
    }

    /// The next whole message; its body stays in the buffer until the next call.
    pub(super) fn next_frame(&mut self) -> WireResult<Frame> {
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
        } else {
            max_body_bytes(tag, self.row_budget)
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

/// Whether a message is one a server may send on its own, between or within replies.
#[inline]
fn is_aside(t: u8) -> bool {
    matches!(
        t,
        tag::NOTICE_RESPONSE | tag::PARAMETER_STATUS | tag::NOTIFICATION_RESPONSE
    )
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
        parse_and_describe(&mut self.ch.out, &name, sql)?;
        sync(&mut self.ch.out);
        self.ch.send()?;
        let mut param_types = Vec::new();
        self.reply(Reply::NO_ROWS, |t, body| {
            match t {
                tag::PARAMETER_DESCRIPTION => {
                    if body.len() >= 2 {
                        param_types = body[2..].chunks_exact(4).map(be_u32).collect();
                    }
                }
                tag::PARSE_COMPLETE | tag::ROW_DESCRIPTION | tag::NO_DATA => {}
                _ => return Ok(Seen::Unexpected),
            }
            Ok(Seen::Read)
        })?;
        Ok(Prepared { name, param_types })
    }

    /// Run a prepared statement with `params` (one per `$n`, in order) and wait for its end.
    fn execute<'a>(
        &mut self,
        statement: &Prepared,
        params: impl IntoIterator<Item = Value<'a>>,
    ) -> WireResult<Executed> {
        self.start_command()?;
        self.ch.out.clear();
        bind(
            &mut self.ch.out,
            &statement.name,
            &statement.param_types,
            params,
        )?;
        execute(&mut self.ch.out);
        sync(&mut self.ch.out);
        self.ch.send()?;
        let mut done = Executed::default();
        self.reply(Reply::BINARY, |t, body| {
            match t {
                tag::DATA_ROW => {
                    if done.rows_returned == 0 {
                        done.first_int = first_int(body);
                    }
                    done.rows_returned += 1;
                }
                tag::COMMAND_COMPLETE => done.rows_affected = tag_count(body),
                tag::BIND_COMPLETE
                | tag::EMPTY_QUERY_RESPONSE
                | tag::NO_DATA
                | tag::PORTAL_SUSPENDED => {}
                _ => return Ok(Seen::Unexpected),
            }
            Ok(Seen::Read)
        })?;
        Ok(done)
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

/// A server that said it cannot take connections now (SQLSTATE 57P03: starting up, shutting
/// down, in recovery without hot standby): for a multi-host URL, a host to pass over.
fn cannot_connect_now(e: &WireError) -> bool {
    e.server().is_some_and(|s| s.sqlstate == "57P03")
}

/// The error of a server that does not fit the URL's `target_session_attrs`: the connection
/// is ended, as libpq ends it, and the next host is tried. An I/O error of kind
/// `NotConnected`: a reconnecting client tries again, as for a server that is down.
fn not_fitting(config: &PgConfig, i: usize, host: &Host, state: SessionState) -> WireError {
    WireError::Io(io::Error::new(
        io::ErrorKind::NotConnected,
        format!(
            "{}:{} is {}, and the URL asks for target_session_attrs={}",
            host_name(host),
            config.port_of(i),
            state.describe(),
            config.target_session_attrs.name()
        ),
    ))
}

impl Drop for PgWire {
    fn drop(&mut self) {
        // Terminate: the server ends the backend at once instead of at the socket's EOF.
        self.ch.say_goodbye(&TERMINATE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
