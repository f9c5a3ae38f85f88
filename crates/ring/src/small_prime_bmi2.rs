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

/// Whether the processor has BMI2 with fast `pext`/`pdep`: AMD's processors before Zen 3
/// (family 19h) run them in microcode, tens to hundreds of cycles each, slower than the
/// portable loops; they take those instead.
fn has_bmi2() -> bool {
    use std::sync::OnceLock;
    static FAST: OnceLock<bool> = OnceLock::new();
    *FAST.get_or_init(|| std::arch::is_x86_feature_detected!("bmi2") && !slow_pext())
}

/// An AMD processor of a family before 19h (the family as CPUID leaf 1 encodes it: the base
/// family, plus the extended family where the base is 0xF).
fn slow_pext() -> bool {
    // `cpuid` exists on every x86-64 processor; leaves 0 and 1 always do.
    let (vendor, signature) = (std::arch::x86_64::__cpuid(0), std::arch::x86_64::__cpuid(1));
    let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
    let base = (signature.eax >> 8) & 0xf;
    let family = if base == 0xf { base + ((signature.eax >> 20) & 0xff) } else { base };
    amd && family < 0x19
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
