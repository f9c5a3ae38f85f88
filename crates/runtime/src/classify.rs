//! Private image classification with a CNN imported from ONNX (or a ViT): the computing
//! parties of any family that runs the model (`aegis` by default for CNNs, `mosformer` for
//! ViTs, `additive` among any number of parties), the data owner sharing a batch of images
//! and alone receiving the logits, the model owner sharing the weights. The same session as
//! the transformer inference ([`crate::inference`]): model-digest handshake, the batch size
//! announced by the data owner (public), offline / online / verify phases per party.

use std::path::Path;

use serde::{Deserialize, Serialize};
use veil_mpc::roles::Topology;
use veil_mpc::{Ctx, MpcError};
use veil_nn::Input;
use veil_nn::float::run_float_on;
use veil_nn::image::ImageModel;
use veil_nn::weights::{FloatTensor, read_safetensors};

use crate::Link;
use crate::families::{FamilyChoice, GraphJob};
use crate::inference::{InferenceParty, Material, contribution, nn_error, session_party};

/// Images per session at most (the servers refuse larger announced batches).
pub const MAX_BATCH: usize = 4096;

/// Runs one party of a classification session (`images` at the data owner, `[B, C, H, W]`, as
/// [`ImageModel::pixel_values`] takes them; the weights in `model` at the model owner, which
/// may be a public model without them elsewhere). With `images_per_check` (aegis only; the
/// servers must agree on it), the servers check their products after every that many images,
/// which bounds what a verification holds; nothing is revealed before the last check passes.
pub fn cnn_party(
    ctx: &mut Ctx,
    model: &ImageModel,
    images: Option<&FloatTensor>,
    choice: &FamilyChoice,
    material: Material,
    images_per_check: Option<usize>,
) -> Result<InferenceParty, MpcError> {
    choice.check_graph(&model.graph)?;
    choice.check_options(&material, images_per_check)?;
    let pixels = images.map(|x| model.pixel_values(x)).transpose().map_err(nn_error)?;
    let images = pixels.as_ref();
    let size = images.map(|t| t.shape.first().copied().unwrap_or(0));
    let topology = choice.topology;
    session_party(ctx, &topology, &model.graph, size, MAX_BATCH, "images", |ctx, n| {
        let weights = (!model.weights.is_empty()).then_some(&model.weights);
        let mine = contribution(ctx.party(), &topology, images.map(Input::Images), weights)?;
        let job = GraphJob {
            graph: &model.graph,
            n,
            mine,
            material,
            images_per_check,
            chunk: crate::inference::CHUNK,
        };
        let (run, prep) = choice.run(ctx, job)?;
        Ok((run, Some(prep)))
    })
}

/// The report of a private classification.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClassifyReport {
    /// Model name.
    pub model: String,
    /// Protocol family.
    pub family: String,
    /// `malicious` or `semi-honest`.
    pub security: String,
    /// `mosformer`'s rings (`mixed` or `z64`); none for families without a choice.
    pub rings: Option<String>,
    /// Who computed and where the owners sat.
    pub topology: Topology,
    /// Where the family's preprocessing came from (an insecure source says so).
    pub preprocessing: String,
    /// How the parties were linked.
    pub transport: String,
    /// Images in the batch (public).
    pub images: usize,
    /// The private run's predicted class per image (argmax of the revealed logits).
    pub predictions: Vec<usize>,
    /// The float reference's predictions.
    pub plaintext_predictions: Vec<usize>,
    /// The true labels, when known.
    pub labels: Option<Vec<usize>>,
    /// Largest absolute difference between private and float logits.
    pub max_abs_error: f64,
    /// Largest difference between the private logits and the plaintext fixed-point executor's
    /// (same ring and encoding), in units of `2^-16`: what the protocol's truncations add.
    pub fixed_point_ulps: f64,
    /// Layers where the fixed-point executor saw values leave the ring's safe range.
    pub overflows: Vec<veil_nn::fixed::Overflow>,
    /// The revealed logits, row-major `[images, classes]`.
    pub output: Vec<f64>,
    /// Every party's report.
    pub per_party: Vec<InferenceParty>,
    /// Peak resident memory of this process, MiB (all parties when they run as threads).
    pub peak_rss_mib: Option<f64>,
}

/// The index of the largest entry of each row of `cols` values (the predicted classes).
pub fn argmax_rows(v: &[f64], cols: usize) -> Vec<usize> {
    v.chunks(cols.max(1)).map(|r| (0..r.len()).fold(0, |b, j| if r[j] > r[b] { j } else { b })).collect()
}

/// Runs a private classification of `images` (`[B, C, H, W]`), every party a thread of this
/// process, and compares it with the float reference. With `images_per_check` (aegis), the
/// servers verify their products after every that many images ([`cnn_party`]).
#[allow(clippy::too_many_arguments)]
pub fn private_classification(
    model: &ImageModel,
    images: &FloatTensor,
    labels: Option<&[usize]>,
    choice: &FamilyChoice,
    material: Material,
    link: Link,
    images_per_check: Option<usize>,
) -> Result<ClassifyReport, MpcError> {
    choice.check_graph(&model.graph)?;
    choice.check_options(&material, images_per_check)?;
    let pixels = model.pixel_values(images).map_err(nn_error)?;
    let plain = run_float_on(&model.graph, &model.weights, Input::Images(&pixels)).map_err(nn_error)?;
    let data_owner = choice.topology.roles.data_owner;
    let job = |ctx: &mut Ctx| {
        let mine = (ctx.party() == data_owner).then_some(images);
        cnn_party(ctx, model, mine, choice, material.clone(), images_per_check)
    };
    let (per_party, transport) = crate::inference::run_threads(link, choice.topology.parties(), job)?;
    let output = per_party
        .iter()
        .find_map(|p| p.output.clone())
        .ok_or_else(|| MpcError::Invalid("the data owner reported no output".into()))?;
    let max_abs_error = output.iter().zip(&plain.data).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let fixed =
        veil_nn::fixed::run_fixed(&model.graph, &model.weights, Input::Images(&pixels), choice.reference())
            .map_err(nn_error)?;
    let fixed_point_ulps =
        output.iter().zip(&fixed.output.data).map(|(a, b)| ((a - b) * 65536.0).abs()).fold(0.0, f64::max);
    Ok(ClassifyReport {
        fixed_point_ulps,
        overflows: fixed.overflows,
        model: model.name.clone(),
        family: choice.name().into(),
        security: choice.security.name().into(),
        rings: choice.rings_name().map(Into::into),
        topology: choice.topology,
        preprocessing: choice.family.info.preprocessing.into(),
        transport: transport.into(),
        images: plain.rows,
        predictions: argmax_rows(&output, plain.cols),
        plaintext_predictions: argmax_rows(&plain.data, plain.cols),
        labels: labels.map(<[usize]>::to_vec),
        max_abs_error,
        output,
        per_party,
        peak_rss_mib: crate::memory::peak_rss_bytes().map(|b| b as f64 / f64::from(1u32 << 20)),
    })
}

/// A labelled image set: `images` `[N, C, H, W]` and `labels` `[N]` (class numbers stored as
/// floats) in a `.safetensors` file, as `scripts/train_digits_cnn.py` writes its test set.
pub fn load_image_set(path: &Path) -> Result<(FloatTensor, Vec<usize>), MpcError> {
    let mut t = read_safetensors(path).map_err(nn_error)?;
    let bad = |what: &str| MpcError::Invalid(format!("{}: {what}", path.display()));
    let images = t.remove("images").ok_or_else(|| bad("no tensor `images`"))?;
    let labels = t.remove("labels").ok_or_else(|| bad("no tensor `labels`"))?;
    if images.shape.len() != 4 || labels.data.len() != images.shape[0] {
        return Err(bad(&format!("images of shape {:?} with {} labels", images.shape, labels.data.len())));
    }
    if labels.data.iter().any(|&v| v < 0.0 || v.fract() != 0.0) {
        return Err(bad("labels must be class numbers"));
    }
    Ok((images, labels.data.iter().map(|&v| v as usize).collect()))
}

/// Images `start .. start + n` of a batch.
pub fn image_range(images: &FloatTensor, start: usize, n: usize) -> Result<FloatTensor, MpcError> {
    let total = images.shape.first().copied().unwrap_or(0);
    if n == 0 || start + n > total {
        return Err(MpcError::Invalid(format!("images {start}..{} of {total}", start + n)));
    }
    let per: usize = images.shape[1..].iter().product();
    let mut shape = images.shape.clone();
    shape[0] = n;
    FloatTensor::new(shape, images.data[start * per..(start + n) * per].to_vec()).map_err(nn_error)
}
