//! ReLU and Max on top of Select (paper §7, Algorithm 9).
//!
//! - `ReLU(x) = Select(x, x)`: the condition in the working ring, the value (the same `x`)
//!   in the MAC ring (lifted locally, [`crate::convert::lift`]).
//! - `max(a, b) = Select(a - b, a - b) + b`.
//! - Π_Max over the last axis of a `[rows, k]` tensor: a tournament of `⌈log2 k⌉` levels, each
//!   pairing the first half of the remaining columns with the second half (the paper's
//!   pairing); an odd column carries over to the next level unchanged (one Select less than
//!   duplicating it). Values stay in the 64-bit value ring between levels; each comparison
//!   reads the difference in the working ring ([`crate::convert::reduce`], exact mod 2^ℓ) and
//!   each Select's result (in the MAC ring) is reduced back. `k - 1` Selects per row in all,
//!   every result MAC'd.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Z2k, Z64};

use crate::convert::{downcast, lift, reduce};
use crate::drelu::{DreluKeys, select};
use crate::mac::Macs;
use crate::rss::Rss;
use crate::shape::{Shape, Word};
use crate::triples::Sacrifice;
use veil_mpc::mode::Security;

/// `⟨ReLU(x)⟩` in the MAC ring: `x` in the working ring, `x_m` the same value in the MAC ring.
pub fn relu<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: DreluKeys<R, M>,
    x: &Rss<R>,
    x_m: &Rss<M>,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<M>> {
    select(ctx, keys, x, x_m, macs)
}

/// Verified DReLU material for every level of a `[rows, k]` maximum.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, M: Word")]
pub struct MaxKeys<R, M> {
    rows: usize,
    k: usize,
    levels: Vec<DreluKeys<R, M>>,
}

/// Number of pairs compared at each level for `k` columns.
fn level_pairs(mut k: usize) -> Vec<usize> {
    let mut v = Vec::new();
    while k > 1 {
        v.push(k / 2);
        k -= k / 2;
    }
    v
}

impl<R: Z2k, M: Z2k> MaxKeys<R, M> {
    /// Zero material of the real shapes: the layout real material must have (stored
    /// material is checked against it).
    pub(crate) fn placeholder(rows: usize, k: usize) -> Self {
        MaxKeys {
            rows,
            k,
            levels: level_pairs(k).into_iter().map(|p| DreluKeys::placeholder(rows * p)).collect(),
        }
    }
}

impl<R, M> Shape for MaxKeys<R, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        out.extend([self.rows, self.k]);
        self.levels.shape(out);
    }
}

/// Deals and checks the DReLU material of a `[rows, k]` maximum.
pub fn max_setup<R: Sacrifice, M: Z2k>(ctx: &mut Ctx, rows: usize, k: usize) -> Result<MaxKeys<R, M>> {
    max_setup_with(ctx, rows, k, Security::Malicious)
}

/// [`max_setup`] in a given mode.
pub fn max_setup_with<R: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    rows: usize,
    k: usize,
    security: Security,
) -> Result<MaxKeys<R, M>> {
    // Every level's comparisons from one dealing.
    let sizes: Vec<usize> = level_pairs(k).into_iter().map(|p| rows * p).collect();
    let levels = crate::drelu::setup_parts::<R, M>(ctx, &sizes, security)?;
    Ok(MaxKeys { rows, k, levels })
}

/// `⟨max_j x[i, j]⟩` for every row `i` of `x: [rows, k]` (values in Z_2^64; their differences
/// must fit the working ring's signed range). Returns shape `[rows]`.
pub fn max<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: MaxKeys<R, M>,
    x: &Rss<Z64>,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<Z64>> {
    max_at(ctx, keys, x, 0, macs)
}

/// [`max`] with each comparison reading the difference `shift` bits coarser: its local
/// downcast ([`crate::convert::downcast`], up to two units of `2^shift` low) in the working
/// ring, so that the differences need fit the ring only at the coarser scale. A comparison
/// then reads a difference in `[0, 2^{shift+1})` as negative at worst and keeps the smaller
/// value, so the result is at most `2·⌈log2 k⌉` units of `2^shift` below the true maximum
/// (one such miss per level), never above it.
pub fn max_at<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: MaxKeys<R, M>,
    x: &Rss<Z64>,
    shift: u32,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<Z64>> {
    if x.shape() != [keys.rows, keys.k] {
        return Err(MpcError::Invalid(format!(
            "max over {:?} with keys for [{}, {}]",
            x.shape(),
            keys.rows,
            keys.k
        )));
    }
    let rows = keys.rows;
    let mut cur = x.clone();
    for level in keys.levels {
        let width = cur.shape()[1];
        let p = width / 2;
        let a = cur.slice(1, 0..p)?;
        let b = cur.slice(1, p..2 * p)?;
        let diff = a.sub(&b)?.reshape(&[rows * p])?;
        let cond: Rss<R> = if shift == 0 { reduce(&diff)? } else { downcast(&diff, shift)? };
        let chosen = reduce(&select(ctx, level, &cond, &lift(&diff)?, macs)?)?;
        let best = chosen.reshape(&[rows, p])?.add(&b)?;
        cur =
            if width % 2 == 1 { Rss::concat_axis(&[&best, &cur.slice(1, 2 * p..width)?], 1)? } else { best };
    }
    cur.reshape(&[rows])
}
