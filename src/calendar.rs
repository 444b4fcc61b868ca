//! The UTC calendar: a wall-clock time broken into its date and time of day, and a date back
//! into days since the Unix epoch (Howard Hinnant's algorithms). `results` writes run.json's
//! RFC 3339 times with it, and the rows' `dateandtime` is formatted from it.

use std::time::SystemTime;

use crate::stats::convert::u64_i64;

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
}
