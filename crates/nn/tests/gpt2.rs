//! GPT-2 from a Hugging Face folder: a tiny checkpoint written by `scripts/make_tiny_gpt2.py`
//! (tokenizer trained by the `tokenizers` library, GPT-2's tensor names and layout, logits from
//! an independent NumPy forward pass) against Veil's tokenizer, float and fixed-point executors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use std::path::{Path, PathBuf};

use serde_json::Value;
use veil_mosformer::clear::MosformerReference;
use veil_nn::Input;
use veil_nn::bert::{load_hf, tokenize};
use veil_nn::fixed::run_fixed;
use veil_nn::float::run_float;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny-gpt2")
}

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(dir().join("expected.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn ids(case: &Value) -> Vec<u32> {
    case["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect()
}

#[test]
fn the_byte_level_tokenizer_matches_the_tokenizers_library() {
    let model = load_hf(&dir(), false).unwrap();
    assert!(model.weights.is_none());
    // Also from GPT-2's original files (vocab.json + merges.txt), without tokenizer.json.
    let tmp = std::env::temp_dir().join(format!("veil-gpt2-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for f in ["config.json", "vocab.json", "merges.txt"] {
        std::fs::copy(dir().join(f), tmp.join(f)).unwrap();
    }
    let original = load_hf(&tmp, false).unwrap();
    for case in cases() {
        let text = case["text"].as_str().unwrap();
        assert_eq!(tokenize(&model, text).unwrap(), ids(&case), "{text:?}");
        assert_eq!(tokenize(&original, text).unwrap(), ids(&case), "{text:?} from vocab.json + merges.txt");
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn gpt2_logits_match_the_reference_at_every_checked_position() {
    let model = load_hf(&dir(), true).unwrap();
    let w = model.weights.as_ref().unwrap();
    for case in cases() {
        let ids = ids(&case);
        for (pos, row) in case["logits_at"].as_object().unwrap() {
            let i: usize = pos.parse().unwrap();
            // Causal attention: position i's logits are the next-token logits of ids[..=i].
            let out = run_float(&model.graph, w, &ids[..=i]).unwrap();
            assert_eq!((out.rows, out.cols), (1, 400));
            let want: Vec<f64> = row.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            let worst = out.data.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(worst < 1e-5, "{:?} at {i}: {worst}", case["text"]);
        }
    }
}

#[test]
fn gpt2_in_fixed_point_predicts_the_same_next_tokens() {
    let model = load_hf(&dir(), true).unwrap();
    let w = model.weights.as_ref().unwrap();
    let argmax = |v: &[f64]| (0..v.len()).fold(0, |b, j| if v[j] > v[b] { j } else { b });
    for case in cases() {
        let ids = ids(&case);
        let float = run_float(&model.graph, w, &ids).unwrap();
        let fixed = run_fixed(&model.graph, w, Input::Tokens(&ids), &MosformerReference::MIXED).unwrap();
        assert!(fixed.overflows.is_empty(), "{:?}", fixed.overflows);
        let worst = fixed.output.data.iter().zip(&float.data).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        eprintln!("{:?}: |fixed − float| ≤ {worst}", case["text"]);
        assert!(worst < 0.25, "{worst}");
        assert_eq!(argmax(&fixed.output.data), argmax(&float.data));
    }
}

#[test]
fn gpt2_folders_that_do_not_fit_are_clear_errors() {
    let model = load_hf(&dir(), false).unwrap();
    let long = "word ".repeat(80);
    let err = tokenize(&model, &long).unwrap_err().to_string();
    assert!(err.contains("at most 64"), "{err}");
    let tmp = std::env::temp_dir().join(format!("veil-gpt2-bad-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for f in ["tokenizer.json", "model.safetensors"] {
        std::fs::copy(dir().join(f), tmp.join(f)).unwrap();
    }
    let config = std::fs::read_to_string(dir().join("config.json")).unwrap();
    std::fs::write(tmp.join("config.json"), config.replace("\"n_embd\": 32", "\"n_embd\": 48")).unwrap();
    let err = load_hf(&tmp, true).unwrap_err().to_string();
    assert!(err.contains("wte.weight has shape [400, 32]"), "{err}");
    std::fs::write(tmp.join("config.json"), config.replace("gelu_new", "relu")).unwrap();
    let err = load_hf(&tmp, true).unwrap_err().to_string();
    assert!(err.contains("activation_function"), "{err}");
    // A billion layers is refused when the config is read, before any graph grows.
    std::fs::write(tmp.join("config.json"), config.replace("\"n_layer\": 2", "\"n_layer\": 1000000000"))
        .unwrap();
    let err = load_hf(&tmp, false).unwrap_err().to_string();
    assert!(err.contains("n_layer = 1000000000 is more than 4096"), "{err}");
    std::fs::remove_dir_all(&tmp).unwrap();
}
