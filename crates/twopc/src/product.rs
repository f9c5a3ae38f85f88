//! Products of additive shares over Z_2^ℓ by oblivious transfer (Gilboa, "Two Party RSA Key
//! Generation", the bit-decomposition product; Z_2^ℓ form as in MASCOT and SecureML).
//!
//! `x·y = x_0·y_0 + x_1·y_1 + x_0·y_1 + x_1·y_0`: the first two terms are local; each cross
//! term `x_R·y_S` is ℓ Δ-OTs, the receiver choosing with the bits `x_R[i]` and the sender
//! correlating with `y_S mod 2^{ℓ−i}` over `Z_2^{ℓ−i}` (the higher bits of `y_S` vanish once
//! multiplied by `2^i`):
//!
//! ```text
//! b_i = a_i + x_R[i]·y_S  (mod 2^{ℓ−i})
//! x_R·y_S = Σ_i 2^i·(b_i − a_i)  (mod 2^ℓ): the receiver keeps Σ 2^i·b_i, the sender −Σ 2^i·a_i
//! ```
//!
//! Both cross terms run at once, each party the receiver of one and the sender of the other,
//! so each sends one message: its flips (ℓ bits) and its corrections (`Σ_i (ℓ − i)` bits =
//! `ℓ(ℓ+1)/2`) per product. One round; `ℓ` COTs each way per product.
//!
//! **Security**: semi-honest, as the Δ-OTs underneath.

use veil_mpc::cost::Cost;
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::{Modulus, delta_ot_begin_receive, delta_ot_begin_send, delta_ot_correction_bytes};

use crate::TwoParty;
use crate::ring::{check_shares, mask};

const STEP: &str = "products: flips and corrections";

/// Declared cost at each party of `n` products in Z_2^bits, COTs made ahead.
pub fn cost(n: usize, bits: u32) -> Cost {
    let l = bits as usize;
    let bytes = (n * l).div_ceil(8) + (n * l * (l + 1) / 2).div_ceil(8);
    Cost { bytes_sent: bytes as u64, messages_sent: 1, rounds: 1 }
}

/// COTs `n` products use: `(P0 sending, P1 sending)`.
pub fn cots_needed(n: usize, bits: u32) -> (usize, usize) {
    (n * bits as usize, n * bits as usize)
}

/// Shares of `x·y` elementwise, for shares `x`, `y` of Z_2^bits.
pub fn mul(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], y: &[u64], bits: u32) -> Result<Vec<u64>> {
    check_shares(x, bits)?;
    check_shares(y, bits)?;
    if x.len() != y.len() {
        return Err(MpcError::Invalid(format!("products of {} and {} values", x.len(), y.len())));
    }
    let (n, l) = (x.len(), bits as usize);
    let modulus = |k: usize| Modulus::PowerOfTwo(bits - (k % l) as u32);
    // This party chooses with the bits of its x and correlates with its y (mod 2^{ℓ−i}).
    let choices: Vec<bool> = x.iter().flat_map(|&v| (0..l).map(move |i| v >> i & 1 == 1)).collect();
    let deltas: Vec<u128> =
        y.iter().flat_map(|&v| (0..l).map(move |i| u128::from(v & mask(bits - i as u32)))).collect();
    // COTs in one order at both parties: the engine where P0 sends first.
    let (sent, received) = if tp.is_first() {
        let s = delta_ot_begin_send(ctx, tp.sender(), &modulus, &deltas)?;
        (s, delta_ot_begin_receive(ctx, tp.receiver(), &modulus, &choices)?)
    } else {
        let r = delta_ot_begin_receive(ctx, tp.receiver(), &modulus, &choices)?;
        (delta_ot_begin_send(ctx, tp.sender(), &modulus, &deltas)?, r)
    };
    let ((corrections, sending), (flips, receiving)) = (sent, received);
    let mut message = veil_ot::block::pack_bits(&flips);
    message.extend_from_slice(&corrections);
    ctx.net().send(tp.peer(), message)?;
    let expected = (n * l).div_ceil(8) + delta_ot_correction_bytes(&modulus, n * l);
    let bytes = ctx.recv_for(tp.peer(), expected, STEP)?;
    let malformed = |what: String| MpcError::Malformed { from: tp.peer(), what: format!("{STEP}: {what}") };
    if bytes.len() != expected {
        return Err(malformed(format!("expected {expected} bytes, got {}", bytes.len())));
    }
    let (their_flips, their_corrections) = bytes.split_at((n * l).div_ceil(8));
    let their_flips = veil_ot::block::unpack_bits(their_flips, n * l)
        .ok_or_else(|| malformed("a padding bit of the flips is set".into()))?;
    let a = sending.finish(&their_flips);
    let b = receiving.finish(tp.peer(), &modulus, their_corrections)?;
    let m = mask(bits);
    Ok((0..n)
        .map(|e| {
            let cross = (0..l).fold(0u64, |acc, i| {
                let k = e * l + i;
                acc.wrapping_add((b[k] as u64).wrapping_sub(a[k] as u64) << i)
            });
            x[e].wrapping_mul(y[e]).wrapping_add(cross) & m
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_product_sends_its_flips_and_a_triangle_of_corrections() {
        assert_eq!(cost(8, 64).bytes_sent, 64 + 2080);
        assert_eq!(cots_needed(3, 16), (48, 48));
    }
}
