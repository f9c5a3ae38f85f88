//! The fixed-key AES primitives behind the tree: the length-doubling PRG `G` and `Convert`.
//!
//! Seeds are 128-bit blocks (`λ = 128`) stored as `u128` (little-endian byte order).
//! Following Boyle–Gilboa–Ishai (CCS 2016, "Function secret sharing: improvements and
//! extensions") and common DPF implementations, the control bit of a child is the least
//! significant bit of its PRG block and that bit is then cleared in the child seed, so tree
//! seeds carry 127 pseudorandom bits.
//!
//! * `G(s) = (s_L ‖ t_L, s_R ‖ t_R)` with `s_L ‖ t_L = MMO(s)` and `s_R ‖ t_R = MMO(s ⊕ 1)`, where
//!   `MMO(x) = AES_K(x) ⊕ x` is the Matyas–Meyer–Oseas compression function with a fixed,
//!   public key `K` (a correlation-robust hash in the ideal-permutation model, Guo et al.,
//!   S&P 2020). Tree seeds have a zero low bit, so `s` and `s ⊕ 1` never collide with another
//!   seed: every AES input is fresh.
//! * `Convert(s)`: the output-group element of a leaf seed, sampled by `Ring::random` from the
//!   stream `MMO'(s), MMO'(s ⊕ 2^64), MMO'(s ⊕ 2·2^64), …` under a second fixed key `K'`.
//!   For `Z_{2^ℓ}` with `ℓ ≤ 64` only the first block is used.
//!
//! * `H(x ‖ s)`, the VDPF's leaf hash (4λ = 512 bits, [`crate::vdpf`]): four `MMO''` blocks
//!   under a third fixed key `K''`, `H(x ‖ s) = ‖_{i<4} MMO''(s ⊕ τ(x, i))` with the tweak
//!   `τ(x, i) = x·2^64 + 2i` (injective in `(x, i)`, so one seed gives 4·2^d distinct inputs).
//!   In the ideal-permutation model, which the tree PRG already relies on, this is a random
//!   function from 128 to 512 bits on each `x`: finding a collision or an XOR-collision takes
//!   far beyond 2^128 work. A keyed BLAKE3 call per leaf cost about 130 cycles; four pipelined
//!   AES blocks cost a tenth of that, and the leaf hash was half the time of a verified
//!   full-domain expansion.
//!
//! The AES keys are nothing-up-my-sleeve constants (ASCII labels); AES-NI makes every call
//! constant time, and [`expand_level`] pipelines whole tree levels through `encrypt_blocks`.

use aes::Aes128;
use aes::cipher::{BlockEncrypt, KeyInit, generic_array::GenericArray};
use veil_ring::Ring;

/// AES block type of the `aes` crate.
pub(crate) type Block = GenericArray<u8, aes::cipher::consts::U16>;

/// Fixed public key of the tree PRG `G`.
const TREE_KEY: [u8; 16] = *b"veil-fss:tree-G\0";
/// Fixed public key of `Convert`.
const CONVERT_KEY: [u8; 16] = *b"veil-fss:convert";

/// Fixed public key of the leaf hash `H`.
const LEAF_KEY: [u8; 16] = *b"veil-fss:leaf-H\0";

/// Bytes of one leaf hash `H(x ‖ s)` (4λ bits).
pub(crate) const LEAF_HASH_BYTES: usize = 64;

/// Mask clearing the control bit (bit 0) of a seed.
pub(crate) const SEED_MASK: u128 = !1;

/// The three fixed-key ciphers used by the tree and its verification.
pub(crate) struct FixedAes {
    tree: Aes128,
    convert: Aes128,
    leaf: Aes128,
}

impl FixedAes {
    /// Runs the three AES key schedules.
    pub(crate) fn new() -> Self {
        Self {
            tree: Aes128::new(&TREE_KEY.into()),
            convert: Aes128::new(&CONVERT_KEY.into()),
            leaf: Aes128::new(&LEAF_KEY.into()),
        }
    }

    /// Appends `H(x ‖ seeds[k])` for `x = first + k` to `out`, 64 bytes each, all blocks in one
    /// pipelined `encrypt_blocks` call; `blocks` is scratch space.
    pub(crate) fn leaf_hashes(&self, first: u64, seeds: &[u128], blocks: &mut Vec<Block>, out: &mut Vec<u8>) {
        // Block 4k + i is the input `s_k ⊕ τ(x, i)`; `leaf_input` rebuilds it for the feed-forward.
        let leaf_input = |x: u64, s: u128, i: u128| s ^ (u128::from(x) << 64) ^ (i << 1);
        blocks.resize(4 * seeds.len(), Block::default());
        for (four, (x, &s)) in blocks.chunks_exact_mut(4).zip((first..).zip(seeds)) {
            for (b, i) in four.iter_mut().zip(0..4u128) {
                *b = Block::from(leaf_input(x, s, i).to_le_bytes());
            }
        }
        self.leaf.encrypt_blocks(blocks);
        let start = out.len();
        out.resize(start + LEAF_HASH_BYTES * seeds.len(), 0);
        let hashes = out[start..].chunks_exact_mut(LEAF_HASH_BYTES);
        for ((hash, four), (x, &s)) in hashes.zip(blocks.chunks_exact(4)).zip((first..).zip(seeds)) {
            for ((word, b), i) in hash.chunks_exact_mut(16).zip(four).zip(0..4u128) {
                let v = u128::from_le_bytes((*b).into()) ^ leaf_input(x, s, i);
                word.copy_from_slice(&v.to_le_bytes());
            }
        }
    }

    /// `H(x ‖ s)` for one leaf.
    pub(crate) fn leaf_hash(&self, x: u64, s: u128) -> [u8; LEAF_HASH_BYTES] {
        let mut out = Vec::with_capacity(LEAF_HASH_BYTES);
        self.leaf_hashes(x, &[s], &mut Vec::new(), &mut out);
        let mut h = [0u8; LEAF_HASH_BYTES];
        h.copy_from_slice(&out);
        h
    }

    /// `G(s) = (s_L, t_L, s_R, t_R)` for a single seed.
    pub(crate) fn expand(&self, s: u128) -> (u128, bool, u128, bool) {
        let mut blocks = [Block::from(s.to_le_bytes()), Block::from((s ^ 1).to_le_bytes())];
        self.tree.encrypt_blocks(&mut blocks);
        let l = u128::from_le_bytes(blocks[0].into()) ^ s;
        let r = u128::from_le_bytes(blocks[1].into()) ^ s ^ 1;
        (l & SEED_MASK, l & 1 == 1, r & SEED_MASK, r & 1 == 1)
    }

    /// Expands a whole level: `children[2j], children[2j+1] = G(parents[j])` (seed and control
    /// bit, before correction). `children` must have twice the length of `parents`.
    pub(crate) fn expand_level(&self, parents: &[u128], children: &mut [Block]) {
        for (pair, &s) in children.chunks_exact_mut(2).zip(parents) {
            pair[0] = Block::from(s.to_le_bytes());
            pair[1] = Block::from((s ^ 1).to_le_bytes());
        }
        self.tree.encrypt_blocks(children);
    }

    /// `Convert(s)` for one leaf seed.
    pub(crate) fn convert<R: Ring>(&self, s: u128) -> R {
        let first = self.convert_blocks(&[s]);
        self.convert_with_first(s, first.first().copied().unwrap_or_default())
    }

    /// First `MMO'` block for every leaf seed, batched.
    pub(crate) fn convert_blocks(&self, seeds: &[u128]) -> Vec<u128> {
        let mut firsts = Vec::with_capacity(seeds.len());
        self.convert_blocks_into(seeds, &mut Vec::new(), &mut firsts);
        firsts
    }

    /// [`Self::convert_blocks`] into `firsts`, with `blocks` as scratch space.
    pub(crate) fn convert_blocks_into(
        &self,
        seeds: &[u128],
        blocks: &mut Vec<Block>,
        firsts: &mut Vec<u128>,
    ) {
        blocks.clear();
        blocks.extend(seeds.iter().map(|s| Block::from(s.to_le_bytes())));
        self.convert.encrypt_blocks(blocks);
        firsts.clear();
        firsts.extend(blocks.iter().zip(seeds).map(|(b, s)| u128::from_le_bytes((*b).into()) ^ s));
    }

    /// `Convert(s)` given its precomputed first block.
    pub(crate) fn convert_with_first<R: Ring>(&self, s: u128, first: u128) -> R {
        let mut rng =
            ConvertRng { aes: &self.convert, seed: s, counter: 0, block: first.to_le_bytes(), pos: 0 };
        R::random(&mut rng)
    }
}

/// Reads an expanded child block back as `(seed, control bit)`, undoing the MMO feed-forward.
#[inline]
pub(crate) fn child(block: &Block, input: u128) -> (u128, bool) {
    let v = u128::from_le_bytes((*block).into()) ^ input;
    (v & SEED_MASK, v & 1 == 1)
}

/// The deterministic byte stream that `Convert` feeds to `Ring::random`.
struct ConvertRng<'a> {
    aes: &'a Aes128,
    seed: u128,
    counter: u64,
    block: [u8; 16],
    pos: usize,
}

impl ConvertRng<'_> {
    fn refill(&mut self) {
        self.counter = self.counter.wrapping_add(1);
        let input = self.seed ^ (u128::from(self.counter) << 64);
        let mut b = Block::from(input.to_le_bytes());
        self.aes.encrypt_block(&mut b);
        self.block = (u128::from_le_bytes(b.into()) ^ input).to_le_bytes();
        self.pos = 0;
    }
}

impl rand_core::RngCore for ConvertRng<'_> {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        if let Some(bytes) = self.block.get(self.pos..self.pos + 4) {
            // The common case (every ring up to 96 bits reads within the first block).
            b.copy_from_slice(bytes);
            self.pos += 4;
        } else {
            self.fill_bytes(&mut b);
        }
        u32::from_le_bytes(b)
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        if let Some(bytes) = self.block.get(self.pos..self.pos + 8) {
            b.copy_from_slice(bytes);
            self.pos += 8;
        } else {
            self.fill_bytes(&mut b);
        }
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for byte in dest {
            if self.pos == 16 {
                self.refill();
            }
            *byte = self.block[self.pos];
            self.pos += 1;
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use veil_ring::Z64;

    #[test]
    fn level_expansion_matches_single_expansion() {
        let aes = FixedAes::new();
        let parents: Vec<u128> = (0..37u128)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834) & SEED_MASK)
            .collect();
        let mut children = vec![Block::default(); 2 * parents.len()];
        aes.expand_level(&parents, &mut children);
        for (j, &s) in parents.iter().enumerate() {
            let (sl, tl, sr, tr) = aes.expand(s);
            assert_eq!(child(&children[2 * j], s), (sl, tl));
            assert_eq!(child(&children[2 * j + 1], s ^ 1), (sr, tr));
        }
    }

    #[test]
    fn leaf_hash_batch_matches_single_and_separates_inputs() {
        let aes = FixedAes::new();
        let seeds = [2u128, 2, 1 << 100];
        let mut batch = Vec::new();
        aes.leaf_hashes(5, &seeds, &mut Vec::new(), &mut batch);
        let singles: Vec<[u8; 64]> = (5u64..).zip(&seeds).map(|(x, &s)| aes.leaf_hash(x, s)).collect();
        for (k, h) in singles.iter().enumerate() {
            assert_eq!(&batch[64 * k..64 * (k + 1)], h);
        }
        // Same seed at two points, and the four blocks of one hash, all differ.
        assert_ne!(singles[0], singles[1]);
        let blocks: std::collections::HashSet<&[u8]> = singles[0].chunks(16).collect();
        assert_eq!(blocks.len(), 4);
        assert_ne!(aes.leaf_hash(0, 2), aes.leaf_hash(0, 4));
    }

    #[test]
    fn convert_batch_matches_single_and_differs_per_seed() {
        let aes = FixedAes::new();
        let seeds = [2u128, 4, 6];
        let firsts = aes.convert_blocks(&seeds);
        for (s, f) in seeds.iter().zip(&firsts) {
            assert_eq!(aes.convert::<Z64>(*s), aes.convert_with_first::<Z64>(*s, *f));
        }
        assert_ne!(aes.convert::<Z64>(2), aes.convert::<Z64>(4));
        let mut rng = ConvertRng { aes: &aes.convert, seed: 8, counter: 0, block: [0; 16], pos: 0 };
        let mut long = [0u8; 40];
        rand_core::RngCore::fill_bytes(&mut rng, &mut long);
        assert_ne!(long[..16], long[16..32]);
    }
}
