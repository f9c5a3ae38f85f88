//! Encoding ring vectors as messages, with the length checks every receiver must make.

use veil_ring::{Ring, decode_slice, encode_slice};

use crate::{MpcError, PartyId, Result};

/// Encodes ring elements as one message payload.
pub fn encode<R: Ring>(xs: &[R]) -> Vec<u8> {
    encode_slice(xs)
}

/// Decodes exactly `expected` elements sent by `from`; anything else is [`MpcError::Malformed`].
pub fn decode<R: Ring>(from: PartyId, bytes: &[u8], expected: usize) -> Result<Vec<R>> {
    if bytes.len() != expected * R::BYTES {
        return Err(MpcError::Malformed {
            from,
            what: format!(
                "expected {expected} elements ({} bytes), got {} bytes",
                expected * R::BYTES,
                bytes.len()
            ),
        });
    }
    decode_slice(bytes).map_err(|e| MpcError::Malformed { from, what: e.to_string() })
}
