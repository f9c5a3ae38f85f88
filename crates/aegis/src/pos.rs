//! Sign-bit verification (paper §4.2, Π_VSignBit, rebuilt where the paper leaves steps out): that each sign bit
//! `z` a sign extraction produced is the sign of its input `x`.
//!
//! - `z ∈ {0, 1}` is the product `z·z = z`, verified with every other product
//!   ([`crate::verify`]).
//! - Given that, `z = sign(x)` iff `y = x − 2^{l−1}·z` is non-negative. **Π_Pos** checks it with
//!   a verifier `P_k`: in the replicated view of `⟨y⟩` (`y_0 = m_y`, `y_1 = −[r_y]_2`,
//!   `y_2 = −[r_y]_1`; `P_j` holds `y_{j−1}, y_{j+1}`) the provers `P_{k±1}` hold `M = y_k` and
//!   the verifier `R = y_{k−1} + y_{k+1}`: the comparison of the sign extraction, with the
//!   verifier dealing the bits of `B = 2^{l−1} − 1 − R̂` **MAC'd** over `Z_127` under
//!   `λ = 6` keys only it knows. The provers compute the masked, permuted lists as affine
//!   functions of the MAC'd bits and open them to the verifier, who checks the MACs in one
//!   batch (λ independent random combinations, drawn after the openings, which closes a gap of the paper's single combination) and
//!   outputs `v = sign(y) ⊕ Δ`, while the provers output their common `Δ`.
//! - **Dual execution**: Π_Pos runs with verifier P1 and with verifier P2, so one run has an
//!   honest verifier whoever is corrupted.
//! - **Batch equality**: each party hashes its output bits of both runs into `t_j`, inputs
//!   it, and the claims `α_j·(t_{j−1} − t_{j+1}) = 0` with random secret `α_j` join the batch
//!   product verification, so the whole check leaks one bit (accept or abort).
//!
//! A prover changing an opened value passes the MAC check of one key with probability at
//! most `2/127` (the combination vanishes, or the guess of the key is right), so at most
//! `(2/127)^6 ≈ 2^-36` for six keys.

use veil_crypto::{Hasher, Prg, Seed};
use veil_mpc::{Ctx, MpcError, PartyId, Result};

use crate::claims::{SignPair, Terms};
use crate::prime::{Zp, prime_for};
use crate::share::{Aegis, Masked, Pair};

/// MAC keys per verifier.
pub const MAC_KEYS: usize = 6;

/// One prover's MAC'd share: the value's share and its `λ` MAC shares, `Z_p` elements held in
/// a byte each (`p ≤ 127`: a party holds about 1 KB of them per verified sign).
type MacShare = [u8; 1 + MAC_KEYS];

fn components(me: PartyId, y: &Masked, l: u32, i: usize) -> [Option<u64>; 3] {
    let red = |v: u64| if l == 64 { v } else { v & ((1u64 << l) - 1) };
    let y0 = (me != 0).then(|| red(y.m[i]));
    let y1 = (me != 1).then(|| red(y.r.two[i].wrapping_neg()));
    let y2 = (me != 2).then(|| red(y.r.one[i].wrapping_neg()));
    [y0, y1, y2]
}

impl Aegis {
    /// White-box tampering for the negative tests: applies `f` to the claimed sign bit of every
    /// recorded sign extraction at this party.
    #[doc(hidden)]
    pub fn tamper_signs(&mut self, f: impl Fn(&mut Masked)) {
        self.signs.iter_mut().for_each(|p| f(&mut p.z));
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
        let y = concat_all(&ys);
        // Dual execution: the runs with verifiers P1 and P2, phase by phase.
        let mut runs = [self.pos_start(ctx, &y, 1)?, self.pos_start(ctx, &y, 2)?];
        for run in &mut runs {
            self.pos_lists(ctx, &y, run)?;
        }
        for run in &mut runs {
            self.pos_seed(ctx, run)?;
        }
        // Batch equality: each party hashes its output bits of both runs into `t_j` and inputs
        // it. Its first round (mask shares and P0's input) goes with the seeds, its second
        // with the MAC shares, so the sign verification takes 4 rounds in all.
        let t_mine = self.equality_digest(&runs);
        let words = t_mine.len();
        let mut inputs = self.share_input_each_start(ctx, &t_mine)?;
        for run in &runs {
            self.pos_macs(ctx, run)?;
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
            self.record(&alpha, &d, &zero, Terms::Elementwise);
        }
        Ok(())
    }

    /// Round 1 of Π_Pos with verifier `k` on every element of `y`: the verifier draws its keys
    /// and deals the MAC'd bits of `B` (the share for `P_{k+2}`; `P_{k+1}`'s comes from their
    /// common PRG). The instances with verifiers P1 and P2 run side by side, phase by phase
    /// ([`Aegis::verify_signs`]), so dual execution costs the rounds of one run: 4.
    fn pos_start(&mut self, ctx: &mut Ctx, y: &Masked, k: PartyId) -> Result<Pos> {
        let me = Self::check_server(ctx)?;
        if me != k {
            return Ok(Pos::Prover { k, mac_u: vec![], mac_up: vec![], deltas: vec![] });
        }
        let (n, l) = (y.n, self.l() as usize);
        let zp = Zp::new(prime_for(self.l()));
        let half = 1u64 << (l - 1);
        let (p1, p2) = ((k + 1) % 3, (k + 2) % 3);
        let msb = |v: u64| (v >> (l - 1)) & 1;
        let red = |v: u64| if l == 64 { v } else { v & ((1u64 << l) - 1) };
        let keys: Vec<u32> = (0..MAC_KEYS).map(|_| zp.nonzero_from_random(ctx.rng().next_u32())).collect();
        let mut to_p2 = Vec::new();
        let mut g1 = ctx.pair_prg(p1, "aegis/pos/shares")?;
        let mut deal = |v: u32, to_p2: &mut Vec<u8>| {
            let first = zp.from_random(g1.next_u32());
            to_p2.push(zp.sub(v, first) as u8);
        };
        for &a in &keys {
            deal(a, &mut to_p2);
        }
        let mut s_r = Vec::with_capacity(n);
        for i in 0..n {
            let c = components(me, y, self.l(), i);
            let r = red(c[(k + 2) % 3].unwrap_or(0).wrapping_add(c[(k + 1) % 3].unwrap_or(0)));
            s_r.push(msb(r));
            let b = half - 1 - (r & (half - 1));
            for t in 0..l - 1 {
                let bit = ((b >> (l - 2 - t)) & 1) as u32;
                deal(bit, &mut to_p2);
                for &a in &keys {
                    deal(zp.mul(a, bit), &mut to_p2);
                }
            }
        }
        ctx.net().send(p2, zp.pack(&to_p2))?;
        Ok(Pos::Verifier { k, n, keys, s_r, opened: vec![], v: vec![], seed: [0; 16] })
    }

    /// Round 2: each prover computes the masked, permuted lists as affine functions of its
    /// MAC'd shares and opens them to the verifier.
    fn pos_lists(&mut self, ctx: &mut Ctx, y: &Masked, pos: &mut Pos) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let Pos::Prover { k, mac_u, mac_up, deltas } = pos else {
            return Ok(());
        };
        let k = *k;
        let (n, l) = (y.n, self.l() as usize);
        let zp = Zp::new(prime_for(self.l()));
        let half = 1u64 << (l - 1);
        let (p1, p2) = ((k + 1) % 3, (k + 2) % 3);
        let msb = |v: u64| (v >> (l - 1)) & 1;
        let first = me == p1;
        let per = 1 + MAC_KEYS;
        let shares: Vec<u8> = if first {
            let mut g = ctx.pair_prg(k, "aegis/pos/shares")?;
            (0..MAC_KEYS + n * (l - 1) * per).map(|_| zp.from_random(g.next_u32()) as u8).collect()
        } else {
            let msg = ctx.recv_at_most(k, zp.packed_len(MAC_KEYS + n * (l - 1) * per))?;
            zp.unpack(&msg, MAC_KEYS + n * (l - 1) * per)
                .ok_or_else(|| MpcError::Malformed { from: k, what: "Π_Pos MAC'd bits".into() })?
        };
        // `K`: this prover's share of the constant 1 with its MACs (the value 1 at the first
        // prover, each key's share in the MAC components), the `d` of every affine map `c·s + d`.
        let mut k_const = [0u32; 1 + MAC_KEYS];
        k_const[0] = u32::from(first);
        for (kc, &v) in k_const[1..].iter_mut().zip(&shares[..MAC_KEYS]) {
            *kc = u32::from(v);
        }
        let other = if first { p2 } else { p1 };
        let mut g = ctx.pair_prg(other, "aegis/pos/pairwise")?;
        let p = zp.p();
        let mut lists = Vec::with_capacity(2 * n * l);
        let mut second = Vec::with_capacity(n * l);
        let (mut w, mut w2, mut perm) = (vec![0u32; l], vec![0u32; l], vec![0usize; l]);
        let (mut u, mut up) = (vec![[0u8; 1 + MAC_KEYS]; l], vec![[0u8; 1 + MAC_KEYS]; l]);
        for i in 0..n {
            let delta = (g.next_u64() & 1) as u32;
            w.iter_mut().for_each(|v| *v = zp.nonzero_from_random(g.next_u32()));
            w2.iter_mut().for_each(|v| *v = zp.nonzero_from_random(g.next_u32()));
            perm.iter_mut().enumerate().for_each(|(t, v)| *v = t);
            for t in (1..l).rev() {
                let j = ((u64::from(g.next_u32()) * (t as u64 + 1)) >> 32) as usize;
                perm.swap(t, j);
            }
            let m = components(me, y, self.l(), i)[k].unwrap_or(0);
            let s_m = msb(m) as u32;
            let m_hat = m & (half - 1);
            // Component by component (the value and its λ MACs), with the same affine maps:
            //   c  = a ⊕ b = (1 − 2a)·b + a·K        (b the MAC'd bit; K for the last entry)
            //   c' = Σ_{s≤t} c_s + (p − 2)·c_t + K   (= Σ_{s≤t} c_s − 2c_t + 1)
            //   u  = w_t·c' + β·K,   u' = w'_t·(w_t·c') + w'_t·K.
            // Reduced lazily: `prefix ≤ l·(p − 1) < 2^13`, `c' < 2^15`, every product `< 2^22`.
            let mut prefix = [0u32; 1 + MAC_KEYS];
            for t in 0..l {
                let last = t + 1 == l;
                let a = if last { 0 } else { ((m_hat >> (l - 2 - t)) & 1) as u32 };
                let off = MAC_KEYS + (i * (l - 1) + t) * per;
                let coef = if a == 1 { p - 1 } else { 1 };
                let beta = (s_m ^ a ^ delta) % p;
                for comp in 0..=MAC_KEYS {
                    let b = if last { k_const[comp] } else { u32::from(shares[off + comp]) };
                    let c = zp.reduce(coef * b + a * k_const[comp]);
                    prefix[comp] += c;
                    let c2 = prefix[comp] + (p - 2) * c + k_const[comp];
                    let wc = zp.reduce(w[t] * c2);
                    u[t][comp] = zp.reduce(wc + beta * k_const[comp]) as u8;
                    up[t][comp] = zp.reduce(w2[t] * wc + w2[t] * k_const[comp]) as u8;
                }
            }
            for &t in &perm {
                lists.push(u[t][0]);
                second.push(up[t][0]);
                mac_u.push(u[t]);
                mac_up.push(up[t]);
            }
            deltas.push(delta as u8);
        }
        lists.extend(second);
        ctx.net().send(k, zp.pack(&lists))?;
        Ok(())
    }

    /// Round 3: the verifier adds up the provers' openings, reads its output bits
    /// `v = sign(y) ⊕ Δ` from them, and sends the seed of the batch MAC check's coefficients
    /// (drawn after the openings).
    fn pos_seed(&mut self, ctx: &mut Ctx, pos: &mut Pos) -> Result<()> {
        let Pos::Verifier { k, n, s_r, opened, seed, v, .. } = pos else {
            return Ok(());
        };
        let (l, zp) = (self.l() as usize, Zp::new(prime_for(self.l())));
        let (p1, p2) = ((*k + 1) % 3, (*k + 2) % 3);
        let count = 2 * *n * l;
        *opened = vec![0u8; count];
        for from in [p1, p2] {
            let msg = ctx.recv_at_most(from, zp.packed_len(count))?;
            let lists: Vec<u8> = zp
                .unpack(&msg, count)
                .ok_or_else(|| MpcError::Malformed { from, what: "Π_Pos lists".into() })?;
            for (o, v) in opened.iter_mut().zip(lists) {
                *o = zp.add(u32::from(*o), u32::from(v)) as u8;
            }
        }
        let (u, up) = opened.split_at(*n * l);
        *v = (0..*n)
            .map(|i| {
                let hit = (0..l).any(|t| u[i * l + t] == 0 && up[i * l + t] != 0);
                (if hit { s_r[i] } else { 1 ^ s_r[i] }) as u8
            })
            .collect();
        ctx.rng().fill_bytes(seed);
        ctx.net().send(p1, seed.to_vec())?;
        ctx.net().send(p2, seed.to_vec())?;
        Ok(())
    }

    /// Round 4: each prover sends its shares of the `λ` combinations of the lists' MACs.
    fn pos_macs(&mut self, ctx: &mut Ctx, pos: &Pos) -> Result<()> {
        let Pos::Prover { k, mac_u, mac_up, .. } = pos else {
            return Ok(());
        };
        let zp = Zp::new(prime_for(self.l()));
        let seed_msg = ctx.recv_at_most(*k, 16)?;
        let seed: [u8; 16] = seed_msg
            .as_slice()
            .try_into()
            .map_err(|_| MpcError::Malformed { from: *k, what: "MAC seed".into() })?;
        let macs = combine(
            &seed,
            zp,
            mac_u.iter().chain(mac_up).map(|v| std::array::from_fn(|j| u32::from(v[1 + j]))),
        );
        ctx.net().send(*k, zp.pack(&macs))?;
        Ok(())
    }

    /// The verifier checks the MACs of the lists its output came from.
    fn pos_finish(&mut self, ctx: &mut Ctx, pos: &Pos) -> Result<()> {
        let Pos::Verifier { k, keys, opened, seed, .. } = pos else {
            return Ok(());
        };
        let zp = Zp::new(prime_for(self.l()));
        let mut macs = [0u32; MAC_KEYS];
        for from in [(k + 1) % 3, (k + 2) % 3] {
            let msg = ctx.recv_at_most(from, zp.packed_len(MAC_KEYS))?;
            let shares = zp
                .unpack(&msg, MAC_KEYS)
                .ok_or_else(|| MpcError::Malformed { from, what: "Π_Pos MAC shares".into() })?;
            for (m, v) in macs.iter_mut().zip(shares) {
                *m = zp.add(*m, v);
            }
        }
        let combined = combine(seed, zp, opened.iter().map(|&v| [u32::from(v); MAC_KEYS]));
        if keys.iter().zip(&combined).zip(&macs).any(|((&a, &t), &mac)| zp.mul(a, t) != mac) {
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
    /// This party verifies: its MAC keys, the sign bits of its `R`, the opened lists, its
    /// output bits and the MAC check's seed.
    Verifier {
        k: PartyId,
        n: usize,
        keys: Vec<u32>,
        s_r: Vec<u64>,
        opened: Vec<u8>,
        v: Vec<u8>,
        seed: [u8; 16],
    },
    /// This party proves: the MAC'd entries of its lists and its output bits `Δ`.
    Prover { k: PartyId, mac_u: Vec<MacShare>, mac_up: Vec<MacShare>, deltas: Vec<u8> },
}

/// The `λ` random combinations `Σ_i c_{j,i}·v_{i,j}` over `Z_p`, with independent coefficients
/// drawn from the verifier's seed as they are used (entry by entry, `λ` at a time).
fn combine(seed: &[u8; 16], zp: Zp, values: impl Iterator<Item = [u32; MAC_KEYS]>) -> [u32; MAC_KEYS] {
    let mut g = Prg::new(&Seed(*seed));
    // Summed unreduced: each term is below p² < 2^14, so 2^50 terms fit.
    let mut sums = [0u64; MAC_KEYS];
    for v in values {
        for (s, x) in sums.iter_mut().zip(v) {
            *s += u64::from(x) * u64::from(zp.from_random(g.next_u32()));
        }
    }
    sums.map(|s| (s % u64::from(zp.p())) as u32)
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
    use super::equality_words;

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
