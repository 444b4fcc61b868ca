//! The statistics of `ibench check`, as pure functions: the median, the Mann-Whitney U rank
//! test (exact for small samples, the normal approximation with tie correction above), and a
//! seeded bootstrap confidence interval of the ratio of medians.

use serde::Serialize;

use crate::stats::convert::{count_f64, round_to_usize, u64_usize, usize_f64, usize_u64};
use crate::workload::rng::Rng;

/// Above this many ways to split the pooled sample, the U test uses the normal approximation
/// instead of counting every split (10 + 10 repeats is 184,756 splits, still exact).
pub const EXACT_SPLITS_MAX: u64 = 200_000;

/// Bootstrap resamples per interval.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// The bootstrap's seed: the same samples always give the same interval.
pub const BOOTSTRAP_SEED: u64 = 0x1b_e4c8;

/// The median (the mean of the middle two for an even count); `None` for no value: the one
/// median of the project (`results::probe::median`), over a slice.
pub fn median(values: &[f64]) -> Option<f64> {
    crate::results::probe::median(values.to_vec())
}

/// How the p-values of a U test were computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UMethod {
    /// Every split of the pooled sample counted (ties as mid-ranks).
    Exact,
    /// The normal approximation, with the tie correction of the variance and a continuity
    /// correction of 0.5.
    Normal,
}

/// The Mann-Whitney U test of `y` against `x`, both one-sided p-values.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct UTest {
    /// U of `y`: the pairs `(x_i, y_j)` with `y_j > x_i`, a tie counting one half.
    pub u: f64,
    /// P(U <= u) under the null hypothesis: small when `y` tends to be below `x`.
    pub p_lower: f64,
    /// P(U >= u) under the null hypothesis: small when `y` tends to be above `x`.
    pub p_higher: f64,
    /// How the p-values were computed.
    pub method: UMethod,
}

/// Mid-ranks (1-based) of `pooled`, ties sharing the mean of their ranks; and the tie groups'
/// sizes.
fn mid_ranks(pooled: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&a, &b| pooled[a].total_cmp(&pooled[b]));
    let mut ranks = vec![0.0; pooled.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && pooled[order[j + 1]] == pooled[order[i]] {
            j += 1;
        }
        let rank = usize_f64(i + j) / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        ties.push(j - i + 1);
        i = j + 1;
    }
    (ranks, ties)
}

/// n choose k, saturating.
fn choose(n: u64, k: u64) -> u64 {
    let k = k.min(n - k.min(n));
    (0..k).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// Mann-Whitney U of `y` against `x`; `None` when either is empty.
pub fn mann_whitney(x: &[f64], y: &[f64]) -> Option<UTest> {
    if x.is_empty() || y.is_empty() {
        return None;
    }
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, ties) = mid_ranks(&pooled);
    let (nx, ny) = (x.len(), y.len());
    let shift = usize_f64(ny * (ny + 1)) / 2.0;
    let u = ranks[nx..].iter().sum::<f64>() - shift;
    let n = usize_u64(nx + ny);
    if choose(n, usize_u64(ny)) <= EXACT_SPLITS_MAX {
        let (mut below, mut above, mut all) = (0u64, 0u64, 0u64);
        let eps = 1e-9;
        each_rank_sum(&ranks, ny, &mut |sum| {
            let v = sum - shift;
            all += 1;
            below += u64::from(v <= u + eps);
            above += u64::from(v >= u - eps);
        });
        let share = |k: u64| count_f64(k) / count_f64(all);
        return Some(UTest {
            u,
            p_lower: share(below),
            p_higher: share(above),
            method: UMethod::Exact,
        });
    }
    let (fx, fy, fn_) = (usize_f64(nx), usize_f64(ny), count_f64(n));
    let tie_term: f64 = ties
        .iter()
        .map(|&t| {
            let t = usize_f64(t);
            t * t * t - t
        })
        .sum::<f64>()
        / (fn_ * (fn_ - 1.0));
    let var = fx * fy / 12.0 * ((fn_ + 1.0) - tie_term);
    let mean = fx * fy / 2.0;
    if var <= 0.0 {
        // Every value is the same: nothing tends either way.
        return Some(UTest {
            u,
            p_lower: 1.0,
            p_higher: 1.0,
            method: UMethod::Normal,
        });
    }
    let sd = var.sqrt();
    Some(UTest {
        u,
        p_lower: normal_cdf((u - mean + 0.5) / sd),
        p_higher: 1.0 - normal_cdf((u - mean - 0.5) / sd),
        method: UMethod::Normal,
    })
}

/// Calls `f` with the rank sum of every way to pick `k` of `ranks`.
fn each_rank_sum(ranks: &[f64], k: usize, f: &mut dyn FnMut(f64)) {
    fn walk(ranks: &[f64], from: usize, left: usize, sum: f64, f: &mut dyn FnMut(f64)) {
        if left == 0 {
            f(sum);
            return;
        }
        for i in from..=ranks.len() - left {
            walk(ranks, i + 1, left - 1, sum + ranks[i], f);
        }
    }
    walk(ranks, 0, k, 0.0, f);
}

/// The standard normal distribution function.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Numerical Recipes' `erfcc`, relative error below
/// 1.2e-7 everywhere).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// A two-sided percentile bootstrap interval at `level` (0.95) of median(y) / median(x):
/// each side resampled with replacement, [`BOOTSTRAP_RESAMPLES`] times, from a fixed seed.
/// `None` when a side is empty or a median is not above 0.
pub fn bootstrap_ratio_ci(x: &[f64], y: &[f64], level: f64) -> Option<(f64, f64)> {
    if x.is_empty() || y.is_empty() {
        return None;
    }
    let mut rng = Rng::for_stream(BOOTSTRAP_SEED, 0, 0);
    let resample = |v: &[f64], rng: &mut Rng| -> Option<f64> {
        let pick: Vec<f64> = (0..v.len())
            .map(|_| v[u64_usize(rng.below(usize_u64(v.len())))])
            .collect();
        median(&pick)
    };
    let mut ratios = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        let mx = resample(x, &mut rng)?;
        let my = resample(y, &mut rng)?;
        if mx > 0.0 {
            ratios.push(my / mx);
        }
    }
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - level.clamp(0.0, 1.0)) / 2.0;
    let at = |q: f64| {
        let i = round_to_usize(q * usize_f64(ratios.len() - 1));
        ratios[i.min(ratios.len() - 1)]
    };
    Some((at(tail), at(1.0 - tail)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn three_against_three_fully_separated_is_one_in_twenty() {
        // Every y below every x: U = 0, the smallest of the 20 splits.
        let t = mann_whitney(&[10.0, 11.0, 12.0], &[7.0, 8.0, 9.0]).expect("a test");
        assert_eq!(t.method, UMethod::Exact);
        assert!(close(t.u, 0.0));
        assert!(close(t.p_lower, 1.0 / 20.0), "{t:?}");
        assert!(close(t.p_higher, 1.0));
        // One overlap: U = 1, two splits of 20 at or below.
        let t = mann_whitney(&[10.0, 11.0, 12.0], &[7.0, 8.0, 10.5]).expect("a test");
        assert!(close(t.u, 1.0));
        assert!(close(t.p_lower, 2.0 / 20.0), "{t:?}");
    }

    #[test]
    fn ties_count_one_half_and_identical_samples_tend_nowhere() {
        let t = mann_whitney(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).expect("a test");
        assert!(close(t.u, 4.5));
        assert!(t.p_lower > 0.5 && t.p_higher > 0.5, "{t:?}");
        let t = mann_whitney(&[5.0; 4], &[5.0; 4]).expect("a test");
        assert!(close(t.p_lower, 1.0) && close(t.p_higher, 1.0), "{t:?}");
    }

    #[test]
    fn large_samples_use_the_normal_approximation_close_to_the_exact_value() {
        let x: Vec<f64> = (0..15).map(f64::from).collect();
        let y: Vec<f64> = (0..15).map(|i| f64::from(i) - 6.5).collect();
        let t = mann_whitney(&x, &y).expect("a test");
        assert_eq!(t.method, UMethod::Normal);
        // U = 36 of 225; with the continuity correction z = -76 / 24.11 = -3.15.
        assert!(close(t.u, 36.0), "{t:?}");
        assert!(t.p_lower > 0.0005 && t.p_lower < 0.0012, "{t:?}");
        assert!(t.p_higher > 0.99);
    }

    #[test]
    fn the_normal_distribution_function() {
        assert!(close(normal_cdf(0.0), 0.5));
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-4);
        assert!((normal_cdf(-2.576) - 0.005).abs() < 1e-4);
    }

    #[test]
    fn the_bootstrap_interval_is_deterministic_and_holds_the_ratio() {
        let x = [100.0, 102.0, 98.0, 101.0, 99.0];
        let y = [80.0, 82.0, 79.0, 81.0, 78.0];
        let a = bootstrap_ratio_ci(&x, &y, 0.95).expect("an interval");
        assert_eq!(Some(a), bootstrap_ratio_ci(&x, &y, 0.95));
        assert!(a.0 <= 0.8 && 0.8 <= a.1, "{a:?}");
        assert!(a.1 < 0.85, "{a:?}");
        assert_eq!(bootstrap_ratio_ci(&[], &y, 0.95), None);
    }

    #[test]
    fn choose_counts_splits() {
        assert_eq!(choose(6, 3), 20);
        assert_eq!(choose(20, 10), 184_756);
        assert_eq!(choose(5, 0), 1);
    }
}
