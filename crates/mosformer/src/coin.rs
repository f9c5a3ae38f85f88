//! Public random challenges drawn jointly by the three servers, after the values they test are
//! fixed.
//!
//! Each server holds two components of a fresh random replicated sharing (F_rand); opening it
//! with the checked opening gives a 128-bit seed that is uniform as long as one pair is honest:
//! the component only that pair holds is unknown to the adversary until the opening, and the
//! redundant copy stops a corrupted server from changing what the others reconstruct. Used for
//! the MAC check's coefficients and the sacrifice challenge of triple generation.
//!
//! **Rushing.** A corrupted `P_c` lacks one component, which `P_{c−1}` sends it when it enters
//! [`public_seed`], so a caller must make sure every message of `P_c` that the tested values
//! depend on has reached an honest party by then. Messages to `P_{c−1}` have (it receives in
//! program order); messages to `P_{c+1}` have only if `P_{c−1}` waited for something from
//! `P_{c+1}` since. The sacrifice's values depend only on reshares to `P_{c−1}`; the MAC check
//! sends a readiness message to the next party before its challenge ([`crate::mac`]).

use veil_crypto::{Prg, Seed};
use veil_mpc::{Ctx, Result};
use veil_ring::Z64;

use crate::open::open_all;
use crate::prss::random;

/// A fresh public seed (one checked opening of two 64-bit elements, one round).
pub fn public_seed(ctx: &mut Ctx) -> Result<Seed> {
    let shares = random::<Z64>(ctx, &[2])?;
    let opened = open_all(ctx, &shares)?;
    let mut seed = [0u8; 16];
    seed[..8].copy_from_slice(&opened.data()[0].0.to_le_bytes());
    seed[8..].copy_from_slice(&opened.data()[1].0.to_le_bytes());
    Ok(Seed(seed))
}

/// A PRG expanding a fresh public seed.
pub fn public_prg(ctx: &mut Ctx) -> Result<Prg> {
    Ok(Prg::new(&public_seed(ctx)?))
}
