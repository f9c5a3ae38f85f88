//! B2A, multiplexer, extension, truncation, ReLU, row maxima and lookup tables against the
//! plaintext reference, at edge and random values; malformed messages name their step.

mod common;

use std::sync::Arc;

use common::{add, run, split, split_bits, values};
use veil_conformance::tamper::{Tamper, simulate_altered};
use veil_mpc::MpcError;
use veil_mpc::harness::SimConfig;
use veil_ot::flavours::Modulus;
use veil_twopc::ring::{mask, signed};
use veil_twopc::{Engine, TwoParty, convert, nonlinear, trunc};

const P: u64 = (1 << 61) - 1;

fn bits_of(n: usize, seed: u64) -> Vec<bool> {
    values(n, 8, seed).iter().map(|v| v & 1 == 1).collect()
}

#[test]
fn b2a_and_mux_hold_over_rings_and_prime_fields() {
    for m in [
        Modulus::PowerOfTwo(1),
        Modulus::PowerOfTwo(16),
        Modulus::PowerOfTwo(64),
        Modulus::Integer(P),
        Modulus::Integer(3),
    ] {
        let n = 300;
        let b = bits_of(n, 1);
        let bs = split_bits(&b, 2);
        let reduce = |v: &u64| m.reduce(u128::from(*v)) as u64;
        let a: Vec<u64> = values(n, 64, 3).iter().map(reduce).collect();
        let a0: Vec<u64> = values(n, 64, 4).iter().map(reduce).collect();
        let a1: Vec<u64> =
            a.iter().zip(&a0).map(|(&x, &r)| m.sub(u128::from(x), u128::from(r)) as u64).collect();
        let shares = [a0, a1];
        let out = run(5, |tp, ctx| {
            let p = usize::from(!tp.is_first());
            Ok((convert::b2a(tp, ctx, &bs[p], m)?, convert::mux(tp, ctx, &bs[p], &shares[p], m)?))
        });
        for i in 0..n {
            let sum = |x: u64, y: u64| m.add(u128::from(x), u128::from(y)) as u64;
            assert_eq!(sum(out[0].0[i], out[1].0[i]), u64::from(b[i]), "{m:?} B2A {i}");
            assert_eq!(sum(out[0].1[i], out[1].1[i]), if b[i] { a[i] } else { 0 }, "{m:?} mux {i}");
        }
    }
}

#[test]
fn extension_keeps_signed_and_unsigned_values() {
    for (from, to) in [(8u32, 16u32), (16, 64), (32, 37), (63, 64)] {
        let x = values(300, from, 6);
        let xs = split(&x, from, 7);
        let out = run(8, |tp, ctx| {
            let p = usize::from(!tp.is_first());
            Ok((
                convert::extend(tp, ctx, &xs[p], from, to, true)?,
                convert::extend(tp, ctx, &xs[p], from, to, false)?,
            ))
        });
        let s = add(&out[0].0, &out[1].0, to);
        let u = add(&out[0].1, &out[1].1, to);
        for i in 0..x.len() {
            assert_eq!(signed(s[i], to), signed(x[i], from), "signed {from}->{to}: {:x}", x[i]);
            assert_eq!(u[i], x[i], "unsigned {from}->{to}");
        }
    }
}

#[test]
fn exact_truncation_is_floor_division_for_every_value() {
    for (bits, f) in [(8u32, 1u32), (16, 7), (32, 12), (64, 16), (64, 63)] {
        let x = values(400, bits, 9);
        let xs = split(&x, bits, 10);
        let out = run(11, |tp, ctx| {
            let p = usize::from(!tp.is_first());
            trunc::trunc_exact(tp, ctx, &xs[p], bits, f)
        });
        let r = add(&out[0], &out[1], bits);
        for i in 0..x.len() {
            assert_eq!(
                signed(r[i], bits),
                signed(x[i], bits) >> f,
                "{bits} bits >> {f}: {}",
                signed(x[i], bits)
            );
        }
    }
}

#[test]
fn bounded_truncation_is_floor_division_or_one_less() {
    for (bits, f) in [(16u32, 4u32), (32, 12), (64, 16), (64, 40)] {
        let limit = 1i64 << (bits - 2);
        let x: Vec<u64> = values(1000, bits, 12)
            .into_iter()
            .map(|v| (signed(v, bits) % limit) as u64 & mask(bits))
            .chain([(limit - 1) as u64, (-limit + 1) as u64 & mask(bits)])
            .collect();
        let xs = split(&x, bits, 13);
        let out = run(14, |tp, ctx| {
            let p = usize::from(!tp.is_first());
            trunc::trunc(tp, ctx, &xs[p], bits, f)
        });
        let r = add(&out[0], &out[1], bits);
        for i in 0..x.len() {
            let want = signed(x[i], bits) >> f;
            let got = signed(r[i], bits);
            assert!(
                got == want || got == want - 1,
                "{bits} bits >> {f}: {} gave {got}, want {want}",
                signed(x[i], bits)
            );
        }
    }
}

#[test]
fn relu_max_rows_and_lookup_tables_match_the_reference() {
    let bits = 32;
    let x: Vec<u64> =
        values(240, bits, 15).into_iter().map(|v| (signed(v, bits) >> 3) as u64 & mask(bits)).collect();
    let xs = split(&x, bits, 16);
    let table: Vec<u64> = (0..256u64).map(|j| (j * j + 7) & mask(20)).collect();
    let idx: Vec<u64> = values(100, 8, 17);
    let is = split(&idx, 8, 18);
    let out = run(19, |tp, ctx| {
        let p = usize::from(!tp.is_first());
        Ok((
            nonlinear::relu(tp, ctx, &xs[p], bits)?,
            nonlinear::max_rows(tp, ctx, &xs[p], 30, 8, bits)?,
            nonlinear::max_rows(tp, ctx, &xs[p][..35], 5, 7, bits)?,
            nonlinear::lut(tp, ctx, &is[p], 8, &table, 20)?,
        ))
    });
    let relu = add(&out[0].0, &out[1].0, bits);
    for i in 0..x.len() {
        assert_eq!(signed(relu[i], bits), signed(x[i], bits).max(0), "ReLU");
    }
    for (rows, k, got) in
        [(30usize, 8usize, add(&out[0].1, &out[1].1, bits)), (5, 7, add(&out[0].2, &out[1].2, bits))]
    {
        for r in 0..rows {
            let want = (0..k).map(|j| signed(x[r * k + j], bits)).max().expect("k > 0");
            assert_eq!(signed(got[r], bits), want, "max of row {r} of {k}");
        }
    }
    let looked = add(&out[0].3, &out[1].3, 20);
    for i in 0..idx.len() {
        assert_eq!(looked[i], table[idx[i] as usize], "T[{}]", idx[i]);
    }
}

#[test]
fn a_garbled_or_short_message_is_an_error_naming_the_step() {
    // Party 1's frames after the seed setup and both engines' setup: count them by running
    // the setup alone first.
    let setup_frames = {
        let out = veil_mpc::harness::all_ok(veil_mpc::harness::simulate(2, 20, |ctx| {
            TwoParty::with_other(ctx, Engine::Iknp)?;
            Ok(ctx.stats().total().messages_sent as usize)
        }))
        .expect("setup");
        out[1] + 2
    };
    let x = values(50, 32, 21);
    let xs = split(&x, 32, 22);
    let alter = Arc::new(|p: &mut Vec<u8>| p.truncate(p.len() / 2));
    let (results, altered) = simulate_altered(
        2,
        SimConfig::new(20),
        Some(Tamper { party: 1, frame: setup_frames }),
        alter,
        |ctx| {
            let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
            let p = usize::from(!tp.is_first());
            veil_twopc::compare::drelu(&mut tp, ctx, &xs[p], 32)
        },
    );
    assert!(altered);
    match &results[0] {
        Err(MpcError::Malformed { what, .. }) => {
            assert!(what.contains("OT") || what.contains("COT"), "{what}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_protocol_sends_what_it_declares() {
    use veil_twopc::{compare, cost, millionaire};
    let (n, bits, f) = (500usize, 32u32, 12u32);
    let x = values(n, bits, 30);
    let xs = split(&x, bits, 31);
    let small: Vec<u64> = x.iter().map(|&v| (signed(v, bits) >> 3) as u64 & mask(bits)).collect();
    let ss = split(&small, bits, 32);
    let b = bits_of(n, 33);
    let bs = split_bits(&b, 34);
    let idx = values(n, 6, 35);
    let is = split(&idx, 6, 36);
    let table: Vec<u64> = (0..64).collect();
    let m = Modulus::Integer(P);
    let out = run(37, |tp, ctx| {
        // Far more COTs than the ops use, made ahead, so only the ops' own messages count.
        let (c0, c1) = millionaire::cots_needed(8 * n, 64);
        tp.prepare(ctx, c0, c1)?;
        let p = usize::from(!tp.is_first());
        let mut measured = Vec::new();
        let mut step = |ctx: &mut veil_mpc::Ctx, name: &str| {
            let total = ctx.stats().total();
            measured.push((name.to_string(), total));
        };
        step(ctx, "start");
        compare::msb(tp, ctx, &xs[p], bits)?;
        step(ctx, "msb");
        compare::wrap(tp, ctx, &xs[p], bits)?;
        step(ctx, "wrap");
        convert::b2a(tp, ctx, &bs[p], m)?;
        step(ctx, "b2a");
        convert::mux(tp, ctx, &bs[p], &xs[p], Modulus::PowerOfTwo(bits))?;
        step(ctx, "mux");
        convert::extend(tp, ctx, &xs[p], bits, 48, true)?;
        step(ctx, "extend");
        trunc::trunc(tp, ctx, &ss[p], bits, f)?;
        step(ctx, "trunc");
        trunc::trunc_exact(tp, ctx, &xs[p], bits, f)?;
        step(ctx, "trunc_exact");
        nonlinear::relu(tp, ctx, &xs[p], bits)?;
        step(ctx, "relu");
        nonlinear::lut(tp, ctx, &is[p], 6, &table, 20)?;
        step(ctx, "lut");
        Ok((tp.is_first(), measured))
    });
    for (first, measured) in &out {
        let declared = |name: &str| match name {
            "msb" => cost::msb(n, bits, *first),
            "wrap" => cost::wrap(n, bits, *first),
            "b2a" => cost::b2a(n, m, *first),
            "mux" => cost::mux(n, Modulus::PowerOfTwo(bits), *first),
            "extend" => cost::extend(n, bits, 48, *first),
            "trunc" => cost::trunc(n, f, *first),
            "trunc_exact" => cost::trunc_exact(n, bits, f, *first),
            "relu" => cost::relu(n, bits, *first),
            _ => cost::lut(n, 6, 20, *first),
        };
        for w in measured.windows(2) {
            let (name, got) = (&w[1].0, w[1].1.since(&w[0].1));
            let want = declared(name);
            assert_eq!(
                (got.bytes_sent, got.messages_sent),
                (want.bytes_sent, want.messages_sent),
                "{name} at P{}",
                usize::from(!first)
            );
        }
    }
}
