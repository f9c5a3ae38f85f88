//! `veil bench layer --family mosformer`: BERT encoder layers (or GPT-2 decoder blocks) run as
//! a model through the runtime's inference session — the secure executor's walk over the
//! model graph, the same code as `veil run` — with the offline and online cost per block kind.
//!
//! The model is the real architecture ([`LayerShape`]: BERT-base, BERT-large or GPT-2 base)
//! with `layers` layers, seeded random weights scaled as a trained network's
//! ([`veil_nn::zoo::random_weights`]) and a vocabulary of 64 tokens: the embedding lookup (and
//! GPT-2's final LayerNorm and tied head) are reported apart and are not part of the layers'
//! figures. A BERT layer is `LN(x + Attn(x)·W_o)`, `LN(h + GELU(h·W_1)·W_2)` with biases and
//! the `1/√d_head` scale folded into the query projection, as `veil run` loads a checkpoint;
//! a GPT-2 block is pre-LN with causal attention. Three servers, the model owner and the data
//! owner are five threads linked in memory.

use serde::Serialize;
use veil_mosformer::Security;
use veil_mpc::harness::{SimConfig, all_ok, simulate_with};
use veil_mpc::{MpcError, Result};
use veil_nn::bert::{Activation, BertConfig, Model, Pooling, bert_graph};
use veil_nn::gpt2::{Gpt2Config, gpt2_graph};
use veil_nn::graph::GeluForm;
use veil_nn::secure::{Spent, VERIFY_PHASE};
use veil_runtime::families::{FamilyChoice, Request};
use veil_runtime::inference::{InferenceParty, inference_party_chunked, nn_error};

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

/// Fractional bits of the layers' values (in Z_2^64), the runtime's fixed point.
const FRAC_BITS: u32 = 16;

/// Vocabulary of the benchmark's models: the embedding is not part of a layer's figures.
const VOCAB: usize = 64;

/// The model of `layers` layers of shape `s`, with seeded random weights.
fn model(s: &LayerShape, layers: usize) -> Model {
    let (hidden, heads, ffn) = (s.hidden, s.heads, s.ffn);
    let pooling = Pooling { mean: false, normalize: false };
    let (graph, max_positions) = if s.causal {
        let c = Gpt2Config { hidden, heads, layers, ffn, eps: 1e-5, max_positions: 1024, vocab: VOCAB };
        (gpt2_graph(&c), c.max_positions)
    } else {
        let activation = Activation::Gelu(GeluForm::Erf);
        let c = BertConfig {
            hidden,
            heads,
            layers,
            ffn,
            activation,
            eps: 1e-12,
            max_positions: 512,
            vocab: VOCAB,
        };
        (bert_graph(&c, pooling), c.max_positions)
    };
    let weights = veil_nn::zoo::random_weights(&graph, 11);
    Model {
        name: s.model_name().into(),
        max_positions,
        graph,
        weights: Some(weights),
        tokenizer: None,
        pooling,
    }
}

/// Whether a node scope is one of the layers (`encoder.layer.N` of BERT, `h.N` of GPT-2).
fn is_layer(scope: &str) -> bool {
    scope.starts_with("encoder.layer.") || scope.starts_with("h.")
}

/// Block kinds of a layer: the weight products (with their biases), the attention products
/// (`Q·Kᵀ`, `P·V`), the non-linear gates, the deferred MAC check that ends the run, and the
/// model owner's weight shares as the layer first needs them.
const LINEAR: &str = "linear";
const ATTENTION: &str = "attention matmul";
const SOFTMAX: &str = "softmax";
const LAYERNORM: &str = "layernorm";
const GELU: &str = "gelu";
const CHECK: &str = "mac check";
const WEIGHTS: &str = "weight input";

/// The block kind of a node's cost (an executor op name); `None` for local ops (residual
/// sums), which send nothing.
fn block_of(op: &str) -> Option<&'static str> {
    Some(match op {
        "linear" => LINEAR,
        "attention" => ATTENTION,
        "softmax" => SOFTMAX,
        "layernorm" => LAYERNORM,
        "gelu" => GELU,
        "weights" => WEIGHTS,
        _ => return None,
    })
}

/// One block kind's cost at one server, online and offline.
#[derive(Clone, Copy, Default)]
struct Both {
    online: Spent,
    offline: Spent,
}

/// One server's figures: the layers' phases, units made on demand, and the cost per block kind.
struct Server {
    offline: Spent,
    online: Spent,
    made_online: u64,
    blocks: Vec<(&'static str, Both)>,
}

/// A server's figures from its report: the layers' nodes by block kind, the deferred check
/// (the verify phase), and the offline phase (the layers' nodes' material made on demand, or
/// the whole session's made ahead).
fn server(p: &InferenceParty, ahead: bool) -> Server {
    let mut blocks: Vec<(&'static str, Both)> = Vec::new();
    let (mut online, mut offline) = (Spent::default(), Spent::default());
    for n in p.nodes.iter().filter(|n| is_layer(&n.scope)) {
        online.add(&n.online);
        offline.add(&n.offline);
        let Some(kind) = block_of(n.op) else { continue };
        let i = blocks.iter().position(|(k, _)| *k == kind).unwrap_or_else(|| {
            blocks.push((kind, Both::default()));
            blocks.len() - 1
        });
        blocks[i].1.online.add(&n.online);
        blocks[i].1.offline.add(&n.offline);
    }
    let phase = |name: &str| {
        p.phases.iter().find(|ph| ph.phase == name).map_or(Spent::default(), |ph| Spent {
            bytes: ph.bytes_sent,
            messages: ph.messages_sent,
            rounds: ph.rounds,
            seconds: ph.seconds,
        })
    };
    let check = phase(VERIFY_PHASE);
    online.add(&check);
    blocks.push((CHECK, Both { online: check, offline: Spent::default() }));
    if ahead {
        offline = phase(veil_mpc::phase::OFFLINE_PHASE);
    }
    Server { offline, online, made_online: p.made_on_demand.unwrap_or(0), blocks }
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
    /// How the layers got their material: `on demand, per gate call` or `ahead, per session`
    /// (older records: `ahead, per layer`, the last layer alone after a first that planned it).
    /// The record gives the totals over all `layers`.
    pub material: &'static str,
    /// Most elements one gate call takes at once (larger calls run in chunks one after the
    /// other, each with its own material): what bounds a server's memory, at a cost in rounds.
    pub chunk: usize,
    /// Offline phase: the layers' material made on demand, or the session's made ahead.
    pub offline: LayerPhase,
    /// Online phase of the layers (with the MAC check at the end of the run).
    pub online: LayerPhase,
    /// The phases' seconds, as every benchmark record gives them.
    pub seconds: crate::ops::Seconds,
    /// The measured layers' cost per block kind (the scaling view's "where the time goes").
    pub blocks: Vec<BlockCost>,
    /// Material made ahead: units the online phase still had to make (must be 0).
    pub made_online: u64,
    /// Peak resident memory of the process running all three servers (and the two owners),
    /// MiB (Linux).
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
    /// True where the layers ran as a model through the runtime's graph walk (biases, the
    /// attention scale folded into the query weights, the MAC check after the whole model).
    /// Records without it ran a hand-written layer (no biases, the scores divided by
    /// `⌊√d_head⌋` in the protocol).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_walk: Option<bool>,
    /// Largest absolute difference of the output (the last layer's every token, or GPT-2's
    /// logits) from the float64 run of the same model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_abs_error: Option<f64>,
}

/// Elements per gate call (bounds what a server holds when material is made on demand): the
/// runtime's.
pub const ON_DEMAND_CHUNK: usize = veil_runtime::inference::CHUNK;

pub use veil_runtime::inference::Material;

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

/// Runs `layers` layers of shape `s` as a model among three servers and two owners on threads
/// (gate calls in chunks of at most `chunk` elements). With [`Material::OnDemand`] every gate
/// call makes its material just before it (offline bytes and rounds counted apart, offline
/// seconds subtracted from the online time); with [`Material::Ahead`] the servers make the
/// session's material first, planned from the graph's shapes (the record's offline phase is
/// the whole session's: layers, embedding and head), unless the plan is larger than the
/// runtime's limit, when the record says the material was made on demand. The record gives the
/// totals over all layers, the MAC check at the end of the run included.
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
    if chunk == 0 {
        return Err(MpcError::Invalid("a gate call needs chunks of at least 1 element".into()));
    }
    if layers == 0 || s.heads == 0 || !s.hidden.is_multiple_of(s.heads) || s.tokens == 0 {
        return Err(MpcError::Invalid(format!(
            "{layers} layers of {s:?}: needs ≥ 1 layer and heads dividing hidden"
        )));
    }
    let model = model(&s, layers);
    if s.tokens > model.max_positions {
        return Err(MpcError::Invalid(format!(
            "{} tokens: {} takes at most {}",
            s.tokens,
            s.model_name(),
            model.max_positions
        )));
    }
    let request = Request { family: Some("mosformer"), security: Some(security), ..Request::default() };
    let choice = FamilyChoice::new(&request, "mosformer")?;
    let roles = choice.topology.roles;
    let ids: Vec<u32> = (0..s.tokens).map(|i| ((i * 37 + 11) % VOCAB) as u32).collect();
    veil_runtime::memory::reset_peak();
    // Large layers keep a server busy for minutes between messages (key generation, matrix
    // triples), so the receive timeout is long.
    let cfg = SimConfig { seed: 11, timeout: std::time::Duration::from_secs(3600) };
    let parties = choice.topology.parties();
    let out = all_ok(simulate_with(parties, cfg, |ctx| {
        let mine = (ctx.party() == roles.data_owner).then_some(ids.as_slice());
        inference_party_chunked(ctx, &model, mine, choice, material.clone(), chunk)
    }))?;
    let computing: Vec<&InferenceParty> =
        out.iter().filter(|p| choice.topology.is_computing(p.party)).collect();
    let ahead = computing.iter().all(|p| p.material.as_deref() == Some("ahead"));
    let runs: Vec<Server> = computing.iter().map(|p| server(p, ahead)).collect();
    let n = runs.len().max(1) as f64;
    let phase = |pick: &dyn Fn(&Server) -> Spent| LayerPhase {
        bytes_per_party: runs.iter().map(|r| pick(r).bytes as f64).sum::<f64>() / n,
        bytes_max_party: runs.iter().map(|r| pick(r).bytes).max().unwrap_or(0),
        rounds: runs.iter().map(|r| pick(r).rounds).max().unwrap_or(0),
        messages_per_party: runs.iter().map(|r| pick(r).messages as f64).sum::<f64>() / n,
        seconds: runs.iter().map(|r| pick(r).seconds).fold(0.0, f64::max),
    };
    let spent = |r: &Server, kind: &str| {
        r.blocks.iter().find(|(k, _)| *k == kind).map(|(_, b)| *b).unwrap_or_default()
    };
    let blocks = runs
        .first()
        .map(|r| r.blocks.iter().map(|&(kind, _)| kind).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|kind| BlockCost {
            block: kind,
            online: phase(&|r| spent(r, kind).online),
            offline: phase(&|r| spent(r, kind).offline),
        })
        .collect();
    let (offline, online) = (phase(&|r| r.offline), phase(&|r| r.online));
    let output = out.iter().find(|p| p.party == roles.data_owner).and_then(|p| p.output.clone());
    let plain = veil_nn::float::run_float_on(
        &model.graph,
        model.weights.as_ref().ok_or_else(|| MpcError::Invalid("no weights".into()))?,
        veil_nn::Input::Tokens(&ids),
    )
    .map_err(nn_error)?;
    let max_abs_error =
        output.map(|o| o.iter().zip(&plain.data).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max));
    let security = if security == Security::Malicious { "malicious" } else { "semi-honest" };
    Ok(LayerRecord {
        family: "mosformer",
        security,
        model: s.model_name(),
        seq: s.tokens,
        ring_bits: 64,
        frac_bits: FRAC_BITS,
        parties: runs.len(),
        shape: s,
        layers,
        material: if ahead { "ahead, per session" } else { "on demand, per gate call" },
        chunk,
        seconds: crate::ops::Seconds { online: online.seconds, offline: offline.seconds },
        offline,
        online,
        blocks,
        paper: paper_table8(&s, layers, security),
        made_online: runs.iter().map(|r| r.made_online).max().unwrap_or(0),
        peak_rss_mib: veil_runtime::memory::peak_rss_bytes().map(|b| b as f64 / f64::from(1u32 << 20)),
        net: "none",
        mac_bits: crate::ops::mac_bits("mosformer"),
        offline_steps_synced: Some(true),
        graph_walk: Some(true),
        max_abs_error,
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
        assert_eq!(r.material, "ahead, per session");
        assert_eq!(r.graph_walk, Some(true));
        // The private output is the float model's, to fixed-point accuracy.
        let err = r.max_abs_error.unwrap();
        assert!(err < 0.1, "max |error| {err}");
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
        let mut want = [LINEAR, ATTENTION, SOFTMAX, LAYERNORM, GELU, CHECK, WEIGHTS];
        want.sort_unstable();
        assert_eq!(kinds, want);
        let sum = |f: fn(&BlockCost) -> f64| r.blocks.iter().map(f).sum::<f64>();
        assert!((sum(|b| b.online.bytes_per_party) - r.online.bytes_per_party).abs() < 1e-6);
        assert!((sum(|b| b.offline.bytes_per_party) - r.offline.bytes_per_party).abs() < 1e-6);
        assert!(
            r.blocks.iter().all(|b| [CHECK, WEIGHTS].contains(&b.block) || b.online.bytes_per_party > 0.0)
        );
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
        let stored = Material::Stored(std::path::PathBuf::from("/nonexistent"));
        assert!(bench_layer(s, 1, stored, Security::Malicious, ON_DEMAND_CHUNK).is_err());
    }

    #[test]
    fn material_made_on_demand_leaves_the_online_rounds_as_made_ahead() {
        // The servers leave each on-demand offline step together, so no offline message is
        // counted in the online chain: the online rounds are the online protocol's alone.
        let s = LayerShape { tokens: 2, hidden: 8, heads: 2, ffn: 16, causal: false };
        let ahead = bench_layer(s, 1, Material::Ahead, Security::Malicious, ON_DEMAND_CHUNK).unwrap();
        let on_demand = bench_layer(s, 1, Material::OnDemand, Security::Malicious, ON_DEMAND_CHUNK).unwrap();
        assert_eq!((ahead.material, on_demand.material), ("ahead, per session", "on demand, per gate call"));
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
