//! Π_Inv and Π_Rsqrt against 1/x and 1/√x, with the paper's error bound.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::mac::{MacBatch, Macs};
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mosformer::recip::{self, Kind, main_table, scale_table};
use veil_mosformer::triples::Sacrifice;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Ring, Z2k, Z32, Z64, Z128};
use veil_tensor::Tensor;

const F: u32 = 12;

#[test]
fn tables_match_the_paper() {
    assert_eq!(scale_table(Kind::Inv, F), vec![16777216, 65536, 256, 1]);
    assert_eq!(scale_table(Kind::Rsqrt, F), vec![262144, 16384, 1024, 64]);
    let inv = main_table(Kind::Inv, F).unwrap();
    assert_eq!(&inv[..4], &[1048576, 986895, 932067, 883011]);
    assert_eq!(inv[4079], 4097);
    let rs = main_table(Kind::Rsqrt, F).unwrap();
    assert_eq!(&rs[..4], &[65536, 63579, 61787, 60139]);
    assert_eq!(rs[4079], 4096);
    assert_eq!(inv.len(), 4096);
    assert_eq!(inv[4085], inv[4079]);
    assert_eq!(inv[4095], inv[0]);
    // f = 16 (no modulus conversion): T_exp gains k + 1 = 4, and the main table 2^16 entries.
    assert_eq!(scale_table(Kind::Inv, 16)[..5], [1 << 32, 1 << 24, 1 << 16, 1 << 8, 1]);
    assert_eq!(scale_table(Kind::Rsqrt, 16)[4], 256);
    let inv16 = main_table(Kind::Inv, 16).unwrap();
    assert_eq!((inv16.len(), inv16[0]), (65536, 1 << 24));
    assert!(main_table(Kind::Inv, 17).is_err());
}

/// Evaluates at real inputs `xs`; returns the results as reals.
fn run(kind: Kind, xs: &[f64], seed: u64) -> Vec<f64> {
    run_in::<Z32>(kind, xs, seed, F)
}

fn run_in<R: Sacrifice>(kind: Kind, xs: &[f64], seed: u64, f: u32) -> Vec<f64> {
    let raw: Vec<Z64> =
        xs.iter().map(|&v| Z64::from_i64((v * f64::from(1u32 << f)).round() as i64)).collect();
    let out = all_ok(simulate(3, seed, |ctx| {
        let n = raw.len();
        let x = Tensor::new(vec![n], raw.clone())?;
        let s = share_input(ctx, 2, (ctx.party() == 2).then_some(&x), &[n])?;
        let one = random_one::<Z128>(ctx)?;
        let alpha = mac_key::<Z128>(ctx)?;
        let keys = recip::setup::<R, Z128>(ctx, kind, n, f)?;
        let mut batch = MacBatch::new();
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut batch };
        let y = recip::evaluate(ctx, keys, &mut Offline::new(), &s, f, macs)?;
        batch.check(ctx, &alpha, 64, "recip")?;
        open_all(ctx, &y)
    }))
    .unwrap();
    out[0].data().iter().map(|v| v.to_signed() as f64 / f64::from(1u32 << f)).collect()
}

/// Without modulus conversion (comparisons in Z_2^64, f = 16, 2^16-entry tables): the
/// inverse and the reciprocal square root on [2^-8, 65536), whose top range needs `k + 1 = 4`.
#[test]
fn inverse_and_rsqrt_in_z64_at_16_bits() {
    let xs = [0.004, 0.1, 1.0, 1.7, 255.0, 256.5, 2276.0, 4095.0, 20000.0, 65000.0];
    let inv = run_in::<Z64>(Kind::Inv, &xs, 7, 16);
    let rs = run_in::<Z64>(Kind::Rsqrt, &xs, 8, 16);
    for (k, x) in xs.iter().enumerate() {
        let (want_inv, want_rs) = (1.0 / x, 1.0 / x.sqrt());
        // Relative resolution 2^-8 of the index, plus two output units.
        assert!((inv[k] - want_inv).abs() <= want_inv / 128.0 + 2.0 / 65536.0, "1/{x}: {}", inv[k]);
        assert!((rs[k] - want_rs).abs() <= want_rs / 128.0 + 2.0 / 65536.0, "rsqrt({x}): {}", rs[k]);
    }
}

fn domain() -> Vec<f64> {
    let mut v = vec![1.0, 1.5, 2.0, 3.0, 15.9, 16.0, 16.1, 100.0, 255.9, 256.0, 1000.0, 4000.0, 4095.0];
    v.extend((0..40).map(|i| 1.0 + (i as f64).powf(2.2)));
    v.retain(|x| *x < 4096.0);
    v
}

#[test]
fn inverse_within_the_papers_bound() {
    let xs = domain();
    let got = run(Kind::Inv, &xs, 1);
    let worst = xs.iter().zip(&got).map(|(x, g)| (g - 1.0 / x).abs()).fold(0.0, f64::max);
    eprintln!("max |1/x error| on [1, 4096) = {worst}");
    // The paper's plaintext bound is 0.0036, about one table step (2^-8 relative at x = 1).
    // The truncation of the index is off by -1 to +2 units (see `trunc`), each a table step:
    // at most 3·2^-8 in all; measured 0.0039 here.
    assert!(worst <= 3.0 / 256.0, "{worst}");
}

/// The index `q = X·2^f / b^{k+1}` the algorithm reads the table at (its resolution).
fn index_of(x: f64) -> f64 {
    let big_x = (x * f64::from(1u32 << F)).round();
    let k = (1..=3).filter(|i| big_x >= 256f64.powi(*i)).count() as i32;
    big_x * f64::from(1u32 << F) / 256f64.powi(k + 1)
}

#[test]
fn rsqrt_within_its_index_resolution() {
    // 1/√ halves the relative error of the index (1/(2q)); the truncations can add one step
    // (1/q); the output itself is floored to 2^-12 twice (table, final truncation).
    let xs = domain();
    let got = run(Kind::Rsqrt, &xs, 2);
    let mut worst: f64 = 0.0;
    for (x, g) in xs.iter().zip(&got) {
        let want = 1.0 / x.sqrt();
        let rel = (g / want - 1.0).abs();
        worst = worst.max(rel);
        let bound = 1.5 / index_of(*x) * want + 2.0 / 4096.0;
        assert!((g - want).abs() <= bound, "rsqrt({x}) = {g}, relative error {rel}");
    }
    eprintln!("max relative 1/sqrt(x) error on [1, 4096) = {worst}");
}

#[test]
fn inverse_below_one() {
    // Below 1 the index keeps 4 to 8 bits: relative error ≤ 1/16 at x = 2^-4, ≤ 2^-8 near 1.
    let xs = [0.0625, 0.1, 0.25, 0.5, 0.9];
    let got = run(Kind::Inv, &xs, 3);
    for (x, g) in xs.iter().zip(&got) {
        let rel = (g - 1.0 / x).abs() * x;
        // One step of resolution, plus one more from the truncations.
        assert!(rel <= 2.0 / index_of(*x) + 1e-3, "1/{x}: got {g} (relative error {rel})");
    }
}
