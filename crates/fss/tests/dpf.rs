//! Correctness of the DPF: `eval(k_0, x) + eval(k_1, x) = β·[x = α]`, and `eval_full` agrees
//! with `eval` entrywise.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rand::SeedableRng;
use rand::rngs::StdRng;
use veil_fss::{FssError, MAX_DOMAIN_BITS, eval, eval_full, eval_full_verified, gen_keys, verify};
use veil_ring::{Ring, Z16, Z32, Z64};

/// Checks one key pair on the whole domain, pointwise and full-domain.
fn check_pair<R: Ring>(alpha: u64, beta: R, d: u32, rng: &mut StdRng, pointwise: bool) {
    let (k0, k1) = gen_keys(alpha, beta, d, rng).unwrap();
    let f0 = eval_full(&k0).unwrap();
    let f1 = eval_full(&k1).unwrap();
    assert_eq!(f0.len(), 1 << d);
    for x in 0..(1u64 << d) {
        let expected = if x == alpha { beta } else { R::ZERO };
        assert_eq!(f0[x as usize] + f1[x as usize], expected, "d={d} alpha={alpha} x={x}");
        if pointwise || x == alpha || x % 97 == 0 {
            assert_eq!(eval(&k0, x).unwrap(), f0[x as usize]);
            assert_eq!(eval(&k1, x).unwrap(), f1[x as usize]);
        }
    }
    // The verified evaluation returns the same shares.
    let (v0, p0) = eval_full_verified(0, &k0).unwrap();
    let (v1, p1) = eval_full_verified(1, &k1).unwrap();
    assert_eq!(v0, f0);
    assert_eq!(v1, f1);
    assert!(verify(&p0, &p1));
}

fn every_alpha_small_domains<R: Ring>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    for d in 1..=8u32 {
        for alpha in 0..(1u64 << d) {
            check_pair(alpha, R::ONE, d, &mut rng, d <= 6);
            let beta = R::random(&mut rng);
            check_pair(alpha, beta, d, &mut rng, d <= 6);
        }
    }
}

fn random_alpha_d16<R: Ring>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..3 {
        let alpha = rand::RngCore::next_u64(&mut rng) & 0xffff;
        check_pair(alpha, R::ONE, 16, &mut rng, false);
        let beta = R::random(&mut rng);
        check_pair(alpha, beta, 16, &mut rng, false);
    }
}

#[test]
fn z64_every_alpha_d1_to_8() {
    every_alpha_small_domains::<Z64>(1);
}

#[test]
fn z32_every_alpha_d1_to_8() {
    every_alpha_small_domains::<Z32>(2);
}

#[test]
fn z16_every_alpha_d1_to_8() {
    every_alpha_small_domains::<Z16>(3);
}

#[test]
fn random_alpha_d16_all_rings() {
    random_alpha_d16::<Z64>(4);
    random_alpha_d16::<Z32>(5);
    random_alpha_d16::<Z16>(6);
}

#[test]
fn pointwise_eval_in_a_large_domain() {
    let mut rng = StdRng::seed_from_u64(7);
    let d = 40;
    let alpha = 0x12_3456_789a;
    let beta = Z64::from_u64(0xdead_beef);
    let (k0, k1) = gen_keys(alpha, beta, d, &mut rng).unwrap();
    assert_eq!(eval(&k0, alpha).unwrap() + eval(&k1, alpha).unwrap(), beta);
    for x in [0, 1, alpha - 1, alpha + 1, alpha ^ (1 << 39), (1 << 40) - 1] {
        assert_eq!(eval(&k0, x).unwrap() + eval(&k1, x).unwrap(), Z64::ZERO);
    }
    assert!(matches!(eval_full(&k0), Err(FssError::DomainTooLargeForFullEval { .. })));
}

#[test]
fn invalid_arguments_are_errors() {
    let mut rng = StdRng::seed_from_u64(8);
    assert!(matches!(gen_keys(0, Z64::ONE, 0, &mut rng), Err(FssError::InvalidDomainBits { .. })));
    assert!(matches!(
        gen_keys(0, Z64::ONE, MAX_DOMAIN_BITS + 1, &mut rng),
        Err(FssError::InvalidDomainBits { .. })
    ));
    assert!(matches!(gen_keys(16, Z64::ONE, 4, &mut rng), Err(FssError::AlphaOutOfRange { .. })));
    let (k0, k1) = gen_keys(3, Z64::ONE, 4, &mut rng).unwrap();
    assert!(matches!(eval(&k0, 16), Err(FssError::InputOutOfRange { .. })));
    assert_eq!(eval_full_verified(1, &k0).unwrap_err(), FssError::PartyMismatch { key: 0, requested: 1 });
    assert_eq!(eval_full_verified(2, &k1).unwrap_err(), FssError::InvalidParty(2));
    assert_eq!((k0.party(), k1.party(), k0.domain_bits()), (0, 1, 4));
    // Full 63-bit domain for pointwise evaluation.
    let top = (1u64 << 63) - 1;
    let (a0, a1) = gen_keys(top, Z64::ONE, 63, &mut rng).unwrap();
    assert_eq!(eval(&a0, top).unwrap() + eval(&a1, top).unwrap(), Z64::ONE);
    assert_eq!(eval(&a0, 0).unwrap() + eval(&a1, 0).unwrap(), Z64::ZERO);
}

/// Keys made side by side: every pair shares `β·e_α` at its own `α` and verifies, a batch of
/// one is exactly what `gen_keys` makes from the same generator, and a point out of range
/// anywhere refuses the batch.
#[test]
fn batched_key_generation() {
    for d in [1u32, 3, 6, 9] {
        let mut rng = StdRng::seed_from_u64(u64::from(d));
        let alphas: Vec<u64> = (0..37u64).map(|i| (i * 2_654_435_761) % (1 << d)).collect();
        let beta = Z32::from_u64(7);
        let keys = veil_fss::gen_keys_batch(&alphas, beta, d, &mut rng).unwrap();
        assert_eq!(keys.len(), alphas.len());
        for ((k0, k1), &alpha) in keys.iter().zip(&alphas) {
            let (v0, p0) = eval_full_verified(0, k0).unwrap();
            let (v1, p1) = eval_full_verified(1, k1).unwrap();
            assert!(verify(&p0, &p1), "d = {d}, α = {alpha}");
            for (x, (a, b)) in v0.iter().zip(&v1).enumerate() {
                let want = if x as u64 == alpha { beta } else { Z32::ZERO };
                assert_eq!(*a + *b, want, "d = {d}, α = {alpha}, x = {x}");
            }
        }
        let one = veil_fss::gen_keys_batch(&alphas[..1], beta, d, &mut StdRng::seed_from_u64(99)).unwrap();
        let single = gen_keys(alphas[0], beta, d, &mut StdRng::seed_from_u64(99)).unwrap();
        assert!(one[0] == single);
    }
    let mut rng = StdRng::seed_from_u64(5);
    assert!(matches!(
        veil_fss::gen_keys_batch(&[1, 9, 2], Z32::ONE, 3, &mut rng),
        Err(FssError::AlphaOutOfRange { alpha: 9, domain_bits: 3 })
    ));
}
