//! Input owners outside the servers, output to the data owner only, and the shared keys.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mosformer::owners::{reveal_to_owner, share_from_owner};
use veil_mosformer::rss::Rss;
use veil_mosformer::verified::matmul;
use veil_mpc::harness::{all_ok, simulate};
use veil_mpc::{MpcError, Result};
use veil_ring::{Ring, Z64};
use veil_tensor::Tensor;

const DATA_OWNER: usize = 3;
const MODEL_OWNER: usize = 4;

fn matrix(rows: usize, cols: usize, seed: u64) -> Tensor<Z64> {
    use rand::{SeedableRng, rngs::StdRng};
    Tensor::new(vec![rows, cols], Z64::random_vec(&mut StdRng::seed_from_u64(seed), rows * cols)).unwrap()
}

#[test]
fn data_owner_times_model_owner_revealed_to_the_data_owner_only() {
    let (x, w) = (matrix(2, 5, 1), matrix(5, 3, 2));
    let out = all_ok(simulate(5, 1, |ctx| {
        let me = ctx.party();
        let xs = share_from_owner(ctx, DATA_OWNER, (me == DATA_OWNER).then_some(&x), x.shape())?;
        let ws = share_from_owner(ctx, MODEL_OWNER, (me == MODEL_OWNER).then_some(&w), w.shape())?;
        let y: Option<Rss<Z64>> = match (xs, ws) {
            (Some(xs), Some(ws)) => Some(matmul(ctx, &mut Offline::new(), &xs, &ws)?),
            _ => None,
        };
        reveal_to_owner(ctx, y.as_ref(), DATA_OWNER, &[2, 3])
    }))
    .unwrap();
    for (p, o) in out.iter().enumerate() {
        assert_eq!(o.is_some(), p == DATA_OWNER, "party {p}");
    }
    assert_eq!(out[DATA_OWNER].as_ref().unwrap(), &x.matmul(&w).unwrap());
}

#[test]
fn owner_sending_inconsistent_shares_is_caught() {
    let res = simulate(4, 2, |ctx| {
        if ctx.party() == DATA_OWNER {
            // P0 and P2 both hold a_0 (as the seed k_0), P1 and P2 both hold a_2: give P2
            // another seed for a_0, and P1 and P2 different copies of a_2.
            let (k0, k1, other) = ([1u8; 16], [2u8; 16], [3u8; 16]);
            ctx.net().send(0, [k0, k1].concat())?;
            ctx.net().send(1, k1.to_vec())?;
            ctx.send_ring(1, &[Z64(3)])?;
            ctx.net().send(2, other.to_vec())?;
            ctx.send_ring(2, &[Z64(5)])?;
            return Ok(());
        }
        share_from_owner::<Z64>(ctx, DATA_OWNER, None, &[1]).map(|_| ())
    });
    let blamed: Vec<usize> =
        (0..3).filter(|&p| matches!(&res[p], Err(MpcError::Abort { suspect: Some(3), .. }))).collect();
    // The holders of a_0 (checked at P0) and of a_2 (checked at P2) disagree; a_1 is consistent
    // and P1's own check passes (it then fails at the next exchange, since the others left: no
    // output can follow).
    assert_eq!(blamed, [0, 2], "{res:?}");
}

#[test]
fn an_owner_sending_malformed_seeds_is_blamed() {
    let res = simulate(4, 2, |ctx| {
        if ctx.party() == DATA_OWNER {
            for b in 0..3 {
                ctx.net().send(b, vec![7u8; 5])?;
            }
            return Ok(());
        }
        share_from_owner::<Z64>(ctx, DATA_OWNER, None, &[4]).map(|_| ())
    });
    for r in &res[..3] {
        assert!(
            matches!(r, Err(MpcError::Abort { suspect: Some(3), check }) if check.contains("seeds")),
            "{r:?}"
        );
    }
}

#[test]
fn an_owner_sends_seeds_for_the_random_components() {
    // The owner sends n·B + 16 bytes to P1 and P2 and 32 to P0 (every pair in full took 2·n·B
    // to each server).
    let x = matrix(10, 10, 9);
    let out = all_ok(simulate(4, 5, |ctx| {
        let me = ctx.party();
        let before = ctx.stats().total().bytes_sent;
        let s = share_from_owner(ctx, DATA_OWNER, (me == DATA_OWNER).then_some(&x), x.shape())?;
        let sent = ctx.stats().total().bytes_sent - before;
        let y = reveal_to_owner(ctx, s.as_ref(), DATA_OWNER, x.shape())?;
        Ok((sent, y))
    }))
    .unwrap();
    assert_eq!(out[DATA_OWNER].0, 2 * (100 * 8 + 16) + 32);
    assert_eq!(out[DATA_OWNER].1.as_ref(), Some(&x));
}

#[test]
fn a_server_changing_the_output_is_caught_by_the_data_owner() {
    let x = matrix(1, 4, 3);
    for cheater in 0..3 {
        let res = simulate(4, 3 + cheater as u64, |ctx| {
            let me = ctx.party();
            let xs = share_from_owner(ctx, DATA_OWNER, (me == DATA_OWNER).then_some(&x), x.shape())?;
            if me == cheater {
                let s = xs.unwrap();
                let bad = s.first.add(&Tensor::new(vec![1, 4], vec![Z64(0), Z64(0), Z64(7), Z64(0)])?)?;
                return reveal_to_owner(ctx, Some(&Rss::new(bad, s.second)?), DATA_OWNER, &[1, 4]);
            }
            reveal_to_owner(ctx, xs.as_ref(), DATA_OWNER, &[1, 4])
        });
        assert!(
            matches!(&res[DATA_OWNER], Err(MpcError::Abort { check, .. }) if check.contains("output")),
            "{res:?}"
        );
    }
}

#[test]
fn owners_cannot_use_server_operations_and_vice_versa() {
    let res = simulate(4, 4, |ctx| -> Result<()> {
        if ctx.party() == DATA_OWNER {
            veil_mosformer::prss::random::<Z64>(ctx, &[1])?;
        } else {
            share_from_owner::<Z64>(ctx, 1, None, &[1])?;
        }
        Ok(())
    });
    assert!(
        res[DATA_OWNER].as_ref().unwrap_err().to_string().contains("not one of the three compute servers")
    );
    assert!(res[0].as_ref().unwrap_err().to_string().contains("not an input owner"));
}

#[test]
fn random_one_opens_to_one_with_random_components() {
    let out = all_ok(simulate(3, 5, |ctx| {
        let one = random_one::<Z64>(ctx)?;
        let alpha = mac_key::<Z64>(ctx)?;
        Ok((one.clone(), open_all(ctx, &one)?, open_all(ctx, &alpha)?))
    }))
    .unwrap();
    for (share, opened, _) in &out {
        assert_eq!(opened.data(), &[Z64(1)]);
        // No component is the trivial 0 or 1 of the (1, 0, 0) sharing.
        for c in [share.first.data()[0], share.second.data()[0]] {
            assert!(c != Z64(0) && c != Z64(1));
        }
    }
    assert_ne!(out[0].2.data()[0], Z64(0));
}
