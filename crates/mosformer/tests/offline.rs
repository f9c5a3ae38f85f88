//! The offline phase: triples checked by sacrifice, random bits, upcast tuples, plans.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::bits::random_bits;
use veil_mosformer::offline::{OFFLINE_PHASE, Offline};
use veil_mosformer::open::open_all;
use veil_mosformer::triples::{FreshTriples, Sacrifice, Tamper, TripleSource, generate_mul_tampered};
use veil_mosformer::verified;
use veil_mpc::MpcError;
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::prep::CorrelationRequest;
use veil_ring::{Z16, Z32, Z64};

fn mul_triples_are_products<R: Sacrifice>(seed: u64) {
    let out = all_ok(simulate(3, seed, |ctx| {
        let t = generate_mul_tampered::<R>(ctx, 50, None)?;
        Ok((open_all(ctx, &t.a)?, open_all(ctx, &t.b)?, open_all(ctx, &t.c)?))
    }))
    .unwrap();
    for (a, b, c) in &out {
        assert_eq!(*c, a.mul(b).unwrap());
        assert_eq!(out[0].0, *a);
    }
}

#[test]
fn generated_triples_are_correct_in_every_ring() {
    mul_triples_are_products::<Z16>(1);
    mul_triples_are_products::<Z32>(2);
    mul_triples_are_products::<Z64>(3);
}

#[test]
fn triple_generation_cost_is_as_declared() {
    // n triples over Z_2^32 (checked in Z_2^64): reshare 2n·8, challenge 16 + 32, ρ n·8 + 32,
    // zero check 32; 4 rounds.
    let n = 100;
    let out = all_ok(simulate(3, 5, |ctx| {
        let before = ctx.stats().current();
        let t0 = ctx.stats().time();
        generate_mul_tampered::<Z32>(ctx, n, None)?;
        Ok((ctx.stats().current().since(&before).bytes_sent, (t0, ctx.stats().time())))
    }))
    .unwrap();
    assert!(out.iter().all(|o| o.0 == (3 * n * 8 + 16 + 32 + 32 + 32) as u64), "{out:?}");
    let spans: Vec<_> = out.iter().map(|o| o.1).collect();
    assert_eq!(veil_mpc::cost::rounds_across(&spans), 4);
}

fn aborts_naming_sacrifice<T: std::fmt::Debug>(res: &[veil_mpc::Result<T>]) -> bool {
    res.iter().all(|r| r.is_err())
        && res.iter().any(|r| matches!(r, Err(MpcError::Abort { check, .. }) if check.contains("sacrifice")))
}

#[test]
fn an_error_in_a_triple_aborts_the_sacrifice() {
    // Errors in c, in c', low and high bits, by each server; even an error that only touches
    // bit k-1 (the hardest case over a ring) is caught.
    for (party, index, delta) in
        [(0, 0, 1u128), (1, 3, 1 << 31), (2, 7, 1 << 15), (0, 12, 5), (1, 10, 1 << 63)]
    {
        let tamper = Some(Tamper { party, index, delta });
        let res = simulate(3, 6, |ctx| generate_mul_tampered::<Z32>(ctx, 10, tamper).map(|_| ()));
        assert!(aborts_naming_sacrifice(&res), "{tamper:?}: {res:?}");
        let res = simulate(3, 7, |ctx| generate_mul_tampered::<Z64>(ctx, 10, tamper).map(|_| ()));
        assert!(aborts_naming_sacrifice(&res), "{tamper:?}: {res:?}");
    }
}

#[test]
fn errors_above_the_working_ring_are_harmless() {
    // An error that vanishes mod 2^32 changes nothing the triple is used for; whether the
    // sacrifice notices it does not matter, but the triple must then still be right.
    let tamper = Some(Tamper { party: 1, index: 2, delta: 1 << 40 });
    let res = simulate(3, 9, |ctx| {
        let t = generate_mul_tampered::<Z32>(ctx, 4, tamper)?;
        Ok((open_all(ctx, &t.a)?, open_all(ctx, &t.b)?, open_all(ctx, &t.c)?))
    });
    for r in res.into_iter().flatten() {
        assert_eq!(r.2, r.0.mul(&r.1).unwrap());
    }
}

#[test]
fn honest_generation_never_aborts_over_many_seeds() {
    for seed in 0..20 {
        all_ok(simulate(3, 100 + seed, |ctx| generate_mul_tampered::<Z16>(ctx, 8, None).map(|_| ())))
            .unwrap();
    }
}

#[test]
fn random_bits_are_bits_and_vary() {
    let out = all_ok(simulate(3, 10, |ctx| {
        let b = random_bits::<Z64>(ctx, &mut FreshTriples, 256)?;
        open_all(ctx, &b)
    }))
    .unwrap();
    let bits = out[0].data();
    assert!(bits.iter().all(|v| *v == Z64(0) || *v == Z64(1)));
    let ones = bits.iter().filter(|v| **v == Z64(1)).count();
    assert!((80..=176).contains(&ones), "{ones} ones in 256");
}

#[test]
fn a_plan_replayed_needs_nothing_on_demand() {
    let out = all_ok(simulate(3, 11, |ctx| {
        let mut first = Offline::new();
        let x = veil_mosformer::prss::random::<Z32>(ctx, &[6])?;
        verified::mul(ctx, &mut first, &x, &x)?;
        verified::matmul(ctx, &mut first, &x.reshape(&[2, 3])?, &x.reshape(&[3, 2])?)?;
        let plan = first.plan().to_vec();
        let mut second = Offline::new();
        second.produce(ctx, &plan)?;
        let before = ctx.stats().get(OFFLINE_PHASE);
        let z = verified::mul(ctx, &mut second, &x, &x)?;
        verified::matmul(ctx, &mut second, &x.reshape(&[2, 3])?, &x.reshape(&[3, 2])?)?;
        let offline_after = ctx.stats().get(OFFLINE_PHASE);
        Ok((
            plan,
            first.made_on_demand(),
            second.made_on_demand(),
            before == offline_after,
            open_all(ctx, &z)?,
        ))
    }))
    .unwrap();
    for (plan, first, second, no_offline_traffic, _) in out {
        assert_eq!(
            plan,
            // The matrix product is checked online and asks for nothing.
            vec![CorrelationRequest::MulTriples { ring_bits: 32, count: 6 }]
        );
        assert_eq!(first, 6);
        assert_eq!(second, 0);
        assert!(no_offline_traffic);
    }
}

#[test]
fn fresh_triples_serve_any_shape() {
    let out = all_ok(simulate(3, 12, |ctx| {
        let t = <FreshTriples as TripleSource<Z16>>::mul_triple(&mut FreshTriples, ctx, &[2, 3])?;
        Ok((open_all(ctx, &t.a)?, open_all(ctx, &t.b)?, open_all(ctx, &t.c)?))
    }))
    .unwrap();
    let (a, b, c) = &out[0];
    assert_eq!(a.shape(), &[2, 3]);
    assert_eq!(*c, a.mul(b).unwrap());
}
