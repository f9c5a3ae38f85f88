//! Domain-separated hashing with BLAKE3, for consistency checks and
//! transcript hashing.
//!
//! Every hash is computed in BLAKE3's key-derivation mode under a fixed,
//! crate-unique context, and the caller's `purpose` string is absorbed
//! first, length-prefixed. Hashes for different purposes are therefore
//! independent, and no purpose/data split is ambiguous.
//!
//! Note that [`Hasher::update`] just concatenates, like any incremental
//! hash: when hashing several variable-length fields, use
//! [`Hasher::update_prefixed`] so that field boundaries are unambiguous.
//!
//! # Security assumptions
//!
//! BLAKE3 is collision resistant and behaves as a random oracle.
//! [`Digest::ct_eq`] compares in constant time, for digests of secret data.
//! The hasher state is zeroized on drop, because it may hold secret input.

use subtle::ConstantTimeEq;
use zeroize::Zeroize;

use crate::CryptoError;
use crate::kdf::update_prefixed;

/// BLAKE3 `derive_key` context for all hashes of this module.
const HASH_CONTEXT: &str = "veil-crypto v1 2025 domain-separated hash";

/// A 32-byte BLAKE3 digest.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// Constant-time equality.
    pub fn ct_eq(&self, other: &Digest) -> bool {
        self.0.ct_eq(&other.0).into()
    }

    /// Constant-time check that two digests of the consistency check
    /// `purpose` agree.
    pub fn verify_eq(&self, other: &Digest, purpose: &str) -> Result<(), CryptoError> {
        if self.ct_eq(other) {
            Ok(())
        } else {
            Err(CryptoError::DigestMismatch { purpose: purpose.to_owned() })
        }
    }

    /// The digest's bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

/// Incremental domain-separated BLAKE3 hasher.
#[derive(Clone)]
pub struct Hasher {
    inner: blake3::Hasher,
}

impl Hasher {
    /// A hasher for the given purpose (a short fixed label such as
    /// `"veil/mac-check"`).
    pub fn new(purpose: &str) -> Self {
        let mut inner = blake3::Hasher::new_derive_key(HASH_CONTEXT);
        update_prefixed(&mut inner, purpose.as_bytes());
        Hasher { inner }
    }

    /// Absorbs raw bytes (plain concatenation).
    pub fn update(&mut self, data: &[u8]) -> &mut Self {
        self.inner.update(data);
        self
    }

    /// Absorbs a `u64` as 8 little-endian bytes.
    pub fn update_u64(&mut self, value: u64) -> &mut Self {
        self.inner.update(&value.to_le_bytes());
        self
    }

    /// Absorbs a slice of `u64`s, each as 8 little-endian bytes (no length
    /// prefix).
    pub fn update_u64s(&mut self, values: &[u64]) -> &mut Self {
        let mut buf = [0u8; 512];
        for chunk in values.chunks(64) {
            for (dst, v) in buf.chunks_exact_mut(8).zip(chunk) {
                dst.copy_from_slice(&v.to_le_bytes());
            }
            self.inner.update(&buf[..chunk.len() * 8]);
        }
        buf.zeroize();
        self
    }

    /// Absorbs `data.len()` as a little-endian `u64`, then `data`: use for
    /// variable-length fields.
    pub fn update_prefixed(&mut self, data: &[u8]) -> &mut Self {
        update_prefixed(&mut self.inner, data);
        self
    }

    /// The digest of everything absorbed so far.
    pub fn finalize(&self) -> Digest {
        Digest(*self.inner.finalize().as_bytes())
    }
}

impl Drop for Hasher {
    fn drop(&mut self) {
        self.inner.zeroize();
    }
}

impl core::fmt::Debug for Hasher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Hasher { .. }")
    }
}

/// One-shot domain-separated hash: `Hasher::new(purpose).update(data).finalize()`.
pub fn hash(purpose: &str, data: &[u8]) -> Digest {
    let mut h = Hasher::new(purpose);
    h.update(data);
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purposes_are_separated() {
        assert_ne!(hash("a", b"bc"), hash("ab", b"c"));
        assert_ne!(hash("x", b""), hash("y", b""));
        assert_eq!(hash("x", b"data"), hash("x", b"data"));
    }

    #[test]
    fn incremental_matches_one_shot() {
        let mut h = Hasher::new("p");
        h.update(b"hello ").update(b"world");
        assert_eq!(h.finalize(), hash("p", b"hello world"));
    }

    #[test]
    fn update_u64s_matches_update_u64() {
        let words: Vec<u64> = (0..200u64).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
        let mut a = Hasher::new("w");
        a.update_u64s(&words);
        let mut b = Hasher::new("w");
        for &w in &words {
            b.update_u64(w);
        }
        assert_eq!(a.finalize(), b.finalize());
    }

    #[test]
    fn ct_eq_and_verify() {
        let a = hash("p", b"1");
        let b = hash("p", b"2");
        assert!(a.ct_eq(&a));
        assert!(!a.ct_eq(&b));
        assert!(a.verify_eq(&a, "p").is_ok());
        assert_eq!(a.verify_eq(&b, "check"), Err(CryptoError::DigestMismatch { purpose: "check".into() }));
    }
}
