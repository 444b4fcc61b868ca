//! The statistics of `ibench check` that are not the decision rule (which is
//! `crate::stats::decision`): the median the outputs show per side.

/// The median (the mean of the middle two for an even count); `None` for no value: the one
/// median of the project (`results::probe::median`), over a slice.
pub fn median(values: &[f64]) -> Option<f64> {
    crate::results::probe::median(values.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}
