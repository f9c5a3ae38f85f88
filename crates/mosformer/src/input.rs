//! Input sharing by one of the servers, with a consistency check.
//!
//! Owner `P_o` shares `x`: components `a_o` and `a_{o+1}` are expanded from the seeds it
//! shares with `P_{o-1}` and `P_{o+1}` (no communication), and it sends the third,
//! `a_{o-1} = x - a_o - a_{o+1}`, to both of its holders, `P_{o-1}` and `P_{o+1}`. A corrupted
//! owner could send them different values, making the sharing inconsistent (later openings
//! would then fail in ways that depend on the data); so the two receivers exchange a hash of
//! what they got and abort on a mismatch.
//!
//! Cost: the owner sends `2·n·B` bytes; each receiver sends 32 bytes; 2 rounds.

use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::open::component_digest;
use crate::rss::{Rss, next, prev};

/// `⟨x⟩` for the owner's `x` (the owner passes `Some(x)`, the others `None` and the shape).
pub fn share_input<R: Ring>(
    ctx: &mut Ctx,
    owner: PartyId,
    value: Option<&Tensor<R>>,
    shape: &[usize],
) -> Result<Rss<R>> {
    crate::prss::check_server(ctx)?;
    if owner >= 3 {
        return Err(MpcError::Invalid(format!(
            "party {owner} is not a server; use `owners::share_from_owner`"
        )));
    }
    let b = ctx.party();
    let n: usize = shape.iter().product();
    let expand = |ctx: &mut Ctx, peer: PartyId| -> Result<Tensor<R>> {
        let mut g = ctx.pair_prg(peer, "mosformer/input")?;
        Ok(Tensor::new(shape.to_vec(), R::random_vec(&mut g, n))?)
    };
    if b == owner {
        let x = value.ok_or_else(|| MpcError::Invalid("the input owner must pass its value".into()))?;
        if x.shape() != shape {
            return Err(MpcError::Invalid(format!("input of shape {:?}, declared {shape:?}", x.shape())));
        }
        let a_o = expand(ctx, prev(b))?;
        let a_next = expand(ctx, next(b))?;
        let third = x.sub(&a_o)?.sub(&a_next)?;
        ctx.send_ring(prev(b), third.data())?;
        ctx.send_ring(next(b), third.data())?;
        return Rss::new(a_o, a_next);
    }
    let third = Tensor::new(shape.to_vec(), ctx.recv_ring::<R>(owner, n)?)?;
    let other = if b == prev(owner) { next(owner) } else { prev(owner) };
    ctx.net().send(other, component_digest(&third).0.to_vec())?;
    let theirs = ctx.recv_at_most(other, 32)?;
    if theirs.as_slice() != component_digest(&third).0.as_slice() {
        return Err(MpcError::abort(
            "input: the owner sent different shares to its two receivers",
            Some(owner),
        ));
    }
    if b == prev(owner) {
        // P_{o-1} holds (a_{o-1}, a_o).
        let a_o = expand(ctx, owner)?;
        Rss::new(third, a_o)
    } else {
        // P_{o+1} holds (a_{o+1}, a_{o+2} = a_{o-1}).
        let a_next = expand(ctx, owner)?;
        Rss::new(a_next, third)
    }
}
