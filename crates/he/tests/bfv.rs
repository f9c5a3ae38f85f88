//! BFV at every preset against plaintext arithmetic mod t: round trips under either key,
//! ciphertext × plaintext, additions and modulus switching, at edge and random slot values;
//! the measured noise against the bounds the flooding analysis assumes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use veil_he::bfv::ERROR_BOUND;
use veil_he::{Bfv, BfvPreset};

fn mul_mod(a: u64, b: u64, p: u64) -> u64 {
    (u128::from(a) * u128::from(b) % u128::from(p)) as u64
}

fn values(rng: &mut ChaCha20Rng, n: usize, p: u64, reversed: bool) -> Vec<u64> {
    let edges = [0, 1, p - 1, p / 2, p / 2 + 1];
    (0..n)
        .map(|i| match i < edges.len() {
            true if reversed => edges[edges.len() - 1 - i],
            true => edges[i],
            false => rng.random_range(0..p),
        })
        .collect()
}

#[test]
fn every_preset_round_trips_and_computes_slotwise() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    for preset in BfvPreset::ALL {
        let bfv = Bfv::new(preset).unwrap();
        assert!(bfv.modulus_bits() <= preset.max_modulus_bits(), "{preset:?}: q too large for 128 bits");
        assert_eq!(bfv.slots(), preset.degree());
        let p = bfv.plaintext_modulus();
        assert_eq!(64 - p.leading_zeros() as usize, preset.plaintext_bits());
        assert_eq!(p % (2 * preset.degree() as u64), 1, "{preset:?}: p has no slots");
        let n = bfv.slots();
        let a = values(&mut rng, n, p, false);
        let b = values(&mut rng, n, p, true);
        let c: Vec<u64> = (0..n).map(|_| rng.random_range(0..p)).collect();
        assert_eq!(bfv.decode(&bfv.encode(&a).unwrap()).unwrap(), a);
        let (sk, pk) = bfv.keygen(&mut rng).unwrap();
        let pa = bfv.encode(&a).unwrap();
        let fresh = [
            bfv.encrypt_public(&pk, &pa, None, &mut rng).unwrap(),
            bfv.encrypt_secret(&sk, &pa, 0, &mut rng).unwrap(),
        ];
        for ct in fresh {
            assert!(bfv.decrypt(&sk, &ct).unwrap() == a, "{preset:?}: round trip");
            let prod = bfv.mul_plain(&ct, &bfv.operand(&bfv.encode(&b).unwrap(), 0).unwrap());
            let mut sum = bfv.add_plain(&prod, &bfv.encode(&c).unwrap()).unwrap();
            let want: Vec<u64> = (0..n).map(|i| (mul_mod(a[i], b[i], p) + c[i]) % p).collect();
            assert!(bfv.decrypt(&sk, &sum).unwrap() == want, "{preset:?}: a ⊙ b + c");
            let twice = bfv.add(&sum, &sum).unwrap();
            let doubled: Vec<u64> = want.iter().map(|&w| (2 * w) % p).collect();
            assert!(bfv.decrypt(&sk, &twice).unwrap() == doubled, "{preset:?}: ct + ct");
            for level in 1..=bfv.max_level() {
                bfv.switch_to(&mut sum, level).unwrap();
                assert!(bfv.decrypt(&sk, &sum).unwrap() == want, "{preset:?}: switched to level {level}");
            }
        }
        // Secret-key encryption at every level.
        for level in 0..=bfv.max_level() {
            let ct = bfv.encrypt_secret(&sk, &pa, level, &mut rng).unwrap();
            assert!(bfv.decrypt(&sk, &ct).unwrap() == a, "{preset:?}: level {level}");
        }
    }
}

#[test]
fn fresh_noise_is_within_its_bounds() {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let bfv = Bfv::new(BfvPreset::N8192P60).unwrap();
    let (sk, pk) = bfv.keygen(&mut rng).unwrap();
    let p = bfv.plaintext_modulus();
    let a: Vec<u64> = (0..bfv.slots()).map(|_| rng.random_range(0..p)).collect();
    let pa = bfv.encode(&a).unwrap();
    // Secret key: v = e − δ, |e| ≤ 20, δ ∈ [0, 1).
    let ct = bfv.encrypt_secret(&sk, &pa, 0, &mut rng).unwrap();
    let v = bfv.noise(&sk, &ct, &a).unwrap();
    assert!(v.iter().all(|x| x.unsigned_abs() <= ERROR_BOUND as u128));
    assert!(v.iter().any(|&x| x != 0), "the noise is not all zero");
    // Public key: e·u + e0 + e1·s − δ, at most 20·(2N + 1) + 1.
    let ct = bfv.encrypt_public(&pk, &pa, None, &mut rng).unwrap();
    let bound = ERROR_BOUND as u128 * (2 * bfv.slots() as u128 + 1) + 1;
    assert!(bfv.noise(&sk, &ct, &a).unwrap().iter().all(|x| x.unsigned_abs() <= bound));
    // Flooding by 2^100 stays in [−2^100, 2^100) plus the fresh noise, and fills it.
    let mut ct = bfv.encrypt_public(&pk, &pa, None, &mut rng).unwrap();
    bfv.flood(&mut ct, 100, &mut rng).unwrap();
    let v = bfv.noise(&sk, &ct, &a).unwrap();
    assert!(v.iter().all(|x| x.unsigned_abs() <= (1u128 << 100) + bound));
    assert!(v.iter().any(|x| x.unsigned_abs() > 1u128 << 99));
    assert_eq!(bfv.decrypt(&sk, &ct).unwrap(), a);
    // Past 2^127 the flooding is drawn as a·2^64 + b: 2^130 still decrypts (q/2t ≈ 2^139).
    let mut ct = bfv.encrypt_public(&pk, &pa, None, &mut rng).unwrap();
    bfv.flood(&mut ct, 130, &mut rng).unwrap();
    assert_eq!(bfv.decrypt(&sk, &ct).unwrap(), a);
}

#[test]
fn bad_plaintexts_levels_and_names_are_refused() {
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let bfv = Bfv::new(BfvPreset::N4096P16).unwrap();
    let p = bfv.plaintext_modulus();
    assert!(bfv.encode(&[p]).unwrap_err().to_string().contains("not an element"));
    assert!(bfv.encode(&vec![0; 4097]).unwrap_err().to_string().contains("4097 values for 4096 slots"));
    let (sk, _) = bfv.keygen(&mut rng).unwrap();
    let pt = bfv.encode(&[1, 2, 3]).unwrap();
    assert_eq!(bfv.max_level(), 2);
    assert!(bfv.encrypt_secret(&sk, &pt, 3, &mut rng).unwrap_err().to_string().contains("past the deepest"));
    assert_eq!(Bfv::new(BfvPreset::N8192P60).unwrap().max_level(), 2);
    assert_eq!(Bfv::new(BfvPreset::N8192P32).unwrap().max_level(), 1);
    let mut ct = bfv.encrypt_secret(&sk, &pt, 1, &mut rng).unwrap();
    assert!(bfv.switch_to(&mut ct, 0).unwrap_err().to_string().contains("from level 1 to 0"));
    let other = bfv.encrypt_secret(&sk, &pt, 0, &mut rng).unwrap();
    assert!(bfv.add(&ct, &other).unwrap_err().to_string().contains("levels 1 and 0"));
    assert!(bfv.flood(&mut ct, 191, &mut rng).unwrap_err().to_string().contains("past 2^190"));
    assert_eq!(BfvPreset::from_name("n8192-p60").unwrap(), BfvPreset::N8192P60);
    assert!(BfvPreset::from_name("n2").unwrap_err().to_string().contains("n4096-p16"));
}
