//! Approximate truncation over any modulus (the M&M paper, Theorem 1) and its
//! form with a destination modulus, the conversion `Z_p → Z_2^ℓ` with a free truncation
//! (Fig. 7).
//!
//! For shares of `x ∈ [0, 2^η) ∪ [M − 2^η, M)`, `η = ⌊log2 M⌋ − 2`, and `f ≤ η`: P0 adds
//! `2^η` (so `sgn_M(y) = 0`), Π_wrap+ gives `⌊M/2^f⌋·w` in the destination `Z_K`, and
//!
//! ```text
//! P0: z_0 = ⌊y_0/2^f⌋ − ⌊M/2^f⌋·w_0,   P1: z_1 = ⌊y_1/2^f⌋ − 2^{η−f} − ⌊M/2^f⌋·w_1   (mod K)
//! z = ⌊rep_M(x)/2^f⌋ − E
//! ```
//!
//! with `E` the carry of the dropped low parts: `E ∈ {0, 1}` when `M` is a power of two
//! (`M mod 2^f = 0`), `E ∈ {−1, 0, 1}` otherwise. When `M = K = 2^ℓ` the wrap is needed only
//! mod `2^f` (it is multiplied by `2^{ℓ−f}`): a Δ-OT over `Z_2^f`, `f + 1` bits per value;
//! otherwise one Δ-OT over `Z_K`, `⌈log2 K⌉ + 1` bits.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::Modulus;
use veil_twopc::TwoParty;

use crate::convert::wrap_positive;

/// `η = ⌊log2 M⌋ − 2`: values must lie in `[0, 2^η) ∪ [M − 2^η, M)`.
pub fn headroom(m: u128) -> u32 {
    (127 - m.leading_zeros()).saturating_sub(2)
}

/// Shares in `dest` of `⌊rep_M(x)/2^f⌋ − E` for shares `x` in `Z_M` (`M ≤ 2^64`) of values in
/// `[0, 2^η) ∪ [M − 2^η, M)`; `E ∈ {0, 1}` for a power-of-two `M`, `{−1, 0, 1}` otherwise.
pub fn truncate(
    tp: &mut TwoParty,
    ctx: &mut Ctx,
    x: &[u64],
    m: u128,
    f: u32,
    dest: Modulus,
) -> Result<Vec<u128>> {
    let eta = headroom(m);
    if !(8..=1u128 << 64).contains(&m) || f == 0 || f > eta {
        return Err(MpcError::Invalid(format!("a truncation by 2^{f} in Z_{m}: 1 ≤ f ≤ η = {eta}")));
    }
    let first = tp.is_first();
    let shifted: Vec<u64> =
        x.iter().map(|&v| if first { ((u128::from(v) + (1u128 << eta)) % m) as u64 } else { v }).collect();
    let high = m >> f; // ⌊M/2^f⌋
    let (wrap_dest, factor, scale) = match dest {
        Modulus::PowerOfTwo(k) if m.is_power_of_two() && m.trailing_zeros() == k => {
            (Modulus::PowerOfTwo(f), 1, high)
        }
        _ => (dest, high, 1),
    };
    let w = wrap_positive(tp, ctx, &shifted, m, wrap_dest, factor)?;
    let offset = dest.reduce(1u128 << (eta - f));
    Ok(shifted
        .iter()
        .zip(w)
        .map(|(&y, w)| {
            let z = dest.sub(dest.reduce(u128::from(y) >> f), dest.reduce(w.wrapping_mul(scale)));
            if first { z } else { dest.sub(z, offset) }
        })
        .collect())
}

/// Shares in `Z_2^ℓ` of `⌊rep_p(x)/2^f⌋ − E` from shares in `Z_p` (Fig. 7): the conversion and
/// the truncation for the price of the conversion, `ℓ + 1` bits per value.
pub fn field_to_ring_truncated(
    tp: &mut TwoParty,
    ctx: &mut Ctx,
    x: &[u64],
    p: u64,
    f: u32,
    l: u32,
) -> Result<Vec<u128>> {
    truncate(tp, ctx, x, u128::from(p), f, Modulus::PowerOfTwo(l))
}
