//! Constant-round base-2 exponentiation (the M&M paper, Fig. 8): one OLE per
//! value, six rounds, exact steps where earlier work truncated locally.
//!
//! For signed fixed-point shares `x` of `x̃ = rep(x)/2^f ∈ [−T, 0)` over `Z_2^ℓ`:
//!
//! ```text
//! 1  x' = x + (1 + T)·2^f                        (P0; now x̃' ∈ [1, 1 + T))
//! 2  t_b = ⌊x'_b/2^f⌋ ∈ Z_2^{ℓ−f},  m̃_b = (x'_b mod 2^f)/2^f ∈ [0, 1)
//!    t = t_0 + t_1 mod 2^{ℓ−f} ∈ {⌊x̃'⌋ − 1, ⌊x̃'⌋} ⊂ [0, 1 + T)   (never negative)
//! 3  h_0 + h_1 ≡ t (mod p − 1)                   (conversion Z_2^{ℓ−f} → Z_{p−1})
//! 4  u_b = 2^{h_b} · ⌊2^{m̃_b + f}⌋ mod p;  OLE: shares of u_0·u_1 = 2^{t + m̃_0 + m̃_1 + 2f}
//!    = 2^{x̃ + 1 + T + 2f}  (mod p, by Fermat: 2^{p−1} ≡ 1)
//! 5  Z_p → Z_2^ℓ with the truncation by f + 1 + T bits free (Fig. 7): shares of 2^{x̃}·2^f
//! ```
//!
//! Preconditions, kept by the caller: `x̃ ∈ [−T, 0)` (clip first) and
//! `log2 p ≥ 2f + T + 4` (the way back needs `u < 2^{⌊log2 p⌋ − 2}`). Error: each floor in
//! step 4 loses less than a part in `2^f`, and the last truncation at most one unit:
//! `|result − 2^{x̃}| < 2^{−f}·(2 + 2·2^{x̃})`.

use veil_he::ole::Ole;
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::Modulus;
use veil_twopc::TwoParty;

use crate::convert::convert;
use crate::trunc::field_to_ring_truncated;

fn pow_mod(mut base: u128, mut e: u128, p: u128) -> u128 {
    let mut acc = 1u128;
    base %= p;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc * base % p;
        }
        base = base * base % p;
        e >>= 1;
    }
    acc
}

/// Shares in `Z_2^ℓ` of `2^{x̃}` with `f` fractional bits (up to the error above) for shares
/// `x` in `Z_2^ℓ` of `x̃ ∈ [−T, 0)` with `f` fractional bits; `p` is the OLE's modulus.
pub fn exp2(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: &[u64],
    l: u32,
    f: u32,
    range: u32,
) -> Result<Vec<u128>> {
    exp2_scaled(tp, ole, ctx, x, l, (f, f), range)
}

/// `e^{x̃}` as `2^{log2(e)·x̃}` (the paper's Exp): `x` is multiplied by `⌊log2(e)·2^f⌉`
/// locally and the product, with `2f` fractional bits, goes into [`exp2_scaled`] untruncated.
/// `x̃ ∈ [−T·ln 2, 0)`.
pub fn exp(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: &[u64],
    l: u32,
    f: u32,
    range: u32,
) -> Result<Vec<u128>> {
    let c = (std::f64::consts::LOG2_E * (1u64 << f) as f64).round() as u64;
    let mask = if l == 64 { u64::MAX } else { (1u64 << l) - 1 };
    let scaled: Vec<u64> = x.iter().map(|&v| v.wrapping_mul(c) & mask).collect();
    exp2_scaled(tp, ole, ctx, &scaled, l, (2 * f, f), range)
}

/// [`exp2`] for an input with `f_in` fractional bits and an output with `f_out`.
pub fn exp2_scaled(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: &[u64],
    l: u32,
    (f_in, f_out): (u32, u32),
    range: u32,
) -> Result<Vec<u128>> {
    let p = ole.modulus();
    let p_bits = 64 - p.leading_zeros();
    let fits = (2..=64).contains(&l) && f_in >= 1 && f_out >= 1 && f_in < 53 && f_in + 2 + range.ilog2() < l;
    if !fits || range == 0 || p_bits < 2 * f_out + range + 4 {
        return Err(MpcError::Invalid(format!(
            "2^x on Z_2^{l} with {f_in} fractional bits in, {f_out} out, T = {range}: needs the input's integer part \
             to fit ℓ and log2 p ≥ 2·f_out + T + 4 (p has {p_bits} bits)"
        )));
    }
    let mask = if l == 64 { u64::MAX } else { (1u64 << l) - 1 };
    let first = tp.is_first();
    let offset = u64::from(1 + range) << f_in;
    let shifted: Vec<u64> =
        x.iter().map(|&v| if first { v.wrapping_add(offset) & mask } else { v & mask }).collect();
    let high: Vec<u64> = shifted.iter().map(|&v| v >> f_in).collect();
    let frac: Vec<u64> = shifted.iter().map(|&v| v & ((1u64 << f_in) - 1)).collect();
    // t ∈ [0, 1 + T): positive and tiny against 2^{ℓ−f}; any L ≥ 1 + T up to a quarter works.
    let m = 1u128 << (l - f_in);
    let h = convert(tp, ctx, &high, m, Modulus::Integer(p - 1), m / 4)?;
    let pm = u128::from(p);
    let u: Vec<u64> = h
        .iter()
        .zip(&frac)
        .map(|(&h, &fr)| {
            let mantissa =
                ((fr as f64 / (1u64 << f_in) as f64).exp2() * (1u64 << f_out) as f64).floor() as u128;
            (pow_mod(2, h, pm) * mantissa % pm) as u64
        })
        .collect();
    // One OLE per value: P1 holds the key and queries with u_1, P0 answers with u_0.
    let shares = if first {
        ole.answer(ctx, &[&u])?
    } else {
        ole.send_queries(ctx, &[&u])?;
        ole.receive_answers(ctx, 1, u.len())?
    };
    field_to_ring_truncated(tp, ctx, &shares, p, f_out + 1 + range, l)
}
