//! RNS-CKKS against plaintext arithmetic: the embedding, encryption under either key at every
//! preset, additions and products with relinearisation and rescaling through a depth-4
//! circuit (≥ 20 bits of precision at Δ = 2^40), level drops down to one prime, rotations at
//! every power-of-two offset and others, hoisted rotations, conjugation; and the polynomial
//! layer's automorphisms in NTT form against the coefficient form.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::depth_four_error;
use num_complex::Complex64;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use veil_he::ckks::encoding::Encoder;
use veil_he::ckks::{Ckks, CkksPreset};

fn max_error(got: &[Complex64], want: &[Complex64]) -> f64 {
    got.iter().zip(want).map(|(g, w)| (g - w).norm()).fold(0.0, f64::max)
}

fn reals(rng: &mut ChaCha20Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

fn complex(v: &[f64]) -> Vec<Complex64> {
    v.iter().map(|&x| Complex64::new(x, 0.0)).collect()
}

#[test]
fn the_embedding_round_trips() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let enc = Encoder::new(64);
    let z: Vec<Complex64> =
        (0..32).map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))).collect();
    let coeffs = enc.embed_inverse(&z, 1.0);
    assert!(max_error(&enc.embed(&coeffs, 1.0), &z) < 1e-12);
    // A real vector's preimage is a real polynomial evaluated at the roots ζ^{5^j}.
    let n = 64usize;
    for (j, zj) in enc.embed(&coeffs, 1.0).iter().enumerate() {
        let e = (0..j).fold(1usize, |g, _| g * 5 % (2 * n));
        let root = Complex64::from_polar(1.0, std::f64::consts::PI * e as f64 / n as f64);
        let value: Complex64 = coeffs.iter().enumerate().map(|(i, &c)| c * root.powu(i as u32)).sum();
        assert!((value - zj).norm() < 1e-9, "slot {j}");
    }
}

#[test]
fn every_preset_encrypts_and_decrypts() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    for preset in CkksPreset::ALL {
        let ckks = Ckks::new(preset).unwrap();
        assert!(ckks.modulus_bits() <= preset.max_modulus_bits(), "{preset:?}");
        let (sk, pk) = ckks.keygen(&mut rng).unwrap();
        let v = reals(&mut rng, ckks.slots());
        let pt = ckks.encode(&v, ckks.default_scale(), ckks.top_level()).unwrap();
        let want = complex(&v);
        for ct in
            [ckks.encrypt(&pk, &pt, &mut rng).unwrap(), ckks.encrypt_secret(&sk, &pt, &mut rng).unwrap()]
        {
            let err = max_error(&ckks.decrypt_values(&sk, &ct).unwrap(), &want);
            // Fresh noise: variance ≈ 13.3·N per coefficient, ≈ 13.3·N² per slot, so the
            // largest slot error stays below 2^{log2 N + 5}/Δ.
            let bound = 2f64.powi(preset.degree().trailing_zeros() as i32 + 5 - preset.scale_bits() as i32);
            assert!(err < bound, "{preset:?}: error 2^{:.1}", err.log2());
            let low = ckks.drop_to_level(&ct, 0).unwrap();
            assert!(
                max_error(&ckks.decrypt_values(&sk, &low).unwrap(), &want) < bound,
                "{preset:?}: one prime"
            );
        }
    }
}

#[test]
fn a_depth_four_circuit_keeps_twenty_bits() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let ckks = Ckks::new(CkksPreset::N16384).unwrap();
    let n = ckks.slots();
    let (x, y, z, w) = (reals(&mut rng, n), reals(&mut rng, n), reals(&mut rng, n), reals(&mut rng, n));
    let (err, _, level) = depth_four_error(&ckks, [&x, &y, &z, &w], &mut rng);
    assert_eq!(level, 0);
    assert!(err < -20.0, "error 2^{err:.1}");
}

#[test]
fn rotations_conjugation_and_hoisting() {
    let mut rng = ChaCha20Rng::seed_from_u64(4);
    let ckks = Ckks::new(CkksPreset::N8192).unwrap();
    let (sk, pk) = ckks.keygen(&mut rng).unwrap();
    let n = ckks.slots();
    let steps: Vec<i64> = (0..12).map(|i| 1i64 << i).chain([3, 5, 100, -1, -7]).collect();
    let gk = ckks.galois_keys(&sk, &steps, true, &mut rng).unwrap();
    let z: Vec<Complex64> =
        (0..n).map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))).collect();
    let ct = ckks
        .encrypt(&pk, &ckks.encode_complex(&z, ckks.default_scale(), ckks.top_level()).unwrap(), &mut rng)
        .unwrap();
    let hoisted = ckks.rotate_hoisted(&ct, &steps, &gk).unwrap();
    for (&k, h) in steps.iter().zip(&hoisted) {
        let want: Vec<Complex64> = (0..n).map(|i| z[(i as i64 + k).rem_euclid(n as i64) as usize]).collect();
        let single = ckks.rotate(&ct, k, &gk).unwrap();
        for got in [&single, h] {
            let err = max_error(&ckks.decrypt_values(&sk, got).unwrap(), &want);
            assert!(err < 2f64.powi(-20), "rotation by {k}: error 2^{:.1}", err.log2());
        }
    }
    let conj = ckks.conjugate(&ct, &gk).unwrap();
    let want: Vec<Complex64> = z.iter().map(|v| v.conj()).collect();
    assert!(max_error(&ckks.decrypt_values(&sk, &conj).unwrap(), &want) < 2f64.powi(-20));
    // Rotations at a lower level, and a missing key is an error.
    let low = ckks.drop_to_level(&ct, 0).unwrap();
    let want: Vec<Complex64> = (0..n).map(|i| z[(i + 4) % n]).collect();
    assert!(
        max_error(&ckks.decrypt_values(&sk, &ckks.rotate(&low, 4, &gk).unwrap()).unwrap(), &want)
            < 2f64.powi(-20)
    );
    assert!(ckks.rotate(&ct, 6, &gk).unwrap_err().to_string().contains("no Galois key"));
}

#[test]
fn ntt_form_automorphisms_match_the_coefficient_form() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let ckks = Ckks::new(CkksPreset::N8192).unwrap();
    let ring = ckks.ring();
    let basis: Vec<usize> = (0..ring.primes().len()).collect();
    let coeffs: Vec<i64> = (0..ring.degree()).map(|_| rng.random_range(-1000..1000)).collect();
    let a = ring.from_small(&coeffs, &basis);
    for g in [5usize, 25, 3, 2 * ring.degree() - 1, 12345] {
        let mut by_coeffs = ring.automorphism(&a, g).unwrap();
        ring.to_ntt(&mut by_coeffs);
        let mut a_ntt = a.clone();
        ring.to_ntt(&mut a_ntt);
        assert!(ring.automorphism(&a_ntt, g).unwrap() == by_coeffs, "X ↦ X^{g}");
    }
    assert!(ring.automorphism(&a, 4).unwrap_err().to_string().contains("odd"));
}

#[test]
fn bad_inputs_are_refused() {
    let ckks = Ckks::new(CkksPreset::N8192).unwrap();
    let delta = ckks.default_scale();
    assert!(
        ckks.encode(&vec![0.0; 4097], delta, 0)
            .unwrap_err()
            .to_string()
            .contains("4097 values for 4096 slots")
    );
    assert!(ckks.encode(&[f64::NAN], delta, 0).unwrap_err().to_string().contains("not a finite"));
    assert!(ckks.encode(&[1e30], delta, 0).unwrap_err().to_string().contains("past 2^120"));
    assert!(ckks.encode(&[1.0], delta, 5).unwrap_err().to_string().contains("no level 5"));
    assert!(CkksPreset::from_name("ckks-n2").unwrap_err().to_string().contains("blb-block1"));
    let mut rng = ChaCha20Rng::seed_from_u64(6);
    let (sk, pk) = ckks.keygen(&mut rng).unwrap();
    let a = ckks.encrypt(&pk, &ckks.encode(&[1.0], delta, 1).unwrap(), &mut rng).unwrap();
    let b = ckks.encrypt(&pk, &ckks.encode(&[1.0], delta, 0).unwrap(), &mut rng).unwrap();
    assert!(ckks.add(&a, &b).unwrap_err().to_string().contains("levels 1 and 0"));
    let c = ckks.encrypt(&pk, &ckks.encode(&[1.0], 2.0 * delta, 1).unwrap(), &mut rng).unwrap();
    assert!(ckks.add(&a, &c).unwrap_err().to_string().contains("scales"));
    assert!(ckks.rescale(&b).unwrap_err().to_string().contains("level 0"));
    assert!(ckks.drop_to_level(&b, 1).unwrap_err().to_string().contains("cannot raise"));
    let _ = sk;
}

#[test]
fn ciphertexts_and_keys_cross_the_wire_checked() {
    use veil_he::ckks::wire;
    use veil_mpc::MpcError;
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let ckks = Ckks::new(CkksPreset::N8192).unwrap();
    let (sk, pk) = ckks.keygen(&mut rng).unwrap();
    let rk = ckks.relin_key(&sk, &mut rng).unwrap();
    let gk = ckks.galois_keys(&sk, &[1, 2], true, &mut rng).unwrap();
    let v = reals(&mut rng, ckks.slots());
    let ct = ckks
        .encrypt(&pk, &ckks.encode(&v, ckks.default_scale(), ckks.top_level()).unwrap(), &mut rng)
        .unwrap();
    let product = ckks.mul(&ct, &ct).unwrap();
    for c in [&ct, &product, &ckks.drop_to_level(&ct, 0).unwrap()] {
        let bytes = wire::encode_ciphertext(&ckks, c);
        assert_eq!(bytes.len(), wire::ciphertext_bytes(&ckks, c.parts.len(), c.level()));
        assert!(wire::decode_ciphertext(&ckks, 1, &bytes).unwrap() == *c);
    }
    let pk2 = wire::decode_public_key(&ckks, 1, &wire::encode_public_key(&ckks, &pk)).unwrap();
    assert!(pk2 == pk);
    let rk2 = wire::decode_switching_key(&ckks, 1, &wire::encode_switching_key(&ckks, &rk)).unwrap();
    assert!(rk2 == rk);
    let gk_bytes = wire::encode_galois_keys(&ckks, &gk);
    let gk2 = wire::decode_galois_keys(&ckks, 1, &gk_bytes).unwrap();
    assert!(gk2.keys == gk.keys);
    // Keys that crossed still work.
    let rotated = ckks.rotate(&ckks.relinearize(&product, &rk2).unwrap(), 1, &gk2).unwrap();
    let want: Vec<Complex64> =
        (0..ckks.slots()).map(|i| Complex64::new(v[(i + 1) % ckks.slots()].powi(2), 0.0)).collect();
    let got = ckks.decode(&ckks.decrypt(&sk, &rotated).unwrap()).unwrap();
    assert!(max_error(&got, &want) < 2f64.powi(-20));

    let malformed = |r: veil_mpc::Result<veil_he::ckks::Ciphertext>| match r {
        Err(MpcError::Malformed { from: 1, what }) => what,
        other => panic!("expected a malformed-message error, got {other:?}"),
    };
    let good = wire::encode_ciphertext(&ckks, &ct);
    assert!(
        malformed(wire::decode_ciphertext(&ckks, 1, &good[..good.len() - 1])).contains("is 204810 bytes")
    );
    assert!(malformed(wire::decode_ciphertext(&ckks, 1, &good[..5])).contains("header is cut short"));
    let mut bad = good.clone();
    bad[0] = 4;
    assert!(malformed(wire::decode_ciphertext(&ckks, 1, &bad)).contains("4 parts"));
    let mut bad = good.clone();
    bad[1] = 9;
    assert!(malformed(wire::decode_ciphertext(&ckks, 1, &bad)).contains("level 9"));
    let mut bad = good.clone();
    bad[2..10].copy_from_slice(&f64::NAN.to_le_bytes());
    assert!(malformed(wire::decode_ciphertext(&ckks, 1, &bad)).contains("scale NaN"));
    let mut bad = good.clone();
    bad[10..18].copy_from_slice(&[0xff; 8]);
    assert!(malformed(wire::decode_ciphertext(&ckks, 1, &bad)).contains("residue 0 mod prime 0"));
    let mut bad = gk_bytes.clone();
    bad[2] = 2; // an even Galois element
    assert!(wire::decode_galois_keys(&ckks, 1, &bad).unwrap_err().to_string().contains("odd"));
    let mut bad = gk_bytes.clone();
    bad[0..2].copy_from_slice(&65u16.to_le_bytes());
    assert!(wire::decode_galois_keys(&ckks, 1, &bad).unwrap_err().to_string().contains("at most 64"));
    let rk_bytes = wire::encode_switching_key(&ckks, &rk);
    assert!(
        wire::decode_switching_key(&ckks, 1, &rk_bytes[..100]).unwrap_err().to_string().contains("cut short")
    );
    let mut bad = rk_bytes.clone();
    bad[0] = 5;
    assert!(wire::decode_switching_key(&ckks, 1, &bad).unwrap_err().to_string().contains("5 digits"));
}

#[test]
fn every_preset_multiplies_rescales_rotates_and_conjugates() {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    for preset in CkksPreset::ALL {
        let ckks = Ckks::new(preset).unwrap();
        let (sk, pk) = ckks.keygen(&mut rng).unwrap();
        let rk = ckks.relin_key(&sk, &mut rng).unwrap();
        let gk = ckks.galois_keys(&sk, &[3], true, &mut rng).unwrap();
        let n = ckks.slots();
        let z: Vec<Complex64> = (0..n)
            .map(|_| Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)))
            .collect();
        let top = ckks.top_level();
        let ct = ckks
            .encrypt(&pk, &ckks.encode_complex(&z, ckks.default_scale(), top).unwrap(), &mut rng)
            .unwrap();
        // z², rescaled by the last data prime when the scale stays at least 2^30 (the BLB
        // chains' primes differ from Δ, so the scale is tracked, not assumed: a waterline as
        // EVA's), then rotated by 3 and conjugated.
        let mut sq = ckks.mul_relin(&ct, &ct, &rk).unwrap();
        if sq.scale / ckks.ring().modulus(top) as f64 >= 2f64.powi(30) {
            sq = ckks.rescale(&sq).unwrap();
        }
        let out = ckks.conjugate(&ckks.rotate(&sq, 3, &gk).unwrap(), &gk).unwrap();
        let want: Vec<Complex64> = (0..n).map(|i| (z[(i + 3) % n] * z[(i + 3) % n]).conj()).collect();
        let err = max_error(&ckks.decrypt_values(&sk, &out).unwrap(), &want);
        let bound =
            2f64.powi(preset.degree().trailing_zeros() as i32 + 6) / sq.scale.min(ckks.default_scale());
        eprintln!("{preset:?}: scale 2^{:.1}, error 2^{:.1}", sq.scale.log2(), err.log2());
        assert!(err < bound, "{preset:?}: error 2^{:.1}, bound 2^{:.1}", err.log2(), bound.log2());
    }
}
