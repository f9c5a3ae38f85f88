//! A malicious dealer's tampering with key internals is caught by VDPF verification or by the
//! opened one-hot checks (white-box: mutates private key fields).

use rand::SeedableRng;
use rand::rngs::StdRng;
use veil_ring::{Ring, Z32, Z64};

use crate::{DpfKey, FssError, check_opened, eval_full_verified, gen_keys, one_hot_checks, verify};

/// How the evaluators' pipeline ended.
#[derive(Debug, PartialEq)]
enum Outcome {
    ProofMismatch,
    Check(FssError),
    /// Both checks passed and the shared vector is exactly `e_α` (tampering was a no-op, e.g. a
    /// correction word that the tampered party never applies).
    Accepted,
    /// Both checks passed but the shared vector is wrong: a soundness failure.
    AcceptedWrong,
}

/// Verified evaluation, proof exchange, then the opened checks with `[[α]] = (α − r) + r`.
fn run<R: Ring>(k0: &DpfKey<R>, k1: &DpfKey<R>, alpha: u64, rng: &mut StdRng) -> Outcome {
    let (v0, p0) = eval_full_verified(0, k0).unwrap();
    let (v1, p1) = eval_full_verified(1, k1).unwrap();
    if !verify(&p0, &p1) {
        return Outcome::ProofMismatch;
    }
    let r = R::random(rng);
    let (t0, s0) = one_hot_checks(&v0, R::from_u64(alpha) - r);
    let (t1, s1) = one_hot_checks(&v1, r);
    match check_opened(t0 + t1, s0 + s1) {
        Ok(()) => {
            let correct = (0u64..)
                .zip(v0.iter().zip(&v1))
                .all(|(x, (a, b))| *a + *b == if x == alpha { R::ONE } else { R::ZERO });
            if correct { Outcome::Accepted } else { Outcome::AcceptedWrong }
        }
        Err(e) => Outcome::Check(e),
    }
}

fn honest(seed: u64, d: u32) -> (u64, DpfKey<Z64>, DpfKey<Z64>, StdRng) {
    let mut rng = StdRng::seed_from_u64(seed);
    let alpha = rand::Rng::gen_range(&mut rng, 0..(1u64 << d));
    let (k0, k1) = gen_keys(alpha, Z64::ONE, d, &mut rng).unwrap();
    (alpha, k0, k1, rng)
}

#[test]
fn honest_keys_are_accepted() {
    for seed in 0..50 {
        let (alpha, k0, k1, mut rng) = honest(seed, 1 + (seed as u32 % 10));
        assert_eq!(run(&k0, &k1, alpha, &mut rng), Outcome::Accepted);
    }
}

#[test]
fn flipped_correction_seed_bit_is_rejected() {
    let mut rejected = 0;
    for seed in 0..40 {
        let d = 6;
        let (alpha, mut k0, mut k1, mut rng) = honest(seed, d);
        let level = seed as usize % d as usize;
        let bit = (seed * 37) % 128;
        match seed % 3 {
            0 => k0.cws[level].seed ^= 1 << bit,
            1 => k1.cws[level].seed ^= 1 << bit,
            _ => {
                k0.cws[level].seed ^= 1 << bit;
                k1.cws[level].seed ^= 1 << bit;
            }
        }
        let outcome = run(&k0, &k1, alpha, &mut rng);
        assert_ne!(outcome, Outcome::AcceptedWrong, "seed {seed}");
        rejected += usize::from(outcome != Outcome::Accepted);
    }
    assert!(rejected >= 25, "only {rejected} of 40 tamperings changed the function");
}

#[test]
fn flipped_control_bit_is_rejected() {
    let mut rejected = 0;
    for seed in 0..40 {
        let d = 5;
        let (alpha, mut k0, mut k1, mut rng) = honest(seed, d);
        let level = seed as usize % d as usize;
        let both = seed % 4 == 3;
        for k in [&mut k0, &mut k1].into_iter().take(if both { 2 } else { 1 }) {
            if seed % 2 == 0 {
                k.cws[level].t_left ^= true;
            } else {
                k.cws[level].t_right ^= true;
            }
        }
        let outcome = run(&k0, &k1, alpha, &mut rng);
        assert_ne!(outcome, Outcome::AcceptedWrong, "seed {seed}");
        rejected += usize::from(outcome != Outcome::Accepted);
    }
    assert!(rejected >= 25, "only {rejected} of 40 tamperings changed the function");
}

#[test]
fn output_correction_tampering_is_rejected() {
    for seed in 0..20 {
        let (alpha, k0, k1, mut rng) = honest(seed, 6);
        // Consistent change in both keys: a valid point function with β ≠ 1, so the proofs agree
        // and the opened sum t = β catches it.
        let delta = Z64::from_u64(1 + seed);
        let (mut a0, mut a1) = (k0.clone(), k1.clone());
        a0.ocw += delta;
        a1.ocw += delta;
        assert_eq!(run(&a0, &a1, alpha, &mut rng), Outcome::Check(FssError::OneHotSumNotOne));
        // Only one key changed: OCW is bound into the proof.
        let mut b1 = k1.clone();
        b1.ocw += delta;
        assert_eq!(run(&k0, &b1, alpha, &mut rng), Outcome::ProofMismatch);
    }
    // A dealer generating β = 2 honestly is caught by t = 1 as well.
    let mut rng = StdRng::seed_from_u64(99);
    let (k0, k1) = gen_keys(3, Z32::from_u64(2), 4, &mut rng).unwrap();
    assert_eq!(run(&k0, &k1, 3, &mut rng), Outcome::Check(FssError::OneHotSumNotOne));
}

#[test]
fn check_string_tampering_is_rejected() {
    for seed in 0..20 {
        let (alpha, mut k0, mut k1, mut rng) = honest(seed, 5);
        let byte = seed as usize % 64;
        k0.cs[byte] ^= 1 << (seed % 8);
        if seed % 2 == 0 {
            k1.cs[byte] ^= 1 << (seed % 8);
        }
        assert_eq!(run(&k0, &k1, alpha, &mut rng), Outcome::ProofMismatch, "seed {seed}");
    }
}

#[test]
fn root_seed_tampering_is_rejected() {
    for seed in 0..20 {
        let (alpha, mut k0, k1, mut rng) = honest(seed, 4);
        // Bit 0 of a root seed only swaps the children of G; every other bit changes the tree.
        k0.root ^= 1 << (1 + seed * 5 % 127);
        assert_ne!(run(&k0, &k1, alpha, &mut rng), Outcome::Accepted, "seed {seed}");
    }
}

#[test]
fn a_batch_proof_checks_every_key_of_the_batch() {
    // Mixed domains, interleaved (as a comparison's digit keys are): the batch is taken by
    // domain, and the 2^12-point keys are passes of their own.
    let domains = [5u32, 3, 12, 5, 1, 12, 3, 5];
    let keys: Vec<_> = (0..16).map(|s| honest(100 + s, domains[s as usize % domains.len()])).collect();
    let k0: Vec<DpfKey<Z64>> = keys.iter().map(|k| k.1.clone()).collect();
    let mut k1: Vec<DpfKey<Z64>> = keys.iter().map(|k| k.2.clone()).collect();
    let (t0, p0) = crate::eval_full_verified_batch(0, &k0).unwrap();
    let (t1, p1) = crate::eval_full_verified_batch(1, &k1).unwrap();
    assert!(verify(&p0, &p1), "honest batch");
    let total: usize = k0.iter().map(|k| 1usize << k.domain_bits).sum();
    assert_eq!((t0.len(), t1.len()), (total, total), "the tables one after the other");
    let mut at = 0;
    for (i, k) in k0.iter().enumerate() {
        let len = 1usize << k.domain_bits;
        let (t0, t1) = (&t0[at..at + len], &t1[at..at + len]);
        at += len;
        assert_eq!(t0, eval_full_verified(0, k).unwrap().0, "same tables as one key at a time");
        assert_eq!(t1, eval_full_verified(1, &k1[i]).unwrap().0);
        assert_eq!(t0, crate::eval_full(k).unwrap(), "the unverified expansion agrees");
        let alpha = keys[i].0 as usize;
        for (x, (a, b)) in t0.iter().zip(t1).enumerate() {
            assert_eq!(*a + *b, if x == alpha { Z64::ONE } else { Z64::ZERO }, "key {i}, x = {x}");
        }
    }
    // A flipped bit of a correction seed, in a key of every domain.
    for i in [2usize, 4, 9, 14] {
        k1[i].cws[0].seed ^= 1 << 9;
        let (_, p1) = crate::eval_full_verified_batch(1, &k1).unwrap();
        assert!(!verify(&p0, &p1), "tampered correction seed in key {i}");
        k1[i].cws[0].seed ^= 1 << 9;
    }
    // One tampered key anywhere in the batch changes the batch proof.
    k1[4].ocw += Z64::ONE;
    let (_, p1) = crate::eval_full_verified_batch(1, &k1).unwrap();
    assert!(!verify(&p0, &p1), "tampered OCW in key 4");
    k1[4].ocw -= Z64::ONE;
    k1[2].cs[7] ^= 1;
    let (_, p1) = crate::eval_full_verified_batch(1, &k1).unwrap();
    assert!(!verify(&p0, &p1), "tampered cs in key 2");
    assert!(crate::eval_full_verified_batch(0, &k1).is_err(), "keys of the other party");
}
