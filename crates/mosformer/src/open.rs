//! Checked reconstruction (paper §3: F_recon to one party, F_open to all).
//!
//! Every component of a replicated sharing is held by two parties, so the receiver of a
//! missing component gets it from both holders and compares: with at most one corrupted
//! party, a wrong value shows up as a mismatch and the run aborts. One holder sends the
//! component in full, the other a hash of it (BLAKE3, 256 bits, bound to the shape), which
//! keeps the redundancy at 32 bytes per opening instead of a second full copy.
//!
//! Costs per opening of `n` elements of `B` bytes, one round:
//! - [`reveal_to`] party `j`: `P_{j-1}` sends `n·B` bytes, `P_{j+1}` sends 32, `P_j` nothing;
//! - [`open_all`]: every party sends `n·B + 32` bytes in 2 messages.

use veil_crypto::{Digest, Hasher};
use veil_mpc::wire::pack_words;
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::{Ring, Z2k, encode_slice};
use veil_tensor::Tensor;

use crate::rss::{Rss, next, prev};

/// Hash of a share component, as sent for the redundant copy.
pub fn component_digest<R: Ring>(t: &Tensor<R>) -> Digest {
    let mut h = Hasher::new("mosformer/open/copy");
    h.update_u64(t.shape().len() as u64);
    for &d in t.shape() {
        h.update_u64(d as u64);
    }
    h.update(&encode_slice(t.data()));
    h.finalize()
}

/// Receives a 32-byte digest from `from`; any other length is [`MpcError::Malformed`].
pub(crate) fn recv_digest(ctx: &mut Ctx, from: PartyId) -> Result<Digest> {
    let bytes = ctx.recv_at_most(from, 32)?;
    let arr: [u8; 32] = bytes.as_slice().try_into().map_err(|_| MpcError::Malformed {
        from,
        what: format!("expected a 32-byte digest, got {} bytes", bytes.len()),
    })?;
    Ok(Digest(arr))
}

/// Receives the missing component in full from `full_from` and its digest from `hash_from`,
/// aborts if they disagree, and returns the secret `missing + first + second`.
fn complete<R: Ring>(
    ctx: &mut Ctx,
    x: &Rss<R>,
    full_from: PartyId,
    hash_from: PartyId,
    what: &str,
) -> Result<Tensor<R>> {
    let missing = Tensor::new(x.shape().to_vec(), ctx.recv_ring::<R>(full_from, x.len())?)?;
    check_copy(ctx, x, missing, hash_from, what)
}

/// Compares the missing component with the digest sent by `hash_from`, then reconstructs.
fn check_copy<R: Ring>(
    ctx: &mut Ctx,
    x: &Rss<R>,
    missing: Tensor<R>,
    hash_from: PartyId,
    what: &str,
) -> Result<Tensor<R>> {
    let digest = recv_digest(ctx, hash_from)?;
    if !component_digest(&missing).ct_eq(&digest) {
        // One of the two senders lied; the receiver cannot tell which.
        return Err(MpcError::abort(format!("{what}: the two copies of a share component differ"), None));
    }
    Ok(missing.add(&x.first)?.add(&x.second)?)
}

/// Reveals `x` to party `to` only; the others get `None`.
pub fn reveal_to<R: Ring>(ctx: &mut Ctx, x: &Rss<R>, to: PartyId) -> Result<Option<Tensor<R>>> {
    if to >= 3 {
        return Err(MpcError::Invalid(format!("no party {to} among 3")));
    }
    let b = ctx.party();
    if b == prev(to) {
        // P_{j-1}'s first component is a_{j-1}, the one P_j lacks.
        ctx.send_ring(to, x.first.data())?;
        return Ok(None);
    }
    if b == next(to) {
        // P_{j+1}'s second component is a_{j+2} = a_{j-1}.
        ctx.net().send(to, component_digest(&x.second).0.to_vec())?;
        return Ok(None);
    }
    complete(ctx, x, prev(to), next(to), "reveal").map(Some)
}

/// Opens `x` to every party.
pub fn open_all<R: Ring>(ctx: &mut Ctx, x: &Rss<R>) -> Result<Tensor<R>> {
    open_all_send(ctx, x)?;
    open_all_recv(ctx, x)
}

/// First half of [`open_all`]: send our components (lets other sends share the round).
pub fn open_all_send<R: Ring>(ctx: &mut Ctx, x: &Rss<R>) -> Result<()> {
    let b = ctx.party();
    // P_{b+1} lacks a_b (our first); P_{b-1} lacks a_{b+1} (our second).
    ctx.send_ring(next(b), x.first.data())?;
    ctx.net().send(prev(b), component_digest(&x.second).0.to_vec())?;
    Ok(())
}

/// Second half of [`open_all`]: receive, check and reconstruct.
pub fn open_all_recv<R: Ring>(ctx: &mut Ctx, x: &Rss<R>) -> Result<Tensor<R>> {
    let b = ctx.party();
    complete(ctx, x, prev(b), next(b), "open")
}

/// [`reveal_batch`] for values whose components are all below `2^bits` (e.g. reduced mod
/// 2^{ℓ_t} for a lookup): the full component travels packed in `bits` bits per element; the
/// digest is unchanged. A component at or above `2^bits` is an error at the sender.
pub fn reveal_batch_packed<R: Z2k>(
    ctx: &mut Ctx,
    items: &[(&Rss<R>, PartyId)],
    bits: u32,
) -> Result<Vec<Option<Tensor<R>>>> {
    let b = ctx.party();
    let limit = if bits >= 64 { u128::MAX } else { 1u128 << bits };
    for &(x, to) in items {
        if to >= 3 {
            return Err(MpcError::Invalid(format!("no party {to} among 3")));
        }
        if b == prev(to) {
            if x.first.data().iter().any(|v| v.to_u128() >= limit) {
                return Err(MpcError::Invalid(format!("a component does not fit {bits} bits")));
            }
            let words: Vec<u64> = x.first.data().iter().map(|v| v.to_u128() as u64).collect();
            ctx.net().send(to, pack_words(&words, bits))?;
        } else if b == next(to) {
            ctx.net().send(to, component_digest(&x.second).0.to_vec())?;
        }
    }
    let mut out = Vec::with_capacity(items.len());
    for &(x, to) in items {
        if b != to {
            out.push(None);
            continue;
        }
        let words = ctx.recv_words(prev(to), bits, x.len())?;
        let missing = Tensor::new(
            x.shape().to_vec(),
            words.into_iter().map(|w| R::from_u128(u128::from(w))).collect(),
        )?;
        out.push(Some(check_copy(ctx, x, missing, next(to), "reveal")?));
    }
    Ok(out)
}

/// Several reveals in one round: every party first sends what each reveal needs from it, then
/// completes the reveals addressed to it. Returns, in order, `Some(value)` for the reveals to
/// this party and `None` for the others. Cost: the sum of the single reveals; 1 round.
pub fn reveal_batch<R: Ring>(ctx: &mut Ctx, items: &[(&Rss<R>, PartyId)]) -> Result<Vec<Option<Tensor<R>>>> {
    let b = ctx.party();
    for &(x, to) in items {
        if to >= 3 {
            return Err(MpcError::Invalid(format!("no party {to} among 3")));
        }
        if b == prev(to) {
            ctx.send_ring(to, x.first.data())?;
        } else if b == next(to) {
            ctx.net().send(to, component_digest(&x.second).0.to_vec())?;
        }
    }
    items
        .iter()
        .map(
            |&(x, to)| {
                if b == to { complete(ctx, x, prev(to), next(to), "reveal").map(Some) } else { Ok(None) }
            },
        )
        .collect()
}
/// Aborts unless `ζ = 0`: `P_b` sends the digest of its first component to `P_{b+1}`, which
/// compares it with the digest of minus the sum of its own two (the zero check of a verified
/// product, [`crate::verified`], and of a triple's sacrifice, [`crate::triples`]).
pub fn zero_check<R: Ring>(ctx: &mut Ctx, zeta: &Rss<R>, what: &str) -> Result<()> {
    let b = ctx.party();
    ctx.net().send(next(b), component_digest(&zeta.first).0.to_vec())?;
    let got = ctx.recv_at_most(prev(b), 32)?;
    let expected = component_digest(&zeta.first.add(&zeta.second)?.neg());
    let got: [u8; 32] = got.as_slice().try_into().map_err(|_| MpcError::Malformed {
        from: prev(b),
        what: format!("zero check: expected a 32-byte digest, got {} bytes", got.len()),
    })?;
    if !expected.ct_eq(&Digest(got)) {
        return Err(MpcError::abort(format!("{what}: product verification (zero check)"), None));
    }
    Ok(())
}
