//! Key derivation: seed + domain -> 128-bit AES key.
//!
//! Keys are derived with BLAKE3 in key-derivation mode under a fixed,
//! crate-unique context string. The input is an unambiguous encoding of
//! `(kind, seed, session, purpose, counter)`, with the variable-length
//! fields prefixed by their length as little-endian `u64`:
//!
//! ```text
//! len(kind) || kind || seed[16] || session[16] || len(purpose) || purpose || counter
//! ```
//!
//! Distinct tuples therefore hash distinct inputs, and under the assumption
//! that BLAKE3 is a PRF/random oracle the resulting keys are independent.
//! The `kind` (for example `"prg"` or `"prf"`) keeps PRG and PRF keys for
//! the same domain independent of each other.

use zeroize::{Zeroize, Zeroizing};

use crate::{Domain, Seed};

/// BLAKE3 `derive_key` context; globally unique and hard-coded, as the
/// BLAKE3 specification requires.
const KDF_CONTEXT: &str = "veil-crypto v1 2025 seed-to-key derivation";

/// Which primitive a derived key is for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum KeyKind {
    /// Key for [`crate::Prg`].
    Prg,
    /// Key for [`crate::Prf`].
    Prf,
}

impl KeyKind {
    fn label(self) -> &'static str {
        match self {
            KeyKind::Prg => "prg",
            KeyKind::Prf => "prf",
        }
    }
}

/// Writes `len(bytes)` as little-endian u64 followed by `bytes`.
pub(crate) fn update_prefixed(hasher: &mut blake3::Hasher, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// Derives a 128-bit key for `kind` from `seed` and `domain`.
pub(crate) fn derive_key(kind: KeyKind, seed: &Seed, domain: &Domain<'_>) -> Zeroizing<[u8; 16]> {
    let mut hasher = blake3::Hasher::new_derive_key(KDF_CONTEXT);
    update_prefixed(&mut hasher, kind.label().as_bytes());
    hasher.update(seed.as_bytes());
    hasher.update(domain.session.as_bytes());
    update_prefixed(&mut hasher, domain.purpose.as_bytes());
    hasher.update(&domain.counter.to_le_bytes());
    let mut full = Zeroizing::new([0u8; 32]);
    hasher.finalize_xof().fill(full.as_mut());
    hasher.zeroize();
    let mut key = Zeroizing::new([0u8; 16]);
    key.copy_from_slice(&full[..16]);
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SessionId;

    #[test]
    fn prefixing_prevents_purpose_counter_ambiguity() {
        let seed = Seed([7; 16]);
        let sid = SessionId([1; 16]);
        let a = derive_key(KeyKind::Prg, &seed, &Domain::new(sid, "ab", 0));
        let b = derive_key(KeyKind::Prg, &seed, &Domain::new(sid, "a", 0));
        assert_ne!(*a, *b);
        let prf = derive_key(KeyKind::Prf, &seed, &Domain::new(sid, "ab", 0));
        assert_ne!(*a, *prf);
    }
}
