//! Fixed-key AES as a public random permutation π, and what this crate builds on it: the
//! tweakable correlation-robust hash of OT extension and the length-doubling PRG of GGM trees.
//!
//! - **TCR hash** (Guo, Katz, Wang, Yu, "Efficient and Secure Multiparty Computation from
//!   Fixed-Key Block Ciphers"): `H(x, i) = π(π(x) ⊕ i) ⊕ π(x)`, secure in the ideal
//!   permutation model for correlated inputs `x`, `x ⊕ Δ` as long as no tweak `i` is used
//!   twice under one Δ. Callers pass a tweak base and each instance adds its index.
//! - **GGM expansion**: `G(s) = (π₀(s) ⊕ s, π₁(s) ⊕ s)` with two independent fixed keys
//!   (Matyas–Meyer–Oseas), as in Ferret's trees.
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

/// The two fixed-key permutations of the GGM tree PRG.
#[derive(Clone, Debug)]
pub struct Ggm {
    left: Prp,
    right: Prp,
}

impl Default for Ggm {
    fn default() -> Self {
        Ggm { left: Prp::fixed("ggm/left"), right: Prp::fixed("ggm/right") }
    }
}

impl Ggm {
    /// Expands one level of `n = parents.len()` nodes into `out[..2n]`: the left child of
    /// node `j` at `out[j]`, its right child at `out[n + j]`.
    pub fn expand_halves(&self, parents: &[Block], out: &mut [Block], n: usize) {
        let (left, right) = out[..2 * n].split_at_mut(n);
        left.copy_from_slice(parents);
        right.copy_from_slice(parents);
        self.left.permute(left);
        self.right.permute(right);
        for ((l, r), p) in left.iter_mut().zip(right.iter_mut()).zip(parents) {
            *l ^= p;
            *r ^= p;
        }
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
    fn ggm_children_come_from_their_parent() {
        let ggm = Ggm::default();
        let parents = vec![1u128, 2, 3];
        let mut children = vec![0u128; 6];
        ggm.expand_halves(&parents, &mut children, 3);
        let mut one = vec![0u128; 2];
        ggm.expand_halves(&[2], &mut one, 1);
        assert_eq!([children[1], children[4]], [one[0], one[1]]);
        assert_ne!(children[0], children[3]);
    }
}
