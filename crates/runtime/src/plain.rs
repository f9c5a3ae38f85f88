//! Runs in the clear, for debugging numerics without MPC: the float executor beside the
//! plaintext fixed-point executor, which computes what the family's secure run computes (its
//! rings, tables and precision plan; exact truncations), and the layers where values left the
//! ring's safe range or a layer's input left the range its approximation holds on.

use std::path::Path;

use serde::Serialize;
use veil_mpc::MpcError;
use veil_nn::Input;
use veil_nn::fixed::{Overflow, run_fixed};
use veil_nn::float::run_float_on;
use veil_nn::graph::Graph;
use veil_nn::image::ImageModel;
use veil_nn::weights::{FloatTensor, Weights};

use crate::families::FamilyChoice;
use crate::inference::nn_error;

/// The two clear executors on one input.
#[derive(Debug, Clone, Serialize)]
pub struct PlainReport {
    /// The model's name.
    pub model: String,
    /// The family whose arithmetic the fixed-point executor follows.
    pub family: String,
    /// Under `mosformer`, the gates' working rings (`mixed` or `z64`); none for families
    /// whose single ring plan leaves no choice.
    pub rings: Option<String>,
    /// Rows and columns of the output.
    pub shape: [usize; 2],
    /// The float executor's output, row-major.
    pub float: Vec<f64>,
    /// The fixed-point executor's output, row-major.
    pub fixed_point: Vec<f64>,
    /// Largest `|fixed − float|`: the family's approximations and fixed-point rounding.
    pub max_abs_fixed_vs_float: f64,
    /// Cosine similarity of the two outputs.
    pub cosine_fixed_vs_float: f64,
    /// Where values left their range (empty when the run is sound).
    pub overflows: Vec<Overflow>,
}

/// Both executors on `input`, the fixed-point one with `family`'s arithmetic (in its rings,
/// for `mosformer`).
pub fn plain_run(
    name: &str,
    graph: &Graph,
    weights: &Weights,
    input: Input<'_>,
    family: &FamilyChoice,
) -> Result<PlainReport, MpcError> {
    family.check_graph(graph)?;
    let float = run_float_on(graph, weights, input).map_err(nn_error)?;
    let fixed = run_fixed(graph, weights, input, family.reference()).map_err(nn_error)?;
    let max_abs_fixed_vs_float =
        fixed.output.data.iter().zip(&float.data).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    Ok(PlainReport {
        model: name.into(),
        family: family.name().into(),
        rings: family.rings_name().map(Into::into),
        cosine_fixed_vs_float: crate::inference::cosine(&fixed.output.data, &float.data),
        shape: [float.rows, float.cols],
        float: float.data,
        fixed_point: fixed.output.data,
        max_abs_fixed_vs_float,
        overflows: fixed.overflows,
    })
}

/// [`plain_run`] of the Hugging Face text model in `dir` (BERT family or GPT-2) on `text`.
pub fn plain_text(dir: &Path, text: &str, family: &FamilyChoice) -> Result<PlainReport, MpcError> {
    let model = veil_nn::bert::load_hf(dir, true).map_err(nn_error)?;
    let ids = veil_nn::bert::tokenize(&model, text).map_err(nn_error)?;
    let weights =
        model.weights.as_ref().ok_or_else(|| MpcError::Invalid("the model has no weights".into()))?;
    plain_run(&model.name, &model.graph, weights, Input::Tokens(&ids), family)
}

/// [`plain_run`] of an image model (an `.onnx` CNN or a ViT) on `images` (`[N, C, H, W]`,
/// before the model's preprocessing).
pub fn plain_images(
    model: &ImageModel,
    images: &FloatTensor,
    family: &FamilyChoice,
) -> Result<PlainReport, MpcError> {
    let pixels = model.pixel_values(images).map_err(nn_error)?;
    plain_run(&model.name, &model.graph, &model.weights, Input::Images(&pixels), family)
}
