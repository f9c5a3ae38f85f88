//! `veil bench layer --family mm`: BERT encoder layers under `mm`, run through the runtime's
//! inference session (the secure executor over the family's capability traits), the client
//! (party 0, the tokens) and the server (party 1, the weights) as two threads linked by TCP
//! and mutual TLS on 127.0.0.1.
//!
//! The model is the real architecture (BERT-base: 768 wide, 12 heads, 3 072 in the
//! feed-forward; BERT-large: 1 024, 16, 4 096) with seeded random weights scaled as a trained
//! network's ([`veil_nn::zoo::random_weights`]), a vocabulary of 64 tokens (the embedding is
//! reported apart and is not part of a layer's figures) and every token's vector as the
//! output. A layer's bytes and seconds are the per-layer costs the executor measures at each
//! party (`encoder.layer.N`); rounds are the session's (one layer dominates them).
//! Setup (Ferret's first iteration both ways, BFV keys) is the `setup` phase.

use crate::dollars::{DollarCost, dollar_cost};
use serde::Serialize;
use veil_mpc::harness::{SimConfig, root_cause, simulate_tcp_with};
use veil_mpc::{MpcError, Result};
use veil_nn::bert::{Activation, BertConfig, Model, Pooling, bert_graph};
use veil_nn::graph::GeluForm;
use veil_runtime::ahead::Material;
use veil_runtime::families::{FamilyChoice, Request};
use veil_runtime::inference::{InferenceParty, inference_party};

use crate::ops::PaperFigure;

const MIB: f64 = (1u64 << 20) as f64;
const VOCAB: usize = 64;

/// One party's share of the record.
#[derive(Debug, Clone, Serialize)]
pub struct MmLayerParty {
    /// `client` or `server`.
    pub role: &'static str,
    /// Bytes this party sent in the encoder layers (the mean per layer).
    pub bytes_per_layer: f64,
    /// Seconds per layer at this party (the mean).
    pub seconds_per_layer: f64,
    /// Bytes sent and rounds of the whole session's online phase.
    pub online_bytes: u64,
    /// See [`Self::online_bytes`].
    pub online_rounds: u64,
    /// Bytes the embedding lookup sent.
    pub embedding_bytes: u64,
    /// Bytes and seconds by operation kind over the session (`linear`, `attention`, ...).
    pub per_op: Vec<(String, u64, f64)>,
}

/// The record of `veil bench layer --family mm`.
#[derive(Debug, Clone, Serialize)]
pub struct MmLayerRecord {
    /// Always `mm`.
    pub family: &'static str,
    /// Always `semi-honest`.
    pub security: &'static str,
    /// `bert-base` or `bert-large`.
    pub model: String,
    /// Tokens.
    pub tokens: usize,
    /// Layers run.
    pub layers: usize,
    /// The client and the server.
    pub parties: Vec<MmLayerParty>,
    /// MiB both parties sent per layer.
    pub mib_per_layer_both: f64,
    /// Seconds per layer (the slower party).
    pub seconds_per_layer: f64,
    /// Seconds of the whole session, setup included.
    pub seconds_total: f64,
    /// Threads per party (the HE products run on rayon's pool, shared by the two parties).
    pub cores: usize,
    /// Peak resident memory of the process (both parties), MiB.
    pub peak_rss_mib: Option<f64>,
    /// Network.
    pub net: &'static str,
    /// The paper's figures.
    pub paper: Vec<PaperFigure>,
    /// The M&M paper's dollar cost ([`crate::dollars`]) of one layer: its seconds and both
    /// parties' bytes, `cores` cores per party (the two parties share them here).
    pub dollar_cost_per_layer: DollarCost,
}

/// The layer shapes by name: `(hidden, heads, feed-forward)`.
fn shape(model: &str) -> Option<(usize, usize, usize)> {
    match model {
        "bert-base" => Some((768, 12, 3072)),
        "bert-large" => Some((1024, 16, 4096)),
        _ => None,
    }
}

/// The models the benchmark knows.
pub const MM_LAYER_MODELS: &str = "bert-base, bert-large";

fn paper(model: &str) -> Vec<PaperFigure> {
    if model != "bert-base" {
        return Vec::new();
    }
    vec![
        PaperFigure {
            source: "M&M Table XI: BERT-base, 12 layers, 128 tokens, 4.45 GB both parties (GiB), LAN, 64 cores",
            value: 4.45 * 1024.0 / 12.0,
            unit: "MiB per layer (both parties)",
            convention: "the whole model divided by its 12 layers",
        },
        PaperFigure {
            source: "M&M Table XI: BERT-base, 128.4 s for 12 layers, LAN, 64 cores",
            value: 128.4 / 12.0,
            unit: "s per layer",
            convention: "the whole model divided by its 12 layers, 64 cores",
        },
        PaperFigure {
            source: "M&M Table XI: BERT-base, A2I cost 63.47¢ for 12 layers, 64 cores per party",
            value: 63.47 / 12.0,
            unit: "cents per layer (A2I)",
            convention: "the whole model divided by its 12 layers; 64 cores per party",
        },
    ]
}

/// Runs `layers` layers of `model` at `tokens` tokens under `mm`.
pub fn bench_layer(model: &str, tokens: usize, layers: usize) -> Result<MmLayerRecord> {
    let (hidden, heads, ffn) = shape(model)
        .ok_or_else(|| MpcError::Invalid(format!("no layer shape for '{model}' ({MM_LAYER_MODELS})")))?;
    if tokens == 0 || tokens > 512 || layers == 0 {
        return Err(MpcError::Invalid(format!("{layers} layers at {tokens} tokens (1 to 512 tokens)")));
    }
    let config = BertConfig {
        hidden,
        heads,
        layers,
        ffn,
        activation: Activation::Gelu(GeluForm::Erf),
        eps: 1e-12,
        max_positions: 512,
        vocab: VOCAB,
    };
    let pooling = Pooling { mean: false, normalize: false };
    let graph = bert_graph(&config, pooling);
    let weights = veil_nn::zoo::random_weights(&graph, 11);
    let loaded = Model {
        name: model.into(),
        max_positions: 512,
        graph,
        weights: Some(weights),
        tokenizer: None,
        pooling,
    };
    let ids: Vec<u32> = (0..tokens).map(|i| ((i * 37 + 11) % VOCAB) as u32).collect();
    let choice = FamilyChoice::new(&Request { family: Some("mm"), ..Request::default() }, "mm")?;
    veil_runtime::memory::reset_peak();
    let began = std::time::Instant::now();
    let cfg = SimConfig { seed: 5, timeout: std::time::Duration::from_secs(3 * 3600) };
    let out = root_cause(simulate_tcp_with(2, cfg, |ctx| {
        let mine = (ctx.party() == 0).then_some(ids.as_slice());
        inference_party(ctx, &loaded, mine, choice, Material::OnDemand)
    }))?;
    let seconds_total = began.elapsed().as_secs_f64();
    let parties: Vec<MmLayerParty> = out.iter().map(|p| party(p, layers)).collect();
    let both: f64 = parties.iter().map(|p| p.bytes_per_layer).sum();
    let seconds_per_layer = parties.iter().map(|p| p.seconds_per_layer).fold(0.0, f64::max);
    let cores = rayon::current_num_threads();
    Ok(MmLayerRecord {
        family: "mm",
        security: "semi-honest",
        model: model.into(),
        tokens,
        layers,
        mib_per_layer_both: both / MIB,
        seconds_per_layer,
        seconds_total,
        cores,
        dollar_cost_per_layer: dollar_cost(seconds_per_layer, cores, both),
        peak_rss_mib: veil_runtime::memory::peak_rss_bytes().map(|b| b as f64 / MIB),
        net: "tcp+tls1.3 on 127.0.0.1",
        paper: paper(model),
        parties,
    })
}

fn party(p: &InferenceParty, layers: usize) -> MmLayerParty {
    let encoder: Vec<_> = p.per_layer.iter().filter(|l| l.op.starts_with("encoder.layer.")).collect();
    let online = p.phases.iter().find(|ph| ph.phase == "online");
    MmLayerParty {
        role: if p.party == 0 { "client" } else { "server" },
        bytes_per_layer: encoder.iter().map(|l| l.bytes as f64).sum::<f64>() / layers as f64,
        seconds_per_layer: encoder.iter().map(|l| l.seconds).sum::<f64>() / layers as f64,
        online_bytes: online.map_or(0, |o| o.bytes_sent),
        online_rounds: online.map_or(0, |o| o.rounds),
        embedding_bytes: p.per_layer.iter().filter(|l| l.op == "embeddings").map(|l| l.bytes).sum(),
        per_op: p.per_op.iter().map(|o| (o.op.clone(), o.bytes, o.seconds)).collect(),
    }
}
