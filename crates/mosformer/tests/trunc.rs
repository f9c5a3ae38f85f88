//! Truncation by public divisors against plaintext floor division.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::input::share_input;
use veil_mosformer::open::open_all;
use veil_mosformer::triples::InsecureRssDealer;
use veil_mosformer::trunc::trunc;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Z2k, Z32, Z64};
use veil_tensor::Tensor;

/// Truncates `xs` (signed values) by `d` in ring `R`; returns (number of results off by more
/// than one unit, bytes sent per party).
fn run<R: Z2k>(xs: &[i64], d: u64, seed: u64) -> (usize, Vec<u64>) {
    let x = Tensor::new(vec![xs.len()], xs.iter().map(|&v| R::from_i64(v)).collect()).unwrap();
    let out = all_ok(simulate(3, seed, |ctx| {
        let s = share_input(ctx, 0, (ctx.party() == 0).then_some(&x), x.shape())?;
        let before = ctx.stats().current();
        let t = trunc(ctx, &mut InsecureRssDealer::new(), &s, d)?;
        let bytes = ctx.stats().current().since(&before).bytes_sent;
        Ok((open_all(ctx, &t)?, bytes))
    }))
    .unwrap();
    let got = &out[0].0;
    let bad = xs
        .iter()
        .zip(got.data())
        .filter(|(v, g)| {
            let want = i128::from(**v).div_euclid(i128::from(d));
            let diff = g.to_signed() - want;
            !(diff == 0 || diff == -1)
        })
        .count();
    (bad, out.iter().map(|o| o.1).collect())
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
    // Z_2^64 with f = 16 and |x| < 2^40: wrap probability 2^-24 per element.
    let (bad, bytes) = run::<Z64>(&edge_and_random(1 << 40, 500, 1), 1 << 16, 1);
    assert_eq!(bad, 0);
    assert!(bytes.iter().all(|&b| b == (509 * 8 + 32) as u64));
    // Z_2^32 with f = 12 and |x| < 2^16: wrap probability 2^-16.
    let (bad, _) = run::<Z32>(&edge_and_random(1 << 16, 500, 2), 1 << 12, 2);
    assert_eq!(bad, 0);
}

#[test]
fn other_public_divisors() {
    // round(ln2 · 2^16), a LayerNorm row length, and ⌊√64⌋.
    for (d, seed) in [(45426u64, 3u64), (768, 4), (8, 5), (1, 6), (3, 7)] {
        let (bad, _) = run::<Z64>(&edge_and_random(1 << 40, 300, seed), d, seed);
        assert_eq!(bad, 0, "divisor {d}");
    }
}

#[test]
fn wrap_failures_stay_within_their_probability() {
    // |x| up to 2^22 in Z_2^32: a failure needs the mask within |x| of the signed boundary,
    // probability |x|/2^32 ≤ 2^-10 per element, about 2 expected in 4000 (mean |x| is 2^21).
    let (bad, _) = run::<Z32>(&edge_and_random(1 << 22, 4000, 8), 1 << 12, 8);
    assert!(bad <= 12, "{bad} wrap failures in 4000");
}

#[test]
fn division_by_zero_is_an_error() {
    let res = simulate(3, 9, |ctx| {
        let s = veil_mosformer::rss::Rss::<Z64>::zeros(&[2]);
        trunc(ctx, &mut InsecureRssDealer::new(), &s, 0)
    });
    assert!(res.iter().all(|r| r.as_ref().unwrap_err().to_string().contains("truncation by 0")));
}
