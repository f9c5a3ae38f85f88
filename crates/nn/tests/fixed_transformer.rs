//! The plaintext fixed-point executor on transformers, with Mosformer's arithmetic in the
//! clear: close to the float executor, and naming the layer whose input leaves its range.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_mosformer::clear::MosformerReference;
use veil_nn::Input;
use veil_nn::bert::{Activation, BertConfig, Pooling, bert_graph};
use veil_nn::fixed::{ExactCnn, run_fixed};
use veil_nn::float::run_float;
use veil_nn::graph::{GeluForm, Graph};
use veil_nn::weights::Weights;
use veil_nn::zoo::random_weights;

fn small_bert() -> (Graph, Weights) {
    let config = BertConfig {
        hidden: 32,
        heads: 4,
        layers: 2,
        ffn: 64,
        activation: Activation::Gelu(GeluForm::Tanh),
        eps: 1e-12,
        max_positions: 16,
        vocab: 30,
    };
    let g = bert_graph(&config, Pooling { mean: false, normalize: false });
    let w = random_weights(&g, 11);
    (g, w)
}

const IDS: [u32; 7] = [2, 9, 17, 29, 0, 4, 4];

#[test]
fn a_transformer_in_fixed_point_follows_the_float_executor() {
    let (g, w) = small_bert();
    let float = run_float(&g, &w, &IDS).unwrap();
    let fixed = run_fixed(&g, &w, Input::Tokens(&IDS), &MosformerReference::MIXED).unwrap();
    assert!(fixed.overflows.is_empty(), "{:?}", fixed.overflows);
    assert_eq!((fixed.output.rows, fixed.output.cols), (7, 32));
    let worst = fixed.output.data.iter().zip(&float.data).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    eprintln!("|fixed − float| ≤ {worst}");
    assert!(worst < 0.1, "{worst}");
    // Deterministic: the same numbers on every run (no randomness in the reference).
    let again = run_fixed(&g, &w, Input::Tokens(&IDS), &MosformerReference::MIXED).unwrap();
    assert_eq!(again.raw, fixed.raw);
}

#[test]
fn the_layer_whose_input_leaves_its_range_is_named() {
    let (g, mut w) = small_bert();
    let up = w.get_mut("encoder.layer.1.intermediate.dense.weight").unwrap();
    up.data.iter_mut().for_each(|v| *v *= 400.0);
    let fixed = run_fixed(&g, &w, Input::Tokens(&IDS), &MosformerReference::MIXED).unwrap();
    let first = fixed.overflows.first().expect("a range violation is reported");
    assert_eq!((first.op.as_str(), first.scope.as_str()), ("gelu", "encoder.layer.1"), "{first:?}");
    assert_eq!(first.what, "GELU input");
    assert!(first.max_abs >= first.limit);
}

#[test]
fn a_family_without_transformer_layers_is_refused_by_name() {
    let (g, w) = small_bert();
    let err = run_fixed(&g, &w, Input::Tokens(&IDS), &ExactCnn(16)).unwrap_err().to_string();
    assert!(err.contains("layernorm"), "{err}");
    let err = run_fixed(&g, &w, Input::Tokens(&[2, 30]), &MosformerReference::MIXED).unwrap_err().to_string();
    assert!(err.contains("outside the vocabulary"), "{err}");
}
