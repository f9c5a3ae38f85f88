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
    get_at(bytes, index * bits as usize, bits)
}

/// The `bits` bits (≤ 128) starting at bit `pos` of `bytes`, least significant first (bits
/// past the end read as zero).
pub fn get_at(bytes: &[u8], pos: usize, bits: u32) -> u128 {
    let (first, off) = (pos / 8, pos % 8);
    if first >= bytes.len() {
        return 0;
    }
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

/// A packing built value by value, each of its own width: [`pack`] when every width is the
/// same.
#[derive(Debug, Default)]
pub struct BitWriter {
    out: Vec<u8>,
    acc: u128,
    filled: u32,
}

impl BitWriter {
    /// An empty packing with room for `bits` bits.
    pub fn with_capacity(bits: usize) -> Self {
        BitWriter { out: Vec::with_capacity(bits.div_ceil(8)), acc: 0, filled: 0 }
    }

    /// Appends the low `bits` bits (1 ≤ bits ≤ 128) of `v`.
    pub fn push(&mut self, v: u128, bits: u32) {
        debug_assert!((1..=128).contains(&bits));
        let v = v & mask(bits);
        self.acc |= v << self.filled;
        if self.filled + bits >= 128 {
            self.out.extend_from_slice(&self.acc.to_le_bytes());
            self.acc = if self.filled == 0 { 0 } else { v >> (128 - self.filled) };
            self.filled = self.filled + bits - 128;
        } else {
            self.filled += bits;
        }
    }

    /// Appends another packing of `bits` bits.
    pub fn append(&mut self, bytes: &[u8], bits: usize) {
        if self.filled == 0 && bits.is_multiple_of(128) {
            self.out.extend_from_slice(&bytes[..bits / 8]);
            return;
        }
        let mut pos = 0;
        while pos < bits {
            let take = (bits - pos).min(128) as u32;
            self.push(get_at(bytes, pos, take), take);
            pos += take as usize;
        }
    }

    /// Bits written so far.
    pub fn len(&self) -> usize {
        8 * self.out.len() + self.filled as usize
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The packed bytes (the last one zero-padded).
    pub fn finish(mut self) -> Vec<u8> {
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..self.filled.div_ceil(8) as usize]);
        self.out
    }
}

/// The low `bits` bits set.
pub fn mask(bits: u32) -> u128 {
    if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_writer_packs_mixed_widths_like_pack() {
        let widths = [1u32, 2, 7, 128, 64, 3, 128, 5];
        let values: Vec<u128> = (0..widths.len() as u128).map(|i| u128::MAX / (i + 3)).collect();
        let mut w = BitWriter::default();
        let mut pos = Vec::new();
        for (&v, &b) in values.iter().zip(&widths) {
            pos.push(w.len());
            w.push(v, b);
        }
        let total = w.len();
        let bytes = w.finish();
        assert_eq!(bytes.len(), total.div_ceil(8));
        for ((&v, &b), &p) in values.iter().zip(&widths).zip(&pos) {
            assert_eq!(get_at(&bytes, p, b), v & mask(b));
        }
        // Same widths everywhere: the bytes of `pack`.
        let mut same = BitWriter::default();
        values.iter().for_each(|&v| same.push(v, 13));
        assert_eq!(same.finish(), pack(&values, 13));
        // Appending an unaligned packing keeps every bit.
        let mut joined = BitWriter::default();
        joined.push(1, 3);
        joined.append(&bytes, total);
        let joined = joined.finish();
        for ((&v, &b), &p) in values.iter().zip(&widths).zip(&pos) {
            assert_eq!(get_at(&joined, p + 3, b), v & mask(b));
        }
    }

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
