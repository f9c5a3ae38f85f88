//! Modulus conversion (the M&M paper, §III).
//!
//! **Π_wrap+** (Fig. 3). For shares `x_0 + x_1 ≡ x (mod M)` of a value with
//! `sgn_M(x) = 0` (`x < ⌈M/2⌉`), the wrap bit `[x_0 + x_1 ≥ M]` is `s_0 ∨ s_1` with
//! `s_b = sgn_M(x_b) = [x_b ≥ ⌈M/2⌉]`: two small shares cannot wrap, and a large one
//! (`≥ M/2 > x`) must. One Δ-OT gives it as an arithmetic share in any destination `Z_K`,
//! times a factor `f`: P0 correlates with `Δ = f·(1 − s_0)`, P1 chooses with `s_1`, and
//!
//! ```text
//! P0: f·s_0 − a,   P1: a + s_1·Δ   ⇒   sum = f·(s_0 + s_1 − s_0·s_1) = f·(s_0 ∨ s_1)
//! ```
//!
//! **Conversion** `Z_M → Z_K` (Eq. (1)) for `x ∈ [0, L) ∪ [M − L, M)`, `L ≤ ⌊M/4⌋`: P0 adds
//! `L` (now `sgn_M(x + L) = 0`), the parties lift their shares to integers, and
//!
//! ```text
//! z = (x_0 + L) + x_1 − M·wrap − L = rep_M(x)  (mod K)
//! ```
//!
//! where `rep_M(x)` is `x`'s signed representative. Cost: one Δ-OT over `Z_K`:
//! `⌈log2 K⌉ + 1` bits, two messages. For `M = 2^ℓ → K = 2^k` (`k > ℓ`) the wrap is needed
//! only mod `2^{k−ℓ}` (it is multiplied by `2^ℓ`): `(k − ℓ) + 1` bits (§III-C).

use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::{Modulus, delta_ot_receive, delta_ot_send};
use veil_twopc::TwoParty;

/// `sgn_M(x) = [x ≥ ⌈M/2⌉]`.
pub fn sign(x: u128, m: u128) -> bool {
    x >= m.div_ceil(2)
}

/// A source modulus: `Z_M` with `M ≤ 2^64`.
fn check_source(x: &[u64], m: u128) -> Result<()> {
    if !(2..=1u128 << 64).contains(&m) {
        return Err(MpcError::Invalid(format!("a source modulus of {m}: 2 ≤ M ≤ 2^64")));
    }
    if let Some(v) = x.iter().find(|&&v| u128::from(v) >= m) {
        return Err(MpcError::Invalid(format!("{v} is not a share in Z_{m}")));
    }
    Ok(())
}

/// Π_wrap+: shares in `dest` of `factor·wrap(x_0, x_1)` for shares `x` in `Z_M` of values
/// with `sgn_M(x) = 0`. One Δ-OT per value (P0 sends the correlations).
pub fn wrap_positive(
    tp: &mut TwoParty,
    ctx: &mut Ctx,
    x: &[u64],
    m: u128,
    dest: Modulus,
    factor: u128,
) -> Result<Vec<u128>> {
    check_source(x, m)?;
    let f = dest.reduce(factor);
    let s: Vec<bool> = x.iter().map(|&v| sign(u128::from(v), m)).collect();
    if tp.is_first() {
        let deltas: Vec<u128> = s.iter().map(|&s0| if s0 { 0 } else { f }).collect();
        let a = delta_ot_send(ctx, tp.sender(), dest, &deltas)?;
        Ok(s.iter().zip(a).map(|(&s0, a)| dest.sub(if s0 { f } else { 0 }, a)).collect())
    } else {
        delta_ot_receive(ctx, tp.receiver(), dest, &s)
    }
}

/// Shares in `dest` of `rep_M(x)` for shares `x` in `Z_M` of values in `[0, l) ∪ [M − l, M)`,
/// `l ≤ ⌊M/4⌋` (outside that range the result is wrong; callers keep it).
pub fn convert(
    tp: &mut TwoParty,
    ctx: &mut Ctx,
    x: &[u64],
    m: u128,
    dest: Modulus,
    l: u128,
) -> Result<Vec<u128>> {
    check_source(x, m)?;
    if l == 0 || l > m / 4 {
        return Err(MpcError::Invalid(format!("a heuristic range of {l} for Z_{m}: 1 ≤ L ≤ ⌊M/4⌋")));
    }
    let first = tp.is_first();
    let shifted: Vec<u64> =
        x.iter().map(|&v| if first { ((u128::from(v) + l) % m) as u64 } else { v }).collect();
    // Δ-OT over 2^{k−ℓ} suffices when both moduli are powers of two (the wrap is multiplied by
    // 2^ℓ): factor 1 there, 2^ℓ applied locally.
    let (wrap_dest, factor, scale) = match dest {
        Modulus::PowerOfTwo(k) if m.is_power_of_two() && u128::from(k) > u128::from(m.trailing_zeros()) => {
            (Modulus::PowerOfTwo(k - m.trailing_zeros()), 1, m)
        }
        _ => (dest, m, 1),
    };
    let w = wrap_positive(tp, ctx, &shifted, m, wrap_dest, factor)?;
    let neg_l = dest.sub(0, dest.reduce(l));
    Ok(shifted
        .iter()
        .zip(w)
        .map(|(&v, w)| {
            let mw = dest.reduce(w.wrapping_mul(scale));
            let z = dest.sub(dest.reduce(u128::from(v)), mw);
            if first { z } else { dest.add(z, neg_l) }
        })
        .collect())
}

/// Shares in `Z_2^k` of `rep_p(x)` for shares in `Z_p` of `x ∈ [0, ⌊p/4⌋) ∪ (p − ⌊p/4⌋, p)`
/// (Fig. 4): `k + 1` bits per value.
pub fn field_to_ring(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], p: u64, k: u32) -> Result<Vec<u128>> {
    convert(tp, ctx, x, u128::from(p), Modulus::PowerOfTwo(k), u128::from(p / 4))
}

/// Shares in `Z_2^k` of the signed value of shares in `Z_2^ℓ` (`ℓ < k ≤ 128`, `|x| < 2^{ℓ−2}`):
/// `(k − ℓ) + 1` bits per value (§III-C).
pub fn extend(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], from: u32, to: u32) -> Result<Vec<u128>> {
    if !(2..=64).contains(&from) || to <= from || to > 128 {
        return Err(MpcError::Invalid(format!("an extension from Z_2^{from} to Z_2^{to}")));
    }
    convert(tp, ctx, x, 1u128 << from, Modulus::PowerOfTwo(to), 1u128 << (from - 2))
}

/// Shares in `Z_p` of the signed value of shares in `Z_2^ℓ` (`|x| < 2^{ℓ−2}`), directly
/// (§III-D): `⌈log2 p⌉ + 1` bits per value.
pub fn ring_to_field(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], from: u32, p: u64) -> Result<Vec<u128>> {
    if !(2..=64).contains(&from) {
        return Err(MpcError::Invalid(format!("a conversion from Z_2^{from}")));
    }
    convert(tp, ctx, x, 1u128 << from, Modulus::Integer(p), 1u128 << (from - 2))
}
