//! Reshare: a 3-of-3 additive sharing `[[z]]` becomes a replicated sharing `⟨z⟩`.
//!
//! `P_b` masks its term with a zero-share, `z'_b = z_b + ζ_b`, sends `z'_b` to `P_{b-1}` and
//! receives `z'_{b+1}` from `P_{b+1}`; it then holds `(z'_b, z'_{b+1})`. Cost per party: one
//! message of ℓ bits per element, one round. (The paper's text says "to `P_{b+1}`", which does
//! not fit the share layout; sending to the previous party does.)
//!
//! Semi-honest by itself: a malicious party can add an error to `z'_b`. Malicious
//! multiplication catches that with the triple check that follows (see [`crate::mul`]).

use veil_mpc::{Ctx, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::prss::zero_share;
use crate::rss::{Rss, next, prev};

/// Turns this party's additive term `z_b` into its replicated share of `z = Σ z_b`.
pub fn reshare<R: Ring>(ctx: &mut Ctx, z: Tensor<R>) -> Result<Rss<R>> {
    let pending = reshare_send(ctx, z)?;
    reshare_recv(ctx, pending)
}

/// A reshare whose message is sent and whose answer is not yet received.
#[derive(Debug)]
pub struct PendingReshare<R> {
    masked: Tensor<R>,
}

/// First half of [`reshare`]: mask and send. Other messages may be sent before the second
/// half, so that independent steps share a round.
pub fn reshare_send<R: Ring>(ctx: &mut Ctx, z: Tensor<R>) -> Result<PendingReshare<R>> {
    let b = ctx.party();
    let zeta = zero_share::<R>(ctx, z.len())?;
    let shape = z.shape().to_vec();
    let masked: Vec<R> = z.into_data().into_iter().zip(zeta).map(|(z, m)| z + m).collect();
    ctx.send_ring(prev(b), &masked)?;
    Ok(PendingReshare { masked: Tensor::new(shape, masked)? })
}

/// Second half of [`reshare`]: receive the next party's masked term.
pub fn reshare_recv<R: Ring>(ctx: &mut Ctx, pending: PendingReshare<R>) -> Result<Rss<R>> {
    let b = ctx.party();
    let from_next: Vec<R> = ctx.recv_ring(next(b), pending.masked.len())?;
    let shape = pending.masked.shape().to_vec();
    Rss::new(pending.masked, Tensor::new(shape, from_next)?)
}
