//! Ferret: the COT correlation holds for every instance across iterations and seeds, over the
//! in-memory mesh and TLS; traffic is what the construction says; bad messages are errors.

use std::sync::Arc;

use veil_conformance::tamper::{Tamper, simulate_altered};
use veil_mpc::harness::{SimConfig, all_ok, simulate, simulate_tcp};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::block::lsb;
use veil_ot::{Block, CotReceiver, CotSender, FerretParams, FerretReceiver, FerretSender};

fn run(ctx: &mut Ctx, params: FerretParams, sizes: &[usize]) -> Result<(Block, Vec<Block>)> {
    let mut out = Vec::new();
    if ctx.party() == 0 {
        let mut s = FerretSender::setup(ctx, 1, params)?;
        for &n in sizes {
            out.extend(s.send_random(ctx, n)?);
        }
        Ok((s.delta(), out))
    } else {
        let mut r = FerretReceiver::setup(ctx, 0, params)?;
        for &n in sizes {
            out.extend(r.receive_random(ctx, n)?);
        }
        Ok((0, out))
    }
}

fn assert_correlated(results: &[(Block, Vec<Block>)]) {
    let (delta, v) = &results[0];
    let w = &results[1].1;
    assert_eq!(v.len(), w.len());
    assert!(lsb(*delta));
    let mut ones = 0usize;
    for (i, (&v, &w)) in v.iter().zip(w).enumerate() {
        assert!(!lsb(v), "sender block {i} not in normal form");
        let c = lsb(w);
        ones += usize::from(c);
        assert_eq!(w, if c { v ^ delta } else { v }, "instance {i}");
    }
    let n = v.len();
    assert!(ones * 5 > 2 * n && ones * 5 < 3 * n, "{ones} ones of {n}");
    let mut distinct = v.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), n, "sender blocks repeat");
}

#[test]
fn ferret_correlations_hold_across_iterations_and_seeds() {
    for seed in 0..3 {
        // Enough for several main iterations of the small set (7,254 each).
        let sizes = [1, 500, 7_000, 20_000];
        let results =
            all_ok(simulate(2, seed, |ctx| run(ctx, FerretParams::INSECURE_SMALL, &sizes))).expect("honest");
        assert_correlated(&results);
    }
}

#[test]
fn ferret_agrees_over_tls() {
    let results =
        all_ok(simulate_tcp(2, 7, |ctx| run(ctx, FerretParams::INSECURE_SMALL, &[10_000]))).expect("honest");
    assert_correlated(&results);
}

#[test]
fn ferret_at_the_secure_parameters_sends_under_a_quarter_bit_per_cot() {
    let main = FerretParams::SECURE.main;
    let per_iteration = main.n - main.consumed();
    let results = all_ok(simulate(2, 11, |ctx| {
        // The setup iteration's spare outputs, then one main iteration.
        let spare = FerretParams::SECURE.setup.n - main.consumed();
        let out = if ctx.party() == 0 {
            let mut s = FerretSender::setup(ctx, 1, FerretParams::SECURE)?;
            ctx.set_phase("main");
            let out = s.send_random(ctx, spare + 1_000_000)?;
            (s.delta(), out)
        } else {
            let mut r = FerretReceiver::setup(ctx, 0, FerretParams::SECURE)?;
            ctx.set_phase("main");
            (0, r.receive_random(ctx, spare + 1_000_000)?)
        };
        Ok((out, ctx.stats().get("main")))
    }))
    .expect("honest");
    let (outs, stats): (Vec<_>, Vec<_>) = results.into_iter().unzip();
    assert_correlated(&outs);
    // One message from the sender: t·(h − 1) blocks (Half-Tree); nothing from the receiver.
    let expected = (main.t * (main.h as usize - 1) * 16) as u64;
    assert_eq!(stats[0].bytes_sent, expected);
    assert_eq!(stats[0].messages_sent, 1);
    assert_eq!(stats[1].bytes_sent, 0);
    let bits_per_cot = expected as f64 * 8.0 / per_iteration as f64;
    assert!(bits_per_cot < 0.25, "{bits_per_cot}");
}

#[test]
fn garbled_tree_sums_are_errors_naming_the_step() {
    // Party 0's frames: 0-1 seed setup, 2 base-OT points, 3 KOS seed, 4 the setup
    // iteration's tree sums.
    let alter = Arc::new(|p: &mut Vec<u8>| p.truncate(p.len() - 16));
    let (results, altered) =
        simulate_altered(2, SimConfig::new(4), Some(Tamper { party: 0, frame: 4 }), alter, |ctx| {
            run(ctx, FerretParams::INSECURE_SMALL, &[10])
        });
    assert!(altered);
    match &results[1] {
        Err(MpcError::Malformed { what, .. }) => {
            assert!(what.contains("Ferret: Half-Tree level sums"), "{what}")
        }
        other => panic!("{other:?}"),
    }
}
