//! Errors of the FSS crate.

use thiserror::Error;

/// Everything that can go wrong when generating, evaluating, decoding or checking FSS keys.
///
/// Every malformed input (out-of-range index, truncated or garbled key bytes, failed opened
/// check) is reported through this type; no public function of this crate panics on bad input.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FssError {
    /// The domain `{0,1}^d` has an unsupported number of bits.
    #[error("domain bits {bits} out of range: expected 1..={max}")]
    InvalidDomainBits {
        /// Requested `d`.
        bits: u32,
        /// Largest supported `d` for this operation.
        max: u32,
    },
    /// The special point `alpha` does not fit in `d` bits.
    #[error("alpha = {alpha} does not fit in a {domain_bits}-bit domain")]
    AlphaOutOfRange {
        /// The point.
        alpha: u64,
        /// The domain size in bits.
        domain_bits: u32,
    },
    /// An evaluation point does not fit in `d` bits.
    #[error("input x = {x} does not fit in a {domain_bits}-bit domain")]
    InputOutOfRange {
        /// The point.
        x: u64,
        /// The domain size in bits.
        domain_bits: u32,
    },
    /// Full-domain evaluation of this domain would need too much memory.
    #[error("full-domain evaluation limited to {max} bits, key has {bits}")]
    DomainTooLargeForFullEval {
        /// The key's `d`.
        bits: u32,
        /// The limit ([`MAX_FULL_DOMAIN_BITS`](crate::MAX_FULL_DOMAIN_BITS)).
        max: u32,
    },
    /// A serialized key has the wrong length.
    #[error("key encoding has {actual} bytes, expected {expected}")]
    KeyLength {
        /// Length implied by the header and the caller's domain size.
        expected: usize,
        /// Length received.
        actual: usize,
    },
    /// A serialized key starts with an unknown format version.
    #[error("unsupported key encoding version {0}")]
    UnsupportedVersion(u8),
    /// A serialized key is for a different domain size than the caller expects.
    #[error("key is for a {found}-bit domain, expected {expected} bits")]
    DomainMismatch {
        /// Caller's `d`.
        expected: u32,
        /// `d` in the encoding.
        found: u32,
    },
    /// A serialized key is for an output ring of a different width.
    #[error("key output element has {found} bytes, this ring has {expected}")]
    RingMismatch {
        /// `R::BYTES`.
        expected: usize,
        /// Width in the encoding.
        found: usize,
    },
    /// The party index is not 0 or 1.
    #[error("invalid party index {0}: expected 0 or 1")]
    InvalidParty(u8),
    /// A key was used by the wrong party.
    #[error("key belongs to party {key}, but was evaluated as party {requested}")]
    PartyMismatch {
        /// Party recorded in the key.
        key: u8,
        /// Party passed by the caller.
        requested: u8,
    },
    /// A serialized key has non-canonical padding bits.
    #[error("non-canonical key encoding: {0}")]
    NonCanonical(&'static str),
    /// A serialized output element is not a canonical ring element.
    #[error("invalid output correction: {0}")]
    Ring(#[from] veil_ring::RingError),
    /// The opened sum `t = Σ_j V[j]` is not 1: the key does not encode `β = 1` at a single point.
    #[error("one-hot check failed: opened sum of the shared vector is not 1")]
    OneHotSumNotOne,
    /// The opened `s = α − Σ_j j·V[j]` is not 0: the hot position is not the shared `α`.
    #[error("one-hot check failed: hot position differs from the secret-shared index")]
    IndexMismatch,
}
