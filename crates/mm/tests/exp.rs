//! Base-2 and natural exponentiation (Fig. 8) on fine grids against `f64`: 2^x within
//! `2^{−f}·(2 + 2·2^x)` everywhere, e^x (log2 e folded in) within that plus the constant's
//! rounding; the ranges it cannot serve are refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_he::BfvPreset;
use veil_he::ole::Ole;
use veil_mm::exp::exp2;
use veil_mpc::harness::{all_ok, simulate};
use veil_twopc::{Engine, TwoParty};

#[test]
fn two_to_the_x_on_a_grid() {
    let (l, f, range) = (64u32, 16u32, 16u32);
    // Every 1/64 of [−16, 0), and the ends.
    let mut xs: Vec<i64> = (0..1024).map(|i| -(16i64 << f) + i * (1 << (f - 6))).collect();
    xs.extend([-(16i64 << f), -1, -(1 << f), -((1 << f) + 1)]);
    let r: Vec<u64> =
        xs.iter().enumerate().map(|(i, _)| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let x0: Vec<u64> = xs.iter().zip(&r).map(|(&x, &r)| (x as u64).wrapping_sub(r)).collect();
    let out = all_ok(simulate(2, 3, |ctx| {
        let me = ctx.party();
        let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
        let ole = Ole::setup(ctx, 1 - me, BfvPreset::N8192P60)?;
        exp2(&mut tp, &ole, ctx, if me == 0 { &x0 } else { &r }, l, f, range)
    }))
    .unwrap();
    let scale = (1u64 << f) as f64;
    let mut worst = 0f64;
    for (i, &x) in xs.iter().enumerate() {
        let z = out[0][i].wrapping_add(out[1][i]) as u64 as i64;
        let got = z as f64 / scale;
        let want = (x as f64 / scale).exp2();
        let err = (got - want).abs();
        worst = worst.max(err * scale);
        assert!(err < (2.0 + 2.0 * want) / scale, "2^{}: got {got}, want {want}", x as f64 / scale);
    }
    assert!(worst > 0.0, "the errors are measured");
}

#[test]
fn ranges_it_cannot_serve_are_refused() {
    let res = simulate(2, 4, |ctx| {
        let me = ctx.party();
        let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
        let ole = Ole::setup(ctx, 1 - me, BfvPreset::N4096P16)?;
        Ok(exp2(&mut tp, &ole, ctx, &[0], 32, 12, 16).unwrap_err().to_string())
    });
    let e = res.into_iter().next().unwrap().unwrap();
    assert!(e.contains("log2 p ≥ 2·f_out + T + 4"), "{e}");
}

#[test]
fn e_to_the_x_with_log2_e_folded_in() {
    use veil_mm::exp::exp;
    let (l, f, range) = (64u32, 18u32, 20u32);
    // [−13.8, 0) in steps of 1/16, and the end.
    let mut xs: Vec<i64> = (1..=220).map(|i| -(i << (f - 4))).collect();
    xs.push(-1);
    let r: Vec<u64> = (0..xs.len() as u64).map(|i| i.wrapping_mul(0xD1B5_4A32_D192_ED03)).collect();
    let x0: Vec<u64> = xs.iter().zip(&r).map(|(&x, &r)| (x as u64).wrapping_sub(r)).collect();
    let out = all_ok(simulate(2, 5, |ctx| {
        let me = ctx.party();
        let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
        let ole = Ole::setup(ctx, 1 - me, BfvPreset::N8192P60)?;
        exp(&mut tp, &ole, ctx, if me == 0 { &x0 } else { &r }, l, f, range)
    }))
    .unwrap();
    let scale = (1u64 << f) as f64;
    for (i, &x) in xs.iter().enumerate() {
        let got = out[0][i].wrapping_add(out[1][i]) as u64 as i64 as f64 / scale;
        let want = (x as f64 / scale).exp();
        // The fixed-point error of 2^x, and log2(e) rounded to f bits (≤ T·2^{−f−1} in the exponent).
        let bound = (2.0 + 2.0 * want) / scale + want * f64::from(range) / scale;
        assert!((got - want).abs() < bound, "e^{}: got {got}, want {want}", x as f64 / scale);
    }
}
