//! Receiving the toolkit's messages, length-checked, with errors naming the step.

use veil_mpc::wire::{pack_words, packed_len, unpack_bits, unpack_words};
use veil_mpc::{Ctx, PartyId, Result};

/// Exactly `n` packed bits.
pub(crate) fn recv_bits(ctx: &mut Ctx, from: PartyId, n: usize, step: &str) -> Result<Vec<bool>> {
    let bytes = ctx.recv_for(from, packed_len(1, n), step)?;
    Ok(unpack_bits(from, &bytes, 1, n).map_err(|e| e.in_step(step))?.into_iter().map(|b| b == 1).collect())
}

/// Sends `values` packed to `bits` bits each.
pub(crate) fn send_words(ctx: &mut Ctx, to: PartyId, values: &[u64], bits: u32) -> Result<()> {
    Ok(ctx.net().send(to, pack_words(values, bits))?)
}

/// Exactly `n` values of `bits` bits each.
pub(crate) fn recv_words(ctx: &mut Ctx, from: PartyId, n: usize, bits: u32, step: &str) -> Result<Vec<u64>> {
    let bytes = ctx.recv_for(from, packed_len(bits, n), step)?;
    unpack_words(from, &bytes, bits, n).map_err(|e| e.in_step(step))
}
