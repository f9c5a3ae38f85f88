//! The per-term products of a verification, reduced without lifting them all to the Galois
//! ring (paper §4.1, Π_BIVerify^R, with the fixes of [`crate::verify`]; the rest is in
//! [`crate::verify`]).
//!
//! Elementwise products and inner products (a truncation pair's bit products are 64 terms
//! per pair) make up almost every term of a CNN's verification: millions at batch 30. Lifted
//! to `GR(2^64, 64)` each costs 512 bytes per component, so they cannot all be held at once,
//! and reducing them in bounded chunks costs rounds per chunk. Here they stay the recorded
//! `Z_2^64` shares, and the first reductions are computed from them directly.
//!
//! **Layout.** The terms form one virtual vector with entry `l·J + j` (column `l`, slot `j`,
//! `J` a power of two). A column holds `J/m'` consecutive outputs of one record, where `m` is
//! the record's terms per output (1 for an elementwise product) and `m'` is `m` rounded up to
//! a power of two: output `g` of the column fills slots `g·m' .. g·m' + m`, the rest are 0 (a
//! valid sharing of 0). `J` is the smallest power of two at least `m'` for every record that
//! keeps the number of columns `L` within [`COLUMN_BUDGET`], or [`MAX_SLOTS`] for a larger
//! claim ([`WIDE_SLOTS`] for a very long one).
//!
//! **Coefficients.** Output `g` of column `l` gets `c = b_l·a_g` (its twin, the truncation
//! pair's second inner product, `γ·c`) with `a ∈ GR^J`, `b ∈ GR^L` and `γ` drawn from a seed
//! opened after every product was fixed. A false batch leaves the error
//! `Σ_{l,g} b_l·a_g·(e_{l,g} + γ·e'_{l,g})`, a polynomial of degree 3 in uniform variables:
//! divided by the largest power of two dividing all its coefficients and reduced mod 2, it is
//! a nonzero polynomial over `GF(2^64)`, which vanishes with probability at most `3/2^64`
//! (Schwartz–Zippel), as for independent coefficients per output.
//!
//! **Lazy reductions.** After `t` reductions with points `ζ_0 … ζ_{t−1}`, entry `i` of column
//! `l` is `X_{l,i} = b_l·Σ_{s<2^t} w_s·a_{g(i·2^t+s)}·x_{l,i·2^t+s}` and
//! `Y_{l,i} = Σ_{s<2^t} w_s·y_{l,i·2^t+s}`, with `w_s = Π_k (ζ_k if bit k of s is 1, else
//! 1 − ζ_k)`: the reduction of [`crate::verify`] unrolled. Each party computes the components
//! it holds from the recorded shares with `J` precomputed weights per column, sums a
//! reduction's two inner products per column, and multiplies the sums by `b_l` once. Nothing
//! of length `N` is ever held in GR: once the claim has at most [`MATERIALIZE_AT`] entries
//! (or one per column) it is materialized and reduced as usual. The rounds are those of one claim of `N`
//! terms, a pair of halvings per two rounds, instead of a reduction for every group of chunks.
//! The pair's second step needs its sums before the first step's `ζ` is drawn, as polynomials
//! in it (`Columns::local_poly`).
//!
//! **Sums without entries.** A party's local part of a masked product is bilinear in the
//! components it holds, so while an entry spans at most 8 slots a reduction's two sums need
//! no entry at all (`Columns::bilinear_halves`, `Columns::spanning_halves`): they are
//! `Σ_{s,s'} w_s·w_{s'}·acc[s][s']`, where `acc` sums the recorded words' products `B(x, y)`
//! over `Z_2^64`, each scaled into GR once by its coefficient. Within one output (a truncation
//! pair's 64 bit products) the words are summed per output and scaled by `a_g` once (by
//! `b_l·a_g` into accumulators shared by every column when a column holds few outputs); across
//! outputs (elementwise products) each word is scaled by its slot's `a_g`. Each column takes
//! the cheapest way by a count of word products (`Columns::cheaper_way`). P0's columns of bit
//! products read the words off the bits (a weighted sum over the set bits of two words
//! ANDed, `Columns::bit_bilinear`) and sum them by output slot `g` over every column, scaled
//! by `b_l`, so `a_g` multiplies each slot's sums once at the end instead of each output's
//! coefficient being a GR product: the first three reductions of LeNet's 3.4 million bit
//! products took P0 288 ms on two threads, now 78 ms.
//!
//! **Terms with no part.** A truncation pair's inputs have `m = 0` (`crate::claims::BitProducts`),
//! so P1's and P2's local parts of its columns are 0 at every reduction: only P0, which knows
//! both bits, computes them (`Columns::vanishes`). Once an entry spans four slots or more,
//! the bit products' entries come from subset-sum tables of the public weights, a GR addition
//! per four bits (the `subsets` module).
//!
//! **Entries' sums.** Where the entries are formed, a column's two sums are GR inner products
//! computed in Karatsuba's evaluation form with one reduction per sum
//! ([`veil_ring::Gr::inner_product`], about half the cost of a GR product per term).

use rayon::prelude::*;
use veil_crypto::Prg;
use veil_mpc::{MpcError, Result};
use veil_ring::{Gr, Multiplier};

use crate::claims::{
    Entry, GrVec, Recorded, Terms, add_entries, component, factor_halves, left_factors, monomials, pair_sums,
    right_factors,
};
use crate::subsets::{GROUP, SUBSETS, tables};

mod bilinear;
mod bits;
mod pair;
use bilinear::{BILINEAR_STEP, combine};

/// Columns a verification aims at (`L`): few enough that the per-column work of a reduction
/// (two sums recombined and multiplied by `b_l`, the bilinear ways' `4^t` weight products)
/// stays small against the pass over the terms, while the slots per column stay within
/// [`MAX_SLOTS`] (a larger claim gets more columns instead).
pub const COLUMN_BUDGET: usize = 1 << 12;

/// Most slots an entry of the step after a pair's first sums for the pair to count as cheap
/// ([`Columns::pairs_cheaply`]): at 8 slots the three weightings' combinations (64 weight pairs
/// per column and sum) cost LeNet at batch 30 about 0.5 s more on two Zen 1 cores.
const CHEAP_PAIRS: usize = 4;

/// Fewest slots per entry of a lazy step for the default pairing to take it with the next one
/// in one pass ([`Columns::local_pair`]). The pass saved is a pass over every term; the pair
/// costs two products more per four entries, which at 32 slots per entry are few (LeNet at
/// batch 30 on two Zen 1 cores, six runs each alternating: 20 rounds instead of 22 and
/// verification 3.72–3.85 s against 3.73–3.91 s, CPU 8.07–8.41 s against 8.12–8.56 s). From 8
/// slots on (both of LeNet's formed pairs, 18 rounds) it cost about 0.1 s more there, and
/// 3.5 % more on two Zen 4 cores (30 runs each alternating: verification 1.324 against
/// 1.279 s, trimmed means; CPU 3.19 against 3.05 s).
const ONE_PASS_CHEAP: usize = 32;

/// Most slots per column (`J`) unless a record's outputs are wider or the claim is very long
/// ([`WIDE_SLOTS`]): a thread holds a column's entries (3 KiB per slot per input), the
/// weights are `J` GR elements per record width, and the subset-sum tables 2 KiB per slot and
/// record.
pub const MAX_SLOTS: usize = 1 << 10;

/// A claim that would still have more than this many columns at [`MAX_SLOTS`] slots gets up
/// to [`WIDE_SLOTS`]: it is materialized once a column holds one entry, about 2 KiB per entry
/// and party, so the columns are what a long claim holds in GR.
pub const MANY_COLUMNS: usize = 1 << 18;

/// Most slots per column of a claim past [`MANY_COLUMNS`]. VGG-16 at batch 30 (1.45 billion
/// terms, 1.4 million columns at `2^10`) is reduced lazily two steps longer and materialized at
/// a quarter of the entries (355 000): its peak for the three servers fell from 16.0 to
/// 14.4 GiB, and its verification took 453 s instead of 474. A shorter claim keeps
/// [`MAX_SLOTS`]: two more lazy passes cost VGG-16 at batch 1 (46 000 columns) 3 to 6 s more
/// than materializing four times the entries.
pub const WIDE_SLOTS: usize = 1 << 12;

pub use crate::claims::MATERIALIZE_AT;

/// Most terms per output of an inner product: a column holds whole outputs, and a party holds
/// one column's entries in GR at a time per thread (`6·512` bytes per slot).
pub const MAX_TERMS: usize = 1 << 14;

/// Index of the components a party holds: `m_x` (P1, P2), `[r]_1` (P0, P1), `[r]_2` (P0, P2).
const M: usize = 0;
const ONE: usize = 1;
const TWO: usize = 2;

fn held(me: usize) -> [bool; 3] {
    [me != 0, me != 2, me != 1]
}

/// The components this party holds of input `input` (0 `x`, 1 the twin's `x'`, 2 `y`) of
/// `rec` at term `idx` (0 for the others).
fn held_at(rec: &Recorded, held: &[bool; 3], input: usize, idx: usize) -> [u64; 3] {
    std::array::from_fn(|c| match (held[c], input) {
        (false, _) => 0,
        (true, 0) => rec.x_at(c, idx),
        (true, 1) => rec.x2_at(c, idx),
        (true, _) => rec.y_at(c, idx),
    })
}

/// The components a party holds of a record's inputs, resolved once per column: a word load
/// per component afterwards instead of [`held_at`]'s matches per term (the bilinear ways read
/// every term, 3–4 % of LeNet's verification went to those matches).
pub(crate) struct HeldWords<'r> {
    rec: &'r Recorded,
    held: [bool; 3],
    /// `x`, the twin's `x'` and `y`: each held component's words (`None` where not held or
    /// absent); `None` for bit products, which go through [`held_at`].
    words: Option<[[Option<&'r [u64]>; 3]; 3]>,
}

impl<'r> HeldWords<'r> {
    pub(crate) fn new(rec: &'r Recorded, held: [bool; 3]) -> HeldWords<'r> {
        let words = rec.bits.is_none().then(|| {
            let of = |v: Option<&'r crate::masked::Masked>| -> [Option<&'r [u64]>; 3] {
                std::array::from_fn(|c| v.filter(|_| held[c]).map(|v| component(v, c)))
            };
            [of(Some(&rec.x)), of(rec.twin.as_ref().map(|(x2, _)| &**x2)), of(Some(&rec.y))]
        });
        HeldWords { rec, held, words }
    }

    /// [`held_at`]: the components held of input `input` at term `idx`.
    #[inline(always)]
    pub(crate) fn at(&self, input: usize, idx: usize) -> [u64; 3] {
        match &self.words {
            Some(w) => {
                let w = &w[input];
                let get = |c: usize| w[c].map_or(0, |v| v[idx]);
                [get(0), get(1), get(2)]
            }
            None => held_at(self.rec, &self.held, input, idx),
        }
    }
}

/// A column's record, its first output, the record's terms per output `m` and their padded
/// width `m'`, and the column's outputs.
struct Shape<'r> {
    rec: &'r Recorded,
    first: usize,
    m: usize,
    m_pad: usize,
    outputs: usize,
}

/// Terms per output of a record on the column path.
fn width(rec: &Recorded) -> usize {
    match rec.terms {
        Terms::Elementwise => 1,
        Terms::Inner { len } => len,
        Terms::Matmul { k, .. } => k,
        Terms::Conv { conv, .. } => conv.cols(),
    }
}

/// One column: outputs `first ..` of record `rec`.
struct Column {
    rec: usize,
    first: usize,
}

/// The per-term products of a verification as a lazily reduced claim.
pub(crate) struct Columns {
    me: usize,
    recs: Vec<Recorded>,
    cols: Vec<Column>,
    /// Slots per column (`J`).
    slots: usize,
    a: Vec<Gr>,
    gamma: Gr,
    /// `γ·a_g` per output slot group (the twins' coefficients before `b_l`).
    ga: Vec<Gr>,
    b: Vec<Gr>,
    /// `w_s` for the reductions so far (`2^t` entries).
    w: Vec<Gr>,
    /// Per padded width `m'` of the records: the weight of each slot, `w_{slot mod 2^t}·a_g`,
    /// and the same times `γ` (for twins), recomputed at each reduction.
    weights: Vec<(usize, Vec<Gr>, Vec<Gr>)>,
    /// Per record, its entry in `weights`.
    class: Vec<usize>,
    /// Per record of bit products, the subset sums of its slots' `x` weights
    /// (`−(w_t·wx_σ + w2_t·γ·wx_σ)`, [`crate::subsets`]) once an entry sums four slots or
    /// more; empty otherwise. Records with the same weights share theirs.
    bit_tables: Vec<std::sync::Arc<Vec<Gr>>>,
    /// The same for `y` (the weights `w_s`), by slot of the entry.
    y_table: Vec<Gr>,
}

impl Columns {
    /// Lays out `recs` (elementwise and inner products) and draws their coefficients.
    pub(crate) fn new(me: usize, recs: Vec<Recorded>, coeffs: &mut Prg) -> Result<Columns> {
        if let Some(r) = recs.iter().find(|r| matches!(r.terms, Terms::Matmul { .. } | Terms::Conv { .. })) {
            return Err(MpcError::Invalid(format!(
                "a matrix product of {} outputs on the per-term path",
                r.z.n
            )));
        }
        if let Some(r) = recs.iter().find(|r| width(r) > MAX_TERMS) {
            return Err(MpcError::Invalid(format!(
                "inner products of {} terms each: the verification takes at most {MAX_TERMS} per output",
                width(r)
            )));
        }
        let padded = |r: &Recorded| width(r).max(1).next_power_of_two();
        let count = |j: usize| recs.iter().map(|r| (r.z.n * padded(r)).div_ceil(j)).sum::<usize>();
        let mut slots = recs.iter().map(padded).max().unwrap_or(1);
        let most = if count(MAX_SLOTS) > MANY_COLUMNS { WIDE_SLOTS } else { MAX_SLOTS };
        while count(slots) > COLUMN_BUDGET && slots < most {
            slots *= 2;
        }
        let mut cols = Vec::with_capacity(count(slots));
        for (rec, r) in recs.iter().enumerate() {
            let per = slots / padded(r);
            cols.extend((0..r.z.n).step_by(per).map(|first| Column { rec, first }));
        }
        let a: Vec<Gr> = (0..slots).map(|_| Gr::random(coeffs)).collect();
        let gamma = Gr::random(coeffs);
        let ga = {
            let gamma = Multiplier::new(&gamma);
            a.iter().map(|v| gamma.apply(v)).collect()
        };
        let b = (0..cols.len()).map(|_| Gr::random(coeffs)).collect();
        let mut widths: Vec<usize> = recs.iter().map(padded).collect();
        widths.sort_unstable();
        widths.dedup();
        let class = recs.iter().map(|r| widths.partition_point(|&m| m < padded(r))).collect();
        let weights = widths.into_iter().map(|m| (m, vec![], vec![])).collect();
        let w = vec![Gr::embed(1)];
        let mut columns = Columns {
            me,
            recs,
            cols,
            slots,
            a,
            gamma,
            ga,
            b,
            w,
            weights,
            class,
            bit_tables: vec![],
            y_table: vec![],
        };
        columns.reweigh();
        Ok(columns)
    }

    /// Recomputes the slot weights after a reduction.
    fn reweigh(&mut self) {
        let step = self.w.len();
        for (m_pad, wx, gwx) in &mut self.weights {
            *wx = (0..self.slots)
                .into_par_iter()
                .map(|slot| self.w[slot % step].mul(&self.a[slot / *m_pad]))
                .collect();
            let gamma = Multiplier::new(&self.gamma);
            *gwx = wx.par_iter().map(|v| gamma.apply(v)).collect();
        }
        self.retable(false);
    }

    /// Column `l`'s [`Shape`].
    fn shape(&self, l: usize) -> Shape<'_> {
        let col = &self.cols[l];
        let rec = &self.recs[col.rec];
        let (m, m_pad) = (width(rec).max(1), width(rec).max(1).next_power_of_two());
        Shape { rec, first: col.first, m, m_pad, outputs: (self.slots / m_pad).min(rec.z.n - col.first) }
    }

    /// Entries of the claim at the current reduction.
    pub(crate) fn len(&self) -> usize {
        self.cols.len() * self.entries_per_column()
    }

    fn entries_per_column(&self) -> usize {
        self.slots / self.w.len()
    }

    /// Whether the next reduction should be lazy: each column still has two entries or more,
    /// and the claim is longer than `materialize_at` ([`MATERIALIZE_AT`] by default).
    pub(crate) fn fold_lazily(&self, materialize_at: usize) -> bool {
        self.entries_per_column() >= 2 && self.len() > materialize_at
    }

    /// Whether the reduction after the next one can be lazy too: [`Columns::fold_lazily`] of
    /// the claim once the next reduction has halved it.
    pub(crate) fn folds_lazily_next(&self, materialize_at: usize) -> bool {
        self.entries_per_column() >= 4 && self.len() / 2 > materialize_at
    }

    /// Whether the reduction after the next one is lazy and costs about what it would alone
    /// when paired with the next one: its entries sum at most [`CHEAP_PAIRS`] slots (the
    /// bilinear ways' accumulators then serve [`Columns::local_poly`]'s three weightings at
    /// once and their combinations are short), or the next one's entries sum at least
    /// [`ONE_PASS_CHEAP`] slots (both go in one pass over the terms, [`Columns::local_pair`]).
    pub(crate) fn pairs_cheaply(&self, materialize_at: usize) -> bool {
        self.folds_lazily_next(materialize_at)
            && (2 * self.w.len() <= CHEAP_PAIRS
                || (self.pairs_in_one_pass(materialize_at) && self.w.len() >= ONE_PASS_CHEAP))
    }

    /// `Z = Σ_l b_l·Σ_g a_g·(z_{l,g} + γ·z'_{l,g})`, one entry.
    pub(crate) fn z(&self) -> GrVec {
        let held = held(self.me);
        let z = self
            .cols
            .par_iter()
            .zip(&self.b)
            .map(|(col, b)| {
                let rec = &self.recs[col.rec];
                let per = self.slots / width(rec).max(1).next_power_of_two();
                let mut z = [Gr::ZERO; 3];
                for (c, zc) in z.iter_mut().enumerate().filter(|(c, _)| held[*c]) {
                    let mut s = Gr::ZERO;
                    let outputs = col.first..(col.first + per).min(rec.z.n);
                    s.add_dot_words(&self.a, &component(&rec.z, c)[outputs.clone()]);
                    if let Some((_, z2)) = &rec.twin {
                        s.add_dot_words(&self.ga, &component(z2, c)[outputs]);
                    }
                    *zc = b.mul(&s);
                }
                z
            })
            .reduce(|| [Gr::ZERO; 3], |x, y| std::array::from_fn(|c| x[c].add(&y[c])));
        entry_vec(&held, vec![z])
    }

    /// The two inner products of the next reduction, as this party's local parts (to be
    /// completed by [`crate::verify`]'s masked inner product): `Σ X_{2i}·Y_{2i}` and
    /// `Σ (X_{2i+1} − X_{2i})·(Y_{2i+1} − Y_{2i})`.
    pub(crate) fn local_halves(&self) -> [Gr; 2] {
        self.local_halves_by(None)
    }

    /// [`Columns::local_halves`], each column by the cheaper of the two ways to compute it
    /// ([`Columns::cheaper_way`]), or all by `forced` (tests).
    fn local_halves_by(&self, forced: Option<Way>) -> [Gr; 2] {
        let wws: Vec<Vec<Gr>> = self.weight_pairs().into_iter().collect();
        self.sums_by(forced, &wws, 1, true)[0]
    }

    /// The two sums for each of `sets` weightings: the bilinear ways combine their
    /// accumulators with each of the weight pairs `wws` (none: no bilinear way), and with
    /// `entries` the columns taken by their entries (under the current weights) go to the first
    /// set; without, they are left out ([`Columns::local_poly`] sums them apart).
    /// The columns are independent: they run in parallel (every core of the party's pool), and
    /// their sums, exact in `Z_2^64` coefficients, add up in any order to the same total.
    fn sums_by(&self, forced: Option<Way>, wws: &[Vec<Gr>], sets: usize, entries: bool) -> Vec<[Gr; 2]> {
        let pairs = wws.first().map(Vec::len);
        let shared = pairs.map_or(0, |p| 4 * p);
        let add = |x: [Gr; 2], y: [Gr; 2]| [x[0].add(&y[0]), x[1].add(&y[1])];
        let add_all =
            |x: Vec<[Gr; 2]>, y: Vec<[Gr; 2]>| x.into_iter().zip(y).map(|(a, b)| add(a, b)).collect();
        // P0's accumulators of bit products by output slot (`Columns::bit_bilinear`).
        let by_output = match (pairs, self.narrowest_bit_width()) {
            (Some(p), Some(m)) if self.me == 0 => self.slots.div_ceil(m) * 4 * p,
            _ => 0,
        };
        let zero = || vec![[Gr::ZERO; 2]; sets];
        let (sums, acc, bit_acc) = self
            .b
            .par_iter()
            .enumerate()
            .fold(
                || (Scratch::default(), zero(), vec![Gr::ZERO; shared], Vec::new()),
                |(mut scratch, mut sums, mut acc, mut bit_acc), (l, b)| {
                    if self.vanishes(l) {
                        return (scratch, sums, acc, bit_acc);
                    }
                    let way = forced.unwrap_or_else(|| self.cheaper_way_for(l, pairs.is_some(), sets));
                    if way == Way::Entries && (!entries || self.tabled_at_p0(l)) {
                        // In a block of bit columns below, or apart.
                        return (scratch, sums, acc, bit_acc);
                    }
                    if way == Way::Bilinear && by_output > 0 && self.bit_bilinear_at_p0(l) {
                        // Sized on first use: most steps have no such column.
                        bit_acc.resize(by_output, Gr::ZERO);
                        self.bit_bilinear(l, b, &mut bit_acc);
                        return (scratch, sums, acc, bit_acc);
                    }
                    let column = match (pairs, way) {
                        (Some(_), Way::Bilinear) if self.within_outputs(l) => {
                            self.bilinear_halves(l, b, wws, &mut acc)
                        }
                        (Some(_), Way::Bilinear) => self.spanning_halves(l, wws),
                        _ => vec![self.entry_halves(l, &mut scratch)],
                    };
                    for (sum, c) in sums.iter_mut().zip(column) {
                        *sum = add(*sum, [b.mul(&c[0]), b.mul(&c[1])]);
                    }
                    (scratch, sums, acc, bit_acc)
                },
            )
            .map(|(_, sums, acc, bit_acc)| (sums, acc, bit_acc))
            .reduce(
                || (zero(), vec![Gr::ZERO; shared], Vec::new()),
                |(s, mut a, c), (t, b, d)| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| x.add_assign(y));
                    (add_all(s, t), a, add_vecs(c, d))
                },
            );
        let mut sums = sums;
        for (sum, ww) in sums.iter_mut().zip(wws) {
            if !bit_acc.is_empty() {
                *sum = add(*sum, self.bit_output_sums(&bit_acc, ww));
            }
            *sum = add(*sum, combine(&acc, ww, 2));
        }
        if entries {
            sums[0] = add(sums[0], self.bit_block_sums(forced, pairs.is_some()));
        }
        sums
    }

    /// The local parts of the reduction after the next one, before the next `ζ` is known, as
    /// polynomials in it ([`crate::verify`], "Pipelined halvings"). The next reduction sets
    /// the weights to `w' = (u·w, v·w)`, `(u, v) = (1 − ζ, ζ)`, and the two sums are quadratic
    /// forms `Q` in `w'` (every entry is linear in the weights, a local part bilinear in the
    /// entries), so `Q(w') = u²·Q(w, 0) + uv·(Q(w, w) − Q(w, 0) − Q(0, w)) + v²·Q(0, w)`,
    /// returned as the coefficients of `1, ζ, ζ²` ([`crate::claims::monomials`]). Each column
    /// takes the way the next reduction would ([`Columns::cheaper_way`] at `2w'` slots per
    /// entry): a bilinear way forms its accumulators once and combines them with the weight
    /// pairs of all three weightings; a column summed from its entries forms them under `w`
    /// (`E_j`, twice as many as the next reduction's), whose entries under the three
    /// weightings are `E_{2i}`, `E_{2i+1}` and `E_{2i} + E_{2i+1}`. So the polynomials cost
    /// about one reduction's sums, plus half again the entries' products.
    pub(crate) fn local_poly(&mut self) -> [Gr; 6] {
        let w = std::mem::take(&mut self.w);
        let zero = vec![Gr::ZERO; w.len()];
        let next = [[&w[..], &zero[..]].concat(), [&zero[..], &w[..]].concat(), [&w[..], &w[..]].concat()];
        let wws: Vec<Vec<Gr>> = if 2 * w.len() <= BILINEAR_STEP {
            next.iter().map(|v| weight_pairs_of(v)).collect()
        } else {
            vec![]
        };
        // The next reduction's ways read only how many weights there are (the pairs are
        // passed); the weights and tables of `w` stay as they are.
        self.w = next[2].clone();
        let by_entries: Vec<usize> = (0..self.cols.len())
            .filter(|&l| !self.vanishes(l) && self.cheaper_way_for(l, !wws.is_empty(), 3) == Way::Entries)
            .collect();
        let sums = self.sums_by(None, &wws, 3, false);
        self.w = w;
        let quads = self.quad_sums(&by_entries);
        let both: Vec<[Gr; 2]> =
            sums.iter().zip(&quads).map(|(s, q)| [s[0].add(&q[0]), s[1].add(&q[1])]).collect();
        monomials(both[0], both[1], both[2])
    }

    /// [`Columns::local_poly`]'s three weightings' sums, times `b_l`, of the columns `cols`
    /// from their entries under the current weights (at least four per column).
    fn quad_sums(&self, cols: &[usize]) -> [[Gr; 2]; 3] {
        let me = self.me;
        let add = |x: [[Gr; 2]; 3], y: [[Gr; 2]; 3]| -> [[Gr; 2]; 3] {
            std::array::from_fn(|k| [x[k][0].add(&y[k][0]), x[k][1].add(&y[k][1])])
        };
        cols.par_iter()
            .fold(
                || (Scratch::default(), [[Gr::ZERO; 2]; 3]),
                |(mut scratch, sums), &l| {
                    self.entries(l, &mut scratch);
                    let (xs, ys) = (&scratch.x, &scratch.y);
                    let half = xs.len() / 2;
                    let pick = |shift: usize| move |i: usize| (xs[2 * i + shift], ys[2 * i + shift]);
                    let both = |i: usize| {
                        let ((x0, y0), (x1, y1)) = (pick(0)(i), pick(1)(i));
                        (add_entries(&x0, &x1), add_entries(&y0, &y1))
                    };
                    let parts = [
                        pair_sums(me, half, pick(0)),
                        pair_sums(me, half, pick(1)),
                        pair_sums(me, half, both),
                    ];
                    let b = &self.b[l];
                    let parts = parts.map(|p| [b.mul(&p[0]), b.mul(&p[1])]);
                    (scratch, add(sums, parts))
                },
            )
            .map(|(_, sums)| sums)
            .reduce(|| [[Gr::ZERO; 2]; 3], add)
    }

    /// Whether this party's local parts in column `l` are 0 whatever the entries: a truncation
    /// pair's bit products at P1 and P2. Their inputs `⟨b1⟩ = (0, −w·b1, 0)` and
    /// `⟨b2⟩ = (0, 0, −b2)` have `m = 0`, and so does every combination of them, so P1's part
    /// `−(m_X·[r_Y]_1 + [r_X]_1·m_Y)` and P2's `−(m_X·[r_Y]_2 + [r_X]_2·m_Y) + m_X·m_Y`
    /// vanish: only P0, which knows both bits, has a nonzero part (`[r_X]_1·[r_Y]_2`).
    fn vanishes(&self, l: usize) -> bool {
        self.me != 0 && self.recs[self.cols[l].rec].bits.is_some()
    }

    /// Column `l`'s two sums without `b_l`, from its entries in GR (one GR product per pair
    /// of entries and per sum).
    fn entry_halves(&self, l: usize, scratch: &mut Scratch) -> [Gr; 2] {
        if self.tabled_at_p0(l) {
            return self.bit_block_halves(l..l + 1, scratch)[0];
        }
        self.all_entry_halves(l, scratch)
    }

    /// [`Columns::entry_halves`] from every component's entries.
    fn all_entry_halves(&self, l: usize, scratch: &mut Scratch) -> [Gr; 2] {
        self.entries(l, scratch);
        let (xs, ys) = (&scratch.x, &scratch.y);
        factor_halves(
            self.me,
            xs.len().min(ys.len()) / 2,
            |i, out| left_factors(self.me, |c| xs[i][c], out),
            |i, out| right_factors(self.me, |c| ys[i][c], out),
        )
    }

    /// `w_s·w_{s'}` for every pair of weights (row-major), while there are at most
    /// [`BILINEAR_STEP`] of them.
    fn weight_pairs(&self) -> Option<Vec<Gr>> {
        (self.w.len() <= BILINEAR_STEP).then(|| weight_pairs_of(&self.w))
    }

    /// Whether both entries of every pair of column `l` lie in one output (`2·2^t ≤ m'`,
    /// [`Columns::bilinear_halves`]); otherwise every entry holds whole outputs (`m' ≤ 2^t`,
    /// [`Columns::spanning_halves`]), both being powers of two.
    fn within_outputs(&self, l: usize) -> bool {
        let rec = &self.recs[self.cols[l].rec];
        2 * self.w.len() <= width(rec).max(1).next_power_of_two()
    }

    /// The cheaper way to compute column `l`'s sums, by a count of word products: from the
    /// entries, every term is scaled into GR (64 word products per held input component; a
    /// GR addition per four bit products from the subset-sum tables) and
    /// every pair of entries costs two local parts of one or two GR products each (a term of
    /// an inner product costs about 30 scalings); the
    /// bilinear way costs `4^t` GR scalings per output and sum within outputs (3 per pair of
    /// entries and input across them), and `4^t` GR products per column and sum (or one per
    /// output and input, [`Columns::bilinear_halves`]; none for P0's bit products,
    /// [`Columns::bit_bilinear`]).
    fn cheaper_way(&self, l: usize, pairs: bool) -> Way {
        self.cheaper_way_for(l, pairs, 1)
    }

    /// [`Columns::cheaper_way`] for `sets` weightings at once ([`Columns::sums_by`]): the
    /// entries' products and a column's combinations of the accumulators count `sets` times.
    fn cheaper_way_for(&self, l: usize, pairs: bool, sets: usize) -> Way {
        if !pairs {
            return Way::Entries;
        }
        // A term of a GR inner product took about 30 GR scalings (230 against 8 ns, AVX-512,
        // 2-core EPYC; a lone GR product about 50).
        const GR_PRODUCT: usize = 30 * 64;
        let Shape { rec, m, m_pad, outputs, .. } = self.shape(l);
        let inputs = if rec.twin.is_some() { 3 } else { 2 };
        let step = self.w.len();
        let entries = (outputs * m_pad).div_ceil(step);
        let scalings = if self.bit_tables[self.cols[l].rec].is_empty() {
            outputs * m * inputs * 2 * 64
        } else {
            outputs * m / GROUP * 2 * 64
        };
        // Per pair of entries, two local parts of one GR product each at P0, two at P1 and P2.
        let per_entry = if self.me == 0 { 1 } else { 2 };
        let by_entries = scalings + sets * entries * per_entry * GR_PRODUCT;
        let twin = if rec.twin.is_some() { 2 } else { 1 };
        let pairs = step * step;
        let bilinear = if self.bit_bilinear_at_p0(l) {
            // By output slot, no GR product per output (`Columns::bit_bilinear`).
            outputs * (2 * twin * pairs * 64 + m_pad * step * 6)
        } else if !self.within_outputs(l) {
            entries.div_ceil(2) * twin * pairs * (3 * 64 + 6) + sets * 2 * twin * pairs * GR_PRODUCT
        } else if outputs < 2 * pairs {
            outputs * (2 * twin * pairs * 64 + m_pad * step * 6 + twin * GR_PRODUCT)
        } else {
            outputs * (2 * twin * pairs * 64 + m_pad * step * 6) + sets * 2 * twin * pairs * GR_PRODUCT
        };
        if bilinear < by_entries { Way::Bilinear } else { Way::Entries }
    }

    /// Records the reduction at `ζ`: every entry becomes `X_{2i} + ζ·(X_{2i+1} − X_{2i})`.
    pub(crate) fn fold(&mut self, zeta: &Gr) {
        let one_minus = Gr::embed(1).sub(zeta);
        let mut w: Vec<Gr> = self.w.iter().map(|w| w.mul(&one_minus)).collect();
        w.extend(self.w.iter().map(|w| w.mul(zeta)));
        self.w = w;
        self.reweigh();
    }

    /// The claim's vectors at the current reduction.
    pub(crate) fn materialize(&mut self) -> (GrVec, GrVec) {
        if self.me != 0 {
            self.retable(true);
        }
        let held = held(self.me);
        let (n, per) = (self.len(), self.entries_per_column());
        let zeros = |c: usize| if held[c] { vec![Gr::ZERO; n] } else { vec![] };
        let mut xs = GrVec { m: zeros(M), one: zeros(ONE), two: zeros(TWO) };
        let mut ys = GrVec { m: zeros(M), one: zeros(ONE), two: zeros(TWO) };
        // Each column's slices of the held components (`x` then `y`), written in parallel: the
        // vectors are all that is held, 1 KiB per entry and input at a party (2 components).
        let mut outs: Vec<[Option<&mut [Gr]>; 6]> =
            (0..self.cols.len()).map(|_| Default::default()).collect();
        let parts = [&mut xs.m, &mut xs.one, &mut xs.two, &mut ys.m, &mut ys.one, &mut ys.two];
        for (k, v) in parts.into_iter().enumerate() {
            for (l, c) in v.chunks_mut(per.max(1)).enumerate() {
                outs[l][k] = Some(c);
            }
        }
        outs.into_par_iter().zip(&self.b).enumerate().for_each_init(
            Scratch::default,
            |scratch, (l, (mut o, b))| {
                self.entries(l, scratch);
                for (i, (x, y)) in scratch.x.iter().zip(&scratch.y).enumerate() {
                    for c in 0..3 {
                        if let Some(out) = o[c].as_deref_mut() {
                            out[i] = b.mul(&x[c]);
                        }
                        if let Some(out) = o[3 + c].as_deref_mut() {
                            out[i] = y[c];
                        }
                    }
                }
            },
        );
        (xs, ys)
    }

    /// Column `l`'s entries at the current reduction, without the factor `b_l`: from the
    /// subset-sum tables for bit products where they are built, else term by term.
    fn entries(&self, l: usize, scratch: &mut Scratch) {
        if self.bit_tables[self.cols[l].rec].is_empty() {
            self.term_entries(l, scratch)
        } else {
            self.bit_entries(l, scratch)
        }
    }

    /// [`Columns::entries`] term by term: each recorded share scaled into GR by its slot's
    /// weight.
    fn term_entries(&self, l: usize, scratch: &mut Scratch) {
        let held = held(self.me);
        let Shape { rec, first, m, m_pad, outputs } = self.shape(l);
        let step = self.w.len();
        scratch.reset(self.entries_per_column());
        let (_, wx, gwx) = &self.weights[self.class[self.cols[l].rec]];
        let twin = rec.twin.is_some();
        if rec.bits.is_none() {
            // Shares held as words: each output's run of terms, cut where an entry ends, is one
            // sum of scalings per input and component (`Gr::dot_words`).
            // Without padding (`m = m'`) the column's terms are one run, cut into entries.
            let x2 = rec.twin.as_ref().map(|(x2, _)| &**x2);
            let (runs, run) = if m == m_pad { (1, outputs * m) } else { (outputs, m) };
            for g in 0..runs {
                let mut t = 0;
                while t < run {
                    let slot = g * m_pad + t;
                    let (i, s) = (slot / step, slot % step);
                    let len = (step - s).min(run - t);
                    let idx = first * m + g * m + t;
                    for c in (0..3).filter(|&c| held[c]) {
                        let x = &component(&rec.x, c)[idx..idx + len];
                        scratch.x[i][c].add_dot_words(&wx[slot..slot + len], x);
                        if let Some(x2) = x2 {
                            let x2 = &component(x2, c)[idx..idx + len];
                            scratch.x[i][c].add_dot_words(&gwx[slot..slot + len], x2);
                        }
                        let y = &component(&rec.y, c)[idx..idx + len];
                        scratch.y[i][c].add_dot_words(&self.w[s..s + len], y);
                    }
                    t += len;
                }
            }
            return;
        }
        for g in 0..outputs {
            for t in 0..m {
                let slot = g * m_pad + t;
                let (i, s) = (slot / step, slot % step);
                let idx = (first + g) * m + t;
                for c in (0..3).filter(|&c| held[c]) {
                    // Zeros are common (the bits of truncation pairs, absent components).
                    let (x, y) = (rec.x_at(c, idx), rec.y_at(c, idx));
                    if x != 0 {
                        scratch.x[i][c].add_scaled(&wx[slot], x);
                    }
                    if twin {
                        let x2 = rec.x2_at(c, idx);
                        if x2 != 0 {
                            scratch.x[i][c].add_scaled(&gwx[slot], x2);
                        }
                    }
                    if y != 0 {
                        scratch.y[i][c].add_scaled(&self.w[s], y);
                    }
                }
            }
        }
    }
}

/// How a column's two sums of a reduction are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// From its entries in GR ([`Columns::entry_halves`]).
    Entries,
    /// By bilinearity from the recorded words ([`Columns::bilinear_halves`]).
    Bilinear,
}

/// A column's entries at the current reduction (reused across columns).
#[derive(Default)]
struct Scratch {
    x: Vec<Entry>,
    y: Vec<Entry>,
    /// One component per entry ([`Columns::bit_block_halves`]), evens first, then the odds
    /// less the evens: the two sums' factors.
    flat_x: Vec<Gr>,
    flat_y: Vec<Gr>,
    /// The table entries an entry of bit products sums ([`Columns::bit_block_halves`]).
    picks_x: Vec<u32>,
    picks_y: Vec<u32>,
}

impl Scratch {
    /// `count` zero entries for each input.
    fn reset(&mut self, count: usize) {
        for v in [&mut self.x, &mut self.y] {
            v.clear();
            v.resize(count, [Gr::ZERO; 3]);
        }
    }
}

/// The elementwise sum of two accumulators, either of which may be empty (never used).
/// `w_s·w_{s'}` for every pair of weights (row-major).
fn weight_pairs_of(w: &[Gr]) -> Vec<Gr> {
    w.iter().flat_map(|u| w.iter().map(move |v| u.mul(v))).collect()
}

fn add_vecs(mut a: Vec<Gr>, b: Vec<Gr>) -> Vec<Gr> {
    if a.is_empty() {
        return b;
    }
    a.iter_mut().zip(&b).for_each(|(x, y)| x.add_assign(y));
    a
}

/// The components a party holds of `entries`, as a [`GrVec`].
fn entry_vec(held: &[bool; 3], entries: Vec<Entry>) -> GrVec {
    let pick = |c: usize| if held[c] { entries.iter().map(|e| e[c]).collect() } else { vec![] };
    GrVec { m: pick(M), one: pick(ONE), two: pick(TWO) }
}

#[cfg(test)]
mod tests;
