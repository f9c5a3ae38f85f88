//! Test helpers: plaintext values split into shares in the test, sessions of two parties.

#![allow(dead_code, clippy::expect_used)]

use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::{Ctx, Result};
use veil_twopc::ring::mask;
use veil_twopc::{Engine, TwoParty};

/// A small deterministic generator.
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Edge values of Z_2^bits (0, 1, −1, most negative, most positive, 2, −2) then random ones.
pub fn values(n: usize, bits: u32, seed: u64) -> Vec<u64> {
    let m = mask(bits);
    let half = 1u64 << (bits - 1);
    let edges = [0, 1, m, half, half - 1, 2 & m, m.wrapping_sub(1) & m];
    let mut g = Gen::new(seed);
    (0..n).map(|i| if i < edges.len() { edges[i] } else { g.next() & m }).collect()
}

/// Additive shares of `x` in Z_2^bits.
pub fn split(x: &[u64], bits: u32, seed: u64) -> [Vec<u64>; 2] {
    let m = mask(bits);
    let mut g = Gen::new(seed ^ 0xABCD);
    let r: Vec<u64> = x.iter().map(|_| g.next() & m).collect();
    let other = x.iter().zip(&r).map(|(&v, &r)| v.wrapping_sub(r) & m).collect();
    [r, other]
}

/// Boolean shares of `b`.
pub fn split_bits(b: &[bool], seed: u64) -> [Vec<bool>; 2] {
    let mut g = Gen::new(seed ^ 0x1234);
    let r: Vec<bool> = b.iter().map(|_| g.next() & 1 == 1).collect();
    let other = b.iter().zip(&r).map(|(&v, &r)| v ^ r).collect();
    [r, other]
}

/// Runs `f` at both parties with a session of the small insecure Ferret set (fast).
pub fn run<T: Send>(seed: u64, f: impl Fn(&mut TwoParty, &mut Ctx) -> Result<T> + Sync) -> [T; 2] {
    run_with(seed, Engine::FerretInsecureSmall, f)
}

pub fn run_with<T: Send>(
    seed: u64,
    engine: Engine,
    f: impl Fn(&mut TwoParty, &mut Ctx) -> Result<T> + Sync,
) -> [T; 2] {
    let out = all_ok(simulate(2, seed, |ctx| {
        let mut tp = TwoParty::with_other(ctx, engine)?;
        f(&mut tp, ctx)
    }))
    .expect("honest run");
    let mut it = out.into_iter();
    [it.next().expect("party 0"), it.next().expect("party 1")]
}

pub fn add(a: &[u64], b: &[u64], bits: u32) -> Vec<u64> {
    a.iter().zip(b).map(|(&x, &y)| x.wrapping_add(y) & mask(bits)).collect()
}

pub fn xor(a: &[bool], b: &[bool]) -> Vec<bool> {
    a.iter().zip(b).map(|(&x, &y)| x ^ y).collect()
}
