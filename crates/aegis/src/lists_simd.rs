//! The lists of the sign-bit comparison ([`crate::lists`]), a prover's MAC combinations of
//! Π_Pos ([`crate::pos`], round 4), and the verifier's combinations of the openings and MAC
//! shares for the second prover ([`opened_combos`], [`mac_shares`]) with AVX-512 BW, for
//! `Z_2^64` (`l = 64` positions over `p = 127`), where the processor has it: an element's 64
//! positions sit in two registers of 32 16-bit lanes (the verifier's kernels: one register of
//! 64 bytes). The kernels compute exactly the values of the portable ones, so nothing of the
//! protocol or its security argument changes. Measured on LeNet at batch 30 (share of the whole
//! run's CPU): the provers' combinations 16 % → 5 %, the lists 5 % → 2 %.
//!
//! **The lists** ([`lists`]): `c_t = b_t` or `K − b_t` as `a_t` is 0 or 1 (`b_{l−1} = K`),
//! `c'_t = Σ_{s≤t} c_s − 2c_t + K` by prefix sums, then `u_t`, `u'_t` as in [`crate::lists`],
//! fully reduced and permuted into the order sent with one `vpermi2w` per register.
//!
//! **The same sum, regrouped.** Every entry of the lists is linear in a party's shares of the
//! bits `b_s` and of the constant 1 ([`crate::lists`], module docs), so a party's MAC share of an
//! entry is the entry's formula applied to its MAC shares: with `γ_s` its shares of `α·b_s`
//! (`s < l − 1`) and `κ` of `α` (`b_{l−1} = 1` contributes `κ`),
//!
//! ```text
//! e_s        = d_s·γ_s  (d_s = 1 − 2a_s; e_{l−1} = 0),     E_t = Σ_{s≤t} e_s
//! MAC(c'_t)  = E_t − 2e_t + κ·k_t,  k_t = Σ_{s≤t} a_s − 2a_t + 1  (k_{l−1} = Σ_{s<l−1} a_s)
//! MAC(u_t)   = w_t·MAC(c'_t) + β_t·κ,      MAC(u'_t) = w'_t·(w_t·MAC(c'_t) + κ)
//! x          = Σ_t σ_{π⁻¹(t)}·MAC(u_t) + σ_{l+π⁻¹(t)}·MAC(u'_t)
//! ```
//!
//! which is `Σ_s g_s·γ_s + h·κ` of the portable path with `g`, `h` the weights of the bits and
//! the constant in `Σ_e σ_e·entry_e`. The prefix sums run in five shifted additions per
//! register, the permutation of `σ` is one `vpermi2w` per register, and every value stays below
//! `2^15` between partial reductions (`x ↦ (x mod 2^7) + ⌊x/2^7⌋`, twice, leaves at most 128).
//! The tests compare both paths on random and edge inputs.
#![allow(unsafe_code)]
#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{
    __m256i, __m512i, __mmask32, _mm256_loadu_si256, _mm256_storeu_si256, _mm512_add_epi16, _mm512_add_epi32,
    _mm512_and_si512, _mm512_cvtepi16_epi8, _mm512_cvtepu8_epi16, _mm512_loadu_si512, _mm512_madd_epi16,
    _mm512_maddubs_epi16, _mm512_mask_add_epi8, _mm512_mask_add_epi16, _mm512_mask_storeu_epi8,
    _mm512_mask_sub_epi16, _mm512_maskz_loadu_epi8, _mm512_maskz_permutexvar_epi16, _mm512_maskz_set1_epi16,
    _mm512_min_epu8, _mm512_min_epu16, _mm512_mullo_epi16, _mm512_permutex2var_epi16,
    _mm512_permutexvar_epi16, _mm512_reduce_add_epi32, _mm512_set1_epi8, _mm512_set1_epi16,
    _mm512_srli_epi16, _mm512_sub_epi8, _mm512_sub_epi16, _mm512_test_epi8_mask,
};

use crate::lists::{LANES, Masks};
use crate::pos::MAC_KEYS;

/// Positions of a list of `Z_2^64`.
const L: usize = 64;
const P: u16 = 127;

/// Whether the processor has AVX-512 F and BW.
pub(crate) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw")
}

/// The coefficients `σ` of the combinations, key by key: `[j][e]` for the `u` list
/// (`e < 64`) and the `u'` list, as 16-bit words.
pub(crate) struct Tables {
    u: [[u16; L]; MAC_KEYS],
    up: [[u16; L]; MAC_KEYS],
}

impl Tables {
    /// From `sigma[e][j]` over the `2·64` entries.
    pub(crate) fn new(sigma: &[[u8; LANES]]) -> Option<Tables> {
        if sigma.len() != 2 * L {
            return None;
        }
        let mut t = Tables { u: [[0; L]; MAC_KEYS], up: [[0; L]; MAC_KEYS] };
        for (e, s) in sigma[..L].iter().zip(&sigma[L..]).enumerate() {
            for j in 0..MAC_KEYS {
                t.u[j][e] = u16::from(s.0[j]);
                t.up[j][e] = u16::from(s.1[j]);
            }
        }
        Some(t)
    }
}

/// One element's combinations `x_j mod p` (`j < 6`) from its masks, the provers' value `M`
/// (`m`, 64 bits), this prover's MAC shares `mac[j·63 + s]` of the bits and `kappa` of 1; `None`
/// if the processor lacks AVX-512 BW or `mac` has the wrong length.
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
    // SAFETY: the processor has both features `combos_avx512` is compiled for (checked above).
    Some(unsafe { combos_avx512(masks, m, mac, kappa, tables) })
}

/// The verifier's combinations of one element's opened entries ([`crate::pos`], round 2):
/// `x_j = Σ_e entry_e·σ_{j,e}` for each key, not reduced (below `128·126² < 2^21`), from the
/// `2·64` entries and `by_key` (`σ_{j,e}` at `j·128 + e`), every value below `p = 127`; `None`
/// without AVX-512 BW or with other lengths. The byte products are summed in pairs by
/// `vpmaddubsw` (at most `2·126² < 2^15`, so no saturation), then in 32-bit lanes: the exact
/// sums of the portable loop.
pub(crate) fn opened_combos(entries: &[u8], by_key: &[u8]) -> Option<[u32; MAC_KEYS]> {
    if entries.len() != 2 * L || by_key.len() != MAC_KEYS * 2 * L || !available() {
        return None;
    }
    // SAFETY: the processor has both features `opened_combos_avx512` is compiled for, and the
    // lengths are those it reads (both checked above).
    Some(unsafe { opened_combos_avx512(entries, by_key) })
}

/// [`opened_combos`] on checked lengths: `entries` 128 bytes, `by_key` `128·MAC_KEYS`.
#[target_feature(enable = "avx512f,avx512bw")]
fn opened_combos_avx512(entries: &[u8], by_key: &[u8]) -> [u32; MAC_KEYS] {
    let load = |v: &[u8], at: usize| {
        assert!(at + 64 <= v.len());
        // SAFETY: a 64-byte load inside `v` (checked just above), unaligned.
        unsafe { _mm512_loadu_si512(v.as_ptr().add(at).cast()) }
    };
    let (e0, e1) = (load(entries, 0), load(entries, L));
    let ones = _mm512_set1_epi16(1);
    std::array::from_fn(|j| {
        let (s0, s1) = (load(by_key, 2 * L * j), load(by_key, 2 * L * j + L));
        let low = _mm512_madd_epi16(_mm512_maddubs_epi16(e0, s0), ones);
        let high = _mm512_madd_epi16(_mm512_maddubs_epi16(e1, s1), ones);
        _mm512_reduce_add_epi32(_mm512_add_epi32(low, high)) as u32
    })
}

/// The verifier's MAC shares for the second prover ([`crate::pos`], round 3) of one element's
/// `63` bits `b_s ∈ {0, 1}` under each key: `rows[63·j + s] ← α_j·b_s − γ_{j,s}` (mod 127),
/// where `rows` holds the first prover's shares `γ < p`, `63·MAC_KEYS` bytes; `false` (nothing
/// written) without AVX-512 BW or with other lengths. Per key one masked register of 63 byte
/// lanes: `(p − γ) + (α_j where b_s = 1)`, at most `2p − 1`, less `p` where that is `p` or more.
pub(crate) fn mac_shares(keys: &[u8; MAC_KEYS], bits: &[u8], rows: &mut [u8]) -> bool {
    if bits.len() < L - 1 || rows.len() != MAC_KEYS * (L - 1) || !available() {
        return false;
    }
    // SAFETY: the processor has both features `mac_shares_avx512` is compiled for, and the
    // lengths are those it reads and writes (both checked above).
    unsafe { mac_shares_avx512(keys, bits, rows) };
    true
}

/// [`mac_shares`] on checked lengths: `bits` at least 63 bytes, `rows` `63·MAC_KEYS`.
#[target_feature(enable = "avx512f,avx512bw")]
fn mac_shares_avx512(keys: &[u8; MAC_KEYS], bits: &[u8], rows: &mut [u8]) {
    const LOW63: u64 = (1 << (L - 1)) - 1;
    assert!(bits.len() >= L - 1 && rows.len() == MAC_KEYS * (L - 1));
    let p = _mm512_set1_epi8(P as i8);
    // SAFETY: a masked load of the first 63 bytes of `bits` (checked above).
    let b = unsafe { _mm512_maskz_loadu_epi8(LOW63, bits.as_ptr().cast()) };
    let set = _mm512_test_epi8_mask(b, b);
    for (j, &key) in keys.iter().enumerate() {
        let row = rows[j * (L - 1)..].as_mut_ptr();
        // SAFETY: masked 63-byte load and store inside `rows[63j..63j + 63]` (checked above).
        unsafe {
            let gamma = _mm512_maskz_loadu_epi8(LOW63, row.cast());
            let minus = _mm512_sub_epi8(p, gamma);
            let v = _mm512_mask_add_epi8(minus, set, minus, _mm512_set1_epi8(key as i8));
            _mm512_mask_storeu_epi8(row.cast(), LOW63, _mm512_min_epu8(v, _mm512_sub_epi8(v, p)));
        }
    }
}

/// Two registers of 16-bit lanes from 64 bytes.
#[target_feature(enable = "avx512f,avx512bw")]
fn widen(bytes: &[u8; L]) -> (__m512i, __m512i) {
    // SAFETY: both 32-byte loads read inside the 64-byte array (unaligned loads).
    unsafe {
        let lo = _mm256_loadu_si256(bytes.as_ptr().cast::<__m256i>());
        let hi = _mm256_loadu_si256(bytes.as_ptr().add(32).cast::<__m256i>());
        (_mm512_cvtepu8_epi16(lo), _mm512_cvtepu8_epi16(hi))
    }
}

/// Two registers from 64 words.
#[target_feature(enable = "avx512f,avx512bw")]
fn load_words(w: &[u16; L]) -> (__m512i, __m512i) {
    // SAFETY: both 64-byte loads read inside the 128-byte array (unaligned loads).
    unsafe { (_mm512_loadu_si512(w.as_ptr().cast()), _mm512_loadu_si512(w.as_ptr().add(32).cast())) }
}

/// `x ↦ (x mod 2^7) + ⌊x/2^7⌋` twice: `≡ x (mod 127)`, at most 128 for `x < 2^14`, at most
/// 129 below `2^16`.
#[target_feature(enable = "avx512f,avx512bw")]
fn fold(x: __m512i) -> __m512i {
    let low = _mm512_set1_epi16(0x7f);
    let y = _mm512_add_epi16(_mm512_and_si512(x, low), _mm512_srli_epi16::<7>(x));
    _mm512_add_epi16(_mm512_and_si512(y, low), _mm512_srli_epi16::<7>(y))
}

/// The shifts of the prefix sums: lane `i` reads lane `i − k` (`k = 1, 2, 4, 8, 16`).
const SHIFTS: [[u16; 32]; 5] = {
    let mut s = [[0u16; 32]; 5];
    let mut k = 0;
    while k < 5 {
        let mut i = 0;
        while i < 32 {
            s[k][i] = if i >= (1 << k) { (i - (1 << k)) as u16 } else { 0 };
            i += 1;
        }
        k += 1;
    }
    s
};

/// Inclusive prefix sums of 64 lanes (`lo`, then `hi`), wrapping at `2^16`.
#[target_feature(enable = "avx512f,avx512bw")]
fn prefix(lo: __m512i, hi: __m512i) -> (__m512i, __m512i) {
    let (mut lo, mut hi) = (lo, hi);
    for (k, s) in SHIFTS.iter().enumerate() {
        // SAFETY: a 64-byte load inside the 64-byte row.
        let idx = unsafe { _mm512_loadu_si512(s.as_ptr().cast()) };
        let keep: __mmask32 = !((1u32 << (1 << k)) - 1);
        lo = _mm512_add_epi16(lo, _mm512_maskz_permutexvar_epi16(keep, idx, lo));
        hi = _mm512_add_epi16(hi, _mm512_maskz_permutexvar_epi16(keep, idx, hi));
    }
    let last = _mm512_permutexvar_epi16(_mm512_set1_epi16(31), lo);
    (lo, _mm512_add_epi16(hi, last))
}

/// `MAC(c'_t)` (partly reduced) from the prefix sums `s` of `e`, and `k`: `s − 2e + p + κ·k`,
/// below `64·127 + 127 + 127·64 < 2^14` before the reduction.
#[target_feature(enable = "avx512f,avx512bw")]
fn mac_c(s: __m512i, e: __m512i, k: __m512i, kap: __m512i) -> __m512i {
    let v = _mm512_add_epi16(_mm512_sub_epi16(s, _mm512_add_epi16(e, e)), _mm512_set1_epi16(P as i16));
    fold(_mm512_add_epi16(v, _mm512_mullo_epi16(kap, k)))
}

/// `u_t = w_t·c + β_t·K` and `u'_t = w'_t·(w_t·c + K)`, partly reduced (at most 128): with
/// `K = κ` and `c = MAC(c'_t)`, the MAC shares of the entries.
#[target_feature(enable = "avx512f,avx512bw")]
fn u_lists(c: __m512i, w: __m512i, w2: __m512i, beta: __mmask32, k: __m512i) -> (__m512i, __m512i) {
    let wc = _mm512_mullo_epi16(w, c);
    let u = fold(_mm512_mask_add_epi16(wc, beta, wc, k));
    let up = fold(_mm512_mullo_epi16(w2, fold(_mm512_add_epi16(wc, k))));
    (u, up)
}

/// The bits `a_t` of `M̂` (bit 62 − t of `M` for `t < 63`, `a_63 = 0`: bit `t` of the reversed
/// `M << 1`) and `β_t = MSB(M) ⊕ a_t ⊕ Δ`, as the lane masks of the low and high registers:
/// `[a_lo, a_hi, β_lo, β_hi]`.
fn lane_masks(m: u64, delta: u8) -> [__mmask32; 4] {
    let a = (m << 1).reverse_bits();
    let flip = if ((m >> 63) as u8 ^ delta) & 1 == 1 { u64::MAX } else { 0 };
    let beta = a ^ flip;
    [a as u32, (a >> 32) as u32, beta as u32, (beta >> 32) as u32]
}

#[target_feature(enable = "avx512f,avx512bw")]
fn combos_avx512(
    masks: &Masks,
    m: u64,
    mac: &[u8],
    kappa: &[u8; MAC_KEYS],
    tables: &Tables,
) -> [u32; MAC_KEYS] {
    let [a_lo, a_hi, b_lo, b_hi] = lane_masks(m, masks.delta);
    let (w_lo, w_hi) = widen(&masks.w);
    let (w2_lo, w2_hi) = widen(&masks.w2);
    let (inv_lo, inv_hi) = widen(&masks.inverse);
    // k_t = Σ_{s≤t} a_s − 2a_t + 1, and k_63 = Σ_{s<63} a_s (one less: a_63 = 0).
    let one = _mm512_set1_epi16(1);
    let (sa_lo, sa_hi) = prefix(_mm512_maskz_set1_epi16(a_lo, 1), _mm512_maskz_set1_epi16(a_hi, 1));
    let k_lo = _mm512_add_epi16(_mm512_sub_epi16(sa_lo, _mm512_maskz_set1_epi16(a_lo, 2)), one);
    let k_hi = _mm512_add_epi16(_mm512_sub_epi16(sa_hi, _mm512_maskz_set1_epi16(a_hi, 2)), one);
    let k_hi = _mm512_mask_sub_epi16(k_hi, 1 << 31, k_hi, one);
    let p = _mm512_set1_epi16(P as i16);
    let mut out = [0u32; MAC_KEYS];
    for (j, x) in out.iter_mut().enumerate() {
        let mut g = [0u8; L];
        g[..L - 1].copy_from_slice(&mac[j * (L - 1)..(j + 1) * (L - 1)]);
        let (g_lo, g_hi) = widen(&g);
        let kap = _mm512_set1_epi16(i16::from(kappa[j]));
        // e = γ where a = 0, p − γ where a = 1 (the lane 63 holds 0).
        let e_lo = _mm512_mask_sub_epi16(g_lo, a_lo, p, g_lo);
        let e_hi = _mm512_mask_sub_epi16(g_hi, a_hi, p, g_hi);
        let (s_lo, s_hi) = prefix(e_lo, e_hi);
        // MAC(c') + p = E − 2e + p + κ·k: below 64·127 + 127 + 127·64 < 2^14.
        let (c_lo, c_hi) = (mac_c(s_lo, e_lo, k_lo, kap), mac_c(s_hi, e_hi, k_hi, kap));
        let (u_lo, up_lo) = u_lists(c_lo, w_lo, w2_lo, b_lo, kap);
        let (u_hi, up_hi) = u_lists(c_hi, w_hi, w2_hi, b_hi, kap);
        // σ at π⁻¹(t), position by position.
        let (t_lo, t_hi) = load_words(&tables.u[j]);
        let (t2_lo, t2_hi) = load_words(&tables.up[j]);
        let s1_lo = _mm512_permutex2var_epi16(t_lo, inv_lo, t_hi);
        let s1_hi = _mm512_permutex2var_epi16(t_lo, inv_hi, t_hi);
        let s2_lo = _mm512_permutex2var_epi16(t2_lo, inv_lo, t2_hi);
        let s2_hi = _mm512_permutex2var_epi16(t2_lo, inv_hi, t2_hi);
        // Products below 127·129 < 2^15, pairs summed into 32-bit lanes.
        let acc = _mm512_add_epi32(
            _mm512_add_epi32(_mm512_madd_epi16(s1_lo, u_lo), _mm512_madd_epi16(s1_hi, u_hi)),
            _mm512_add_epi32(_mm512_madd_epi16(s2_lo, up_lo), _mm512_madd_epi16(s2_hi, up_hi)),
        );
        *x = (_mm512_reduce_add_epi32(acc) as u32) % u32::from(P);
    }
    out
}

/// One element's lists as sent ([`crate::lists`]): `u` into `u_out`, `u'` into `up_out` (64
/// entries each), from `M` (`m`), this party's shares of the 63 bits and whether it holds the
/// constant 1 (`first`); `false` (nothing written) without AVX-512 BW or with other lengths.
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
    // SAFETY: the processor has both features `lists_avx512` is compiled for (checked above).
    unsafe { lists_avx512(m, first, shares, masks, u_out, up_out) };
    true
}

/// `v mod 127` for a [`fold`]ed `v ≤ 128`: the smaller of `v` and `v − 127` (which wraps above
/// `v` where `v < 127`).
#[target_feature(enable = "avx512f,avx512bw")]
fn exact(v: __m512i) -> __m512i {
    _mm512_min_epu16(v, _mm512_sub_epi16(v, _mm512_set1_epi16(P as i16)))
}

/// 32 words (each `< 256`) as bytes into `out[at..at + 32]`.
#[target_feature(enable = "avx512f,avx512bw")]
fn store_bytes(v: __m512i, out: &mut [u8; L], at: usize) {
    assert!(at + 32 <= L);
    // SAFETY: a 32-byte store inside the 64-byte array (checked just above).
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(at).cast(), _mm512_cvtepi16_epi8(v)) };
}

#[target_feature(enable = "avx512f,avx512bw")]
fn lists_avx512(
    m: u64,
    first: bool,
    shares: &[u8],
    masks: &Masks,
    u_out: &mut [u8; L],
    up_out: &mut [u8; L],
) {
    let [a_lo, a_hi, b_lo, b_hi] = lane_masks(m, masks.delta);
    let k = _mm512_set1_epi16(i16::from(first));
    let p = _mm512_set1_epi16(P as i16);
    let mut bits = [0u8; L];
    bits[..L - 1].copy_from_slice(shares);
    bits[L - 1] = u8::from(first);
    let (s_lo, s_hi) = widen(&bits);
    // c = b, or K + p − b where a = 1: at most 128.
    let c_lo = _mm512_mask_sub_epi16(s_lo, a_lo, _mm512_add_epi16(k, p), s_lo);
    let c_hi = _mm512_mask_sub_epi16(s_hi, a_hi, _mm512_add_epi16(k, p), s_hi);
    let (i_lo, i_hi) = prefix(c_lo, c_hi);
    // c' + 2p = Σ_{s≤t} c_s − 2c_t + K + 2p: at most 64·128 + 1 + 254 < 2^14.
    let two_p = _mm512_add_epi16(p, p);
    let cp_lo = fold(_mm512_add_epi16(
        _mm512_sub_epi16(i_lo, _mm512_add_epi16(c_lo, c_lo)),
        _mm512_add_epi16(k, two_p),
    ));
    let cp_hi = fold(_mm512_add_epi16(
        _mm512_sub_epi16(i_hi, _mm512_add_epi16(c_hi, c_hi)),
        _mm512_add_epi16(k, two_p),
    ));
    let (w_lo, w_hi) = widen(&masks.w);
    let (w2_lo, w2_hi) = widen(&masks.w2);
    let (u_lo, up_lo) = u_lists(cp_lo, w_lo, w2_lo, b_lo, k);
    let (u_hi, up_hi) = u_lists(cp_hi, w_hi, w2_hi, b_hi, k);
    let (u_lo, up_lo, u_hi, up_hi) = (exact(u_lo), exact(up_lo), exact(u_hi), exact(up_hi));
    // Entry e is position π(e).
    let (perm_lo, perm_hi) = widen(&masks.perm);
    store_bytes(_mm512_permutex2var_epi16(u_lo, perm_lo, u_hi), u_out, 0);
    store_bytes(_mm512_permutex2var_epi16(u_lo, perm_hi, u_hi), u_out, 32);
    store_bytes(_mm512_permutex2var_epi16(up_lo, perm_lo, up_hi), up_out, 0);
    store_bytes(_mm512_permutex2var_epi16(up_lo, perm_hi, up_hi), up_out, 32);
}

#[cfg(test)]
mod tests {
    use super::*;
    use veil_crypto::{Prg, Seed};

    /// A stream for a kernel's random inputs, or `None` (the test skipped, with a message)
    /// where the processor lacks AVX-512 BW.
    fn kernel_stream(seed: u8) -> Option<Prg> {
        if !available() {
            eprintln!("skipped: no AVX-512 BW on this processor");
            return None;
        }
        Some(Prg::new(&Seed([seed; 16])))
    }

    /// `n` uniform values below `p`.
    fn below_p(g: &mut Prg, n: usize) -> Vec<u8> {
        (0..n).map(|_| (g.next_u32() % u32::from(P)) as u8).collect()
    }

    /// The verifier's combinations from the kernel are the portable loop's sums, on random
    /// entries and coefficients and on the largest ones (`p − 1` everywhere).
    #[test]
    fn opened_combinations_match_the_portable_sums() {
        let Some(mut g) = kernel_stream(17) else { return };
        let mut below_p = |n: usize| below_p(&mut g, n);
        let cases = [
            (below_p(2 * L), below_p(MAC_KEYS * 2 * L)),
            (vec![126; 2 * L], vec![126; MAC_KEYS * 2 * L]),
            (vec![0; 2 * L], below_p(MAC_KEYS * 2 * L)),
        ];
        for (entries, by_key) in cases {
            let portable: [u32; MAC_KEYS] = std::array::from_fn(|j| {
                let row = &by_key[j * 2 * L..(j + 1) * 2 * L];
                entries.iter().zip(row).map(|(&o, &s)| u32::from(o) * u32::from(s)).sum()
            });
            assert_eq!(opened_combos(&entries, &by_key), Some(portable));
        }
        assert_eq!(opened_combos(&[0; 2 * L - 1], &[0; MAC_KEYS * 2 * L]), None, "a wrong length");
    }

    /// The verifier's MAC shares from the kernel are `α_j·b_s − γ_{j,s} mod p`, on random and
    /// edge keys, bits and shares.
    #[test]
    fn mac_shares_match_the_portable_ones() {
        let Some(mut g) = kernel_stream(19) else { return };
        let mut below_p = |n: usize| below_p(&mut g, n);
        let keys_cases = [[1u8, 126, 0, 63, 2, 125], std::array::from_fn(|j| below_p(MAC_KEYS)[j])];
        let bits_cases = [vec![1u8; L - 1], vec![0u8; L - 1], below_p(L - 1).iter().map(|v| v & 1).collect()];
        for keys in keys_cases {
            for bits in &bits_cases {
                for gamma in
                    [below_p(MAC_KEYS * (L - 1)), vec![0; MAC_KEYS * (L - 1)], vec![126; MAC_KEYS * (L - 1)]]
                {
                    let expected: Vec<u8> = gamma
                        .iter()
                        .enumerate()
                        .map(|(e, &c)| {
                            let (j, s) = (e / (L - 1), e % (L - 1));
                            ((u32::from(keys[j]) * u32::from(bits[s]) + 127 - u32::from(c)) % 127) as u8
                        })
                        .collect();
                    let mut rows = gamma.clone();
                    assert!(mac_shares(&keys, bits, &mut rows));
                    assert_eq!(rows, expected);
                }
            }
        }
        assert!(!mac_shares(&[0; MAC_KEYS], &[0; L - 1], &mut [0; MAC_KEYS * (L - 1) - 1]), "a wrong length");
    }
}
