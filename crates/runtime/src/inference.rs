//! Private inference of a real model: the computing parties of a family, a data owner who
//! shares its input (token ids or images) and alone receives the output, and a model owner who
//! shares the weights, placed as the session's [`Topology`] says (outside the three servers of
//! `mosformer` and `aegis`: parties 3 and 4; among the parties of `additive`: 0 and 1).
//! Transformers run on the families that have transformer layers; CNNs on any
//! ([`crate::classify`]). Used by `veil demo`, `veil run`, `veil eval`, `veil party` (one
//! process per party) and the Python API.
//!
//! Offline material is made by the servers under the `offline` phase, whose bytes, rounds and
//! seconds are reported apart: either all of it ahead of the online phase, from a plan each
//! server derives from the graph's shapes ([`crate::ahead`]), or right before each gate call needs it
//! (bounded memory; its seconds are then subtracted from the online time). The deferred checks
//! run under `verify`.

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use veil_mpc::harness::{SimConfig, simulate_tcp_with, simulate_with};
use veil_mpc::mode::Security;
use veil_mpc::phase::{OFFLINE_PHASE, nested_offline_seconds};
use veil_mpc::roles::Topology;
use veil_mpc::{Ctx, MpcError, PartyId};
use veil_nn::Input;
use veil_nn::bert::{Model, load_hf, tokenize};
use veil_nn::float::run_float;
use veil_nn::graph::{Graph, Op};
use veil_nn::secure::{Contribution, NodeCost, SecureRun, VERIFY_PHASE};

pub use crate::ahead::Material;
use crate::families::{FamilyChoice, GraphJob, PrepOutcome, THREE_SERVERS};
use crate::{Link, PhaseReport};

/// The data owner's party id in the 3-party families' deployments.
pub const DATA_OWNER: PartyId = THREE_SERVERS.roles.data_owner;
/// The model owner's party id in the 3-party families' deployments.
pub const MODEL_OWNER: PartyId = THREE_SERVERS.roles.model_owner;
/// Parties of a 3-party family's session (three servers and the two owners).
pub const PARTIES: usize = 5;
/// Receive timeout of an inference session, seconds: the data owner legitimately waits for the
/// whole computation between sharing its input and receiving the output (minutes for MiniLM,
/// hours for BERT-base at 128 tokens with its material made on demand).
pub const OWNER_WAIT_S: u64 = 6 * 3600;
/// Gate calls are cut into pieces of this many elements (bounds a server's offline material).
pub const CHUNK: usize = 16_384;

/// One party's report of an inference.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InferenceParty {
    /// Party id.
    pub party: usize,
    /// `server`, `data owner`, `model owner`, or a server that is also an owner.
    pub role: String,
    /// The output (data owner only).
    pub output: Option<Vec<f64>>,
    /// `offline`, `online` and `verify` (the deferred checks) counters.
    pub phases: Vec<PhaseReport>,
    /// Bytes and seconds per operation kind, summed over the graph (servers).
    pub per_op: Vec<OpCost>,
    /// Bytes and seconds per layer (`embeddings`, `encoder.layer.N`, `pooling`; servers).
    pub per_layer: Vec<OpCost>,
    /// Steps the data owner did in the clear on the revealed output.
    pub client_side: Vec<String>,
    /// Peak resident memory of this party's process, MiB (Linux; when parties run as threads
    /// of one process, that process's).
    pub peak_rss_mib: Option<f64>,
    /// Servers: where their offline material came from (`ahead` of the online phase,
    /// `on-demand` before each gate call, or `stored` by an earlier session).
    #[serde(default)]
    pub material: Option<String>,
    /// Computing parties: the preprocessing the session consumed, units by kind
    /// (`mul_triples`, `matmul_triple`, `trunc_pairs`, `sign_bits`, `gate_elements`, ...).
    #[serde(default)]
    pub preprocessing_used: Option<std::collections::BTreeMap<String, u64>>,
    /// Computing parties: units made on demand because no material made ahead covered them
    /// (0 when the material was made ahead or stored and the plan was complete).
    #[serde(default)]
    pub made_on_demand: Option<u64>,
    /// Servers: the logical time before and after each deferred check
    /// ([`veil_nn::secure::SecureRun::verify_spans`]), from which the checks' rounds across
    /// the parties are counted ([`verify_rounds`]).
    #[serde(default)]
    pub verify_spans: Vec<(u64, u64)>,
    /// Computing parties: every node's cost, online and offline apart (for benchmarks; the
    /// report gives them grouped, [`Self::per_op`] and [`Self::per_layer`]).
    #[serde(skip)]
    pub nodes: Vec<NodeCost>,
}

/// Cost of a group of nodes (one kind of operation, or one layer) at one server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpCost {
    /// The group: an operation (`linear`, `attention`, ...) or a layer (`encoder.layer.3`).
    pub op: String,
    /// Nodes in the group.
    pub count: usize,
    /// Bytes sent (offline and online).
    pub bytes: u64,
    /// Seconds (offline and online).
    pub seconds: f64,
}

/// Costs summed by the label `key` gives each node.
fn grouped(nodes: &[NodeCost], key: impl Fn(&NodeCost) -> &str) -> Vec<OpCost> {
    let mut out: Vec<OpCost> = Vec::new();
    for n in nodes {
        match out.iter_mut().find(|o| o.op == key(n)) {
            Some(o) => {
                o.count += 1;
                o.bytes += n.bytes;
                o.seconds += n.seconds;
            }
            None => out.push(OpCost { op: key(n).to_string(), count: 1, bytes: n.bytes, seconds: n.seconds }),
        }
    }
    out
}

/// A digest of the public model (graph and weight shapes) every party must agree on.
pub fn model_digest(model: &Model) -> Result<veil_crypto::Digest, MpcError> {
    graph_digest(&model.graph)
}

/// A digest of a public graph (with its weights' shapes).
pub fn graph_digest(graph: &Graph) -> Result<veil_crypto::Digest, MpcError> {
    let json = serde_json::to_vec(graph).map_err(|e| MpcError::Invalid(e.to_string()))?;
    Ok(veil_crypto::Hasher::new("veil/model-graph").update(&json).finalize())
}

/// The session's start: every party sends every other the digest of its public model and
/// checks theirs (a party with another model or config is named); then the data owner
/// announces the size of its input (`size`: tokens or images, public) to the other
/// computing parties, who accept 1 to `max`. Returns that size (0 at an outside model owner).
pub(crate) fn handshake(
    ctx: &mut Ctx,
    topology: &Topology,
    graph: &Graph,
    size: Option<usize>,
    max: usize,
    what: &str,
) -> Result<usize, MpcError> {
    let me = ctx.party();
    let ours = graph_digest(graph)?;
    ctx.net().broadcast(ours.as_bytes())?;
    for peer in ctx.peers() {
        let theirs = ctx.recv_at_most(peer, ours.as_bytes().len())?;
        if theirs.as_slice() != ours.as_bytes() {
            return Err(MpcError::Invalid(format!(
                "party {peer} ({}) holds a different model: graph digest {}…, ours {}…",
                topology.role(peer),
                hex_prefix(&theirs),
                hex_prefix(ours.as_bytes())
            )));
        }
    }
    let data_owner = topology.roles.data_owner;
    if me == data_owner {
        let t = size.ok_or_else(|| MpcError::Invalid(format!("the data owner needs its {what}")))?;
        // A data owner among the computing parties checks its own size (the others check it
        // on receipt, as they do for an owner outside).
        if topology.is_computing(me) && (t == 0 || t > max) {
            return Err(MpcError::Invalid(format!("an input of {t} {what}; the model takes 1 to {max}")));
        }
        for s in (0..topology.computing).filter(|&s| s != me) {
            ctx.net().send(s, (t as u64).to_le_bytes().to_vec())?;
        }
        return Ok(t);
    }
    if topology.is_computing(me) {
        let msg = ctx.recv_at_most(data_owner, 8)?;
        let bytes: [u8; 8] = msg
            .as_slice()
            .try_into()
            .map_err(|_| MpcError::Malformed { from: data_owner, what: format!("number of {what}") })?;
        let t = u64::from_le_bytes(bytes) as usize;
        if t == 0 || t > max {
            return Err(MpcError::Invalid(format!(
                "the data owner announced {t} {what}; the model takes 1 to {max}"
            )));
        }
        return Ok(t);
    }
    Ok(0)
}

fn hex_prefix(b: &[u8]) -> String {
    b.iter().take(6).map(|x| format!("{x:02x}")).collect()
}

/// Runs one party of an inference session: `model` is the public graph (with weights at the
/// model owner), `ids` the token ids (data owner only).
pub fn inference_party(
    ctx: &mut Ctx,
    model: &Model,
    ids: Option<&[u32]>,
    choice: impl Into<FamilyChoice>,
    material: Material,
) -> Result<InferenceParty, MpcError> {
    inference_party_chunked(ctx, model, ids, choice, material, CHUNK)
}

/// [`inference_party`] with gate calls in chunks of at most `chunk` elements (families that
/// make material per gate call; a benchmark's trade of rounds against memory).
///
/// # Errors
/// As [`inference_party`]; a `chunk` of 0, or another than [`CHUNK`] with stored material.
pub fn inference_party_chunked(
    ctx: &mut Ctx,
    model: &Model,
    ids: Option<&[u32]>,
    choice: impl Into<FamilyChoice>,
    material: Material,
    chunk: usize,
) -> Result<InferenceParty, MpcError> {
    let choice = choice.into();
    let graph = &model.graph;
    choice.check_graph(graph)?;
    choice.check_options(&material, None)?;
    let topology = choice.topology;
    session_party(ctx, &topology, graph, ids.map(<[u32]>::len), model.max_positions, "tokens", |ctx, n| {
        let weights = model.weights.as_ref();
        let mine = contribution(ctx.party(), &topology, ids.map(Input::Tokens), weights)?;
        let job = GraphJob { graph, n, mine, material, images_per_check: None, chunk };
        let (run, prep) = choice.run(ctx, job)?;
        Ok((run, Some(prep)))
    })
}

/// What party `me` brings: its input at the data owner, the weights at the model owner, its
/// work at a computing party (which may be an owner too).
pub(crate) fn contribution<'a>(
    me: PartyId,
    topology: &Topology,
    input: Option<Input<'a>>,
    weights: Option<&'a veil_nn::weights::Weights>,
) -> Result<Contribution<'a>, MpcError> {
    let roles = topology.roles;
    let data = if me == roles.data_owner {
        Some(input.ok_or_else(|| MpcError::Invalid("the data owner needs its input".into()))?)
    } else {
        None
    };
    let model = if me == roles.model_owner {
        Some(weights.ok_or_else(|| MpcError::Invalid("the model owner needs the weights".into()))?)
    } else {
        None
    };
    Ok(match (topology.is_computing(me), data, model) {
        (true, None, None) => Contribution::Server,
        (true, data, model) => Contribution::Computing { data, model },
        (false, Some(input), None) => Contribution::Data(input),
        (false, None, Some(weights)) => Contribution::Model(weights),
        _ => {
            return Err(MpcError::Invalid(format!(
                "party {me}: a session of {} parties ({}) has no such party",
                topology.parties(),
                topology.describe()
            )));
        }
    })
}

pub use crate::nn_error;

/// One party of a session: the handshake, then `run` with the announced input size, timed by
/// phase.
pub(crate) fn session_party(
    ctx: &mut Ctx,
    topology: &Topology,
    graph: &Graph,
    size: Option<usize>,
    max: usize,
    what: &str,
    run: impl FnOnce(&mut Ctx, usize) -> Result<(SecureRun, Option<PrepOutcome>), MpcError>,
) -> Result<InferenceParty, MpcError> {
    let me = ctx.party();
    if ctx.parties() != topology.parties() {
        return Err(MpcError::Invalid(format!(
            "this session has {} parties ({}), not {}",
            topology.parties(),
            topology.describe(),
            ctx.parties()
        )));
    }
    ctx.set_phase("setup");
    let n = handshake(ctx, topology, graph, size, max, what)?;
    ctx.set_phase("online");
    let (nested0, start) = (nested_offline_seconds(), Instant::now());
    let (run, prep) = run(ctx, n)?;
    let prep = prep.filter(|_| topology.is_computing(me));
    let offline_s = nested_offline_seconds() - nested0;
    let online_s = start.elapsed().as_secs_f64() - offline_s - run.verify_seconds;
    let stat = |phase: &str, seconds: f64| {
        let s = ctx.stats().get(phase);
        PhaseReport {
            phase: phase.to_string(),
            bytes_sent: s.bytes_sent,
            bytes_received: s.bytes_received,
            messages_sent: s.messages_sent,
            rounds: s.rounds,
            seconds,
        }
    };
    Ok(InferenceParty {
        party: me,
        role: topology.role(me),
        output: run.output.map(|m| m.data),
        phases: vec![
            stat(OFFLINE_PHASE, offline_s),
            stat("online", online_s),
            stat(VERIFY_PHASE, run.verify_seconds),
        ],
        per_op: grouped(&run.nodes, |n| n.op),
        per_layer: grouped(&run.nodes, |n| &n.scope),
        client_side: run.client_side,
        peak_rss_mib: crate::memory::peak_rss_bytes().map(|b| b as f64 / f64::from(1u32 << 20)),
        material: prep.as_ref().map(|p| p.material.name().to_string()),
        preprocessing_used: prep.as_ref().map(|p| p.usage.kinds().map(|(k, v)| (k.to_string(), v)).collect()),
        made_on_demand: prep.as_ref().map(|p| p.made_on_demand),
        verify_spans: run.verify_spans,
        nodes: run.nodes,
    })
}

/// The deferred checks' rounds across `servers`: for each check, `max(after) − max(before)`
/// of the servers' logical times ([`veil_mpc::cost::rounds_across`]), summed over the checks;
/// `None` where the servers did not record the same number of checks.
pub fn verify_rounds(servers: &[&InferenceParty]) -> Option<u64> {
    let checks = servers.first()?.verify_spans.len();
    if servers.iter().any(|p| p.verify_spans.len() != checks) {
        return None;
    }
    Some(
        (0..checks)
            .map(|k| {
                let spans: Vec<(u64, u64)> = servers.iter().map(|p| p.verify_spans[k]).collect();
                veil_mpc::cost::rounds_across(&spans)
            })
            .sum(),
    )
}

/// The report of a private inference.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InferenceReport {
    /// Model name.
    pub model: String,
    /// Protocol family.
    pub family: String,
    /// `malicious` or `semi-honest`.
    pub security: String,
    /// The gates' working rings: `mixed` (modulus conversion) or `z64`; for a family without
    /// a choice, what it computes in.
    pub rings: String,
    /// Who computed and where the owners sat.
    pub topology: Topology,
    /// Where the family's preprocessing came from (an insecure source says so).
    pub preprocessing: String,
    /// How the parties were linked.
    pub transport: String,
    /// The input text.
    pub text: String,
    /// Its number of tokens (public).
    pub tokens: usize,
    /// The output the data owner received.
    pub output: Vec<f64>,
    /// The float reference's output on the same tokens.
    pub plaintext: Vec<f64>,
    /// Cosine similarity of the two.
    pub cosine_vs_plaintext: f64,
    /// Largest absolute difference.
    pub max_abs_error: f64,
    /// The plaintext fixed-point executor's output (the family's arithmetic in the clear).
    pub fixed_point: Vec<f64>,
    /// Largest absolute difference between the private output and the fixed-point
    /// executor's: what the protocol's probabilistic truncations add.
    pub max_abs_vs_fixed_point: f64,
    /// Layers where the fixed-point executor saw a value leave the ring's safe range or a
    /// layer's input leave the range its approximation holds on.
    pub overflows: Vec<veil_nn::fixed::Overflow>,
    /// A language model's next token from the private logits (id and text), when the model
    /// ends in a language-model head.
    pub next_token: Option<(u32, String)>,
    /// The same from the float reference's logits.
    pub plaintext_next_token: Option<(u32, String)>,
    /// Every party's report.
    pub per_party: Vec<InferenceParty>,
    /// Peak resident memory of this process, MiB (all parties when they run as threads).
    pub peak_rss_mib: Option<f64>,
}

/// The largest logit's token and its text, for models ending in a language-model head.
fn next_token(model: &Model, logits: &[f64]) -> Option<(u32, String)> {
    let ends_in_head = matches!(model.graph.nodes.last().map(|n| &n.op), Some(Op::TiedLogits { .. }));
    if !ends_in_head || logits.is_empty() {
        return None;
    }
    let id = (0..logits.len()).fold(0, |b, j| if logits[j] > logits[b] { j } else { b }) as u32;
    let text = model.tokenizer.as_ref().and_then(|t| t.decode(&[id])).unwrap_or_default();
    Some((id, text))
}

/// Cosine similarity.
pub fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na * nb) }
}

/// The security mode's name.
pub fn security_name(s: Security) -> &'static str {
    s.name()
}

/// Builds the report from the parties' results and the float reference.
pub fn report(
    model: &Model,
    text: &str,
    ids: &[u32],
    choice: impl Into<FamilyChoice>,
    transport: &str,
    per_party: Vec<InferenceParty>,
) -> Result<InferenceReport, MpcError> {
    let choice = choice.into();
    let output = per_party
        .iter()
        .find_map(|p| p.output.clone())
        .ok_or_else(|| MpcError::Invalid("the data owner reported no output".into()))?;
    let weights =
        model.weights.as_ref().ok_or_else(|| MpcError::Invalid("the reference needs the weights".into()))?;
    let plaintext = run_float(&model.graph, weights, ids).map_err(|e| MpcError::Invalid(e.to_string()))?.data;
    let max_abs_error = output.iter().zip(&plaintext).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let fixed = veil_nn::fixed::run_fixed(&model.graph, weights, Input::Tokens(ids), choice.reference())
        .map_err(nn_error)?;
    let max_abs_vs_fixed_point =
        output.iter().zip(&fixed.output.data).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    Ok(InferenceReport {
        next_token: next_token(model, &output),
        plaintext_next_token: next_token(model, &plaintext),
        fixed_point: fixed.output.data,
        max_abs_vs_fixed_point,
        overflows: fixed.overflows,
        model: model.name.clone(),
        family: choice.name().into(),
        security: choice.security.name().into(),
        rings: choice.rings_name().unwrap_or(choice.family.info.arithmetic).into(),
        topology: choice.topology,
        preprocessing: choice.family.info.preprocessing.into(),
        transport: transport.into(),
        text: text.into(),
        tokens: ids.len(),
        cosine_vs_plaintext: cosine(&output, &plaintext),
        max_abs_error,
        output,
        plaintext,
        per_party,
        peak_rss_mib: crate::memory::peak_rss_bytes().map(|b| b as f64 / f64::from(1u32 << 20)),
    })
}

/// Runs a private inference of the Hugging Face model in `dir` on `text`, every party a thread
/// of this process (linked in memory or by TCP + mutual TLS on 127.0.0.1).
pub fn private_inference(
    dir: &Path,
    text: &str,
    choice: impl Into<FamilyChoice>,
    material: Material,
    link: Link,
) -> Result<InferenceReport, MpcError> {
    let model = load_hf(dir, true).map_err(|e| MpcError::Invalid(e.to_string()))?;
    private_inference_of(&model, text, choice, material, link)
}

/// [`private_inference`] of a loaded model (with its weights and tokenizer).
pub fn private_inference_of(
    model: &Model,
    text: &str,
    choice: impl Into<FamilyChoice>,
    material: Material,
    link: Link,
) -> Result<InferenceReport, MpcError> {
    let choice = choice.into();
    choice.check_graph(&model.graph)?;
    choice.check_options(&material, None)?;
    let ids = tokenize(model, text).map_err(|e| MpcError::Invalid(e.to_string()))?;
    let data_owner = choice.topology.roles.data_owner;
    let job = |ctx: &mut Ctx| {
        let mine = (ctx.party() == data_owner).then_some(ids.as_slice());
        inference_party(ctx, model, mine, choice, material.clone())
    };
    let (per_party, transport) = run_threads(link, choice.topology.parties(), job)?;
    report(model, text, &ids, choice, transport, per_party)
}

/// Runs the `parties` parties of a session as threads of this process, linked as `link` says;
/// returns their reports in party order and the link's description.
pub(crate) fn run_threads<F>(
    link: Link,
    parties: usize,
    job: F,
) -> Result<(Vec<InferenceParty>, &'static str), MpcError>
where
    F: Fn(&mut Ctx) -> Result<InferenceParty, MpcError> + Sync,
{
    let cfg = SimConfig { seed: rand_seed(), timeout: std::time::Duration::from_secs(OWNER_WAIT_S) };
    let (results, transport) = match link {
        Link::Memory => (simulate_with(parties, cfg, job), "in-memory channels, parties as threads"),
        Link::Tls => (
            simulate_tcp_with(parties, cfg, job),
            "tcp+tls1.3 (mutual auth) on 127.0.0.1, parties as threads",
        ),
    };
    Ok((veil_mpc::harness::root_cause(results)?, transport))
}

pub(crate) fn rand_seed() -> u64 {
    use rand::RngCore;
    rand::rngs::OsRng.next_u64()
}
