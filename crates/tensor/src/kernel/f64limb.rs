//! Exact `Z_{2^w}` matrix products through floating-point GEMM.
//!
//! Every word is split into `L` balanced base-`2^b` digits,
//! `x ≡ Σ_{i<L} d_i · 2^{b·i} (mod 2^w)` with `d_i ∈ [-2^{b-1}, 2^{b-1}]`
//! (take the low `b` bits as a signed number, subtract, shift; the carry out of
//! the top digit vanishes mod `2^w`). Then
//!
//! `A·B ≡ Σ_{i+j<L} 2^{b(i+j)} · (A_i · B_j)  (mod 2^w)`
//!
//! (terms with `i + j >= L` are multiples of `2^{bL}`, and `bL >= w`). Each
//! `A_i·B_j` is an `f64` GEMM. It is exact when every partial sum is an integer
//! of magnitude at most `2^53`: with `|d| <= 2^{b-1}` a product is at most
//! `2^{2b-2}`, so a depth `kc` is exact if `kc · 2^{2b-2} <= 2^53`, i.e.
//! `kc <= 2^{55-2b}`, independent of summation order and FMA use. Longer `k`
//! is cut into such slabs and the integer results are added mod `2^w`.
//!
//! * `u64`: `b = 22`, `L = 3` → 6 GEMMs, slabs of `k <= 2048`;
//! * `u32`: `b = 16`, `L = 2` → 3 GEMMs, slabs of `k <= 2^23`.
#![allow(unsafe_code)]

use rayon::prelude::*;

use super::Word;
use crate::device::MatDims;

/// A digit decomposition: `count` digits of `bits` bits for `word_bits`-bit words.
#[derive(Clone, Copy)]
struct Limbs {
    bits: u32,
    count: usize,
}

/// `c = a · b mod 2^64` through 6 exact `f64` GEMMs.
pub(crate) fn gemm_u64(a: &[u64], b: &[u64], c: &mut [u64], d: MatDims) {
    gemm_limbs(Limbs { bits: 22, count: 3 }, a, b, c, d);
}

/// `c = a · b mod 2^32` through 3 exact `f64` GEMMs.
pub(crate) fn gemm_u32(a: &[u32], b: &[u32], c: &mut [u32], d: MatDims) {
    gemm_limbs(Limbs { bits: 16, count: 2 }, a, b, c, d);
}

/// The balanced digits of every word: `count` matrices shaped like `xs`.
fn split<W: Word>(xs: &[W], l: Limbs) -> Vec<Vec<f64>> {
    let mut out = vec![vec![0f64; xs.len()]; l.count];
    let half = 1i64 << (l.bits - 1);
    let low = (1u64 << l.bits) - 1;
    for (idx, &x) in xs.iter().enumerate() {
        let mut t = x.to_u64();
        for digits in out.iter_mut() {
            // Signed low digit in [-2^(b-1), 2^(b-1)); t - d is divisible by 2^b.
            let d = (((t & low) as i64 + half) & low as i64) - half;
            digits[idx] = d as f64;
            t = t.wrapping_sub(d as u64) >> l.bits;
        }
    }
    out
}

/// Exact `c = a · b mod 2^w` via digit GEMMs, parallel over row blocks of `a`.
fn gemm_limbs<W: Word>(l: Limbs, a: &[W], b: &[W], c: &mut [W], d: MatDims) {
    let (m, k, n) = (d.m, d.k, d.n);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.fill(W::ZERO);
        return;
    }
    let depth = (1usize << (55 - 2 * l.bits)).min(k);
    let bl = split(b, l);
    let rows = m.div_ceil(rayon::current_num_threads()).max(1);
    c.par_chunks_mut(rows * n).zip(a.par_chunks(rows * k)).for_each(|(c_rows, a_rows)| {
        let mr = a_rows.len() / k;
        let al = split(a_rows, l);
        let mut acc = vec![0u64; mr * n];
        let mut t = vec![0f64; mr * n];
        for p0 in (0..k).step_by(depth) {
            let kc = depth.min(k - p0);
            for (i, ai) in al.iter().enumerate() {
                for (j, bj) in bl.iter().enumerate().take(l.count - i) {
                    dgemm(mr, kc, n, &ai[p0..], k, &bj[p0 * n..], n, &mut t);
                    let shift = l.bits * (i + j) as u32;
                    for (s, &x) in acc.iter_mut().zip(&t) {
                        // |x| <= 2^53 is an exact integer, so the cast is exact.
                        *s = s.wrapping_add((x as i64 as u64) << shift);
                    }
                }
            }
        }
        for (o, &s) in c_rows.iter_mut().zip(&acc) {
            *o = W::from_u64(s);
        }
    });
}

/// `c[m×n] = a[m×k] · b[k×n]` in `f64`, with row strides `lda`, `ldb` and `c` dense.
#[allow(clippy::too_many_arguments, reason = "mirrors the BLAS dgemm signature")]
fn dgemm(m: usize, k: usize, n: usize, a: &[f64], lda: usize, b: &[f64], ldb: usize, c: &mut [f64]) {
    assert!(m > 0 && k > 0 && n > 0 && k <= lda && n <= ldb);
    assert!(a.len() >= (m - 1) * lda + k && b.len() >= (k - 1) * ldb + n && c.len() >= m * n);
    let s = |x: usize| x as isize;
    // SAFETY: the assertions above show that every element the routine touches,
    // `a[i·lda + p]`, `b[p·ldb + j]`, `c[i·n + j]` for `i < m, p < k, j < n`, lies
    // inside the slices; `c` is borrowed mutably and does not alias `a` or `b`.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            s(lda),
            1,
            b.as_ptr(),
            s(ldb),
            1,
            0.0,
            c.as_mut_ptr(),
            s(n),
            1,
        );
    }
}
