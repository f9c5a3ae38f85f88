//! The semi-honest mode of the family: no verification anywhere (keys, auxiliary data, MACs,
//! products), same results, less communication.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::Security;
use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::mac::{MacBatch, Macs};
use veil_mosformer::offline::{OFFLINE_PHASE, Offline};
use veil_mosformer::open::open_all;
use veil_mosformer::recip::{self, Kind};
use veil_mosformer::{drelu, verified};
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Ring, Z2k, Z32, Z64, Z128};
use veil_tensor::Tensor;

/// DReLU of a few edge and random values in Z_2^32; returns (results, online bytes, offline
/// bytes) of party 0.
fn drelu_run(security: Security) -> (Vec<Z64>, Vec<i64>, u64, u64) {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    let mut g = StdRng::seed_from_u64(3);
    let mut xs: Vec<i64> = vec![0, 1, -1, i64::from(i32::MIN), i64::from(i32::MAX)];
    xs.extend((0..40).map(|_| g.gen_range(i64::from(i32::MIN)..=i64::from(i32::MAX))));
    let x = Tensor::new(vec![xs.len()], xs.iter().map(|&v| Z32::from_i64(v)).collect()).unwrap();
    let out = all_ok(simulate(3, 4, |ctx| {
        let s = share_input(ctx, 1, (ctx.party() == 1).then_some(&x), x.shape())?;
        let one = random_one::<Z64>(ctx)?;
        let alpha = mac_key::<Z64>(ctx)?;
        let before = ctx.stats().current();
        let keys = drelu::setup_with::<Z32, Z64>(ctx, x.len(), security)?;
        let offline = ctx.stats().current().since(&before).bytes_sent;
        let mut batch = MacBatch::for_security(security);
        let before = ctx.stats().current();
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut batch };
        let d = drelu::drelu(ctx, keys, &s, macs)?;
        batch.check(ctx, &alpha, 32, "drelu")?;
        let online = ctx.stats().current().since(&before).bytes_sent;
        Ok((open_all(ctx, &d)?, online, offline))
    }))
    .unwrap();
    let (d, online, offline) = out.into_iter().next().unwrap();
    (d.into_data(), xs, online, offline)
}

#[test]
fn drelu_without_verification_is_correct_and_cheaper() {
    let (mal, xs, on_mal, off_mal) = drelu_run(Security::Malicious);
    let (semi, _, on_semi, off_semi) = drelu_run(Security::SemiHonest);
    for (k, x) in xs.iter().enumerate() {
        let want = Z64(u64::from(*x >= 0));
        assert_eq!(semi[k], want, "DReLU({x})");
        assert_eq!(mal[k], want, "DReLU({x})");
    }
    assert!(on_semi < on_mal, "online {on_semi} vs {on_mal}");
    assert!(off_semi < off_mal, "offline {off_semi} vs {off_mal}");
}

#[test]
fn inverse_without_verification_matches_plaintext() {
    let xs = [1.0, 2.5, 100.0, 4000.0];
    let raw: Vec<Z64> = xs.iter().map(|&v| Z64::from_i64((v * 4096.0f64).round() as i64)).collect();
    let out = all_ok(simulate(3, 5, |ctx| {
        let x = Tensor::new(vec![raw.len()], raw.clone())?;
        let s = share_input(ctx, 0, (ctx.party() == 0).then_some(&x), x.shape())?;
        let one = random_one::<Z128>(ctx)?;
        let alpha = mac_key::<Z128>(ctx)?;
        let keys = recip::setup_with::<Z32, Z128>(ctx, Kind::Inv, raw.len(), 12, Security::SemiHonest)?;
        let mut offline = Offline::semi_honest();
        let mut batch = MacBatch::semi_honest();
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut batch };
        let y = recip::evaluate(ctx, keys, &mut offline, &s, 12, macs)?;
        batch.check(ctx, &alpha, 64, "inv")?;
        // No triple was made: the offline phase never ran.
        assert_eq!(ctx.stats().get(OFFLINE_PHASE).bytes_sent, 0);
        open_all(ctx, &y)
    }))
    .unwrap();
    for (x, got) in xs.iter().zip(out[0].data()) {
        let got = got.to_signed() as f64 / 4096.0;
        assert!((got - 1.0 / x).abs() <= 3.0 / 256.0, "1/{x}: {got}");
    }
}

#[test]
fn semi_honest_products_skip_the_check() {
    let out = all_ok(simulate(3, 6, |ctx| {
        let x = veil_mosformer::prss::random::<Z32>(ctx, &[10])?;
        let before = ctx.stats().current();
        let z = verified::mul(ctx, &mut Offline::semi_honest(), &x, &x)?;
        let bytes = ctx.stats().current().since(&before).bytes_sent;
        Ok((open_all(ctx, &x)?, open_all(ctx, &z)?, bytes))
    }))
    .unwrap();
    for (x, z, bytes) in out {
        assert_eq!(z, x.mul(&x).unwrap());
        assert_eq!(bytes, 40, "one reshare of 10 Z_2^32 elements");
    }
}

#[test]
fn msb_edge_values_in_semi_honest_mode() {
    let (semi, xs, _, _) = drelu_run(Security::SemiHonest);
    assert_eq!(semi[3], Z64(0), "most negative");
    assert_eq!(semi[4], Z64(1), "most positive");
    assert!(xs[3] < 0 && !Z32::from_i64(xs[4]).msb());
}
