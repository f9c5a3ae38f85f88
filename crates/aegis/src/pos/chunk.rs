//! Π_Pos's work on one chunk of elements ([`super`]): the chunks and their seeds, the
//! verifier's combination coefficients, a prover's shares of the lists and its shares of the
//! MACs of their combinations (through the vector paths of [`crate::lists_simd`] where the
//! processor has AVX-512 BW, else of [`crate::lists_simd_avx2`] where it has AVX2).
//! No messages: the rounds are in [`super`].

use std::ops::Range;

use veil_crypto::{Prg, Seed};
use veil_mpc::PartyId;

use crate::lists::{Kept, LANES, MaskStream, Masks, bits_of, combos_mod, lists_mod};
use crate::prime::Draws;
use std::sync::Arc;

use veil_mpc::{MpcError, Result};

use crate::claims::SignPair;
use crate::share::Masked;

/// MAC keys per verifier.
pub const MAC_KEYS: usize = 6;

/// Elements per chunk: each chunk has PRG streams and messages of its own, so the chunks of a
/// phase are computed in parallel and a phase holds a chunk's working set per thread.
pub(super) const CHUNK: usize = 1 << 12;

/// Chunks per group: the rounds stream through a group at a time (`Aegis::verify_signs`),
/// in parallel within it; a party holds about 1.2 KB per element of a group (24 MiB per
/// run for 32 chunks of 4 096).
pub(super) const GROUP: usize = 32;

/// A 16-byte seed per chunk, drawn in order from `prg` (both holders of its seed draw the same).
pub(super) fn chunk_seeds(prg: &mut Prg, chunks: usize) -> Vec<[u8; 16]> {
    (0..chunks).map(|_| prg.next_block()).collect()
}

pub(super) fn draws(seed: &[u8; 16], p: u32) -> Draws {
    Draws::new(Prg::new(&Seed(*seed)), p)
}

/// The inputs of Π_Pos, `y = x − 2^(l−1)·z` for every sign pair in order, read in place from
/// the pairs' `x` and `z` (which the products' records keep anyway) instead of being copied
/// into one vector (16 bytes per element and party).
pub(crate) struct Ys {
    /// Each pair's first index, `x` and `z`.
    parts: Vec<(usize, Arc<Masked>, Arc<Masked>)>,
    pub(super) n: usize,
    half: u64,
}

impl Ys {
    /// The inputs of `pairs` in an `l`-bit ring; a pair whose `x` and `z` differ in length is
    /// refused.
    pub(crate) fn new(pairs: Vec<SignPair>, l: u32) -> Result<Ys> {
        let mut parts = Vec::with_capacity(pairs.len());
        let mut n = 0;
        for p in pairs {
            if p.x.n != p.z.n {
                return Err(MpcError::Invalid(format!("a sign pair of {} and {} elements", p.x.n, p.z.n)));
            }
            let len = p.x.n;
            parts.push((n, p.x, p.z));
            n += len;
        }
        Ok(Ys { parts, n, half: 1u64 << (l - 1) })
    }

    /// Element `i`'s pair (`x`, `z`) and its index there (one search for all its components).
    fn locate(&self, i: usize) -> (&Masked, &Masked, usize) {
        let k = self.parts.partition_point(|(start, _, _)| *start <= i).saturating_sub(1);
        let (start, x, z) = &self.parts[k];
        (x, z, i - start)
    }

    /// Component `c` (`0` = `m`, `1` = `[r]_1`, `2` = `[r]_2`) of the element at index `at`
    /// of the pair `(x, z)`, not reduced to `l` bits.
    fn at(&self, (x, z, at): (&Masked, &Masked, usize), c: usize) -> u64 {
        let pick = |v: &Masked| match c {
            0 => v.m[at],
            1 => v.r.one[at],
            _ => v.r.two[at],
        };
        pick(x).wrapping_sub(pick(z).wrapping_mul(self.half))
    }
}

pub(super) fn components(me: PartyId, y: &Ys, l: u32, i: usize) -> [Option<u64>; 3] {
    let red = |v: u64| if l == 64 { v } else { v & ((1u64 << l) - 1) };
    let el = y.locate(i);
    let y0 = (me != 0).then(|| red(y.at(el, 0)));
    let y1 = (me != 1).then(|| red(y.at(el, 2).wrapping_neg()));
    let y2 = (me != 2).then(|| red(y.at(el, 1).wrapping_neg()));
    [y0, y1, y2]
}

/// The verifier's `R = y_{k−1} + y_{k+1}` of element `i`: its sign bit and the bits `b_s` of
/// `B = 2^{l−1} − 1 − R̂` (big-endian, `l − 1`).
pub(super) fn bound_bits(
    me: PartyId,
    y: &Ys,
    l: u32,
    k: PartyId,
    i: usize,
) -> (u8, [u8; crate::lists::MAX_L]) {
    let c = components(me, y, l, i);
    let mask = if l == 64 { u64::MAX } else { (1u64 << l) - 1 };
    let r = c[(k + 2) % 3].unwrap_or(0).wrapping_add(c[(k + 1) % 3].unwrap_or(0)) & mask;
    let half = 1u64 << (l - 1);
    let (bits, _) = bits_of(half - 1 - (r & (half - 1)), l as usize);
    // `bits_of` reads `l − 1` bits below the top one: those of B (whose top bit is 0).
    (((r >> (l - 1)) & 1) as u8, bits)
}

/// Chunks of `n` elements.
pub(super) fn chunk_count(n: usize) -> usize {
    n.div_ceil(CHUNK)
}

/// The groups of the chunks of `n` elements, as ranges of chunk indices, [`GROUP`] at a time.
pub(super) fn groups(n: usize) -> impl Iterator<Item = Range<usize>> {
    let chunks = chunk_count(n);
    (0..chunks).step_by(GROUP).map(move |g| g..(g + GROUP).min(chunks))
}

/// The elements `start..end` of each chunk of `group` (of `n` elements).
pub(super) fn chunk_ranges(n: usize, group: Range<usize>) -> Vec<(usize, usize)> {
    group.map(|c| (c * CHUNK, ((c + 1) * CHUNK).min(n))).collect()
}

/// The combination coefficients the verifier draws with its run (secret until it sends
/// `coins` after the openings): `σ[e][j]` for the `2l` entries of every element, and per
/// element two `τ` per key (the two coordinates of an element of `F_{p^2}`).
pub(super) struct Coefficients {
    pub(super) sigma: Vec<[u8; LANES]>,
    /// `σ` key by key (`[j][e]`), so each key's sum over the entries is one vectorised loop.
    pub(super) by_key: Vec<u8>,
    tau_seeds: Vec<[u8; 16]>,
}

impl Coefficients {
    pub(super) fn new(coins: &[u8; 16], l: usize, p: u32, chunks: usize) -> Coefficients {
        let mut prg = Prg::new(&Seed(*coins));
        let mut d = Draws::new(Prg::new(&Seed(prg.next_block())), p);
        let mut flat = vec![0u8; 2 * l * MAC_KEYS];
        d.fill(&mut flat);
        let sigma: Vec<[u8; LANES]> = flat
            .chunks_exact(MAC_KEYS)
            .map(|c| std::array::from_fn(|j| if j < MAC_KEYS { c[j] } else { 0 }))
            .collect();
        let by_key = (0..MAC_KEYS).flat_map(|j| sigma.iter().map(move |s| s[j])).collect();
        Coefficients { sigma, by_key, tau_seeds: chunk_seeds(&mut prg, chunks) }
    }

    /// `τ` of a chunk's `n` elements: `[i][c·K + j]`.
    pub(super) fn tau(&self, chunk: usize, n: usize, p: u32) -> Vec<u8> {
        let mut t = vec![0u8; n * 2 * MAC_KEYS];
        draws(&self.tau_seeds[chunk], p).fill(&mut t);
        t
    }
}

/// Unreduced sums `[c][j]` of the two coordinates `c` of each key's combination.
pub(super) type Sums = [[u64; MAC_KEYS]; 2];

/// `Σ_i τ_{c,j,i}·x_{j,i}` over a chunk, unreduced (`[c][j]`).
pub(super) fn tau_sums(tau: &[u8], x: &[[u32; MAC_KEYS]]) -> Sums {
    let mut s = [[0u64; MAC_KEYS]; 2];
    for (t, xs) in tau.chunks_exact(2 * MAC_KEYS).zip(x) {
        for c in 0..2 {
            for j in 0..MAC_KEYS {
                s[c][j] += u64::from(t[c * MAC_KEYS + j]) * u64::from(xs[j]);
            }
        }
    }
    s
}

pub(super) fn add_sums(a: Sums, b: Sums) -> Sums {
    std::array::from_fn(|c| std::array::from_fn(|j| a[c][j] + b[c][j]))
}

/// A prover's shares of the lists of elements `i0..i1` (a chunk), `2l` entries per element,
/// its output bits `Δ`, and with `keep` what it keeps of the masks for round 4 ([`Kept`]).
/// The masks come from the chunk's two seeds: `Δ` and `π` from `masks_seed`, `w` and `w'`
/// from `weights_seed` ([`MaskStream::split`]).
#[allow(clippy::too_many_arguments, reason = "a chunk's inputs")]
pub(super) fn prover_lists(
    p: u32,
    l: usize,
    (me, k): (PartyId, PartyId),
    y: &Ys,
    first: bool,
    shares: &[u8],
    (masks_seed, weights_seed): (&[u8; 16], &[u8; 16]),
    (i0, i1): (usize, usize),
    keep: bool,
) -> (Vec<u8>, Vec<u8>, Option<Vec<Kept>>) {
    let (mut pair, mut weights) = (draws(masks_seed, p), draws(weights_seed, p));
    let mut lists = vec![0u8; (i1 - i0) * 2 * l];
    let mut ds = Vec::with_capacity(i1 - i0);
    let mut kept = Vec::with_capacity(if keep { i1 - i0 } else { 0 });
    let mut masks = MaskStream::split(&mut pair, &mut weights, l, i1 - i0);
    for (j, i) in (i0..i1).enumerate() {
        let Some(mk) = masks.next_masks() else { break };
        let m = components(me, y, l as u32, i)[k].unwrap_or(0);
        let (u, up) = lists[j * 2 * l..(j + 1) * 2 * l].split_at_mut(l);
        lists_mod(p, l, m, first, &shares[j * (l - 1)..(j + 1) * (l - 1)], mk, u, up);
        ds.push(mk.delta);
        if keep {
            kept.push(Kept::new(mk));
        }
    }
    (lists, ds, keep.then_some(kept))
}

/// A prover's shares of the MACs of each element's `λ` combinations (before `τ`):
/// `Σ_s g_s·γ(b_s) + h·γ(1)` from its MAC shares `mac` (`[i][j][s]`, key by key) and `kappa`
/// of 1; with AVX-512 BW and `l = 64`, the same sums regrouped ([`crate::lists_simd`]).
#[allow(clippy::too_many_arguments, reason = "a chunk's inputs")]
pub(super) fn prover_combos(
    p: u32,
    l: usize,
    (me, k): (PartyId, PartyId),
    y: &Ys,
    mac: &[u8],
    (masks_seed, weights_seed, kept): (&[u8; 16], &[u8; 16], Option<&[Kept]>),
    kappa: &[u8; MAC_KEYS],
    sigma: &[[u8; LANES]],
    (i0, i1): (usize, usize),
) -> Vec<[u32; MAC_KEYS]> {
    let mut weights = draws(weights_seed, p);
    let tables = simd_tables(p, l, sigma);
    let mut combos = Vec::with_capacity(i1 - i0);
    let mut push = |j: usize, mk: &Masks| {
        let m = components(me, y, l as u32, i0 + j)[k].unwrap_or(0);
        let per = &mac[j * (l - 1) * MAC_KEYS..(j + 1) * (l - 1) * MAC_KEYS];
        combos.push(element_combos(p, l, m, mk, per, kappa, sigma, tables.as_ref()));
    };
    match kept {
        // The masks round 2 kept (all of the chunk's or none), their weights drawn again.
        Some(kept) => {
            let mut mk = Masks::blank(0);
            for (j, kept) in kept.iter().enumerate().take(i1 - i0) {
                kept.masks_into(&mut mk, &mut weights, l);
                push(j, &mk);
            }
        }
        // Else all of them drawn again, as round 2 drew them.
        None => {
            let mut pair = draws(masks_seed, p);
            let mut masks = MaskStream::split(&mut pair, &mut weights, l, i1 - i0);
            for j in 0..i1 - i0 {
                let Some(mk) = masks.next_masks() else { break };
                push(j, mk);
            }
        }
    }
    combos
}

/// A vector path of the provers' combinations and its tables of the coefficients.
pub(super) enum Tables {
    /// AVX-512 BW ([`crate::lists_simd`]).
    #[cfg(target_arch = "x86_64")]
    Avx512(Box<crate::lists_simd::Tables>),
    /// AVX2 without AVX-512 BW ([`crate::lists_simd_avx2`]).
    #[cfg(target_arch = "x86_64")]
    Avx2(Box<crate::lists_simd_avx2::Tables>),
}

/// The vector path's tables where one applies: `l = 64`, `p = 127`, and AVX-512 BW or else
/// AVX2.
pub(super) fn simd_tables(p: u32, l: usize, sigma: &[[u8; LANES]]) -> Option<Tables> {
    #[cfg(target_arch = "x86_64")]
    if p == 127 && l == 64 {
        if crate::lists_simd::available() {
            return crate::lists_simd::Tables::new(sigma).map(|t| Tables::Avx512(Box::new(t)));
        }
        if crate::lists_simd_avx2::available() {
            return crate::lists_simd_avx2::Tables::new(sigma).map(|t| Tables::Avx2(Box::new(t)));
        }
    }
    let _ = (p, l, sigma);
    None
}

/// One element's combinations `x_j mod p`: through the vector path with `tables`, else
/// through the portable weights ([`crate::lists`]).
#[allow(clippy::too_many_arguments, reason = "one element's inputs")]
pub(super) fn element_combos(
    p: u32,
    l: usize,
    m: u64,
    mk: &Masks,
    mac: &[u8],
    kappa: &[u8; MAC_KEYS],
    sigma: &[[u8; LANES]],
    tables: Option<&Tables>,
) -> [u32; MAC_KEYS] {
    let fast = match tables {
        #[cfg(target_arch = "x86_64")]
        Some(Tables::Avx512(t)) => crate::lists_simd::combos(mk, m, mac, kappa, t),
        #[cfg(target_arch = "x86_64")]
        Some(Tables::Avx2(t)) => crate::lists_simd_avx2::combos(mk, m, mac, kappa, t),
        None => None,
    };
    fast.unwrap_or_else(|| combos_mod(p, l, m, mk, mac, kappa, sigma))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every vector path this processor has, AVX2 also where AVX-512 BW is preferred.
    fn vector_paths(sigma: &[[u8; LANES]]) -> Vec<Tables> {
        let mut paths = vec![];
        #[cfg(target_arch = "x86_64")]
        {
            if crate::lists_simd::available() {
                paths.extend(crate::lists_simd::Tables::new(sigma).map(|t| Tables::Avx512(Box::new(t))));
            }
            if crate::lists_simd_avx2::available() {
                paths.extend(crate::lists_simd_avx2::Tables::new(sigma).map(|t| Tables::Avx2(Box::new(t))));
            }
        }
        let _ = sigma;
        paths
    }

    /// The vector paths' combinations equal the portable weights' on random values and at
    /// the extremes of every input (masks, coefficients, MAC shares, keys' shares of 1, `M`).
    #[test]
    fn the_vector_combinations_equal_the_portable_ones() {
        let (p, l) = (127u32, 64usize);
        if simd_tables(p, l, &vec![[0u8; LANES]; 2 * l]).is_none() {
            eprintln!(
                "skipped: this processor has neither AVX-512 BW nor AVX2 (the portable path alone runs)"
            );
            return;
        }
        let mut d = Draws::new(Prg::new(&Seed([3; 16])), p);
        let mut g = Prg::new(&Seed([4; 16]));
        for trial in 0..3000 {
            let mut flat = vec![0u8; 2 * l * MAC_KEYS];
            d.fill(&mut flat);
            if trial % 5 == 0 {
                flat.iter_mut().for_each(|v| *v = 126);
            }
            let sigma: Vec<[u8; LANES]> = flat
                .chunks_exact(MAC_KEYS)
                .map(|c| std::array::from_fn(|j| if j < MAC_KEYS { c[j] } else { 0 }))
                .collect();
            let paths = vector_paths(&sigma);
            let mut mk = Masks::draw(&mut d, l);
            if trial % 7 == 1 {
                (mk.w, mk.w2) = ([126; 64], [126; 64]);
            }
            let m = crate::lists::edge_or_random(trial, &mut g);
            let mut mac = vec![0u8; MAC_KEYS * (l - 1)];
            d.fill(&mut mac);
            if trial % 3 == 0 {
                mac.iter_mut().for_each(|v| *v = 126);
            }
            let mut kappa = [0u8; MAC_KEYS];
            d.fill(&mut kappa);
            if trial % 11 == 0 {
                kappa = [126; MAC_KEYS];
            }
            let slow = combos_mod(p, l, m, &mk, &mac, &kappa, &sigma);
            for tables in &paths {
                let fast = element_combos(p, l, m, &mk, &mac, &kappa, &sigma, Some(tables));
                assert_eq!(fast, slow, "trial {trial}");
            }
        }
    }
}
