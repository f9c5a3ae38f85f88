//! [`crate::Zp`]'s packing of eight `W`-bit elements per `W` bytes with BMI2, where the
//! processor has it: `pext` gathers the low `W` bits of each byte of a word of eight elements
//! into one `8W`-bit field, `pdep` spreads such a field back over eight bytes. One instruction
//! per eight elements, where the portable loops shift and mask each element. The bytes are the
//! portable path's (tests in `small_prime` compare the two).
#![allow(unsafe_code)]
#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{_pdep_u64, _pext_u64};

/// The low `W` bits of each of eight bytes.
const fn lanes(w: usize) -> u64 {
    0x0101_0101_0101_0101 * ((1u64 << w) - 1)
}

fn has_bmi2() -> bool {
    std::arch::is_x86_feature_detected!("bmi2")
}

/// [`super`]'s `gather` with BMI2 (else `false`, nothing done): the whole groups of eight
/// elements of `v` (each below `2^W`), `W` bytes per group, written from `out[at..]` as words
/// of 8 bytes (the next group's bytes overwrite the top `8 − W`); `out` must hold 8 bytes
/// past the last group's `W`. Returns where the groups end.
pub(crate) fn gather<const W: usize, T: Copy + Into<u32>>(
    v: &[T],
    out: &mut [u8],
    at: usize,
) -> Option<usize> {
    if !has_bmi2() {
        return None;
    }
    // SAFETY: the processor has BMI2 (checked just above).
    Some(unsafe { gather_bmi2::<W, T>(v, out, at) })
}

#[target_feature(enable = "bmi2")]
fn gather_bmi2<const W: usize, T: Copy + Into<u32>>(v: &[T], out: &mut [u8], mut at: usize) -> usize {
    for g in v.chunks_exact(8) {
        let bytes: [u8; 8] = std::array::from_fn(|i| g[i].into() as u8);
        let field = _pext_u64(u64::from_le_bytes(bytes), lanes(W));
        out[at..at + 8].copy_from_slice(&field.to_le_bytes());
        at += W;
    }
    at
}

/// [`super`]'s `spread` with BMI2 (else `false`, nothing done): eight elements of `W` bits per
/// `W` bytes of `whole` into bytes of `out`.
pub(crate) fn spread<const W: usize>(whole: &[u8], out: &mut [u8]) -> bool {
    if !has_bmi2() {
        return false;
    }
    // SAFETY: the processor has BMI2 (checked just above).
    unsafe { spread_bmi2::<W>(whole, out) };
    true
}

#[target_feature(enable = "bmi2")]
fn spread_bmi2<const W: usize>(whole: &[u8], out: &mut [u8]) {
    for (g, dst) in whole.chunks_exact(W).zip(out.chunks_exact_mut(8)) {
        let mut b = [0u8; 8];
        b[..W].copy_from_slice(g);
        dst.copy_from_slice(&_pdep_u64(u64::from_le_bytes(b), lanes(W)).to_le_bytes());
    }
}
