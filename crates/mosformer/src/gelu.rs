//! Π_GELU for inputs with 6 fractional bits (paper Algorithm 8), as in the precision
//! plan where activations run in Z_2^16 with f = 6.
//!
//! `δ(x) = ReLU(x) - GELU(x)` is even and about 0 outside [-4, 4], so
//! `GELU(x) = ReLU(x) - δ(|x|)` with `δ` read from a 256-entry table at 6-bit resolution:
//! 1. `p = Select(x, x) = ReLU(x)`;
//! 2. `a = 2p - x = |x|`;
//! 3. `i = Select(256 - a, a)`: `|x|` when `|x| ≤ 256` (4.0 in real terms), else 0;
//! 4. `z = p - LUT(i, T_GELU)`; index 256 wraps to 0 in the 8-bit domain, and `T[0] = 0`.
//!
//! `T_GELU[i] = ⌊δ(i / 64) · 2^f_out⌋` with the tanh form of GELU. The input and the result
//! are in the value ring Z_2^64 (where the linear layers work); the conditions read the
//! working ring through a local reduction, and the gates' outputs and MACs live in the MAC
//! ring (the value lifted locally, the result reduced back; see [`crate::convert::lift`]), so
//! no upcast is needed. Two DReLUs, two Selects, one LUT; valid for `|x| < 2^{ℓ-1}` at the
//! comparisons' scale (real |x| < 512 for Z_2^16 at 6 bits).

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Z2k, Z64};
use veil_tensor::Tensor;

use crate::convert::{lift, reduce};
use crate::drelu::setup_with as drelu_setup_with;
use crate::drelu::{DreluKeys, select};
use crate::lut::setup_with as lut_setup_with;
use crate::lut::{LutKeys, lookup};
use crate::mac::Macs;
use crate::recip::Sources;
use crate::rss::Rss;
use crate::shape::{Shape, Word};
use crate::triples::Sacrifice;
use crate::trunc::trunc;
use veil_mpc::mode::Security;

/// Fractional bits of GELU's input (the table's index resolution).
pub const F_IN: u32 = 6;

/// `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
pub fn gelu_f64(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

/// `T_GELU[i] = ⌊(ReLU - GELU)(i/64) · 2^f_out⌋`, `i ∈ [0, 256)` (floor, as the paper).
pub fn gelu_table(f_out: u32) -> Vec<i64> {
    (0..256)
        .map(|i| {
            let x = f64::from(i) / f64::from(1u32 << F_IN);
            ((x.max(0.0) - gelu_f64(x)) * f64::from(1u32 << f_out)).floor() as i64
        })
        .collect()
}

/// Verified material for `n` GELUs.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, M: Word")]
pub struct GeluKeys<R, M> {
    relu: DreluKeys<R, M>,
    clip: DreluKeys<R, M>,
    lut: LutKeys<R, M>,
}

impl<R: Z2k, M: Z2k> GeluKeys<R, M> {
    /// Zero material of the real shapes: the layout real material must have (stored
    /// material is checked against it).
    pub(crate) fn placeholder(n: usize) -> Self {
        GeluKeys {
            relu: DreluKeys::placeholder(n),
            clip: DreluKeys::placeholder(n),
            lut: LutKeys::placeholder(8, n),
        }
    }
}

impl<R, M: Shape> Shape for GeluKeys<R, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        self.relu.shape(out);
        self.clip.shape(out);
        self.lut.shape(out);
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
    Ok(GeluKeys {
        relu: drelu_setup_with(ctx, n, security)?,
        clip: drelu_setup_with(ctx, n, security)?,
        lut: lut_setup_with(ctx, 8, n, security)?,
    })
}

/// `⟨GELU(x)⟩` with `f` fractional bits, for `x` in the value ring Z_2^64 with `f ≥ F_IN`
/// fractional bits. The comparisons read `x` in the working ring `R` (its low `ℓ` bits), the
/// gates compute in the MAC ring `M` and their results are taken mod 2^64.
///
/// With `f = F_IN` (the mixed-ring plan) every step is at 6 bits. With `f > F_IN` (no modulus
/// conversion) `ReLU(x)` keeps all `f` bits and only the table index is truncated to 6 bits
/// (one truncation more), so the result is off GELU by at most the table's resolution.
pub fn gelu<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: GeluKeys<R, M>,
    sources: &mut impl Sources,
    x: &Rss<Z64>,
    f: u32,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<Z64>> {
    if !(F_IN..=24).contains(&f) || macs.one.len() != 1 {
        return Err(MpcError::Invalid(format!(
            "GELU at {f} fractional bits (needs 6..=24) or ⟨1⟩ not single"
        )));
    }
    let n = x.len();
    let x = x.reshape(&[n])?;
    let b = ctx.party();
    // 1-2. p = ReLU(x), a = |x|.
    let p = reduce(&select(ctx, keys.relu, &reduce::<Z64, R>(&x)?, &lift(&x)?, macs)?)?;
    let a = p.scale(Z64(2)).sub(&x)?;
    // 3. i = |x| at 6 bits when below 4, else 0.
    let a6 = if f > F_IN { trunc(ctx, sources, &a, 1 << (f - F_IN))? } else { a };
    let room = a6.neg().add_public(b, &Tensor::full(&[n], Z64(256)))?;
    let i = reduce(&select(ctx, keys.clip, &reduce::<Z64, R>(&room)?, &lift(&a6)?, macs)?)?;
    // 4. p - δ(i).
    let table: Vec<M> = gelu_table(f).into_iter().map(M::from_i64).collect();
    let d = reduce(&lookup(ctx, keys.lut, &reduce::<Z64, R>(&i)?, &table, macs)?)?;
    p.sub(&d)
}
