//! Regular multi-point COT: `t` single-point COTs, one tree of depth `h` each (Ferret §3),
//! expanded as a Half-Tree (Guo, Yang, Wang, Zhang, Xie, Zhang, Liu, "Half-Tree: Halving the
//! Cost of Tree Expansion in COT and DPF", Eurocrypt 2023, §4).
//!
//! For each tree the sender holds `2^h` leaves `s_j` and the receiver learns every leaf but
//! one, at a position α it does not pick (α is uniform because the COTs' choices are). Node
//! `x` has the children `H(x)` and `x ⊕ H(x)` (`H` the circular correlation-robust hash of
//! [`crate::prp`]), so siblings XOR to their parent and every level XORs to the same value.
//!
//! ```text
//! level 1:  the nodes v_1 and v_1 ⊕ Δ (the sender's block of the tree's first COT): XOR Δ
//! level l:  K_l^0 = ⊕ left children,  K_l^1 = ⊕ right children = K_l^0 ⊕ Δ
//! sender → receiver, levels 2..h:   c_l = K_l^0 ⊕ v_l
//! ```
//!
//! The receiver holds `w_l = v_l ⊕ b_l·Δ`. At level 1 `w_1` is the node at position `b_1`; at
//! level `l ≥ 2` it opens `c_l ⊕ w_l = K_l^{b_l}`, the XOR of the side off its path, and
//! rebuilds the one child of its path's node it lacks there; α's digit is `¬b_l` throughout.
//! The leaves XOR to Δ, so the receiver sets its leaf at α to `⊕_{j≠α} s_j = s_α ⊕ Δ`: the
//! sender's vector is `s`, the receiver's `s ⊕ e_α·Δ`, a COT with a unit choice vector.
//!
//! **Cost.** Per tree `h` COTs, `h − 1` blocks from the sender, nothing back; one π call per
//! node (a GGM tree of two PRG halves sends `2h + 1` blocks and calls π twice per node).
//!
//! **Layout.** At each level the children of node `p` (of `P` nodes) sit at `p` (left) and
//! `p + P` (right), so a side is a contiguous half. Leaf `j` of tree `i` is output `i·2^h + j`.
//!
//! **Security.** Semi-honest: a malicious sender could send inconsistent sums and learn
//! whether the receiver's α lies in a chosen set (the selective-failure attack that Ferret's
//! consistency check closes). The families on top of this engine (`mm`, `blb`, `spin`) are
//! semi-honest. The Half-Tree paper proves the semi-honest protocol secure when `H` is
//! circular correlation robust, which the fixed-key construction is in the ideal permutation
//! model.

use rayon::prelude::*;
use veil_mpc::{Ctx, PartyId, Result};

use super::params::LpnParams;
use crate::block::{Block, lsb};
use crate::io;
use crate::prp::HalfTree;

const STEP: &str = "Ferret: Half-Tree level sums";

/// Blocks the sender sends per tree of depth `h`.
pub(crate) fn blocks_per_tree(h: usize) -> usize {
    h - 1
}

/// The sender's side for `p.t` trees, from `p.t · p.h` COTs (tree `i` uses
/// `cots[i·h..(i+1)·h]`, level by level). Writes the `p.n` leaves into `leaves`.
pub(crate) fn send(
    ctx: &mut Ctx,
    peer: PartyId,
    p: &LpnParams,
    delta: Block,
    cots: &[Block],
    leaves: &mut Vec<Block>,
) -> Result<()> {
    let h = p.h as usize;
    let width = 1usize << h;
    let expand = HalfTree::default();
    leaves.resize(p.n, 0);
    let per_tree = blocks_per_tree(h);
    let mut sums = vec![0u128; p.t * per_tree];
    leaves.par_chunks_mut(width).zip(sums.par_chunks_mut(per_tree)).zip(cots.par_chunks(h)).for_each(
        |((tree, sum), cots)| {
            tree[0] = cots[0];
            tree[1] = cots[0] ^ delta;
            for level in 1..h {
                let k0 = expand.expand(tree, 1 << level);
                sum[level - 1] = k0 ^ cots[level];
            }
        },
    );
    io::send_blocks(ctx, peer, &sums)
}

/// The receiver's side: from its `p.t · p.h` COTs, every tree's leaves with the punctured
/// leaf set to `s_α ⊕ Δ`, XORed into `out` (`p.n` blocks; the LPN part `A·x` is already there,
/// made while the sender was expanding its trees). Returns the punctured position of each tree.
pub(crate) fn receive(
    ctx: &mut Ctx,
    peer: PartyId,
    p: &LpnParams,
    cots: &[Block],
    out: &mut [Block],
) -> Result<Vec<usize>> {
    let h = p.h as usize;
    let width = 1usize << h;
    let per_tree = blocks_per_tree(h);
    let sums = io::recv_blocks(ctx, peer, p.t * per_tree, STEP)?;
    let expand = HalfTree::default();
    let mut alphas = vec![0usize; p.t];
    out.par_chunks_mut(width)
        .zip(sums.par_chunks(per_tree))
        .zip(cots.par_chunks(h))
        .zip(alphas.par_iter_mut())
        .for_each_init(
            || vec![0u128; width],
            |tree, (((out, sum), cots), alpha)| {
                // Level 1: w_1 is the node at b_1; the path goes to ¬b_1.
                let b = usize::from(lsb(cots[0]));
                tree[b] = cots[0];
                tree[1 - b] = 0;
                let mut path = 1 - b;
                for level in 1..h {
                    let parents = 1usize << level;
                    // The path's node is unknown (zero here): its children come out wrong and
                    // are overwritten below.
                    expand.expand(tree, parents);
                    let b = usize::from(lsb(cots[level]));
                    let opened = sum[level - 1] ^ cots[level];
                    let (off, on) = (path + b * parents, path + (1 - b) * parents);
                    tree[off] = 0;
                    tree[on] = 0;
                    let side = tree[b * parents..(b + 1) * parents].iter().fold(0, |a, x| a ^ x);
                    tree[off] = opened ^ side;
                    path = on;
                }
                tree[path] = tree.iter().fold(0, |a, x| a ^ x);
                *alpha = path;
                for (o, leaf) in out.iter_mut().zip(tree.iter()) {
                    *o ^= leaf;
                }
            },
        );
    Ok(alphas)
}
