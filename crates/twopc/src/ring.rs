//! Arithmetic shares over Z_2^ℓ (ℓ ≤ 64) as `u64` words: `x = x_0 + x_1 mod 2^ℓ`.

use veil_mpc::{MpcError, Result};

/// The low `bits` bits set.
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

/// Checks a ring width.
pub fn check_bits(bits: u32) -> Result<()> {
    if !(1..=64).contains(&bits) {
        return Err(MpcError::Invalid(format!("ring Z_2^{bits}: widths 1 to 64 are supported")));
    }
    Ok(())
}

/// Checks that shares are reduced mod 2^bits.
pub fn check_shares(x: &[u64], bits: u32) -> Result<()> {
    check_bits(bits)?;
    if x.iter().any(|&v| v & !mask(bits) != 0) {
        return Err(MpcError::Invalid(format!("a share is not reduced mod 2^{bits}")));
    }
    Ok(())
}

/// Signed value of a word in Z_2^ℓ.
pub fn signed(x: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((x << shift) as i64) >> shift
}
