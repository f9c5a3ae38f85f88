//! The float reference executor: the graph in `f64`, for accuracy comparisons (its ops on the
//! walk every executor shares, `walk`).

use crate::cnn::{self, PadFill};
use crate::error::{NnError, Result};
use crate::graph::{GeluForm, Graph, Op};
use crate::input::Input;
use crate::walk::{At, Executor, walk};
use crate::weights::{FloatTensor, Weights};

/// A row-major matrix of `f64`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Mat {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Entries.
    pub data: Vec<f64>,
}

impl Mat {
    fn zeros(rows: usize, cols: usize) -> Self {
        Mat { rows, cols, data: vec![0.0; rows * cols] }
    }

    fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }
}

enum Value {
    Ids,
    Mat(Mat),
}

fn weight<'a>(w: &'a Weights, name: &str) -> Result<&'a FloatTensor> {
    w.get(name).ok_or_else(|| NnError::Invalid(format!("weight {name} is missing")))
}

fn mat(v: &Value) -> Result<&Mat> {
    match v {
        Value::Mat(m) => Ok(m),
        Value::Ids => Err(NnError::Invalid("token ids where a matrix is expected".into())),
    }
}

/// `x·W + b` for `W: [k, n]` (any tensor of `k·n` entries, row-major).
fn linear(x: &Mat, w: &FloatTensor, bias: Option<&FloatTensor>, name: &str) -> Result<Mat> {
    let n = *w.shape.last().unwrap_or(&0);
    let k = x.cols;
    if n == 0 || w.data.len() != k * n {
        return Err(NnError::Invalid(format!("{name}: input of width {k}, weight of shape {:?}", w.shape)));
    }
    let mut m = Mat::zeros(x.rows, n);
    for i in 0..x.rows {
        let out = &mut m.data[i * n..(i + 1) * n];
        for (kk, &xv) in x.row(i).iter().enumerate() {
            for (o, &wv) in out.iter_mut().zip(&w.data[kk * n..(kk + 1) * n]) {
                *o += xv * f64::from(wv);
            }
        }
        if let Some(b) = bias {
            out.iter_mut().zip(&b.data).for_each(|(o, &bv)| *o += f64::from(bv));
        }
    }
    Ok(m)
}

/// Runs `graph` on token ids with the given weights; returns the output matrix.
pub fn run_float(graph: &Graph, weights: &Weights, ids: &[u32]) -> Result<Mat> {
    run_float_on(graph, weights, Input::Tokens(ids))
}

/// Runs `graph` on the data owner's input; returns the output as a matrix (an image-valued
/// output has `B·H·W` rows of `C` channels).
pub fn run_float_on(graph: &Graph, weights: &Weights, data: Input<'_>) -> Result<Mat> {
    data.check(graph)?;
    let mut exec = Float { weights, data };
    let out = walk(&mut exec, graph, data.size(), graph.output()?)?;
    mat(&out).cloned()
}

/// The float executor's ops (`walk`).
struct Float<'a> {
    weights: &'a Weights,
    data: Input<'a>,
}

impl Executor for Float<'_> {
    type Value = Value;

    fn node(&mut self, at: &At<'_>, inputs: &[&Value]) -> Result<Value> {
        let (weights, data) = (self.weights, self.data);
        let ids: &[u32] = match data {
            Input::Tokens(ids) => ids,
            Input::Images(_) => &[],
        };
        let t = ids.len();
        let node = at.node;
        let input = |k: usize| mat(inputs[k]);
        Ok(match &node.op {
            Op::Tokens => Value::Ids,
            Op::Image { channels, height, width } => {
                let Input::Images(img) = data else { return Err(NnError::Invalid("images expected".into())) };
                let b = img.shape[0];
                let nhwc = cnn::gather(&img.data, &cnn::nchw_to_nhwc([b, *channels, *height, *width]), 0.0)?;
                Value::Mat(Mat {
                    rows: b * height * width,
                    cols: *channels,
                    data: nhwc.into_iter().map(f64::from).collect(),
                })
            }
            Op::Conv2d { weight: wn, bias, window } => {
                let shape = at.input_image(0)?;
                let (idx, [rows, cols]) = cnn::im2col(shape, window)?;
                let patches = Mat { rows, cols, data: cnn::gather(&input(0)?.data, &idx, 0.0)? };
                let bias = bias.as_ref().map(|b| weight(weights, b)).transpose()?;
                Value::Mat(linear(&patches, weight(weights, wn)?, bias, wn)?)
            }
            Op::MaxPool(window) | Op::AvgPool { window, .. } => {
                let shape = at.input_image(0)?;
                let is_max = matches!(node.op, Op::MaxPool(_));
                let fill = if is_max { PadFill::Repeat } else { PadFill::Zero };
                let (idx, [rows, k], counts) = cnn::windows(shape, window, fill)?;
                let win = cnn::gather(&input(0)?.data, &idx, 0.0)?;
                let count_pad = matches!(node.op, Op::AvgPool { count_pad: true, .. });
                let data: Vec<f64> = win
                    .chunks(k)
                    .zip(&counts)
                    .map(|(w, &c)| {
                        if is_max {
                            w.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                        } else {
                            w.iter().sum::<f64>() / if count_pad { k } else { c } as f64
                        }
                    })
                    .collect();
                let c = shape[3];
                Value::Mat(Mat { rows: rows / c, cols: c, data })
            }
            Op::Flatten => {
                let shape = at.input_image(0)?;
                let data = cnn::gather(&input(0)?.data, &cnn::flatten(shape), 0.0)?;
                Value::Mat(Mat { rows: shape[0], cols: data.len() / shape[0].max(1), data })
            }
            Op::Embedding { table } => {
                let w = weight(weights, table)?;
                let (v, h) = (w.shape[0], w.shape[1]);
                let mut m = Mat::zeros(t, h);
                for (i, &id) in ids.iter().enumerate() {
                    if id as usize >= v {
                        return Err(NnError::Invalid(format!("token id {id} outside the vocabulary of {v}")));
                    }
                    let src = &w.data[id as usize * h..(id as usize + 1) * h];
                    m.data[i * h..(i + 1) * h].iter_mut().zip(src).for_each(|(d, &s)| *d = f64::from(s));
                }
                Value::Mat(m)
            }
            Op::Positions { table } => {
                let w = weight(weights, table)?;
                let (h, t) = (w.shape[1], at.input_shape(0)[0]);
                if t > w.shape[0] {
                    return Err(NnError::Invalid(format!("{t} tokens, at most {} positions", w.shape[0])));
                }
                Value::Mat(Mat {
                    rows: t,
                    cols: h,
                    data: w.data[..t * h].iter().map(|&v| f64::from(v)).collect(),
                })
            }
            Op::RowBroadcast { table, row } => {
                let w = weight(weights, table)?;
                let h = w.shape[1];
                let r: Vec<f64> = w.data[row * h..(row + 1) * h].iter().map(|&v| f64::from(v)).collect();
                let rows = input(0)?.rows;
                Value::Mat(Mat { rows, cols: h, data: r.iter().copied().cycle().take(rows * h).collect() })
            }
            Op::Linear { weight: wn, bias } => {
                let bias = bias.as_ref().map(|b| weight(weights, b)).transpose()?;
                Value::Mat(linear(input(0)?, weight(weights, wn)?, bias, wn)?)
            }
            Op::ChannelConcat => {
                // Images are [B·H·W, C] matrices: the channels are the columns.
                let (a, b) = (input(0)?, input(1)?);
                if a.rows != b.rows {
                    return Err(NnError::Invalid("ChannelConcat of images of different sizes".into()));
                }
                let cols = a.cols + b.cols;
                let mut data = Vec::with_capacity(a.rows * cols);
                for r in 0..a.rows {
                    data.extend_from_slice(&a.data[r * a.cols..(r + 1) * a.cols]);
                    data.extend_from_slice(&b.data[r * b.cols..(r + 1) * b.cols]);
                }
                Value::Mat(Mat { rows: a.rows, cols, data })
            }
            Op::Add => {
                let (a, b) = (input(0)?, input(1)?);
                if (a.rows, a.cols) != (b.rows, b.cols) {
                    return Err(NnError::Invalid("Add of different shapes".into()));
                }
                Value::Mat(Mat {
                    rows: a.rows,
                    cols: a.cols,
                    data: a.data.iter().zip(&b.data).map(|(x, y)| x + y).collect(),
                })
            }
            Op::LayerNorm { gamma, beta, eps } => {
                let x = input(0)?;
                let (g, b) = (weight(weights, gamma)?, weight(weights, beta)?);
                let mut m = x.clone();
                for r in m.data.chunks_mut(x.cols) {
                    let mu = r.iter().sum::<f64>() / x.cols as f64;
                    let var = r.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / x.cols as f64;
                    let inv = 1.0 / (var + eps).sqrt();
                    for (j, v) in r.iter_mut().enumerate() {
                        *v = (*v - mu) * inv * f64::from(g.data[j]) + f64::from(b.data[j]);
                    }
                }
                Value::Mat(m)
            }
            Op::Attention { heads, causal } => {
                Value::Mat(attention(input(0)?, input(1)?, input(2)?, *heads, *causal)?)
            }
            Op::Gelu(form) => Value::Mat(map(input(0)?, |x| gelu(x, *form))),
            Op::Relu => Value::Mat(map(input(0)?, |x| x.max(0.0))),
            Op::MeanPool => {
                let x = input(0)?;
                let mut m = Mat::zeros(1, x.cols);
                for i in 0..x.rows {
                    m.data.iter_mut().zip(x.row(i)).for_each(|(d, v)| *d += v / x.rows as f64);
                }
                Value::Mat(m)
            }
            Op::L2Normalize => Value::Mat(l2_normalize(input(0)?)),
            Op::LastToken => {
                let x = input(0)?;
                Value::Mat(Mat { rows: 1, cols: x.cols, data: x.row(x.rows.saturating_sub(1)).to_vec() })
            }
            Op::FirstToken => {
                let x = input(0)?;
                Value::Mat(Mat { rows: 1, cols: x.cols, data: x.row(0).to_vec() })
            }
            // Channels-last images are already rows of channels.
            Op::ImageRows => Value::Mat(input(0)?.clone()),
            Op::PrependRow { table } => {
                let (x, w) = (input(0)?, weight(weights, table)?);
                let mut data: Vec<f64> = w.data.iter().map(|&v| f64::from(v)).collect();
                data.extend_from_slice(&x.data);
                Value::Mat(Mat { rows: x.rows + 1, cols: x.cols, data })
            }
            Op::TiedLogits { table } => {
                let (x, w) = (input(0)?, weight(weights, table)?);
                let (v, h) = (w.shape[0], x.cols);
                let mut m = Mat::zeros(x.rows, v);
                for i in 0..x.rows {
                    for j in 0..v {
                        let row = &w.data[j * h..(j + 1) * h];
                        m.data[i * v + j] = x.row(i).iter().zip(row).map(|(a, &b)| a * f64::from(b)).sum();
                    }
                }
                Value::Mat(m)
            }
        })
    }
}

fn map(x: &Mat, f: impl Fn(f64) -> f64) -> Mat {
    Mat { rows: x.rows, cols: x.cols, data: x.data.iter().map(|&v| f(v)).collect() }
}

/// Each row divided by its Euclidean norm (rows of norm 0 stay 0).
pub fn l2_normalize(x: &Mat) -> Mat {
    let mut m = x.clone();
    for r in m.data.chunks_mut(x.cols) {
        let n = r.iter().map(|v| v * v).sum::<f64>().sqrt();
        if n > 0.0 {
            r.iter_mut().for_each(|v| *v /= n);
        }
    }
    m
}

/// GELU in the given form.
pub fn gelu(x: f64, form: GeluForm) -> f64 {
    match form {
        GeluForm::Erf => 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)),
        GeluForm::Tanh => {
            0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
        }
    }
}

/// The error function (Abramowitz–Stegun 7.1.26 is too coarse for a reference; this is the
/// complementary-error Chebyshev fit of *Numerical Recipes*, relative error < 1.2e-7).
fn erf(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    if x >= 0.0 { 1.0 - erfc } else { erfc - 1.0 }
}

fn attention(q: &Mat, k: &Mat, v: &Mat, heads: usize, causal: bool) -> Result<Mat> {
    let (t, h) = (q.rows, q.cols);
    if heads == 0 || !h.is_multiple_of(heads) || (k.rows, k.cols) != (t, h) || (v.rows, v.cols) != (t, h) {
        return Err(NnError::Invalid(format!("attention of {heads} heads on {t}x{h}")));
    }
    let dh = h / heads;
    let mut out = Mat::zeros(t, h);
    for hd in 0..heads {
        let cols = hd * dh..(hd + 1) * dh;
        for i in 0..t {
            let seen = if causal { i + 1 } else { t };
            let s: Vec<f64> = (0..seen)
                .map(|j| q.row(i)[cols.clone()].iter().zip(&k.row(j)[cols.clone()]).map(|(a, b)| a * b).sum())
                .collect();
            let mx = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = s.iter().map(|x| (x - mx).exp()).collect();
            let z: f64 = e.iter().sum();
            for (j, p) in e.iter().enumerate() {
                for c in cols.clone() {
                    out.data[i * h + c] += p / z * v.data[j * h + c];
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_and_gelu() {
        assert!((erf(0.5) - 0.520_499_877_8).abs() < 2e-7);
        assert!((erf(-2.0) + 0.995_322_265).abs() < 2e-7);
        assert!((gelu(1.0, GeluForm::Erf) - 0.841_344_746).abs() < 1e-6);
        assert!((gelu(1.0, GeluForm::Tanh) - 0.841_191_990).abs() < 1e-6);
    }

    #[test]
    fn causal_attention_sees_only_the_past() {
        let q = Mat { rows: 2, cols: 2, data: vec![1.0, 0.0, 0.0, 1.0] };
        let v = Mat { rows: 2, cols: 2, data: vec![1.0, 2.0, 3.0, 4.0] };
        let a = attention(&q, &q, &v, 1, true).unwrap();
        assert_eq!(&a.data[..2], &[1.0, 2.0]);
        let full = attention(&q, &q, &v, 2, false).unwrap();
        assert!((full.data[0] - (1.0 * 1f64.exp() + 3.0) / (1f64.exp() + 1.0)).abs() < 1e-12);
    }
}
