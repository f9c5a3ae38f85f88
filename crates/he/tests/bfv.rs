//! BFV at every preset against plaintext arithmetic mod p: round trips under either key,
//! ciphertext × plaintext and plaintext addition, at edge and random slot values.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use veil_he::{Bfv, BfvPreset};

fn mul_mod(a: u64, b: u64, p: u64) -> u64 {
    (u128::from(a) * u128::from(b) % u128::from(p)) as u64
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
        let edges = [0, 1, p - 1, p / 2, p / 2 + 1];
        let a: Vec<u64> =
            (0..n).map(|i| if i < edges.len() { edges[i] } else { rng.random_range(0..p) }).collect();
        let b: Vec<u64> = (0..n)
            .map(|i| if i < edges.len() { edges[edges.len() - 1 - i] } else { rng.random_range(0..p) })
            .collect();
        let c: Vec<u64> = (0..n).map(|_| rng.random_range(0..p)).collect();
        let (sk, pk) = bfv.keygen(&mut rng);
        for ct in [bfv.encrypt(&pk, &a, &mut rng).unwrap(), bfv.encrypt_secret(&sk, &a, &mut rng).unwrap()] {
            assert_eq!(bfv.decrypt(&sk, &ct).unwrap(), a, "{preset:?}: round trip");
            let prod = bfv.mul_plain(&ct, &bfv.encode(&b).unwrap());
            let sum = bfv.add_plain(&prod, &bfv.encode(&c).unwrap());
            let want: Vec<u64> = (0..n).map(|i| (mul_mod(a[i], b[i], p) + c[i]) % p).collect();
            assert_eq!(bfv.decrypt(&sk, &sum).unwrap(), want, "{preset:?}: a ⊙ b + c");
        }
    }
}

#[test]
fn bad_plaintexts_and_names_are_refused() {
    let bfv = Bfv::new(BfvPreset::N4096P16).unwrap();
    let p = bfv.plaintext_modulus();
    assert!(bfv.encode(&[p]).unwrap_err().to_string().contains("not an element"));
    assert!(bfv.encode(&vec![0; 4097]).unwrap_err().to_string().contains("4097 values for 4096 slots"));
    assert_eq!(BfvPreset::from_name("n8192-p60").unwrap(), BfvPreset::N8192P60);
    assert!(BfvPreset::from_name("n2").unwrap_err().to_string().contains("n4096-p16"));
}
