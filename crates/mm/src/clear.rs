//! The `mm` family's fixed-point arithmetic in the clear ([`FixedReference`]): what its
//! transformer layers compute ([`crate::transformer`]), step for step with exact truncations,
//! and where an input leaves the range the protocols need.
//!
//! Ranges reported: a ReLU input from `2^23` on (its sign is read in `Z_2^40`), a GeLU input
//! from `2^20` on (the OPPE's top piece leaves the field's
//! headroom), a softmax score from `2^19` on (masked scores enter the maxima as `−2^20`), a
//! LayerNorm row whose sum of squared deviations is outside `[2^LOW, 2^HIGH)` (the reciprocal
//! square root's range, [`crate::recip`]) or whose mean reaches `2^18` (the mean's product
//! stays below the truncation's `2^62`).

use veil_mpc::reference::{Checked, Excess, FixedReference};

use crate::family::FRAC_BITS;
use crate::oppe::Piecewise;
use crate::products::COMPARE_BITS;
use crate::recip::{HIGH, Inverse, LOW, inverse_clear, inverse_clear_in};
use crate::transformer::{INVERSE_EXTRA, MASKED, MEAN_BITS, SQRT_BITS, clip, row_factors, softmax_range};

/// The `mm` family's reference.
#[derive(Debug, Clone, Copy, Default)]
pub struct MmReference;

const F: u32 = FRAC_BITS;

fn real(v: i64) -> f64 {
    v as f64 / f64::from(1u32 << F)
}

fn fixed(v: f64, bits: u32) -> i64 {
    (v * (1u64 << bits) as f64).round() as i64
}

fn shift(v: i128, s: u32) -> i64 {
    (v >> s) as i64
}

/// The first value at or past `limit` in magnitude.
fn beyond(what: &str, x: &[i64], limit: f64) -> Option<Excess> {
    x.iter().map(|&v| real(v).abs()).find(|&v| v >= limit).map(|value| Excess {
        what: what.into(),
        value,
        limit,
    })
}

/// GeLU as the OPPE computes it: the piece by comparisons, powers truncated by `2^f`, the
/// coefficients at `f` bits (`2f` for the constant), one truncation at the end.
fn gelu_one(g: &Piecewise, x: i64) -> i64 {
    let piece = g.breaks.iter().filter(|&&b| x > fixed(b, F)).count();
    let coeffs = &g.pieces[piece];
    let mut power = x;
    let mut acc = i128::from(fixed(coeffs[0], 2 * F));
    for (j, &a) in coeffs.iter().enumerate().skip(1) {
        if j > 1 {
            power = shift(i128::from(power) * i128::from(x), F);
        }
        acc += i128::from(power) * i128::from(fixed(a, F));
    }
    shift(acc, F)
}

/// `e^d` for `d ≤ 0` as the Exp computes it (log2(e) at `f` bits, the input at `2f`), to the
/// unit.
fn exp_one(d: i64) -> i64 {
    let c = fixed(std::f64::consts::LOG2_E, F);
    let e = (i128::from(d) * i128::from(c)) as f64 / (1u64 << (2 * F)) as f64;
    (e.exp2() * f64::from(1u32 << F)).floor() as i64
}

impl FixedReference for MmReference {
    fn frac_bits(&self) -> u32 {
        F
    }

    /// Exact where the sign read in `Z_2^40` is the value's.
    fn relu(&self, x: &[i64]) -> Checked {
        let limit = (1u64 << (COMPARE_BITS - 1 - F)) as f64;
        Checked { values: x.iter().map(|&v| v.max(0)).collect(), excess: beyond("ReLU input", x, limit) }
    }

    fn gelu(&self, x: &[i64]) -> Option<Checked> {
        let g = Piecewise::gelu();
        Some(Checked {
            values: x.iter().map(|&v| gelu_one(&g, v)).collect(),
            excess: beyond("GELU input", x, f64::from(1u32 << 20)),
        })
    }

    fn softmax(&self, x: &[i64], rows: usize, k: usize, mask: Option<&[bool]>) -> Option<Checked> {
        let masked = |i: usize| mask.is_some_and(|m| m.get(i) == Some(&true));
        let c = clip(F) as i64;
        let mut values = Vec::with_capacity(x.len());
        for r in 0..rows {
            let row: Vec<i64> =
                (r * k..(r + 1) * k).map(|i| if masked(i) { fixed(MASKED, F) } else { x[i] }).collect();
            let m = row.iter().copied().max().unwrap_or(0);
            let e: Vec<i64> = row
                .iter()
                .enumerate()
                .map(|(j, &v)| if masked(r * k + j) { 0 } else { exp_one((v - m).max(-c)) })
                .collect();
            let s =
                inverse_clear_in(e.iter().sum(), (F, INVERSE_EXTRA), Inverse::Reciprocal, softmax_range(k));
            values.extend(e.iter().map(|&v| shift(i128::from(v) * i128::from(s), F + INVERSE_EXTRA)));
        }
        let scores: Vec<i64> = (0..x.len()).filter(|&i| !masked(i)).map(|i| x[i]).collect();
        Some(Checked { values, excess: beyond("softmax score", &scores, f64::from(1u32 << 19)) })
    }

    fn layernorm(&self, x: &[i64], gamma: &[i64], beta: &[i64], rows: usize, k: usize) -> Option<Checked> {
        let (inv_k, sqrt_k) = row_factors(k);
        let (mut values, mut excess) = (Vec::with_capacity(x.len()), None);
        for row in x.chunks(k).take(rows) {
            let mean = shift(row.iter().map(|&v| i128::from(v)).sum::<i128>() * i128::from(inv_k), MEAN_BITS);
            let z: Vec<i64> = row.iter().map(|&v| v - mean).collect();
            let squares: i64 = z.iter().map(|&v| shift(i128::from(v) * i128::from(v), F)).sum();
            let sum = real(squares);
            if excess.is_none() {
                excess = if sum < f64::from(LOW).exp2() {
                    Some(Excess {
                        what: "LayerNorm sum of squared deviations (low)".into(),
                        value: sum,
                        limit: f64::from(LOW).exp2(),
                    })
                } else if sum >= f64::from(HIGH).exp2() {
                    Some(Excess {
                        what: "LayerNorm sum of squared deviations".into(),
                        value: sum,
                        limit: f64::from(HIGH).exp2(),
                    })
                } else {
                    beyond("LayerNorm row mean", &[mean], f64::from(1u32 << 18))
                };
            }
            let r = inverse_clear(squares, F, Inverse::Rsqrt, INVERSE_EXTRA);
            let r = shift(i128::from(r) * i128::from(sqrt_k), SQRT_BITS);
            for (j, &v) in z.iter().enumerate() {
                let y = shift(i128::from(v) * i128::from(r), F + INVERSE_EXTRA);
                values.push(shift(i128::from(y) * i128::from(gamma[j]), F) + beta[j]);
            }
        }
        Some(Checked { values, excess })
    }
}
