//! Π_Softmax against the float softmax; rows sum to 1; the causal mask.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::mac::{MacBatch, Macs};
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mosformer::softmax;
use veil_mosformer::triples::Sacrifice;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Ring, Z2k, Z16, Z32, Z64, Z128};
use veil_tensor::Tensor;

const F: u32 = 12;

/// The mixed-ring plan's softmax: the reciprocal comparing in Z_2^32, Max and Exp in Z_2^16
/// (Max at 6 fractional bits).
fn run(xs: &[f64], rows: usize, k: usize, mask: Option<Vec<bool>>, seed: u64) -> Vec<f64> {
    run_with::<Z32, Z16>(xs, rows, k, mask, seed, F, F - 6)
}

/// Softmax with every comparison in `R` at `f` fractional bits.
fn run_in<R: Sacrifice>(
    xs: &[f64],
    rows: usize,
    k: usize,
    mask: Option<Vec<bool>>,
    seed: u64,
    f: u32,
) -> Vec<f64> {
    run_with::<R, R>(xs, rows, k, mask, seed, f, 0)
}

/// Softmax with the reciprocal comparing in `R`, Max and Exp in `C`, Max `cmp_shift` bits
/// coarser than `f`.
fn run_with<R: Sacrifice, C: Sacrifice>(
    xs: &[f64],
    rows: usize,
    k: usize,
    mask: Option<Vec<bool>>,
    seed: u64,
    f: u32,
    cmp_shift: u32,
) -> Vec<f64> {
    let scale = f64::from(1u32 << f);
    let raw: Vec<Z64> = xs.iter().map(|&v| Z64::from_i64((v * scale).round() as i64)).collect();
    let out = all_ok(simulate(3, seed, |ctx| {
        let x = Tensor::new(vec![rows, k], raw.clone())?;
        let s = share_input(ctx, 1, (ctx.party() == 1).then_some(&x), &[rows, k])?;
        let one = random_one::<Z128>(ctx)?;
        let alpha = mac_key::<Z128>(ctx)?;
        let keys = softmax::setup::<R, C, Z128>(ctx, rows, k, f)?;
        let mut batch = MacBatch::new();
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut batch };
        let z = softmax::softmax(ctx, keys, &mut Offline::new(), &s, mask.as_deref(), f, cmp_shift, macs)?;
        batch.check(ctx, &alpha, 64, "softmax")?;
        open_all(ctx, &z)
    }))
    .unwrap();
    out[0].data().iter().map(|v| v.to_signed() as f64 / scale).collect()
}

fn reference(xs: &[f64], keep: impl Fn(usize) -> bool) -> Vec<f64> {
    let m = xs.iter().enumerate().filter(|(j, _)| keep(*j)).map(|(_, v)| *v).fold(f64::MIN, f64::max);
    let e: Vec<f64> = xs.iter().enumerate().map(|(j, v)| if keep(j) { (v - m).exp() } else { 0.0 }).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

#[test]
fn rows_match_the_float_softmax_and_sum_to_one() {
    let (rows, k) = (4, 7);
    let xs: Vec<f64> = (0..rows * k).map(|i| ((i * 37 % 23) as f64 - 11.0) * 0.7).collect();
    let got = run(&xs, rows, k, None, 1);
    assert_rows_match(&got, &xs, k, 0.02, 0.01);
}

/// Every unmasked row of `got` sums to 1 within `sum_tol` and each entry is within `tol` of
/// the float softmax of the same row of `xs`.
fn assert_rows_match(got: &[f64], xs: &[f64], k: usize, sum_tol: f64, tol: f64) {
    for (r, (row, x)) in got.chunks(k).zip(xs.chunks(k)).enumerate() {
        let want = reference(x, |_| true);
        let sum: f64 = row.iter().sum();
        assert!((sum - 1.0).abs() < sum_tol, "row {r} sums to {sum}");
        for (j, (g, w)) in row.iter().zip(&want).enumerate() {
            assert!((g - w).abs() < tol, "row {r} col {j}: {g} vs {w}");
        }
    }
}

/// Without modulus conversion (comparisons in Z_2^64, f = 16), with and without a mask.
#[test]
fn rows_match_the_float_softmax_in_z64_at_16_bits() {
    let (rows, k) = (3, 6);
    let xs: Vec<f64> = (0..rows * k).map(|i| ((i * 37 % 23) as f64 - 11.0) * 0.9).collect();
    let mask: Vec<bool> = (0..rows * k).map(|i| i % k > i / k + 2).collect();
    for (m, seed) in [(None, 5), (Some(mask.clone()), 6)] {
        let got = run_in::<Z64>(&xs, rows, k, m.clone(), seed, 16);
        for r in 0..rows {
            let keep = |j: usize| m.as_ref().is_none_or(|m| !m[r * k + j]);
            let want = reference(&xs[r * k..(r + 1) * k], keep);
            for j in 0..k {
                assert!(
                    (got[r * k + j] - want[j]).abs() < 0.005,
                    "row {r}: {} vs {}",
                    got[r * k + j],
                    want[j]
                );
            }
        }
    }
}

#[test]
fn causal_mask() {
    let (rows, k) = (4, 4);
    let xs: Vec<f64> = (0..16).map(|i| (i as f64) * 0.5 - 3.0).collect();
    let mask: Vec<bool> = (0..16).map(|i| i % k > i / k).collect();
    let got = run(&xs, rows, k, Some(mask.clone()), 2);
    for r in 0..rows {
        let want = reference(&xs[r * k..(r + 1) * k], |j| j <= r);
        for j in 0..k {
            let g = got[r * k + j];
            if mask[r * k + j] {
                assert_eq!(g, 0.0);
            } else {
                assert!((g - want[j]).abs() < 0.01, "row {r} col {j}: {g} vs {}", want[j]);
            }
        }
    }
}

/// The mixed plan's Max compares at 6 fractional bits: near ties (entries within 2^-6 of the
/// row's maximum, where it may keep a smaller one) and rows spread up to 400 (inside the plan's
/// 512) still give the float softmax, and no Exp input goes above 0 (it would read a wrong
/// table entry: a row far from summing to 1).
#[test]
fn near_ties_and_wide_rows_with_coarse_comparisons() {
    let k = 32;
    let mut xs: Vec<f64> = (0..k).map(|j| 2.0 + (j % 7) as f64 * 0.004).collect();
    xs.extend((0..k).map(|j| if j == 5 { 200.0 } else { -200.0 + j as f64 * 0.25 }));
    xs.extend((0..k).map(|j| 1.0 - (j % 3) as f64 * 0.003 + if j == 31 { 0.01 } else { 0.0 }));
    // Rows of near ties: every pair of entries within 2^-6 (0.0156) of each other.
    for r in 0..60 {
        xs.extend((0..k).map(|j| 0.5 + ((j * 7 + r) % 11) as f64 * 0.0014));
    }
    let rows = xs.len() / k;
    let got = run(&xs, rows, k, None, 9);
    // 32 entries of about 1/32 each, every one a few units of 2^-12 off (the reciprocal's
    // precision: with every comparison in Z_2^32 these rows sum to 0.961 .. 1.024).
    assert_rows_match(&got, &xs, k, 0.05, 0.01);
}
