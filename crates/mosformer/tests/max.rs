//! Select, ReLU and Max against plaintext, with the MAC check.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::convert::upcast;
use veil_mosformer::drelu::{select, setup};
use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::mac::{MacBatch, Macs};
use veil_mosformer::max::{max, max_setup, relu};
use veil_mosformer::offline::Offline;
use veil_mosformer::open::open_all;
use veil_mpc::harness::{all_ok, simulate};
use veil_ring::{Ring, Z2k, Z16, Z64, Z128};
use veil_tensor::Tensor;

fn small(seed: u64, n: usize, bound: i64) -> Vec<i64> {
    use rand::{Rng, SeedableRng, rngs::StdRng};
    let mut g = StdRng::seed_from_u64(seed);
    let mut v = vec![0, 1, -1, bound - 1, -bound];
    v.extend((0..n).map(|_| g.gen_range(-bound..bound)));
    v
}

#[test]
fn select_and_relu_match_plaintext() {
    let xs = small(1, 30, 1 << 12);
    let ys = small(2, 30, 1 << 40);
    let out = all_ok(simulate(3, 1, |ctx| {
        let n = xs.len();
        let x = Tensor::new(vec![n], xs.iter().map(|&v| Z16::from_i64(v)).collect())?;
        let y = Tensor::new(vec![n], ys.iter().map(|&v| Z64::from_i64(v)).collect())?;
        let xs_r = share_input(ctx, 0, (ctx.party() == 0).then_some(&x), &[n])?;
        let ys_m = share_input(ctx, 2, (ctx.party() == 2).then_some(&y), &[n])?;
        let (one, alpha) = (random_one::<Z64>(ctx)?, mac_key::<Z64>(ctx)?);
        let mut batch = MacBatch::new();
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut batch };
        let k1 = setup::<Z16, Z64>(ctx, n)?;
        let sel = select(ctx, k1, &xs_r, &ys_m, macs)?;
        // ReLU: lift x to the MAC ring (|x| < 2^14 as upcast requires), then Select(x, x).
        let x_m = upcast::<Z16, Z64>(ctx, &mut Offline::new(), &xs_r, 0)?;
        let k2 = setup::<Z16, Z64>(ctx, n)?;
        let r = relu(ctx, k2, &xs_r, &x_m, macs)?;
        batch.check(ctx, &alpha, 32, "select")?;
        Ok((open_all(ctx, &sel)?, open_all(ctx, &r)?))
    }))
    .unwrap();
    for (sel, r) in out {
        for k in 0..xs.len() {
            let cond = xs[k] >= 0;
            assert_eq!(sel.data()[k].to_signed(), if cond { i128::from(ys[k]) } else { 0 });
            assert_eq!(r.data()[k].to_signed(), i128::from(xs[k].max(0)));
        }
    }
}

#[test]
fn max_over_rows_of_every_width() {
    for (k, seed) in [(1usize, 3u64), (2, 4), (5, 5), (8, 6)] {
        let rows = 3;
        let vals = small(seed, rows * k, 1 << 13);
        let vals = &vals[..rows * k];
        let out = all_ok(simulate(3, seed, |ctx| {
            let t = Tensor::new(vec![rows, k], vals.iter().map(|&v| Z64::from_i64(v)).collect())?;
            let x = share_input(ctx, 1, (ctx.party() == 1).then_some(&t), &[rows, k])?;
            let (one, alpha) = (random_one::<Z128>(ctx)?, mac_key::<Z128>(ctx)?);
            let keys = max_setup::<Z16, Z128>(ctx, rows, k)?;
            let mut batch = MacBatch::new();
            let m = max(ctx, keys, &x, &mut Macs { one: &one, alpha: &alpha, batch: &mut batch })?;
            batch.check(ctx, &alpha, 64, "max")?;
            open_all(ctx, &m)
        }))
        .unwrap();
        for m in out {
            for r in 0..rows {
                let want = vals[r * k..(r + 1) * k].iter().max().unwrap();
                assert_eq!(m.data()[r].to_signed(), i128::from(*want), "row {r}, k = {k}");
            }
        }
    }
}
