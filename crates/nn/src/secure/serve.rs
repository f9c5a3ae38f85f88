//! The servers' side of a secure run: the walk over the graph's nodes ([`crate::walk`]) with
//! each node's op on shares, the weights shared as the nodes first need them, and attention.

use super::*;

fn image_shape<B: SecureBackend>(b: &B, x: &B::Share) -> Result<[usize; 4]> {
    let s = b.shape_of(x);
    <[usize; 4]>::try_from(s.as_slice())
        .map_err(|_| NnError::Invalid(format!("a value of shape {s:?}, not an image")))
}

/// The servers' walk over the session's graph (`walk`) for `n` images; returns the share of
/// the session's output value.
pub(super) fn serve<B: SecureBackend, L: TransformerLayers<B>>(
    b: &mut B,
    ctx: &mut Ctx,
    s: &Session<'_, '_, L>,
    n: usize,
    costs: &mut Vec<NodeCost>,
    weights: &mut WeightShares<B::Share>,
    images: Option<B::Share>,
) -> Result<B::Share> {
    let (graph, own, out, layers) = (s.graph, s.own, s.out, s.layers);
    let mut weight_last_use = BTreeMap::new();
    for (i, nd) in graph.nodes.iter().enumerate() {
        for w in nd.op.weights() {
            weight_last_use.insert(w.clone(), i);
        }
    }
    let mut exec = Serve { b, ctx, own, layers, weights, images, costs, weight_last_use, n, out };
    walk(&mut exec, graph, n, out)?.ok_or_else(|| NnError::Invalid("the output is the token ids".into()))
}

/// Whether node `i` is the convolution of a conv → ReLU → max-pool block that rescales once,
/// after the pool: when the family's comparisons work on the whole ring, ReLU and max commute
/// with the (monotone) rescaling, and a pool has fewer outputs than the convolution (4x for
/// 2x2 windows).
fn rescale_after_pool(at: &At<'_>, full_ring: bool, i: usize) -> bool {
    let op = |k: usize| at.graph.nodes.get(k).map(|nd| (&nd.op, nd.inputs.as_slice()));
    full_ring
        && matches!(op(i), Some((Op::Conv2d { .. }, _)))
        && matches!(op(i + 1), Some((Op::Relu, [v])) if *v == i)
        && matches!(op(i + 2), Some((Op::MaxPool(_), [v])) if *v == i + 1)
        && at.last_use[i] == i + 1
        && at.last_use[i + 1] == i + 2
}

/// Whether node `i` is a ReLU whose only use is a max-pool: ReLU is monotone, so
/// `max(relu(a), relu(b)) = relu(max(a, b))` exactly, and the ReLU runs on the pool's
/// outputs instead (at the pool node; node `i` passes its input on): for 2x2 windows, one
/// comparison per output instead of four, 7 → 4 comparisons per pool output with the pool's
/// own three.
fn relu_after_pool(at: &At<'_>, i: usize) -> bool {
    let op = |k: usize| at.graph.nodes.get(k).map(|nd| (&nd.op, nd.inputs.as_slice()));
    matches!(op(i), Some((Op::Relu, _)))
        && matches!(op(i + 1), Some((Op::MaxPool(_), [v])) if *v == i)
        && at.last_use[i] == i + 1
}

/// A computing party's ops on the walk: the family's operations on shares, the weights shared
/// on first use and dropped after their last, per-node costs and progress.
struct Serve<'a, 'o, B: SecureBackend, L> {
    b: &'a mut B,
    ctx: &'a mut Ctx,
    own: &'a Owned<'o>,
    layers: &'a L,
    weights: &'a mut WeightShares<B::Share>,
    /// The group's images, when shared ahead for the whole batch.
    images: Option<B::Share>,
    costs: &'a mut Vec<NodeCost>,
    weight_last_use: BTreeMap<String, usize>,
    n: usize,
    out: usize,
}

impl<B: SecureBackend, L: TransformerLayers<B>> Executor for Serve<'_, '_, B, L> {
    /// `None` for the token ids (never shared: the embedding shares their one-hot matrix).
    type Value = Option<B::Share>;

    fn lacks(&self, node: &crate::graph::Node) -> Option<String> {
        (node.op.needs_transformer_layers() && !self.layers.present())
            .then(|| "needs transformer layers (GELU, softmax, LayerNorm), which this family lacks".into())
    }

    fn node(&mut self, at: &At<'_>, inputs: &[&Option<B::Share>]) -> Result<Option<B::Share>> {
        let Serve { b, ctx, own, layers, weights, images, costs, weight_last_use, n, out } = self;
        let (b, ctx, n) = (&mut **b, &mut **ctx, *n);
        let (i, node, graph, shapes) = (at.index, at.node, at.graph, at.shapes);
        let f = b.frac_bits();
        let full_ring = b.comparisons_on_full_ring();
        let rescale_after_pool = |at: &At<'_>, k: usize| rescale_after_pool(at, full_ring, k);
        // The weights the node needs first are shared before it runs, reported as their own
        // entry (`weights`).
        let sharing = Mark::now(ctx);
        let shared = &mut weights.shared;
        let mut new_weights = false;
        for name in node.op.weights() {
            if !shared.contains_key(name) {
                let s = own.weight_share(b, ctx, name, &graph.weights[name])?;
                shared.insert(name.clone(), s);
                new_weights = true;
            }
        }
        let sharing = new_weights.then(|| sharing.since(ctx));
        let mark = Mark::now(ctx);
        let mut softmax = None;
        let w = |name: &String| -> Result<B::Share> { Ok(shared[name].clone()) };
        let x = |k: usize| -> Result<&B::Share> {
            inputs[k]
                .as_ref()
                .ok_or_else(|| NnError::Invalid(format!("value {} is the token ids", node.inputs[k])))
        };
        let v = match &node.op {
            Op::Tokens => None,
            Op::Image { .. } => match images.take() {
                Some(x) => Some(x),
                None => Some(own.input_share(b, ctx, &shapes[0])?),
            },
            Op::Embedding { table } => {
                let rows = graph.weights[table][0];
                let onehot = own.input_share(b, ctx, &[n, rows])?;
                Some(b.matmul_fixed(ctx, &onehot, &w(table)?)?)
            }
            Op::Positions { table } => Some(b.slice(&w(table)?, 0, 0..shapes[i][0])?),
            Op::RowBroadcast { table, row } => {
                Some(repeat_row(b, &b.slice(&w(table)?, 0, *row..*row + 1)?, n)?)
            }
            Op::Linear { weight, bias } => {
                let y = b.matmul_fixed(ctx, x(0)?, &w(weight)?)?;
                Some(add_bias(b, y, bias.as_ref().map(&w).transpose()?)?)
            }
            Op::Conv2d { weight, bias, window } => {
                let conv = cnn::patches(image_shape(b, x(0)?)?, window)?;
                let kernel = b.reshape(&w(weight)?, &[conv.cols(), shapes[i][3]])?;
                let y = if rescale_after_pool(at, i) {
                    // 2f fractional bits until the pool: the bias too.
                    let bias = match bias {
                        Some(name) => {
                            let scale =
                                Tensor::new(graph.weights[name].clone(), vec![Z64(1 << f); shapes[i][3]])
                                    .map_err(veil_mpc::MpcError::from)?;
                            Some(b.mul_public(&w(name)?, &scale)?)
                        }
                        None => None,
                    };
                    let y = b.conv2d(ctx, x(0)?, &conv, &kernel, false)?;
                    add_bias(b, y, bias)?
                } else {
                    let y = b.conv2d(ctx, x(0)?, &conv, &kernel, true)?;
                    add_bias(b, y, bias.as_ref().map(&w).transpose()?)?
                };
                Some(b.reshape(&y, &shapes[i])?)
            }
            Op::MaxPool(window) => {
                // Separable: the maxima along each row's windows, then along columns of those,
                // so overlapping windows share their row maxima (never more comparisons or
                // rounds than the direct tree; fewer when windows overlap).
                let [kh, kw] = window.kernel;
                let rows = Window {
                    kernel: [1, kw],
                    stride: [1, window.stride[1]],
                    pad: [0, window.pad[1], 0, window.pad[3]],
                };
                let cols = Window {
                    kernel: [kh, 1],
                    stride: [window.stride[0], 1],
                    pad: [window.pad[0], 0, window.pad[2], 0],
                };
                let mut v = x(0)?.clone();
                for w in [rows, cols].iter().filter(|w| w.kernel != [1, 1]) {
                    let shape = image_shape(b, &v)?;
                    let (idx, [n_rows, k], _) = cnn::windows(shape, w, PadFill::Repeat)?;
                    let win = b.gather(&v, &idx, &[n_rows, k])?;
                    let m = b.max_rows(ctx, &win, n_rows, k)?;
                    let (oh, ow) = w.output(shape[1], shape[2])?;
                    v = b.reshape(&m, &[shape[0], oh, ow, shape[3]])?;
                }
                if i >= 1 && relu_after_pool(at, i - 1) {
                    v = b.relu(ctx, &v)?;
                }
                if i >= 2 && rescale_after_pool(at, i - 2) {
                    v = b.div_public(ctx, &v, 1 << f)?;
                }
                Some(v)
            }
            Op::AvgPool { window, count_pad } => {
                let (idx, [rows, k], counts) = cnn::windows(image_shape(b, x(0)?)?, window, PadFill::Zero)?;
                let win = b.gather(x(0)?, &idx, &[rows, k])?;
                let mut sum = b.slice(&win, 1, 0..1)?;
                for j in 1..k {
                    sum = b.add(&sum, &b.slice(&win, 1, j..j + 1)?)?;
                }
                let mean = if *count_pad || counts.iter().all(|&c| c == k) {
                    b.div_public(ctx, &sum, k as u64)?
                } else {
                    // Σ · ⌊2^f / count⌉ / 2^f, a public multiplier per window.
                    let inv: Vec<Z64> = counts
                        .iter()
                        .map(|&c| Z64::from_i64(((1u64 << f) as f64 / c as f64).round() as i64))
                        .collect();
                    let inv = Tensor::new(vec![rows, 1], inv).map_err(veil_mpc::MpcError::from)?;
                    b.div_public(ctx, &b.mul_public(&sum, &inv)?, 1 << f)?
                };
                Some(b.reshape(&mean, &shapes[i])?)
            }
            Op::Flatten => {
                let s = image_shape(b, x(0)?)?;
                Some(b.gather(x(0)?, &cnn::flatten(s), &shapes[i])?)
            }
            Op::Add => Some(b.add(x(0)?, x(1)?)?),
            Op::ChannelConcat => Some(b.concat(&[x(0)?, x(1)?], 3)?),
            // The pool that follows applies it ([`relu_after_pool`]).
            Op::Relu if relu_after_pool(at, i) => Some(x(0)?.clone()),
            Op::Relu => Some(b.relu(ctx, x(0)?)?),
            op @ (Op::Gelu(_) | Op::LayerNorm { .. } | Op::Attention { .. }) => {
                let xs = (0..node.inputs.len()).map(x).collect::<Result<Vec<_>>>()?;
                let ws = op.weights().into_iter().map(&w).collect::<Result<Vec<_>>>()?;
                let (y, part) = layers.node(b, ctx, op, &xs, &ws)?;
                softmax = part;
                Some(y)
            }
            Op::MeanPool => {
                let s = b.shape_of(x(0)?);
                let mut sum = b.slice(x(0)?, 0, 0..1)?;
                for r in 1..s[0] {
                    sum = b.add(&sum, &b.slice(x(0)?, 0, r..r + 1)?)?;
                }
                Some(b.div_public(ctx, &sum, s[0] as u64)?)
            }
            Op::L2Normalize => return Err(NnError::Unsupported("L2Normalize before the output".into())),
            Op::LastToken => {
                let rows = b.shape_of(x(0)?)[0];
                Some(b.slice(x(0)?, 0, rows.saturating_sub(1)..rows)?)
            }
            Op::FirstToken => Some(b.slice(x(0)?, 0, 0..1)?),
            Op::ImageRows => Some(b.reshape(x(0)?, &shapes[i])?),
            Op::PrependRow { table } => Some(b.concat(&[&w(table)?, x(0)?], 0)?),
            Op::TiedLogits { table } => {
                let t = b.transpose(&w(table)?)?;
                Some(b.matmul_fixed(ctx, x(0)?, &t)?)
            }
        };
        for name in node.op.weights() {
            if !weights.keep && weight_last_use.get(name) == Some(&i) {
                weights.shared.remove(name);
            }
        }
        if own.progress {
            crate::progress::report(&crate::progress::Step {
                party: ctx.party(),
                done: i + 1,
                nodes: *out + 1,
                op: node.op.name(),
                scope: &node.scope,
            });
        }
        if let Some((online, offline, bytes)) = sharing {
            let seconds = online.seconds + offline.seconds;
            costs.push(NodeCost {
                node: i,
                op: "weights",
                scope: node.scope.clone(),
                bytes,
                seconds,
                online,
                offline,
            });
        }
        let (mut online, mut offline, mut bytes) = mark.since(ctx);
        if let Some((on, off)) = softmax {
            online = online.without(&on);
            offline = offline.without(&off);
            bytes = bytes.saturating_sub(on.bytes + off.bytes);
            let part = NodeCost {
                node: i,
                op: "softmax",
                scope: node.scope.clone(),
                bytes: on.bytes + off.bytes,
                seconds: on.seconds + off.seconds,
                online: on,
                offline: off,
            };
            costs.push(part);
        }
        let seconds = online.seconds + offline.seconds;
        costs.push(NodeCost {
            node: i,
            op: node.op.name(),
            scope: node.scope.clone(),
            bytes,
            seconds,
            online,
            offline,
        });
        Ok(v)
    }
}

/// `y + bias` with the bias repeated over the rows of `y: [rows, n]`.
fn add_bias<B: SecureBackend>(b: &B, y: B::Share, bias: Option<B::Share>) -> Result<B::Share> {
    let Some(bias) = bias else { return Ok(y) };
    let s = b.shape_of(&y);
    let row = b.reshape(&bias, &[1, s[1]])?;
    Ok(b.add(&y, &repeat_row(b, &row, s[0])?)?)
}

/// `[1, n]` repeated into `[rows, n]`, local.
fn repeat_row<B: SecureBackend>(b: &B, row: &B::Share, rows: usize) -> Result<B::Share> {
    let cols = b.shape_of(row)[1];
    let idx: Vec<Option<usize>> = (0..rows * cols).map(|e| Some(e % cols)).collect();
    Ok(b.gather(row, &idx, &[rows, cols])?)
}

/// Multi-head attention on shares (every head's products side by side), with what its softmax
/// spent (online, offline) for the reports.
pub(super) fn attention<B: SecureBackend + TransformerOps<Z64>>(
    b: &mut B,
    ctx: &mut Ctx,
    q: &B::Share,
    k: &B::Share,
    v: &B::Share,
    heads: usize,
    causal: bool,
) -> Result<(B::Share, PartCost)> {
    let s = b.shape_of(q);
    let (t, h) = (s[0], s[1]);
    if heads == 0 || !h.is_multiple_of(heads) {
        return Err(NnError::Invalid(format!("{heads} heads on width {h}")));
    }
    let dh = h / heads;
    // Every head's products side by side (the rounds of one product).
    let mut operands = Vec::with_capacity(heads);
    for hd in 0..heads {
        let cols = hd * dh..(hd + 1) * dh;
        operands.push((b.slice(q, 1, cols.clone())?, b.transpose(&b.slice(k, 1, cols)?)?));
    }
    let scores = b.matmul_fixed_many(ctx, &operands.iter().map(|(x, y)| (x, y)).collect::<Vec<_>>())?;
    let scores = b.concat(&scores.iter().collect::<Vec<_>>(), 0)?;
    let mask: Option<Vec<bool>> = causal.then(|| crate::graph::causal_mask(heads, t));
    let mark = Mark::now(ctx);
    let probs = b.softmax(ctx, &scores, heads * t, t, mask.as_deref())?;
    let (on, off, _) = mark.since(ctx);
    let mut operands = Vec::with_capacity(heads);
    for hd in 0..heads {
        operands.push((b.slice(&probs, 0, hd * t..(hd + 1) * t)?, b.slice(v, 1, hd * dh..(hd + 1) * dh)?));
    }
    let outs = b.matmul_fixed_many(ctx, &operands.iter().map(|(x, y)| (x, y)).collect::<Vec<_>>())?;
    Ok((b.concat(&outs.iter().collect::<Vec<_>>(), 1)?, (on, off)))
}
