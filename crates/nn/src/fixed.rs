//! The plaintext fixed-point executor for CNN graphs: the numbers the secure run computes,
//! without MPC, to debug numerics and to find where values would leave the ring.
//!
//! Same encoding as the secure executor (`Z_2^64`, `f` fractional bits, weights and inputs
//! rounded to nearest), same index maps ([`crate::cnn`]), and the arithmetic of the families'
//! CNN operations: a product or matrix product is exact in the ring, then truncated by `2^f`
//! (rounding down); ReLU, maxima and additions are exact; a mean multiplies the window's sum by
//! `⌊2^f/count⌉` and truncates (as `aegis`'s division by a public integer does). The secure run
//! agrees with it exactly on everything but the truncations, where `aegis`'s probabilistic
//! truncation may give one more unit in the last place (`2^-f`) per truncation, and
//! `mosformer`'s gives up to two.
//!
//! **Range report**: each node's largest magnitude is recorded, with products measured before
//! their truncation, in 128 bits; a node where a product or a value reaches `2^62` in the
//! ring (real `2^{62−2f}` for products, `2^{62−f}` for values: one bit below the sign, so sums
//! of two and the secure comparisons stay right) is listed as an overflow, naming the node and
//! its layer.

use serde::Serialize;

use crate::cnn::{self, PadFill};
use crate::error::{NnError, Result};
use crate::float::Mat;
use crate::graph::{Graph, Op};
use crate::input::Input;
use crate::weights::{FloatTensor, Weights};

/// A value leaving the safe range.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Overflow {
    /// The node.
    pub node: usize,
    /// Its operation.
    pub op: String,
    /// Its layer.
    pub scope: String,
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
    /// The raw output (ring elements as signed integers).
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

/// Runs a CNN graph in fixed point with `f` fractional bits (16 for the families' models).
pub fn run_fixed(graph: &Graph, weights: &Weights, data: Input<'_>, f: u32) -> Result<FixedRun> {
    let Input::Images(images) = data else {
        return Err(NnError::Unsupported("the fixed-point executor runs CNN graphs (image input)".into()));
    };
    data.check(graph)?;
    let shapes = graph.shapes(data.size())?;
    let w = |name: &String| -> Result<Vec<i64>> {
        let t: &FloatTensor =
            weights.get(name).ok_or_else(|| NnError::Invalid(format!("weight {name} is missing")))?;
        encode(&t.data, f, name)
    };
    let (product_limit, value_limit) = (1u128 << 62, 1u128 << 62);
    let mut values: Vec<Vec<i64>> = Vec::with_capacity(graph.nodes.len());
    let mut overflows = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let x = |k: usize| -> &Vec<i64> { &values[node.inputs[k]] };
        let image = |k: usize| -> Result<[usize; 4]> {
            <[usize; 4]>::try_from(shapes[node.inputs[k]].as_slice())
                .map_err(|_| NnError::Invalid(format!("node {i}: input is not an image")))
        };
        let add_bias = |mut y: Vec<i64>, bias: &Option<String>, n: usize| -> Result<Vec<i64>> {
            if let Some(b) = bias {
                let b = w(b)?;
                y.iter_mut().enumerate().for_each(|(e, v)| *v = v.wrapping_add(b[e % n]));
            }
            Ok(y)
        };
        let mut peak_product = 0u128;
        let v: Vec<i64> = match &node.op {
            Op::Image { channels, height, width } => {
                let b = images.shape[0];
                let nhwc =
                    cnn::gather(&images.data, &cnn::nchw_to_nhwc([b, *channels, *height, *width]), 0.0)?;
                encode(&nhwc, f, "image")?
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
                let [rows, k] = <[usize; 2]>::try_from(shapes[node.inputs[0]].as_slice())
                    .map_err(|_| NnError::Invalid(format!("node {i}: input is not a matrix")))?;
                let n = shapes[i][1];
                let (y, peak) = matmul_trunc(x(0), &w(weight)?, rows, k, n, f);
                peak_product = peak;
                add_bias(y, bias, n)?
            }
            Op::Relu => x(0).iter().map(|&v| v.max(0)).collect(),
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
            other => {
                return Err(NnError::Unsupported(format!(
                    "node {i} ({}): the fixed-point executor covers CNN layers",
                    other.name()
                )));
            }
        };
        let peak_value = v.iter().map(|x| u128::from(x.unsigned_abs())).max().unwrap_or(0);
        let scale = f64::from(1u32 << f);
        if peak_product >= product_limit {
            overflows.push(Overflow {
                node: i,
                op: node.op.name().to_string(),
                scope: node.scope.clone(),
                max_abs: peak_product as f64 / (scale * scale),
                limit: product_limit as f64 / (scale * scale),
            });
        } else if peak_value >= value_limit {
            overflows.push(Overflow {
                node: i,
                op: node.op.name().to_string(),
                scope: node.scope.clone(),
                max_abs: peak_value as f64 / scale,
                limit: value_limit as f64 / scale,
            });
        }
        values.push(v);
    }
    let last = graph.output()?;
    let raw = values.swap_remove(last);
    let cols = *shapes[last].last().unwrap_or(&1);
    let scale = f64::from(1u32 << f);
    let output =
        Mat { rows: raw.len() / cols.max(1), cols, data: raw.iter().map(|&v| v as f64 / scale).collect() };
    Ok(FixedRun { output, raw, overflows })
}
