//! The additive family's model-facing operations against the plaintext reference, at edge and
//! random values, among 2, 3 and 5 parties, with measured costs equal to the declared ones.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rand::{Rng, SeedableRng, rngs::StdRng};
use veil_additive::{Additive, InsecureDealer, Share};
use veil_mpc::harness::{all_ok, simulate, simulate_tcp};
use veil_mpc::traits::{FixedPoint, NonLinear, Owners, Sharing};
use veil_mpc::{Ctx, Result};
use veil_ring::Z64;
use veil_tensor::Tensor;

type Family = Additive<InsecureDealer>;

/// Values at the edges of `Z_2^64` read as signed integers, then random ones.
fn edge_and_random(seed: u64, random: usize) -> Vec<Z64> {
    let mut v = vec![
        Z64(0),
        Z64(1),
        Z64(u64::MAX),      // -1
        Z64(1 << 63),       // most negative
        Z64((1 << 63) - 1), // most positive
        Z64((1 << 63) + 1), // most negative + 1
        Z64(u64::MAX - 1),  // -2
        Z64(1 << 62),
        Z64((1 << 62) - 1),
        Z64(3 << 61),
    ];
    let mut g = StdRng::seed_from_u64(seed);
    v.extend((0..random).map(|_| Z64(g.r#gen())));
    v
}

fn signed(z: Z64) -> i64 {
    z.0 as i64
}

/// `x` shared by party 0 among every party; returns each party's share.
fn share(p: &mut Family, ctx: &mut Ctx, x: &[Z64], shape: &[usize]) -> Result<Share<Z64>> {
    let t = Tensor::new(shape.to_vec(), x.to_vec())?;
    let me = ctx.party();
    p.share_input(ctx, 0, (me == 0).then_some(&t), shape)
}

#[test]
fn relu_is_exact_on_the_whole_ring_with_its_declared_cost() {
    for (n, seed) in [(2, 1), (3, 2), (5, 3)] {
        let x = edge_and_random(seed, 300);
        let out = all_ok(simulate(n, seed, |ctx| {
            let mut p = Additive::new(InsecureDealer::new());
            let s = share(&mut p, ctx, &x, &[x.len()])?;
            let before = ctx.stats().current();
            let r = p.relu(ctx, &s)?;
            let spent = ctx.stats().current().since(&before);
            let d = p.drelu(ctx, &s)?;
            Ok((
                p.reveal_all(ctx, &r)?,
                p.reveal_all(ctx, &d)?,
                Family::relu_cost(x.len(), n).matches(&spent),
            ))
        }))
        .unwrap();
        for (relu, drelu, cost_ok) in out {
            assert!(cost_ok, "relu's measured cost differs from its declaration ({n} parties)");
            for (k, &v) in x.iter().enumerate() {
                let want = if signed(v) >= 0 { v } else { Z64(0) };
                assert_eq!(relu.data()[k], want, "relu({}) with {n} parties", signed(v));
                assert_eq!(drelu.data()[k], Z64(u64::from(signed(v) >= 0)), "drelu({})", signed(v));
            }
        }
    }
}

#[test]
fn truncation_is_within_one_unit_in_its_range() {
    let bound: i64 = 1 << 47;
    let mut g = StdRng::seed_from_u64(4);
    let mut x: Vec<i64> = vec![0, 1, -1, bound - 1, -bound, 65535, -65536, 65536, 12345 << 16];
    x.extend((0..300).map(|_| g.gen_range(-bound..bound)));
    let values: Vec<Z64> = x.iter().map(|&v| Z64(v as u64)).collect();
    for (n, seed) in [(2, 5), (3, 6), (5, 7)] {
        for d in [1u64, 2, 3, 7, 1 << 16, 1 << 40] {
            let out = all_ok(simulate(n, seed, |ctx| {
                let mut p = Additive::new(InsecureDealer::new());
                let s = share(&mut p, ctx, &values, &[values.len()])?;
                let before = ctx.stats().current();
                let t = p.div_public(ctx, &s, d)?;
                let spent = ctx.stats().current().since(&before);
                Ok((p.reveal_all(ctx, &t)?, Family::truncate_cost(values.len(), n).matches(&spent)))
            }))
            .unwrap();
            for (t, cost_ok) in out {
                assert!(cost_ok, "truncation's measured cost differs from its declaration");
                for (k, &v) in x.iter().enumerate() {
                    let floor = v.div_euclid(d as i64);
                    let got = signed(t.data()[k]);
                    assert!(got == floor || got == floor + 1, "{v} / {d} = {got}, want {floor} (+1)");
                }
            }
        }
    }
    let bad = simulate(2, 8, |ctx| {
        let mut p = Additive::new(InsecureDealer::new());
        let s = share(&mut p, ctx, &values, &[values.len()])?;
        p.div_public(ctx, &s, 0)
    });
    assert!(bad.iter().all(|r| r.as_ref().is_err_and(|e| e.to_string().contains("divisor"))));
}

#[test]
fn matrix_products_are_exact_and_fixed_point_products_rescale() {
    let mut g = StdRng::seed_from_u64(9);
    let (m, k, q) = (3, 5, 4);
    let a: Vec<Z64> = (0..m * k).map(|_| Z64(g.r#gen())).collect();
    let b: Vec<Z64> = (0..k * q).map(|_| Z64(g.r#gen())).collect();
    let want = Tensor::new(vec![m, k], a.clone())
        .unwrap()
        .matmul(&Tensor::new(vec![k, q], b.clone()).unwrap())
        .unwrap();
    // Reals in fixed point with 16 fractional bits for the rescaled product.
    let reals_a: Vec<f64> = (0..m * k).map(|i| (i as f64 - 7.0) * 0.75).collect();
    let reals_b: Vec<f64> = (0..k * q).map(|i| 2.5 - i as f64 * 0.3).collect();
    let enc = |v: &[f64]| v.iter().map(|x| Z64((x * 65536.0).round() as i64 as u64)).collect::<Vec<_>>();
    let (fa, fb) = (enc(&reals_a), enc(&reals_b));
    for (n, seed) in [(2, 10), (3, 11), (5, 12)] {
        let out = all_ok(simulate(n, seed, |ctx| {
            let mut p = Additive::new(InsecureDealer::new());
            let sa = share(&mut p, ctx, &a, &[m, k])?;
            let sb = share(&mut p, ctx, &b, &[k, q])?;
            let before = ctx.stats().current();
            let c = p.matmul_unscaled(ctx, &sa, &sb)?;
            let spent = ctx.stats().current().since(&before);
            let xa = share(&mut p, ctx, &fa, &[m, k])?;
            let xb = share(&mut p, ctx, &fb, &[k, q])?;
            let f = p.matmul_fixed(ctx, &xa, &xb)?;
            Ok((
                p.reveal_all(ctx, &c)?,
                p.reveal_all(ctx, &f)?,
                Family::matmul_cost(m, k, q, n).matches(&spent),
            ))
        }))
        .unwrap();
        for (c, f, cost_ok) in out {
            assert_eq!(c, want, "{n} parties");
            assert!(cost_ok);
            for i in 0..m {
                for j in 0..q {
                    let exact: f64 = (0..k).map(|t| reals_a[i * k + t] * reals_b[t * q + j]).sum();
                    let got = signed(f.data()[i * q + j]) as f64 / 65536.0;
                    assert!((got - exact).abs() < 3.0 / 65536.0, "{got} vs {exact}");
                }
            }
        }
    }
}

#[test]
fn row_maxima_of_every_width() {
    let mut g = StdRng::seed_from_u64(13);
    for (n, seed, k) in [(2, 14, 1), (3, 15, 2), (3, 16, 3), (5, 17, 5), (2, 18, 9)] {
        let rows = 7;
        let x: Vec<Z64> =
            (0..rows * k).map(|_| Z64(g.gen_range(-(1i64 << 40)..(1i64 << 40)) as u64)).collect();
        let out = all_ok(simulate(n, seed, |ctx| {
            let mut p = Additive::new(InsecureDealer::new());
            let s = share(&mut p, ctx, &x, &[rows, k])?;
            let m = p.max_rows(ctx, &s, rows, k)?;
            p.reveal_all(ctx, &m)
        }))
        .unwrap();
        for m in out {
            assert_eq!(m.shape(), [rows]);
            for r in 0..rows {
                let want = x[r * k..(r + 1) * k].iter().map(|&v| signed(v)).max().unwrap();
                assert_eq!(signed(m.data()[r]), want, "row {r} of width {k}");
            }
        }
    }
}

#[test]
fn owners_inside_and_outside_share_and_receive() {
    let v =
        Tensor::new(vec![2, 3], vec![Z64(5), Z64(u64::MAX), Z64(0), Z64(1 << 63), Z64(7), Z64(9)]).unwrap();
    // Three computing parties and two outside owners (3 and 4): 4 shares, 3 gets the sum.
    let out = all_ok(simulate(5, 19, |ctx| {
        let mut p = Additive::with_servers(InsecureDealer::new(), 3);
        let me = ctx.party();
        let s = p.share_from_owner(ctx, 4, (me == 4).then_some(&v), &[2, 3])?;
        p.reveal_to_owner(ctx, s.as_ref(), 3, &[2, 3])
    }))
    .unwrap();
    assert_eq!(out[3].as_ref(), Some(&v));
    assert!(out.iter().enumerate().all(|(i, o)| o.is_some() == (i == 3)));
    // Two computing parties that are the owners themselves (data owner 0, model owner 1).
    let out = all_ok(simulate_tcp(2, 20, |ctx| {
        let mut p = Additive::with_servers(InsecureDealer::new(), 2);
        let me = ctx.party();
        let s = p.share_from_owner(ctx, 1, (me == 1).then_some(&v), &[2, 3])?;
        p.reveal_to_owner(ctx, s.as_ref(), 0, &[2, 3])
    }))
    .unwrap();
    assert_eq!(out[0].as_ref(), Some(&v));
    assert!(out[1].is_none());
    // A party outside the computing ones cannot take part in a product.
    let res = simulate(3, 21, |ctx| {
        let mut p = Additive::with_servers(InsecureDealer::new(), 2);
        let s = Share(Tensor::<Z64>::zeros(&[2]));
        p.relu(ctx, &s)
    });
    assert!(res[2].as_ref().is_err_and(|e| e.to_string().contains("not one of the 2 computing parties")));
}
