//! Veil's model IR: a graph of tensor operations over named weights.
//!
//! Values are numbered by the node that produces them (node `i` produces value `i`), and a
//! node's inputs are earlier values, so the node list is already in execution order. Shapes are
//! 2-D `[rows, cols]` for activations (rows = tokens) except the token ids, `[T]`. The graph and
//! the weights' shapes are public (every party knows the architecture); the weights' values
//! belong to the model owner and the token ids to the data owner.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::{NnError, Result};

/// Index of a value (= of the node producing it).
pub type ValueId = usize;

/// Which GELU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum GeluForm {
    /// `x·Φ(x)` with the exact normal CDF (BERT's `gelu`).
    Erf,
    /// `x·σ(1.5958·(x + 0.044715·x³))` tanh form (GPT-2's `gelu_new`).
    Tanh,
}

/// An operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Op {
    /// The data owner's token ids, `[T]` (the graph's input).
    Tokens,
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
    /// Division by the Euclidean norm. Secure runs apply it to the revealed output, at the
    /// data owner (so it may only be the last node); the report says so.
    L2Normalize,
}

/// A node: an operation on earlier values.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, Default, Serialize)]
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

    /// Checks that inputs precede their nodes, weights are declared, `Tokens` is first and
    /// `L2Normalize` is last at most.
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
            if matches!(n.op, Op::Tokens) != (i == 0) {
                return Err(NnError::Invalid("the token input must be node 0, and only node 0".into()));
            }
            if matches!(n.op, Op::L2Normalize) && i + 1 != self.nodes.len() {
                return Err(NnError::Invalid("L2Normalize must be the last node".into()));
            }
        }
        Ok(())
    }
}

impl Op {
    /// The weights the operation reads.
    pub fn weights(&self) -> Vec<&String> {
        match self {
            Op::Embedding { table } | Op::Positions { table } | Op::RowBroadcast { table, .. } => vec![table],
            Op::Linear { weight, bias } => std::iter::once(weight).chain(bias).collect(),
            Op::LayerNorm { gamma, beta, .. } => vec![gamma, beta],
            _ => vec![],
        }
    }
}
