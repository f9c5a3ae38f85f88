//! Hand-written x86-64 micro-kernels (AVX-512 and AVX2 intrinsics).
//!
//! Each kernel keeps an `MR × NV` block of vector accumulators (`NV` vectors of
//! `LANES` words per row, so `NR = NV·LANES`) in registers:
//!
//! ```text
//! for p in 0..kc:                      b_v   = B_panel[p, v·LANES ..][..LANES]
//!     for i in 0..MR:                  x     = broadcast(A_panel[p, i])
//!         for v in 0..NV:              acc[i][v] += x · b_v   (lane-wise, wrapping)
//! C[i, v·LANES ..] += acc[i][v]
//! ```
//!
//! AVX-512 multiplies natively (`vpmullq` for `u64`, `vpmulld` for `u32`). AVX2
//! has no 64-bit multiply, so for `u64` the low 64 bits of `x·y` are assembled
//! from 32-bit halves: `x·y mod 2^64 = xl·yl + ((xh·yl + xl·yh) << 32)`.
//!
//! The entry points take slices and assert the lengths the loops read and
//! write, so the raw-pointer accesses below stay in bounds.
#![allow(unsafe_code)]
#![cfg(target_arch = "x86_64")]

use core::arch::x86_64::*;

/// Generates one kernel: a `#[target_feature]` function over raw pointers plus
/// the bounds checks that make its pointer arithmetic sound.
macro_rules! kernel {
    (
        $(#[$doc:meta])* $name:ident, $feats:literal, $w:ty, $v:ty, lanes = $lanes:literal,
        mr = $mr:literal, nv = $nv:literal,
        zero = $zero:expr, load = $load:expr, store = $store:expr,
        splat = $splat:expr, mul = $mul:expr, add = $add:expr
    ) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The CPU must support the features this kernel is compiled for.
        #[target_feature(enable = $feats)]
        pub(crate) unsafe fn $name(kc: usize, a: &[$w], b: &[$w], c: &mut [$w], ldc: usize) {
            const MR: usize = $mr;
            const NR: usize = $nv * $lanes;
            assert!(a.len() >= kc * MR && b.len() >= kc * NR);
            assert!(ldc >= NR && c.len() >= (MR - 1) * ldc + NR);
            let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
            let mut acc: [[$v; $nv]; MR] = [[$zero; $nv]; MR];
            for p in 0..kc {
                let mut bv: [$v; $nv] = [$zero; $nv];
                for (v, slot) in bv.iter_mut().enumerate() {
                    // SAFETY: p < kc and v·LANES + LANES <= NR, so the vector lies in b[..kc·NR].
                    *slot = unsafe { $load(b.add(p * NR + v * $lanes)) };
                }
                for (i, row) in acc.iter_mut().enumerate() {
                    // SAFETY: p·MR + i < kc·MR <= a.len().
                    let x = $splat(unsafe { *a.add(p * MR + i) });
                    for (s, &y) in row.iter_mut().zip(&bv) {
                        *s = $add(*s, $mul(x, y));
                    }
                }
            }
            for (i, row) in acc.iter().enumerate() {
                for (v, &s) in row.iter().enumerate() {
                    // SAFETY: i·ldc + v·LANES + LANES <= (MR-1)·ldc + NR <= c.len().
                    unsafe {
                        let ptr = c.add(i * ldc + v * $lanes);
                        $store(ptr, $add($load(ptr), s));
                    }
                }
            }
        }
    };
}

/// AVX-512 load of 8 `u64`.
#[inline(always)]
unsafe fn ld512_64(p: *const u64) -> __m512i {
    // SAFETY: the caller guarantees 64 readable bytes at p (unaligned is fine).
    unsafe { _mm512_loadu_si512(p.cast()) }
}
/// AVX-512 store of 8 `u64`.
#[inline(always)]
unsafe fn st512_64(p: *mut u64, v: __m512i) {
    // SAFETY: the caller guarantees 64 writable bytes at p.
    unsafe { _mm512_storeu_si512(p.cast(), v) }
}
/// AVX-512 load of 16 `u32`.
#[inline(always)]
unsafe fn ld512_32(p: *const u32) -> __m512i {
    // SAFETY: the caller guarantees 64 readable bytes at p.
    unsafe { _mm512_loadu_si512(p.cast()) }
}
/// AVX-512 store of 16 `u32`.
#[inline(always)]
unsafe fn st512_32(p: *mut u32, v: __m512i) {
    // SAFETY: the caller guarantees 64 writable bytes at p.
    unsafe { _mm512_storeu_si512(p.cast(), v) }
}
/// AVX2 load of 4 `u64`.
#[inline(always)]
unsafe fn ld256_64(p: *const u64) -> __m256i {
    // SAFETY: the caller guarantees 32 readable bytes at p.
    unsafe { _mm256_loadu_si256(p.cast()) }
}
/// AVX2 store of 4 `u64`.
#[inline(always)]
unsafe fn st256_64(p: *mut u64, v: __m256i) {
    // SAFETY: the caller guarantees 32 writable bytes at p.
    unsafe { _mm256_storeu_si256(p.cast(), v) }
}
/// AVX2 load of 8 `u32`.
#[inline(always)]
unsafe fn ld256_32(p: *const u32) -> __m256i {
    // SAFETY: the caller guarantees 32 readable bytes at p.
    unsafe { _mm256_loadu_si256(p.cast()) }
}
/// AVX2 store of 8 `u32`.
#[inline(always)]
unsafe fn st256_32(p: *mut u32, v: __m256i) {
    // SAFETY: the caller guarantees 32 writable bytes at p.
    unsafe { _mm256_storeu_si256(p.cast(), v) }
}

/// Low 64 bits of the lane-wise product with AVX2: `xl·yl + ((xh·yl + xl·yh) << 32)`.
#[inline(always)]
fn mul64_avx2(x: __m256i, y: __m256i) -> __m256i {
    // SAFETY: only called from kernels compiled with AVX2 enabled.
    unsafe {
        let lo = _mm256_mul_epu32(x, y);
        let xh_yl = _mm256_mul_epu32(_mm256_srli_epi64::<32>(x), y);
        let xl_yh = _mm256_mul_epu32(x, _mm256_srli_epi64::<32>(y));
        _mm256_add_epi64(lo, _mm256_slli_epi64::<32>(_mm256_add_epi64(xh_yl, xl_yh)))
    }
}

kernel!(
    /// `u64`, AVX-512F/DQ: 8×16 block (16 zmm accumulators), `vpmullq`.
    avx512_u64_8x16, "avx512f,avx512dq", u64, __m512i, lanes = 8, mr = 8, nv = 2,
    zero = _mm512_setzero_si512(), load = ld512_64, store = st512_64,
    splat = |x: u64| _mm512_set1_epi64(x as i64), mul = _mm512_mullo_epi64, add = _mm512_add_epi64
);
kernel!(
    /// `u32`, AVX-512F: 8×32 block (16 zmm accumulators), `vpmulld`.
    avx512_u32_8x32, "avx512f", u32, __m512i, lanes = 16, mr = 8, nv = 2,
    zero = _mm512_setzero_si512(), load = ld512_32, store = st512_32,
    splat = |x: u32| _mm512_set1_epi32(x as i32), mul = _mm512_mullo_epi32, add = _mm512_add_epi32
);
kernel!(
    /// `u64`, AVX2: 4×8 block (8 ymm accumulators), 64-bit product from `vpmuludq`.
    avx2_u64_4x8, "avx2", u64, __m256i, lanes = 4, mr = 4, nv = 2,
    zero = _mm256_setzero_si256(), load = ld256_64, store = st256_64,
    splat = |x: u64| _mm256_set1_epi64x(x as i64), mul = mul64_avx2, add = _mm256_add_epi64
);
kernel!(
    /// `u32`, AVX2: 6×16 block (12 ymm accumulators), `vpmulld`.
    avx2_u32_6x16, "avx2", u32, __m256i, lanes = 8, mr = 6, nv = 2,
    zero = _mm256_setzero_si256(), load = ld256_32, store = st256_32,
    splat = |x: u32| _mm256_set1_epi32(x as i32), mul = _mm256_mullo_epi32, add = _mm256_add_epi32
);
