//! Sign-bit verification (paper §4.2, Π_VSignBit, rebuilt where the paper leaves steps out): that each sign bit
//! `z` a sign extraction produced is the sign of its input `x`.
//!
//! - `z ∈ {0, 1}` is the product `z·z = z`, verified with every other product
//!   ([`crate::verify`]).
//! - Given that, `z = sign(x)` iff `y = x − 2^{l−1}·z` is non-negative. **Π_Pos** checks it with
//!   a verifier `P_k`: in the replicated view of `⟨y⟩` (`y_0 = m_y`, `y_1 = −[r_y]_2`,
//!   `y_2 = −[r_y]_1`; `P_j` holds `y_{j−1}, y_{j+1}`) the provers `P_{k±1}` hold `M = y_k` and
//!   the verifier `R = y_{k−1} + y_{k+1}`: the comparison of the sign extraction
//!   ([`crate::lists`]), on the bits of `B = 2^{l−1} − 1 − R̂`, which the verifier shares over
//!   `Z_127` and **MACs** under `λ = 6` keys `α_j` only it knows. The provers open their shares
//!   of the masked, permuted lists; the verifier outputs `v = sign(y) ⊕ Δ` from them, the provers
//!   their common `Δ`.
//! - **Dual execution**: Π_Pos runs with verifier P1 and with verifier P2, so one run has an
//!   honest verifier whoever is corrupted.
//! - **Batch equality**: each party hashes its output bits of both runs into `t_j`, inputs
//!   it, and the claims `α_j·(t_{j−1} − t_{j+1}) = 0` with random secret `α_j` join the batch
//!   product verification, so the whole check leaks one bit (accept or abort).
//!
//! **Rounds** (4, the two runs side by side): (1) the verifier sends the second prover its
//! shares of the bits (the first prover's come from their common PRG); (2) the provers open the
//! lists' values; (3) the verifier sends the coins of its check's coefficients, which it drew
//! in round 1 and kept secret, and the second prover its MAC shares of the bits and of 1
//! (`α_j·b_s` minus the first prover's PRG shares); (4) each prover sends its shares of the
//! MACs of `2λ` combinations, and the verifier checks them.
//!
//! **The MAC check** (one batch, the paper's per-element openings of MAC shares replaced):
//! with coefficients `σ_{j,e}` over an element's `2l` entries and `τ_{j,i} ∈ F_{p^2}` over the
//! elements, key `j`'s combination of the opened values is `T_j = Σ_i τ_{j,i}·Σ_e σ_{j,e}·entry_{i,e}`,
//! and each prover sends its share of `α_j·T_j`, computed without a MAC component per entry:
//! `Σ_e σ_e·entry_e = Σ_s g_s·b_s + h` with weights from the lists' masks (`crate::lists`),
//! so the share is `Σ_s g_s·γ_j(b_s) + h·γ_j(1)` from its MAC shares. Soundness: a nonzero
//! error in the opened entries of some element survives `σ_j` with probability `1/p`, then
//! `τ_j` with `1/p²`; a surviving error `E ≠ 0` makes the MAC pass only if the prover's own
//! error equals `α_j·E`, and `α_j` is independent of its view (its MAC shares are uniform):
//! `1/(p−1)`. So about `2/127` per key and `(2/127)^6 ≈ 2^-36` in all, the paper's bound with
//! the per-key combinations independent (which closes a gap of the paper's single
//! combination). MAC shares that are sent after the openings bind as well as shares sent before
//! them (the relation `γ^a + γ^b = α·b` holds whenever they arrive), so the second prover holds
//! nothing of a chunk between rounds; every share is exactly uniform ([`crate::prime`]).
//!
//! **Work and memory**: elements go in chunks with PRG streams and messages of their own,
//! computed in parallel; the provers draw each element's masks again in round 4 instead of
//! keeping them (a prover keeps its output bits only; keeping them saved about 4 % of LeNet's
//! verification for 400 MiB more at its peak), and the verifier keeps the opened lists (a byte
//! per entry) until it has combined them in round 3. Round 4's combinations take the vector
//! path of [`crate::lists_simd`] where the processor has AVX-512 BW.

use std::sync::Arc;

use rayon::prelude::*;
use veil_crypto::{Hasher, Prg, Seed};
use veil_mpc::{Ctx, MpcError, PartyId, Result};

use crate::claims::{SignPair, Terms};
use crate::lists::{LANES, Masks, bits_of, lists_mod, weights_mod};
use crate::prime::{Draws, Zp, prime_for};
use crate::share::{Aegis, Masked, Pair};

/// MAC keys per verifier.
pub const MAC_KEYS: usize = 6;

/// Elements per chunk: each chunk has PRG streams and messages of its own, so the chunks of a
/// phase are computed in parallel and a phase holds a chunk's working set per thread.
const CHUNK: usize = 1 << 12;

/// A 16-byte seed per chunk, drawn in order from `prg` (both holders of its seed draw the same).
fn chunk_seeds(prg: &mut Prg, chunks: usize) -> Vec<[u8; 16]> {
    (0..chunks).map(|_| prg.next_block()).collect()
}

fn draws(seed: &[u8; 16], p: u32) -> Draws {
    Draws::new(Prg::new(&Seed(*seed)), p)
}

fn components(me: PartyId, y: &Masked, l: u32, i: usize) -> [Option<u64>; 3] {
    let red = |v: u64| if l == 64 { v } else { v & ((1u64 << l) - 1) };
    let y0 = (me != 0).then(|| red(y.m[i]));
    let y1 = (me != 1).then(|| red(y.r.two[i].wrapping_neg()));
    let y2 = (me != 2).then(|| red(y.r.one[i].wrapping_neg()));
    [y0, y1, y2]
}

/// The verifier's `R = y_{k−1} + y_{k+1}` of element `i`: its sign bit and the bits `b_s` of
/// `B = 2^{l−1} − 1 − R̂` (big-endian, `l − 1`).
fn bound_bits(me: PartyId, y: &Masked, l: u32, k: PartyId, i: usize) -> (u8, [u8; crate::lists::MAX_L]) {
    let c = components(me, y, l, i);
    let mask = if l == 64 { u64::MAX } else { (1u64 << l) - 1 };
    let r = c[(k + 2) % 3].unwrap_or(0).wrapping_add(c[(k + 1) % 3].unwrap_or(0)) & mask;
    let half = 1u64 << (l - 1);
    let (bits, _) = bits_of(half - 1 - (r & (half - 1)), l as usize);
    // `bits_of` reads `l − 1` bits below the top one: those of B (whose top bit is 0).
    (((r >> (l - 1)) & 1) as u8, bits)
}

/// The chunks `start..end` of `n` elements.
fn chunk_ranges(n: usize) -> Vec<(usize, usize)> {
    (0..n.div_ceil(CHUNK)).map(|c| (c * CHUNK, ((c + 1) * CHUNK).min(n))).collect()
}

/// The combination coefficients the verifier draws with its run (secret until it sends
/// `coins` after the openings): `σ[e][j]` for the `2l` entries of every element, and per
/// element two `τ` per key (the two coordinates of an element of `F_{p^2}`).
struct Coefficients {
    sigma: Vec<[u8; LANES]>,
    tau_seeds: Vec<[u8; 16]>,
}

impl Coefficients {
    fn new(coins: &[u8; 16], l: usize, p: u32, chunks: usize) -> Coefficients {
        let mut prg = Prg::new(&Seed(*coins));
        let mut d = Draws::new(Prg::new(&Seed(prg.next_block())), p);
        let mut flat = vec![0u8; 2 * l * MAC_KEYS];
        d.fill(&mut flat);
        let sigma = flat
            .chunks_exact(MAC_KEYS)
            .map(|c| std::array::from_fn(|j| if j < MAC_KEYS { c[j] } else { 0 }))
            .collect();
        Coefficients { sigma, tau_seeds: chunk_seeds(&mut prg, chunks) }
    }

    /// `τ` of a chunk's `n` elements: `[i][c·K + j]`.
    fn tau(&self, chunk: usize, n: usize, p: u32) -> Vec<u8> {
        let mut t = vec![0u8; n * 2 * MAC_KEYS];
        draws(&self.tau_seeds[chunk], p).fill(&mut t);
        t
    }
}

/// Unreduced sums `[c][j]` of the two coordinates `c` of each key's combination.
type Sums = [[u64; MAC_KEYS]; 2];

/// `Σ_i τ_{c,j,i}·x_{j,i}` over a chunk, unreduced (`[c][j]`).
fn tau_sums(tau: &[u8], x: &[[u32; MAC_KEYS]]) -> Sums {
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

fn add_sums(a: Sums, b: Sums) -> Sums {
    std::array::from_fn(|c| std::array::from_fn(|j| a[c][j] + b[c][j]))
}

/// A prover's shares of the lists of elements `i0..i1` (a chunk), `2l` entries per element,
/// and its output bits `Δ`.
#[allow(clippy::too_many_arguments, reason = "a chunk's inputs")]
fn prover_lists(
    p: u32,
    l: usize,
    (me, k): (PartyId, PartyId),
    y: &Masked,
    first: bool,
    shares: &[u8],
    masks_seed: &[u8; 16],
    (i0, i1): (usize, usize),
) -> (Vec<u8>, Vec<u8>) {
    let mut pair = draws(masks_seed, p);
    let mut lists = vec![0u8; (i1 - i0) * 2 * l];
    let mut ds = Vec::with_capacity(i1 - i0);
    for (j, i) in (i0..i1).enumerate() {
        let mk = Masks::draw(&mut pair, l);
        let m = components(me, y, l as u32, i)[k].unwrap_or(0);
        let (u, up) = lists[j * 2 * l..(j + 1) * 2 * l].split_at_mut(l);
        lists_mod(p, l, m, first, &shares[j * (l - 1)..(j + 1) * (l - 1)], &mk, u, up);
        ds.push(mk.delta);
    }
    (lists, ds)
}

/// A prover's shares of the MACs of each element's `λ` combinations (before `τ`):
/// `Σ_s g_s·γ(b_s) + h·γ(1)` from its MAC shares `mac` (`[i][j][s]`, key by key) and `kappa`
/// of 1; with AVX-512 BW and `l = 64`, the same sums regrouped ([`crate::lists_simd`]).
#[allow(clippy::too_many_arguments, reason = "a chunk's inputs")]
fn prover_combos(
    p: u32,
    l: usize,
    (me, k): (PartyId, PartyId),
    y: &Masked,
    mac: &[u8],
    masks_seed: &[u8; 16],
    kappa: &[u8; MAC_KEYS],
    sigma: &[[u8; LANES]],
    (i0, i1): (usize, usize),
) -> Vec<[u32; MAC_KEYS]> {
    let mut pair = draws(masks_seed, p);
    let tables = simd_tables(p, l, sigma);
    let mut combos = Vec::with_capacity(i1 - i0);
    for (j, i) in (i0..i1).enumerate() {
        let mk = &Masks::draw(&mut pair, l);
        let m = components(me, y, l as u32, i)[k].unwrap_or(0);
        let per = &mac[j * (l - 1) * MAC_KEYS..(j + 1) * (l - 1) * MAC_KEYS];
        combos.push(element_combos(p, l, m, mk, per, kappa, sigma, tables.as_ref()));
    }
    combos
}

#[cfg(target_arch = "x86_64")]
use crate::lists_simd::Tables;

/// Off x86-64 there is no vector path, and so no tables.
#[cfg(not(target_arch = "x86_64"))]
enum Tables {}

/// The vector path's tables where it applies: `l = 64`, `p = 127` and AVX-512 BW.
fn simd_tables(p: u32, l: usize, sigma: &[[u8; LANES]]) -> Option<Tables> {
    #[cfg(target_arch = "x86_64")]
    if p == 127 && l == 64 && crate::lists_simd::available() {
        return Tables::new(sigma);
    }
    let _ = (p, l, sigma);
    None
}

/// One element's combinations `x_j mod p`: through the vector path with `tables`, else
/// through the portable weights ([`crate::lists`]).
#[allow(clippy::too_many_arguments, reason = "one element's inputs")]
fn element_combos(
    p: u32,
    l: usize,
    m: u64,
    mk: &Masks,
    mac: &[u8],
    kappa: &[u8; MAC_KEYS],
    sigma: &[[u8; LANES]],
    tables: Option<&Tables>,
) -> [u32; MAC_KEYS] {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = tables.and_then(|t| crate::lists_simd::combos(mk, m, mac, kappa, t)) {
        return x;
    }
    let _ = tables;
    portable_combos(p, l, m, mk, mac, kappa, sigma)
}

/// [`element_combos`] through the portable weights.
fn portable_combos(
    p: u32,
    l: usize,
    m: u64,
    mk: &Masks,
    mac: &[u8],
    kappa: &[u8; MAC_KEYS],
    sigma: &[[u8; LANES]],
) -> [u32; MAC_KEYS] {
    let zp = Zp::new(p);
    let mut g = vec![[0u8; LANES]; l - 1];
    let mut h = [0u16; LANES];
    weights_mod(p, l, m, mk, sigma, &mut g, &mut h);
    let mut x: [u32; MAC_KEYS] = std::array::from_fn(|q| u32::from(h[q]) * u32::from(kappa[q]));
    for (q, ms) in mac.chunks_exact(l - 1).enumerate() {
        for (gs, &mv) in g.iter().zip(ms) {
            x[q] += u32::from(gs[q]) * u32::from(mv);
        }
    }
    x.map(|v| zp.reduce(v))
}

impl Aegis {
    /// White-box tampering for the negative tests: applies `f` to the claimed sign bit of every
    /// recorded sign extraction at this party.
    #[doc(hidden)]
    pub fn tamper_signs(&mut self, f: impl Fn(&mut Masked)) {
        self.signs.iter_mut().for_each(|p| f(Arc::make_mut(&mut p.z)));
    }

    /// Π_VSignBit over every recorded sign pair: dual Π_Pos, then the equality claims are
    /// recorded as products for the batch verification that follows in [`Aegis::check`].
    pub(crate) fn verify_signs(&mut self, ctx: &mut Ctx, pairs: Vec<SignPair>) -> Result<()> {
        if pairs.is_empty() {
            return Ok(());
        }
        let half = 1u64 << (self.l() - 1);
        let mut ys = Vec::new();
        for p in &pairs {
            ys.push(self.sub(&p.x, &self.scale(&p.z, half))?);
        }
        drop(pairs);
        let y = concat_all(&ys);
        drop(ys);
        // Dual execution: the runs with verifiers P1 and P2, phase by phase.
        let mut runs = [self.pos_start(ctx, &y, 1)?, self.pos_start(ctx, &y, 2)?];
        for run in &mut runs {
            self.pos_lists(ctx, &y, run)?;
        }
        for run in &mut runs {
            self.pos_open(ctx, &y, run)?;
        }
        // Batch equality: each party hashes its output bits of both runs into `t_j` and inputs
        // it. Its first round (mask shares and P0's input) goes with the seeds, its second
        // with the MAC shares, so the sign verification takes 4 rounds in all.
        let t_mine = self.equality_digest(&runs);
        let words = t_mine.len();
        let mut inputs = self.share_input_each_start(ctx, &t_mine)?;
        for run in &mut runs {
            self.pos_macs(ctx, &y, run)?;
        }
        // (Each link delivers in order: P0's inputs, then the MAC shares, then P1's and P2's.)
        self.share_input_each_send(ctx, &mut inputs, &t_mine)?;
        for run in &runs {
            self.pos_finish(ctx, run)?;
        }
        let t = self.share_input_each_finish(ctx, inputs)?;
        // α_j·(t_{j−1} − t_{j+1}) = 0 for each j, verified with the products.
        let me = ctx.party();
        for j in 0..3 {
            let alpha = self.random_masked(ctx, "pos/equality-alpha", words)?;
            let d = self.sub(&t[(j + 2) % 3], &t[(j + 1) % 3])?;
            let zeros = |held: bool| if held { vec![0; words] } else { vec![] };
            let zero =
                Masked { m: zeros(me != 0), r: Pair { one: zeros(me != 2), two: zeros(me != 1) }, n: words };
            self.record(Arc::new(alpha), Arc::new(d), Arc::new(zero), Terms::Elementwise);
        }
        Ok(())
    }

    /// Round 1 of Π_Pos with verifier `k` on every element of `y`: the verifier draws its keys
    /// and the combination's coins, and sends the second prover its shares of the bits of `B`
    /// (the first prover's come from their common PRG); every party draws its chunk seeds.
    /// The instances with verifiers P1 and P2 run side by side, phase by phase
    /// ([`Aegis::verify_signs`]), so dual execution costs the rounds of one run: 4.
    fn pos_start(&mut self, ctx: &mut Ctx, y: &Masked, k: PartyId) -> Result<Pos> {
        let me = Self::check_server(ctx)?;
        let (n, l) = (y.n, self.l() as usize);
        let p = prime_for(self.l());
        let ranges = chunk_ranges(n);
        let (pa, pb) = ((k + 1) % 3, (k + 2) % 3);
        if me != k {
            let first = me == pa;
            let (values, macs) = if first {
                let v = chunk_seeds(&mut ctx.pair_prg(k, "aegis/pos/values")?, ranges.len());
                let m = chunk_seeds(&mut ctx.pair_prg(k, "aegis/pos/macs")?, ranges.len() + 1);
                (v, m)
            } else {
                (vec![], vec![])
            };
            let masks = chunk_seeds(&mut ctx.pair_prg(3 - k - me, "aegis/pos/masks")?, ranges.len());
            return Ok(Pos::Prover { k, n, first, values, macs, masks, deltas: vec![] });
        }
        let values = chunk_seeds(&mut ctx.pair_prg(pa, "aegis/pos/values")?, ranges.len());
        let macs = chunk_seeds(&mut ctx.pair_prg(pa, "aegis/pos/macs")?, ranges.len() + 1);
        let mut own = Draws::new(Prg::new(&Seed(ctx.rng().next_block())), p);
        let mut keys = [0u8; MAC_KEYS];
        own.fill_nonzero(&mut keys);
        let mut coins = [0u8; 16];
        ctx.rng().fill_bytes(&mut coins);
        let zp = Zp::new(p);
        let l32 = self.l();
        let deals: Vec<Vec<u8>> = ranges
            .par_iter()
            .enumerate()
            .map(|(c, &(i0, i1))| {
                let mut first = vec![0u8; (i1 - i0) * (l - 1)];
                draws(&values[c], p).fill(&mut first);
                for (i, sh) in (i0..i1).zip(first.chunks_exact_mut(l - 1)) {
                    let (_, b) = bound_bits(me, y, l32, k, i);
                    for (s, v) in sh.iter_mut().enumerate() {
                        *v = zp.sub(u32::from(b[s]), u32::from(*v)) as u8;
                    }
                }
                zp.pack(&first)
            })
            .collect();
        for d in deals {
            ctx.net().send(pb, d)?;
        }
        Ok(Pos::Verifier { k, n, keys, coins, macs, totals: [[0; MAC_KEYS]; 2], v: vec![] })
    }

    /// Round 2: each prover computes its shares of the masked, permuted lists and opens them
    /// to the verifier, chunk by chunk.
    fn pos_lists(&mut self, ctx: &mut Ctx, y: &Masked, pos: &mut Pos) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let Pos::Prover { k, n, first, values, masks, deltas, .. } = pos else {
            return Ok(());
        };
        let (k, n, first) = (*k, *n, *first);
        let l = self.l() as usize;
        let p = prime_for(self.l());
        let zp = Zp::new(p);
        let ranges = chunk_ranges(n);
        let mut received = Vec::with_capacity(ranges.len());
        if !first {
            for &(i0, i1) in &ranges {
                let count = (i1 - i0) * (l - 1);
                let msg = ctx.recv_at_most(k, zp.packed_len(count))?;
                received.push(
                    zp.unpack_bytes(&msg, count)
                        .ok_or_else(|| MpcError::Malformed { from: k, what: "Π_Pos bit shares".into() })?,
                );
            }
        }
        let out: Vec<(Vec<u8>, Vec<u8>)> = ranges
            .par_iter()
            .enumerate()
            .map(|(c, &(i0, i1))| {
                // The first prover draws its shares, the second reads those received.
                let mut drawn = Vec::new();
                let shares: &[u8] = if first {
                    drawn.resize((i1 - i0) * (l - 1), 0);
                    draws(&values[c], p).fill(&mut drawn);
                    &drawn
                } else {
                    &received[c]
                };
                let (lists, ds) = prover_lists(p, l, (me, k), y, first, shares, &masks[c], (i0, i1));
                (zp.pack(&lists), ds)
            })
            .collect();
        for (msg, ds) in out {
            ctx.net().send(k, msg)?;
            deltas.extend(ds);
        }
        Ok(())
    }

    /// Round 3: the verifier adds up the provers' openings chunk by chunk, reads its output bits
    /// `v = sign(y) ⊕ Δ` from them and folds them into its combinations; then it sends both
    /// provers the coins of the coefficients (drawn before the openings, revealed only after
    /// them), and the second prover its MAC shares of the bits and of the constant 1.
    fn pos_open(&mut self, ctx: &mut Ctx, y: &Masked, pos: &mut Pos) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let Pos::Verifier { k, n, keys, coins, macs, totals, v } = pos else {
            return Ok(());
        };
        let (k, n) = (*k, *n);
        let l = self.l() as usize;
        let p = prime_for(self.l());
        let zp = Zp::new(p);
        let ranges = chunk_ranges(n);
        let (pa, pb) = ((k + 1) % 3, (k + 2) % 3);
        let mut opened: Vec<Vec<u8>> = Vec::with_capacity(ranges.len());
        for from in [pa, pb] {
            for (c, &(i0, i1)) in ranges.iter().enumerate() {
                let count = (i1 - i0) * 2 * l;
                let msg = ctx.recv_at_most(from, zp.packed_len(count))?;
                let lists = zp
                    .unpack_bytes(&msg, count)
                    .ok_or_else(|| MpcError::Malformed { from, what: "Π_Pos lists".into() })?;
                if from == pa {
                    opened.push(lists);
                } else {
                    for (o, x) in opened[c].iter_mut().zip(lists) {
                        *o = zp.add(u32::from(*o), u32::from(x)) as u8;
                    }
                }
            }
        }
        let coef = Coefficients::new(coins, l, p, ranges.len());
        let l32 = self.l();
        let keys_now = *keys;
        // σ key by key (`[j][e]`), so each key's sum over the entries is one vectorised loop.
        let by_key: Vec<u8> = (0..MAC_KEYS).flat_map(|j| coef.sigma.iter().map(move |s| s[j])).collect();
        let p8 = p as u8;
        let parts: Vec<(Vec<u8>, Sums, Vec<u8>)> = ranges
            .par_iter()
            .enumerate()
            .map(|(c, &(i0, i1))| {
                // Per element: the output bit, the combinations of its opened entries and the
                // second prover's MAC shares of its bits, `α_j·b_s − γ^a_{j,s}`.
                let mut bits = Vec::with_capacity(i1 - i0);
                let mut combos = Vec::with_capacity(i1 - i0);
                let mut mac = vec![0u8; (i1 - i0) * (l - 1) * MAC_KEYS];
                draws(&macs[c], p).fill(&mut mac);
                for (j, (i, per)) in (i0..i1).zip(mac.chunks_exact_mut((l - 1) * MAC_KEYS)).enumerate() {
                    let (s_r, b) = bound_bits(me, y, l32, k, i);
                    let entries = &opened[c][j * 2 * l..(j + 1) * 2 * l];
                    let (u, up) = entries.split_at(l);
                    let hit = u.iter().zip(up).fold(false, |h, (&a, &b)| h | ((a == 0) & (b != 0)));
                    bits.push(if hit { s_r } else { 1 ^ s_r });
                    // Products below 127², sums of 2l = 128 of them.
                    let x: [u32; MAC_KEYS] = std::array::from_fn(|j| {
                        let row = &by_key[j * 2 * l..(j + 1) * 2 * l];
                        entries.iter().zip(row).map(|(&o, &s)| u32::from(u16::from(o) * u16::from(s))).sum()
                    });
                    combos.push(x.map(|v| zp.reduce(v)));
                    // α_j·b_s + p − γ lies in [1, 2p − 1] (b_s ∈ {0, 1}, α_j and γ below p).
                    for (ms, &a) in per.chunks_exact_mut(l - 1).zip(&keys_now) {
                        for (mj, &bs) in ms.iter_mut().zip(&b) {
                            let v = (a & 0u8.wrapping_sub(bs)) + (p8 - *mj);
                            *mj = if v >= p8 { v - p8 } else { v };
                        }
                    }
                }
                let sums = tau_sums(&coef.tau(c, i1 - i0, p), &combos);
                (bits, sums, zp.pack(&mac))
            })
            .collect();
        drop(opened);
        // The MAC shares of the constant 1: the first prover's from their PRG.
        let mut kappa = [0u8; MAC_KEYS];
        draws(&macs[ranges.len()], p).fill(&mut kappa);
        let kappa_b: Vec<u8> = kappa
            .iter()
            .zip(keys.iter())
            .map(|(&ka, &a)| zp.sub(u32::from(a), u32::from(ka)) as u8)
            .collect();
        ctx.net().send(pa, coins.to_vec())?;
        let mut head = coins.to_vec();
        head.extend(zp.pack(&kappa_b));
        ctx.net().send(pb, head)?;
        let mut acc = [[0u64; MAC_KEYS]; 2];
        for (bits, sums, mac) in parts {
            v.extend(bits);
            acc = add_sums(acc, sums);
            ctx.net().send(pb, mac)?;
        }
        *totals = acc;
        Ok(())
    }

    /// Round 4: each prover receives the coins (and the second its MAC shares), and sends its
    /// shares of the `2λ` combinations' MACs: `Σ_i τ_{c,j,i}·(Σ_s g_{i,s}·γ_j(b_{i,s}) +
    /// h_i·γ_j(1))`, the weights `g`, `h` from the lists' masks ([`crate::lists`]).
    fn pos_macs(&mut self, ctx: &mut Ctx, y: &Masked, pos: &mut Pos) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let Pos::Prover { k, n, first, macs, masks, .. } = pos else {
            return Ok(());
        };
        let (k, n, first) = (*k, *n, *first);
        let l = self.l() as usize;
        let p = prime_for(self.l());
        let zp = Zp::new(p);
        let ranges = chunk_ranges(n);
        let malformed = |what: &str| MpcError::Malformed { from: k, what: what.into() };
        let head = ctx.recv_at_most(k, 16 + if first { 0 } else { zp.packed_len(MAC_KEYS) })?;
        if head.len() < 16 {
            return Err(malformed("Π_Pos coins"));
        }
        let (coins_b, kappa_b) = head.split_at(16);
        let coins: [u8; 16] = coins_b.try_into().map_err(|_| malformed("Π_Pos coins"))?;
        let mut kappa = [0u8; MAC_KEYS];
        if first {
            if !kappa_b.is_empty() {
                return Err(malformed("Π_Pos coins"));
            }
            draws(&macs[ranges.len()], p).fill(&mut kappa);
        } else {
            let v: Vec<u8> =
                zp.unpack(kappa_b, MAC_KEYS).ok_or_else(|| malformed("Π_Pos MAC shares of 1"))?;
            kappa.copy_from_slice(&v);
        }
        let mut received = Vec::with_capacity(ranges.len());
        if !first {
            for &(i0, i1) in &ranges {
                let count = (i1 - i0) * (l - 1) * MAC_KEYS;
                let msg = ctx.recv_at_most(k, zp.packed_len(count))?;
                received.push(zp.unpack_bytes(&msg, count).ok_or_else(|| malformed("Π_Pos MAC shares"))?);
            }
        }
        let coef = Coefficients::new(&coins, l, p, ranges.len());
        let sums = ranges
            .par_iter()
            .enumerate()
            .map(|(c, &(i0, i1))| {
                let mut drawn = Vec::new();
                let mac: &[u8] = if first {
                    drawn.resize((i1 - i0) * (l - 1) * MAC_KEYS, 0);
                    draws(&macs[c], p).fill(&mut drawn);
                    &drawn
                } else {
                    &received[c]
                };
                let combos = prover_combos(p, l, (me, k), y, mac, &masks[c], &kappa, &coef.sigma, (i0, i1));
                tau_sums(&coef.tau(c, i1 - i0, p), &combos)
            })
            .reduce(|| [[0; MAC_KEYS]; 2], add_sums);
        let flat: Vec<u8> = sums.iter().flatten().map(|&s| (s % u64::from(p)) as u8).collect();
        ctx.net().send(k, zp.pack(&flat))?;
        Ok(())
    }

    /// The verifier checks `α_j·T_{c,j} = Y^a_{c,j} + Y^b_{c,j}` for every key and coordinate.
    fn pos_finish(&mut self, ctx: &mut Ctx, pos: &Pos) -> Result<()> {
        let Pos::Verifier { k, keys, totals, .. } = pos else {
            return Ok(());
        };
        let p = prime_for(self.l());
        let zp = Zp::new(p);
        let mut macs = [0u32; 2 * MAC_KEYS];
        for from in [(k + 1) % 3, (k + 2) % 3] {
            let msg = ctx.recv_at_most(from, zp.packed_len(2 * MAC_KEYS))?;
            let shares: Vec<u32> = zp
                .unpack(&msg, 2 * MAC_KEYS)
                .ok_or_else(|| MpcError::Malformed { from, what: "Π_Pos MAC shares".into() })?;
            for (m, v) in macs.iter_mut().zip(shares) {
                *m = zp.add(*m, v);
            }
        }
        let p64 = u64::from(p);
        let ok = (0..2).all(|c| {
            (0..MAC_KEYS).all(|j| {
                (u64::from(keys[j]) * (totals[c][j] % p64)) % p64 == u64::from(macs[c * MAC_KEYS + j])
            })
        });
        if !ok {
            return Err(MpcError::abort("aegis sign verification: MAC of the opened lists", None));
        }
        Ok(())
    }
}

impl Pos {
    /// This party's output bits (`v` at the verifier after round 3, `Δ` at a prover after
    /// round 2), a byte each.
    fn bits(&self) -> &[u8] {
        match self {
            Pos::Verifier { v, .. } => v,
            Pos::Prover { deltas, .. } => deltas,
        }
    }
}

/// One Π_Pos instance at this party, between its rounds.
enum Pos {
    /// This party verifies: its MAC keys, the coins of the combination's coefficients, the
    /// chunk seeds of the MAC shares it shares with the first prover, its combinations of the
    /// opened values and its output bits.
    Verifier {
        k: PartyId,
        n: usize,
        keys: [u8; MAC_KEYS],
        coins: [u8; 16],
        macs: Vec<[u8; 16]>,
        totals: [[u64; MAC_KEYS]; 2],
        v: Vec<u8>,
    },
    /// This party proves: whether it is the first prover (its bit shares and MAC shares from
    /// the PRG it shares with the verifier: the chunk seeds `values`, `macs`), the chunk seeds
    /// of the masks it shares with the other prover, and its output bits `Δ`.
    Prover {
        k: PartyId,
        n: usize,
        first: bool,
        values: Vec<[u8; 16]>,
        macs: Vec<[u8; 16]>,
        masks: Vec<[u8; 16]>,
        deltas: Vec<u8>,
    },
}

fn concat_all(parts: &[Masked]) -> Masked {
    let mut out = Masked::default();
    for p in parts {
        out.m.extend(&p.m);
        out.r.one.extend(&p.r.one);
        out.r.two.extend(&p.r.two);
        out.n += p.n;
    }
    out
}

/// Words of the batch equality test's digest `t_j`: at least 128 bits in all (a
/// single `l`-bit word, 64 bits at most, is weak against collisions).
pub(crate) fn equality_words(l: u32) -> usize {
    128usize.div_ceil(l.max(1) as usize)
}

impl Aegis {
    /// This party's `t_j`: a hash of its output bits of both runs, as [`equality_words`] words
    /// of `l` bits.
    fn equality_digest(&self, runs: &[Pos]) -> Vec<u64> {
        let mut h = Hasher::new("veil/aegis/pos-outputs");
        for run in runs {
            h.update(run.bits());
        }
        let digest = h.finalize();
        let l = self.l();
        let low = if l >= 64 { u64::MAX } else { (1u64 << l) - 1 };
        (0..equality_words(l))
            .map(|w| {
                let word = Hasher::new("veil/aegis/pos-outputs/word")
                    .update(digest.as_bytes())
                    .update_u64(w as u64)
                    .finalize();
                let mut b = [0u8; 8];
                b.copy_from_slice(&word.as_bytes()[..8]);
                u64::from_le_bytes(b) & low
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector path's combinations equal the portable weights' on random values and at
    /// the extremes of every input (masks, coefficients, MAC shares, keys' shares of 1, `M`).
    #[test]
    fn the_vector_combinations_equal_the_portable_ones() {
        let (p, l) = (127u32, 64usize);
        if simd_tables(p, l, &vec![[0u8; LANES]; 2 * l]).is_none() {
            eprintln!("skipped: this processor has no AVX-512 BW (the portable path alone runs)");
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
            let tables = simd_tables(p, l, &sigma).expect("tables");
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
            let fast = element_combos(p, l, m, &mk, &mac, &kappa, &sigma, Some(&tables));
            let slow = portable_combos(p, l, m, &mk, &mac, &kappa, &sigma);
            assert_eq!(fast, slow, "trial {trial}");
        }
    }

    /// The equality test's digest has at least 128 bits in every ring, in as few
    /// words as that takes.
    #[test]
    fn the_equality_digest_has_at_least_128_bits() {
        for l in [8u32, 16, 31, 32, 48, 63, 64] {
            let words = equality_words(l);
            assert!(words as u32 * l >= 128, "l = {l}: {words} words");
            assert!((words as u32 - 1) * l < 128, "l = {l}: {words} words is more than needed");
        }
    }
}
