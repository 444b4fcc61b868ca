//! "Did you mean": the known name nearest to one mistyped (a step, a URL parameter, a matrix
//! key), by edit distance, offered only when it is near enough to be the one meant.

/// Levenshtein distance between two short names, in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The candidate nearest to `name` when it is within a third of `name`'s length (at least
/// one edit, at most three), compared without case; `None` when none is that near.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    let limit = (name.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .map(|c| (edit_distance(&name, &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `; did you mean 'sslmode'?`, or nothing when no candidate is near (see [`nearest`]).
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(name, candidates).map_or_else(String::new, |c| format!("; did you mean '{c}'?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_name_is_offered_and_a_far_one_is_not() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            nearest("qr10O", ["qr100", "qp100", "qr1000"]),
            Some("qr100")
        );
        assert_eq!(nearest("sslmod", ["sslmode", "sslkey"]), Some("sslmode"));
        assert_eq!(nearest("SSLMODE", ["sslmode"]), Some("sslmode"));
        assert_eq!(nearest("zzzzzz", ["sslmode", "sslkey"]), None);
        assert_eq!(
            did_you_mean("l.i3", ["l.i0", "l.x"]),
            "; did you mean 'l.i0'?"
        );
        assert_eq!(did_you_mean("x", ["sslmode"]), "");
    }
}
