//! The AMX GEMM driver: packing, work split and the per-block shift loop.
//!
//! A is packed once (all rows). Work items are a strip of `PAIRS` 32-column
//! blocks × a group of 32-row blocks; each item packs its own B strip, which
//! then stays in L2 while the item's 32×32 output blocks are computed. For an
//! output block, shift `s` accumulates `P_s = Σ_{i+j=s} A_i·B_j` in the four
//! `C` tiles (one `TDPBUUD` run over the contiguous tiles `A_0…A_s`,
//! `B_s…B_0`), stores it, and adds `2^{8s}·P_s` into the `u64` block.
#![allow(unsafe_code)]

use rayon::prelude::*;

use super::Word;
use super::amx::{Amx, Tiles};
use super::amx_pack::{Line, TILE_LINES, pack_a_block, pack_b_strip};
use crate::device::MatDims;

/// 64-deep steps per slab for `u64`: `k <= 64·MAX_Q = 16384` keeps `P_0..P_3` below `2^32`.
const MAX_Q: usize = 256;
/// 32-column blocks per work item (wider strips read B in longer runs).
const PAIRS: usize = 2;

/// Rows per work item (a multiple of 32) so that there are enough items for every thread.
fn rows_per_item(mp: usize, strips: usize) -> usize {
    let want = 3 * rayon::current_num_threads();
    let groups = want.div_ceil(strips.max(1)).clamp(1, mp / 32);
    (mp / 32).div_ceil(groups) * 32
}

/// `acc += 2^{8s} · p` element-wise.
#[target_feature(enable = "avx512f")]
fn accumulate(acc: &mut [u64], p: &[u32; 1024], s: usize) {
    for (x, &v) in acc.iter_mut().zip(p) {
        *x = x.wrapping_add(u64::from(v) << (8 * s));
    }
}

/// Shapes shared by the work items.
struct Plan {
    /// Bytes per word `L`.
    l: usize,
    /// 64-deep steps (`k` padded to 64).
    nq: usize,
    /// Steps per slab (see [`MAX_Q`]).
    slab: usize,
}

impl Plan {
    /// Line offset of tile (16-row/column block `blk`, byte slot `i`, step `q`).
    fn tile(&self, blk: usize, i: usize, q: usize) -> usize {
        ((blk * self.l + i) * self.nq + q) * TILE_LINES
    }

    /// One 32×32 output block: rows block `bi` of `pa`, columns block `bj` of `pb`.
    fn block(&self, t: &Tiles, pa: &[Line], pb: &[Line], bi: usize, bj: usize, acc: &mut [u64]) {
        let (l, nq) = (self.l, self.nq);
        let mut tmp = [0u32; 1024];
        for q0 in (0..nq).step_by(self.slab) {
            let cnt = self.slab.min(nq - q0);
            for s in 0..l {
                t.zero();
                if cnt == nq {
                    // A_0..A_s and B_s..B_0 (stored reversed) are runs of (s+1)·nq tiles.
                    let (a, b) = (self.tile(2 * bi, 0, 0), self.tile(2 * bj, l - 1 - s, 0));
                    let (a1, b1) = (self.tile(2 * bi + 1, 0, 0), self.tile(2 * bj + 1, l - 1 - s, 0));
                    t.dot(&pa[a..], &pa[a1..], &pb[b..], &pb[b1..], (s + 1) * nq);
                } else {
                    for i in 0..=s {
                        let jr = l - 1 - (s - i);
                        let (a, b) = (self.tile(2 * bi, i, q0), self.tile(2 * bj, jr, q0));
                        let (a1, b1) = (self.tile(2 * bi + 1, i, q0), self.tile(2 * bj + 1, jr, q0));
                        t.dot(&pa[a..], &pa[a1..], &pb[b..], &pb[b1..], cnt);
                    }
                }
                t.store(&mut tmp);
                // SAFETY: `Tiles` exist only with an `Amx` token, which implies AVX-512F.
                unsafe { accumulate(acc, &tmp, s) };
            }
        }
    }
}

/// `c = a · b mod 2^w` with AMX (`w` = bit width of `W`).
pub(crate) fn gemm<W: Word>(amx: Amx, a: &[W], b: &[W], c: &mut [W], d: MatDims) {
    let (m, k, n) = (d.m, d.k, d.n);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.fill(W::ZERO);
        return;
    }
    let (l, nq) = (W::BYTES, k.div_ceil(64));
    let plan = Plan { l, nq, slab: if l == 8 { MAX_Q } else { nq } };
    let (mp, pairs) = (m.div_ceil(32) * 32, n.div_ceil(32));
    let per_blk = l * nq * TILE_LINES;
    let mut pa = vec![Line([0; 64]); mp / TILE_LINES * per_blk];
    pa.par_chunks_mut(per_blk).enumerate().for_each(|(blk, out)| {
        // SAFETY: an `Amx` token implies AVX-512F/BW/VBMI.
        unsafe { pack_a_block(a, m, k, nq, blk, out) }
    });
    let strips = pairs.div_ceil(PAIRS);
    let rows = rows_per_item(mp, strips);
    // Item (row group g, column strip st) → its (32-row block, 32-column block) pairs.
    let blocks = |g: usize, st: usize| {
        let cols = (st * PAIRS)..((st + 1) * PAIRS).min(pairs);
        let rows = (g * rows / 32)..((g + 1) * rows).min(mp) / 32;
        cols.flat_map(move |bj| rows.clone().map(move |bi| (bi, bj)))
    };
    let items: Vec<(usize, usize)> =
        (0..strips).flat_map(|st| (0..mp.div_ceil(rows)).map(move |g| (g, st))).collect();
    let results: Vec<Vec<u64>> = items
        .par_iter()
        .map(|&(g, st)| {
            let first = 2 * st * PAIRS; // first 16-column block of the strip
            let width = (2 * PAIRS).min(2 * pairs - first);
            let mut pb = vec![Line([0; 64]); width * per_blk];
            // SAFETY: an `Amx` token implies AVX-512F/BW/VBMI.
            unsafe { pack_b_strip(b, (k, n, nq), first, &mut pb) };
            let mut out = vec![0u64; 1024 * blocks(g, st).count()];
            let t = Tiles::new(amx);
            for (acc, (bi, bj)) in out.chunks_exact_mut(1024).zip(blocks(g, st)) {
                plan.block(&t, &pa, &pb, bi, bj - st * PAIRS, acc);
            }
            drop(t);
            out
        })
        .collect();
    for (&(g, st), out) in items.iter().zip(&results) {
        for (block, (bi, bj)) in out.chunks_exact(1024).zip(blocks(g, st)) {
            let width = 32.min(n - bj * 32);
            for r in 0..32.min(m.saturating_sub(bi * 32)) {
                let dst = &mut c[(bi * 32 + r) * n + bj * 32..][..width];
                for (o, &x) in dst.iter_mut().zip(&block[r * 32..]) {
                    *o = W::from_u64(x);
                }
            }
        }
    }
}
