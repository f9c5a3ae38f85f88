//! Vision Transformers from a Hugging Face folder: `config.json` (`model_type: "vit"`),
//! `model.safetensors`, and optionally `preprocessor_config.json` (the normalization).
//!
//! The graph is the encoder of *An Image is Worth 16x16 Words: Transformers for Image
//! Recognition at Scale*: the image cut into `P×P` patches, each projected to the width `D` (a
//! convolution with kernel and stride `P`, whose output positions become rows:
//! [`Op::ImageRows`]), a learned class token on top ([`Op::PrependRow`]), learned position
//! embeddings added, then per block `x + Attn(LN_before(x))·W_o` (bidirectional attention) and
//! `x + GELU(LN_after(x)·W_1)·W_2`, a final LayerNorm, and the class token's row
//! ([`Op::FirstToken`]). `ViTForImageClassification` adds the linear classifier on that row
//! (output: `[1, labels]` logits); a bare `ViTModel` outputs the row itself (`[1, D]`; its
//! pooler is not part of the graph). One image per run.
//!
//! Load-time changes, exact in real arithmetic: linear weights transposed to `[in, out]`, the
//! attention scale `1/√d_head` multiplied into the query weights and bias, the patch kernel
//! reordered to im2col order, the class token and position table stripped of their batch
//! axis. Tensor names are read with or without the `vit.` prefix.

use std::path::Path;

use crate::bert::{check_heads, gelu_form, positive, read_config, read_json};
use crate::error::{NnError, Result};
use crate::graph::{BlockShape, GeluForm, Graph, Op, PreLnNames};
use crate::image::{ImageModel, Preprocess};
use crate::weights::{FloatTensor, Weights, read_safetensors};

/// The hyper-parameters of a ViT.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VitConfig {
    /// Width `D` (`hidden_size`).
    pub hidden: usize,
    /// Attention heads.
    pub heads: usize,
    /// Blocks.
    pub layers: usize,
    /// Feed-forward width (`intermediate_size`).
    pub ffn: usize,
    /// GELU form (`hidden_act`).
    pub gelu: GeluForm,
    /// LayerNorm epsilon.
    pub eps: f64,
    /// Image side (`image_size`; square images).
    pub image: usize,
    /// Patch side (`patch_size`).
    pub patch: usize,
    /// Image channels (`num_channels`).
    pub channels: usize,
    /// Classes of the classifier head, if the model has one (`ViTForImageClassification`).
    pub labels: Option<usize>,
}

impl VitConfig {
    /// Reads `config.json`.
    pub fn from_file(path: &Path) -> Result<Self> {
        let v = read_config(path, "vit")?;
        let num = |k: &str| positive(&v, k, path);
        let act = v["hidden_act"].as_str().unwrap_or("gelu");
        let gelu = gelu_form(act)
            .ok_or_else(|| NnError::Unsupported(format!("{}: hidden_act {act:?}", path.display())))?;
        if v["qkv_bias"].as_bool() == Some(false) {
            return Err(NnError::Unsupported(format!(
                "{}: attention without biases (qkv_bias)",
                path.display()
            )));
        }
        let classifier = v["architectures"].as_array().is_some_and(|a| {
            a.iter().any(|s| s.as_str().is_some_and(|s| s.ends_with("ForImageClassification")))
        });
        let labels = if !classifier {
            None
        } else if let Some(m) = v["id2label"].as_object().filter(|m| !m.is_empty()) {
            Some(m.len())
        } else {
            Some(num("num_labels")?)
        };
        let c = VitConfig {
            hidden: num("hidden_size")?,
            heads: num("num_attention_heads")?,
            layers: num("num_hidden_layers")?,
            ffn: num("intermediate_size")?,
            gelu,
            eps: v["layer_norm_eps"].as_f64().unwrap_or(1e-12),
            image: num("image_size")?,
            patch: num("patch_size")?,
            channels: if v["num_channels"].is_null() { 3 } else { num("num_channels")? },
            labels,
        };
        check_heads(path, c.heads, c.hidden, "hidden_size")?;
        if !c.image.is_multiple_of(c.patch) {
            return Err(NnError::format(
                path,
                format!("patch_size {} does not divide image_size {}", c.patch, c.image),
            ));
        }
        Ok(c)
    }

    /// Patches per image.
    pub fn patches(&self) -> usize {
        (self.image / self.patch).pow(2)
    }
}

/// The encoder graph of `c`.
pub fn vit_graph(c: &VitConfig) -> Graph {
    let mut g = Graph::default();
    let (h, p) = (c.hidden, c.patch);
    g.set_scope("embeddings");
    let image = g.push(Op::Image { channels: c.channels, height: c.image, width: c.image }, &[]);
    let weight = g.weight("embeddings.patch_embeddings.projection.weight", &[p, p, c.channels, h]);
    let bias = Some(g.weight("embeddings.patch_embeddings.projection.bias", &[h]));
    let window = crate::cnn::Window::square(p, p, 0);
    let patches = g.push(Op::Conv2d { weight, bias, window }, &[image]);
    let rows = g.push(Op::ImageRows, &[patches]);
    let table = g.weight("embeddings.cls_token", &[1, h]);
    let tokens = g.push(Op::PrependRow { table }, &[rows]);
    let table = g.weight("embeddings.position_embeddings", &[c.patches() + 1, h]);
    let pos = g.push(Op::Positions { table }, &[tokens]);
    let mut x = g.push(Op::Add, &[tokens, pos]);
    let shape = BlockShape { hidden: h, heads: c.heads, ffn: c.ffn, causal: false, gelu: c.gelu, eps: c.eps };
    for i in 0..c.layers {
        let l = format!("encoder.layer.{i}");
        g.set_scope(&l);
        let name = |s: &str| format!("{l}.{s}");
        let names = PreLnNames {
            ln_1: name("layernorm_before"),
            query: name("attention.attention.query"),
            key: name("attention.attention.key"),
            value: name("attention.attention.value"),
            out: name("attention.output.dense"),
            ln_2: name("layernorm_after"),
            up: name("intermediate.dense"),
            down: name("output.dense"),
        };
        x = g.pre_ln_block(&names, &shape, x);
    }
    g.set_scope("head");
    let x = g.layernorm("layernorm", h, c.eps, x);
    let cls = g.push(Op::FirstToken, &[x]);
    if let Some(labels) = c.labels {
        g.linear("classifier", h, labels, cls);
    }
    g
}

/// Loads a Hugging Face ViT folder; the weights only if `with_weights` (the model owner).
pub fn load_hf(dir: &Path, with_weights: bool) -> Result<ImageModel> {
    let config = VitConfig::from_file(&dir.join("config.json"))?;
    let graph = vit_graph(&config);
    let weights = if with_weights {
        graph_weights(&dir.join("model.safetensors"), &graph, &config)?
    } else {
        Weights::new()
    };
    let proc = dir.join("preprocessor_config.json");
    let preprocess = if proc.exists() { read_preprocess(&proc, config.channels)? } else { None };
    Ok(ImageModel {
        name: crate::bert::model_name(dir)?,
        graph,
        weights,
        input: [config.channels, config.image, config.image],
        preprocess,
    })
}

/// The normalization of `preprocessor_config.json` (`do_rescale`/`rescale_factor`,
/// `do_normalize`/`image_mean`/`image_std`), or `None` when it does neither.
fn read_preprocess(path: &Path, channels: usize) -> Result<Option<Preprocess>> {
    let v = read_json(path)?;
    let on = |k: &str| v[k].as_bool().unwrap_or(true);
    let scale =
        if on("do_rescale") { v["rescale_factor"].as_f64().unwrap_or(1.0 / 255.0) as f32 } else { 1.0 };
    let per_channel = |k: &str, default: f32| -> Result<Vec<f32>> {
        if !on("do_normalize") {
            return Ok(vec![default; channels]);
        }
        let list: Vec<f32> = match &v[k] {
            serde_json::Value::Null => vec![0.5; channels],
            serde_json::Value::Array(a) => a
                .iter()
                .map(|x| x.as_f64().map(|x| x as f32))
                .collect::<Option<_>>()
                .ok_or_else(|| NnError::format(path, format!("{k} is not a list of numbers")))?,
            serde_json::Value::Number(n) => vec![n.as_f64().unwrap_or(0.5) as f32; channels],
            _ => return Err(NnError::format(path, format!("{k} is not a list of numbers"))),
        };
        if list.len() != channels {
            return Err(NnError::format(
                path,
                format!("{k} has {} entries for {channels} channels", list.len()),
            ));
        }
        Ok(list)
    };
    let (mean, std) = (per_channel("image_mean", 0.0)?, per_channel("image_std", 1.0)?);
    if std.iter().any(|&s| s == 0.0 || !s.is_finite()) {
        return Err(NnError::format(path, "image_std has a zero or non-finite entry"));
    }
    if !on("do_rescale") && !on("do_normalize") {
        return Ok(None);
    }
    Ok(Some(Preprocess { scale, mean, std }))
}

/// Reads the file's tensors into the graph's layout, checking every shape against the config.
fn graph_weights(path: &Path, graph: &Graph, c: &VitConfig) -> Result<Weights> {
    let mut file = read_safetensors(path)?;
    let scale = 1.0 / ((c.hidden / c.heads) as f32).sqrt();
    let mut out = Weights::new();
    for (name, shape) in &graph.weights {
        let t = file.remove(name).or_else(|| file.remove(&format!("vit.{name}"))).ok_or_else(|| {
            NnError::format(path, format!("no tensor {name} (does the config match the weights?)"))
        })?;
        if let Some(bad) = t.data.iter().position(|v| !v.is_finite()) {
            return Err(NnError::format(path, format!("{name}[{bad}] is not a finite number")));
        }
        let stored = t.shape.clone();
        let mut t = if name.ends_with("projection.weight") && t.shape.len() == 4 {
            crate::cnn::kernel_to_im2col(&t)?
        } else if name == "embeddings.cls_token" || name == "embeddings.position_embeddings" {
            // [1, rows, D] → [rows, D].
            let rows = t.shape.iter().rev().skip(1).product();
            let d = t.shape.last().copied().unwrap_or(0);
            if t.shape.first() != Some(&1) || t.shape.len() != 3 {
                return Err(NnError::format(
                    path,
                    format!("{name} has shape {stored:?}, expected [1, rows, {d}]"),
                ));
            }
            FloatTensor { shape: vec![rows, d], data: t.data }
        } else if name.ends_with(".weight") && t.shape.len() == 2 {
            // Hugging Face linear layers store [out, in].
            t.transposed()?
        } else {
            t
        };
        if &t.shape != shape {
            return Err(NnError::format(
                path,
                format!("{name} has shape {stored:?}, the config implies {shape:?} (in Veil's layout)"),
            ));
        }
        if name.contains(".attention.attention.query.") {
            t.data.iter_mut().for_each(|v| *v *= scale);
        }
        out.insert(name.clone(), t);
    }
    Ok(out)
}
