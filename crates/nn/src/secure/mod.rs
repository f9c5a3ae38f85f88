//! The secure executor: the graph on secret shares, over any family with the capabilities it
//! needs, among compute servers, a data owner and a model owner. [`run_secure`] takes a family
//! with transformer layers (`mosformer`) and runs any graph; [`run_secure_cnn`] takes any
//! [`SecureBackend`] (`aegis` too) and runs graphs without GELU, softmax or LayerNorm, and
//! says which node needs them otherwise, before anything is shared.
//!
//! **Roles.** The model owner shares each weight, encoded in fixed point, when the graph first
//! needs it; the data owner shares its images, or the one-hot matrix of its token ids (so the
//! embedding lookup is a secret matrix product and the ids are never opened); the servers run
//! the graph; after every deferred check of the family has passed, the output is revealed to
//! the data owner only. What is public: the graph, the weights' shapes and the input's size
//! (the number of tokens or of images).
//!
//! **CNN layers** are index maps ([`crate::cnn`], applied to shares with the local
//! [`Layout::gather`]) around the family's operations: a convolution is im2col then one
//! fixed-point matrix product (rescaled after the pool instead, in a conv → ReLU → max-pool
//! block, when the family's comparisons work on the whole ring: fewer rescalings, the same
//! result since rescaling is monotone); max pooling takes the maxima along rows, then along columns
//! (separable: overlapping windows share comparisons), each the family's maximum over the rows
//! of a gathered matrix; average pooling sums the windows and divides by a public count.
//!
//! **Where the float graph is changed** (reported in [`SecureRun::client_side`] and the module
//! docs of the family): `L2Normalize`, when it ends the graph, is applied by the data owner to
//! the revealed output, so the data owner also learns the output's norm; the family's GELU,
//! softmax and LayerNorm are its own approximations (their error bounds are in the family's
//! docs); LayerNorm's epsilon is below the fixed-point resolution and left out.
//!
//! The servers walk the graph with the other executors' walk (`walk`): values are
//! dropped after their last use, so a server holds one layer's activations and the weights
//! still to be used. [`trace_calls`] walks it over shapes only, to plan a session's
//! preprocessing before anything runs.

use std::collections::BTreeMap;

use serde::Serialize;
use veil_mpc::phase::OFFLINE_PHASE;
use veil_mpc::prep::Call;
use veil_mpc::trace::Tracer;
use veil_mpc::traits::{Layout, NonLinear, Owners, TransformerOps};
use veil_mpc::{Ctx, PartyId};
use veil_net::PhaseStats;
use veil_ring::{Ring, Z2k, Z64};
use veil_tensor::Tensor;

use crate::cnn::{self, PadFill, Window};
use crate::error::{NnError, Result};
use crate::float::{Mat, l2_normalize};
use crate::graph::{Graph, Op};
use crate::input::Input;
use crate::walk::{At, Executor, walk};
use crate::weights::{FloatTensor, Weights};

mod serve;

use serve::{attention, serve};

/// What a family needs to run a CNN: fixed-point arithmetic, ReLU and maxima, local layout
/// changes and input owners, all on 64-bit shares. Transformers need [`TransformerOps`] too.
pub trait SecureBackend: NonLinear<Z64> + Layout<Z64> + Owners<Z64> {}
impl<T: NonLinear<Z64> + Layout<Z64> + Owners<Z64>> SecureBackend for T {}

pub use veil_mpc::roles::Roles;

/// What this party brings.
#[derive(Debug, Clone, Copy)]
pub enum Contribution<'a> {
    /// A compute server: nothing but its work.
    Server,
    /// The data owner's input, from outside the servers.
    Data(Input<'a>),
    /// The model owner's weights (in the graph's layout), from outside the servers.
    Model(&'a Weights),
    /// A compute server that is also the data owner, the model owner or both (2-party
    /// client/server sessions): its work, and what it owns.
    Computing {
        /// The input, at the data owner.
        data: Option<Input<'a>>,
        /// The weights, at the model owner.
        model: Option<&'a Weights>,
    },
}

impl<'a> Contribution<'a> {
    /// The input and the weights this party brings.
    fn owned(self) -> (Option<Input<'a>>, Option<&'a Weights>) {
        match self {
            Contribution::Server => (None, None),
            Contribution::Data(input) => (Some(input), None),
            Contribution::Model(weights) => (None, Some(weights)),
            Contribution::Computing { data, model } => (data, model),
        }
    }

    /// Whether this party computes.
    fn computes(self) -> bool {
        matches!(self, Contribution::Server | Contribution::Computing { .. })
    }
}

/// Cost of one node at one party (a server), for per-layer reports. Parts of a node have
/// entries of their own with the node's index: `weights` (the model owner's shares of the
/// weights the node is the first to need, received before it runs) and an attention node's
/// `softmax` (beside `attention`, its products).
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
    /// What it spent in the phase it ran in (the session's online phase).
    pub online: Spent,
    /// The material it made on demand, in the offline phase.
    pub offline: Spent,
}

/// What a party spent in one phase on a node (or part of one): bytes and messages sent,
/// latency rounds, and seconds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Spent {
    /// Payload bytes sent.
    pub bytes: u64,
    /// Frames sent.
    pub messages: u64,
    /// Latency rounds.
    pub rounds: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl Spent {
    /// Field-wise sum.
    pub fn add(&mut self, other: &Spent) {
        self.bytes += other.bytes;
        self.messages += other.messages;
        self.rounds += other.rounds;
        self.seconds += other.seconds;
    }

    /// Field-wise `self − part`, for a part measured inside `self`.
    fn without(&self, part: &Spent) -> Spent {
        Spent {
            bytes: self.bytes.saturating_sub(part.bytes),
            messages: self.messages.saturating_sub(part.messages),
            rounds: self.rounds.saturating_sub(part.rounds),
            seconds: (self.seconds - part.seconds).max(0.0),
        }
    }
}

/// What a part of a node spent: (online, offline).
type PartCost = (Spent, Spent);

/// A party's counters at one point of its run, to measure what it spends from there on: in
/// the phase it is in and in the offline phase (material made on demand, whose seconds
/// [`veil_mpc::phase::nested_offline_seconds`] counts apart).
struct Mark {
    phase: String,
    here: PhaseStats,
    offline: PhaseStats,
    total_bytes: u64,
    nested: f64,
    start: std::time::Instant,
}

impl Mark {
    fn now(ctx: &Ctx) -> Self {
        let phase = ctx.stats().phase().to_string();
        Mark {
            here: ctx.stats().get(&phase),
            offline: ctx.stats().get(OFFLINE_PHASE),
            phase,
            total_bytes: ctx.stats().total().bytes_sent,
            nested: veil_mpc::phase::nested_offline_seconds(),
            start: std::time::Instant::now(),
        }
    }

    /// What was spent since the mark: (in the mark's phase, in the offline phase), and all
    /// bytes sent.
    fn since(&self, ctx: &Ctx) -> (Spent, Spent, u64) {
        let spent = |p: &str, before: &PhaseStats, seconds: f64| {
            let d = ctx.stats().get(p).since(before);
            Spent { bytes: d.bytes_sent, messages: d.messages_sent, rounds: d.rounds, seconds }
        };
        let offline_s = veil_mpc::phase::nested_offline_seconds() - self.nested;
        let total_s = self.start.elapsed().as_secs_f64();
        let offline = if self.phase == OFFLINE_PHASE {
            Spent::default()
        } else {
            spent(OFFLINE_PHASE, &self.offline, offline_s)
        };
        let here = spent(&self.phase, &self.here, (total_s - offline_s).max(0.0));
        (here, offline, ctx.stats().total().bytes_sent - self.total_bytes)
    }
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
    /// Seconds of the family's deferred checks (servers), run under the phase [`VERIFY_PHASE`].
    pub verify_seconds: f64,
    /// This party's logical time ([`veil_net::CommStats::time`]) before and after each
    /// deferred check: a check's rounds across the parties are `max(after) − max(before)`
    /// ([`veil_mpc::cost::rounds_across`]), where the phase's own count at a party that
    /// entered it behind the others (P0 while P1 and P2 finish the online phase between
    /// themselves) would add the rounds it waited.
    pub verify_spans: Vec<(u64, u64)>,
}

/// The communication phase the deferred checks run under.
pub const VERIFY_PHASE: &str = "verify";

/// A weight in fixed point ([`crate::fixed::encode`]).
fn encode(t: &FloatTensor, f: u32, what: &str) -> Result<Tensor<Z64>> {
    encode_values(&t.data, t.shape.clone(), f, what)
}

fn encode_values(values: &[f32], shape: Vec<usize>, f: u32, what: &str) -> Result<Tensor<Z64>> {
    let data = crate::fixed::encode(values, f, what)?.into_iter().map(Z64::from_i64).collect();
    Ok(Tensor::new(shape, data).map_err(veil_mpc::MpcError::from)?)
}

/// The output as a matrix: the last axis is the columns.
fn decode(t: &Tensor<Z64>, f: u32) -> Result<Mat> {
    let cols = *t.shape().last().ok_or_else(|| NnError::Invalid("a scalar output".into()))?;
    let scale = f64::from(1u32 << f);
    Ok(Mat {
        rows: t.len() / cols.max(1),
        cols,
        data: t.data().iter().map(|v| v.to_signed() as f64 / scale).collect(),
    })
}

/// How the executor reaches a family's transformer layers: [`WithTransformer`] calls them,
/// [`CnnOnly`] has none (and [`run_secure_cnn`] refuses graphs that need them up front).
trait TransformerLayers<B: SecureBackend> {
    /// Whether there are any.
    fn present(&self) -> bool;

    /// Runs a GELU, LayerNorm or attention node; for attention, also what its softmax spent
    /// (online, offline), which the reports give as its own kind.
    fn node(
        &self,
        b: &mut B,
        ctx: &mut Ctx,
        op: &Op,
        x: &[&B::Share],
        w: &[B::Share],
    ) -> Result<(B::Share, Option<PartCost>)>;
}

struct WithTransformer;
struct CnnOnly;

impl<B: SecureBackend + TransformerOps<Z64>> TransformerLayers<B> for WithTransformer {
    fn present(&self) -> bool {
        true
    }

    fn node(
        &self,
        b: &mut B,
        ctx: &mut Ctx,
        op: &Op,
        x: &[&B::Share],
        w: &[B::Share],
    ) -> Result<(B::Share, Option<PartCost>)> {
        Ok(match (op, x, w) {
            (Op::Gelu(_), [x], _) => (b.gelu(ctx, x)?, None),
            (Op::LayerNorm { .. }, [x], [gamma, beta]) => {
                let s = b.shape_of(x);
                (b.layernorm(ctx, x, gamma, beta, s[0], s[1])?, None)
            }
            (Op::Attention { heads, causal }, [q, k, v], _) => {
                let (out, softmax) = attention(b, ctx, q, k, v, *heads, *causal)?;
                (out, Some(softmax))
            }
            _ => return Err(NnError::Invalid(format!("{} is not a transformer layer", op.name()))),
        })
    }
}

impl<B: SecureBackend> TransformerLayers<B> for CnnOnly {
    fn present(&self) -> bool {
        false
    }

    fn node(
        &self,
        _: &mut B,
        _: &mut Ctx,
        op: &Op,
        _: &[&B::Share],
        _: &[B::Share],
    ) -> Result<(B::Share, Option<PartCost>)> {
        Err(NnError::Unsupported(format!("{} needs a family with transformer layers", op.name())))
    }
}

/// Runs `graph` on an input of size `n` (tokens or images) over a family with transformer
/// layers. Every party of the session calls it with its [`Contribution`]; the family instance
/// `b` is this party's. The model owner's `n` is not used (it shares the weights whatever the
/// input).
pub fn run_secure<B: SecureBackend + TransformerOps<Z64>>(
    b: &mut B,
    ctx: &mut Ctx,
    graph: &Graph,
    n: usize,
    roles: Roles,
    mine: Contribution<'_>,
) -> Result<SecureRun> {
    run_with(b, ctx, graph, n, roles, mine, &WithTransformer, n)
}

/// [`run_secure`] over a family without transformer layers (a CNN family): a graph with
/// GELU, softmax (attention) or LayerNorm is refused before anything is shared.
pub fn run_secure_cnn<B: SecureBackend>(
    b: &mut B,
    ctx: &mut Ctx,
    graph: &Graph,
    n: usize,
    roles: Roles,
    mine: Contribution<'_>,
) -> Result<SecureRun> {
    run_secure_cnn_in_groups(b, ctx, graph, n, roles, mine, n.max(1))
}

/// [`run_secure_cnn`] with the servers' deferred checks every `images_per_check` images: the
/// servers run the graph on that many images at a time and check their products after each
/// group, before the next, so what a verification holds (every product since the last) stays
/// bounded whatever the batch. Every group must pass before any output is revealed: the data
/// owner still receives the whole batch's output once, after the last check. The other
/// parties' calls are those of [`run_secure_cnn`] (only the servers see the grouping); the
/// servers must agree on `images_per_check`.
pub fn run_secure_cnn_in_groups<B: SecureBackend>(
    b: &mut B,
    ctx: &mut Ctx,
    graph: &Graph,
    n: usize,
    roles: Roles,
    mine: Contribution<'_>,
    images_per_check: usize,
) -> Result<SecureRun> {
    if images_per_check == 0 {
        return Err(NnError::Invalid("a check every 0 images".into()));
    }
    if images_per_check < n && !graph.nodes.iter().any(|nd| matches!(nd.op, Op::Image { .. })) {
        return Err(NnError::Invalid(
            "only a graph of images can be checked a group of images at a time".into(),
        ));
    }
    if let Some((i, node)) = graph.nodes.iter().enumerate().find(|(_, nd)| nd.op.needs_transformer_layers()) {
        return Err(NnError::Unsupported(format!(
            "node {i} ({}) needs transformer layers (GELU, softmax, LayerNorm), which this family lacks",
            node.op.name()
        )));
    }
    run_with(b, ctx, graph, n, roles, mine, &CnnOnly, images_per_check)
}

#[allow(clippy::too_many_arguments)]
fn run_with<B: SecureBackend, L: TransformerLayers<B>>(
    b: &mut B,
    ctx: &mut Ctx,
    graph: &Graph,
    n: usize,
    roles: Roles,
    mine: Contribution<'_>,
    layers: &L,
    group: usize,
) -> Result<SecureRun> {
    graph.validate()?;
    let me = ctx.party();
    let servers = b.servers();
    let (data, model) = mine.owned();
    let role_fits = mine.computes() == (me < servers)
        && data.is_some() == (me == roles.data_owner)
        && model.is_some() == (me == roles.model_owner);
    if !role_fits {
        return Err(NnError::Invalid(format!(
            "party {me} cannot bring {} with roles {roles:?} and {servers} servers",
            describe(mine)
        )));
    }
    if let Some(input) = data {
        input.check(graph)?;
        if input.size() != n {
            return Err(NnError::Invalid(format!(
                "an input of size {}, the session declares {n}",
                input.size()
            )));
        }
    }
    if n == 0 && !matches!(mine, Contribution::Model(_)) {
        return Err(NnError::Invalid("an empty input".into()));
    }
    if let Some(weights) = model {
        check_weights(graph, weights)?;
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
    let received = |t: Option<Tensor<Z64>>| -> Result<Mat> {
        let t = t.ok_or_else(|| NnError::Invalid("the data owner received no output".into()))?;
        let out = decode(&t, f)?;
        Ok(if normalize_at_client { l2_normalize(&out) } else { out })
    };
    match mine {
        Contribution::Model(weights) => {
            for name in weights_in_order(graph) {
                let t = &weights[name];
                b.share_from_owner(ctx, me, Some(&encode(t, f, name)?), &t.shape)?;
            }
            Ok(run)
        }
        Contribution::Data(input) => {
            let shapes = graph.shapes(n)?;
            let (value, shape) = encode_input(graph, input, f)?;
            b.share_from_owner(ctx, me, Some(&value), &shape)?;
            run.output = Some(received(b.reveal_to_owner(ctx, None, me, &shapes[out_value])?)?);
            Ok(run)
        }
        Contribution::Server | Contribution::Computing { .. } => {
            let own = Owned {
                roles,
                input: data.map(|i| encode_input(graph, i, f)).transpose()?.map(|(v, _)| v),
                weights: model,
                progress: true,
            };
            let session = Session { graph, own: &own, out: out_value, layers };
            let out = compute(b, ctx, &session, n, group, &mut run)?;
            let shape = b.shape_of(&out);
            let revealed = b.reveal_to_owner(ctx, Some(&out), roles.data_owner, &shape)?;
            if me == roles.data_owner {
                run.output = Some(received(revealed)?);
            }
            Ok(run)
        }
    }
}

/// What a computing party's walk works from, the same for every group of images: the graph,
/// what the party owns, the value it outputs, and the family's transformer layers.
struct Session<'a, 'o, L> {
    graph: &'a Graph,
    own: &'a Owned<'o>,
    /// The graph value revealed as the output.
    out: usize,
    layers: &'a L,
}

/// A computing party's part: the graph on shares, a group of `group` images at a time with the
/// deferred checks after each; returns the share of the output, not yet revealed.
fn compute<B: SecureBackend, L: TransformerLayers<B>>(
    b: &mut B,
    ctx: &mut Ctx,
    s: &Session<'_, '_, L>,
    n: usize,
    group: usize,
    run: &mut SecureRun,
) -> Result<B::Share> {
    let (graph, own, out_value) = (s.graph, s.own, s.out);
    let group = group.clamp(1, n.max(1));
    let batch_shapes = graph.shapes(n)?;
    let mut weights = WeightShares { shared: BTreeMap::new(), keep: group < n };
    // With groups, the images are shared once and each group is a slice of them.
    let images = if group < n { Some(own.input_share(b, ctx, &batch_shapes[0])?) } else { None };
    let mut outputs = Vec::new();
    for start in (0..n.max(1)).step_by(group) {
        let len = group.min(n - start);
        let slice = images.as_ref().map(|x| b.slice(x, 0, start..start + len)).transpose()?;
        let mut costs = Vec::new();
        let out = serve(b, ctx, s, len, &mut costs, &mut weights, slice)?;
        add_costs(&mut run.nodes, costs);
        let (previous, began) = (ctx.stats().phase().to_string(), std::time::Instant::now());
        ctx.set_phase(VERIFY_PHASE);
        let before = ctx.stats().time();
        b.check(ctx)?;
        run.verify_spans.push((before, ctx.stats().time()));
        ctx.set_phase(&previous);
        run.verify_seconds += began.elapsed().as_secs_f64();
        outputs.push(out);
    }
    let out = match outputs.len() {
        1 => outputs.pop().ok_or_else(|| NnError::Invalid("no output".into()))?,
        _ => b.concat(&outputs.iter().collect::<Vec<_>>(), 0)?,
    };
    let shape = b.shape_of(&out);
    if group < n && shape != batch_shapes[out_value] {
        return Err(NnError::Invalid(format!(
            "the groups' outputs make {shape:?}, the batch's output is {:?}",
            batch_shapes[out_value]
        )));
    }
    Ok(out)
}

/// The calls a computing party's walk of `graph` on an input of size `n` makes of a family,
/// with the checks every `images_per_check` images: the walk of [`run_secure`] (or
/// [`run_secure_cnn_in_groups`]) over `tracer` ([`Tracer::like`] the family), which computes
/// nothing and sends nothing. What every computing party derives alike from public facts,
/// before any input exists: the family turns the calls into its preprocessing plan
/// ([`veil_mpc::prep::Plan::of`]).
///
/// # Errors
/// A graph the executor refuses, or shapes a family would refuse.
pub fn trace_calls(
    mut tracer: Tracer,
    graph: &Graph,
    n: usize,
    roles: Roles,
    images_per_check: usize,
) -> Result<Vec<Call>> {
    graph.validate()?;
    if n == 0 || images_per_check == 0 {
        return Err(NnError::Invalid("an empty input or a check every 0 images".into()));
    }
    let servers = Owners::<Z64>::servers(&tracer);
    let parties = servers.max(roles.data_owner + 1).max(roles.model_owner + 1);
    let mut ctx = Ctx::detached(0, parties);
    let last = graph.output()?;
    let out_value =
        if matches!(graph.nodes[last].op, Op::L2Normalize) { graph.nodes[last].inputs[0] } else { last };
    let own = Owned { roles, input: None, weights: None, progress: false };
    let mut run = SecureRun::default();
    let layers = WithTransformer;
    let session = Session { graph, own: &own, out: out_value, layers: &layers };
    let out = compute(&mut tracer, &mut ctx, &session, n, images_per_check, &mut run)?;
    let shape = out.clone();
    Owners::<Z64>::reveal_to_owner(&mut tracer, &mut ctx, Some(&out), roles.data_owner, &shape)?;
    Ok(tracer.into_calls())
}

/// A contribution's kind, for errors (never its contents).
fn describe(mine: Contribution<'_>) -> &'static str {
    match mine {
        Contribution::Server => "nothing but its work",
        Contribution::Data(_) => "an input from outside the servers",
        Contribution::Model(_) => "weights from outside the servers",
        Contribution::Computing { data: Some(_), model: Some(_) } => "its work, an input and weights",
        Contribution::Computing { data: Some(_), .. } => "its work and an input",
        Contribution::Computing { model: Some(_), .. } => "its work and weights",
        Contribution::Computing { .. } => "its work",
    }
}

/// Every weight the graph uses is there with the graph's shape.
fn check_weights(graph: &Graph, weights: &Weights) -> Result<()> {
    for name in weights_in_order(graph) {
        let t = weights.get(name).ok_or_else(|| NnError::Invalid(format!("weight {name} is missing")))?;
        if t.shape != graph.weights[name] {
            return Err(NnError::Invalid(format!(
                "weight {name} has shape {:?}, the graph {:?}",
                t.shape, graph.weights[name]
            )));
        }
    }
    Ok(())
}

/// What a computing party knows of the owners: their ids, and what it owns itself (the
/// encoded input at the data owner, the weights at the model owner).
struct Owned<'a> {
    roles: Roles,
    input: Option<Tensor<Z64>>,
    weights: Option<&'a Weights>,
    /// Whether the walk reports its progress ([`crate::progress`]; not when tracing).
    progress: bool,
}

impl Owned<'_> {
    /// This party's share of an owner's tensor; the owner, when it computes, passes the value.
    fn share<B: SecureBackend>(
        &self,
        b: &mut B,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<Z64>>,
        shape: &[usize],
    ) -> Result<B::Share> {
        let value = if ctx.party() == owner { value } else { None };
        b.share_from_owner(ctx, owner, value, shape)?
            .ok_or_else(|| NnError::Invalid("a server got no share of an owner's input".into()))
    }

    /// The data owner's input (images or one-hot tokens) of `shape`.
    fn input_share<B: SecureBackend>(&self, b: &mut B, ctx: &mut Ctx, shape: &[usize]) -> Result<B::Share> {
        self.share(b, ctx, self.roles.data_owner, self.input.as_ref(), shape)
    }

    /// The model owner's weight `name` of `shape`, encoded with `f` fractional bits.
    fn weight_share<B: SecureBackend>(
        &self,
        b: &mut B,
        ctx: &mut Ctx,
        name: &str,
        shape: &[usize],
    ) -> Result<B::Share> {
        let value = match self.weights.filter(|_| ctx.party() == self.roles.model_owner) {
            Some(w) => {
                let t = w.get(name).ok_or_else(|| NnError::Invalid(format!("weight {name} is missing")))?;
                Some(encode(t, b.frac_bits(), name)?)
            }
            None => None,
        };
        self.share(b, ctx, self.roles.model_owner, value.as_ref(), shape)
    }
}

/// What the data owner shares: the one-hot matrix of its token ids `[T, V]`, or its images
/// in the channels-last layout `[B, H, W, C]`, in fixed point.
fn encode_input(graph: &Graph, input: Input<'_>, f: u32) -> Result<(Tensor<Z64>, Vec<usize>)> {
    match input {
        Input::Tokens(ids) => {
            let vocab = embedding_rows(graph)?;
            let mut onehot = vec![Z64::ZERO; ids.len() * vocab];
            for (i, &id) in ids.iter().enumerate() {
                if id as usize >= vocab {
                    return Err(NnError::Invalid(format!("token id {id} outside the vocabulary of {vocab}")));
                }
                onehot[i * vocab + id as usize] = Z64::from_i64(1 << f);
            }
            let shape = vec![ids.len(), vocab];
            Ok((Tensor::new(shape.clone(), onehot).map_err(veil_mpc::MpcError::from)?, shape))
        }
        Input::Images(img) => {
            let [b, c, h, w] = <[usize; 4]>::try_from(img.shape.as_slice())
                .map_err(|_| NnError::Invalid(format!("images of shape {:?}", img.shape)))?;
            let nhwc = cnn::gather(&img.data, &cnn::nchw_to_nhwc([b, c, h, w]), 0.0)?;
            let shape = vec![b, h, w, c];
            Ok((encode_values(&nhwc, shape.clone(), f, "image")?, shape))
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

/// The weights' shares the servers hold: shared when a node first needs them, and dropped
/// after their last use unless `keep` (the next group of images needs them again).
struct WeightShares<S> {
    shared: BTreeMap<String, S>,
    keep: bool,
}

/// Adds one group's per-node costs to the run's (the same nodes in the same order).
fn add_costs(total: &mut Vec<NodeCost>, group: Vec<NodeCost>) {
    if total.is_empty() {
        *total = group;
        return;
    }
    for (t, g) in total.iter_mut().zip(group) {
        t.bytes += g.bytes;
        t.seconds += g.seconds;
        t.online.add(&g.online);
        t.offline.add(&g.offline);
    }
}
