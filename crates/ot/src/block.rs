//! 128-bit blocks: the unit every OT in this crate moves, the bit-matrix transpose of OT
//! extension, and multiplication in GF(2^128) for the KOS consistency check.
//!
//! A block is a `u128`; on the wire and under AES it is its 16 little-endian bytes.
//! GF(2^128) is `GF(2)[X] / (X^128 + X^7 + X^2 + X + 1)`, bit `i` of the `u128` being the
//! coefficient of X^i. The carry-less product is computed with integer multiplications whose
//! operands have three zero bits between any two set bits ("holes"), so carries never reach a
//! bit that is kept: constant time and safe Rust, no CPU intrinsics.

/// A 128-bit block.
pub type Block = u128;

/// The least significant bit of a block: the choice bit of a correlated OT in this crate's
/// convention (the sender's Δ has it set, the sender's message 0 has it clear).
#[inline]
pub fn lsb(b: Block) -> bool {
    b & 1 == 1
}

/// `b` if `bit`, else 0 (branch free).
#[inline]
pub fn select(bit: bool, b: Block) -> Block {
    (0u128.wrapping_sub(u128::from(bit))) & b
}

/// Blocks as little-endian bytes, for the wire.
pub fn to_bytes(blocks: &[Block]) -> Vec<u8> {
    let mut out = Vec::with_capacity(blocks.len() * 16);
    for b in blocks {
        out.extend_from_slice(&b.to_le_bytes());
    }
    out
}

/// Blocks from little-endian bytes; `None` unless the length is a multiple of 16.
pub fn from_bytes(bytes: &[u8]) -> Option<Vec<Block>> {
    if !bytes.len().is_multiple_of(16) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(16)
            .map(|c| {
                let mut b = [0u8; 16];
                b.copy_from_slice(c);
                u128::from_le_bytes(b)
            })
            .collect(),
    )
}

/// Packs bits LSB first into bytes.
pub fn pack_bits(bits: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, &b) in bits.iter().enumerate() {
        out[i / 8] |= u8::from(b) << (i % 8);
    }
    out
}

/// Unpacks exactly `n` bits; `None` if the length is wrong or a padding bit is set.
pub fn unpack_bits(bytes: &[u8], n: usize) -> Option<Vec<bool>> {
    if bytes.len() != n.div_ceil(8) {
        return None;
    }
    if !n.is_multiple_of(8) && bytes.last().is_some_and(|&b| b >> (n % 8) != 0) {
        return None;
    }
    Some((0..n).map(|i| bytes[i / 8] >> (i % 8) & 1 == 1).collect())
}

/// Transposes a 128 x 128 bit matrix in place: afterwards bit `j` of `m[i]` is what bit `i`
/// of `m[j]` was. Seven rounds of masked swaps (the recursive block transpose).
pub fn transpose_128(m: &mut [Block; 128]) {
    let mut width = 64;
    let mut mask: u128 = u128::from(u64::MAX);
    while width > 0 {
        let mut k = 0;
        while k < 128 {
            for i in k..k + width {
                // Swap the high `width`-bit groups of row i with the low groups of row i+width.
                let t = ((m[i] >> width) ^ m[i + width]) & mask;
                m[i] ^= t << width;
                m[i + width] ^= t;
            }
            k += 2 * width;
        }
        width /= 2;
        mask ^= mask << width;
    }
}

/// Transposes 128 columns of `n` bits (column `j` is `cols[j * words..(j + 1) * words]`, bit
/// `i` of the column in bit `i % 128` of word `i / 128`, `words = n / 128`) into `n` rows of
/// 128 bits: bit `j` of row `i` is bit `i` of column `j`. `n` must be a multiple of 128.
pub fn transpose_columns(cols: &[Block], words: usize) -> Vec<Block> {
    let mut rows = vec![0u128; words * 128];
    let mut tile = [0u128; 128];
    for w in 0..words {
        for (j, t) in tile.iter_mut().enumerate() {
            *t = cols[j * words + w];
        }
        transpose_128(&mut tile);
        rows[w * 128..(w + 1) * 128].copy_from_slice(&tile);
    }
    rows
}

const HOLES: [u64; 4] =
    [0x1111_1111_1111_1111, 0x2222_2222_2222_2222, 0x4444_4444_4444_4444, 0x8888_8888_8888_8888];

/// Carry-less product of two 32-bit words (at most 8 terms per bit position, so the 4-bit
/// spacing holds every column sum without carrying into a kept bit).
#[inline]
fn clmul32(a: u32, b: u32) -> u64 {
    let (a, b) = (u64::from(a), u64::from(b));
    let x = HOLES.map(|h| a & h);
    let y = HOLES.map(|h| b & h);
    let mut z = 0u64;
    for (r, hole) in HOLES.iter().enumerate() {
        let mut acc = 0u64;
        for i in 0..4 {
            acc ^= x[i].wrapping_mul(y[(r + 4 - i) % 4]);
        }
        z |= acc & hole;
    }
    z
}

/// Carry-less product of two 64-bit words (Karatsuba over 32-bit halves).
#[inline]
fn clmul64(a: u64, b: u64) -> u128 {
    let (a0, a1) = (a as u32, (a >> 32) as u32);
    let (b0, b1) = (b as u32, (b >> 32) as u32);
    let lo = clmul32(a0, b0);
    let hi = clmul32(a1, b1);
    let mid = clmul32(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
    u128::from(lo) ^ (u128::from(mid) << 32) ^ (u128::from(hi) << 64)
}

/// The unreduced carry-less product of two blocks, as (low, high) halves of 256 bits.
#[inline]
pub fn clmul(a: Block, b: Block) -> (Block, Block) {
    let (a0, a1) = (a as u64, (a >> 64) as u64);
    let (b0, b1) = (b as u64, (b >> 64) as u64);
    let lo = clmul64(a0, b0);
    let hi = clmul64(a1, b1);
    let mid = clmul64(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
    (lo ^ (mid << 64), hi ^ (mid >> 64))
}

/// Reduces a 256-bit carry-less product modulo X^128 + X^7 + X^2 + X + 1.
#[inline]
pub fn reduce(lo: Block, hi: Block) -> Block {
    // X^128 = X^7 + X^2 + X + 1: fold the high half down, twice (the first fold spills at
    // most 7 bits above 128).
    let fold = |h: u128| h ^ (h << 1) ^ (h << 2) ^ (h << 7);
    let spill = (hi >> 127) ^ (hi >> 126) ^ (hi >> 121);
    lo ^ fold(hi) ^ fold(spill)
}

/// Product in GF(2^128).
#[inline]
pub fn gf_mul(a: Block, b: Block) -> Block {
    let (lo, hi) = clmul(a, b);
    reduce(lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::StdRng};

    fn naive_clmul(a: u128, b: u128) -> (u128, u128) {
        let (mut lo, mut hi) = (0u128, 0u128);
        for i in 0..128 {
            if b >> i & 1 == 1 {
                lo ^= a << i;
                if i > 0 {
                    hi ^= a >> (128 - i);
                }
            }
        }
        (lo, hi)
    }

    fn naive_reduce(lo: u128, hi: u128) -> u128 {
        // Bit by bit from the top: X^(128+i) = X^i (X^7 + X^2 + X + 1).
        let (mut lo, mut hi) = (lo, hi);
        for i in (0..128).rev() {
            if hi >> i & 1 == 1 {
                hi ^= 1 << i;
                for s in [0u32, 1, 2, 7] {
                    let pos = i + s;
                    if pos >= 128 {
                        hi ^= 1 << (pos - 128);
                    } else {
                        lo ^= 1 << pos;
                    }
                }
            }
        }
        lo
    }

    #[test]
    fn carry_less_products_match_the_schoolbook_product_at_edges_and_random_values() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut cases = vec![(0, 0), (u128::MAX, u128::MAX), (1, u128::MAX), (1 << 127, 1 << 127)];
        cases.extend((0..200).map(|_| (rng.r#gen::<u128>(), rng.r#gen::<u128>())));
        for (a, b) in cases {
            assert_eq!(clmul(a, b), naive_clmul(a, b), "{a:x} * {b:x}");
            let (lo, hi) = naive_clmul(a, b);
            assert_eq!(gf_mul(a, b), naive_reduce(lo, hi));
        }
    }

    #[test]
    fn the_field_product_is_commutative_distributive_and_has_a_unit() {
        let mut rng = StdRng::seed_from_u64(2);
        for _ in 0..100 {
            let (a, b, c) = (rng.r#gen::<u128>(), rng.r#gen::<u128>(), rng.r#gen::<u128>());
            assert_eq!(gf_mul(a, b), gf_mul(b, a));
            assert_eq!(gf_mul(a, b ^ c), gf_mul(a, b) ^ gf_mul(a, c));
            assert_eq!(gf_mul(a, 1), a);
            assert_eq!(gf_mul(gf_mul(a, b), c), gf_mul(a, gf_mul(b, c)));
        }
    }

    #[test]
    fn transposition_swaps_rows_and_columns() {
        let mut rng = StdRng::seed_from_u64(3);
        let words = 3;
        let cols: Vec<u128> = (0..128 * words).map(|_| rng.r#gen()).collect();
        let rows = transpose_columns(&cols, words);
        for i in 0..128 * words {
            for j in 0..128 {
                let col_bit = cols[j * words + i / 128] >> (i % 128) & 1;
                assert_eq!(rows[i] >> j & 1, col_bit, "row {i} column {j}");
            }
        }
    }

    #[test]
    fn bits_pack_and_padding_is_checked() {
        let bits = [true, false, true, true, false, false, false, true, true];
        let packed = pack_bits(&bits);
        assert_eq!(unpack_bits(&packed, bits.len()).as_deref(), Some(&bits[..]));
        assert!(unpack_bits(&[0, 0b10], 9).is_none());
        assert!(unpack_bits(&[0], 9).is_none());
        assert_eq!(from_bytes(&to_bytes(&[1, u128::MAX])), Some(vec![1, u128::MAX]));
        assert!(from_bytes(&[0; 15]).is_none());
        assert_eq!(select(true, 7), 7);
        assert_eq!(select(false, 7), 0);
    }
}
