//! ONNX importer for CNNs: an `.onnx` file (as `torch.onnx.export` or the `onnx` helpers write
//! it) becomes a [`Graph`] and its [`Weights`].
//!
//! **Supported**: one image input `[N, C, H, W]` (the batch axis may be symbolic); `Conv`
//! (groups and dilations of 1, explicit or `VALID` padding); `BatchNormalization` right after a
//! `Conv`, folded into it (`W' = W·γ/√(σ²+ε)`, `b' = (b − μ)·γ/√(σ²+ε) + β`); `Relu`;
//! `MaxPool`, `AveragePool` (floor mode), `GlobalAveragePool`; `Flatten` (axis 1) and a
//! `Reshape` to `[N, −1]`; `Gemm` (α = β = 1, either `transB`), `MatMul` by a weight, and the
//! `Add` of a bias after it; `Add` of two activations (residual); `Concat` of images along
//! their channels (dense connections); `Identity`, `Dropout`;
//! `Constant`. Every other op is named, with its node, in one error before anything is built.
//! Weights are the graph's initializers (FLOAT, FLOAT16 or DOUBLE, raw or typed data);
//! external data files are refused.

use std::collections::BTreeMap;
use std::path::Path;

use prost::Message;

use crate::cnn::Window;
use crate::error::{NnError, Result};
use crate::graph::{Graph, Op, ValueId};
use crate::image::ImageModel;
use crate::onnx_proto::{AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, data_type};
use crate::weights::{FloatTensor, Weights};

const SUPPORTED: &[&str] = &[
    "Conv",
    "BatchNormalization",
    "Relu",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "Flatten",
    "Reshape",
    "Gemm",
    "MatMul",
    "Add",
    "Concat",
    "Identity",
    "Dropout",
    "Constant",
];

/// Reads and imports an `.onnx` file.
pub fn load_onnx(path: &Path) -> Result<ImageModel> {
    let bytes = std::fs::read(path).map_err(|e| NnError::io(path, e))?;
    // `folder/model.onnx` is named after its folder.
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let folder = path.parent().and_then(Path::file_name).map(|s| s.to_string_lossy().into_owned());
    let name = match folder {
        Some(f) if stem == "model" && !f.is_empty() => f,
        _ => stem,
    };
    import(&bytes, &name).map_err(|e| match e {
        NnError::Format { what, .. } => NnError::format(path, what),
        other => other,
    })
}

/// Imports the bytes of an ONNX model.
pub fn import(bytes: &[u8], name: &str) -> Result<ImageModel> {
    let bad = |what: String| NnError::Format { path: name.to_string(), what };
    let model = ModelProto::decode(bytes).map_err(|e| bad(format!("not an ONNX model: {e}")))?;
    let graph = model.graph.ok_or_else(|| bad("the model has no graph".into()))?;
    let unsupported: Vec<String> = graph
        .node
        .iter()
        .filter(|n| {
            !SUPPORTED.contains(&n.op_type.as_str()) || !(n.domain.is_empty() || n.domain == "ai.onnx")
        })
        .map(|n| format!("{} (node {:?})", n.op_type, n.name))
        .collect();
    if !unsupported.is_empty() {
        return Err(NnError::Unsupported(format!(
            "ONNX ops {}; supported: {}",
            unsupported.join(", "),
            SUPPORTED.join(", ")
        )));
    }
    Importer::new(&graph, name)?.run(&graph, name)
}

struct Importer {
    g: Graph,
    weights: Weights,
    /// Initializers and constants, by name (float data; integer tensors converted).
    consts: BTreeMap<String, FloatTensor>,
    /// The IR value of each activation name.
    vals: BTreeMap<String, ValueId>,
    /// How many nodes read each name.
    readers: BTreeMap<String, usize>,
    input: [usize; 3],
}

fn tensor_values(t: &TensorProto, what: &str) -> Result<FloatTensor> {
    let bad = |m: String| NnError::Invalid(format!("tensor {what}: {m}"));
    if t.data_location == 1 {
        return Err(NnError::Unsupported(format!("tensor {what} keeps its data in an external file")));
    }
    let shape: Vec<usize> = t
        .dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| bad(format!("dimension {d}"))))
        .collect::<Result<_>>()?;
    let raw = &t.raw_data;
    let data: Vec<f32> = match t.data_type {
        data_type::FLOAT if !raw.is_empty() => {
            raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
        }
        data_type::FLOAT => t.float_data.clone(),
        data_type::DOUBLE if !raw.is_empty() => raw
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f32)
            .collect(),
        data_type::DOUBLE => t.double_data.iter().map(|&v| v as f32).collect(),
        data_type::FLOAT16 if !raw.is_empty() => raw
            .chunks_exact(2)
            .map(|b| crate::weights::f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
            .collect(),
        data_type::FLOAT16 => t.int32_data.iter().map(|&v| crate::weights::f16_to_f32(v as u16)).collect(),
        data_type::INT64 if !raw.is_empty() => raw
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f32)
            .collect(),
        data_type::INT64 => t.int64_data.iter().map(|&v| v as f32).collect(),
        data_type::INT32 => t.int32_data.iter().map(|&v| v as f32).collect(),
        other => return Err(NnError::Unsupported(format!("tensor {what} of ONNX data type {other}"))),
    };
    FloatTensor::new(shape, data).map_err(|e| bad(e.to_string()))
}

fn attr<'a>(n: &'a NodeProto, name: &str) -> Option<&'a AttributeProto> {
    n.attribute.iter().find(|a| a.name == name)
}

fn attr_int(n: &NodeProto, name: &str, default: i64) -> i64 {
    attr(n, name).map_or(default, |a| a.i)
}

fn attr_ints(n: &NodeProto, name: &str) -> Option<Vec<usize>> {
    attr(n, name).map(|a| a.ints.iter().map(|&v| v.max(0) as usize).collect())
}

fn node_err(n: &NodeProto, what: impl std::fmt::Display) -> NnError {
    NnError::Unsupported(format!("{} node {:?}: {what}", n.op_type, n.name))
}

/// The window of a Conv or pooling node, given its kernel.
fn window(n: &NodeProto, kernel: [usize; 2]) -> Result<Window> {
    let two = |name: &str, default: usize| -> Result<[usize; 2]> {
        match attr_ints(n, name) {
            None => Ok([default; 2]),
            Some(v) if v.len() == 2 => Ok([v[0], v[1]]),
            Some(v) => Err(node_err(n, format!("{name} {v:?} (2-D only)"))),
        }
    };
    if two("dilations", 1)? != [1, 1] {
        return Err(node_err(n, "dilations other than 1"));
    }
    if attr_int(n, "ceil_mode", 0) != 0 {
        return Err(node_err(n, "ceil_mode"));
    }
    match attr(n, "auto_pad").map(|a| String::from_utf8_lossy(&a.s).into_owned()) {
        None => {}
        Some(p) if p == "NOTSET" || p == "VALID" => {}
        Some(p) => return Err(node_err(n, format!("auto_pad {p} (give explicit pads)"))),
    }
    let pad = match attr_ints(n, "pads") {
        None => [0; 4],
        Some(p) if p.len() == 4 => [p[0], p[1], p[2], p[3]],
        Some(p) => return Err(node_err(n, format!("pads {p:?}"))),
    };
    Ok(Window { kernel, stride: two("strides", 1)?, pad })
}

impl Importer {
    fn new(graph: &GraphProto, name: &str) -> Result<Self> {
        let bad = |what: String| NnError::Format { path: name.to_string(), what };
        let mut consts = BTreeMap::new();
        for t in &graph.initializer {
            consts.insert(t.name.clone(), tensor_values(t, &t.name)?);
        }
        let mut readers = BTreeMap::new();
        for n in &graph.node {
            for i in n.input.iter().filter(|i| !i.is_empty()) {
                *readers.entry(i.clone()).or_insert(0) += 1;
            }
        }
        for o in &graph.output {
            *readers.entry(o.name.clone()).or_insert(0) += 1;
        }
        let inputs: Vec<_> = graph.input.iter().filter(|i| !consts.contains_key(&i.name)).collect();
        let [input] = inputs[..] else {
            return Err(bad(format!(
                "{} graph inputs besides the weights; one image input expected",
                inputs.len()
            )));
        };
        let dims: Vec<Option<i64>> = input
            .r#type
            .as_ref()
            .and_then(|t| t.tensor_type.as_ref())
            .and_then(|t| t.shape.as_ref())
            .map(|s| s.dim.iter().map(|d| d.dim_value).collect())
            .unwrap_or_default();
        let [_, Some(c), Some(h), Some(w)] = dims[..] else {
            return Err(NnError::Unsupported(format!(
                "input {:?} of shape {dims:?}; an image input [N, C, H, W] with fixed C, H, W is expected",
                input.name
            )));
        };
        let dim = |d: i64| {
            usize::try_from(d).ok().filter(|&d| d > 0).ok_or_else(|| bad(format!("input dimension {d}")))
        };
        let shape = [dim(c)?, dim(h)?, dim(w)?];
        let mut g = Graph::default();
        g.set_scope("input");
        let v = g.push(Op::Image { channels: shape[0], height: shape[1], width: shape[2] }, &[]);
        let mut vals = BTreeMap::new();
        vals.insert(input.name.clone(), v);
        Ok(Importer { g, weights: Weights::new(), consts, vals, readers, input: shape })
    }

    fn act(&self, n: &NodeProto, k: usize) -> Result<ValueId> {
        let name = n.input.get(k).ok_or_else(|| node_err(n, format!("missing input {k}")))?;
        match self.vals.get(name) {
            Some(v) => Ok(*v),
            None if self.consts.contains_key(name) => {
                Err(node_err(n, format!("input {name:?} is a constant, an activation is expected")))
            }
            None => Err(NnError::Invalid(format!(
                "{} node {:?} reads {name:?}, which no earlier node makes",
                n.op_type, n.name
            ))),
        }
    }

    fn constant(&self, n: &NodeProto, k: usize) -> Result<&FloatTensor> {
        let name = n.input.get(k).ok_or_else(|| node_err(n, format!("missing input {k}")))?;
        self.consts
            .get(name)
            .ok_or_else(|| node_err(n, format!("input {name:?} must be a weight (an initializer)")))
    }

    fn shape(&self, v: ValueId) -> Result<Vec<usize>> {
        Ok(self.g.shapes(1)?.swap_remove(v))
    }

    fn add_weight(&mut self, name: &str, t: FloatTensor) -> String {
        let name = self.g.weight(name, &t.shape);
        self.weights.insert(name.clone(), t);
        name
    }

    fn output(&mut self, n: &NodeProto, v: ValueId) -> Result<()> {
        let name = n.output.first().ok_or_else(|| node_err(n, "no output"))?;
        self.vals.insert(name.clone(), v);
        Ok(())
    }

    fn run(mut self, graph: &GraphProto, name: &str) -> Result<ImageModel> {
        for (i, n) in graph.node.iter().enumerate() {
            let label =
                if n.name.is_empty() { format!("{}_{i}", n.op_type.to_lowercase()) } else { n.name.clone() };
            self.g.set_scope(&label);
            self.node(n, &label)?;
        }
        let out = graph.output.first().ok_or_else(|| NnError::Invalid("the graph has no output".into()))?;
        match self.vals.get(&out.name) {
            Some(v) if *v + 1 == self.g.nodes.len() => {}
            _ => {
                return Err(NnError::Unsupported(format!(
                    "the graph's output {:?} is not its last computed value",
                    out.name
                )));
            }
        }
        self.g.shapes(1)?;
        Ok(ImageModel {
            name: name.to_string(),
            graph: self.g,
            weights: self.weights,
            input: self.input,
            preprocess: None,
        })
    }

    fn node(&mut self, n: &NodeProto, label: &str) -> Result<()> {
        match n.op_type.as_str() {
            "Constant" => {
                let t = attr(n, "value")
                    .and_then(|a| a.t.as_ref())
                    .ok_or_else(|| node_err(n, "no tensor value"))?;
                let out = n.output.first().ok_or_else(|| node_err(n, "no output"))?;
                self.consts.insert(out.clone(), tensor_values(t, out)?);
            }
            "Identity" | "Dropout" => {
                let x = self.act(n, 0)?;
                self.output(n, x)?;
            }
            "Relu" => {
                let x = self.act(n, 0)?;
                let v = self.g.push(Op::Relu, &[x]);
                self.output(n, v)?;
            }
            "Conv" => self.conv(n, label)?,
            "BatchNormalization" => self.batch_norm(n)?,
            "MaxPool" | "AveragePool" => {
                let x = self.act(n, 0)?;
                let k = attr_ints(n, "kernel_shape").ok_or_else(|| node_err(n, "no kernel_shape"))?;
                let [kh, kw] = k[..] else { return Err(node_err(n, format!("kernel {k:?} (2-D only)"))) };
                if attr_int(n, "storage_order", 0) != 0 || n.output.len() > 1 {
                    return Err(node_err(n, "indices output or column-major storage"));
                }
                let window = window(n, [kh, kw])?;
                let op = if n.op_type == "MaxPool" {
                    Op::MaxPool(window)
                } else {
                    Op::AvgPool { window, count_pad: attr_int(n, "count_include_pad", 0) != 0 }
                };
                let v = self.g.push(op, &[x]);
                self.output(n, v)?;
            }
            "GlobalAveragePool" => {
                let x = self.act(n, 0)?;
                let s = self.shape(x)?;
                let [_, h, w, _] = s[..] else { return Err(node_err(n, format!("input of shape {s:?}"))) };
                let window = Window { kernel: [h, w], stride: [1, 1], pad: [0; 4] };
                let v = self.g.push(Op::AvgPool { window, count_pad: false }, &[x]);
                self.output(n, v)?;
            }
            "Flatten" => {
                let x = self.act(n, 0)?;
                if attr_int(n, "axis", 1) != 1 {
                    return Err(node_err(n, "axis other than 1"));
                }
                self.flatten(n, x)?;
            }
            "Reshape" => {
                let x = self.act(n, 0)?;
                let target: Vec<i64> = self.constant(n, 1)?.data.iter().map(|&v| v as i64).collect();
                let s = self.shape(x)?;
                let features: usize = s[1..].iter().product();
                // [0, -1], [0, F] (0 copies the batch axis) or [-1, F]: a flatten per image.
                let flat = match target[..] {
                    [0, f] => f == -1 || f == features as i64,
                    [-1, f] => f == features as i64,
                    _ => false,
                };
                if !flat {
                    return Err(node_err(
                        n,
                        format!(
                            "reshape to {target:?} (only a flatten per image, [0, -1] or [-1, features], is supported)"
                        ),
                    ));
                }
                self.flatten(n, x)?;
            }
            "Gemm" => {
                let x = self.act(n, 0)?;
                if attr(n, "alpha").is_some_and(|a| a.f != 1.0) || attr(n, "beta").is_some_and(|a| a.f != 1.0)
                {
                    return Err(node_err(n, "alpha or beta other than 1"));
                }
                if attr_int(n, "transA", 0) != 0 {
                    return Err(node_err(n, "transA"));
                }
                let w = self.constant(n, 1)?.clone();
                let w = if attr_int(n, "transB", 0) != 0 { w.transposed()? } else { w };
                let out = *w.shape.last().unwrap_or(&0);
                let bias = match n.input.get(2).filter(|s| !s.is_empty()) {
                    Some(_) => {
                        let b = self.constant(n, 2)?.clone();
                        if b.data.len() != out {
                            return Err(node_err(
                                n,
                                format!("bias of shape {:?} for {out} outputs", b.shape),
                            ));
                        }
                        Some(self.add_weight(&format!("{label}.bias"), FloatTensor::new(vec![out], b.data)?))
                    }
                    None => None,
                };
                let weight = self.add_weight(&format!("{label}.weight"), w);
                let v = self.g.push(Op::Linear { weight, bias }, &[x]);
                self.output(n, v)?;
            }
            "MatMul" => {
                let x = self.act(n, 0)?;
                let w = self.constant(n, 1)?.clone();
                let weight = self.add_weight(&format!("{label}.weight"), w);
                let v = self.g.push(Op::Linear { weight, bias: None }, &[x]);
                self.output(n, v)?;
            }
            "Add" => self.add(n, label)?,
            "Concat" => {
                // Channels of NCHW images (DenseNet's dense connections), two at a time.
                if attr_int(n, "axis", 0) != 1 || n.input.len() < 2 {
                    return Err(node_err(n, "a Concat other than of images along their channels"));
                }
                let mut v = self.act(n, 0)?;
                for k in 1..n.input.len() {
                    let next = self.act(n, k)?;
                    v = self.g.push(Op::ChannelConcat, &[v, next]);
                }
                self.output(n, v)?;
            }
            other => return Err(NnError::Unsupported(format!("ONNX op {other}"))),
        }
        Ok(())
    }

    fn flatten(&mut self, n: &NodeProto, x: ValueId) -> Result<()> {
        let v = match self.shape(x)?.len() {
            4 => self.g.push(Op::Flatten, &[x]),
            2 => x,
            _ => return Err(node_err(n, "flatten of a tensor that is neither an image nor a matrix")),
        };
        self.output(n, v)
    }

    fn conv(&mut self, n: &NodeProto, label: &str) -> Result<()> {
        let x = self.act(n, 0)?;
        if attr_int(n, "group", 1) != 1 {
            return Err(node_err(n, "grouped or depthwise convolution"));
        }
        let w = self.constant(n, 1)?.clone();
        let [_, _, kh, kw] = w.shape[..] else {
            return Err(node_err(n, format!("weight of shape {:?}", w.shape)));
        };
        if let Some(k) = attr_ints(n, "kernel_shape")
            && k != [kh, kw]
        {
            return Err(node_err(n, format!("kernel_shape {k:?} and weight {:?} disagree", w.shape)));
        }
        let bias = match n.input.get(2).filter(|s| !s.is_empty()) {
            Some(_) => Some(self.add_weight(&format!("{label}.bias"), self.constant(n, 2)?.clone())),
            None => None,
        };
        let weight = self.add_weight(&format!("{label}.weight"), crate::cnn::kernel_to_im2col(&w)?);
        let window = window(n, [kh, kw])?;
        let v = self.g.push(Op::Conv2d { weight, bias, window }, &[x]);
        self.output(n, v)
    }

    /// Folds a batch norm into the convolution before it.
    fn batch_norm(&mut self, n: &NodeProto) -> Result<()> {
        let x = self.act(n, 0)?;
        let input = &n.input[0];
        let Op::Conv2d { weight, bias, window } = self.g.nodes[x].op.clone() else {
            return Err(node_err(n, "a batch norm not right after a Conv (only folded ones are supported)"));
        };
        if self.readers.get(input).copied().unwrap_or(0) != 1 {
            return Err(node_err(n, "the Conv before it is also read elsewhere, so it cannot be folded"));
        }
        let eps = attr(n, "epsilon").map_or(1e-5, |a| f64::from(a.f));
        let [gamma, beta, mean, var] = [1, 2, 3, 4].map(|k| self.constant(n, k).map(|t| t.data.clone()));
        let (gamma, beta, mean, var) = (gamma?, beta?, mean?, var?);
        let w = self.weights.get_mut(&weight).ok_or_else(|| node_err(n, "conv weight missing"))?;
        let oc = *w.shape.last().unwrap_or(&0);
        if [&gamma, &beta, &mean, &var].iter().any(|v| v.len() != oc) {
            return Err(node_err(n, format!("statistics of a length other than the {oc} channels")));
        }
        let scale: Vec<f64> =
            (0..oc).map(|o| f64::from(gamma[o]) / (f64::from(var[o]) + eps).sqrt()).collect();
        for (i, v) in w.data.iter_mut().enumerate() {
            *v = (f64::from(*v) * scale[i % oc]) as f32;
        }
        let old_bias = match &bias {
            Some(b) => self.weights[b].data.clone(),
            None => vec![0.0; oc],
        };
        let new_bias: Vec<f32> = (0..oc)
            .map(|o| ((f64::from(old_bias[o]) - f64::from(mean[o])) * scale[o] + f64::from(beta[o])) as f32)
            .collect();
        let bias_name = bias.unwrap_or_else(|| format!("{weight}.folded_bias"));
        self.add_weight(&bias_name, FloatTensor::new(vec![oc], new_bias)?);
        self.g.nodes[x].op = Op::Conv2d { weight, bias: Some(bias_name), window };
        self.output(n, x)
    }

    /// `Add`: a residual (two activations), or the bias of the `MatMul` before it.
    fn add(&mut self, n: &NodeProto, label: &str) -> Result<()> {
        let is_const = |k: usize| n.input.get(k).is_some_and(|s| self.consts.contains_key(s));
        match (is_const(0), is_const(1)) {
            (false, false) => {
                let (a, b) = (self.act(n, 0)?, self.act(n, 1)?);
                let v = self.g.push(Op::Add, &[a, b]);
                self.output(n, v)
            }
            (true, true) => Err(node_err(n, "an Add of two constants")),
            (a_const, _) => {
                let (x, c) = if a_const {
                    (self.act(n, 1)?, self.constant(n, 0)?.clone())
                } else {
                    (self.act(n, 0)?, self.constant(n, 1)?.clone())
                };
                let src = &n.input[usize::from(a_const)];
                let Op::Linear { weight, bias: None } = self.g.nodes[x].op.clone() else {
                    return Err(node_err(n, "adding a constant to anything but a MatMul's output"));
                };
                let out = self.g.weights[&weight][1];
                if c.data.len() != out || self.readers.get(src).copied().unwrap_or(0) != 1 {
                    return Err(node_err(n, format!("a bias of shape {:?} for {out} outputs", c.shape)));
                }
                let bias = self.add_weight(&format!("{label}.bias"), FloatTensor::new(vec![out], c.data)?);
                self.g.nodes[x].op = Op::Linear { weight, bias: Some(bias) };
                self.output(n, x)
            }
        }
    }
}
