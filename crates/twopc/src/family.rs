//! The toolkit as a protocol family over Z_2^64: [`TwoPc`] implements `veil-mpc`'s capability
//! traits (sharing, linear operations, products, fixed point, ReLU and maxima, layout, input
//! owners, preprocessing), so the conformance suite and the secure executor run on it.
//!
//! | op | protocol | per element, each party |
//! |---|---|---|
//! | `share_input`, linear ops, layout | pairwise seeds, local | nothing |
//! | `mul` | bit-decomposed Δ-OT ([`crate::product`]) | 64 + 2080 bits, 1 round |
//! | `mul_fixed`, `matmul_fixed` | products, then M&M's truncation ([`crate::trunc`]) | + 65 bits from P0 |
//! | `div_public(d)` | truncation (d = 2^s), or `x·⌈2^s/d⌉` truncated by `2^s` | 65 bits from P0 |
//! | `relu`, `max_rows` | DReLU and the multiplexer ([`crate::nonlinear`]) | see there |
//!
//! Matrix products run as the `m·k·p` scalar products they contain; the `mm` family replaces
//! them with lattice-based products.
//!
//! **Fixed point**: 16 fractional bits. The truncation (M&M) is `⌊x / 2^f⌋` or one less for
//! `|x| < 2^62`; a division by a `d ≤ 2^12` that is not a power of two is exact to the same
//! unit for `|x| < 2^28` (reals below 2^12 at 16 fractional bits), the range in which the
//! reciprocal `⌈2^s/d⌉` keeps the product inside the truncation's bound.
//!
//! **Security**: two semi-honest computing parties (parties 0 and 1 of the session); later
//! parties are input owners, who share and receive outside the OT sessions.

use veil_mpc::cost::Cost;
use veil_mpc::prep::{Call, CorrelationRequest, Plan, PrepUsage, Preprocessing, Supply};
use veil_mpc::traits::{FixedPoint, Layout, Linear, Multiply, NonLinear, Owners, Sharing};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::{Ring, Z64};
use veil_tensor::Tensor;

use crate::prep::OtSource;
use crate::{Engine, TwoParty, nonlinear, product, trunc};

/// Fractional bits of the family's fixed-point values.
pub const FRAC_BITS: u32 = 16;
/// Inputs of a division by a public `d` that is not a power of two must lie within
/// `±2^DIV_RANGE_BITS`.
pub const DIV_RANGE_BITS: u32 = 28;
const BITS: u32 = 64;
const INPUT: &str = "veil/twopc/input";
const OWNER_INPUT: &str = "veil/twopc/owner-input";

/// One party's additive share of a secret tensor over Z_2^64.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shares(pub Tensor<Z64>);

/// The 2-party toolkit at one party of a session: parties 0 and 1 compute, later ones own
/// inputs.
pub struct TwoPc {
    source: OtSource,
}

impl std::fmt::Debug for TwoPc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TwoPc").field("source", &self.source).finish()
    }
}

fn words(x: &Tensor<Z64>) -> Vec<u64> {
    x.data().iter().map(|v| v.0).collect()
}

fn shares(shape: &[usize], w: Vec<u64>) -> Result<Shares> {
    Ok(Shares(Tensor::new(shape.to_vec(), w.into_iter().map(Z64).collect())?))
}

/// Largest divisor that is not a power of two [`FixedPoint::div_public`] takes.
pub const MAX_ODD_DIVISOR: u64 = 1 << 12;

/// The shift and reciprocal for a divisor `d` that is not a power of two:
/// `s = DIV_RANGE_BITS + 1 + ⌈log2 d⌉`, `r = ⌈2^s / d⌉`. For `0 ≤ x' < 2^{R+1} + d`,
/// `x'·r / 2^s` exceeds `x'/d` by `x'·(r·d − 2^s)/(d·2^s) < 1/d` (as `r·d − 2^s < d` and
/// `d(d − 1) < 2^{R+1}`), and `x'·r < 2^{2R+3} ≤ 2^62`, the truncation's bound.
fn reciprocal(d: u64) -> (u32, u64) {
    let log = 64 - (d - 1).leading_zeros();
    let s = DIV_RANGE_BITS + 1 + log;
    (s, (1u128 << s).div_ceil(u128::from(d)) as u64)
}

impl TwoPc {
    /// Sets up the COT engines between parties 0 and 1 (nothing at an owner).
    pub fn setup(ctx: &mut Ctx, engine: Engine) -> Result<Self> {
        if ctx.parties() < 2 {
            return Err(MpcError::Invalid("the 2-party toolkit needs two computing parties".into()));
        }
        Ok(TwoPc { source: OtSource::setup_among(ctx, engine, BITS, 2)? })
    }

    /// Makes COTs ahead at a computing party: `p0_sends` with party 0 as sender, `p1_sends`
    /// the other way (both computing parties pass the same numbers; a plan's exact numbers
    /// come through [`Preprocessing::produce`]).
    pub fn prepare_cots(&mut self, ctx: &mut Ctx, p0_sends: usize, p1_sends: usize) -> Result<()> {
        self.tp(ctx)?.prepare(ctx, p0_sends, p1_sends)
    }

    /// The OT session of a computing party, for families that build on the toolkit.
    pub fn session(&mut self, ctx: &Ctx) -> Result<&mut TwoParty> {
        self.tp(ctx)
    }

    fn tp(&mut self, ctx: &Ctx) -> Result<&mut TwoParty> {
        match ctx.party() {
            0 => self.source.pair(1),
            1 => self.source.pair(0),
            me => Err(MpcError::Invalid(format!("party {me} owns inputs; parties 0 and 1 compute"))),
        }
    }

    fn computing(ctx: &Ctx) -> Result<PartyId> {
        match ctx.party() {
            me @ (0 | 1) => Ok(1 - me),
            me => Err(MpcError::Invalid(format!("party {me} owns inputs; parties 0 and 1 compute"))),
        }
    }

    /// `⌊x / 2^f⌋` (or one less) for `|x| < 2^62`.
    fn truncate(&mut self, ctx: &mut Ctx, x: &Shares, f: u32) -> Result<Shares> {
        let w = trunc::trunc(self.tp(ctx)?, ctx, &words(&x.0), BITS, f)?;
        shares(x.0.shape(), w)
    }

    /// `X·Y` for `[m, k] × [k, p]`, not rescaled: the `m·k·p` scalar products in one batch.
    fn matmul(&mut self, ctx: &mut Ctx, x: &Shares, y: &Shares) -> Result<Shares> {
        let (m, k, p) = match (x.0.shape(), y.0.shape()) {
            ([m, k], [k2, p]) if k == k2 => (*m, *k, *p),
            (a, b) => return Err(MpcError::Invalid(format!("a product of {a:?} and {b:?}"))),
        };
        let (xw, yw) = (words(&x.0), words(&y.0));
        let mut left = Vec::with_capacity(m * k * p);
        let mut right = Vec::with_capacity(m * k * p);
        for i in 0..m {
            for j in 0..p {
                for l in 0..k {
                    left.push(xw[i * k + l]);
                    right.push(yw[l * p + j]);
                }
            }
        }
        let prod = product::mul(self.tp(ctx)?, ctx, &left, &right, BITS)?;
        let sums = prod.chunks(k.max(1)).map(|c| c.iter().fold(0u64, |a, &b| a.wrapping_add(b)));
        shares(&[m, p], if k == 0 { vec![0; m * p] } else { sums.collect() })
    }
}

impl Sharing<Z64> for TwoPc {
    type Share = Shares;

    /// Shares from the seed the owner shares with the other computing party: nothing is sent.
    fn share_input(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<Z64>>,
        shape: &[usize],
    ) -> Result<Shares> {
        let peer = Self::computing(ctx)?;
        if owner > 1 {
            return Err(MpcError::Invalid(format!("party {owner} does not compute")));
        }
        let len: usize = shape.iter().product();
        let mut g = ctx.pair_prg(peer, INPUT)?;
        let theirs = Z64::random_vec(&mut g, len);
        if ctx.party() != owner {
            return Ok(Shares(Tensor::new(shape.to_vec(), theirs)?));
        }
        let x = value.ok_or_else(|| MpcError::Invalid("the input owner must pass its value".into()))?;
        if x.shape() != shape {
            return Err(MpcError::Invalid(format!("input of shape {:?}, declared {shape:?}", x.shape())));
        }
        Ok(Shares(x.sub(&Tensor::new(shape.to_vec(), theirs)?)?))
    }

    fn reveal_all(&mut self, ctx: &mut Ctx, x: &Shares) -> Result<Tensor<Z64>> {
        let peer = Self::computing(ctx)?;
        ctx.send_ring(peer, x.0.data())?;
        let theirs: Vec<Z64> = ctx.recv_ring(peer, x.0.len())?;
        Ok(x.0.add(&Tensor::new(x.0.shape().to_vec(), theirs)?)?)
    }

    fn reveal_to(&mut self, ctx: &mut Ctx, x: &Shares, to: PartyId) -> Result<Option<Tensor<Z64>>> {
        let peer = Self::computing(ctx)?;
        if to > 1 {
            return Err(MpcError::Invalid(format!("party {to} does not compute")));
        }
        if ctx.party() != to {
            ctx.send_ring(to, x.0.data())?;
            return Ok(None);
        }
        let theirs: Vec<Z64> = ctx.recv_ring(peer, x.0.len())?;
        Ok(Some(x.0.add(&Tensor::new(x.0.shape().to_vec(), theirs)?)?))
    }
}

impl Linear<Z64> for TwoPc {
    fn add(&self, x: &Shares, y: &Shares) -> Result<Shares> {
        Ok(Shares(x.0.add(&y.0)?))
    }

    fn sub(&self, x: &Shares, y: &Shares) -> Result<Shares> {
        Ok(Shares(x.0.sub(&y.0)?))
    }

    /// Party 0 adds the constant.
    fn add_public(&self, ctx: &Ctx, x: &Shares, c: &Tensor<Z64>) -> Result<Shares> {
        if x.0.shape() != c.shape() {
            return Err(MpcError::Invalid(format!("shapes {:?} and {:?} differ", x.0.shape(), c.shape())));
        }
        Ok(if ctx.party() == 0 { Shares(x.0.add(c)?) } else { x.clone() })
    }

    fn mul_public(&self, x: &Shares, c: &Tensor<Z64>) -> Result<Shares> {
        Ok(Shares(x.0.mul(c)?))
    }
}

impl Multiply<Z64> for TwoPc {
    fn mul(&mut self, ctx: &mut Ctx, x: &Shares, y: &Shares) -> Result<Shares> {
        if x.0.shape() != y.0.shape() {
            return Err(MpcError::Invalid(format!("shapes {:?} and {:?} differ", x.0.shape(), y.0.shape())));
        }
        let w = product::mul(self.tp(ctx)?, ctx, &words(&x.0), &words(&y.0), BITS)?;
        shares(x.0.shape(), w)
    }

    fn mul_cost(&self, elements: usize, _parties: usize) -> Cost {
        product::cost(elements, BITS)
    }
}

impl FixedPoint<Z64> for TwoPc {
    fn frac_bits(&self) -> u32 {
        FRAC_BITS
    }

    fn mul_fixed(&mut self, ctx: &mut Ctx, x: &Shares, y: &Shares) -> Result<Shares> {
        let z = self.mul(ctx, x, y)?;
        self.truncate(ctx, &z, FRAC_BITS)
    }

    fn matmul_fixed(&mut self, ctx: &mut Ctx, x: &Shares, y: &Shares) -> Result<Shares> {
        let z = self.matmul(ctx, x, y)?;
        self.truncate(ctx, &z, FRAC_BITS)
    }

    fn matmul_unscaled(&mut self, ctx: &mut Ctx, x: &Shares, y: &Shares) -> Result<Shares> {
        self.matmul(ctx, x, y)
    }

    /// A power of two is one truncation. Otherwise, with a public bias `B` (a multiple of `d`
    /// above `2^28`) making `x' = x + B` non-negative, `⌊x'·r / 2^s⌋ − B/d` with
    /// `r = ⌈2^s/d⌉`: `x'·r/2^s − x'/d ∈ [0, 1/d)`, so the floor is `⌊x'/d⌋` before the
    /// truncation's own unit.
    fn div_public(&mut self, ctx: &mut Ctx, x: &Shares, d: u64) -> Result<Shares> {
        if d == 0 {
            return Err(MpcError::Invalid("division by 0".into()));
        }
        if d == 1 {
            return Ok(x.clone());
        }
        if d.is_power_of_two() {
            return self.truncate(ctx, x, d.trailing_zeros());
        }
        if d > MAX_ODD_DIVISOR {
            return Err(MpcError::Invalid(format!(
                "division by {d}: divisors that are not powers of two must be at most 2^12"
            )));
        }
        let (s, r) = reciprocal(d);
        let bias = d * (1u64 << DIV_RANGE_BITS).div_ceil(d);
        let lead = ctx.party() == 0;
        let scaled: Vec<u64> = words(&x.0)
            .iter()
            .map(|&v| (if lead { v.wrapping_add(bias) } else { v }).wrapping_mul(r))
            .collect();
        let q = trunc::trunc(self.tp(ctx)?, ctx, &scaled, BITS, s)?;
        let out = q.into_iter().map(|v| if lead { v.wrapping_sub(bias / d) } else { v }).collect();
        shares(x.0.shape(), out)
    }
}

impl NonLinear<Z64> for TwoPc {
    fn relu(&mut self, ctx: &mut Ctx, x: &Shares) -> Result<Shares> {
        let w = nonlinear::relu(self.tp(ctx)?, ctx, &words(&x.0), BITS)?;
        shares(x.0.shape(), w)
    }

    fn max_rows(&mut self, ctx: &mut Ctx, x: &Shares, rows: usize, k: usize) -> Result<Shares> {
        let w = nonlinear::max_rows(self.tp(ctx)?, ctx, &words(&x.0), rows, k, BITS)?;
        shares(&[rows], w)
    }

    fn comparisons_on_full_ring(&self) -> bool {
        true
    }

    /// Semi-honest: nothing is deferred.
    fn check(&mut self, _: &mut Ctx) -> Result<()> {
        Ok(())
    }
}

impl Layout<Z64> for TwoPc {
    fn shape_of(&self, x: &Shares) -> Vec<usize> {
        x.0.shape().to_vec()
    }

    fn reshape(&self, x: &Shares, shape: &[usize]) -> Result<Shares> {
        Ok(Shares(x.0.clone().reshape(shape)?))
    }

    fn slice(&self, x: &Shares, axis: usize, range: std::ops::Range<usize>) -> Result<Shares> {
        Ok(Shares(x.0.slice(axis, range)?))
    }

    fn transpose(&self, x: &Shares) -> Result<Shares> {
        Ok(Shares(x.0.transpose()?))
    }

    fn concat(&self, parts: &[&Shares], axis: usize) -> Result<Shares> {
        let tensors: Vec<&Tensor<Z64>> = parts.iter().map(|p| &p.0).collect();
        Ok(Shares(Tensor::concat(&tensors, axis)?))
    }

    fn gather(&self, x: &Shares, index: &[Option<usize>], shape: &[usize]) -> Result<Shares> {
        Ok(Shares(x.0.gather(index, shape, Z64::ZERO)?))
    }
}

impl Owners<Z64> for TwoPc {
    fn servers(&self) -> usize {
        2
    }

    /// An owner outside sends party 0 `x − s_1`, where party 1 expands `s_1` from the seed it
    /// shares with the owner: one message.
    fn share_from_owner(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<Z64>>,
        shape: &[usize],
    ) -> Result<Option<Shares>> {
        let me = ctx.party();
        if owner >= ctx.parties() {
            return Err(MpcError::Invalid(format!("no party {owner}")));
        }
        if owner < 2 {
            return if me < 2 { self.share_input(ctx, owner, value, shape).map(Some) } else { Ok(None) };
        }
        let len: usize = shape.iter().product();
        if me == owner {
            let x = value.ok_or_else(|| MpcError::Invalid("the input owner must pass its value".into()))?;
            if x.shape() != shape {
                return Err(MpcError::Invalid(format!("input of shape {:?}, declared {shape:?}", x.shape())));
            }
            let mut g = ctx.pair_prg(1, OWNER_INPUT)?;
            let rest = x.sub(&Tensor::new(shape.to_vec(), Z64::random_vec(&mut g, len))?)?;
            ctx.send_ring(0, rest.data())?;
            return Ok(None);
        }
        match me {
            0 => Ok(Some(Shares(Tensor::new(shape.to_vec(), ctx.recv_ring(owner, len)?)?))),
            1 => {
                let mut g = ctx.pair_prg(owner, OWNER_INPUT)?;
                Ok(Some(Shares(Tensor::new(shape.to_vec(), Z64::random_vec(&mut g, len))?)))
            }
            _ => Ok(None),
        }
    }

    fn reveal_to_owner(
        &mut self,
        ctx: &mut Ctx,
        x: Option<&Shares>,
        owner: PartyId,
        shape: &[usize],
    ) -> Result<Option<Tensor<Z64>>> {
        let me = ctx.party();
        let len: usize = shape.iter().product();
        if owner >= ctx.parties() {
            return Err(MpcError::Invalid(format!("no party {owner}")));
        }
        if me < 2 && me != owner {
            let x = x.ok_or_else(|| MpcError::Invalid("a computing party must pass its share".into()))?;
            if x.0.len() != len {
                return Err(MpcError::Invalid(format!("a share of {} values, declared {len}", x.0.len())));
            }
            ctx.send_ring(owner, x.0.data())?;
            return Ok(None);
        }
        if me != owner {
            return Ok(None);
        }
        let mut sum = match x {
            Some(mine) if me < 2 => mine.0.data().to_vec(),
            _ => vec![Z64::ZERO; len],
        };
        if sum.len() != len {
            return Err(MpcError::Invalid(format!("a share of {} values, declared {len}", sum.len())));
        }
        for p in (0..2).filter(|&p| p != me) {
            let theirs: Vec<Z64> = ctx.recv_ring(p, len)?;
            sum.iter_mut().zip(theirs).for_each(|(s, t)| *s += t);
        }
        Ok(Some(Tensor::new(shape.to_vec(), sum)?))
    }
}

impl Preprocessing for TwoPc {
    fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        self.source.requests(call)
    }

    fn supplies(&self) -> &'static [Supply] {
        self.source.supplies()
    }

    fn produce(&mut self, ctx: &mut Ctx, plan: &Plan) -> Result<()> {
        self.source.produce(ctx, plan)
    }

    fn made_on_demand(&self) -> u64 {
        self.source.made_on_demand()
    }

    fn usage(&self) -> PrepUsage {
        self.source.usage()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reciprocal_errs_above_by_less_than_one_over_d_in_range() {
        for d in [3u64, 5, 7, 10, 1000, MAX_ODD_DIVISOR - 1] {
            let (s, r) = reciprocal(d);
            let bias = d * (1u64 << DIV_RANGE_BITS).div_ceil(d);
            let top = u128::from((1u64 << DIV_RANGE_BITS) + bias);
            // x'·r/2^s − x'/d = x'·(r·d − 2^s)/(d·2^s) < 1/d ⇔ x'·(r·d − 2^s) < 2^s.
            let excess = u128::from(r) * u128::from(d) - (1u128 << s);
            assert!(top * excess < 1u128 << s, "d = {d}");
            // The product stays below the truncation's bound 2^62.
            assert!(top * u128::from(r) < 1u128 << 62, "d = {d}");
        }
    }
}
