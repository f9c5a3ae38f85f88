//! Π_GELU for inputs with 6 fractional bits (paper Algorithm 8, notes §10), as in the precision
//! plan where activations run in Z_2^16 with f = 6.
//!
//! `δ(x) = ReLU(x) - GELU(x)` is even and about 0 outside [-4, 4], so
//! `GELU(x) = ReLU(x) - δ(|x|)` with `δ` read from a 256-entry table at 6-bit resolution:
//! 1. `p = Select(x, x) = ReLU(x)`;
//! 2. `a = 2p - x = |x|`;
//! 3. `i = Select(256 - a, a)`: `|x|` when `|x| ≤ 256` (4.0 in real terms), else 0;
//! 4. `z = p - LUT(i, T_GELU)`; index 256 wraps to 0 in the 8-bit domain, and `T[0] = 0`.
//!
//! `T_GELU[i] = ⌊δ(i / 64) · 2^f_out⌋` with the tanh form of GELU. Values, MACs and the
//! result live in the MAC ring with `f_out` fractional bits; the conditions in the working
//! ring. Two DReLUs, two Selects, one LUT. The input comes in the MAC ring (where the linear
//! layers produced it) and the conditions read the working ring through a local downcast, so
//! no upcast is needed; `|x| < 2^{ℓ-1}` (real |x| < 512 for Z_2^16).

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Z2k;
use veil_tensor::Tensor;

use crate::convert::downcast;
use crate::drelu::setup_with as drelu_setup_with;
use crate::drelu::{DreluKeys, select};
use crate::family::Security;
use crate::lut::setup_with as lut_setup_with;
use crate::lut::{LutKeys, lookup};
use crate::mac::MacBatch;
use crate::rss::Rss;
use crate::stored::{Shape, Word};
use crate::triples::Sacrifice;

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
    /// Zero material of the real shapes, for a dry run that only records the plan
    /// ([`crate::Mosformer::planner`]).
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
pub fn setup<R: Sacrifice, M: Sacrifice>(ctx: &mut Ctx, n: usize) -> Result<GeluKeys<R, M>> {
    setup_with(ctx, n, Security::Malicious)
}

/// [`setup`] in a given mode.
pub fn setup_with<R: Sacrifice, M: Sacrifice>(
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

/// `⟨GELU(x)⟩` in the MAC ring with `F_IN` fractional bits; `x` in the MAC ring with `F_IN`
/// fractional bits.
pub fn gelu<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: GeluKeys<R, M>,
    x: &Rss<M>,
    one: &Rss<M>,
    alpha: &Rss<M>,
    batch: &mut MacBatch<M>,
) -> Result<Rss<M>> {
    let n = x.len();
    let x_m = x.reshape(&[n])?;
    let b = ctx.party();
    let x: Rss<R> = downcast(&x_m, 0)?;
    let p = select(ctx, keys.relu, &x, &x_m, alpha, batch)?;
    let a = p.scale(M::from_u64(2)).sub(&x_m)?;
    let limit = Tensor::full(&[n], M::from_u64(256));
    let room: Rss<M> = a.neg().add_public(b, &limit)?;
    let room_r: Rss<R> = downcast(&room, 0)?;
    let i = select(ctx, keys.clip, &room_r, &a, alpha, batch)?;
    let i_r: Rss<R> = downcast(&i, 0)?;
    let table: Vec<M> = gelu_table(F_IN).into_iter().map(M::from_i64).collect();
    if one.len() != 1 {
        return Err(MpcError::Invalid("⟨1⟩ must be a single element".into()));
    }
    let d = lookup(ctx, keys.lut, &i_r, &table, one, alpha, batch)?;
    p.sub(&d)
}
