//! Sign-bit extraction in two online rounds with the product `x·sign(x)` folded in (paper §3
//! and Fig. 22, rebuilt where the paper leaves steps out, convention `m = x + r`), and what is built on it:
//! ReLU, `f(v) = v·sign(v)`, two-way max and max trees.
//!
//! With `M = m_x` (known to P1, P2), `Q = −r_x` (known to P0) and `â` the value without its MSB,
//! `sign(x) = MSB(M) ⊕ MSB(Q) ⊕ [M̂ + Q̂ ≥ 2^{l−1}]`, and the carry is `[a > b]` for
//! `a = M̂‖0` and `b = (2^{l−1} − 1 − Q̂)‖1` (bits big-endian; the appended bits make `a ≠ b`).
//!
//! - **Offline.** P0 deals the bits of `b` as Z_p shares to P1 and P2 (`p` = `prime_for`),
//!   and `[r_x·r_z]`; P1 and P2 draw a bit `Δ`, masks `w_i, w'_i ∈ Z_p^*` and a permutation `π`
//!   from their common seed, and open `Γ = Δ + (1−2Δ)·r' + r_z` (only `Δ` is drawn offline;
//!   the masks of the lists come online from a seed per chunk of elements, `PairMasks`).
//! - **Round 1.** P1 and P2 form `c = a ⊕ b` in Z_p, the transform `φ` (`c'_i = Σ_{t≤i} c_t −
//!   2c_i + 1`: one zero, at the first difference `ζ`), and send P0 the permuted lists
//!   `u_i = w_i·c'_i + (MSB(M) ⊕ a_i ⊕ Δ)` and `u'_i = w'_i·(w_i·c'_i + 1)`; they also open
//!   `Γ'' = −m_x·r_z + Γ'` between themselves.
//! - **Round 2.** P0 reads `e = 0` iff some `u_i = 0` with `u'_i ≠ 0` (that is `MSB(M) ⊕ a_ζ ⊕ Δ`),
//!   sets `y = e ⊕ MSB(Q) = sign(x) ⊕ Δ`, and sends `m' = y − r'` and `m'' = m'·r_x + r''` to both.
//!   P1 and P2 get `m_z = (1−2Δ)m' + Γ = sign(x) + r_z` and `m_w = m_x·m_z − (1−2Δ)m'' + Γ'' =
//!   x·sign(x) + r_w`.
//!
//! **Cost per element** (Z_p elements packed at 7 bits, `l = 64`): offline `(l−1)·7 + 3l` bits
//! (633); online P1 and P2 `2l·7` and `l` bits each, P0 `4l` bits: `4l·7 + 6l` bits (2176);
//! without the product (`sign` alone) 569 and 1920 bits, against 632 and 2176 with 8-bit
//! elements. Each message is padded to whole bytes.
//!
//! **Security.** P0 sees only masked, permuted lists; P1 and P2 see Z_p shares and values masked
//! by `r'`, `r''`. A non-`ζ` position reveals its masked bit `β_i`
//! (itself masked by `Δ`) with probability about `3/(p−1)`; this is the paper's protocol and is
//! listed as a known limitation. Correctness holds up to additive errors, caught by the sign-bit
//! verification to come; P0 sending different `m'`/`m''` to P1 and P2 is caught by
//! [`Aegis::check`].

use rayon::prelude::*;
use std::sync::Arc;

use veil_crypto::{Prg, Seed};
use veil_mpc::prep::CorrelationRequest;
use veil_mpc::{Ctx, MpcError, Result};

pub use crate::claims::SignTamper;
use crate::lists::{MaskStream, lists_mod};
use crate::mul::{mask_sum, offline};
use crate::prime::{Draws, Zp, pack_par, prime_for, unpack_par, unpack_par_into};
use crate::share::{Aegis, Masked, Pair, recv_u64s, to_bytes, wrap};

/// `φ(c)_i = Σ_{t≤i} c_t − 2c_i + 1 (mod p)`: for a binary `c` with a 1, exactly one zero, at the
/// first 1 (the paper's Theorem 1).
pub fn phi(c: &[u32], p: u32) -> Vec<u32> {
    let zp = Zp::new(p);
    let mut prefix = 0;
    c.iter()
        .map(|&ci| {
            prefix = zp.add(prefix, ci);
            zp.add(zp.sub(prefix, zp.mul(2, ci)), 1)
        })
        .collect()
}

impl Aegis {
    /// Makes this party deviate in its next sign extraction (negative tests only).
    #[doc(hidden)]
    pub fn tamper_next_sign(&mut self, t: SignTamper) {
        self.tamper_sign_after(0, t);
    }

    /// Sign extractions this party has run as P1 or P2 (0 at P0; for the negative tests).
    #[doc(hidden)]
    pub fn signs_run(&self) -> usize {
        self.signs_run
    }

    /// Makes P0 note the frame of each of its deals of a bound's bits from now on
    /// ([`Aegis::bit_deal_frames`]; negative tests only).
    #[doc(hidden)]
    pub fn track_bit_deals(&mut self) {
        self.bit_deal_frames.get_or_insert_with(Vec::new);
    }

    /// At P0, the index among the messages it has sent of each of its deals of a bound's bits
    /// since [`Aegis::track_bit_deals`] (for the negative tests: an error in such a deal is
    /// caught only where it changes a comparison's outcome, [`crate::pos`]).
    #[doc(hidden)]
    pub fn bit_deal_frames(&self) -> &[usize] {
        self.bit_deal_frames.as_deref().unwrap_or_default()
    }

    /// Makes this party deviate in the sign extraction after the next `honest` ones (negative
    /// tests only).
    #[doc(hidden)]
    pub fn tamper_sign_after(&mut self, honest: usize, t: SignTamper) {
        (self.sign_tamper, self.sign_tamper_after) = (Some(t), honest);
    }
}

/// Offline material of one sign extraction (one party's part).
#[derive(Debug)]
pub struct SignMaterial {
    n: usize,
    with_product: bool,
    /// P0: the input mask.
    r_x: Option<Vec<u64>>,
    r1: Pair,
    r2: Pair,
    r_z: Pair,
    pub(crate) r_w: Pair,
    /// P1 and P2: what they use online.
    online: Option<OnlinePair>,
}

#[derive(Debug)]
struct OnlinePair {
    pw: PairMasks,
    bits: Vec<u8>,
    gamma: Vec<u64>,
    gamma1: Option<Vec<u64>>,
    rz: Vec<u64>,
}

/// Elements per stream of the lists' masks: each chunk's `w`, `w'`, `π` come from a seed of its
/// own, so P1 and P2 draw them in parallel.
const MASK_CHUNK: usize = 1 << 12;

/// The masks P1 and P2 draw from their common seed (exactly uniform, [`crate::lists::Masks`]):
/// each element's `Δ` offline, where `Γ` needs it, and per chunk of [`MASK_CHUNK`] elements a
/// seed of the lists' `w`, `w'` and `π`, drawn online where the lists are made. Between the
/// phases an element takes one byte instead of its 257 bytes of masks (VGG-16's first ReLU at
/// batch 30 held 2 GiB of them at P1 and at P2).
#[derive(Debug)]
struct PairMasks {
    deltas: Vec<u8>,
    seeds: Vec<[u8; 16]>,
}

impl PairMasks {
    fn draw(ctx: &mut Ctx, peer: usize, n: usize) -> Result<PairMasks> {
        let mut prg = ctx.pair_prg(peer, "aegis/sign/pairwise")?;
        let seeds = (0..n.div_ceil(MASK_CHUNK)).map(|_| prg.next_block()).collect();
        let mut deltas = vec![0u8; n];
        prg.fill_bytes(&mut deltas);
        deltas.iter_mut().for_each(|d| *d &= 1);
        Ok(PairMasks { deltas, seeds })
    }

    /// The draws of chunk `c`'s lists' masks.
    fn chunk(&self, c: usize, p: u32) -> Draws {
        Draws::new(Prg::new(&Seed(self.seeds[c])), p)
    }
}

impl Aegis {
    /// `(⟨sign(x)⟩, ⟨x·sign(x)⟩)`, `sign(x) = 1` for negative `x` (2 online rounds). With
    /// `with_product = false` the second output is not computed (and is empty).
    pub fn sign_product(
        &mut self,
        ctx: &mut Ctx,
        x: &Masked,
        with_product: bool,
    ) -> Result<(Masked, Masked)> {
        let mat = self.prepare_sign(ctx, &x.r, x.n, with_product)?;
        self.sign_online(ctx, x, mat)
    }

    /// The offline part of sign extraction for secrets masked by `rx` (counted under the phase
    /// `offline`): masks, P0's Z_p bits of `b` and `[r_x·r_z]`, and the opened `Γ`, `Γ'` shares.
    pub fn prepare_sign(
        &mut self,
        ctx: &mut Ctx,
        rx: &Pair,
        n: usize,
        with_product: bool,
    ) -> Result<SignMaterial> {
        let me = Self::check_server(ctx)?;
        let l = self.l() as usize;
        let zp = Zp::new(prime_for(self.l()));
        self.usage.record(&CorrelationRequest::SignBits { count: n });
        let mut bit_deal = None;
        let material = offline(ctx, |ctx| {
            let (r1, r_z, r2, r_w) = (
                self.random_pair(ctx, "sign/r'", n)?,
                self.random_pair(ctx, "sign/r_z", n)?,
                self.random_pair(ctx, "sign/r''", n)?,
                self.random_pair(ctx, "sign/r_w", n)?,
            );
            let r_x = (me == 0).then(|| mask_sum(rx));
            let pw = if me == 0 { None } else { Some(PairMasks::draw(ctx, 3 - me, n)?) };
            bit_deal = Some(ctx.stats().total().messages_sent as usize);
            let bits = self.deal_bits(ctx, r_x.as_deref(), n, l, zp)?;
            let rxrz = if with_product {
                let v = r_x.as_ref().map(|rx| {
                    rx.iter()
                        .zip(mask_sum(&r_z))
                        .map(|(a, b)| self.reduce(a.wrapping_mul(b)))
                        .collect::<Vec<_>>()
                });
                Some(self.deal(ctx, "sign/rx·rz", v.as_deref(), n)?)
            } else {
                None
            };
            let mut online = None;
            if let (Some(pw), Some(bits)) = (pw, bits) {
                // P1 and P2 open Γ = Δ + (1-2Δ)r' + r_z, and form their shares of
                // Γ' = −Γ·r_x + (1−2Δ)·r'' + r_x·r_z + r_w.
                let j = |p: &Pair| if me == 1 { p.one.clone() } else { p.two.clone() };
                let (rp, rz, rpp, rw, rxj) = (j(&r1), j(&r_z), j(&r2), j(&r_w), j(rx));
                let share: Vec<u64> = (0..n)
                    .map(|i| {
                        let d = u64::from(pw.deltas[i]);
                        let base = rz[i].wrapping_add(rp[i].wrapping_mul(1u64.wrapping_sub(2 * d)));
                        if me == 1 { base.wrapping_add(d) } else { base }
                    })
                    .collect();
                let gamma = self.exchange(ctx, me, &share)?;
                let gamma1 = rxrz.as_ref().map(|p| {
                    let rxrz_j = j(p);
                    (0..n)
                        .map(|i| {
                            let sgn = 1u64.wrapping_sub(2 * u64::from(pw.deltas[i]));
                            gamma[i]
                                .wrapping_mul(rxj[i])
                                .wrapping_neg()
                                .wrapping_add(sgn.wrapping_mul(rpp[i]))
                                .wrapping_add(rxrz_j[i])
                                .wrapping_add(rw[i])
                        })
                        .collect()
                });
                online = Some(OnlinePair { pw, bits, gamma, gamma1, rz });
            }
            Ok(SignMaterial { n, with_product, r_x, r1, r2, r_z, r_w, online })
        })?;
        if let (0, Some(frame), Some(frames)) = (me, bit_deal, self.bit_deal_frames.as_mut()) {
            frames.push(frame);
        }
        Ok(material)
    }

    /// The online part (2 rounds): P1 and P2 send P0 the masked lists (and open `Γ''`), P0
    /// answers with `m'` (and `m''`).
    pub fn sign_online(&mut self, ctx: &mut Ctx, x: &Masked, mat: SignMaterial) -> Result<(Masked, Masked)> {
        let me = Self::check_server(ctx)?;
        let (n, l) = (x.n, self.l() as usize);
        if mat.n != n {
            return Err(MpcError::Invalid(format!("sign material for {} elements, input of {n}", mat.n)));
        }
        let zp = Zp::new(prime_for(self.l()));
        let with_product = mat.with_product;
        if me == 0 {
            let r_x = mat.r_x.unwrap_or_default();
            let u = self.recv_lists(ctx, n, l, zp)?;
            let mut m1 = Vec::with_capacity(n);
            let mut m2 = Vec::with_capacity(n);
            let rp = mask_sum(&mat.r1);
            let rpp = mask_sum(&mat.r2);
            let mask = wrap(self.l());
            let top = self.l() - 1;
            let per: Vec<(u64, u64)> = u
                .par_chunks_exact(2 * l)
                .zip(&r_x)
                .zip(rp.par_iter().zip(&rpp))
                .map(|((list, &rx), (&a, &b))| {
                    let (ui, upi) = list.split_at(l);
                    // Branch-free over the whole list (vectorized; no early exit).
                    let hit = ui.iter().zip(upi).fold(false, |h, (&a, &b)| h | ((a == 0) & (b != 0)));
                    let e = u64::from(!hit);
                    let y = e ^ ((rx.wrapping_neg() & mask) >> top);
                    let mp = y.wrapping_sub(a) & mask;
                    (mp, mp.wrapping_mul(rx).wrapping_add(b) & mask)
                })
                .collect();
            drop(u);
            for (a, b) in per {
                m1.push(a);
                m2.push(b);
            }
            let mut msg = to_bytes(&m1);
            if with_product {
                msg.extend(to_bytes(&m2));
            }
            ctx.net().send(1, msg.clone())?;
            ctx.net().send(2, msg)?;
            let w = if with_product { Masked { m: vec![], r: mat.r_w, n } } else { Masked::default() };
            let z = Masked { m: vec![], r: mat.r_z, n };
            self.record_sign(x, &z, &w, with_product)?;
            return Ok((z, w));
        }
        let OnlinePair { mut pw, bits, gamma, gamma1, rz } =
            mat.online.ok_or_else(|| MpcError::Invalid("sign-bit material missing".into()))?;
        self.signs_run += 1;
        let tamper = match self.sign_tamper_after.checked_sub(1) {
            Some(left) => {
                self.sign_tamper_after = left;
                None
            }
            None => self.sign_tamper.take(),
        };
        if let Some(SignTamper::FlipDelta { element }) = tamper
            && element < n
        {
            pw.deltas[element] ^= 1;
        }
        let first = me == 1;
        let mask = wrap(self.l());
        let shift = match tamper {
            Some(SignTamper::ShiftLists { elements }) => elements,
            _ => 0,
        };
        // Chunk by chunk: the lists, then their packing while they are in cache. Each chunk's
        // `2l` entries per element are a multiple of 8, so its packed bytes end on a byte
        // boundary and the pieces, concatenated, are the whole lists packed.
        let chunk = |c: usize| {
            let elements = c * MASK_CHUNK..((c + 1) * MASK_CHUNK).min(n);
            let mut out = vec![0u8; elements.len() * 2 * l];
            let mut draws = pw.chunk(c, zp.p());
            let mut stream = MaskStream::with_deltas(&mut draws, l, &pw.deltas[elements.clone()]);
            for (i, el) in elements.zip(out.chunks_exact_mut(2 * l)) {
                let Some(masks) = stream.next_masks() else { break };
                let (u, up) = el.split_at_mut(l);
                let shares = &bits[i * (l - 1)..(i + 1) * (l - 1)];
                lists_mod(zp.p(), l, x.m[i] & mask, first, shares, masks, u, up);
                if i < shift {
                    u.iter_mut().for_each(|v| *v = zp.add(u32::from(*v), 1) as u8);
                }
            }
            zp.pack(&out)
        };
        let pieces: Vec<Vec<u8>> = (0..n.div_ceil(MASK_CHUNK)).into_par_iter().map(chunk).collect();
        drop(bits);
        let packed = pieces.concat();
        drop(pieces);
        ctx.net().send(0, packed)?;
        let gamma2 = match &gamma1 {
            Some(g1) => {
                let share: Vec<u64> =
                    (0..n).map(|i| g1[i].wrapping_sub(x.m[i].wrapping_mul(rz[i]))).collect();
                Some(self.exchange(ctx, me, &share)?)
            }
            None => None,
        };
        let parts = if with_product { 2 } else { 1 };
        let all = recv_u64s(ctx, 0, parts * n)?;
        self.record_joint(&all);
        let (m1, m2) = all.split_at(n);
        let mut m_z = Vec::with_capacity(n);
        let mut m_w = Vec::with_capacity(n);
        for i in 0..n {
            let sgn = 1u64.wrapping_sub(2 * u64::from(pw.deltas[i]));
            let mz = self.reduce(sgn.wrapping_mul(m1[i]).wrapping_add(gamma[i]));
            m_z.push(mz);
            if let Some(g2) = &gamma2 {
                let mw = x.m[i].wrapping_mul(mz).wrapping_sub(sgn.wrapping_mul(m2[i])).wrapping_add(g2[i]);
                m_w.push(self.reduce(mw));
            }
        }
        self.record_joint(&m_z);
        let z = Masked { m: m_z, r: mat.r_z, n };
        let w = if with_product { Masked { m: m_w, r: mat.r_w, n } } else { Masked::default() };
        self.record_sign(x, &z, &w, with_product)?;
        Ok((z, w))
    }

    /// Records what a sign extraction claims for the final verification: the pair `(x, z)`
    /// for the positivity check ([`crate::pos`]), and the products `z·z = z` (so `z` is a bit:
    /// `z` and `z − 1` have different parities) and `x·z = w`. Both multiply by `z`, so they
    /// are one record with `x·z = w` as its twin (verified as `(c·z + c'·w) − (c·z + c'·x)·z`,
    /// [`crate::claims::Recorded::twin`]): the terms of one product instead of two.
    fn record_sign(&mut self, x: &Masked, z: &Masked, w: &Masked, with_product: bool) -> Result<()> {
        let (x, z) = (Arc::new(x.clone()), Arc::new(z.clone()));
        self.signs.push(crate::claims::SignPair { x: x.clone(), z: z.clone() });
        self.record(z.clone(), z.clone(), z.clone(), crate::claims::Terms::Elementwise);
        if with_product {
            self.record(x, z, Arc::new(w.clone()), crate::claims::Terms::Elementwise);
            self.merge_last_twins(None)?;
        }
        Ok(())
    }

    /// P0 deals `[[b_i]]` in Z_p (packed): the first share from the P0–P1 seed (exactly
    /// uniform draws, [`crate::prime::Draws`]), the second sent to P2. P1 and P2 get their
    /// shares (`n·(l−1)` values, a byte each), P0 gets `None`.
    fn deal_bits(
        &self,
        ctx: &mut Ctx,
        r_x: Option<&[u64]>,
        n: usize,
        l: usize,
        zp: Zp,
    ) -> Result<Option<Vec<u8>>> {
        let me = ctx.party();
        let half = 1u64 << (l - 1);
        let count = n * (l - 1);
        let p = zp.p();
        let first = |ctx: &mut Ctx| -> Result<Vec<u8>> {
            let peer = if me == 0 { 1 } else { 0 };
            let mut shares = vec![0u8; count];
            Draws::new(ctx.pair_prg(peer, "aegis/sign/bits")?, p).fill(&mut shares);
            Ok(shares)
        };
        match me {
            0 => {
                let r_x = r_x.ok_or_else(|| MpcError::Invalid("P0 needs the mask".into()))?;
                let mut s2 = first(ctx)?;
                let (mask, p8) = (wrap(self.l()), p as u8);
                s2.par_chunks_exact_mut(l - 1).zip(r_x).for_each(|(sh, &r)| {
                    let q = r.wrapping_neg() & mask;
                    let b = half - 1 - (q & (half - 1));
                    for (k, v) in sh.iter_mut().enumerate() {
                        // bit − v mod p: bit + p − v lies in [1, p + 1].
                        let w = ((b >> (l - 2 - k)) & 1) as u8 + (p8 - *v);
                        *v = if w >= p8 { w - p8 } else { w };
                    }
                });
                ctx.net().send(2, pack_par(zp, &s2))?;
                Ok(None)
            }
            1 => Ok(Some(first(ctx)?)),
            _ => {
                let msg = ctx.recv_at_most(0, zp.packed_len(count))?;
                let shares = unpack_par(zp, &msg, count);
                Ok(Some(
                    shares.ok_or_else(|| MpcError::Malformed { from: 0, what: "Z_p bit shares".into() })?,
                ))
            }
        }
    }

    /// P0 receives both lists from P1 and P2 and adds them: per element `u` then `u'`, `l`
    /// entries each.
    fn recv_lists(&self, ctx: &mut Ctx, n: usize, l: usize, zp: Zp) -> Result<Vec<u8>> {
        let mut sums = vec![0u8; 2 * n * l];
        for from in [1, 2] {
            let msg = ctx.recv_at_most(from, zp.packed_len(2 * n * l))?;
            if !unpack_par_into(zp, &msg, &mut sums, from == 2) {
                return Err(MpcError::Malformed { from, what: "masked Z_p lists".into() });
            }
        }
        Ok(sums)
    }

    /// P1 and P2 open a value they hold additively.
    fn exchange(&self, ctx: &mut Ctx, me: usize, share: &[u64]) -> Result<Vec<u64>> {
        ctx.net().send(3 - me, to_bytes(share))?;
        let other = recv_u64s(ctx, 3 - me, share.len())?;
        Ok(share.iter().zip(other).map(|(a, b)| self.reduce(a.wrapping_add(b))).collect())
    }

    /// `⟨sign(x)⟩` (1 for negative `x`).
    pub fn sign(&mut self, ctx: &mut Ctx, x: &Masked) -> Result<Masked> {
        Ok(self.sign_product(ctx, x, false)?.0)
    }

    /// `⟨f(v)⟩ = ⟨v·sign(v)⟩ = ⟨min(v, 0)⟩`.
    pub fn neg_part(&mut self, ctx: &mut Ctx, v: &Masked) -> Result<Masked> {
        Ok(self.sign_product(ctx, v, true)?.1)
    }

    /// `⟨ReLU(x)⟩ = ⟨x⟩ − ⟨x·sign(x)⟩` (2 online rounds).
    pub fn relu(&mut self, ctx: &mut Ctx, x: &Masked) -> Result<Masked> {
        let w = self.neg_part(ctx, x)?;
        self.sub(x, &w)
    }

    /// `⟨max(a, b)⟩ = ⟨b⟩ − ⟨f(b − a)⟩` elementwise (2 online rounds).
    pub fn max2(&mut self, ctx: &mut Ctx, a: &Masked, b: &Masked) -> Result<Masked> {
        let d = self.sub(b, a)?;
        let f = self.neg_part(ctx, &d)?;
        self.sub(b, &f)
    }

    /// The maximum of each row of `x: [rows, k]`: a binary tree of two-way maxima, all pairs
    /// of one level in one call (`2⌈log2 k⌉` online rounds, `k − 1` maxima per row).
    pub fn max_rows(&mut self, ctx: &mut Ctx, x: &Masked, rows: usize, k: usize) -> Result<Masked> {
        let mats = self.prepare_max_rows(ctx, &x.r, rows, k)?;
        self.max_rows_online(ctx, x, rows, k, mats)
    }

    /// Offline material of every level of [`Aegis::max_rows`] (the masks of each level follow
    /// from those of the one before, so all levels are prepared ahead).
    pub fn prepare_max_rows(
        &mut self,
        ctx: &mut Ctx,
        rx: &Pair,
        rows: usize,
        k: usize,
    ) -> Result<Vec<SignMaterial>> {
        let n = rx.one.len().max(rx.two.len());
        if k == 0 || n != rows * k {
            return Err(MpcError::Invalid(format!("max over rows of {k} in {n} elements")));
        }
        let mut cur = Masked { m: vec![], r: rx.clone(), n };
        let mut width = k;
        let mut mats = Vec::new();
        while width > 1 {
            let level = Level::new(rows, width);
            let (a, b) = (gather(&cur, &level.left), gather(&cur, &level.right));
            let d = self.sub(&b, &a)?;
            let mat = self.prepare_sign(ctx, &d.r, d.n, true)?;
            // The level's output mask: r_b − r_w.
            let out = self.sub(&b, &Masked { m: vec![], r: mat.r_w.clone(), n: d.n })?;
            cur = gather(&concat(&out, &cur), &level.next);
            mats.push(mat);
            width = width.div_ceil(2);
        }
        Ok(mats)
    }

    /// The online part of [`Aegis::max_rows`] (2 rounds per level).
    pub fn max_rows_online(
        &mut self,
        ctx: &mut Ctx,
        x: &Masked,
        rows: usize,
        k: usize,
        mats: Vec<SignMaterial>,
    ) -> Result<Masked> {
        if k == 0 || x.n != rows * k {
            return Err(MpcError::Invalid(format!("max over rows of {k} in {} elements", x.n)));
        }
        let mut cur = x.clone();
        let mut width = k;
        let mut mats = mats.into_iter();
        while width > 1 {
            let level = Level::new(rows, width);
            let (a, b) = (gather(&cur, &level.left), gather(&cur, &level.right));
            let d = self.sub(&b, &a)?;
            let mat = mats.next().ok_or_else(|| MpcError::Invalid("max tree material missing".into()))?;
            let f = self.sign_online(ctx, &d, mat)?.1;
            let maxima = self.sub(&b, &f)?;
            cur = gather(&concat(&maxima, &cur), &level.next);
            width = width.div_ceil(2);
        }
        Ok(cur)
    }
}

/// Index bookkeeping of one level of a max tree over rows of `width`: the left and right
/// elements of each pair, and where the next level's elements are in `maxima ++ current`.
struct Level {
    left: Vec<usize>,
    right: Vec<usize>,
    next: Vec<usize>,
}

impl Level {
    fn new(rows: usize, width: usize) -> Self {
        let pairs = width / 2;
        let pick = |off: usize| -> Vec<usize> {
            (0..rows).flat_map(|r| (0..pairs).map(move |p| r * width + 2 * p + off)).collect()
        };
        let mut next = Vec::with_capacity(rows * width.div_ceil(2));
        for r in 0..rows {
            next.extend((0..pairs).map(|p| r * pairs + p));
            if width % 2 == 1 {
                next.push(rows * pairs + r * width + width - 1);
            }
        }
        Level { left: pick(0), right: pick(1), next }
    }
}

/// Elements `idx` of `x`, local.
pub fn gather(x: &Masked, idx: &[usize]) -> Masked {
    let pick = |v: &[u64]| if v.is_empty() { vec![] } else { idx.iter().map(|&i| v[i]).collect() };
    Masked { m: pick(&x.m), r: Pair { one: pick(&x.r.one), two: pick(&x.r.two) }, n: idx.len() }
}

fn concat(a: &Masked, b: &Masked) -> Masked {
    let cat = |p: &[u64], q: &[u64]| [p, q].concat();
    Masked {
        m: cat(&a.m, &b.m),
        r: Pair { one: cat(&a.r.one, &b.r.one), two: cat(&a.r.two, &b.r.two) },
        n: a.n + b.n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phi_has_one_zero_at_the_first_one_for_every_8_bit_vector() {
        for v in 1u32..256 {
            let c: Vec<u32> = (0..8).map(|i| (v >> (7 - i)) & 1).collect();
            let first = c.iter().position(|&b| b == 1).unwrap();
            let t = phi(&c, 13);
            let zeros: Vec<usize> = t.iter().enumerate().filter(|(_, x)| **x == 0).map(|(i, _)| i).collect();
            assert_eq!(zeros, vec![first], "c = {c:?}, φ(c) = {t:?}");
        }
    }

    #[test]
    fn a_worked_example() {
        // l = 8, p = 13: a = 1100001‖0, b = 1100011‖1, c' = [1,1,1,1,1,0,2,1], ζ = 5.
        let a = [1, 1, 0, 0, 0, 0, 1, 0];
        let b = [1, 1, 0, 0, 0, 1, 1, 1];
        let c: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x ^ y).collect();
        assert_eq!(phi(&c, 13), vec![1, 1, 1, 1, 1, 0, 2, 1]);
    }
}
