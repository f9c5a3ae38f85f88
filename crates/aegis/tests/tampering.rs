//! Tampering at gate level: a corrupted server adds an error to one message it sends inside
//! the sign-bit extraction (P0's Γ, the m′/m″ it sends P1 and P2, the opened values), a ReLU,
//! a row maximum or a product, or inside the batch verification and the opening that follow.
//! Every honest server must stop or output the honest value, and every alteration must be
//! caught. Up to [`PER_SERVER`] frames of each server are swept from the gate's start to the
//! output's opening; each gets `+2^b` on one byte (one element of the message).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_aegis::{Aegis, Masked};
use veil_mpc::harness::SimConfig;
use veil_mpc::{Ctx, Result};

#[derive(Debug, Clone, Copy)]
enum Gate {
    Sign,
    Relu,
    Max,
    Mul,
}

const PER_SERVER: usize = 10;

fn values() -> Vec<u64> {
    [0u64, 1, u64::MAX, 1 << 63, (1 << 63) - 1, 12_345, 0xdead_beef_0000, (-70_000i64) as u64].to_vec()
}

fn job(ctx: &mut Ctx, gate: Gate) -> Result<(Vec<u64>, usize, usize)> {
    let mut a = Aegis::new(64)?;
    let x = values();
    let xs = a.share_input(ctx, 0, (ctx.party() == 0).then_some(&x[..]), x.len())?;
    let start = ctx.stats().total().messages_sent as usize;
    let y: Masked = match gate {
        Gate::Sign => a.sign(ctx, &xs)?,
        Gate::Relu => a.relu(ctx, &xs)?,
        Gate::Max => a.max_rows(ctx, &xs, 2, 4)?,
        Gate::Mul => a.mul(ctx, &xs, &xs)?,
    };
    a.check(ctx)?;
    let out = a.reveal_all(ctx, &y)?;
    Ok((out, start, ctx.stats().total().messages_sent as usize))
}

fn sweep(gate: Gate) {
    let cfg = SimConfig { seed: 4, timeout: std::time::Duration::from_secs(60) };
    let found = veil_conformance::tamper::sweep(3, cfg, PER_SERVER, |ctx| job(ctx, gate))
        .unwrap_or_else(|e| panic!("{gate:?}: {e}"));
    eprintln!("{gate:?}: {found:?}");
    assert!(found.unnoticed.is_empty(), "{gate:?}: alterations nobody noticed: {:?}", found.unnoticed);
    assert!(found.detected > 0);
}

#[test]
fn the_sign_bit_extraction_aborts_on_every_altered_message() {
    sweep(Gate::Sign);
}

#[test]
fn relu_and_max_abort_on_every_altered_message() {
    sweep(Gate::Relu);
    sweep(Gate::Max);
}

#[test]
fn a_product_and_its_batch_check_abort_on_every_altered_message() {
    sweep(Gate::Mul);
}
