//! Hash-based commitments.
//!
//! `commit(value)` samples 16 random bytes `r` and outputs
//! `C = H("veil/commit", tag, r, len(value), value)`, where `H` is this
//! crate's domain-separated BLAKE3 ([`crate::Hasher`]) and `tag` is either
//! `0x00` (no session) or `0x01 || session_id` ([`commit_in_session`]).
//! Opening reveals `r` and `value`; [`verify_commitment`] recomputes `C` and
//! compares in constant time.
//!
//! # Security assumptions
//!
//! In the random-oracle model for BLAKE3 the scheme is computationally
//! binding (finding two openings is a collision) and hiding (`r` has 128
//! bits of entropy, so `C` reveals nothing about even a low-entropy value).
//! Hiding requires `r` to come from a cryptographic RNG and to stay secret
//! until opening; [`Opening`] is zeroized on drop and redacted in `Debug`.
//! Binding to a [`SessionId`] prevents replaying commitments across sessions.

use rand_core::{CryptoRng, RngCore};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::{CryptoError, Hasher, SessionId};

/// Purpose string of commitment hashes.
const COMMIT_PURPOSE: &str = "veil/commit";

/// A 32-byte commitment (public).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Commitment(pub [u8; 32]);

/// The randomness that opens a [`Commitment`]; keep secret until opening.
#[derive(Clone, PartialEq, Eq)]
pub struct Opening {
    /// The 16 random bytes `r` hashed into the commitment.
    pub randomness: [u8; 16],
}

impl Drop for Opening {
    fn drop(&mut self) {
        self.randomness.zeroize();
    }
}

impl ZeroizeOnDrop for Opening {}

impl core::fmt::Debug for Opening {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Opening { randomness: <redacted> }")
    }
}

fn compute(session: Option<&SessionId>, randomness: &[u8; 16], value: &[u8]) -> [u8; 32] {
    let mut h = Hasher::new(COMMIT_PURPOSE);
    match session {
        None => h.update(&[0u8]),
        Some(sid) => h.update(&[1u8]).update(sid.as_bytes()),
    };
    h.update(randomness).update_prefixed(value);
    h.finalize().0
}

fn commit_impl<R: RngCore + CryptoRng + ?Sized>(
    rng: &mut R,
    session: Option<&SessionId>,
    value: &[u8],
) -> (Commitment, Opening) {
    let mut opening = Opening { randomness: [0u8; 16] };
    rng.fill_bytes(&mut opening.randomness);
    let c = Commitment(compute(session, &opening.randomness, value));
    (c, opening)
}

fn verify_impl(
    session: Option<&SessionId>,
    c: &Commitment,
    o: &Opening,
    value: &[u8],
) -> Result<(), CryptoError> {
    let expected = crate::Digest(compute(session, &o.randomness, value));
    if expected.ct_eq(&crate::Digest(c.0)) { Ok(()) } else { Err(CryptoError::CommitmentMismatch) }
}

/// Commits to `value` with fresh randomness from `rng` (not bound to a session).
pub fn commit<R: RngCore + CryptoRng + ?Sized>(rng: &mut R, value: &[u8]) -> (Commitment, Opening) {
    commit_impl(rng, None, value)
}

/// Checks that `(o, value)` opens `c` (made by [`commit`]).
pub fn verify_commitment(c: &Commitment, o: &Opening, value: &[u8]) -> Result<(), CryptoError> {
    verify_impl(None, c, o, value)
}

/// Commits to `value`, bound to `session`.
pub fn commit_in_session<R: RngCore + CryptoRng + ?Sized>(
    rng: &mut R,
    session: &SessionId,
    value: &[u8],
) -> (Commitment, Opening) {
    commit_impl(rng, Some(session), value)
}

/// Checks that `(o, value)` opens `c` (made by [`commit_in_session`] with
/// the same `session`).
pub fn verify_commitment_in_session(
    session: &SessionId,
    c: &Commitment,
    o: &Opening,
    value: &[u8],
) -> Result<(), CryptoError> {
    verify_impl(Some(session), c, o, value)
}
