//! [`crate::Zp`]'s unpacking of `W`-bit elements (`W ≤ 7`, eight per `W` bytes) with AVX-512
//! VBMI, 64 elements at a time, where the processor has it. The bytes are the portable path's;
//! the tests of `small_prime` compare the two.
//!
//! A byte permutation (`vpermb`) moves group `g`'s `W` bytes to the start of 64-bit lane `g`
//! (eight groups, `8W ≤ 56` bytes of input), so element `i` of the group sits at bits
//! `W·i .. W·i + W` of its lane. `vpmultishiftqb` then copies into byte `i` of the lane the
//! eight bits from offset `W·i`, and a mask keeps the low `W`: three instructions for 64
//! elements, where the AVX2 path takes about ten for 32.
#![allow(unsafe_code)]
#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{
    __m512i, _mm512_and_si512, _mm512_loadu_si512, _mm512_maskz_loadu_epi8, _mm512_multishift_epi64_epi8,
    _mm512_permutexvar_epi8, _mm512_set1_epi8, _mm512_storeu_si512,
};

fn has_vbmi() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
}

/// A register holding `index(k)` in byte `k` (`k < 64`).
#[target_feature(enable = "avx512f")]
fn bytes(index: impl Fn(usize) -> u8) -> __m512i {
    let b: [u8; 64] = std::array::from_fn(index);
    // SAFETY: `b` holds the 64 bytes loaded.
    unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
}

/// Unpacks the leading groups of `whole` (`W` bytes per eight elements) into `out`, 64
/// elements at a time; returns the elements written (a multiple of 64; the caller unpacks the
/// rest). Nothing is done (0) without AVX-512 VBMI or for `W > 7`.
pub(crate) fn spread<const W: usize>(whole: &[u8], out: &mut [u8]) -> usize {
    if W == 0 || W > 7 || !has_vbmi() {
        return 0;
    }
    // SAFETY: the processor has the features `spread_vbmi` is compiled for (checked above).
    unsafe { spread_vbmi::<W>(whole, out) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn spread_vbmi<const W: usize>(whole: &[u8], out: &mut [u8]) -> usize {
    // Byte `j` of lane `g` reads input byte `g·W + j` (for `j ≥ W` the next group's bytes, or
    // zeros past the `8W` loaded: bits that only the last elements' shifts reach, and that
    // the mask drops).
    let gather = bytes(|k| ((k / 8) * W + k % 8) as u8);
    let shifts = bytes(|k| (W * (k % 8)) as u8);
    let low = _mm512_set1_epi8(((1u32 << W) - 1) as i8);
    // The `8W` input bytes of 64 elements (the masked load reads no byte past them).
    let mask: u64 = (1u64 << (8 * W)) - 1;
    let mut done = 0;
    loop {
        let at = done / 8 * W;
        if at + 8 * W > whole.len() || done + 64 > out.len() {
            return done;
        }
        let (src, dst) = (&whole[at..at + 8 * W], &mut out[done..done + 64]);
        // SAFETY: the masked load reads `src`'s `8W` bytes only; `dst` holds 64 bytes.
        unsafe {
            let v = _mm512_maskz_loadu_epi8(mask, src.as_ptr().cast());
            let lanes = _mm512_permutexvar_epi8(gather, v);
            let x = _mm512_and_si512(_mm512_multishift_epi64_epi8(shifts, lanes), low);
            _mm512_storeu_si512(dst.as_mut_ptr().cast(), x);
        }
        done += 64;
    }
}
