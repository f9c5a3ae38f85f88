//! Dense packing of `bits`-bit values (1 ≤ bits ≤ 128), least significant bit first, so a
//! value of `k` bits costs `k` bits on the wire; a 128-bit accumulator moves whole words, not
//! bits. [`crate::wire::pack_words`] and the OT protocols' corrections pack through here.

/// Packs the low `bits` bits of each value.
pub fn pack(values: &[u128], bits: u32) -> Vec<u8> {
    debug_assert!((1..=128).contains(&bits));
    let mask = mask(bits);
    let mut out = Vec::with_capacity((values.len() * bits as usize).div_ceil(8));
    let (mut acc, mut filled) = (0u128, 0u32);
    for &v in values {
        let v = v & mask;
        acc |= v << filled;
        if filled + bits >= 128 {
            out.extend_from_slice(&acc.to_le_bytes());
            // The bits of v that did not fit (none when filled == 0 and bits == 128).
            acc = if filled == 0 { 0 } else { v >> (128 - filled) };
            filled = filled + bits - 128;
        } else {
            filled += bits;
        }
    }
    out.extend_from_slice(&acc.to_le_bytes()[..filled.div_ceil(8) as usize]);
    out
}

/// The inverse of [`pack`] for exactly `count` values; `None` if the length is wrong or a
/// padding bit is set.
pub fn unpack(bytes: &[u8], bits: u32, count: usize) -> Option<Vec<u128>> {
    debug_assert!((1..=128).contains(&bits));
    let total = count.checked_mul(bits as usize)?;
    if bytes.len() != total.div_ceil(8) {
        return None;
    }
    if !total.is_multiple_of(8) && bytes.last().is_some_and(|&b| b >> (total % 8) != 0) {
        return None;
    }
    let mask = mask(bits);
    let word = |i: usize| -> u128 {
        let mut b = [0u8; 16];
        let start = 16 * i;
        let end = bytes.len().min(start + 16);
        if start < end {
            b[..end - start].copy_from_slice(&bytes[start..end]);
        }
        u128::from_le_bytes(b)
    };
    Some(
        (0..count)
            .map(|i| {
                let pos = i * bits as usize;
                let (w, off) = (pos / 128, (pos % 128) as u32);
                let mut v = word(w) >> off;
                if off + bits > 128 {
                    v |= word(w + 1) << (128 - off);
                }
                v & mask
            })
            .collect(),
    )
}

/// Whether `bytes` is a packing of exactly `count` values of `bits` bits (right length, no
/// padding bit set).
pub fn fits(bytes: &[u8], bits: u32, count: usize) -> bool {
    let Some(total) = count.checked_mul(bits as usize) else { return false };
    bytes.len() == total.div_ceil(8)
        && (total.is_multiple_of(8) || bytes.last().is_none_or(|&b| b >> (total % 8) == 0))
}

/// Value `index` of a packing checked by [`fits`].
pub fn get(bytes: &[u8], bits: u32, index: usize) -> u128 {
    let pos = index * bits as usize;
    let (first, off) = (pos / 8, pos % 8);
    let last = (pos + bits as usize).div_ceil(8).min(bytes.len());
    let mut v = 0u128;
    let mut shift = 0i32 - off as i32;
    for &b in &bytes[first..last] {
        v |= if shift >= 0 { u128::from(b) << shift } else { u128::from(b) >> -shift };
        shift += 8;
        if shift >= 128 {
            break;
        }
    }
    v & mask(bits)
}

/// The low `bits` bits set.
pub fn mask(bits: u32) -> u128 {
    if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips_at_every_width() {
        for bits in [1u32, 2, 7, 8, 13, 31, 32, 61, 64, 65, 100, 127, 128] {
            for count in [0usize, 1, 5, 33] {
                let values: Vec<u128> = (0..count as u128)
                    .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835) & mask(bits))
                    .collect();
                let packed = pack(&values, bits);
                assert_eq!(packed.len(), (count * bits as usize).div_ceil(8));
                assert!(fits(&packed, bits, count));
                for (i, &v) in values.iter().enumerate() {
                    assert_eq!(get(&packed, bits, i), v, "{bits} bits, value {i}");
                }
                assert_eq!(unpack(&packed, bits, count), Some(values), "{bits} bits, {count} values");
            }
        }
        assert!(unpack(&[0xff], 4, 1).is_none());
        assert!(unpack(&[0, 0], 4, 1).is_none());
    }
}
