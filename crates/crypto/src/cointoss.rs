//! Combining coin-toss contributions into a joint seed.
//!
//! `seed = H("veil/cointoss", purpose, n, s_1, ..., s_n)` truncated to 16
//! bytes, with the contributions in party order and the purpose
//! length-prefixed.
//!
//! # Security assumptions
//!
//! The result is uniformly random (BLAKE3 as a random oracle) as long as at
//! least one contribution is uniform and independent of the others. That
//! independence is the caller's job: every party must commit to its
//! contribution ([`crate::commit`]) and only open after receiving all other
//! commitments, otherwise the last party to speak can bias the result.
//! All parties must pass contributions in the same (party-index) order.

use zeroize::Zeroize;

use crate::{Hasher, Seed};

/// Combines coin-toss contributions (in party order) into one seed:
/// `H("veil/cointoss", purpose, contributions...)`.
pub fn combine_seeds(purpose: &str, contributions: &[Seed]) -> Seed {
    let mut h = Hasher::new("veil/cointoss");
    h.update_prefixed(purpose.as_bytes());
    h.update_u64(contributions.len() as u64);
    for c in contributions {
        h.update(c.as_bytes());
    }
    let mut digest = h.finalize().0;
    let mut seed = Seed([0u8; 16]);
    seed.0.copy_from_slice(&digest[..16]);
    digest.zeroize();
    seed
}
