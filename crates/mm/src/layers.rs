//! Linear layers on fixed-point ring shares (the M&M paper, App. C-B: Cheetah's HomFC and
//! HomConv, run over Z_p and converted back): the data comes into the field
//! ([`crate::convert::ring_to_field`]), the layer runs by coefficient encoding between the
//! weights' owner (the evaluator) and the other party ([`veil_he::linear`]), and the way back
//! to the ring carries the fixed-point truncation for free ([`crate::trunc`]).
//!
//! Preconditions: `|x| < 2^{ℓ−2}` and every output `|W·x|` (at scale `2^{2f}`) below
//! `2^{⌊log2 p⌋ − 2}`.

use veil_he::linear::{Layer, evaluate, hold};
use veil_he::ole::Ole;
use veil_mpc::{Ctx, MpcError, Result};
use veil_twopc::TwoParty;

use crate::convert::ring_to_field;
use crate::trunc::field_to_ring_truncated;

/// Shares in `Z_2^ℓ` of `⌊W·x/2^f⌋` (up to the truncation's carry) for shares `x` in `Z_2^ℓ`
/// with `f` fractional bits. The party holding the weights (signed, scale `2^f`) passes them
/// and answers; the other passes `None`.
pub fn linear(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    layer: &dyn Layer,
    weights: Option<&[i64]>,
    x: &[u64],
    (l, f): (u32, u32),
) -> Result<Vec<u128>> {
    if f == 0 {
        return Err(MpcError::Invalid("a fixed-point layer needs f ≥ 1".into()));
    }
    let p = ole.modulus();
    let xp: Vec<u64> = ring_to_field(tp, ctx, x, l, p)?.into_iter().map(|v| v as u64).collect();
    let y = match weights {
        Some(w) => {
            let wp: Vec<u64> = w.iter().map(|&v| i128::from(v).rem_euclid(i128::from(p)) as u64).collect();
            evaluate(ole, ctx, layer, &wp, &xp)?
        }
        None => hold(ole, ctx, layer, &xp)?,
    };
    field_to_ring_truncated(tp, ctx, &y, p, f, l)
}
