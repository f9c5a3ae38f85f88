//! Errors raised by ring encodings and fixed-point conversion.

/// Everything that can go wrong when decoding ring elements or encoding reals.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RingError {
    /// A single-element encoding had the wrong number of bytes.
    #[error("wrong encoding length: expected {expected} bytes, got {got}")]
    WrongLength {
        /// Bytes one element needs (`Ring::BYTES`).
        expected: usize,
        /// Bytes that were supplied.
        got: usize,
    },
    /// A byte string is not a whole number of elements.
    #[error("byte length {len} is not a multiple of the element size {elem_bytes}")]
    RaggedSlice {
        /// Length of the byte string.
        len: usize,
        /// Bytes per element (`Ring::BYTES`).
        elem_bytes: usize,
    },
    /// The encoded integer is not the canonical representative (it is `>= modulus`).
    #[error("non-canonical encoding: value {value} is not below the modulus {modulus}")]
    NonCanonical {
        /// The decoded integer.
        value: u128,
        /// The ring modulus (`2^k` or `p`).
        modulus: u128,
    },
    /// A real number does not fit the signed fixed-point range of the ring.
    #[error(
        "value {value} does not fit a {ring_bits}-bit ring with {frac_bits} fractional bits \
         (round(x * 2^{frac_bits}) must lie in [-2^{}, 2^{}))",
        ring_bits.saturating_sub(1),
        ring_bits.saturating_sub(1)
    )]
    OutOfRange {
        /// The rejected real value (may be NaN or infinite).
        value: f64,
        /// Bit width `k` of the target ring.
        ring_bits: u32,
        /// Number of fractional bits `f`.
        frac_bits: u32,
    },
}
