//! PRG tests: determinism, domain separation, stream consistency across
//! output methods, and statistical sanity.

#![allow(clippy::unwrap_used, reason = "tests fail loudly on purpose")]

use rand_core::{RngCore, SeedableRng};
use veil_crypto::{Domain, Prg, Seed, SessionId};

const SID: SessionId = SessionId([0x5A; 16]);

fn seed() -> Seed {
    Seed(*b"veil test seed!!")
}

fn stream(prg: &mut Prg, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    prg.fill_bytes(&mut v);
    v
}

#[test]
fn same_seed_and_domain_is_deterministic() {
    let d = Domain::new(SID, "triples", 3);
    let a = stream(&mut Prg::derive(&seed(), &d), 5000);
    let b = stream(&mut Prg::derive(&seed(), &d), 5000);
    assert_eq!(a, b);
    let c = stream(&mut Prg::new(&seed()), 5000);
    let e = stream(&mut Prg::new(&seed()), 5000);
    assert_eq!(c, e);
    assert_ne!(a, c);
}

#[test]
fn domains_are_separated() {
    let base = Domain::new(SID, "triples", 3);
    let reference = stream(&mut Prg::derive(&seed(), &base), 64);
    let variants = [
        Domain::new(SID, "triples", 4),
        Domain::new(SID, "triple", 3),
        Domain::new(SID, "masks", 3),
        Domain::new(SessionId([0x5B; 16]), "triples", 3),
        base.with_counter(u64::MAX),
    ];
    let mut all = vec![reference];
    for d in &variants {
        all.push(stream(&mut Prg::derive(&seed(), d), 64));
    }
    // Different seed, same domain.
    all.push(stream(&mut Prg::derive(&Seed([9; 16]), &base), 64));
    for i in 0..all.len() {
        for j in i + 1..all.len() {
            assert_ne!(all[i], all[j], "streams {i} and {j} collide");
        }
    }
}

#[test]
fn split_fill_bytes_matches_single_call() {
    let total = 20_000;
    let one_shot = stream(&mut Prg::new(&seed()), total);
    // Odd split points, crossing block and buffer boundaries, incl. empty.
    let sizes = [1, 0, 3, 15, 16, 17, 1000, 1023, 1, 2049, 7, 5000, 13];
    let mut prg = Prg::new(&seed());
    let mut got = Vec::new();
    let mut i = 0;
    while got.len() < total {
        let n = sizes[i % sizes.len()].min(total - got.len());
        got.extend(stream(&mut prg, n));
        i += 1;
    }
    assert_eq!(got, one_shot);
}

#[test]
fn word_methods_read_the_same_stream() {
    let bytes = stream(&mut Prg::new(&seed()), 4096);
    let word = |k: usize| u64::from_le_bytes(bytes[k..k + 8].try_into().unwrap());

    // Mixed calls at odd offsets.
    let mut prg = Prg::new(&seed());
    let mut b1 = [0u8; 3];
    prg.fill_bytes(&mut b1);
    assert_eq!(&b1, &bytes[..3]);
    assert_eq!(prg.next_u64(), word(3));
    assert_eq!(u64::from(prg.next_u32()), u64::from(u32::from_le_bytes(bytes[11..15].try_into().unwrap())));
    assert_eq!(prg.next_block().as_slice(), &bytes[15..31]);
    let mut words = vec![0u64; 300];
    prg.fill_u64(&mut words);
    for (k, w) in words.iter().enumerate() {
        assert_eq!(*w, word(31 + 8 * k), "word {k}");
    }

    // fill_u64 equals repeated next_u64 across many buffer refills, also
    // when a word straddles the buffer boundary (offset 5).
    for offset in [0usize, 5] {
        let mut a = Prg::new(&seed());
        let mut b = Prg::new(&seed());
        let mut skip = vec![0u8; offset];
        a.fill_bytes(&mut skip);
        b.fill_bytes(&mut skip);
        let mut bulk = vec![0u64; 10_001];
        a.fill_u64(&mut bulk);
        let single: Vec<u64> = (0..bulk.len()).map(|_| b.next_u64()).collect();
        assert_eq!(bulk, single);
        assert_eq!(a.next_u64(), b.next_u64());
    }
}

#[test]
fn rng_traits_agree_with_inherent_methods() {
    let mut a = Prg::from_seed(seed());
    let mut b = Prg::new(&seed());
    assert_eq!(RngCore::next_u64(&mut a), b.next_u64());
    let mut x = [0u8; 33];
    let mut y = [0u8; 33];
    a.try_fill_bytes(&mut x).unwrap();
    b.fill_bytes(&mut y);
    assert_eq!(x, y);
    // Usable as a generic CSPRNG.
    let s = Seed::from_rng(&mut a);
    assert_ne!(s, Seed([0; 16]));
}

#[test]
fn keystream_is_aes_ctr() {
    // Block i of the stream is AES_k(i as little-endian u128).
    let prf = veil_crypto::Prf::new(&seed());
    let mut prg = Prg::new(&seed());
    for i in 0u128..200 {
        assert_eq!(prg.next_block(), prf.eval_block(&i.to_le_bytes()));
    }
}

#[test]
fn bit_balance_over_one_megabyte() {
    let mut prg = Prg::derive(&seed(), &Domain::new(SID, "stats", 0));
    let data = stream(&mut prg, 1 << 20);
    let n_bits = (data.len() * 8) as f64;
    let ones: u64 = data.iter().map(|b| u64::from(b.count_ones())).sum();
    let sigma = (n_bits * 0.25).sqrt();
    let z = (ones as f64 - n_bits / 2.0) / sigma;
    assert!(z.abs() < 6.0, "bit balance z-score {z}");

    // Each bit position of the u64 words is balanced too.
    let mut words = vec![0u64; 1 << 17];
    prg.fill_u64(&mut words);
    let n = words.len() as f64;
    for bit in 0..64 {
        let c = words.iter().filter(|w| (*w >> bit) & 1 == 1).count() as f64;
        let z = (c - n / 2.0) / (n * 0.25).sqrt();
        assert!(z.abs() < 6.0, "bit {bit} z-score {z}");
    }

    // Byte-value chi-square with 255 degrees of freedom (mean 255, sd ~22.6).
    let mut counts = [0u64; 256];
    for &b in &data {
        counts[b as usize] += 1;
    }
    let expected = data.len() as f64 / 256.0;
    let chi2: f64 = counts.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
    assert!(chi2 < 255.0 + 6.0 * 22.6 && chi2 > 255.0 - 6.0 * 22.6, "chi2 {chi2}");
}
