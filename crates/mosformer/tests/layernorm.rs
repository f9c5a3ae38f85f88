//! LayerNorm against the float reference.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::layernorm;
use veil_mosformer::mac::{MacBatch, Macs};
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mosformer::triples::Sacrifice;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Ring, Z2k, Z32, Z64, Z128};
use veil_tensor::Tensor;

fn enc(v: &[f64]) -> Vec<Z64> {
    v.iter().map(|&x| Z64::from_i64((x * 65536.0).round() as i64)).collect()
}

#[test]
fn layernorm_matches_the_float_reference() {
    layernorm_in::<Z32>(12, 0.03);
}

/// Without modulus conversion: Rsqrt's comparisons in Z_2^64 at 16 fractional bits.
#[test]
fn layernorm_in_z64_at_16_bits() {
    layernorm_in::<Z64>(16, 0.01);
}

fn layernorm_in<R: Sacrifice>(f: u32, tolerance: f64) {
    let (rows, k) = (3, 8);
    let xs: Vec<f64> = (0..rows * k).map(|i| ((i * 29 % 17) as f64 - 8.0) * 0.6 + (i / k) as f64).collect();
    let gamma: Vec<f64> = (0..k).map(|j| 0.5 + 0.1 * j as f64).collect();
    let beta: Vec<f64> = (0..k).map(|j| 0.05 * j as f64 - 0.2).collect();
    let out = all_ok(simulate(3, 1, |ctx| {
        let me = ctx.party();
        let x = Tensor::new(vec![rows, k], enc(&xs))?;
        let g = Tensor::new(vec![k], enc(&gamma))?;
        let b = Tensor::new(vec![k], enc(&beta))?;
        let xs_sh = share_input(ctx, 0, (me == 0).then_some(&x), &[rows, k])?;
        let g_sh = share_input(ctx, 2, (me == 2).then_some(&g), &[k])?;
        let b_sh = share_input(ctx, 2, (me == 2).then_some(&b), &[k])?;
        let one = random_one::<Z128>(ctx)?;
        let alpha = mac_key::<Z128>(ctx)?;
        let keys = layernorm::setup::<R, Z128>(ctx, rows, k, f)?;
        let mut batch = MacBatch::new();
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut batch };
        let y = layernorm::layernorm(ctx, keys, &mut Offline::new(), &xs_sh, (&g_sh, &b_sh), f, macs)?;
        batch.check(ctx, &alpha, 64, "layernorm")?;
        open_all(ctx, &y)
    }))
    .unwrap();
    let got: Vec<f64> = out[0].data().iter().map(|v| v.to_signed() as f64 / 65536.0).collect();
    let mut worst: f64 = 0.0;
    for r in 0..rows {
        let row = &xs[r * k..(r + 1) * k];
        let m = row.iter().sum::<f64>() / k as f64;
        let v = row.iter().map(|x| (x - m).powi(2)).sum::<f64>() / k as f64;
        for j in 0..k {
            let want = gamma[j] * (row[j] - m) / v.sqrt() + beta[j];
            let err = (got[r * k + j] - want).abs();
            worst = worst.max(err);
            // Rsqrt's relative error (≤ 1.5/q with q ≥ 256 for v in [1, 16)) on |γ(x-m)/√v| ≤ 3.
            assert!(err < tolerance, "row {r} col {j}: {} vs {want}", got[r * k + j]);
        }
    }
    eprintln!("max |LayerNorm error| = {worst}");
}
