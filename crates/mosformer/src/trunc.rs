//! Truncation by a public divisor (paper §3, F_trunc), for `d = 2^f` after products and for
//! the non-power-of-two divisors the model needs (`round(ln2·2^f)` in Exp, the row length in
//! LayerNorm, `⌊√d_head⌋` in attention).
//!
//! With a pair `(⟨r⟩, ⟨r'⟩)` the parties open `c = x - r` (checked opening) and set
//! `⟨x / d⟩ = ⌊c_s / d⌋ + ⟨r'⟩` (`c_s`: `c` read as signed; the public part goes into `a_0`).
//!
//! **Pairs without communication** ([`pair_known_pair`]). Every component `a_j` of a replicated
//! sharing is known to exactly one pair of servers, so a value that pair draws from its common
//! seed can be a component, and so can any function of it that both compute. Each pair draws
//! `u_j` uniform in `[0, 2^{ℓ-2})` and also holds `q_j = ⌊u_j / d⌋`. With `U = u_0 + u_1 + u_2`
//! (an integer below `3·2^{ℓ-2}`, no wrap) and a public `B`, the multiple of `d` just below
//! `-(2^{ℓ-1} - 2^{ℓ-3})`, the pair is `r = -(U + B)` and `r' = -(q_0 + q_1 + q_2) - B/d - 1`.
//! For `x ∈ [-2^{ℓ-3} + d, 2^{ℓ-3})`, `c = x + U + B` lies in the signed range, so `c_s` is that
//! integer exactly, and
//! `⌊c_s/d⌋ + r' = ⌊x/d⌋ + γ + ε - 1` with `γ = ⌊U/d⌋ - Σq_j ∈ {0, 1, 2}` (carries of the three
//! remainders) and `ε ∈ {0, 1}` (carry of `x`'s remainder): the result is within `[-1, +2]`
//! units of `⌊x/d⌋` (mean +1/2), never a wrap. Nothing to verify: a corrupted server knows two
//! of the `u_j` and holds wrong copies at most of its own components, which the checked openings
//! catch like any inconsistency.
//!
//! **Privacy is statistical.** A corrupted server sees `c` and knows two of the `u_j`; the third
//! is uniform over `2^{ℓ-2}` values, so `c` hides `x` up to statistical distance `|x| / 2^{ℓ-2}`
//! per element: `κ = ℓ - 2 - log2|x|` bits. It is the same margin, within a bit, as the paper's
//! ABY3-style pairs (uniform `r`, which instead fail with probability `|x| / 2^{ℓ-1}` and then
//! give a wrong result off by about `2^ℓ/d`); here nothing ever fails, and the material costs no
//! bytes, no rounds and no storage. In the precision plan's Z_2^64 (products with 32 fractional
//! bits, |x| < 2^40 for real values below 256) κ ≥ 22; in Z_2^32 (Exp, |x| < 2^17) κ ≥ 13. The
//! ring must have at least 32 bits ([`trunc`] refuses smaller ones).
//!
//! Cost per party: one checked opening, `n·B + 32` bytes, 2 messages, 1 round.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Z2k;
use veil_tensor::Tensor;

use crate::open::open_all;
use crate::prss::random;
use crate::rss::Rss;

/// One party's shares of a truncation pair for divisor `d`.
#[derive(Clone, Debug)]
pub struct TruncPair<R> {
    /// `⟨r⟩`, the mask: the parties open `x - r`.
    pub r: Rss<R>,
    /// `⟨r'⟩` with `⌊(x - r)_s / d⌋ + r' ≈ ⌊x / d⌋`.
    pub r_div: Rss<R>,
}

/// Where truncation pairs come from. All parties call it in the same order.
pub trait TruncPairSource<R: Z2k> {
    /// A pair for `n` elements of the given shape and divisor `d ≥ 1`.
    fn trunc_pair(&mut self, ctx: &mut Ctx, shape: &[usize], d: u64) -> Result<TruncPair<R>>;
}

/// `⌊v_s / d⌋` for a ring element read as signed, as a ring element.
pub fn div_floor_signed<R: Z2k>(v: R, d: u64) -> R {
    R::from_signed(v.to_signed().div_euclid(i128::from(d)))
}

/// `⟨⌊x / d⌋⟩` within `[-1, +2]` units for pairs from [`pair_known_pair`] (see the module
/// doc for the range condition).
pub fn trunc<R: Z2k>(
    ctx: &mut Ctx,
    pairs: &mut impl TruncPairSource<R>,
    x: &Rss<R>,
    d: u64,
) -> Result<Rss<R>> {
    check_divisor::<R>(d)?;
    let p = pairs.trunc_pair(ctx, x.shape(), d)?;
    let c = open_all(ctx, &x.sub(&p.r)?)?;
    let public = c.map(|&v| div_floor_signed(v, d));
    p.r_div.add_public(ctx.party(), &public)
}

/// `⟨(r, r')⟩` for `n` elements and divisor `d`, from the pairs' common seeds (no
/// communication; see the module doc for the construction, its error and its privacy).
pub fn pair_known_pair<R: Z2k>(ctx: &mut Ctx, shape: &[usize], d: u64) -> Result<TruncPair<R>> {
    check_divisor::<R>(d)?;
    let low = (1u128 << (R::BITS - 2)) - 1;
    let u = random::<R>(ctx, shape)?.map_components(|v| R::from_u128(v.to_u128() & low));
    let q = u.map_components(|v| R::from_u128(v.to_u128() / u128::from(d)));
    let d_i = i128::from(d);
    let bias = (-(1i128 << (R::BITS - 1)) + (1i128 << (R::BITS - 3))).div_euclid(d_i) * d_i;
    let n: usize = shape.iter().product();
    let public = |v: i128| Tensor::new(shape.to_vec(), vec![R::from_signed(v); n]);
    let b = ctx.party();
    let r = u.neg().add_public(b, &public(-bias)?)?;
    let r_div = q.neg().add_public(b, &public(-bias / d_i - 1)?)?;
    Ok(TruncPair { r, r_div })
}

fn check_divisor<R: Z2k>(d: u64) -> Result<()> {
    if R::BITS < 32 || d == 0 || u128::from(d) >= 1u128 << (R::BITS - 4) {
        return Err(MpcError::Invalid(format!(
            "truncation by {d} in Z_2^{}: needs a ring of at least 32 bits and 0 < d < 2^(ℓ-4)",
            R::BITS
        )));
    }
    Ok(())
}
