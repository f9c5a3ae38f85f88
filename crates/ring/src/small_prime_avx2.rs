//! [`crate::Zp`]'s packing of `W`-bit elements (`W ≤ 7`, eight per `W` bytes) with AVX2,
//! 32 elements at a time, where the processor has it. The bytes are the portable path's
//! (least significant bit first); the tests of `small_prime` compare the two.
//!
//! **Unpacking.** Element `i` of a group of 16 (`2W` bytes) starts at bit `W·i`: byte
//! `j = ⌊W·i/8⌋`, offset `o = W·i mod 8`, and `W + o ≤ 14`, so it lies within the 16-bit word
//! of bytes `j, j+1`. A byte shuffle puts that word in 16-bit lane `i`; multiplying by
//! `2^(16−W−o)` (mod `2^16`) moves the element to the lane's top `W` bits and drops the bits
//! above it, and a shift right by `16 − W` brings it down. Each 128-bit half of a register
//! takes one group, so the shuffles never cross halves.
//!
//! **Packing.** The inverse, by doubling widths: two bytes `a_0 + 2^8·a_1` become
//! `a_0 + 2^W·a_1` in a 16-bit lane, two such lanes `2W` bits in a 32-bit lane, two of those
//! `4W` bits in a 64-bit lane (each step keeps the low part and shifts the high part down by
//! the gap), and a shuffle keeps the first `W` bytes of each 64-bit lane: `2W` bytes per half.
//!
//! On a Zen 1 core, where `pext`/`pdep` run in microcode and the portable loops shift and mask
//! each element, this is what makes packing the sign checks' lists cheap.
#![allow(unsafe_code)]
#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{
    __m256i, _mm_cvtsi32_si128, _mm_storeu_si128, _mm256_and_si256, _mm256_castsi256_si128,
    _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_loadu2_m128i, _mm256_mullo_epi16, _mm256_or_si256,
    _mm256_packus_epi16, _mm256_set1_epi16, _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_shuffle_epi8,
    _mm256_srl_epi16, _mm256_srl_epi32, _mm256_srl_epi64, _mm256_storeu_si256,
};

fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// Byte `k` of a shuffle that puts, in 16-bit lane `k/2` of a half, the word at byte
/// `⌊W·i/8⌋` for element `i = first + k/2` of the half's group of 16.
fn spread_index<const W: usize>(first: usize, k: usize) -> i8 {
    let i = first + k / 2;
    ((W * i) / 8 + k % 2) as i8
}

/// Byte `k` of the shuffle keeping the first `W` bytes of each 64-bit lane of a half, packed
/// at its start (zeros after them).
fn gather_index<const W: usize>(k: usize) -> i8 {
    if k < W {
        k as i8
    } else if k < 2 * W {
        (8 + k - W) as i8
    } else {
        -128
    }
}

/// A register holding `index(k)` in byte `k` of each half (`k < 16`).
#[target_feature(enable = "avx2")]
fn both_halves(index: impl Fn(usize) -> i8) -> __m256i {
    let bytes: [i8; 32] = std::array::from_fn(|k| index(k % 16));
    // SAFETY: `bytes` holds the 32 bytes loaded.
    unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
}

/// The 16-bit multipliers `2^(16−W−o)` of elements `first .. first + 8` of each half's group.
#[target_feature(enable = "avx2")]
fn factors<const W: usize>(first: usize) -> __m256i {
    let words: [i16; 16] =
        std::array::from_fn(|lane| (1u32 << (16 - W - (W * (first + lane % 8)) % 8)) as u16 as i16);
    // SAFETY: `words` holds the 32 bytes loaded.
    unsafe { _mm256_loadu_si256(words.as_ptr().cast()) }
}

/// Unpacks the leading groups of `whole` (`W` bytes per eight elements) into `out`, 32
/// elements at a time; returns the elements written (a multiple of 32; the caller unpacks the
/// rest). Nothing is done (0) without AVX2 or for `W > 7`.
pub(crate) fn spread<const W: usize>(whole: &[u8], out: &mut [u8]) -> usize {
    if W == 0 || W > 7 || !has_avx2() {
        return 0;
    }
    // SAFETY: the processor has AVX2 (checked just above).
    unsafe { spread_avx2::<W>(whole, out) }
}

#[target_feature(enable = "avx2")]
fn spread_avx2<const W: usize>(whole: &[u8], out: &mut [u8]) -> usize {
    let (low, high) = (both_halves(|k| spread_index::<W>(0, k)), both_halves(|k| spread_index::<W>(8, k)));
    let (f_low, f_high) = (factors::<W>(0), factors::<W>(8));
    let down = _mm_cvtsi32_si128(16 - W as i32);
    let mut done = 0;
    // Each half loads 16 bytes from the start of its group of `2W` bytes (`4W ≤ 2W + 16`).
    loop {
        let at = done / 8 * W;
        if at + 2 * W + 16 > whole.len() || done + 32 > out.len() {
            return done;
        }
        let (a, b) = (&whole[at..at + 16], &whole[at + 2 * W..at + 2 * W + 16]);
        let dst = &mut out[done..done + 32];
        // SAFETY: `a`, `b` hold 16 bytes each and `dst` 32.
        unsafe {
            let v = _mm256_loadu2_m128i(b.as_ptr().cast(), a.as_ptr().cast());
            let first = _mm256_srl_epi16(_mm256_mullo_epi16(_mm256_shuffle_epi8(v, low), f_low), down);
            let second = _mm256_srl_epi16(_mm256_mullo_epi16(_mm256_shuffle_epi8(v, high), f_high), down);
            _mm256_storeu_si256(dst.as_mut_ptr().cast(), _mm256_packus_epi16(first, second));
        }
        done += 32;
    }
}

/// Packs the leading elements of `v` (each below `2^W`) 32 at a time, `4W` bytes each, from
/// `out[at..]`, while `out` holds 16 bytes past the end of the next 32's bytes (each half is
/// stored as 16 bytes, the next store overwriting the zeros past its `2W`). Returns the
/// elements packed and where their bytes end; the caller packs the rest. Nothing is done
/// without AVX2 or for `W > 7`.
pub(crate) fn gather<const W: usize, T: Copy + Into<u32>>(
    v: &[T],
    out: &mut [u8],
    at: usize,
) -> (usize, usize) {
    if W == 0 || W > 7 || !has_avx2() {
        return (0, at);
    }
    // SAFETY: the processor has AVX2 (checked just above).
    unsafe { gather_avx2::<W, T>(v, out, at) }
}

#[target_feature(enable = "avx2")]
fn gather_avx2<const W: usize, T: Copy + Into<u32>>(
    v: &[T],
    out: &mut [u8],
    mut at: usize,
) -> (usize, usize) {
    let keep = both_halves(gather_index::<W>);
    let low = |bits: usize| (1u64 << bits) - 1;
    // The low part's mask and the shifted high part's, and the shift, at 16, 32 and 64 bits.
    let (m1, h1) = (_mm256_set1_epi16(low(W) as i16), _mm256_set1_epi16((low(W) << W) as i16));
    let (m2, h2) = (_mm256_set1_epi32(low(2 * W) as i32), _mm256_set1_epi32((low(2 * W) << (2 * W)) as i32));
    let (m3, h3) =
        (_mm256_set1_epi64x(low(4 * W) as i64), _mm256_set1_epi64x((low(4 * W) << (4 * W)) as i64));
    let (s1, s2, s3) = (
        _mm_cvtsi32_si128(8 - W as i32),
        _mm_cvtsi32_si128(16 - 2 * W as i32),
        _mm_cvtsi32_si128(32 - 4 * W as i32),
    );
    let mut done = 0;
    for chunk in v.chunks_exact(32) {
        if at + 2 * W + 16 > out.len() {
            break;
        }
        let bytes: [u8; 32] = std::array::from_fn(|i| chunk[i].into() as u8);
        let dst = &mut out[at..at + 2 * W + 16];
        // SAFETY: `bytes` holds 32 bytes; the stores write `dst[..16]` and `dst[2W..2W + 16]`.
        unsafe {
            let x = _mm256_loadu_si256(bytes.as_ptr().cast());
            let x = _mm256_or_si256(_mm256_and_si256(x, m1), _mm256_and_si256(_mm256_srl_epi16(x, s1), h1));
            let x = _mm256_or_si256(_mm256_and_si256(x, m2), _mm256_and_si256(_mm256_srl_epi32(x, s2), h2));
            let x = _mm256_or_si256(_mm256_and_si256(x, m3), _mm256_and_si256(_mm256_srl_epi64(x, s3), h3));
            let x = _mm256_shuffle_epi8(x, keep);
            let p = dst.as_mut_ptr();
            _mm_storeu_si128(p.cast(), _mm256_castsi256_si128(x));
            _mm_storeu_si128(p.add(2 * W).cast(), _mm256_extracti128_si256::<1>(x));
        }
        done += 32;
        at += 4 * W;
    }
    (done, at)
}
