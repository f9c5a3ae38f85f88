//! Π_Exp for `x ≤ 0` (paper Algorithm 10, notes §11, after BOLT), working ring with `f`
//! fractional bits (Z_2^32, f = 12 in the precision plan), results in the MAC ring.
//!
//! Write `x = -ln2·z + p` with an integer `z ≥ 0` and `p ∈ (-ln2, 0]`; then
//! `exp(x) = exp(p)·2^{-z}` with `exp(p) ≈ 0.3585·(p + 1.353)² + 0.344` (max error 0.0021):
//! 1. `z = -x / ln2` by truncation with the public divisor `⌊ln2·2^f⌋` (an integer), and
//!    `p = z·⌊ln2·2^f⌋ + x` (local). The truncation ([`crate::trunc`]) leaves `z` off by
//!    `e ∈ {-1, 0, 1, 2}`, which moves `p` by `e·ln2` out of the interval `(-ln2, 0]` the
//!    quadratic is fitted on (off by up to 0.09 per unit: a gap in the paper's algorithm even
//!    for its one-unit error). Three DReLUs in one batch, `1{p ≤ -ln2}`, `1{p > 0}` and
//!    `1{p > ln2}`, give the correction `c = c_lo - c_1 - c_2`; `z += c`, `p += c·ln2` make
//!    `z = ⌊-x/ln2⌋` exactly and `p ∈ (-ln2, 0]`;
//! 2. `z' = min(z, f) = Select(z - f, f - z) + z` (below `2^-f` the result is 0 anyway);
//! 3. `2^{-z'}` from a 16-entry table `T[i] = 2^{f-i}`; after the correction `z ≥ 0`, and
//!    index 15 (`z = -1`) holds `2^{f+1}` as a guard (notes §19.8, the released code's
//!    remedy with its 2f+1 table is the same idea);
//! 4. (`z` and `p` are already in the MAC ring: the input comes in the 64-bit ring, and only
//!    the comparisons read the working ring, through a local downcast);
//! 5. `exp(p)` by one verified square and two truncations, with the released code's constants
//!    `⌊1.353·2^f⌋`, `⌊0.3585·2^f⌋`, `⌊0.344·2^f⌋`;
//! 6. one verified product `exp(p)·2^{-z'}`, truncated.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Z2k;

use crate::convert::downcast;
use crate::drelu::setup_with as drelu_setup_with;
use crate::drelu::{DreluKeys, drelu, select};
use crate::family::Security;
use crate::lut::setup_with as lut_setup_with;
use crate::lut::{LutKeys, lookup};
use crate::mac::MacBatch;
use crate::recip::Sources;
use crate::rss::{Rss, constant};
use crate::triples::Sacrifice;
use crate::trunc::trunc;
use crate::verified;

/// Index bits of the `2^{-z}` table.
const TABLE_BITS: u32 = 4;

/// `⌊c·2^f⌋`.
fn fixed(c: f64, f: u32) -> i64 {
    (c * f64::from(1u32 << f)).floor() as i64
}

/// `T[i] = 2^{f-i}` for `i ≤ f`, `T[15] = 2^{f+1}` (for `z = -1`), the rest `1`.
pub fn pow2_table(f: u32) -> Result<Vec<i64>> {
    if f > 14 {
        return Err(MpcError::Invalid(format!("the 2^-z table holds f ≤ 14, not {f}")));
    }
    Ok((0..16)
        .map(|i| {
            if i <= f as i64 {
                1i64 << (f as i64 - i)
            } else if i == 15 {
                1 << (f + 1)
            } else {
                1
            }
        })
        .collect())
}

/// Verified material for `n` exponentials.
#[derive(Clone, Debug)]
pub struct ExpKeys<R, M> {
    fix: DreluKeys<R, M>,
    clip: DreluKeys<R, M>,
    table: LutKeys<R, M>,
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
        fix: drelu_setup_with(ctx, 3 * n, security)?,
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
    let ln2 = fixed(std::f64::consts::LN_2, f);
    // 1. z = -x / ln2 (an integer), in the working ring, and p = z·ln2 + x.
    let z = trunc(ctx, sources, &x.neg(), ln2 as u64)?;
    let p_m = z.scale(M::from_i64(ln2)).add(&x)?;
    // p is within a few ln2 of 0: exact in the working ring.
    let p: Rss<R> = downcast(&p_m, 0)?;
    // The truncation leaves z off by e ∈ {-1, 0, 1, 2}, and p off by e·ln2: three comparisons
    // in one batch, 1{p ≤ -ln2}, 1{p > 0}, 1{p > ln2}, bring z to ⌊-x/ln2⌋ and p into range.
    let below = p.neg().add_public(b, &constant(n, -ln2))?;
    let above = p.add_public(b, &constant(n, -1))?;
    let far_above = p.add_public(b, &constant(n, -ln2 - 1))?;
    let all = drelu(ctx, keys.fix, &Rss::concat(&[&below, &above, &far_above])?, one, alpha, batch)?;
    let c = all.range(0, n)?.sub(&all.range(n, n)?)?.sub(&all.range(2 * n, n)?)?;
    let z_m = z.add(&c)?;
    let p_m = p_m.add(&c.scale(M::from_i64(ln2)))?;
    // 2. z' = min(z, f) = Select(z - f, f - z) + z, in the MAC ring.
    let z_r: Rss<R> = downcast(&z_m, 0)?;
    let cond = z_r.add_public(b, &constant(n, -i64::from(f)))?;
    let room = z_m.neg().add_public(b, &constant(n, i64::from(f)))?;
    let z_clip = select(ctx, keys.clip, &cond, &room, alpha, batch)?.add(&z_m)?;
    // 3. 2^{-z'} from the table (index mod 16).
    let idx: Rss<R> = downcast(&z_clip, 0)?;
    let table: Vec<M> = pow2_table(f)?.into_iter().map(M::from_i64).collect();
    let e_z = lookup(ctx, keys.table, &idx, &table, one, alpha, batch)?;
    // 4-5. exp(p), p ∈ (-ln2, 0] ≈ 0.3585·(p + 1.353)² + 0.344.
    let u = p_m.add_public(b, &constant(n, fixed(1.353, f)))?;
    let sq = verified::mul(ctx, sources, &u, &u)?;
    let sq = trunc(ctx, sources, &sq, 1 << f)?;
    let scaled = trunc(ctx, sources, &sq.scale(M::from_i64(fixed(0.3585, f))), 1 << f)?;
    let e_p = scaled.add_public(b, &constant(n, fixed(0.344, f)))?;
    // 6. exp(p)·2^{-z'}.
    let v = verified::mul(ctx, sources, &e_p, &e_z)?;
    trunc(ctx, sources, &v, 1 << f)
}
