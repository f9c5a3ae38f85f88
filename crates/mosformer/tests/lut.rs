//! Π_LUT against plaintext, its MAC check, cost, and abort on tampering.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::input::share_input;
use veil_mosformer::keys::{mac_key, random_one};
use veil_mosformer::lut::{self, lookup, lookup_finish, lookup_terms, pad_table};
use veil_mosformer::mac::{MacBatch, Macs};
use veil_mosformer::open::open_all;
use veil_mpc::cost::rounds_across;
use veil_mpc::harness::simulate;
use veil_mpc::{MpcError, Result};
use veil_ring::{Ring, Z32, Z64};
use veil_tensor::Tensor;

const ELL_T: u32 = 8;

fn table() -> Vec<Z64> {
    // 200 entries of a signed function (GELU-like shape), padded to 256.
    let raw: Vec<Z64> = (0..200).map(|i: i64| Z64::from_i64((i - 100) * (i - 60) * 37 - 5)).collect();
    pad_table(&raw, ELL_T).unwrap()
}

fn indices() -> Vec<u32> {
    let mut v = vec![0, 1, 199, 200, 255, 128, 7];
    v.extend((0..25).map(|i| (i * 97 + 13) % 256));
    v
}

/// Opened results, online bytes sent and the logical-time span of the lookup.
type Outcome = (Vec<Z64>, u64, (u64, u64));

/// Runs lookups; `tamper(party, res_term)` may change an additive term before the reshare.
fn run(seed: u64, tamper: impl Fn(usize, &mut Tensor<Z64>) + Sync) -> Vec<Result<Outcome>> {
    let idx = indices();
    let t = table();
    simulate(3, seed, |ctx| {
        let n = idx.len();
        let x = Tensor::new(vec![n], idx.iter().map(|&i| Z32(i)).collect())?;
        let xs = share_input(ctx, 0, (ctx.party() == 0).then_some(&x), &[n])?;
        let one = random_one::<Z64>(ctx)?;
        let alpha = mac_key::<Z64>(ctx)?;
        let keys = lut::setup::<Z32, Z64>(ctx, ELL_T, n)?;
        let mut batch = MacBatch::new();
        let (before, t0) = (ctx.stats().current(), ctx.stats().time());
        let (mut res, mac) = lookup_terms(ctx, &keys, &xs, &t, &one, &alpha)?;
        tamper(ctx.party(), &mut res);
        let y = lookup_finish(ctx, res, mac, &mut batch)?;
        let bytes = ctx.stats().current().since(&before).bytes_sent;
        let span = (t0, ctx.stats().time());
        batch.check(ctx, &alpha, 32, "lut")?;
        Ok((open_all(ctx, &y)?.into_data(), bytes, span))
    })
}

#[test]
fn lookups_match_the_table_and_pass_the_mac_check() {
    let out: Vec<_> = run(1, |_, _| ()).into_iter().map(|r| r.unwrap()).collect();
    let t = table();
    let n = indices().len();
    for (vals, bytes, _) in &out {
        for (k, &i) in indices().iter().enumerate() {
            assert_eq!(vals[k], t[i as usize], "T[{i}]");
        }
        // Two reveal components packed in 8 bits, the reshare of value and MAC (Z_2^64), and
        // two 32-byte digests.
        assert_eq!(*bytes, (2 * n + 2 * 8 * n + 64) as u64);
    }
    let spans: Vec<_> = out.iter().map(|o| o.2).collect();
    assert_eq!(rounds_across(&spans), 2);
}

#[test]
fn an_evaluator_adding_an_error_to_its_term_is_caught_by_the_mac() {
    for (cheater, e) in [(0usize, 1u64), (1, 1 << 31), (2, 0x1234_5678)] {
        let res = run(2 + cheater as u64, |p, r| {
            if p == cheater {
                let mut d = r.data().to_vec();
                d[3] += Z64(e);
                *r = Tensor::new(r.shape().to_vec(), d).unwrap();
            }
        });
        assert!(
            res.iter()
                .all(|r| matches!(r, Err(MpcError::Abort { check, .. }) if check.contains("MAC check"))),
            "cheater {cheater}, error {e:#x}: {res:?}"
        );
    }
}

#[test]
fn honest_lookups_never_abort() {
    for seed in 10..16 {
        assert!(run(seed, |_, _| ()).iter().all(|r| r.is_ok()));
    }
}

#[test]
fn wrong_sizes_are_errors() {
    let res = simulate(3, 20, |ctx| {
        let xs = veil_mosformer::rss::Rss::<Z32>::zeros(&[3]);
        let one = random_one::<Z64>(ctx)?;
        let alpha = mac_key::<Z64>(ctx)?;
        let keys = lut::setup::<Z32, Z64>(ctx, 4, 3)?;
        let mut batch = MacBatch::new();
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut batch };
        lookup(ctx, keys, &xs, &[Z64::ONE; 8], macs).map(|_| ())
    });
    assert!(res.iter().all(|r| r.as_ref().unwrap_err().to_string().contains("table of 8 entries")));
    assert!(pad_table::<Z64>(&[], 4).is_err());
    assert!(pad_table(&[Z64::ONE; 17], 4).is_err());
}
