//! Randomness from pairwise PRF keys, without communication (paper §3: F_rand, zero-sharing).
//!
//! Component `a_j` of a random sharing is expanded from the seed shared by `P_{j-1}` and `P_j`
//! ([`veil_mpc::Ctx::pair_prg`]); party `P_b` expands `a_b` (with `P_{b-1}`) and `a_{b+1}`
//! (with `P_{b+1}`). A zero-sharing is `ζ_b = r_b - r_{b+1}` from the same kind of pairwise
//! streams, so `ζ_0 + ζ_1 + ζ_2 = 0` and each `ζ_b` alone is uniform. Every party must call
//! these functions in the same order (the derivation counters then agree).

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::rss::{Rss, next, prev};

/// Checks that this party is one of the three compute servers (parties 0, 1, 2; input owners,
/// if any, are parties 3 and up).
pub fn check_server(ctx: &Ctx) -> Result<()> {
    if ctx.parties() < 3 || ctx.party() >= 3 {
        return Err(MpcError::Invalid(format!(
            "party {} of {} is not one of the three compute servers 0, 1, 2",
            ctx.party(),
            ctx.parties()
        )));
    }
    Ok(())
}

/// `⟨r⟩` for a uniformly random `r` no party knows (F_rand).
pub fn random<R: Ring>(ctx: &mut Ctx, shape: &[usize]) -> Result<Rss<R>> {
    check_server(ctx)?;
    let b = ctx.party();
    let n = shape.iter().product();
    let first = R::random_vec(&mut ctx.pair_prg(prev(b), "mosformer/rand")?, n);
    let second = R::random_vec(&mut ctx.pair_prg(next(b), "mosformer/rand")?, n);
    Rss::new(Tensor::new(shape.to_vec(), first)?, Tensor::new(shape.to_vec(), second)?)
}

/// This party's additive share `ζ_b` of zero (3-of-3).
pub fn zero_share<R: Ring>(ctx: &mut Ctx, n: usize) -> Result<Vec<R>> {
    check_server(ctx)?;
    let b = ctx.party();
    let r_b = R::random_vec(&mut ctx.pair_prg(prev(b), "mosformer/zero")?, n);
    let r_next = R::random_vec(&mut ctx.pair_prg(next(b), "mosformer/zero")?, n);
    Ok(r_b.into_iter().zip(r_next).map(|(x, y)| x - y).collect())
}
