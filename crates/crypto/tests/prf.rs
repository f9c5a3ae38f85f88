//! PRF tests, including the FIPS-197 AES-128 known-answer test.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

use veil_crypto::{Domain, Prf, Prg, Seed, SessionId};

fn fips_key() -> Seed {
    let mut k = [0u8; 16];
    for (i, b) in k.iter_mut().enumerate() {
        *b = i as u8;
    }
    Seed(k)
}

#[test]
fn fips_197_appendix_c1_known_answer() {
    let prf = Prf::new(&fips_key());
    let expected =
        [0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a];
    assert_eq!(prf.eval(0x0011_2233_4455_6677_8899_aabb_ccdd_eeff), expected);
    let pt = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff];
    assert_eq!(prf.eval_block(&pt), expected);
    let mut batch = [pt; 11];
    prf.eval_blocks_in_place(&mut batch);
    assert!(batch.iter().all(|b| *b == expected));
}

#[test]
fn eval_u64_is_truncated_eval() {
    let prf = Prf::new(&fips_key());
    let full = prf.eval(0x0011_2233_4455_6677_8899_aabb_ccdd_eeff);
    let want = u64::from_le_bytes(full[..8].try_into().unwrap());
    assert_eq!(prf.eval_u64(0x0011_2233_4455_6677, 0x8899_aabb_ccdd_eeff), want);
}

#[test]
fn derived_prf_is_deterministic_and_separated() {
    let seed = Seed([3; 16]);
    let sid = SessionId([4; 16]);
    let d = Domain::new(sid, "ole", 0);
    let a = Prf::derive(&seed, &d);
    let b = Prf::derive(&seed, &d);
    let c = Prf::derive(&seed, &d.with_counter(1));
    assert_eq!(a.eval(42), b.eval(42));
    assert_ne!(a.eval(42), c.eval(42));
    assert_ne!(a.eval_u64(1, 2), a.eval_u64(2, 1));
    // The PRF key for a domain is not the PRG key for the same domain.
    let mut prg = Prg::derive(&seed, &d);
    assert_ne!(prg.next_block(), a.eval_block(&0u128.to_le_bytes()));
}
