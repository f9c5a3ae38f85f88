//! The family behind `veil-mpc`'s capability traits, so that the model runtime can drive it
//! without knowing its internals. Malicious mode verifies every product with a triple; the
//! semi-honest mode skips verification (and needs no triples).

use veil_mpc::cost::Cost;
use veil_mpc::traits::{Layout, Linear, Multiply, Owners, Sharing};
use veil_mpc::{Ctx, PartyId, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::input::share_input;
use crate::mul::mul_semi_honest;
use crate::open::{open_all, reveal_to};
use crate::rss::Rss;
use crate::triples::TripleSource;
use crate::verified;

pub use veil_mpc::mode::{Mode, Security};

/// A `mosformer` protocol instance among the three servers.
#[derive(Debug)]
pub struct Mosformer<D> {
    pub(crate) security: Security,
    pub(crate) triples: D,
    pub(crate) gates: crate::gates::GateState,
}

impl<D> Mosformer<D> {
    /// An instance in the given mode drawing triples from `triples`.
    pub fn new(security: Security, triples: D) -> Self {
        Mosformer { security, triples, gates: crate::gates::GateState::new(security) }
    }

    /// The mode.
    pub fn security(&self) -> Security {
        self.security
    }

    /// The preprocessing source (to produce material ahead of the online phase).
    pub fn source_mut(&mut self) -> &mut D {
        &mut self.triples
    }
}

impl Mosformer<crate::offline::Offline> {
    /// Makes all of `plan`'s material (the MAC key and `⟨1⟩` included) ahead of the online
    /// phase, under the offline phase ([`veil_mpc::prep::Preprocessing::produce`]).
    pub fn prepare_all(&mut self, ctx: &mut Ctx, plan: &veil_mpc::prep::Plan) -> Result<()> {
        veil_mpc::prep::Preprocessing::produce(self, ctx, plan)
    }

    /// Material the online phase had to make because it was not prepared (gate calls plus
    /// triple elements; 0 when the plan covered the run).
    pub fn made_on_demand(&self) -> u64 {
        veil_mpc::prep::Preprocessing::made_on_demand(self)
    }
}

impl<R: Ring, D: TripleSource<R>> Sharing<R> for Mosformer<D> {
    type Share = Rss<R>;

    fn share_input(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<R>>,
        shape: &[usize],
    ) -> Result<Rss<R>> {
        share_input(ctx, owner, value, shape)
    }

    fn reveal_all(&mut self, ctx: &mut Ctx, x: &Rss<R>) -> Result<Tensor<R>> {
        open_all(ctx, x)
    }

    fn reveal_to(&mut self, ctx: &mut Ctx, x: &Rss<R>, to: PartyId) -> Result<Option<Tensor<R>>> {
        reveal_to(ctx, x, to)
    }
}

impl<R: Ring, D: TripleSource<R>> Linear<R> for Mosformer<D> {
    fn add(&self, x: &Rss<R>, y: &Rss<R>) -> Result<Rss<R>> {
        x.add(y)
    }

    fn sub(&self, x: &Rss<R>, y: &Rss<R>) -> Result<Rss<R>> {
        x.sub(y)
    }

    fn add_public(&self, ctx: &Ctx, x: &Rss<R>, c: &Tensor<R>) -> Result<Rss<R>> {
        x.add_public(ctx.party(), c)
    }

    fn mul_public(&self, x: &Rss<R>, c: &Tensor<R>) -> Result<Rss<R>> {
        x.mul_public(c)
    }
}

impl<R: Ring, D: TripleSource<R>> Multiply<R> for Mosformer<D> {
    fn mul(&mut self, ctx: &mut Ctx, x: &Rss<R>, y: &Rss<R>) -> Result<Rss<R>> {
        match self.security {
            Security::Malicious => verified::mul(ctx, &mut self.triples, x, y),
            Security::SemiHonest => mul_semi_honest(ctx, x, y),
        }
    }

    /// Malicious: reshare `n·B`, opening of ρ, σ `2n·B + 32`, zero check 32; 4 messages,
    /// 2 rounds. Semi-honest: the reshare alone, 1 message, 1 round. (Three parties.)
    fn mul_cost(&self, elements: usize, _parties: usize) -> Cost {
        let nb = (elements * R::BYTES) as u64;
        match self.security {
            Security::Malicious => Cost { bytes_sent: 3 * nb + 64, messages_sent: 4, rounds: 2 },
            Security::SemiHonest => Cost { bytes_sent: nb, messages_sent: 1, rounds: 1 },
        }
    }
}

impl<R: Ring, D: TripleSource<R>> Layout<R> for Mosformer<D> {
    fn shape_of(&self, x: &Rss<R>) -> Vec<usize> {
        x.shape().to_vec()
    }

    fn reshape(&self, x: &Rss<R>, shape: &[usize]) -> Result<Rss<R>> {
        x.reshape(shape)
    }

    fn slice(&self, x: &Rss<R>, axis: usize, range: std::ops::Range<usize>) -> Result<Rss<R>> {
        x.slice(axis, range)
    }

    fn transpose(&self, x: &Rss<R>) -> Result<Rss<R>> {
        x.transpose()
    }

    fn concat(&self, parts: &[&Rss<R>], axis: usize) -> Result<Rss<R>> {
        Rss::concat_axis(parts, axis)
    }

    fn gather(&self, x: &Rss<R>, index: &[Option<usize>], shape: &[usize]) -> Result<Rss<R>> {
        x.gather(index, shape)
    }
}

/// Owners are parties `3, 4, ...` (see [`crate::owners`]).
impl<R: Ring, D: TripleSource<R>> Owners<R> for Mosformer<D> {
    fn servers(&self) -> usize {
        3
    }

    fn share_from_owner(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<R>>,
        shape: &[usize],
    ) -> Result<Option<Rss<R>>> {
        crate::owners::share_from_owner(ctx, owner, value, shape)
    }

    fn reveal_to_owner(
        &mut self,
        ctx: &mut Ctx,
        x: Option<&Rss<R>>,
        owner: PartyId,
        shape: &[usize],
    ) -> Result<Option<Tensor<R>>> {
        crate::owners::reveal_to_owner(ctx, x, owner, shape)
    }
}
