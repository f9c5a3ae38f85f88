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

/// Arithmetic mod a small prime.
#[derive(Clone, Copy, Debug)]
pub struct Zp(pub u32);

impl Zp {
    /// `a + b`.
    pub fn add(self, a: u32, b: u32) -> u32 {
        (a + b) % self.0
    }
    /// `a - b`.
    pub fn sub(self, a: u32, b: u32) -> u32 {
        (a + self.0 - b % self.0) % self.0
    }
    /// `a · b`.
    pub fn mul(self, a: u32, b: u32) -> u32 {
        (a * b) % self.0
    }
    /// A uniform element of `Z_p` from 32 random bits (bias below `p / 2^32`).
    pub fn from_random(self, r: u32) -> u32 {
        ((u64::from(r) * u64::from(self.0)) >> 32) as u32
    }
    /// A uniform element of `Z_p^*`.
    pub fn nonzero_from_random(self, r: u32) -> u32 {
        1 + ((u64::from(r) * u64::from(self.0 - 1)) >> 32) as u32
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
}
