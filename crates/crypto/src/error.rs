//! Error type for `veil-crypto`.
//!
//! Error messages never contain secret material (seeds, keys, openings).

/// Errors returned by the primitives in this crate.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CryptoError {
    /// A commitment did not match the revealed value and opening.
    #[error("commitment verification failed: opening and value do not match the commitment")]
    CommitmentMismatch,
    /// Two digests that were expected to be equal differ (a consistency check failed).
    #[error("digest mismatch in consistency check `{purpose}`")]
    DigestMismatch {
        /// The purpose string of the failed check.
        purpose: String,
    },
    /// A byte string had the wrong length.
    #[error("invalid length for {what}: expected {expected} bytes, got {actual}")]
    InvalidLength {
        /// What was being parsed.
        what: &'static str,
        /// The required length in bytes.
        expected: usize,
        /// The length that was supplied.
        actual: usize,
    },
}
