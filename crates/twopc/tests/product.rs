//! Products of shares by bit-decomposed Δ-OT against the plaintext product, at edge and random
//! values of several rings; the traffic is what `product::cost` declares; a garbled message
//! is an error naming the step.

mod common;

use std::sync::Arc;

use common::{add, run, split, values};
use veil_conformance::tamper::{Tamper, simulate_altered};
use veil_mpc::MpcError;
use veil_mpc::harness::SimConfig;
use veil_twopc::ring::mask;
use veil_twopc::{Engine, TwoParty, product};

#[test]
fn products_match_the_ring_product_and_cost_what_they_declare() {
    for bits in [1u32, 7, 32, 63, 64] {
        let n = 300;
        let (x, y) = (values(n, bits, 3), values(n, bits, 4).into_iter().rev().collect::<Vec<_>>());
        let (xs, ys) = (split(&x, bits, 5), split(&y, bits, 6));
        let out = run(7, |tp, ctx| {
            let me = ctx.party();
            let (p0, p1) = product::cots_needed(n, bits);
            tp.prepare(ctx, p0, p1)?;
            ctx.set_phase("mul");
            let z = product::mul(tp, ctx, &xs[me], &ys[me], bits)?;
            Ok((z, ctx.stats().get("mul")))
        });
        let z = add(&out[0].0, &out[1].0, bits);
        for i in 0..n {
            assert_eq!(z[i], x[i].wrapping_mul(y[i]) & mask(bits), "{bits} bits, {} · {}", x[i], y[i]);
        }
        for (_, stats) in &out {
            let declared = product::cost(n, bits);
            assert_eq!(
                (stats.bytes_sent, stats.messages_sent),
                (declared.bytes_sent, declared.messages_sent)
            );
        }
    }
}

#[test]
fn a_short_product_message_is_an_error_naming_the_step() {
    // Party 1's frames before the product: its engines' setup and the COTs made ahead.
    let prepare = |ctx: &mut veil_mpc::Ctx| -> veil_mpc::Result<TwoParty> {
        let mut tp = TwoParty::with_other(ctx, Engine::Iknp)?;
        tp.prepare(ctx, 640, 640)?;
        Ok(tp)
    };
    let before = veil_mpc::harness::simulate(2, 1, |ctx| {
        prepare(ctx)?;
        Ok(ctx.stats().total().messages_sent)
    });
    let before = before[1].as_ref().map(|&m| m as usize).expect("honest run");
    let alter = Arc::new(|p: &mut Vec<u8>| p.truncate(p.len() - 1));
    let (results, altered) =
        simulate_altered(2, SimConfig::new(1), Some(Tamper { party: 1, frame: before }), alter, |ctx| {
            let mut tp = prepare(ctx)?;
            product::mul(&mut tp, ctx, &[5u64; 10], &[7u64; 10], 64)
        });
    assert!(altered);
    match &results[0] {
        Err(MpcError::Malformed { what, .. }) => assert!(what.contains("products"), "{what}"),
        other => panic!("{other:?}"),
    }
}
