//! Cache-blocked, packed GEMM driver (GotoBLAS/BLIS structure) over machine words.
//!
//! `C = A·B` is cut into `KC`-deep slabs along `k`. A and B are packed once into
//! micro-panels (`MR` rows of A / `NR` columns of B, zero-padded at the edges) so
//! the micro-kernel reads both with unit stride. `C` is split into `MC×NC`
//! tiles computed in parallel with rayon; inside a tile the `KC×NR` B panel
//! stays in L1 while the `MR×KC` A panels stream from L2, and each tile
//! accumulates in a private buffer that is copied into `C` at the end.

use rayon::prelude::*;

use super::Word;
use super::micro::{Avx2U32, Avx2U64, Avx512U32, Avx512U64, Isa, Micro, Portable};
use crate::device::MatDims;

/// Depth of a `k` slab: a `KC×NR` B panel is 32 KiB for both word types.
const KC: usize = 256;
/// Preferred tile height (rows of C), rounded to a multiple of `MR`.
const MC: usize = 64;
/// Preferred tile width (columns of C), rounded to a multiple of `NR`.
const NC: usize = 256;

/// `c = a · b mod 2^64` with the blocked kernel at instruction level `isa`.
pub(crate) fn gemm_u64(isa: Isa, a: &[u64], b: &[u64], c: &mut [u64], d: MatDims) {
    match (isa, Avx512U64::new(), Avx2U64::new()) {
        (Isa::Avx512, Some(k), _) => gemm(&k, a, b, c, d),
        (Isa::Avx512 | Isa::Avx2, _, Some(k)) => gemm(&k, a, b, c, d),
        _ => gemm(&Portable::<4, 4>, a, b, c, d),
    }
}

/// `c = a · b mod 2^32` with the blocked kernel at instruction level `isa`.
pub(crate) fn gemm_u32(isa: Isa, a: &[u32], b: &[u32], c: &mut [u32], d: MatDims) {
    match (isa, Avx512U32::new(), Avx2U32::new()) {
        (Isa::Avx512, Some(k), _) => gemm(&k, a, b, c, d),
        (Isa::Avx512 | Isa::Avx2, _, Some(k)) => gemm(&k, a, b, c, d),
        _ => gemm(&Portable::<4, 8>, a, b, c, d),
    }
}

/// The `k` slabs: `(start, depth)` pairs.
fn slabs(k: usize) -> impl Iterator<Item = (usize, usize)> + Clone {
    (0..k).step_by(KC).map(move |p0| (p0, KC.min(k - p0)))
}

/// Packs A (`m×k`) into `MR`-row panels: slab `(p0, kc)` occupies
/// `[p0·mp, (p0+kc)·mp)`; inside it panel `ip` holds `a[p·MR + i] = A[ip·MR + i, p0 + p]`.
fn pack_a<W: Word>(a: &[W], m: usize, k: usize, mp: usize, mr: usize) -> Vec<W> {
    let mut out = vec![W::ZERO; mp * k];
    for (p0, kc) in slabs(k) {
        let slab = &mut out[p0 * mp..(p0 + kc) * mp];
        slab.par_chunks_mut(kc * mr).enumerate().for_each(|(ip, panel)| {
            for i in 0..mr.min(m.saturating_sub(ip * mr)) {
                let row = &a[(ip * mr + i) * k + p0..][..kc];
                for (p, &x) in row.iter().enumerate() {
                    panel[p * mr + i] = x;
                }
            }
        });
    }
    out
}

/// Packs B (`k×n`) into `NR`-column panels: slab `(p0, kc)` occupies
/// `[p0·np, (p0+kc)·np)`; inside it panel `jp` holds `b[p·NR + j] = B[p0 + p, jp·NR + j]`.
fn pack_b<W: Word>(b: &[W], k: usize, n: usize, np: usize, nr: usize) -> Vec<W> {
    let mut out = vec![W::ZERO; np * k];
    for (p0, kc) in slabs(k) {
        let slab = &mut out[p0 * np..(p0 + kc) * np];
        slab.par_chunks_mut(kc * nr).enumerate().for_each(|(jp, panel)| {
            let j0 = jp * nr;
            let w = nr.min(n - j0);
            for (p, dst) in panel.chunks_exact_mut(nr).enumerate() {
                dst[..w].copy_from_slice(&b[(p0 + p) * n + j0..][..w]);
            }
        });
    }
    out
}

/// Tile sizes `(mc, nc)`: multiples of `(mr, nr)`, shrunk until there are
/// enough tiles to keep every thread busy.
fn tile_sizes(mp: usize, np: usize, mr: usize, nr: usize) -> (usize, usize) {
    let want = 3 * rayon::current_num_threads();
    let mut mc = mp.min(MC.div_ceil(mr) * mr);
    let mut nc = np.min(NC.div_ceil(nr) * nr);
    let tiles = |mc: usize, nc: usize| mp.div_ceil(mc) * np.div_ceil(nc);
    while tiles(mc, nc) < want && nc > nr {
        nc = (nc / 2).div_ceil(nr) * nr;
    }
    while tiles(mc, nc) < want && mc > mr {
        mc = (mc / 2).div_ceil(mr) * mr;
    }
    (mc, nc)
}

/// `c = a · b` (wrapping) with micro-kernel `kern`.
pub(crate) fn gemm<W: Word, K: Micro<W>>(kern: &K, a: &[W], b: &[W], c: &mut [W], d: MatDims) {
    let (m, k, n) = (d.m, d.k, d.n);
    let (mr, nr) = (K::MR, K::NR);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.fill(W::ZERO);
        return;
    }
    let (mp, np) = (m.div_ceil(mr) * mr, n.div_ceil(nr) * nr);
    let pa = pack_a(a, m, k, mp, mr);
    let pb = pack_b(b, k, n, np, nr);
    let (mc, nc) = tile_sizes(mp, np, mr, nr);
    let tiles: Vec<(usize, usize)> =
        (0..mp).step_by(mc).flat_map(|i0| (0..np).step_by(nc).map(move |j0| (i0, j0))).collect();
    let results: Vec<Vec<W>> = tiles
        .par_iter()
        .map(|&(i0, j0)| {
            let (h, w) = (mc.min(mp - i0), nc.min(np - j0));
            let mut tile = vec![W::ZERO; h * w];
            for (p0, kc) in slabs(k) {
                let sa = &pa[p0 * mp..(p0 + kc) * mp];
                let sb = &pb[p0 * np..(p0 + kc) * np];
                for jp in j0 / nr..(j0 + w) / nr {
                    let bp = &sb[jp * kc * nr..(jp + 1) * kc * nr];
                    for ip in i0 / mr..(i0 + h) / mr {
                        let ap = &sa[ip * kc * mr..(ip + 1) * kc * mr];
                        let off = (ip * mr - i0) * w + (jp * nr - j0);
                        kern.run(kc, ap, bp, &mut tile[off..], w);
                    }
                }
            }
            tile
        })
        .collect();
    for (&(i0, j0), tile) in tiles.iter().zip(&results) {
        let w = nc.min(np - j0);
        let cols = w.min(n - j0);
        for r in i0..m.min(i0 + mc) {
            let src = &tile[(r - i0) * w..][..cols];
            c[r * n + j0..][..cols].copy_from_slice(src);
        }
    }
}
