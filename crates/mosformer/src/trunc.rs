//! Truncation by a public divisor (paper §3, F_trunc, ABY3 style), for `d = 2^f` after products
//! and for the non-power-of-two divisors the model needs (`round(ln2·2^f)` in Exp, the row
//! length in LayerNorm, `⌊√d_head⌋` in attention).
//!
//! With a pair `(⟨r⟩, ⟨r'⟩)`, `r` uniform and `r' = ⌊r_s / d⌋` (`r_s`: `r` read as a signed
//! ℓ-bit integer), the parties open `c = x - r` (checked opening) and set
//! `⟨x / d⟩ = ⌊c_s / d⌋ + ⟨r'⟩` (the public part goes into component `a_0`).
//!
//! Why it works: `c_s + r_s = x + 2^ℓ·u` with `u = 0` unless `x - r_s` leaves the signed
//! range, which happens with probability `|x| / 2^ℓ`; when `u = 0`,
//! `⌊c_s/d⌋ + ⌊r_s/d⌋ ∈ {⌊x/d⌋ - 1, ⌊x/d⌋}` (one unit of error at most). When `u ≠ 0` the
//! result is off by about `2^ℓ/d`: the caller must keep `|x|` far below `2^{ℓ-1}`
//! (e.g. `|x| < 2^{ℓ-1-κ}` for a failure probability `2^{-κ}` per element), which is what the
//! precision plan's ring sizes are for.
//!
//! Cost per party: one checked opening, `n·B + 32` bytes, 2 messages, 1 round.
//! Pairs come from a [`TruncPairSource`]; the only source yet is the insecure test dealer.

use veil_mpc::prep::CorrelationRequest;
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Z2k;
use veil_tensor::Tensor;

use crate::open::open_all;
use crate::rss::Rss;
use crate::triples::{InsecureRssDealer, split};

/// One party's shares of a truncation pair for divisor `d`.
#[derive(Clone, Debug)]
pub struct TruncPair<R> {
    /// `⟨r⟩`, `r` uniform in Z_2^ℓ.
    pub r: Rss<R>,
    /// `⟨⌊r_s / d⌋⟩`.
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

/// `⟨⌊x / d⌋⟩` up to one unit (see the module doc for the range condition).
pub fn trunc<R: Z2k>(
    ctx: &mut Ctx,
    pairs: &mut impl TruncPairSource<R>,
    x: &Rss<R>,
    d: u64,
) -> Result<Rss<R>> {
    if d == 0 {
        return Err(MpcError::Invalid("truncation by 0".into()));
    }
    let p = pairs.trunc_pair(ctx, x.shape(), d)?;
    let c = open_all(ctx, &x.sub(&p.r)?)?;
    let public = c.map(|&v| div_floor_signed(v, d));
    p.r_div.add_public(ctx.party(), &public)
}

impl<R: Z2k> TruncPairSource<R> for InsecureRssDealer {
    fn trunc_pair(&mut self, ctx: &mut Ctx, shape: &[usize], d: u64) -> Result<TruncPair<R>> {
        let n: usize = shape.iter().product();
        self.usage_mut().record(&CorrelationRequest::TruncPairs { count: n });
        let mut g = ctx.common_prg("mosformer/insecure-dealer/trunc");
        let r = Tensor::new(shape.to_vec(), R::random_vec(&mut g, n))?;
        let r_div = r.map(|&v| div_floor_signed(v, d));
        Ok(TruncPair { r: split(ctx, &r)?, r_div: split(ctx, &r_div)? })
    }
}
