//! Receiving the toolkit's messages, length-checked, with errors naming the step.

use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ot::block::unpack_bits;
use veil_ot::pack;

fn malformed(from: PartyId, step: &str, what: String) -> MpcError {
    MpcError::Malformed { from, what: format!("{step}: {what}") }
}

/// Exactly `n` packed bits.
pub(crate) fn recv_bits(ctx: &mut Ctx, from: PartyId, n: usize, step: &str) -> Result<Vec<bool>> {
    let bytes = ctx.net().recv(from)?;
    unpack_bits(&bytes, n)
        .ok_or_else(|| malformed(from, step, format!("expected {n} packed bits, got {} bytes", bytes.len())))
}

/// Sends `values` packed to `bits` bits each.
pub(crate) fn send_words(ctx: &mut Ctx, to: PartyId, values: &[u64], bits: u32) -> Result<()> {
    let wide: Vec<u128> = values.iter().map(|&v| u128::from(v)).collect();
    Ok(ctx.net().send(to, pack::pack(&wide, bits))?)
}

/// Exactly `n` values of `bits` bits each.
pub(crate) fn recv_words(ctx: &mut Ctx, from: PartyId, n: usize, bits: u32, step: &str) -> Result<Vec<u64>> {
    let bytes = ctx.net().recv(from)?;
    let wide = pack::unpack(&bytes, bits, n).ok_or_else(|| {
        malformed(from, step, format!("expected {n} packed {bits}-bit values, got {} bytes", bytes.len()))
    })?;
    Ok(wide.into_iter().map(|v| v as u64).collect())
}
