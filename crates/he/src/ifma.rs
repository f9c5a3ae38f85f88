//! Element-wise modular arithmetic for primes below 2^50 with AVX-512 IFMA (`vpmadd52luq`,
//! `vpmadd52huq`: the low and high 52 bits of eight 52×52-bit products per instruction), where
//! the processor has it: the two loops of dropping a prime (`rns.rs`), which the portable code
//! runs one 64×64 → 128-bit product at a time.
//!
//! With `β = 2^52` and `q < 2^50`:
//!
//! - **Reduction** of `v < β`: `k = ⌊v·⌊β/q⌋/β⌋` falls short of `⌊v/q⌋` by at most 2, so
//!   `v − k·q ∈ [0, 3q)` (exact in 64-bit lanes) and two conditional subtractions finish.
//! - **Shoup's product** by a constant `c < q`, with `c' = ⌊c·β/q⌋`: for `t < q`,
//!   `k = ⌊t·c'/β⌋` is `⌊t·c/q⌋` or one less, so `t·c − k·q ∈ [0, 2q)`; it is computed modulo
//!   `β` from the low halves of `t·c` and `k·q` (exact, as `2q < β`), then one conditional
//!   subtraction.
//!
//! Each function returns `false` (and does nothing) where the processor lacks the features or
//! a modulus is out of range; the caller then runs its portable loop.
#![allow(unsafe_code)]

/// `β = 2^52`, the width of the IFMA products.
const BETA_BITS: u32 = 52;

/// The largest modulus (exclusive) the kernels take.
pub(crate) const MAX_MODULUS: u64 = 1 << 50;

#[cfg(target_arch = "x86_64")]
fn has_ifma() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512ifma")
}

/// `r[k] ← v[k] − (v[k] > q_j/2 ? q_j : 0) mod q` for `v[k] < q_j < 2^52` and `q < 2^50`: the
/// residue mod `q` of the centred value of `v[k]` modulo another prime `q_j`.
pub(crate) fn reduce_centred(v: &[u64], r: &mut [u64], q: u64, qj: u64) -> bool {
    debug_assert!(v.iter().all(|&x| x < qj));
    #[cfg(target_arch = "x86_64")]
    if q < MAX_MODULUS && qj < 1 << BETA_BITS && v.len() == r.len() && has_ifma() {
        // SAFETY: the processor has the features the function is compiled for (checked above).
        unsafe { x86::reduce_centred(v, r, q, qj / 2, qj % q) };
        return true;
    }
    let _ = (v, r, q, qj);
    false
}

/// `x[k] ← (x[k] − r[k])·c mod q` for `x[k], r[k], c < q < 2^50`.
pub(crate) fn subtract_and_scale(x: &mut [u64], r: &[u64], q: u64, c: u64) -> bool {
    #[cfg(target_arch = "x86_64")]
    if q < MAX_MODULUS && c < q && x.len() == r.len() && has_ifma() {
        // SAFETY: the processor has the features the function is compiled for (checked above).
        unsafe { x86::subtract_and_scale(x, r, q, c) };
        return true;
    }
    let _ = (x, r, q, c);
    false
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m512i, _mm512_and_si512, _mm512_cmpge_epu64_mask, _mm512_cmpgt_epu64_mask, _mm512_loadu_si512,
        _mm512_madd52hi_epu64, _mm512_madd52lo_epu64, _mm512_mask_add_epi64, _mm512_mask_sub_epi64,
        _mm512_set1_epi64, _mm512_setzero_si512, _mm512_storeu_si512, _mm512_sub_epi64,
    };

    use super::BETA_BITS;

    /// `a − q` in the lanes where `a ≥ q`.
    #[target_feature(enable = "avx512f")]
    fn reduce_once(a: __m512i, q: __m512i) -> __m512i {
        _mm512_mask_sub_epi64(a, _mm512_cmpge_epu64_mask(a, q), a, q)
    }

    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(super) fn reduce_centred(v: &[u64], r: &mut [u64], q: u64, half: u64, s: u64) {
        let zero = _mm512_setzero_si512();
        let qv = _mm512_set1_epi64(q as i64);
        let q2 = _mm512_set1_epi64((2 * q) as i64);
        let barrett = _mm512_set1_epi64(((1u128 << BETA_BITS) / u128::from(q)) as i64);
        let halfv = _mm512_set1_epi64(half as i64);
        let q_minus_s = _mm512_set1_epi64((q - s) as i64);
        let chunks = v.len() / 8;
        for i in 0..chunks {
            // SAFETY: `8i + 8 ≤ len` for both slices (equal lengths); unaligned loads/stores.
            unsafe {
                let x = _mm512_loadu_si512(v.as_ptr().add(8 * i).cast());
                let k = _mm512_madd52hi_epu64(zero, x, barrett);
                let m = _mm512_sub_epi64(x, _mm512_madd52lo_epu64(zero, k, qv));
                let m = reduce_once(reduce_once(m, q2), qv);
                // Above half: m − s ≡ m + (q − s), then one subtraction.
                let above = _mm512_cmpgt_epu64_mask(x, halfv);
                let out = reduce_once(_mm512_mask_add_epi64(m, above, m, q_minus_s), qv);
                _mm512_storeu_si512(r.as_mut_ptr().add(8 * i).cast(), out);
            }
        }
        for k in 8 * chunks..v.len() {
            let m = v[k] % q;
            r[k] = if v[k] > half { (m + q - s) % q } else { m };
        }
    }

    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(super) fn subtract_and_scale(x: &mut [u64], r: &[u64], q: u64, c: u64) {
        let zero = _mm512_setzero_si512();
        let qv = _mm512_set1_epi64(q as i64);
        let cv = _mm512_set1_epi64(c as i64);
        let c_shoup = _mm512_set1_epi64(((u128::from(c) << BETA_BITS) / u128::from(q)) as i64);
        let low = _mm512_set1_epi64(((1u64 << BETA_BITS) - 1) as i64);
        let chunks = x.len() / 8;
        for i in 0..chunks {
            // SAFETY: `8i + 8 ≤ len` for both slices (equal lengths); unaligned loads/stores.
            unsafe {
                let a = _mm512_loadu_si512(x.as_ptr().add(8 * i).cast());
                let b = _mm512_loadu_si512(r.as_ptr().add(8 * i).cast());
                // t = a − b mod q: add q where a < b (the difference wrapped).
                let t = _mm512_sub_epi64(a, b);
                let t = _mm512_mask_add_epi64(t, _mm512_cmpgt_epu64_mask(b, a), t, qv);
                let k = _mm512_madd52hi_epu64(zero, t, c_shoup);
                let tc = _mm512_madd52lo_epu64(zero, t, cv);
                let kq = _mm512_madd52lo_epu64(zero, k, qv);
                let out = reduce_once(_mm512_and_si512(_mm512_sub_epi64(tc, kq), low), qv);
                _mm512_storeu_si512(x.as_mut_ptr().add(8 * i).cast(), out);
            }
        }
        for k in 8 * chunks..x.len() {
            let t = (x[k] + q - r[k]) % q;
            x[k] = ((u128::from(t) * u128::from(c)) % u128::from(q)) as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(state: &mut u64) -> u64 {
        *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *state >> 11
    }

    /// Both kernels against `%` on 128-bit integers, at random values and at the edges (0,
    /// q − 1, values around `half`), for moduli from 2^30 to just below 2^50; skipped with a
    /// message where the processor lacks IFMA.
    #[test]
    fn the_kernels_match_plain_modular_arithmetic() {
        #[cfg(target_arch = "x86_64")]
        if !has_ifma() {
            eprintln!("skipped: this processor has no AVX-512 IFMA (the portable loops run instead)");
            return;
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            eprintln!("skipped: not x86-64");
            return;
        }
        let mut state = 7u64;
        for q in [(1u64 << 30) + 3, (1 << 36) - 5, (1 << 37) - 25, (1 << 45) + 59, MAX_MODULUS - 27] {
            for qj in [q - 2, (1 << 37) - 25, (1 << 50) - 27, (1 << 52) - 47] {
                let (half, s) = (qj / 2, qj % q);
                let mut v: Vec<u64> = (0..67).map(|_| lcg(&mut state) % qj).collect();
                v.extend([0, 1, half - 1, half, half + 1, qj - 1]);
                let mut r = vec![0; v.len()];
                assert!(reduce_centred(&v, &mut r, q, qj));
                for (k, &x) in v.iter().enumerate() {
                    let want = if x > half { (x % q + q - s) % q } else { x % q };
                    assert_eq!(r[k], want, "reduce {x} mod {q} (q_j {qj})");
                }
            }
            for c in [0, 1, q - 1, lcg(&mut state) % q] {
                let mut x: Vec<u64> = (0..75).map(|_| lcg(&mut state) % q).collect();
                let r: Vec<u64> =
                    (0..75).map(|k| if k % 5 == 0 { x[k] } else { lcg(&mut state) % q }).collect();
                x[1] = 0;
                x[2] = q - 1;
                let before = x.clone();
                assert!(subtract_and_scale(&mut x, &r, q, c));
                for k in 0..x.len() {
                    let t = (before[k] + q - r[k]) % q;
                    assert_eq!(
                        x[k],
                        ((u128::from(t) * u128::from(c)) % u128::from(q)) as u64,
                        "mod {q}, c {c}"
                    );
                }
            }
        }
        // Out of range: nothing done.
        let mut r = [0u64; 8];
        assert!(!reduce_centred(&[1u64 << 53; 8], &mut r, 97, 1 << 54));
        assert!(!subtract_and_scale(&mut [1u64; 8], &[0; 8], MAX_MODULUS + 1, 1));
    }
}
