//! Conversions between sharings: Boolean to arithmetic (B2A), the Boolean × arithmetic
//! multiplexer, and signed or unsigned ring extension, over Z_2^ℓ and (B2A, multiplexer) any
//! Z_M, from Δ-OT.
//!
//! - **B2A**: `b = b_0 ⊕ b_1 = b_0 + b_1 − 2·b_0·b_1`; one Δ-OT with P0's correlation `b_0`
//!   and P1's choice `b_1` gives `r − a = b_0·b_1`, so P0 holds `b_0 + 2a` and P1 `b_1 − 2r`.
//!   Cost: 1 bit from P1, `⌈log2 M⌉` bits from P0, 1 round.
//! - **Multiplexer** (M&M App. D-C): two Δ-OTs, one each way, with correlations
//!   `(1 − 2w_i)·a_i`; P0 outputs `w_0·a_0 − u_0 + v_0`, P1 `w_1·a_1 + u_1 − v_1`, whose sum is
//!   `(w_0 ⊕ w_1)·(a_0 + a_1)`. Cost: `⌈log2 M⌉ + 1` bits from each party, 2 rounds.
//! - **Extension** Z_2^ℓ → Z_2^k (k > ℓ): `x = x_0 + x_1 − 2^ℓ·wrap`; the wrap bit from one
//!   millionaires' run, lifted by B2A mod 2^{k−ℓ} (only those bits of it survive the factor
//!   2^ℓ). Signed values are shifted by `2^{ℓ−1}` first so that they are non-negative.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::{Modulus, delta_ot_receive, delta_ot_send};

use crate::TwoParty;
use crate::compare::wrap;
use crate::ring::{check_bits, check_shares, mask};

fn widen(xs: &[u64]) -> Vec<u128> {
    xs.iter().map(|&x| u128::from(x)).collect()
}

fn check_modulus(m: Modulus) -> Result<()> {
    match m {
        Modulus::PowerOfTwo(k) if (1..=64).contains(&k) => Ok(()),
        Modulus::Integer(q) if q >= 2 => Ok(()),
        _ => Err(MpcError::Invalid(format!("{m:?}: the toolkit's shares are at most 64 bits"))),
    }
}

/// One Δ-OT where P0 (`first`) holds the correlations and P1 the choices; returns this
/// party's output (P0: `a`, P1: `a + c·Δ`).
fn delta_ot_p0_sends(
    tp: &mut TwoParty,
    ctx: &mut Ctx,
    m: Modulus,
    deltas: &[u128],
    choices: &[bool],
) -> Result<Vec<u128>> {
    if tp.is_first() {
        delta_ot_send(ctx, tp.sender(), m, deltas)
    } else {
        delta_ot_receive(ctx, tp.receiver(), m, choices)
    }
}

/// Arithmetic shares in Z_M of the bits `b` (Boolean shares).
pub fn b2a(tp: &mut TwoParty, ctx: &mut Ctx, b: &[bool], m: Modulus) -> Result<Vec<u64>> {
    check_modulus(m)?;
    let mine: Vec<u128> = b.iter().map(|&x| u128::from(x)).collect();
    let out = delta_ot_p0_sends(tp, ctx, m, &mine, b)?;
    let first = tp.is_first();
    Ok(mine
        .iter()
        .zip(out)
        .map(|(&bit, r)| {
            let twice = m.add(r, r);
            (if first { m.add(bit, twice) } else { m.sub(bit, twice) }) as u64
        })
        .collect())
}

/// Shares of `w·a` in Z_M for Boolean shares `w` and arithmetic shares `a` (canonical).
pub fn mux(tp: &mut TwoParty, ctx: &mut Ctx, w: &[bool], a: &[u64], m: Modulus) -> Result<Vec<u64>> {
    check_modulus(m)?;
    if w.len() != a.len() {
        return Err(MpcError::Invalid(format!("multiplexer of {} bits and {} values", w.len(), a.len())));
    }
    let a = widen(a);
    if a.iter().any(|&x| !m.contains(x)) {
        return Err(MpcError::Invalid(format!("a multiplexer input is not an element of {m:?}")));
    }
    // (1 − 2w)·a: a if w = 0, −a if w = 1.
    let deltas: Vec<u128> = w.iter().zip(&a).map(|(&w, &x)| if w { m.sub(0, x) } else { x }).collect();
    let first = tp.is_first();
    let (u, v) = if first {
        let u = delta_ot_send(ctx, tp.sender(), m, &deltas)?;
        (u, delta_ot_receive(ctx, tp.receiver(), m, w)?)
    } else {
        let u = delta_ot_receive(ctx, tp.receiver(), m, w)?;
        (u, delta_ot_send(ctx, tp.sender(), m, &deltas)?)
    };
    Ok((0..a.len())
        .map(|i| {
            let own = if w[i] { a[i] } else { 0 };
            (if first { m.add(m.sub(own, u[i]), v[i]) } else { m.sub(m.add(own, u[i]), v[i]) }) as u64
        })
        .collect())
}

/// Shares in Z_2^to of `x` given in Z_2^from (`from < to ≤ 64`), read as signed (two's
/// complement) or unsigned.
pub fn extend(
    tp: &mut TwoParty,
    ctx: &mut Ctx,
    x: &[u64],
    from: u32,
    to: u32,
    signed: bool,
) -> Result<Vec<u64>> {
    check_shares(x, from)?;
    check_bits(to)?;
    if to <= from {
        return Err(MpcError::Invalid(format!("extension from Z_2^{from} to Z_2^{to}")));
    }
    let first = tp.is_first();
    let offset = if signed { 1u64 << (from - 1) } else { 0 };
    let y: Vec<u64> =
        x.iter().map(|&v| if first { v.wrapping_add(offset) & mask(from) } else { v }).collect();
    let w = wrap(tp, ctx, &y, from)?;
    let w = b2a(tp, ctx, &w, Modulus::PowerOfTwo(to - from))?;
    Ok(y.iter()
        .zip(w)
        .map(|(&v, w)| {
            let out = v.wrapping_sub(w << from);
            (if first { out.wrapping_sub(offset) } else { out }) & mask(to)
        })
        .collect())
}
