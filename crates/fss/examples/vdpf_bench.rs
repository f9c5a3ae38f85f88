//! Times VDPF key generation and verified full-domain evaluation, and prints key sizes.
//!
//! Run with `cargo run --release -p veil-fss --example vdpf_bench` (`-- --small`: only the
//! comparisons' small domains).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "benchmark code")]

use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::StdRng;
use veil_fss::{
    eval_full, eval_full_verified, eval_full_verified_batch, gen_keys, key_bytes, paper_key_bits, verify,
};
use veil_ring::{Ring, Z8, Z64};

fn main() {
    let mut rng = StdRng::seed_from_u64(1);
    if std::env::args().any(|a| a == "--small") {
        return small_domain_batches(&mut rng);
    }
    println!("output ring Z_2^64, lambda = 128");
    println!(
        "{:>3} {:>12} {:>16} {:>16} {:>10} {:>14}",
        "d", "Gen (us)", "EvalFull (ms)", "BVEval (ms)", "key (B)", "paper key (B)"
    );
    for d in [8u32, 12, 16] {
        let reps = if d == 16 { 5 } else { 50 };
        let t = Instant::now();
        let mut keys = Vec::new();
        for i in 0..reps {
            keys.push(gen_keys(i as u64 % (1 << d), Z64::ONE, d, &mut rng).unwrap());
        }
        let gen_us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
        let t = Instant::now();
        for (k0, _) in &keys {
            std::hint::black_box(eval_full(k0).unwrap());
        }
        let full_ms = t.elapsed().as_secs_f64() * 1e3 / reps as f64;
        let t = Instant::now();
        for (k0, k1) in &keys {
            let (_, p0) = eval_full_verified(0, k0).unwrap();
            let (_, p1) = eval_full_verified(1, k1).unwrap();
            assert!(verify(&p0, &p1));
        }
        let verified_ms = t.elapsed().as_secs_f64() * 1e3 / (2 * reps) as f64;
        println!(
            "{d:>3} {gen_us:>12.1} {full_ms:>16.3} {verified_ms:>16.3} {:>10} {:>14.1}",
            key_bytes::<Z64>(d),
            paper_key_bits::<Z64>(d) as f64 / 8.0
        );
    }
    small_domain_batches(&mut rng);
}

/// The shapes Mosformer's gates use: many keys on small domains (2^2 to 2^8 points) with Z_2^8
/// or Z_2^64 outputs, expanded and proved 64 at a time.
fn small_domain_batches(rng: &mut StdRng) {
    for d in [2u32, 3, 6, 7] {
        batches::<Z8>(rng, d, "Z_2^8");
    }
    batches::<Z64>(rng, 8, "Z_2^64");
}

fn batches<R: Ring>(rng: &mut StdRng, d: u32, ring: &str) {
    let keys_n = 64 * 200;
    let keys: Vec<_> = (0..keys_n).map(|i| gen_keys(i as u64 % (1 << d), R::ONE, d, rng).unwrap()).collect();
    let (k0, k1): (Vec<_>, Vec<_>) = keys.into_iter().unzip();
    let t = Instant::now();
    for (g0, g1) in k0.chunks(64).zip(k1.chunks(64)) {
        let (_, p0) = eval_full_verified_batch(0, g0).unwrap();
        let (_, p1) = eval_full_verified_batch(1, g1).unwrap();
        assert!(verify(&p0, &p1));
    }
    let us = t.elapsed().as_secs_f64() * 1e6 / (2 * keys_n) as f64;
    let ns_leaf = us * 1e3 / f64::from(1u32 << d);
    println!("d = {d}, {ring} outputs, batches of 64: BVEval {us:.2} us per key, {ns_leaf:.1} ns per leaf");
}
