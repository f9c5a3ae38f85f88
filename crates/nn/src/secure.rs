//! The secure executor: the graph on secret shares, over any family with the capabilities it
//! needs ([`SecureBackend`]), among compute servers, a data owner and a model owner.
//!
//! **Roles.** The model owner shares each weight, encoded in fixed point, when the graph first
//! needs it; the data owner shares the one-hot matrix of its token ids (so the embedding
//! lookup is a secret matrix product and the ids are never opened); the servers run the graph;
//! after every deferred check of the family has passed, the output is revealed to the data
//! owner only. What is public: the graph, the weights' shapes and the number of tokens.
//!
//! **Where the float graph is changed** (reported in [`SecureRun::client_side`] and the module
//! docs of the family): `L2Normalize`, when it ends the graph, is applied by the data owner to
//! the revealed output, so the data owner also learns the output's norm; the family's GELU,
//! softmax and LayerNorm are its own approximations (their error bounds are in the family's
//! docs); LayerNorm's epsilon is below the fixed-point resolution and left out.
//!
//! Values are dropped after their last use, so a server holds one layer's activations and the
//! weights still to be used.

use serde::Serialize;
use veil_mpc::traits::{Layout, NonLinear, Owners};
use veil_mpc::{Ctx, PartyId};
use veil_ring::{Ring, Z2k, Z64};
use veil_tensor::Tensor;

use crate::error::{NnError, Result};
use crate::float::{Mat, l2_normalize};
use crate::graph::{Graph, Op};
use crate::weights::{FloatTensor, Weights};

/// What a family needs to run a model: fixed-point non-linear layers, local layout changes and
/// input owners, all on 64-bit shares.
pub trait SecureBackend: NonLinear<Z64> + Layout<Z64> + Owners<Z64> {}
impl<T: NonLinear<Z64> + Layout<Z64> + Owners<Z64>> SecureBackend for T {}

/// Who is who in a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Roles {
    /// Shares the input, alone receives the output.
    pub data_owner: PartyId,
    /// Shares the weights.
    pub model_owner: PartyId,
}

/// What this party brings.
#[derive(Debug, Clone, Copy)]
pub enum Contribution<'a> {
    /// A compute server: nothing but its work.
    Server,
    /// The data owner's token ids.
    Data(&'a [u32]),
    /// The model owner's weights (in the graph's layout).
    Model(&'a Weights),
}

/// Cost of one node at one party (a server), for per-layer reports.
#[derive(Debug, Clone, Serialize)]
pub struct NodeCost {
    /// The node's index.
    pub node: usize,
    /// Its operation's name.
    pub op: &'static str,
    /// Its scope (layer).
    pub scope: String,
    /// Bytes this party sent while running it (all phases).
    pub bytes: u64,
    /// Seconds it took.
    pub seconds: f64,
}

/// One party's result.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SecureRun {
    /// The output (data owner only).
    pub output: Option<Mat>,
    /// Steps done in the clear by the data owner on the revealed output.
    pub client_side: Vec<String>,
    /// Per-node costs (servers).
    pub nodes: Vec<NodeCost>,
}

/// Fixed-point encoding with `f` fractional bits, refusing values the ring cannot hold with
/// room for products (`|v| < 2^{62-2f}`... is too strict for weights; the bound used is
/// `2^{63-f-1}`, the encoding's own range).
fn encode(t: &FloatTensor, f: u32, what: &str) -> Result<Tensor<Z64>> {
    let scale = f64::from(1u32 << f);
    let limit = 2f64.powi(62 - f as i32);
    let mut data = Vec::with_capacity(t.data.len());
    for (i, &v) in t.data.iter().enumerate() {
        let v = f64::from(v);
        if !v.is_finite() || v.abs() >= limit {
            return Err(NnError::Range(format!(
                "{what}[{i}] = {v} does not fit {f} fractional bits in 64-bit shares"
            )));
        }
        data.push(Z64::from_i64((v * scale).round() as i64));
    }
    Ok(Tensor::new(t.shape.clone(), data).map_err(veil_mpc::MpcError::from)?)
}

fn decode(t: &Tensor<Z64>, f: u32) -> Result<Mat> {
    let [rows, cols] = t.shape()[..] else {
        return Err(NnError::Invalid(format!("output of shape {:?}", t.shape())));
    };
    let scale = f64::from(1u32 << f);
    Ok(Mat { rows, cols, data: t.data().iter().map(|v| v.to_signed() as f64 / scale).collect() })
}

fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Tokens => "tokens",
        Op::Embedding { .. } => "embedding",
        Op::Positions { .. } => "positions",
        Op::RowBroadcast { .. } => "row-broadcast",
        Op::Linear { .. } => "linear",
        Op::Add => "add",
        Op::LayerNorm { .. } => "layernorm",
        Op::Attention { .. } => "attention",
        Op::Gelu(_) => "gelu",
        Op::Relu => "relu",
        Op::MeanPool => "mean-pool",
        Op::L2Normalize => "l2-normalize",
    }
}

/// Runs `graph` on `tokens` token ids. Every party of the session calls it with its
/// [`Contribution`]; the family instance `b` is this party's. The model owner needs no token
/// count (it shares the weights whatever the input).
pub fn run_secure<B: SecureBackend>(
    b: &mut B,
    ctx: &mut Ctx,
    graph: &Graph,
    tokens: usize,
    roles: Roles,
    mine: Contribution<'_>,
) -> Result<SecureRun> {
    graph.validate()?;
    let me = ctx.party();
    let servers = b.servers();
    let expected_role = match mine {
        Contribution::Server => me < servers,
        Contribution::Data(ids) => {
            if ids.len() != tokens {
                return Err(NnError::Invalid(format!(
                    "{} token ids, the session declares {tokens}",
                    ids.len()
                )));
            }
            me == roles.data_owner
        }
        Contribution::Model(_) => me == roles.model_owner,
    };
    if !expected_role || roles.data_owner < servers || roles.model_owner < servers {
        return Err(NnError::Invalid(format!(
            "party {me} cannot bring {mine:?} with roles {roles:?} and {servers} servers",
            mine = std::mem::discriminant(&mine)
        )));
    }
    if tokens == 0 && !matches!(mine, Contribution::Model(_)) {
        return Err(NnError::Invalid("no tokens".into()));
    }
    let f = b.frac_bits();
    let last = graph.output()?;
    let normalize_at_client = matches!(graph.nodes[last].op, Op::L2Normalize);
    let out_value = if normalize_at_client { graph.nodes[last].inputs[0] } else { last };
    let mut run = SecureRun::default();
    if normalize_at_client && me == roles.data_owner {
        run.client_side
            .push("L2 normalisation of the revealed output (the data owner learns its norm)".into());
    }
    match mine {
        Contribution::Model(weights) => {
            for name in weights_in_order(graph) {
                let t =
                    weights.get(name).ok_or_else(|| NnError::Invalid(format!("weight {name} is missing")))?;
                if t.shape != graph.weights[name] {
                    return Err(NnError::Invalid(format!(
                        "weight {name} has shape {:?}, the graph {:?}",
                        t.shape, graph.weights[name]
                    )));
                }
                b.share_from_owner(ctx, me, Some(&encode(t, f, name)?), &t.shape)?;
            }
            Ok(run)
        }
        Contribution::Data(ids) => {
            let vocab = embedding_rows(graph)?;
            let mut onehot = vec![Z64::ZERO; tokens * vocab];
            for (i, &id) in ids.iter().enumerate() {
                if id as usize >= vocab {
                    return Err(NnError::Invalid(format!("token id {id} outside the vocabulary of {vocab}")));
                }
                onehot[i * vocab + id as usize] = Z64::from_i64(1 << f);
            }
            let onehot = Tensor::new(vec![tokens, vocab], onehot).map_err(veil_mpc::MpcError::from)?;
            b.share_from_owner(ctx, me, Some(&onehot), &[tokens, vocab])?;
            let shape = output_shape(graph, out_value, tokens)?;
            let t = b
                .reveal_to_owner(ctx, None, me, &shape)?
                .ok_or_else(|| NnError::Invalid("the data owner received no output".into()))?;
            let mut out = decode(&t, f)?;
            if normalize_at_client {
                out = l2_normalize(&out);
            }
            run.output = Some(out);
            Ok(run)
        }
        Contribution::Server => {
            let out = serve(b, ctx, graph, tokens, roles, out_value, &mut run.nodes)?;
            b.check(ctx)?;
            let shape = b.shape_of(&out);
            b.reveal_to_owner(ctx, Some(&out), roles.data_owner, &shape)?;
            Ok(run)
        }
    }
}

/// Weights in the order the servers first need them.
fn weights_in_order(graph: &Graph) -> Vec<&String> {
    let mut seen = std::collections::BTreeSet::new();
    graph.nodes.iter().flat_map(|n| n.op.weights()).filter(|w| seen.insert(*w)).collect()
}

fn embedding_rows(graph: &Graph) -> Result<usize> {
    graph
        .nodes
        .iter()
        .find_map(|n| match &n.op {
            Op::Embedding { table } => graph.weights.get(table).map(|s| s[0]),
            _ => None,
        })
        .ok_or_else(|| NnError::Unsupported("a graph without a token embedding".into()))
}

/// The output's shape: `[1, H]` after mean pooling, `[T, H]` otherwise.
fn output_shape(graph: &Graph, v: usize, tokens: usize) -> Result<Vec<usize>> {
    let mut rows = tokens;
    let mut cols = 0;
    for (i, n) in graph.nodes.iter().enumerate().take(v + 1) {
        match &n.op {
            Op::MeanPool => rows = 1,
            Op::Embedding { table } | Op::Positions { table } | Op::RowBroadcast { table, .. } => {
                cols = graph.weights[table][1];
            }
            Op::Linear { weight, .. } => cols = graph.weights[weight][1],
            _ => {}
        }
        if i == v {
            return Ok(vec![rows, cols]);
        }
    }
    Err(NnError::Invalid(format!("no value {v}")))
}

/// The servers' walk over the graph; returns the share of value `out`.
fn serve<B: SecureBackend>(
    b: &mut B,
    ctx: &mut Ctx,
    graph: &Graph,
    t: usize,
    roles: Roles,
    out: usize,
    costs: &mut Vec<NodeCost>,
) -> Result<B::Share> {
    let mut last_use = vec![0usize; graph.nodes.len()];
    for (i, n) in graph.nodes.iter().enumerate() {
        for &v in &n.inputs {
            last_use[v] = i;
        }
    }
    last_use[out] = usize::MAX;
    let mut weight_last_use = std::collections::BTreeMap::new();
    for (i, n) in graph.nodes.iter().enumerate() {
        for w in n.op.weights() {
            weight_last_use.insert(w, i);
        }
    }
    let mut values: Vec<Option<B::Share>> = vec![None; graph.nodes.len()];
    let mut shared = std::collections::BTreeMap::new();
    for (i, node) in graph.nodes.iter().enumerate().take(out + 1) {
        let (bytes0, start) = (ctx.stats().total().bytes_sent, std::time::Instant::now());
        for name in node.op.weights() {
            if !shared.contains_key(name) {
                let shape = &graph.weights[name];
                let s = b
                    .share_from_owner(ctx, roles.model_owner, None, shape)?
                    .ok_or_else(|| NnError::Invalid("a server got no weight share".into()))?;
                shared.insert(name.clone(), s);
            }
        }
        let w = |name: &String| -> Result<B::Share> { Ok(shared[name].clone()) };
        let x = |k: usize| -> Result<&B::Share> {
            values[node.inputs[k]]
                .as_ref()
                .ok_or_else(|| NnError::Invalid(format!("value {} not available", node.inputs[k])))
        };
        let v = match &node.op {
            Op::Tokens => None,
            Op::Embedding { table } => {
                let rows = graph.weights[table][0];
                let onehot = b
                    .share_from_owner(ctx, roles.data_owner, None, &[t, rows])?
                    .ok_or_else(|| NnError::Invalid("a server got no input share".into()))?;
                Some(b.matmul_fixed(ctx, &onehot, &w(table)?)?)
            }
            Op::Positions { table } => {
                let p = graph.weights[table][0];
                if t > p {
                    return Err(NnError::Invalid(format!("{t} tokens, at most {p} positions")));
                }
                Some(b.slice(&w(table)?, 0, 0..t)?)
            }
            Op::RowBroadcast { table, row } => {
                Some(repeat_row(b, &b.slice(&w(table)?, 0, *row..*row + 1)?, t)?)
            }
            Op::Linear { weight, bias } => {
                let y = b.matmul_fixed(ctx, x(0)?, &w(weight)?)?;
                Some(match bias {
                    Some(bias) => {
                        let n = graph.weights[bias][0];
                        let rows = b.shape_of(&y)[0];
                        let row = b.reshape(&w(bias)?, &[1, n])?;
                        b.add(&y, &repeat_row(b, &row, rows)?)?
                    }
                    None => y,
                })
            }
            Op::Add => Some(b.add(x(0)?, x(1)?)?),
            Op::LayerNorm { gamma, beta, .. } => {
                let s = b.shape_of(x(0)?);
                Some(b.layernorm(ctx, x(0)?, &w(gamma)?, &w(beta)?, s[0], s[1])?)
            }
            Op::Attention { heads, causal } => Some(attention(b, ctx, x(0)?, x(1)?, x(2)?, *heads, *causal)?),
            Op::Gelu(_) => Some(b.gelu(ctx, x(0)?)?),
            Op::Relu => Some(b.relu(ctx, x(0)?)?),
            Op::MeanPool => {
                let s = b.shape_of(x(0)?);
                let mut sum = b.slice(x(0)?, 0, 0..1)?;
                for r in 1..s[0] {
                    sum = b.add(&sum, &b.slice(x(0)?, 0, r..r + 1)?)?;
                }
                Some(b.div_public(ctx, &sum, s[0] as u64)?)
            }
            Op::L2Normalize => return Err(NnError::Unsupported("L2Normalize before the output".into())),
        };
        values[i] = v;
        for &input in &node.inputs {
            if last_use[input] == i {
                values[input] = None;
            }
        }
        for name in node.op.weights() {
            if weight_last_use.get(name) == Some(&i) {
                shared.remove(name);
            }
        }
        costs.push(NodeCost {
            node: i,
            op: op_name(&node.op),
            scope: node.scope.clone(),
            bytes: ctx.stats().total().bytes_sent - bytes0,
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    values[out].take().ok_or_else(|| NnError::Invalid("the output was not computed".into()))
}

/// `[1, n]` repeated into `[rows, n]`, local.
fn repeat_row<B: SecureBackend>(b: &B, row: &B::Share, rows: usize) -> Result<B::Share> {
    let parts: Vec<&B::Share> = std::iter::repeat_n(row, rows).collect();
    Ok(b.concat(&parts, 0)?)
}

fn attention<B: SecureBackend>(
    b: &mut B,
    ctx: &mut Ctx,
    q: &B::Share,
    k: &B::Share,
    v: &B::Share,
    heads: usize,
    causal: bool,
) -> Result<B::Share> {
    let s = b.shape_of(q);
    let (t, h) = (s[0], s[1]);
    if heads == 0 || !h.is_multiple_of(heads) {
        return Err(NnError::Invalid(format!("{heads} heads on width {h}")));
    }
    let dh = h / heads;
    let mut scores = Vec::with_capacity(heads);
    for hd in 0..heads {
        let cols = hd * dh..(hd + 1) * dh;
        let kt = b.transpose(&b.slice(k, 1, cols.clone())?)?;
        scores.push(b.matmul_fixed(ctx, &b.slice(q, 1, cols)?, &kt)?);
    }
    let scores = b.concat(&scores.iter().collect::<Vec<_>>(), 0)?;
    let mask: Option<Vec<bool>> = causal.then(|| (0..heads * t * t).map(|e| (e % t) > (e / t) % t).collect());
    let probs = b.softmax(ctx, &scores, heads * t, t, mask.as_deref())?;
    let mut outs = Vec::with_capacity(heads);
    for hd in 0..heads {
        let p = b.slice(&probs, 0, hd * t..(hd + 1) * t)?;
        outs.push(b.matmul_fixed(ctx, &p, &b.slice(v, 1, hd * dh..(hd + 1) * dh)?)?);
    }
    Ok(b.concat(&outs.iter().collect::<Vec<_>>(), 1)?)
}
