//! Π_DReLU against `1{x ≥ 0}`, with the MAC check, the dealer checks and online tampering.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::drelu::{self, drelu_terms};
use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::lut::lookup_finish;
use veil_mosformer::mac::MacBatch;
use veil_mosformer::open::open_all;
use veil_mpc::harness::simulate;
use veil_mpc::{MpcError, Result};
use veil_ring::{Ring, Z2k, Z16, Z32, Z64, Z128};
use veil_tensor::Tensor;

fn inputs<R: Z2k>(seed: u64, n: usize) -> Vec<R> {
    use rand::{SeedableRng, rngs::StdRng};
    let top = 1u128 << (R::BITS - 1);
    let mut v = vec![
        R::ZERO,
        R::ONE,
        R::from_i64(-1),
        R::from_u128(top - 1),
        R::from_u128(top),
        R::from_u128(top + 1),
        R::from_i64(-2),
    ];
    v.extend(R::random_vec(&mut StdRng::seed_from_u64(seed), n));
    v
}

/// Shares `xs`, runs the setup and one DReLU; `tamper(party, v_term)` may change a term.
fn run<R: veil_mosformer::triples::Sacrifice>(
    seed: u64,
    xs: &[R],
    tamper: impl Fn(usize, &mut Tensor<Z64>) + Sync,
) -> Vec<Result<Vec<Z64>>> {
    run_in::<R, Z64>(seed, xs, 32, tamper)
}

/// [`run`] with outputs and MACs in `M`, checked with `s` bits.
fn run_in<R: veil_mosformer::triples::Sacrifice, M: Z2k>(
    seed: u64,
    xs: &[R],
    s_bits: u32,
    tamper: impl Fn(usize, &mut Tensor<M>) + Sync,
) -> Vec<Result<Vec<M>>> {
    simulate(3, seed, |ctx| {
        let n = xs.len();
        let x = Tensor::new(vec![n], xs.to_vec())?;
        let s = share_input(ctx, 1, (ctx.party() == 1).then_some(&x), &[n])?;
        let one = random_one::<M>(ctx)?;
        let alpha = mac_key::<M>(ctx)?;
        let keys = drelu::setup::<R, M>(ctx, n)?;
        let mut batch = MacBatch::new();
        let (mut v, m) = drelu_terms(ctx, &keys, &s, &one, &alpha)?;
        tamper(ctx.party(), &mut v);
        let out = lookup_finish(ctx, v, m, &mut batch)?;
        batch.check(ctx, &alpha, s_bits, "drelu")?;
        Ok(open_all(ctx, &out)?.into_data())
    })
}

fn check<R: veil_mosformer::triples::Sacrifice>(seed: u64) {
    let xs = inputs::<R>(seed, 60);
    for r in run(seed, &xs, |_, _| ()) {
        let got = r.unwrap();
        for (k, x) in xs.iter().enumerate() {
            assert_eq!(got[k], Z64(u64::from(!x.msb())), "DReLU({:?})", x.to_signed());
        }
    }
}

#[test]
fn drelu_in_z32_and_z16() {
    check::<Z32>(1);
    check::<Z16>(2);
}

#[test]
fn honest_runs_never_abort() {
    for seed in 10..15 {
        check::<Z16>(seed);
    }
}

#[test]
fn an_online_error_is_caught_by_the_mac() {
    let xs = inputs::<Z16>(3, 10);
    for cheater in 0..3 {
        let res = run(20 + cheater as u64, &xs, |p, v| {
            if p == cheater {
                let mut d = v.data().to_vec();
                d[4] += Z64::ONE; // flips the output, as a wrong B2A bit or δ would
                *v = Tensor::new(v.shape().to_vec(), d).unwrap();
            }
        });
        assert!(
            res.iter()
                .all(|r| matches!(r, Err(MpcError::Abort { check, .. }) if check.contains("MAC check"))),
            "cheater {cheater}: {res:?}"
        );
    }
}

/// Without modulus conversion: comparisons in Z_2^64, outputs and MACs in Z_2^128 (s = 64).
#[test]
fn drelu_in_z64_with_macs_in_z128_and_errors_caught() {
    let xs = inputs::<Z64>(4, 40);
    for r in run_in::<Z64, Z128>(4, &xs, 64, |_, _| ()) {
        let got = r.unwrap();
        for (k, x) in xs.iter().enumerate() {
            assert_eq!(got[k], Z128(u128::from(!x.msb())), "DReLU({:?})", x.to_signed());
        }
    }
    // An evaluator's error in the low bit, or in the top bit of the 64-bit value.
    for (cheater, e) in [(0usize, 1u128), (1, 1 << 63), (2, (1 << 63) + 1)] {
        let res = run_in::<Z64, Z128>(40 + cheater as u64, &xs, 64, |p, v| {
            if p == cheater {
                let mut d = v.data().to_vec();
                d[5] += Z128(e);
                *v = Tensor::new(v.shape().to_vec(), d).unwrap();
            }
        });
        assert!(
            res.iter()
                .all(|r| matches!(r, Err(MpcError::Abort { check, .. }) if check.contains("MAC check"))),
            "cheater {cheater}, error {e:#x}: {res:?}"
        );
    }
}

#[test]
fn wrong_rings_are_refused() {
    let res = simulate(3, 30, |ctx| drelu::setup::<Z64, Z64>(ctx, 1).map(|_| ()));
    assert!(res.iter().all(|r| r.as_ref().unwrap_err().to_string().contains("MAC ring must be larger")));
}

/// One dealing split into parts serves each part's elements (the first, an empty and the
/// last part), with the MAC check; sizes that do not add up are refused.
#[test]
fn split_material_serves_each_part() {
    let xs = inputs::<Z32>(40, 30);
    let sizes = [12usize, 0, xs.len() - 12];
    let out = simulate(3, 41, |ctx| {
        let n = xs.len();
        let x = Tensor::new(vec![n], xs.to_vec())?;
        let s = share_input(ctx, 1, (ctx.party() == 1).then_some(&x), &[n])?;
        let one = random_one::<Z64>(ctx)?;
        let alpha = mac_key::<Z64>(ctx)?;
        let parts = drelu::setup_parts::<Z32, Z64>(ctx, &sizes, veil_mpc::mode::Security::Malicious)?;
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), sizes);
        let mut batch = MacBatch::new();
        let (mut got, mut at) = (Vec::new(), 0);
        for (keys, &len) in parts.iter().zip(&sizes) {
            let part = s.range(at, len)?;
            let (v, m) = drelu_terms(ctx, keys, &part, &one, &alpha)?;
            let out = lookup_finish(ctx, v, m, &mut batch)?;
            got.extend(open_all(ctx, &out)?.into_data());
            at += len;
        }
        batch.check(ctx, &alpha, 32, "drelu")?;
        let wrong = drelu::setup_parts::<Z32, Z64>(ctx, &[1], veil_mpc::mode::Security::Malicious)?
            .pop()
            .map(|k| k.split(&[2]).is_err());
        Ok((got, wrong))
    });
    for r in out {
        let (got, wrong) = r.unwrap();
        for (k, x) in xs.iter().enumerate() {
            assert_eq!(got[k], Z64(u64::from(!x.msb())), "DReLU({:?})", x.to_signed());
        }
        assert_eq!(wrong, Some(true));
    }
}

/// A dealer that alters any message of its own dealing (auxiliary data, digit keys, zero-test
/// keys: a bit flipped in the middle of the frame) is caught at setup: neither evaluator
/// finishes it. The servers deal their own material first and check after all three
/// dealings, so the dealer's frames are the first it sends in the setup.
#[test]
fn every_altered_dealer_message_is_caught_at_setup() {
    use veil_conformance::tamper::{Tamper, simulate_tampered};
    use veil_mpc::harness::SimConfig;
    let job = |ctx: &mut veil_mpc::Ctx| {
        let start = ctx.stats().total().messages_sent as usize;
        drelu::setup::<Z16, Z64>(ctx, 40)?;
        Ok(start)
    };
    let (clean, _) = simulate_tampered(3, SimConfig::new(50), None, job);
    let start = *clean[0].as_ref().unwrap();
    // Two shares of auxiliary data, two messages of digit keys, two of zero-test keys.
    for frame in start..start + 6 {
        let (res, altered) = simulate_tampered(3, SimConfig::new(50), Some(Tamper { party: 0, frame }), job);
        assert!(altered, "frame {frame} exists");
        assert!(res[1].is_err() && res[2].is_err(), "frame {frame} went unnoticed: {res:?}");
    }
}
