//! Input owners outside the three servers: a data owner shares its input and alone receives
//! the output; a model owner shares the weights. Owners are parties `3, 4, ...` of the session
//! (linked to the servers by the same mutually authenticated transport); servers are 0, 1, 2.
//!
//! **Sharing** ([`share_from_owner`]): the owner draws `a_0, a_1` at random, sets
//! `a_2 = x - a_0 - a_1` and sends `P_b` its pair `(a_b, a_{b+1})`: every component reaches both
//! of its holders. A malicious owner could send the two holders different copies, so each
//! server sends the next one a hash of its second component, which must equal the hash of the
//! next server's first component; a mismatch aborts (blaming the owner). Cost: the owner sends
//! `2·n·B` bytes to each server; each server 32 bytes to the next; 2 rounds.
//!
//! **Output** ([`reveal_to_owner`]): `P_b` sends the owner its first component `a_b` in full and
//! a hash of its second `a_{b+1}`; the owner checks every component against the hash sent by
//! its other holder, so one corrupted server cannot change the output without an abort. Cost:
//! each server `n·B + 32` bytes; 1 round. Nothing is revealed to any server.

use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::open::{component_digest, recv_digest};
use crate::prss::check_server;
use crate::rss::{Rss, next, prev};

fn check_owner(ctx: &Ctx, owner: PartyId) -> Result<()> {
    if owner < 3 || owner >= ctx.parties() {
        return Err(MpcError::Invalid(format!(
            "party {owner} is not an input owner (owners are 3..{} in this session)",
            ctx.parties()
        )));
    }
    Ok(())
}

/// Shares the owner's tensor among the servers. The owner passes `Some(x)` and gets `None`;
/// servers pass `None` and the public shape, and get their share. Other owners do nothing.
pub fn share_from_owner<R: Ring>(
    ctx: &mut Ctx,
    owner: PartyId,
    value: Option<&Tensor<R>>,
    shape: &[usize],
) -> Result<Option<Rss<R>>> {
    check_owner(ctx, owner)?;
    let me = ctx.party();
    let n: usize = shape.iter().product();
    if me == owner {
        let x = value.ok_or_else(|| MpcError::Invalid("the input owner must pass its value".into()))?;
        if x.shape() != shape {
            return Err(MpcError::Invalid(format!("input of shape {:?}, declared {shape:?}", x.shape())));
        }
        let a0 = Tensor::new(shape.to_vec(), R::random_vec(ctx.rng(), n))?;
        let a1 = Tensor::new(shape.to_vec(), R::random_vec(ctx.rng(), n))?;
        let a2 = x.sub(&a0)?.sub(&a1)?;
        let comps = [a0, a1, a2];
        for b in 0..3 {
            let mut msg = comps[b].data().to_vec();
            msg.extend_from_slice(comps[next(b)].data());
            ctx.send_ring(b, &msg)?;
        }
        return Ok(None);
    }
    if me >= 3 {
        return Ok(None);
    }
    let both: Vec<R> = ctx.recv_ring(owner, 2 * n)?;
    let share = Rss::new(
        Tensor::new(shape.to_vec(), both[..n].to_vec())?,
        Tensor::new(shape.to_vec(), both[n..].to_vec())?,
    )?;
    ctx.net().send(next(me), component_digest(&share.second).0.to_vec())?;
    let theirs = recv_digest(ctx, prev(me))?;
    if !component_digest(&share.first).ct_eq(&theirs) {
        return Err(MpcError::abort("owner input: the owner sent inconsistent shares", Some(owner)));
    }
    Ok(Some(share))
}

/// Reveals `x` to the owner `owner` only: servers pass their share and get `None`; the owner
/// passes `None` and the shape, and gets the value.
pub fn reveal_to_owner<R: Ring>(
    ctx: &mut Ctx,
    x: Option<&Rss<R>>,
    owner: PartyId,
    shape: &[usize],
) -> Result<Option<Tensor<R>>> {
    check_owner(ctx, owner)?;
    let me = ctx.party();
    if me < 3 {
        check_server(ctx)?;
        let x = x.ok_or_else(|| MpcError::Invalid("a server must pass its share".into()))?;
        ctx.send_ring(owner, x.first.data())?;
        ctx.net().send(owner, component_digest(&x.second).0.to_vec())?;
        return Ok(None);
    }
    if me != owner {
        return Ok(None);
    }
    let n: usize = shape.iter().product();
    let mut comps = Vec::with_capacity(3);
    let mut digests = Vec::with_capacity(3);
    for b in 0..3 {
        comps.push(Tensor::new(shape.to_vec(), ctx.recv_ring::<R>(b, n)?)?);
        digests.push(recv_digest(ctx, b)?);
    }
    // Component a_b came in full from P_b; its other holder P_{b-1} sent its digest.
    for b in 0..3 {
        if !component_digest(&comps[b]).ct_eq(&digests[prev(b)]) {
            return Err(MpcError::abort("output: the servers' copies of a share component differ", None));
        }
    }
    Ok(Some(comps[0].add(&comps[1])?.add(&comps[2])?))
}
