//! Input owners outside the three servers: a data owner shares its input and alone receives
//! the output; a model owner shares the weights. Owners are parties `3, 4, ...` of the session
//! (linked to the servers by the same mutually authenticated transport); servers are 0, 1, 2.
//!
//! **Sharing** ([`share_from_owner`]): the owner draws two fresh 128-bit seeds `k_0, k_1`,
//! expands `a_0 = G(k_0)`, `a_1 = G(k_1)` (AES-CTR), sets `a_2 = x - a_0 - a_1` and gives each
//! server its pair `(a_b, a_{b+1})`, the random components as their seeds: `P_0` gets
//! `(k_0, k_1)`, `P_1` gets `(k_1, a_2)`, `P_2` gets `(a_2, k_0)`. Every component reaches both
//! of its holders, and each server sees only the seeds of components it holds. A malicious
//! owner could send the two holders different copies (of a seed or of `a_2`), so each server
//! sends the next one a hash of its second component, which must equal the hash of the next
//! server's first component; a mismatch aborts (blaming the owner). Cost: the owner sends
//! `n·B + 16` bytes to `P_1` and `P_2` and 32 bytes to `P_0` (sending every pair in full took
//! `2·n·B` to each); each server 32 bytes to the next; 2 rounds.
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

/// Bytes of a component's seed.
const SEED: usize = 16;

/// The random component a seed stands for: `G(k)` in the shape of the input.
fn expand<R: Ring>(k: &[u8; SEED], shape: &[usize]) -> Result<Tensor<R>> {
    let mut g = veil_crypto::Prg::new(&veil_crypto::Seed(*k));
    Ok(Tensor::new(shape.to_vec(), R::random_vec(&mut g, shape.iter().product()))?)
}

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
        let mut seeds = [[0u8; SEED]; 2];
        for k in &mut seeds {
            ctx.rng().fill_bytes(k);
        }
        let a2 = x.sub(&expand::<R>(&seeds[0], shape)?)?.sub(&expand::<R>(&seeds[1], shape)?)?;
        ctx.net().send(0, seeds.concat())?;
        ctx.net().send(1, seeds[1].to_vec())?;
        ctx.send_ring(1, a2.data())?;
        ctx.net().send(2, seeds[0].to_vec())?;
        ctx.send_ring(2, a2.data())?;
        return Ok(None);
    }
    if me >= 3 {
        return Ok(None);
    }
    let seeds = ctx.net().recv(owner)?;
    let want = if me == 0 { 2 * SEED } else { SEED };
    if seeds.len() != want {
        return Err(MpcError::abort(
            format!("owner input: {} bytes of seeds, expected {want}", seeds.len()),
            Some(owner),
        ));
    }
    let seed = |i: usize| -> [u8; SEED] {
        let mut k = [0u8; SEED];
        k.copy_from_slice(&seeds[i * SEED..(i + 1) * SEED]);
        k
    };
    let share = match me {
        0 => Rss::new(expand(&seed(0), shape)?, expand(&seed(1), shape)?)?,
        1 => Rss::new(expand(&seed(0), shape)?, Tensor::new(shape.to_vec(), ctx.recv_ring::<R>(owner, n)?)?)?,
        _ => Rss::new(Tensor::new(shape.to_vec(), ctx.recv_ring::<R>(owner, n)?)?, expand(&seed(0), shape)?)?,
    };
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
