//! The multi-party harness and seed setup.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use std::time::{Duration, Instant};

use veil_crypto::{Prg, Seed, SessionId};
use veil_mpc::harness::{SimConfig, all_ok, simulate, simulate_with};
use veil_mpc::{MpcError, seeds};
use veil_net::Net;
use veil_net::mesh::mem_mesh;
use veil_ring::{Ring, Z64};

#[test]
fn parties_share_pairwise_and_common_randomness() {
    for n in [2, 3, 5] {
        let out = all_ok(simulate(n, 7, |ctx| {
            let common = Z64::random(&mut ctx.common_prg("test"));
            let pairs: Vec<Option<Z64>> = (0..ctx.parties())
                .map(|p| ctx.pair_prg(p, "test").ok().map(|mut g| Z64::random(&mut g)))
                .collect();
            Ok((ctx.party(), common, pairs))
        }))
        .unwrap();
        for (i, c, pairs) in &out {
            assert_eq!(*c, out[0].1, "common seed differs at party {i}");
            for (j, v) in pairs.iter().enumerate() {
                if *i == j {
                    assert!(v.is_none());
                    continue;
                }
                assert_eq!(*v, out[j].2[*i], "pair seed {i}-{j} differs");
                assert_ne!(*v, Some(*c));
            }
        }
        if n >= 3 {
            assert_ne!(out[0].2[1], out[0].2[2], "two pairs share a seed");
        }
    }
}

#[test]
fn derivations_are_fresh_per_call() {
    let out = all_ok(simulate(2, 8, |ctx| {
        let a = Z64::random(&mut ctx.common_prg("x"));
        let b = Z64::random(&mut ctx.common_prg("x"));
        Ok(a != b)
    }))
    .unwrap();
    assert!(out.into_iter().all(|x| x));
}

#[test]
fn a_failing_party_makes_the_others_fail_fast() {
    for n in [2, 3, 5] {
        let start = Instant::now();
        let cfg = SimConfig { seed: 1, timeout: Duration::from_secs(30) };
        let res = simulate_with(n, cfg, |ctx| {
            if ctx.party() == 1 {
                return Err(MpcError::Invalid("party 1 gives up".into()));
            }
            // Everyone else waits for a message party 1 will never send.
            ctx.net().recv(1)?;
            Ok(())
        });
        assert!(start.elapsed() < Duration::from_secs(5), "peers waited for the timeout");
        assert!(matches!(res[1], Err(MpcError::Invalid(_))));
        for (i, r) in res.iter().enumerate().filter(|(i, _)| *i != 1) {
            let e = r.as_ref().err().unwrap_or_else(|| panic!("party {i} did not fail"));
            // The failing party tells its peers why before leaving.
            assert_eq!(e.to_string(), "party 1 stopped the session: invalid use: party 1 gives up");
        }
    }
}

#[test]
fn a_panicking_party_is_reported_and_does_not_hang_the_others() {
    let res = simulate(3, 2, |ctx| {
        if ctx.party() == 2 {
            panic!("bug in party 2");
        }
        ctx.net().recv(2)?;
        Ok(())
    });
    assert!(matches!(&res[2], Err(MpcError::Panicked { party: 2, message }) if message.contains("bug")));
    assert!(res[0].is_err() && res[1].is_err());
}

#[test]
fn a_silent_party_is_a_timeout_error() {
    let cfg = SimConfig { seed: 3, timeout: Duration::from_millis(200) };
    let res = simulate_with(2, cfg, |ctx| {
        if ctx.party() == 0 {
            ctx.net().recv(1)?;
        } else {
            std::thread::sleep(Duration::from_millis(600));
        }
        Ok(())
    });
    let e = res[0].as_ref().err().unwrap().to_string();
    assert!(e.contains("heard nothing from party 1"), "{e}");
}

#[test]
fn coin_toss_takes_two_rounds() {
    let out = all_ok(simulate(3, 4, |ctx| Ok(ctx.stats().get("setup")))).unwrap();
    for s in out {
        assert_eq!(s.rounds, 2);
        assert_eq!(s.messages_sent, 4);
        assert_eq!(s.bytes_sent, 2 * (64 + 96));
    }
}

/// Party 2 sends party 0 and party 1 different all-party commitments: the echo catches it.
#[test]
fn equivocating_in_the_coin_toss_aborts() {
    let session = SessionId([1; 16]);
    let mut nets: Vec<Net> =
        mem_mesh(3).into_iter().map(|t| Net::new(Box::new(t), Duration::from_secs(5))).collect();
    let mut cheater = nets.pop().unwrap();
    let res = std::thread::scope(|s| {
        let hs: Vec<_> = nets
            .iter_mut()
            .enumerate()
            .map(|(i, net)| {
                s.spawn(move || {
                    let mut rng = Prg::new(&Seed([i as u8; 16]));
                    seeds::toss(net, &session, &mut rng).map(|_| ())
                })
            })
            .collect();
        // The cheater runs an honest toss against each victim separately, with different seeds.
        let mut msgs = Vec::new();
        for (victim, seed) in [(0usize, 10u8), (1, 11)] {
            let mut rng = Prg::new(&Seed([seed; 16]));
            let c = Seed::from_rng(&mut rng);
            let (com, open) = veil_crypto::commit_in_session(&mut rng, &session, c.as_bytes());
            let p = Seed::from_rng(&mut rng);
            let (pcom, popen) = veil_crypto::commit_in_session(&mut rng, &session, p.as_bytes());
            let mut m1 = com.0.to_vec();
            m1.extend_from_slice(&pcom.0);
            cheater.send(victim, m1).unwrap();
            msgs.push((victim, c, open, p, popen));
        }
        let r0 = cheater.recv(0).unwrap();
        let r1 = cheater.recv(1).unwrap();
        let mut echo = veil_crypto::Hasher::new("veil/cointoss/echo");
        echo.update(&r0[..32]).update(&r1[..32]);
        for (victim, c, open, p, popen) in msgs {
            let mut m2 = c.as_bytes().to_vec();
            m2.extend_from_slice(&open.randomness);
            m2.extend_from_slice(p.as_bytes());
            m2.extend_from_slice(&popen.randomness);
            m2.extend_from_slice(&echo.finalize().0); // a made-up echo
            cheater.send(victim, m2).unwrap();
        }
        hs.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
    });
    for r in res {
        let e = r.unwrap_err().to_string();
        assert!(e.contains("abort") && e.contains("coin toss"), "{e}");
    }
}

/// The closing handshake: a party whose job succeeded reports success only if every peer's
/// job succeeded too. Here the output's receiver (party 2) gets the servers' messages and then
/// fails its own check; the servers, whose jobs returned `Ok`, must not report success.
#[test]
fn no_party_reports_success_when_the_output_receiver_failed() {
    for tcp in [false, true] {
        let job = |ctx: &mut veil_mpc::Ctx| {
            if ctx.party() < 2 {
                let me = ctx.party() as u8;
                ctx.net().send(2, vec![me])?;
                return Ok(());
            }
            let _ = ctx.net().recv(0)?;
            let _ = ctx.net().recv(1)?;
            Err(MpcError::abort("output check", None))
        };
        let res = if tcp { veil_mpc::harness::simulate_tcp(3, 4, job) } else { simulate(3, 4, job) };
        for (p, r) in res.iter().enumerate() {
            let e = r.as_ref().expect_err("no party may succeed");
            if p < 2 {
                assert!(e.to_string().contains("party 2 stopped the session"), "{e}");
            }
        }
        // The same job with a receiver that succeeds: everyone succeeds.
        let res = simulate(3, 4, |ctx| {
            if ctx.party() < 2 {
                return Ok(ctx.net().send(2, vec![1])?);
            }
            ctx.net().recv(0)?;
            ctx.net().recv(1)?;
            Ok(())
        });
        all_ok(res).unwrap();
    }
}

/// A message a party's job never read makes that party's closing handshake fail: the two
/// parties disagree on the protocol, and success would hide it. (The sender, whose peer's job
/// did succeed and confirmed so, may report success.)
#[test]
fn an_unread_message_fails_the_closing_handshake() {
    let res = simulate(2, 5, |ctx| {
        if ctx.party() == 0 {
            ctx.net().send(1, vec![7])?;
        }
        Ok(())
    });
    let e = res[1].as_ref().unwrap_err().to_string();
    assert!(e.contains("party 0 did not confirm") && e.contains("never read"), "{e}");
}
