//! Comparisons on shares of Z_2^ℓ, each one millionaires' run (CrypTFlow2 §4):
//!
//! - **MSB**: with `x_b = m_b·2^{ℓ−1} + z_b`, `MSB(x) = m_0 ⊕ m_1 ⊕ 1{z_0 + z_1 ≥ 2^{ℓ−1}}`
//!   and the carry is `1{2^{ℓ−1} − 1 − z_0 < z_1}`: one comparison of `ℓ − 1` bits.
//! - **DReLU** `1{x ≥ 0} = 1 ⊕ MSB(x)` (two's complement).
//! - **Wrap** of the shares, `1{x_0 + x_1 ≥ 2^ℓ} = 1{2^ℓ − 1 − x_0 < x_1}`: one comparison of
//!   `ℓ` bits.
//! - **x < y** for shared `x, y` with `|x − y| < 2^{ℓ−1}`: `MSB(x − y)`.

use veil_mpc::{Ctx, Result};

use crate::TwoParty;
use crate::millionaire::less_than;
use crate::ring::{check_shares, mask};

/// Boolean shares of the most significant bit of `x` in Z_2^bits.
pub fn msb(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], bits: u32) -> Result<Vec<bool>> {
    check_shares(x, bits)?;
    if bits < 2 {
        return Err(veil_mpc::MpcError::Invalid(
            "the MSB of a 1-bit ring is the value: share it as a bit".into(),
        ));
    }
    let low = mask(bits - 1);
    let first = tp.is_first();
    let input: Vec<u64> = x.iter().map(|&v| if first { low - (v & low) } else { v & low }).collect();
    let carry = less_than(tp, ctx, &input, bits - 1)?;
    Ok(x.iter().zip(carry).map(|(&v, c)| (v >> (bits - 1) & 1 == 1) ^ c).collect())
}

/// Boolean shares of `1{x ≥ 0}` (two's complement in Z_2^bits).
pub fn drelu(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], bits: u32) -> Result<Vec<bool>> {
    let first = tp.is_first();
    Ok(msb(tp, ctx, x, bits)?.into_iter().map(|b| b ^ first).collect())
}

/// Boolean shares of the wrap bit `1{x_0 + x_1 ≥ 2^bits}` of the shares of `x`.
pub fn wrap(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], bits: u32) -> Result<Vec<bool>> {
    check_shares(x, bits)?;
    let m = mask(bits);
    let first = tp.is_first();
    let input: Vec<u64> = x.iter().map(|&v| if first { m - v } else { v }).collect();
    less_than(tp, ctx, &input, bits)
}

/// Boolean shares of `1{x < y}` for shared `x, y` with `|x − y| < 2^{bits−1}`.
pub fn less(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], y: &[u64], bits: u32) -> Result<Vec<bool>> {
    let d: Vec<u64> = x.iter().zip(y).map(|(&a, &b)| a.wrapping_sub(b) & mask(bits)).collect();
    msb(tp, ctx, &d, bits)
}
