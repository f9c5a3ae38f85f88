//! The polynomial product under [`crate::Gr`]'s multiplication with AVX-512 (`vpmullq`, eight
//! 64-bit products per instruction), where the processor has it.
//!
//! One Karatsuba level over halves of 32 coefficients, each half product by columns: the
//! output lanes `k .. k + 8` are `Σ_i a_i·b_{k−i}`, one register each, reading `b` through a
//! copy with 32 zeros on either side (so `b_{k−i}` outside `0..32` reads 0). The three half
//! products take 468 lane-wise products where the 64-coefficient columns took 568, and stay in
//! registers until the halves are combined (about 10 % less time per `Gr::mul` on a Zen 4
//! core). The loads and stores read and write 8 words inside arrays whose bounds the slicing
//! checks.
#![allow(unsafe_code)]
#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{
    __m512i, _mm512_add_epi64, _mm512_loadu_si512, _mm512_mullo_epi64, _mm512_set1_epi64,
    _mm512_setzero_si512, _mm512_storeu_si512, _mm512_sub_epi64,
};

use crate::galois::GR_DEGREE;
use crate::galois_inner::{Form, Outer, PIECE, PIECES};

/// Whether the processor has AVX-512 F and DQ (`vpmullq`).
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512dq")
}

/// `acc += v` (or `acc −= v` with `SUB`) coefficient-wise, if the processor has AVX-512 F and DQ
/// (else `false`, nothing done): eight words per instruction, where the portable loop, built
/// for the baseline x86-64, adds two. The sums of table entries in aegis's verification
/// (millions of additions per reduction) are most of what it does.
pub(crate) fn add_assign<const SUB: bool>(acc: &mut [u64; GR_DEGREE], v: &[u64; GR_DEGREE]) -> bool {
    if has_avx512() {
        // SAFETY: the processor has the features `add_assign_avx512` is compiled for (checked
        // just above).
        unsafe { add_assign_avx512::<SUB>(acc, v) };
        true
    } else {
        false
    }
}

#[target_feature(enable = "avx512f,avx512dq")]
fn add_assign_avx512<const SUB: bool>(acc: &mut [u64; GR_DEGREE], v: &[u64; GR_DEGREE]) {
    for k in (0..GR_DEGREE).step_by(8) {
        // SAFETY: `k + 8 ≤ 64`: both 8-word windows are in bounds; loads and stores unaligned.
        unsafe {
            let a = _mm512_loadu_si512(acc.as_ptr().add(k).cast());
            let x = _mm512_loadu_si512(v.as_ptr().add(k).cast());
            let r = if SUB { _mm512_sub_epi64(a, x) } else { _mm512_add_epi64(a, x) };
            _mm512_storeu_si512(acc.as_mut_ptr().add(k).cast(), r);
        }
    }
}

/// `Σ_k table[picks[k]]` ([`crate::Gr::sum_picked`]) with the sum in eight registers, if the
/// processor has AVX-512 F and DQ (else `None`). An index past the table panics, as slicing does.
pub(crate) fn sum_picked(table: &[crate::Gr], picks: &[u32]) -> Option<[u64; GR_DEGREE]> {
    let mut out = [0u64; GR_DEGREE];
    sum_picked_into(&mut out, table, picks).then_some(out)
}

/// [`sum_picked`] written into `out` (no 512-byte temporary to copy), if the processor has
/// AVX-512 F and DQ (else `false`, nothing written).
pub(crate) fn sum_picked_into(out: &mut [u64; GR_DEGREE], table: &[crate::Gr], picks: &[u32]) -> bool {
    if has_avx512() {
        // SAFETY: the processor has the features `sum_picked_into_avx512` is compiled for
        // (checked just above).
        unsafe { sum_picked_into_avx512(out, table, picks) };
        true
    } else {
        false
    }
}

#[target_feature(enable = "avx512f,avx512dq")]
fn sum_picked_into_avx512(out: &mut [u64; GR_DEGREE], table: &[crate::Gr], picks: &[u32]) {
    let mut acc = [_mm512_setzero_si512(); GR_DEGREE / 8];
    for &p in picks {
        let v = &table[p as usize].0;
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: `8k + 8 ≤ 64`: the 8-word window is inside `v`; the load is unaligned.
            *a = _mm512_add_epi64(*a, unsafe { _mm512_loadu_si512(v.as_ptr().add(8 * k).cast()) });
        }
    }
    for (k, a) in acc.iter().enumerate() {
        // SAFETY: `8k + 8 ≤ 64`: the window is inside `out`; the store is unaligned.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(8 * k).cast(), *a) };
    }
}

/// `acc += v·s` coefficient-wise, if the processor has AVX-512 F and DQ (else `false`, nothing
/// done): eight products per instruction where the portable loop multiplies one at a time.
pub(crate) fn add_scaled(acc: &mut [u64; GR_DEGREE], v: &[u64; GR_DEGREE], s: u64) -> bool {
    if has_avx512() {
        // SAFETY: the processor has both features `add_scaled_avx512` is compiled for
        // (checked just above).
        unsafe { add_scaled_avx512(acc, v, s) };
        true
    } else {
        false
    }
}

#[target_feature(enable = "avx512f,avx512dq")]
fn add_scaled_avx512(acc: &mut [u64; GR_DEGREE], v: &[u64; GR_DEGREE], s: u64) {
    let sv = _mm512_set1_epi64(s as i64);
    for k in (0..GR_DEGREE).step_by(8) {
        // SAFETY: `k + 8 ≤ 64`: both 8-word windows are in bounds; loads and stores unaligned.
        unsafe {
            let a = _mm512_loadu_si512(acc.as_ptr().add(k).cast());
            let x = _mm512_loadu_si512(v.as_ptr().add(k).cast());
            let sum = _mm512_add_epi64(a, _mm512_mullo_epi64(x, sv));
            _mm512_storeu_si512(acc.as_mut_ptr().add(k).cast(), sum);
        }
    }
}

/// `acc += Σ_i vs_i·s_i` ([`crate::Gr::dot_words`]) if the processor has AVX-512 F and DQ (else
/// `false`, nothing done).
pub(crate) fn dot_words(acc: &mut [u64; GR_DEGREE], vs: &[crate::Gr], s: &[u64]) -> bool {
    if has_avx512() {
        // SAFETY: the processor has both features `dot_words_avx512` is compiled for (checked
        // just above).
        unsafe { dot_words_avx512(acc, vs, s) };
        true
    } else {
        false
    }
}

/// The sum in eight registers (64 coefficients) over every term: per term eight loads of
/// `v`, eight products and eight sums, no store.
#[target_feature(enable = "avx512f,avx512dq")]
fn dot_words_avx512(acc: &mut [u64; GR_DEGREE], vs: &[crate::Gr], s: &[u64]) {
    let mut regs = [_mm512_setzero_si512(); GR_DEGREE / 8];
    for (v, &x) in vs.iter().zip(s) {
        if x == 0 {
            continue;
        }
        let sv = _mm512_set1_epi64(x as i64);
        for (r, k) in regs.iter_mut().zip((0..GR_DEGREE).step_by(8)) {
            // SAFETY: `k + 8 ≤ 64`: the 8-word window of `v` is in bounds; loaded unaligned.
            let w = unsafe { _mm512_loadu_si512(v.0.as_ptr().add(k).cast()) };
            *r = _mm512_add_epi64(*r, _mm512_mullo_epi64(w, sv));
        }
    }
    for (r, k) in regs.iter().zip((0..GR_DEGREE).step_by(8)) {
        // SAFETY: `k + 8 ≤ 64`: both 8-word windows of `acc` are in bounds; unaligned.
        unsafe {
            let a = _mm512_loadu_si512(acc.as_ptr().add(k).cast());
            _mm512_storeu_si512(acc.as_mut_ptr().add(k).cast(), _mm512_add_epi64(a, *r));
        }
    }
}

/// `accs_i += v·s_i` ([`crate::Gr::add_scaled_each`]) if the processor has AVX-512 F and DQ
/// (else `false`, nothing done).
pub(crate) fn add_scaled_each(accs: &mut [crate::Gr], v: &[u64; GR_DEGREE], s: &[u64]) -> bool {
    if has_avx512() {
        // SAFETY: the processor has both features `add_scaled_each_avx512` is compiled for
        // (checked just above).
        unsafe { add_scaled_each_avx512(accs, v, s) };
        true
    } else {
        false
    }
}

/// `v` in eight registers over every term: per term eight loads and stores of the
/// accumulator, eight products and eight sums.
#[target_feature(enable = "avx512f,avx512dq")]
fn add_scaled_each_avx512(accs: &mut [crate::Gr], v: &[u64; GR_DEGREE], s: &[u64]) {
    let mut vr = [_mm512_setzero_si512(); GR_DEGREE / 8];
    for (r, k) in vr.iter_mut().zip((0..GR_DEGREE).step_by(8)) {
        // SAFETY: `k + 8 ≤ 64`: the 8-word window of `v` is in bounds; loaded unaligned.
        *r = unsafe { _mm512_loadu_si512(v.as_ptr().add(k).cast()) };
    }
    for (acc, &x) in accs.iter_mut().zip(s) {
        if x == 0 {
            continue;
        }
        let sv = _mm512_set1_epi64(x as i64);
        for (r, k) in vr.iter().zip((0..GR_DEGREE).step_by(8)) {
            // SAFETY: `k + 8 ≤ 64`: both 8-word windows of `acc` are in bounds; unaligned.
            unsafe {
                let a = _mm512_loadu_si512(acc.0.as_ptr().add(k).cast());
                let sum = _mm512_add_epi64(a, _mm512_mullo_epi64(*r, sv));
                _mm512_storeu_si512(acc.0.as_mut_ptr().add(k).cast(), sum);
            }
        }
    }
}

/// `a·b` (127 coefficients, the last entry 0) if the processor has AVX-512 F and DQ.
pub(crate) fn product(a: &[u64; GR_DEGREE], b: &[u64; GR_DEGREE]) -> Option<[u64; 2 * GR_DEGREE]> {
    if has_avx512() {
        // SAFETY: the processor has both features `product_avx512` is compiled for (checked
        // just above).
        Some(unsafe { product_avx512(a, b) })
    } else {
        None
    }
}

/// One Karatsuba level over products of 32 coefficients by columns ([`half_product`]):
/// `(a_0 + a_1·x^32)(b_0 + b_1·x^32) = z_0 + z_1·x^32 + z_2·x^64` with
/// `z_1 = (a_0 + a_1)(b_0 + b_1) − z_0 − z_2`, three half products of 156 lane-wise products
/// each (468 in all, against 568 for the 64-coefficient columns), all in registers; the
/// halves start on register boundaries (32 = 4·8), so the sums need no shifts.
#[target_feature(enable = "avx512f,avx512dq")]
fn product_avx512(a: &[u64; GR_DEGREE], b: &[u64; GR_DEGREE]) -> [u64; 2 * GR_DEGREE] {
    const H: usize = GR_DEGREE / 2;
    let (a0, a1) = a.split_at(H);
    let (b0, b1) = b.split_at(H);
    let sa: [u64; H] = std::array::from_fn(|i| a0[i].wrapping_add(a1[i]));
    let sb: [u64; H] = std::array::from_fn(|i| b0[i].wrapping_add(b1[i]));
    let z0 = half_product(a0, b0);
    let z2 = half_product(a1, b1);
    let z1 = half_product(&sa, &sb);
    let mut blocks = [_mm512_setzero_si512(); 16];
    for j in 0..8 {
        blocks[j] = _mm512_add_epi64(blocks[j], z0[j]);
        blocks[8 + j] = _mm512_add_epi64(blocks[8 + j], z2[j]);
        let mid = _mm512_sub_epi64(_mm512_sub_epi64(z1[j], z0[j]), z2[j]);
        blocks[4 + j] = _mm512_add_epi64(blocks[4 + j], mid);
    }
    let mut out = [0u64; 2 * GR_DEGREE];
    for (j, block) in blocks.iter().enumerate() {
        // SAFETY: `out[8j .. 8j + 8]` is in bounds (j < 16): 64 bytes, stored unaligned.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(8 * j).cast(), *block) };
    }
    out
}

/// The product of two polynomials of 32 coefficients (63, in eight registers of eight lanes;
/// the last lane 0) by columns: lanes `k .. k + 8` are `Σ_i a_i·b_{k−i}`, reading `b`
/// through a copy with 32 zeros on either side.
#[target_feature(enable = "avx512f,avx512dq")]
fn half_product(a: &[u64], b: &[u64]) -> [__m512i; 8] {
    const H: usize = GR_DEGREE / 2;
    let mut padded = [0u64; 3 * H];
    padded[H..2 * H].copy_from_slice(&b[..H]);
    let mut out = [_mm512_setzero_si512(); 8];
    for (block, acc) in out.iter_mut().enumerate() {
        let k = 8 * block;
        // The i with a lane k + t − i in 0..32 (t < 8): k + 7 ≥ i and i + 31 ≥ k.
        let first = k.saturating_sub(H - 1);
        let last = (k + 8).min(H);
        for (offset, &x) in a[first..last].iter().enumerate() {
            let start = H + k - (first + offset);
            assert!(start + 8 <= padded.len());
            // SAFETY: `padded[start .. start + 8]` is in bounds (asserted): 64 bytes, loaded
            // unaligned.
            let bv = unsafe { _mm512_loadu_si512(padded.as_ptr().add(start).cast()) };
            *acc = _mm512_add_epi64(*acc, _mm512_mullo_epi64(_mm512_set1_epi64(x as i64), bv));
        }
    }
    out
}

/// `d += Σ_t l_t ⊗ r_t` piece by piece ([`crate::galois_inner`]), or `d = Σ_t l_t ⊗ r_t`
/// when `fresh` (what `d` held is not read), if the processor has AVX-512 F and DQ (else
/// `false`, nothing done).
pub(crate) fn accumulate(d: &mut Outer, ls: &[Form], rs: &[Form], fresh: bool) -> bool {
    if has_avx512() {
        // SAFETY: the processor has both features `accumulate_avx512` is compiled for (checked
        // just above).
        unsafe { accumulate_avx512(d, ls, rs, fresh) };
        true
    } else {
        false
    }
}

/// Per piece, its eight rows of `D` stay in registers over all terms: row `i` gains
/// `l_i·r` (one broadcast and one lane-wise product per row and term).
#[target_feature(enable = "avx512f,avx512dq")]
fn accumulate_avx512(d: &mut Outer, ls: &[Form], rs: &[Form], fresh: bool) {
    for p in 0..PIECES {
        let mut rows = [_mm512_setzero_si512(); PIECE];
        if !fresh {
            for (row, src) in rows.iter_mut().zip(&d[p]) {
                // SAFETY: `src` is 8 words (64 bytes), loaded unaligned.
                *row = unsafe { _mm512_loadu_si512(src.as_ptr().cast()) };
            }
        }
        for (l, r) in ls.iter().zip(rs) {
            // SAFETY: `r[p]` is 8 words (64 bytes), loaded unaligned.
            let b = unsafe { _mm512_loadu_si512(r[p].as_ptr().cast()) };
            for (row, &a) in rows.iter_mut().zip(&l[p]) {
                *row = _mm512_add_epi64(*row, _mm512_mullo_epi64(_mm512_set1_epi64(a as i64), b));
            }
        }
        for (row, dst) in rows.iter().zip(d[p].iter_mut()) {
            // SAFETY: `dst` is 8 words (64 bytes), stored unaligned.
            unsafe { _mm512_storeu_si512(dst.as_mut_ptr().cast(), *row) };
        }
    }
}
