//! The batched MAC check: honest batches pass, any error in the value's low k bits aborts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::input::share_input;
use veil_mosformer::keys::mac_key;
use veil_mosformer::mac::MacBatch;
use veil_mosformer::mul::mul_semi_honest;
use veil_mosformer::rss::Rss;
use veil_mpc::harness::simulate;
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z64, Z128};
use veil_tensor::Tensor;

/// MAC'd values: ⟨x⟩ and ⟨α·x⟩ (semi-honest product, as the paper does for Select's y).
fn macd<R: Ring>(ctx: &mut Ctx, alpha: &Rss<R>, v: &[R]) -> Result<(Rss<R>, Rss<R>)> {
    let t = Tensor::new(vec![v.len()], v.to_vec())?;
    let x = share_input(ctx, 0, (ctx.party() == 0).then_some(&t), &[v.len()])?;
    let a = Rss::new(
        Tensor::new(vec![v.len()], vec![alpha.first.data()[0]; v.len()])?,
        Tensor::new(vec![v.len()], vec![alpha.second.data()[0]; v.len()])?,
    )?;
    let m = mul_semi_honest(ctx, &a, &x)?;
    Ok((x, m))
}

/// A consistent error on component `a_1` of a sharing: both of its holders (party 1 as first
/// component, party 0 as second) see the same wrong value, as when a corrupted party 1 adds the
/// error both to its reshare message and to its own copy; checked openings cannot see it.
fn shift_a1<R: Ring>(party: usize, t: &mut Rss<R>, k: usize, e: R) {
    match party {
        1 => t.first = add_at(&t.first, k, e),
        0 => t.second = add_at(&t.second, k, e),
        _ => {}
    }
}

/// Runs a batch of 3 tensors; `tamper(party, x, m)` may change the second tensor's shares at
/// each party before the check. Returns the parties' results.
fn run<R: Ring + veil_ring::Z2k>(
    seed: u64,
    s: u32,
    tamper: impl Fn(usize, &mut Rss<R>, &mut Rss<R>) + Sync,
) -> Vec<Result<()>> {
    simulate(3, seed, |ctx| {
        let alpha = mac_key::<R>(ctx)?;
        let mut batch = MacBatch::new();
        for k in 0..3u64 {
            let vals: Vec<R> = (0..5).map(|i| R::from_u64(k * 100 + i)).collect();
            let (mut x, mut m) = macd(ctx, &alpha, &vals)?;
            if k == 1 {
                tamper(ctx.party(), &mut x, &mut m);
            }
            batch.push(x, m)?;
        }
        assert_eq!(batch.len(), 15);
        batch.check(ctx, &alpha, s, "test")
    })
}

fn add_at<R: Ring>(t: &Tensor<R>, k: usize, e: R) -> Tensor<R> {
    let mut d = t.data().to_vec();
    d[k] += e;
    Tensor::new(t.shape().to_vec(), d).unwrap()
}

fn all_abort(res: &[Result<()>]) -> bool {
    res.iter().all(|r| matches!(r, Err(MpcError::Abort { check, .. }) if check.contains("MAC check")))
}

#[test]
fn honest_batches_pass_over_many_seeds() {
    for seed in 0..20 {
        assert!(run::<Z64>(seed, 32, |_, _, _| ()).iter().all(|r| r.is_ok()));
        assert!(run::<Z128>(seed, 64, |_, _, _| ()).iter().all(|r| r.is_ok()));
    }
}

#[test]
fn errors_in_the_low_bits_abort_even_the_worst_case_for_plain_rings() {
    // Working ring Z_2^32 inside MAC ring Z_2^64 (s = 32). An error of 2^31 (the top bit of
    // the working ring) is the case a check in Z_2^32 alone would miss half the time.
    for (seed, e) in [(1u64, 1u64), (2, 1 << 31), (3, 0xdead_beef), (4, 1 << 20)] {
        let res = run::<Z64>(seed, 32, |p, x, _| shift_a1(p, x, 2, Z64(e)));
        assert!(all_abort(&res), "error {e:#x} passed: {res:?}");
    }
}

#[test]
fn a_value_error_with_a_guessed_mac_error_aborts() {
    // The adversary shifts the value by e and the MAC by e·c for a guess c of α.
    for (seed, c) in [(5u64, 0u64), (6, 1), (7, 1 << 63)] {
        let res = run::<Z64>(seed, 32, |p, x, m| {
            shift_a1(p, x, 0, Z64(1 << 31));
            shift_a1(p, m, 0, Z64((1u64 << 31).wrapping_mul(c)));
        });
        assert!(all_abort(&res), "guess {c:#x} passed");
    }
}

#[test]
fn a_mac_error_alone_aborts() {
    let res = run::<Z128>(8, 64, |p, _, m| shift_a1(p, m, 4, Z128(1)));
    assert!(all_abort(&res));
}

#[test]
fn an_inconsistent_share_is_caught_by_the_checked_opening() {
    let res = run::<Z64>(10, 32, |p, x, _| {
        if p == 1 {
            x.first = add_at(&x.first, 1, Z64(5));
        }
    });
    assert!(res.iter().any(|r| matches!(r, Err(MpcError::Abort { .. }))) && res.iter().all(|r| r.is_err()));
}

#[test]
fn bad_parameters_are_errors() {
    let res = simulate(3, 9, |ctx| {
        let alpha = mac_key::<Z64>(ctx)?;
        MacBatch::<Z64>::new().check(ctx, &alpha, 64, "x")
    });
    assert!(res.iter().all(|r| matches!(r, Err(MpcError::Invalid(_)))));
}

/// Why the gates' MAC ring is Z_2^128: their outputs are used as 64-bit values. With MACs in
/// Z_2^64 (s = 32) only the low 32 bits are authenticated, and an error of 2^63 on a value
/// passes whenever `α·χ` is even (about 3 times in 4); in Z_2^128 (s = 64) it aborts.
#[test]
fn an_error_in_the_top_bit_of_a_64_bit_value_passes_a_z64_check_and_fails_a_z128_check() {
    let passed_z64 = (20..36)
        .filter(|&seed| {
            run::<Z64>(seed, 32, |p, x, _| shift_a1(p, x, 2, Z64(1 << 63))).iter().all(Result::is_ok)
        })
        .count();
    eprintln!("a 2^63 error passed the Z_2^64 check {passed_z64} times in 16");
    assert!(passed_z64 >= 4, "only {passed_z64} of 16 passed in Z_2^64");
    for seed in 20..36 {
        let res = run::<Z128>(seed, 64, |p, x, _| shift_a1(p, x, 2, Z128(1 << 63)));
        assert!(all_abort(&res), "seed {seed}: {res:?}");
    }
}
