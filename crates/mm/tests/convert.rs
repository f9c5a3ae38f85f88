//! M&M's conversions against their definitions: exhaustively over every value of the heuristic
//! range and many share splits at small moduli (prime and power-of-two sources, prime and
//! power-of-two destinations), at random at large ones (a 60-bit prime to Z_2^64, Z_2^32 to
//! Z_2^64 and to a 60-bit prime, Z_2^64 to Z_2^128); the positive-wrap lemma itself; the bytes
//! against `⌈log2 K⌉ + 1` and `(k − ℓ) + 1` bits per value; ranges refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::{rep, stream};
use veil_mm::convert::{convert, extend, field_to_ring, ring_to_field, sign, wrap_positive};
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::{Ctx, Result};
use veil_ot::flavours::Modulus;
use veil_twopc::{Engine, TwoParty};

fn into(dest: Modulus, v: i128) -> u128 {
    match dest {
        Modulus::PowerOfTwo(k) if k >= 128 => v as u128,
        Modulus::PowerOfTwo(k) => (v as u128) & ((1u128 << k) - 1),
        Modulus::Integer(q) => v.rem_euclid(q as i128) as u128,
    }
}

/// Runs `job` at both parties on shares of `values` mod `m` (P1's share random); returns
/// both outputs and the bytes each party sent in the protocol (COTs made ahead).
fn run(
    values: &[u128],
    m: u128,
    seed: u64,
    cots: usize,
    job: impl Fn(&mut TwoParty, &mut Ctx, &[u64]) -> Result<Vec<u128>> + Sync,
) -> (Vec<u128>, Vec<u128>, [u64; 2]) {
    let mut next = stream(seed);
    let r: Vec<u64> = values.iter().map(|_| (u128::from(next()) % m) as u64).collect();
    let x0: Vec<u64> = values.iter().zip(&r).map(|(&v, &r)| ((v + m - u128::from(r)) % m) as u64).collect();
    let out = all_ok(simulate(2, seed, |ctx| {
        let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
        tp.prepare(ctx, cots, 0)?;
        ctx.set_phase("convert");
        let mine = if ctx.party() == 0 { &x0 } else { &r };
        let out = job(&mut tp, ctx, mine)?;
        Ok((out, ctx.stats().get("convert").bytes_sent))
    }))
    .unwrap();
    (out[0].0.clone(), out[1].0.clone(), [out[0].1, out[1].1])
}

fn check(values: &[u128], m: u128, dest: Modulus, got: (Vec<u128>, Vec<u128>, [u64; 2]), what: &str) {
    let (a, b, _) = got;
    for (i, &v) in values.iter().enumerate() {
        assert_eq!(dest.add(a[i], b[i]), into(dest, rep(v, m)), "{what}: x = {v}");
    }
}

#[test]
fn the_positive_wrap_lemma_and_protocol() {
    // Lemma: for x < ⌈M/2⌉, x_0 + x_1 ≥ M iff sgn(x_0) ∨ sgn(x_1), for every split.
    for m in [2u128, 3, 8, 29, 32, 33] {
        for x in 0..m.div_ceil(2) {
            for x0 in 0..m {
                let x1 = (x + m - x0) % m;
                assert_eq!(x0 + x1 >= m, sign(x0, m) || sign(x1, m), "M = {m}, x = {x}, x0 = {x0}");
            }
        }
    }
    // The protocol: every positive value, every split, factor 5 into Z_2^7 and Z_31.
    let m = 29u128;
    let values: Vec<u128> = (0..15).flat_map(|x| std::iter::repeat_n(x, 29)).collect();
    for dest in [Modulus::PowerOfTwo(7), Modulus::Integer(31)] {
        let (a, b, _) = run(&values, m, 3, values.len(), |tp, ctx, x| wrap_positive(tp, ctx, x, m, dest, 5));
        // Recompute the splits to know each wrap.
        let mut next = stream(3);
        for (i, &v) in values.iter().enumerate() {
            let r = u128::from(next()) % m;
            let x0 = (v + m - r) % m;
            let want = if x0 + r >= m { 5 } else { 0 };
            assert_eq!(dest.add(a[i], b[i]), into(dest, want), "x = {v}, x0 = {x0}");
        }
    }
}

#[test]
fn conversions_are_exact_on_their_range_at_small_moduli() {
    // Every value of [0, L) ∪ [M − L, M), each under 40 splits.
    let cases: [(u128, Modulus); 6] = [
        (29, Modulus::PowerOfTwo(8)),
        (29, Modulus::Integer(257)),
        (32, Modulus::PowerOfTwo(9)),
        (32, Modulus::Integer(31)),
        (31, Modulus::PowerOfTwo(3)),
        (64, Modulus::PowerOfTwo(64)),
    ];
    for (i, (m, dest)) in cases.into_iter().enumerate() {
        let l = m / 4;
        let range: Vec<u128> = (0..l).chain(m - l..m).collect();
        let values: Vec<u128> = range.iter().flat_map(|&v| std::iter::repeat_n(v, 40)).collect();
        let got = run(&values, m, 10 + i as u64, values.len(), |tp, ctx, x| convert(tp, ctx, x, m, dest, l));
        check(&values, m, dest, got, &format!("Z_{m} → {dest:?}"));
    }
}

#[test]
fn conversions_at_large_moduli_and_their_bytes() {
    let mut next = stream(99);
    let n = 2000;
    // A 60-bit prime to Z_2^64: k + 1 = 65 bits per value.
    let p: u64 = (1u64 << 60) - 93; // prime
    let values: Vec<u128> = (0..n)
        .map(|i| {
            let v = u128::from(next()) % u128::from(p / 4);
            if i % 2 == 0 { v } else { u128::from(p) - v }
        })
        .chain([0, 1, u128::from(p - 1), u128::from(p / 4 - 1), u128::from(p - p / 4 + 1)])
        .collect();
    let got = run(&values, u128::from(p), 5, values.len(), |tp, ctx, x| field_to_ring(tp, ctx, x, p, 64));
    let bytes = got.2;
    check(&values, u128::from(p), Modulus::PowerOfTwo(64), got, "Z_p → Z_2^64");
    let k = values.len() as u64;
    assert_eq!(bytes, [(k * 64).div_ceil(8), k.div_ceil(8)], "one Δ-OT over Z_2^64 per value");
    // Z_2^32 → Z_2^64: (64 − 32) + 1 = 33 bits; Z_2^64 → Z_2^128: 65 bits.
    let m = 1u128 << 32;
    let small: Vec<u128> = (0..n)
        .map(|i| {
            let v = u128::from(next()) % (m / 4);
            if i % 3 == 0 { m - v - 1 } else { v }
        })
        .collect();
    let got = run(&small, m, 6, small.len(), |tp, ctx, x| extend(tp, ctx, x, 32, 64));
    let bytes = got.2;
    check(&small, m, Modulus::PowerOfTwo(64), got, "Z_2^32 → Z_2^64");
    let k = small.len() as u64;
    assert_eq!(bytes, [(k * 32).div_ceil(8), k.div_ceil(8)], "one Δ-OT over Z_2^32 per value");
    let got = run(&small, m, 7, small.len(), |tp, ctx, x| ring_to_field(tp, ctx, x, 32, p));
    check(&small, m, Modulus::Integer(p), got, "Z_2^32 → Z_p");
    let m64 = 1u128 << 64;
    let wide: Vec<u128> = (0..n)
        .map(|i| {
            let v = u128::from(next()) % (m64 / 4);
            if i % 2 == 0 { m64 - v - 1 } else { v }
        })
        .collect();
    let got = run(&wide, m64, 8, wide.len(), |tp, ctx, x| extend(tp, ctx, x, 64, 128));
    check(&wide, m64, Modulus::PowerOfTwo(128), got, "Z_2^64 → Z_2^128");
}

#[test]
fn out_of_range_arguments_are_refused() {
    let res = simulate(2, 1, |ctx| {
        let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
        let e1 = convert(&mut tp, ctx, &[1, 2], 29, Modulus::PowerOfTwo(8), 8).unwrap_err().to_string();
        let e2 = convert(&mut tp, ctx, &[30], 29, Modulus::PowerOfTwo(8), 7).unwrap_err().to_string();
        let e3 = extend(&mut tp, ctx, &[1], 32, 16).unwrap_err().to_string();
        Ok((e1, e2, e3))
    });
    let (e1, e2, e3) = res.into_iter().next().unwrap().unwrap();
    assert!(e1.contains("1 ≤ L ≤ ⌊M/4⌋"), "{e1}");
    assert!(e2.contains("not a share in Z_29"), "{e2}");
    assert!(e3.contains("from Z_2^32 to Z_2^16"), "{e3}");
}
