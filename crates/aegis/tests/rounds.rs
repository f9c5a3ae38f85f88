//! The aegis verification's rounds across the parties (`max(after) − max(before)` of their
//! logical times): what the halvings cost (two rounds per pair of halvings), that the rounds do not grow with the batch, and that
//! the sign checks run beside the reductions; each with the abort its tampering must cause.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_aegis::{Aegis, Pairing};
use veil_mpc::Result;
use veil_mpc::harness::simulate;

mod common;
use common::{aborted, random_values};

#[test]
fn a_reduction_share_changed_after_its_commitment_aborts_and_two_halvings_cost_two_rounds() {
    // 8192 products: three reductions (8192 → 1024) after the coefficients' challenge (2
    // rounds): the first two in one pair of challenges (2 rounds), the third alone (2), whose
    // challenge also carries the final check's first half; then the final check's exchange
    // and its opening (2). P1 and P2's comparison of their joint digests (1) runs beside the
    // reductions. Rounds across parties: `max(after) − max(before)`.
    let x: Vec<u64> = random_values(6, 8192, 64).iter().map(|v| (*v as i64 >> 24) as u64).collect();
    let run = |rushing: Option<usize>| {
        simulate(3, 23, |ctx| {
            let mut a = Aegis::new(64)?.with_pairing(Pairing::Always);
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            a.mul(ctx, &xs, &xs)?;
            if rushing == Some(ctx.party()) {
                a.tamper_after_commit();
            }
            let before = ctx.stats().time();
            a.check(ctx)?;
            Ok((before, ctx.stats().time()))
        })
    };
    let honest = run(None);
    let spans: Vec<(u64, u64)> = honest.into_iter().map(Result::unwrap).collect();
    assert_eq!(veil_mpc::cost::rounds_across(&spans), 2 + 2 * 2 + 2, "{spans:?}");
    for prover in [1, 2] {
        let r = run(Some(prover));
        let other = 3 - prover;
        let msg = r[other].as_ref().expect_err("the other prover aborts").to_string();
        assert!(msg.contains(&format!("P{prover}'s share differs from its commitment")), "{msg}");
    }
}

/// With `R` halvings at most, the verification's rounds are the same for a batch 8 times larger
/// (the final check grows instead), and a wrong product in the larger batch still aborts.
#[test]
fn the_verification_rounds_do_not_grow_with_the_batch() {
    let run = |n: usize, tamper: bool| {
        let x: Vec<u64> = random_values(8, n, 64).iter().map(|v| (*v as i64 >> 24) as u64).collect();
        simulate(3, 29, move |ctx| {
            let mut a = Aegis::new(64)?.with_reductions(2).with_pairing(Pairing::Always);
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            a.mul(ctx, &xs, &xs)?;
            if tamper && ctx.party() == 1 {
                a.tamper_recorded(0, |_, _, z| z.m[n - 3] = z.m[n - 3].wrapping_add(1 << 63));
            }
            let before = ctx.stats().time();
            a.check(ctx)?;
            Ok((before, ctx.stats().time()))
        })
    };
    let rounds = |n: usize| -> u64 {
        let spans: Vec<(u64, u64)> = run(n, false).into_iter().map(Result::unwrap).collect();
        veil_mpc::cost::rounds_across(&spans)
    };
    let (small, large) = (rounds(8192), rounds(8 * 8192));
    assert_eq!(small, large, "rounds at 8192 and 65536 products with R = 2");
    assert_eq!(small, 2 + 2 + 2, "two halvings in one pair of challenges, with the final check's first half");
    let bad: Vec<Result<()>> = run(8 * 8192, true).into_iter().map(|r| r.map(|_| ())).collect();
    assert!(aborted(&bad), "{bad:?}");
}

/// The sign checks run beside the products' reductions: with `R = 4` halvings a ReLU batch's
/// reductions deal their last pair of halvings, with the final check's first half, once the
/// sign lane is over (the coefficients' challenge, 2, and the first pair, 2, take less than the
/// sign checks' 4 rounds and the joint digests' 1), so the verification takes the sign lane's
/// 5 rounds, the last pair's challenge (2) and the final check's second half (2), not the
/// reductions' rounds on top of the sign lane's; a wrong sign bit still aborts.
#[test]
fn the_sign_checks_add_no_rounds_to_the_verification() {
    let x: Vec<u64> = random_values(12, 16384, 64).iter().map(|v| (*v as i64 >> 30) as u64).collect();
    let run = |tamper: bool| {
        simulate(3, 43, |ctx| {
            let mut a = Aegis::new(64)?.with_reductions(4).with_pairing(Pairing::Always);
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            a.relu(ctx, &xs)?;
            if tamper && ctx.party() != 0 {
                a.tamper_signs(|z| z.m[5] = z.m[5].wrapping_add(1));
            }
            let before = ctx.stats().time();
            a.check(ctx)?;
            Ok((before, ctx.stats().time()))
        })
    };
    let spans: Vec<(u64, u64)> = run(false).into_iter().map(Result::unwrap).collect();
    assert_eq!(veil_mpc::cost::rounds_across(&spans), (4 + 1) + 2 + 2, "{spans:?}");
    let bad: Vec<Result<()>> = run(true).into_iter().map(|r| r.map(|_| ())).collect();
    assert!(aborted(&bad), "{bad:?}");
}

/// Without the pairs, each halving waits for the previous one's challenge, and the final check's
/// first half takes a challenge of its own: two rounds a halving (`2R + 6`), and a wrong product
/// still aborts.
#[test]
fn unpaired_halvings_cost_two_rounds_each() {
    let x: Vec<u64> = random_values(9, 8192, 64).iter().map(|v| (*v as i64 >> 24) as u64).collect();
    let run = |tamper: bool| {
        simulate(3, 31, |ctx| {
            let mut a = Aegis::new(64)?.with_pairing(Pairing::Never);
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            a.mul(ctx, &xs, &xs)?;
            if tamper && ctx.party() == 2 {
                a.tamper_recorded(0, |_, _, z| z.m[17] = z.m[17].wrapping_add(1));
            }
            let before = ctx.stats().time();
            a.check(ctx)?;
            Ok((before, ctx.stats().time()))
        })
    };
    let spans: Vec<(u64, u64)> = run(false).into_iter().map(Result::unwrap).collect();
    assert_eq!(veil_mpc::cost::rounds_across(&spans), 2 + 3 * 2 + 4, "{spans:?}");
    let bad: Vec<Result<()>> = run(true).into_iter().map(|r| r.map(|_| ())).collect();
    assert!(aborted(&bad), "{bad:?}");
}

/// By default ([`Pairing::WhereCheap`]) a short claim's final check deals its first half with
/// the last halving: 8192 products take a pair of halvings and one alone (4 rounds after the
/// coefficients' 2), whose challenge carries the first half, then the final check's exchange
/// and opening (2); a wrong product still aborts.
#[test]
fn by_default_a_short_claim_s_final_check_goes_with_its_last_halving() {
    let x: Vec<u64> = random_values(10, 8192, 64).iter().map(|v| (*v as i64 >> 24) as u64).collect();
    let run = |tamper: bool| {
        simulate(3, 47, |ctx| {
            let mut a = Aegis::new(64)?;
            let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
            a.mul(ctx, &xs, &xs)?;
            if tamper && ctx.party() == 1 {
                a.tamper_recorded(0, |_, _, z| z.m[4000] = z.m[4000].wrapping_add(1 << 63));
            }
            let before = ctx.stats().time();
            a.check(ctx)?;
            Ok((before, ctx.stats().time()))
        })
    };
    let spans: Vec<(u64, u64)> = run(false).into_iter().map(Result::unwrap).collect();
    assert_eq!(veil_mpc::cost::rounds_across(&spans), 2 + 2 + 2 + 2, "{spans:?}");
    let bad: Vec<Result<()>> = run(true).into_iter().map(|r| r.map(|_| ())).collect();
    assert!(aborted(&bad), "{bad:?}");
}
