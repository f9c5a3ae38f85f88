//! P0's side of the truncation pairs' bit products in the lazy reductions ([`super`]'s "Terms
//! with no part"): the subset-sum tables of the public weights ([`crate::subsets`]), the
//! entries formed from them in blocks of columns that share the tables, and the choice of
//! which columns take that path. P1's and P2's parts of these columns are 0
//! (`Columns::vanishes`); the bilinear steps are `super::bilinear`'s `bit_bilinear`.

use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use veil_ring::Gr;

use super::{Columns, GROUP, ONE, SUBSETS, Scratch, Shape, TWO, Way, held, tables, width};
use crate::claims::{Recorded, group_sums};

/// Columns of bit products P0 sums together from their shared tables
/// ([`Columns::bit_block_halves`]).
const BIT_BLOCK: usize = 32;

/// Most bytes of subset-sum tables a party builds per reduction (beyond it, the bit products'
/// entries are summed term by term): VGG-16's 16 records of bit products at [`super::WIDE_SLOTS`]
/// slots take 128 MiB.
const TABLE_BUDGET: usize = 256 << 20;

impl Columns {
    /// Rebuilds the subset-sum tables of the bit products ([`crate::subsets`]) for the current
    /// reduction, where an entry sums at least four slots and the tables fit
    /// [`TABLE_BUDGET`]: at every reduction at P0, whose local parts of the lazy steps use them,
    /// and at P1 and P2 only when asked (`needed`: the claim is materialized), since their local
    /// parts of bit products vanish (building them at every step cost each 5–55 ms a step for
    /// LeNet at batch 30).
    pub(super) fn retable(&mut self, needed: bool) {
        self.bit_tables = vec![Arc::default(); self.recs.len()];
        self.y_table = vec![];
        if self.me != 0 && !needed {
            return;
        }
        let step = self.w.len();
        let tabled =
            |r: &Recorded| r.bits.is_some() && width(r).is_multiple_of(GROUP) && width(r).is_power_of_two();
        // Records of one weight class, width and bit weights have the same tables: every
        // truncation pair of a layer (and of the layers with the same shift) shares them.
        let key = |r: usize| {
            let bits = self.recs[r].bits.as_ref()?;
            Some((self.class[r], width(&self.recs[r]), &bits.w, &bits.w2))
        };
        let mut distinct: Vec<usize> = vec![];
        for r in (0..self.recs.len()).filter(|&r| tabled(&self.recs[r])) {
            if !distinct.iter().any(|&d| key(d) == key(r)) {
                distinct.push(r);
            }
        }
        let bytes = (distinct.len() * self.slots + step) / GROUP * SUBSETS * std::mem::size_of::<Gr>();
        if step < GROUP || distinct.is_empty() || bytes > TABLE_BUDGET {
            return;
        }
        let built: Vec<Arc<Vec<Gr>>> = distinct
            .iter()
            .map(|&r| {
                let bits = self.recs[r].bits.as_ref().unwrap_or_else(|| unreachable!());
                let (_, wx, gwx) = &self.weights[self.class[r]];
                let m = width(&self.recs[r]);
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
                Arc::new(tables(&k))
            })
            .collect();
        for r in (0..self.recs.len()).filter(|&r| tabled(&self.recs[r])) {
            if let Some(d) = distinct.iter().position(|&d| key(d) == key(r)) {
                self.bit_tables[r] = built[d].clone();
            }
        }
        self.y_table = tables(&self.w);
    }

    /// Whether P0 sums column `l` by [`Columns::bit_bilinear`] when the bilinear way is the
    /// cheaper: a truncation pair's bit products (a power of two from 8 to 64 per output, 32 or
    /// 64 in practice), both entries of a pair in one output.
    pub(super) fn bit_bilinear_at_p0(&self, l: usize) -> bool {
        let rec = &self.recs[self.cols[l].rec];
        self.me == 0 && rec.bits.is_some() && bit_word_width(width(rec)) && self.within_outputs(l)
    }

    /// The narrowest width of the records [`Columns::bit_bilinear`] may sum (its accumulators
    /// hold one set per output slot of such a column), or `None` without any.
    pub(super) fn narrowest_bit_width(&self) -> Option<usize> {
        self.recs.iter().filter(|r| r.bits.is_some()).map(width).filter(|&m| bit_word_width(m)).min()
    }

    /// Whether column `l` holds bit products whose entries P0 forms from the subset-sum
    /// tables ([`Columns::bit_block_halves`]).
    pub(super) fn tabled_at_p0(&self, l: usize) -> bool {
        self.me == 0 && !self.bit_tables[self.cols[l].rec].is_empty()
    }

    /// The columns [`Columns::local_halves_by`] sums by [`Columns::bit_block_halves`]: runs of
    /// up to [`BIT_BLOCK`] consecutive columns of one record.
    pub(super) fn bit_blocks(&self, forced: Option<Way>, pairs: bool) -> Vec<Range<usize>> {
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

    /// The two sums, times `b_l`, of the columns P0 takes through the tables this step
    /// ([`Columns::bit_blocks`]), block by block in parallel.
    pub(super) fn bit_block_sums(&self, forced: Option<Way>, pairs: bool) -> [Gr; 2] {
        let add = |x: [Gr; 2], y: [Gr; 2]| [x[0].add(&y[0]), x[1].add(&y[1])];
        self.bit_blocks(forced, pairs)
            .par_iter()
            .map_init(Scratch::default, |scratch, cols| {
                let halves = self.bit_block_halves(cols.clone(), scratch);
                halves
                    .iter()
                    .zip(&self.b[cols.clone()])
                    .fold([Gr::ZERO; 2], |s, (h, b)| add(s, [b.mul(&h[0]), b.mul(&h[1])]))
            })
            .reduce(|| [Gr::ZERO; 2], add)
    }

    /// [`Columns::entries`] of a column of bit products from the subset-sum tables: per
    /// four slots, one table entry for `x` (from `b1`, at P0 and P1) and one for `y` (from
    /// `b2`, at P0 and P2), `Y` being `−Σ_s w_s·b2_s`. An entry sums `2^t ≥ 4` slots and a
    /// record's width `m` is a power of two, so no group of four crosses an entry or an output.
    pub(super) fn bit_entries(&self, l: usize, scratch: &mut Scratch) {
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

    /// [`Columns::entry_halves`] of consecutive columns `cols` of one record of bit products
    /// at P0, from the subset-sum tables. Of P0's components only `[r_X]_1` (from `b1`) and
    /// `[r_Y]_2` (from `b2`) are nonzero, so its local part
    /// `([r_X]_1 + [r_X]_2)·([r_Y]_1 + [r_Y]_2)` is `[r_X]_1·[r_Y]_2`, and a column's two sums
    /// are inner products of those components alone. The columns of a record share their
    /// tables (slot by slot), so the block goes entry by entry, every column summing the
    /// entry's table picks in registers ([`Gr::sum_picked`]) while that entry's tables are in
    /// cache: a column alone would read its record's tables (2 KiB per slot) from memory at
    /// every reduction, and an accumulator per entry updated a group at a time would be read
    /// and written back at every pick. The entries are written with the evens first and the
    /// odds after them (then made `odd − even` in place), the two halves of the inner products.
    /// `y` is summed without its sign (`[r_Y]_2 = −Σ_s w_s·b2_s`), which both sums take at
    /// the end.
    pub(super) fn bit_block_halves(&self, cols: Range<usize>, scratch: &mut Scratch) -> Vec<[Gr; 2]> {
        let entries = self.entries_per_column();
        let pairs = entries / 2;
        if !self.fill_bit_block(cols.clone(), scratch, |i| i % 2 * pairs + i / 2) {
            return vec![[Gr::ZERO; 2]; cols.len()];
        }
        let Scratch { flat_x: x, flat_y: y, .. } = scratch;
        (0..cols.len())
            .map(|c| {
                let (x, y) = (&mut x[c * entries..(c + 1) * entries], &mut y[c * entries..(c + 1) * entries]);
                for v in [&mut *x, &mut *y] {
                    let (even, odd) = v.split_at_mut(pairs);
                    odd.iter_mut().zip(&*even).for_each(|(o, e)| o.sub_assign(e));
                }
                let even = Gr::inner_product(&x[..pairs], &y[..pairs]);
                let diff = Gr::inner_product(&x[pairs..], &y[pairs..]);
                [Gr::ZERO.sub(&even), Gr::ZERO.sub(&diff)]
            })
            .collect()
    }

    /// [`Columns::bit_block_halves`] of a pair of steps ([`crate::claims::group_sums`]): the
    /// first step's two sums and the next step's at its three weightings, per column of the
    /// block, from the entries in their order.
    pub(super) fn bit_block_pair(
        &self,
        cols: Range<usize>,
        scratch: &mut Scratch,
    ) -> Vec<([Gr; 2], [[Gr; 2]; 3])> {
        let entries = self.entries_per_column();
        if !self.fill_bit_block(cols.clone(), scratch, |i| i) {
            return vec![([Gr::ZERO; 2], [[Gr::ZERO; 2]; 3]); cols.len()];
        }
        let Scratch { flat_x: x, flat_y: y, .. } = scratch;
        // `y` was summed without its sign: each product is negated.
        let sum = |a: &[Gr], b: &[Gr]| Gr::ZERO.sub(&Gr::inner_product(a, b));
        (0..cols.len())
            .map(|c| {
                let span = c * entries..(c + 1) * entries;
                group_sums(&x[span.clone()], &y[span], sum)
            })
            .collect()
    }

    /// The entries of P0's components `[r_X]_1` and `−[r_Y]_2` (unsigned) of the block's
    /// columns into `flat_x`, `flat_y`, entry `i` of column `c` at `c·entries + at(i)`;
    /// `false` where the record holds no bits (nothing formed).
    fn fill_bit_block(&self, cols: Range<usize>, scratch: &mut Scratch, at: impl Fn(usize) -> usize) -> bool {
        let r = self.cols[cols.start].rec;
        let (rec, tx) = (&self.recs[r], &self.bit_tables[r]);
        let Some(bits) = &rec.bits else { return false };
        let (m, step, entries) = (width(rec), self.w.len(), self.entries_per_column());
        let shapes: Vec<(usize, usize)> =
            cols.clone().map(|l| (self.shape(l).first, self.shape(l).outputs)).collect();
        let Scratch { flat_x: x, flat_y: y, picks_x, picks_y, .. } = scratch;
        // Every entry is written below (zero where it has no slots), so buffers of the right
        // length from the block before are reused as they are.
        for v in [&mut *x, &mut *y] {
            if v.len() != cols.len() * entries {
                v.clear();
                v.resize(cols.len() * entries, Gr::ZERO);
            }
        }
        for i in 0..entries {
            let at = at(i);
            for (c, &(first, outputs)) in shapes.iter().enumerate() {
                let slots = i * step..((i + 1) * step).min(outputs * m);
                if slots.is_empty() {
                    x[c * entries + at] = Gr::ZERO;
                    y[c * entries + at] = Gr::ZERO;
                    continue;
                }
                picks_x.clear();
                picks_y.clear();
                for slot in slots.step_by(GROUP) {
                    let idx = first * m + slot;
                    let p = bits.b1.nibble(idx);
                    if p != 0 {
                        picks_x.push((slot / GROUP * SUBSETS + p) as u32);
                    }
                    let p = bits.b2.nibble(idx);
                    if p != 0 {
                        picks_y.push((slot % step / GROUP * SUBSETS + p) as u32);
                    }
                }
                x[c * entries + at].set_sum_picked(tx, picks_x);
                y[c * entries + at].set_sum_picked(&self.y_table, picks_y);
            }
        }
        true
    }
}

/// Whether an output's bit products fit one word of [`Columns::bit_bilinear`]: a power of two
/// from 8 to 64 (whole bytes of the packed bits).
fn bit_word_width(m: usize) -> bool {
    m.is_power_of_two() && (8..=64).contains(&m)
}
