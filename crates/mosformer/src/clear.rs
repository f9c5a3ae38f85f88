//! The family's gates in the clear: the same tables, rings and steps as the secure gates
//! ([`crate::gelu`], [`crate::exp`], [`crate::recip`], [`crate::max`], [`crate::softmax`],
//! [`crate::layernorm`]) and the precision plan of [`crate::ops`], on plain integers, behind
//! `veil-mpc`'s [`FixedReference`]. It is what the plaintext fixed-point executor runs, so a
//! model's numerics under Mosformer can be followed without MPC.
//!
//! Values are `Z_2^64` elements read as signed integers (`i64`, wrapping arithmetic, as the
//! MAC ring computes). A comparison in a working ring `Z_2^ℓ` is the sign of the value reduced
//! mod `2^ℓ`; a table index is the value mod `2^{ℓ_t}`; both exactly as the secure gates read
//! them. Where the secure run is exact, so is this (a gate's comparisons, selections and
//! lookups given the same input); its truncations are exact floors `⌊x/d⌋` where the
//! protocol's ([`crate::trunc`]) and local downcasts ([`crate::convert`]) may be a unit or two
//! low, so whole gates agree up to those units (tested in `tests/clear.rs`).
//!
//! **Ranges** (mixed rings; with [`Rings::Z64`] every bound is that of `Z_2^64` at 16 bits and
//! the reciprocal's domain is `2^16`). Each layer reports an input outside its valid range:
//! ReLU and GELU need `|x| < 512 − 2^-5` (comparisons in `Z_2^16` at 6 fractional bits, after a
//! downcast that may lose two units); softmax needs
//! differences from the row maximum below `2^19` (`Z_2^32` at 12 bits) and a row length below
//! `2^12` (the reciprocal's domain); LayerNorm needs the variance below 4096, and is reported
//! when a variance falls below `2^-8`: Rsqrt itself is accurate down to one unit (`2^-12`), but
//! the variance, truncated to 12 fractional bits, then keeps fewer than 5 significant bits.

use veil_mpc::reference::{Checked, Excess, FixedReference};
use veil_ring::{Z2k, Z16, Z32, Z64};

use crate::exp::{EXP_COEFFICIENTS, pow2_table, table_bits};
use crate::gelu::{DELTA_COEFFICIENTS, F_IN, WORK_BITS};
use crate::layernorm::F_LIN;
use crate::ops::{FRAC_BITS, Rings};
use crate::recip::{BASE, Kind, THRESHOLDS, main_table, scale_bits, scale_table};
use crate::rss::fixed;

/// Largest `|x|` the 16-bit comparisons of ReLU and GELU read right, in real terms: `2^9`
/// less two units at 6 fractional bits, since the local downcast to them may be two units low
/// (an input just above `−512` would otherwise wrap to a positive 16-bit value).
const ACTIVATION_LIMIT: f64 = 512.0 - 2.0 / 64.0;

/// `⌊x / d⌋` (the exact truncation).
fn floor_div(x: i64, d: u64) -> i64 {
    x.div_euclid(d as i64)
}

/// Whether `x mod 2^ℓ` is non-negative as an `ℓ`-bit signed value (DReLU in `Z_2^ℓ`).
fn nonneg<R: Z2k>(x: i64) -> bool {
    R::from_i64(x).to_signed() >= 0
}

/// Select: `v` when the condition (read in `Z_2^ℓ`) is non-negative, else 0.
fn select<R: Z2k>(cond: i64, v: i64) -> i64 {
    if nonneg::<R>(cond) { v } else { 0 }
}

/// A table index: `x mod 2^bits`.
fn index(x: i64, bits: u32) -> usize {
    (x as u64 & ((1u64 << bits) - 1)) as usize
}

fn largest(x: &[i64], f: u32) -> f64 {
    x.iter().map(|v| v.unsigned_abs()).max().unwrap_or(0) as f64 / f64::from(1u32 << f)
}

/// Π_GELU's arithmetic on an input with 6 fractional bits, output with 6 (conditions in
/// `Z_2^16`, the polynomial of `ReLU − GELU` in 16 fractional bits).
pub fn gelu_6(x: &[i64]) -> Vec<i64> {
    gelu::<Z16>(x, F_IN, F_IN)
}

/// Π_GELU's arithmetic on an input with `f ≥ 6` fractional bits, output with `f_out ≥ f`
/// (conditions in `Z_2^ℓ`, the clip compared at 6 bits; every truncation exact).
pub fn gelu<R: Z2k>(x: &[i64], f: u32, f_out: u32) -> Vec<i64> {
    let w = WORK_BITS;
    let c: Vec<i64> = DELTA_COEFFICIENTS.iter().map(|&v| fixed(v, w)).collect();
    let c2: Vec<i64> = DELTA_COEFFICIENTS.iter().map(|&v| fixed(v, 2 * w)).collect();
    x.iter()
        .map(|&x| {
            let p = select::<R>(x, x);
            let a = p.wrapping_mul(2).wrapping_sub(x);
            let a6 = floor_div(a, 1 << (f - F_IN));
            let t = select::<R>(256i64.wrapping_sub(a6), a);
            // Wrapping, as the ring does: an input out of the plan's range (which the reference
            // reports) may select a huge `t`.
            let half_t = if f < w { t.wrapping_shl(w - 1 - f) } else { floor_div(t, 1 << (f + 1 - w)) };
            let u = half_t.wrapping_sub(1 << w);
            let (mul, add) = (i64::wrapping_mul, i64::wrapping_add);
            let linear = |k: usize| add(mul(u, c[k + 1]), c2[k]);
            let u2 = floor_div(mul(u, u), 1 << w);
            let (a1, a3) = (floor_div(linear(2), 1 << w), floor_div(linear(6), 1 << w));
            let b0 = add(linear(0), mul(u2, a1));
            let u4 = floor_div(mul(u2, u2), 1 << w);
            let b1 = floor_div(add(linear(4), mul(u2, a3)), 1 << w);
            let d = floor_div(add(b0, mul(u4, b1)), 1 << (2 * w - f_out));
            p.wrapping_shl(f_out - f).wrapping_sub(d)
        })
        .collect()
}

/// Π_Exp's arithmetic for `x ≤ 0` with `f` fractional bits (comparisons in `Z_2^ℓ`).
pub fn exp<R: Z2k>(x: &[i64], f: u32) -> Option<Vec<i64>> {
    let table = pow2_table(f).ok()?;
    let ln2 = (std::f64::consts::LN_2 * f64::from(1u32 << f)).floor() as i64;
    let [c0, c1, c2, c3, c4] = EXP_COEFFICIENTS;
    let top = i64::from(f) + 2;
    Some(
        x.iter()
            .map(|&x| {
                let z = floor_div(x.wrapping_neg(), ln2 as u64);
                let p = z.wrapping_mul(ln2).wrapping_add(x);
                let p2 = floor_div(p.wrapping_mul(p), 1 << f);
                let q = p
                    .wrapping_mul(fixed(c3, f))
                    .wrapping_add(p2.wrapping_mul(fixed(c4, f)))
                    .wrapping_add(fixed(c2, 2 * f));
                let q = floor_div(q, 1 << f);
                let e_p = p2
                    .wrapping_mul(q)
                    .wrapping_add(p.wrapping_mul(fixed(c1, f)))
                    .wrapping_add(fixed(c0, 2 * f));
                let e_p = floor_div(e_p, 1 << f);
                let z_clip = select::<R>(z.wrapping_sub(top), top.wrapping_sub(z)).wrapping_add(z);
                let e_z = table[index(z_clip, table_bits(f))];
                floor_div(e_p.wrapping_mul(e_z), 1 << (f + 2))
            })
            .collect(),
    )
}

/// Π_Inv or Π_Rsqrt's arithmetic with `f` fractional bits (comparisons in `Z_2^ℓ`).
pub fn recip<R: Z2k>(kind: Kind, x: &[i64], f: u32) -> Option<Vec<i64>> {
    let table = main_table(kind, f).ok()?;
    let scales = scale_table(kind, f);
    let exps = scale_table(Kind::Inv, f);
    let offset = 1i64 << (f - BASE.trailing_zeros());
    Some(
        x.iter()
            .map(|&x| {
                let k = (1..=THRESHOLDS as u32)
                    .filter(|&i| nonneg::<R>(x.wrapping_sub(BASE.pow(i) as i64)))
                    .count() as i64;
                let k1 = index(k + 1, scale_bits(f));
                let t_or_s = scales[k1];
                let t = if kind == Kind::Rsqrt { exps[k1] } else { t_or_s };
                let q = floor_div(x.wrapping_mul(t), 1 << f);
                let w = table[index(q.wrapping_sub(offset), f)];
                floor_div(t_or_s.wrapping_mul(w), 1 << f)
            })
            .collect(),
    )
}

/// The maxima of the rows of `[rows, k]` by Π_Max's tournament (comparisons in `Z_2^ℓ`).
pub fn max_rows<R: Z2k>(x: &[i64], rows: usize, k: usize) -> Vec<i64> {
    max_rows_at::<R>(x, rows, k, 0)
}

/// [`max_rows`] with each comparison reading the difference `shift` bits coarser (exactly
/// `⌊d / 2^shift⌋`; the secure downcast may read up to two units lower).
pub fn max_rows_at<R: Z2k>(x: &[i64], rows: usize, k: usize, shift: u32) -> Vec<i64> {
    let mut cur: Vec<Vec<i64>> = x.chunks(k.max(1)).map(<[i64]>::to_vec).take(rows).collect();
    for row in &mut cur {
        while row.len() > 1 {
            let p = row.len() / 2;
            let mut next: Vec<i64> = (0..p)
                .map(|j| {
                    let d = row[j].wrapping_sub(row[p + j]);
                    select::<R>(floor_div(d, 1 << shift), d).wrapping_add(row[p + j])
                })
                .collect();
            next.extend_from_slice(&row[2 * p..]);
            *row = next;
        }
    }
    cur.into_iter().map(|r| r[0]).collect()
}

/// Π_Softmax's arithmetic on `[rows, k]` with `f` fractional bits (Max and Exp comparing in
/// `C`, Max `cmp_shift` bits coarser; the reciprocal's comparisons in `R`).
pub fn softmax_f<R: Z2k, C: Z2k>(
    x: &[i64],
    rows: usize,
    k: usize,
    mask: Option<&[bool]>,
    f: u32,
    cmp_shift: u32,
) -> Option<Vec<i64>> {
    if x.len() != rows * k || mask.is_some_and(|m| m.len() != x.len()) || k == 0 {
        return None;
    }
    let keep = |e: usize| mask.is_none_or(|m| !m[e]);
    let x_m: Vec<i64> = (0..x.len()).map(|e| if keep(e) { x[e] } else { x[e - e % k] }).collect();
    let m = max_rows_at::<C>(&x_m, rows, k, cmp_shift);
    let margin = crate::softmax::shift_margin(k, cmp_shift);
    let delta: Vec<i64> = (0..x.len()).map(|e| x_m[e].wrapping_sub(m[e / k]).wrapping_sub(margin)).collect();
    let mut e = exp::<C>(&delta, f)?;
    for (i, v) in e.iter_mut().enumerate() {
        if !keep(i) {
            *v = 0;
        }
    }
    let sums: Vec<i64> = e.chunks(k).map(|r| r.iter().fold(0i64, |a, &v| a.wrapping_add(v))).collect();
    let r = recip::<R>(Kind::Inv, &sums, f)?;
    Some(
        (0..x.len())
            .map(|i| if keep(i) { floor_div(e[i].wrapping_mul(r[i / k]), 1 << f) } else { 0 })
            .collect(),
    )
}

/// LayerNorm's arithmetic (`F_LIN` fractional bits; Rsqrt at `f_rsqrt` in `Z_2^ℓ`); also the
/// variances (with `f_rsqrt` fractional bits), for the range report.
pub fn layernorm_16<R: Z2k>(
    x: &[i64],
    gamma: &[i64],
    beta: &[i64],
    rows: usize,
    k: usize,
    f_rsqrt: u32,
) -> Option<(Vec<i64>, Vec<i64>)> {
    if x.len() != rows * k || gamma.len() != k || beta.len() != k || k == 0 {
        return None;
    }
    let mul = |a: i64, b: i64| floor_div(a.wrapping_mul(b), 1 << F_LIN);
    let sum = |r: &[i64]| r.iter().fold(0i64, |a, &v| a.wrapping_add(v));
    let mean: Vec<i64> = x.chunks(k).map(|r| floor_div(sum(r), k as u64)).collect();
    let z: Vec<i64> = (0..x.len()).map(|e| x[e].wrapping_sub(mean[e / k])).collect();
    let sq: Vec<i64> = z.iter().map(|&v| mul(v, v)).collect();
    let var: Vec<i64> = sq.chunks(k).map(|r| floor_div(sum(r), (k as u64) << (F_LIN - f_rsqrt))).collect();
    let rs = recip::<R>(Kind::Rsqrt, &var, f_rsqrt)?;
    let y = (0..x.len())
        .map(|e| {
            let normed = mul(z[e], rs[e / k].wrapping_mul(1 << (F_LIN - f_rsqrt)));
            mul(normed, gamma[e % k]).wrapping_add(beta[e % k])
        })
        .collect();
    Some((y, var))
}

/// Mosformer's layers in the clear, in the precision plan of [`crate::ops`] (values in and out
/// with [`FRAC_BITS`] fractional bits) for the gates' working rings.
#[derive(Debug, Clone, Copy, Default)]
pub struct MosformerReference {
    /// The rings the secure gates would use.
    pub rings: Rings,
}

impl MosformerReference {
    /// The mixed-ring plan (the paper's modulus conversion).
    pub const MIXED: Self = MosformerReference { rings: Rings::Mixed };
    /// Everything in `Z_2^64` at 16 fractional bits.
    pub const Z64: Self = MosformerReference { rings: Rings::Z64 };
}

fn over(what: &str, value: f64, limit: f64) -> Option<Excess> {
    (value >= limit).then(|| Excess { what: what.into(), value, limit })
}

impl FixedReference for MosformerReference {
    fn frac_bits(&self) -> u32 {
        FRAC_BITS
    }

    /// Mixed rings: the condition read in `Z_2^16` at 6 fractional bits, the value kept.
    fn relu(&self, x: &[i64]) -> Checked {
        let shift = FRAC_BITS - F_IN;
        let values = match self.rings {
            Rings::Mixed => x.iter().map(|&v| select::<Z16>(v >> shift, v)).collect(),
            Rings::Z64 => x.iter().map(|&v| select::<Z64>(v, v)).collect(),
        };
        Checked { values, excess: self.activation_excess("ReLU input", x) }
    }

    /// Mixed rings: truncated to 6 fractional bits, Π_GELU, scaled back.
    fn gelu(&self, x: &[i64]) -> Option<Checked> {
        let values = match self.rings {
            Rings::Mixed => {
                let x6: Vec<i64> = x.iter().map(|&v| floor_div(v, 1 << (FRAC_BITS - F_IN))).collect();
                gelu::<Z16>(&x6, F_IN, FRAC_BITS)
            }
            Rings::Z64 => gelu::<Z64>(x, FRAC_BITS, FRAC_BITS),
        };
        Some(Checked { values, excess: self.activation_excess("GELU input", x) })
    }

    /// Truncated to softmax's fractional bits, Π_Softmax, scaled back.
    fn softmax(&self, x: &[i64], rows: usize, k: usize, mask: Option<&[bool]>) -> Option<Checked> {
        let f = crate::ops::softmax_bits(self.rings);
        let shift = FRAC_BITS - f;
        let xf: Vec<i64> = x.iter().map(|&v| floor_div(v, 1 << shift)).collect();
        let s = match self.rings {
            Rings::Mixed => softmax_f::<Z32, Z16>(&xf, rows, k, mask, f, f - F_IN)?,
            Rings::Z64 => softmax_f::<Z64, Z64>(&xf, rows, k, mask, f, 0)?,
        };
        let keep = |e: usize| mask.is_none_or(|m| !m[e]);
        let spread = (0..rows)
            .filter_map(|r| {
                let kept = || (r * k..(r + 1) * k).filter(|&e| keep(e)).map(|e| x[e]);
                Some(kept().max()?.wrapping_sub(kept().min()?))
            })
            .max()
            .unwrap_or(0);
        // The row spread must fit the comparisons' ring, the row length the reciprocal's domain.
        let spread_limit = match self.rings {
            Rings::Mixed => ACTIVATION_LIMIT,
            Rings::Z64 => 2f64.powi(46),
        };
        let excess = over("softmax row spread", largest(&[spread], FRAC_BITS), spread_limit)
            .or_else(|| over("softmax row length", k as f64, f64::from(1u32 << f)));
        Some(Checked { values: s.into_iter().map(|v| v.wrapping_mul(1 << shift)).collect(), excess })
    }

    fn layernorm(&self, x: &[i64], gamma: &[i64], beta: &[i64], rows: usize, k: usize) -> Option<Checked> {
        let f = crate::ops::softmax_bits(self.rings);
        let (values, var) = match self.rings {
            Rings::Mixed => layernorm_16::<Z32>(x, gamma, beta, rows, k, f)?,
            Rings::Z64 => layernorm_16::<Z64>(x, gamma, beta, rows, k, f)?,
        };
        let (lo, hi) = (var.iter().copied().min().unwrap_or(0), var.iter().copied().max().unwrap_or(0));
        let scale = f64::from(1u32 << f);
        // Below 2^4 units the variance keeps fewer than 5 significant bits (2^-8 at f = 12).
        let excess = over("LayerNorm variance", hi as f64 / scale, scale).or_else(|| {
            (lo < 1 << 4).then(|| Excess {
                what: format!("LayerNorm variance below 2^-{} (under 5 significant bits at f = {f})", f - 4),
                value: lo as f64 / scale,
                limit: 16.0 / scale,
            })
        });
        Some(Checked { values, excess })
    }
}

impl MosformerReference {
    /// Inputs past the comparisons' range: `|x| < 512 − 2^-5` in `Z_2^16` at 6 bits (mixed rings),
    /// `|x| < 2^47` in `Z_2^64` at 16 bits.
    fn activation_excess(&self, what: &str, x: &[i64]) -> Option<Excess> {
        let limit = match self.rings {
            Rings::Mixed => ACTIVATION_LIMIT,
            Rings::Z64 => 2f64.powi(47),
        };
        over(what, largest(x, FRAC_BITS), limit)
    }
}
