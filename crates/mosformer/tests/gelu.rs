//! Π_GELU against the float GELU.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::gelu::{self, delta_poly, gelu_f64};
use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::mac::{MacBatch, Macs};
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mosformer::triples::Sacrifice;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Ring, Z2k, Z16, Z64, Z128};
use veil_tensor::Tensor;

#[test]
fn the_polynomial_is_relu_minus_gelu_on_zero_to_four() {
    let mut worst: f64 = 0.0;
    for k in 0..=40_000 {
        let t = f64::from(k) / 10_000.0;
        worst = worst.max((delta_poly(t) - (t - gelu_f64(t))).abs());
    }
    assert!(worst < 1.9e-4, "max |P - δ| = {worst}");
    // Clipped inputs read P(-1): about δ(0) = 0; above 4, δ itself is below 1.3e-4.
    assert!(delta_poly(0.0).abs() < 1.9e-4);
    assert!((4.0 - gelu_f64(4.0)) < 1.3e-4);
}

#[test]
fn gelu_in_z16_at_six_fractional_bits() {
    // Every raw value in [-300, 300] (real -4.7 .. 4.7) plus far values, at f = 6.
    let mut raw: Vec<i64> = (-300..=300).step_by(7).collect();
    raw.extend([0, 1, -1, 255, 256, 257, -256, -257, 4000, -4000, 16383, -16384]);
    // Output at 6 bits: the last truncation's [-1, +2] units (and the polynomial's 2e-4).
    gelu_in::<Z16>(&raw, 6, 6, 3.0 / 64.0);
    // Output at 16 bits (as the precision plan reads it): inputs exact at 6 bits, so the
    // polynomial's error and a few units of 2^-16.
    gelu_in::<Z16>(&raw, 6, 16, 5e-4);
}

/// Without modulus conversion: comparisons in Z_2^64, 16 fractional bits (the table index at 6).
#[test]
fn gelu_in_z64_at_sixteen_fractional_bits() {
    let mut raw: Vec<i64> = (-300_000..=300_000).step_by(7_919).collect();
    raw.extend([0, 1, -1, 65_535, 65_536, -65_536, 262_143, 262_144, -262_145, 1 << 30, -(1 << 30), 1 << 40]);
    // The polynomial's error and a few units of 2^-16 (the clip is compared at 6 bits, so an
    // |x| just above 4 may still go through the polynomial, whose δ there is below 2e-4).
    gelu_in::<Z64>(&raw, 16, 16, 5e-4);
}

fn gelu_in<R: Sacrifice>(raw: &[i64], f: u32, f_out: u32, bound: f64) {
    let scale = f64::from(1u32 << f);
    let scale_out = f64::from(1u32 << f_out);
    let out = all_ok(simulate(3, 1, |ctx| {
        let n = raw.len();
        let x = Tensor::new(vec![n], raw.iter().map(|&v| Z64::from_i64(v)).collect())?;
        let xs = share_input(ctx, 0, (ctx.party() == 0).then_some(&x), &[n])?;
        let one = random_one::<Z128>(ctx)?;
        let alpha = mac_key::<Z128>(ctx)?;
        let keys = gelu::setup::<R, Z128>(ctx, n)?;
        let mut batch = MacBatch::new();
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut batch };
        let z = gelu::gelu(ctx, keys, &mut Offline::new(), &xs, f, f_out, macs)?;
        batch.check(ctx, &alpha, 64, "gelu")?;
        open_all(ctx, &z)
    }))
    .unwrap();
    let mut worst: f64 = 0.0;
    for (k, &v) in raw.iter().enumerate() {
        let x = v as f64 / scale;
        let got = out[0].data()[k].to_signed() as f64 / scale_out;
        worst = worst.max((got - gelu_f64(x)).abs());
    }
    eprintln!("max |GELU error| at f = {f} -> {f_out} = {worst}");
    assert!(worst < bound, "max error {worst}");
    for o in &out {
        assert_eq!(o, &out[0]);
    }
}
