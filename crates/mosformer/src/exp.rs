//! Π_Exp for `x ≤ 0` (paper Algorithm 10, after BOLT), with `f` fractional bits
//! (f = 12 with its comparison in Z_2^16 in the mixed-ring plan, reading the integer `z`; f = 16
//! in Z_2^64 without modulus conversion).
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
//!    evaluated with two verified products (`p²`, then `p²·q`), each truncated back to `f`
//!    fractional bits, so no intermediate value outgrows `2f + 3` bits and f = 16 (no modulus
//!    conversion) fits the 64-bit value ring; the truncations add a few units of `2^-f`
//!    (the paper's quadratic: 0.0021 on its interval plus the same units);
//! 3. `z' = min(z, f + 2) = Select(z - f - 2, f + 2 - z) + z`; below `2^{-f-2}` the result is 0
//!    anyway, and `z ≥ -1` because `x ≤ 0`;
//! 4. `2^{-z'}` with `f + 2` fractional bits from a table `T[i] = 2^{f+2-i}` of
//!    [`table_bits`] index bits (16 entries at f = 12, 32 at f = 16), index `z'` mod its size,
//!    so `z' = -1` reads the last entry, `2^{f+3}` (the released code's remedy, a
//!    table of `2f + 1` entries, is the same idea);
//! 5. one verified product `exp(p)·2^{-z'}`, truncated by `2^{f+2}` to `f` fractional bits.
//!
//! Values stay in the 64-bit value ring; only the comparison reads the working ring (a local
//! reduction) and the Select and LUT compute in the MAC ring (see [`crate::convert::lift`]).
//!
//! Cost per element: one Select, one 4- or 5-bit LUT, three verified products and five truncations
//! (before: four DReLUs and a Select).

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z2k, Z64};

use crate::convert::{lift, reduce};
use crate::drelu::setup_with as drelu_setup_with;
use crate::drelu::{DreluKeys, select};
use crate::lut::setup_with as lut_setup_with;
use crate::lut::{LutKeys, lookup};
use crate::mac::Macs;
use crate::recip::Sources;
use crate::rss::{Rss, constant, fixed};
use crate::shape::{Shape, Word};
use crate::triples::Sacrifice;
use crate::trunc::trunc;
use crate::verified;
use veil_mpc::mode::Security;

/// Index bits of the `2^{-z}` table at `f` fractional bits: room for `z' ∈ [-1, f + 2]`.
pub fn table_bits(f: u32) -> u32 {
    (f + 4).next_power_of_two().trailing_zeros()
}

/// `c0 … c4` of `exp(p) ≈ Σ c_k·p^k` on `(-2ln2, 2ln2]`, least maximal relative error
/// (2.50·10^-3), fitted by iteratively reweighted least squares on 40 001 points.
pub const EXP_COEFFICIENTS: [f64; 5] =
    [0.997_719_890_961, 0.994_087_207_921, 0.510_247_668_207, 0.184_521_627_428, 0.038_448_148_194];

/// `T[i] = 2^{f+2-i}` for `i ≤ f + 2` (`2^{-i}` with `f + 2` fractional bits) and
/// `T[last] = 2^{f+3}` (for `z = -1`), `2^{table_bits(f)}` entries (16 for f = 12, 32 for
/// f = 16); the entries in between are never read.
pub fn pow2_table(f: u32) -> Result<Vec<i64>> {
    if !(1..=24).contains(&f) {
        return Err(MpcError::Invalid(format!("the 2^-z table holds 1 ≤ f ≤ 24, not {f}")));
    }
    let size = 1i64 << table_bits(f);
    Ok((0..size)
        .map(|i| {
            if i == size - 1 {
                1 << (f + 3)
            } else if i <= i64::from(f) + 2 {
                1 << (i64::from(f) + 2 - i)
            } else {
                0
            }
        })
        .collect())
}

/// Verified material for `n` exponentials.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, M: Word")]
pub struct ExpKeys<R, M> {
    clip: DreluKeys<R, M>,
    table: LutKeys<R, M>,
}

impl<R: Z2k, M: Z2k> ExpKeys<R, M> {
    /// Zero material of the real shapes: the layout real material must have (stored
    /// material is checked against it).
    pub(crate) fn placeholder(n: usize, f: u32) -> Self {
        ExpKeys { clip: DreluKeys::placeholder(n), table: LutKeys::placeholder(table_bits(f), n) }
    }
}

impl<R, M: Shape> Shape for ExpKeys<R, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        self.clip.shape(out);
        self.table.shape(out);
    }
}

/// Deals and checks the material of `n` exponentials.
pub fn setup<R: Sacrifice, M: Z2k>(ctx: &mut Ctx, n: usize, f: u32) -> Result<ExpKeys<R, M>> {
    setup_with(ctx, n, f, Security::Malicious)
}

/// [`setup`] in a given mode.
pub fn setup_with<R: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    n: usize,
    f: u32,
    security: Security,
) -> Result<ExpKeys<R, M>> {
    Ok(ExpKeys {
        clip: drelu_setup_with(ctx, n, security)?,
        table: lut_setup_with(ctx, table_bits(f), n, security)?,
    })
}

/// `⟨exp(x)⟩` with `f` fractional bits, for `x ≤ 0` with `f` fractional bits, both in the value
/// ring Z_2^64 (the comparison runs in the working ring `R`, the gates in the MAC ring `M`).
pub fn exp<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: ExpKeys<R, M>,
    sources: &mut impl Sources,
    x: &Rss<Z64>,
    f: u32,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<Z64>> {
    let n = x.len();
    let b = ctx.party();
    let x = x.reshape(&[n])?;
    let table: Vec<M> = pow2_table(f)?.into_iter().map(M::from_i64).collect();
    let ln2 = (std::f64::consts::LN_2 * f64::from(1u32 << f)).floor() as i64;
    // 1. z = -x / ln2, off ⌊-x/ln2⌋ by e ∈ {-1, 0, 1, 2}, and p = z·ln2 + x ∈ (-2ln2, 2ln2].
    let z = trunc(ctx, sources, &x.neg(), ln2 as u64)?;
    let p = z.scale(Z64::from_i64(ln2)).add(&x)?;
    // 2. exp(p) = c0 + c1·p + p²·q with q = c2 + c3·p + c4·p², every product truncated back
    //    to f bits, so no intermediate exceeds 2f + 3 bits (f = 16 fits Z_2^64 with room for
    //    the truncations' statistical masking).
    let [c0, c1, c2, c3, c4] = EXP_COEFFICIENTS;
    let p2 = verified::mul(ctx, sources, &p, &p)?;
    let p2 = trunc(ctx, sources, &p2, 1 << f)?;
    let q = p
        .scale(Z64::from_i64(fixed(c3, f)))
        .add(&p2.scale(Z64::from_i64(fixed(c4, f))))?
        .add_public(b, &constant(n, fixed(c2, 2 * f)))?;
    let q = trunc(ctx, sources, &q, 1 << f)?;
    let e_p = verified::mul(ctx, sources, &p2, &q)?
        .add(&p.scale(Z64::from_i64(fixed(c1, f))))?
        .add_public(b, &constant(n, fixed(c0, 2 * f)))?;
    let e_p = trunc(ctx, sources, &e_p, 1 << f)?;
    // 3. z' = min(z, f + 2) = Select(z - f - 2, f + 2 - z) + z.
    let top = i64::from(f) + 2;
    let cond = reduce::<Z64, R>(&z)?.add_public(b, &constant(n, -top))?;
    let room = z.neg().add_public(b, &constant(n, top))?;
    let z_clip = reduce(&select(ctx, keys.clip, &cond, &lift(&room)?, macs)?)?.add(&z)?;
    // 4. 2^{-z'} with f + 2 fractional bits from the table (index z' mod its size).
    let idx: Rss<R> = reduce(&z_clip)?;
    let e_z = reduce(&lookup(ctx, keys.table, &idx, &table, macs)?)?;
    // 5. exp(p)·2^{-z'}, from 2f + 2 fractional bits to f.
    let v = verified::mul(ctx, sources, &e_p, &e_z)?;
    trunc(ctx, sources, &v, 1 << (f + 2))
}
