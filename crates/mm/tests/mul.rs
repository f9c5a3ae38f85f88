//! Products across rings of different widths (§V-B) against integer arithmetic: 18-bit by
//! 20-bit signed fixed-point shares into Z_2^38 (the paper's Table IX shape), exact without a
//! truncation and within the carry with `f = 12`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::stream;
use veil_he::BfvPreset;
use veil_he::ole::Ole;
use veil_mm::mul::mul_mixed;
use veil_mpc::harness::{all_ok, simulate};
use veil_twopc::{Engine, TwoParty};

fn share(v: &[i64], bits: u32, next: &mut impl FnMut() -> u64) -> (Vec<u64>, Vec<u64>) {
    let mask = (1u64 << bits) - 1;
    let r: Vec<u64> = v.iter().map(|_| next() & mask).collect();
    let s0 = v.iter().zip(&r).map(|(&x, &r)| (x as u64).wrapping_sub(r) & mask).collect();
    (s0, r)
}

#[test]
fn eighteen_by_twenty_bits_into_thirty_eight() {
    let (m, k, out) = (18u32, 20u32, 38u32);
    let mut next = stream(1);
    let n = 300;
    let signed = |bits: u32, r: u64| (r % (1 << (bits - 2))) as i64 - (1i64 << (bits - 3));
    let mut x: Vec<i64> = (0..n).map(|_| signed(m, next())).collect();
    let mut y: Vec<i64> = (0..n).map(|_| signed(k, next())).collect();
    // Edges of the range.
    x[..4].copy_from_slice(&[0, -1, (1 << (m - 2)) - 1, -(1 << (m - 2)) + 1]);
    y[..4].copy_from_slice(&[(1 << (k - 2)) - 1, -(1 << (k - 2)) + 1, -1, 0]);
    let (x0, x1) = share(&x, m, &mut next);
    let (y0, y1) = share(&y, k, &mut next);
    for f in [0u32, 12] {
        let out_shares = all_ok(simulate(2, 7 + u64::from(f), |ctx| {
            let me = ctx.party();
            let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
            let ole = Ole::setup(ctx, 1 - me, BfvPreset::N8192P60)?;
            let (xs, ys) = if me == 0 { (&x0, &y0) } else { (&x1, &y1) };
            mul_mixed(&mut tp, &ole, ctx, (xs, m), (ys, k), f, out)
        }))
        .unwrap();
        let mask = (1u128 << out) - 1;
        for i in 0..n {
            let z = (out_shares[0][i] + out_shares[1][i]) & mask;
            let z = if z >= 1 << (out - 1) { z as i128 - (1i128 << out) } else { z as i128 };
            let want = (i128::from(x[i]) * i128::from(y[i])).div_euclid(1 << f);
            let allowed: &[i128] = if f == 0 { &[0] } else { &[-1, 0, 1] };
            assert!(allowed.contains(&(want - z)), "f = {f}: {} · {} gave {z}, want {want}", x[i], y[i]);
        }
    }
}
