//! The additive protocol against the plaintext reference, with measured costs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_additive::{Additive, InsecureDealer, Share};
use veil_mpc::harness::{all_ok, simulate, simulate_tcp};
use veil_mpc::traits::{Linear, Multiply, Sharing};
use veil_mpc::{Ctx, Result};
use veil_ring::{Z2k, Z32, Z64};
use veil_tensor::Tensor;

fn edge_values<R: Z2k>() -> Vec<R> {
    let k = R::BITS;
    vec![
        R::ZERO,
        R::ONE,
        R::from_i64(-1),
        R::from_u128(1u128 << (k - 1)),       // most negative
        R::from_u128((1u128 << (k - 1)) - 1), // most positive
        R::from_u128((1u128 << (k - 1)) + 1),
        R::from_i64(-2),
        R::from_u64(3),
    ]
}

fn inputs<R: Z2k>(seed: u64, random: usize) -> (Vec<R>, Vec<R>) {
    use rand::{SeedableRng, rngs::StdRng};
    let mut g = StdRng::seed_from_u64(seed);
    let e = edge_values::<R>();
    // Every pair of edge values, then random values.
    let mut x: Vec<R> = e.iter().flat_map(|&a| e.iter().map(move |_| a)).collect();
    let mut y: Vec<R> = e.iter().flat_map(|_| e.iter().copied()).collect();
    x.extend(R::random_vec(&mut g, random));
    y.extend(R::random_vec(&mut g, random));
    (x, y)
}

/// x shared by party 0, y by the last party; returns (x·y revealed to all, x+y, cost check).
fn mul_run<R: Z2k>(ctx: &mut Ctx, x: &[R], y: &[R]) -> Result<(Vec<R>, Vec<R>, bool)> {
    let n = ctx.parties();
    let mut p = Additive::new(InsecureDealer::new());
    let shape = [x.len()];
    let xv = Tensor::new(shape.to_vec(), x.to_vec())?;
    let yv = Tensor::new(shape.to_vec(), y.to_vec())?;
    let me = ctx.party();
    let xs = p.share_input(ctx, 0, (me == 0).then_some(&xv), &shape)?;
    let ys = p.share_input(ctx, n - 1, (me == n - 1).then_some(&yv), &shape)?;
    let before = ctx.stats().current();
    let z = p.mul(ctx, &xs, &ys)?;
    let spent = ctx.stats().current().since(&before);
    let cost_ok = Multiply::<R>::mul_cost(&p, x.len(), n).matches(&spent);
    let sum = p.add(&xs, &ys)?;
    Ok((p.reveal_all(ctx, &z)?.into_data(), p.reveal_all(ctx, &sum)?.into_data(), cost_ok))
}

fn check_mul<R: Z2k>(n: usize, seed: u64) {
    let (x, y) = inputs::<R>(seed, 200);
    let out = all_ok(simulate(n, seed, |ctx| mul_run(ctx, &x, &y))).unwrap();
    for (prod, sum, cost_ok) in out {
        for k in 0..x.len() {
            assert_eq!(prod[k], x[k] * y[k], "product {k} with {n} parties");
            assert_eq!(sum[k], x[k] + y[k], "sum {k} with {n} parties");
        }
        assert!(cost_ok, "measured cost differs from the declared cost");
    }
}

#[test]
fn beaver_mul_matches_plaintext_z64_for_2_3_5_parties() {
    for (n, seed) in [(2, 1), (3, 2), (5, 3)] {
        check_mul::<Z64>(n, seed);
    }
}

#[test]
fn beaver_mul_matches_plaintext_z32() {
    for (n, seed) in [(2, 4), (3, 5)] {
        check_mul::<Z32>(n, seed);
    }
}

#[test]
fn declared_mul_cost_is_exact() {
    // 3 parties, 1000 Z_2^64 elements: each party sends d and e to 2 peers in one message each.
    let cost = Multiply::<Z64>::mul_cost(&Additive::new(InsecureDealer::new()), 1000, 3);
    assert_eq!(cost.bytes_sent, 2 * 2 * 1000 * 8);
    assert_eq!(cost.messages_sent, 2);
    assert_eq!(cost.rounds, 1);
}

#[test]
fn reveal_to_one_party_only() {
    let n = 3;
    let v = Tensor::new(vec![2, 2], vec![Z64(5), Z64(u64::MAX), Z64(0), Z64(1 << 63)]).unwrap();
    let out = all_ok(simulate(n, 9, |ctx| {
        let mut p = Additive::new(InsecureDealer::new());
        let me = ctx.party();
        let s: Share<Z64> = p.share_input(ctx, 1, (me == 1).then_some(&v), &[2, 2])?;
        let before = ctx.stats().current();
        let r = p.reveal_to(ctx, &s, 2)?;
        Ok((r, ctx.stats().current().since(&before)))
    }))
    .unwrap();
    assert!(out[0].0.is_none() && out[1].0.is_none());
    assert_eq!(out[2].0.as_ref().unwrap(), &v);
    assert_eq!(out[0].1.bytes_sent, 32);
    assert_eq!(out[2].1.bytes_sent, 0);
    assert_eq!(out[2].1.bytes_received, 64);
    assert!(out.iter().all(|(_, s)| s.rounds == 1));
}

#[test]
fn input_sharing_sends_nothing_and_shares_look_random() {
    let v = Tensor::new(vec![4], vec![Z64(0); 4]).unwrap();
    let out = all_ok(simulate(3, 11, |ctx| {
        let mut p = Additive::new(InsecureDealer::new());
        let me = ctx.party();
        let before = ctx.stats().current();
        let s: Share<Z64> = p.share_input(ctx, 0, (me == 0).then_some(&v), &[4])?;
        Ok((s, ctx.stats().current().since(&before).bytes_sent))
    }))
    .unwrap();
    assert!(out.iter().all(|(_, b)| *b == 0));
    // A zero secret still gives non-zero shares.
    assert!(out[1].0.0.data().iter().any(|x| *x != Z64(0)));
    let sum: Vec<Z64> = (0..4).map(|k| out.iter().map(|(s, _)| s.0.data()[k]).sum()).collect();
    assert_eq!(sum, vec![Z64(0); 4]);
}

#[test]
fn wrong_shapes_are_errors_not_panics() {
    let res = simulate(2, 12, |ctx| {
        let mut p = Additive::new(InsecureDealer::new());
        let a: Share<Z64> = p
            .share_input(ctx, 0, None, &[3])
            .or_else(|_| Ok::<_, veil_mpc::MpcError>(Share(Tensor::zeros(&[3]))))?;
        let b = Share(Tensor::<Z64>::zeros(&[4]));
        p.mul(ctx, &a, &b)
    });
    assert!(res.iter().all(|r| r.is_err()));
}

#[test]
fn beaver_mul_over_tcp_with_mutual_tls() {
    let (x, y) = inputs::<Z64>(21, 50);
    let out = all_ok(simulate_tcp(3, 21, |ctx| mul_run(ctx, &x, &y))).unwrap();
    for (prod, _, cost_ok) in out {
        assert!(cost_ok);
        assert!(prod.iter().zip(x.iter().zip(&y)).all(|(p, (a, b))| *p == *a * *b));
    }
}
