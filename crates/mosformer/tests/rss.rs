//! The replicated-sharing layer against plaintext, with costs and tampering.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::input::share_input;
use veil_mosformer::mul::{matmul_semi_honest, mul_semi_honest};
use veil_mosformer::open::{component_digest, open_all, reveal_to};
use veil_mosformer::prss::{random, zero_share};
use veil_mosformer::rss::{Rss, next, prev};
use veil_mpc::cost::rounds_across;
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z2k, Z16, Z32, Z64};
use veil_tensor::Tensor;

fn edge_and_random<R: Z2k>(seed: u64, random: usize) -> Vec<R> {
    use rand::{SeedableRng, rngs::StdRng};
    let k = R::BITS;
    let mut v = vec![
        R::ZERO,
        R::ONE,
        R::from_i64(-1),
        R::from_u128(1u128 << (k - 1)),
        R::from_u128((1u128 << (k - 1)) - 1),
        R::from_i64(-2),
    ];
    v.extend(R::random_vec(&mut StdRng::seed_from_u64(seed), random));
    v
}

fn tensor<R: Ring>(v: &[R]) -> Tensor<R> {
    Tensor::new(vec![v.len()], v.to_vec()).unwrap()
}

fn shared<R: Ring>(ctx: &mut Ctx, owner: usize, v: &Tensor<R>) -> Result<Rss<R>> {
    let mine = (ctx.party() == owner).then_some(v);
    share_input(ctx, owner, mine, v.shape())
}

fn check_mul<R: Z2k>(seed: u64) {
    let x = edge_and_random::<R>(seed, 300);
    let y: Vec<R> = edge_and_random::<R>(seed + 1, 300).into_iter().rev().collect();
    let out = all_ok(simulate(3, seed, |ctx| {
        let xs = shared(ctx, 0, &tensor(&x))?;
        let ys = shared(ctx, 2, &tensor(&y))?;
        let (before, t0) = (ctx.stats().current(), ctx.stats().time());
        let z = mul_semi_honest(ctx, &xs, &ys)?;
        let cost = (ctx.stats().current().since(&before), (t0, ctx.stats().time()));
        let sum = xs.add(&ys)?.scale(R::from_u64(3));
        Ok((open_all(ctx, &z)?, open_all(ctx, &sum)?, cost))
    }))
    .unwrap();
    let spans: Vec<(u64, u64)> = out.iter().map(|o| o.2.1).collect();
    assert_eq!(rounds_across(&spans), 1);
    for (z, s, (cost, _)) in out {
        for k in 0..x.len() {
            assert_eq!(z.data()[k], x[k] * y[k]);
            assert_eq!(s.data()[k], (x[k] + y[k]) * R::from_u64(3));
        }
        // Reshare: one message of n elements to the previous party, one round.
        assert_eq!(cost.bytes_sent, (x.len() * R::BYTES) as u64);
        assert_eq!(cost.messages_sent, 1);
    }
}

#[test]
fn multiplication_matches_plaintext_in_every_ring() {
    check_mul::<Z16>(1);
    check_mul::<Z32>(2);
    check_mul::<Z64>(3);
}

#[test]
fn matmul_matches_plaintext() {
    use rand::{SeedableRng, rngs::StdRng};
    let mut g = StdRng::seed_from_u64(4);
    let a = Tensor::new(vec![5, 7], Z64::random_vec(&mut g, 35)).unwrap();
    let b = Tensor::new(vec![7, 3], Z64::random_vec(&mut g, 21)).unwrap();
    let expected = a.matmul(&b).unwrap();
    let out = all_ok(simulate(3, 4, |ctx| {
        let xa = shared(ctx, 1, &a)?;
        let xb = shared(ctx, 2, &b)?;
        let z = matmul_semi_honest(ctx, &xa, &xb)?;
        open_all(ctx, &z)
    }))
    .unwrap();
    assert!(out.iter().all(|z| *z == expected));
}

#[test]
fn public_constants_and_local_ops() {
    let x = [Z32(5), Z32(u32::MAX), Z32(1 << 31)];
    let c = tensor(&[Z32(7), Z32(1), Z32(3)]);
    let out = all_ok(simulate(3, 5, |ctx| {
        let xs = shared(ctx, 1, &tensor(&x))?;
        let y = xs.add_public(ctx.party(), &c)?.mul_public(&c)?.sub(&xs)?.neg();
        open_all(ctx, &y)
    }))
    .unwrap();
    let want: Vec<Z32> = (0..3).map(|k| x[k] - (x[k] + c.data()[k]) * c.data()[k]).collect();
    assert!(out.iter().all(|o| o.data() == want.as_slice()));
}

#[test]
fn random_sharings_and_zero_shares_are_consistent() {
    let out = all_ok(simulate(3, 6, |ctx| {
        let r = random::<Z64>(ctx, &[64])?;
        let z = zero_share::<Z64>(ctx, 64)?;
        let opened = open_all(ctx, &r)?;
        Ok((r, z, opened))
    }))
    .unwrap();
    // Replicated consistency: P_b's second component is P_{b+1}'s first.
    for b in 0..3 {
        assert_eq!(out[b].0.second, out[next(b)].0.first);
    }
    assert!(out.iter().all(|o| o.2 == out[0].2));
    assert!(out[0].2.data().iter().any(|v| *v != Z64(0)));
    for k in 0..64 {
        let s: Z64 = out.iter().map(|o| o.1[k]).sum();
        assert_eq!(s, Z64(0));
        assert_ne!(out[0].1[k], Z64(0));
    }
}

#[test]
fn reveal_to_one_party_with_declared_cost() {
    let x: Vec<Z32> = edge_and_random(7, 20);
    for to in 0..3 {
        let out = all_ok(simulate(3, 7, |ctx| {
            let xs = shared(ctx, 0, &tensor(&x))?;
            let (before, t0) = (ctx.stats().current(), ctx.stats().time());
            let r = reveal_to(ctx, &xs, to)?;
            Ok((r, ctx.stats().current().since(&before), (t0, ctx.stats().time())))
        }))
        .unwrap();
        let spans: Vec<(u64, u64)> = out.iter().map(|o| o.2).collect();
        assert_eq!(rounds_across(&spans), 1);
        for (b, (r, cost, _)) in out.iter().enumerate() {
            assert_eq!(r.is_some(), b == to);
            let want = if b == prev(to) {
                (x.len() * 4) as u64
            } else if b == next(to) {
                32
            } else {
                0
            };
            assert_eq!(cost.bytes_sent, want, "party {b} revealing to {to}");
        }
        assert_eq!(out[to].0.as_ref().unwrap().data(), x.as_slice());
    }
}

#[test]
fn input_sharing_cost() {
    let x: Vec<Z64> = edge_and_random(8, 10);
    let out = all_ok(simulate(3, 8, |ctx| {
        let t0 = ctx.stats().time();
        let before = ctx.stats().current();
        shared(ctx, 1, &tensor(&x))?;
        Ok((ctx.stats().current().since(&before), (t0, ctx.stats().time())))
    }))
    .unwrap();
    let spans: Vec<(u64, u64)> = out.iter().map(|o| o.1).collect();
    assert_eq!(rounds_across(&spans), 2);
    let out: Vec<_> = out.into_iter().map(|o| o.0).collect();
    assert_eq!(out[1].bytes_sent, 2 * 16 * 8);
    assert_eq!(out[0].bytes_sent, 32);
    assert_eq!(out[2].bytes_sent, 32);
}

fn abort_message<T>(r: &Result<T>) -> String {
    match r {
        Err(e @ MpcError::Abort { .. }) => e.to_string(),
        Err(e) => panic!("expected an abort, got {e}"),
        Ok(_) => panic!("expected an abort, the run succeeded"),
    }
}

#[test]
fn inconsistent_share_in_a_reveal_aborts() {
    let x = [Z64(42), Z64(7)];
    // P2 = prev(0) sends its component with an additive error.
    let res = simulate(3, 9, |ctx| {
        let xs = shared(ctx, 1, &tensor(&x))?;
        if ctx.party() == 2 {
            let bad: Vec<Z64> = xs.first.data().iter().map(|v| *v + Z64(1)).collect();
            ctx.send_ring(0, &bad)?;
            return Ok(None);
        }
        reveal_to(ctx, &xs, 0)
    });
    assert!(abort_message(&res[0]).contains("reveal"), "{:?}", res[0]);
    // P1 = next(0) sends the digest of a wrong component.
    let res = simulate(3, 10, |ctx| {
        let xs = shared(ctx, 1, &tensor(&x))?;
        if ctx.party() == 1 {
            let bad = xs.second.add(&tensor(&[Z64(0), Z64(1 << 63)]))?;
            ctx.net().send(0, component_digest(&bad).0.to_vec())?;
            return Ok(None);
        }
        reveal_to(ctx, &xs, 0)
    });
    assert!(abort_message(&res[0]).contains("copies"));
}

#[test]
fn inconsistent_share_in_an_open_aborts() {
    let x = [Z16(3); 5];
    let res = simulate(3, 11, |ctx| {
        let xs = shared(ctx, 0, &tensor(&x))?;
        if ctx.party() == 1 {
            // Honest digest to P0, tampered component to P2.
            let bad: Vec<Z16> = xs.first.data().iter().map(|v| *v - Z16(1)).collect();
            ctx.send_ring(2, &bad)?;
            ctx.net().send(0, component_digest(&xs.second).0.to_vec())?;
            // Stay in the protocol: take the messages the others send us.
            ctx.net().recv(0)?;
            ctx.net().recv(2)?;
            return Ok(Tensor::zeros(&[5]));
        }
        open_all(ctx, &xs)
    });
    assert!(abort_message(&res[2]).contains("open"));
}

#[test]
fn owner_sending_different_shares_aborts() {
    let res = simulate(3, 12, |ctx| {
        if ctx.party() == 0 {
            // A cheating owner: different third components to P2 and P1.
            let _ = ctx.pair_prg(2, "mosformer/input")?;
            let _ = ctx.pair_prg(1, "mosformer/input")?;
            ctx.send_ring(2, &[Z32(1), Z32(2)])?;
            ctx.send_ring(1, &[Z32(1), Z32(3)])?;
            return Ok(Rss::zeros(&[2]));
        }
        share_input::<Z32>(ctx, 0, None, &[2])
    });
    for b in [1, 2] {
        let m = abort_message(&res[b]);
        assert!(m.contains("input") && m.contains("party 0"), "{m}");
    }
}

#[test]
fn honest_runs_never_abort() {
    for seed in 0..20 {
        let x: Vec<Z32> = edge_and_random(seed, 8);
        let out = all_ok(simulate(3, 100 + seed, |ctx| {
            let xs = shared(ctx, (seed % 3) as usize, &tensor(&x))?;
            let sq = mul_semi_honest(ctx, &xs, &xs)?;
            let r = reveal_to(ctx, &sq, ((seed + 1) % 3) as usize)?;
            Ok((open_all(ctx, &xs)?, r))
        }))
        .unwrap();
        assert!(out.iter().all(|(o, _)| o.data() == x.as_slice()));
    }
}

#[test]
fn packed_reveals_check_copies_and_ranges() {
    use veil_mosformer::open::reveal_batch_packed;
    let reduce = |s: &Rss<Z32>| {
        let m = |t: &Tensor<Z32>| t.map(|v| Z32(v.0 & 0xff));
        Rss::new(m(&s.first), m(&s.second)).unwrap()
    };
    let x = tensor(&[Z32(1), Z32(200), Z32(77)]);
    // Honest: the sum of the reduced components, mod 2^32 (the caller reduces it mod 2^8).
    let out = all_ok(simulate(3, 30, |ctx| {
        let s = reduce(&shared(ctx, 0, &x)?);
        reveal_batch_packed(ctx, &[(&s, 1)], 8)
    }))
    .unwrap();
    let opened: &Tensor<Z32> = out[1][0].as_ref().unwrap();
    let got: Vec<u32> = opened.data().iter().map(|v| v.0 & 0xff).collect();
    assert_eq!(got, vec![1, 200, 77]);
    // The full-copy sender (P0 = prev(1)) changes its component: the digest from P2 disagrees.
    let res = simulate(3, 31, |ctx| {
        let mut s = reduce(&shared(ctx, 0, &x)?);
        if ctx.party() == 0 {
            s.first = s.first.map(|v| Z32((v.0 + 1) & 0xff));
        }
        reveal_batch_packed(ctx, &[(&s, 1)], 8)
    });
    assert!(matches!(&res[1], Err(MpcError::Abort { .. })), "{res:?}");
    // A component that does not fit the declared width is refused at the sender.
    let res = simulate(3, 32, |ctx| {
        let s = shared(ctx, 0, &x)?;
        reveal_batch_packed(ctx, &[(&s, 1)], 8)
    });
    assert!(res[0].as_ref().unwrap_err().to_string().contains("does not fit 8 bits"));
}
