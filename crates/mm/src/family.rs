//! The `mm` family behind `veil-mpc`'s capability traits: two computing parties (the client,
//! party 0, and the server, party 1, in a client/server session), fixed-point shares of
//! Z_2^64 with 16 fractional bits, products by the Z_p-OLE and coefficient-encoded matrix
//! products, comparisons and truncations by Ferret OT.
//!
//! | op | protocol |
//! |---|---|
//! | sharing, linear ops, layout | the 2-party toolkit's ([`veil_twopc::TwoPc`]), local |
//! | `mul` (exact in Z_2^64) | the toolkit's bit-decomposed Δ-OT |
//! | `mul_fixed` | Z_p-OLE, conversions in and out, truncation free ([`crate::products`]); one way for a known operand |
//! | `matmul_fixed` | coefficient encoding ([`veil_he::matmul`]), one direction for a known operand |
//! | `div_public` | M&M's truncation (the toolkit's) |
//! | `relu`, `max_rows` | DReLU in Z_2^40 and the multiplexer in Z_2^64 (the toolkit's) |
//! | GeLU, softmax, LayerNorm | [`crate::transformer`] |
//!
//! **Known operands.** A tensor an owner shares from inside the session (the server's weights,
//! the client's input) is held in full by its owner, the other party's share being 0: its
//! lift into Z_p is local and its matrix products run in one direction, as in Cheetah and
//! BumbleBee, where the server's weights are plaintext to it. Operations of the owner's values
//! alone stay local; anything mixing them with the other party's becomes an ordinary sharing.
//! What is public is what the graph's shapes say, as in every family; which party owns which
//! tensor is part of the session's roles.
//!
//! **Preprocessing**: the COTs of the calls, made on demand by Ferret (or ahead from a plan
//! of the shapes). The plan counts every operand as shared; a known operand's lift needs no
//! COT, so a session with weights consumes fewer than planned. The BFV keys are made once per
//! session ([`Mm::setup`]).
//!
//! **Security**: semi-honest, two parties, as the paper. Owners outside the two computing
//! parties share with them and receive from them as in the toolkit.

use veil_he::ole::Ole;
use veil_he::preset::BfvPreset;
use veil_mpc::cost::Cost;
use veil_mpc::prep::{Call, CorrelationRequest, Plan, PrepUsage, Preprocessing, Supply};
use veil_mpc::traits::{FixedPoint, Layout, Linear, Multiply, NonLinear, Owners, Sharing, TransformerOps};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::{Ring, Z64};
use veil_tensor::Tensor;
use veil_twopc::family::Shares;
use veil_twopc::nonlinear::{max_rows_in, relu_in};
use veil_twopc::{Engine, TwoParty, TwoPc};

use crate::products::{BITS, COMPARE_BITS, Operand, matmul, mul_known, mul_shift};
use crate::transformer;

/// Fractional bits of the family's fixed-point values.
pub const FRAC_BITS: u32 = 16;
/// The BFV parameters of the family's products: `t ≈ 2^60` holds a product of two values below
/// `2^{13}` at `2^{2f}`, and any matrix product's outputs below `2^{25}`.
pub const PRESET: BfvPreset = BfvPreset::N8192P60;

/// One party's share of a secret tensor over Z_2^64, and the party that knows it whole (its
/// owner, when shared from inside the session; the other party's share is then 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmShares {
    /// The share.
    pub share: Shares,
    /// The computing party that holds the whole value, if any.
    pub holder: Option<PartyId>,
}

impl MmShares {
    fn shared(share: Shares) -> Self {
        MmShares { share, holder: None }
    }

    fn words(&self) -> Vec<u64> {
        self.share.0.data().iter().map(|v| v.0).collect()
    }

    fn shape(&self) -> &[usize] {
        self.share.0.shape()
    }

    fn with(&self, w: Vec<u64>, shape: &[usize], holder: Option<PartyId>) -> Result<Self> {
        Ok(MmShares { share: Shares(Tensor::new(shape.to_vec(), w.into_iter().map(Z64).collect())?), holder })
    }

    fn matrix(&self) -> Result<[usize; 2]> {
        match self.shape() {
            [r, c] => Ok([*r, *c]),
            s => Err(MpcError::Invalid(format!("a matrix product of a tensor of shape {s:?}"))),
        }
    }
}

/// Both known to the same party.
fn same_holder(x: &MmShares, y: &MmShares) -> Option<PartyId> {
    x.holder.filter(|h| y.holder == Some(*h))
}

/// The `mm` family at one party of a session.
pub struct Mm {
    base: TwoPc,
    ole: Option<Ole>,
    planner: Planner,
}

impl std::fmt::Debug for Mm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mm")
            .field("base", &self.base)
            .field("bfv", &self.ole.as_ref().map(|o| o.bfv().preset()))
            .finish()
    }
}

impl Mm {
    /// Sets up the COT engines and the BFV keys between parties 0 and 1 (nothing at an owner
    /// outside them).
    pub fn setup(ctx: &mut Ctx, engine: Engine, preset: BfvPreset) -> Result<Self> {
        let base = TwoPc::setup(ctx, engine)?;
        let ole = match ctx.party() {
            me @ (0 | 1) => Some(Ole::setup(ctx, 1 - me, preset)?),
            _ => None,
        };
        Ok(Mm { base, ole, planner: Planner { me: ctx.party() } })
    }

    /// Makes COTs ahead (see [`TwoPc::prepare_cots`]).
    pub fn prepare_cots(&mut self, ctx: &mut Ctx, p0_sends: usize, p1_sends: usize) -> Result<()> {
        self.base.prepare_cots(ctx, p0_sends, p1_sends)
    }

    /// The OT session and the OLE of a computing party.
    fn parts(&mut self, ctx: &Ctx) -> Result<(&mut TwoParty, &Ole)> {
        let ole = self.ole.as_ref().ok_or_else(|| {
            MpcError::Invalid(format!("party {} owns inputs; parties 0 and 1 compute", ctx.party()))
        })?;
        Ok((self.base.session(ctx)?, ole))
    }

    fn product(&mut self, ctx: &mut Ctx, x: &MmShares, y: &MmShares, s: u32) -> Result<MmShares> {
        let (xd, yd) = (x.matrix()?, y.matrix()?);
        let (xw, yw) = (x.words(), y.words());
        let (tp, ole) = self.parts(ctx)?;
        let a = Operand { words: &xw, dims: xd, holder: x.holder };
        let b = Operand { words: &yw, dims: yd, holder: y.holder };
        let (z, holder) = matmul(tp, ole, ctx, a, b, s)?;
        x.with(z, &[xd[0], yd[1]], holder)
    }

    /// `⌊x / 2^s⌋` at the party that knows `x`.
    fn local_shift(ctx: &Ctx, x: &MmShares, h: PartyId, s: u32) -> Result<MmShares> {
        let w = if ctx.party() == h {
            x.words().iter().map(|&v| ((v as i64) >> s) as u64).collect()
        } else {
            vec![0; x.share.0.len()]
        };
        x.with(w, x.shape(), Some(h))
    }
}

impl Sharing<Z64> for Mm {
    type Share = MmShares;

    fn share_input(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<Z64>>,
        shape: &[usize],
    ) -> Result<MmShares> {
        Ok(MmShares::shared(self.base.share_input(ctx, owner, value, shape)?))
    }

    fn reveal_all(&mut self, ctx: &mut Ctx, x: &MmShares) -> Result<Tensor<Z64>> {
        self.base.reveal_all(ctx, &x.share)
    }

    fn reveal_to(&mut self, ctx: &mut Ctx, x: &MmShares, to: PartyId) -> Result<Option<Tensor<Z64>>> {
        self.base.reveal_to(ctx, &x.share, to)
    }
}

impl Linear<Z64> for Mm {
    fn add(&self, x: &MmShares, y: &MmShares) -> Result<MmShares> {
        Ok(MmShares { share: self.base.add(&x.share, &y.share)?, holder: same_holder(x, y) })
    }

    fn sub(&self, x: &MmShares, y: &MmShares) -> Result<MmShares> {
        Ok(MmShares { share: self.base.sub(&x.share, &y.share)?, holder: same_holder(x, y) })
    }

    /// The holder adds the constant to a known value; party 0 otherwise.
    fn add_public(&self, ctx: &Ctx, x: &MmShares, c: &Tensor<Z64>) -> Result<MmShares> {
        match x.holder {
            Some(h) => {
                if x.shape() != c.shape() {
                    return Err(MpcError::Invalid(format!(
                        "shapes {:?} and {:?} differ",
                        x.shape(),
                        c.shape()
                    )));
                }
                let share = if ctx.party() == h { Shares(x.share.0.add(c)?) } else { x.share.clone() };
                Ok(MmShares { share, holder: Some(h) })
            }
            None => Ok(MmShares::shared(self.base.add_public(ctx, &x.share, c)?)),
        }
    }

    fn mul_public(&self, x: &MmShares, c: &Tensor<Z64>) -> Result<MmShares> {
        Ok(MmShares { share: self.base.mul_public(&x.share, c)?, holder: x.holder })
    }
}

impl Multiply<Z64> for Mm {
    fn mul(&mut self, ctx: &mut Ctx, x: &MmShares, y: &MmShares) -> Result<MmShares> {
        Ok(MmShares::shared(self.base.mul(ctx, &x.share, &y.share)?))
    }

    fn mul_cost(&self, elements: usize, parties: usize) -> Cost {
        self.base.mul_cost(elements, parties)
    }
}

impl FixedPoint<Z64> for Mm {
    fn frac_bits(&self) -> u32 {
        FRAC_BITS
    }

    fn mul_fixed(&mut self, ctx: &mut Ctx, x: &MmShares, y: &MmShares) -> Result<MmShares> {
        if x.shape() != y.shape() {
            return Err(MpcError::Invalid(format!("shapes {:?} and {:?} differ", x.shape(), y.shape())));
        }
        if let Some(h) = same_holder(x, y) {
            let w: Vec<u64> = x
                .words()
                .iter()
                .zip(y.words())
                .map(|(&a, b)| ((i128::from(a as i64) * i128::from(b as i64)) >> FRAC_BITS) as i64 as u64)
                .collect();
            let w = if ctx.party() == h { w } else { vec![0; w.len()] };
            return x.with(w, x.shape(), Some(h));
        }
        let (xw, yw) = (x.words(), y.words());
        let (tp, ole) = self.parts(ctx)?;
        // An operand one party knows (a weight): one OLE one way.
        let z = match (x.holder, y.holder) {
            (_, Some(h)) => mul_known(tp, ole, ctx, &xw, &yw, (h, FRAC_BITS))?,
            (Some(h), None) => mul_known(tp, ole, ctx, &yw, &xw, (h, FRAC_BITS))?,
            (None, None) => mul_shift(tp, ole, ctx, &xw, &yw, FRAC_BITS)?,
        };
        x.with(z, x.shape(), None)
    }

    fn matmul_fixed(&mut self, ctx: &mut Ctx, x: &MmShares, y: &MmShares) -> Result<MmShares> {
        self.product(ctx, x, y, FRAC_BITS)
    }

    fn matmul_unscaled(&mut self, ctx: &mut Ctx, x: &MmShares, y: &MmShares) -> Result<MmShares> {
        self.product(ctx, x, y, 0)
    }

    fn div_public(&mut self, ctx: &mut Ctx, x: &MmShares, d: u64) -> Result<MmShares> {
        match x.holder {
            Some(h) if d.is_power_of_two() => Self::local_shift(ctx, x, h, d.trailing_zeros()),
            _ => Ok(MmShares::shared(self.base.div_public(ctx, &x.share, d)?)),
        }
    }
}

impl NonLinear<Z64> for Mm {
    /// The sign read in `Z_2^40` ([`COMPARE_BITS`]).
    fn relu(&mut self, ctx: &mut Ctx, x: &MmShares) -> Result<MmShares> {
        let w = x.words();
        let y = relu_in(self.base.session(ctx)?, ctx, &w, BITS, COMPARE_BITS)?;
        x.with(y, x.shape(), None)
    }

    fn max_rows(&mut self, ctx: &mut Ctx, x: &MmShares, rows: usize, k: usize) -> Result<MmShares> {
        let w = x.words();
        let y = max_rows_in(self.base.session(ctx)?, ctx, &w, (rows, k), BITS, COMPARE_BITS)?;
        x.with(y, &[rows], None)
    }

    /// Comparisons read `Z_2^40`: values must be rescaled first.
    fn comparisons_on_full_ring(&self) -> bool {
        false
    }

    /// Semi-honest: nothing is deferred.
    fn check(&mut self, _: &mut Ctx) -> Result<()> {
        Ok(())
    }
}

impl TransformerOps<Z64> for Mm {
    fn gelu(&mut self, ctx: &mut Ctx, x: &MmShares) -> Result<MmShares> {
        let w = x.words();
        let (tp, ole) = self.parts(ctx)?;
        let y = transformer::gelu(tp, ole, ctx, &w, FRAC_BITS)?;
        x.with(y, x.shape(), None)
    }

    fn softmax(
        &mut self,
        ctx: &mut Ctx,
        x: &MmShares,
        rows: usize,
        k: usize,
        mask: Option<&[bool]>,
    ) -> Result<MmShares> {
        let w = x.words();
        let (tp, ole) = self.parts(ctx)?;
        let y = transformer::softmax(tp, ole, ctx, &w, (rows, k), mask, FRAC_BITS)?;
        x.with(y, x.shape(), None)
    }

    fn layernorm(
        &mut self,
        ctx: &mut Ctx,
        x: &MmShares,
        gamma: &MmShares,
        beta: &MmShares,
        rows: usize,
        k: usize,
    ) -> Result<MmShares> {
        let (w, g, b) = (x.words(), gamma.words(), beta.words());
        let (tp, ole) = self.parts(ctx)?;
        let y = transformer::layernorm(tp, ole, ctx, &w, (&g, &b), (rows, k), FRAC_BITS)?;
        x.with(y, x.shape(), None)
    }
}

impl Layout<Z64> for Mm {
    fn shape_of(&self, x: &MmShares) -> Vec<usize> {
        x.shape().to_vec()
    }

    fn reshape(&self, x: &MmShares, shape: &[usize]) -> Result<MmShares> {
        Ok(MmShares { share: self.base.reshape(&x.share, shape)?, holder: x.holder })
    }

    fn slice(&self, x: &MmShares, axis: usize, range: std::ops::Range<usize>) -> Result<MmShares> {
        Ok(MmShares { share: self.base.slice(&x.share, axis, range)?, holder: x.holder })
    }

    fn transpose(&self, x: &MmShares) -> Result<MmShares> {
        Ok(MmShares { share: self.base.transpose(&x.share)?, holder: x.holder })
    }

    fn concat(&self, parts: &[&MmShares], axis: usize) -> Result<MmShares> {
        let shares: Vec<&Shares> = parts.iter().map(|p| &p.share).collect();
        let holder =
            parts.first().and_then(|p| p.holder).filter(|h| parts.iter().all(|p| p.holder == Some(*h)));
        Ok(MmShares { share: self.base.concat(&shares, axis)?, holder })
    }

    fn gather(&self, x: &MmShares, index: &[Option<usize>], shape: &[usize]) -> Result<MmShares> {
        Ok(MmShares { share: self.base.gather(&x.share, index, shape)?, holder: x.holder })
    }
}

impl Owners<Z64> for Mm {
    fn servers(&self) -> usize {
        2
    }

    /// A computing party's tensor stays whole at its owner (the other's share is 0: nothing
    /// is sent); an outside owner's is shared as in the toolkit.
    fn share_from_owner(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<Z64>>,
        shape: &[usize],
    ) -> Result<Option<MmShares>> {
        let me = ctx.party();
        if owner >= 2 || me >= 2 {
            return Ok(self.base.share_from_owner(ctx, owner, value, shape)?.map(MmShares::shared));
        }
        let share = if me == owner {
            let x = value.ok_or_else(|| MpcError::Invalid("the input owner must pass its value".into()))?;
            if x.shape() != shape {
                return Err(MpcError::Invalid(format!("input of shape {:?}, declared {shape:?}", x.shape())));
            }
            x.clone()
        } else {
            Tensor::new(shape.to_vec(), vec![Z64::ZERO; shape.iter().product()])?
        };
        Ok(Some(MmShares { share: Shares(share), holder: Some(owner) }))
    }

    fn reveal_to_owner(
        &mut self,
        ctx: &mut Ctx,
        x: Option<&MmShares>,
        owner: PartyId,
        shape: &[usize],
    ) -> Result<Option<Tensor<Z64>>> {
        self.base.reveal_to_owner(ctx, x.map(|x| &x.share), owner, shape)
    }
}

/// COTs of a call in the `mm` family: `(P0 sending, P1 sending)`, operands counted as shared.
pub fn cots_of_call(call: &Call) -> (usize, usize) {
    let f = FRAC_BITS;
    match call {
        // Two lifts and the way back.
        Call::MulFixed { n } => (3 * n, 0),
        Call::Matmul { dims: [m, k, p], .. } => (m * k + k * p + m * p, 0),
        Call::MatmulMany { dims } => (dims.iter().map(|[m, k, p]| m * k + k * p + m * p).sum(), 0),
        Call::Gelu { n } => transformer::gelu_cots(*n),
        Call::Softmax { rows, k, .. } => transformer::softmax_cots(*rows, *k, f),
        Call::LayerNorm { rows, k } => transformer::layernorm_cots(*rows, *k, f),
        Call::Relu { n } => transformer::comparisons(*n),
        // k − 1 comparisons per row.
        Call::MaxRows { rows, k } => transformer::comparisons(rows * k.saturating_sub(1)),
        other => veil_twopc::prep::cots_of_call(other, 64),
    }
}

/// The family's material for planning, without a session: the COTs of each call at party
/// `me` (none at an owner outside the two computing parties).
#[derive(Clone, Copy, Debug)]
pub struct Planner {
    /// The planning party.
    pub me: PartyId,
}

impl Preprocessing for Planner {
    fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        if self.me >= 2 {
            return Vec::new();
        }
        veil_twopc::prep::cot_requests(cots_of_call(call))
    }

    fn supplies(&self) -> &'static [Supply] {
        &[]
    }

    fn produce(&mut self, _: &mut Ctx, _: &Plan) -> Result<()> {
        Err(MpcError::Invalid("a planner makes no material".into()))
    }

    fn made_on_demand(&self) -> u64 {
        0
    }

    fn usage(&self) -> PrepUsage {
        PrepUsage::default()
    }
}

impl Preprocessing for Mm {
    fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        self.planner.requests(call)
    }

    fn supplies(&self) -> &'static [Supply] {
        self.base.supplies()
    }

    fn produce(&mut self, ctx: &mut Ctx, plan: &Plan) -> Result<()> {
        self.base.produce(ctx, plan)
    }

    fn made_on_demand(&self) -> u64 {
        self.base.made_on_demand()
    }

    fn usage(&self) -> PrepUsage {
        self.base.usage()
    }
}
