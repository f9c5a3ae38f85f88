//! Times VDPF key generation and verified full-domain evaluation, and prints key sizes.
//!
//! Run with `cargo run --release -p veil-fss --example vdpf_bench`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "benchmark code")]

use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::StdRng;
use veil_fss::{eval_full, eval_full_verified, gen_keys, key_bytes, paper_key_bits, verify};
use veil_ring::{Ring, Z64};

fn main() {
    let mut rng = StdRng::seed_from_u64(1);
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
}
