//! A pair of lazy halvings from one pass over the recorded terms ([`crate::verify`],
//! "Pipelined halvings"). Once an entry spans more slots than the bilinear ways take
//! ([`BILINEAR_STEP`]), a lazy step forms every entry from the recorded words, one pass over
//! all the terms. The pair's second step needs its sums as polynomials in the first step's
//! pending `ζ`, from the entries under the current weights at three weightings
//! ([`Columns::local_poly`]); those entries are the first step's own. So the two steps are
//! computed together: each column's entries are formed once, and the first step's sums and
//! the second's come from eight sums of products per four entries
//! ([`crate::claims::group_sums`]) instead of a pass for each step. The cost is two products
//! per four entries more than the two steps one after the other, and one pass over the terms
//! less. Against the pair's second step from a pass of its own (three weightings' entries
//! formed again, ten products per four entries) it saves the pass and two products: LeNet at
//! batch 30 with [`crate::Pairing::Always`], same sitting on two Zen 1 cores, verifies in
//! 4.86–4.88 s instead of 5.15–5.25 s (CPU 10.4–10.5 s instead of 11.0–11.2 s), 14 rounds
//! either way. Against two steps one after the other it pays only where the pass is long
//! against the entries: with every such pair taken by the default, LeNet at batch 30 took 18
//! rounds instead of 22 but 3.96–4.07 s instead of 3.85–3.91 s (P0's bit products, whose
//! entries come cheaply from the tables, pay the two products more and gain little from the
//! pass), so the default ([`crate::Pairing::WhereCheap`]) takes them from
//! `ONE_PASS_CHEAP` slots per entry on (20 rounds, no slower).

use rayon::prelude::*;
use veil_ring::Gr;

use super::{BILINEAR_STEP, Columns, Scratch, Way};
use crate::claims::{entry_group_sums, monomials};

/// A step's two sums and the next step's three weightings' two sums.
type PairSums = ([Gr; 2], [[Gr; 2]; 3]);

fn add_pair(a: PairSums, b: PairSums) -> PairSums {
    let add2 = |x: [Gr; 2], y: [Gr; 2]| [x[0].add(&y[0]), x[1].add(&y[1])];
    (add2(a.0, b.0), std::array::from_fn(|k| add2(a.1[k], b.1[k])))
}

fn zero_pair() -> PairSums {
    ([Gr::ZERO; 2], [[Gr::ZERO; 2]; 3])
}

impl Columns {
    /// Whether the next two steps go as one pass ([`Columns::local_pair`]): both are lazy
    /// and the second one's entries span more than [`BILINEAR_STEP`] slots.
    pub(crate) fn pairs_in_one_pass(&self, materialize_at: usize) -> bool {
        self.folds_lazily_next(materialize_at) && 2 * self.w.len() > BILINEAR_STEP
    }

    /// This party's local parts of the next step's two sums and of the step after it as
    /// polynomials in the next `ζ` ([`Columns::local_poly`]'s six), in one pass where the
    /// columns go by their entries. A column the next step takes by a bilinear way keeps it,
    /// and its part of the step after comes from its entries, as in [`Columns::local_poly`].
    pub(crate) fn local_pair(&mut self) -> ([Gr; 2], [Gr; 6]) {
        debug_assert!(2 * self.w.len() > BILINEAR_STEP);
        let pairs = self.weight_pairs();
        let wws: Vec<Vec<Gr>> = pairs.iter().cloned().collect();
        let bilinear = pairs.is_some();
        let (mut by_entries, mut by_bilinear) = (vec![], vec![]);
        for l in (0..self.cols.len()).filter(|&l| !self.vanishes(l)) {
            match self.cheaper_way(l, bilinear) {
                Way::Entries if self.tabled_at_p0(l) => {}
                Way::Entries => by_entries.push(l),
                Way::Bilinear => by_bilinear.push(l),
            }
        }
        // The first step's bilinear columns (P0's bit columns by output slot too); their part
        // of the second step from their entries.
        let first_bilinear = self.sums_by(None, &wws, 1, false)[0];
        let second_bilinear = self.quad_sums(&by_bilinear);
        let blocks = self.bit_blocks(None, bilinear);
        let by_column = by_entries
            .par_iter()
            .fold(
                || (Scratch::default(), zero_pair()),
                |(mut scratch, acc), &l| {
                    self.entries(l, &mut scratch);
                    let sums = entry_group_sums(self.me, &scratch.x, &scratch.y);
                    (scratch, add_pair(acc, self.times_b(l, sums)))
                },
            )
            .map(|(_, acc)| acc)
            .reduce(zero_pair, add_pair);
        let by_block = blocks
            .par_iter()
            .map_init(Scratch::default, |scratch, cols| {
                let sums = self.bit_block_pair(cols.clone(), scratch);
                cols.clone().zip(sums).fold(zero_pair(), |acc, (l, s)| add_pair(acc, self.times_b(l, s)))
            })
            .reduce(zero_pair, add_pair);
        let (first, second) = add_pair(by_column, by_block);
        let add2 = |x: [Gr; 2], y: [Gr; 2]| [x[0].add(&y[0]), x[1].add(&y[1])];
        let first = add2(first, first_bilinear);
        let both: [[Gr; 2]; 3] = std::array::from_fn(|k| add2(second[k], second_bilinear[k]));
        (first, monomials(both[0], both[1], both[2]))
    }

    /// Column `l`'s sums times its coefficient `b_l`.
    fn times_b(&self, l: usize, (first, second): PairSums) -> PairSums {
        let b = &self.b[l];
        let times = |s: [Gr; 2]| [b.mul(&s[0]), b.mul(&s[1])];
        (times(first), second.map(times))
    }
}
