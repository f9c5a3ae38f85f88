//! The values every family is checked on: the edges of `Z_2^64` read as signed integers, the
//! edges of a family's valid range, and random values, all derived from a seed so that every
//! party of a simulated session computes the same ones.

use rand::{Rng, SeedableRng, rngs::StdRng};
use veil_mpc::reference::FixedReference;

/// 0, ±1, the most negative and most positive values, the values around the wrap and a few
/// other powers of two.
pub fn ring_edges() -> Vec<i64> {
    vec![
        0,
        1,
        -1,
        2,
        -2,
        i64::MAX,
        i64::MIN,
        i64::MIN + 1,
        i64::MAX - 1,
        1 << 62,
        -(1 << 62),
        1 << 32,
        -(1 << 32),
    ]
}

/// `n` uniform values in `[-bound, bound)` (fixed-point units) from `seed`.
pub fn random(seed: u64, n: usize, bound: i64) -> Vec<i64> {
    let mut g = StdRng::seed_from_u64(seed);
    (0..n).map(|_| g.gen_range(-bound..bound)).collect()
}

/// ReLU inputs: every candidate edge (ring edges, and `±limit`, `±(limit − 1)` units around
/// the powers of two up to `2^40` fractional-bit units) that the family's clear ReLU accepts
/// without reporting it out of range, then random values in its range.
pub fn relu_inputs(reference: &dyn FixedReference, seed: u64, random_count: usize) -> Vec<i64> {
    let mut candidates = ring_edges();
    for bits in [8u32, 16, 20, 24, 25, 30, 40] {
        let v = 1i64 << bits;
        candidates.extend([v, v - 1, -v, -v + 1]);
    }
    let mut out: Vec<i64> =
        candidates.into_iter().filter(|&v| reference.relu(&[v]).excess.is_none()).collect();
    let bound = 1i64 << (reference.frac_bits() + 8);
    out.extend(
        random(seed, random_count, bound).into_iter().filter(|&v| reference.relu(&[v]).excess.is_none()),
    );
    out
}
