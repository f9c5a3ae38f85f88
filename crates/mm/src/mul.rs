//! Products of shares across rings of different widths (the M&M paper, §V-B):
//! lift both operands from their rings into Z_p ([`crate::convert::ring_to_field`]), multiply
//! there by the BFV OLE ([`veil_he::ole::Ole::mul_shares`]), and come back to the output ring
//! with the fixed-point truncation folded into the conversion
//! ([`crate::trunc::field_to_ring_truncated`]). No operand is widened to the output ring
//! before the product, and the truncation costs nothing beyond the conversion.
//!
//! Preconditions, which the caller keeps: `|x| < 2^{b_x − 2}`, `|y| < 2^{b_y − 2}` (the
//! conversions' range) and `|x·y| < 2^η`, `η = ⌊log2 t⌋ − 2` (the way back).

use veil_he::ole::Ole;
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::Modulus;
use veil_twopc::TwoParty;

use crate::convert::{convert, ring_to_field};
use crate::trunc::field_to_ring_truncated;

/// Shares in `Z_2^out` of `⌊x·y/2^f⌋` (minus a carry `E ∈ {−1, 0, 1}` when `f > 0`) for signed
/// shares `x` in `Z_2^bx` and `y` in `Z_2^by`.
#[allow(clippy::too_many_arguments, reason = "two operands, each with its ring, and the output's")]
pub fn mul_mixed(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    (x, bx): (&[u64], u32),
    (y, by): (&[u64], u32),
    f: u32,
    out: u32,
) -> Result<Vec<u128>> {
    if x.len() != y.len() {
        return Err(MpcError::Invalid(format!("products of {} and {} values", x.len(), y.len())));
    }
    let t = ole.modulus();
    let narrow = |v: Vec<u128>| -> Vec<u64> { v.into_iter().map(|e| e as u64).collect() };
    let xp = narrow(ring_to_field(tp, ctx, x, bx, t)?);
    let yp = narrow(ring_to_field(tp, ctx, y, by, t)?);
    let prod = ole.mul_shares(ctx, &xp, &yp, tp.is_first())?;
    if f == 0 {
        convert(tp, ctx, &prod, u128::from(t), Modulus::PowerOfTwo(out), u128::from(t / 4))
    } else {
        field_to_ring_truncated(tp, ctx, &prod, t, f, out)
    }
}
