//! Π_Exp against exp(x) on x ≤ 0.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::exp::{self, pow2_table};
use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::mac::MacBatch;
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Ring, Z2k, Z32, Z64};
use veil_tensor::Tensor;

const F: u32 = 12;

#[test]
fn table() {
    let t = pow2_table(F).unwrap();
    // 2^-i with f + 2 fractional bits; index 15 stands for z = -1.
    assert_eq!(&t[..3], &[16384, 8192, 4096]);
    assert_eq!(t[14], 1);
    assert_eq!(t[15], 32768);
    assert!(pow2_table(13).is_err());
}

#[test]
fn exp_of_non_positive_values() {
    let mut xs: Vec<f64> = (0..60).map(|i| -(i as f64) * 0.2).collect();
    xs.extend([-0.0001, -0.35, -0.693, -0.694, -1.0, -5.0, -8.3, -20.0, -100.0, -2.0f64.powi(20)]);
    // Inputs around the clip at z = f + 2 and at multiples of ln2, where the truncation's error
    // moves p furthest.
    for k in 1..=15 {
        let m = -(k as f64) * std::f64::consts::LN_2;
        xs.extend([m + 0.0003, m, m - 0.0003]);
    }
    let raw: Vec<Z64> = xs.iter().map(|&v| Z64::from_i64((v * 4096.0).round() as i64)).collect();
    let out = all_ok(simulate(3, 1, |ctx| {
        let n = raw.len();
        let x = Tensor::new(vec![n], raw.clone())?;
        let s = share_input(ctx, 0, (ctx.party() == 0).then_some(&x), &[n])?;
        let one = random_one::<Z64>(ctx)?;
        let alpha = mac_key::<Z64>(ctx)?;
        let keys = exp::setup::<Z32, Z64>(ctx, n)?;
        let mut batch = MacBatch::new();
        let e = exp::exp(ctx, keys, &mut Offline::new(), &s, F, &one, &alpha, &mut batch)?;
        batch.check(ctx, &alpha, 32, "exp")?;
        open_all(ctx, &e)
    }))
    .unwrap();
    let mut worst: f64 = 0.0;
    for (k, x) in xs.iter().enumerate() {
        let got = out[0].data()[k].to_signed() as f64 / 4096.0;
        let err = (got - x.exp()).abs();
        worst = worst.max(err);
        // The fit's relative 0.0025 times exp(x) ≤ 1, plus at most two output units (the
        // evaluation's worst case over every input in [-20, 0] is 0.00296).
        assert!(err <= 0.0021 + 4.0 / 4096.0, "exp({x}) = {got}, want {}", x.exp());
    }
    eprintln!("max |exp error| on [-100, 0] = {worst}");
}
