//! [`crate::lists`]'s kernels for `p = 127` compiled for AVX2, where the processor has AVX2
//! but not AVX-512 BW (that one takes [`crate::lists_simd`]'s kernels first): the portable
//! loops over 16-bit lanes, inlined into functions built with the `avx2` target feature, so the
//! compiler vectorizes them 16 lanes to a register where the baseline x86-64 build has 8. The
//! same code, so the same values bit for bit: nothing of the protocol changes, and the tests
//! of `crate::lists` compare both builds.
#![allow(unsafe_code)]
#![cfg(target_arch = "x86_64")]

use crate::lists::{LANES, M127, Masks, combos as combos_body, value_lists};
use crate::pos::MAC_KEYS;

/// Whether the AVX2 builds are the ones to run.
fn use_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// [`crate::lists::lists_mod`] for `p = 127`; `false` without AVX2.
pub(crate) fn lists(
    l: usize,
    m: u64,
    first: bool,
    shares: &[u8],
    masks: &Masks,
    u_out: &mut [u8],
    up_out: &mut [u8],
) -> bool {
    if !use_avx2() {
        return false;
    }
    // SAFETY: the processor has AVX2 (checked above), the one feature the function is built for.
    unsafe { lists_avx2(l, m, first, shares, masks, u_out, up_out) };
    true
}

/// [`crate::lists::combos_mod`] for `p = 127`; `None` without AVX2.
pub(crate) fn combos(
    l: usize,
    m: u64,
    masks: &Masks,
    mac: &[u8],
    kappa: &[u8; MAC_KEYS],
    sigma: &[[u8; LANES]],
) -> Option<[u32; MAC_KEYS]> {
    // SAFETY: as in `lists`.
    use_avx2().then(|| unsafe { combos_avx2(l, m, masks, mac, kappa, sigma) })
}

#[target_feature(enable = "avx2")]
fn lists_avx2(
    l: usize,
    m: u64,
    first: bool,
    shares: &[u8],
    masks: &Masks,
    u_out: &mut [u8],
    up_out: &mut [u8],
) {
    value_lists(M127, l, m, first, shares, masks, u_out, up_out);
}

#[target_feature(enable = "avx2")]
fn combos_avx2(
    l: usize,
    m: u64,
    masks: &Masks,
    mac: &[u8],
    kappa: &[u8; MAC_KEYS],
    sigma: &[[u8; LANES]],
) -> [u32; MAC_KEYS] {
    combos_body(M127, l, m, masks, mac, kappa, sigma)
}
