//! A blocking MySQL/MariaDB protocol connection: what the benchmark's own connections use.
//!
//! As `postgres::wire` does for PostgreSQL, it does what the C client library does for one
//! statement at a time and no more: one socket the thread blocks on, a prepared statement's
//! `COM_STMT_EXECUTE` encoded into one reused buffer and sent with one `write`, and the
//! result read in place: rows are counted, not decoded into values (a `Row` of owned values
//! per row was most of the client CPU on range queries with the `mysql` crate ibench once
//! used). The parameters are sent with the types that crate sent (`LONGLONG`, `VAR_STRING`,
//! `DATETIME`), so the server does the same work for them as in runs recorded before.
//!
//! The packets' bytes (encoding into the send buffer, decoding a payload read in place) are
//! [`super::codec`]'s; this file does the I/O, the login and the reply loops.
//!
//! TLS as the client's `ssl-mode` says ([`super::config`], [`crate::backend::tls`]).
//! Logins: `mysql_native_password`, `caching_sha2_password` (its fast path; the full
//! exchange in clear over a Unix socket or TLS whose certificate was checked, over unchecked
//! TLS only with `get-server-public-key=true`, and RSA-encrypted over plain TCP with a key the
//! user gave or, opted in, fetched) and `mysql_clear_password` (opted in, over TLS or a Unix
//! socket only). One auth switch per login. Sequence ids are checked, the login has one
//! deadline, a login packet, a multi-packet reply and a text query's rows are capped, every
//! length is added with checked arithmetic, server text is escaped and cut where it is read,
//! and an early 0xFE is an error, never a hang.

use std::io;
use std::net::ToSocketAddrs;
use std::time::{Duration, Instant};

use super::config::MyConfig;
use super::hosts;
use super::hosts::Endpoint;
use crate::backend::protocol::{self, Address, Channel};
use crate::results::target::TlsInfo;

use super::codec::*;
pub use crate::backend::wire::{Executed, ServerError, TextResult, Value, WireError};
use crate::backend::wire::{Wire, WireResult};

/// The longest payload of one packet; a longer one continues in the next.
const MAX_PAYLOAD: usize = 0x00FF_FFFF;

/// The longest reply one logical packet may put together from 16 MiB packets.
const MAX_REPLY_BYTES: usize = 64 << 20;

/// The longest packet during the login (greeting, auth switch, RSA key, errors).
const MAX_LOGIN_PACKET_BYTES: usize = 65_536;

/// The most columns a result set may have (MySQL's own limit is 4096 per table).
const MAX_COLUMNS: u64 = 65_536;

/// The most results (OK packets and result sets) one reply may chain with
/// `SERVER_MORE_RESULTS_EXISTS`: ibench's multi-statement queries have a few.
const MAX_REPLY_RESULTS: usize = 10_000;

/// A statement prepared on one connection.
#[derive(Debug, Clone)]
pub struct Prepared {
    id: u32,
    params: u16,
}

/// What a reply's result sets are handed to, column definitions and rows as they come.
trait ResultSink {
    /// Column definition `i` of result set `set` (0 is the first).
    fn column(&mut self, set: usize, i: u64, def: &[u8]);
    /// A row of result set `set`, which has `columns` columns.
    fn row(&mut self, set: usize, columns: usize, body: &[u8]);
    /// Why the reply must not be read on (a malformed row, a reply past the caps), once.
    fn refused(&mut self) -> Option<String> {
        None
    }
}

/// A text query's result as its rows come, and why it cannot be kept, once.
#[derive(Default)]
struct TextSink {
    result: TextResult,
    refused: Option<String>,
}

impl ResultSink for TextSink {
    fn column(&mut self, set: usize, _i: u64, def: &[u8]) {
        let names = || {
            if set == 0 {
                vec![column_name(def)]
            } else {
                Vec::new()
            }
        };
        if let Err(why) = self.result.keep_columns(def.len(), names) {
            self.refused.get_or_insert(why);
        }
    }

    fn row(&mut self, _set: usize, _columns: usize, body: &[u8]) {
        if let Err(why) = self.result.keep_row(body.len(), || text_row(body)) {
            self.refused = Some(why);
        }
    }

    fn refused(&mut self) -> Option<String> {
        self.refused.take()
    }
}

/// Binary rows counted, not decoded; the first column of the first row kept as an integer.
#[derive(Default)]
struct Counted {
    rows: u64,
    first_type: Option<u8>,
    first_int: Option<i64>,
}

impl ResultSink for Counted {
    fn column(&mut self, set: usize, i: u64, def: &[u8]) {
        if set == 0 && i == 0 {
            self.first_type = column_type(def);
        }
    }

    fn row(&mut self, set: usize, columns: usize, body: &[u8]) {
        if set == 0 && self.rows == 0 {
            self.first_int = first_binary_int(body, columns, self.first_type);
        }
        self.rows += 1;
    }
}

/// One logical packet: where its payload lies (in the receive buffer, or in the assembly
/// buffer for one longer than a physical packet).
#[derive(Clone, Copy)]
pub(super) struct Packet {
    at: usize,
    len: usize,
    assembled: bool,
}

/// One blocking protocol connection.
pub struct MyWire {
    pub(super) ch: Channel,
    /// A packet longer than [`MAX_PAYLOAD`], put together.
    pub(super) assembled: Vec<u8>,
    /// The sequence id of the next packet ibench sends in the current exchange.
    pub(super) seq: u8,
    pub(super) caps: u32,
    pub(super) connection_id: u32,
    /// Still logging in: packets are held to the login's length limit.
    pub(super) in_login: bool,
    /// Each statement's deadline, from its send (`None`: unbounded).
    pub(super) statement_timeout: Option<Duration>,
    /// The server it reached (of a URL's several, the one kept).
    pub(super) endpoint: Endpoint,
}

/// A login the server refused (access denied), or one the client cannot make (TLS, the
/// login method): the next server of a multi-host URL would refuse it too, as libpq stops
/// after a failed authentication.
fn refused_login(e: &WireError) -> bool {
    match e {
        WireError::Auth(_) | WireError::Tls(_) => true,
        WireError::Server(s) => matches!(s.number, Some(1044 | 1045 | 1698)),
        _ => false,
    }
}

/// The error of a server that does not fit the URL's `target_session_attrs`: its
/// connection is ended and the next server tried. An I/O error of kind `NotConnected`: a
/// reconnecting client tries again, as for a server that is down.
fn not_fitting(config: &MyConfig, endpoint: &Endpoint, read_only: bool) -> WireError {
    WireError::Io(io::Error::new(
        io::ErrorKind::NotConnected,
        format!(
            "{} is {} (@@global.read_only = {}), and the URL asks for target_session_attrs={}",
            hosts::describe(endpoint),
            if read_only { "read-only" } else { "read-write" },
            u8::from(read_only),
            config.target_session.name()
        ),
    ))
}

impl MyWire {
    /// Connect where `config` says (its socket, else TCP to its host and port), with TLS as
    /// its `ssl-mode` says, and log in. Each server's exchange is bounded by the connect
    /// timeout. A URL naming several servers: they are tried in order, and the first that
    /// accepts and fits its `target_session_attrs` is kept ([`super::hosts`]); a server that
    /// refuses the login ends the attempt (the next would refuse it too), any other failure
    /// passes to the next server.
    pub fn connect(config: &MyConfig) -> WireResult<MyWire> {
        let mut last: Option<WireError> = None;
        for endpoint in &config.endpoints {
            let mut conn = match Self::connect_endpoint(config, endpoint) {
                Ok(conn) => conn,
                Err(e) if refused_login(&e) => return Err(e),
                Err(e) => {
                    last = Some(e);
                    continue;
                }
            };
            if !config.target_session.asks() {
                return Ok(conn);
            }
            match conn.read_only() {
                Ok(read_only) if config.target_session.accepts(read_only) => return Ok(conn),
                Ok(read_only) => last = Some(not_fitting(config, endpoint, read_only)),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            WireError::Io(io::Error::new(
                io::ErrorKind::NotFound,
                "no host to connect to",
            ))
        }))
    }

    /// Whether the server of this connection refuses ordinary users' writes
    /// ([`hosts::READ_ONLY_SQL`]).
    pub fn read_only(&mut self) -> WireResult<bool> {
        let result = self.query(hosts::READ_ONLY_SQL)?;
        hosts::read_only_of(result.first()).ok_or_else(|| {
            self.protocol("the server's @@global.read_only is not 0 or 1".to_string())
        })
    }

    /// Connect to one server and log in.
    fn connect_endpoint(config: &MyConfig, endpoint: &Endpoint) -> WireResult<MyWire> {
        let timeout = config.connect_timeout;
        let deadline = timeout.map(|t| Instant::now() + t);
        let (addresses, host) = match endpoint {
            Endpoint::Socket(path) => (vec![Address::Unix(path.clone())], None),
            Endpoint::Tcp { host, port } => {
                let resolved: Vec<Address> = (host.as_str(), *port)
                    .to_socket_addrs()?
                    .map(Address::Tcp)
                    .collect();
                (resolved, Some(host.as_str()))
            }
        };
        // The first address that accepts (`localhost` may resolve to ::1 and 127.0.0.1).
        let mut last = io::Error::new(io::ErrorKind::NotFound, "the host does not resolve");
        let mut stream = None;
        for address in &addresses {
            match address.connect(timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = e,
            }
        }
        let stream = stream.ok_or(last)?;
        stream.set_write_timeout(timeout)?;
        let mut conn = MyWire {
            ch: Channel::new(stream),
            assembled: Vec::new(),
            seq: 0,
            caps: 0,
            connection_id: 0,
            in_login: true,
            statement_timeout: None,
            endpoint: endpoint.clone(),
        };
        conn.ch.deadline = deadline;
        conn.handshake(config, host, deadline)?;
        conn.ch.bound(None)?;
        conn.ch.stream.set_write_timeout(None)?;
        conn.in_login = false;
        if let Endpoint::Tcp { host, port } = endpoint
            && config.tls.is_some()
            && !config.ssl_mode.requires_tls()
        {
            let mode = format!("ssl-mode={}", config.ssl_mode.name());
            config
                .tls_ledger
                .check_on(
                    conn.tls_info(),
                    &format!("{host}:{port}"),
                    &mode,
                    conn.ch.stream.is_loopback(),
                )
                .map_err(WireError::Tls)?;
        }
        Ok(conn)
    }

    /// The server this connection reached (of a URL's several, the one it kept).
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The server's id of this connection (what `KILL QUERY` takes).
    pub fn connection_id(&self) -> u32 {
        self.connection_id
    }

    /// What TLS negotiated on this connection (`None`: plain, or a Unix socket).
    pub fn tls_info(&self) -> Option<TlsInfo> {
        self.ch.stream.tls_info()
    }

    /// Bound every later statement, from its send to the end of its reply (`None`:
    /// unbounded, the default; a `KILL QUERY` connection is bounded).
    ///
    /// One deadline per statement, as for the login, not a timeout per read: with a socket
    /// read timeout alone, a server that answered a byte every few seconds kept a "bounded"
    /// `KILL QUERY` (and so Ctrl-C) waiting as long as it liked (found by
    /// `tests/hostile_server.rs`).
    pub fn set_statement_timeout(&mut self, timeout: Option<Duration>) -> WireResult<()> {
        self.statement_timeout = timeout.filter(|t| !t.is_zero());
        self.ch.overdue = protocol::STATEMENT_OVERDUE;
        if self.statement_timeout.is_none() {
            self.ch.bound(None)?;
        }
        Ok(self.ch.stream.set_write_timeout(timeout)?)
    }

    /// Start a command's exchange: the connection must be sound and hold no unread bytes
    /// (a packet nobody asked for, an extra OK say, means the server and ibench no longer
    /// agree where a reply ends: read as the next command's reply, it would shift every
    /// later reply by one without an error); the deadline, when statements are bounded.
    fn start_command(&mut self) -> WireResult<()> {
        self.ch.usable()?;
        if self.assembled.capacity() > MAX_PAYLOAD {
            // What a reply longer than one packet left behind: freed.
            self.assembled = Vec::new();
        }
        if !self.ch.received.pending().is_empty() {
            return Err(self.protocol(format!(
                "the server sent {} bytes nobody asked for",
                self.ch.received.pending().len()
            )));
        }
        if let Some(t) = self.statement_timeout {
            self.ch.deadline = Some(Instant::now() + t);
        }
        Ok(())
    }

    /// Run `sql` (text protocol), the text query that `PgWire::query` is for PostgreSQL; its
    /// rows as text.
    pub fn query(&mut self, sql: &str) -> WireResult<TextResult> {
        self.command(com::QUERY, sql.as_bytes())?;
        let mut sink = TextSink::default();
        self.read_reply(&mut sink)?;
        Ok(sink.result)
    }

    /// Read a command's reply: OK packets and result sets (each handed to `sink`), repeated
    /// while the server says more results follow; the affected rows of the last OK.
    fn read_reply(&mut self, sink: &mut impl ResultSink) -> WireResult<u64> {
        let mut affected = 0;
        let mut set = 0;
        for _ in 0..MAX_REPLY_RESULTS {
            let p = self.next_packet()?;
            let body = self.body(p);
            match body.first() {
                Some(&header::OK) => {
                    let ok = ok_packet(body);
                    affected = ok.affected;
                    if ok.status & MORE_RESULTS == 0 {
                        return Ok(affected);
                    }
                }
                Some(&header::ERR) => return Err(self.server_error_of(body)),
                Some(&header::LOCAL_INFILE) => {
                    return Err(self.protocol("LOCAL INFILE is not supported".into()));
                }
                _ => {
                    let columns = lenenc_int(body, &mut 0).unwrap_or(0);
                    self.read_columns(columns, |i, def| {
                        sink.column(set, i, def);
                        sink.refused()
                            .map_or(Ok(()), |why| Err(WireError::Protocol(why)))
                    })
                    .inspect_err(|_| self.ch.broken = true)?;
                    let ncols = usize::try_from(columns).unwrap_or(0);
                    let more = self.read_rows(|row| {
                        sink.row(set, ncols, row);
                        sink.refused()
                    })?;
                    set += 1;
                    if !more {
                        return Ok(affected);
                    }
                }
            }
        }
        Err(self.protocol(format!(
            "a reply of more than {MAX_REPLY_RESULTS} results (OK packets or result sets that \
             each say more follow), more than ibench reads"
        )))
    }

    /// The `count` column definitions of a result set, each handed to `each` with its
    /// position, and the EOF after them where the server sends one.
    fn read_columns(
        &mut self,
        count: u64,
        mut each: impl FnMut(u64, &[u8]) -> WireResult<()>,
    ) -> WireResult<()> {
        if count > MAX_COLUMNS {
            return Err(self.protocol(format!(
                "a result of {count} columns, more than the {MAX_COLUMNS} ibench accepts"
            )));
        }
        for i in 0..count {
            let p = self.next_packet()?;
            each(i, self.body(p))?;
        }
        if self.caps & cap::DEPRECATE_EOF == 0 {
            self.next_packet()?;
        }
        Ok(())
    }

    /// Read a statement's result: binary rows counted, the first one's first column kept.
    fn read_result(&mut self) -> WireResult<Executed> {
        let mut counted = Counted::default();
        let affected = self.read_reply(&mut counted)?;
        Ok(Executed {
            rows_returned: counted.rows,
            rows_affected: affected,
            first_int: counted.first_int,
        })
    }

    /// Read row packets until the end of the result set, handing each to `row`; whether
    /// more results follow.
    fn read_rows(&mut self, mut row: impl FnMut(&[u8]) -> Option<String>) -> WireResult<bool> {
        loop {
            let p = self.next_packet()?;
            let body = self.body(p);
            match body.first() {
                Some(&header::EOF) if p.len < 9 && !p.assembled => {
                    // EOF (5 bytes) or, with DEPRECATE_EOF, an OK packet with a 0xFE header
                    // (at least 7 bytes); a row starting 0xFE is at least 9 bytes long.
                    let expected = if self.caps & cap::DEPRECATE_EOF != 0 {
                        7
                    } else {
                        5
                    };
                    if p.len < expected {
                        return Err(self.protocol(format!(
                            "a {}-byte packet starting 0xFE where a row or the end of rows \
                             was due",
                            p.len
                        )));
                    }
                    let status = if self.caps & cap::DEPRECATE_EOF != 0 {
                        ok_packet(body).status
                    } else {
                        body.get(3..5)
                            .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
                    };
                    return Ok(status & MORE_RESULTS != 0);
                }
                Some(&header::ERR) => return Err(self.server_error_of(body)),
                _ => {
                    if let Some(why) = row(body) {
                        return Err(self.protocol(why));
                    }
                }
            }
        }
    }

    fn command(&mut self, code: u8, payload: &[u8]) -> WireResult<()> {
        self.start_command()?;
        self.seq = 0;
        self.ch.out.clear();
        let at = self.begin_packet();
        self.ch.out.push(code);
        self.ch.out.extend_from_slice(payload);
        self.end_packet(at)?;
        Ok(self.ch.send()?)
    }

    /// Send `payload` as one packet of the current exchange.
    pub(super) fn send_raw(&mut self, payload: &[u8]) -> WireResult<()> {
        self.ch.out.clear();
        let at = self.begin_packet();
        self.ch.out.extend_from_slice(payload);
        self.end_packet(at)?;
        Ok(self.ch.send()?)
    }

    pub(super) fn begin_packet(&mut self) -> usize {
        let at = self.ch.out.len();
        self.ch.out.extend_from_slice(&[0, 0, 0, self.seq]);
        self.seq = self.seq.wrapping_add(1);
        at
    }

    pub(super) fn end_packet(&mut self, at: usize) -> WireResult<()> {
        let len = self.ch.out.len() - at - 4;
        if len >= MAX_PAYLOAD {
            return Err(WireError::Param(format!(
                "a statement of {len} bytes: ibench sends at most {MAX_PAYLOAD} bytes per \
                 packet; use fewer rows per insert"
            )));
        }
        let b = u32::try_from(len).unwrap_or(0).to_le_bytes();
        self.ch.out[at..at + 3].copy_from_slice(&b[..3]);
        Ok(())
    }

    pub(super) fn protocol(&mut self, what: String) -> WireError {
        self.ch.broken = true;
        WireError::Protocol(what)
    }

    pub(super) fn server_error_of(&self, body: &[u8]) -> WireError {
        WireError::Server(Box::new(parse_error(body)))
    }

    pub(super) fn body(&self, p: Packet) -> &[u8] {
        if p.assembled {
            &self.assembled
        } else {
            self.ch.received.get(p.at, p.len)
        }
    }

    pub(super) fn next_packet(&mut self) -> WireResult<Packet> {
        let r = self.read_packet();
        if r.is_err() {
            self.ch.broken = true;
        }
        r
    }

    pub(super) fn read_packet(&mut self) -> WireResult<Packet> {
        let (at, len) = self.physical()?;
        if len < MAX_PAYLOAD {
            return Ok(Packet {
                at,
                len,
                assembled: false,
            });
        }
        self.assembled.clear();
        self.assembled
            .extend_from_slice(self.ch.received.get(at, len));
        loop {
            let (at, len) = self.physical()?;
            if self.assembled.len() + len > MAX_REPLY_BYTES {
                return Err(WireError::Protocol(format!(
                    "a reply of more than {MAX_REPLY_BYTES} bytes in one packet, more than \
                     ibench accepts"
                )));
            }
            self.assembled
                .extend_from_slice(self.ch.received.get(at, len));
            if len < MAX_PAYLOAD {
                return Ok(Packet {
                    at: 0,
                    len: self.assembled.len(),
                    assembled: true,
                });
            }
        }
    }

    /// One physical packet: where its payload is in the receive buffer, and its length. Its
    /// sequence id must be the next one of the exchange.
    fn physical(&mut self) -> WireResult<(usize, usize)> {
        self.ch.fill(4)?;
        let h = self.ch.received.pending();
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        let seq = h[3];
        if seq != self.seq {
            return Err(WireError::Protocol(format!(
                "a packet with sequence id {seq} where {} was due",
                self.seq
            )));
        }
        if self.in_login && len > MAX_LOGIN_PACKET_BYTES {
            return Err(WireError::Protocol(format!(
                "a login packet of {len} bytes, more than the {MAX_LOGIN_PACKET_BYTES} ibench \
                 accepts"
            )));
        }
        self.seq = seq.wrapping_add(1);
        self.ch.fill(4 + len)?;
        Ok((self.ch.received.take(4 + len) + 4, len))
    }
}

impl Wire for MyWire {
    type Config = MyConfig;
    type Prepared = Prepared;

    fn connect(config: &MyConfig) -> WireResult<MyWire> {
        MyWire::connect(config)
    }

    /// Prepare `sql`.
    fn prepare(&mut self, sql: &str) -> WireResult<Prepared> {
        self.command(com::STMT_PREPARE, sql.as_bytes())?;
        let p = self.next_packet()?;
        let body = self.body(p);
        if body.first() == Some(&header::ERR) {
            let e = self.server_error_of(body);
            return Err(e);
        }
        if body.len() < 9 || body[0] != header::OK {
            return Err(self.protocol("an unexpected reply to COM_STMT_PREPARE".into()));
        }
        let id = u32::from_le_bytes([body[1], body[2], body[3], body[4]]);
        let columns = u16::from_le_bytes([body[5], body[6]]);
        let params = u16::from_le_bytes([body[7], body[8]]);
        for count in [params, columns] {
            if count > 0 {
                for _ in 0..count {
                    self.next_packet()?;
                }
                if self.caps & cap::DEPRECATE_EOF == 0 {
                    self.next_packet()?;
                }
            }
        }
        Ok(Prepared { id, params })
    }

    /// Forget a prepared statement on the server (no reply comes).
    fn close(&mut self, statement: &Prepared) -> WireResult<()> {
        self.command(com::STMT_CLOSE, &statement.id.to_le_bytes())
    }

    /// Run a prepared statement with `params` (one per `?`, in order) and read its result.
    fn execute<'a>(
        &mut self,
        statement: &Prepared,
        params: impl IntoIterator<Item = Value<'a>>,
    ) -> WireResult<Executed> {
        self.start_command()?;
        self.seq = 0;
        self.ch.out.clear();
        let at = self.begin_packet();
        self.ch.out.push(com::STMT_EXECUTE);
        self.ch.out.extend_from_slice(&statement.id.to_le_bytes());
        self.ch.out.push(0); // no cursor
        self.ch.out.extend_from_slice(&1u32.to_le_bytes());
        let n = usize::from(statement.params);
        if n > 0 {
            // NULL bitmap (nothing is NULL), new-params-bound, then types, then values.
            let bitmap_at = self.ch.out.len();
            self.ch.out.resize(bitmap_at + n.div_ceil(8), 0);
            self.ch.out.push(1);
            let types_at = self.ch.out.len();
            self.ch.out.resize(types_at + 2 * n, 0);
            let mut given = 0;
            let mut dates = Datetimes::default();
            for value in params {
                if given < n {
                    let (t, flag) = encode(&mut self.ch.out, value, &mut dates);
                    self.ch.out[types_at + 2 * given] = t;
                    self.ch.out[types_at + 2 * given + 1] = flag;
                }
                given += 1;
            }
            if given != n {
                return Err(WireError::Param(format!(
                    "the statement takes {n} parameters, {given} were given"
                )));
            }
        }
        self.end_packet(at)?;
        self.ch.send()?;
        self.read_result()
    }

    fn query(&mut self, sql: &str) -> WireResult<TextResult> {
        MyWire::query(self, sql)
    }

    fn tls_info(&self) -> Option<TlsInfo> {
        MyWire::tls_info(self)
    }
}

impl Drop for MyWire {
    fn drop(&mut self) {
        // COM_QUIT: the server ends the session at once.
        self.ch.say_goodbye(&[1, 0, 0, 0, com::QUIT]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_longer_than_16_mib_is_put_together() {
        use std::io::Write;
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        let writer = std::thread::spawn(move || {
            let mut first = vec![0xFF, 0xFF, 0xFF, 1];
            first.extend(std::iter::repeat_n(7u8, MAX_PAYLOAD));
            b.write_all(&first).unwrap();
            b.write_all(&[3, 0, 0, 2, 8, 8, 8]).unwrap();
            b.write_all(&[1, 0, 0, 3, 9]).unwrap();
        });
        let mut ch = Channel::new(crate::backend::protocol::Stream::Unix(a));
        ch.broken = true; // no COM_QUIT into the test's socket
        let mut w = MyWire {
            ch,
            assembled: Vec::new(),
            seq: 1,
            caps: 0,
            connection_id: 0,
            in_login: false,
            statement_timeout: None,
            endpoint: Endpoint::Socket("test".into()),
        };
        let p = w.next_packet().unwrap();
        assert_eq!(w.body(p).len(), MAX_PAYLOAD + 3);
        assert_eq!(&w.body(p)[MAX_PAYLOAD - 1..], &[7, 8, 8, 8]);
        let p = w.next_packet().unwrap();
        assert_eq!(w.body(p), &[9]);
        writer.join().unwrap();
    }

    #[test]
    fn a_server_that_accepts_but_never_greets_is_an_error_not_a_hang() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let holder = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
        let mut config =
            MyConfig::from_url_in(&format!("mysql://u@127.0.0.1:{port}/d"), &|_| None, None)
                .unwrap();
        config.connect_timeout = Some(std::time::Duration::from_millis(300));
        let started = std::time::Instant::now();
        let e = MyWire::connect(&config).err().unwrap();
        assert!(matches!(e, WireError::Io(_)), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        drop(holder.join());
    }
}
