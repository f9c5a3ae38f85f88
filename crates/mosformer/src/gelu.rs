//! Π_GELU (paper Algorithm 8, with its table replaced by a polynomial), for inputs with
//! `f ≥ 6` fractional bits (the precision plan runs activations in Z_2^16 with f = 6).
//!
//! `δ(x) = ReLU(x) − GELU(x)` is even and about 0 outside [-4, 4] (`δ(4) = 1.3·10^-4`), so
//! `GELU(x) = ReLU(x) − δ(t)` with `t = |x|` clipped to 0 above 4:
//! 1. `p = Select(x, x) = ReLU(x)`;
//! 2. `a = 2p − x = |x|`;
//! 3. `t = Select(256 − a₆, a)`: `|x|` when `|x| ≤ 4` (compared at 6 bits, `a₆`, the
//!    comparison ring's range), else 0;
//! 4. `δ(t) ≈ P(u) = Σ_{k≤7} c_k·u^k` with `u = t/2 − 1 ∈ [−1, 1]` ([`DELTA_COEFFICIENTS`],
//!    least maximal error 1.9·10^-4 on [0, 4]; `P(−1) ≈ δ(0) = 0` for the clipped inputs), by
//!    Estrin's scheme in [`WORK_BITS`] = 16 fractional bits: `u²`, then `u⁴`, `u²·(c_2 + c_3 u)`
//!    and `u²·(c_6 + c_7 u)` side by side, then `u⁴·(c_4 + c_5 u + u²(c_6 + c_7 u))`: five
//!    verified products in three rounds, each truncated back to 16 bits, the sum once to the
//!    output's `f_out` bits;
//! 5. `z = p·2^{f_out − f} − δ`.
//!
//! The paper reads `δ` from a 256-entry table by Π_LUT; its verified keys made three quarters of
//! GELU's offline time (each of the three servers deals one 256-point key per element, and
//! each key is expanded and hashed by two). Verified products ([`crate::verified`]) cost
//! 24 bytes each offline and are malicious secure with abort, as every product of the value
//! ring is; the result is also 40 times closer to GELU than the table's 2^-6 resolution
//! allowed. The input and the result are in the value ring Z_2^64; the two conditions read the
//! working ring `R` through a local reduction, the Selects compute in the MAC ring `M` (the
//! value lifted locally, the result reduced back; see [`crate::convert::lift`]). Valid for
//! `|x| < 2^{ℓ-1}` at the comparisons' scale (real |x| < 512 for Z_2^16 at 6 bits).

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z2k, Z64};
use veil_tensor::Tensor;

use crate::convert::{lift, reduce};
use crate::drelu::setup_parts as drelu_setup_parts;
use crate::drelu::{DreluKeys, select};
use crate::mac::Macs;
use crate::recip::Sources;
use crate::rss::{Rss, constant, fixed};
use crate::shape::{Shape, Word};
use crate::triples::Sacrifice;
use crate::trunc::trunc;
use crate::verified;
use veil_mpc::mode::Security;

/// Fractional bits of GELU's input in the mixed-ring plan (and of the clip comparison).
pub const F_IN: u32 = 6;

/// Fractional bits of the polynomial's evaluation.
pub const WORK_BITS: u32 = 16;

/// `c_0 … c_7` of `δ(t) ≈ Σ c_k·u^k`, `u = t/2 − 1`, on `t ∈ [0, 4]`: least maximal error
/// (1.87·10^-4, the tanh form of GELU), fitted by iteratively reweighted least squares on
/// 80 001 points.
pub const DELTA_COEFFICIENTS: [f64; 8] = [
    0.045_250_917_127,
    -0.173_162_961_881,
    0.221_638_664_371,
    0.019_695_149_059,
    -0.325_227_211_147,
    0.232_509_719_859,
    0.058_185_594_083,
    -0.079_006_738_451,
];

/// `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
pub fn gelu_f64(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

/// `δ(t) = ReLU(t) − GELU(t)` by the polynomial, in floating point.
pub fn delta_poly(t: f64) -> f64 {
    let u = t / 2.0 - 1.0;
    DELTA_COEFFICIENTS.iter().rev().fold(0.0, |acc, &c| acc * u + c)
}

/// Verified material for `n` GELUs: the two comparisons (the products' triples are drawn
/// with every other product's).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, M: Word")]
pub struct GeluKeys<R, M> {
    relu: DreluKeys<R, M>,
    clip: DreluKeys<R, M>,
}

impl<R: Z2k, M: Z2k> GeluKeys<R, M> {
    /// Zero material of the real shapes: the layout real material must have (stored
    /// material is checked against it).
    pub(crate) fn placeholder(n: usize) -> Self {
        GeluKeys { relu: DreluKeys::placeholder(n), clip: DreluKeys::placeholder(n) }
    }
}

impl<R, M: Shape> Shape for GeluKeys<R, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        self.relu.shape(out);
        self.clip.shape(out);
    }
}

/// Deals and checks the material of `n` GELUs.
pub fn setup<R: Sacrifice, M: Z2k>(ctx: &mut Ctx, n: usize) -> Result<GeluKeys<R, M>> {
    setup_with(ctx, n, Security::Malicious)
}

/// [`setup`] in a given mode.
pub fn setup_with<R: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    n: usize,
    security: Security,
) -> Result<GeluKeys<R, M>> {
    // Both comparisons' material from one dealing (one set of rounds and checks).
    let mut parts = drelu_setup_parts(ctx, &[n, n], security)?.into_iter();
    match (parts.next(), parts.next()) {
        (Some(relu), Some(clip)) => Ok(GeluKeys { relu, clip }),
        _ => Err(MpcError::Invalid("GELU setup: two parts expected".into())),
    }
}

/// The products and truncations one GELU of `n` elements draws, in order, for an input at `f`
/// fractional bits: `(true, k)` a verified product of `k` elements, `(false, k)` a truncation
/// of `k`.
pub fn material_steps(n: usize, f: u32) -> Vec<(bool, usize)> {
    let mut steps = Vec::new();
    if f > F_IN {
        steps.push((false, n));
    }
    if f >= WORK_BITS {
        steps.push((false, n));
    }
    steps.extend([(true, n), (false, 3 * n), (true, 3 * n), (false, 2 * n), (true, n), (false, n)]);
    steps
}

/// `⟨GELU(x)⟩` with `f_out` fractional bits, for `x` in the value ring Z_2^64 with `f ≥ F_IN`
/// fractional bits and `f_out ∈ [f, 2·WORK_BITS]`. The comparisons read `x` in the working ring
/// `R` (its low `ℓ` bits, at 6 fractional bits for the clip), the Selects compute in the MAC
/// ring `M` and their results are taken mod 2^64.
pub fn gelu<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: GeluKeys<R, M>,
    sources: &mut impl Sources,
    x: &Rss<Z64>,
    f: u32,
    f_out: u32,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<Z64>> {
    if !(F_IN..=24).contains(&f) || !(f..=2 * WORK_BITS).contains(&f_out) || macs.one.len() != 1 {
        return Err(MpcError::Invalid(format!(
            "GELU from {f} to {f_out} fractional bits (needs 6 ≤ f ≤ 24, f ≤ f_out ≤ 32) or ⟨1⟩ not single"
        )));
    }
    let n = x.len();
    let x = x.reshape(&[n])?;
    let b = ctx.party();
    let w = WORK_BITS;
    // 1-2. p = ReLU(x), a = |x|.
    let p = reduce(&select(ctx, keys.relu, &reduce::<Z64, R>(&x)?, &lift(&x)?, macs)?)?;
    let a = p.scale(Z64(2)).sub(&x)?;
    // 3. t = |x| when |x| ≤ 4 (compared at 6 bits), else 0.
    let a6 = if f > F_IN { trunc(ctx, sources, &a, 1 << (f - F_IN))? } else { a.clone() };
    let room = a6.neg().add_public(b, &Tensor::full(&[n], Z64(256)))?;
    let t = reduce(&select(ctx, keys.clip, &reduce::<Z64, R>(&room)?, &lift(&a)?, macs)?)?;
    // 4. u = t/2 − 1 at w bits, then P(u) by Estrin's scheme.
    let half_t =
        if f < w { t.scale(Z64(1 << (w - 1 - f))) } else { trunc(ctx, sources, &t, 1 << (f + 1 - w))? };
    let u = half_t.add_public(b, &constant(n, -(1 << w)))?;
    let c: Vec<i64> = DELTA_COEFFICIENTS.iter().map(|&v| fixed(v, w)).collect();
    let c2: Vec<i64> = DELTA_COEFFICIENTS.iter().map(|&v| fixed(v, 2 * w)).collect();
    // `c_k + c_{k+1}·u` at 2w bits.
    let linear = |k: usize| u.scale(Z64::from_i64(c[k + 1])).add_public(b, &constant(n, c2[k]));
    let u2_raw = verified::mul(ctx, sources, &u, &u)?;
    let (a0, a1, a2, a3) = (linear(0)?, linear(2)?, linear(4)?, linear(6)?);
    let level1 = trunc(ctx, sources, &Rss::concat(&[&u2_raw, &a1, &a3])?, 1 << w)?;
    let (u2, a1, a3) = (level1.slice(0, 0..n)?, level1.slice(0, n..2 * n)?, level1.slice(0, 2 * n..3 * n)?);
    let left = Rss::concat(&[&u2, &u2, &u2])?;
    let right = Rss::concat(&[&u2, &a1, &a3])?;
    let level2 = verified::mul(ctx, sources, &left, &right)?;
    let (u4_raw, m1, m3) =
        (level2.slice(0, 0..n)?, level2.slice(0, n..2 * n)?, level2.slice(0, 2 * n..3 * n)?);
    let b0 = a0.add(&m1)?;
    let level3 = trunc(ctx, sources, &Rss::concat(&[&u4_raw, &a2.add(&m3)?])?, 1 << w)?;
    let (u4, b1) = (level3.slice(0, 0..n)?, level3.slice(0, n..2 * n)?);
    let r = verified::mul(ctx, sources, &u4, &b1)?.add(&b0)?;
    let d = trunc(ctx, sources, &r, 1 << (2 * w - f_out))?;
    // 5. z = p·2^{f_out − f} − δ.
    p.scale(Z64(1 << (f_out - f))).sub(&d)
}
