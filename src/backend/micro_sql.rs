//! The SQL of the microbenchmarks' statements (`workload::micro`), one text per statement
//! kind, with the placeholder style of each backend (docs/micro.md quotes these texts), and
//! the benchmark's statements that every backend writes alike: the point query and the
//! `min`/`max` of `transactionid`.

use super::BackendResult;
use crate::workload::micro::{MicroStatement, MicroStatementKind};

/// How a backend writes a statement's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placeholders {
    /// `$1, $2, ...` (Postgres).
    Numbered,
    /// `?` (MySQL, SQLite).
    Question,
}

/// What running a statement kind gives back, and so how a backend runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// `BEGIN`, `COMMIT`: no rows (sent as plain text, not prepared).
    Control,
    /// A query whose rows are counted.
    Rows,
    /// A query whose one value is the figure (the scan's `COUNT(*)`).
    Count,
    /// A write: the rows it changed.
    Changed,
}

/// What `kind` gives back.
pub(crate) fn outcome(kind: MicroStatementKind) -> Outcome {
    use MicroStatementKind as K;
    match kind {
        K::Begin | K::Commit => Outcome::Control,
        K::Scan => Outcome::Count,
        K::UpdateK | K::UpdateKIn | K::UpdateC | K::Delete | K::Insert => Outcome::Changed,
        _ => Outcome::Rows,
    }
}

/// Whether a statement's text parameters come before its integers.
pub(crate) fn texts_first(kind: MicroStatementKind) -> bool {
    kind == MicroStatementKind::UpdateC
}

/// A statement's parameters in the order of its SQL, each made by `int` or `text`.
pub(crate) fn params<'a, T>(
    s: &'a MicroStatement,
    int: impl Fn(&'a i32) -> T,
    text: impl Fn(&'a String) -> T,
) -> Vec<T> {
    let ints = s.ints.iter().map(int);
    let texts = s.texts.iter().map(text);
    if texts_first(s.kind) {
        texts.chain(ints).collect()
    } else {
        ints.chain(texts).collect()
    }
}

/// Run an operation's statements one by one with `one`, summing their rows; when one fails
/// inside a transaction, `rollback` ends it before the error is returned.
pub(crate) fn run_operation<C: ?Sized>(
    conn: &mut C,
    statements: &[MicroStatement],
    mut one: impl FnMut(&mut C, &MicroStatement) -> BackendResult<u64>,
    rollback: impl FnOnce(&mut C),
) -> BackendResult<u64> {
    let mut rows = 0;
    for s in statements {
        match one(conn, s) {
            Ok(n) => rows += n,
            Err(e) => {
                if statements
                    .first()
                    .is_some_and(|f| f.kind == MicroStatementKind::Begin)
                {
                    rollback(conn);
                }
                return Err(e);
            }
        }
    }
    Ok(rows)
}

/// The point query for `n` ids: one parameter per id.
pub(crate) fn point_sql(table: &str, n: usize, p: Placeholders) -> String {
    format!(
        "SELECT transactionid, productid, data FROM {table} WHERE transactionid IN ({})",
        marks(p, 1, n)
    )
}

/// `min(transactionid), max(transactionid)` of `table`.
pub(crate) fn min_max_sql(table: &str) -> String {
    format!("SELECT min(transactionid), max(transactionid) FROM {table}")
}

/// `n` placeholders from position `first` (1-based), comma-separated.
fn marks(p: Placeholders, first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| match p {
            Placeholders::Numbered => format!("${i}"),
            Placeholders::Question => "?".to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The SQL of one statement kind on `table`; `n` is the IN-list length where there is one.
pub(crate) fn statement_sql(
    kind: MicroStatementKind,
    table: &str,
    n: usize,
    p: Placeholders,
) -> String {
    use MicroStatementKind as K;
    let one = |i: usize| marks(p, i, 1);
    let between = |col: &str| format!("{col} BETWEEN {} AND {}", one(1), one(2));
    let inlist = |col: &str| format!("{col} IN ({})", marks(p, 1, n));
    match kind {
        K::PointC => format!("SELECT c FROM {table} WHERE id = {}", one(1)),
        K::InPkCovered => format!("SELECT id FROM {table} WHERE {}", inlist("id")),
        K::InSiCovered => format!("SELECT k FROM {table} WHERE {}", inlist("k")),
        K::InPkNotcovered => format!("SELECT c FROM {table} WHERE {}", inlist("id")),
        K::InSiNotcovered => format!("SELECT c FROM {table} WHERE {}", inlist("k")),
        K::InSiRows => format!("SELECT id, k, c, pad FROM {table} WHERE {}", inlist("k")),
        K::InPkRows => format!("SELECT id, k, c, pad FROM {table} WHERE {}", inlist("id")),
        K::RangeSumPk => format!("SELECT SUM(id) FROM {table} WHERE {}", between("id")),
        K::RangeSumSi => format!("SELECT SUM(k) FROM {table} WHERE {}", between("k")),
        K::RangeLenPk => format!("SELECT SUM(LENGTH(c)) FROM {table} WHERE {}", between("id")),
        K::RangeLenSi => format!("SELECT SUM(LENGTH(c)) FROM {table} WHERE {}", between("k")),
        K::RangeC => format!("SELECT c FROM {table} WHERE {}", between("id")),
        K::RangeSumK => format!("SELECT SUM(k) FROM {table} WHERE {}", between("id")),
        K::RangeOrderC => format!("SELECT c FROM {table} WHERE {} ORDER BY c", between("id")),
        K::RangeDistinctC => format!(
            "SELECT DISTINCT c FROM {table} WHERE {} ORDER BY c",
            between("id")
        ),
        K::Scan => format!("SELECT COUNT(*) FROM {table} WHERE LENGTH(pad) >= 0"),
        K::UpdateK => format!("UPDATE {table} SET k = k + 1 WHERE id = {}", one(1)),
        K::UpdateKIn => format!("UPDATE {table} SET k = k + 1 WHERE {}", inlist("id")),
        K::UpdateC => format!("UPDATE {table} SET c = {} WHERE id = {}", one(1), one(2)),
        K::Delete => format!("DELETE FROM {table} WHERE id = {}", one(1)),
        K::Insert => format!(
            "INSERT INTO {table} (id, k, c, pad) VALUES ({})",
            marks(p, 1, 4)
        ),
        K::Begin => "BEGIN".to_string(),
        K::Commit => "COMMIT".to_string(),
    }
}

/// The sysbench table: `id` PK, `k` with the secondary index `k_<table>`, `c`, `pad`.
/// `suffix` ends the CREATE TABLE (MySQL's `ENGINE=...`).
pub(crate) fn create_table_sql(table: &str, suffix: &str) -> [String; 2] {
    [
        format!(
            "CREATE TABLE {table} (id INTEGER NOT NULL PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, \
             c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT ''){suffix}"
        ),
        format!("CREATE INDEX k_{table} ON {table} (k)"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_follow_the_backend() {
        use MicroStatementKind as K;
        assert_eq!(
            statement_sql(K::InPkCovered, "sbtest1", 3, Placeholders::Numbered),
            "SELECT id FROM sbtest1 WHERE id IN ($1, $2, $3)"
        );
        assert_eq!(
            statement_sql(K::RangeDistinctC, "sbtest1", 0, Placeholders::Question),
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"
        );
        assert_eq!(
            statement_sql(K::UpdateC, "t", 0, Placeholders::Numbered),
            "UPDATE t SET c = $1 WHERE id = $2"
        );
        assert!(texts_first(K::UpdateC) && !texts_first(K::Insert));
    }
}
