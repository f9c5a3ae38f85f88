//! The family's fixed-point and non-linear operations behind `veil-mpc`'s [`FixedPoint`],
//! [`NonLinear`] and [`TransformerOps`] traits, so that a model runtime drives Mosformer without its internals.
//!
//! **Precision plan** (paper §6, notes §14). Shares the caller sees live in Z_2^64 with 16
//! fractional bits. Each gate takes its input to its own precision and back:
//! - products and matrix products: verified, then truncated by `2^16`
//!   ([`crate::verified`], [`crate::trunc`]);
//! - ReLU: the condition in Z_2^16 (local downcast by 10 bits), the value kept in Z_2^64;
//!   inputs within `2^-5` above 0 may read as negative and give 0 (error below 0.032); valid
//!   for `|x| < 512` (the paper's range for Z_2^16, its Table 10), as is GELU;
//! - GELU: truncation to 6 fractional bits, Π_GELU (conditions in Z_2^16), result scaled back;
//! - Softmax: truncation to 12 fractional bits, Π_Softmax (conditions in Z_2^32), scaled back;
//! - LayerNorm: in Z_2^64, Rsqrt's conditions in Z_2^32.
//!
//! Gate outputs carry MACs (in Z_2^64) checked in one deferred batch by [`NonLinear::check`];
//! the MAC key and the random `⟨1⟩` are made on first use.
//!
//! **Offline material.** A gate's FSS material is made when the gate runs unless it was made
//! ahead: the instance records the gates it ran ([`Mosformer::gate_plan`]), and
//! [`Mosformer::prepare`] makes the material of such a plan ahead (counted under the
//! `"offline"` phase, like material made on demand). Triples and truncation pairs come from
//! the instance's source (for [`crate::offline::Offline`], planned the same way).

use std::collections::VecDeque;

use veil_mpc::traits::{FixedPoint, NonLinear, TransformerOps};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Z16, Z32, Z64};

use crate::convert::downcast;
use crate::drelu::{DreluKeys, select};
use crate::family::{Mosformer, Security};
use crate::gelu::{self, GeluKeys};
use crate::keys::{mac_key, random_one};
use crate::layernorm::{self, LayerNormKeys};
use crate::mac::MacBatch;
use crate::mul::{matmul_semi_honest, mul_semi_honest};
use crate::offline::in_offline_phase;
use crate::rss::Rss;
use crate::softmax::{self, SoftmaxKeys};
use crate::stored::Shape;
use crate::triples::TripleSource;
use crate::trunc::{TruncPairSource, trunc};
use crate::verified;

/// Fractional bits of the shares the traits take and return.
pub const FRAC_BITS: u32 = 16;
/// Bits of MAC challenge per check (the smallest margin among the gates' working rings).
const MAC_S: u32 = 32;

/// One gate's material, as a plan lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum GateRequest {
    /// `n` ReLUs.
    Relu {
        /// Elements.
        n: usize,
    },
    /// `n` GELUs.
    Gelu {
        /// Elements.
        n: usize,
    },
    /// A `[rows, k]` softmax.
    Softmax {
        /// Rows.
        rows: usize,
        /// Row length.
        k: usize,
    },
    /// A `[rows, k]` LayerNorm.
    LayerNorm {
        /// Rows.
        rows: usize,
        /// Row length.
        k: usize,
    },
}

impl GateRequest {
    /// Elements the gate computes (ReLU and GELU inputs, softmax entries, LayerNorm rows): what
    /// its material grows with (a few KB per element and server, mostly lookup tables'
    /// one-hot share vectors).
    pub fn elements(&self) -> usize {
        match *self {
            GateRequest::Relu { n } | GateRequest::Gelu { n } => n,
            GateRequest::Softmax { rows, k } => rows * k,
            GateRequest::LayerNorm { rows, .. } => rows,
        }
    }
}

/// The error a planner returns when its plan grows past its limit
/// ([`Mosformer::planner_within`]); it stops the dry run early.
pub const PLAN_LIMIT_EXCEEDED: &str = "the plan exceeds the planner's limit of gate elements";

#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) enum GateKeys {
    Relu(Box<DreluKeys<Z16, Z64>>),
    Gelu(Box<GeluKeys<Z16, Z64>>),
    Softmax(Box<SoftmaxKeys<Z32, Z64>>),
    LayerNorm(Box<LayerNormKeys>),
}

impl Shape for GateKeys {
    fn shape(&self, out: &mut Vec<usize>) {
        match self {
            GateKeys::Relu(k) => k.shape(out),
            GateKeys::Gelu(k) => k.shape(out),
            GateKeys::Softmax(k) => k.shape(out),
            GateKeys::LayerNorm(k) => k.shape(out),
        }
        // The kind last: material of another kind never has the same shape.
        out.push(match self {
            GateKeys::Relu(_) => 0,
            GateKeys::Gelu(_) => 1,
            GateKeys::Softmax(_) => 2,
            GateKeys::LayerNorm(_) => 3,
        });
    }
}

/// The MAC key, `⟨1⟩`, the pending MACs and the gate material of an instance.
#[derive(Debug)]
pub struct GateState {
    /// Most elements one gate call handles; larger inputs go through in chunks, each with its
    /// own material (what bounds memory when material is made on demand).
    chunk: usize,
    pub(crate) keys: Option<(Rss<Z64>, Rss<Z64>)>,
    batch: MacBatch<Z64>,
    pub(crate) ready: VecDeque<(GateRequest, GateKeys)>,
    plan: Vec<GateRequest>,
    /// A planner's gates ([`Mosformer::planner`]): zero material, no MAC check.
    pub(crate) planning: bool,
    /// A planner stops with [`PLAN_LIMIT_EXCEEDED`] past this many gate elements.
    pub(crate) plan_limit: usize,
    /// Gate calls whose material was not prepared ahead.
    pub(crate) made_on_demand: u64,
}

impl GateState {
    pub(crate) fn new(security: Security) -> Self {
        GateState {
            chunk: usize::MAX,
            keys: None,
            batch: MacBatch::for_security(security),
            ready: VecDeque::new(),
            plan: Vec::new(),
            planning: false,
            plan_limit: usize::MAX,
            made_on_demand: 0,
        }
    }
}

/// Zero material of a request's shapes (for a planner's dry run).
pub(crate) fn placeholder(req: &GateRequest) -> GateKeys {
    match *req {
        GateRequest::Relu { n } => GateKeys::Relu(Box::new(DreluKeys::placeholder(n))),
        GateRequest::Gelu { n } => GateKeys::Gelu(Box::new(GeluKeys::placeholder(n))),
        GateRequest::Softmax { rows, k } => GateKeys::Softmax(Box::new(SoftmaxKeys::placeholder(rows, k))),
        GateRequest::LayerNorm { rows, k } => {
            GateKeys::LayerNorm(Box::new(LayerNormKeys::placeholder(rows, k)))
        }
    }
}

fn make(ctx: &mut Ctx, req: &GateRequest, security: Security) -> Result<GateKeys> {
    in_offline_phase(ctx, |ctx| {
        Ok(match *req {
            GateRequest::Relu { n } => GateKeys::Relu(Box::new(crate::drelu::setup_with(ctx, n, security)?)),
            GateRequest::Gelu { n } => GateKeys::Gelu(Box::new(gelu::setup_with(ctx, n, security)?)),
            GateRequest::Softmax { rows, k } => {
                GateKeys::Softmax(Box::new(softmax::setup_with(ctx, rows, k, security)?))
            }
            GateRequest::LayerNorm { rows, k } => {
                GateKeys::LayerNorm(Box::new(layernorm::setup_with(ctx, rows, k, security)?))
            }
        })
    })
}

impl<D> Mosformer<D> {
    /// Caps the elements of one gate call at `elements` (≥ 1): larger inputs are evaluated in
    /// chunks, each with its own material, so that material made on demand never exceeds one
    /// chunk's. Costs rounds (one gate evaluation per chunk).
    pub fn with_chunk(mut self, elements: usize) -> Self {
        self.gates.chunk = elements.max(1);
        self
    }

    /// The gates run so far, in order: the plan of another run of the same model.
    pub fn gate_plan(&self) -> &[GateRequest] {
        &self.gates.plan
    }

    /// Makes the MAC key, `⟨1⟩` and the material of every gate in `plan` ahead of the online
    /// phase (gates then take it in order of request).
    pub fn prepare(&mut self, ctx: &mut Ctx, plan: &[GateRequest]) -> Result<()> {
        self.mac_keys(ctx)?;
        for req in plan {
            let keys = make(ctx, req, self.security)?;
            self.gates.ready.push_back((req.clone(), keys));
        }
        Ok(())
    }

    fn mac_keys(&mut self, ctx: &mut Ctx) -> Result<(Rss<Z64>, Rss<Z64>)> {
        if let Some(k) = &self.gates.keys {
            return Ok(k.clone());
        }
        let k = in_offline_phase(ctx, |ctx| Ok((random_one::<Z64>(ctx)?, mac_key::<Z64>(ctx)?)))?;
        self.gates.keys = Some(k.clone());
        Ok(k)
    }

    fn gate_keys(&mut self, ctx: &mut Ctx, req: GateRequest) -> Result<GateKeys> {
        self.gates.plan.push(req.clone());
        match self.gates.ready.iter().position(|(r, _)| *r == req) {
            Some(i) => self
                .gates
                .ready
                .remove(i)
                .map(|(_, k)| k)
                .ok_or_else(|| MpcError::Invalid("gate material queue".into())),
            None if self.gates.planning => {
                let planned: usize = self.gates.plan.iter().map(GateRequest::elements).sum();
                if planned > self.gates.plan_limit {
                    return Err(MpcError::Invalid(PLAN_LIMIT_EXCEEDED.into()));
                }
                Ok(placeholder(&req))
            }
            None => {
                self.gates.made_on_demand += 1;
                make(ctx, &req, self.security)
            }
        }
    }
}

/// `(start, length)` of consecutive chunks of at most `size` covering `0..n`.
fn chunks(n: usize, size: usize) -> Vec<(usize, usize)> {
    (0..n.div_ceil(size.max(1))).map(|i| (i * size, size.min(n - i * size))).collect()
}

fn flat(x: &Rss<Z64>) -> Result<Rss<Z64>> {
    x.reshape(&[x.len()])
}

impl<D: TripleSource<Z64> + TruncPairSource<Z64>> FixedPoint<Z64> for Mosformer<D> {
    fn frac_bits(&self) -> u32 {
        FRAC_BITS
    }

    fn mul_fixed(&mut self, ctx: &mut Ctx, x: &Rss<Z64>, y: &Rss<Z64>) -> Result<Rss<Z64>> {
        let z = match self.security {
            Security::Malicious => verified::mul(ctx, &mut self.triples, x, y)?,
            Security::SemiHonest => mul_semi_honest(ctx, x, y)?,
        };
        trunc(ctx, &mut self.triples, &z, 1 << FRAC_BITS)
    }

    fn matmul_fixed(&mut self, ctx: &mut Ctx, x: &Rss<Z64>, y: &Rss<Z64>) -> Result<Rss<Z64>> {
        let z = match self.security {
            Security::Malicious => verified::matmul(ctx, &mut self.triples, x, y)?,
            Security::SemiHonest => matmul_semi_honest(ctx, x, y)?,
        };
        trunc(ctx, &mut self.triples, &z, 1 << FRAC_BITS)
    }

    /// All products in the rounds of one: one verified product step, one truncation.
    fn matmul_fixed_many(
        &mut self,
        ctx: &mut Ctx,
        pairs: &[(&Rss<Z64>, &Rss<Z64>)],
    ) -> Result<Vec<Rss<Z64>>> {
        let z = match self.security {
            Security::Malicious => verified::matmul_many(ctx, &mut self.triples, pairs)?,
            Security::SemiHonest => crate::mul::matmul_semi_honest_many(ctx, pairs)?,
        };
        let all =
            trunc(ctx, &mut self.triples, &Rss::concat(&z.iter().collect::<Vec<_>>())?, 1 << FRAC_BITS)?;
        let mut at = 0;
        z.iter()
            .map(|zi| {
                let part = all.range(at, zi.len())?.reshape(zi.shape());
                at += zi.len();
                part
            })
            .collect()
    }

    fn matmul_unscaled(&mut self, ctx: &mut Ctx, x: &Rss<Z64>, y: &Rss<Z64>) -> Result<Rss<Z64>> {
        match self.security {
            Security::Malicious => verified::matmul(ctx, &mut self.triples, x, y),
            Security::SemiHonest => matmul_semi_honest(ctx, x, y),
        }
    }

    fn div_public(&mut self, ctx: &mut Ctx, x: &Rss<Z64>, d: u64) -> Result<Rss<Z64>> {
        trunc(ctx, &mut self.triples, x, d)
    }
}

impl<D: TripleSource<Z64> + TruncPairSource<Z64>> NonLinear<Z64> for Mosformer<D> {
    fn relu(&mut self, ctx: &mut Ctx, x: &Rss<Z64>) -> Result<Rss<Z64>> {
        let (_, alpha) = self.mac_keys(ctx)?;
        let x_flat = flat(x)?;
        let mut out = Vec::new();
        for (lo, n) in chunks(x.len(), self.gates.chunk) {
            let GateKeys::Relu(keys) = self.gate_keys(ctx, GateRequest::Relu { n })? else {
                return Err(MpcError::Invalid("ReLU material expected".into()));
            };
            let part = x_flat.range(lo, n)?;
            let cond: Rss<Z16> = downcast(&part, FRAC_BITS - gelu::F_IN)?;
            out.push(select(ctx, *keys, &cond, &part, &alpha, &mut self.gates.batch)?);
        }
        Rss::concat(&out.iter().collect::<Vec<_>>())?.reshape(x.shape())
    }

    /// A tree of two-way maxima, `max(a, b) = b + ReLU(a − b)`, so its range is ReLU's
    /// (differences below 512 in magnitude): `⌈log2 k⌉` levels of one ReLU each.
    fn max_rows(&mut self, ctx: &mut Ctx, x: &Rss<Z64>, rows: usize, k: usize) -> Result<Rss<Z64>> {
        if x.len() != rows * k || k == 0 {
            return Err(MpcError::Invalid(format!("maximum of {} values as [{rows}, {k}]", x.len())));
        }
        let mut cur = x.reshape(&[rows, k])?;
        while cur.shape()[1] > 1 {
            let width = cur.shape()[1];
            let p = width / 2;
            let (a, b) = (cur.slice(1, 0..p)?, cur.slice(1, p..2 * p)?);
            let best = self.relu(ctx, &a.sub(&b)?)?.add(&b)?;
            cur = if width % 2 == 1 {
                Rss::concat_axis(&[&best, &cur.slice(1, 2 * p..width)?], 1)?
            } else {
                best
            };
        }
        cur.reshape(&[rows])
    }

    fn check(&mut self, ctx: &mut Ctx) -> Result<()> {
        let pending = std::mem::replace(&mut self.gates.batch, MacBatch::for_security(self.security));
        if pending.is_empty() || self.gates.planning {
            return Ok(());
        }
        let (_, alpha) = self.mac_keys(ctx)?;
        pending.check(ctx, &alpha, MAC_S, "mosformer deferred checks")
    }
}

impl<D: TripleSource<Z64> + TruncPairSource<Z64>> TransformerOps<Z64> for Mosformer<D> {
    fn gelu(&mut self, ctx: &mut Ctx, x: &Rss<Z64>) -> Result<Rss<Z64>> {
        let (one, alpha) = self.mac_keys(ctx)?;
        let shift = FRAC_BITS - gelu::F_IN;
        let x6 = trunc(ctx, &mut self.triples, &flat(x)?, 1 << shift)?;
        let mut out = Vec::new();
        for (lo, n) in chunks(x.len(), self.gates.chunk) {
            let GateKeys::Gelu(keys) = self.gate_keys(ctx, GateRequest::Gelu { n })? else {
                return Err(MpcError::Invalid("GELU material expected".into()));
            };
            let part = x6.range(lo, n)?;
            out.push(gelu::gelu::<Z16, Z64>(ctx, *keys, &part, &one, &alpha, &mut self.gates.batch)?);
        }
        let g = Rss::concat(&out.iter().collect::<Vec<_>>())?;
        g.scale(Z64(1 << shift)).reshape(x.shape())
    }

    fn softmax(
        &mut self,
        ctx: &mut Ctx,
        x: &Rss<Z64>,
        rows: usize,
        k: usize,
        mask: Option<&[bool]>,
    ) -> Result<Rss<Z64>> {
        const F: u32 = 12;
        let (one, alpha) = self.mac_keys(ctx)?;
        if x.len() != rows * k || mask.is_some_and(|m| m.len() != rows * k) {
            return Err(MpcError::Invalid(format!("softmax of {} values as [{rows}, {k}]", x.len())));
        }
        let x12 = trunc(ctx, &mut self.triples, &flat(x)?, 1 << (FRAC_BITS - F))?;
        let per = (self.gates.chunk / k.max(1)).max(1);
        let mut out = Vec::new();
        for (row, r) in chunks(rows, per) {
            let GateKeys::Softmax(keys) = self.gate_keys(ctx, GateRequest::Softmax { rows: r, k })? else {
                return Err(MpcError::Invalid("softmax material expected".into()));
            };
            let part = x12.range(row * k, r * k)?;
            let part_mask = mask.map(|m| &m[row * k..(row + r) * k]);
            out.push(softmax::softmax::<Z32, Z64>(
                ctx,
                *keys,
                &mut self.triples,
                &part,
                part_mask,
                F,
                &one,
                &alpha,
                &mut self.gates.batch,
            )?);
        }
        let s = Rss::concat(&out.iter().collect::<Vec<_>>())?;
        s.scale(Z64(1 << (FRAC_BITS - F))).reshape(x.shape())
    }

    fn layernorm(
        &mut self,
        ctx: &mut Ctx,
        x: &Rss<Z64>,
        gamma: &Rss<Z64>,
        beta: &Rss<Z64>,
        rows: usize,
        k: usize,
    ) -> Result<Rss<Z64>> {
        let (one, alpha) = self.mac_keys(ctx)?;
        let GateKeys::LayerNorm(keys) = self.gate_keys(ctx, GateRequest::LayerNorm { rows, k })? else {
            return Err(MpcError::Invalid("LayerNorm material expected".into()));
        };
        let y = layernorm::layernorm(
            ctx,
            *keys,
            &mut self.triples,
            x,
            gamma,
            beta,
            &one,
            &alpha,
            &mut self.gates.batch,
        )?;
        y.reshape(x.shape())
    }
}
