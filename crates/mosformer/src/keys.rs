//! Long-lived secret sharings every FSS-based gate needs: the MAC key `⟨α⟩` and a *random*
//! replicated sharing of 1.
//!
//! `⟨1⟩` weights each evaluator pair's 2-of-2 result in DReLU/Select/LUT. The paper's released
//! code uses the trivial sharing `(1, 0, 0)`, which makes the weight of the pair that excludes a
//! corrupted dealer a public 1 — and then the dealer knows the term `α·[[1]] - [[α]]` and can
//! compensate errors of its own auxiliary data in the MAC. The fix: derive
//! `⟨1⟩ = ⟨ρ⟩ - ρ + 1` from a fresh random `⟨ρ⟩`, opening `ρ` (checked), so that all three
//! components are uniformly random and no party knows another pair's weight.

use veil_mpc::{Ctx, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::open::open_all;
use crate::prss::random;
use crate::rss::Rss;

/// The MAC key `⟨α⟩`, uniform in the ring, known to nobody (F_rand, no communication).
pub fn mac_key<R: Ring>(ctx: &mut Ctx) -> Result<Rss<R>> {
    random(ctx, &[1])
}

/// A replicated sharing of 1 with uniformly random components (one checked opening).
pub fn random_one<R: Ring>(ctx: &mut Ctx) -> Result<Rss<R>> {
    let rho = random::<R>(ctx, &[1])?;
    let opened = open_all(ctx, &rho)?;
    let shift = Tensor::new(vec![1], vec![R::ONE - opened.data()[0]])?;
    rho.add_public(ctx.party(), &shift)
}
