//! The model-facing capabilities of additive shares: local layout changes (every one acts on
//! each share alone, since the sharing is linear) and input owners, either outside the
//! computing parties or among them.
//!
//! **An owner outside** (party `≥ servers`) shares `x` at the cost of one message: computing
//! party `j ≥ 1` expands the seed it shares with the owner into its share, and the owner sends
//! party 0 the rest, `x − Σ_{j≥1} x_j`. To reveal, every computing party sends the owner its
//! share. **An owner inside** shares as any computing party does ([`Sharing::share_input`],
//! no message) and, to receive, collects the other computing parties' shares.

use veil_mpc::traits::{Layout, Owners, Sharing};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::dealer::TripleSource;
use crate::protocol::{Additive, Share};

const OWNER_INPUT: &str = "veil/additive/owner-input";

impl<R: Ring, D: TripleSource<R>> Layout<R> for Additive<D> {
    fn shape_of(&self, x: &Share<R>) -> Vec<usize> {
        x.0.shape().to_vec()
    }

    fn reshape(&self, x: &Share<R>, shape: &[usize]) -> Result<Share<R>> {
        Ok(Share(x.0.clone().reshape(shape)?))
    }

    fn slice(&self, x: &Share<R>, axis: usize, range: std::ops::Range<usize>) -> Result<Share<R>> {
        Ok(Share(x.0.slice(axis, range)?))
    }

    fn transpose(&self, x: &Share<R>) -> Result<Share<R>> {
        Ok(Share(x.0.transpose()?))
    }

    fn concat(&self, parts: &[&Share<R>], axis: usize) -> Result<Share<R>> {
        let tensors: Vec<&Tensor<R>> = parts.iter().map(|p| &p.0).collect();
        Ok(Share(Tensor::concat(&tensors, axis)?))
    }

    fn gather(&self, x: &Share<R>, index: &[Option<usize>], shape: &[usize]) -> Result<Share<R>> {
        Ok(Share(x.0.gather(index, shape, R::ZERO)?))
    }
}

impl<R: Ring, D: TripleSource<R>> Owners<R> for Additive<D> {
    /// The computing parties set by [`Additive::with_servers`]; without it, every party of
    /// the session computes (`usize::MAX` stands for "all").
    fn servers(&self) -> usize {
        self.servers_set().unwrap_or(usize::MAX)
    }

    fn share_from_owner(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<R>>,
        shape: &[usize],
    ) -> Result<Option<Share<R>>> {
        let n = self.computing(ctx);
        let me = ctx.party();
        if owner >= ctx.parties() {
            return Err(MpcError::Invalid(format!("no party {owner}")));
        }
        if owner < n {
            return if me < n { self.share_input(ctx, owner, value, shape).map(Some) } else { Ok(None) };
        }
        let len: usize = shape.iter().product();
        if me == owner {
            let x = value.ok_or_else(|| MpcError::Invalid("the input owner must pass its value".into()))?;
            if x.shape() != shape {
                return Err(MpcError::Invalid(format!("input of shape {:?}, declared {shape:?}", x.shape())));
            }
            let mut rest = x.data().to_vec();
            for j in 1..n {
                let mut g = ctx.pair_prg(j, OWNER_INPUT)?;
                rest.iter_mut().zip(R::random_vec(&mut g, len)).for_each(|(r, s)| *r -= s);
            }
            ctx.send_ring(0, &rest)?;
            return Ok(None);
        }
        if me >= n {
            return Ok(None);
        }
        let data = if me == 0 {
            ctx.recv_ring(owner, len)?
        } else {
            let mut g = ctx.pair_prg(owner, OWNER_INPUT)?;
            R::random_vec(&mut g, len)
        };
        Ok(Some(Share(Tensor::new(shape.to_vec(), data)?)))
    }

    fn reveal_to_owner(
        &mut self,
        ctx: &mut Ctx,
        x: Option<&Share<R>>,
        owner: PartyId,
        shape: &[usize],
    ) -> Result<Option<Tensor<R>>> {
        let n = self.computing(ctx);
        let me = ctx.party();
        let len: usize = shape.iter().product();
        if owner >= ctx.parties() {
            return Err(MpcError::Invalid(format!("no party {owner}")));
        }
        if me < n && me != owner {
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
            Some(mine) if me < n => mine.0.data().to_vec(),
            _ => vec![R::ZERO; len],
        };
        if sum.len() != len {
            return Err(MpcError::Invalid(format!("a share of {} values, declared {len}", sum.len())));
        }
        for p in (0..n).filter(|&p| p != me) {
            let theirs: Vec<R> = ctx.recv_ring(p, len)?;
            sum.iter_mut().zip(theirs).for_each(|(s, t)| *s += t);
        }
        Ok(Some(Tensor::new(shape.to_vec(), sum)?))
    }
}
