//! GPT-2 from a Hugging Face folder: `config.json` (`model_type: "gpt2"`), `model.safetensors`,
//! and `tokenizer.json` or `vocab.json` + `merges.txt` ([`crate::bpe`]).
//!
//! The graph is the decoder of *Language Models are Unsupervised Multitask Learners*: token +
//! position embeddings, then per block `x + Attn(LN_1(x))·W_o` with causal attention and
//! `x + GELU(LN_2(x)·W_fc)·W_proj` (the tanh GELU, `gelu_new`), a final LayerNorm, and the
//! language-model head tied to the token embedding. The output is the next-token logits of
//! the last position, `[1, vocab]` (the head runs on that row only).
//!
//! Load-time changes, exact in real arithmetic: GPT-2's `Conv1D` weights are already
//! `[in, out]`; the fused `c_attn` is split into the query, key and value projections, and the
//! attention scale `1/√d_head` is multiplied into the query weights and bias. Tensor names are
//! read with or without the `transformer.` prefix; buffers (`attn.bias`, `attn.masked_bias`)
//! and a separate `lm_head.weight` equal to the tied embedding are ignored.

use std::path::Path;

use crate::bert::{Model, Pooling, check_heads, model_name, positive, read_config};
use crate::bpe::ByteLevelBpe;
use crate::error::{NnError, Result};
use crate::graph::{BlockShape, GeluForm, Graph, Op, PreLnNames};
use crate::tokenizer::Tokenizer;
use crate::weights::{FloatTensor, Weights, read_safetensors};

/// The hyper-parameters of a GPT-2 model.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Gpt2Config {
    /// Width (`n_embd`).
    pub hidden: usize,
    /// Attention heads (`n_head`).
    pub heads: usize,
    /// Blocks (`n_layer`).
    pub layers: usize,
    /// Feed-forward width (`n_inner`, default `4·n_embd`).
    pub ffn: usize,
    /// LayerNorm epsilon.
    pub eps: f64,
    /// Longest input, in tokens (`n_positions`).
    pub max_positions: usize,
    /// Vocabulary size.
    pub vocab: usize,
}

impl Gpt2Config {
    /// Reads `config.json`.
    pub fn from_file(path: &Path) -> Result<Self> {
        let v = read_config(path, "gpt2")?;
        let num = |k: &str| positive(&v, k, path);
        match v["activation_function"].as_str().unwrap_or("gelu_new") {
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => {}
            other => {
                return Err(NnError::Unsupported(format!(
                    "{}: activation_function {other:?} (GPT-2's is gelu_new)",
                    path.display()
                )));
            }
        }
        if v["tie_word_embeddings"].as_bool() == Some(false) {
            return Err(NnError::Unsupported(format!("{}: an untied language-model head", path.display())));
        }
        if v["scale_attn_weights"].as_bool() == Some(false)
            || v["scale_attn_by_inverse_layer_idx"].as_bool() == Some(true)
        {
            return Err(NnError::Unsupported(format!(
                "{}: attention scaling other than 1/√d_head",
                path.display()
            )));
        }
        let hidden = num("n_embd")?;
        let c = Gpt2Config {
            hidden,
            heads: num("n_head")?,
            layers: num("n_layer")?,
            ffn: if v["n_inner"].is_null() { 4 * hidden } else { num("n_inner")? },
            eps: v["layer_norm_epsilon"].as_f64().unwrap_or(1e-5),
            max_positions: num("n_positions")?,
            vocab: num("vocab_size")?,
        };
        check_heads(path, c.heads, c.hidden, "n_embd")?;
        Ok(c)
    }
}

/// The decoder graph of `c`, ending in the last position's logits.
pub fn gpt2_graph(c: &Gpt2Config) -> Graph {
    let mut g = Graph::default();
    g.set_scope("embeddings");
    let (h, f) = (c.hidden, c.ffn);
    let tokens = g.push(Op::Tokens, &[]);
    let wte = g.weight("wte.weight", &[c.vocab, h]);
    let words = g.push(Op::Embedding { table: wte.clone() }, &[tokens]);
    let table = g.weight("wpe.weight", &[c.max_positions, h]);
    let pos = g.push(Op::Positions { table }, &[tokens]);
    let mut x = g.push(Op::Add, &[words, pos]);
    let shape =
        BlockShape { hidden: h, heads: c.heads, ffn: f, causal: true, gelu: GeluForm::Tanh, eps: c.eps };
    for i in 0..c.layers {
        let p = format!("h.{i}");
        g.set_scope(&p);
        let name = |s: &str| format!("{p}.{s}");
        let names = PreLnNames {
            ln_1: name("ln_1"),
            query: name("attn.q"),
            key: name("attn.k"),
            value: name("attn.v"),
            out: name("attn.c_proj"),
            ln_2: name("ln_2"),
            up: name("mlp.c_fc"),
            down: name("mlp.c_proj"),
        };
        x = g.pre_ln_block(&names, &shape, x);
    }
    g.set_scope("head");
    let x = g.layernorm("ln_f", h, c.eps, x);
    let last = g.push(Op::LastToken, &[x]);
    g.push(Op::TiedLogits { table: wte }, &[last]);
    g
}

/// Loads a Hugging Face GPT-2 folder (see [`crate::bert::load_hf`], which calls this for
/// `model_type: "gpt2"`).
pub fn load_hf(dir: &Path, with_weights: bool) -> Result<Model> {
    let config = Gpt2Config::from_file(&dir.join("config.json"))?;
    let graph = gpt2_graph(&config);
    let (json, vocab, merges) = (dir.join("tokenizer.json"), dir.join("vocab.json"), dir.join("merges.txt"));
    let tokenizer = if json.exists() {
        Some(ByteLevelBpe::from_tokenizer_json(&json)?)
    } else if vocab.exists() && merges.exists() {
        Some(ByteLevelBpe::from_vocab_and_merges(&vocab, &merges)?)
    } else {
        None
    };
    if let Some(t) = &tokenizer
        && t.vocab_size() > config.vocab
    {
        return Err(NnError::Invalid(format!(
            "{}: a vocabulary of {} tokens, the config says {}",
            dir.display(),
            t.vocab_size(),
            config.vocab
        )));
    }
    let weights =
        if with_weights { Some(graph_weights(&dir.join("model.safetensors"), &config)?) } else { None };
    Ok(Model {
        name: model_name(dir)?,
        max_positions: config.max_positions,
        graph,
        weights,
        tokenizer: tokenizer.map(Tokenizer::ByteLevelBpe),
        pooling: Pooling { mean: false, normalize: false },
    })
}

/// Reads the file's tensors into the graph's layout, checking every shape against the config.
fn graph_weights(path: &Path, c: &Gpt2Config) -> Result<Weights> {
    let mut file = read_safetensors(path)?;
    let head = file.remove("lm_head.weight");
    let mut take = |name: &str, shape: &[usize]| -> Result<FloatTensor> {
        let t =
            file.remove(name).or_else(|| file.remove(&format!("transformer.{name}"))).ok_or_else(|| {
                NnError::format(path, format!("no tensor {name} (does the config match the weights?)"))
            })?;
        if t.shape != shape {
            return Err(NnError::format(
                path,
                format!("{name} has shape {:?}, the config implies {shape:?}", t.shape),
            ));
        }
        if let Some(bad) = t.data.iter().position(|v| !v.is_finite()) {
            return Err(NnError::format(path, format!("{name}[{bad}] is not a finite number")));
        }
        Ok(t)
    };
    let (h, f) = (c.hidden, c.ffn);
    let mut w = Weights::new();
    let wte = take("wte.weight", &[c.vocab, h])?;
    if let Some(head) = head
        && head.data != wte.data
    {
        return Err(NnError::Unsupported(format!(
            "{}: lm_head.weight differs from wte (an untied head)",
            path.display()
        )));
    }
    w.insert("wte.weight".into(), wte);
    w.insert("wpe.weight".into(), take("wpe.weight", &[c.max_positions, h])?);
    let scale = 1.0 / ((h / c.heads) as f32).sqrt();
    for i in 0..c.layers {
        let p = format!("h.{i}");
        for ln in ["ln_1", "ln_2"] {
            for part in ["weight", "bias"] {
                let name = format!("{p}.{ln}.{part}");
                w.insert(name.clone(), take(&name, &[h])?);
            }
        }
        // c_attn: [h, 3h] = [q | k | v] along the columns, bias [3h].
        let qkv = take(&format!("{p}.attn.c_attn.weight"), &[h, 3 * h])?;
        let qkv_b = take(&format!("{p}.attn.c_attn.bias"), &[3 * h])?;
        for (j, part) in ["q", "k", "v"].into_iter().enumerate() {
            let s = if part == "q" { scale } else { 1.0 };
            let cols: Vec<f32> = (0..h * h).map(|e| qkv.data[(e / h) * 3 * h + j * h + e % h] * s).collect();
            let bias: Vec<f32> = qkv_b.data[j * h..(j + 1) * h].iter().map(|v| v * s).collect();
            w.insert(format!("{p}.attn.{part}.weight"), FloatTensor { shape: vec![h, h], data: cols });
            w.insert(format!("{p}.attn.{part}.bias"), FloatTensor { shape: vec![h], data: bias });
        }
        for (name, inp, out) in [("attn.c_proj", h, h), ("mlp.c_fc", h, f), ("mlp.c_proj", f, h)] {
            let name = format!("{p}.{name}");
            w.insert(format!("{name}.weight"), take(&format!("{name}.weight"), &[inp, out])?);
            w.insert(format!("{name}.bias"), take(&format!("{name}.bias"), &[out])?);
        }
    }
    for part in ["weight", "bias"] {
        let name = format!("ln_f.{part}");
        w.insert(name.clone(), take(&name, &[h])?);
    }
    Ok(w)
}
