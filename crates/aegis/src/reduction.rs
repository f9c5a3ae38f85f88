//! The claims of a verification being halved ([`crate::verify`]): lazily from the recorded
//! shares ([`crate::columns`]) or held in GR, in lockstep, each step's local parts as values
//! or as polynomials in the pending challenge ("Pipelined halvings" in [`crate::verify`]),
//! down to the final check's claim. Local computation only; the masked products, the
//! challenges and the messages are [`crate::verify`]'s.

use rayon::prelude::*;
use veil_crypto::Prg;
use veil_ring::Gr;

use crate::claims::{
    Claim, Entry, GrVec, Recorded, Terms, add_entries, entry_group_sums, factor_halves, left_factors,
    monomials, pair_sums, right_factors,
};
use crate::columns::Columns;
use crate::freivalds::compress_matmul;
use crate::verify::{FINAL_DIMENSION, FINAL_LIMIT};

/// Entries of a held claim per block of its local parts (computed in parallel).
const HELD_BLOCK: usize = 256;

/// The longest held claim whose next step [`Pairing::WhereCheap`] pairs with its current one:
/// the polynomials cost about `1.5·n` local parts (under 10 ms a party on two cores).
pub(crate) const CHEAP_HELD: usize = 8 * FINAL_DIMENSION;

/// Which halvings of a verification go in pairs ([`crate::Aegis::with_pairing`];
/// [`crate::verify`], "Pipelined halvings"). A pair costs two rounds where two halvings one
/// after the other cost four, and its second step's products three times a step's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// Every halving alone and the final check after them: `2R + 6` rounds, the least
    /// computation.
    Never,
    /// The pairs whose second step costs about what it would alone (the default): lazy steps
    /// of short entries, lazy steps of long ones that go in one pass, short held claims, and
    /// the final check's first half with the last halving where few entries precede it (LeNet
    /// at batch 30: 20 rounds; at batch 1: 12).
    WhereCheap,
    /// Every pair the memory allows, and the final check's first half with the last halving:
    /// `R + 4` rounds for an even `R`, for links where a round costs more than the computation
    /// (LeNet at batch 30: 14 rounds instead of 22, about 1.0 s more on two Zen 1 cores; its
    /// pairs of lazy steps with long entries go in one pass, `crate::columns`'s `pair`).
    Always,
}
use veil_mpc::Result;

/// A claim being reduced: lazily from the recorded shares ([`crate::columns`]), or held in GR.
pub(crate) enum Part {
    Lazy(Box<Columns>, GrVec),
    Held(Claim),
}

impl Part {
    fn len(&self) -> usize {
        match self {
            Part::Lazy(columns, _) => columns.len(),
            Part::Held((xs, _, _)) => xs.len(),
        }
    }
}

/// The claims of one verification, reduced in lockstep: one challenge `ζ` per step for every
/// claim still above its target, each claim at most as many times as its budget says (what
/// is left of `R`, [`crate::Aegis::with_reductions`]) unless it is still longer than
/// [`FINAL_LIMIT`].
pub(crate) struct Reduction {
    me: usize,
    pub(crate) parts: Vec<(Part, usize)>,
    /// Each claim stops at `FINAL_DIMENSION / parts`, so the combined claim is at most
    /// [`FINAL_DIMENSION`] long.
    target: usize,
    materialize_at: usize,
    /// Each claim's polynomials of a pair's second step, where its first step computed them
    /// in the same pass ([`Reduction::local`] with `pair`), until [`Reduction::local_poly`]
    /// takes them or the fold drops them.
    paired: Vec<Option<[Gr; 6]>>,
}

impl Reduction {
    /// The claims of `recorded` under coefficients from `coeffs`: matrix products in
    /// Freivalds's form (`compress_matmul`), the other products term by term, laid out in
    /// columns and reduced lazily.
    pub(crate) fn new(
        me: usize,
        recorded: Vec<Recorded>,
        coeffs: &mut Prg,
        budget: usize,
        materialize_at: usize,
    ) -> Result<Reduction> {
        let mut direct = (GrVec::default(), GrVec::default(), zero_one());
        let mut per_term = Vec::new();
        for rec in recorded {
            if let Terms::Matmul { .. } | Terms::Conv { .. } = rec.terms {
                let (cx, cy, cz) = compress_matmul(&rec, coeffs)?;
                let (xs, ys, z) = &mut direct;
                xs.extend(cx);
                ys.extend(cy);
                *z = z.add(&cz);
            } else {
                per_term.push(rec);
            }
        }
        let mut parts = Vec::new();
        if !per_term.is_empty() {
            let columns = Columns::new(me, per_term, coeffs)?;
            let z = columns.z();
            parts.push((Part::Lazy(Box::new(columns), z), budget));
        }
        if direct.0.len() != 0 {
            parts.push((Part::Held(direct), budget));
        }
        let target = FINAL_DIMENSION / parts.len().max(1);
        let paired = vec![None; parts.len()];
        Ok(Reduction { me, parts, target, materialize_at, paired })
    }

    /// The claims the next step reduces (none: the reductions are over), made ready for it:
    /// a lazy claim is materialized once lazy steps stop paying, and a held claim of odd
    /// length gets one zero entry.
    pub(crate) fn next_step(&mut self) -> Vec<usize> {
        let active: Vec<usize> = (0..self.parts.len())
            .filter(|&k| {
                let len = self.parts[k].0.len();
                len > self.target && (self.parts[k].1 > 0 || len > FINAL_LIMIT)
            })
            .collect();
        for &k in &active {
            let part = &mut self.parts[k].0;
            if let Part::Lazy(columns, z) = part
                && !columns.fold_lazily(self.materialize_at)
            {
                let (xs, ys) = columns.materialize();
                *part = Part::Held((xs, ys, z.clone()));
            }
            if let Part::Held((xs, ys, _)) = part
                && xs.len() % 2 == 1
            {
                let zero = GrVec { m: pad(&xs.m), one: pad(&xs.one), two: pad(&xs.two) };
                xs.extend(zero.clone());
                ys.extend(zero);
            }
        }
        active
    }

    /// Whether claim `k` would be reduced again after `folds` more halvings (as
    /// [`Reduction::next_step`] would decide then): a held claim's halvings pad each odd result
    /// with a zero entry.
    pub(crate) fn continues_after(&self, k: usize, folds: usize) -> bool {
        let (part, budget) = &self.parts[k];
        let len = match part {
            Part::Held(_) => crate::final_check::folded_len(part.len(), folds),
            Part::Lazy(..) => part.len() >> folds,
        };
        len > self.target && (budget.saturating_sub(folds) > 0 || len > FINAL_LIMIT)
    }

    /// Entries of every claim, in all.
    pub(crate) fn entries(&self) -> usize {
        self.parts.iter().map(|(p, _)| p.len()).sum()
    }

    /// Materializes every claim still reduced lazily, if they hold at most `limit` entries
    /// in all; whether every claim is then held in GR. The folds to come give the same entries
    /// either way.
    pub(crate) fn hold_all(&mut self, limit: usize) -> bool {
        let lazy: usize =
            self.parts.iter().filter(|(p, _)| matches!(p, Part::Lazy(..))).map(|(p, _)| p.len()).sum();
        if lazy > limit {
            return false;
        }
        for (part, _) in &mut self.parts {
            if let Part::Lazy(columns, z) = part {
                let (xs, ys) = columns.materialize();
                *part = Part::Held((xs, ys, z.clone()));
            }
        }
        true
    }

    /// The claims' `X` as the final check's first half deals them, each before `folds[k]`
    /// more halvings ([`Reduction::hold_all`] must have held them: a lazy claim has no entries
    /// yet).
    pub(crate) fn pieces(&self, folds: &[usize]) -> Vec<crate::final_check::Piece<'_>> {
        self.parts
            .iter()
            .zip(folds)
            .filter_map(|((part, _), &folds)| match part {
                Part::Held((xs, _, _)) => Some(crate::final_check::Piece { xs, folds }),
                Part::Lazy(..) => None,
            })
            .collect()
    }

    /// This party's local parts of the step's two inner products per claim, `Σ X_{2i}·Y_{2i}`
    /// and `Σ (X_{2i+1}−X_{2i})·(Y_{2i+1}−Y_{2i})` ([`crate::claims::cross_sum`]). With `pair`
    /// (the step after goes with it, [`Reduction::pairs_next`]), a held claim that the step
    /// after reduces too, and a lazy one whose two steps take one pass
    /// ([`Columns::pairs_in_one_pass`]), compute the second step's polynomials in the same
    /// pass, for [`Reduction::local_poly`] (eight products per four entries, where the second
    /// step's polynomials alone took six and the first step's sums four).
    ///
    /// [`Columns::pairs_in_one_pass`]: crate::columns::Columns::pairs_in_one_pass
    pub(crate) fn local(&mut self, active: &[usize], pair: bool) -> Vec<Gr> {
        let me = self.me;
        let next = if pair { self.continuing(active) } else { vec![] };
        let mut out = Vec::with_capacity(2 * active.len());
        for &k in active {
            match &mut self.parts[k].0 {
                Part::Lazy(columns, _)
                    if next.contains(&k) && columns.pairs_in_one_pass(self.materialize_at) =>
                {
                    let (first, second) = columns.local_pair();
                    out.extend(first);
                    self.paired[k] = Some(second);
                }
                Part::Lazy(columns, _) => out.extend(columns.local_halves()),
                Part::Held((a, b, _)) if next.contains(&k) => {
                    let (first, second) = held_pair(me, a, b);
                    out.extend(first);
                    self.paired[k] = Some(second);
                }
                Part::Held((a, b, _)) => out.extend(held_halves(me, a, b)),
            }
        }
        out
    }

    /// The claims of `pending` that the step after it reduces too.
    fn continuing(&self, pending: &[usize]) -> Vec<usize> {
        pending
            .iter()
            .copied()
            .filter(|&k| {
                let (part, budget) = &self.parts[k];
                let len = part.len() / 2;
                len > self.target && (budget.saturating_sub(1) > 0 || len > FINAL_LIMIT)
            })
            .collect()
    }

    /// Whether the step after the pending one goes with it under `pairing`
    /// ([`Reduction::poly_step`] would return a step), decided before the pending step's sums
    /// so that they can be computed together.
    pub(crate) fn pairs_next(&self, pending: &[usize], pairing: Pairing) -> bool {
        self.paired_next(pending, pairing).is_some_and(|next| !next.is_empty())
    }

    /// The claims the step after the pending one reduces, or `None` where `pairing` lets it
    /// wait for the pending `ζ` ([`Reduction::poly_step`]).
    fn paired_next(&self, pending: &[usize], pairing: Pairing) -> Option<Vec<usize>> {
        let next = self.continuing(pending);
        let refused = |part: &Part| match (pairing, part) {
            (Pairing::Never, _) => true,
            (Pairing::Always, Part::Lazy(c, _)) => {
                !c.folds_lazily_next(self.materialize_at) && part.len() > 2 * self.materialize_at
            }
            (Pairing::WhereCheap, Part::Lazy(c, _)) => !c.pairs_cheaply(self.materialize_at),
            (Pairing::WhereCheap, Part::Held(_)) => part.len() > CHEAP_HELD,
            (Pairing::Always, Part::Held(_)) => false,
        };
        if next.iter().any(|&k| refused(&self.parts[k].0)) { None } else { Some(next) }
    }

    /// The claims the step after the pending one (over `pending`) reduces, if their sums are
    /// to be computed before the pending `ζ` is known ([`Reduction::local_poly`]) under
    /// `pairing`; `None` where that step waits for `ζ` (two rounds of its own). With
    /// [`Pairing::Always`] it waits only for a lazy claim that step would materialize and that
    /// is too long to materialize now, at twice that step's length; a shorter one is
    /// materialized now. With [`Pairing::WhereCheap`] it pairs only where the polynomials cost
    /// about what the step's values would: every lazy claim with short entries at that step
    /// (`Columns::pairs_cheaply`: the bilinear ways' accumulators are formed once for the three
    /// weightings) or with long ones (both steps in one pass), every held claim at most
    /// [`CHEAP_HELD`] entries long.
    pub(crate) fn poly_step(&mut self, pending: &[usize], pairing: Pairing) -> Option<Vec<usize>> {
        let next = self.paired_next(pending, pairing)?;
        for &k in &next {
            let part = &mut self.parts[k].0;
            if let Part::Lazy(columns, z) = part
                && !columns.folds_lazily_next(self.materialize_at)
            {
                let (xs, ys) = columns.materialize();
                *part = Part::Held((xs, ys, z.clone()));
            }
        }
        Some(next)
    }

    /// This party's local parts of the sums of the step after the pending one, as polynomials
    /// in the pending `ζ` (six per claim: `c_0, c_1, c_2` of each sum, [`monomials`]). The
    /// pending step makes `X'_i = u·X_{2i} + v·X_{2i+1}` with `(u, v) = (1 − ζ, ζ)`, the same
    /// for `Y`, and the next step's sums are quadratic forms in `(u, v)`: evaluated at
    /// `(1, 0)`, `(0, 1)` and `(1, 1)`, on the even entries, the odd ones and their sums (a
    /// held claim, with the zero entry the halved claim is padded with), or from the lazy
    /// weights ([`Columns::local_poly`]).
    pub(crate) fn local_poly(&mut self, active: &[usize]) -> Vec<Gr> {
        let me = self.me;
        let mut out = Vec::with_capacity(6 * active.len());
        for &k in active {
            if let Some(done) = self.paired[k].take() {
                out.extend(done);
                continue;
            }
            match &mut self.parts[k].0 {
                Part::Lazy(columns, _) => out.extend(columns.local_poly()),
                Part::Held((a, b, _)) => out.extend(held_poly(me, a, b)),
            }
        }
        out
    }

    /// The step at `ζ`, given its inner products `h` (two per active claim).
    pub(crate) fn fold(&mut self, active: &[usize], h: &GrVec, zeta: &Gr) {
        self.paired.iter_mut().for_each(|p| *p = None);
        for (j, &k) in active.iter().enumerate() {
            let (h0, c2) = (h.pick(|_| 2 * j, 1), h.pick(|_| 2 * j + 1, 1));
            let (part, budget) = &mut self.parts[k];
            *budget = budget.saturating_sub(1);
            match part {
                Part::Lazy(columns, z) => {
                    *z = reduced_z(z, &h0, &c2, zeta);
                    columns.fold(zeta);
                }
                Part::Held((xs, ys, z)) => {
                    *z = reduced_z(z, &h0, &c2, zeta);
                    xs.fold(zeta);
                    ys.fold(zeta);
                    // Even again, as the next step's polynomials assumed ([`Reduction::local_poly`]).
                    if xs.len() % 2 == 1 {
                        let zero = GrVec { m: pad(&xs.m), one: pad(&xs.one), two: pad(&xs.two) };
                        xs.extend(zero.clone());
                        ys.extend(zero);
                    }
                }
            }
        }
    }

    /// What the final check tests, with the coefficient of each claim: with several claims,
    /// their sum under coefficients drawn from the last challenge (after every reduction). A
    /// plain sum of claims reduced at different points could cancel a 2-torsion error (a server
    /// may shift a reduction's `h(0)` by the other claim's error `E` when `2E = 0`); random
    /// coefficients from a seed drawn after both errors were fixed cannot. Every claim is
    /// materialized: the final check multiplies each entry by `α` (and then by its claim's
    /// coefficient, [`Final::coeffs`]).
    pub(crate) fn into_final(self, coeffs: &mut Prg) -> Final {
        let single = self.parts.len() == 1;
        let mut fin = Final { held: vec![], coeffs: vec![], z: zero_one() };
        for (part, _) in self.parts {
            let r = if single { Gr::embed(1) } else { Gr::random(coeffs) };
            let (xs, ys, z) = match part {
                Part::Lazy(mut columns, z) => {
                    let (xs, ys) = columns.materialize();
                    (xs, ys, z)
                }
                Part::Held(claim) => claim,
            };
            fin.z = fin.z.add(&z.times(&r));
            fin.held.push((xs, ys));
            fin.coeffs.push(r);
        }
        fin
    }
}

/// The claim of the final check, `Σ_k c_k·Σ_i X_{k,i}·Y_{k,i} = Z`, in the pieces it was
/// reduced in: no vector of them is copied into one.
pub(crate) struct Final {
    /// The claims' vectors.
    pub(crate) held: Vec<(GrVec, GrVec)>,
    /// Each claim's coefficient `c_k` (1 for a single claim).
    pub(crate) coeffs: Vec<Gr>,
    pub(crate) z: GrVec,
}

impl Final {
    /// Entries of the claims, which the final check multiplies by `α`.
    pub(crate) fn held_len(&self) -> usize {
        self.held.iter().map(|(xs, _)| xs.len()).sum()
    }
}

/// The claim after a reduction at `ζ`: `Z' = h(0) + ζ·c_1 + ζ²·c_2` with the division-free
/// `c_1 = Z − 2h(0) − c_2`.
fn reduced_z(z: &GrVec, h0: &GrVec, c2: &GrVec, zeta: &Gr) -> GrVec {
    let c1 = z.sub(h0).sub(h0).sub(c2);
    h0.add(&c1.times(zeta)).add(&c2.times(&zeta.mul(zeta)))
}

/// A one-element zero vector (its components all present; unused ones are dropped by `add`
/// with a vector that lacks them).
fn zero_one() -> GrVec {
    GrVec { m: vec![Gr::ZERO], one: vec![Gr::ZERO], two: vec![Gr::ZERO] }
}

fn pad(v: &[Gr]) -> Vec<Gr> {
    if v.is_empty() { vec![] } else { vec![Gr::ZERO] }
}

/// A held claim's local parts of the step after the pending one as polynomials in the pending
/// `ζ` ([`Reduction::local_poly`]): its sums at the three weightings, on the even entries, the
/// odd ones and their sums, the halved claim padded with a zero entry where it is odd.
fn held_poly(me: usize, a: &GrVec, b: &GrVec) -> [Gr; 6] {
    let half = a.len() / 2;
    let n = half + half % 2;
    let pick = |shift: usize| move |i: usize| (a.at(2 * i + shift), b.at(2 * i + shift));
    let both = |i: usize| {
        let ((x0, y0), (x1, y1)) = (pick(0)(i), pick(1)(i));
        (add_entries(&x0, &x1), add_entries(&y0, &y1))
    };
    let (uu, vv) = (halves_by(me, n, pick(0)), halves_by(me, n, pick(1)));
    monomials(uu, vv, halves_by(me, n, both))
}

/// A held claim's local parts of a pair of steps from one pass over its entries
/// ([`crate::claims::group_sums`], blocks of [`HELD_BLOCK`] entries in parallel): the first
/// step's two sums and the second step's six coefficients in its pending `ζ`. The entries are
/// padded with zeros to a multiple of four, which adds nothing to the first step's sums and
/// gives the zero entry that [`Reduction::local_poly`] pads an odd halved claim with.
fn held_pair(me: usize, a: &GrVec, b: &GrVec) -> ([Gr; 2], [Gr; 6]) {
    let n = a.len().div_ceil(4) * 4;
    let entry = |v: &GrVec, i: usize| if i < v.len() { v.at(i) } else { [Gr::ZERO; 3] };
    let add2 = |x: [Gr; 2], y: [Gr; 2]| [x[0].add(&y[0]), x[1].add(&y[1])];
    let zero = || ([Gr::ZERO; 2], [[Gr::ZERO; 2]; 3]);
    let (first, both) = (0..n.div_ceil(HELD_BLOCK))
        .into_par_iter()
        .map(|k| {
            let block = k * HELD_BLOCK..((k + 1) * HELD_BLOCK).min(n);
            let xs: Vec<Entry> = block.clone().map(|i| entry(a, i)).collect();
            let ys: Vec<Entry> = block.map(|i| entry(b, i)).collect();
            entry_group_sums(me, &xs, &ys)
        })
        .reduce(zero, |(f, s), (g, t)| (add2(f, g), std::array::from_fn(|j| add2(s[j], t[j]))));
    (first, monomials(both[0], both[1], both[2]))
}

/// A held claim's local parts of one step (`Σ_i B(X_{2i}, Y_{2i})` and
/// `Σ_i B(X_{2i+1} − X_{2i}, Y_{2i+1} − Y_{2i})`, [`pair_sums`] over every pair of entries),
/// from the components this party holds straight into the factors of its cross terms
/// ([`factor_halves`]), in parallel over blocks of [`HELD_BLOCK`] pairs (GR sums add up in any
/// order): the sums of [`halves_by`] without forming each entry's three components and copying
/// them twice.
fn held_halves(me: usize, a: &GrVec, b: &GrVec) -> [Gr; 2] {
    let pairs = a.len().min(b.len()) / 2;
    fn get(v: &GrVec, i: usize) -> impl Fn(usize) -> Gr + '_ {
        move |c: usize| [&v.m, &v.one, &v.two][c].get(i).copied().unwrap_or(Gr::ZERO)
    }
    (0..pairs.div_ceil(HELD_BLOCK))
        .into_par_iter()
        .map(|k| {
            let block = k * HELD_BLOCK..((k + 1) * HELD_BLOCK).min(pairs);
            let first = 2 * block.start;
            factor_halves(
                me,
                block.len(),
                |i, out| left_factors(me, get(a, first + i), out),
                |i, out| right_factors(me, get(b, first + i), out),
            )
        })
        .reduce(|| [Gr::ZERO; 2], |x, y| [x[0].add(&y[0]), x[1].add(&y[1])])
}

/// [`pair_sums`] over `n` entries given by `at`, in parallel over blocks of entries (GR sums
/// add up in any order).
fn halves_by(me: usize, n: usize, at: impl Fn(usize) -> (Entry, Entry) + Sync) -> [Gr; 2] {
    let pairs = n / 2;
    (0..pairs.div_ceil(HELD_BLOCK))
        .into_par_iter()
        .map(|k| {
            let block = k * HELD_BLOCK..((k + 1) * HELD_BLOCK).min(pairs);
            pair_sums(me, 2 * block.len(), |i| at(2 * block.start + i))
        })
        .reduce(|| [Gr::ZERO; 2], |a, b| [a[0].add(&b[0]), a[1].add(&b[1])])
}

#[cfg(test)]
mod tests {
    use super::*;
    use veil_crypto::Seed;

    /// A party's view of a random held vector of `n` entries (the components it holds).
    fn held_vec(g: &mut Prg, me: usize, n: usize) -> GrVec {
        let mut part = |held: bool| if held { (0..n).map(|_| Gr::random(g)).collect() } else { vec![] };
        GrVec { m: part(me != 0), one: part(me != 2), two: part(me != 1) }
    }

    /// A held claim's pair of steps from one pass gives the first step's sums and the second
    /// step's polynomials exactly as apart, at every party and for every length mod 4 (the
    /// halved claim padded with a zero entry where it is odd), across several blocks.
    #[test]
    fn a_held_pair_in_one_pass_matches_the_steps_apart() {
        for me in 0..3 {
            let mut g = Prg::new(&Seed([60 + me as u8; 16]));
            for n in [2usize, 4, 6, 8, 10, 2 * HELD_BLOCK + 6, 3 * HELD_BLOCK] {
                let (a, b) = (held_vec(&mut g, me, n), held_vec(&mut g, me, n));
                let (first, second) = held_pair(me, &a, &b);
                assert_eq!(first, halves_by(me, n, |i| (a.at(i), b.at(i))), "party {me}, {n} entries");
                assert_eq!(held_halves(me, &a, &b), first, "party {me}, {n} entries");
                assert_eq!(second, held_poly(me, &a, &b), "party {me}, {n} entries");
            }
        }
    }
}
