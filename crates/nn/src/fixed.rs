//! The plaintext fixed-point executor: the numbers the secure run computes, without MPC, to
//! debug numerics and to find where values would leave the ring or a layer's valid range.
//!
//! Same encoding as the secure executor (`Z_2^64`, `f` fractional bits, weights and inputs
//! rounded to nearest), same index maps ([`crate::cnn`]), the same walk over the graph
//! (`walk`), and the
//! arithmetic of the family's operations: a product or matrix product is exact in the ring,
//! then truncated by `2^f` (rounding down); maxima and additions are exact; a mean multiplies
//! the window's sum by `⌊2^f/count⌉` and truncates (as a division by a public integer does);
//! an embedding lookup (the one-hot product) is exact. ReLU, GELU, softmax and LayerNorm come
//! from the family's [`FixedReference`]: its own tables, rings and precision plan in the clear
//! (`veil_mosformer::clear::MosformerReference` for transformers, [`ExactCnn`] for CNN
//! families, whose comparisons are exact). Attention is `softmax(q_h·k_hᵀ)·v_h` per head,
//! as the secure executor computes it. The secure run agrees with this exactly on everything
//! but the truncations, where `aegis`'s probabilistic truncation may give one more unit in the
//! last place (`2^-f`) per truncation, and `mosformer`'s (and its local downcasts) up to two;
//! through a transformer's LUTs such units can move a table index by one step.
//!
//! **Range report**: each node's largest magnitude is recorded, with products measured before
//! their truncation, in 128 bits; a node where a product or a value reaches `2^62` in the
//! ring (real `2^{62−2f}` for products, `2^{62−f}` for values: one bit below the sign, so sums
//! of two and the secure comparisons stay right) is listed as an overflow, naming the node and
//! its layer; so is a layer whose input leaves the range its approximation holds on (the
//! family's [`FixedReference`] says which: e.g. `mosformer`'s GELU needs `|x| < 512`).

use serde::Serialize;

use crate::cnn::{self, PadFill};
use crate::error::{NnError, Result};
use crate::float::Mat;
use crate::graph::{Graph, Node, Op};
use crate::input::Input;
use crate::walk::{At, Executor, walk};
use crate::weights::{FloatTensor, Weights};
use veil_mpc::reference::{Checked, FixedReference};

pub use veil_mpc::reference::ExactCnn;

/// A value leaving the safe range.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Overflow {
    /// The node.
    pub node: usize,
    /// Its operation.
    pub op: String,
    /// Its layer.
    pub scope: String,
    /// What left the range: `product`, `value`, or the layer's own limit (e.g. `GELU input`).
    pub what: String,
    /// The largest magnitude reached, as a real number (products: before truncation, in
    /// units of `2^-2f`, reported here divided by `2^2f`).
    pub max_abs: f64,
    /// The bound it reached, as a real number.
    pub limit: f64,
}

/// The fixed-point run's result.
#[derive(Debug, Clone, Serialize)]
pub struct FixedRun {
    /// The output, decoded.
    pub output: Mat,
    /// The raw output (ring elements as signed integers; before the final `L2Normalize`,
    /// which is applied to the decoded output, as the data owner does in a secure run).
    pub raw: Vec<i64>,
    /// Nodes whose values left the safe range (empty when the run is sound).
    pub overflows: Vec<Overflow>,
}

/// The fixed-point encoding every executor uses: `round(v·2^f)`, refusing values the ring
/// cannot hold (`|v| ≥ 2^{62−f}`, which leaves a bit for the sum of two encodings).
pub(crate) fn encode(data: &[f32], f: u32, what: &str) -> Result<Vec<i64>> {
    let scale = f64::from(1u32 << f);
    data.iter()
        .enumerate()
        .map(|(i, &v)| {
            let x = f64::from(v) * scale;
            if !x.is_finite() || x.abs() >= 2f64.powi(62) {
                return Err(NnError::Range(format!(
                    "{what}[{i}] = {v} does not fit {f} fractional bits in 64-bit shares"
                )));
            }
            Ok(x.round() as i64)
        })
        .collect()
}

/// `x·W` for `x: [rows, k]`, `W: [k, n]`, exact in 128 bits, then truncated by `2^f`; also the
/// largest magnitude before the truncation.
fn matmul_trunc(x: &[i64], w: &[i64], rows: usize, k: usize, n: usize, f: u32) -> (Vec<i64>, u128) {
    let mut out = vec![0i64; rows * n];
    let mut peak = 0u128;
    for i in 0..rows {
        for j in 0..n {
            let mut s = 0i128;
            for t in 0..k {
                s += i128::from(x[i * k + t]) * i128::from(w[t * n + j]);
            }
            peak = peak.max(s.unsigned_abs());
            out[i * n + j] = (s >> f) as i64;
        }
    }
    (out, peak)
}

/// The columns `hd·dh .. (hd+1)·dh` of `[rows, width]`, transposed when `transposed`.
fn head(x: &[i64], rows: usize, width: usize, hd: usize, dh: usize, transposed: bool) -> Vec<i64> {
    if transposed {
        (0..dh * rows).map(|e| x[(e % rows) * width + hd * dh + e / rows]).collect()
    } else {
        (0..rows * dh).map(|e| x[(e / dh) * width + hd * dh + e % dh]).collect()
    }
}

/// `softmax(q_h·k_hᵀ)·v_h` per head, heads side by side; also the largest product.
fn attention(
    reference: &dyn FixedReference,
    [q, k, v]: [&[i64]; 3],
    [t, h]: [usize; 2],
    heads: usize,
    causal: bool,
) -> Result<(Checked, u128)> {
    if heads == 0 || !h.is_multiple_of(heads) {
        return Err(NnError::Invalid(format!("{heads} heads on width {h}")));
    }
    let (dh, f) = (h / heads, reference.frac_bits());
    let mut peak = 0u128;
    let mut scores = Vec::with_capacity(heads * t * t);
    for hd in 0..heads {
        let (s, p) = matmul_trunc(&head(q, t, h, hd, dh, false), &head(k, t, h, hd, dh, true), t, dh, t, f);
        scores.extend(s);
        peak = peak.max(p);
    }
    let mask: Option<Vec<bool>> = causal.then(|| crate::graph::causal_mask(heads, t));
    let probs = reference
        .softmax(&scores, heads * t, t, mask.as_deref())
        .ok_or_else(|| NnError::Unsupported("attention needs a family with softmax".into()))?;
    let mut out = vec![0i64; t * h];
    for hd in 0..heads {
        let p_h = &probs.values[hd * t * t..(hd + 1) * t * t];
        let (o, p) = matmul_trunc(p_h, &head(v, t, h, hd, dh, false), t, t, dh, f);
        peak = peak.max(p);
        for (e, val) in o.into_iter().enumerate() {
            out[(e / dh) * h + hd * dh + e % dh] = val;
        }
    }
    Ok((Checked { values: out, excess: probs.excess }, peak))
}

/// Runs `graph` in fixed point with the family's arithmetic (`reference`; its fractional bits,
/// 16 for the families' models).
pub fn run_fixed(
    graph: &Graph,
    weights: &Weights,
    data: Input<'_>,
    reference: &dyn FixedReference,
) -> Result<FixedRun> {
    data.check(graph)?;
    let f = reference.frac_bits();
    let last = graph.output()?;
    let mut exec = Fixed { graph, weights, data, reference, overflows: Vec::new() };
    let raw = walk(&mut exec, graph, data.size(), last)?;
    let scale = f64::from(1u32 << f);
    let cols = *graph.shapes(data.size())?[last].last().unwrap_or(&1);
    let mut output =
        Mat { rows: raw.len() / cols.max(1), cols, data: raw.iter().map(|&v| v as f64 / scale).collect() };
    if matches!(graph.nodes[last].op, Op::L2Normalize) {
        output = crate::float::l2_normalize(&output);
    }
    Ok(FixedRun { output, raw, overflows: exec.overflows })
}

/// The fixed-point executor's ops (`walk`), with the overflows found so far.
struct Fixed<'a> {
    graph: &'a Graph,
    weights: &'a Weights,
    data: Input<'a>,
    reference: &'a dyn FixedReference,
    overflows: Vec<Overflow>,
}

impl Fixed<'_> {
    /// Weight `name` in fixed point, checked against the graph's shape.
    fn weight(&self, name: &String) -> Result<Vec<i64>> {
        let t: &FloatTensor =
            self.weights.get(name).ok_or_else(|| NnError::Invalid(format!("weight {name} is missing")))?;
        if t.shape != self.graph.weights[name] {
            return Err(NnError::Invalid(format!(
                "weight {name} has shape {:?}, the graph {:?}",
                t.shape, self.graph.weights[name]
            )));
        }
        encode(&t.data, self.reference.frac_bits(), name)
    }
}

impl Executor for Fixed<'_> {
    type Value = Vec<i64>;

    /// GELU, softmax (attention) and LayerNorm where the family's clear arithmetic lacks them.
    fn lacks(&self, node: &Node) -> Option<String> {
        let has = match &node.op {
            Op::Gelu(_) => self.reference.gelu(&[0]).is_some(),
            Op::Attention { .. } => self.reference.softmax(&[0], 1, 1, None).is_some(),
            Op::LayerNorm { .. } => self.reference.layernorm(&[0], &[0], &[0], 1, 1).is_some(),
            _ => true,
        };
        (!has).then(|| "the family has no such layer (its fixed-point reference lacks it)".to_string())
    }

    fn node(&mut self, at: &At<'_>, inputs: &[&Vec<i64>]) -> Result<Vec<i64>> {
        let (graph, data, reference) = (self.graph, self.data, self.reference);
        let (i, node, shapes) = (at.index, at.node, at.shapes);
        let f = reference.frac_bits();
        let n = data.size();
        let (product_limit, value_limit) = (1u128 << 62, 1u128 << 62);
        let scale = f64::from(1u32 << f);
        let w = |name: &String| self.weight(name);
        let x = |k: usize| -> &Vec<i64> { inputs[k] };
        let image = |k: usize| at.input_image(k);
        let matrix = |k: usize| at.input_matrix(k);
        let add_bias = |mut y: Vec<i64>, bias: &Option<String>, n: usize| -> Result<Vec<i64>> {
            if let Some(b) = bias {
                let b = w(b)?;
                y.iter_mut().enumerate().for_each(|(e, v)| *v = v.wrapping_add(b[e % n]));
            }
            Ok(y)
        };
        let missing = || {
            NnError::Unsupported(format!(
                "node {i} ({}): the family has no such layer (its fixed-point reference lacks it)",
                node.op.name()
            ))
        };
        let mut peak_product = 0u128;
        let mut excess = None;
        let mut layer = |c: Checked| {
            excess = c.excess;
            c.values
        };
        let v: Vec<i64> = match &node.op {
            Op::Tokens => Vec::new(),
            Op::Image { channels, height, width } => {
                let Input::Images(images) = data else { return Err(NnError::Invalid("no images".into())) };
                let b = images.shape[0];
                let nhwc =
                    cnn::gather(&images.data, &cnn::nchw_to_nhwc([b, *channels, *height, *width]), 0.0)?;
                encode(&nhwc, f, "image")?
            }
            Op::Embedding { table } => {
                // The one-hot row (2^f at the id) times the table, truncated by 2^f: the row.
                let Input::Tokens(ids) = data else { return Err(NnError::Invalid("no tokens".into())) };
                let [vocab, h] = <[usize; 2]>::try_from(graph.weights[table].as_slice())
                    .map_err(|_| NnError::Invalid(format!("embedding {table} is not a matrix")))?;
                let t = w(table)?;
                peak_product = t.iter().map(|v| u128::from(v.unsigned_abs()) << f).max().unwrap_or(0);
                let mut rows = Vec::with_capacity(ids.len() * h);
                for &id in ids {
                    let id = id as usize;
                    if id >= vocab {
                        return Err(NnError::Invalid(format!(
                            "token id {id} outside the vocabulary of {vocab}"
                        )));
                    }
                    rows.extend_from_slice(&t[id * h..(id + 1) * h]);
                }
                rows
            }
            Op::Positions { table } => {
                let t = w(table)?;
                t[..shapes[i].iter().product::<usize>()].to_vec()
            }
            Op::RowBroadcast { table, row } => {
                let (t, h) = (w(table)?, shapes[i][1]);
                t[row * h..(row + 1) * h].iter().copied().cycle().take(n * h).collect()
            }
            Op::Conv2d { weight, bias, window } => {
                let (idx, [rows, cols]) = cnn::im2col(image(0)?, window)?;
                let patches = cnn::gather(x(0), &idx, 0)?;
                let n = shapes[i][3];
                let (y, peak) = matmul_trunc(&patches, &w(weight)?, rows, cols, n, f);
                peak_product = peak;
                add_bias(y, bias, n)?
            }
            Op::Linear { weight, bias } => {
                let [rows, k] = matrix(0)?;
                let n = shapes[i][1];
                let (y, peak) = matmul_trunc(x(0), &w(weight)?, rows, k, n, f);
                peak_product = peak;
                add_bias(y, bias, n)?
            }
            Op::Relu => layer(reference.relu(x(0))),
            Op::Gelu(_) => layer(reference.gelu(x(0)).ok_or_else(missing)?),
            Op::LayerNorm { gamma, beta, .. } => {
                let [rows, k] = matrix(0)?;
                layer(reference.layernorm(x(0), &w(gamma)?, &w(beta)?, rows, k).ok_or_else(missing)?)
            }
            Op::Attention { heads, causal } => {
                let (c, peak) = attention(reference, [x(0), x(1), x(2)], matrix(0)?, *heads, *causal)?;
                peak_product = peak;
                layer(c)
            }
            Op::MeanPool => {
                let [rows, k] = matrix(0)?;
                (0..k)
                    .map(|c| {
                        (0..rows).fold(0i64, |a, r| a.wrapping_add(x(0)[r * k + c])).div_euclid(rows as i64)
                    })
                    .collect()
            }
            Op::L2Normalize => x(0).clone(),
            Op::LastToken => {
                let [rows, k] = matrix(0)?;
                x(0)[(rows.saturating_sub(1)) * k..rows * k].to_vec()
            }
            Op::FirstToken => x(0)[..matrix(0)?[1]].to_vec(),
            Op::ImageRows => x(0).clone(),
            Op::PrependRow { table } => {
                let mut v = w(table)?;
                v.extend_from_slice(x(0));
                v
            }
            Op::TiedLogits { table } => {
                let ([rows, h], v) = (matrix(0)?, graph.weights[table][0]);
                let t = w(table)?;
                let tt: Vec<i64> = (0..h * v).map(|e| t[(e % v) * h + e / v]).collect();
                let (y, peak) = matmul_trunc(x(0), &tt, rows, h, v, f);
                peak_product = peak;
                y
            }
            Op::MaxPool(window) => {
                let (idx, [_, k], _) = cnn::windows(image(0)?, window, PadFill::Repeat)?;
                cnn::gather(x(0), &idx, 0)?.chunks(k).map(|r| r.iter().copied().max().unwrap_or(0)).collect()
            }
            Op::AvgPool { window, count_pad } => {
                let (idx, [_, k], counts) = cnn::windows(image(0)?, window, PadFill::Zero)?;
                let win = cnn::gather(x(0), &idx, 0)?;
                let uniform = *count_pad || counts.iter().all(|&c| c == k);
                win.chunks(k)
                    .zip(&counts)
                    .map(|(r, &c)| {
                        let d = if uniform { k } else { c };
                        let inv = ((1u64 << f) as f64 / d as f64).round() as i128;
                        let s = r.iter().map(|&v| i128::from(v)).sum::<i128>() * inv;
                        peak_product = peak_product.max(s.unsigned_abs());
                        (s >> f) as i64
                    })
                    .collect()
            }
            Op::Flatten => cnn::gather(x(0), &cnn::flatten(image(0)?), 0)?,
            Op::Add => x(0).iter().zip(x(1)).map(|(a, b)| a.wrapping_add(*b)).collect(),
            Op::ChannelConcat => {
                let (c0, c1) = (image(0)?[3], image(1)?[3]);
                x(0).chunks(c0.max(1))
                    .zip(x(1).chunks(c1.max(1)))
                    .flat_map(|(a, b)| a.iter().chain(b).copied())
                    .collect()
            }
        };
        let peak_value = v.iter().map(|x| u128::from(x.unsigned_abs())).max().unwrap_or(0);
        let found = |what: &str, max_abs: f64, limit: f64| Overflow {
            node: i,
            op: node.op.name().to_string(),
            scope: node.scope.clone(),
            what: what.into(),
            max_abs,
            limit,
        };
        if peak_product >= product_limit {
            let s2 = scale * scale;
            self.overflows.push(found("product", peak_product as f64 / s2, product_limit as f64 / s2));
        } else if peak_value >= value_limit {
            self.overflows.push(found("value", peak_value as f64 / scale, value_limit as f64 / scale));
        } else if let Some(e) = excess {
            self.overflows.push(found(&e.what, e.value, e.limit));
        }
        Ok(v)
    }
}
