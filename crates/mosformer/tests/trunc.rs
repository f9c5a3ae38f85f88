//! Truncation by public divisors against plaintext floor division.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::input::share_input;
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mosformer::trunc::trunc;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Z2k, Z32, Z64};
use veil_tensor::Tensor;

/// Truncates `xs` (signed values) by `d` in ring `R`; returns (number of results outside
/// `⌊x/d⌋ + [-1, 2]`, bytes sent per party, mean error in units).
fn run<R: Z2k>(xs: &[i64], d: u64, seed: u64) -> (usize, Vec<u64>, f64) {
    let x = Tensor::new(vec![xs.len()], xs.iter().map(|&v| R::from_i64(v)).collect()).unwrap();
    let out = all_ok(simulate(3, seed, |ctx| {
        let s = share_input(ctx, 0, (ctx.party() == 0).then_some(&x), x.shape())?;
        let before = ctx.stats().current();
        let t = trunc(ctx, &mut Offline::new(), &s, d)?;
        let bytes = ctx.stats().current().since(&before).bytes_sent;
        Ok((open_all(ctx, &t)?, bytes))
    }))
    .unwrap();
    let got = &out[0].0;
    let diffs: Vec<i128> = xs
        .iter()
        .zip(got.data())
        .map(|(v, g)| g.to_signed() - i128::from(*v).div_euclid(i128::from(d)))
        .collect();
    let bad = diffs.iter().filter(|d| !(-1..=2).contains(*d)).count();
    let mean = diffs.iter().sum::<i128>() as f64 / diffs.len() as f64;
    (bad, out.iter().map(|o| o.1).collect(), mean)
}

fn edge_and_random(bound: i64, n: usize, seed: u64) -> Vec<i64> {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    let mut g = StdRng::seed_from_u64(seed);
    let mut v = vec![0, 1, -1, 2, -2, bound - 1, -bound, bound / 2, -(bound / 2)];
    v.extend((0..n).map(|_| g.gen_range(-bound..bound)));
    v
}

#[test]
fn power_of_two_divisors() {
    let (bad, bytes, mean) = run::<Z64>(&edge_and_random(1 << 40, 500, 1), 1 << 16, 1);
    assert_eq!(bad, 0);
    assert!(bytes.iter().all(|&b| b == (509 * 8 + 32) as u64));
    // Error -1 + (carry of three uniform remainders, mean 1) + (carry of x's, mean 1/2).
    assert!((mean - 0.5).abs() < 0.15, "mean error {mean}");
    let (bad, _, _) = run::<Z32>(&edge_and_random(1 << 16, 500, 2), 1 << 12, 2);
    assert_eq!(bad, 0);
}

#[test]
fn other_public_divisors() {
    // round(ln2 · 2^16), a LayerNorm row length, and ⌊√64⌋.
    for (d, seed) in [(45426u64, 3u64), (768, 4), (8, 5), (1, 6), (3, 7)] {
        let (bad, _, _) = run::<Z64>(&edge_and_random(1 << 40, 300, seed), d, seed);
        assert_eq!(bad, 0, "divisor {d}");
    }
}

#[test]
fn exact_up_to_the_edges_of_the_valid_range() {
    // Valid: x ∈ [-2^{ℓ-3} + d, 2^{ℓ-3}); no wrap can happen anywhere in it.
    for (d, seed) in [(1u64 << 12, 8u64), (2839, 9)] {
        let lo = -(1i64 << 29) + d as i64;
        let hi = (1i64 << 29) - 1;
        let mut xs = vec![lo, lo + 1, hi, hi - 1, 0, -1];
        xs.extend(edge_and_random(1 << 29, 2000, seed).into_iter().filter(|v| (lo..=hi).contains(v)));
        let (bad, _, _) = run::<Z32>(&xs, d, seed);
        assert_eq!(bad, 0, "divisor {d}");
    }
    let edge = (1i64 << 61) - 1;
    let (bad, _, _) = run::<Z64>(&[edge, -edge + (1 << 16), 0, 7], 1 << 16, 10);
    assert_eq!(bad, 0);
}

#[test]
fn small_rings_are_refused() {
    // Z_2^16 leaves no room for the statistical mask: refused, not weakly masked.
    let res = simulate(3, 11, |ctx| {
        let s = veil_mosformer::rss::Rss::<veil_ring::Z16>::zeros(&[2]);
        trunc(ctx, &mut Offline::new(), &s, 4)
    });
    assert!(res.iter().all(|r| r.as_ref().unwrap_err().to_string().contains("at least 32 bits")));
}

#[test]
fn division_by_zero_is_an_error() {
    let res = simulate(3, 9, |ctx| {
        let s = veil_mosformer::rss::Rss::<Z64>::zeros(&[2]);
        trunc(ctx, &mut Offline::new(), &s, 0)
    });
    assert!(res.iter().all(|r| r.as_ref().unwrap_err().to_string().contains("truncation by 0")));
}

/// A source whose pairs are honest except that `cheater` holds a wrong copy of one of its
/// components (what a corrupted server deviating in its pair-known values amounts to).
struct WrongCopy {
    cheater: usize,
}

impl veil_mosformer::trunc::TruncPairSource<Z64> for WrongCopy {
    fn trunc_pair(
        &mut self,
        ctx: &mut veil_mpc::Ctx,
        shape: &[usize],
        d: u64,
    ) -> veil_mpc::Result<veil_mosformer::trunc::TruncPair<Z64>> {
        let mut p = veil_mosformer::trunc::pair_known_pair(ctx, shape, d)?;
        if ctx.party() == self.cheater {
            p.r.second.data_mut()[0] += Z64(1);
        }
        Ok(p)
    }
}

#[test]
fn a_wrong_copy_of_a_pair_component_aborts() {
    for cheater in 0..3 {
        let res = simulate(3, 12, |ctx| {
            let x = veil_mosformer::rss::Rss::<Z64>::zeros(&[4]);
            let t = trunc(ctx, &mut WrongCopy { cheater }, &x, 1 << 16)?;
            // The honest party that detects it leaves; the others fail on their next step.
            open_all(ctx, &t)
        });
        assert!(res.iter().all(|r| r.is_err()), "cheater {cheater}: {res:?}");
        assert!(res.iter().any(|r| matches!(r, Err(veil_mpc::MpcError::Abort { .. }))), "{res:?}");
    }
}
