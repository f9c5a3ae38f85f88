//! The lists of the sign-bit comparison ([`crate::lists`]) and a prover's MAC combinations of
//! Π_Pos ([`crate::pos`], round 4) with AVX2, for `Z_2^64` (`l = 64` positions over `p = 127`),
//! where the processor has AVX2 but not AVX-512 BW: [`crate::lists_simd`]'s kernels (its
//! module docs give the algebra) on registers half as wide, an element's 64 positions in four
//! registers of 16 words. They compute exactly the values of the portable kernels
//! ([`crate::lists::value_lists`], [`crate::lists::combos`]), so nothing of the protocol or its
//! security argument changes; the tests compare both on random and edge inputs. Measured on
//! LeNet at batch 30 on two Zen 1 cores, same sitting: the combinations alone took the
//! verification from 3.86–4.01 s to 3.61–3.67 s, the lists to 3.51–3.54 s.
//!
//! **The lists** ([`lists`]): `c_t`, its prefix sums and `c'_t`, `u_t` and `u'_t` as in
//! [`crate::lists_simd`], packed to bytes and permuted into the order sent (entry `e` is
//! position `π(e)`) with byte shuffles: the 64 bytes of a list are four 16-byte chunks, each
//! broadcast to both halves of a register, and entry `e` takes chunk `π(e)/16` at byte
//! `π(e) mod 16` (a shuffle of every chunk with the index cleared outside it, then their OR).
//!
//! **The combinations** ([`combos`]), per key `j`: `e_s = d_s·γ_s`, the prefix sums `E_t`,
//! `MAC(c'_t) = E_t − 2e_t + κ·k_t`, the MAC shares of `u_t` and `u'_t` (left unreduced: only
//! their values mod `p` matter, and the sums of products stay far below `2^31`), and their dot
//! products with the coefficients `σ` at `π⁻¹(t)`. The twelve tables of coefficients (six keys,
//! two lists) are permuted at once: they are stored entry by entry, one 16-byte row per entry,
//! so the rows are read in the order of `π⁻¹` and each block of 16 is transposed back to one
//! register per table (a byte shuffle per table cost 40 % of the kernel). The portable path forms the
//! weights `g_s` of all keys in one serial suffix sum over 8-word vectors, half an AVX2
//! register; here every step is 16 words wide and the prefix sums take three shifted additions
//! per register and two carries. 636 → 500 ns an element on Zen 1 with the last two changes.
#![allow(unsafe_code)]
#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{
    __m128i, __m256i, _mm_loadu_si128, _mm_setzero_si128, _mm_unpackhi_epi8, _mm_unpackhi_epi16,
    _mm_unpackhi_epi32, _mm_unpackhi_epi64, _mm_unpacklo_epi8, _mm_unpacklo_epi16, _mm_unpacklo_epi32,
    _mm_unpacklo_epi64, _mm256_add_epi16, _mm256_add_epi32, _mm256_and_si256, _mm256_andnot_si256,
    _mm256_cmpeq_epi8, _mm256_cmpeq_epi16, _mm256_cvtepu8_epi16, _mm256_loadu_si256, _mm256_madd_epi16,
    _mm256_min_epu16, _mm256_mullo_epi16, _mm256_or_si256, _mm256_packus_epi16, _mm256_permute2x128_si256,
    _mm256_permute4x64_epi64, _mm256_set1_epi8, _mm256_set1_epi16, _mm256_setr_epi8, _mm256_setr_epi16,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_si256, _mm256_srli_epi16, _mm256_storeu_si256,
    _mm256_sub_epi8, _mm256_sub_epi16,
};

use crate::lists::{LANES, Masks};
use crate::pos::MAC_KEYS;

/// Positions of a list of `Z_2^64`.
const L: usize = 64;
const P: i16 = 127;

/// An element's 64 words, positions `16r .. 16r + 16` in register `r`.
type Quad = [__m256i; 4];

/// Whether the processor has AVX2.
pub(crate) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// The coefficients `σ` of the combinations as bytes, entry by entry: row `e` holds
/// `σ_{j,e}` of the `u` list at byte `j` and `σ_{j,64+e}` of the `u'` list at byte `6 + j`
/// (then zeros), so that one permutation of the 64 rows permutes all twelve tables.
pub(crate) struct Tables {
    rows: [[u8; 16]; L],
}

impl Tables {
    /// From `sigma[e][j]` over the `2·64` entries.
    pub(crate) fn new(sigma: &[[u8; LANES]]) -> Option<Tables> {
        if sigma.len() != 2 * L {
            return None;
        }
        let mut t = Tables { rows: [[0; 16]; L] };
        for (e, s) in sigma.iter().enumerate() {
            let (row, at) = (e % L, (e / L) * MAC_KEYS);
            t.rows[row][at..at + MAC_KEYS].copy_from_slice(&s[..MAC_KEYS]);
        }
        Some(t)
    }
}

/// One element's combinations `x_j mod p` (`j < 6`), as [`crate::lists_simd::combos`] gives
/// them; `None` without AVX2 or with `mac` of the wrong length.
pub(crate) fn combos(
    masks: &Masks,
    m: u64,
    mac: &[u8],
    kappa: &[u8; MAC_KEYS],
    tables: &Tables,
) -> Option<[u32; MAC_KEYS]> {
    if mac.len() != MAC_KEYS * (L - 1) || !available() {
        return None;
    }
    // SAFETY: the processor has AVX2 (checked above), the one feature the kernel is built for.
    Some(unsafe { combos_avx2(masks, m, mac, kappa, tables) })
}

/// 16 bytes from `bytes[at..]` (which must hold them).
#[target_feature(enable = "avx2")]
fn load16(bytes: &[u8], at: usize) -> __m128i {
    let chunk: &[u8; 16] = bytes[at..at + 16].try_into().unwrap_or_else(|_| unreachable!());
    // SAFETY: a 16-byte unaligned load of a 16-byte array.
    unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) }
}

/// 32 bytes from `bytes[at..]` (which must hold them).
#[target_feature(enable = "avx2")]
fn load32(bytes: &[u8], at: usize) -> __m256i {
    let chunk: &[u8; 32] = bytes[at..at + 32].try_into().unwrap_or_else(|_| unreachable!());
    // SAFETY: a 32-byte unaligned load of a 32-byte array.
    unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) }
}

/// 64 bytes as words.
#[target_feature(enable = "avx2")]
fn widen(bytes: &[u8; L]) -> Quad {
    std::array::from_fn(|r| _mm256_cvtepu8_epi16(load16(bytes, 16 * r)))
}

/// The lanes of bit set `bits` (bit `t` for position `t`) as all-ones words.
#[target_feature(enable = "avx2")]
fn lane_mask(bits: u64) -> Quad {
    let select =
        _mm256_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, i16::MIN);
    std::array::from_fn(|r| {
        let word = _mm256_set1_epi16((bits >> (16 * r)) as u16 as i16);
        _mm256_cmpeq_epi16(_mm256_and_si256(word, select), select)
    })
}

/// `x ↦ (x mod 2^7) + ⌊x/2^7⌋` twice: `≡ x (mod 127)`, at most 128 for `x < 2^14`, at most
/// 129 below `2^16`.
#[target_feature(enable = "avx2")]
fn fold(x: __m256i) -> __m256i {
    let low = _mm256_set1_epi16(0x7f);
    let y = _mm256_add_epi16(_mm256_and_si256(x, low), _mm256_srli_epi16::<7>(x));
    _mm256_add_epi16(_mm256_and_si256(y, low), _mm256_srli_epi16::<7>(y))
}

/// Inclusive prefix sums of the 64 words, wrapping at `2^16`: three shifted additions within
/// each 128-bit half, the low half's last word into the high half, and each register's last
/// word into the next register.
#[target_feature(enable = "avx2")]
fn prefix(q: Quad) -> Quad {
    // Byte indices broadcasting word 7 of each half (bytes 14, 15), and word 3 (bytes 6, 7).
    let word7 = _mm256_setr_epi8(
        14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14, 15, 14,
        15, 14, 15, 14, 15, 14, 15,
    );
    let word3 = _mm256_setr_epi8(
        6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7,
    );
    let mut carry = _mm256_setzero_si256();
    q.map(|x| {
        let mut x = _mm256_add_epi16(x, _mm256_slli_si256::<2>(x));
        x = _mm256_add_epi16(x, _mm256_slli_si256::<4>(x));
        x = _mm256_add_epi16(x, _mm256_slli_si256::<8>(x));
        // The high half gets the low half's total (the low half of the shifted copy is zero).
        let low_total = _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x08>(x, x), word7);
        x = _mm256_add_epi16(_mm256_add_epi16(x, low_total), carry);
        // Word 15 to every lane: the top quadword everywhere, then its last word.
        carry = _mm256_shuffle_epi8(_mm256_permute4x64_epi64::<0xff>(x), word3);
        x
    })
}

/// `MAC(c'_t)` (partly reduced) from the prefix sums `s` of `e`, and `k`: `s − 2e + p + κ·k`,
/// below `64·127 + 127 + 127·64 < 2^14` before the reduction.
#[target_feature(enable = "avx2")]
fn mac_c(s: __m256i, e: __m256i, k: __m256i, kap: __m256i) -> __m256i {
    let v = _mm256_add_epi16(_mm256_sub_epi16(s, _mm256_add_epi16(e, e)), _mm256_set1_epi16(P));
    fold(_mm256_add_epi16(v, _mm256_mullo_epi16(kap, k)))
}

/// The MAC shares of `u_t = w_t·c + β_t·K` and `u'_t = w'_t·(w_t·c + K)` with `K = κ` and
/// `c = MAC(c'_t)`, partly reduced (at most 128).
#[target_feature(enable = "avx2")]
fn u_lists(c: __m256i, w: __m256i, w2: __m256i, beta: __m256i, k: __m256i) -> (__m256i, __m256i) {
    let wc = _mm256_mullo_epi16(w, c);
    let u = fold(_mm256_add_epi16(wc, _mm256_and_si256(beta, k)));
    let up = fold(_mm256_mullo_epi16(w2, fold(_mm256_add_epi16(wc, k))));
    (u, up)
}

/// The shuffle indices that permute a 64-byte list by `order` (output `t` takes entry
/// `order[t]`): for each 32-byte half `o` of the output and chunk `c` of the table,
/// `order[t] − 16c` where that is below 16, else a byte with its top bit set (which the shuffle
/// turns into 0).
#[target_feature(enable = "avx2")]
fn permutation_indices(order: &[u8; L]) -> [[__m256i; 4]; 2] {
    let (high, clear) = (_mm256_set1_epi8(0xf0u8 as i8), _mm256_set1_epi8(i8::MIN));
    std::array::from_fn(|o| {
        let entries = load32(order, 32 * o);
        std::array::from_fn(|c| {
            let d = _mm256_sub_epi8(entries, _mm256_set1_epi8((16 * c) as i8));
            let inside = _mm256_cmpeq_epi8(_mm256_and_si256(d, high), _mm256_setzero_si256());
            _mm256_or_si256(d, _mm256_andnot_si256(inside, clear))
        })
    })
}

/// The 64 bytes of `chunks` (16 each, broadcast to both halves of a register) in the order of
/// `idx` ([`permutation_indices`]), 32 per register.
#[target_feature(enable = "avx2")]
fn shuffled(chunks: &[__m256i; 4], idx: &[[__m256i; 4]; 2]) -> [__m256i; 2] {
    std::array::from_fn(|o| {
        let picked = |c: usize| _mm256_shuffle_epi8(chunks[c], idx[o][c]);
        _mm256_or_si256(_mm256_or_si256(picked(0), picked(1)), _mm256_or_si256(picked(2), picked(3)))
    })
}

/// The twelve tables at `π⁻¹(t)` for the 64 positions `t`, as words, table `b` at `[b]`
/// (key `j`'s `u` coefficients at `j`, its `u'` coefficients at `6 + j`): the rows in the
/// order of `π⁻¹` ([`Tables`]), then each block of 16 rows transposed with byte, word,
/// doubleword and quadword interleaves.
#[target_feature(enable = "avx2")]
fn permuted_tables(tables: &Tables, inverse: &[u8; L]) -> [Quad; 2 * MAC_KEYS] {
    let mut out = [[_mm256_setzero_si256(); 4]; 2 * MAC_KEYS];
    for block in 0..4 {
        let rows: [__m128i; 16] = std::array::from_fn(|i| {
            let row = &tables.rows[usize::from(inverse[16 * block + i]) % L];
            load16(row, 0)
        });
        let columns = transpose16(&rows);
        for (table, column) in out.iter_mut().zip(columns) {
            table[block] = _mm256_cvtepu8_epi16(column);
        }
    }
    out
}

/// The transpose of a 16×16 byte matrix (row `i` in `r[i]`): byte `i` of output `c` is byte
/// `c` of row `i`. After the byte interleave a register holds rows `2a, 2a + 1` of eight
/// columns, after the word interleave rows `4b .. 4b + 4` of four, after the doubleword one
/// rows `8c .. 8c + 8` of two; the quadword interleave joins the two halves of the rows, column
/// `8h + 4g + 2k + u` from the `h`-th, `g`-th, `k`-th and `u`-th (low or high) halves taken.
#[target_feature(enable = "avx2")]
fn transpose16(r: &[__m128i; 16]) -> [__m128i; 16] {
    let zero = _mm_setzero_si128();
    let mut a = [zero; 16];
    for i in 0..8 {
        a[2 * i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
        a[2 * i + 1] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
    }
    let mut b = [zero; 16];
    for i in 0..4 {
        for h in 0..2 {
            let (x, y) = (a[4 * i + h], a[4 * i + 2 + h]);
            b[4 * i + 2 * h] = _mm_unpacklo_epi16(x, y);
            b[4 * i + 2 * h + 1] = _mm_unpackhi_epi16(x, y);
        }
    }
    let mut c = [zero; 16];
    for i in 0..2 {
        for hg in 0..4 {
            let (x, y) = (b[8 * i + hg], b[8 * i + 4 + hg]);
            c[8 * i + 2 * hg] = _mm_unpacklo_epi32(x, y);
            c[8 * i + 2 * hg + 1] = _mm_unpackhi_epi32(x, y);
        }
    }
    let mut out = [zero; 16];
    for hgk in 0..8 {
        let (x, y) = (c[hgk], c[8 + hgk]);
        out[2 * hgk] = _mm_unpacklo_epi64(x, y);
        out[2 * hgk + 1] = _mm_unpackhi_epi64(x, y);
    }
    out
}

/// [`u_lists`] for the combinations, where only the values mod `p` matter: `u` and `u'` left
/// unreduced (at most `126·129 + 126 = 16 380` and `126·128 = 16 128`), so that each product
/// with a coefficient (at most 126) stays below `2^21` and the 128 of them below `2^28` in the
/// 32-bit sums.
#[target_feature(enable = "avx2")]
fn u_lists_wide(c: __m256i, w: __m256i, w2: __m256i, beta: __m256i, k: __m256i) -> (__m256i, __m256i) {
    let wc = _mm256_mullo_epi16(w, c);
    let u = _mm256_add_epi16(wc, _mm256_and_si256(beta, k));
    let up = _mm256_mullo_epi16(w2, fold(_mm256_add_epi16(wc, k)));
    (u, up)
}

/// The sum of the eight 32-bit lanes.
#[target_feature(enable = "avx2")]
fn lane_sum(v: __m256i) -> u32 {
    let mut out = [0u32; 8];
    // SAFETY: a 32-byte unaligned store into a 32-byte array.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) };
    out.iter().fold(0u32, |s, &x| s.wrapping_add(x))
}

/// The lanes of bits `a_t` and `β_t = MSB(M) ⊕ a_t ⊕ Δ` (`a_t` bit `62 − t` of `M` for
/// `t < 63`, `a_63 = 0`).
#[target_feature(enable = "avx2")]
fn bit_lanes(m: u64, delta: u8) -> (Quad, Quad) {
    let a_bits = (m << 1).reverse_bits();
    let flip = if ((m >> 63) as u8 ^ delta) & 1 == 1 { u64::MAX } else { 0 };
    (lane_mask(a_bits), lane_mask(a_bits ^ flip))
}

/// One element's lists as sent ([`crate::lists`]): `u` into `u_out`, `u'` into `up_out` (64
/// entries each), from `M` (`m`), this party's shares of the 63 bits and whether it holds the
/// constant 1 (`first`); `false` (nothing written) without AVX2 or with other lengths.
pub(crate) fn lists(
    m: u64,
    first: bool,
    shares: &[u8],
    masks: &Masks,
    u_out: &mut [u8],
    up_out: &mut [u8],
) -> bool {
    let Some((u_out, up_out)) = crate::lists::lists_of_64(shares, u_out, up_out).filter(|_| available())
    else {
        return false;
    };
    // SAFETY: the processor has AVX2 (checked above), the one feature the kernel is built for.
    unsafe { lists_avx2(m, first, shares, masks, u_out, up_out) };
    true
}

/// `v mod 127` for a [`fold`]ed `v ≤ 128`: the smaller of `v` and `v − 127` (which wraps above
/// `v` where `v < 127`).
#[target_feature(enable = "avx2")]
fn exact(v: __m256i) -> __m256i {
    _mm256_min_epu16(v, _mm256_sub_epi16(v, _mm256_set1_epi16(P)))
}

/// The 64 words (each below 256) as bytes in position order, as the four 16-byte chunks of a
/// table, each broadcast to both halves of a register ([`shuffled`]).
#[target_feature(enable = "avx2")]
fn byte_chunks(q: &Quad) -> [__m256i; 4] {
    // `packus` interleaves the halves: positions 0–7, 16–23 | 8–15, 24–31; the quadword
    // permutation puts them back in order.
    let packed: [__m256i; 2] = std::array::from_fn(|o| {
        _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi16(q[2 * o], q[2 * o + 1]))
    });
    [
        _mm256_permute2x128_si256::<0x00>(packed[0], packed[0]),
        _mm256_permute2x128_si256::<0x11>(packed[0], packed[0]),
        _mm256_permute2x128_si256::<0x00>(packed[1], packed[1]),
        _mm256_permute2x128_si256::<0x11>(packed[1], packed[1]),
    ]
}

/// 32 bytes into `out[at..at + 32]`.
#[target_feature(enable = "avx2")]
fn store32(v: __m256i, out: &mut [u8; L], at: usize) {
    let chunk: &mut [u8; 32] = (&mut out[at..at + 32]).try_into().unwrap_or_else(|_| unreachable!());
    // SAFETY: a 32-byte unaligned store into a 32-byte array.
    unsafe { _mm256_storeu_si256(chunk.as_mut_ptr().cast(), v) };
}

#[target_feature(enable = "avx2")]
fn lists_avx2(m: u64, first: bool, shares: &[u8], masks: &Masks, u_out: &mut [u8; L], up_out: &mut [u8; L]) {
    let (a, beta) = bit_lanes(m, masks.delta);
    let k = _mm256_set1_epi16(i16::from(first));
    let p = _mm256_set1_epi16(P);
    let mut bits = [0u8; L];
    bits[..L - 1].copy_from_slice(shares);
    bits[L - 1] = u8::from(first);
    let s = widen(&bits);
    // c = b, or K + p − b where a = 1: at most 128.
    let c: Quad = std::array::from_fn(|r| {
        let flipped = _mm256_sub_epi16(_mm256_add_epi16(k, p), s[r]);
        _mm256_or_si256(_mm256_and_si256(a[r], flipped), _mm256_andnot_si256(a[r], s[r]))
    });
    let i = prefix(c);
    let (w, w2) = (widen(&masks.w), widen(&masks.w2));
    // c' + 2p = Σ_{s≤t} c_s − 2c_t + K + 2p: at most 64·128 + 1 + 254 < 2^14.
    let base = _mm256_add_epi16(k, _mm256_add_epi16(p, p));
    let (mut u, mut up) = ([_mm256_setzero_si256(); 4], [_mm256_setzero_si256(); 4]);
    for r in 0..4 {
        let cp = fold(_mm256_add_epi16(_mm256_sub_epi16(i[r], _mm256_add_epi16(c[r], c[r])), base));
        let (x, y) = u_lists(cp, w[r], w2[r], beta[r], k);
        (u[r], up[r]) = (exact(x), exact(y));
    }
    // Entry e is position π(e).
    let idx = permutation_indices(&masks.perm);
    for (q, out) in [(&u, &mut *u_out), (&up, &mut *up_out)] {
        let [lo, hi] = shuffled(&byte_chunks(q), &idx);
        store32(lo, out, 0);
        store32(hi, out, 32);
    }
}

#[target_feature(enable = "avx2")]
fn combos_avx2(
    masks: &Masks,
    m: u64,
    mac: &[u8],
    kappa: &[u8; MAC_KEYS],
    tables: &Tables,
) -> [u32; MAC_KEYS] {
    let (a, beta) = bit_lanes(m, masks.delta);
    let (w, w2) = (widen(&masks.w), widen(&masks.w2));
    let sigma = permuted_tables(tables, &masks.inverse);
    // k_t = Σ_{s≤t} a_s − 2a_t + 1, and k_63 = Σ_{s<63} a_s (a_63 = 0).
    let one = _mm256_set1_epi16(1);
    let sa = prefix(a.map(|v| _mm256_and_si256(v, one)));
    let mut k: Quad = std::array::from_fn(|r| {
        let two_a = _mm256_and_si256(a[r], _mm256_set1_epi16(2));
        _mm256_add_epi16(_mm256_sub_epi16(sa[r], two_a), one)
    });
    let last = _mm256_setr_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
    k[3] = _mm256_sub_epi16(k[3], last);
    let p = _mm256_set1_epi16(P);
    let mut out = [0u32; MAC_KEYS];
    for (j, x) in out.iter_mut().enumerate() {
        let mut g = [0u8; L];
        g[..L - 1].copy_from_slice(&mac[j * (L - 1)..(j + 1) * (L - 1)]);
        let g = widen(&g);
        let kap = _mm256_set1_epi16(i16::from(kappa[j]));
        // e = γ where a = 0, p − γ where a = 1 (lane 63 holds 0).
        let e: Quad = std::array::from_fn(|r| {
            let flipped = _mm256_sub_epi16(p, g[r]);
            _mm256_or_si256(_mm256_and_si256(a[r], flipped), _mm256_andnot_si256(a[r], g[r]))
        });
        let s = prefix(e);
        let (s1, s2) = (&sigma[j], &sigma[MAC_KEYS + j]);
        let mut acc = _mm256_setzero_si256();
        for r in 0..4 {
            let c = mac_c(s[r], e[r], k[r], kap);
            let (u, up) = u_lists_wide(c, w[r], w2[r], beta[r], kap);
            // Signed 16-bit operands below 2^14, pairs of products summed into 32-bit lanes.
            acc = _mm256_add_epi32(
                acc,
                _mm256_add_epi32(_mm256_madd_epi16(s1[r], u), _mm256_madd_epi16(s2[r], up)),
            );
        }
        *x = lane_sum(acc) % P as u32;
    }
    out
}
