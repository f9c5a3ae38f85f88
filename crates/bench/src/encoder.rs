//! A BERT-style encoder layer on the `mosformer` family, driven through the capability traits
//! (`FixedPoint`, `NonLinear`) plus local layout operations on replicated shares, and its
//! benchmark: offline and online cost per layer with the offline phase produced one layer at a
//! time, so that what a party holds is bounded by one layer's material.
//!
//! The layer (post-LayerNorm, as BERT): `Q, K, V = X·W_q, X·W_k, X·W_v`; per head
//! `softmax(Q_h·K_hᵀ / ⌊√d_h⌋)·V_h`; `X + O·W_o` → LayerNorm; `GELU(H·W_1)·W_2 + H` →
//! LayerNorm. Weights are random (model owner = server 1), the input random (data owner =
//! server 0); biases are left out. Real checkpoints come with the model runtime.

use std::time::Instant;

use serde::Serialize;
use veil_crypto::Prg;
use veil_mosformer::offline::{OFFLINE_PHASE, Offline, nested_offline_seconds};
use veil_mosformer::rss::Rss;
use veil_mosformer::{Mosformer, Security};
use veil_mpc::harness::{SimConfig, all_ok, simulate_with};
use veil_mpc::traits::{FixedPoint, Linear, NonLinear, Sharing, TransformerOps};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z64};
use veil_tensor::Tensor;

use crate::ops::PaperFigure;

/// Shape of an encoder layer.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LayerShape {
    /// Tokens.
    pub tokens: usize,
    /// Hidden width.
    pub hidden: usize,
    /// Attention heads.
    pub heads: usize,
    /// Feed-forward width.
    pub ffn: usize,
    /// A GPT-2 decoder block (causal attention, LayerNorm before each sub-block) instead of a
    /// BERT encoder layer (LayerNorm after each residual sum).
    pub causal: bool,
}

impl LayerShape {
    /// BERT-base with `tokens` tokens.
    pub fn bert_base(tokens: usize) -> Self {
        LayerShape { tokens, hidden: 768, heads: 12, ffn: 3072, causal: false }
    }

    /// BERT-large with `tokens` tokens.
    pub fn bert_large(tokens: usize) -> Self {
        LayerShape { tokens, hidden: 1024, heads: 16, ffn: 4096, causal: false }
    }

    /// GPT-2 base (124M) with `tokens` tokens: the same widths as BERT-base, causal, pre-LN.
    pub fn gpt2_base(tokens: usize) -> Self {
        LayerShape { causal: true, ..Self::bert_base(tokens) }
    }

    /// The model a stack of these layers is: `GPT-2 base`, `BERT-large` (width 1024) or
    /// `BERT-base`.
    pub fn model_name(&self) -> &'static str {
        match (self.causal, self.hidden) {
            (true, _) => "GPT-2 base",
            (false, 1024) => "BERT-large",
            _ => "BERT-base",
        }
    }
}

/// The models `veil bench layer` and `veil bench model` run with random weights of the real
/// shapes: the layer shape at `tokens` and the number of layers, by command-line name.
pub fn named_model(name: &str, tokens: usize) -> Option<(LayerShape, usize)> {
    match name {
        "bert-base" => Some((LayerShape::bert_base(tokens), 12)),
        "bert-large" => Some((LayerShape::bert_large(tokens), 24)),
        "gpt2" => Some((LayerShape::gpt2_base(tokens), 12)),
        _ => None,
    }
}

/// The names [`named_model`] knows.
pub const NAMED_MODELS: &str = "bert-base, bert-large or gpt2";

/// One layer's secret weights.
struct Weights {
    wq: Rss<Z64>,
    wk: Rss<Z64>,
    wv: Rss<Z64>,
    wo: Rss<Z64>,
    w1: Rss<Z64>,
    w2: Rss<Z64>,
    gamma: Rss<Z64>,
    beta: Rss<Z64>,
}

/// Fractional bits of the layers' values (in Z_2^64).
const INPUT_FRAC_BITS: u32 = 16;

fn encoded(g: &mut Prg, shape: &[usize], center: f64, spread: f64) -> Result<Tensor<Z64>> {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|_| {
            let u = (g.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let scale = f64::from(1u32 << INPUT_FRAC_BITS);
            Z64::from_i64(((center + spread * (2.0 * u - 1.0)) * scale).round() as i64)
        })
        .collect();
    Ok(Tensor::new(shape.to_vec(), v)?)
}

/// The model owner (server 1) draws and shares one layer's weights.
fn share_weights(p: &mut Mosformer<Offline>, ctx: &mut Ctx, s: &LayerShape) -> Result<Weights> {
    let me = ctx.party();
    let scale = 1.0 / (s.hidden as f64).sqrt();
    let w = |p: &mut Mosformer<Offline>, ctx: &mut Ctx, shape: &[usize], c: f64, sp: f64| {
        let t = if me == 1 { Some(encoded(ctx.rng(), shape, c, sp)?) } else { None };
        p.share_input(ctx, 1, t.as_ref(), shape)
    };
    let (h, f) = (s.hidden, s.ffn);
    Ok(Weights {
        wq: w(p, ctx, &[h, h], 0.0, scale)?,
        wk: w(p, ctx, &[h, h], 0.0, scale)?,
        wv: w(p, ctx, &[h, h], 0.0, scale)?,
        wo: w(p, ctx, &[h, h], 0.0, scale)?,
        w1: w(p, ctx, &[h, f], 0.0, scale)?,
        w2: w(p, ctx, &[f, h], 0.0, 1.0 / (f as f64).sqrt())?,
        gamma: w(p, ctx, &[h], 1.0, 0.1)?,
        beta: w(p, ctx, &[h], 0.0, 0.1)?,
    })
}

/// One layer on `x: [tokens, hidden]`, its blocks metered by kind: a BERT encoder layer
/// (`LN(x + Attn(x))`, then `LN(h + FFN(h))`) or, with `s.causal`, a GPT-2 block
/// (`x + Attn(LN(x))` with causal attention, then `h + FFN(LN(h))`).
fn layer(
    p: &mut Mosformer<Offline>,
    ctx: &mut Ctx,
    s: &LayerShape,
    x: &Rss<Z64>,
    w: &Weights,
    m: &mut Meter,
) -> Result<Rss<Z64>> {
    let (l, h) = (s.tokens, s.hidden);
    if s.causal {
        let a = m.run(LAYERNORM, ctx, |ctx| p.layernorm(ctx, x, &w.gamma, &w.beta, l, h))?;
        let attn = attention(p, ctx, s, &a, w, m)?;
        let res = p.add(&attn, x)?;
        let f = m.run(LAYERNORM, ctx, |ctx| p.layernorm(ctx, &res, &w.gamma, &w.beta, l, h))?;
        let ff = feed_forward(p, ctx, &f, w, m)?;
        return p.add(&ff, &res);
    }
    let attn = attention(p, ctx, s, x, w, m)?;
    let res = p.add(&attn, x)?;
    let h1 = m.run(LAYERNORM, ctx, |ctx| p.layernorm(ctx, &res, &w.gamma, &w.beta, l, h))?;
    let ff = feed_forward(p, ctx, &h1, w, m)?;
    let out = p.add(&ff, &h1)?;
    m.run(LAYERNORM, ctx, |ctx| p.layernorm(ctx, &out, &w.gamma, &w.beta, l, h))
}

/// Multi-head self-attention with its output projection; every head's products side by side.
fn attention(
    p: &mut Mosformer<Offline>,
    ctx: &mut Ctx,
    s: &LayerShape,
    x: &Rss<Z64>,
    w: &Weights,
    m: &mut Meter,
) -> Result<Rss<Z64>> {
    let (l, dh) = (s.tokens, s.hidden / s.heads);
    let q = m.run(LINEAR, ctx, |ctx| p.matmul_fixed(ctx, x, &w.wq))?;
    let k = m.run(LINEAR, ctx, |ctx| p.matmul_fixed(ctx, x, &w.wk))?;
    let v = m.run(LINEAR, ctx, |ctx| p.matmul_fixed(ctx, x, &w.wv))?;
    let scores = m.run(ATTENTION, ctx, |ctx| {
        let mut operands = Vec::with_capacity(s.heads);
        for h in 0..s.heads {
            let (lo, hi) = (h * dh, (h + 1) * dh);
            operands.push((q.slice(1, lo..hi)?, k.slice(1, lo..hi)?.transpose()?));
        }
        let scores = p.matmul_fixed_many(ctx, &operands.iter().map(|(a, b)| (a, b)).collect::<Vec<_>>())?;
        let scores = Rss::concat_axis(&scores.iter().collect::<Vec<_>>(), 0)?;
        p.div_public(ctx, &scores, (dh as f64).sqrt().floor() as u64)
    })?;
    // Causal: query `i` sees keys `j ≤ i` (the mask is true where a score is dropped).
    let mask: Option<Vec<bool>> =
        s.causal.then(|| (0..s.heads * l * l).map(|e| e % l > (e / l) % l).collect());
    let probs = m.run(SOFTMAX, ctx, |ctx| p.softmax(ctx, &scores, s.heads * l, l, mask.as_deref()))?;
    let heads = m.run(ATTENTION, ctx, |ctx| {
        let mut operands = Vec::with_capacity(s.heads);
        for h in 0..s.heads {
            operands.push((probs.slice(0, h * l..(h + 1) * l)?, v.slice(1, h * dh..(h + 1) * dh)?));
        }
        let heads = p.matmul_fixed_many(ctx, &operands.iter().map(|(a, b)| (a, b)).collect::<Vec<_>>())?;
        Rss::concat_axis(&heads.iter().collect::<Vec<_>>(), 1)
    })?;
    m.run(LINEAR, ctx, |ctx| p.matmul_fixed(ctx, &heads, &w.wo))
}

/// The feed-forward block `GELU(x·W1)·W2`.
fn feed_forward(
    p: &mut Mosformer<Offline>,
    ctx: &mut Ctx,
    x: &Rss<Z64>,
    w: &Weights,
    m: &mut Meter,
) -> Result<Rss<Z64>> {
    let up = m.run(LINEAR, ctx, |ctx| p.matmul_fixed(ctx, x, &w.w1))?;
    let f = m.run(GELU, ctx, |ctx| p.gelu(ctx, &up))?;
    m.run(LINEAR, ctx, |ctx| p.matmul_fixed(ctx, &f, &w.w2))
}

/// Block kinds of a layer: the weight products, the attention products (`Q·Kᵀ/⌊√d_h⌋`, `P·V`),
/// the non-linear gates, and the deferred MAC check that ends a layer's run.
const LINEAR: &str = "linear";
const ATTENTION: &str = "attention matmul";
const SOFTMAX: &str = "softmax";
const LAYERNORM: &str = "layernorm";
const GELU: &str = "gelu";
const CHECK: &str = "mac check";

/// One block kind's counters at one server.
#[derive(Clone, Copy, Default)]
struct Spent {
    online: Measured,
    offline: Measured,
}

/// One server's cost per block kind, summed over the blocks of that kind: online and offline
/// bytes sent, rounds and seconds (offline seconds are the material made on demand inside the
/// block, subtracted from its online time).
#[derive(Default)]
struct Meter {
    kinds: Vec<(&'static str, Spent)>,
}

impl Meter {
    fn run<T>(
        &mut self,
        kind: &'static str,
        ctx: &mut Ctx,
        f: impl FnOnce(&mut Ctx) -> Result<T>,
    ) -> Result<T> {
        let (on0, off0) = (ctx.stats().get("online"), ctx.stats().get(OFFLINE_PHASE));
        let (nested0, start) = (nested_offline_seconds(), Instant::now());
        let out = f(ctx)?;
        let nested = nested_offline_seconds() - nested0;
        let total = start.elapsed().as_secs_f64();
        let (on, off) = (ctx.stats().get("online").since(&on0), ctx.stats().get(OFFLINE_PHASE).since(&off0));
        let i = match self.kinds.iter().position(|(k, _)| *k == kind) {
            Some(i) => i,
            None => {
                self.kinds.push((kind, Spent::default()));
                self.kinds.len() - 1
            }
        };
        let s = &mut self.kinds[i].1;
        s.online.add(&on, total - nested);
        s.offline.add(&off, nested);
        Ok(out)
    }
}

/// Cost of one kind of block in the measured layer, over the three servers.
#[derive(Debug, Clone, Serialize)]
pub struct BlockCost {
    /// `linear`, `attention matmul`, `softmax`, `layernorm`, `gelu` or `mac check`.
    pub block: &'static str,
    /// Online phase.
    pub online: LayerPhase,
    /// Material made on demand inside the block (zero when the layer's material was made
    /// ahead).
    pub offline: LayerPhase,
}

/// Counters of one phase of one layer, over the three servers.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LayerPhase {
    /// Mean bytes sent per server.
    pub bytes_per_party: f64,
    /// Most bytes sent by one server.
    pub bytes_max_party: u64,
    /// Latency rounds (the slowest server's count).
    pub rounds: u64,
    /// Mean messages sent per server.
    pub messages_per_party: f64,
    /// Wall-clock seconds (slowest server).
    pub seconds: f64,
}

/// The record `veil bench layer` prints.
#[derive(Debug, Clone, Serialize)]
pub struct LayerRecord {
    /// Protocol family.
    pub family: &'static str,
    /// `malicious` or `semi-honest`.
    pub security: &'static str,
    /// The model the layers are of ([`LayerShape::model_name`]).
    pub model: &'static str,
    /// Tokens.
    pub seq: usize,
    /// Ring of the layers' values (the gates' working rings follow the precision plan).
    pub ring_bits: u32,
    /// Fractional bits of the layers' values.
    pub frac_bits: u32,
    /// Computing parties.
    pub parties: usize,
    /// The layer's shape.
    pub shape: LayerShape,
    /// Layers run.
    pub layers: usize,
    /// How the measured layers got their material: `on demand, per gate call` (the record
    /// gives the totals over all `layers`) or `ahead, per layer` (the record gives the last
    /// layer alone, the first having planned its offline phase).
    pub material: &'static str,
    /// Most elements one gate call takes at once (larger calls run in chunks one after the
    /// other, each with its own material): what bounds a server's memory, at a cost in rounds.
    pub chunk: usize,
    /// Offline phase of the measured layers.
    pub offline: LayerPhase,
    /// Online phase of the measured layers (with the MAC check at the end of the encoder).
    pub online: LayerPhase,
    /// The phases' seconds, as every benchmark record gives them.
    pub seconds: crate::ops::Seconds,
    /// The measured layers' cost per block kind (the scaling view's "where the time goes").
    pub blocks: Vec<BlockCost>,
    /// Material the online phase of measured layers still had to make (must be 0).
    pub made_online: u64,
    /// Peak resident memory of the process running all three servers, MiB (Linux).
    pub peak_rss_mib: Option<f64>,
    /// Network profile (`none`: in-memory).
    pub net: &'static str,
    /// Mosformer's Table 8 figures where the record is one of its workloads (all 12 layers of
    /// BERT-base at 128 tokens or GPT-2 base at 64).
    pub paper: Vec<PaperFigure>,
    /// Width of the ring of the family's MACs (`mosformer`: 128; absent where the family has
    /// none). Records without it predate the Z_2^128 MACs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac_bits: Option<u32>,
    /// True where material made on demand ends each offline step with the servers waiting for
    /// one another, so that a wait for a peer's offline work counts as offline time. Records
    /// without it (`mosformer` only) counted those waits as online time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline_steps_synced: Option<bool>,
}

/// One server's result: the measured layer's offline and online phases, material made online,
/// cost per block kind.
type Server = (Measured, Measured, u64, Vec<(&'static str, Spent)>);

/// Bytes sent, rounds and seconds of one phase (or block kind) at one server.
#[derive(Clone, Copy, Default)]
struct Measured {
    bytes: u64,
    messages: u64,
    rounds: u64,
    seconds: f64,
}

impl Measured {
    /// Adds what a phase's counters moved by (`spent`: a difference of two snapshots).
    fn add(&mut self, spent: &veil_net::PhaseStats, seconds: f64) {
        self.bytes += spent.bytes_sent;
        self.messages += spent.messages_sent;
        self.rounds += spent.rounds;
        self.seconds += seconds;
    }
}

fn measured(ctx: &Ctx, phase: &str, before: veil_net::PhaseStats, t0: u64, start: Instant) -> Measured {
    let spent = ctx.stats().get(phase).since(&before);
    Measured {
        bytes: spent.bytes_sent,
        messages: spent.messages_sent,
        rounds: ctx.stats().time() - t0,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Elements per gate call (bounds what a server holds when material is made on demand; the
/// plan of a layer records its chunked calls, so planned layers use the same size).
pub const ON_DEMAND_CHUNK: usize = 16_384;

pub use veil_runtime::inference::Material;

/// How a layer record names its material: with [`Material::OnDemand`] every layer is measured
/// and the record gives the totals over all of them; with [`Material::Ahead`] the first layer
/// plans the offline phase and the last layer's material is made ahead in its own phase (the
/// record gives that one layer).
fn record_name(material: &Material) -> &'static str {
    match material {
        Material::OnDemand => "on demand, per gate call",
        Material::Ahead => "ahead, per layer",
        Material::Stored(_) => "stored",
    }
}

/// Mosformer's Table 8 (LAN: 1 Gbps, 0.5 ms) for a whole BERT-base at 128 tokens or GPT-2
/// base at 64: online seconds, online and offline GB per party.
fn paper_table8(s: &LayerShape, layers: usize, security: &str) -> Vec<PaperFigure> {
    const CONV: &str = "12 layers, LAN 1 Gbps / 0.5 ms, 16 threads; GB = 2^30 bytes sent per party; \
                        offline figures derived by the authors, not measured end to end";
    let row = match (s.model_name(), s.tokens, s.hidden, layers, security) {
        ("BERT-base", 128, 768, 12, "malicious") => (59.47, 4.60, 67.35),
        ("BERT-base", 128, 768, 12, _) => (20.09, 1.15, 40.42),
        ("GPT-2 base", 64, 768, 12, "malicious") => (39.26, 3.07, 33.67),
        ("GPT-2 base", 64, 768, 12, _) => (9.70, 0.45, 20.18),
        _ => return Vec::new(),
    };
    let figure = |source, value, unit| PaperFigure { source, value, unit, convention: CONV };
    vec![
        figure("mosformer Table 8: LAN online time", row.0, "s"),
        figure("mosformer Table 8: online communication", row.1, "GB"),
        figure("mosformer Table 8: offline communication", row.2, "GB"),
    ]
}

/// Runs `layers` encoder layers of shape `s` among three servers on threads. With
/// [`Material::OnDemand`] every layer makes its material gate call by gate call (offline bytes
/// and rounds still counted apart, offline seconds subtracted from the online time), the MAC
/// check runs once at the end of the encoder, and the record gives the totals over all layers.
/// With [`Material::Ahead`] (needs `layers ≥ 2`) the first layer plans the offline phase and
/// the last layer, measured alone, has its material made ahead in its own phase.
pub fn bench_layer(
    s: LayerShape,
    layers: usize,
    material: Material,
    security: Security,
    chunk: usize,
) -> Result<LayerRecord> {
    if let Material::Stored(_) = material {
        return Err(MpcError::Invalid("layer benchmarks make their own material: on demand or ahead".into()));
    }
    if material == Material::Ahead && layers < 2 {
        return Err(MpcError::Invalid("material made ahead needs ≥ 2 layers (the first plans it)".into()));
    }
    if chunk == 0 {
        return Err(MpcError::Invalid("a gate call needs chunks of at least 1 element".into()));
    }
    if layers == 0 || s.heads == 0 || !s.hidden.is_multiple_of(s.heads) || s.tokens == 0 {
        return Err(MpcError::Invalid(format!(
            "{layers} layers of {s:?}: needs ≥ 1 layer and heads dividing hidden"
        )));
    }
    veil_runtime::memory::reset_peak();
    // Large layers keep a server busy for minutes between messages (key generation, matrix
    // triples), so the receive timeout is long.
    let cfg = SimConfig { seed: 11, timeout: std::time::Duration::from_secs(3600) };
    let runs = all_ok(simulate_with(3, cfg, |ctx| {
        let shape = [s.tokens, s.hidden];
        let x0 = if ctx.party() == 0 { Some(encoded(ctx.rng(), &shape, 0.0, 1.0)?) } else { None };
        ctx.set_phase("input");
        let instance = || Mosformer::new(security, Offline::for_security(security)).with_chunk(chunk);
        let mut p = instance();
        let mut x = p.share_input(ctx, 0, x0.as_ref(), &shape)?;
        if material == Material::OnDemand {
            // Every layer makes its material gate call by gate call; one MAC check at the end
            // of the encoder, as the paper defers it.
            let (mut off, mut on) = (Measured::default(), Measured::default());
            let mut m = Meter::default();
            for _ in 0..layers {
                ctx.set_phase("input");
                let w = share_weights(&mut p, ctx, &s)?;
                ctx.set_phase("online");
                let (off0, on0) = (ctx.stats().get(OFFLINE_PHASE), ctx.stats().get("online"));
                let (nested0, start) = (nested_offline_seconds(), Instant::now());
                x = layer(&mut p, ctx, &s, &x, &w, &mut m)?;
                let total = start.elapsed().as_secs_f64();
                let nested = nested_offline_seconds() - nested0;
                let (off1, on1) = (ctx.stats().get(OFFLINE_PHASE), ctx.stats().get("online"));
                off.add(&off1.since(&off0), nested);
                on.add(&on1.since(&on0), total - nested);
            }
            let (on0, start) = (ctx.stats().get("online"), Instant::now());
            m.run(CHECK, ctx, |ctx| p.check(ctx))?;
            on.add(&ctx.stats().get("online").since(&on0), start.elapsed().as_secs_f64());
            return Ok((off, on, 0, m.kinds));
        }
        // Layer 0 makes its material on demand and records the plan of every later layer.
        let w = share_weights(&mut p, ctx, &s)?;
        ctx.set_phase("online");
        x = layer(&mut p, ctx, &s, &x, &w, &mut Meter::default())?;
        p.check(ctx)?;
        let gates = p.gate_plan().to_vec();
        let triples = p.source_mut().plan().to_vec();
        let mut last = None;
        for _ in 1..layers {
            ctx.set_phase("input");
            let w = share_weights(&mut p, ctx, &s)?;
            let mut q = instance();
            ctx.set_phase(OFFLINE_PHASE);
            let (before, t0, start) = (ctx.stats().get(OFFLINE_PHASE), ctx.stats().time(), Instant::now());
            q.prepare(ctx, &gates)?;
            q.source_mut().produce(ctx, &triples)?;
            let off = measured(ctx, OFFLINE_PHASE, before, t0, start);
            ctx.set_phase("online");
            let (before, t0, start) = (ctx.stats().get("online"), ctx.stats().time(), Instant::now());
            let offline_before = ctx.stats().get(OFFLINE_PHASE).bytes_sent;
            let mut m = Meter::default();
            x = layer(&mut q, ctx, &s, &x, &w, &mut m)?;
            m.run(CHECK, ctx, |ctx| q.check(ctx))?;
            let on = measured(ctx, "online", before, t0, start);
            let made_online = ctx.stats().get(OFFLINE_PHASE).bytes_sent - offline_before;
            last = Some((off, on, made_online + q.source_mut().made_on_demand(), m.kinds));
        }
        last.ok_or_else(|| MpcError::Invalid("no measured layer".into()))
    }))?;
    let phase = |pick: &dyn Fn(&Server) -> Measured| LayerPhase {
        bytes_per_party: runs.iter().map(|r| pick(r).bytes as f64).sum::<f64>() / 3.0,
        bytes_max_party: runs.iter().map(|r| pick(r).bytes).max().unwrap_or(0),
        rounds: runs.iter().map(|r| pick(r).rounds).max().unwrap_or(0),
        messages_per_party: runs.iter().map(|r| pick(r).messages as f64).sum::<f64>() / 3.0,
        seconds: runs.iter().map(|r| pick(r).seconds).fold(0.0, f64::max),
    };
    let spent =
        |r: &Server, kind: &str| r.3.iter().find(|(k, _)| *k == kind).map(|(_, s)| *s).unwrap_or_default();
    let blocks = runs[0]
        .3
        .iter()
        .map(|&(kind, _)| BlockCost {
            block: kind,
            online: phase(&|r| spent(r, kind).online),
            offline: phase(&|r| spent(r, kind).offline),
        })
        .collect();
    let (offline, online) = (phase(&|r| r.0), phase(&|r| r.1));
    let security = if security == Security::Malicious { "malicious" } else { "semi-honest" };
    Ok(LayerRecord {
        family: "mosformer",
        security,
        model: s.model_name(),
        seq: s.tokens,
        ring_bits: Z64::BITS,
        frac_bits: INPUT_FRAC_BITS,
        parties: 3,
        shape: s,
        layers,
        material: record_name(&material),
        chunk,
        seconds: crate::ops::Seconds { online: online.seconds, offline: offline.seconds },
        offline,
        online,
        blocks,
        paper: paper_table8(&s, layers, security),
        made_online: runs.iter().map(|r| r.2).max().unwrap_or(0),
        peak_rss_mib: veil_runtime::memory::peak_rss_bytes().map(|b| b as f64 / f64::from(1u32 << 20)),
        net: "none",
        mac_bits: crate::ops::mac_bits("mosformer"),
        offline_steps_synced: Some(true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_layer_runs_with_its_material_made_ahead() {
        let s = LayerShape { tokens: 2, hidden: 8, heads: 2, ffn: 16, causal: false };
        let r = bench_layer(s, 2, Material::Ahead, Security::Malicious, ON_DEMAND_CHUNK).unwrap();
        assert_eq!(r.made_online, 0);
        assert!(r.offline.bytes_per_party > 0.0 && r.online.bytes_per_party > 0.0);
        // The fields every benchmark record has.
        assert_eq!((r.seq, r.ring_bits, r.frac_bits, r.parties), (2, 64, 16, 3));
        assert_eq!((r.seconds.online, r.seconds.offline), (r.online.seconds, r.offline.seconds));
        assert!(r.online.messages_per_party >= r.online.rounds as f64 / 2.0);
        assert!(r.online.bytes_max_party as f64 >= r.online.bytes_per_party);
        assert!(r.paper.is_empty(), "no paper reports a width-8 layer");
        let r = bench_layer(s, 1, Material::OnDemand, Security::SemiHonest, ON_DEMAND_CHUNK).unwrap();
        assert!(r.offline.bytes_per_party > 0.0 && r.online.bytes_per_party > 0.0);
        assert_blocks_add_up(&r);
        assert!(bench_layer(s, 0, Material::OnDemand, Security::Malicious, ON_DEMAND_CHUNK).is_err());
    }

    /// The blocks cover every byte the layer sends (residual adds are local).
    fn assert_blocks_add_up(r: &LayerRecord) {
        let mut kinds: Vec<&str> = r.blocks.iter().map(|b| b.block).collect();
        kinds.sort_unstable();
        let mut want = [LINEAR, ATTENTION, SOFTMAX, LAYERNORM, GELU, CHECK];
        want.sort_unstable();
        assert_eq!(kinds, want);
        let sum = |f: fn(&BlockCost) -> f64| r.blocks.iter().map(f).sum::<f64>();
        assert!((sum(|b| b.online.bytes_per_party) - r.online.bytes_per_party).abs() < 1e-6);
        assert!((sum(|b| b.offline.bytes_per_party) - r.offline.bytes_per_party).abs() < 1e-6);
        assert!(r.blocks.iter().all(|b| b.block == CHECK || b.online.bytes_per_party > 0.0));
    }

    #[test]
    fn a_malicious_layer_reports_its_cost_per_block_kind() {
        let s = LayerShape { tokens: 3, hidden: 8, heads: 2, ffn: 16, causal: false };
        let r = bench_layer(s, 1, Material::OnDemand, Security::Malicious, ON_DEMAND_CHUNK).unwrap();
        assert_blocks_add_up(&r);
        let check = r.blocks.iter().find(|b| b.block == CHECK).unwrap();
        assert!(check.online.bytes_per_party > 0.0, "the malicious MAC check opens values");
    }

    #[test]
    fn layers_on_demand_add_up_to_the_encoder() {
        let s = LayerShape { tokens: 2, hidden: 8, heads: 2, ffn: 16, causal: false };
        let one = bench_layer(s, 1, Material::OnDemand, Security::Malicious, ON_DEMAND_CHUNK).unwrap();
        let two = bench_layer(s, 2, Material::OnDemand, Security::Malicious, ON_DEMAND_CHUNK).unwrap();
        assert_eq!(two.layers, 2);
        assert_blocks_add_up(&two);
        let check =
            |r: &LayerRecord| r.blocks.iter().find(|b| b.block == CHECK).unwrap().online.bytes_per_party;
        // One MAC check for the whole encoder; everything else is per layer.
        let per_layer = one.online.bytes_per_party - check(&one);
        assert!((two.online.bytes_per_party - check(&two) - 2.0 * per_layer).abs() < 1e-6);
        assert!(two.offline.bytes_per_party > 1.5 * one.offline.bytes_per_party);
        assert!(bench_layer(s, 1, Material::Ahead, Security::Malicious, ON_DEMAND_CHUNK).is_err());
    }

    #[test]
    fn material_made_on_demand_leaves_the_online_rounds_as_made_ahead() {
        // The servers leave each on-demand offline step together, so no offline message is
        // counted in the online chain: the online rounds are the online protocol's alone.
        let s = LayerShape { tokens: 2, hidden: 8, heads: 2, ffn: 16, causal: false };
        let ahead = bench_layer(s, 2, Material::Ahead, Security::Malicious, ON_DEMAND_CHUNK).unwrap();
        let on_demand = bench_layer(s, 1, Material::OnDemand, Security::Malicious, ON_DEMAND_CHUNK).unwrap();
        assert_eq!(on_demand.online.rounds, ahead.online.rounds);
        assert_eq!(on_demand.offline_steps_synced, Some(true));
    }

    #[test]
    fn smaller_chunks_cost_rounds_not_results() {
        // GELU runs on tokens·ffn = 32 elements: 4 chunks of 8, or one call.
        let s = LayerShape { tokens: 2, hidden: 8, heads: 2, ffn: 16, causal: false };
        let whole = bench_layer(s, 1, Material::OnDemand, Security::Malicious, ON_DEMAND_CHUNK).unwrap();
        let cut = bench_layer(s, 1, Material::OnDemand, Security::Malicious, 8).unwrap();
        assert_eq!((whole.chunk, cut.chunk), (ON_DEMAND_CHUNK, 8));
        let gelu = |r: &LayerRecord| r.blocks.iter().find(|b| b.block == GELU).unwrap().online.rounds;
        assert!(gelu(&cut) > 3 * gelu(&whole), "{} against {}", gelu(&cut), gelu(&whole));
        assert!(cut.online.rounds > whole.online.rounds);
        let err = bench_layer(s, 1, Material::OnDemand, Security::Malicious, 0).unwrap_err();
        assert!(err.to_string().contains("at least 1 element"), "{err}");
    }

    #[test]
    fn a_gpt2_block_runs_with_causal_attention() {
        let s = LayerShape { tokens: 3, hidden: 8, heads: 2, ffn: 16, causal: true };
        let r = bench_layer(s, 2, Material::OnDemand, Security::Malicious, ON_DEMAND_CHUNK).unwrap();
        assert_blocks_add_up(&r);
        assert_eq!(s.model_name(), "GPT-2 base");
        let table8 = |model, tokens, layers, security| {
            let (shape, _) = named_model(model, tokens).unwrap();
            paper_table8(&shape, layers, security).iter().map(|f| f.value).collect::<Vec<_>>()
        };
        assert_eq!(table8("bert-base", 128, 12, "malicious"), [59.47, 4.60, 67.35]);
        assert_eq!(table8("gpt2", 64, 12, "semi-honest"), [9.70, 0.45, 20.18]);
        assert!(table8("bert-base", 128, 1, "malicious").is_empty(), "one layer is not the paper's model");
        assert!(table8("bert-large", 128, 24, "malicious").is_empty());
        let (large, depth) = named_model("bert-large", 128).unwrap();
        assert_eq!(
            (large.model_name(), large.hidden / large.heads, large.ffn, depth),
            ("BERT-large", 64, 4096, 24)
        );
        assert!(named_model("bert-huge", 128).is_none());
        // Pre-LN: two LayerNorms per block, as in the encoder (post-LN), so the same kinds.
        let bert = bench_layer(
            LayerShape { causal: false, ..s },
            2,
            Material::OnDemand,
            Security::Malicious,
            ON_DEMAND_CHUNK,
        )
        .unwrap();
        let ln =
            |r: &LayerRecord| r.blocks.iter().find(|b| b.block == LAYERNORM).unwrap().online.bytes_per_party;
        assert!((ln(&r) - ln(&bert)).abs() < 1e-6);
    }
}
