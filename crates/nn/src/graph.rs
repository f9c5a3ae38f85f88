//! Veil's model IR: a graph of tensor operations over named weights.
//!
//! Values are numbered by the node that produces them (node `i` produces value `i`), and a
//! node's inputs are earlier values, so the node list is already in execution order. The
//! graph's input is node 0: token ids `[T]` (transformers) or a batch of images (CNNs).
//! Transformer activations are `[T, H]` (rows = tokens); CNN activations are `[B, H, W, C]`,
//! channels last, so a convolution is an index map (im2col, [`crate::cnn`]) followed by one
//! matrix product, until a `Flatten` makes them `[B, features]`. [`Graph::shapes`] infers
//! every value's shape for an input size. The graph and the weights' shapes are public (every
//! party knows the architecture); the weights' values belong to the model owner and the input
//! to the data owner.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::cnn::Window;
use crate::error::{NnError, Result};

/// Index of a value (= of the node producing it).
pub type ValueId = usize;

/// Which GELU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GeluForm {
    /// `x·Φ(x)` with the exact normal CDF (BERT's `gelu`).
    Erf,
    /// `x·σ(1.5958·(x + 0.044715·x³))` tanh form (GPT-2's `gelu_new`).
    Tanh,
}

/// An operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// The data owner's token ids, `[T]` (a graph's input).
    Tokens,
    /// The data owner's images, `[B, height, width, channels]` (a graph's input; the data
    /// owner hands them in as `[B, channels, height, width]`, as PyTorch and ONNX do).
    Image {
        /// Channels.
        channels: usize,
        /// Height.
        height: usize,
        /// Width.
        width: usize,
    },
    /// 2-D convolution of `[B, H, W, C]` with `weight: [kh, kw, C, OC]` (im2col order) and
    /// `bias: [OC]`, zero padding → `[B, OH, OW, OC]`. Batch norm is folded in by the loader.
    Conv2d {
        /// Weight name.
        weight: String,
        /// Bias name.
        bias: Option<String>,
        /// Kernel, stride and padding (the kernel must match the weight).
        window: Window,
    },
    /// Maximum over each window, per channel (padding never wins).
    MaxPool(Window),
    /// Mean over each window, per channel; `count_pad`: padded positions count (as zeros) in
    /// the divisor, otherwise only the window's real entries do (ONNX `count_include_pad`).
    AvgPool {
        /// The windows.
        window: Window,
        /// Whether padding counts.
        count_pad: bool,
    },
    /// `[B, H, W, C]` → `[B, C·H·W]` in channel-major order (PyTorch's `flatten` of NCHW).
    Flatten,
    /// Rows of `table: [V, H]` at the ids of input 0 → `[T, H]`. Secure runs multiply the
    /// data owner's one-hot matrix by the secret table: the ids are never opened.
    Embedding {
        /// Weight name.
        table: String,
    },
    /// Rows `0 .. T` of `table: [P, H]` (absolute positions; `T` from input 0) → `[T, H]`.
    Positions {
        /// Weight name.
        table: String,
    },
    /// Row `row` of `table`, repeated for each row of input 0 → `[T, H]`.
    RowBroadcast {
        /// Weight name.
        table: String,
        /// The row.
        row: usize,
    },
    /// `x·W + b` with `W: [in, out]`, `b: [out]`.
    Linear {
        /// Weight name.
        weight: String,
        /// Bias name.
        bias: Option<String>,
    },
    /// Elementwise sum of inputs 0 and 1.
    Add,
    /// Images `[B, H, W, C0]` and `[B, H, W, C1]` joined along the channels →
    /// `[B, H, W, C0 + C1]` (DenseNet's dense connections, ONNX `Concat` on axis 1 of NCHW).
    ChannelConcat,
    /// LayerNorm over the last axis with `γ, β` (`eps` is below the fixed-point resolution in
    /// secure runs and only used by the float reference).
    LayerNorm {
        /// `γ` name.
        gamma: String,
        /// `β` name.
        beta: String,
        /// Variance epsilon.
        eps: f64,
    },
    /// Multi-head attention core on `q, k, v: [T, H]` (inputs 0, 1, 2): per head
    /// `softmax(q_h·k_hᵀ)·v_h`, heads concatenated. The `1/√d_head` scale is folded into the
    /// query projection by the loader.
    Attention {
        /// Heads.
        heads: usize,
        /// Causal mask (token `i` sees tokens `≤ i`).
        causal: bool,
    },
    /// GELU.
    Gelu(GeluForm),
    /// ReLU.
    Relu,
    /// Mean over rows: `[T, H] → [1, H]`.
    MeanPool,
    /// The last row of `[T, H]` → `[1, H]` (a decoder's next-token position).
    LastToken,
    /// The first row of `[T, H]` → `[1, H]` (a ViT's class token).
    FirstToken,
    /// One image `[1, H, W, C]` → `[H·W, C]`: its positions as rows in row-major order (a
    /// ViT's patch sequence after the patch convolution). Local in every executor.
    ImageRows,
    /// `table: [1, H]` on top of `[T, H]` → `[T + 1, H]` (a ViT's class token).
    PrependRow {
        /// Weight name.
        table: String,
    },
    /// `x · tableᵀ` for `x: [rows, H]` and `table: [V, H]` → `[rows, V]`: a language-model head
    /// tied to the token embedding (GPT-2), the table shared once for both uses.
    TiedLogits {
        /// Weight name (the embedding table).
        table: String,
    },
    /// Division by the Euclidean norm. Secure runs apply it to the revealed output, at the
    /// data owner (so it may only be the last node); the report says so.
    L2Normalize,
}

/// A node: an operation on earlier values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// The operation.
    pub op: Op,
    /// Its inputs.
    pub inputs: Vec<ValueId>,
    /// The part of the model it belongs to (`embeddings`, `encoder.layer.3`, `pooling`), for
    /// per-layer reports.
    pub scope: String,
}

/// A model graph with the shapes of its weights.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Graph {
    /// Nodes in execution order.
    pub nodes: Vec<Node>,
    /// Shapes of the weights the nodes name.
    pub weights: BTreeMap<String, Vec<usize>>,
    /// The scope given to nodes pushed from now on.
    #[serde(skip)]
    scope: String,
}

impl Graph {
    /// Appends a node; returns its value.
    pub fn push(&mut self, op: Op, inputs: &[ValueId]) -> ValueId {
        self.nodes.push(Node { op, inputs: inputs.to_vec(), scope: self.scope.clone() });
        self.nodes.len() - 1
    }

    /// Sets the scope of the nodes pushed next.
    pub fn set_scope(&mut self, scope: &str) {
        self.scope = scope.to_string();
    }

    /// Declares a weight's shape.
    pub fn weight(&mut self, name: &str, shape: &[usize]) -> String {
        self.weights.insert(name.to_string(), shape.to_vec());
        name.to_string()
    }

    /// The output value (the last node's).
    pub fn output(&self) -> Result<ValueId> {
        self.nodes.len().checked_sub(1).ok_or_else(|| NnError::Invalid("empty graph".into()))
    }

    /// Checks that inputs precede their nodes, weights are declared, the input (`Tokens` or
    /// `Image`) is node 0 and only node 0, and `L2Normalize` is last at most.
    pub fn validate(&self) -> Result<()> {
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(&bad) = n.inputs.iter().find(|&&v| v >= i) {
                return Err(NnError::Invalid(format!("node {i} reads value {bad}, not computed before it")));
            }
            for w in n.op.weights() {
                if !self.weights.contains_key(w) {
                    return Err(NnError::Invalid(format!("node {i} names undeclared weight {w}")));
                }
            }
            if n.op.is_input() != (i == 0) {
                return Err(NnError::Invalid(
                    "the input (tokens or images) must be node 0, and only node 0".into(),
                ));
            }
            if matches!(n.op, Op::L2Normalize) && i + 1 != self.nodes.len() {
                return Err(NnError::Invalid("L2Normalize must be the last node".into()));
            }
        }
        Ok(())
    }
}

/// The causal mask of `heads` score matrices `[t, t]` stacked by rows: entry `(i, j)` of each
/// is masked (`true`) when `j > i`, so token `i` sees tokens `≤ i`.
pub fn causal_mask(heads: usize, t: usize) -> Vec<bool> {
    (0..heads * t * t).map(|e| (e % t) > (e / t) % t).collect()
}

impl Graph {
    /// `x·W + b` with weights `{prefix}.weight: [inp, out]` and `{prefix}.bias: [out]`.
    pub fn linear(&mut self, prefix: &str, inp: usize, out: usize, x: ValueId) -> ValueId {
        let weight = self.weight(&format!("{prefix}.weight"), &[inp, out]);
        let bias = Some(self.weight(&format!("{prefix}.bias"), &[out]));
        self.push(Op::Linear { weight, bias }, &[x])
    }

    /// A pre-LN transformer block on `x: [T, h]` (GPT-2, ViT): `x + Attn(LN_1(x))·W_o`, then
    /// `y + GELU(LN_2(y)·W_1)·W_2`; the weights are `{name}.weight` and `{name}.bias` for the
    /// prefixes in `names`.
    pub fn pre_ln_block(&mut self, names: &PreLnNames, shape: &BlockShape, x: ValueId) -> ValueId {
        let (h, eps) = (shape.hidden, shape.eps);
        let a = self.layernorm(&names.ln_1, h, eps, x);
        let q = self.linear(&names.query, h, h, a);
        let k = self.linear(&names.key, h, h, a);
        let v = self.linear(&names.value, h, h, a);
        let att = self.push(Op::Attention { heads: shape.heads, causal: shape.causal }, &[q, k, v]);
        let o = self.linear(&names.out, h, h, att);
        let x = self.push(Op::Add, &[x, o]);
        let m = self.layernorm(&names.ln_2, h, eps, x);
        let up = self.linear(&names.up, h, shape.ffn, m);
        let act = self.push(Op::Gelu(shape.gelu), &[up]);
        let down = self.linear(&names.down, shape.ffn, h, act);
        self.push(Op::Add, &[x, down])
    }

    /// LayerNorm over rows of width `h` with `{prefix}.weight` (`γ`) and `{prefix}.bias` (`β`).
    pub fn layernorm(&mut self, prefix: &str, h: usize, eps: f64, x: ValueId) -> ValueId {
        let gamma = self.weight(&format!("{prefix}.weight"), &[h]);
        let beta = self.weight(&format!("{prefix}.bias"), &[h]);
        self.push(Op::LayerNorm { gamma, beta, eps }, &[x])
    }
}

/// The weight prefixes of a [`Graph::pre_ln_block`].
#[derive(Debug, Clone)]
pub struct PreLnNames {
    /// First LayerNorm.
    pub ln_1: String,
    /// Query projection.
    pub query: String,
    /// Key projection.
    pub key: String,
    /// Value projection.
    pub value: String,
    /// Attention output projection.
    pub out: String,
    /// Second LayerNorm.
    pub ln_2: String,
    /// Feed-forward up projection.
    pub up: String,
    /// Feed-forward down projection.
    pub down: String,
}

/// The sizes and forms of a [`Graph::pre_ln_block`].
#[derive(Debug, Clone, Copy)]
pub struct BlockShape {
    /// Width.
    pub hidden: usize,
    /// Attention heads.
    pub heads: usize,
    /// Feed-forward width.
    pub ffn: usize,
    /// Causal attention.
    pub causal: bool,
    /// The GELU.
    pub gelu: GeluForm,
    /// LayerNorm epsilon (float reference only).
    pub eps: f64,
}

impl Op {
    /// Whether the op is a graph input.
    pub fn is_input(&self) -> bool {
        matches!(self, Op::Tokens | Op::Image { .. })
    }

    /// Its name in reports and errors.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Tokens => "tokens",
            Op::Image { .. } => "image",
            Op::Embedding { .. } => "embedding",
            Op::Positions { .. } => "positions",
            Op::RowBroadcast { .. } => "row-broadcast",
            Op::Linear { .. } => "linear",
            Op::Conv2d { .. } => "conv2d",
            Op::MaxPool(_) => "max-pool",
            Op::AvgPool { .. } => "avg-pool",
            Op::Flatten => "flatten",
            Op::Add => "add",
            Op::ChannelConcat => "channel-concat",
            Op::LayerNorm { .. } => "layernorm",
            Op::Attention { .. } => "attention",
            Op::Gelu(_) => "gelu",
            Op::Relu => "relu",
            Op::MeanPool => "mean-pool",
            Op::L2Normalize => "l2-normalize",
            Op::LastToken => "last-token",
            Op::FirstToken => "first-token",
            Op::ImageRows => "image-rows",
            Op::PrependRow { .. } => "prepend-row",
            Op::TiedLogits { .. } => "tied-logits",
        }
    }

    /// Whether the op needs a family's transformer layers (GELU, softmax, LayerNorm).
    pub fn needs_transformer_layers(&self) -> bool {
        matches!(self, Op::Gelu(_) | Op::Attention { .. } | Op::LayerNorm { .. })
    }

    /// The weights the operation reads.
    pub fn weights(&self) -> Vec<&String> {
        match self {
            Op::Embedding { table }
            | Op::Positions { table }
            | Op::RowBroadcast { table, .. }
            | Op::PrependRow { table }
            | Op::TiedLogits { table } => vec![table],
            Op::Linear { weight, bias } | Op::Conv2d { weight, bias, .. } => {
                std::iter::once(weight).chain(bias).collect()
            }
            Op::LayerNorm { gamma, beta, .. } => vec![gamma, beta],
            _ => vec![],
        }
    }
}

impl Graph {
    /// The shape of every value for an input of `n` tokens (or `n` images), checking that each
    /// node fits its inputs and weights; the errors name the node.
    pub fn shapes(&self, n: usize) -> Result<Vec<Vec<usize>>> {
        self.validate()?;
        let mut shapes: Vec<Vec<usize>> = Vec::with_capacity(self.nodes.len());
        for (i, node) in self.nodes.iter().enumerate() {
            let bad = |what: String| NnError::Invalid(format!("node {i} ({}): {what}", node.op.name()));
            let input = |k: usize| -> Result<&Vec<usize>> {
                node.inputs.get(k).map(|&v| &shapes[v]).ok_or_else(|| bad(format!("needs input {k}")))
            };
            let w = |name: &String| &self.weights[name];
            let image = |k: usize| -> Result<[usize; 4]> {
                let s = input(k)?;
                <[usize; 4]>::try_from(s.as_slice())
                    .map_err(|_| bad(format!("input of shape {s:?}, not [B, H, W, C]")))
            };
            let matrix = |k: usize| -> Result<[usize; 2]> {
                let s = input(k)?;
                <[usize; 2]>::try_from(s.as_slice())
                    .map_err(|_| bad(format!("input of shape {s:?}, not a matrix")))
            };
            let table = |name: &String| -> Result<[usize; 2]> {
                <[usize; 2]>::try_from(w(name).as_slice()).map_err(|_| bad(format!("{name} is not a matrix")))
            };
            let vector = |name: &Option<String>, len: usize| -> Result<()> {
                match name {
                    Some(b) if w(b) != &vec![len] => {
                        Err(bad(format!("bias {b} of shape {:?}, not [{len}]", w(b))))
                    }
                    _ => Ok(()),
                }
            };
            let shape = match &node.op {
                Op::Tokens => vec![n],
                Op::Image { channels, height, width } => vec![n, *height, *width, *channels],
                Op::Embedding { table: t } => vec![input(0)?[0], table(t)?[1]],
                Op::Positions { table: t } => {
                    let [p, h] = table(t)?;
                    if input(0)?[0] > p {
                        return Err(bad(format!("{} tokens, at most {p} positions", input(0)?[0])));
                    }
                    vec![input(0)?[0], h]
                }
                Op::RowBroadcast { table: t, row } => {
                    let [rows, h] = table(t)?;
                    if *row >= rows {
                        return Err(bad(format!("row {row} of a table of {rows}")));
                    }
                    vec![input(0)?[0], h]
                }
                Op::Linear { weight, bias } => {
                    let ([rows, k], [wk, out]) = (matrix(0)?, table(weight)?);
                    if k != wk {
                        return Err(bad(format!("input of width {k}, weight {weight} is {wk}x{out}")));
                    }
                    vector(bias, out)?;
                    vec![rows, out]
                }
                Op::Conv2d { weight, bias, window } => {
                    let [b, h, wd, c] = image(0)?;
                    let ws = w(weight);
                    if ws.len() != 4 || ws[..3] != [window.kernel[0], window.kernel[1], c] {
                        return Err(bad(format!(
                            "weight {weight} of shape {ws:?}, expected [{}, {}, {c}, out]",
                            window.kernel[0], window.kernel[1]
                        )));
                    }
                    vector(bias, ws[3])?;
                    let (oh, ow) = window.output(h, wd).map_err(|e| bad(e.to_string()))?;
                    vec![b, oh, ow, ws[3]]
                }
                Op::MaxPool(window) | Op::AvgPool { window, .. } => {
                    let [b, h, wd, c] = image(0)?;
                    let (oh, ow) = window.output(h, wd).map_err(|e| bad(e.to_string()))?;
                    vec![b, oh, ow, c]
                }
                Op::Flatten => {
                    let [b, h, wd, c] = image(0)?;
                    vec![b, h * wd * c]
                }
                Op::Add => {
                    let (a, b) = (input(0)?, input(1)?);
                    if a != b {
                        return Err(bad(format!("shapes {a:?} and {b:?}")));
                    }
                    a.clone()
                }
                Op::ChannelConcat => {
                    let ([b, h, wd, c0], [b1, h1, w1, c1]) = (image(0)?, image(1)?);
                    if (b, h, wd) != (b1, h1, w1) {
                        return Err(bad(format!("images {b}×{h}×{wd} and {b1}×{h1}×{w1}")));
                    }
                    vec![b, h, wd, c0 + c1]
                }
                Op::LayerNorm { gamma, beta, .. } => {
                    let [rows, k] = matrix(0)?;
                    vector(&Some(gamma.clone()), k)?;
                    vector(&Some(beta.clone()), k)?;
                    vec![rows, k]
                }
                Op::Attention { heads, .. } => {
                    let [t, h] = matrix(0)?;
                    if *heads == 0
                        || !h.is_multiple_of(*heads)
                        || input(1)? != input(0)?
                        || input(2)? != input(0)?
                    {
                        return Err(bad(format!(
                            "{heads} heads on q, k, v of shapes {:?}, {:?}, {:?}",
                            input(0)?,
                            input(1)?,
                            input(2)?
                        )));
                    }
                    vec![t, h]
                }
                Op::Gelu(_) | Op::Relu => input(0)?.clone(),
                Op::MeanPool => vec![1, matrix(0)?[1]],
                Op::L2Normalize => matrix(0)?.to_vec(),
                Op::LastToken | Op::FirstToken => vec![1, matrix(0)?[1]],
                Op::ImageRows => {
                    let [b, h, wd, c] = image(0)?;
                    if b != 1 {
                        return Err(bad(format!("{b} images; this model takes one image per run")));
                    }
                    vec![h * wd, c]
                }
                Op::PrependRow { table: t } => {
                    let ([rows, h], [tr, th]) = (matrix(0)?, table(t)?);
                    if tr != 1 || th != h {
                        return Err(bad(format!("table {t} is {tr}x{th}, not 1x{h}")));
                    }
                    vec![rows + 1, h]
                }
                Op::TiedLogits { table: t } => {
                    let ([rows, h], [v, th]) = (matrix(0)?, table(t)?);
                    if h != th {
                        return Err(bad(format!("input of width {h}, table {t} is {v}x{th}")));
                    }
                    vec![rows, v]
                }
            };
            shapes.push(shape);
        }
        Ok(shapes)
    }
}
