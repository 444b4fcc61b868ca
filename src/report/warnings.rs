//! The warnings said above the tables when the runs were not made alike: their servers'
//! build flags differ, or some connected over TLS and others did not.

use super::model::RunRow;

/// `Build flags differ: -O2, lz4 (a, b); -Os, no lz4 (c): ...` when the runs that report their
/// flags do not all share them.
/// A line when the runs' builds differ in flags, naming the runs by their keys.
pub(super) fn build_warning(rows: &[RunRow]) -> Option<String> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in rows {
        let Some(flags) = r.build_flags.as_deref() else {
            continue;
        };
        match groups.iter_mut().find(|(f, _)| *f == flags) {
            Some((_, keys)) => keys.push(&r.key),
            None => groups.push((flags, vec![&r.key])),
        }
    }
    (groups.len() > 1).then(|| {
        let parts: Vec<String> = groups
            .iter()
            .map(|(flags, labels)| format!("{flags} ({})", labels.join(", ")))
            .collect();
        format!(
            "Build flags differ: {}. A build difference alone moves every figure: compare builds made with the same flags.",
            parts.join("; ")
        )
    })
}

/// A line when some runs used TLS and others did not, naming the runs by their keys.
pub(super) fn tls_warning(rows: &[RunRow]) -> Option<String> {
    let (tls, plain): (Vec<&RunRow>, Vec<&RunRow>) = rows.iter().partition(|r| r.tls.is_some());
    (!tls.is_empty() && !plain.is_empty()).then(|| {
        let keys = |rs: &[&RunRow]| {
            rs.iter()
                .map(|r| r.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "TLS differs: {} connected over TLS, {} without. Encryption costs CPU on both sides \
             of every statement: compare runs made the same way.",
            keys(&tls),
            keys(&plain)
        )
    })
}
