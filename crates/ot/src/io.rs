//! Sending and receiving OT messages, with the length checks every receive makes and errors
//! that name the protocol step.

use veil_mpc::{Ctx, MpcError, PartyId, Result};

use crate::block::{self, Block};

/// A message of the wrong size or form, naming the step that received it.
pub(crate) fn malformed(from: PartyId, step: &str, what: impl std::fmt::Display) -> MpcError {
    MpcError::Malformed { from, what: format!("{step}: {what}") }
}

/// Receives exactly `len` bytes from `from` for `step`.
pub(crate) fn recv_exact(ctx: &mut Ctx, from: PartyId, len: usize, step: &str) -> Result<Vec<u8>> {
    let bytes = ctx.recv_for(from, len, step)?;
    if bytes.len() != len {
        return Err(malformed(from, step, format!("expected {len} bytes, got {}", bytes.len())));
    }
    Ok(bytes)
}

/// Sends blocks.
pub(crate) fn send_blocks(ctx: &mut Ctx, to: PartyId, blocks: &[Block]) -> Result<()> {
    Ok(ctx.net().send(to, block::to_bytes(blocks))?)
}

/// Receives exactly `n` blocks for `step`.
pub(crate) fn recv_blocks(ctx: &mut Ctx, from: PartyId, n: usize, step: &str) -> Result<Vec<Block>> {
    let bytes = recv_exact(ctx, from, n * 16, step)?;
    block::from_bytes(&bytes).ok_or_else(|| malformed(from, step, "not whole blocks"))
}

/// Sends bits, packed.
pub(crate) fn send_bits(ctx: &mut Ctx, to: PartyId, bits: &[bool]) -> Result<()> {
    Ok(ctx.net().send(to, block::pack_bits(bits))?)
}

/// Receives exactly `n` packed bits for `step`.
pub(crate) fn recv_bits(ctx: &mut Ctx, from: PartyId, n: usize, step: &str) -> Result<Vec<bool>> {
    let bytes = recv_exact(ctx, from, n.div_ceil(8), step)?;
    block::unpack_bits(&bytes, n).ok_or_else(|| malformed(from, step, "padding bits set"))
}

/// The one peer of a two-party protocol run by a context of exactly two parties, or `peer`
/// checked to be another party of the session.
pub(crate) fn check_peer(ctx: &Ctx, peer: PartyId) -> Result<()> {
    if peer == ctx.party() || peer >= ctx.parties() {
        return Err(MpcError::Invalid(format!(
            "party {} cannot run OT with party {peer} in a session of {} parties",
            ctx.party(),
            ctx.parties()
        )));
    }
    Ok(())
}
