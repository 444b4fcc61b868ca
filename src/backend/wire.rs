//! What ibench's two protocol clients share above the bytes: the [`Wire`] trait (connect,
//! prepare, execute, the text query, close, TLS), and one model of what goes over either
//! protocol: the value bound to a parameter ([`Value`]), what an execution returned
//! ([`Executed`]), a text query's result ([`TextResult`]), and what a server said when it
//! refused something ([`ServerError`], [`WireError`]).
//!
//! Each protocol encodes the shared [`Value`] in its own binary form in its codec
//! (`postgres/codec.rs`, `mysql/codec.rs`) and decodes its replies into these types; the
//! generic connection (`server_conn.rs`) runs the benchmark's operations over any [`Wire`].
//! `protocol.rs`, below this, keeps the stream, the buffers and the error kinds.

use std::time::SystemTime;

use super::protocol;
use crate::results::target::TlsInfo;

/// What a server said when it refused something: a PostgreSQL `ErrorResponse` or a MySQL
/// ERR packet. The MySQL error number is set for MySQL only, the severity and the `DETAIL`
/// and `HINT` lines for PostgreSQL only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerError {
    /// The SQLSTATE, e.g. `40P01` (PostgreSQL) or `40001` (MySQL).
    pub sqlstate: String,
    /// The MySQL error number, e.g. 1213 (`None` for PostgreSQL).
    pub number: Option<u16>,
    /// `ERROR`, `FATAL`, `WARNING`, ... (PostgreSQL's non-localized field when sent).
    pub severity: Option<String>,
    /// The primary message.
    pub message: String,
    /// The `DETAIL` line, if any.
    pub detail: Option<String>,
    /// The `HINT` line, if any.
    pub hint: Option<String>,
}

impl std::fmt::Display for ServerError {
    /// As each protocol's own client prints it: MySQL's `ERROR 1213 (40001): message`;
    /// PostgreSQL's `ERROR: message`, then `DETAIL: ...` and `HINT: ...` lines.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(number) = self.number {
            return write!(f, "ERROR {number} ({}): {}", self.sqlstate, self.message);
        }
        let severity = self.severity.as_deref().unwrap_or("ERROR");
        write!(f, "{severity}: {}", self.message)?;
        if let Some(d) = &self.detail {
            write!(f, "\nDETAIL: {d}")?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\nHINT: {h}")?;
        }
        Ok(())
    }
}

/// Why a call of either protocol client failed.
pub type WireError = protocol::WireError<ServerError>;

/// A protocol client's result.
pub type WireResult<T> = Result<T, WireError>;

/// One value to bind to a statement's parameter. Each codec encodes it in its protocol's
/// binary form: PostgreSQL by the type the server described for the parameter (`int2`,
/// `int4`, `int8`; `text`, `varchar`, ...; `timestamp`), MySQL as `LONGLONG`, `VAR_STRING`
/// and `DATETIME` (a timestamp as its UTC calendar date and time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// An integer.
    Int(i64),
    /// A string.
    Text(&'a str),
    /// A point in time (UTC).
    Timestamp(SystemTime),
}

/// What one execution of a prepared statement returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Executed {
    /// Rows the statement returned (counted, not decoded).
    pub rows_returned: u64,
    /// The rows it changed: PostgreSQL's command tag count (`INSERT 0 100`, `DELETE 7`,
    /// `SELECT 10`), MySQL's OK packet's affected rows.
    pub rows_affected: u64,
    /// The first column of the first row as an integer, if there was a row and that column
    /// was a non-NULL integer (or, on MySQL, a decimal).
    pub first_int: Option<i64>,
}

/// A text query's result: column names and rows as text (NULL is `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextResult {
    /// The column names of the first result set.
    pub columns: Vec<String>,
    /// The rows of every result set.
    pub rows: Vec<Vec<Option<String>>>,
    /// Bytes of row data kept so far.
    bytes: usize,
}

impl TextResult {
    /// The first column of the first row (`None` for no row or NULL).
    pub fn first(&self) -> Option<&str> {
        self.rows.first()?.first()?.as_deref()
    }

    /// Keep the column names of the first result, `len` bytes on the wire (counted in
    /// [`protocol::MAX_TEXT_BYTES`] as rows are: 400 MySQL column definitions of 8 MiB once
    /// took 1.5 GiB), as `names` gives them (each cut and escaped).
    pub(crate) fn keep_columns(
        &mut self,
        len: usize,
        names: impl FnOnce() -> Vec<String>,
    ) -> Result<(), String> {
        self.bytes = self.bytes.saturating_add(len);
        if self.bytes > protocol::MAX_TEXT_BYTES {
            return Err(protocol::text_reply_too_long());
        }
        self.columns.extend(names());
        Ok(())
    }

    /// Keep one more row of `len` bytes, decoded by `decode` (`None`: a row whose column is
    /// longer than the row). The error says why the reply cannot be kept: past
    /// [`protocol::MAX_TEXT_ROWS`] or [`protocol::MAX_TEXT_BYTES`], or malformed.
    pub(crate) fn keep_row(
        &mut self,
        len: usize,
        decode: impl FnOnce() -> Option<Vec<Option<String>>>,
    ) -> Result<(), String> {
        self.bytes = self.bytes.saturating_add(len);
        if self.rows.len() >= protocol::MAX_TEXT_ROWS || self.bytes > protocol::MAX_TEXT_BYTES {
            return Err(protocol::text_reply_too_long());
        }
        let row = decode().ok_or_else(|| {
            "a text row whose column is longer than its packet (a length the row does not hold)"
                .to_string()
        })?;
        self.rows.push(row);
        Ok(())
    }
}

/// One blocking connection of a wire protocol: what the generic server connection
/// (`server_conn.rs`) and the drivers' own short connections call. Generic, never `dyn`:
/// the hot path (`execute`) is monomorphized per protocol.
pub trait Wire: Sized + Send {
    /// What a connection is opened from (the protocol's parsed settings).
    type Config: Clone + Send + Sync;
    /// A statement prepared on one connection.
    type Prepared: Send;

    /// Connect and log in as `config` says, TLS included, bounded by its connect timeout.
    fn connect(config: &Self::Config) -> WireResult<Self>;

    /// Prepare `sql` (its parameters are `$n` or `?`, as the protocol's SQL writes them).
    fn prepare(&mut self, sql: &str) -> WireResult<Self::Prepared>;

    /// Run a prepared statement with `params` (one per parameter, in order) and read its
    /// result: rows counted, not decoded.
    fn execute<'a>(
        &mut self,
        statement: &Self::Prepared,
        params: impl IntoIterator<Item = Value<'a>>,
    ) -> WireResult<Executed>;

    /// Run `sql` (one or more statements) as text; the rows of every result, as text.
    fn query(&mut self, sql: &str) -> WireResult<TextResult>;

    /// Forget a prepared statement on the server (best effort; PostgreSQL keeps its named
    /// statements until the connection ends).
    fn close(&mut self, statement: &Self::Prepared) -> WireResult<()>;

    /// What TLS negotiated on this connection (`None`: plain, or a Unix socket).
    fn tls_info(&self) -> Option<TlsInfo>;
}

/// What a server URL says, read once, for any wire protocol: the protocol's settings `C`,
/// completed as its own client completes them, and the URL with its password masked (what
/// error messages and `run.json` show). `PgSettings` and `MySettings` are this shape; each
/// protocol reads its own (`PgSettings::read`, `MySettings::read`).
#[derive(Clone)]
pub struct ServerSettings<C> {
    /// The protocol's settings.
    pub(crate) config: C,
    /// The URL, password masked.
    pub(crate) shown: String,
}

impl<C> ServerSettings<C> {
    /// The URL, password masked.
    pub fn shown(&self) -> &str {
        &self.shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_protocol_prints_its_errors_as_its_own_client_does() {
        let pg = ServerError {
            sqlstate: "40P01".into(),
            severity: Some("ERROR".into()),
            message: "deadlock detected".into(),
            detail: Some("who".into()),
            hint: Some("retry".into()),
            ..ServerError::default()
        };
        assert_eq!(
            pg.to_string(),
            "ERROR: deadlock detected\nDETAIL: who\nHINT: retry"
        );
        let my = ServerError {
            sqlstate: "40001".into(),
            number: Some(1213),
            message: "Deadlock found".into(),
            ..ServerError::default()
        };
        assert_eq!(my.to_string(), "ERROR 1213 (40001): Deadlock found");
    }

    #[test]
    fn a_text_result_keeps_rows_up_to_its_caps() {
        let mut r = TextResult::default();
        r.keep_row(2, || Some(vec![Some("42".into()), None]))
            .unwrap();
        assert_eq!(r.first(), Some("42"));
        let e = r.keep_row(1, || None).unwrap_err();
        assert!(e.contains("longer than its packet"), "{e}");
        let e = r
            .keep_row(protocol::MAX_TEXT_BYTES, || Some(vec![]))
            .unwrap_err();
        assert_eq!(e, protocol::text_reply_too_long());
        assert_eq!(r.rows.len(), 1);
        let mut c = TextResult::default();
        c.keep_columns(3, || vec!["a".into()]).unwrap();
        let e = c
            .keep_columns(protocol::MAX_TEXT_BYTES, || vec!["b".into()])
            .unwrap_err();
        assert_eq!(e, protocol::text_reply_too_long());
        assert_eq!(c.columns, ["a"]);
    }
}
