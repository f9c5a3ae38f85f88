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
//!   it, and the claims `α_j·(t_{j−1} − t_{j+1}) = 0` with random secret `α_j` are tested in
//!   the batch product verification's final check, each with a coefficient drawn there
//!   (`crate::verify::Elementwise`), so the whole check leaks one bit (accept or abort). The
//!   claims need no coefficient drawn before they are made, so the sign checks run beside the
//!   products' reductions ([`Aegis::check`]) and add no rounds while the reductions take more.
//!
//! **Rounds** (4, the two runs side by side): (1) the verifier sends the second prover its
//! shares of the bits (the first prover's come from their common PRG); (2) the provers open the
//! lists' values; (3) once every opening is in, the verifier sends the coins of its check's
//! coefficients, which it drew before round 1 and kept secret, and the second prover its MAC
//! shares of the bits and of 1 (`α_j·b_s` minus the first prover's PRG shares); (4) each
//! prover sends its shares of the MACs of `2λ` combinations, and the verifier checks them.
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
//! computed in parallel, and the chunks stream through rounds 1–2 and 3–4 a group of
//! [`chunk::GROUP`] at a time in independent lanes (`veil_net::Lanes`: a group's messages depend
//! on the runs' seeds and the group's earlier messages only, so the groups travel side by side
//! and the rounds are those of one group). The verifier combines a group's openings as soon as
//! they are in (it drew the coefficients itself, and reveals their coins only after every
//! opening), and the second prover uses a group's MAC shares as they come: a party holds one
//! group's lists and MAC shares at a time, not the 1.2 KB per element and party that every
//! element's would take (2.8 GiB for the three parties at VGG-16, two images). The provers
//! draw each element's masks again in round 4 (a prover keeps its output bits), except those
//! round 2 kept within `KEPT_MASKS` per run (LeNet at batch 30: all of them, 1.86 → 1.81 s of
//! verification for 200 MB more at the three servers' peak). The lists and round 4's
//! combinations take the vector paths of [`crate::lists_simd`] where the processor has
//! AVX-512 BW, else of [`crate::lists_simd_avx2`] where it has AVX2.

use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use veil_crypto::{Hasher, Prg, Seed};
use veil_mpc::{Ctx, MpcError, PartyId, Result};

use crate::claims::SignPair;
use crate::lists::Kept;
use crate::prime::{Draws, Zp, prime_for};
use crate::share::{Aegis, Masked, Pair};
use crate::verify::Elementwise;

mod chunk;
pub use chunk::MAC_KEYS;
use chunk::Ys;
use chunk::{
    Coefficients, Sums, add_sums, bound_bits, chunk_count, chunk_ranges, chunk_seeds, draws, groups,
    prover_combos, prover_lists, tau_sums,
};

/// The verifier's MAC shares of one element's bits for the second prover with the vector
/// kernel where the processor has one ([`crate::lists_simd::mac_shares`]), else `false`.
fn mac_shares_fast(keys: &[u8; MAC_KEYS], bits: &[u8], rows: &mut [u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    return crate::lists_simd::mac_shares(keys, bits, rows);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, bits, rows);
        false
    }
}

/// The verifier's combinations of one element's opened entries with the vector kernel where the
/// processor has one ([`crate::lists_simd::opened_combos`]), else `None`.
fn opened_combos(entries: &[u8], by_key: &[u8]) -> Option<[u32; MAC_KEYS]> {
    #[cfg(target_arch = "x86_64")]
    return crate::lists_simd::opened_combos(entries, by_key);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (entries, by_key);
        None
    }
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
    ///
    /// The chunks go through rounds 1–2 and through round 4 a group of [`chunk::GROUP`] at a time, in
    /// independent lanes (`veil_net::Lanes`): a group's messages depend only on the runs'
    /// seeds and on the group's earlier messages, so the groups stream through each round side
    /// by side, in the rounds of one, and a party holds one group's lists and MAC shares at a
    /// time instead of every element's (about 1.2 KB per element and party in all).
    pub(crate) fn verify_signs(&mut self, ctx: &mut Ctx, pairs: Vec<SignPair>) -> Result<Elementwise> {
        if pairs.is_empty() {
            return Ok(Elementwise::default());
        }
        let y = Ys::new(pairs, self.l())?;
        // Dual execution: the runs with verifiers P1 and P2, side by side, phase by phase.
        let mut runs = [self.pos_start(ctx, &y, 1)?, self.pos_start(ctx, &y, 2)?];
        // Rounds 1–2 (and the verifier's reading of the openings), group by group.
        let mut lanes = ctx.net().begin_lanes();
        for group in groups(y.n) {
            ctx.net().next_lane(&mut lanes);
            for run in &runs {
                self.pos_deal(ctx, &y, run, group.clone())?;
            }
            for run in &mut runs {
                self.pos_lists(ctx, &y, run, group.clone())?;
            }
            for run in &mut runs {
                self.pos_open(ctx, &y, run, group.clone())?;
            }
        }
        ctx.net().end_lanes(lanes);
        // Round 3 and the provers' part of round 4, group by group: the coins with the first
        // group, then the verifier's MAC shares (which depend on nothing it received) and the
        // provers' sums. The batch equality: each party hashes its output bits of both runs
        // into `t_j` and inputs it, in a lane of its own after the MAC shares (its first
        // round goes with the coins, its second with the provers' sums, so the sign
        // verification takes 4 rounds in all).
        let t_mine = self.equality_digest(&runs);
        let words = t_mine.len();
        let mut lanes = ctx.net().begin_lanes();
        for (g, group) in groups(y.n).enumerate() {
            ctx.net().next_lane(&mut lanes);
            if g == 0 {
                for run in &runs {
                    self.pos_coins(ctx, run)?;
                }
            }
            for run in &runs {
                self.pos_mac_shares(ctx, &y, run, group.clone())?;
            }
            for run in &mut runs {
                self.pos_macs(ctx, &y, run, group.clone())?;
            }
        }
        ctx.net().next_lane(&mut lanes);
        let mut inputs = self.share_input_each_start(ctx, &t_mine)?;
        ctx.net().end_lanes(lanes);
        for run in &runs {
            self.pos_send_sums(ctx, run)?;
        }
        // (Each link delivers in order: P0's inputs, then the MAC shares, then P1's and P2's.)
        self.share_input_each_send(ctx, &mut inputs, &t_mine)?;
        for run in &runs {
            self.pos_finish(ctx, run)?;
        }
        let t = self.share_input_each_finish(ctx, inputs)?;
        // α_j·(t_{j−1} − t_{j+1}) = 0 for each j, verified by the products' final check.
        let me = ctx.party();
        let mut claims = Elementwise::default();
        for j in 0..3 {
            let alpha = self.random_masked(ctx, "pos/equality-alpha", words)?;
            let d = self.sub(&t[(j + 2) % 3], &t[(j + 1) % 3])?;
            let zeros = |held: bool| if held { vec![0; words] } else { vec![] };
            let zero =
                Masked { m: zeros(me != 0), r: Pair { one: zeros(me != 2), two: zeros(me != 1) }, n: words };
            claims.push(&alpha, &d, &zero);
        }
        Ok(claims)
    }

    /// Π_Pos with verifier `k` on every element of `y`, before any message: the verifier draws
    /// its keys and the coins of its check's coefficients (kept secret until the openings are
    /// in); every party draws its chunk seeds. The instances with verifiers P1 and P2 run side
    /// by side, phase by phase ([`Aegis::verify_signs`]), so dual execution costs the rounds of
    /// one run: 4.
    fn pos_start(&mut self, ctx: &mut Ctx, y: &Ys, k: PartyId) -> Result<Pos> {
        let me = Self::check_server(ctx)?;
        let (n, l) = (y.n, self.l() as usize);
        let p = prime_for(self.l());
        let chunks = chunk_count(n);
        let pa = (k + 1) % 3;
        if me != k {
            let first = me == pa;
            let (values, macs) = if first {
                let v = chunk_seeds(&mut ctx.pair_prg(k, "aegis/pos/values")?, chunks);
                let m = chunk_seeds(&mut ctx.pair_prg(k, "aegis/pos/macs")?, chunks + 1);
                (v, m)
            } else {
                (vec![], vec![])
            };
            // Per chunk, the seed of `Δ` and `π`, then the seed of `w` and `w'` (`MaskStream::split`).
            let mut pair = ctx.pair_prg(3 - k - me, "aegis/pos/masks")?;
            let masks = chunk_seeds(&mut pair, chunks);
            let weights = chunk_seeds(&mut pair, chunks);
            return Ok(Pos::Prover {
                k,
                n,
                first,
                values,
                macs,
                masks,
                weights,
                deltas: vec![],
                check: None,
                sums: [[0; MAC_KEYS]; 2],
                kept: vec![None; chunks],
                kept_bytes: 0,
            });
        }
        let values = chunk_seeds(&mut ctx.pair_prg(pa, "aegis/pos/values")?, chunks);
        let macs = chunk_seeds(&mut ctx.pair_prg(pa, "aegis/pos/macs")?, chunks + 1);
        let mut own = Draws::new(Prg::new(&Seed(ctx.rng().next_block())), p);
        let mut keys = [0u8; MAC_KEYS];
        own.fill_nonzero(&mut keys);
        let mut coins = [0u8; 16];
        ctx.rng().fill_bytes(&mut coins);
        let coef = Coefficients::new(&coins, l, p, chunks);
        Ok(Pos::Verifier { k, n, keys, coins, coef, values, macs, totals: [[0; MAC_KEYS]; 2], v: vec![] })
    }

    /// Round 1 for the chunks `group`: the verifier sends the second prover its shares of the
    /// bits of `B` (the first prover's come from their common PRG).
    fn pos_deal(&mut self, ctx: &mut Ctx, y: &Ys, pos: &Pos, group: Range<usize>) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let Pos::Verifier { k, n, values, .. } = pos else {
            return Ok(());
        };
        let (k, l, l32) = (*k, self.l() as usize, self.l());
        let p = prime_for(l32);
        let zp = Zp::new(p);
        let ranges = &chunk_ranges(*n, group.clone());
        let p8 = p as u8;
        let deals: Vec<Vec<u8>> = ranges
            .par_iter()
            .zip(&values[group])
            .map(|(&(i0, i1), seed)| {
                let mut first = vec![0u8; (i1 - i0) * (l - 1)];
                draws(seed, p).fill(&mut first);
                for (i, sh) in (i0..i1).zip(first.chunks_exact_mut(l - 1)) {
                    let (_, b) = bound_bits(me, y, l32, k, i);
                    // `b_s − v mod p` with `b_s ∈ {0, 1}` and `v < p`: `b_s + p − v` is in
                    // `[1, p + 1]` (branch-free, so the loop vectorizes).
                    for (v, &bs) in sh.iter_mut().zip(&b) {
                        let t = bs + (p8 - *v);
                        *v = t - p8 * u8::from(t >= p8);
                    }
                }
                zp.pack(&first)
            })
            .collect();
        for d in deals {
            ctx.net().send((k + 2) % 3, d)?;
        }
        Ok(())
    }

    /// Round 2 for the chunks `group`: each prover computes its shares of the masked, permuted
    /// lists and opens them to the verifier, chunk by chunk.
    fn pos_lists(&mut self, ctx: &mut Ctx, y: &Ys, pos: &mut Pos, group: Range<usize>) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let Pos::Prover { k, n, first, values, masks, weights, deltas, kept, kept_bytes, .. } = pos else {
            return Ok(());
        };
        let (k, first) = (*k, *first);
        let l = self.l() as usize;
        let p = prime_for(self.l());
        let zp = Zp::new(p);
        let ranges = &chunk_ranges(*n, group.clone());
        // The messages are read here and unpacked chunk by chunk in parallel below.
        let mut received = Vec::with_capacity(ranges.len());
        if !first {
            for &(i0, i1) in ranges {
                received.push(ctx.recv_at_most(k, zp.packed_len((i1 - i0) * (l - 1)))?);
            }
        }
        // Which chunks keep their masks for round 4 (in order, while they fit).
        let keep: Vec<bool> = ranges
            .iter()
            .map(|&(i0, i1)| {
                let bytes = (i1 - i0) * std::mem::size_of::<Kept>();
                let fits = *kept_bytes + bytes <= KEPT_MASKS;
                *kept_bytes += if fits { bytes } else { 0 };
                fits
            })
            .collect();
        let out: Vec<ChunkLists> = ranges
            .par_iter()
            .zip(group.clone())
            .enumerate()
            .map(|(j, (&(i0, i1), c))| {
                // The first prover draws its shares, the second reads those received.
                let mut shares = vec![0u8; (i1 - i0) * (l - 1)];
                if first {
                    draws(&values[c], p).fill(&mut shares);
                } else if !zp.unpack_bytes_into(&received[j], &mut shares) {
                    return Err(MpcError::Malformed { from: k, what: "Π_Pos bit shares".into() });
                }
                let (lists, ds, drawn) = prover_lists(
                    p,
                    l,
                    (me, k),
                    y,
                    first,
                    &shares,
                    (&masks[c], &weights[c]),
                    (i0, i1),
                    keep[j],
                );
                Ok((zp.pack(&lists), ds, drawn))
            })
            .collect::<Result<_>>()?;
        for ((msg, ds, drawn), c) in out.into_iter().zip(group) {
            ctx.net().send(k, msg)?;
            deltas.extend(ds);
            kept[c] = drawn;
        }
        Ok(())
    }

    /// The verifier adds up the provers' openings of the chunks `group`, reads its output bits
    /// `v = sign(y) ⊕ Δ` from them and folds them into its combinations (with the coefficients
    /// it drew before the openings and reveals only after all of them, [`Aegis::pos_coins`]).
    fn pos_open(&mut self, ctx: &mut Ctx, y: &Ys, pos: &mut Pos, group: Range<usize>) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let Pos::Verifier { k, n, coef, totals, v, .. } = pos else {
            return Ok(());
        };
        let k = *k;
        let (l, l32) = (self.l() as usize, self.l());
        let p = prime_for(l32);
        let zp = Zp::new(p);
        let ranges = &chunk_ranges(*n, group.clone());
        let (pa, pb) = ((k + 1) % 3, (k + 2) % 3);
        // The messages are read here and unpacked chunk by chunk in parallel below.
        let mut received: [Vec<Vec<u8>>; 2] = Default::default();
        for (from, msgs) in [pa, pb].into_iter().zip(&mut received) {
            for &(i0, i1) in ranges {
                msgs.push(ctx.recv_at_most(from, zp.packed_len((i1 - i0) * 2 * l))?);
            }
        }
        let coef = &*coef;
        let [from_a, from_b] = &received;
        let p8 = p as u8;
        let parts: Vec<(Vec<u8>, Sums)> = ranges
            .par_iter()
            .zip(group)
            .zip(from_a.par_iter().zip(from_b))
            .map(|((&(i0, i1), c), (msg_a, msg_b))| {
                let count = (i1 - i0) * 2 * l;
                let (mut opened, mut other) = (vec![0u8; count], vec![0u8; count]);
                for (from, msg, out) in [(pa, msg_a, &mut opened), (pb, msg_b, &mut other)] {
                    if !zp.unpack_bytes_into(msg, out) {
                        return Err(MpcError::Malformed { from, what: "Π_Pos lists".into() });
                    }
                }
                // The openings: the two provers' shares added (both below `p < 128`, so the sum
                // fits a byte), in a form the compiler vectorizes.
                for (o, x) in opened.iter_mut().zip(other) {
                    let t = *o + x;
                    *o = t - p8 * u8::from(t >= p8);
                }
                // Per element: the output bit and the combinations of its opened entries.
                let mut bits = Vec::with_capacity(i1 - i0);
                let mut combos = Vec::with_capacity(i1 - i0);
                for (i, entries) in (i0..i1).zip(opened.chunks_exact(2 * l)) {
                    let (s_r, _) = bound_bits(me, y, l32, k, i);
                    let (u, up) = entries.split_at(l);
                    let hit = u.iter().zip(up).fold(false, |h, (&a, &b)| h | ((a == 0) & (b != 0)));
                    bits.push(if hit { s_r } else { 1 ^ s_r });
                    // Products below 127², sums of 2l = 128 of them.
                    let x: [u32; MAC_KEYS] = opened_combos(entries, &coef.by_key).unwrap_or_else(|| {
                        std::array::from_fn(|j| {
                            let row = &coef.by_key[j * 2 * l..(j + 1) * 2 * l];
                            entries
                                .iter()
                                .zip(row)
                                .map(|(&o, &s)| u32::from(u16::from(o) * u16::from(s)))
                                .sum()
                        })
                    });
                    combos.push(x.map(|v| zp.reduce(v)));
                }
                Ok((bits, tau_sums(&coef.tau(c, i1 - i0, p), &combos)))
            })
            .collect::<Result<_>>()?;
        for (bits, sums) in parts {
            v.extend(bits);
            *totals = add_sums(*totals, sums);
        }
        Ok(())
    }

    /// Round 3: once every opening is in, the verifier sends both provers the coins of the
    /// coefficients, and the second prover its MAC shares of the constant 1 (`α_j` minus the
    /// first prover's PRG shares).
    fn pos_coins(&mut self, ctx: &mut Ctx, pos: &Pos) -> Result<()> {
        let Pos::Verifier { k, n, keys, coins, macs, .. } = pos else {
            return Ok(());
        };
        let p = prime_for(self.l());
        let zp = Zp::new(p);
        let mut kappa = [0u8; MAC_KEYS];
        draws(&macs[chunk_count(*n)], p).fill(&mut kappa);
        let kappa_b: Vec<u8> = kappa
            .iter()
            .zip(keys.iter())
            .map(|(&ka, &a)| zp.sub(u32::from(a), u32::from(ka)) as u8)
            .collect();
        ctx.net().send((k + 1) % 3, coins.to_vec())?;
        let mut head = coins.to_vec();
        head.extend(zp.pack(&kappa_b));
        Ok(ctx.net().send((k + 2) % 3, head)?)
    }

    /// Round 3 for the chunks `group`: the verifier sends the second prover its MAC shares of
    /// the bits, `α_j·b_s − γ^a_{j,s}`.
    fn pos_mac_shares(&mut self, ctx: &mut Ctx, y: &Ys, pos: &Pos, group: Range<usize>) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let Pos::Verifier { k, n, keys, macs, .. } = pos else {
            return Ok(());
        };
        let (k, keys) = (*k, *keys);
        let (l, l32) = (self.l() as usize, self.l());
        let p = prime_for(l32);
        let zp = Zp::new(p);
        let p8 = p as u8;
        let ranges = &chunk_ranges(*n, group.clone());
        let shares: Vec<Vec<u8>> = ranges
            .par_iter()
            .zip(&macs[group])
            .map(|(&(i0, i1), seed)| {
                let mut mac = vec![0u8; (i1 - i0) * (l - 1) * MAC_KEYS];
                draws(seed, p).fill(&mut mac);
                for (i, per) in (i0..i1).zip(mac.chunks_exact_mut((l - 1) * MAC_KEYS)) {
                    let (_, b) = bound_bits(me, y, l32, k, i);
                    if p == 127 && mac_shares_fast(&keys, &b, per) {
                        continue;
                    }
                    // α_j·b_s + p − γ lies in [1, 2p − 1] (b_s ∈ {0, 1}, α_j and γ below p).
                    for (ms, &a) in per.chunks_exact_mut(l - 1).zip(&keys) {
                        for (mj, &bs) in ms.iter_mut().zip(&b) {
                            let v = (a & 0u8.wrapping_sub(bs)) + (p8 - *mj);
                            *mj = if v >= p8 { v - p8 } else { v };
                        }
                    }
                }
                zp.pack(&mac)
            })
            .collect();
        for s in shares {
            ctx.net().send((k + 2) % 3, s)?;
        }
        Ok(())
    }

    /// Round 4 for the chunks `group`: each prover (having received the coins with the first
    /// group, and the second prover its MAC shares) adds up its shares of the `2λ`
    /// combinations' MACs: `Σ_i τ_{c,j,i}·(Σ_s g_{i,s}·γ_j(b_{i,s}) + h_i·γ_j(1))`, the weights
    /// `g`, `h` from the lists' masks ([`crate::lists`]).
    fn pos_macs(&mut self, ctx: &mut Ctx, y: &Ys, pos: &mut Pos, group: Range<usize>) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let Pos::Prover { k, n, first, macs, masks, weights, check, sums, kept, .. } = pos else {
            return Ok(());
        };
        let (k, first) = (*k, *first);
        let l = self.l() as usize;
        let p = prime_for(self.l());
        let zp = Zp::new(p);
        let ranges = &chunk_ranges(*n, group.clone());
        let malformed = |what: &str| MpcError::Malformed { from: k, what: what.into() };
        if check.is_none() {
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
                draws(&macs[chunk_count(*n)], p).fill(&mut kappa);
            } else {
                let v: Vec<u8> =
                    zp.unpack(kappa_b, MAC_KEYS).ok_or_else(|| malformed("Π_Pos MAC shares of 1"))?;
                kappa.copy_from_slice(&v);
            }
            *check = Some((Coefficients::new(&coins, l, p, chunk_count(*n)), kappa));
        }
        let Some((coef, kappa)) = check.as_ref() else {
            return Err(malformed("Π_Pos coins"));
        };
        // The messages are read here and unpacked chunk by chunk in parallel below.
        let mut received = Vec::with_capacity(ranges.len());
        if !first {
            for &(i0, i1) in ranges {
                received.push(ctx.recv_at_most(k, zp.packed_len((i1 - i0) * (l - 1) * MAC_KEYS))?);
            }
        }
        let part = ranges
            .par_iter()
            .zip(group)
            .enumerate()
            .map(|(j, (&(i0, i1), c))| {
                let mut mac = vec![0u8; (i1 - i0) * (l - 1) * MAC_KEYS];
                if first {
                    draws(&macs[c], p).fill(&mut mac);
                } else if !zp.unpack_bytes_into(&received[j], &mut mac) {
                    return Err(malformed("Π_Pos MAC shares"));
                }
                let drawn = kept[c].as_deref();
                let combos = prover_combos(
                    p,
                    l,
                    (me, k),
                    y,
                    &mac,
                    (&masks[c], &weights[c], drawn),
                    kappa,
                    &coef.sigma,
                    (i0, i1),
                );
                Ok(tau_sums(&coef.tau(c, i1 - i0, p), &combos))
            })
            .try_reduce(|| [[0; MAC_KEYS]; 2], |a, b| Ok(add_sums(a, b)))?;
        *sums = add_sums(*sums, part);
        Ok(())
    }

    /// Round 4: each prover sends the verifier its shares of the combinations' MACs.
    fn pos_send_sums(&mut self, ctx: &mut Ctx, pos: &Pos) -> Result<()> {
        let Pos::Prover { k, sums, .. } = pos else {
            return Ok(());
        };
        let p = u64::from(prime_for(self.l()));
        let flat: Vec<u8> = sums.iter().flatten().map(|&s| (s % p) as u8).collect();
        Ok(ctx.net().send(*k, Zp::new(p as u32).pack(&flat))?)
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
    /// This party verifies: its MAC keys, the coins of the combination's coefficients and the
    /// coefficients, the chunk seeds of the bit shares and MAC shares it shares with the first
    /// prover, its combinations of the opened values so far and its output bits.
    Verifier {
        k: PartyId,
        n: usize,
        keys: [u8; MAC_KEYS],
        coins: [u8; 16],
        coef: Coefficients,
        values: Vec<[u8; 16]>,
        macs: Vec<[u8; 16]>,
        totals: Sums,
        v: Vec<u8>,
    },
    /// This party proves: whether it is the first prover (its bit shares and MAC shares from
    /// the PRG it shares with the verifier: the chunk seeds `values`, `macs`), the chunk seeds
    /// of the masks it shares with the other prover (`masks` for `Δ` and `π`, `weights` for
    /// `w` and `w'`: `crate::lists::MaskStream::split`), its output bits `Δ`, the check's
    /// coefficients and MAC shares of 1 once the coins are in, and its MAC sums so far.
    Prover {
        k: PartyId,
        n: usize,
        first: bool,
        values: Vec<[u8; 16]>,
        macs: Vec<[u8; 16]>,
        masks: Vec<[u8; 16]>,
        weights: Vec<[u8; 16]>,
        deltas: Vec<u8>,
        check: Option<(Coefficients, [u8; MAC_KEYS])>,
        sums: Sums,
        /// Per chunk, its elements' masks as drawn in round 2 while they fit [`KEPT_MASKS`]
        /// (round 4 draws the others again), and the bytes they take.
        kept: Vec<Option<Vec<Kept>>>,
        kept_bytes: usize,
    },
}

/// A prover's round 2 for one chunk: the packed lists it opens, its `Δ`s and the masks it keeps.
type ChunkLists = (Vec<u8>, Vec<u8>, Option<Vec<Kept>>);

/// Bytes of list masks a prover keeps per run from round 2 to round 4 instead of drawing them
/// again ([`Kept`], 65 bytes per element: LeNet at batch 30 keeps all of its 195 000 per run,
/// and a claim of up to a million elements would).
const KEPT_MASKS: usize = 64 << 20;

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
