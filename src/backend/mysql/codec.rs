//! MySQL's packets as bytes, apart from the I/O: encoding (a bound value in the binary
//! protocol, the login header, NUL-terminated and length-encoded strings and integers) and
//! decoding a packet's payload read in place (OK and ERR packets, a column definition's name
//! and type, a text row, a binary row's first integer). Nothing here reads or writes a
//! socket: [`super::wire`] does, and calls these.

use crate::backend::protocol;
use crate::backend::wire::{ServerError, Value};
use crate::calendar::civil_from_system_time;
use std::time::SystemTime;

/// Capability flags (`CLIENT_*`).
pub(super) mod cap {
    pub const LONG_PASSWORD: u32 = 1;
    pub const LONG_FLAG: u32 = 1 << 2;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    pub const SSL: u32 = 1 << 11;
    pub const DEPRECATE_EOF: u32 = 1 << 24;
}

/// Column and parameter types (`MYSQL_TYPE_*`).
pub(super) mod ty {
    pub const DECIMAL: u8 = 0;
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const NEWDECIMAL: u8 = 246;
    pub const VAR_STRING: u8 = 253;
}

/// Command codes (`COM_*`): a command packet's first byte.
pub(super) mod com {
    pub const QUIT: u8 = 0x01;
    pub const QUERY: u8 = 0x03;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_CLOSE: u8 = 0x19;
}

/// The first byte of a reply packet, which says what it is.
pub(super) mod header {
    /// An OK packet (also the greeting-time "all is well").
    pub const OK: u8 = 0x00;
    /// More data of the login's method (`caching_sha2_password`'s state, an RSA key).
    pub const AUTH_MORE_DATA: u8 = 0x01;
    /// A `LOCAL INFILE` request.
    pub const LOCAL_INFILE: u8 = 0xFB;
    /// An EOF packet, an OK packet with `CLIENT_DEPRECATE_EOF`, or an auth switch during
    /// the login.
    pub const EOF: u8 = 0xFE;
    /// An ERR packet.
    pub const ERR: u8 = 0xFF;
}

/// A text row's NULL column (where a length-encoded string would start).
const NULL_COLUMN: u8 = 0xFB;

/// `SERVER_MORE_RESULTS_EXISTS` in an OK or EOF packet's status.
pub(super) const MORE_RESULTS: u16 = 0x0008;

/// `utf8mb4_general_ci`.
pub(super) const CHARSET_UTF8MB4: u8 = 45;

/// Append `value` in the binary protocol; returns its type and flag bytes: an integer as a
/// `LONGLONG`, a string as a `VAR_STRING`, a timestamp as the `DATETIME` of its UTC
/// calendar date and time (through `dates`, which converts a repeated time once).
#[inline]
pub(super) fn encode(out: &mut Vec<u8>, value: Value<'_>, dates: &mut Datetimes) -> (u8, u8) {
    match value {
        Value::Int(v) => {
            out.extend_from_slice(&v.to_le_bytes());
            (ty::LONGLONG, 0)
        }
        Value::Text(s) => {
            put_lenenc_bytes(out, s.as_bytes());
            (ty::VAR_STRING, 0)
        }
        Value::Timestamp(t) => {
            out.extend_from_slice(dates.bytes(t));
            (ty::DATETIME, 0)
        }
    }
}

/// The `DATETIME` bytes of the last time encoded: a batch's insert binds the same
/// timestamp in every row, and it is turned into a calendar date once, not once per row.
#[derive(Default)]
pub(super) struct Datetimes {
    last: Option<(SystemTime, [u8; 12], usize)>,
}

impl Datetimes {
    /// The `DATETIME` value of `t`: its length (11, 7 or 4: the shortest that holds it),
    /// then the year, month, day, hour, minute, second and microsecond.
    #[inline]
    fn bytes(&mut self, t: SystemTime) -> &[u8] {
        let fresh = match self.last {
            Some(last) if last.0 == t => last,
            _ => {
                let (bytes, len) = datetime(t);
                (t, bytes, len)
            }
        };
        let (_, bytes, len) = self.last.insert(fresh);
        &bytes[..*len]
    }
}

/// The `DATETIME` value of `t` and its length.
fn datetime(t: SystemTime) -> ([u8; 12], usize) {
    let (y, mo, d, h, mi, s, us) = civil_from_system_time(t);
    let part = |v: u32| u8::try_from(v).unwrap_or(0);
    let [y0, y1] = u16::try_from(y).unwrap_or(0).to_le_bytes();
    let (mo, d, h, mi, s) = (part(mo), part(d), part(h), part(mi), part(s));
    let mut out = [0u8; 12];
    let len = if us != 0 {
        out[..8].copy_from_slice(&[11, y0, y1, mo, d, h, mi, s]);
        out[8..].copy_from_slice(&us.to_le_bytes());
        12
    } else if h != 0 || mi != 0 || s != 0 {
        out[..8].copy_from_slice(&[7, y0, y1, mo, d, h, mi, s]);
        8
    } else {
        out[..5].copy_from_slice(&[4, y0, y1, mo, d]);
        5
    };
    (out, len)
}

/// The part the handshake response and the `SSLRequest` share: capabilities, the largest
/// packet, the character set and 23 reserved bytes.
pub(super) fn put_login_header(out: &mut Vec<u8>, caps: u32) {
    out.extend_from_slice(&caps.to_le_bytes());
    out.extend_from_slice(&(1u32 << 24).to_le_bytes());
    out.push(CHARSET_UTF8MB4);
    out.extend_from_slice(&[0; 23]);
}

#[inline]
pub(super) fn put_cstr(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

#[inline]
pub(super) fn put_lenenc_int(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=250 => out.push(u8::try_from(n).unwrap_or(0)),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&n.to_le_bytes()[..2]);
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&n.to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

#[inline]
pub(super) fn put_lenenc_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_lenenc_int(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A length-encoded integer at `*i`, advancing `*i` past it (`None` for NULL, 0xFB).
#[inline]
pub(super) fn lenenc_int(b: &[u8], i: &mut usize) -> Option<u64> {
    let first = *b.get(*i)?;
    let (len, value) = match first {
        0xFB => {
            *i += 1;
            return None;
        }
        0xFC => (2, None),
        0xFD => (3, None),
        0xFE => (8, None),
        v => (0, Some(u64::from(v))),
    };
    *i += 1;
    if let Some(v) = value {
        return Some(v);
    }
    let bytes = b.get(*i..*i + len)?;
    *i += len;
    let mut le = [0u8; 8];
    le[..len].copy_from_slice(bytes);
    Some(u64::from_le_bytes(le))
}

/// A length-encoded string at `*i` (`None` for NULL).
#[inline]
pub(super) fn lenenc_str<'a>(b: &'a [u8], i: &mut usize) -> Option<&'a [u8]> {
    // Checked: a server may claim a length of 2^64 - 1 (`FE FF×8`).
    let len = usize::try_from(lenenc_int(b, i)?).ok()?;
    let end = i.checked_add(len)?;
    let s = b.get(*i..end)?;
    *i = end;
    Some(s)
}

/// The status and affected rows of an OK packet (header 0x00 or 0xFE).
pub(super) struct Ok_ {
    /// The affected rows.
    pub(super) affected: u64,
    /// The server status flags.
    pub(super) status: u16,
}

#[inline]
pub(super) fn ok_packet(b: &[u8]) -> Ok_ {
    let mut i = 1;
    let affected = lenenc_int(b, &mut i).unwrap_or(0);
    let _last_insert_id = lenenc_int(b, &mut i);
    let status = b
        .get(i..i + 2)
        .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]));
    Ok_ { affected, status }
}

/// An ERR packet: 0xFF, code, `#` and SQLSTATE, message.
pub(super) fn parse_error(b: &[u8]) -> ServerError {
    let code = b.get(1..3).map_or(0, |c| u16::from_le_bytes([c[0], c[1]]));
    let (state, message) = match b.get(3) {
        Some(b'#') => (
            String::from_utf8_lossy(b.get(4..9).unwrap_or_default()).into_owned(),
            b.get(9..).unwrap_or_default(),
        ),
        _ => ("HY000".to_string(), b.get(3..).unwrap_or_default()),
    };
    ServerError {
        sqlstate: protocol::server_text(&state.into_bytes()),
        number: Some(code),
        message: protocol::server_text(message),
        ..ServerError::default()
    }
}

/// A column definition's name (the fifth length-encoded string), as server text: cut and
/// escaped ([`protocol::server_text`]).
pub(super) fn column_name(b: &[u8]) -> String {
    let mut i = 0;
    for _ in 0..4 {
        let _ = lenenc_str(b, &mut i);
    }
    lenenc_str(b, &mut i)
        .map(protocol::server_text)
        .unwrap_or_default()
}

/// A column definition's type byte.
#[inline]
pub(super) fn column_type(b: &[u8]) -> Option<u8> {
    let mut i = 0;
    for _ in 0..6 {
        let _ = lenenc_str(b, &mut i);
    }
    // Length of the fixed fields (0x0C), charset (2), column length (4), then the type.
    b.get(i + 1 + 2 + 4).copied()
}

/// A text row's columns; `None` when a column's length runs past the row.
pub(super) fn text_row(b: &[u8]) -> Option<Vec<Option<String>>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == NULL_COLUMN {
            out.push(None);
            i += 1;
            continue;
        }
        let s = lenenc_str(b, &mut i)?;
        out.push(Some(protocol::server_cell(s)));
    }
    Some(out)
}

/// The first column of a binary row as an integer, given the column count and its type.
#[inline]
pub(super) fn first_binary_int(b: &[u8], columns: usize, first_type: Option<u8>) -> Option<i64> {
    let bitmap = columns.saturating_add(7 + 2) / 8;
    if b.first() != Some(&0) || *b.get(1)? & (1 << 2) != 0 {
        return None;
    }
    let v = b.get(1 + bitmap..)?;
    match first_type? {
        ty::TINY => v.first().map(|x| i64::from(*x)),
        ty::SHORT | ty::YEAR => Some(i64::from(u16::from_le_bytes(v.get(..2)?.try_into().ok()?))),
        ty::LONG | ty::INT24 => Some(i64::from(u32::from_le_bytes(v.get(..4)?.try_into().ok()?))),
        ty::LONGLONG => Some(i64::from_le_bytes(v.get(..8)?.try_into().ok()?)),
        ty::NEWDECIMAL | ty::DECIMAL | ty::VAR_STRING => {
            let text = lenenc_str(v, &mut 0)?;
            let text = std::str::from_utf8(text).ok()?;
            text.split('.').next()?.parse().ok()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_encoded_with_the_mysql_crates_types() {
        let mut out = Vec::new();
        let mut dates = Datetimes::default();
        let mut put = |out: &mut Vec<u8>, v| encode(out, v, &mut dates);
        assert_eq!(put(&mut out, Value::Int(-1)), (ty::LONGLONG, 0));
        assert_eq!(out, [255; 8]);
        out.clear();
        assert_eq!(put(&mut out, Value::Text("ab")), (ty::VAR_STRING, 0));
        assert_eq!(out, [2, b'a', b'b']);
        out.clear();
        // 2026-11-25 00:00:00 UTC, then 01:02:03.000004 (twice: the second from the last
        // conversion), then 01:02:03.
        let day = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_564_800);
        put(&mut out, Value::Timestamp(day));
        assert_eq!(out, [4, 0xEA, 0x07, 11, 25]);
        let t = day + std::time::Duration::from_micros(3_723_000_004);
        for _ in 0..2 {
            out.clear();
            assert_eq!(put(&mut out, Value::Timestamp(t)), (ty::DATETIME, 0));
            assert_eq!(out, [11, 0xEA, 0x07, 11, 25, 1, 2, 3, 4, 0, 0, 0]);
        }
        out.clear();
        put(
            &mut out,
            Value::Timestamp(day + std::time::Duration::from_secs(3723)),
        );
        assert_eq!(out, [7, 0xEA, 0x07, 11, 25, 1, 2, 3]);
        out.clear();
        put_lenenc_bytes(&mut out, &[7; 300]);
        assert_eq!(&out[..3], &[0xFC, 0x2C, 0x01]);
        assert_eq!(lenenc_str(&out, &mut 0).map(<[u8]>::len), Some(300));
    }

    #[test]
    fn replies_are_read_in_place() {
        let e = parse_error(b"\xFF\xbd\x04#40001Deadlock found");
        assert_eq!((e.number, e.sqlstate.as_str()), (Some(1213), "40001"));
        assert_eq!(e.to_string(), "ERROR 1213 (40001): Deadlock found");
        let ok = ok_packet(&[0, 5, 0, 8, 0, 0, 0]);
        assert_eq!((ok.affected, ok.status), (5, MORE_RESULTS));
        assert_eq!(
            text_row(&[1, b'7', 0xFB, 2, b'a', b'b']),
            Some(vec![Some("7".into()), None, Some("ab".into())])
        );
        let mut huge = vec![0xFE];
        huge.extend_from_slice(&[0xFF; 8]);
        huge.extend_from_slice(b"12");
        assert_eq!(text_row(&huge), None, "FE FF×8: no overflow, no row");
        // One LONGLONG column: 0x00, a 1-byte bitmap, 8 bytes.
        let mut row = vec![0, 0];
        row.extend_from_slice(&42i64.to_le_bytes());
        assert_eq!(first_binary_int(&row, 1, Some(ty::LONGLONG)), Some(42));
        assert_eq!(first_binary_int(&[0, 4], 1, Some(ty::LONGLONG)), None);
        let dec = [0, 0, 3, b'1', b'2', b'3'];
        assert_eq!(first_binary_int(&dec, 1, Some(ty::NEWDECIMAL)), Some(123));
    }
}
