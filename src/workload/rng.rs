//! A small, fast, seeded generator (xoshiro256**, seeded through SplitMix64).
//!
//! Every random value ibench sends comes from one of these, seeded per client and per
//! connection, so the same seed gives the same operation stream.

/// xoshiro256** state.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator for one (run seed, client, connection) triple.
    pub fn for_stream(seed: u64, client: u32, connection: u32) -> Rng {
        let mut sm = seed
            ^ (u64::from(client).wrapping_mul(0xA24B_AED4_963E_E407))
            ^ (u64::from(connection).wrapping_mul(0x9FB2_1C65_1E98_DF25));
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, n)` (Lemire's multiply-shift; the bias for n far below 2^64 is negligible).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `[0, 1)`, from the top 53 bits.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        crate::stats::count_f64(self.next_u64() >> 11) / crate::stats::count_f64(1u64 << 53)
    }

    /// Uniform in `[0, n)` for an `i32` bound (`n < 1` is taken as 1, giving 0).
    #[inline]
    pub fn below_i32(&mut self, n: i32) -> i32 {
        let bound = u64::try_from(n.max(1)).unwrap_or(1);
        // Below a positive i32, so it always fits.
        i32::try_from(self.below(bound)).unwrap_or(0)
    }

    /// Uniform in `[lo, hi]`, inclusive. `lo <= hi` is required.
    #[inline]
    pub fn between_i64(&mut self, lo: i64, hi: i64) -> i64 {
        let span = hi.wrapping_sub(lo).cast_unsigned();
        if span == u64::MAX {
            return self.next_u64().cast_signed();
        }
        lo.wrapping_add(self.below(span + 1).cast_signed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_stream_same_values_and_streams_differ() {
        let a: Vec<u64> = {
            let mut r = Rng::for_stream(7, 1, 0);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::for_stream(7, 1, 0);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::for_stream(7, 1, 1);
            (0..5).map(|_| r.next_u64()).collect()
        };
        let d: Vec<u64> = {
            let mut r = Rng::for_stream(7, 2, 0);
            (0..5).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_ne!(c, d);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::for_stream(1, 0, 0);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let v = r.below(10);
            assert!(v < 10);
            seen[usize::try_from(v).unwrap()] += 1;
        }
        // Each value is expected 1000 times; a fair generator stays far inside these bounds.
        assert!(seen.iter().all(|&n| n > 800 && n < 1200), "{seen:?}");
        for _ in 0..1000 {
            let v = r.between_i64(-3, 3);
            assert!((-3..=3).contains(&v));
        }
        assert_eq!(r.between_i64(5, 5), 5);
    }
}
