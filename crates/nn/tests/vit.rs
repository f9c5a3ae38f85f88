//! Vision Transformers from a Hugging Face folder: a tiny checkpoint written by
//! `scripts/make_tiny_vit.py` (Hugging Face tensor names and layouts, its processor's
//! normalization, logits from an independent NumPy forward pass) against Veil's loader, float
//! and fixed-point executors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use std::path::{Path, PathBuf};

use serde_json::Value;
use veil_mosformer::clear::MosformerReference;
use veil_nn::Input;
use veil_nn::fixed::run_fixed;
use veil_nn::float::run_float_on;
use veil_nn::image::{ImageModel, is_image_model};
use veil_nn::weights::{FloatTensor, read_safetensors};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny-vit")
}

fn expected() -> Vec<Vec<f64>> {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("expected.json")).unwrap()).unwrap();
    v["logits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect())
        .collect()
}

/// Image `i` of the fixture's set, raw pixel values `[1, 3, 16, 16]`.
fn image(i: usize) -> FloatTensor {
    let all = read_safetensors(&dir().join("test.safetensors")).unwrap().remove("images").unwrap();
    let size: usize = all.shape[1..].iter().product();
    FloatTensor::new(vec![1, 3, 16, 16], all.data[i * size..(i + 1) * size].to_vec()).unwrap()
}

#[test]
fn vit_logits_match_the_reference_for_every_image() {
    assert!(is_image_model(&dir()));
    let model = ImageModel::load(&dir()).unwrap();
    assert_eq!(model.input, [3, 16, 16]);
    for (i, want) in expected().iter().enumerate() {
        let pixels = model.pixel_values(&image(i)).unwrap();
        let out = run_float_on(&model.graph, &model.weights, Input::Images(&pixels)).unwrap();
        assert_eq!((out.rows, out.cols), (1, 3));
        let worst = out.data.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(worst < 1e-5, "image {i}: {:?} vs {want:?}", out.data);
    }
}

#[test]
fn vit_in_fixed_point_stays_close_to_float() {
    let model = ImageModel::load(&dir()).unwrap();
    for i in 0..expected().len() {
        let pixels = model.pixel_values(&image(i)).unwrap();
        let float = run_float_on(&model.graph, &model.weights, Input::Images(&pixels)).unwrap();
        let fixed =
            run_fixed(&model.graph, &model.weights, Input::Images(&pixels), &MosformerReference::MIXED)
                .unwrap();
        assert!(fixed.overflows.is_empty(), "{:?}", fixed.overflows);
        let worst = fixed.output.data.iter().zip(&float.data).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        eprintln!("image {i}: |fixed − float| ≤ {worst}");
        assert!(worst < 0.1, "image {i}: {worst}");
    }
}

#[test]
fn vit_inputs_and_folders_that_do_not_fit_are_clear_errors() {
    let model = ImageModel::load(&dir()).unwrap();
    let err = model.pixel_values(&FloatTensor::new(vec![1, 3, 8, 8], vec![0.0; 192]).unwrap()).unwrap_err();
    assert!(err.to_string().contains("takes [batch ≥ 1, 3, 16, 16]"), "{err}");
    // Two images in one run: the patch sequence is one image's.
    let two = FloatTensor::new(vec![2, 3, 16, 16], [image(0).data, image(1).data].concat()).unwrap();
    let pixels = model.pixel_values(&two).unwrap();
    let err = run_float_on(&model.graph, &model.weights, Input::Images(&pixels)).unwrap_err();
    assert!(err.to_string().contains("one image per run"), "{err}");
    let tmp = std::env::temp_dir().join(format!("veil-vit-bad-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::copy(dir().join("model.safetensors"), tmp.join("model.safetensors")).unwrap();
    let config = std::fs::read_to_string(dir().join("config.json")).unwrap();
    std::fs::write(tmp.join("config.json"), config.replace("\"patch_size\": 4", "\"patch_size\": 8"))
        .unwrap();
    let err = ImageModel::load(&tmp).unwrap_err().to_string();
    assert!(
        err.contains("projection.weight has shape [32, 3, 4, 4], the config implies [8, 8, 3, 32]"),
        "{err}"
    );
    std::fs::write(tmp.join("config.json"), config.replace("\"patch_size\": 4", "\"patch_size\": 5"))
        .unwrap();
    let err = ImageModel::load(&tmp).unwrap_err().to_string();
    assert!(err.contains("does not divide image_size"), "{err}");
    std::fs::write(tmp.join("config.json"), config.replace("\"gelu\"", "\"swish\"")).unwrap();
    let err = ImageModel::load(&tmp).unwrap_err().to_string();
    assert!(err.contains("hidden_act"), "{err}");
    std::fs::remove_dir_all(&tmp).unwrap();
}
