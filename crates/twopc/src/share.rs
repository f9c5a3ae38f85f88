//! Making and opening 2-party shares: additive over Z_2^ℓ, Boolean by XOR.

use veil_mpc::{Ctx, MpcError, Result};

use crate::TwoParty;
use crate::ring::{check_bits, mask};
use crate::wire::{recv_bits, recv_words, send_words};

/// Shares the owner's values (`Some` at the owner, `None` and the count at the other): the
/// owner sends `x − r` and keeps `r`.
pub fn share(tp: &TwoParty, ctx: &mut Ctx, values: Option<&[u64]>, n: usize, bits: u32) -> Result<Vec<u64>> {
    check_bits(bits)?;
    let m = mask(bits);
    match values {
        Some(v) => {
            if v.len() != n {
                return Err(MpcError::Invalid(format!("{} values where {n} were announced", v.len())));
            }
            let r: Vec<u64> = (0..n).map(|_| ctx.rng().next_u64() & m).collect();
            let other: Vec<u64> = v.iter().zip(&r).map(|(&x, &r)| x.wrapping_sub(r) & m).collect();
            send_words(ctx, tp.peer(), &other, bits)?;
            Ok(r)
        }
        None => recv_words(ctx, tp.peer(), n, bits, "input shares"),
    }
}

/// Opens arithmetic shares to both parties.
pub fn open(tp: &TwoParty, ctx: &mut Ctx, x: &[u64], bits: u32) -> Result<Vec<u64>> {
    check_bits(bits)?;
    send_words(ctx, tp.peer(), x, bits)?;
    let theirs = recv_words(ctx, tp.peer(), x.len(), bits, "opening")?;
    Ok(x.iter().zip(theirs).map(|(&a, b)| a.wrapping_add(b) & mask(bits)).collect())
}

/// Opens Boolean shares to both parties.
pub fn open_bits(tp: &TwoParty, ctx: &mut Ctx, x: &[bool]) -> Result<Vec<bool>> {
    ctx.net().send(tp.peer(), veil_ot::block::pack_bits(x))?;
    let theirs = recv_bits(ctx, tp.peer(), x.len(), "opening bits")?;
    Ok(x.iter().zip(theirs).map(|(a, b)| a ^ b).collect())
}
