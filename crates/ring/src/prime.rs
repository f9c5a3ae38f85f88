//! Primality testing and word-sized modular arithmetic helpers.
//!
//! [`is_prime`] is a deterministic Miller–Rabin test: for `n < 3.3 · 10^24` it is
//! enough to test the twelve prime bases `2, 3, …, 37` (Sorenson & Webster 2015),
//! which covers every `u64`. It is a `const fn`, so [`Fp<P>`](crate::Fp) checks that
//! `P` is prime at compile time.

/// Prime bases that make Miller–Rabin deterministic for all 64-bit inputs.
const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];

/// `a * b mod m` through a 128-bit product (usable in `const` contexts).
const fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    ((a as u128 * b as u128) % m as u128) as u64
}

/// `base^exp mod m` by square-and-multiply.
const fn pow_mod(mut base: u64, mut exp: u64, m: u64) -> u64 {
    let mut acc = 1 % m;
    base %= m;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = mul_mod(acc, base, m);
        }
        base = mul_mod(base, base, m);
        exp >>= 1;
    }
    acc
}

/// Deterministic primality test for any `u64`.
///
/// Write `n - 1 = d · 2^s` with `d` odd. `n` is a strong probable prime to base `a`
/// if `a^d ≡ 1` or `a^(d·2^r) ≡ -1 (mod n)` for some `0 <= r < s`; a composite
/// below `3.3 · 10^24` fails this for at least one of the first twelve primes.
pub const fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    // Small primes (also the bases) and their multiples.
    let mut i = 0;
    while i < BASES.len() {
        let p = BASES[i];
        if n == p {
            return true;
        }
        if n.is_multiple_of(p) {
            return false;
        }
        i += 1;
    }
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    let mut i = 0;
    'bases: while i < BASES.len() {
        let a = BASES[i];
        i += 1;
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        let mut r = 1;
        while r < s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'bases;
            }
            r += 1;
        }
        return false;
    }
    true
}

/// Fast `x mod d` for `x < d · 2^64` with a fixed normalized divisor.
///
/// Möller & Granlund, "Improved division by invariant integers" (2011), Alg. 4:
/// with `β = 2^64`, a divisor `d` whose top bit is set, and the reciprocal
/// `v = floor((β² - 1) / d) - β`, a two-word `⟨u1, u0⟩` with `u1 < d` is divided
/// using one 64×64→128 multiply and at most two corrections.
#[inline(always)]
pub(crate) const fn rem_2by1(u1: u64, u0: u64, d: u64, v: u64) -> u64 {
    // ⟨q1, q0⟩ = v·u1 + ⟨u1, u0⟩ (fits in 128 bits, see the paper).
    let q = (v as u128 * u1 as u128).wrapping_add(((u1 as u128) << 64) | u0 as u128);
    let q1 = ((q >> 64) as u64).wrapping_add(1);
    let q0 = q as u64;
    let mut r = u0.wrapping_sub(q1.wrapping_mul(d));
    if r > q0 {
        r = r.wrapping_add(d);
    }
    if r >= d {
        r = r.wrapping_sub(d);
    }
    r
}

/// The Möller–Granlund reciprocal `floor((2^128 - 1) / d) - 2^64` of a normalized `d`.
pub(crate) const fn reciprocal(d: u64) -> u64 {
    (u128::MAX / d as u128 - (1u128 << 64)) as u64
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn small_numbers_match_trial_division() {
        let naive = |n: u64| n >= 2 && (2..n).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d));
        for n in 0..5000 {
            assert_eq!(is_prime(n), naive(n), "n = {n}");
        }
    }

    #[test]
    fn known_large_values() {
        assert!(is_prime((1 << 61) - 1));
        assert!(is_prime(0xFFFF_FFFF_0000_0001));
        assert!(is_prime(0x0FFF_FFFF_FFFC_0001));
        assert!(is_prime(u64::MAX - 58));
        assert!(!is_prime(0x0FFF_FFFF_0000_0001));
        assert!(!is_prime(u64::MAX));
        // Strong pseudoprime to bases 2..=31 (needs base 37).
        assert!(!is_prime(3_825_123_056_546_413_051));
        // Carmichael numbers.
        assert!(!is_prime(561));
        assert!(!is_prime(3_215_031_751));
    }

    #[test]
    fn rem_2by1_matches_u128_rem() {
        for &p in &[3u64, 127, (1 << 61) - 1, 0xFFFF_FFFF_0000_0001, u64::MAX - 58] {
            let s = p.leading_zeros();
            let d = p << s;
            let v = reciprocal(d);
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            for _ in 0..10_000 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let a = x % p;
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let b = x % p;
                for (a, b) in [(a, b), (p - 1, p - 1), (0, b), (p - 1, 1)] {
                    let prod = (a as u128 * b as u128) << s;
                    let r = rem_2by1((prod >> 64) as u64, prod as u64, d, v) >> s;
                    assert_eq!(r as u128, a as u128 * b as u128 % p as u128, "p={p} a={a} b={b}");
                }
            }
        }
    }
}
