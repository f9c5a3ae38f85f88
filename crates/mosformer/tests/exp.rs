//! Π_Exp against exp(x) on x ≤ 0.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::exp::{self, pow2_table};
use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::mac::{MacBatch, Macs};
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mosformer::triples::Sacrifice;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Ring, Z2k, Z32, Z64, Z128};
use veil_tensor::Tensor;

const F: u32 = 12;

#[test]
fn table() {
    let t = pow2_table(F).unwrap();
    // 2^-i with f + 2 fractional bits; index 15 stands for z = -1.
    assert_eq!(&t[..3], &[16384, 8192, 4096]);
    assert_eq!(t[14], 1);
    assert_eq!(t[15], 32768);
    assert!(pow2_table(25).is_err());
    // f = 16 (no modulus conversion): 32 entries, z' ∈ [-1, 18].
    let t = pow2_table(16).unwrap();
    assert_eq!((t.len(), t[0], t[18], t[31]), (32, 1 << 18, 1, 1 << 19));
}

#[test]
fn exp_of_non_positive_values() {
    exp_in::<Z32>(F, 0.0021 + 4.0 / 4096.0);
}

/// Without modulus conversion: comparisons in Z_2^64, 16 fractional bits.
#[test]
fn exp_of_non_positive_values_in_z64_at_16_bits() {
    exp_in::<Z64>(16, 0.0026 + 6.0 / 65536.0);
}

fn exp_in<R: Sacrifice>(f: u32, bound: f64) {
    let scale = f64::from(1u32 << f);
    let mut xs: Vec<f64> = (0..60).map(|i| -(i as f64) * 0.2).collect();
    xs.extend([-0.0001, -0.35, -0.693, -0.694, -1.0, -5.0, -8.3, -20.0, -100.0, -2.0f64.powi(20)]);
    // Inputs around the clip at z = f + 2 and at multiples of ln2, where the truncation's error
    // moves p furthest.
    for k in 1..=15 {
        let m = -(k as f64) * std::f64::consts::LN_2;
        xs.extend([m + 0.0003, m, m - 0.0003]);
    }
    let raw: Vec<Z64> = xs.iter().map(|&v| Z64::from_i64((v * scale).round() as i64)).collect();
    let out = all_ok(simulate(3, 1, |ctx| {
        let n = raw.len();
        let x = Tensor::new(vec![n], raw.clone())?;
        let s = share_input(ctx, 0, (ctx.party() == 0).then_some(&x), &[n])?;
        let one = random_one::<Z128>(ctx)?;
        let alpha = mac_key::<Z128>(ctx)?;
        let keys = exp::setup::<R, Z128>(ctx, n, f)?;
        let mut batch = MacBatch::new();
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut batch };
        let e = exp::exp(ctx, keys, &mut Offline::new(), &s, f, macs)?;
        batch.check(ctx, &alpha, 64, "exp")?;
        open_all(ctx, &e)
    }))
    .unwrap();
    let mut worst: f64 = 0.0;
    for (k, x) in xs.iter().enumerate() {
        let got = out[0].data()[k].to_signed() as f64 / scale;
        let err = (got - x.exp()).abs();
        worst = worst.max(err);
        // The fit's relative 0.0025 times exp(x) ≤ 1, plus at most two output units (the
        // evaluation's worst case over every input in [-20, 0] is 0.00296).
        assert!(err <= bound, "exp({x}) = {got}, want {}", x.exp());
    }
    eprintln!("max |exp error| on [-100, 0] at f = {f} = {worst}");
}
