//! Seeds, session identifiers and derivation domains.
//!
//! A [`Seed`] is 128 bits of secret key material (uniformly random, or
//! derived from uniformly random material). It is compared in constant time,
//! zeroized on drop and never printed by `Debug`.
//!
//! A [`SessionId`] is public and must be unique per protocol execution; it
//! is bound into every derivation so that randomness from one session is
//! independent of every other session even under the same seed.
//! A [`Domain`] names one use of a seed inside a session.

use rand_core::{CryptoRng, RngCore};
use subtle::ConstantTimeEq;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::CryptoError;

/// 16-byte secret seed; zeroized on drop, compared in constant time, and
/// never shown by `Debug`.
///
/// `Default` yields the all-zero seed. It exists only because
/// [`rand_core::SeedableRng`] requires it for seed buffers; never use an
/// all-zero seed as a key.
#[derive(Clone, Default)]
pub struct Seed(pub [u8; 16]);

impl Drop for Seed {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl ZeroizeOnDrop for Seed {}

impl Zeroize for Seed {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

impl Seed {
    /// Length of a seed in bytes.
    pub const LEN: usize = 16;

    /// Samples a fresh uniformly random seed from a cryptographic RNG.
    pub fn from_rng<R: CryptoRng + RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut seed = Seed([0u8; 16]);
        rng.fill_bytes(&mut seed.0);
        seed
    }

    /// Builds a seed from a byte slice that must be exactly 16 bytes long.
    pub fn try_from_slice(bytes: &[u8]) -> Result<Self, CryptoError> {
        let arr: [u8; 16] = bytes.try_into().map_err(|_| CryptoError::InvalidLength {
            what: "seed",
            expected: Self::LEN,
            actual: bytes.len(),
        })?;
        Ok(Seed(arr))
    }

    /// The seed's bytes. Handle with care: they are secret.
    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl PartialEq for Seed {
    fn eq(&self, other: &Self) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl Eq for Seed {}

impl ConstantTimeEq for Seed {
    fn ct_eq(&self, other: &Self) -> subtle::Choice {
        self.0.ct_eq(&other.0)
    }
}

impl AsMut<[u8]> for Seed {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl AsRef<[u8]> for Seed {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl core::fmt::Debug for Seed {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Seed(<redacted>)")
    }
}

/// Session identifier bound into every derivation (16 bytes, public).
///
/// Must be unique per protocol execution (for example agreed by coin tossing
/// or sampled by the coordinator) so that streams never repeat across sessions.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct SessionId(pub [u8; 16]);

impl SessionId {
    /// Samples a fresh random session identifier.
    pub fn from_rng<R: CryptoRng + RngCore + ?Sized>(rng: &mut R) -> Self {
        let mut id = [0u8; 16];
        rng.fill_bytes(&mut id);
        SessionId(id)
    }

    /// The identifier's bytes.
    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

/// Domain separation for derived PRGs and PRFs: which session, what for,
/// and which instance (counter) of that purpose.
///
/// Two domains that differ in any field yield independent keys.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Domain<'a> {
    /// The session this derivation belongs to.
    pub session: SessionId,
    /// A short, fixed, human-readable label such as `"beaver/triples"`.
    pub purpose: &'a str,
    /// Instance number within the purpose (layer index, batch index, ...).
    pub counter: u64,
}

impl<'a> Domain<'a> {
    /// Creates a domain.
    pub fn new(session: SessionId, purpose: &'a str, counter: u64) -> Self {
        Domain { session, purpose, counter }
    }

    /// The same session and purpose with a different counter.
    #[must_use]
    pub fn with_counter(self, counter: u64) -> Self {
        Domain { counter, ..self }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_secret() {
        let s = Seed([0xAB; 16]);
        let text = format!("{s:?}");
        assert!(!text.contains("171"));
        assert!(!text.to_lowercase().contains("ab"));
    }

    #[test]
    fn equality_and_slice_parsing() {
        let a = Seed([1; 16]);
        let b = Seed::try_from_slice(&[1; 16]).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, Seed([2; 16]));
        assert!(matches!(
            Seed::try_from_slice(&[0; 15]),
            Err(CryptoError::InvalidLength { expected: 16, actual: 15, .. })
        ));
    }
}
