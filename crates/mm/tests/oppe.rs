//! OPPE (Fig. 13) with the paper's GeLU (ℓ = 32, f = 12) and sigmoid (f = 11) on a grid and
//! far outside it: close to the same piecewise polynomials in `f64` (the fixed-point rounding
//! of the coefficients is the rest) and to the true functions.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_he::BfvPreset;
use veil_he::ole::Ole;
use veil_mm::oppe::{Piecewise, oppe};
use veil_mpc::harness::{all_ok, simulate};
use veil_twopc::{Engine, TwoParty};

/// erf by Abramowitz and Stegun 7.1.26 (error below 1.5·10^−7).
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.3275911 * x.abs());
    let y = 1.0
        - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592)
            * t
            * (-x * x).exp();
    if x < 0.0 { -y } else { y }
}

fn run(g: &Piecewise, xs: &[f64], l: u32, f: u32) -> Vec<f64> {
    let mask = (1u64 << l) - 1;
    let fixed: Vec<u64> =
        xs.iter().map(|&x| ((x * (1u64 << f) as f64).round() as i64 as u64) & mask).collect();
    let r: Vec<u64> = (0..xs.len() as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask).collect();
    let x0: Vec<u64> = fixed.iter().zip(&r).map(|(&x, &r)| x.wrapping_sub(r) & mask).collect();
    let out = all_ok(simulate(2, 9, |ctx| {
        let me = ctx.party();
        let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
        let ole = Ole::setup(ctx, 1 - me, BfvPreset::N8192P60)?;
        oppe(&mut tp, &ole, ctx, g, if me == 0 { &x0 } else { &r }, l, f)
    }))
    .unwrap();
    (0..xs.len())
        .map(|i| {
            let z = (out[0][i].wrapping_add(out[1][i]) as u64) & mask;
            let z = if z >> (l - 1) == 1 { z as i64 - (1i64 << l) } else { z as i64 };
            z as f64 / (1u64 << f) as f64
        })
        .collect()
}

fn grid() -> Vec<f64> {
    let mut xs: Vec<f64> = (-192..=192).map(|i| f64::from(i) / 32.0).collect();
    xs.extend([-1000.0, -100.0, -3.0, 0.0, 3.0, 5.0, -5.0, 100.0, 1000.0]);
    xs
}

#[test]
fn gelu_as_the_paper_approximates_it() {
    let g = Piecewise::gelu();
    let xs = grid();
    let got = run(&g, &xs, 32, 12);
    for (&x, &y) in xs.iter().zip(&got) {
        let exact = 0.5 * x * (1.0 + erf(x / 2f64.sqrt()));
        assert!((y - g.eval(x)).abs() < 0.02, "GeLU({x}) = {y}, the polynomial {}", g.eval(x));
        assert!((y - exact).abs() < 0.03, "GeLU({x}) = {y}, exact {exact}");
    }
}

#[test]
fn sigmoid_as_the_paper_approximates_it() {
    let g = Piecewise::sigmoid();
    let xs = grid();
    let got = run(&g, &xs, 32, 11);
    for (&x, &y) in xs.iter().zip(&got) {
        let exact = 1.0 / (1.0 + (-x).exp());
        assert!((y - g.eval(x)).abs() < 0.01, "σ({x}) = {y}, the polynomial {}", g.eval(x));
        assert!((y - exact).abs() < 0.02, "σ({x}) = {y}, exact {exact}");
    }
}
