//! Π_Exp for `x ≤ 0` (paper Algorithm 10, notes §11, after BOLT), working ring with `f`
//! fractional bits (Z_2^32, f = 12 in the precision plan), results in the MAC ring.
//!
//! Write `x = -ln2·z + p` with an integer `z` and a small `p`; then `exp(x) = exp(p)·2^{-z}`.
//! 1. `z = -x / ln2` by truncation with the public divisor `⌊ln2·2^f⌋` (an integer), and
//!    `p = z·⌊ln2·2^f⌋ + x` (local). The truncation ([`crate::trunc`]) leaves `z` off
//!    `⌊-x/ln2⌋` by `e ∈ {-1, 0, 1, 2}`, so `p = p* + e·ln2` with `p* ∈ (-ln2, 0]`: `p` lies in
//!    `(-2ln2, 2ln2]`, and `exp(p)·2^{-z}` is still `exp(x)` exactly. The paper fits a
//!    quadratic on `(-ln2, 0]` only, which is short even for its own one-unit truncation error;
//!    correcting `z` would take three more comparisons per element (16 KB of offline material
//!    each). Instead `exp(p)` is approximated on the whole `(-2ln2, 2ln2]`:
//! 2. `exp(p) ≈ c0 + c1·p + p²·(c2 + c3·p + c4·p²)`, a degree-4 fit of least maximal
//!    *relative* error (2.50·10^-3; the result's absolute error is that times `exp(x) ≤ 1`),
//!    evaluated with two verified products (`p²`, then `p²·q`) and the intermediate values at
//!    `2f`…`4f` fractional bits in the MAC ring, so only the last truncation's units of `2^-f`
//!    add to the error (measured worst case over every input in `[-20, 0]` at `f = 12`:
//!    2.96·10^-3, the paper's quadratic: 0.0021 on its interval plus the same units);
//! 3. `z' = min(z, f + 2) = Select(z - f - 2, f + 2 - z) + z`; below `2^{-f-2}` the result is 0
//!    anyway, and `z ≥ -1` because `x ≤ 0`;
//! 4. `2^{-z'}` with `f + 2` fractional bits from a 16-entry table `T[i] = 2^{f+2-i}`, index
//!    `z' mod 16`, so `z' = -1` reads `T[15] = 2^{f+3}` (notes §19.8: the released code's
//!    remedy, a table of `2f + 1` entries, is the same idea); `z` and `p` are already in the MAC
//!    ring (the input comes in the 64-bit ring, and only the comparisons read the working ring
//!    through a local downcast);
//! 5. one verified product `exp(p)·2^{-z'}`, truncated by `2^{2f+2}` to `f` fractional bits.
//!
//! Cost per element: one Select, one 4-bit LUT, three verified products and four truncations
//! (before: four DReLUs and a Select).

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Z2k;

use crate::convert::downcast;
use crate::drelu::setup_with as drelu_setup_with;
use crate::drelu::{DreluKeys, select};
use crate::family::Security;
use crate::lut::setup_with as lut_setup_with;
use crate::lut::{LutKeys, lookup};
use crate::mac::MacBatch;
use crate::recip::Sources;
use crate::rss::{Rss, constant};
use crate::stored::{Shape, Word};
use crate::triples::Sacrifice;
use crate::trunc::trunc;
use crate::verified;

/// Index bits of the `2^{-z}` table.
const TABLE_BITS: u32 = 4;

/// `c0 … c4` of `exp(p) ≈ Σ c_k·p^k` on `(-2ln2, 2ln2]`, least maximal relative error
/// (2.50·10^-3), fitted by iteratively reweighted least squares on 40 001 points.
pub const EXP_COEFFICIENTS: [f64; 5] =
    [0.997_719_890_961, 0.994_087_207_921, 0.510_247_668_207, 0.184_521_627_428, 0.038_448_148_194];

/// `round(c·2^k)`.
fn fixed(c: f64, k: u32) -> i64 {
    (c * 2f64.powi(k as i32)).round() as i64
}

/// `T[i] = 2^{f+2-i}` for `i ≤ f + 2` (`2^{-i}` with `f + 2` fractional bits) and
/// `T[15] = 2^{f+3}` (for `z = -1`).
pub fn pow2_table(f: u32) -> Result<Vec<i64>> {
    if f + 2 > 14 {
        return Err(MpcError::Invalid(format!("the 2^-z table holds f ≤ 12, not {f}")));
    }
    Ok((0..16i64).map(|i| if i == 15 { 1 << (f + 3) } else { 1 << (i64::from(f) + 2 - i) }).collect())
}

/// Verified material for `n` exponentials.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, M: Word")]
pub struct ExpKeys<R, M> {
    clip: DreluKeys<R, M>,
    table: LutKeys<R, M>,
}

impl<R: Z2k, M: Z2k> ExpKeys<R, M> {
    /// Zero material of the real shapes, for a dry run that only records the plan
    /// ([`crate::Mosformer::planner`]).
    pub(crate) fn placeholder(n: usize) -> Self {
        ExpKeys { clip: DreluKeys::placeholder(n), table: LutKeys::placeholder(TABLE_BITS, n) }
    }
}

impl<R, M: Shape> Shape for ExpKeys<R, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        self.clip.shape(out);
        self.table.shape(out);
    }
}

/// Deals and checks the material of `n` exponentials.
pub fn setup<R: Sacrifice, M: Sacrifice>(ctx: &mut Ctx, n: usize) -> Result<ExpKeys<R, M>> {
    setup_with(ctx, n, Security::Malicious)
}

/// [`setup`] in a given mode.
pub fn setup_with<R: Sacrifice, M: Sacrifice>(
    ctx: &mut Ctx,
    n: usize,
    security: Security,
) -> Result<ExpKeys<R, M>> {
    Ok(ExpKeys {
        clip: drelu_setup_with(ctx, n, security)?,
        table: lut_setup_with(ctx, TABLE_BITS, n, security)?,
    })
}

/// `⟨exp(x)⟩` with `f` fractional bits in the MAC ring, for `x ≤ 0` given in the MAC ring with
/// `f` fractional bits (the comparisons run in the working ring `R`).
#[allow(
    clippy::too_many_arguments,
    reason = "the protocol's inputs: keys, sources, value, the two shared keys, the batch"
)]
pub fn exp<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: ExpKeys<R, M>,
    sources: &mut impl Sources<R, M>,
    x: &Rss<M>,
    f: u32,
    one: &Rss<M>,
    alpha: &Rss<M>,
    batch: &mut MacBatch<M>,
) -> Result<Rss<M>> {
    let n = x.len();
    let b = ctx.party();
    let x = x.reshape(&[n])?;
    let table: Vec<M> = pow2_table(f)?.into_iter().map(M::from_i64).collect();
    let ln2 = (std::f64::consts::LN_2 * f64::from(1u32 << f)).floor() as i64;
    // 1. z = -x / ln2, off ⌊-x/ln2⌋ by e ∈ {-1, 0, 1, 2}, and p = z·ln2 + x ∈ (-2ln2, 2ln2].
    let z = trunc(ctx, sources, &x.neg(), ln2 as u64)?;
    let p = z.scale(M::from_i64(ln2)).add(&x)?;
    // 2. exp(p) = c0 + c1·p + p²·q with q = c2 + c3·p + c4·p²; p² at 2f fractional bits, q at
    //    3f then 2f, p²·q at 4f; the linear part is added at 4f, and the sum truncated to 2f.
    let [c0, c1, c2, c3, c4] = EXP_COEFFICIENTS;
    let p2 = verified::mul(ctx, sources, &p, &p)?;
    let q = p
        .scale(M::from_i64(fixed(c3, 2 * f)))
        .add(&p2.scale(M::from_i64(fixed(c4, f))))?
        .add_public(b, &constant(n, fixed(c2, 3 * f)))?;
    let q = trunc(ctx, sources, &q, 1 << f)?;
    let e_p = verified::mul(ctx, sources, &p2, &q)?
        .add(&p.scale(M::from_i64(fixed(c1, 3 * f))))?
        .add_public(b, &constant(n, fixed(c0, 4 * f)))?;
    let e_p = trunc(ctx, sources, &e_p, 1 << (2 * f))?;
    // 3. z' = min(z, f + 2) = Select(z - f - 2, f + 2 - z) + z, in the MAC ring.
    let top = i64::from(f) + 2;
    let z_r: Rss<R> = downcast(&z, 0)?;
    let cond = z_r.add_public(b, &constant(n, -top))?;
    let room = z.neg().add_public(b, &constant(n, top))?;
    let z_clip = select(ctx, keys.clip, &cond, &room, alpha, batch)?.add(&z)?;
    // 4. 2^{-z'} with f + 2 fractional bits from the table (index z' mod 16).
    let idx: Rss<R> = downcast(&z_clip, 0)?;
    let e_z = lookup(ctx, keys.table, &idx, &table, one, alpha, batch)?;
    // 5. exp(p)·2^{-z'}, from 3f + 2 fractional bits to f.
    let v = verified::mul(ctx, sources, &e_p, &e_z)?;
    trunc(ctx, sources, &v, 1 << (2 * f + 2))
}
