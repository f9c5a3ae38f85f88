//! The loader, tokenizer and float executor against an independent reference
//! (`scripts/minilm_reference.py`: the Hugging Face `tokenizers` library and NumPy) on the real
//! all-MiniLM-L6-v2 weights, installed by `scripts/setup.sh`.

use std::path::Path;

use veil_nn::bert::{find_minilm, load_hf, tokenize};
use veil_nn::float::run_float;

#[derive(serde::Deserialize)]
struct Case {
    text: String,
    ids: Vec<u32>,
    embedding: Vec<f64>,
}

#[derive(serde::Deserialize)]
struct Reference {
    cases: Vec<Case>,
}

#[test]
fn minilm_matches_the_reference_tokenizer_and_embeddings() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir =
        find_minilm(root).expect("all-MiniLM-L6-v2 not found: run scripts/setup.sh (or set VEIL_MINILM_DIR)");
    let model = load_hf(&dir, true).unwrap();
    assert!(model.pooling.mean && model.pooling.normalize);
    let reference: Reference = serde_json::from_str(
        &std::fs::read_to_string(root.join("tests/data/minilm_reference.json")).unwrap(),
    )
    .unwrap();
    let weights = model.weights.as_ref().unwrap();
    for case in &reference.cases {
        let ids = tokenize(&model, &case.text).unwrap();
        assert_eq!(ids, case.ids, "tokens of {:?}", case.text);
        let out = run_float(&model.graph, weights, &ids).unwrap();
        assert_eq!((out.rows, out.cols), (1, 384));
        let err = out.data.iter().zip(&case.embedding).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-5, "embedding of {:?} off by {err}", case.text);
    }
}

#[test]
fn bad_model_folders_are_clear_errors() {
    let tmp = std::env::temp_dir().join(format!("veil-nn-bad-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let e = load_hf(&tmp.join("nope"), false).unwrap_err().to_string();
    assert!(e.contains("not a model folder"), "{e}");
    let e = load_hf(&tmp, false).unwrap_err().to_string();
    assert!(e.contains("config.json"), "{e}");
    std::fs::write(tmp.join("config.json"), r#"{"model_type": "t5"}"#).unwrap();
    let e = load_hf(&tmp, false).unwrap_err().to_string();
    assert!(e.contains("t5"), "{e}");
    std::fs::write(tmp.join("config.json"), r#"{"model_type": "gpt2"}"#).unwrap();
    let e = load_hf(&tmp, false).unwrap_err().to_string();
    assert!(e.contains("n_embd is missing"), "{e}");
    std::fs::write(
        tmp.join("config.json"),
        r#"{"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1,
            "intermediate_size": 16, "max_position_embeddings": 4, "vocab_size": 10}"#,
    )
    .unwrap();
    let m = load_hf(&tmp, false).unwrap();
    assert_eq!(m.graph.weights["embeddings.word_embeddings.weight"], vec![10, 8]);
    let e = load_hf(&tmp, true).unwrap_err().to_string();
    assert!(e.contains("model.safetensors"), "{e}");
    std::fs::remove_dir_all(&tmp).unwrap();
}
