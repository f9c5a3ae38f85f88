//! Fully connected and convolution layers on fixed-point ring shares against integer
//! arithmetic: `⌊W·x/2^f⌋` within the truncation's carry, the weights with one party.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::stream;
use veil_he::BfvPreset;
use veil_he::linear::{ConvPlan, FcPlan, Layer};
use veil_he::ole::Ole;
use veil_mm::layers::linear;
use veil_mpc::harness::{all_ok, simulate};
use veil_twopc::{Engine, TwoParty};

/// Runs the layer on shares of `x` (Z_2^32, f = 12) with the weights at P0; returns the
/// reconstructed signed outputs and the exact ones.
fn run(layer: &(dyn Layer + Sync), w: &[i64], x: &[i64], seed: u64) -> (Vec<i64>, Vec<i64>) {
    let (l, f) = (32u32, 12u32);
    let mut next = stream(seed);
    let mask = (1u64 << l) - 1;
    let r: Vec<u64> = x.iter().map(|_| next() & mask).collect();
    let x0: Vec<u64> = x.iter().zip(&r).map(|(&v, &r)| (v as u64).wrapping_sub(r) & mask).collect();
    let out = all_ok(simulate(2, seed, |ctx| {
        let me = ctx.party();
        let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
        let ole = Ole::setup(ctx, 1 - me, BfvPreset::N8192P60)?;
        if me == 0 {
            linear(&mut tp, &ole, ctx, layer, Some(w), &x0, (l, f))
        } else {
            linear(&mut tp, &ole, ctx, layer, None, &r, (l, f))
        }
    }))
    .unwrap();
    let got = (0..out[0].len())
        .map(|i| {
            let z = (out[0][i].wrapping_add(out[1][i]) as u64) & mask;
            if z >> (l - 1) == 1 { z as i64 - (1i64 << l) } else { z as i64 }
        })
        .collect();
    // Exact: the layer over the integers (mod a large prime, then signed), floored by 2^f.
    let big: u64 = (1 << 61) - 1;
    let to = |v: i64| i128::from(v).rem_euclid(i128::from(big)) as u64;
    let exact = layer
        .apply(
            &w.iter().map(|&v| to(v)).collect::<Vec<_>>(),
            &x.iter().map(|&v| to(v)).collect::<Vec<_>>(),
            big,
        )
        .into_iter()
        .map(|v| {
            let s = if v > big / 2 { i128::from(v) - i128::from(big) } else { i128::from(v) };
            s.div_euclid(1 << f) as i64
        })
        .collect();
    (got, exact)
}

#[test]
fn a_fully_connected_layer_on_fixed_point_shares() {
    let mut next = stream(1);
    let (n_o, n_i) = (10usize, 64usize);
    let signed = |r: u64, bits: u32| (r % (1 << bits)) as i64 - (1i64 << (bits - 1));
    let w: Vec<i64> = (0..n_o * n_i).map(|_| signed(next(), 13)).collect(); // |w| < 1
    let x: Vec<i64> = (0..n_i).map(|_| signed(next(), 16)).collect(); // |x| < 8
    let plan = FcPlan::new(n_o, n_i, 8192).unwrap();
    let (got, exact) = run(&plan, &w, &x, 2);
    for (g, e) in got.iter().zip(&exact) {
        assert!((g - e).abs() <= 1, "got {g}, exact {e}");
    }
}

#[test]
fn a_convolution_on_fixed_point_shares() {
    let mut next = stream(3);
    let plan = ConvPlan::new(3, 12, 12, 4, 3, 8192).unwrap();
    let signed = |r: u64, bits: u32| (r % (1 << bits)) as i64 - (1i64 << (bits - 1));
    let k: Vec<i64> = (0..4 * 3 * 9).map(|_| signed(next(), 13)).collect();
    let x: Vec<i64> = (0..3 * 144).map(|_| signed(next(), 16)).collect();
    let (got, exact) = run(&plan, &k, &x, 4);
    assert_eq!(got.len(), 4 * 10 * 10);
    for (g, e) in got.iter().zip(&exact) {
        assert!((g - e).abs() <= 1, "got {g}, exact {e}");
    }
}
