//! The batch verification's final check (Π_InnerVerify, rebuilt: [`crate::verify`], item 4)
//! in two halves, so that its first half can travel with the last halving.
//!
//! **First half** ([`Aegis::final_first`]): with secret random `⟨α⟩` and dummies `⟨D_i⟩`, P0
//! deals the masked products `⟨W_i⟩ = ⟨α·X_i⟩`, the late claims' `⟨x_j·D_j⟩` and the masked
//! inner products `⟨T⟩ = ⟨Σ X_i·D_i⟩`; P1 and P2 exchange their shares of them in the first
//! round of a challenge, which draws `γ` and the late claims' `ρ_j` once all of it is fixed.
//!
//! **Second half** ([`Aegis::final_check`]): with `Y'_i = Y_i + γ·D_i`, P0 deals the dealt
//! part of `⟨Δ⟩ = Σ_i W_i·Y'_i + Σ_j ρ_j·W_j·y'_j − α·Z'`, P1 and P2 exchange their shares, and
//! `Δ` is opened with the hash-checked reconstruction: accept iff `Δ = 0`.
//!
//! **The first half before the last halving** (`crate::verify`, "The final check's first
//! half with the last halving"). The last halving (or pair of halvings) folds each claim's
//! entries with its pending challenges: `X'_i = u·X_{2i} + v·X_{2i+1}`, `(u, v) = (1 − ζ, ζ)`.
//! Every value of the first half is linear in the folded entries: `α·X'_i` is the same fold of
//! `α·X_{2i}` and `α·X_{2i+1}`, and `Σ_i X'_i·D_i = u·Σ_i X_{2i}·D_i + v·Σ_i X_{2i+1}·D_i`
//! (four pieces and the products of the two folds' weights after a pair). So the first half
//! is dealt on the entries before the fold (twice as many, four times after a pair), its
//! shares travel in the last halving's challenge, and that challenge's seed draws `ζ`, the
//! claims' coefficients, `γ` and the `ρ_j`, in that order: every value the check tests is
//! fixed before any of them, as when the first half had a challenge of its own, so the
//! soundness argument of [`Aegis::final_check`] is unchanged. It saves that challenge's two
//! rounds; its cost is the longer deal.
//!
//! Security model: three servers, at most one corrupted, malicious, rushing (the challenges,
//! [`crate::challenge`]).

use rayon::prelude::*;
use veil_crypto::Prg;
use veil_mpc::{Ctx, MpcError, Result};
use veil_net::Lanes;
use veil_ring::Gr;

use crate::challenge;
use crate::claims::{Entry, GrVec, cross_sum, cross_term, gr_bytes};
use crate::reduction::Final;
use crate::share::Aegis;
use crate::verify::{CancelAttempt, Elementwise, FinalDeal, finish_with_shares};

/// Entries per block of an inner product computed in parallel.
const BLOCK: usize = 256;

/// One claim's entries as the first half deals them: before `folds` halvings still to come
/// (0, 1 or 2; an even length wherever `folds > 0`, as the halvings leave it).
pub(crate) struct Piece<'a> {
    pub(crate) xs: &'a GrVec,
    pub(crate) folds: usize,
}

/// Where one claim sits in the first half's deal.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Its first entry among the dealt `α·X` (before the folds).
    start: usize,
    /// Its entries before the folds, and after them (zero entries padding each fold's
    /// result to an even length, as the halvings do).
    len: usize,
    final_len: usize,
    folds: usize,
    /// Its first dummy, and its first `T` piece (one per weight of the folds, `2^folds`).
    dummies: usize,
    tees: usize,
}

/// The length a claim of `len` entries has after `folds` halvings that each pad an odd
/// result with a zero entry ([`crate::reduction::Reduction::fold`]).
pub(crate) fn folded_len(len: usize, folds: usize) -> usize {
    (0..folds).fold(len, |l, _| l / 2 + (l / 2) % 2)
}

/// The first half at one party, waiting for the challenge that opens its shares.
pub(crate) struct FirstHalf {
    alpha: GrVec,
    dummies: GrVec,
    shapes: Vec<Shape>,
    /// Dealt `α·X` entries, final entries, late claims and `T` pieces, in all.
    pieces: usize,
    finals: usize,
    extra: usize,
    /// Masks of the `α·X` pieces and late `W_j`, then of the late `T_j` and the `T` pieces.
    r_w: GrVec,
    r_t: GrVec,
    /// P1's and P2's shares of the masked values (empty at P0), in the deal's order.
    pub(crate) share: Vec<Gr>,
}

/// A first half whose challenge is over: its opened masked values, each claim's challenges
/// (those of the folds after its deal, in order), and the seed's stream, which draws `γ` and
/// the `ρ_j` next.
pub(crate) struct Opened {
    pub(crate) first: FirstHalf,
    pub(crate) m: Vec<Gr>,
    pub(crate) zetas: Vec<Vec<Gr>>,
    pub(crate) prg: Prg,
}

/// The reduced claim, ready for the final check: what [`Aegis::reduce_products`] leaves.
pub(crate) struct Reduced {
    pub(crate) fin: Final,
    /// The first half, where it travelled with the last halving.
    pub(crate) opened: Option<Opened>,
    /// A cheating P0's attempt and the error it tracked (negative tests only).
    pub(crate) cheat: Option<(CancelAttempt, Gr)>,
}

impl Aegis {
    /// The first half over the claims `pieces` and the late claims `late`: P0 deals (to P2,
    /// P1's share from their PRG), P1 and P2 complete their shares, which the caller sends in
    /// the first round of a challenge. With `lanes`, the reductions' lane joins the sign
    /// checks' first (the late claims are theirs).
    pub(crate) fn final_first(
        &self,
        ctx: &mut Ctx,
        pieces: &[Piece<'_>],
        late: &Elementwise,
        lanes: Option<&Lanes>,
        cheat: Option<(CancelAttempt, Gr)>,
    ) -> Result<FirstHalf> {
        let me = Self::check_server(ctx)?;
        if let Some(lanes) = lanes {
            ctx.net().join_lanes(lanes);
        }
        let (mut shapes, mut at) = (Vec::with_capacity(pieces.len()), [0usize; 3]);
        for p in pieces {
            let len = p.xs.len();
            if p.folds > 2 || (p.folds > 0 && len % 2 == 1) {
                return Err(MpcError::Invalid(format!("a claim of {len} entries before {} folds", p.folds)));
            }
            let final_len = folded_len(len, p.folds);
            shapes.push(Shape { start: at[0], len, final_len, folds: p.folds, dummies: at[1], tees: at[2] });
            at = [at[0] + len, at[1] + final_len, at[2] + (1 << p.folds)];
        }
        let [pieces_n, finals, tees] = at;
        let extra = late.len();
        let alpha = self.gr_random(ctx, "verify/alpha", 1)?;
        let dummies = self.gr_random(ctx, "verify/dummies", finals + extra)?;
        let r_w = self.gr_masks(ctx, "verify/alpha-x", pieces_n + extra)?;
        let r_t = self.gr_masks(ctx, "verify/dummies-x", extra + tees)?;
        let a = alpha.at(0);
        if me == 1
            && let Some(leak) = self.leak_alpha
        {
            leak(&alpha.m[0]);
        }
        // This party's local parts, in the order of the deal: each `α·X_i` before the folds,
        // each late `α·x_j`, each late `x_j·D_j`, then each claim's `T` pieces
        // `Σ_i X_{2^f·i + s}·D_i`.
        let mut local: Vec<Gr> = Vec::with_capacity(pieces_n + 2 * extra + tees);
        for p in pieces {
            local.par_extend((0..p.xs.len()).into_par_iter().map(|i| cross_term(me, &a, &p.xs.at(i))));
        }
        local.extend((0..extra).map(|j| cross_term(me, &a, &late.x.at(j))));
        local.extend((0..extra).map(|j| cross_term(me, &late.x.at(j), &dummies.at(finals + j))));
        for (p, shape) in pieces.iter().zip(&shapes) {
            let width = 1 << shape.folds;
            for s in 0..width {
                let n = (shape.len + width - 1 - s) / width;
                local.push(block_cross_sum(me, n, |i| {
                    (p.xs.at(width * i + s), dummies.at(shape.dummies + i))
                }));
            }
        }
        let masks = |i: usize| {
            let w = pieces_n + extra;
            if i < w { r_w.one[i].add(&r_w.two[i]) } else { r_t.one[i - w].add(&r_t.two[i - w]) }
        };
        let share = if me == 0 {
            let mut deal: Vec<Gr> = local.par_iter().enumerate().map(|(i, l)| l.add(&masks(i))).collect();
            if let Some((attempt, e)) = cheat {
                (attempt.cancel)(&e, &a[1].add(&a[2]), FinalDeal::Products(&mut deal));
            }
            let bytes = self.deal_out(ctx, "verify/final/products", &deal)?;
            ctx.net().send(2, bytes)?;
            vec![]
        } else {
            let dealt = self.deal_in(ctx, "verify/final/products", local.len())?;
            local.iter().zip(&dealt).map(|(l, g)| l.add(g)).collect()
        };
        Ok(FirstHalf { alpha, dummies, shapes, pieces: pieces_n, finals, extra, r_w, r_t, share })
    }

    /// The final check over the reduced claim and the late claims (each `x_j·y_j = z_j`):
    /// the first half with a challenge of its own unless it travelled with the last halving,
    /// then the second half (module docs).
    ///
    /// `Δ = α·(E + γ·e_T + Σ_j ρ_j·(E_j + γ·e_j)) + Σ_i δ_i·Y'_i + Σ_j ρ_j·δ_j·y'_j + e` for
    /// a claim error `E`, late claims' errors `E_j`, errors `e_T`, `e_j` in the dummies'
    /// products, `δ` in the `W` and `e` in the last step, all fixed in a view where `α` is
    /// uniform and before `γ` and the `ρ_j` are drawn: the late claims' errors survive their
    /// coefficients with probability `2^-64`, so they need no coefficients before the claims
    /// are made (the sign checks make them while the products are reduced). `Y'_i` is uniform
    /// whatever the data, so no error's effect depends on whether an entry is 0. Two rounds
    /// after the last halving's challenge (four with a challenge of its own); `N' + 2·J + 2`
    /// GR elements from P0 for `J` late claims and `N'` entries dealt (before the folds), as
    /// many each way between P1 and P2.
    pub(crate) fn final_check(&self, ctx: &mut Ctx, reduced: Reduced, late: &Elementwise) -> Result<()> {
        let me = Self::check_server(ctx)?;
        let Reduced { fin, opened, cheat } = reduced;
        let Opened { first, m, zetas, mut prg } = match opened {
            Some(o) => o,
            None => {
                let pieces: Vec<Piece<'_>> = fin.held.iter().map(|(xs, _)| Piece { xs, folds: 0 }).collect();
                let first = self.final_first(ctx, &pieces, late, None, cheat)?;
                let what = "verify/gamma";
                let pending = challenge::send(ctx, what, &gr_bytes(&first.share))?;
                let (seed, m) = finish_with_shares(ctx, what, pending, &first.share)?;
                Opened { first, m, zetas: vec![vec![]; fin.held.len()], prg: Prg::new(&seed) }
            }
        };
        let gamma = Gr::random(&mut prg);
        let extra = late.len();
        let rho: Vec<Gr> = (0..extra).map(|_| Gr::random(&mut prg)).collect();
        let main = fin.held_len();
        if main != first.finals || extra != first.extra {
            return Err(MpcError::Invalid("the final claim differs from its first half".into()));
        }
        let coeffs = &fin.coeffs;
        let (w, t) = first.open(me, m, &zetas, coeffs)?;
        let (a, dummies) = (first.alpha.at(0), &first.dummies);
        let r_d = self.gr_masks(ctx, "verify/delta", 1)?;
        // `Z' = Z + γ·T + Σ_j ρ_j·(z_j + γ·T_j)`.
        let mut z = fin.z.add(&t.pick(|_| extra, 1).times(&gamma));
        for (j, r) in rho.iter().enumerate() {
            let zj = late.z.pick(|_| j, 1).add(&t.pick(|_| j, 1).times(&gamma));
            z = z.add(&zj.times(r));
        }
        let z = z.at(0);
        // `Y'_i = Y_i + γ·D_i`, component by component.
        let mixed = |y: Entry, d: Entry| -> Entry { std::array::from_fn(|c| y[c].add(&gamma.mul(&d[c]))) };
        // `Σ W_i·Y'_i + Σ_j ρ_j·W_j·y'_j − α·Z'`, local parts. A claim's `W_i` is the fold of
        // its dealt `α·X` pieces, times its coefficient: `W_i = c·Σ_s w_s·W⁻_{2^f·i + s}`, and a
        // local part is linear in each factor, so its sum is `c·Σ_s w_s·Σ_i B(W⁻_{2^f·i + s},
        // Y'_i)` without folding the pieces.
        let mut local = Gr::ZERO;
        for (((shape, (_, ys)), zs), c) in first.shapes.iter().zip(&fin.held).zip(&zetas).zip(coeffs) {
            if ys.len() != shape.final_len {
                return Err(MpcError::Invalid(
                    "a claim folded to another length than its first half's".into(),
                ));
            }
            let mixed_ys: Vec<Entry> = (0..shape.final_len)
                .into_par_iter()
                .map(|i| mixed(ys.at(i), dummies.at(shape.dummies + i)))
                .collect();
            let width = 1 << shape.folds;
            for (s, weight) in fold_weights(zs).iter().enumerate() {
                let n = (shape.len + width - 1 - s) / width;
                let sum = block_cross_sum(me, n, |i| (w.at(shape.start + width * i + s), mixed_ys[i]));
                local.add_assign(&weight.mul(c).mul(&sum));
            }
        }
        for (j, r) in rho.iter().enumerate() {
            let y = mixed(late.y.at(j), dummies.at(main + j)).map(|v| r.mul(&v));
            local.add_assign(&cross_term(me, &w.at(first.pieces + j), &y));
        }
        let local = local.sub(&cross_term(me, &a, &z));
        let delta = if me == 0 {
            let mut g = local.add(&r_d.one[0]).add(&r_d.two[0]);
            if let Some((attempt, e)) = cheat {
                (attempt.cancel)(&e, &a[1].add(&a[2]), FinalDeal::Delta(&mut g));
            }
            let bytes = self.deal_out(ctx, "verify/final/delta", &[g])?;
            ctx.net().send(2, bytes)?;
            GrVec { m: vec![], one: r_d.one, two: r_d.two }
        } else {
            let dealt = self.deal_in(ctx, "verify/final/delta", 1)?;
            let s = local.add(&dealt[0]);
            ctx.net().send(3 - me, s.to_bytes())?;
            let other = crate::claims::recv_gr(ctx, 3 - me, 1)?;
            GrVec { m: vec![s.add(&other[0])], one: r_d.one, two: r_d.two }
        };
        let opened = self.gr_open(ctx, &delta)?;
        if opened[0] != Gr::ZERO {
            return Err(MpcError::abort("aegis: batch multiplication verification", None));
        }
        Ok(())
    }
}

impl FirstHalf {
    /// The masked values of the first half once opened (`m`, empty at P0): the dealt `α·X`
    /// pieces, then the late `W_j`; and the late `T_j`, then `T = Σ_k c_k·Σ_s w_{k,s}·T_{k,s}`
    /// (each claim's pieces under the products of its folds' weights, times its coefficient).
    fn open(&self, me: usize, m: Vec<Gr>, zetas: &[Vec<Gr>], coeffs: &[Gr]) -> Result<(GrVec, GrVec)> {
        let (pw, extra) = (self.pieces + self.extra, self.extra);
        if (!m.is_empty() && m.len() != pw + self.r_t.len())
            || zetas.len() != self.shapes.len()
            || coeffs.len() != self.shapes.len()
        {
            return Err(MpcError::Invalid("the first half's openings do not match it".into()));
        }
        let (m_w, m_t) = if m.is_empty() { (vec![], vec![]) } else { (m[..pw].to_vec(), m[pw..].to_vec()) };
        let w = GrVec { m: m_w, one: self.r_w.one.clone(), two: self.r_w.two.clone() };
        let dealt_t = GrVec { m: m_t, one: self.r_t.one.clone(), two: self.r_t.two.clone() };
        // No claim: `T = 0`, a sharing of 0 with every component 0.
        let zero = |held: bool| if held { vec![Gr::ZERO] } else { vec![] };
        let mut total = GrVec { m: zero(me != 0), one: zero(me != 2), two: zero(me != 1) };
        for ((shape, zs), c) in self.shapes.iter().zip(zetas).zip(coeffs) {
            if zs.len() != shape.folds {
                return Err(MpcError::Invalid("a claim folded other than its first half says".into()));
            }
            for (s, weight) in fold_weights(zs).iter().enumerate() {
                total = total.add(&dealt_t.pick(|_| extra + shape.tees + s, 1).times(&weight.mul(c)));
            }
        }
        let mut t = dealt_t.pick(|j| j, extra);
        t.extend(total);
        Ok((w, t))
    }
}

/// The weight of each of an entry's pieces after folds at `zetas`: piece `s` (bit `k` of `s`
/// picking `v_k = ζ_k` over `u_k = 1 − ζ_k`) is `Π_k (u_k or v_k)`.
fn fold_weights(zetas: &[Gr]) -> Vec<Gr> {
    let mut w = vec![Gr::embed(1)];
    for z in zetas {
        let u = Gr::embed(1).sub(z);
        let mut next = Vec::with_capacity(2 * w.len());
        // Folding pairs adjacent entries first: the newest challenge weighs the highest bit.
        next.extend(w.iter().map(|x| x.mul(&u)));
        next.extend(w.iter().map(|x| x.mul(z)));
        w = next;
    }
    w
}

/// `Σ_i cross_term(a_i, b_i)` over `n` pairs `at(i)`, in parallel over blocks.
fn block_cross_sum(me: usize, n: usize, at: impl Fn(usize) -> (Entry, Entry) + Sync) -> Gr {
    (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let pairs: Vec<(Entry, Entry)> = (b * BLOCK..((b + 1) * BLOCK).min(n)).map(&at).collect();
            cross_sum(me, pairs.iter().map(|(x, y)| (x, y)))
        })
        .reduce(|| Gr::ZERO, |x, y| x.add(&y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use veil_crypto::Seed;

    /// The fold weights are the halvings unrolled: folding a vector with `ζ_0` then `ζ_1`
    /// leaves entry `i = Σ_s w_s·V_{4i+s}`.
    #[test]
    fn the_fold_weights_are_the_folds_unrolled() {
        let mut g = Prg::new(&Seed([5; 16]));
        let v: Vec<Gr> = (0..8).map(|_| Gr::random(&mut g)).collect();
        let zs = [Gr::random(&mut g), Gr::random(&mut g)];
        let mut folded = GrVec { m: v.clone(), one: vec![], two: vec![] };
        for z in &zs {
            folded.fold(z);
        }
        let w = fold_weights(&zs);
        for i in 0..2 {
            let direct = (0..4).fold(Gr::ZERO, |s, k| s.add(&w[k].mul(&v[4 * i + k])));
            assert_eq!(folded.m[i], direct, "entry {i}");
        }
        assert_eq!(fold_weights(&[]), vec![Gr::embed(1)]);
    }

    #[test]
    fn folded_lengths_pad_each_odd_result() {
        assert_eq!(folded_len(8, 0), 8);
        assert_eq!(folded_len(6, 1), 4);
        assert_eq!(folded_len(8, 1), 4);
        assert_eq!(folded_len(6, 2), 2);
        assert_eq!(folded_len(10, 2), 4);
        assert_eq!(folded_len(12, 2), 4);
    }
}
