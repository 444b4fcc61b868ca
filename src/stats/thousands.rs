//! Numbers written for people: digits grouped in thousands (`1,234,567`), for the progress
//! lines as the run goes and for the reports.

/// `n` with its digits grouped in thousands: `1234567` is `1,234,567`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `v` rounded to a whole number and grouped in thousands: `-1234.6` is `-1,235`.
pub fn group_f(v: f64) -> String {
    let whole = super::convert::round_to_u64(v.abs().round());
    if v < 0.0 {
        format!("-{}", group(whole))
    } else {
        group(whole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(group_f(1234.4), "1,234");
        assert_eq!(group_f(-1234.6), "-1,235");
    }
}
