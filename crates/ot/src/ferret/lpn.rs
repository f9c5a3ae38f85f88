//! The LPN encoding of Ferret: `y = A·x ⊕ e`, with `A` an `n × k` matrix over GF(2) of
//! [`LPN_D`] random nonzeros per row (Ferret's local linear code), applied to COT blocks.
//!
//! Row `i` of `A` is public: its column indices come from fixed-key AES under a key both
//! parties derive from the session and the pair, on inputs `(i, 0..3)`, each 32-bit word
//! mapped into `[0, k)` by `⌊word·k / 2^32⌋` (bias below `k / 2^32`, about 2^-13 for the main
//! set; the LPN assumption is stated for such codes). Because `A` is linear, applying it to
//! the sender's blocks `v` and to the receiver's blocks `w = v ⊕ c·Δ` keeps the correlation,
//! with choice vector `A·c`.

use rayon::prelude::*;

use super::params::LPN_D;
use crate::block::Block;
use crate::prp::Prp;

const ROWS_PER_TASK: usize = 1 << 14;
/// Rows whose indices are made in one AES batch (kept in L1).
const ROWS_PER_SLICE: usize = 256;

/// A public LPN matrix with `k` columns.
#[derive(Clone, Debug)]
pub(crate) struct LpnMatrix {
    prp: Prp,
    k: usize,
}

impl LpnMatrix {
    pub(crate) fn new(key: [u8; 16], k: usize) -> Self {
        LpnMatrix { prp: Prp::with_key(key), k }
    }

    /// The column indices of row `i`.
    #[cfg(test)]
    pub(crate) fn row(&self, i: usize) -> Vec<usize> {
        let mut blocks: Vec<Block> = (0..3).map(|j| (i as u128) << 2 | j).collect();
        self.prp.permute(&mut blocks);
        self.indices(&blocks).collect()
    }

    #[cfg(test)]
    fn indices<'a>(&self, blocks: &'a [Block]) -> impl Iterator<Item = usize> + 'a {
        let k = self.k as u64;
        blocks
            .iter()
            .flat_map(|b| (0..4).map(move |w| (b >> (32 * w)) as u32))
            .take(LPN_D)
            .map(move |word| ((u64::from(word) * k) >> 32) as usize)
    }

    /// `out[i] ^= ⊕_{j ∈ row i} x[j]` for every row (`out` holds `e`, `x` the secret).
    pub(crate) fn encode(&self, x: &[Block], out: &mut [Block]) {
        debug_assert_eq!(x.len(), self.k);
        let k = self.k as u64;
        out.par_chunks_mut(ROWS_PER_TASK).enumerate().for_each(|(task, rows)| {
            let mut blocks = vec![0u128; 3 * ROWS_PER_SLICE];
            for (slice, rows) in rows.chunks_mut(ROWS_PER_SLICE).enumerate() {
                let first = (task * ROWS_PER_TASK + slice * ROWS_PER_SLICE) as u128;
                let blocks = &mut blocks[..3 * rows.len()];
                for (i, b) in blocks.iter_mut().enumerate() {
                    *b = (first + (i / 3) as u128) << 2 | (i % 3) as u128;
                }
                self.prp.permute(blocks);
                for (y, b) in rows.iter_mut().zip(blocks.chunks_exact(3)) {
                    let mut acc = *y;
                    for word in 0..LPN_D {
                        let w = (b[word / 4] >> (32 * (word % 4))) as u32;
                        acc ^= x[((u64::from(w) * k) >> 32) as usize];
                    }
                    *y = acc;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_xors_the_rows_columns() {
        let m = LpnMatrix::new([7; 16], 50);
        let x: Vec<Block> = (0..50u128).map(|i| i * 0x1234_5678_9abc + 1).collect();
        let mut out = vec![0u128; 100];
        out[3] = 99;
        m.encode(&x, &mut out);
        for (i, &y) in out.iter().enumerate() {
            let row = m.row(i);
            assert_eq!(row.len(), LPN_D);
            assert!(row.iter().all(|&j| j < 50));
            let expect = row.iter().fold(if i == 3 { 99 } else { 0 }, |a, &j| a ^ x[j]);
            assert_eq!(y, expect, "row {i}");
        }
    }
}
