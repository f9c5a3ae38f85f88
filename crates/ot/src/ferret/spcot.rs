//! Regular multi-point COT: `t` single-point COTs, one GGM tree of depth `h` each (Ferret §3;
//! the puncturable-PRF construction of Boyle et al., "Efficient Two-Round OT Extension and
//! Silent Non-Interactive Secure Computation").
//!
//! For each tree the sender expands a random root into `2^h` leaves `s_j` and the receiver
//! learns every leaf but one, at a position α it picks. Level `l` costs one random COT: its
//! choice bit `b_l` fixes α's digit at that level to `¬b_l`, so the receiver sends nothing
//! (α is uniform because the COT's choice is). The sender sends, per level, the XOR `K_l^0`
//! of the level's left children and `K_l^1` of its right children, masked as
//!
//! ```text
//! c_l^0 = K_l^0 ⊕ H(v_l),   c_l^1 = K_l^1 ⊕ H(v_l ⊕ Δ)        (H: TCR hash, unique tweak)
//! ```
//!
//! so the receiver, holding `w_l = v_l ⊕ b_l·Δ`, opens `K_l^{b_l}`, the XOR of the side off
//! its path, and rebuilds every node off the path. Last, the sender sends
//! `ψ = Δ ⊕ ⊕_j s_j`, and the receiver sets its leaf at α to `ψ ⊕ ⊕_{j≠α} s_j = s_α ⊕ Δ`.
//! The sender's vector is `s`, the receiver's is `s ⊕ e_α·Δ`: a COT with a unit choice vector.
//!
//! **Layout.** At each level the children of node `p` (of `P` nodes) sit at `p` (left) and
//! `p + P` (right), so a side is a contiguous half. Leaf `j` of tree `i` is output `i·2^h + j`.
//!
//! **Security.** Semi-honest: a malicious sender could send inconsistent `K` values and learn
//! whether the receiver's α lies in a chosen set (the selective-failure attack that Ferret's
//! consistency check closes). The families on top of this engine (`mm`, `blb`, `spin`) are
//! semi-honest. Per tree the sender sends `2h + 1` blocks.

use rayon::prelude::*;
use veil_mpc::{Ctx, PartyId, Result};

use super::params::LpnParams;
use crate::block::{Block, lsb};
use crate::io;
use crate::prp::{Ggm, Prp, tcr_hash};

const STEP: &str = "Ferret: GGM tree sums";

/// Expands `tree[..P]` (the nodes of one level) into `tree[..2P]`: left children in place,
/// right children after them.
fn expand_level(ggm: &Ggm, tree: &mut [Block], parents: usize, scratch: &mut Vec<Block>) {
    scratch.clear();
    scratch.extend_from_slice(&tree[..parents]);
    ggm.expand_halves(scratch, tree, parents);
}

/// The sender's side for `p.t` trees, from `p.t · p.h` COTs (tree `i` uses
/// `cots[i·h..(i+1)·h]`, level by level). Writes the `p.n` leaves into `leaves`.
pub(crate) fn send(
    ctx: &mut Ctx,
    peer: PartyId,
    p: &LpnParams,
    delta: Block,
    cots: &[Block],
    tweak: u128,
    leaves: &mut Vec<Block>,
) -> Result<()> {
    let h = p.h as usize;
    let width = 1usize << h;
    let roots: Vec<Block> = (0..p.t).map(|_| u128::from_le_bytes(ctx.rng().next_block())).collect();
    let ggm = Ggm::default();
    leaves.resize(p.n, 0);
    let mut sums = vec![0u128; p.t * (2 * h + 1)];
    leaves.par_chunks_mut(width).zip(sums.par_chunks_mut(2 * h + 1)).zip(&roots).for_each(
        |((tree, sum), &root)| {
            let mut scratch = Vec::with_capacity(width / 2);
            tree[0] = root;
            for level in 0..h {
                let parents = 1 << level;
                expand_level(&ggm, tree, parents, &mut scratch);
                let (left, right) = tree[..2 * parents].split_at(parents);
                sum[2 * level] = left.iter().fold(0, |a, b| a ^ b);
                sum[2 * level + 1] = right.iter().fold(0, |a, b| a ^ b);
            }
            sum[2 * h] = delta ^ tree.iter().fold(0, |a, b| a ^ b);
        },
    );
    // Mask the level sums: c^0 with H(v), c^1 with H(v ⊕ Δ).
    let prp = Prp::fixed("ferret/spcot");
    let mut zero = cots.to_vec();
    let mut one: Vec<Block> = cots.iter().map(|v| v ^ delta).collect();
    tcr_hash(&prp, &mut zero, tweak);
    tcr_hash(&prp, &mut one, tweak);
    for (i, sum) in sums.chunks_mut(2 * h + 1).enumerate() {
        for level in 0..h {
            sum[2 * level] ^= zero[i * h + level];
            sum[2 * level + 1] ^= one[i * h + level];
        }
    }
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
    tweak: u128,
    out: &mut [Block],
) -> Result<Vec<usize>> {
    let h = p.h as usize;
    let width = 1usize << h;
    let mut sums = io::recv_blocks(ctx, peer, p.t * (2 * h + 1), STEP)?;
    let prp = Prp::fixed("ferret/spcot");
    let mut masks = cots.to_vec();
    tcr_hash(&prp, &mut masks, tweak);
    let ggm = Ggm::default();
    let mut alphas = vec![0usize; p.t];
    out.par_chunks_mut(width)
        .zip(sums.par_chunks_mut(2 * h + 1))
        .zip(alphas.par_iter_mut())
        .enumerate()
        .for_each(|(i, ((out, sum), alpha))| {
            let mut scratch = Vec::with_capacity(width / 2);
            let mut tree = vec![0u128; width];
            let tree = &mut tree[..];
            let mut path = 0usize;
            for level in 0..h {
                let parents = 1 << level;
                expand_level(&ggm, tree, parents, &mut scratch);
                let cot = cots[i * h + level];
                let b = lsb(cot);
                // The opened sum is the side off the path: α's digit is ¬b.
                let k_off = sum[2 * level + usize::from(b)] ^ masks[i * h + level];
                let off = path + usize::from(b) * parents;
                let on = path + usize::from(!b) * parents;
                tree[on] = 0;
                tree[off] = 0;
                let side = &tree[usize::from(b) * parents..(usize::from(b) + 1) * parents];
                tree[off] = k_off ^ side.iter().fold(0, |a, x| a ^ x);
                path = on;
            }
            tree[path] = sum[2 * h] ^ tree.iter().fold(0, |a, x| a ^ x);
            *alpha = path;
            for (o, leaf) in out.iter_mut().zip(tree.iter()) {
                *o ^= leaf;
            }
        });
    Ok(alphas)
}
