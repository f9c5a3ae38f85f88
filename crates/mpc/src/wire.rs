//! Encoding ring vectors as messages, with the length checks every receiver must make.

use veil_ring::{Ring, decode_slice, encode_slice};

use crate::{MpcError, PartyId, Result, packing};

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

/// Packs values of `bits` bits each (1..=8, the low bits of each byte) densely, LSB first.
pub fn pack_bits(values: &[u8], bits: u32) -> Vec<u8> {
    let words: Vec<u64> = values.iter().map(|&v| u64::from(v)).collect();
    pack_words(&words, bits.clamp(1, 8))
}

/// Inverse of [`pack_bits`] for exactly `count` values; a payload of the wrong length or with
/// nonzero padding bits is [`MpcError::Malformed`].
pub fn unpack_bits(from: PartyId, bytes: &[u8], bits: u32, count: usize) -> Result<Vec<u8>> {
    // Values of at most 8 bits fit a byte.
    Ok(unpack_words(from, bytes, bits.clamp(1, 8), count)?.into_iter().map(|w| w as u8).collect())
}

/// Packs words of `bits` bits each (1..=64; higher bits are dropped) densely, LSB first.
pub fn pack_words(values: &[u64], bits: u32) -> Vec<u8> {
    let wide: Vec<u128> = values.iter().map(|&v| u128::from(v)).collect();
    packing::pack(&wide, bits.clamp(1, 64))
}

/// Bytes of `count` words packed by [`pack_words`] at `bits` bits (or [`pack_bits`]).
pub fn packed_len(bits: u32, count: usize) -> usize {
    count.saturating_mul(bits.clamp(1, 64) as usize).div_ceil(8)
}

/// Inverse of [`pack_words`] for exactly `count` words; wrong length or nonzero padding is
/// [`MpcError::Malformed`].
pub fn unpack_words(from: PartyId, bytes: &[u8], bits: u32, count: usize) -> Result<Vec<u64>> {
    let b = bits.clamp(1, 64);
    let total = count.saturating_mul(b as usize);
    if bytes.len() != total.div_ceil(8) {
        return Err(MpcError::Malformed {
            from,
            what: format!(
                "expected {} bytes of {count} packed {b}-bit words, got {}",
                total.div_ceil(8),
                bytes.len()
            ),
        });
    }
    let wide = packing::unpack(bytes, b, count)
        .ok_or_else(|| MpcError::Malformed { from, what: "nonzero padding bits".into() })?;
    Ok(wide.into_iter().map(|v| v as u64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trip_every_width() {
        for bits in 1..=8u32 {
            let vals: Vec<u8> = (0..37u32).map(|i| ((i * 37 + 11) % (1 << bits)) as u8).collect();
            let packed = pack_bits(&vals, bits);
            assert_eq!(packed.len(), (37 * bits as usize).div_ceil(8));
            assert_eq!(unpack_bits(1, &packed, bits, 37).unwrap(), vals);
        }
    }

    #[test]
    fn word_packing_round_trip() {
        for bits in [1u32, 7, 8, 12, 31, 64] {
            let vals: Vec<u64> =
                (0..29u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)).collect();
            assert_eq!(unpack_words(0, &pack_words(&vals, bits), bits, 29).unwrap(), vals);
        }
        assert!(unpack_words(0, &[0xff], 4, 1).is_err());
    }

    #[test]
    fn malformed_packings_are_errors() {
        assert!(unpack_bits(1, &[0, 0], 6, 4).is_err()); // 3 bytes expected
        assert!(unpack_bits(1, &[0, 0, 0x80], 6, 3).is_err()); // padding bit set
    }
}
