//! The family's fixed-point and non-linear operations behind `veil-mpc`'s [`FixedPoint`],
//! [`NonLinear`] and [`TransformerOps`] traits, so that a model runtime drives Mosformer without its internals.
//!
//! **Precision plan** (paper §6). Shares the caller sees live in Z_2^64 with 16
//! fractional bits, and every gate's values stay in that ring. Products and matrix products are
//! verified, then truncated by `2^16` ([`crate::verified`], [`crate::trunc`]). The gates'
//! comparisons and table indices read a working ring chosen by [`Rings`]:
//!
//! *Mixed* (the paper's modulus conversion, its default):
//! - ReLU: the condition in Z_2^16 (local downcast by 10 bits), the value kept in Z_2^64;
//!   inputs within `2^-5` above 0 may read as negative and give 0 (error below 0.032); valid
//!   for `|x| < 512` (the paper's range for Z_2^16, its Table 10), as is GELU;
//! - GELU: truncation to 6 fractional bits, Π_GELU (conditions in Z_2^16), result scaled back;
//! - Softmax: truncation to 12 fractional bits, Π_Softmax (Max and Exp comparing in Z_2^16,
//!   Max at 6 fractional bits; the reciprocal in Z_2^32), scaled back;
//! - LayerNorm: in Z_2^64, Rsqrt's conditions in Z_2^32 at 12 bits.
//!
//! *Z64* (without modulus conversion, the paper's §7 comparison and Table 13): every condition
//! in Z_2^64 at 16 fractional bits; GELU keeps 16 bits (only its table index is at 6);
//! softmax and Rsqrt run at f = 16 with 2^16-entry reciprocal tables.
//!
//! **MACs.** Gate outputs carry MACs in Z_2^128 ([`MacRing`]): the gates compute in the MAC
//! ring on values lifted from Z_2^64 and their results are reduced back, so the MAC check
//! ([`NonLinear::check`], one deferred batch, `s = 64`) authenticates every bit of the 64-bit
//! values that later layers use. (A MAC ring of Z_2^64 would authenticate them only mod 2^32,
//! and an error in their top bits would pass with a probability far above 2^-s.) The MAC key
//! and the random `⟨1⟩` are made on first use.
//!
//! **Offline material.** A gate's FSS material is made when the gate runs unless it was made
//! ahead: the instance records the gates it ran ([`Mosformer::gate_plan`]), and
//! [`Mosformer::prepare`] makes the material of such a plan ahead (counted under the
//! `"offline"` phase, like material made on demand). Triples and truncation pairs come from
//! the instance's source (for [`crate::offline::Offline`], planned the same way).

use veil_mpc::prep::Gate;
use veil_mpc::traits::{FixedPoint, NonLinear, TransformerOps};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Z16, Z64};

use crate::convert::{downcast, lift, reduce};
use crate::drelu::select;
use crate::family::Mosformer;
use crate::gelu;
use crate::keys::{mac_key, random_one};
use crate::layernorm;
use crate::mac::{MacBatch, Macs};
use crate::mul::{matmul_semi_honest, mul_semi_honest};
use crate::offline::{in_offline_phase, leave_offline_together};
use crate::plan::chunks;
use crate::rss::Rss;
use crate::softmax;
use crate::triples::TripleSource;
use crate::trunc::{TruncPairSource, trunc};
use crate::verified;
use veil_mpc::mode::Security;

pub use crate::gates::{FRAC_BITS, GateState, MacRing, Rings, softmax_bits};
use crate::gates::{GateKeys, MAC_S, make};

impl<D> Mosformer<D> {
    /// Caps the elements of one gate call at `elements` (≥ 1): larger inputs are evaluated in
    /// chunks, each with its own material, so that material made on demand never exceeds one
    /// chunk's. Costs rounds (one gate evaluation per chunk).
    pub fn with_chunk(mut self, elements: usize) -> Self {
        self.gates.chunk = elements.max(1);
        self
    }

    /// Runs the gates in the given working rings (default [`Rings::Mixed`]); set it before
    /// any gate runs or material is made.
    pub fn with_rings(mut self, rings: Rings) -> Self {
        self.gates.rings = rings;
        self
    }

    /// The gates' working rings.
    pub fn rings(&self) -> Rings {
        self.gates.rings
    }

    /// The gates run so far, in order: the plan of another run of the same model.
    pub fn gate_plan(&self) -> &[Gate] {
        &self.gates.plan
    }

    /// Makes the MAC key, `⟨1⟩` and the material of every gate in `plan` ahead of the online
    /// phase (gates then take it in order of request).
    pub fn prepare(&mut self, ctx: &mut Ctx, plan: &[Gate]) -> Result<()> {
        self.mac_keys(ctx)?;
        for req in plan {
            let keys = make(ctx, req, self.security, self.gates.rings)?;
            self.gates.ready.push_back((req.clone(), keys));
        }
        Ok(())
    }

    fn mac_keys(&mut self, ctx: &mut Ctx) -> Result<(Rss<MacRing>, Rss<MacRing>)> {
        if let Some(k) = &self.gates.keys {
            return Ok(k.clone());
        }
        let k = in_offline_phase(ctx, |ctx| Ok((random_one::<MacRing>(ctx)?, mac_key::<MacRing>(ctx)?)))?;
        self.gates.keys = Some(k.clone());
        Ok(k)
    }

    fn gate_keys(&mut self, ctx: &mut Ctx, req: Gate) -> Result<GateKeys> {
        self.gates.plan.push(req.clone());
        match self.gates.ready.iter().position(|(r, _)| *r == req) {
            Some(i) => self
                .gates
                .ready
                .remove(i)
                .map(|(_, k)| k)
                .ok_or_else(|| MpcError::Invalid("gate material queue".into())),
            None => {
                self.gates.made_on_demand += 1;
                let (security, rings) = (self.security, self.gates.rings);
                in_offline_phase(ctx, |ctx| {
                    let keys = make(ctx, &req, security, rings)?;
                    leave_offline_together(ctx)?;
                    Ok(keys)
                })
            }
        }
    }
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
        let (one, alpha) = self.mac_keys(ctx)?;
        let x_flat = flat(x)?;
        let mut out = Vec::new();
        for (lo, n) in chunks(x.len(), self.gates.chunk) {
            let part = x_flat.range(lo, n)?;
            let value = lift::<Z64, MacRing>(&part)?;
            let keys = self.gate_keys(ctx, Gate::Relu { n })?;
            let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut self.gates.batch };
            let y = match keys {
                GateKeys::Relu(keys) => {
                    let cond: Rss<Z16> = downcast(&part, FRAC_BITS - gelu::F_IN)?;
                    select(ctx, *keys, &cond, &value, macs)?
                }
                GateKeys::Relu64(keys) => select(ctx, *keys, &part, &value, macs)?,
                _ => return Err(MpcError::Invalid("ReLU material expected".into())),
            };
            out.push(reduce(&y)?);
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
        if pending.is_empty() {
            return Ok(());
        }
        let (_, alpha) = self.mac_keys(ctx)?;
        pending.check(ctx, &alpha, MAC_S, "mosformer deferred checks")
    }
}

impl<D: TripleSource<Z64> + TruncPairSource<Z64>> Mosformer<D> {
    /// `x` flattened, and truncated by `shift` fractional bits unless `shift` is 0 (a gate that
    /// reads fewer fractional bits than the linear layers keep).
    fn flat_shifted(&mut self, ctx: &mut Ctx, x: &Rss<Z64>, shift: u32) -> Result<Rss<Z64>> {
        match shift {
            0 => flat(x),
            s => trunc(ctx, &mut self.triples, &flat(x)?, 1 << s),
        }
    }
}

impl<D: TripleSource<Z64> + TruncPairSource<Z64>> TransformerOps<Z64> for Mosformer<D> {
    fn gelu(&mut self, ctx: &mut Ctx, x: &Rss<Z64>) -> Result<Rss<Z64>> {
        let (one, alpha) = self.mac_keys(ctx)?;
        // Mixed rings: GELU's input at 6 fractional bits (its Z_2^16 range); the result at
        // FRAC_BITS either way.
        let shift = match self.gates.rings {
            Rings::Mixed => FRAC_BITS - gelu::F_IN,
            Rings::Z64 => 0,
        };
        let xs = self.flat_shifted(ctx, x, shift)?;
        let f = FRAC_BITS - shift;
        let mut out = Vec::new();
        for (lo, n) in chunks(x.len(), self.gates.chunk) {
            let part = xs.range(lo, n)?;
            let keys = self.gate_keys(ctx, Gate::Gelu { n })?;
            let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut self.gates.batch };
            out.push(match keys {
                GateKeys::Gelu(keys) => gelu::gelu(ctx, *keys, &mut self.triples, &part, f, FRAC_BITS, macs)?,
                GateKeys::Gelu64(keys) => {
                    gelu::gelu(ctx, *keys, &mut self.triples, &part, f, FRAC_BITS, macs)?
                }
                _ => return Err(MpcError::Invalid("GELU material expected".into())),
            });
        }
        Rss::concat(&out.iter().collect::<Vec<_>>())?.reshape(x.shape())
    }

    fn softmax(
        &mut self,
        ctx: &mut Ctx,
        x: &Rss<Z64>,
        rows: usize,
        k: usize,
        mask: Option<&[bool]>,
    ) -> Result<Rss<Z64>> {
        let f = softmax_bits(self.gates.rings);
        let (one, alpha) = self.mac_keys(ctx)?;
        if x.len() != rows * k || mask.is_some_and(|m| m.len() != rows * k) {
            return Err(MpcError::Invalid(format!("softmax of {} values as [{rows}, {k}]", x.len())));
        }
        let xf = self.flat_shifted(ctx, x, FRAC_BITS - f)?;
        let per = (self.gates.chunk / k.max(1)).max(1);
        let mut out = Vec::new();
        for (row, r) in chunks(rows, per) {
            let part = xf.range(row * k, r * k)?;
            let part_mask = mask.map(|m| &m[row * k..(row + r) * k]);
            let keys = self.gate_keys(ctx, Gate::Softmax { rows: r, k })?;
            let t = &mut self.triples;
            let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut self.gates.batch };
            out.push(match keys {
                GateKeys::Softmax(keys) => {
                    softmax::softmax(ctx, *keys, t, &part, part_mask, f, f - gelu::F_IN, macs)?
                }
                GateKeys::Softmax64(keys) => softmax::softmax(ctx, *keys, t, &part, part_mask, f, 0, macs)?,
                _ => return Err(MpcError::Invalid("softmax material expected".into())),
            });
        }
        let s = Rss::concat(&out.iter().collect::<Vec<_>>())?;
        s.scale(Z64(1 << (FRAC_BITS - f))).reshape(x.shape())
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
        let f = softmax_bits(self.gates.rings);
        let (one, alpha) = self.mac_keys(ctx)?;
        let keys = self.gate_keys(ctx, Gate::LayerNorm { rows, k })?;
        let t = &mut self.triples;
        let macs = &mut Macs { one: &one, alpha: &alpha, batch: &mut self.gates.batch };
        let y = match keys {
            GateKeys::LayerNorm(keys) => layernorm::layernorm(ctx, *keys, t, x, (gamma, beta), f, macs)?,
            GateKeys::LayerNorm64(keys) => layernorm::layernorm(ctx, *keys, t, x, (gamma, beta), f, macs)?,
            _ => return Err(MpcError::Invalid("LayerNorm material expected".into())),
        };
        y.reshape(x.shape())
    }
}
