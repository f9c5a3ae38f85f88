//! Π_Softmax over the last axis of a `[rows, k]` tensor (paper Algorithm 11), with
//! the causal-mask variant of decoders and GPT-2.
//!
//! 1. `m = max_j x[i, j]` (the Max tournament, [`crate::max`]);
//! 2. `e = exp(x - m - c)` for every entry ([`crate::exp`], inputs ≤ 0; `c = 0` when the
//!    comparisons read the whole difference);
//! 3. `r = 1 / Σ_j e[i, j]` ([`crate::recip`]; the sum lies in `[1, k]`);
//! 4. `z = e · r` (verified product, truncated).
//!
//! **Mask** (public, `true` = masked): masked entries are replaced by the row's first entry
//! before the max (so they cannot raise it), left out of the sum, and zeroed at the end.
//!
//! Input and output in the 64-bit value ring with `f` fractional bits; the comparisons read the
//! working rings through local reductions and the gates compute in the MAC ring, so no upcast
//! is needed anywhere.
//!
//! **Comparison rings.** Max's and Exp's comparisons run in a ring `C`, the reciprocal's in `R`
//! (its input, a row sum up to `k`, needs more bits). In the mixed-ring plan `C = Z_2^16`, with
//! Max reading each difference at 6 fractional bits (a local downcast by `cmp_shift = f − 6`
//! bits, [`crate::max::max_at`]) and Exp its integer `z` (below 2^10 for the rows the plan
//! admits): the rows' spread (largest minus smallest entry) must then stay below 2^9 in real
//! terms, the limit ReLU's and GELU's inputs already have, where `Z_2^32` admitted 2^19, and
//! each comparison costs 108 leaves to expand per evaluator instead of 272. The downcast can make Max miss the maximum by
//! `2·⌈log2 k⌉` units of 2^-6 (never exceed it); softmax is unchanged by a shift of the
//! whole row, so Exp reads `x − m − c` with `c` one unit more than that, which keeps every
//! input at or below 0 as Exp needs.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z2k, Z64};
use veil_tensor::Tensor;

use crate::exp::{ExpKeys, exp};
use crate::mac::Macs;
use crate::max::max_setup_with;
use crate::max::{MaxKeys, max_at};
use crate::recip::{self, Kind, RecipKeys, Sources};
use crate::rss::Rss;
use crate::shape::{Shape, Word};
use crate::triples::Sacrifice;
use crate::trunc::trunc;
use crate::verified;
use veil_mpc::mode::Security;

/// Verified material for a `[rows, k]` softmax: Max and Exp compare in `C`, the reciprocal
/// in `R`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, C: Word, M: Word")]
pub struct SoftmaxKeys<R, C, M> {
    rows: usize,
    k: usize,
    max: MaxKeys<C, M>,
    exp: ExpKeys<C, M>,
    inv: RecipKeys<R, M>,
}

impl<R: Z2k, C: Z2k, M: Z2k> SoftmaxKeys<R, C, M> {
    /// Zero material of the real shapes: the layout real material must have (stored
    /// material is checked against it).
    pub(crate) fn placeholder(rows: usize, k: usize, f: u32) -> Self {
        SoftmaxKeys {
            rows,
            k,
            max: MaxKeys::placeholder(rows, k),
            exp: ExpKeys::placeholder(rows * k, f),
            inv: RecipKeys::placeholder(Kind::Inv, rows, f),
        }
    }
}

impl<R, C, M: Shape> Shape for SoftmaxKeys<R, C, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        out.extend([self.rows, self.k]);
        self.max.shape(out);
        self.exp.shape(out);
        self.inv.shape(out);
    }
}

/// Deals and checks the material of a `[rows, k]` softmax.
pub fn setup<R: Sacrifice, C: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    rows: usize,
    k: usize,
    f: u32,
) -> Result<SoftmaxKeys<R, C, M>> {
    setup_with(ctx, rows, k, f, Security::Malicious)
}

/// [`setup`] in a given mode.
pub fn setup_with<R: Sacrifice, C: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    rows: usize,
    k: usize,
    f: u32,
    security: Security,
) -> Result<SoftmaxKeys<R, C, M>> {
    Ok(SoftmaxKeys {
        rows,
        k,
        max: max_setup_with(ctx, rows, k, security)?,
        exp: crate::exp::setup_with(ctx, rows * k, f, security)?,
        inv: recip::setup_with(ctx, Kind::Inv, rows, f, security)?,
    })
}

/// `⟨softmax(x)⟩` row by row; `mask[i·k + j] = true` leaves entry `(i, j)` out. Max reads its
/// differences `cmp_shift` bits coarser than `f` (0: the whole difference).
#[allow(clippy::too_many_arguments, reason = "the gate's inputs, material and precision")]
pub fn softmax<R: Z2k, C: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: SoftmaxKeys<R, C, M>,
    sources: &mut impl Sources,
    x: &Rss<Z64>,
    mask: Option<&[bool]>,
    f: u32,
    cmp_shift: u32,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<Z64>> {
    let (rows, k) = (keys.rows, keys.k);
    if x.len() != rows * k || mask.is_some_and(|m| m.len() != rows * k) {
        return Err(MpcError::Invalid(format!(
            "softmax of {} values (mask of {:?}) with keys for [{rows}, {k}]",
            x.len(),
            mask.map(<[bool]>::len)
        )));
    }
    let x = x.reshape(&[rows, k])?;
    let mut x_m = x;
    let keep: Option<Tensor<Z64>> = match mask {
        Some(m) => Some(Tensor::new(
            vec![rows, k],
            m.iter().map(|&b| if b { Z64::ZERO } else { Z64::ONE }).collect(),
        )?),
        None => None,
    };
    if let Some(keep) = &keep {
        // Masked entries take the row's first value: x·keep + x[:, 0]·(1 - keep).
        let first = x_m.slice(1, 0..1)?.reshape(&[rows])?;
        let masked = keep.map(|&v| Z64::ONE - v);
        x_m = x_m.mul_public(keep)?.add(&first.spread_rows(k)?.mul_public(&masked)?)?;
    }
    let m = max_at(ctx, keys.max, &x_m, cmp_shift, macs)?;
    let margin = shift_margin(k, cmp_shift);
    let delta = x_m
        .sub(&m.spread_rows(k)?)?
        .add_public(ctx.party(), &Tensor::full(&[rows, k], Z64::from_i64(-margin)))?;
    let mut e = exp(ctx, keys.exp, sources, &delta, f, macs)?;
    e = e.reshape(&[rows, k])?;
    if let Some(keep) = &keep {
        e = e.mul_public(keep)?;
    }
    let r = recip::evaluate(ctx, keys.inv, sources, &e.row_sums(k)?, f, macs)?;
    let z = verified::mul(ctx, sources, &e, &r.spread_rows(k)?)?;
    let z = trunc(ctx, sources, &z, 1 << f)?;
    // Masked outputs are exactly 0 (the truncation of 0 may read -1).
    match &keep {
        Some(keep) => z.mul_public(keep),
        None => Ok(z),
    }
}

/// `c` of step 2: `2·⌈log2 k⌉ + 1` units of `2^cmp_shift` (0 without a shift), at `f` bits.
pub fn shift_margin(k: usize, cmp_shift: u32) -> i64 {
    if cmp_shift == 0 {
        return 0;
    }
    let levels = i64::from(usize::BITS - k.saturating_sub(1).leading_zeros());
    (2 * levels + 1) << cmp_shift
}
