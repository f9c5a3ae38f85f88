//! Modulus conversion: downcast error ≤ 2 LSB, upcast exact on its domain.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::convert::{downcast, upcast};
use veil_mosformer::input::share_input;
use veil_mosformer::offline::{Offline, OfflineRing};
use veil_mosformer::open::open_all;
use veil_mosformer::rss::Rss;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Z2k, Z16, Z32, Z64};
use veil_tensor::Tensor;

fn values(bound: i64, n: usize, seed: u64) -> Vec<i64> {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    let mut g = StdRng::seed_from_u64(seed);
    let mut v = vec![0, 1, -1, bound - 1, -bound, bound / 3, -(bound / 3)];
    v.extend((0..n).map(|_| g.gen_range(-bound..bound)));
    v
}

fn check_down<R: Z2k, S: Z2k>(bound: i64, shift: u32, seed: u64) {
    let xs = values(bound, 300, seed);
    let x = Tensor::new(vec![xs.len()], xs.iter().map(|&v| R::from_i64(v)).collect()).unwrap();
    let out = all_ok(simulate(3, seed, |ctx| {
        let s = share_input(ctx, 0, (ctx.party() == 0).then_some(&x), x.shape())?;
        let before = ctx.stats().current();
        let d: Rss<S> = downcast(&s, shift)?;
        assert_eq!(ctx.stats().current().since(&before).bytes_sent, 0);
        open_all(ctx, &d)
    }))
    .unwrap();
    for (v, got) in xs.iter().zip(out[0].data()) {
        let want = v.div_euclid(1 << shift) as i128;
        let diff = want - got.to_signed();
        assert!((0..=2).contains(&diff), "{v} >> {shift}: got {}, want {want}", got.to_signed());
    }
}

#[test]
fn downcasts_of_the_precision_plan() {
    // Z_2^64 f=16 → Z_2^32 f=12 (shift 4); values up to 2^20 in real terms fit 2^31 after.
    check_down::<Z64, Z32>(1 << 34, 4, 1);
    // Z_2^64 f=16 → Z_2^16 f=6 (shift 10).
    check_down::<Z64, Z16>(1 << 24, 10, 2);
    // Z_2^32 f=12 → Z_2^16 f=6 (shift 6).
    check_down::<Z32, Z16>(1 << 20, 6, 3);
    // Same precision, smaller ring.
    check_down::<Z64, Z32>(1 << 30, 0, 4);
}

#[test]
fn downcast_outside_its_identity_is_refused() {
    let x = Rss::<Z32>::zeros(&[1]);
    assert!(downcast::<Z32, Z16>(&x, 20).is_err());
    assert!(downcast::<Z16, Z32>(&Rss::<Z16>::zeros(&[1]), 0).is_err());
}

fn check_up<R: Z2k, S: OfflineRing>(shift: u32, seed: u64) {
    let bound = 1i64 << (R::BITS - 2);
    let xs = values(bound, 300, seed);
    let x = Tensor::new(vec![xs.len()], xs.iter().map(|&v| R::from_i64(v)).collect()).unwrap();
    let out = all_ok(simulate(3, seed, |ctx| {
        let s = share_input(ctx, 1, (ctx.party() == 1).then_some(&x), x.shape())?;
        let mut offline = Offline::new();
        offline.produce_upcast::<R, S>(ctx, x.len())?;
        let (before, t0) = (ctx.stats().current(), ctx.stats().time());
        let u: Rss<S> = upcast(ctx, &mut offline, &s, shift)?;
        let cost = ctx.stats().current().since(&before);
        let span = (t0, ctx.stats().time());
        Ok((open_all(ctx, &u)?, cost.bytes_sent, span))
    }))
    .unwrap();
    let spans: Vec<_> = out.iter().map(|o| o.2).collect();
    assert_eq!(veil_mpc::cost::rounds_across(&spans), 1);
    assert!(out.iter().all(|o| o.1 == (xs.len() * (R::BITS as usize / 8) + 32) as u64));
    for (v, got) in xs.iter().zip(out[0].0.data()) {
        assert_eq!(got.to_signed(), i128::from(*v) << shift, "upcast of {v}");
    }
}

#[test]
fn upcasts_are_exact_on_their_domain() {
    check_up::<Z16, Z32>(6, 5); // f 6 → 12
    check_up::<Z32, Z64>(4, 6); // f 12 → 16
    check_up::<Z16, Z64>(10, 7);
}
