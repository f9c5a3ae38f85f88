//! Batch verification of every product (paper §4.1, Π_MultVerify^R and Π_BIVerify^R, rebuilt
//! with the fixes listed below): one check, at the end, that every recorded multiplication and
//! inner product was computed correctly, with `O(log N)` communication.
//!
//! 1. **Lift** every product to the Galois ring `GR(2^64, 64)` ([`veil_ring::Gr`]; constant
//!    coefficient, others 0): over `Z_2^64` alone an error of `2^63` survives even challenges.
//! 2. **Combine**: with coefficients `c_o ∈ GR` derived from a challenge drawn *after* the products
//!    (no server knows it before), the claim "every `z_o = Σ_k x_ok·y_ok`" becomes one inner
//!    product `Σ X_i·Y_i = Z` with `X = c_o·x`, `Y = y`, `Z = Σ c_o·z_o`. A false claim stays
//!    false except with probability `2^-64` (independent coefficients instead of the paper's
//!    powers `r^i`, which keeps soundness: no `N` ring powers, soundness `2^-d` per check).
//!    A matrix product `Z = X·Y` (convolutions and fully connected layers) enters in
//!    Freivalds's form instead: `uᵀZv = (uᵀX)·(Yv)` with public random `u, v` over GR, one
//!    claim of `k` terms instead of `m·n·k` (soundness `2/2^64`; a stride-1 convolution's
//!    structured `u` a few hundred over `2^64`, see `crate::freivalds`), which
//!    takes the products of a CNN's linear layers out of the verification's cost.
//! 3. **Reduce** `R` times (Goyal–Song): pair up entries, compute `h(0) = Σ X_{2i}Y_{2i}` and the
//!    leading coefficient `c_2 = Σ (X_{2i+1}−X_{2i})(Y_{2i+1}−Y_{2i})` as two masked inner
//!    products, set `c_1 = Z − 2h(0) − c_2` (division-free), draw a random
//!    `ζ ∈ GR` after the inner products are fixed (`crate::challenge`), and continue with `X_{2i} + ζ(X_{2i+1}−X_{2i})`, the
//!    same for `Y`, and `Z' = h(0) + ζc_1 + ζ²c_2`. A false claim survives with probability
//!    at most `2/2^64` per reduction, whatever additive errors the inner products carry.
//! 4. **Final check** (Π_InnerVerify, rebuilt; `Aegis::final_check`): with a secret random
//!    `⟨α⟩`, first `⟨W_i⟩ = ⟨α·X_i⟩` for every entry as masked products, then the masked inner
//!    product `⟨Δ⟩ = Σ W_i·Y'_i − α·Z'`; open `Δ` with the hash-checked reconstruction and
//!    accept iff `Δ = 0`. The paper computes `α·(Σ X_i·Y_i − Z)` in one degree-3 evaluation
//!    from cross terms P0 deals, and P1 and P2 multiply two of them (`Σ r_X r_Y` and
//!    `r_α r_Z`) by the public `m_α`: a malicious P0, which knows `r_α` and the error `E` its
//!    own deviations left in the claim, shifts `Σ r_X r_Y` by `−E` and `Σ r_α r_X r_Y` by
//!    `−r_α·E`, which adds `−(m_α − r_α)·E = −α·E` and cancels the error (the paper's Lemma 3
//!    assumes the evaluation's additive error cannot depend on `α`; this one does). Here every
//!    value P0 deals enters `Δ` additively or times a secret, so
//!    `Δ = α·E + Σ_i δ_i·Y'_i + e` with `δ_i`, `e` fixed by a view in which `α` is uniform
//!    (`m_α` is hidden from P0, a share of `r_α` from each prover): a false claim passes with
//!    probability at most `2^-64`. An error `δ_i` in P0's deal of `α·X_i` is multiplied by
//!    the entry's `Y`: were that the data's `Y_i`, whether P0's change aborts would tell it
//!    whether `Y_i = 0` (a selective failure). So each `Y_i` is first mixed with a secret
//!    random dummy, `Y'_i = Y_i + γ·D_i` and `Z' = Z + γ·T` with the masked inner product
//!    `⟨T⟩ = ⟨Σ X_i·D_i⟩`, `γ` drawn by a challenge after `T` and the `W_i` are fixed (an
//!    error in `T` leaves `α·γ·e_T`, caught like `E`). Cost: four rounds (a challenge, an
//!    exchange, the opening), two where its first half travels with the last halving (below),
//!    `N' + 2` GR elements from P0, `N' + 2` each way between P1 and P2 (the paper's check:
//!    `2N' + 3` from P0, two rounds). Every claim, the truncation pairs' bit products too, is
//!    materialized for it: each entry is multiplied by `α`. The two halves are
//!    `crate::final_check`. The opening cannot share a round with the exchange of `Δ`'s
//!    shares: a rushing prover that saw the other's share of `Δ` before sending its own could
//!    choose its hash-checked pieces to make any `Δ` open as 0, so `Δ` is fixed (exchanged)
//!    before it is opened.
//!
//! Communication: per reduction two GR inner products (`2 × 512` bytes from P0, `2 × 512` each
//! way between P1 and P2) and a challenge of **2 rounds**: P1 and P2 exchange their shares in
//! the challenge's first round, each committing to its share towards P0, and P0, which learns
//! `ζ` at the end of that round, releases it at once and deals the next reduction's masked
//! products in the second, in a message of its own once it has computed them. A challenge
//! drawn by opening a random value with P0 sending its pieces at once would be unsound
//! against a rushing P1 or P2 (it would read `ζ` before sending its share);
//! `crate::challenge` says why its schedule is not. So one halving after another costs 2
//! rounds each, the paper's `R + 1` for the whole check leaving out when `ζ` may be revealed.
//!
//! **Pipelined halvings** (`Aegis::reduce_products`, [`crate::Pairing`]). Two halvings may go
//! in one pair of rounds instead. Step `j + 1`'s sums depend on `ζ_j` only through the fold
//! `X'_i = u·X_{2i} + v·X_{2i+1}` (`u = 1 − ζ_j`, `v = ζ_j`, the same for `Y`), and a party's
//! local part of each sum is a quadratic form in `(u, v)`; so before `ζ_j` is known every
//! party computes its local parts of step `j + 1`'s two sums as the coefficients `c_0, c_1,
//! c_2` of polynomials in `ζ_j` (from the forms' values at `(1, 0)`, `(0, 1)` and `(1, 1)`:
//! the even entries, the odd ones and their sums, `crate::claims::monomials`), P0 deals the
//! six masked products, and P1 and P2 send step `j`'s shares and step `j + 1`'s coefficients in
//! the same round, each in the first round of a challenge of its own, released together in
//! the next. Step `j + 1`'s sums are then `c_0 + c_1·ζ_j + c_2·ζ_j²`, linear in the opened
//! coefficients. Soundness is that of the unpipelined schedule: step `j + 1`'s values are
//! fixed once its coefficients are committed and `ζ_j` is drawn, and its own challenge
//! `ζ_{j+1}` is drawn after both (a prover choosing its coefficients knowing `ζ_j`, were it
//! able to, would only choose step `j + 1`'s values after `ζ_j`, as the unpipelined schedule
//! lets it do anyway); an error anywhere survives a step with probability at most `2/2^64`.
//!
//! The cost: six GR elements a claim instead of two for the second step of a pair, and its
//! local parts take three times a step's products where the entries are formed (the bilinear
//! ways form their accumulators once and combine them three times,
//! `crate::columns::Columns::local_poly`). Where a lazy claim's entries are formed (more
//! than 8 slots each), a pair's two steps share one pass over the recorded terms instead
//! (`Columns::local_pair`: eight products per four entries, two more than the steps one
//! after the other), and a held claim's pair one pass over its entries
//! (`reduction::held_pair`). So the default, [`crate::Pairing::WhereCheap`],
//! pairs only where the second step costs about what it would alone: lazy steps of entries of
//! at most 4 slots, lazy steps in one pass of entries of at least 32 slots, and short held
//! claims. LeNet at batch 30 on two Zen 1 cores, same sitting (three runs each): one halving
//! at a time 26 rounds and 4.40 s; the default 22 rounds and 4.28–4.34 s;
//! [`crate::Pairing::Always`] 14 rounds and 5.58–5.65 s (VGG-16 at batch 30: 22 rounds instead
//! of 38, 1 364 s instead of 981), for links where a round costs more than that. (Since the
//! pairs in one pass: the default 20 rounds in 3.72–3.85 s, `Always` 4.72–4.87 s, in later
//! sittings; `crate::columns`'s `ONE_PASS_CHEAP`.) With
//! `Always`, a lazy claim that the second step would materialize is materialized for the
//! pair's first (its entries, twice as many) when that holds at most `2·MATERIALIZE_AT`
//! entries; a longer one (VGG-16 at batch 30) takes that step alone.
//!
//! **The final check's first half with the last halving** (`crate::final_check`). The first
//! half's values (`α·X_i`, `Σ X_i·D_i`) are linear in the entries, so they can be dealt on
//! the entries before the last halving's fold (twice as many, four times before a pair) and
//! folded by the parties once `ζ` is known; their shares then travel in the last halving's
//! challenge, whose seed draws `ζ`, then `γ` and the `ρ_j`. Every tested value is fixed
//! before any of them is drawn, so soundness is unchanged, and the first half's own
//! challenge (2 rounds) goes. It costs the longer deal: [`Pairing::Never`] never does it,
//! [`Pairing::Always`] does it whenever the claims' entries before the last step fit in
//! [`EARLY_FINAL_LIMIT`], and the default only where they fit in [`CHEAP_FIRST_HALF`]
//! (LeNet at batches up to 8, S-NN; LeNet at batch 30 ends with 16 384 entries before its
//! last pair, where the early deal costs about 0.1 s more per party on two Zen 1 cores, more than two
//! rounds on a LAN).
//!
//! Total: `2` for the coefficients, `2` per pair of halvings or lone halving, `2` for the
//! final check whose first half travelled with the last halving, `4` otherwise (its first
//! deal follows the last challenge's release; then the dummies' challenge, the exchange of
//! `m_Δ` and the opening): from `2R + 6` with no pairs and no early first half to `R + 4`
//! for an even `R` with all. The sign checks (`crate::pos`, 4 rounds) and P1 and P2's comparison of their
//! joint digests (1) run beside the reductions, in a lane of their own ([`Aegis::check`]):
//! their equality claims enter the final check with coefficients drawn there
//! (`Elementwise`), after both lanes, so the whole verification takes the reductions' lane and
//! the final check where the reductions are the longer lane. The parties run reductions
//! while the dimension is above [`FINAL_DIMENSION`], at most [`REDUCTIONS`] of them, so the
//! rounds do not grow with the batch: a larger batch makes the final check larger instead
//! (`N' = N/2^R`), up to
//! [`FINAL_LIMIT`] entries, past which a claim is halved further (a final entry costs far
//! more than a halving). Memory stays bounded without chunking: the elementwise and inner
//! products, almost all of the terms, are reduced lazily from their recorded `Z_2^64` shares
//! ([`crate::columns`]) while a column still holds two entries or more (or until at most
//! [`crate::columns::MATERIALIZE_AT`] entries are left), and matrix products are compressed
//! first; the two claims are reduced in lockstep (one `ζ` per step), combined with
//! coefficients from the last challenge and checked once.

use std::sync::Arc;

use veil_crypto::{Prg, Seed};
use veil_mpc::{Ctx, MpcError, Result};
use veil_net::Lanes;
use veil_ring::Gr;

use crate::challenge;
pub use crate::claims::Terms;
use crate::claims::{BitProducts, GrVec, Recorded, gr_bytes, gr_digest, gr_from, recv_gr};
use crate::final_check::{FirstHalf, Opened, Reduced};
use crate::reduction::{Pairing, Reduction};
use crate::share::{Aegis, Masked};

/// The most halvings a claim gets (the paper's `R`; [`Aegis::with_reductions`] sets another):
/// the verification's rounds do not grow with the batch, and a claim of `N` terms ends its
/// reductions at `max(N/2^R, FINAL_DIMENSION)` entries, which the final check deals and tests
/// in one step. The paper's best measured `R` are 7 to 10 (its Fig. 15); at 10, LeNet at
/// batch 30 (4.2 million terms) ends at about 4 000 entries.
pub const REDUCTIONS: usize = 10;

/// Most entries a claim takes to the final check: past its `R` halvings, a longer claim is
/// halved further (a round and two GR inner products each, in pairs, where the final check costs
/// about 3 KiB per entry and party between P1 and P2 and from P0, and holds each entry's
/// `α·X_i` and dummy). Only a claim of more than `2^R · FINAL_LIMIT` terms gets more rounds:
/// LeNet at batch 30 (4.2 million) does not, VGG-16 does.
pub const FINAL_LIMIT: usize = 1 << 14;

/// Most entries still reduced lazily that the last halving materializes for the final check's
/// first half to travel with it (module docs, "The final check's first half with the last
/// halving"): the entries before a pair's folds, four times the final check's. Past it (a claim
/// whose halvings stop while it is still lazy and long), the first half takes a challenge of
/// its own.
pub const EARLY_FINAL_LIMIT: usize = 4 * FINAL_LIMIT;

/// Most entries the final check's first half deals before the last halving by default
/// ([`Pairing::WhereCheap`]): four times [`FINAL_DIMENSION`], the entries before a pair of
/// halvings that ends there. Dealt before the folds, the first half costs each party about
/// 25 ms more there (two Zen 1 cores) and saves two rounds; for LeNet at batch 30 (16 384 such
/// entries) it cost 0.1 s more.
pub const CHEAP_FIRST_HALF: usize = 4 * FINAL_DIMENSION;

/// Reductions stop at this dimension (the final check deals `N' + 2` GR elements: 512 KiB from
/// P0 here, and as much each way between P1 and P2). The paper leaves `N/2^R` around
/// 2^10–2^11 too (its Fig. 15): below that, each halving (a round, in pairs) saves less
/// traffic than a round costs on any network it measures.
pub const FINAL_DIMENSION: usize = 1024;

impl Aegis {
    /// Merges the two most recent recorded products, which must have the same `y` and terms,
    /// into one record verified at the cost of one (see [`Recorded::twin`]); with `bits`, their
    /// inputs are kept as those bits instead of shares.
    pub(crate) fn merge_last_twins(&mut self, bits: Option<BitProducts>) -> Result<()> {
        let second = self.recorded.pop();
        match (self.recorded.last_mut(), second) {
            (Some(first), Some(second))
                if first.twin.is_none()
                    && second.twin.is_none()
                    && first.y == second.y
                    && first.z.n == second.z.n
                    && first.terms == second.terms =>
            {
                first.twin = Some((second.x, second.z));
                if let (Some(b), Some((x2, _))) = (bits, first.twin.as_mut()) {
                    if b.b1.len().max(b.b2.len()) != first.x.n || b.w.len() != b.len || b.w2.len() != b.len {
                        return Err(MpcError::Invalid("bit products of the wrong size".into()));
                    }
                    (first.x, first.y, *x2) = (Arc::default(), Arc::default(), Arc::default());
                    first.bits = Some(b);
                }
                Ok(())
            }
            _ => Err(MpcError::Invalid("the last two products are not twins".into())),
        }
    }

    /// White-box tampering for the negative tests: applies `f` to the `(x, y, z)` of the
    /// `back`-th most recent recorded product at this party (as if its online messages had
    /// carried the corresponding additive errors).
    #[doc(hidden)]
    pub fn tamper_recorded(&mut self, back: usize, f: impl Fn(&mut Masked, &mut Masked, &mut Masked)) {
        let len = self.recorded.len();
        if let Some(r) = len.checked_sub(back + 1).and_then(|i| self.recorded.get_mut(i)) {
            f(Arc::make_mut(&mut r.x), Arc::make_mut(&mut r.y), Arc::make_mut(&mut r.z));
        }
    }

    /// White-box tampering of the twin (`x2`, `z2`) of the `back`-th most recent record (a
    /// truncation pair's `r_z` inner product), for the negative tests.
    #[doc(hidden)]
    pub fn tamper_twin(&mut self, back: usize, f: impl Fn(&mut Masked, &mut Masked)) {
        let len = self.recorded.len();
        if let Some((x2, z2)) =
            len.checked_sub(back + 1).and_then(|i| self.recorded.get_mut(i)).and_then(|r| r.twin.as_mut())
        {
            f(Arc::make_mut(x2), Arc::make_mut(z2));
        }
    }

    /// `n` random GR values from the seed this party shares with `peer`.
    fn gr_pair_random(&self, ctx: &mut Ctx, peer: usize, what: &str, n: usize) -> Result<Vec<Gr>> {
        let mut g = ctx.pair_prg(peer, what)?;
        Ok((0..n).map(|_| Gr::random(&mut g)).collect())
    }

    /// A random `⟨v⟩` over GR nobody knows (no communication).
    pub(crate) fn gr_random(&self, ctx: &mut Ctx, what: &str, n: usize) -> Result<GrVec> {
        let me = Self::check_server(ctx)?;
        let masks = self.gr_masks(ctx, what, n)?;
        let m = if me == 0 { vec![] } else { self.gr_pair_random(ctx, 3 - me, &format!("{what}/m"), n)? };
        Ok(GrVec { m, ..masks })
    }

    /// Random masks `[r]_1`, `[r]_2` of `n` GR values, with no masked value: the output masks
    /// of masked products (no communication).
    pub(crate) fn gr_masks(&self, ctx: &mut Ctx, what: &str, n: usize) -> Result<GrVec> {
        let me = Self::check_server(ctx)?;
        let one = if me != 2 {
            self.gr_pair_random(ctx, if me == 0 { 1 } else { 0 }, &format!("{what}/1"), n)?
        } else {
            vec![]
        };
        let two = if me != 1 {
            self.gr_pair_random(ctx, if me == 0 { 2 } else { 0 }, &format!("{what}/2"), n)?
        } else {
            vec![]
        };
        Ok(GrVec { m: vec![], one, two })
    }

    /// P0's deal of GR values `v`: P1's share comes from the PRG it shares with P0, P2's share
    /// (returned, to send) is the rest, 512 bytes per element.
    pub(crate) fn deal_out(&self, ctx: &mut Ctx, what: &str, v: &[Gr]) -> Result<Vec<u8>> {
        let mut g = ctx.pair_prg(1, what)?;
        let mut out = Vec::with_capacity(v.len() * 512);
        for a in v {
            out.extend(a.sub(&Gr::random(&mut g)).0.iter().flat_map(|w| w.to_le_bytes()));
        }
        Ok(out)
    }

    /// P1's or P2's share of a deal of `n` values: from the PRG shared with P0 at P1, from
    /// P0's next message at P2.
    pub(crate) fn deal_in(&self, ctx: &mut Ctx, what: &str, n: usize) -> Result<Vec<Gr>> {
        match Self::check_server(ctx)? {
            1 => self.gr_pair_random(ctx, 0, what, n),
            _ => recv_gr(ctx, 0, n),
        }
    }
    /// Opens `⟨v⟩` over GR to every server with the hash-checked reconstruction.
    pub(crate) fn gr_open(&self, ctx: &mut Ctx, v: &GrVec) -> Result<Vec<Gr>> {
        let me = Self::check_server(ctx)?;
        let n = v.len();
        let (m, r1, r2) = match me {
            0 => {
                ctx.net().send(2, gr_bytes(&v.one))?;
                ctx.net().send(1, gr_bytes(&v.two))?;
                let m = recv_gr(ctx, 1, n)?;
                if ctx.recv_at_most(2, 32)? != gr_digest(&m) {
                    return Err(MpcError::abort("aegis verification: opened values differ", None));
                }
                (m, v.one.clone(), v.two.clone())
            }
            1 => {
                ctx.net().send(0, gr_bytes(&v.m))?;
                ctx.net().send(2, gr_digest(&v.one))?;
                let r2 = recv_gr(ctx, 0, n)?;
                if ctx.recv_at_most(2, 32)? != gr_digest(&r2) {
                    return Err(MpcError::abort("aegis verification: opened values differ", None));
                }
                (v.m.clone(), v.one.clone(), r2)
            }
            _ => {
                ctx.net().send(0, gr_digest(&v.m))?;
                ctx.net().send(1, gr_digest(&v.two))?;
                let r1 = recv_gr(ctx, 0, n)?;
                if ctx.recv_at_most(1, 32)? != gr_digest(&r1) {
                    return Err(MpcError::abort("aegis verification: opened values differ", None));
                }
                (v.m.clone(), r1, v.two.clone())
            }
        };
        Ok((0..n).map(|i| m[i].sub(&r1[i]).sub(&r2[i])).collect())
    }

    /// Reduces every product recorded since the last verification to the claim of the final
    /// check ([`Aegis::final_check`], which the caller runs once the sign checks' claims are
    /// in too); `None` where there is nothing to verify (no products and no `late` claims).
    /// An error means some product was wrong (or a server cheated) and nothing may be
    /// revealed.
    ///
    /// Its messages depend on nothing but the recorded products and this party's seeds, so it
    /// runs in a lane of its own beside the sign checks ([`Aegis::check`]), until the final
    /// check's first half joins the last halving (module docs, "The final check's first half
    /// with the last halving"): from there on it waits for the sign checks' lane (`lanes`),
    /// whose claims `late` that half deals. The coefficients' challenge comes first; then the
    /// halvings go two at a time (module docs, "Pipelined halvings"): a step's sums as values
    /// and the next step's as polynomials in the first step's `ζ`, each with a challenge of its
    /// own ([`crate::challenge`]), both in the same two rounds.
    pub(crate) fn reduce_products(
        &mut self,
        ctx: &mut Ctx,
        recorded: Vec<Recorded>,
        late: &Elementwise,
        lanes: &Lanes,
    ) -> Result<Option<Reduced>> {
        if recorded.is_empty() && late.is_empty() {
            return Ok(None);
        }
        let me = Self::check_server(ctx)?;
        let limit = self.max_reductions.unwrap_or(REDUCTIONS);
        let materialize_at = self.materialize_at.max(FINAL_DIMENSION);
        let what = "verify/coefficients";
        let pending = challenge::send(ctx, what, &[])?;
        let (seed, _) = finish_with_shares(ctx, what, pending, &[])?;
        let mut prg = Prg::new(&seed);
        let mut red = Reduction::new(me, recorded, &mut prg, limit, materialize_at)?;
        // A cheating P0's record of the error its shifts left in each claim (negative tests).
        let cheat = if me == 0 { self.cancel_attempt } else { None };
        let mut errors = vec![Gr::ZERO; red.parts.len()];
        // The final check's first half once dealt, and each claim's challenges after it.
        let mut first: Option<FirstHalf> = None;
        let mut zetas: Vec<Vec<Gr>> = vec![vec![]; red.parts.len()];
        let mut opened = vec![];
        loop {
            let active = red.next_step();
            if active.is_empty() {
                let fin = red.into_final(&mut prg);
                let error = errors.iter().zip(&fin.coeffs).fold(Gr::ZERO, |s, (e, r)| s.add(&e.mul(r)));
                let opened = first.map(|first| Opened { first, m: opened, zetas, prg });
                return Ok(Some(Reduced { fin, opened, cheat: cheat.map(|c| (c, error)) }));
            }
            // P0 deals both steps (and the final check's first half after the last) before it
            // reads a share; P1 and P2 send each step's shares as soon as they have them.
            let tracked = |errors: &[Gr]| errors.iter().fold(Gr::ZERO, |s, e| s.add(e));
            let alone_last = active.iter().all(|&k| !red.continues_after(k, 1));
            // Whether the next step goes with this one, known before this one's sums so that a
            // lazy claim can compute both in one pass (`Reduction::local`).
            let pair = !alone_last && red.pairs_next(&active, self.pairing);
            let mut steps = vec![self.open_step(ctx, &mut red, active, Sums::Values { pair }, cheat)?];
            if alone_last && self.first_half_early(&mut red) {
                let cheat = cheat.map(|c| (c, tracked(&errors)));
                first = Some(self.first_half_with(ctx, &red, &mut steps, (late, lanes), cheat)?);
            }
            let mut pending = vec![];
            if me != 0 {
                pending.push(self.send_step(ctx, &steps[0])?);
            }
            let next = if first.is_none() { red.poly_step(&steps[0].active, self.pairing) } else { None };
            if let Some(next) = next.filter(|n| !n.is_empty()) {
                let pair_last = next.iter().all(|&k| !red.continues_after(k, 2));
                steps.push(self.open_step(ctx, &mut red, next, Sums::Polynomials, cheat)?);
                if pair_last && self.first_half_early(&mut red) {
                    let cheat = cheat.map(|c| (c, tracked(&errors)));
                    first = Some(self.first_half_with(ctx, &red, &mut steps, (late, lanes), cheat)?);
                }
                if me != 0 {
                    pending.push(self.send_step(ctx, &steps[1])?);
                }
            }
            let mut previous: Option<Gr> = None;
            for step in steps {
                let p = if me == 0 { self.send_step(ctx, &step)? } else { take(&mut pending)? };
                let (seed, mut m) = finish_with_shares(ctx, "verify/zeta", p, &step.share)?;
                // The final check's first half's openings, where they travelled with this step.
                if m.len() > step.own {
                    opened = m.split_off(step.own);
                }
                prg = Prg::new(&seed);
                let zeta = Gr::random(&mut prg);
                let h = step.values(m, previous.as_ref());
                if let (Some(c), Some(&first)) = (cheat, step.active.first()) {
                    // `Z' = h(0) + ζ·(Z − 2h(0) − c_2) + ζ²·c_2`: an error `E` in `Z` and
                    // `e` in `h(0)` leave `ζ·E + (1 − 2ζ)·e`.
                    let one_minus_2z = Gr::embed(1).sub(&zeta).sub(&zeta);
                    for &k in &step.active {
                        errors[k] = zeta.mul(&errors[k]);
                    }
                    errors[first].add_assign(&one_minus_2z.mul(&Gr::embed(c.shift)));
                }
                red.fold(&step.active, &h, &zeta);
                if first.is_some() {
                    for &k in &step.active {
                        zetas[k].push(zeta);
                    }
                }
                previous = Some(zeta);
            }
        }
    }

    /// Deals the final check's first half on the entries before the pending folds of
    /// `steps` (a lone step or a pair), its shares to travel with the last step's, after the
    /// step's own.
    fn first_half_with(
        &self,
        ctx: &mut Ctx,
        red: &Reduction,
        steps: &mut [Step],
        (late, lanes): (&Elementwise, &Lanes),
        cheat: Option<(CancelAttempt, Gr)>,
    ) -> Result<FirstHalf> {
        let second = steps.get(1).map_or(&[][..], |s| &s.active[..]);
        let folds = fold_counts(red.parts.len(), &steps[0].active, second);
        let half = self.final_first(ctx, &red.pieces(&folds), late, Some(lanes), cheat)?;
        if let Some(last) = steps.last_mut() {
            last.share.extend_from_slice(&half.share);
        }
        Ok(half)
    }

    /// Whether the final check's first half goes with the last halving under this
    /// verification's [`Pairing`] (module docs, "The final check's first half with the last
    /// halving"): with `Always` wherever the claims can be held in GR ([`EARLY_FINAL_LIMIT`]),
    /// with `WhereCheap` where it deals at most [`CHEAP_FIRST_HALF`] entries, never with
    /// `Never` (the least computation).
    fn first_half_early(&self, red: &mut Reduction) -> bool {
        match self.pairing {
            Pairing::Never => false,
            Pairing::WhereCheap => red.entries() <= CHEAP_FIRST_HALF && red.hold_all(EARLY_FINAL_LIMIT),
            Pairing::Always => red.hold_all(EARLY_FINAL_LIMIT),
        }
    }

    /// A step's local parts (its two sums per claim, or with `poly` their coefficients in the
    /// pending `ζ`, [`Reduction::local_poly`]) completed to masked inner products: P0 deals
    /// `[r_h + Σ r_a·r_b]` (its local part is the masks' cross term), P1 and P2 add their dealt
    /// share to their local parts.
    fn open_step(
        &self,
        ctx: &mut Ctx,
        red: &mut Reduction,
        active: Vec<usize>,
        sums: Sums,
        cheat: Option<CancelAttempt>,
    ) -> Result<Step> {
        let me = Self::check_server(ctx)?;
        let local = match sums {
            Sums::Values { pair } => red.local(&active, pair),
            Sums::Polynomials => red.local_poly(&active),
        };
        let masks = self.gr_masks(ctx, "verify/inner/r_z", local.len())?;
        let share = if me == 0 {
            let mut gamma: Vec<Gr> =
                local.iter().enumerate().map(|(j, l)| masks.one[j].add(&masks.two[j]).add(l)).collect();
            if let Some(c) = cheat {
                // `h(0)`'s value, or its constant coefficient: `e` in `h(0)` whatever `ζ`.
                gamma[0].add_assign(&Gr::embed(c.shift));
            }
            let deal = self.deal_out(ctx, "verify/inner/gamma", &gamma)?;
            ctx.net().send(2, deal)?;
            vec![]
        } else {
            let g = self.deal_in(ctx, "verify/inner/gamma", local.len())?;
            g.iter().zip(&local).map(|(g, l)| g.add(l)).collect()
        };
        let own = share.len();
        Ok(Step { active, poly: sums == Sums::Polynomials, own, share, masks })
    }

    /// Round 1 of a step's challenge: P1 and P2 exchange their shares (P0 receives the
    /// contributions). A white-box rushing prover changes its first shares after committing.
    fn send_step(&mut self, ctx: &mut Ctx, step: &Step) -> Result<challenge::Pending> {
        let what = "verify/zeta";
        let payload = gr_bytes(&step.share);
        if std::mem::take(&mut self.rushing) && !payload.is_empty() {
            let mut changed = payload.clone();
            changed[0] ^= 1;
            challenge::send_committed(ctx, what, &changed, &payload)
        } else {
            challenge::send(ctx, what, &payload)
        }
    }
}

/// Claims `x_j·y_j = z_j`, each checked on its own in the final check with a coefficient drawn
/// there ([`Aegis::final_check`]): the sign checks' equality claims, which are made while the
/// products are reduced.
#[derive(Clone, Debug, Default)]
pub(crate) struct Elementwise {
    pub(crate) x: GrVec,
    pub(crate) y: GrVec,
    pub(crate) z: GrVec,
}

impl Elementwise {
    /// Appends the claims `x_j·y_j = z_j`, lifted to GR.
    pub(crate) fn push(&mut self, x: &Masked, y: &Masked, z: &Masked) {
        for (to, from) in [(&mut self.x, x), (&mut self.y, y), (&mut self.z, z)] {
            to.extend(lift(from));
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.x.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A masked `Z_2^64` vector lifted to GR (constant coefficients).
fn lift(v: &Masked) -> GrVec {
    let up = |w: &[u64]| w.iter().map(|&a| Gr::embed(a)).collect();
    GrVec { m: up(&v.m), one: up(&v.r.one), two: up(&v.r.two) }
}

/// What a cheating P0 may change at the final check ([`CancelAttempt`]).
#[doc(hidden)]
#[derive(Debug)]
pub enum FinalDeal<'a> {
    /// `Γ_i` per entry, then `T`'s dealt part.
    Products(&'a mut [Gr]),
    /// `Δ`'s dealt part.
    Delta(&'a mut Gr),
}

/// A malicious P0 trying to cancel an error of its own at the final check (negative tests
/// only, [`Aegis::attempt_cancel`]): it adds `shift` to the `h(0)` it deals at every
/// reduction, tracks the error `E` this leaves in the final claim (`E' = ζ·E + e·(1 − 2ζ)`
/// per reduction, with the final coefficients), and changes each of its two final deals by
/// `cancel(E, r_α, deal)`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct CancelAttempt {
    pub shift: u64,
    pub cancel: fn(&Gr, &Gr, FinalDeal<'_>),
}

/// Finishes the challenge `p`: its seed, and at P1 and P2 the masked values whose shares the
/// provers exchanged in its first round (`share` plus the other prover's; empty at P0).
pub(crate) fn finish_with_shares(
    ctx: &mut Ctx,
    what: &str,
    p: challenge::Pending,
    share: &[Gr],
) -> Result<(Seed, Vec<Gr>)> {
    match p.seed() {
        Some(seed) => {
            challenge::finish(ctx, what, p)?;
            Ok((seed, vec![]))
        }
        None => {
            let d = challenge::finish(ctx, what, p)?
                .ok_or_else(|| MpcError::Invalid("P0 drew a prover's challenge".into()))?;
            let other = gr_from(3 - ctx.party(), &d.from_peer, share.len())?;
            Ok((d.seed, share.iter().zip(&other).map(|(a, b)| a.add(b)).collect()))
        }
    }
}

/// How many halvings each of `claims` claims has still to come after the final check's first
/// half: one in `pair_first` (the last step, or a pair's first), one more in `pair_second`.
fn fold_counts(claims: usize, pair_first: &[usize], pair_second: &[usize]) -> Vec<usize> {
    let mut folds = vec![0; claims];
    for &k in pair_first.iter().chain(pair_second) {
        folds[k] += 1;
    }
    folds
}

/// The oldest challenge a prover sent and has not finished.
fn take(pending: &mut Vec<challenge::Pending>) -> Result<challenge::Pending> {
    if pending.is_empty() {
        return Err(MpcError::Invalid("no pending challenge".into()));
    }
    Ok(pending.remove(0))
}

/// Which sums a step computes ([`Aegis::open_step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sums {
    /// Its two sums per claim; with `pair`, the step after goes with it.
    Values { pair: bool },
    /// The coefficients of its sums in the previous step's pending `ζ`.
    Polynomials,
}

/// A halving step whose challenge is pending: the claims it reduces, whether its sums are
/// polynomials in the previous step's `ζ`, this party's shares of them (P1, P2) and their
/// output masks.
struct Step {
    active: Vec<usize>,
    poly: bool,
    /// This party's shares of the step's sums: the first `own` of `share`; the rest, where the
    /// step is the last, is the final check's first half.
    own: usize,
    share: Vec<Gr>,
    masks: GrVec,
}

impl Step {
    /// The step's two sums per claim as masked values, from their opened `m` (empty at P0):
    /// a polynomial step's coefficients evaluated at the previous step's `ζ`.
    fn values(&self, m: Vec<Gr>, previous: Option<&Gr>) -> GrVec {
        debug_assert!(m.is_empty() || m.len() == self.own);
        let h = GrVec { m, one: self.masks.one.clone(), two: self.masks.two.clone() };
        match (self.poly, previous) {
            (true, Some(z)) => {
                let z2 = z.mul(z);
                let eval = |v: &[Gr]| -> Vec<Gr> {
                    v.chunks_exact(3).map(|c| c[0].add(&z.mul(&c[1])).add(&z2.mul(&c[2]))).collect()
                };
                GrVec { m: eval(&h.m), one: eval(&h.one), two: eval(&h.two) }
            }
            _ => h,
        }
    }
}
