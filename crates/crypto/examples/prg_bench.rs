//! PRG / PRF throughput benchmark.
//!
//! Run with `cargo run --release -p veil-crypto --example prg_bench`.
//! Prints MB/s (10^6 bytes per second) for the main output paths, as the
//! median and best of several trials.

use std::hint::black_box;
use std::time::Instant;

use veil_crypto::{Domain, Prf, Prg, Seed, SessionId};

/// Bytes produced per timed trial.
const TRIAL_BYTES: usize = 64 << 20;
/// Number of timed trials; the median and best are reported (the machine
/// may be shared, so single runs are noisy).
const TRIALS: usize = 7;

fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

fn bench(name: &str, chunk_bytes: usize, mut f: impl FnMut()) {
    // Warm up (CPU feature detection, caches, clocks).
    for _ in 0..(8 << 20) / chunk_bytes {
        f();
    }
    let iters = TRIAL_BYTES / chunk_bytes;
    let mut rates: Vec<f64> = (0..TRIALS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                f();
            }
            mbps(iters * chunk_bytes, start.elapsed().as_secs_f64())
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    println!("{name:<36} median {:>8.0} MB/s   best {:>8.0} MB/s", rates[TRIALS / 2], rates[TRIALS - 1]);
}

fn main() {
    let seed = Seed([7; 16]);
    let domain = Domain::new(SessionId([1; 16]), "bench", 0);
    let mut prg = Prg::derive(&seed, &domain);

    let mut words = vec![0u64; 1 << 17]; // 1 MiB
    bench("fill_u64 (1 MiB chunks)", words.len() * 8, || {
        prg.fill_u64(black_box(&mut words));
    });

    let mut small = [0u64; 64];
    bench("fill_u64 (512 B chunks)", 512, || {
        prg.fill_u64(black_box(&mut small));
    });

    let mut bytes = vec![0u8; 1 << 20];
    bench("fill_bytes (1 MiB chunks)", bytes.len(), || {
        prg.fill_bytes(black_box(&mut bytes));
    });

    let mut odd = [0u8; 77];
    bench("fill_bytes (77 B chunks)", odd.len(), || {
        prg.fill_bytes(black_box(&mut odd));
    });

    bench("next_u64 (4096 calls)", 4096 * 8, || {
        let mut acc = 0u64;
        for _ in 0..4096 {
            acc ^= prg.next_u64();
        }
        black_box(acc);
    });

    let prf = Prf::derive(&seed, &domain);
    let mut blocks = vec![[0u8; 16]; 4096];
    bench("Prf::eval_blocks_in_place (64 KiB)", blocks.len() * 16, || {
        prf.eval_blocks_in_place(black_box(&mut blocks));
    });
    bench("Prf::eval one block at a time", 4096 * 16, || {
        let mut acc = 0u8;
        for i in 0..4096u128 {
            acc ^= prf.eval(black_box(i))[0];
        }
        black_box(acc);
    });
}
