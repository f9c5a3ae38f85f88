//! Packing word matrices into AMX byte tiles with AVX-512 VBMI byte shuffles.
//!
//! Byte `i` of a word is `x_i = (x >> 8i) mod 256`. Tile `(blk, i, q)` (16-row or
//! 16-column block `blk`, byte `i`, depth step `q` of 64) is 16 lines of 64 bytes:
//!
//! * A (row operand): line `r`, byte `e` = `A[16·blk + r, 64q + e]_i`;
//! * B (column operand, in the four-`k`-per-column layout `TDPBUUD` expects):
//!   line `r`, byte `4c + t` = `B[64q + 4r + t, 16·blk + c]_i`, stored as tile
//!   `(blk, L-1-i, q)` (bytes in reverse order, so that for a shift `s` the
//!   operands `A_0…A_s` and `B_s…B_0` are each one contiguous run of tiles).
//!
//! Both are byte transposes done with trees of `vpermt2b` (any 64 of 128 bytes):
//! for A, 64 consecutive words → one line per byte index (3 levels for `u64`,
//! 2 for `u32`); for B, four rows of 16 words → one line per byte index, with
//! the four rows interleaved (2 levels, plus a lane merge for `u64`). The index
//! tables below spell out, for each output byte `p`, which input byte it takes
//! (`< 64`: first operand, `>= 64`: second). Out-of-range elements load as zero
//! (masked loads, which never touch memory outside the slice).
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::Word;

/// One 64-byte, 64-byte-aligned tile row.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Line(pub(crate) [u8; 64]);

/// Lines per tile (rows of a 16×64-byte tile).
pub(crate) const TILE_LINES: usize = 16;

/// Builds a 64-entry `vpermt2b` table from `f(p)`.
macro_rules! table {
    (|$p:ident| $e:expr) => {{
        let mut t = [0u8; 64];
        let mut $p = 0;
        while $p < 64 {
            t[$p] = ($e) as u8;
            $p += 1;
        }
        t
    }};
}

// A, u64. Level 1: words (E_2w, E_2w+1) → bytes 4x..4x+4, 16 words each.
const A64_L1: [[u8; 64]; 2] = [a64_l1(0), a64_l1(1)];
const fn a64_l1(x: usize) -> [u8; 64] {
    table!(|p| (p % 16 / 8) * 64 + 8 * (p % 8) + 4 * x + p / 16)
}
// Level 2: (G_2v, G_2v+1) → bytes 4x+2y, 4x+2y+1, 32 words each.
const A64_L2: [[u8; 64]; 2] = [a64_l2(0), a64_l2(1)];
const fn a64_l2(y: usize) -> [u8; 64] {
    table!(|p| (p % 32 / 16) * 64 + 16 * (2 * y + p / 32) + p % 16)
}
// Level 3 (also A u32 level 2): (H_0, H_1) → one byte index, 64 words.
const HALVES: [[u8; 64]; 2] = [halves(0), halves(1)];
const fn halves(z: usize) -> [u8; 64] {
    table!(|p| (p / 32) * 64 + 32 * z + p % 32)
}
// A, u32. Level 1: (E_0, E_1) → bytes 2x, 2x+1, 32 words each.
const A32_L1: [[u8; 64]; 2] = [a32_l1(0), a32_l1(1)];
const fn a32_l1(x: usize) -> [u8; 64] {
    table!(|p| (p % 32 / 16) * 64 + 4 * (p % 16) + 2 * x + p / 32)
}
// B, u64 (8 columns c' per half). Level 1: rows (R_0, R_1) → bytes 4x..4x+4 as (c', t).
const B64_L1: [[u8; 64]; 2] = [b64_l1(0), b64_l1(1)];
const fn b64_l1(x: usize) -> [u8; 64] {
    table!(|p| (p % 2) * 64 + 8 * (p % 16 / 2) + 4 * x + p / 16)
}
// Level 2: (U_01, U_23) → bytes 4x+2y, 4x+2y+1 as 4c' + t.
const B64_L2: [[u8; 64]; 2] = [b64_l2(0), b64_l2(1)];
const fn b64_l2(y: usize) -> [u8; 64] {
    table!(|p| (p % 4 / 2) * 64 + 16 * (2 * y + p / 32) + 2 * (p % 32 / 4) + p % 2)
}
// B, u32 (16 columns). Level 1: rows (R_0, R_1) → bytes 2x, 2x+1 as (c, t).
const B32_L1: [[u8; 64]; 2] = [b32_l1(0), b32_l1(1)];
const fn b32_l1(x: usize) -> [u8; 64] {
    table!(|p| (p % 2) * 64 + 4 * (p % 32 / 2) + 2 * x + p / 32)
}
// Level 2: (U_01, U_23) → byte 2x + l as 4c + t.
const B32_L2: [[u8; 64]; 2] = [b32_l2(0), b32_l2(1)];
const fn b32_l2(l: usize) -> [u8; 64] {
    table!(|p| (p % 4 / 2) * 64 + 32 * l + 2 * (p / 4) + p % 2)
}

/// Loads a table.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn idx(t: &[u8; 64]) -> __m512i {
    // SAFETY: reads exactly the 64 bytes of `t`.
    unsafe { _mm512_loadu_si512(t.as_ptr().cast()) }
}

/// `perm(a, t, b)`: byte `p` = `(a ‖ b)[t[p]]`.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn perm(a: __m512i, t: __m512i, b: __m512i) -> __m512i {
    _mm512_permutex2var_epi8(a, t, b)
}

/// Loads `min(cnt, 64/size)` words from `xs[start..]` (zeros elsewhere).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn load<W: Word>(xs: &[W], start: usize, cnt: usize) -> __m512i {
    let lanes = 64 / W::BYTES;
    let cnt = cnt.min(lanes).min(xs.len().saturating_sub(start));
    if cnt == 0 {
        return _mm512_setzero_si512();
    }
    let p = xs[start..].as_ptr();
    // SAFETY: `p` points at xs[start] (in bounds); the mask enables only the
    // first `cnt` lanes, all inside `xs`, and masked-off lanes are not accessed.
    unsafe {
        if W::BYTES == 8 {
            _mm512_maskz_loadu_epi64((1u16 << cnt).wrapping_sub(1) as u8, p.cast())
        } else {
            _mm512_maskz_loadu_epi32(((1u32 << cnt) - 1) as u16, p.cast())
        }
    }
}

/// Loads 64 bytes of words (`xs.len() == 64 / size`).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn load_full<W: Word>(xs: &[W]) -> __m512i {
    debug_assert_eq!(xs.len() * W::BYTES, 64);
    // SAFETY: `xs` spans 64 bytes (the callers slice exactly 64/size words).
    unsafe { _mm512_loadu_si512(xs.as_ptr().cast()) }
}

/// How many rows of B ahead [`pack_b_strip`] prefetches.
const PREFETCH_ROWS: usize = 8;

/// Prefetches the cache lines holding `xs` into L1.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn prefetch<W>(xs: &[W]) {
    let (start, len) = (xs.as_ptr().cast::<i8>(), core::mem::size_of_val(xs));
    let mut off = 0;
    while off < len {
        // SAFETY: `off < len`, so the address lies inside `xs`; prefetching never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(start.add(off)) };
        off += 64;
    }
}

/// Stores a vector into a tile line.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn put(line: &mut Line, v: __m512i) {
    // SAFETY: `line` is a 64-byte, 64-byte-aligned exclusive buffer.
    unsafe { _mm512_store_si512(line.0.as_mut_ptr().cast(), v) }
}

/// Packs rows `16·blk ..` of A (`rows×k`, row-major) into the tiles `out`.
///
/// # Safety
/// The CPU must support AVX-512F/BW/VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(crate) unsafe fn pack_a_block<W: Word>(
    a: &[W],
    rows: usize,
    k: usize,
    nq: usize,
    blk: usize,
    out: &mut [Line],
) {
    let line = |i: usize, q: usize, r: usize| (i * nq + q) * TILE_LINES + r;
    for r in 0..TILE_LINES.min(rows.saturating_sub(blk * TILE_LINES)) {
        let row = &a[(blk * TILE_LINES + r) * k..][..k];
        for q in 0..nq {
            let lanes = 64 / W::BYTES;
            let full = 64 * (q + 1) <= k;
            let ld = |z: usize| {
                let start = 64 * q + z * lanes;
                if full {
                    load_full(&row[start..][..lanes])
                } else {
                    load(row, start, k.saturating_sub(start))
                }
            };
            if W::BYTES == 8 {
                let e: [__m512i; 8] = core::array::from_fn(ld);
                for x in 0..2 {
                    let t1 = idx(&A64_L1[x]);
                    let g: [__m512i; 4] = core::array::from_fn(|w| perm(e[2 * w], t1, e[2 * w + 1]));
                    for y in 0..2 {
                        let t2 = idx(&A64_L2[y]);
                        let (h0, h1) = (perm(g[0], t2, g[1]), perm(g[2], t2, g[3]));
                        for z in 0..2 {
                            put(&mut out[line(4 * x + 2 * y + z, q, r)], perm(h0, idx(&HALVES[z]), h1));
                        }
                    }
                }
            } else {
                let e: [__m512i; 4] = core::array::from_fn(ld);
                for x in 0..2 {
                    let t1 = idx(&A32_L1[x]);
                    let (g0, g1) = (perm(e[0], t1, e[1]), perm(e[2], t1, e[3]));
                    for z in 0..2 {
                        put(&mut out[line(2 * x + z, q, r)], perm(g0, idx(&HALVES[z]), g1));
                    }
                }
            }
        }
    }
}

/// Packs the columns `16·blk0 .. 16·(blk0 + nblk)` of B (`k×n`, row-major) into
/// `nblk` consecutive groups of tiles in `out`, row group by row group so each
/// row of B is read as one contiguous run.
///
/// # Safety
/// The CPU must support AVX-512F/BW/VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(crate) unsafe fn pack_b_strip<W: Word>(
    b: &[W],
    (k, n, nq): (usize, usize, usize),
    blk0: usize,
    out: &mut [Line],
) {
    let per_blk = W::BYTES * nq * TILE_LINES;
    let strip = n.saturating_sub(blk0 * TILE_LINES).min(out.len() / per_blk * TILE_LINES);
    for q in 0..nq {
        for r in 0..TILE_LINES {
            // Rows of a narrow strip are n words apart, which defeats the hardware
            // prefetcher: fetch the rows PREFETCH_ROWS ahead explicitly.
            for t in 0..4 {
                let row = 64 * q + 4 * r + t + PREFETCH_ROWS;
                if row < k && strip > 0 {
                    prefetch(&b[row * n + blk0 * TILE_LINES..][..strip]);
                }
            }
            for (h, out) in out.chunks_exact_mut(per_blk).enumerate() {
                let line = |i: usize, q: usize, r: usize| ((W::BYTES - 1 - i) * nq + q) * TILE_LINES + r;
                let j0 = (blk0 + h) * TILE_LINES;
                let width = TILE_LINES.min(n.saturating_sub(j0));
                // Row t of the group, columns [j0 + off, j0 + off + 64/BYTES).
                let full = width == TILE_LINES && 64 * q + 4 * r + 4 <= k;
                let ld = |t: usize, off: usize| {
                    let kr = 64 * q + 4 * r + t;
                    if full {
                        load_full(&b[kr * n + j0 + off..][..64 / W::BYTES])
                    } else if kr >= k || off >= width {
                        _mm512_setzero_si512()
                    } else {
                        load(b, kr * n + j0 + off, width - off)
                    }
                };
                if W::BYTES == 8 {
                    let mut v = [[_mm512_setzero_si512(); 4]; 2]; // v[h][x·2 + y]
                    for (h, vh) in v.iter_mut().enumerate() {
                        let rt: [__m512i; 4] = core::array::from_fn(|t| ld(t, 8 * h));
                        for x in 0..2 {
                            let t1 = idx(&B64_L1[x]);
                            let (u01, u23) = (perm(rt[0], t1, rt[1]), perm(rt[2], t1, rt[3]));
                            for y in 0..2 {
                                vh[2 * x + y] = perm(u01, idx(&B64_L2[y]), u23);
                            }
                        }
                    }
                    for xy in 0..4 {
                        let lo = _mm512_shuffle_i64x2::<0x44>(v[0][xy], v[1][xy]);
                        let hi = _mm512_shuffle_i64x2::<0xEE>(v[0][xy], v[1][xy]);
                        put(&mut out[line(2 * xy, q, r)], lo);
                        put(&mut out[line(2 * xy + 1, q, r)], hi);
                    }
                } else {
                    let rt: [__m512i; 4] = core::array::from_fn(|t| ld(t, 0));
                    for x in 0..2 {
                        let t1 = idx(&B32_L1[x]);
                        let (u01, u23) = (perm(rt[0], t1, rt[1]), perm(rt[2], t1, rt[3]));
                        for l in 0..2 {
                            put(&mut out[line(2 * x + l, q, r)], perm(u01, idx(&B32_L2[l]), u23));
                        }
                    }
                }
            }
        }
    }
}
