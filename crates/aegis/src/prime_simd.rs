//! Rejection sampling of [`crate::prime::Draws`] 64 bytes at a time with AVX-512 VBMI2, where
//! the processor has it: a byte below the rejection limit becomes `offset + (b mod q)` (one
//! conditional subtraction, `q ≥ 86`), the others are dropped, and `vpcompressb` stores the
//! accepted ones in order, so the elements are exactly those, in the order, that the
//! byte-by-byte path gives (the parties agree whatever their processors). The scalar path
//! sends a 16-byte chunk with a rejected byte (1 in 4 for `Z_127^*`) byte by byte.
#![allow(unsafe_code)]
#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{
    _mm512_add_epi8, _mm512_cmpge_epu8_mask, _mm512_cmplt_epu8_mask, _mm512_loadu_si512,
    _mm512_mask_sub_epi8, _mm512_maskz_compress_epi8, _mm512_set1_epi8, _mm512_storeu_si512,
};

/// Bytes converted at a time.
pub(crate) const BLOCK: usize = 64;

/// Whether the processor has AVX-512 BW and VBMI2 (`vpcompressb`).
pub(crate) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512bw") && std::arch::is_x86_feature_detected!("avx512vbmi2")
}

/// Converts the 64 bytes `src` into `out` and returns how many were accepted (written at the
/// start of `out`; the rest of `out` is overwritten with zeros); `None` (nothing done)
/// without the processor's features.
pub(crate) fn convert(
    src: &[u8; BLOCK],
    out: &mut [u8; BLOCK],
    q: u8,
    limit: u8,
    offset: u8,
) -> Option<usize> {
    if !available() {
        return None;
    }
    // SAFETY: the processor has the features `convert_vbmi2` is compiled for (checked above).
    Some(unsafe { convert_vbmi2(src, out, q, limit, offset) })
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
fn convert_vbmi2(src: &[u8; BLOCK], out: &mut [u8; BLOCK], q: u8, limit: u8, offset: u8) -> usize {
    // SAFETY: `src` is 64 bytes, loaded unaligned.
    let v = unsafe { _mm512_loadu_si512(src.as_ptr().cast()) };
    let accept = _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(limit as i8));
    let over = _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8(q as i8));
    let reduced = _mm512_mask_sub_epi8(v, over, v, _mm512_set1_epi8(q as i8));
    let values = _mm512_add_epi8(reduced, _mm512_set1_epi8(offset as i8));
    // The accepted bytes are compressed in a register and the whole register is stored: the
    // bytes past the accepted ones are zeros that the caller's next draws overwrite. (The
    // compress with a memory operand is microcoded on some processors, AMD's Zen 4 among
    // them, and took 10 % of LeNet's whole run there.)
    let packed = _mm512_maskz_compress_epi8(accept, values);
    // SAFETY: `out` is 64 bytes, stored unaligned.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), packed) };
    accept.count_ones() as usize
}
