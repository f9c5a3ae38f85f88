//! The transformer layers of the `mm` family on fixed-point shares of Z_2^64 (the M&M paper,
//! §VI-C: BumbleBee's layers with M&M's Exp, OPPE and Z_p-OLE products; what the paper
//! leaves to BumbleBee is built as below):
//!
//! - **GeLU**: OPPE with the paper's coefficients ([`crate::oppe`]).
//! - **Softmax** over rows: `d = x − max(x)` (row maxima by comparisons), clipped at
//!   `−T·ln 2` (one ReLU: `max(d, −c) = ReLU(d + c) − c`; BumbleBee clips at −14), `e^d` by
//!   the paper's Exp with `log2(e)` folded in ([`crate::exp`]), masked entries set to 0,
//!   row sums, one reciprocal per row ([`crate::recip`]) and one product.
//! - **LayerNorm**: `μ = Σx·⌊2^S/k⌉ / 2^S`, `z = x − μ`, `z²` by the OLE,
//!   `1/σ = √k · 1/√(Σz²)` (one reciprocal square root per row, the `1/k` folded into a public
//!   factor so that no sum of squares is divided), then `γ ⊙ z/σ + β` by two products. The
//!   inverses carry [`INVERSE_EXTRA`] more fractional bits into the product that uses them.
//!
//! Masked softmax entries enter the row maximum as `−2^20`, below any score the ranges allow.

use veil_he::ole::Ole;
use veil_mpc::{Ctx, MpcError, Result};
use veil_twopc::TwoParty;
use veil_twopc::millionaire;
use veil_twopc::nonlinear::{max_rows_in, relu_in};
use veil_twopc::trunc::trunc;

use crate::exp::exp;
use crate::oppe::{Piecewise, oppe_in};
use crate::products::{BITS, COMPARE_BITS, mul_shift};
use crate::recip::{self, Inverse, Range, inverse, inverse_in};

/// Exp's range `T`: `e^d` for `d ≥ −T·ln 2 ≈ −13.9`, clipped below.
pub const EXP_RANGE: u32 = 20;
/// Bits of the public `⌊2^S/k⌉` of a row mean.
pub const MEAN_BITS: u32 = 28;
/// Bits of the public `⌊√k·2^S⌉` of LayerNorm.
pub const SQRT_BITS: u32 = 20;
/// Fractional bits the inverses carry beyond `f`: `1/Σ e^d ≥ 1/k` and `1/√Σz²` are small, and
/// at `f` bits alone their relative precision would be that of their few leading units.
pub const INVERSE_EXTRA: u32 = 12;
/// A masked score, in reals.
pub const MASKED: f64 = -1_048_576.0;

fn fixed(v: f64, f: u32) -> u64 {
    (v * (1u64 << f) as f64).floor() as i64 as u64
}

fn narrow(v: Vec<u128>) -> Vec<u64> {
    v.into_iter().map(|e| e as u64).collect()
}

/// The clip `c = ⌊T·ln 2·2^f⌋`.
pub fn clip(f: u32) -> u64 {
    fixed(f64::from(EXP_RANGE) * std::f64::consts::LN_2, f)
}

/// `⌊x·c / 2^s⌋` for a public `c` (one truncation).
fn scale(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], c: u64, s: u32) -> Result<Vec<u64>> {
    let prod: Vec<u64> = x.iter().map(|&v| v.wrapping_mul(c)).collect();
    trunc(tp, ctx, &prod, BITS, s)
}

fn row_sums(x: &[u64], k: usize) -> Vec<u64> {
    x.chunks(k).map(|r| r.iter().fold(0u64, |a, &b| a.wrapping_add(b))).collect()
}

fn broadcast(v: &[u64], k: usize) -> Vec<u64> {
    v.iter().flat_map(|&x| std::iter::repeat_n(x, k)).collect()
}

/// GeLU, elementwise.
pub fn gelu(tp: &mut TwoParty, ole: &Ole, ctx: &mut Ctx, x: &[u64], f: u32) -> Result<Vec<u64>> {
    Ok(narrow(oppe_in(tp, ole, ctx, &Piecewise::gelu(), x, (BITS, COMPARE_BITS), f)?))
}

/// Softmax over the rows of `[rows, k]`; `mask[i] = true` leaves entry `i` out (0).
#[allow(clippy::too_many_arguments, reason = "the sessions, the values and their layout")]
pub fn softmax(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: &[u64],
    (rows, k): (usize, usize),
    mask: Option<&[bool]>,
    f: u32,
) -> Result<Vec<u64>> {
    if k == 0 || x.len() != rows * k || mask.is_some_and(|m| m.len() != x.len()) {
        return Err(MpcError::Invalid(format!("softmax of {} values as [{rows}, {k}]", x.len())));
    }
    let first = tp.is_first();
    let masked = |i: usize| mask.is_some_and(|m| m[i]);
    let own = |v: u64| if first { v } else { 0 };
    let x: Vec<u64> =
        x.iter().enumerate().map(|(i, &v)| if masked(i) { own(fixed(MASKED, f)) } else { v }).collect();
    let m = broadcast(&max_rows_in(tp, ctx, &x, (rows, k), BITS, COMPARE_BITS)?, k);
    let c = clip(f);
    let shifted: Vec<u64> = x.iter().zip(&m).map(|(&v, &m)| v.wrapping_sub(m).wrapping_add(own(c))).collect();
    let d: Vec<u64> =
        relu_in(tp, ctx, &shifted, BITS, COMPARE_BITS)?.into_iter().map(|v| v.wrapping_sub(own(c))).collect();
    let e: Vec<u64> = narrow(exp(tp, ole, ctx, &d, BITS, f, EXP_RANGE)?)
        .into_iter()
        .enumerate()
        .map(|(i, v)| if masked(i) { 0 } else { v })
        .collect();
    let r = inverse_in(
        tp,
        ole,
        ctx,
        &row_sums(&e, k),
        (f, INVERSE_EXTRA),
        Inverse::Reciprocal,
        softmax_range(k),
    )?;
    mul_shift(tp, ole, ctx, &e, &broadcast(&r, k), f + INVERSE_EXTRA)
}

/// The range of a softmax row's sum: from the largest entry's `e^0 = 1` (less its error) to
/// `k`.
pub fn softmax_range(k: usize) -> Range {
    Range(-1, (usize::BITS - k.leading_zeros()) as i32 + 1)
}

/// `⌊2^S/k⌉` (`S` = [`MEAN_BITS`]) and `⌊√k·2^S'⌉` (`S'` = [`SQRT_BITS`]).
pub fn row_factors(k: usize) -> (u64, u64) {
    let s = f64::from(1u32 << MEAN_BITS);
    ((s / k as f64).round() as u64, ((k as f64).sqrt() * f64::from(1u32 << SQRT_BITS)).round() as u64)
}

/// LayerNorm over the rows of `[rows, k]` with `γ`, `β` of `k` entries.
#[allow(clippy::too_many_arguments, reason = "the sessions, the values and their layout")]
pub fn layernorm(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: &[u64],
    (gamma, beta): (&[u64], &[u64]),
    (rows, k): (usize, usize),
    f: u32,
) -> Result<Vec<u64>> {
    if k == 0 || x.len() != rows * k || gamma.len() != k || beta.len() != k {
        return Err(MpcError::Invalid(format!("LayerNorm of {} values as [{rows}, {k}]", x.len())));
    }
    let (inv_k, sqrt_k) = row_factors(k);
    let mean = broadcast(&scale(tp, ctx, &row_sums(x, k), inv_k, MEAN_BITS)?, k);
    let z: Vec<u64> = x.iter().zip(&mean).map(|(&a, &b)| a.wrapping_sub(b)).collect();
    let squares = mul_shift(tp, ole, ctx, &z, &z, f)?;
    let r = inverse(tp, ole, ctx, &row_sums(&squares, k), f, Inverse::Rsqrt, INVERSE_EXTRA)?;
    let r = scale(tp, ctx, &r, sqrt_k, SQRT_BITS)?;
    let y = mul_shift(tp, ole, ctx, &z, &broadcast(&r, k), f + INVERSE_EXTRA)?;
    let gammas: Vec<u64> = (0..rows).flat_map(|_| gamma.iter().copied()).collect();
    let y = mul_shift(tp, ole, ctx, &y, &gammas, f)?;
    Ok(y.iter().enumerate().map(|(i, &v)| v.wrapping_add(beta[i % k])).collect())
}

/// COTs of ReLUs and maxima on `n` comparisons: `(P0 sending, P1 sending)`.
pub fn comparisons(n: usize) -> (usize, usize) {
    let (a, b) = millionaire::cots_needed(n, COMPARE_BITS - 1);
    (a + n, b + n)
}

fn add(a: (usize, usize), b: (usize, usize)) -> (usize, usize) {
    (a.0 + b.0, a.1 + b.1)
}

/// COTs of [`gelu`] on `n` values.
pub fn gelu_cots(n: usize) -> (usize, usize) {
    let g = Piecewise::gelu();
    let degree = g.pieces.iter().map(|p| p.len().saturating_sub(1)).max().unwrap_or(0);
    let (a, b) = millionaire::cots_needed(n * g.breaks.len(), COMPARE_BITS - 1);
    let pieces = g.pieces.len();
    // The lift, a truncation per power past the first, a multiplexer per piece, the way back.
    (a + n + n * degree.saturating_sub(1) + n * pieces + n, b + n * pieces)
}

/// COTs of [`softmax`] on `[rows, k]`.
pub fn softmax_cots(rows: usize, k: usize, f: u32) -> (usize, usize) {
    let n = rows * k;
    let mut c = comparisons(rows * k.saturating_sub(1));
    c = add(c, comparisons(n));
    // Exp: a conversion and the way back; the products: three conversions each.
    c = add(c, (2 * n + 3 * n, 0));
    add(c, recip::cots_in(Inverse::Reciprocal, rows, f, softmax_range(k)))
}

/// COTs of [`layernorm`] on `[rows, k]`.
pub fn layernorm_cots(rows: usize, k: usize, f: u32) -> (usize, usize) {
    let n = rows * k;
    let c = (rows + 3 * n + rows + 3 * n + 3 * n, 0);
    add(c, recip::cots(Inverse::Rsqrt, rows, f))
}
