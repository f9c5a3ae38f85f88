//! Π_UCMP with keys dealt and verified by the parties, against plaintext `1{x < y}`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rand::{Rng, SeedableRng, rngs::StdRng};
use veil_fss::gen_keys;
use veil_mosformer::ucmp::{self, dealer_message, evaluators};
use veil_mpc::harness::simulate;
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z8};

/// The pair's additive shares of the bits of `xs` (role-0 share, role-1 share).
fn bit_shares(xs: &[u64], bits: usize, seed: u64) -> (Vec<Z8>, Vec<Z8>) {
    let mut g = StdRng::seed_from_u64(seed);
    let mut s0 = Vec::new();
    let mut s1 = Vec::new();
    for &x in xs {
        for i in 0..bits {
            let r = Z8(g.r#gen());
            s0.push(r);
            s1.push(Z8::from_u64((x >> i) & 1) - r);
        }
    }
    (s0, s1)
}

/// An evaluator's result shares (None at the dealer), offline and online bytes sent.
type PartyOutcome = (Option<Vec<Z8>>, u64, u64);

/// Runs setup and evaluation with dealer `dealer`; returns `1{x < y}` per pair, reconstructed.
fn compare(dealer: usize, bits: usize, xs: &[u64], ys: &[u64], seed: u64) -> Vec<u8> {
    let (s0, s1) = bit_shares(xs, bits, seed);
    let (e0, e1) = evaluators(dealer);
    let out: Vec<Result<PartyOutcome>> = simulate(3, seed, |ctx| {
        ctx.set_phase("offline");
        let keys = ucmp::setup(ctx, dealer, bits, xs.len())?;
        ctx.set_phase("online");
        let res = match keys {
            None => None,
            Some(k) => {
                let (mine, partner) = if ctx.party() == e0 { (&s0, e1) } else { (&s1, e0) };
                Some(ucmp::eval(ctx, &k, partner, mine, ys)?)
            }
        };
        Ok((res, ctx.stats().get("offline").bytes_sent, ctx.stats().get("online").bytes_sent))
    });
    let out: Vec<_> = out.into_iter().map(|r| r.unwrap()).collect();
    // Online: each evaluator sends d = ⌈log2 2n⌉ bits per compared bit, packed; the dealer nothing.
    assert_eq!(out[dealer].2, 0);
    let d = ucmp::domain_bits(bits) as usize;
    assert_eq!(out[e0].2, (bits * xs.len() * d).div_ceil(8) as u64);
    let r0 = out[e0].0.as_ref().unwrap();
    let r1 = out[e1].0.as_ref().unwrap();
    // XOR shares: bits.
    assert!(r0.iter().chain(r1).all(|v| v.0 <= 1));
    r0.iter().zip(r1).map(|(a, b)| a.0 ^ b.0).collect()
}

#[test]
fn paper_table_2_vectors() {
    // x = 7, y = 5 → 0; x = 3, y = 5 → 1 (n = 4).
    assert_eq!(compare(0, 4, &[7, 3], &[5, 5], 1), vec![0, 1]);
}

#[test]
fn exhaustive_four_bits_every_dealer() {
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for x in 0..16 {
        for y in 0..16 {
            xs.push(x);
            ys.push(y);
        }
    }
    for dealer in 0..3 {
        let got = compare(dealer, 4, &xs, &ys, 2 + dealer as u64);
        for k in 0..xs.len() {
            assert_eq!(got[k], u8::from(xs[k] < ys[k]), "x={} y={} dealer {dealer}", xs[k], ys[k]);
        }
    }
}

#[test]
fn random_31_bit_values() {
    let mut g = StdRng::seed_from_u64(3);
    let mut xs: Vec<u64> = (0..100).map(|_| g.gen_range(0..1 << 31)).collect();
    let mut ys: Vec<u64> = (0..100).map(|_| g.gen_range(0..1 << 31)).collect();
    xs.extend([0, (1 << 31) - 1, 5, 5]);
    ys.extend([(1 << 31) - 1, 0, 5, 6]);
    let got = compare(1, 31, &xs, &ys, 4);
    for k in 0..xs.len() {
        assert_eq!(got[k], u8::from(xs[k] < ys[k]));
    }
}

/// A malicious dealer sends its evaluators whatever `forge` produces (role-0 and role-1
/// messages); the honest evaluators must abort in setup, blaming the dealer.
fn malicious_dealer(forge: impl Fn(&mut Ctx) -> (Vec<u8>, Vec<u8>) + Sync) -> Vec<String> {
    let res = simulate(3, 5, |ctx| {
        if ctx.party() == 0 {
            let (m0, m1) = forge(ctx);
            let (e0, e1) = evaluators(0);
            ctx.net().send(e0, m0)?;
            ctx.net().send(e1, m1)?;
            return Ok(());
        }
        ucmp::setup(ctx, 0, 4, 2).map(|_| ())
    });
    res.into_iter()
        .skip(1)
        .map(|r| match r {
            Err(e @ MpcError::Abort { .. }) => e.to_string(),
            other => panic!("expected an abort, got {other:?}"),
        })
        .collect()
}

fn keys_for(ctx: &mut Ctx, alphas: &[u64], beta: Z8, share_shift: u8) -> (Vec<u8>, Vec<u8>) {
    let d = ucmp::domain_bits(4);
    let (mut a0, mut a1, mut k0, mut k1) = (vec![], vec![], vec![], vec![]);
    for &alpha in alphas {
        let (x, y) = gen_keys(alpha, beta, d, ctx.rng()).unwrap();
        let s = Z8::random(ctx.rng());
        a0.push(s);
        a1.push(Z8::from_u64(alpha) - s + Z8(share_shift));
        k0.push(x);
        k1.push(y);
    }
    (dealer_message(&a0, &k0), dealer_message(&a1, &k1))
}

#[test]
fn dealer_with_beta_two_is_caught() {
    let errs = malicious_dealer(|ctx| keys_for(ctx, &[1, 2, 3, 4, 5, 6, 7, 0], Z8(2), 0));
    assert!(errs.iter().all(|e| e.contains("one-hot check") && e.contains("party 0")), "{errs:?}");
}

#[test]
fn dealer_whose_alpha_shares_do_not_match_the_keys_is_caught() {
    let errs = malicious_dealer(|ctx| keys_for(ctx, &[1, 2, 3, 4, 5, 6, 7, 0], Z8::ONE, 1));
    assert!(errs.iter().all(|e| e.contains("one-hot check")), "{errs:?}");
}

#[test]
fn dealer_mixing_keys_of_different_points_is_caught() {
    let errs = malicious_dealer(|ctx| {
        let (m0, _) = keys_for(ctx, &[1; 8], Z8::ONE, 0);
        let (_, m1) = keys_for(ctx, &[2; 8], Z8::ONE, 0);
        (m0, m1)
    });
    assert!(errs.iter().all(|e| e.contains("VDPF verification") || e.contains("one-hot")), "{errs:?}");
}

#[test]
fn dealer_sending_garbage_is_caught_without_panic() {
    let res = simulate(3, 6, |ctx| {
        if ctx.party() == 0 {
            ctx.net().send(2, vec![0xff; 10])?;
            ctx.net().send(1, vec![0xff; 10])?;
            return Ok(());
        }
        ucmp::setup(ctx, 0, 4, 2).map(|_| ())
    });
    for r in res.iter().skip(1) {
        assert!(matches!(r, Err(MpcError::Malformed { from: 0, .. })), "{r:?}");
    }
}

#[test]
fn honest_setups_never_abort() {
    for seed in 0..10 {
        let got = compare((seed % 3) as usize, 5, &[3, 17, 31, 0], &[4, 17, 2, 1], 100 + seed);
        assert_eq!(got, vec![1, 0, 0, 1]);
    }
}

#[test]
fn widest_comparison_64_bits() {
    // n = 64 bits → 2n = 128 → d = 7.
    let xs = [0u64, 5, (1 << 63) + 7, u64::MAX - 1];
    let ys = [1u64, 5, 1 << 63, u64::MAX];
    assert_eq!(compare(2, 64, &xs, &ys, 9), vec![1, 0, 0, 1]);
    let res = simulate(3, 10, |ctx| ucmp::setup(ctx, 0, 65, 1).map(|_| ()));
    assert!(res.iter().all(|r| r.as_ref().unwrap_err().to_string().contains("1 to 64 bits")));
}
