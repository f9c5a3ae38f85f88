//! The lazy reductions against the entry-by-entry sums, every way and step.

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

/// A truncation pair's record of `outputs` pairs of `len` bit products.
fn bit_record(g: &mut Prg, me: usize, outputs: usize, len: usize) -> Recorded {
    let bits = |g: &mut Prg, keep: bool| -> Bits {
        if keep {
            Bits::from_each(&(0..outputs * len).map(|_| (g.next_u64() & 1) as u8).collect::<Vec<_>>())
        } else {
            Bits::default()
        }
    };
    let b = BitProducts {
        len,
        w: words(g, len, true),
        w2: words(g, len, true),
        b1: bits(g, me != 2),
        b2: bits(g, me != 1),
    };
    Recorded {
        x: Arc::default(),
        y: Arc::default(),
        z: masked(g, me, outputs).into(),
        terms: Terms::Inner { len },
        twin: Some((Arc::default(), masked(g, me, outputs).into())),
        bits: Some(b),
    }
}

/// One record of each shape: inner products with a twin, elementwise products, long inner
/// products, and truncation pairs' bit products of 64 and of 32 bits (a mask whose low part
/// comes from seeds).
/// A party's columns of [`mixed_records`] drawn from `seed`, and the generator, to go on with.
fn mixed_columns(me: usize, seed: u8) -> (Prg, Columns) {
    let mut g = Prg::new(&Seed([seed; 16]));
    let recs = mixed_records(&mut g, me);
    let columns = Columns::new(me, recs.to_vec(), &mut Prg::new(&Seed([9; 16]))).unwrap();
    (g, columns)
}

fn mixed_records(g: &mut Prg, me: usize) -> [Recorded; 5] {
    [
        record(g, me, 37, Terms::Inner { len: 24 }, true),
        record(g, me, 50, Terms::Elementwise, false),
        record(g, me, 9, Terms::Inner { len: 100 }, false),
        bit_record(g, me, 21, 64),
        bit_record(g, me, 13, 32),
    ]
}

#[test]
fn both_ways_to_sum_a_reduction_agree_at_every_step() {
    for me in 0..3 {
        let (mut g, mut columns) = mixed_columns(me, me as u8);
        let (mut bilinear_used, mut narrow_bit_words) = (0, 0);
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
            narrow_bit_words += (0..columns.cols.len())
                .filter(|&l| columns.bit_bilinear_at_p0(l) && width(&columns.recs[columns.cols[l].rec]) == 32)
                .count();
            columns.fold(&Gr::random(&mut g));
        }
        assert!(bilinear_used > 0);
        assert_eq!(narrow_bit_words > 0, me == 0, "party {me}: P0 sums 32-bit words by output");
    }
}

#[test]
fn the_bit_tables_give_the_entries_term_by_term() {
    for me in 0..3 {
        let mut g = Prg::new(&Seed([7 + me as u8; 16]));
        let recs = [
            bit_record(&mut g, me, 5, 64),
            bit_record(&mut g, me, 3, 32),
            record(&mut g, me, 40, Terms::Elementwise, false),
        ];
        let mut columns = Columns::new(me, recs.to_vec(), &mut Prg::new(&Seed([1; 16]))).unwrap();
        let mut tabled = 0;
        while columns.entries_per_column() >= 1 && columns.w.len() <= columns.slots {
            // As materializing builds them at P1 and P2.
            columns.retable(true);
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

/// The next reduction's sums as polynomials in the pending `ζ`, evaluated at `ζ`, equal the
/// sums once the claim is folded at `ζ`, at every party and step (both ways, the bit tables
/// and the bilinear accumulators among them), and the weights are left as they were.
#[test]
fn the_polynomials_of_the_next_sums_match_them_after_the_fold() {
    for me in 0..3 {
        let (mut g, mut columns) = mixed_columns(me, 20 + me as u8);
        let mut steps = 0;
        while columns.entries_per_column() >= 4 {
            let before = columns.local_halves();
            let poly = columns.local_poly();
            assert_eq!(columns.local_halves(), before, "party {me}: the weights changed");
            let zeta = Gr::random(&mut g);
            columns.fold(&zeta);
            let want = columns.local_halves();
            for (s, sum) in want.iter().enumerate() {
                let c = &poly[3 * s..3 * s + 3];
                let at = c[0].add(&zeta.mul(&c[1])).add(&zeta.mul(&zeta).mul(&c[2]));
                assert_eq!(&at, sum, "party {me}, step {}, sum {s}", columns.w.len());
            }
            steps += 1;
        }
        assert!(steps >= 5, "party {me}: {steps} steps");
    }
}

/// A pair of steps from one pass ([`Columns::local_pair`]) gives the first step's sums and
/// the second step's polynomials exactly as the two computed apart do, at every party and at
/// every step where it applies (P0's bit blocks from the tables among them).
#[test]
fn a_pair_of_steps_in_one_pass_matches_the_steps_apart() {
    for me in 0..3 {
        let (mut g, mut columns) = mixed_columns(me, 40 + me as u8);
        let (mut checked, mut blocks) = (0, 0);
        while columns.entries_per_column() >= 4 {
            if 2 * columns.w.len() > BILINEAR_STEP {
                let (first, second) = columns.local_pair();
                assert_eq!(first, columns.local_halves(), "party {me}, step {}", columns.w.len());
                assert_eq!(second, columns.local_poly(), "party {me}, step {}", columns.w.len());
                blocks += columns.bit_blocks(None, columns.weight_pairs().is_some()).len();
                checked += 1;
            }
            columns.fold(&Gr::random(&mut g));
        }
        assert!(checked >= 2, "party {me}: {checked} steps");
        assert_eq!(blocks > 0, me == 0, "party {me}: P0's bit blocks from the tables");
    }
}
