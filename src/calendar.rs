//! The UTC calendar: a wall-clock time broken into its date and time of day, and a date back
//! into days since the Unix epoch (Howard Hinnant's algorithms). `results` writes run.json's
//! RFC 3339 times with it, and the rows' `dateandtime` is formatted from it. Also a duration
//! written for people ([`duration_text`]), in one of two styles.

use std::time::SystemTime;

use crate::stats::convert::{round_to_u64, u64_i64};

/// How [`duration_text`] writes a duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurationStyle {
    /// In words, for a line people read: `45 s`, `3 min 05 s`, `2 h 10 min`.
    Words,
    /// Compact, for a table's column: `12s`, `3m05s`, `1h02m`, `2d01h00m`.
    Compact,
}

/// `seconds` (rounded to whole ones; below 0 is 0) for people, in `style`.
pub fn duration_text(seconds: f64, style: DurationStyle) -> String {
    let s = round_to_u64(seconds.max(0.0).round());
    match style {
        DurationStyle::Words => match s {
            0..60 => format!("{s} s"),
            60..3600 => format!("{} min {:02} s", s / 60, s % 60),
            _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
        },
        DurationStyle::Compact => {
            let (d, h, m, sec) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
            if d > 0 {
                format!("{d}d{h:02}h{m:02}m")
            } else if h > 0 {
                format!("{h}h{m:02}m")
            } else if m > 0 {
                format!("{m}m{sec:02}s")
            } else {
                format!("{sec}s")
            }
        }
    }
}

/// Break a wall-clock time into UTC (year, month, day, hour, minute, second, microsecond).
pub fn civil_from_system_time(t: SystemTime) -> (i64, u32, u32, u32, u32, u32, u32) {
    let since = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = u64_i64(since.as_secs());
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Each part lies in its calendar range, so it fits a u32.
    let part = |v: i64| u32::try_from(v).unwrap_or(0);
    (
        year,
        part(month),
        part(day),
        part(sod / 3600),
        part((sod / 60) % 60),
        part(sod % 60),
        since.subsec_micros(),
    )
}

/// Days since the Unix epoch of a UTC date (`month` 1 to 12, `day` 1 to 31), negative before
/// 1970.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Howard Hinnant's days-from-civil algorithm.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn civil_dates_and_days_agree() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456);
        assert_eq!(
            civil_from_system_time(t),
            (2023, 11, 14, 22, 13, 20, 123_456)
        );
        assert_eq!(days_from_civil(2023, 11, 14), 1_700_000_000 / 86_400);
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 2, 29), 951_782_400 / 86_400);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }

    #[test]
    fn durations_read_as_people_say_them() {
        let words = |s| duration_text(s, DurationStyle::Words);
        assert_eq!(words(-3.0), "0 s");
        assert_eq!(words(0.4), "0 s");
        assert_eq!(words(59.4), "59 s");
        assert_eq!(words(65.0), "1 min 05 s");
        assert_eq!(words(7805.0), "2 h 10 min");
        assert_eq!(words(2.0 * 86_400.0 + 3600.0), "49 h 00 min");
        let compact = |s| duration_text(s, DurationStyle::Compact);
        assert_eq!(compact(12.4), "12s");
        assert_eq!(compact(185.0), "3m05s");
        assert_eq!(compact(3720.0), "1h02m");
        assert_eq!(compact(2.0 * 86_400.0 + 3600.0), "2d01h00m");
    }
}
