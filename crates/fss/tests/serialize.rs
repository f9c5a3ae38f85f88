//! Key encoding: round trip, sizes, and rejection of malformed bytes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use veil_fss::{DpfKey, FssError, eval_full, gen_keys, key_bytes, paper_key_bits};
use veil_ring::{Ring, Z16, Z32, Z64};

fn round_trip<R: Ring>(seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    for d in [1u32, 2, 3, 4, 5, 7, 8, 12, 16] {
        let alpha = rng.gen_range(0..(1u64 << d));
        let (k0, k1) = gen_keys(alpha, R::random(&mut rng), d, &mut rng).unwrap();
        for k in [&k0, &k1] {
            let bytes = k.to_bytes();
            assert_eq!(bytes.len(), key_bytes::<R>(d));
            let back = DpfKey::<R>::from_bytes(&bytes, d).unwrap();
            assert!(back == *k);
            assert_eq!(back.to_bytes(), bytes);
        }
        let (b0, b1) = (
            DpfKey::<R>::from_bytes(&k0.to_bytes(), d).unwrap(),
            DpfKey::<R>::from_bytes(&k1.to_bytes(), d).unwrap(),
        );
        let (f0, f1) = (eval_full(&b0).unwrap(), eval_full(&b1).unwrap());
        let nonzero = f0.iter().zip(&f1).filter(|(a, b)| **a + **b != R::ZERO).count();
        assert!(nonzero <= 1);
    }
}

#[test]
fn round_trip_all_rings() {
    round_trip::<Z64>(1);
    round_trip::<Z32>(2);
    round_trip::<Z16>(3);
}

#[test]
fn sizes_match_formula() {
    // 4 header + 16 root + 16 d + ceil(2d/8) + 64 cs + |G|.
    assert_eq!(key_bytes::<Z64>(8), 4 + 16 + 128 + 2 + 64 + 8);
    assert_eq!(key_bytes::<Z32>(5), 4 + 16 + 80 + 2 + 64 + 4);
    assert_eq!(paper_key_bits::<Z64>(8), 130 * 8 + 64 + 512);
    for d in 1..=20 {
        // Ours = paper + root seed + header + bit padding.
        let ours = 8 * key_bytes::<Z16>(d);
        let paper = paper_key_bits::<Z16>(d) + 128 + 32;
        assert!(ours >= paper && ours < paper + 8, "d={d}");
    }
}

#[test]
fn rejects_malformed_bytes() {
    let mut rng = StdRng::seed_from_u64(9);
    let d = 7;
    let (k0, _) = gen_keys(5, Z32::ONE, d, &mut rng).unwrap();
    let good = k0.to_bytes();
    // Truncated at every length.
    for len in 0..good.len() {
        assert!(DpfKey::<Z32>::from_bytes(&good[..len], d).is_err(), "len {len}");
    }
    // Oversized.
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(DpfKey::<Z32>::from_bytes(&long, d), Err(FssError::KeyLength { .. })));
    // Header fields.
    let with = |i: usize, v: u8| {
        let mut b = good.clone();
        b[i] = v;
        DpfKey::<Z32>::from_bytes(&b, d)
    };
    assert_eq!(with(0, 2).unwrap_err(), FssError::UnsupportedVersion(2));
    assert_eq!(with(1, 2).unwrap_err(), FssError::InvalidParty(2));
    assert!(matches!(with(2, 8), Err(FssError::DomainMismatch { expected: 7, found: 8 })));
    assert!(matches!(with(3, 8), Err(FssError::RingMismatch { expected: 4, found: 8 })));
    // Wrong expectations of the caller.
    assert!(matches!(DpfKey::<Z32>::from_bytes(&good, 8), Err(FssError::DomainMismatch { .. })));
    assert!(matches!(DpfKey::<Z64>::from_bytes(&good, d), Err(FssError::RingMismatch { .. })));
    assert!(matches!(DpfKey::<Z32>::from_bytes(&good, 0), Err(FssError::InvalidDomainBits { .. })));
    // Padding bits after the 14 control-bit corrections (2 bytes; bits 14, 15 of the second are padding).
    let bits_end = 4 + 16 + 16 * 7 + 2;
    let mut padded = good.clone();
    padded[bits_end - 1] |= 0x80;
    assert!(matches!(DpfKey::<Z32>::from_bytes(&padded, d), Err(FssError::NonCanonical(_))));
    // A seed's low bit (the root at byte 4, the level-3 correction seed at byte 4 + 16·4) is
    // always zero in a generated key: the expansion keeps the control bit there.
    for at in [4, 4 + 16 * 4] {
        let mut odd = good.clone();
        odd[at] |= 1;
        assert!(matches!(DpfKey::<Z32>::from_bytes(&odd, d), Err(FssError::NonCanonical(_))), "byte {at}");
    }
    // Garbage never panics.
    for len in [0usize, 1, 3, 4, 50, good.len(), good.len() + 1, 1000] {
        for _ in 0..200 {
            let mut junk = vec![0u8; len];
            rng.fill(&mut junk[..]);
            if rng.gen_bool(0.5) && len >= 4 {
                junk[..4].copy_from_slice(&good[..4]);
            }
            let _ = DpfKey::<Z32>::from_bytes(&junk, d);
        }
    }
    assert!(DpfKey::<Z32>::from_bytes(&[], d).is_err());
}
