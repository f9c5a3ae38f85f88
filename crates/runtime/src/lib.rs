//! Veil's runtime: the jobs that parties run, and their reports, shared by the CLI and Python.
//!
//! - [`families`]: the family registry, the one place that knows every protocol family;
//! - [`inference`]: private inference of a Hugging Face transformer (`mosformer`), the session
//!   of three servers, a data owner and a model owner that every model job uses;
//! - [`classify`]: private classification with an ONNX CNN (`aegis` or `mosformer`);
//! - [`plain`]: the float and fixed-point executors in the clear, for debugging numerics;
//! - [`stored`]: the servers' offline material on disk, made by one session and used once by
//!   a later one;
//! - [`memory`]: the process's peak memory, for reports (the benchmarks live in `veil-bench`);
//! - the demo product (this module): party 0's secret vector times party 1's, elementwise, in
//!   fixed point (Z_2^64, 16 fractional bits; the product carries 32 fractional bits and is
//!   decoded as such, so one multiplication needs no truncation), with the n-party additive
//!   protocol and Beaver triples from the **insecure** test dealer, revealed to one output
//!   party only.

pub mod ahead;
pub mod classify;
pub mod families;
pub mod inference;
pub mod ledger;
pub mod memory;
pub mod plain;
pub mod stored;

pub use veil_mpc::mode::{Mode, Rings, Security};
pub use veil_mpc::roles::{Placement, Topology};

use serde::{Deserialize, Serialize};
use veil_additive::{Additive, InsecureDealer};
use veil_mpc::harness::{simulate, simulate_tcp};
use veil_mpc::traits::{Multiply, Sharing};
use veil_mpc::{Ctx, MpcError};
use veil_net::CommStats;
use veil_ring::{FixedPoint, Z64};
use veil_tensor::Tensor;

/// Fractional bits of the demo's inputs.
pub const FRAC_BITS: u32 = 16;

/// Inputs must be below this in magnitude, so that a product (with 32 fractional bits) stays
/// below 2^30 and decodes correctly from Z_2^64.
pub const MAX_INPUT: f64 = 32768.0;

/// Counters of one phase at one party.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseReport {
    /// Phase label (`setup`, `online`).
    pub phase: String,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Payload bytes received.
    pub bytes_received: u64,
    /// Messages sent.
    pub messages_sent: u64,
    /// Latency rounds.
    pub rounds: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// One party's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartyReport {
    /// The party's id.
    pub party: usize,
    /// The revealed result, at the output party only.
    pub output: Option<Vec<f64>>,
    /// Per-phase counters.
    pub phases: Vec<PhaseReport>,
}

/// Per-phase reports from a party's counters and phase timings.
pub fn phases(stats: &CommStats, seconds: &[(&str, f64)]) -> Vec<PhaseReport> {
    seconds
        .iter()
        .map(|&(name, secs)| {
            let p = stats.get(name);
            PhaseReport {
                phase: name.to_string(),
                bytes_sent: p.bytes_sent,
                bytes_received: p.bytes_received,
                messages_sent: p.messages_sent,
                rounds: p.rounds,
                seconds: secs,
            }
        })
        .collect()
}

/// The demo job at one party: share, multiply, reveal to `output`.
/// Party 0 passes `x`, party 1 passes `y`, the others `None`; all pass the common `length`.
pub fn demo_mul(
    ctx: &mut Ctx,
    input: Option<&[f64]>,
    length: usize,
    output: usize,
) -> Result<Option<Vec<f64>>, MpcError> {
    let fp = FixedPoint { frac_bits: FRAC_BITS };
    let mut proto = Additive::new(InsecureDealer::new());
    let shape = [length];
    let mine = match input {
        Some(v) if v.len() != length => {
            return Err(MpcError::Invalid(format!("input of {} values, the job declares {length}", v.len())));
        }
        Some(v) => {
            if let Some(bad) = v.iter().find(|x| !x.is_finite() || x.abs() >= MAX_INPUT) {
                return Err(MpcError::Invalid(format!(
                    "input {bad} is out of range: demo inputs must lie in (-{MAX_INPUT}, {MAX_INPUT}) so that products fit the ring"
                )));
            }
            Some(Tensor::new(shape.to_vec(), fp.encode_slice::<Z64>(v)?)?)
        }
        None => None,
    };
    let me = ctx.party();
    let x = proto.share_input(ctx, 0, if me == 0 { mine.as_ref() } else { None }, &shape)?;
    let y = proto.share_input(ctx, 1, if me == 1 { mine.as_ref() } else { None }, &shape)?;
    let z = proto.mul(ctx, &x, &y)?;
    let product = FixedPoint { frac_bits: 2 * FRAC_BITS };
    Ok(proto.reveal_to(ctx, &z, output)?.map(|t| product.decode_slice(t.data())))
}

/// How the simulated parties are linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// In-memory channels.
    Memory,
    /// TCP + mutual TLS on 127.0.0.1.
    Tls,
}

/// Runs the demo with every party on a thread of this process; reports in party order.
pub fn simulate_demo(
    x: &[f64],
    y: &[f64],
    parties: usize,
    output: usize,
    seed: u64,
    link: Link,
) -> Result<Vec<PartyReport>, MpcError> {
    if parties < 2 || output >= parties {
        return Err(MpcError::Invalid(format!("{parties} parties with output party {output}")));
    }
    if x.len() != y.len() {
        return Err(MpcError::Invalid(format!("x has {} values, y has {}", x.len(), y.len())));
    }
    let job = |ctx: &mut Ctx| {
        let t = std::time::Instant::now();
        ctx.set_phase("online");
        let input = match ctx.party() {
            0 => Some(x),
            1 => Some(y),
            _ => None,
        };
        let out = demo_mul(ctx, input, x.len(), output)?;
        let secs = t.elapsed().as_secs_f64();
        Ok(PartyReport {
            party: ctx.party(),
            output: out,
            phases: phases(ctx.stats(), &[("setup", 0.0), ("online", secs)]),
        })
    };
    let results = match link {
        Link::Memory => simulate(parties, seed, job),
        Link::Tls => simulate_tcp(parties, seed, job),
    };
    results.into_iter().collect()
}

/// A model-layer error as the session's error (a protocol failure keeps its kind).
pub fn nn_error(e: veil_nn::NnError) -> veil_mpc::MpcError {
    match e {
        veil_nn::NnError::Mpc(m) => m,
        other => veil_mpc::MpcError::Invalid(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_product_is_close_to_plaintext() {
        let x = [1.5, -2.25, 3.0, 32767.0];
        let y = [2.0, 4.0, -1.5, -0.001];
        for link in [Link::Memory, Link::Tls] {
            let reports = simulate_demo(&x, &y, 3, 2, 5, link).unwrap();
            assert!(reports[0].output.is_none() && reports[1].output.is_none());
            let out = reports[2].output.as_ref().unwrap();
            for k in 0..4 {
                // Each input is within 2^-17 of its encoding, so the product error is
                // at most (|x| + |y|) 2^-17 + 2^-34.
                let bound = (x[k].abs() + y[k].abs()) * 2f64.powi(-17) + 1e-9;
                assert!((out[k] - x[k] * y[k]).abs() <= bound, "{} vs {}", out[k], x[k] * y[k]);
            }
        }
    }

    #[test]
    fn out_of_range_input_is_an_error() {
        for bad in [1e15, 32768.0, f64::NAN, f64::INFINITY] {
            let err = simulate_demo(&[bad], &[1.0], 3, 0, 1, Link::Memory).unwrap_err();
            assert!(err.to_string().contains("out of range"), "{err}");
        }
    }
}
