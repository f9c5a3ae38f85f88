//! Truncation (arithmetic right shift by `f` bits) of shares in Z_2^ℓ.
//!
//! With `y = x + 2^{ℓ−1}` (non-negative) and `y_b = u_b·2^f + l_b`:
//! `y >> f = u_0 + u_1 − 2^{ℓ−f}·wrap(y) + carry(l)`, where `wrap(y) = 1{y_0 + y_1 ≥ 2^ℓ}` and
//! `carry(l) = 1{l_0 + l_1 ≥ 2^f}`; then `x >> f = (y >> f) − 2^{ℓ−1−f}`.
//!
//! - [`trunc_exact`]: both bits by millionaires' runs (ℓ and f bits), lifted by B2A (the wrap
//!   bit mod 2^f, since it is multiplied by 2^{ℓ−f}). Exact for every value of the ring.
//! - [`trunc`]: the cheap truncation of M&M (Fig. 3, Π_wrap+, and §3.7) and SirNN for values
//!   known to satisfy `|x| < 2^{ℓ−2}`: then `y = x + 2^{ℓ−2} < 2^{ℓ−1}`, whose top bit is 0,
//!   so `wrap(y) = m_0 ∨ m_1` for the top bits `m_b` of the shares, `m_0 + m_1 − m_0·m_1`,
//!   one Δ-OT over Z_2^f. The carry is dropped: the result is `⌊x / 2^f⌋` or one less.
//!   Cost: 1 bit from P1, f bits from P0, 1 round. Outside the range the result is wrong.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::{Modulus, delta_ot_receive, delta_ot_send};

use crate::TwoParty;
use crate::compare::wrap;
use crate::convert::b2a;
use crate::ring::{check_shares, mask};

fn check_shift(bits: u32, f: u32, least: u32) -> Result<()> {
    if f == 0 || f + least > bits {
        return Err(MpcError::Invalid(format!("truncation by {f} bits in Z_2^{bits}")));
    }
    Ok(())
}

/// `⌊x / 2^f⌋` exactly, for any signed `x` in Z_2^bits.
pub fn trunc_exact(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], bits: u32, f: u32) -> Result<Vec<u64>> {
    check_shares(x, bits)?;
    check_shift(bits, f, 1)?;
    let first = tp.is_first();
    let half = 1u64 << (bits - 1);
    let y: Vec<u64> = x.iter().map(|&v| if first { v.wrapping_add(half) & mask(bits) } else { v }).collect();
    let low: Vec<u64> = y.iter().map(|&v| v & mask(f)).collect();
    let w = wrap(tp, ctx, &y, bits)?;
    let c = wrap(tp, ctx, &low, f)?;
    let w = b2a(tp, ctx, &w, Modulus::PowerOfTwo(f))?;
    let c = b2a(tp, ctx, &c, Modulus::PowerOfTwo(bits))?;
    Ok((0..x.len())
        .map(|i| {
            let mut out = (y[i] >> f).wrapping_sub(w[i] << (bits - f)).wrapping_add(c[i]);
            if first {
                out = out.wrapping_sub(half >> f);
            }
            out & mask(bits)
        })
        .collect())
}

/// `⌊x / 2^f⌋` or one less, for signed `x` with `|x| < 2^{bits−2}` (see the module docs).
pub fn trunc(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], bits: u32, f: u32) -> Result<Vec<u64>> {
    check_shares(x, bits)?;
    check_shift(bits, f, 2)?;
    let first = tp.is_first();
    let quarter = 1u64 << (bits - 2);
    let y: Vec<u64> =
        x.iter().map(|&v| if first { v.wrapping_add(quarter) & mask(bits) } else { v }).collect();
    let top: Vec<bool> = y.iter().map(|&v| v >> (bits - 1) & 1 == 1).collect();
    let m = Modulus::PowerOfTwo(f);
    // m_0·m_1 mod 2^f: P0's correlation m_0, P1's choice m_1.
    let prod = if first {
        delta_ot_send(ctx, tp.sender(), m, &top.iter().map(|&b| u128::from(b)).collect::<Vec<_>>())?
    } else {
        delta_ot_receive(ctx, tp.receiver(), m, &top)?
    };
    Ok((0..x.len())
        .map(|i| {
            // wrap = m_0 + m_1 − m_0·m_1 = (m_0 + a) + (m_1 − r), with r − a = m_0·m_1.
            let w = if first {
                u64::from(top[i]).wrapping_add(prod[i] as u64)
            } else {
                u64::from(top[i]).wrapping_sub(prod[i] as u64)
            };
            let mut out = (y[i] >> f).wrapping_sub(w << (bits - f));
            if first {
                out = out.wrapping_sub(quarter >> f);
            }
            out & mask(bits)
        })
        .collect())
}
