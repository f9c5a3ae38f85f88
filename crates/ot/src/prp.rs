//! Fixed-key AES as a public random permutation π, and what this crate builds on it: the
//! tweakable correlation-robust hash of OT extension and the length-doubling PRG of GGM trees.
//!
//! - **TCR hash** (Guo, Katz, Wang, Yu, "Efficient and Secure Multiparty Computation from
//!   Fixed-Key Block Ciphers"): `H(x, i) = π(π(x) ⊕ i) ⊕ π(x)`, secure in the ideal
//!   permutation model for correlated inputs `x`, `x ⊕ Δ` as long as no tweak `i` is used
//!   twice under one Δ. Callers pass a tweak base and each instance adds its index.
//! - **CCR hash** (same paper, §7): `H(x) = π(σ(x)) ⊕ σ(x)` with the linear orthomorphism
//!   `σ(x_L ‖ x_R) = (x_L ⊕ x_R) ‖ x_L` on 64-bit halves, circular correlation robust: the
//!   values `H(x_i ⊕ Δ) ⊕ b_i·Δ` cannot be told from random without Δ.
//! - **Half-Tree expansion** (Guo, Yang, Wang, Zhang, Xie, Zhang, Liu, "Half-Tree: Halving
//!   the Cost of Tree Expansion in COT and DPF", Eurocrypt 2023): node `x` has the children
//!   `H(x)` and `x ⊕ H(x)`, one π call per node, and the two children XOR to their parent.
//!
//! The keys are public constants derived from labels; security rests on AES behaving as an
//! ideal permutation, the standard assumption of fixed-key OT extension.

use aes::Aes128Enc;
use aes::cipher::consts::U16;
use aes::cipher::inout::InOutBuf;
use aes::cipher::{BlockEncrypt, KeyInit};
use zerocopy::IntoBytes;

use crate::block::Block;

/// AES-128 under a fixed public key.
#[derive(Clone)]
pub struct Prp {
    cipher: Aes128Enc,
}

impl std::fmt::Debug for Prp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prp")
    }
}

impl Prp {
    /// The permutation keyed by a public label.
    pub fn fixed(label: &str) -> Self {
        let digest = veil_crypto::hash("veil/ot/fixed-key", label.as_bytes());
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest.0[..16]);
        Prp { cipher: Aes128Enc::new(&key.into()) }
    }

    /// The permutation under a given public key.
    pub fn with_key(key: [u8; 16]) -> Self {
        Prp { cipher: Aes128Enc::new(&key.into()) }
    }

    /// π applied to every block, in place (pipelined AES).
    pub fn permute(&self, blocks: &mut [Block]) {
        let bytes = blocks.as_mut_bytes();
        let (chunks, _tail) = InOutBuf::from(bytes).into_chunks::<U16>();
        self.cipher.encrypt_blocks_inout(chunks);
    }

    /// π of one block.
    pub fn permute_one(&self, x: Block) -> Block {
        let mut b = [x];
        self.permute(&mut b);
        b[0]
    }
}

/// The tweakable correlation-robust hash `H(x, tweak + i)` of every `xs[i]`, in place
/// (through a small scratch buffer, so hashing millions of blocks allocates nothing large).
pub fn tcr_hash(prp: &Prp, xs: &mut [Block], tweak: u128) {
    const CHUNK: usize = 256;
    let mut first = [0u128; CHUNK];
    for (c, xs) in xs.chunks_mut(CHUNK).enumerate() {
        let first = &mut first[..xs.len()];
        first.copy_from_slice(xs);
        prp.permute(first);
        let base = tweak.wrapping_add((c * CHUNK) as u128);
        for (i, (x, p)) in xs.iter_mut().zip(first.iter()).enumerate() {
            *x = p ^ base.wrapping_add(i as u128);
        }
        prp.permute(xs);
        for (x, p) in xs.iter_mut().zip(first.iter()) {
            *x ^= p;
        }
    }
}

/// The orthomorphism `σ(x_L ‖ x_R) = (x_L ⊕ x_R) ‖ x_L` (high half `x_L`).
fn sigma(x: Block) -> Block {
    let (high, low) = (x >> 64, x & u128::from(u64::MAX));
    (high ^ low) << 64 | high
}

/// The circular correlation-robust hash `H(x) = π(σ(x)) ⊕ σ(x)` of every block, in place.
pub fn ccr_hash(prp: &Prp, xs: &mut [Block]) {
    for x in xs.iter_mut() {
        *x = sigma(*x);
    }
    const CHUNK: usize = 256;
    let mut image = [0u128; CHUNK];
    for xs in xs.chunks_mut(CHUNK) {
        let image = &mut image[..xs.len()];
        image.copy_from_slice(xs);
        prp.permute(image);
        for (x, p) in xs.iter_mut().zip(image.iter()) {
            *x ^= p;
        }
    }
}

/// The tree expansion of Half-Tree: children `H(x)` (left) and `x ⊕ H(x)` (right).
#[derive(Clone, Debug)]
pub struct HalfTree {
    prp: Prp,
}

impl Default for HalfTree {
    fn default() -> Self {
        HalfTree { prp: Prp::fixed("half-tree/ccr") }
    }
}

impl HalfTree {
    /// Expands one level of `n` nodes, `parents = level[..n]`, into `level[..2n]`: the left
    /// child of node `j` at `level[j]`, its right child at `level[n + j]`. Returns the XOR of
    /// the left children (the right ones XOR to that and the parents' XOR).
    pub fn expand(&self, level: &mut [Block], n: usize) -> Block {
        let (left, right) = level[..2 * n].split_at_mut(n);
        right.copy_from_slice(left);
        ccr_hash(&self.prp, left);
        let mut sum = 0;
        for (l, r) in left.iter().zip(right.iter_mut()) {
            *r ^= l;
            sum ^= l;
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tcr_hash_separates_tweaks_and_inputs() {
        let prp = Prp::fixed("test");
        let mut a = vec![5u128, 5, 6];
        tcr_hash(&prp, &mut a, 10);
        assert_ne!(a[0], a[1], "same input, different tweak");
        assert_ne!(a[0], a[2]);
        let mut b = vec![5u128];
        tcr_hash(&prp, &mut b, 10);
        assert_eq!(a[0], b[0], "deterministic");
        let p = prp.permute_one(5);
        assert_eq!(b[0], prp.permute_one(p ^ 10) ^ p);
    }

    #[test]
    fn half_tree_children_come_from_their_parent_and_xor_to_it() {
        let tree = HalfTree::default();
        let mut level = vec![1u128, 2, 3, 0, 0, 0];
        let sum = tree.expand(&mut level, 3);
        let mut one = vec![2u128, 0];
        tree.expand(&mut one, 1);
        assert_eq!([level[1], level[4]], [one[0], one[1]]);
        assert_eq!(sum, level[0] ^ level[1] ^ level[2]);
        for j in 0..3 {
            assert_eq!(level[j] ^ level[3 + j], [1u128, 2, 3][j]);
        }
        let mut h = vec![2u128];
        ccr_hash(&Prp::fixed("half-tree/ccr"), &mut h);
        assert_eq!(h[0], level[1]);
        assert_ne!(level[0], level[3]);
    }

    #[test]
    fn sigma_is_an_orthomorphism_on_samples() {
        // σ and x ↦ σ(x) ⊕ x are both permutations: check injectivity on a sample.
        let xs: Vec<Block> =
            (0..1000u128).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)).collect();
        let mut a: Vec<Block> = xs.iter().map(|&x| sigma(x)).collect();
        let mut b: Vec<Block> = xs.iter().map(|&x| sigma(x) ^ x).collect();
        a.sort_unstable();
        a.dedup();
        b.sort_unstable();
        b.dedup();
        assert_eq!((a.len(), b.len()), (1000, 1000));
        assert_eq!(sigma(1u128 << 64 | 2), 3u128 << 64 | 1);
    }
}
