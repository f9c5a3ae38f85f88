//! IKNP and KOS: the COT correlation holds for every instance, over the in-memory mesh and
//! TLS; the KOS check catches a receiver that cheats; malformed messages name their step.

use std::sync::Arc;

use veil_conformance::tamper::{Tamper, simulate_altered};
use veil_mpc::harness::{SimConfig, all_ok, simulate, simulate_tcp};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::block::lsb;
use veil_ot::{Block, Check, CotReceiver, CotSender, ExtensionReceiver, ExtensionSender};

/// Party 0 sends, party 1 receives; returns (Δ, blocks) per party.
fn run(ctx: &mut Ctx, check: Check, sizes: &[usize]) -> Result<(Block, Vec<Block>)> {
    let mut out = Vec::new();
    if ctx.party() == 0 {
        let mut s = ExtensionSender::setup(ctx, 1, check)?;
        for &n in sizes {
            out.extend(s.send_random(ctx, n)?);
        }
        Ok((s.delta(), out))
    } else {
        let mut r = ExtensionReceiver::setup(ctx, 0, check)?;
        for &n in sizes {
            out.extend(r.receive_random(ctx, n)?);
        }
        Ok((0, out))
    }
}

fn assert_correlated(results: Vec<(Block, Vec<Block>)>) {
    let (delta, v) = &results[0];
    let w = &results[1].1;
    assert_eq!(v.len(), w.len());
    assert!(lsb(*delta));
    let mut ones = 0;
    for (i, (&v, &w)) in v.iter().zip(w).enumerate() {
        assert!(!lsb(v), "sender block {i} not in normal form");
        let c = lsb(w);
        ones += usize::from(c);
        assert_eq!(w, if c { v ^ delta } else { v }, "instance {i}");
    }
    // Random choices: about half are ones.
    assert!(ones * 3 > v.len() && ones * 3 < 2 * v.len(), "{ones} of {}", v.len());
}

#[test]
fn iknp_and_kos_correlations_hold_for_every_instance_over_many_seeds() {
    for check in [Check::None, Check::Kos] {
        for seed in 0..4 {
            let sizes = [1, 127, 128, 1000, 5000];
            let results = all_ok(simulate(2, seed, |ctx| run(ctx, check, &sizes))).expect("honest run");
            assert_correlated(results);
        }
    }
}

#[test]
fn extension_spans_several_chunks() {
    let n = veil_ot::extension::CHUNK_ROWS + 300;
    let results = all_ok(simulate(2, 9, |ctx| run(ctx, Check::Kos, &[n]))).expect("honest run");
    assert_correlated(results);
}

#[test]
fn extension_agrees_over_tls() {
    let results = all_ok(simulate_tcp(2, 5, |ctx| run(ctx, Check::Kos, &[3000]))).expect("honest run");
    assert_correlated(results);
}

/// Frames party 1 (the COT receiver, base-OT sender) sends: 0-1 seed setup, 2 the base-OT
/// point A, then per chunk the column matrix and (KOS) the check's answer. Party 0 sends its
/// base-OT points as frame 2 and the check's seed as frame 3.
const SETUP_FRAMES: usize = 3;

#[test]
fn the_kos_check_catches_a_receiver_whose_columns_disagree() {
    // Column 0 of the matrix (its first 10 blocks for 1000 + 256 rows) meets bit 0 of Δ, which
    // is always set, so a different choice vector there always changes the sender's rows.
    // (A change in a column whose bit of Δ is 0 changes nothing the sender computes.)
    for (byte, bit) in [(0usize, 0u8), (16 * 7 + 3, 5), (16 * 9 + 15, 7)] {
        let alter = Arc::new(move |p: &mut Vec<u8>| {
            if let Some(b) = p.get_mut(byte) {
                *b ^= 1 << bit;
            }
        });
        let tamper = Some(Tamper { party: 1, frame: SETUP_FRAMES });
        let (results, altered) =
            simulate_altered(2, SimConfig::new(3), tamper, alter, |ctx| run(ctx, Check::Kos, &[1000]));
        assert!(altered);
        match &results[0] {
            Err(MpcError::Abort { check, suspect }) => {
                assert!(check.contains("KOS"), "{check}");
                assert_eq!(*suspect, Some(1));
            }
            other => panic!("the sender did not abort: {other:?}"),
        }
    }
}

#[test]
fn iknp_without_the_check_does_not_notice_the_same_cheat() {
    let alter = Arc::new(|p: &mut Vec<u8>| p[0] ^= 1);
    let tamper = Some(Tamper { party: 1, frame: SETUP_FRAMES });
    let (results, _) =
        simulate_altered(2, SimConfig::new(3), tamper, alter, |ctx| run(ctx, Check::None, &[1000]));
    // The semi-honest protocol completes: the cheat goes through undetected, which is why KOS
    // exists.
    assert!(results.iter().all(|r| r.is_ok()));
}

#[test]
fn short_long_and_garbled_messages_are_errors_naming_the_step() {
    let cases: Vec<(usize, usize, veil_net::fault::Alter, &str)> = vec![
        (0, 2, Arc::new(|p: &mut Vec<u8>| p.truncate(p.len() - 1)), "base OT: receiver's points"),
        (1, 2, Arc::new(|p: &mut Vec<u8>| p.push(0)), "base OT: sender's point"),
        (
            1,
            2,
            Arc::new(|p: &mut Vec<u8>| p.iter_mut().for_each(|b| *b = 0xff)),
            "not the encoding of a Ristretto point",
        ),
        (1, SETUP_FRAMES, Arc::new(|p: &mut Vec<u8>| p.truncate(100)), "OT extension: column matrix"),
        (0, 3, Arc::new(|p: &mut Vec<u8>| p.push(1)), "KOS check: challenge seed"),
        (1, SETUP_FRAMES + 1, Arc::new(|p: &mut Vec<u8>| p.truncate(3)), "KOS check: receiver's answer"),
    ];
    for (party, frame, alter, step) in cases {
        let (results, altered) =
            simulate_altered(2, SimConfig::new(4), Some(Tamper { party, frame }), alter, |ctx| {
                run(ctx, Check::Kos, &[500])
            });
        assert!(altered, "{step}");
        let victim = &results[1 - party];
        match victim {
            Err(MpcError::Malformed { what, .. }) => {
                assert!(what.contains(step), "{what} should name {step}")
            }
            other => panic!("{step}: {other:?}"),
        }
    }
}

#[test]
fn a_peer_that_leaves_mid_extension_is_an_error_not_a_hang() {
    let results = simulate(2, 6, |ctx| {
        if ctx.party() == 0 {
            let mut s = ExtensionSender::setup(ctx, 1, Check::Kos)?;
            s.send_random(ctx, 100)?;
            s.send_random(ctx, 100).map(|_| ())
        } else {
            let mut r = ExtensionReceiver::setup(ctx, 0, Check::Kos)?;
            r.receive_random(ctx, 100)?;
            Err(MpcError::Invalid("receiver gives up".into()))
        }
    });
    assert!(results[0].is_err());
}
