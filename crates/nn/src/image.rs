//! Models whose input is an image: CNNs imported from ONNX ([`crate::onnx`]) and Vision
//! Transformers from Hugging Face folders ([`crate::vit`]), with the public model file that
//! servers and the data owner use in a deployment (the graph and shapes, no weights).
//!
//! The data owner hands in images as `[N, C, H, W]` floats at the model's size. A model may
//! carry its processor's per-channel normalization ([`Preprocess`], a ViT's
//! `preprocessor_config.json`), which the data owner applies in the clear to its own images
//! before sharing them ([`ImageModel::pixel_values`]); resizing is the caller's.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{NnError, Result};
use crate::graph::Graph;
use crate::weights::{FloatTensor, Weights};

/// `pixel = (x·scale − mean[c]) / std[c]` per channel `c`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preprocess {
    /// Multiplies the raw values first (`rescale_factor`, e.g. 1/255; 1 if none).
    pub scale: f32,
    /// Per-channel mean.
    pub mean: Vec<f32>,
    /// Per-channel standard deviation (nonzero).
    pub std: Vec<f32>,
}

/// A model with an image input.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ImageModel {
    /// The file's or folder's name, for reports.
    pub name: String,
    /// The graph (input `Image`).
    pub graph: Graph,
    /// The weights, in the graph's layouts (empty in a public model file).
    #[serde(skip)]
    pub weights: Weights,
    /// `[C, H, W]` of one input image.
    pub input: [usize; 3],
    /// The normalization the data owner applies to its images, if any.
    #[serde(default)]
    pub preprocess: Option<Preprocess>,
}

impl ImageModel {
    /// The public part (graph, weight shapes, input shape, preprocessing) as JSON: what servers
    /// and the data owner of a deployment need, without the weights.
    pub fn public_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self).map_err(|e| NnError::Invalid(e.to_string()))
    }

    /// Reads a model: an `.onnx` file or a Hugging Face ViT folder (with their weights), or a
    /// public model file written by [`ImageModel::public_json`] (no weights).
    pub fn load(path: &Path) -> Result<ImageModel> {
        if path.is_dir() {
            return crate::vit::load_hf(path, true);
        }
        if path.extension().is_some_and(|e| e == "onnx") {
            return crate::onnx::load_onnx(path);
        }
        let text = std::fs::read_to_string(path).map_err(|e| NnError::io(path, e))?;
        let m: ImageModel = serde_json::from_str(&text).map_err(|e| NnError::format(path, e.to_string()))?;
        m.graph.shapes(1)?;
        Ok(m)
    }

    /// The most images one run takes: 1 when the graph turns an image into a sequence (a
    /// ViT), no limit otherwise.
    pub fn max_batch(&self) -> Option<usize> {
        self.graph.nodes.iter().any(|n| matches!(n.op, crate::graph::Op::ImageRows)).then_some(1)
    }

    /// Checks that `images` are `[N, C, H, W]` at the model's size and applies the model's
    /// preprocessing: the tensor the data owner shares.
    pub fn pixel_values(&self, images: &FloatTensor) -> Result<FloatTensor> {
        let [c, h, w] = self.input;
        if images.shape.len() != 4 || images.shape[1..] != [c, h, w] || images.shape[0] == 0 {
            return Err(NnError::Invalid(format!(
                "{}: images of shape {:?}; the model takes [batch ≥ 1, {c}, {h}, {w}]",
                self.name, images.shape
            )));
        }
        let Some(p) = &self.preprocess else { return Ok(images.clone()) };
        let plane = h * w;
        let data = images
            .data
            .iter()
            .enumerate()
            .map(|(e, &x)| {
                let ch = (e / plane) % c;
                (x * p.scale - p.mean[ch]) / p.std[ch]
            })
            .collect();
        FloatTensor::new(images.shape.clone(), data)
    }
}

/// Whether `path` names an image model: an `.onnx` file, a public model file (`.json`), or a
/// folder whose `config.json` has `model_type: "vit"`.
pub fn is_image_model(path: &Path) -> bool {
    if path.is_dir() {
        return crate::bert::read_json(&path.join("config.json")).is_ok_and(|v| v["model_type"] == "vit");
    }
    path.extension().is_some_and(|e| e == "onnx" || e == "json")
}
