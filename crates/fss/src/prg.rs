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
//! The AES keys are nothing-up-my-sleeve constants (ASCII labels), their schedules run once per
//! process ([`FixedAes::get`]); whole tree levels, all leaves' `Convert` blocks and all leaf
//! hashes go through [`crate::mmo`] in one pass each (VAES or AES-NI where the processor has
//! them, constant time).

use aes::Aes128;
use aes::cipher::{BlockEncrypt, generic_array::GenericArray};
use veil_ring::Ring;

use crate::mmo::Mmo;

/// Fixed public key of the tree PRG `G`.
const TREE_KEY: [u8; 16] = *b"veil-fss:tree-G\0";
/// Fixed public key of `Convert`.
const CONVERT_KEY: [u8; 16] = *b"veil-fss:convert";

/// Fixed public key of the leaf hash `H`.
const LEAF_KEY: [u8; 16] = *b"veil-fss:leaf-H\0";

/// Bytes of one leaf hash `H(x ‖ s)` (4λ bits).
pub(crate) const LEAF_HASH_BYTES: usize = 64;

/// `u128` words of one leaf hash.
pub(crate) const LEAF_HASH_WORDS: usize = LEAF_HASH_BYTES / 16;

/// Mask clearing the control bit (bit 0) of a seed.
pub(crate) const SEED_MASK: u128 = !1;

/// The three fixed-key ciphers used by the tree and its verification.
pub(crate) struct FixedAes {
    tree: Mmo,
    convert: Mmo,
    leaf: Mmo,
    /// `Convert`'s cipher for the blocks after the first (rings wider than 96 bits).
    convert_tail: Aes128,
}

impl FixedAes {
    /// The process's ciphers: the key schedules run once (every key generation and expansion
    /// ran all three before).
    pub(crate) fn get() -> &'static Self {
        static AES: std::sync::OnceLock<FixedAes> = std::sync::OnceLock::new();
        AES.get_or_init(|| Self {
            tree: Mmo::new(TREE_KEY),
            convert: Mmo::new(CONVERT_KEY),
            leaf: Mmo::new(LEAF_KEY),
            convert_tail: aes::cipher::KeyInit::new(&CONVERT_KEY.into()),
        })
    }

    /// The input of block `i` of `H(x ‖ s)`: `s ⊕ τ(x, i)` (`s` with its low bit cleared).
    #[inline]
    fn leaf_input(x: u64, s: u128, i: u128) -> u128 {
        (s & SEED_MASK) ^ (u128::from(x) << 64) ^ (i << 1)
    }

    /// Appends the inputs of the four blocks of `H(x ‖ s_k)` for `x = first + k` to `out` (the
    /// low bit of each seed, where a control bit may be kept, is ignored); one
    /// [`Self::leaf_hash_in_place`] over them gives the hashes.
    pub(crate) fn leaf_hash_inputs(&self, first: u64, seeds: &[u128], out: &mut Vec<u128>) {
        let start = out.len();
        out.resize(start + LEAF_HASH_WORDS * seeds.len(), 0);
        for (words, (x, &s)) in out[start..].chunks_exact_mut(LEAF_HASH_WORDS).zip((first..).zip(seeds)) {
            for (w, i) in words.iter_mut().zip(0..) {
                *w = Self::leaf_input(x, s, i);
            }
        }
    }

    /// `MMO''` of every block, in place: leaf-hash inputs become leaf hashes.
    pub(crate) fn leaf_hash_in_place(&self, words: &mut [u128]) {
        self.leaf.hash_in_place(words);
    }

    /// Appends the four words of `H(x ‖ s_k)` for `x = first + k` to `out`, every block in one
    /// pipelined pass.
    #[cfg(test)]
    pub(crate) fn leaf_hash_words(&self, first: u64, seeds: &[u128], out: &mut Vec<u128>) {
        let start = out.len();
        self.leaf_hash_inputs(first, seeds, out);
        self.leaf_hash_in_place(&mut out[start..]);
    }

    /// `H(x ‖ s)` for one leaf.
    #[cfg(test)]
    pub(crate) fn leaf_hash(&self, x: u64, s: u128) -> [u8; LEAF_HASH_BYTES] {
        let mut words: [u128; LEAF_HASH_WORDS] = core::array::from_fn(|i| Self::leaf_input(x, s, i as u128));
        self.leaf_hash_in_place(&mut words);
        let mut h = [0u8; LEAF_HASH_BYTES];
        for (chunk, w) in h.chunks_exact_mut(16).zip(&words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        h
    }

    /// `G(s) = (s_L, t_L, s_R, t_R)` for a single seed.
    pub(crate) fn expand(&self, s: u128) -> (u128, bool, u128, bool) {
        let mut blocks = [s, s ^ 1];
        self.tree.hash_in_place(&mut blocks);
        let [l, r] = blocks;
        (l & SEED_MASK, l & 1 == 1, r & SEED_MASK, r & 1 == 1)
    }

    /// `MMO(x)` under the tree key, in place: with `x = s` and `x = s | 1` the two children of a
    /// seed `s` (before correction).
    pub(crate) fn tree_in_place(&self, blocks: &mut [u128]) {
        self.tree.hash_in_place(blocks);
    }

    /// `Convert(s)` for one leaf seed.
    pub(crate) fn convert<R: Ring>(&self, s: u128) -> R {
        self.convert_with_first(s, self.convert.hash(s))
    }

    /// The first `MMO'` block of every seed, in place.
    pub(crate) fn convert_in_place(&self, seeds: &mut [u128]) {
        self.convert.hash_in_place(seeds);
    }

    /// `Convert(s)` given its precomputed first block.
    #[inline]
    pub(crate) fn convert_with_first<R: Ring>(&self, s: u128, first: u128) -> R {
        let mut rng =
            ConvertRng { aes: &self.convert_tail, seed: s, counter: 0, block: first.to_le_bytes(), pos: 0 };
        R::random(&mut rng)
    }
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
        let mut b = GenericArray::from(input.to_le_bytes());
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
    use aes::cipher::KeyInit;
    use veil_ring::Z64;

    /// `MMO_K(x)` by the `aes` crate, one block at a time.
    fn mmo(key: [u8; 16], x: u128) -> u128 {
        let mut b = GenericArray::from(x.to_le_bytes());
        Aes128::new(&key.into()).encrypt_block(&mut b);
        u128::from_le_bytes(b.into()) ^ x
    }

    #[test]
    fn tree_expansion_is_mmo_of_the_seed_and_its_sibling_input() {
        let aes = FixedAes::get();
        for j in 0..37u128 {
            let s = j.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834) & SEED_MASK;
            let (l, r) = (mmo(TREE_KEY, s), mmo(TREE_KEY, s ^ 1));
            assert_eq!(aes.expand(s), (l & SEED_MASK, l & 1 == 1, r & SEED_MASK, r & 1 == 1));
            let mut level = [s, s | 1];
            aes.tree_in_place(&mut level);
            assert_eq!(level, [l, r]);
        }
    }

    #[test]
    fn leaf_hash_batch_matches_single_and_separates_inputs() {
        let aes = FixedAes::get();
        let seeds = [2u128, 2, 1 << 100];
        let mut batch = Vec::new();
        aes.leaf_hash_words(5, &seeds, &mut batch);
        let singles: Vec<[u8; 64]> = (5u64..).zip(&seeds).map(|(x, &s)| aes.leaf_hash(x, s)).collect();
        for (k, h) in singles.iter().enumerate() {
            for i in 0..4 {
                assert_eq!(batch[4 * k + i].to_le_bytes(), h[16 * i..16 * (i + 1)]);
                // Block i of H(x ‖ s) is MMO''(s ⊕ x·2^64 ⊕ 2i).
                let input = seeds[k] ^ (u128::from(5 + k as u64) << 64) ^ ((i as u128) << 1);
                assert_eq!(batch[4 * k + i], mmo(LEAF_KEY, input));
            }
        }
        // Same seed at two points, and the four blocks of one hash, all differ; the low bit
        // (where a control bit may be kept) is ignored.
        assert_ne!(singles[0], singles[1]);
        let blocks: std::collections::HashSet<&[u8]> = singles[0].chunks(16).collect();
        assert_eq!(blocks.len(), 4);
        assert_ne!(aes.leaf_hash(0, 2), aes.leaf_hash(0, 4));
        assert_eq!(aes.leaf_hash(0, 2), aes.leaf_hash(0, 3));
    }

    #[test]
    fn convert_batch_matches_single_and_differs_per_seed() {
        let aes = FixedAes::get();
        let seeds = [2u128, 4, 6];
        let mut firsts = seeds;
        aes.convert_in_place(&mut firsts);
        for (s, f) in seeds.iter().zip(&firsts) {
            assert_eq!(*f, mmo(CONVERT_KEY, *s));
            assert_eq!(aes.convert::<Z64>(*s), aes.convert_with_first::<Z64>(*s, *f));
            assert_eq!(aes.convert::<Z64>(*s).0, *f as u64);
        }
        assert_ne!(aes.convert::<Z64>(2), aes.convert::<Z64>(4));
        let mut rng = ConvertRng { aes: &aes.convert_tail, seed: 8, counter: 0, block: [0; 16], pos: 0 };
        let mut long = [0u8; 40];
        rand_core::RngCore::fill_bytes(&mut rng, &mut long);
        assert_ne!(long[..16], long[16..32]);
        assert_eq!(long[16..32], mmo(CONVERT_KEY, 8 ^ (1u128 << 64)).to_le_bytes());
    }
}
