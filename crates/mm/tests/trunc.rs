//! Truncation over any modulus (Theorem 1) and Z_p → Z_2^ℓ with a free truncation (Fig. 7):
//! every value of the range under many share splits at small moduli, at random at large ones;
//! the result is the floor or off by the carry `E` (one below for power-of-two moduli, at most
//! one either way for primes, and both sides seen); bytes `f + 1` and `ℓ + 1` bits per value.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

mod common;

use common::{rep, stream};
use veil_mm::trunc::{field_to_ring_truncated, headroom, truncate};
use veil_mpc::harness::{all_ok, simulate};
use veil_ot::flavours::Modulus;
use veil_twopc::{Engine, TwoParty};

fn signed_in(dest: Modulus, v: u128) -> i128 {
    match dest {
        Modulus::PowerOfTwo(k) if k >= 128 => v as i128,
        Modulus::PowerOfTwo(k) => rep(v, 1u128 << k),
        Modulus::Integer(q) => rep(v, u128::from(q)),
    }
}

/// The errors `floor − z` over `values` (each checked to be within the allowed set).
fn errors(values: &[u128], m: u128, f: u32, dest: Modulus, seed: u64, job: &str) -> (Vec<i128>, [u64; 2]) {
    let mut next = stream(seed);
    let r: Vec<u64> = values.iter().map(|_| (u128::from(next()) % m) as u64).collect();
    let x0: Vec<u64> = values.iter().zip(&r).map(|(&v, &r)| ((v + m - u128::from(r)) % m) as u64).collect();
    let out = all_ok(simulate(2, seed, |ctx| {
        let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
        tp.prepare(ctx, values.len(), 0)?;
        ctx.set_phase("trunc");
        let mine = if ctx.party() == 0 { &x0 } else { &r };
        let z = if job == "fig7" {
            let Modulus::PowerOfTwo(l) = dest else { unreachable!() };
            field_to_ring_truncated(&mut tp, ctx, mine, m as u64, f, l)?
        } else {
            truncate(&mut tp, ctx, mine, m, f, dest)?
        };
        Ok((z, ctx.stats().get("trunc").bytes_sent))
    }))
    .unwrap();
    let errs = values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let want = rep(v, m).div_euclid(1 << f);
            want - signed_in(dest, dest.add(out[0].0[i], out[1].0[i]))
        })
        .collect();
    (errs, [out[0].1, out[1].1])
}

#[test]
fn truncation_is_the_floor_up_to_its_carry_at_small_moduli() {
    for (m, f, dest) in [
        (256u128, 3u32, Modulus::PowerOfTwo(8)),
        (251, 2, Modulus::PowerOfTwo(10)),
        (1024, 4, Modulus::Integer(257)),
        (1021, 3, Modulus::Integer(1021)),
    ] {
        let eta = headroom(m);
        let range: Vec<u128> = (0..1u128 << eta).chain(m - (1 << eta)..m).collect();
        let values: Vec<u128> = range.iter().flat_map(|&v| std::iter::repeat_n(v, 24)).collect();
        let (errs, _) = errors(&values, m, f, dest, m as u64, "trunc");
        let allowed: &[i128] = if m.is_power_of_two() { &[0, 1] } else { &[-1, 0, 1] };
        assert!(
            errs.iter().all(|e| allowed.contains(e)),
            "M = {m}: errors {:?}",
            errs.iter().filter(|e| !allowed.contains(e)).take(5).collect::<Vec<_>>()
        );
        assert!(errs.contains(&0) && errs.contains(&1), "M = {m}: both exact and carried results occur");
    }
}

#[test]
fn large_moduli_and_their_bytes() {
    let mut next = stream(5);
    let n = 3000usize;
    // Z_2^64 → Z_2^64 by 2^16: a Δ-OT over Z_2^16, 17 bits per value.
    let m = 1u128 << 64;
    let eta = headroom(m);
    let values: Vec<u128> = (0..n)
        .map(|i| {
            let v = u128::from(next()) % (1u128 << eta);
            if i % 2 == 0 { v } else { m - 1 - v }
        })
        .collect();
    let (errs, bytes) = errors(&values, m, 16, Modulus::PowerOfTwo(64), 6, "trunc");
    assert!(errs.iter().all(|&e| e == 0 || e == 1));
    assert_eq!(bytes, [(n as u64 * 16).div_ceil(8), (n as u64).div_ceil(8)]);
    // Z_p (a 60-bit prime) → Z_2^64 by 2^16 (Fig. 7): 65 bits per value.
    let p: u64 = (1u64 << 60) - 93;
    let eta = headroom(u128::from(p));
    let values: Vec<u128> = (0..n)
        .map(|i| {
            let v = u128::from(next()) % (1u128 << eta);
            if i % 2 == 0 { v } else { u128::from(p) - 1 - v }
        })
        .collect();
    let (errs, bytes) = errors(&values, u128::from(p), 16, Modulus::PowerOfTwo(64), 7, "fig7");
    assert!(errs.iter().all(|&e| (-1..=1).contains(&e)));
    assert_eq!(bytes, [(n as u64 * 64).div_ceil(8), (n as u64).div_ceil(8)]);
}

#[test]
fn truncations_past_the_headroom_are_refused() {
    let res = simulate(2, 1, |ctx| {
        let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
        Ok(truncate(&mut tp, ctx, &[1], 256, 7, Modulus::PowerOfTwo(8)).unwrap_err().to_string())
    });
    let e = res.into_iter().next().unwrap().unwrap();
    assert!(e.contains("1 ≤ f ≤ η = 6"), "{e}");
}
