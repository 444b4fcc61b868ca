//! Numeric conversions in one place, so every lossy one is written once and named.
//!
//! Counts become `f64` for rates and ratios (exact below 2^53, far beyond any count a run
//! makes); computed figures become counts by rounding, with NaN and negatives as 0 and values
//! past the target's range clamped to its maximum.

/// A count as `f64` (exact below 2^53 = 9e15).
#[allow(clippy::cast_precision_loss)]
pub fn count_f64(n: u64) -> f64 {
    n as f64
}

/// A length or index as `f64` (exact below 2^53).
#[allow(clippy::cast_precision_loss)]
pub fn usize_f64(n: usize) -> f64 {
    n as f64
}

/// A signed count as `f64` (exact below ±2^53).
#[allow(clippy::cast_precision_loss)]
pub fn i64_f64(n: i64) -> f64 {
    n as f64
}

/// `x` rounded to the nearest count: NaN and negatives give 0, values past `u64::MAX` give it.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub fn round_to_u64(x: f64) -> u64 {
    // `as` from f64 saturates and maps NaN to 0; the guard makes the intent explicit.
    if x.is_nan() || x <= 0.0 {
        0
    } else {
        x.round() as u64
    }
}

/// `x` rounded to the nearest `usize`, clamped as [`round_to_u64`].
pub fn round_to_usize(x: f64) -> usize {
    usize::try_from(round_to_u64(x)).unwrap_or(usize::MAX)
}

/// A `u64` as `usize`, clamped (only differs on 32-bit hosts).
pub fn u64_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// A `usize` as `u64` (lossless on every host Rust supports).
pub fn usize_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A `u64` as `i64`, clamped at `i64::MAX`.
pub fn u64_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An `i64` as `u64`, negatives as 0.
pub fn i64_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_clamps_nan_negatives_and_overflow() {
        assert_eq!(round_to_u64(f64::NAN), 0);
        assert_eq!(round_to_u64(-3.7), 0);
        assert_eq!(round_to_u64(2.5), 3);
        assert_eq!(round_to_u64(1e30), u64::MAX);
        assert_eq!(round_to_u64(f64::INFINITY), u64::MAX);
        assert_eq!(round_to_usize(41.6), 42);
        assert_eq!(u64_i64(u64::MAX), i64::MAX);
        assert_eq!(i64_u64(-1), 0);
        assert!((count_f64(1 << 40) - 1_099_511_627_776.0).abs() < 0.5);
    }
}
