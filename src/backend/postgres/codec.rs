//! PostgreSQL's messages as bytes, apart from the I/O: encoding a message into a buffer (the
//! startup and login messages, `Parse`, `Bind`, `Execute`, `Sync`, a parameter in binary by
//! the type the server described) and decoding a message's body read in place (a command
//! tag's count, a row's first integer, a text row, an `ErrorResponse`'s fields). Nothing here
//! reads or writes a socket: [`super::wire`] does, and calls these.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::backend::protocol;
use crate::backend::wire::{ServerError, Value, WireError, WireResult};

/// Object ids of the parameter types ibench binds (`pg_type.oid`).
pub(super) mod oid {
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const INT8: u32 = 20;
    pub const TEXT: u32 = 25;
    pub const NAME: u32 = 19;
    pub const BPCHAR: u32 = 1042;
    pub const VARCHAR: u32 = 1043;
    pub const UNKNOWN: u32 = 705;
    pub const TIMESTAMP: u32 = 1114;
    pub const TIMESTAMPTZ: u32 = 1184;
}

/// Seconds from the Unix epoch to PostgreSQL's (2000-01-01 00:00:00 UTC).
pub(super) const PG_EPOCH_UNIX_SECONDS: u64 = 946_684_800;

/// The tags of the backend's messages ibench reads (the protocol's names).
pub(super) mod tag {
    pub const AUTHENTICATION: u8 = b'R';
    pub const BACKEND_KEY_DATA: u8 = b'K';
    pub const BIND_COMPLETE: u8 = b'2';
    pub const COMMAND_COMPLETE: u8 = b'C';
    pub const COPY_DATA: u8 = b'd';
    pub const DATA_ROW: u8 = b'D';
    pub const EMPTY_QUERY_RESPONSE: u8 = b'I';
    pub const ERROR_RESPONSE: u8 = b'E';
    pub const NO_DATA: u8 = b'n';
    pub const NOTICE_RESPONSE: u8 = b'N';
    pub const NOTIFICATION_RESPONSE: u8 = b'A';
    pub const PARAMETER_DESCRIPTION: u8 = b't';
    pub const PARAMETER_STATUS: u8 = b'S';
    pub const PARSE_COMPLETE: u8 = b'1';
    pub const PORTAL_SUSPENDED: u8 = b's';
    pub const READY_FOR_QUERY: u8 = b'Z';
    pub const ROW_DESCRIPTION: u8 = b'T';
}

/// The frontend's message tags ibench sends.
mod frontend {
    pub const BIND: u8 = b'B';
    pub const DESCRIBE: u8 = b'D';
    pub const EXECUTE: u8 = b'E';
    pub const PARSE: u8 = b'P';
    pub const PASSWORD: u8 = b'p';
    pub const QUERY: u8 = b'Q';
    pub const SYNC: u8 = b'S';
    pub const TERMINATE: u8 = b'X';
}

/// Protocol version 3.0.
const PROTOCOL_3_0: i32 = 196_608;

/// The code of a `CancelRequest`.
const CANCEL_REQUEST_CODE: i32 = 80_877_102;

/// The code of an `SSLRequest`.
const SSL_REQUEST_CODE: i32 = 80_877_103;

/// The server's one-byte answer to an `SSLRequest` that it agrees to ...
pub(super) const SSL_ACCEPTED: u8 = b'S';

/// ... and to one it declines (the connection goes on in plaintext, or is given up).
pub(super) const SSL_REFUSED: u8 = b'N';

/// The longest body of a message of a kind that can be long (a row description, an error, a
/// notice, a notification, copy data): what a text query keeps in all, the cap of one reply
/// (PostgreSQL's own limit, 1 GiB, let one row of `SHOW server_version` take 1 GiB).
pub(super) const MAX_LONG_MESSAGE_BYTES: usize = protocol::MAX_TEXT_BYTES;

/// The longest `DataRow` of a prepared statement's reply: the benchmark's rows are a few KiB
/// (`data varchar(4000)`), so a longer one is a server that is not what it claims.
pub(super) const MAX_BINARY_ROW_BYTES: usize = 1 << 20;

/// The longest message of any other kind, as libpq allows.
pub(super) const MAX_SHORT_MESSAGE_BYTES: usize = 30_000;

/// The longest message during the login (authentication requests, errors, parameters).
pub(super) const MAX_LOGIN_MESSAGE_BYTES: usize = 65_536;

/// The longest body ibench reads of a message with `tag`, checked at its header before a
/// byte of its body is buffered: `row_bytes` for a `DataRow` (what the reply may still keep),
/// [`MAX_LONG_MESSAGE_BYTES`] for the other kinds that can be long, and
/// [`MAX_SHORT_MESSAGE_BYTES`] for the rest, as libpq and rust-postgres check.
#[inline]
pub(super) fn max_body_bytes(tag: u8, row_bytes: usize) -> usize {
    match tag {
        tag::DATA_ROW => row_bytes,
        tag::ROW_DESCRIPTION
        | tag::ERROR_RESPONSE
        | tag::NOTICE_RESPONSE
        | tag::NOTIFICATION_RESPONSE
        | tag::COPY_DATA => MAX_LONG_MESSAGE_BYTES,
        _ => MAX_SHORT_MESSAGE_BYTES,
    }
}

/// An authentication request (`AuthenticationXXX`, tag `R`), by its code.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum AuthRequest {
    /// `AuthenticationOk` (0).
    Ok,
    /// `AuthenticationCleartextPassword` (3).
    CleartextPassword,
    /// `AuthenticationMD5Password` (5) with its 4-byte salt (`None`: a short request).
    Md5Password(Option<[u8; 4]>),
    /// `AuthenticationSASL` (10): the mechanisms offered, each NUL-terminated.
    Sasl(Vec<u8>),
    /// `AuthenticationSASLContinue` (11): the server's SCRAM message.
    SaslContinue(Vec<u8>),
    /// `AuthenticationSASLFinal` (12): the server's signature.
    SaslFinal(Vec<u8>),
    /// Any other method (Kerberos, GSSAPI, SSPI, ...) by its code.
    Other(i32),
}

impl AuthRequest {
    /// The request in an `R` message's body (at least 4 bytes: the caller checks).
    pub(super) fn parse(body: &[u8]) -> AuthRequest {
        let rest = || body.get(4..).unwrap_or_default().to_vec();
        match body.get(..4).map_or(-1, be_i32) {
            0 => AuthRequest::Ok,
            3 => AuthRequest::CleartextPassword,
            5 => AuthRequest::Md5Password(body.get(4..8).and_then(|s| s.try_into().ok())),
            10 => AuthRequest::Sasl(rest()),
            11 => AuthRequest::SaslContinue(rest()),
            12 => AuthRequest::SaslFinal(rest()),
            other => AuthRequest::Other(other),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding.

#[inline]
pub(super) fn put_i16(out: &mut Vec<u8>, v: i16) {
    out.extend_from_slice(&v.to_be_bytes());
}

#[inline]
pub(super) fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}

#[inline]
pub(super) fn put_cstr(out: &mut Vec<u8>, s: &str) -> WireResult<()> {
    if s.as_bytes().contains(&0) {
        return Err(WireError::Param(format!(
            "a NUL byte in '{}'",
            s.replace('\0', "\\0")
        )));
    }
    out.extend_from_slice(s.as_bytes());
    out.push(0);
    Ok(())
}

#[inline]
pub(super) fn len_i32(n: usize) -> WireResult<i32> {
    i32::try_from(n).map_err(|_| WireError::Param(format!("{n} bytes is too long a message")))
}

#[inline]
pub(super) fn len_i16(n: usize) -> WireResult<i16> {
    i16::try_from(n).map_err(|_| WireError::Param(format!("{n} parameters is too many")))
}

/// Start a message with `tag`: returns where its length goes.
#[inline]
pub(super) fn begin_message(out: &mut Vec<u8>, tag: u8) -> usize {
    out.push(tag);
    begin_untagged(out)
}

fn begin_untagged(out: &mut Vec<u8>) -> usize {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    at
}

/// Write the length of the message whose length field is at `at`.
#[inline]
pub(super) fn end_message(out: &mut [u8], at: usize) -> WireResult<()> {
    let len = len_i32(out.len() - at)?;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// `Sync`.
#[inline]
pub(super) fn sync(out: &mut Vec<u8>) {
    out.extend_from_slice(&[frontend::SYNC, 0, 0, 0, 4]);
}

/// `Terminate`.
pub(super) const TERMINATE: [u8; 5] = [frontend::TERMINATE, 0, 0, 0, 4];

/// `StartupMessage`: protocol 3.0 and the `params` (name, value).
pub(super) fn startup(out: &mut Vec<u8>, params: &[(&str, &str)]) -> WireResult<()> {
    let at = begin_untagged(out);
    put_i32(out, PROTOCOL_3_0);
    for (k, v) in params {
        put_cstr(out, k)?;
        put_cstr(out, v)?;
    }
    out.push(0);
    end_message(out, at)
}

/// `SSLRequest`.
pub(super) fn ssl_request(out: &mut Vec<u8>) {
    put_i32(out, 8);
    put_i32(out, SSL_REQUEST_CODE);
}

/// `CancelRequest` of the backend `process_id` with its `secret_key`.
pub(super) fn cancel_request(out: &mut Vec<u8>, process_id: i32, secret_key: i32) {
    put_i32(out, 16);
    put_i32(out, CANCEL_REQUEST_CODE);
    put_i32(out, process_id);
    put_i32(out, secret_key);
}

/// `PasswordMessage` (a cleartext or MD5 password): `password` NUL-terminated.
pub(super) fn password(out: &mut Vec<u8>, password: &[u8]) -> WireResult<()> {
    let at = begin_message(out, frontend::PASSWORD);
    out.extend_from_slice(password);
    out.push(0);
    end_message(out, at)
}

/// `SASLInitialResponse`: the `mechanism` chosen and the client's first message.
pub(super) fn sasl_initial_response(
    out: &mut Vec<u8>,
    mechanism: &str,
    data: &[u8],
) -> WireResult<()> {
    let at = begin_message(out, frontend::PASSWORD);
    put_cstr(out, mechanism)?;
    put_i32(out, len_i32(data.len())?);
    out.extend_from_slice(data);
    end_message(out, at)
}

/// `SASLResponse`: the client's next message.
pub(super) fn sasl_response(out: &mut Vec<u8>, data: &[u8]) -> WireResult<()> {
    let at = begin_message(out, frontend::PASSWORD);
    out.extend_from_slice(data);
    end_message(out, at)
}

/// `Query` (the simple protocol).
pub(super) fn query(out: &mut Vec<u8>, sql: &str) -> WireResult<()> {
    let at = begin_message(out, frontend::QUERY);
    put_cstr(out, sql)?;
    end_message(out, at)
}

/// `Parse` of `sql` as the statement `name`, the parameters' types left to the server; then
/// `Describe` of that statement (its parameter types come back).
pub(super) fn parse_and_describe(out: &mut Vec<u8>, name: &str, sql: &str) -> WireResult<()> {
    let at = begin_message(out, frontend::PARSE);
    put_cstr(out, name)?;
    put_cstr(out, sql)?;
    put_i16(out, 0);
    end_message(out, at)?;
    let at = begin_message(out, frontend::DESCRIBE);
    out.push(b'S');
    put_cstr(out, name)?;
    end_message(out, at)
}

/// `Bind` of the statement `name` to the unnamed portal, `params` encoded in binary by
/// `types` (one per parameter: fewer or more values is an error), every result column asked
/// for in binary.
#[inline]
pub(super) fn bind<'a>(
    out: &mut Vec<u8>,
    name: &str,
    types: &[u32],
    params: impl IntoIterator<Item = Value<'a>>,
) -> WireResult<()> {
    let at = begin_message(out, frontend::BIND);
    out.push(0); // the unnamed portal
    put_cstr(out, name)?;
    put_i16(out, 1);
    put_i16(out, 1); // every parameter in binary
    let n = types.len();
    put_i16(out, len_i16(n)?);
    let mut given = 0;
    for value in params {
        let Some(&ty) = types.get(given) else {
            given += 1;
            continue;
        };
        given += 1;
        encode(out, value, ty, given)?;
    }
    if given != n {
        return Err(WireError::Param(format!(
            "the statement takes {n} parameters, {given} were given"
        )));
    }
    put_i16(out, 1);
    put_i16(out, 1); // every result column in binary
    end_message(out, at)
}

/// `Execute` of the unnamed portal, all its rows.
#[inline]
pub(super) fn execute(out: &mut Vec<u8>) {
    out.extend_from_slice(&[frontend::EXECUTE, 0, 0, 0, 9, 0, 0, 0, 0, 0]);
}

/// Append parameter `$n` (`value`, for a parameter of type `ty`) as length and binary bytes.
#[inline]
pub(super) fn encode(out: &mut Vec<u8>, value: Value<'_>, ty: u32, n: usize) -> WireResult<()> {
    let misfit = |what: &str| {
        WireError::Param(format!(
            "parameter ${n}: {what} does not fit the server's type (oid {ty})"
        ))
    };
    match (value, ty) {
        (Value::Int(v), oid::INT8) => {
            put_i32(out, 8);
            out.extend_from_slice(&v.to_be_bytes());
        }
        (Value::Int(v), oid::INT4) => {
            let v = i32::try_from(v).map_err(|_| misfit(&format!("{v}")))?;
            put_i32(out, 4);
            out.extend_from_slice(&v.to_be_bytes());
        }
        (Value::Int(v), oid::INT2) => {
            let v = i16::try_from(v).map_err(|_| misfit(&format!("{v}")))?;
            put_i32(out, 2);
            out.extend_from_slice(&v.to_be_bytes());
        }
        (Value::Text(s), oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME | oid::UNKNOWN) => {
            put_i32(out, len_i32(s.len())?);
            out.extend_from_slice(s.as_bytes());
        }
        (Value::Timestamp(t), oid::TIMESTAMP | oid::TIMESTAMPTZ) => {
            put_i32(out, 8);
            out.extend_from_slice(&pg_timestamp_us(t).to_be_bytes());
        }
        (Value::Int(_), _) => return Err(misfit("an integer")),
        (Value::Text(_), _) => return Err(misfit("a string")),
        (Value::Timestamp(_), _) => return Err(misfit("a timestamp")),
    }
    Ok(())
}

/// Microseconds since 2000-01-01 00:00:00 UTC: the binary `timestamp`.
pub(super) fn pg_timestamp_us(t: SystemTime) -> i64 {
    let micros = |d: Duration| i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
    let epoch = UNIX_EPOCH + Duration::from_secs(PG_EPOCH_UNIX_SECONDS);
    match t.duration_since(epoch) {
        Ok(d) => micros(d),
        Err(e) => -micros(e.duration()),
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding.

#[inline]
pub(super) fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

#[inline]
pub(super) fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// The number at the end of a command tag (`INSERT 0 5` is 5, `BEGIN` is 0).
#[inline]
pub(super) fn tag_count(body: &[u8]) -> u64 {
    let tag = body.split(|b| *b == 0).next().unwrap_or_default();
    std::str::from_utf8(tag)
        .ok()
        .and_then(|t| t.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The first column of a binary `DataRow` as an integer, when it is a non-NULL 2, 4 or
/// 8-byte value.
#[inline]
pub(super) fn first_int(body: &[u8]) -> Option<i64> {
    if body.len() < 6 {
        return None;
    }
    let len = be_i32(&body[2..6]);
    let v = body.get(6..6 + usize::try_from(len).ok()?)?;
    match v.len() {
        8 => Some(i64::from_be_bytes(v.try_into().ok()?)),
        4 => Some(i64::from(be_i32(v))),
        2 => Some(i64::from(i16::from_be_bytes([v[0], v[1]]))),
        _ => None,
    }
}

/// A text-format `DataRow`'s columns.
pub(super) fn text_row(body: &[u8]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    if body.len() < 2 {
        return out;
    }
    let n = i16::from_be_bytes([body[0], body[1]]);
    let mut at = 2;
    for _ in 0..n {
        let Some(len) = body.get(at..at + 4).map(be_i32) else {
            break;
        };
        at += 4;
        match usize::try_from(len) {
            Ok(len) => {
                let v = body.get(at..at + len).unwrap_or_default();
                out.push(Some(protocol::server_cell(v)));
                at += len;
            }
            Err(_) => out.push(None),
        }
    }
    out
}

/// The fields of an `ErrorResponse`.
pub(super) fn parse_error_fields(body: &[u8]) -> ServerError {
    let mut e = ServerError {
        severity: Some("ERROR".to_string()),
        ..ServerError::default()
    };
    let mut localized_severity = None;
    let mut nonlocalized = false;
    for field in body.split(|b| *b == 0) {
        let Some((&kind, value)) = field.split_first() else {
            continue;
        };
        let value = protocol::server_text(value);
        match kind {
            b'V' => {
                e.severity = Some(value);
                nonlocalized = true;
            }
            b'S' => localized_severity = Some(value),
            b'C' => e.sqlstate = value,
            b'M' => e.message = value,
            b'D' => e.detail = Some(value),
            b'H' => e.hint = Some(value),
            _ => {}
        }
    }
    if !nonlocalized && let Some(s) = localized_severity {
        e.severity = Some(s);
    }
    e
}

/// A `RowDescription`'s column names (each a C string followed by 18 bytes of type facts).
pub(super) fn column_names(body: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(n) = body.get(..2).map(|b| i16::from_be_bytes([b[0], b[1]])) else {
        return out;
    };
    let mut at = 2;
    for _ in 0..n {
        let Some(len) = body
            .get(at..)
            .and_then(|rest| rest.iter().position(|b| *b == 0))
        else {
            break;
        };
        out.push(protocol::server_text(&body[at..at + len]));
        at += len + 1 + 18;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bind_encodes_each_value_by_the_described_type() {
        let mut out = Vec::new();
        encode(&mut out, Value::Int(7), oid::INT4, 1).unwrap();
        assert_eq!(out, [0, 0, 0, 4, 0, 0, 0, 7]);
        out.clear();
        encode(&mut out, Value::Int(-2), oid::INT8, 1).unwrap();
        assert_eq!(out, [0, 0, 0, 8, 255, 255, 255, 255, 255, 255, 255, 254]);
        out.clear();
        encode(&mut out, Value::Text("ab"), oid::VARCHAR, 1).unwrap();
        assert_eq!(out, [0, 0, 0, 2, b'a', b'b']);
        out.clear();
        let t = UNIX_EPOCH + Duration::from_secs(PG_EPOCH_UNIX_SECONDS + 1);
        encode(&mut out, Value::Timestamp(t), oid::TIMESTAMP, 1).unwrap();
        assert_eq!(out, [0, 0, 0, 8, 0, 0, 0, 0, 0, 0x0f, 0x42, 0x40]);
        assert_eq!(pg_timestamp_us(UNIX_EPOCH), -946_684_800_000_000);
    }

    #[test]
    fn a_value_that_does_not_fit_names_the_parameter() {
        let mut out = Vec::new();
        let e = encode(&mut out, Value::Int(1 << 40), oid::INT4, 3).unwrap_err();
        assert!(
            e.to_string().starts_with("parameter $3: 1099511627776"),
            "{e}"
        );
        let e = encode(&mut out, Value::Text("x"), oid::INT8, 2).unwrap_err();
        assert!(e.to_string().contains("a string"), "{e}");
    }

    #[test]
    fn messages_carry_their_length() {
        let mut out = Vec::new();
        let at = begin_message(&mut out, b'Q');
        put_cstr(&mut out, "SELECT 1").unwrap();
        end_message(&mut out, at).unwrap();
        assert_eq!(out[0], b'Q');
        assert_eq!(be_i32(&out[1..5]), 4 + 9);
        assert!(put_cstr(&mut out, "a\0b").is_err());
    }

    #[test]
    fn replies_are_read_in_place() {
        assert_eq!(tag_count(b"INSERT 0 100\0"), 100);
        assert_eq!(tag_count(b"DELETE 7\0"), 7);
        assert_eq!(tag_count(b"BEGIN\0"), 0);
        // One column, 8 bytes: 42; then a NULL.
        let mut row = vec![0, 1, 0, 0, 0, 8];
        row.extend_from_slice(&42i64.to_be_bytes());
        assert_eq!(first_int(&row), Some(42));
        assert_eq!(first_int(&[0, 1, 255, 255, 255, 255]), None);
        let text = [0, 2, 0, 0, 0, 2, b'1', b'2', 255, 255, 255, 255];
        assert_eq!(text_row(&text), vec![Some("12".to_string()), None]);
        let e = parse_error_fields(b"SERROR\0VERROR\0C40P01\0Mdeadlock detected\0Dwho\0\0");
        assert_eq!(e.sqlstate, "40P01");
        assert_eq!(e.to_string(), "ERROR: deadlock detected\nDETAIL: who");
        let mut desc = vec![0, 2];
        for name in [&b"min"[..], b"max"] {
            desc.extend_from_slice(name);
            desc.extend_from_slice(&[0; 19]);
        }
        assert_eq!(column_names(&desc), ["min", "max"]);
        assert_eq!(column_names(&[0, 1, b'x']), Vec::<String>::new());
    }

    #[test]
    fn frontend_messages_by_name_carry_their_codes() {
        let mut out = Vec::new();
        cancel_request(&mut out, 7, -1);
        assert_eq!(be_i32(&out[0..4]), 16);
        assert_eq!(be_i32(&out[4..8]), CANCEL_REQUEST_CODE);
        assert_eq!((be_i32(&out[8..12]), be_i32(&out[12..16])), (7, -1));
        out.clear();
        ssl_request(&mut out);
        assert_eq!(out, [0, 0, 0, 8, 4, 0xD2, 0x16, 0x2F]);
        out.clear();
        startup(&mut out, &[("user", "u")]).unwrap();
        assert_eq!(usize::try_from(be_i32(&out[0..4])).unwrap(), out.len());
        assert_eq!(be_i32(&out[4..8]), PROTOCOL_3_0);
        assert!(out.ends_with(b"user\0u\0\0"));
        out.clear();
        bind(&mut out, "ib1", &[oid::INT8], [Value::Int(5)]).unwrap();
        execute(&mut out);
        sync(&mut out);
        assert_eq!(out[0], b'B');
        assert!(out.ends_with(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0, b'S', 0, 0, 0, 4]));
        let e = bind(&mut Vec::new(), "ib1", &[oid::INT8], []).unwrap_err();
        assert!(
            e.to_string().contains("takes 1 parameters, 0 were given"),
            "{e}"
        );
    }

    #[test]
    fn authentication_requests_and_length_caps_are_named() {
        assert_eq!(AuthRequest::parse(&[0, 0, 0, 0]), AuthRequest::Ok);
        assert_eq!(
            AuthRequest::parse(&[0, 0, 0, 5, 1, 2, 3, 4]),
            AuthRequest::Md5Password(Some([1, 2, 3, 4]))
        );
        assert_eq!(
            AuthRequest::parse(&[0, 0, 0, 5, 1]),
            AuthRequest::Md5Password(None)
        );
        assert_eq!(
            AuthRequest::parse(b"\0\0\0\x0aSCRAM-SHA-256\0\0"),
            AuthRequest::Sasl(b"SCRAM-SHA-256\0\0".to_vec())
        );
        assert_eq!(AuthRequest::parse(&[0, 0, 0, 7]), AuthRequest::Other(7));
        assert_eq!(max_body_bytes(tag::DATA_ROW, 123), 123);
        assert_eq!(
            max_body_bytes(tag::ERROR_RESPONSE, 0),
            MAX_LONG_MESSAGE_BYTES
        );
        assert_eq!(
            max_body_bytes(tag::READY_FOR_QUERY, 1 << 30),
            MAX_SHORT_MESSAGE_BYTES
        );
    }
}
