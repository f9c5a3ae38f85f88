//! Matrix-product benchmark over `Z_2^64` and `Z_2^32` for every CPU kernel.
//!
//! Run with `cargo run --release -p veil-tensor --example matmul_bench`.
//! Prints, per shape, word type and kernel, the best wall time of several runs
//! and the throughput in GMAC/s (`m·k·n` multiply-accumulates per second). Every
//! kernel's result is compared with the default kernel's.
//!
//! `VEIL_BENCH_FILTER=Amx` (any substring of the kernel name) restricts the kernels;
//! `VEIL_BENCH_SHAPES=1x768x768,128x64x128` replaces the default shapes (`m x k x n`).

use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use veil_tensor::{Cpu, Device, MatDims, MatmulKernel, TensorError};

/// Runs `f` once to warm up, then repeatedly for about a second (3..=20 runs); returns the best time.
fn best_time(mut f: impl FnMut() -> Result<(), TensorError>) -> Result<Duration, TensorError> {
    f()?;
    let mut best = Duration::MAX;
    let start = Instant::now();
    let mut runs = 0;
    while runs < 3 || (runs < 20 && start.elapsed() < Duration::from_secs(1)) {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed());
        runs += 1;
    }
    Ok(best)
}

/// Kernels to compare (`Auto` is the default and the reference).
const KERNELS: [MatmulKernel; 6] = [
    MatmulKernel::Amx,
    MatmulKernel::Blocked,
    MatmulKernel::BlockedAvx2,
    MatmulKernel::BlockedPortable,
    MatmulKernel::F64Limbs,
    MatmulKernel::Naive,
];

fn main() -> Result<(), TensorError> {
    let mut rng = StdRng::seed_from_u64(1);
    println!("threads: {}", rayon::current_num_threads());
    println!("| shape (m×k @ k×n) | ring | kernel | seconds | GMAC/s | exact |");
    println!("|---|---|---|---|---|---|");
    for (m, k, n) in shapes() {
        let d = MatDims { m, k, n };
        let shape = format!("{m}×{k} @ {k}×{n}");
        let a64: Vec<u64> = (0..m * k).map(|_| rng.r#gen()).collect();
        let b64: Vec<u64> = (0..k * n).map(|_| rng.r#gen()).collect();
        let a32: Vec<u32> = a64.iter().map(|&x| x as u32).collect();
        let b32: Vec<u32> = b64.iter().map(|&x| x as u32).collect();
        let mut want64 = vec![0u64; m * n];
        let mut want32 = vec![0u32; m * n];
        Cpu::new().matmul_u64(&a64, &b64, &mut want64, d)?;
        Cpu::new().matmul_u32(&a32, &b32, &mut want32, d)?;
        let filter = std::env::var("VEIL_BENCH_FILTER").unwrap_or_default();
        let kernels = KERNELS.into_iter().filter(|k| format!("{k:?}").contains(&filter));
        for kernel in kernels.clone() {
            let dev = Cpu::with_kernel(kernel);
            let mut c = vec![0u64; m * n];
            let t = best_time(|| dev.matmul_u64(&a64, &b64, &mut c, d))?;
            report(&shape, "Z_2^64", kernel, t, d, c == want64);
        }
        for kernel in kernels {
            let dev = Cpu::with_kernel(kernel);
            let mut c = vec![0u32; m * n];
            let t = best_time(|| dev.matmul_u32(&a32, &b32, &mut c, d))?;
            report(&shape, "Z_2^32", kernel, t, d, c == want32);
        }
    }
    Ok(())
}

/// The shapes to run: `VEIL_BENCH_SHAPES` or the two default ones.
fn shapes() -> Vec<(usize, usize, usize)> {
    let parse = |s: &str| -> Option<(usize, usize, usize)> {
        let v: Vec<usize> = s.split('x').map(|d| d.trim().parse().ok()).collect::<Option<_>>()?;
        match v[..] {
            [m, k, n] => Some((m, k, n)),
            _ => None,
        }
    };
    match std::env::var("VEIL_BENCH_SHAPES") {
        Ok(list) => list.split(',').filter_map(parse).collect(),
        Err(_) => vec![(128, 768, 768), (128, 768, 3072)],
    }
}

/// Prints one table row.
fn report(shape: &str, ring: &str, kernel: MatmulKernel, t: Duration, d: MatDims, exact: bool) {
    let s = t.as_secs_f64();
    let gmacs = d.macs() as f64 / s / 1e9;
    println!("| {shape} | {ring} | {kernel:?} | {s:.4} | {gmacs:.2} | {exact} |");
}
