//! Π_Softmax against the float softmax; rows sum to 1; the causal mask.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::mac::MacBatch;
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mosformer::softmax;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Ring, Z2k, Z32, Z64};
use veil_tensor::Tensor;

const F: u32 = 12;

fn run(xs: &[f64], rows: usize, k: usize, mask: Option<Vec<bool>>, seed: u64) -> Vec<f64> {
    let raw: Vec<Z64> = xs.iter().map(|&v| Z64::from_i64((v * 4096.0).round() as i64)).collect();
    let out = all_ok(simulate(3, seed, |ctx| {
        let x = Tensor::new(vec![rows, k], raw.clone())?;
        let s = share_input(ctx, 1, (ctx.party() == 1).then_some(&x), &[rows, k])?;
        let one = random_one::<Z64>(ctx)?;
        let alpha = mac_key::<Z64>(ctx)?;
        let keys = softmax::setup::<Z32, Z64>(ctx, rows, k)?;
        let mut batch = MacBatch::new();
        let z = softmax::softmax(
            ctx,
            keys,
            &mut Offline::new(),
            &s,
            mask.as_deref(),
            F,
            &one,
            &alpha,
            &mut batch,
        )?;
        batch.check(ctx, &alpha, 32, "softmax")?;
        open_all(ctx, &z)
    }))
    .unwrap();
    out[0].data().iter().map(|v| v.to_signed() as f64 / 4096.0).collect()
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
    for r in 0..rows {
        let want = reference(&xs[r * k..(r + 1) * k], |_| true);
        let row = &got[r * k..(r + 1) * k];
        let sum: f64 = row.iter().sum();
        assert!((sum - 1.0).abs() < 0.02, "row {r} sums to {sum}");
        for j in 0..k {
            assert!((row[j] - want[j]).abs() < 0.01, "row {r}: {} vs {}", row[j], want[j]);
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
