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
//! terms, `2` per halving, instead of a reduction for every group of chunks.
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

use std::ops::Range;

use rayon::prelude::*;
use veil_crypto::Prg;
use veil_mpc::{MpcError, Result};
use veil_ring::Gr;

use crate::claims::{Entry, GrVec, Recorded, Terms, component, cross_sum};
use crate::subsets::{GROUP, SUBSETS, tables};

mod bilinear;
use bilinear::{BILINEAR_STEP, combine};

/// Columns a verification aims at (`L`): few enough that the per-column work of a reduction
/// (two sums recombined and multiplied by `b_l`, the bilinear ways' `4^t` weight products)
/// stays small against the pass over the terms, while the slots per column stay within
/// [`MAX_SLOTS`] (a larger claim gets more columns instead).
pub const COLUMN_BUDGET: usize = 1 << 12;

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
    /// more; empty otherwise.
    bit_tables: Vec<Vec<Gr>>,
    /// The same for `y` (the weights `w_s`), by slot of the entry.
    y_table: Vec<Gr>,
}

/// Columns of bit products P0 sums together from their shared tables
/// ([`Columns::bit_block_halves`]).
const BIT_BLOCK: usize = 32;

/// Most bytes of subset-sum tables a party builds per reduction (beyond it, the bit products'
/// entries are summed term by term): VGG-16's 16 records of bit products at [`WIDE_SLOTS`]
/// slots take 128 MiB.
const TABLE_BUDGET: usize = 256 << 20;

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
        let ga = a.iter().map(|v| gamma.mul(v)).collect();
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
            *gwx = wx.par_iter().map(|v| self.gamma.mul(v)).collect();
        }
        self.retable();
    }

    /// Rebuilds the subset-sum tables of the bit products ([`crate::subsets`]) for the current
    /// reduction, where an entry sums at least four slots and the tables fit
    /// [`TABLE_BUDGET`].
    fn retable(&mut self) {
        let step = self.w.len();
        let tabled =
            |r: &Recorded| r.bits.is_some() && width(r).is_multiple_of(GROUP) && width(r).is_power_of_two();
        let records = self.recs.iter().filter(|r| tabled(r)).count();
        let bytes = (records * self.slots + step) / GROUP * SUBSETS * std::mem::size_of::<Gr>();
        self.bit_tables = vec![vec![]; self.recs.len()];
        self.y_table = vec![];
        if step < GROUP || records == 0 || bytes > TABLE_BUDGET {
            return;
        }
        for (r, rec) in self.recs.iter().enumerate() {
            let Some(bits) = rec.bits.as_ref().filter(|_| tabled(rec)) else { continue };
            let (_, wx, gwx) = &self.weights[self.class[r]];
            let m = width(rec);
            let k: Vec<Gr> = (0..self.slots)
                .into_par_iter()
                .map(|slot| {
                    let t = slot % m;
                    let mut v = Gr::ZERO;
                    v.add_scaled(&wx[slot], bits.w[t].wrapping_neg());
                    v.add_scaled(&gwx[slot], bits.w2[t].wrapping_neg());
                    v
                })
                .collect();
            self.bit_tables[r] = tables(&k);
        }
        self.y_table = tables(&self.w);
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
                    s.add_assign(&Gr::dot_words(&self.a, &component(&rec.z, c)[outputs.clone()]));
                    if let Some((_, z2)) = &rec.twin {
                        s.add_assign(&Gr::dot_words(&self.ga, &component(z2, c)[outputs]));
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
    /// The columns are independent: they run in parallel (every core of the party's pool), and
    /// their sums, exact in `Z_2^64` coefficients, add up in any order to the same total.
    fn local_halves_by(&self, forced: Option<Way>) -> [Gr; 2] {
        let pairs = self.weight_pairs();
        let shared = pairs.as_ref().map_or(0, |ww| 4 * ww.len());
        let add = |x: [Gr; 2], y: [Gr; 2]| [x[0].add(&y[0]), x[1].add(&y[1])];
        // P0's accumulators of bit products by output slot (`Columns::bit_bilinear`).
        let by_output = match &pairs {
            Some(ww) if self.me == 0 && self.recs.iter().any(|r| r.bits.is_some()) => {
                self.slots / 64 * 4 * ww.len()
            }
            _ => 0,
        };
        let (sums, acc, bit_acc) = self
            .b
            .par_iter()
            .enumerate()
            .fold(
                || (Scratch::default(), [Gr::ZERO; 2], vec![Gr::ZERO; shared], vec![Gr::ZERO; by_output]),
                |(mut scratch, sums, mut acc, mut bit_acc), (l, b)| {
                    if self.vanishes(l) {
                        return (scratch, sums, acc, bit_acc);
                    }
                    let way = forced.unwrap_or_else(|| self.cheaper_way(l, pairs.is_some()));
                    if way == Way::Entries && self.tabled_at_p0(l) {
                        // In a block of bit columns, below.
                        return (scratch, sums, acc, bit_acc);
                    }
                    if way == Way::Bilinear && by_output > 0 && self.bit_bilinear_at_p0(l) {
                        self.bit_bilinear(l, b, &mut bit_acc);
                        return (scratch, sums, acc, bit_acc);
                    }
                    let column = match (&pairs, way) {
                        (Some(ww), Way::Bilinear) if self.within_outputs(l) => {
                            self.bilinear_halves(l, b, ww, &mut acc)
                        }
                        (Some(ww), Way::Bilinear) => self.spanning_halves(l, ww),
                        _ => self.entry_halves(l, &mut scratch),
                    };
                    (scratch, add(sums, [b.mul(&column[0]), b.mul(&column[1])]), acc, bit_acc)
                },
            )
            .map(|(_, sums, acc, bit_acc)| (sums, acc, bit_acc))
            .reduce(
                || ([Gr::ZERO; 2], vec![Gr::ZERO; shared], vec![Gr::ZERO; by_output]),
                |(s, mut a, mut c), (t, b, d)| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| x.add_assign(y));
                    c.iter_mut().zip(&d).for_each(|(x, y)| x.add_assign(y));
                    (add(s, t), a, c)
                },
            );
        let sums = match &pairs {
            Some(ww) if by_output > 0 => add(sums, self.bit_output_sums(&bit_acc, ww)),
            _ => sums,
        };
        let blocks = self.bit_blocks(forced, pairs.is_some());
        let bits = blocks
            .par_iter()
            .map_init(Scratch::default, |scratch, cols| {
                let halves = self.bit_block_halves(cols.clone(), scratch);
                halves
                    .iter()
                    .zip(&self.b[cols.clone()])
                    .fold([Gr::ZERO; 2], |s, (h, b)| add(s, [b.mul(&h[0]), b.mul(&h[1])]))
            })
            .reduce(|| [Gr::ZERO; 2], add);
        let sums = add(sums, bits);
        match &pairs {
            Some(ww) => add(sums, combine(&acc, ww, 2)),
            None => sums,
        }
    }

    /// Whether P0 sums column `l` by [`Columns::bit_bilinear`] when the bilinear way is the
    /// cheaper: a truncation pair's 64 bit products per output, both entries of a pair in one
    /// output.
    fn bit_bilinear_at_p0(&self, l: usize) -> bool {
        let rec = &self.recs[self.cols[l].rec];
        self.me == 0 && rec.bits.is_some() && width(rec) == 64 && self.within_outputs(l)
    }

    /// Whether column `l` holds bit products whose entries P0 forms from the subset-sum
    /// tables ([`Columns::bit_block_halves`]).
    fn tabled_at_p0(&self, l: usize) -> bool {
        self.me == 0 && !self.bit_tables[self.cols[l].rec].is_empty()
    }

    /// The columns [`Columns::local_halves_by`] sums by [`Columns::bit_block_halves`]: runs of
    /// up to [`BIT_BLOCK`] consecutive columns of one record.
    fn bit_blocks(&self, forced: Option<Way>, pairs: bool) -> Vec<Range<usize>> {
        let mut blocks: Vec<Range<usize>> = vec![];
        for l in (0..self.cols.len()).filter(|&l| self.tabled_at_p0(l)) {
            if forced.unwrap_or_else(|| self.cheaper_way(l, pairs)) != Way::Entries {
                continue;
            }
            match blocks.last_mut() {
                Some(r)
                    if r.end == l && r.len() < BIT_BLOCK && self.cols[r.start].rec == self.cols[l].rec =>
                {
                    r.end += 1
                }
                _ => blocks.push(l..l + 1),
            }
        }
        blocks
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
        let pairs = xs.len() / 2;
        let even = cross_sum(self.me, (0..pairs).map(|i| (&xs[2 * i], &ys[2 * i])));
        let dx: Vec<Entry> = (0..pairs).map(|i| diff(&xs[2 * i + 1], &xs[2 * i])).collect();
        let dy: Vec<Entry> = (0..pairs).map(|i| diff(&ys[2 * i + 1], &ys[2 * i])).collect();
        [even, cross_sum(self.me, dx.iter().zip(&dy))]
    }

    /// `w_s·w_{s'}` for every pair of weights (row-major), while there are at most
    /// [`BILINEAR_STEP`] of them.
    fn weight_pairs(&self) -> Option<Vec<Gr>> {
        (self.w.len() <= BILINEAR_STEP)
            .then(|| self.w.iter().flat_map(|u| self.w.iter().map(move |v| u.mul(v))).collect())
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
        let by_entries = scalings + entries * per_entry * GR_PRODUCT;
        let twin = if rec.twin.is_some() { 2 } else { 1 };
        let pairs = step * step;
        let bilinear = if self.bit_bilinear_at_p0(l) {
            // By output slot, no GR product per output (`Columns::bit_bilinear`).
            outputs * (2 * twin * pairs * 64 + m_pad * step * 6)
        } else if !self.within_outputs(l) {
            entries.div_ceil(2) * twin * pairs * (3 * 64 + 6) + 2 * twin * pairs * GR_PRODUCT
        } else if outputs < 2 * pairs {
            outputs * (2 * twin * pairs * 64 + m_pad * step * 6 + twin * GR_PRODUCT)
        } else {
            outputs * (2 * twin * pairs * 64 + m_pad * step * 6) + 2 * twin * pairs * GR_PRODUCT
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
    pub(crate) fn materialize(&self) -> (GrVec, GrVec) {
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
                        scratch.x[i][c].add_assign(&Gr::dot_words(&wx[slot..slot + len], x));
                        if let Some(x2) = x2 {
                            let x2 = &component(x2, c)[idx..idx + len];
                            scratch.x[i][c].add_assign(&Gr::dot_words(&gwx[slot..slot + len], x2));
                        }
                        let y = &component(&rec.y, c)[idx..idx + len];
                        scratch.y[i][c].add_assign(&Gr::dot_words(&self.w[s..s + len], y));
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

impl Columns {
    /// [`Columns::entries`] of a column of bit products from the subset-sum tables: per
    /// four slots, one table entry for `x` (from `b1`, at P0 and P1) and one for `y` (from
    /// `b2`, at P0 and P2), `Y` being `−Σ_s w_s·b2_s`. An entry sums `2^t ≥ 4` slots and a
    /// record's width `m` is a power of two, so no group of four crosses an entry or an output.
    fn bit_entries(&self, l: usize, scratch: &mut Scratch) {
        let held = held(self.me);
        let Shape { rec, first, m, outputs, .. } = self.shape(l);
        let Some(bits) = &rec.bits else { return };
        let step = self.w.len();
        scratch.reset(self.entries_per_column());
        let tx = &self.bit_tables[self.cols[l].rec];
        for slot in (0..outputs * m).step_by(GROUP) {
            let i = slot / step;
            let idx = first * m + slot;
            if held[ONE] {
                let p = bits.b1.nibble(idx);
                if p != 0 {
                    scratch.x[i][ONE].add_assign(&tx[slot / GROUP * SUBSETS + p]);
                }
            }
            if held[TWO] {
                let p = bits.b2.nibble(idx);
                if p != 0 {
                    let q = slot % step / GROUP;
                    scratch.y[i][TWO].sub_assign(&self.y_table[q * SUBSETS + p]);
                }
            }
        }
    }
}

impl Columns {
    /// [`Columns::entry_halves`] of consecutive columns `cols` of one record of bit products
    /// at P0, from the subset-sum tables. Of P0's components only `[r_X]_1` (from `b1`) and
    /// `[r_Y]_2` (from `b2`) are nonzero, so its local part
    /// `([r_X]_1 + [r_X]_2)·([r_Y]_1 + [r_Y]_2)` is `[r_X]_1·[r_Y]_2`, and a column's two sums
    /// are inner products of those components alone. The columns of a record share their
    /// tables (slot by slot), so the block goes through them a group of four slots at a time
    /// and every column takes its entry from the group's table while it is in cache: a
    /// column alone would read its record's tables (2 KiB per slot) from memory at every
    /// reduction. `y` is summed without its sign (`[r_Y]_2 = −Σ_s w_s·b2_s`), which both
    /// sums take at the end.
    fn bit_block_halves(&self, cols: Range<usize>, scratch: &mut Scratch) -> Vec<[Gr; 2]> {
        let r = self.cols[cols.start].rec;
        let (rec, tx) = (&self.recs[r], &self.bit_tables[r]);
        let Some(bits) = &rec.bits else { return vec![[Gr::ZERO; 2]; cols.len()] };
        let (m, step, entries) = (width(rec), self.w.len(), self.entries_per_column());
        let shapes: Vec<(usize, usize)> =
            cols.clone().map(|l| (self.shape(l).first, self.shape(l).outputs)).collect();
        let Scratch { flat_x: x, flat_y: y, ls, rs, .. } = scratch;
        for v in [&mut *x, &mut *y] {
            v.clear();
            v.resize(cols.len() * entries, Gr::ZERO);
        }
        let slots = shapes.iter().map(|&(_, outputs)| outputs * m).max().unwrap_or(0);
        for slot in (0..slots).step_by(GROUP) {
            let i = slot / step;
            let (tq, yq) = (&tx[slot / GROUP * SUBSETS..], &self.y_table[slot % step / GROUP * SUBSETS..]);
            for (c, &(first, outputs)) in shapes.iter().enumerate() {
                if slot >= outputs * m {
                    continue;
                }
                let idx = first * m + slot;
                let p = bits.b1.nibble(idx);
                if p != 0 {
                    x[c * entries + i].add_assign(&tq[p]);
                }
                let p = bits.b2.nibble(idx);
                if p != 0 {
                    y[c * entries + i].add_assign(&yq[p]);
                }
            }
        }
        let pairs = entries / 2;
        (0..cols.len())
            .map(|c| {
                let (x, y) = (&x[c * entries..(c + 1) * entries], &y[c * entries..(c + 1) * entries]);
                ls.clear();
                rs.clear();
                ls.extend((0..pairs).map(|i| x[2 * i]));
                rs.extend((0..pairs).map(|i| y[2 * i]));
                ls.extend((0..pairs).map(|i| x[2 * i + 1].sub(&x[2 * i])));
                rs.extend((0..pairs).map(|i| y[2 * i + 1].sub(&y[2 * i])));
                let even = Gr::inner_product(&ls[..pairs], &rs[..pairs]);
                let diff = Gr::inner_product(&ls[pairs..], &rs[pairs..]);
                [Gr::ZERO.sub(&even), Gr::ZERO.sub(&diff)]
            })
            .collect()
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
    /// One component per entry ([`Columns::bit_entry_halves`]), and the two sums' factors.
    flat_x: Vec<Gr>,
    flat_y: Vec<Gr>,
    ls: Vec<Gr>,
    rs: Vec<Gr>,
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

fn diff(a: &Entry, b: &Entry) -> Entry {
    [a[0].sub(&b[0]), a[1].sub(&b[1]), a[2].sub(&b[2])]
}

/// The components a party holds of `entries`, as a [`GrVec`].
fn entry_vec(held: &[bool; 3], entries: Vec<Entry>) -> GrVec {
    let pick = |c: usize| if held[c] { entries.iter().map(|e| e[c]).collect() } else { vec![] };
    GrVec { m: pick(M), one: pick(ONE), two: pick(TWO) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::{BitProducts, Bits, Recorded, Terms};
    use crate::share::{Masked, Pair};
    use std::sync::Arc;
    use veil_crypto::Seed;

    fn words(g: &mut Prg, n: usize, held: bool) -> Vec<u64> {
        if held { (0..n).map(|_| g.next_u64()).collect() } else { vec![] }
    }

    /// This party's view of a random masked vector of `n` values.
    fn masked(g: &mut Prg, me: usize, n: usize) -> Masked {
        let h = held(me);
        Masked { m: words(g, n, h[M]), r: Pair { one: words(g, n, h[ONE]), two: words(g, n, h[TWO]) }, n }
    }

    fn record(g: &mut Prg, me: usize, outputs: usize, terms: Terms, twin: bool) -> Recorded {
        let len = match terms {
            Terms::Inner { len } => len,
            _ => 1,
        };
        Recorded {
            x: masked(g, me, outputs * len).into(),
            y: masked(g, me, outputs * len).into(),
            z: masked(g, me, outputs).into(),
            terms,
            twin: twin.then(|| (masked(g, me, outputs * len).into(), masked(g, me, outputs).into())),
            bits: None,
        }
    }

    /// A truncation pair's record of `outputs` pairs of 64 bit products.
    fn bit_record(g: &mut Prg, me: usize, outputs: usize) -> Recorded {
        let bits = |g: &mut Prg, keep: bool| -> Bits {
            if keep {
                Bits::from_each(&(0..outputs * 64).map(|_| (g.next_u64() & 1) as u8).collect::<Vec<_>>())
            } else {
                Bits::default()
            }
        };
        let b = BitProducts {
            len: 64,
            w: words(g, 64, true),
            w2: words(g, 64, true),
            b1: bits(g, me != 2),
            b2: bits(g, me != 1),
        };
        Recorded {
            x: Arc::default(),
            y: Arc::default(),
            z: masked(g, me, outputs).into(),
            terms: Terms::Inner { len: 64 },
            twin: Some((Arc::default(), masked(g, me, outputs).into())),
            bits: Some(b),
        }
    }

    #[test]
    fn both_ways_to_sum_a_reduction_agree_at_every_step() {
        for me in 0..3 {
            let mut g = Prg::new(&Seed([me as u8; 16]));
            let recs = [
                record(&mut g, me, 37, Terms::Inner { len: 24 }, true),
                record(&mut g, me, 50, Terms::Elementwise, false),
                record(&mut g, me, 9, Terms::Inner { len: 100 }, false),
                bit_record(&mut g, me, 21),
            ];
            let mut columns = Columns::new(me, recs.to_vec(), &mut Prg::new(&Seed([9; 16]))).unwrap();
            let mut bilinear_used = 0;
            for _ in 0..6 {
                let entries = columns.local_halves_by(Some(Way::Entries));
                assert_eq!(
                    columns.local_halves_by(Some(Way::Bilinear)),
                    entries,
                    "party {me}, step {}",
                    columns.w.len()
                );
                assert_eq!(columns.local_halves(), entries);
                // The columns P1 and P2 skip: their parts computed from the entries are 0.
                for l in (0..columns.cols.len()).filter(|&l| columns.vanishes(l)) {
                    let sums = columns.entry_halves(l, &mut Scratch::default());
                    assert_eq!(sums, [Gr::ZERO; 2], "party {me}, column {l}");
                }
                bilinear_used += (0..columns.cols.len()).filter(|&l| columns.within_outputs(l)).count();
                columns.fold(&Gr::random(&mut g));
            }
            assert!(bilinear_used > 0);
        }
    }

    #[test]
    fn the_bit_tables_give_the_entries_term_by_term() {
        for me in 0..3 {
            let mut g = Prg::new(&Seed([7 + me as u8; 16]));
            let recs = [bit_record(&mut g, me, 5), record(&mut g, me, 40, Terms::Elementwise, false)];
            let mut columns = Columns::new(me, recs.to_vec(), &mut Prg::new(&Seed([1; 16]))).unwrap();
            let mut tabled = 0;
            while columns.entries_per_column() >= 1 && columns.w.len() <= columns.slots {
                for l in 0..columns.cols.len() {
                    let (mut by_table, mut by_term) = (Scratch::default(), Scratch::default());
                    columns.entries(l, &mut by_table);
                    columns.term_entries(l, &mut by_term);
                    assert_eq!(by_table.x, by_term.x, "party {me}, step {}, column {l}", columns.w.len());
                    assert_eq!(by_table.y, by_term.y, "party {me}, step {}, column {l}", columns.w.len());
                    if columns.entries_per_column() >= 2 {
                        assert_eq!(
                            columns.entry_halves(l, &mut by_table),
                            columns.all_entry_halves(l, &mut by_term),
                            "party {me}, step {}, column {l}",
                            columns.w.len()
                        );
                    }
                    tabled += usize::from(!columns.bit_tables[columns.cols[l].rec].is_empty());
                }
                if columns.w.len() == columns.slots {
                    break;
                }
                columns.fold(&Gr::random(&mut g));
            }
            assert!(tabled > 0, "party {me}: no column went through the tables");
        }
    }
}
