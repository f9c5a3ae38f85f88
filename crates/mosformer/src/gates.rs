//! An instance's gate state: the MAC key and `⟨1⟩`, the pending MACs, the gate material made
//! ahead ([`GateKeys`], per request of the plan) and the precision plan's constants, apart from
//! the operations that use them ([`crate::ops`]) so that the family type ([`crate::family`])
//! needs no operation module.

use std::collections::VecDeque;

use veil_mpc::mode::Security;
use veil_mpc::prep::Gate;
use veil_mpc::{Ctx, Result};
use veil_ring::{Z16, Z32, Z64, Z128};

use crate::drelu::DreluKeys;
use crate::gelu::{self, GeluKeys};
use crate::layernorm::{self, LayerNormKeys};
use crate::mac::MacBatch;
use crate::offline::in_offline_phase;
use crate::rss::Rss;
use crate::shape::Shape;
use crate::softmax::{self, SoftmaxKeys};

/// Fractional bits of the shares the traits take and return.
pub const FRAC_BITS: u32 = 16;
/// The ring of the gates' outputs and MACs: the 64-bit values plus `s = 64` bits.
pub type MacRing = Z128;
/// Bits of MAC challenge per check (the MAC ring's margin over the 64-bit values).
pub(crate) const MAC_S: u32 = 64;
/// Fractional bits of softmax in the mixed-ring plan (its reciprocal compares in Z_2^32, Max
/// and Exp in Z_2^16).
const F_SOFTMAX_MIXED: u32 = 12;

pub use veil_mpc::mode::Rings;

/// Fractional bits of softmax and of Rsqrt in a ring plan: 12 in `Z_2^32` with modulus
/// conversion, 16 in `Z_2^64` without.
pub fn softmax_bits(rings: Rings) -> u32 {
    match rings {
        Rings::Mixed => F_SOFTMAX_MIXED,
        Rings::Z64 => FRAC_BITS,
    }
}

/// One gate's material in the mixed rings (conditions in `R16` / `R32`) or all in Z_2^64.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum GateKeys {
    Relu(Box<DreluKeys<Z16, MacRing>>),
    Gelu(Box<GeluKeys<Z16, MacRing>>),
    Softmax(Box<SoftmaxKeys<Z32, Z16, MacRing>>),
    LayerNorm(Box<LayerNormKeys<Z32, MacRing>>),
    Relu64(Box<DreluKeys<Z64, MacRing>>),
    Gelu64(Box<GeluKeys<Z64, MacRing>>),
    Softmax64(Box<SoftmaxKeys<Z64, Z64, MacRing>>),
    LayerNorm64(Box<LayerNormKeys<Z64, MacRing>>),
}

impl Shape for GateKeys {
    fn shape(&self, out: &mut Vec<usize>) {
        let kind = match self {
            GateKeys::Relu(k) => (k.shape(out), 0).1,
            GateKeys::Gelu(k) => (k.shape(out), 1).1,
            GateKeys::Softmax(k) => (k.shape(out), 2).1,
            GateKeys::LayerNorm(k) => (k.shape(out), 3).1,
            GateKeys::Relu64(k) => (k.shape(out), 4).1,
            GateKeys::Gelu64(k) => (k.shape(out), 5).1,
            GateKeys::Softmax64(k) => (k.shape(out), 6).1,
            GateKeys::LayerNorm64(k) => (k.shape(out), 7).1,
        };
        // The kind last: material of another kind never has the same shape.
        out.push(kind);
    }
}

/// The MAC key, `⟨1⟩`, the pending MACs and the gate material of an instance.
#[derive(Debug)]
pub struct GateState {
    /// Most elements one gate call handles; larger inputs go through in chunks, each with its
    /// own material (what bounds memory when material is made on demand).
    pub(crate) chunk: usize,
    pub(crate) rings: Rings,
    pub(crate) keys: Option<(Rss<MacRing>, Rss<MacRing>)>,
    pub(crate) batch: MacBatch<MacRing>,
    pub(crate) ready: VecDeque<(Gate, GateKeys)>,
    pub(crate) plan: Vec<Gate>,
    /// Gate calls whose material was not prepared ahead.
    pub(crate) made_on_demand: u64,
}

impl GateState {
    pub(crate) fn new(security: Security) -> Self {
        GateState {
            chunk: usize::MAX,
            rings: Rings::Mixed,
            keys: None,
            batch: MacBatch::for_security(security),
            ready: VecDeque::new(),
            plan: Vec::new(),
            made_on_demand: 0,
        }
    }
}

/// Zero material of a request's shapes: the layout real material of the request must have
/// (what stored material is checked against).
pub(crate) fn placeholder(req: &Gate, rings: Rings) -> GateKeys {
    let f = softmax_bits(rings);
    match (req.clone(), rings) {
        (Gate::Relu { n }, Rings::Mixed) => GateKeys::Relu(Box::new(DreluKeys::placeholder(n))),
        (Gate::Gelu { n }, Rings::Mixed) => GateKeys::Gelu(Box::new(GeluKeys::placeholder(n))),
        (Gate::Softmax { rows, k }, Rings::Mixed) => {
            GateKeys::Softmax(Box::new(SoftmaxKeys::placeholder(rows, k, f)))
        }
        (Gate::LayerNorm { rows, k }, Rings::Mixed) => {
            GateKeys::LayerNorm(Box::new(LayerNormKeys::placeholder(rows, k, f)))
        }
        (Gate::Relu { n }, Rings::Z64) => GateKeys::Relu64(Box::new(DreluKeys::placeholder(n))),
        (Gate::Gelu { n }, Rings::Z64) => GateKeys::Gelu64(Box::new(GeluKeys::placeholder(n))),
        (Gate::Softmax { rows, k }, Rings::Z64) => {
            GateKeys::Softmax64(Box::new(SoftmaxKeys::placeholder(rows, k, f)))
        }
        (Gate::LayerNorm { rows, k }, Rings::Z64) => {
            GateKeys::LayerNorm64(Box::new(LayerNormKeys::placeholder(rows, k, f)))
        }
    }
}

pub(crate) fn make(ctx: &mut Ctx, req: &Gate, security: Security, rings: Rings) -> Result<GateKeys> {
    let f = softmax_bits(rings);
    in_offline_phase(ctx, |ctx| {
        Ok(match (req.clone(), rings) {
            (Gate::Relu { n }, Rings::Mixed) => {
                GateKeys::Relu(Box::new(crate::drelu::setup_with(ctx, n, security)?))
            }
            (Gate::Gelu { n }, Rings::Mixed) => GateKeys::Gelu(Box::new(gelu::setup_with(ctx, n, security)?)),
            (Gate::Softmax { rows, k }, Rings::Mixed) => {
                GateKeys::Softmax(Box::new(softmax::setup_with(ctx, rows, k, f, security)?))
            }
            (Gate::LayerNorm { rows, k }, Rings::Mixed) => {
                GateKeys::LayerNorm(Box::new(layernorm::setup_with(ctx, rows, k, f, security)?))
            }
            (Gate::Relu { n }, Rings::Z64) => {
                GateKeys::Relu64(Box::new(crate::drelu::setup_with(ctx, n, security)?))
            }
            (Gate::Gelu { n }, Rings::Z64) => GateKeys::Gelu64(Box::new(gelu::setup_with(ctx, n, security)?)),
            (Gate::Softmax { rows, k }, Rings::Z64) => {
                GateKeys::Softmax64(Box::new(softmax::setup_with(ctx, rows, k, f, security)?))
            }
            (Gate::LayerNorm { rows, k }, Rings::Z64) => {
                GateKeys::LayerNorm64(Box::new(layernorm::setup_with(ctx, rows, k, f, security)?))
            }
        })
    })
}
