//! Commitment and coin-toss tests.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

use rand::SeedableRng as _;
use rand::rngs::StdRng;
use veil_crypto::{
    CryptoError, Opening, Seed, SessionId, combine_seeds, commit, commit_in_session, verify_commitment,
    verify_commitment_in_session,
};

#[test]
fn honest_opening_verifies() {
    let mut rng = StdRng::seed_from_u64(1);
    let (c, o) = commit(&mut rng, b"my share");
    assert!(verify_commitment(&c, &o, b"my share").is_ok());
    let (c2, o2) = commit(&mut rng, b"");
    assert!(verify_commitment(&c2, &o2, b"").is_ok());
}

#[test]
fn changed_value_or_randomness_is_rejected() {
    let mut rng = StdRng::seed_from_u64(2);
    let (c, o) = commit(&mut rng, b"my share");
    assert_eq!(verify_commitment(&c, &o, b"my shard"), Err(CryptoError::CommitmentMismatch));
    assert!(verify_commitment(&c, &o, b"my share\0").is_err());
    let mut bad = o.randomness;
    bad[15] ^= 1;
    let bad = Opening { randomness: bad };
    assert!(verify_commitment(&c, &bad, b"my share").is_err());
    let mut c_bad = c;
    c_bad.0[0] ^= 0x80;
    assert!(verify_commitment(&c_bad, &o, b"my share").is_err());
}

#[test]
fn commitments_hide_with_fresh_randomness() {
    let mut rng = StdRng::seed_from_u64(3);
    let (c1, o1) = commit(&mut rng, b"x");
    let (c2, o2) = commit(&mut rng, b"x");
    assert_ne!(c1, c2);
    assert_ne!(o1, o2);
    assert_eq!(format!("{o1:?}"), "Opening { randomness: <redacted> }");
}

#[test]
fn session_binding() {
    let mut rng = StdRng::seed_from_u64(4);
    let s1 = SessionId([1; 16]);
    let s2 = SessionId([2; 16]);
    let (c, o) = commit_in_session(&mut rng, &s1, b"v");
    assert!(verify_commitment_in_session(&s1, &c, &o, b"v").is_ok());
    assert!(verify_commitment_in_session(&s2, &c, &o, b"v").is_err());
    assert!(verify_commitment(&c, &o, b"v").is_err());
}

#[test]
fn combine_seeds_is_order_sensitive_and_deterministic() {
    let a = Seed([1; 16]);
    let b = Seed([2; 16]);
    let c = Seed([3; 16]);
    let abc = combine_seeds("triples", &[a.clone(), b.clone(), c.clone()]);
    assert_eq!(abc, combine_seeds("triples", &[a.clone(), b.clone(), c.clone()]));
    assert_ne!(abc, combine_seeds("triples", &[b.clone(), a.clone(), c.clone()]));
    assert_ne!(abc, combine_seeds("masks", &[a.clone(), b.clone(), c.clone()]));
    assert_ne!(abc, combine_seeds("triples", &[a.clone(), b.clone()]));
    assert_ne!(abc, a);
}
