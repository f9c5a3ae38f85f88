//! Tampering at gate level: a corrupted server adds an error to one message it sends inside
//! a gate — GELU, Softmax (its Exp and Inv), LayerNorm (its Rsqrt), Max, ReLU (the DReLU's
//! opened δ of UCMP and its B2A bit), with the upcasts and modulus conversions of the mixed
//! rings — or inside the MAC check and the opening that follow. Every honest server must stop
//! or output the honest value, and the alterations must be caught. The frames swept are every
//! frame a server sends from the gate's start to the output's opening (at a stride, so that
//! each gate costs a few dozen runs); the error is an additive one on the wire: `+2^b` on one
//! byte, i.e. on one element of the message (or one packed bit).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::offline::Offline;
use veil_mosformer::{Mosformer, Rings, Security};
use veil_mpc::harness::SimConfig;
use veil_mpc::traits::{NonLinear, Sharing, TransformerOps};
use veil_mpc::{Ctx, Result};
use veil_ring::{Ring, Z64};
use veil_tensor::Tensor;

#[derive(Debug, Clone, Copy)]
enum Gate {
    Gelu,
    Softmax,
    LayerNorm,
    Max,
    Relu,
}

const ROWS: usize = 2;
const K: usize = 4;

/// Inputs at 16 fractional bits within ±4 (the gates' working range).
fn input(seed: u64) -> Tensor<Z64> {
    let v = (0..ROWS * K).map(|i| {
        let x = ((i as i64 * 37 + seed as i64 * 11) % 512 - 256) << 10;
        Z64::from_i64(x)
    });
    Tensor::new(vec![ROWS, K], v.collect()).unwrap()
}

/// One gate among three servers; returns the opened output and the frames sent before the
/// gate started and in all.
fn job(ctx: &mut Ctx, gate: Gate, rings: Rings) -> Result<(Vec<u64>, usize, usize)> {
    let mut m = Mosformer::new(Security::Malicious, Offline::new()).with_rings(rings);
    let x = input(1);
    let xs = m.share_input(ctx, 0, (ctx.party() == 0).then_some(&x), &[ROWS, K])?;
    let ones = Tensor::new(vec![K], vec![Z64::from_i64(1 << 16); K])?;
    let zeros = Tensor::new(vec![K], vec![Z64::ZERO; K])?;
    let gamma = m.share_input(ctx, 1, (ctx.party() == 1).then_some(&ones), &[K])?;
    let beta = m.share_input(ctx, 2, (ctx.party() == 2).then_some(&zeros), &[K])?;
    let start = ctx.stats().total().messages_sent as usize;
    let y = match gate {
        Gate::Gelu => m.gelu(ctx, &xs)?,
        Gate::Softmax => m.softmax(ctx, &xs, ROWS, K, None)?,
        Gate::LayerNorm => m.layernorm(ctx, &xs, &gamma, &beta, ROWS, K)?,
        Gate::Max => m.max_rows(ctx, &xs, ROWS, K)?,
        Gate::Relu => m.relu(ctx, &xs)?,
    };
    m.check(ctx)?;
    let out = m.reveal_all(ctx, &y)?;
    let total = ctx.stats().total().messages_sent as usize;
    Ok((out.data().iter().map(|v| v.0).collect(), start, total))
}

/// Frames swept per server and gate.
const PER_SERVER: usize = 8;

fn sweep(gate: Gate, rings: Rings) {
    let cfg = SimConfig { seed: 9, timeout: std::time::Duration::from_secs(60) };
    let found = veil_conformance::tamper::sweep(3, cfg, PER_SERVER, |ctx| job(ctx, gate, rings))
        .unwrap_or_else(|e| panic!("{gate:?} ({rings:?}): {e}"));
    eprintln!("{gate:?} ({rings:?}): {found:?}");
    assert!(
        found.unnoticed.is_empty(),
        "{gate:?} ({rings:?}): alterations nobody noticed: {:?}",
        found.unnoticed
    );
    assert!(found.detected > 0);
}

#[test]
fn gelu_aborts_on_every_altered_message() {
    sweep(Gate::Gelu, Rings::Mixed);
    sweep(Gate::Gelu, Rings::Z64);
}

#[test]
fn softmax_with_its_exp_and_inv_aborts_on_every_altered_message() {
    sweep(Gate::Softmax, Rings::Mixed);
}

#[test]
fn layernorm_with_its_rsqrt_aborts_on_every_altered_message() {
    sweep(Gate::LayerNorm, Rings::Mixed);
}

#[test]
fn max_and_relu_abort_on_every_altered_message() {
    sweep(Gate::Max, Rings::Mixed);
    sweep(Gate::Relu, Rings::Mixed);
    sweep(Gate::Relu, Rings::Z64);
}
