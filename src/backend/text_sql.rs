//! A connection that runs a statement as text, as the failover's short statements need it
//! (`identity.rs`: which server a connection reached; `promote.rs`: a standby promoted).
//! `ServerConn` implements it; those files take it instead of `ServerConn`, so that
//! `server_conn.rs` stands above them and they import nothing of it.

use super::BackendResult;
use super::wire::TextResult;

/// Runs one statement as text.
pub(crate) trait TextSql {
    /// Run `sql` as text, while doing `context` (the error says it); its result.
    fn query_text(&mut self, sql: &str, context: &str) -> BackendResult<TextResult>;

    /// The first column of the first row of `sql`, as text (`None` for no row or NULL).
    fn value_text(&mut self, sql: &str, context: &str) -> BackendResult<Option<String>> {
        Ok(self.query_text(sql, context)?.first().map(str::to_string))
    }
}
