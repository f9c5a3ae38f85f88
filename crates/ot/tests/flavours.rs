//! Every OT flavour over every engine (IKNP, KOS, Ferret): the correlation or the chosen
//! message comes out for every instance, at edge and random values; the other message looks
//! random to the receiver; the traffic is what the flavour declares.

use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::{self, Modulus, Shape};
use veil_ot::{
    Check, CotReceiver, CotSender, ExtensionReceiver, ExtensionSender, FerretParams, FerretReceiver,
    FerretSender,
};

#[derive(Clone, Copy, Debug)]
enum Engine {
    Iknp,
    Kos,
    Ferret,
}

const ENGINES: [Engine; 3] = [Engine::Iknp, Engine::Kos, Engine::Ferret];

enum Side {
    Sender(Box<dyn CotSender>),
    Receiver(Box<dyn CotReceiver>),
}

fn engine(ctx: &mut Ctx, e: Engine) -> Result<Side> {
    Ok(match (ctx.party(), e) {
        (0, Engine::Iknp) => Side::Sender(Box::new(ExtensionSender::setup(ctx, 1, Check::None)?)),
        (0, Engine::Kos) => Side::Sender(Box::new(ExtensionSender::setup(ctx, 1, Check::Kos)?)),
        (0, Engine::Ferret) => {
            Side::Sender(Box::new(FerretSender::setup(ctx, 1, FerretParams::INSECURE_SMALL)?))
        }
        (_, Engine::Iknp) => Side::Receiver(Box::new(ExtensionReceiver::setup(ctx, 0, Check::None)?)),
        (_, Engine::Kos) => Side::Receiver(Box::new(ExtensionReceiver::setup(ctx, 0, Check::Kos)?)),
        (_, Engine::Ferret) => {
            Side::Receiver(Box::new(FerretReceiver::setup(ctx, 0, FerretParams::INSECURE_SMALL)?))
        }
    })
}

/// Deterministic test values: edges first, then pseudorandom.
fn values(n: usize, seed: u64, m: Modulus) -> Vec<u128> {
    let top = match m {
        Modulus::PowerOfTwo(k) => veil_ot::pack::mask(k),
        Modulus::Integer(q) => u128::from(q - 1),
    };
    let mut x = u128::from(seed) | 1;
    (0..n)
        .map(|i| match i {
            0 => 0,
            1 => 1,
            2 => top,
            3 => top / 2 + 1,
            _ => {
                x = x
                    .wrapping_mul(0x2545_F491_4F6C_DD1D_9E37_79B9_7F4A_7C15)
                    .wrapping_add(0x1405_7B7E_F767_814F);
                m.reduce(x ^ (x >> 67))
            }
        })
        .collect()
}

fn choices(n: usize, seed: u64) -> Vec<bool> {
    (0..n).map(|i| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(seed) >> 61 & 1 == 1).collect()
}

#[test]
fn delta_ot_gives_b_equal_a_plus_c_delta_in_every_modulus_and_engine() {
    let moduli = [
        Modulus::PowerOfTwo(1),
        Modulus::PowerOfTwo(17),
        Modulus::PowerOfTwo(64),
        Modulus::PowerOfTwo(128),
        Modulus::Integer(3),
        Modulus::Integer((1 << 61) - 1),
        Modulus::Integer(0xffff_ffff_ffff_ffc5), // the largest prime below 2^64
        Modulus::Integer((1 << 61) - 2),         // p - 1, even
    ];
    for e in ENGINES {
        let n = 300;
        let out = all_ok(simulate(2, 1, |ctx| {
            let mut side = engine(ctx, e)?;
            let mut outs = Vec::new();
            for (k, &m) in moduli.iter().enumerate() {
                outs.push(match &mut side {
                    Side::Sender(s) => flavours::delta_ot_send(ctx, s.as_mut(), m, &values(n, k as u64, m))?,
                    Side::Receiver(r) => {
                        flavours::delta_ot_receive(ctx, r.as_mut(), m, &choices(n, k as u64))?
                    }
                });
            }
            Ok(outs)
        }))
        .expect("honest run");
        for (k, &m) in moduli.iter().enumerate() {
            let (a, b) = (&out[0][k], &out[1][k]);
            let (deltas, c) = (values(n, k as u64, m), choices(n, k as u64));
            for i in 0..n {
                let expect = if c[i] { m.add(a[i], deltas[i]) } else { a[i] };
                assert_eq!(b[i], expect, "{e:?} {m:?} instance {i}");
            }
        }
    }
}

#[test]
fn delta_ot_costs_one_bit_up_and_log_m_bits_down_in_one_round() {
    let n = 1000;
    let m = Modulus::Integer((1 << 61) - 1);
    let stats = all_ok(simulate(2, 2, |ctx| {
        let mut side = engine(ctx, Engine::Ferret)?;
        // Make the COTs ahead, so that only the flavour's own traffic is counted.
        match &mut side {
            Side::Sender(s) => s.prepare(ctx, n)?,
            Side::Receiver(r) => r.prepare(ctx, n)?,
        }
        ctx.set_phase("delta-ot");
        let before = ctx.stats().time();
        match &mut side {
            Side::Sender(s) => flavours::delta_ot_send(ctx, s.as_mut(), m, &values(n, 0, m))?,
            Side::Receiver(r) => flavours::delta_ot_receive(ctx, r.as_mut(), m, &choices(n, 0))?,
        };
        Ok((ctx.stats().get("delta-ot"), before, ctx.stats().time()))
    }))
    .expect("honest run");
    assert_eq!(stats[0].0.bytes_sent, (n as u64 * 61).div_ceil(8));
    assert_eq!(stats[1].0.bytes_sent, (n as u64).div_ceil(8));
    assert_eq!(veil_mpc::cost::rounds_across(&[(stats[0].1, stats[0].2), (stats[1].1, stats[1].2)]), 1);
}

#[test]
fn chosen_message_ot_returns_the_chosen_message_and_the_other_looks_random() {
    for e in ENGINES {
        let n = 2000;
        let msgs: Vec<(u128, u128)> =
            (0..n as u128).map(|i| (i.wrapping_mul(0x1234_5678_9abc_def1), !i)).collect();
        let c = choices(n, 3);
        let out = all_ok(simulate(2, 3, |ctx| match engine(ctx, e)? {
            Side::Sender(mut s) => flavours::chosen_ot_send(ctx, s.as_mut(), &msgs).map(|()| Vec::new()),
            Side::Receiver(mut r) => flavours::chosen_ot_receive(ctx, r.as_mut(), &c),
        }))
        .expect("honest run");
        for i in 0..n {
            let want = if c[i] { msgs[i].1 } else { msgs[i].0 };
            assert_eq!(out[1][i], want, "{e:?} instance {i}");
        }
    }
    // What the receiver can compute for the message it did not choose, with the key it has,
    // is unrelated to that message: the other messages are all 0, and the receiver's best
    // attempt at them (its own pad on the other slot) has every bit balanced.
    let n = 4000;
    let c = choices(n, 4);
    let msgs: Vec<(u128, u128)> = c.iter().map(|&c| if c { (0, 7) } else { (7, 0) }).collect();
    let out = all_ok(simulate(2, 4, |ctx| match engine(ctx, Engine::Ferret)? {
        Side::Sender(mut s) => flavours::chosen_ot_send(ctx, s.as_mut(), &msgs).map(|()| Vec::new()),
        Side::Receiver(mut r) => {
            // The receiver's side of `chosen_ot_receive`, opened up to look at the other slot.
            let mut pads = flavours::chosen_cot_receive(ctx, r.as_mut(), &c)?;
            veil_ot::prp::tcr_hash(&veil_ot::prp::Prp::fixed("ot/chosen"), &mut pads, 0);
            let masked = veil_ot::block::from_bytes(&ctx.net().recv(0)?).expect("whole blocks");
            Ok((0..n)
                .flat_map(|i| {
                    [
                        masked[2 * i + usize::from(c[i])] ^ pads[i],
                        masked[2 * i + usize::from(!c[i])] ^ pads[i],
                    ]
                })
                .collect())
        }
    }))
    .expect("honest run");
    let (chosen, other): (Vec<u128>, Vec<u128>) = out[1].chunks(2).map(|p| (p[0], p[1])).unzip();
    assert!(chosen.iter().all(|&m| m == 7));
    for bit in 0..128 {
        let ones = other.iter().filter(|&&x| x >> bit & 1 == 1).count();
        // n/2 ± 5σ, σ = √n / 2.
        assert!(
            (ones as f64 - n as f64 / 2.0).abs() < 5.0 * (n as f64).sqrt() / 2.0,
            "bit {bit}: {ones} of {n}"
        );
    }
}

#[test]
fn random_and_chosen_choice_cot_hold() {
    for e in ENGINES {
        let n = 777;
        let c = choices(n, 5);
        let out = all_ok(simulate(2, 5, |ctx| match engine(ctx, e)? {
            Side::Sender(mut s) => {
                let d = s.delta();
                let v = flavours::chosen_cot_send(ctx, s.as_mut(), n)?;
                let r = flavours::random_ot_send(ctx, s.as_mut(), n)?;
                Ok((v.into_iter().map(|x| (x, x ^ d)).collect::<Vec<_>>(), r, Vec::new()))
            }
            Side::Receiver(mut r) => {
                let w = flavours::chosen_cot_receive(ctx, r.as_mut(), &c)?;
                let (rc, rm) = flavours::random_ot_receive(ctx, r.as_mut(), n)?;
                let pairs = w.into_iter().zip(rm).collect();
                Ok((pairs, Vec::new(), rc))
            }
        }))
        .expect("honest run");
        for (i, &ci) in c.iter().enumerate() {
            let (v0, v1) = out[0].0[i];
            let (w, m) = out[1].0[i];
            assert_eq!(w, if ci { v1 } else { v0 }, "{e:?} COT {i}");
            let (m0, m1) = out[0].1[i];
            assert_ne!(m0, m1);
            assert_eq!(m, if out[1].2[i] { m1 } else { m0 }, "{e:?} ROT {i}");
        }
    }
}

#[test]
fn one_of_n_ot_returns_the_indexed_message() {
    for e in ENGINES {
        for (log_n, bits) in [(1u32, 1u32), (2, 2), (4, 2), (4, 64), (8, 128)] {
            let count = 100;
            let n = 1usize << log_n;
            let msgs: Vec<u128> = (0..count * n)
                .map(|x| {
                    (x as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)
                        & veil_ot::pack::mask(bits)
                })
                .collect();
            let idx: Vec<usize> = (0..count).map(|i| (i * 7 + 3) % n).collect();
            let out = all_ok(simulate(2, 6, |ctx| match engine(ctx, e)? {
                Side::Sender(mut s) => {
                    flavours::one_of_n_send(ctx, s.as_mut(), log_n, bits, &msgs).map(|()| Vec::new())
                }
                Side::Receiver(mut r) => flavours::one_of_n_receive(ctx, r.as_mut(), log_n, bits, &idx),
            }))
            .expect("honest run");
            for i in 0..count {
                assert_eq!(out[1][i], msgs[i * n + idx[i]], "{e:?} 1-of-{n} {bits} bits, instance {i}");
            }
        }
    }
}

#[test]
fn bad_arguments_are_refused_before_anything_is_sent() {
    let out = simulate(2, 7, |ctx| match engine(ctx, Engine::Kos)? {
        Side::Sender(mut s) => {
            flavours::delta_ot_send(ctx, s.as_mut(), Modulus::Integer(10), &[10]).map(|_| ())
        }
        Side::Receiver(mut r) => flavours::one_of_n_receive(ctx, r.as_mut(), 2, 8, &[4]).map(|_| ()),
    });
    assert!(matches!(&out[0], Err(MpcError::Invalid(w)) if w.contains("not an element")));
    assert!(matches!(&out[1], Err(MpcError::Invalid(w)) if w.contains("out of range")));
}

#[test]
fn one_of_n_ot_over_several_pieces_with_cots_made_on_demand() {
    // Two pieces and a bit; the engines make COTs as the pieces ask (their messages interleave
    // with the OT's own), for an engine whose receiver sends (KOS) and one whose sender does
    // (Ferret).
    for e in [Engine::Kos, Engine::Ferret] {
        let count = 2 * flavours::PIECE + 100;
        let idx: Vec<usize> = (0..count).map(|i| (i * 5 + 1) % 16).collect();
        let out = all_ok(simulate(2, 8, |ctx| match engine(ctx, e)? {
            Side::Sender(mut s) => {
                flavours::one_of_n_send_with(ctx, s.as_mut(), 4, 2, count, |i, j| ((i + j) % 4) as u128)
                    .map(|()| Vec::new())
            }
            Side::Receiver(mut r) => flavours::one_of_n_receive(ctx, r.as_mut(), 4, 2, &idx),
        }))
        .expect("honest run");
        for (i, &j) in idx.iter().enumerate() {
            assert_eq!(out[1][i], ((i + j) % 4) as u128, "{e:?} instance {i}");
        }
    }
}

#[test]
fn one_of_n_ot_with_a_shape_per_instance_returns_the_indexed_message_and_sends_its_rows() {
    // Odd widths with N = 2 leave tasks that end mid-byte; 128-bit messages span blocks.
    let widths = [1u32, 2, 3, 65, 128, 7];
    for log_ns in [[1u32, 1, 1], [2, 2, 2], [4, 4, 4], [1, 4, 3]] {
        let shape = |i: usize| Shape { log_n: log_ns[i % 3], bits: widths[i % widths.len()] };
        let count = 2_500;
        let message = |i: usize, j: usize| {
            ((i * 16 + j) as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)
                & veil_ot::pack::mask(shape(i).bits)
        };
        let idx: Vec<usize> = (0..count).map(|i| (i * 7 + 3) % (1 << shape(i).log_n)).collect();
        let out = all_ok(simulate(2, 9, |ctx| {
            let side = engine(ctx, Engine::Iknp)?;
            ctx.set_phase("ot");
            let got = match side {
                Side::Sender(mut s) => {
                    flavours::one_of_n_send_rows(ctx, s.as_mut(), count, shape, |i, row| {
                        let bits = shape(i).bits as usize;
                        for j in 0..1 << shape(i).log_n {
                            let v = message(i, j);
                            let (b, off) = (j * bits / 128, (j * bits % 128) as u32);
                            row[b] |= v << off;
                            if off as usize + bits > 128 {
                                row[b + 1] |= v >> (128 - off);
                            }
                        }
                    })
                    .map(|()| Vec::new())
                }
                Side::Receiver(mut r) => flavours::one_of_n_receive_rows(ctx, r.as_mut(), shape, &idx),
            }?;
            Ok((got, ctx.stats().get("ot").bytes_sent))
        }))
        .expect("honest run");
        for (i, &j) in idx.iter().enumerate() {
            assert_eq!(out[1].0[i], message(i, j), "instance {i} of shape {:?}", shape(i));
        }
        // The sender sends its rows, N·w_i bits each, and nothing else (IKNP's sender is
        // silent).
        let rows: usize = (0..count).map(|i| (shape(i).bits as usize) << shape(i).log_n).sum();
        assert_eq!(out[0].1 as usize, rows.div_ceil(8));
    }
}
