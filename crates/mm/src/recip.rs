//! Reciprocal and reciprocal square root on fixed-point shares, for softmax and LayerNorm.
//! The M&M paper takes them from BumbleBee and SPU without describing them; this is the usual normalise-then-Newton construction on the family's own pieces.
//!
//! For `x̃ = X/2^f ∈ [2^LOW, 2^HIGH)`, with `j` the position of `X`'s leading bit:
//!
//! ```text
//! 1  c_j = 1{X ≥ 2^j} = ¬MSB(X − 2^j)        for j_lo < j ≤ j_hi    (one batch of comparisons,
//!                                                                  in Z_2^{f+HIGH+2})
//! 2  c_j → Z_2^64                                                   (B2A, one Δ-OT each)
//! 3  a = Σ_j e_j·A_j = A_{j_lo} + Σ_j c_j·(A_j − A_{j−1})           (e_j = c_j − c_{j+1}: one-hot; local)
//! 4  m = X·A_j / 2^G ∈ [1, 2)    with A_j = 2^{G+f−j}              (one product)
//! 5  Newton from a linear start on [1, 2):
//!      1/m:  y ← y·(2 − m·y),          y_0 = 24/17 − 8/17·m   (relative error ≤ 1/17)
//!      1/√m: y ← y·(3 − m·y²)/2,        y_0 = 1.2744 − 0.2929·m (relative error ≤ 2.6%)
//! 6  1/x̃ = (1/m)·2^{f−j},  1/√x̃ = (1/√m)·2^{(f−j)/2}: one product with B_j/2^G, B = Σ e_j·B_j
//! ```
//!
//! Every step after the comparisons is a Z_p-OLE product ([`crate::products::mul_shift`]);
//! the one-hot selection of the scales costs nothing beyond the B2As. Three Newton steps
//! square the start's error three times, far below the `2^{−f}` of the encoding; what remains
//! is the products' truncations (a few units in the last place).
//!
//! **Range**: inputs below `2^LOW` are read as `2^LOW`'s bucket and come out wrong (bounded:
//! the Newton steps start from the bucket's guess); inputs from `2^HIGH` on likewise. The
//! fixed-point executor reports a LayerNorm variance outside the range before the run.

use veil_he::ole::Ole;
use veil_mpc::{Ctx, Result};
use veil_ot::flavours::Modulus;
use veil_twopc::TwoParty;
use veil_twopc::compare::msb;
use veil_twopc::convert::b2a;
use veil_twopc::millionaire;

use crate::products::{BITS, mul_shift};

/// The smallest input, `2^LOW` (reals).
pub const LOW: i32 = -8;
/// Inputs stay below `2^HIGH` (reals).
pub const HIGH: i32 = 30;
/// Fractional bits of the normalising scales.
const G: u32 = 30;
/// Newton steps.
const STEPS: usize = 3;

/// Which inverse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inverse {
    /// `1/x`.
    Reciprocal,
    /// `1/√x`.
    Rsqrt,
}

/// An input range `[2^low, 2^high)` (reals), within `[2^LOW, 2^HIGH)`: fewer leading-bit
/// tests for a caller that knows its inputs better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range(pub i32, pub i32);

impl Range {
    /// The widest range, `[2^LOW, 2^HIGH)`.
    pub const FULL: Range = Range(LOW, HIGH);

    fn check(self) -> Result<Self> {
        if LOW <= self.0 && self.0 < self.1 && self.1 <= HIGH {
            Ok(self)
        } else {
            Err(veil_mpc::MpcError::Invalid(format!(
                "an inverse on [2^{}, 2^{}): the range must lie in [2^{LOW}, 2^{HIGH})",
                self.0, self.1
            )))
        }
    }
}

/// The leading-bit positions tested: `(j_lo, j_hi]`.
fn thresholds(f: u32, r: Range) -> std::ops::RangeInclusive<u32> {
    let lo = (f as i32 + r.0).max(0) as u32;
    lo + 1..=(f as i32 + r.1 - 1) as u32
}

/// `A_j = 2^{G+f−j}` (normaliser) and `B_j` (the output's scale, `G` fractional bits).
fn scales(kind: Inverse, f: u32, j: u32) -> (u64, u64) {
    let a = 1u64 << (G + f - j);
    let b = match kind {
        Inverse::Reciprocal => a,
        Inverse::Rsqrt => ((f64::from(G) + (f64::from(f) - f64::from(j)) / 2.0).exp2()).round() as u64,
    };
    (a, b)
}

/// Products of one inverse at `n` values: normalising, the Newton steps, the scale.
fn products(kind: Inverse) -> usize {
    2 + STEPS * if kind == Inverse::Reciprocal { 2 } else { 3 }
}

/// The comparisons' ring: `X − 2^j` lies within `±2^{f+high}`.
fn compare_bits(f: u32, r: Range) -> u32 {
    (f as i32 + r.1 + 2) as u32
}

/// COTs `n` inverses use: `(P0 sending, P1 sending)`.
pub fn cots(kind: Inverse, n: usize, f: u32) -> (usize, usize) {
    cots_in(kind, n, f, Range::FULL)
}

/// [`cots`] on a narrower range.
pub fn cots_in(kind: Inverse, n: usize, f: u32, r: Range) -> (usize, usize) {
    let k = thresholds(f, r).count();
    let (a, b) = millionaire::cots_needed(n * k, compare_bits(f, r) - 1);
    // B2A and the starting guess's truncation from P0; three conversions per product.
    (a + n * k + n + 3 * n * products(kind), b)
}

fn fixed(v: f64, f: u32) -> u64 {
    (v * f64::from(1u32 << f)).round() as i64 as u64
}

/// Shares of `1/x̃` or `1/√x̃` with `f + extra` fractional bits (`extra ≤ 16`), for shares `x`
/// of `x̃ ∈ [2^LOW, 2^HIGH)` with `f`.
#[allow(clippy::too_many_arguments, reason = "the sessions, the values, their precision and the function")]
pub fn inverse(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: &[u64],
    f: u32,
    kind: Inverse,
    extra: u32,
) -> Result<Vec<u64>> {
    inverse_in(tp, ole, ctx, x, (f, extra), kind, Range::FULL)
}

/// [`inverse`] for inputs in `range`, with `f` fractional bits in and `f + extra` out.
pub fn inverse_in(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: &[u64],
    (f, extra): (u32, u32),
    kind: Inverse,
    range: Range,
) -> Result<Vec<u64>> {
    let range = range.check()?;
    if extra > 16 {
        return Err(veil_mpc::MpcError::Invalid(format!(
            "an inverse with {extra} extra fractional bits (at most 16)"
        )));
    }
    let (n, first) = (x.len(), tp.is_first());
    let js: Vec<u32> = thresholds(f, range).collect();
    // 1, 2. c_j as arithmetic shares, value-major.
    let cmp = compare_bits(f, range);
    let low = (1u64 << cmp) - 1;
    let diffs: Vec<u64> = x
        .iter()
        .flat_map(|&v| js.iter().map(move |&j| if first { v.wrapping_sub(1u64 << j) & low } else { v & low }))
        .collect();
    let c: Vec<bool> = msb(tp, ctx, &diffs, cmp)?.into_iter().map(|b| b ^ first).collect();
    let c = b2a(tp, ctx, &c, Modulus::PowerOfTwo(BITS))?;
    // 3. The scales of the leading bit, selected locally.
    let lo = js[0] - 1;
    let select = |which: fn((u64, u64)) -> u64| -> Vec<u64> {
        (0..n)
            .map(|i| {
                let base = if first { which(scales(kind, f, lo)) } else { 0 };
                js.iter().enumerate().fold(base, |acc, (t, &j)| {
                    let step = which(scales(kind, f, j)).wrapping_sub(which(scales(kind, f, j - 1)));
                    acc.wrapping_add(c[i * js.len() + t].wrapping_mul(step))
                })
            })
            .collect()
    };
    let a = select(|s| s.0);
    let b = select(|s| s.1);
    // 4. m ∈ [1, 2) with f fractional bits.
    let m = mul_shift(tp, ole, ctx, x, &a, G)?;
    // 5. The linear start, then Newton.
    let (c0, c1) = match kind {
        Inverse::Reciprocal => (24.0 / 17.0, 8.0 / 17.0),
        Inverse::Rsqrt => (1.2744, 0.2929),
    };
    let slope: Vec<u64> = m.iter().map(|&v| v.wrapping_mul(fixed(c1, f))).collect();
    let slope = veil_twopc::trunc::trunc(tp, ctx, &slope, BITS, f)?;
    let mut y: Vec<u64> =
        slope.iter().map(|&s| if first { fixed(c0, f).wrapping_sub(s) } else { s.wrapping_neg() }).collect();
    let constant = |k: f64| -> u64 { if first { fixed(k, f) } else { 0 } };
    for _ in 0..STEPS {
        y = match kind {
            Inverse::Reciprocal => {
                let e = mul_shift(tp, ole, ctx, &m, &y, f)?;
                let d: Vec<u64> = e.iter().map(|&e| constant(2.0).wrapping_sub(e)).collect();
                mul_shift(tp, ole, ctx, &y, &d, f)?
            }
            Inverse::Rsqrt => {
                let s = mul_shift(tp, ole, ctx, &y, &y, f)?;
                let e = mul_shift(tp, ole, ctx, &m, &s, f)?;
                let d: Vec<u64> = e.iter().map(|&e| constant(3.0).wrapping_sub(e)).collect();
                mul_shift(tp, ole, ctx, &y, &d, f + 1)?
            }
        };
    }
    // 6. Back to x̃'s scale.
    mul_shift(tp, ole, ctx, &y, &b, G - extra)
}

/// `1/x` or `1/√x` in the clear as [`inverse`] computes it (exact truncations), on the
/// integer encoding with `f` fractional bits, with `f + extra` out.
pub fn inverse_clear(x: i64, f: u32, kind: Inverse, extra: u32) -> i64 {
    inverse_clear_in(x, (f, extra), kind, Range::FULL)
}

/// [`inverse_clear`] on a narrower range.
pub fn inverse_clear_in(x: i64, (f, extra): (u32, u32), kind: Inverse, range: Range) -> i64 {
    let js: Vec<u32> = thresholds(f, range).collect();
    let lo = js[0] - 1;
    let j = js.iter().copied().filter(|&j| x >= 1i64 << j).max().unwrap_or(lo);
    let (a, b) = scales(kind, f, j);
    let shift = |v: i128, s: u32| -> i64 { (v >> s) as i64 };
    let m = shift(i128::from(x) * i128::from(a), G);
    let (c0, c1) = match kind {
        Inverse::Reciprocal => (24.0 / 17.0, 8.0 / 17.0),
        Inverse::Rsqrt => (1.2744, 0.2929),
    };
    let mut y = fixed(c0, f) as i64 - shift(i128::from(m) * i128::from(fixed(c1, f) as i64), f);
    let one = 1i64 << f;
    for _ in 0..STEPS {
        y = match kind {
            Inverse::Reciprocal => {
                let e = shift(i128::from(m) * i128::from(y), f);
                shift(i128::from(y) * i128::from(2 * one - e), f)
            }
            Inverse::Rsqrt => {
                let s = shift(i128::from(y) * i128::from(y), f);
                let e = shift(i128::from(m) * i128::from(s), f);
                shift(i128::from(y) * i128::from(3 * one - e), f + 1)
            }
        };
    }
    shift(i128::from(y) * i128::from(b), G - extra)
}
