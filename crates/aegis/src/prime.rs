//! The small prime field of sign-bit extraction: `p` is the largest prime in
//! `(l, 2^{⌈log2 l⌉+1}]` (127 for `l = 64`), so that the transformed list (values `≤ l + 1`)
//! never wraps to 0. Elements travel as one byte each (the convention the paper's measurements
//! fit; 7 bits would do for `p = 127`).

/// `p` for ring width `l` (`2 ≤ l ≤ 64`).
pub fn prime_for(l: u32) -> u32 {
    let top = 1u32 << (32 - (l - 1).leading_zeros() + 1);
    (l + 1..=top).rev().find(|&q| is_prime(q)).unwrap_or(top - 1)
}

fn is_prime(q: u32) -> bool {
    q >= 2 && (2..q).take_while(|d| d * d <= q).all(|d| !q.is_multiple_of(d))
}

/// Arithmetic mod a small prime. Reductions use a precomputed multiplier instead of a
/// hardware division (Lemire, Kaser and Kurz, *Faster remainder by direct computation*): with
/// `M = ⌊(2^64 − 1)/p⌋ + 1`, `a mod p = ⌊((M·a mod 2^64)·p) / 2^64⌋` for every 32-bit `a`.
#[derive(Clone, Copy, Debug)]
pub struct Zp {
    p: u32,
    m: u64,
}

impl Zp {
    /// The field of `p` elements (`2 ≤ p < 2^16`, so sums and products of reduced elements fit
    /// in 32 bits).
    pub fn new(p: u32) -> Zp {
        Zp { p, m: u64::MAX / u64::from(p.max(1)) + 1 }
    }
    /// `p`.
    pub fn p(self) -> u32 {
        self.p
    }
    /// `a mod p` for any 32-bit `a`.
    pub fn reduce(self, a: u32) -> u32 {
        let low = self.m.wrapping_mul(u64::from(a));
        ((u128::from(low) * u128::from(self.p)) >> 64) as u32
    }
    /// `a + b`.
    pub fn add(self, a: u32, b: u32) -> u32 {
        self.reduce(a + b)
    }
    /// `a - b`.
    pub fn sub(self, a: u32, b: u32) -> u32 {
        self.reduce(a + self.p - self.reduce(b))
    }
    /// `a · b`.
    pub fn mul(self, a: u32, b: u32) -> u32 {
        self.reduce(a * b)
    }
    /// A uniform element of `Z_p` from 32 random bits (bias below `p / 2^32`).
    pub fn from_random(self, r: u32) -> u32 {
        ((u64::from(r) * u64::from(self.p)) >> 32) as u32
    }
    /// A uniform element of `Z_p^*`.
    pub fn nonzero_from_random(self, r: u32) -> u32 {
        1 + ((u64::from(r) * u64::from(self.p - 1)) >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_of_the_notes() {
        assert_eq!(prime_for(8), 13);
        assert_eq!(prime_for(16), 31);
        assert_eq!(prime_for(32), 61);
        assert_eq!(prime_for(64), 127);
    }

    #[test]
    fn reduction_by_multiplier_equals_the_remainder() {
        for p in [13, 31, 61, 127] {
            let zp = Zp::new(p);
            let samples = (0..70_000u32).chain([u32::MAX, u32::MAX - 1, 1 << 31, p * p, p * p - 1]);
            for a in samples.chain((0..1000u32).map(|i| i.wrapping_mul(2_654_435_761))) {
                assert_eq!(zp.reduce(a), a % p, "{a} mod {p}");
            }
            assert_eq!(zp.sub(0, p - 1), 1);
            assert_eq!(zp.mul(p - 1, p - 1), 1);
        }
    }
}
