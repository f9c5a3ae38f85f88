//! Python bindings of Veil (`veil._native`), thin on purpose: conversions, errors, and
//! releasing the GIL while parties run. The Python API lives in `python/veil`.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use veil_runtime::families::{FamilyChoice, Request};
use veil_runtime::{Link, Placement, Rings, Security, simulate_demo};

/// The version of the Rust core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Runs the demo product among `parties` in-process parties; returns the reports as JSON text.
///
/// Party 0 holds `x`, party 1 holds `y`; the product is revealed to `output` only.
/// `link` is `"memory"` or `"tls"` (TCP with mutual TLS on 127.0.0.1).
#[pyfunction]
#[pyo3(signature = (x, y, parties = 3, output = 0, seed = 0, link = "memory"))]
fn simulate_mul(
    py: Python<'_>,
    x: Vec<f64>,
    y: Vec<f64>,
    parties: usize,
    output: usize,
    seed: u64,
    link: &str,
) -> PyResult<String> {
    let link = parse_link(link)?;
    let reports = py
        .detach(|| simulate_demo(&x, &y, parties, output, seed, link))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    serde_json::to_string(&reports).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Writes a CA and certificates for `parties` parties into `out`.
#[pyfunction]
#[pyo3(signature = (parties, out, name = "veil"))]
fn make_certs(py: Python<'_>, parties: usize, out: std::path::PathBuf, name: &str) -> PyResult<()> {
    if parties < 2 {
        return Err(PyValueError::new_err("a deployment needs at least 2 parties"));
    }
    py.detach(|| veil_net::certs::Deployment::generate(name, parties).and_then(|d| d.write(&out)))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

fn parse_rings(rings: &str) -> PyResult<Rings> {
    Rings::parse(rings)
        .ok_or_else(|| PyValueError::new_err(format!("rings must be 'mixed' or 'z64', not {rings:?}")))
}

fn parse_owners(owners: &str) -> PyResult<Placement> {
    Placement::parse(owners)
        .ok_or_else(|| PyValueError::new_err(format!("owners must be 'outside' or 'inside', not {owners:?}")))
}

/// The family and its settings, checked against the registry; what is `None` takes the
/// family's default (`default` names the family when `family` is `None`).
fn choice(
    family: Option<&str>,
    security: Option<&str>,
    rings: Option<&str>,
    parties: Option<usize>,
    owners: Option<&str>,
    default: &str,
) -> PyResult<FamilyChoice> {
    let request = Request {
        family,
        security: security.map(parse_security).transpose()?,
        rings: rings.map(parse_rings).transpose()?,
        parties,
        owners: owners.map(parse_owners).transpose()?,
    };
    FamilyChoice::new(&request, default).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Every protocol family as the registry describes it (JSON text: a list of objects with
/// `name`, `parties`, `owners`, `security`, `rings`, `models`, `preprocessing`, ...).
#[pyfunction]
fn families() -> PyResult<String> {
    serde_json::to_string(&veil_runtime::families::families())
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

fn parse_link(link: &str) -> PyResult<Link> {
    match link {
        "memory" => Ok(Link::Memory),
        "tls" => Ok(Link::Tls),
        other => Err(PyValueError::new_err(format!("link must be 'memory' or 'tls', not {other:?}"))),
    }
}

/// Private inference of the Hugging Face model in `model_dir` on `text` under `family`
/// (default `mosformer`: three servers, data owner, model owner, all threads of this process);
/// returns the report as JSON text. The GIL is released while the parties run.
#[pyfunction]
#[pyo3(signature = (model_dir, text, security = None, link = "memory", offline = None, material = None, rings = None, family = None))]
#[allow(clippy::too_many_arguments, reason = "the Python function's keyword arguments")]
fn private_inference(
    py: Python<'_>,
    model_dir: std::path::PathBuf,
    text: &str,
    security: Option<&str>,
    link: &str,
    offline: Option<&str>,
    material: Option<std::path::PathBuf>,
    rings: Option<&str>,
    family: Option<&str>,
) -> PyResult<String> {
    let choice = choice(family, security, rings, None, None, "mosformer")?;
    let link = parse_link(link)?;
    let material = match (material, offline) {
        (Some(dir), _) => veil_runtime::inference::Material::Stored(dir),
        (None, Some(offline)) => parse_offline(offline)?,
        (None, None) => choice.default_material(),
    };
    let report = py
        .detach(|| veil_runtime::inference::private_inference(&model_dir, text, choice, material, link))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    serde_json::to_string(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The three servers (threads of this process) make the offline material of a later session of
/// the Hugging Face model in `model_dir` on `tokens` tokens and each write theirs to
/// `server-N.material` in `out`; returns their reports as JSON text (one object per server).
/// The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (model_dir, tokens, out, security = "malicious", link = "memory", rings = "mixed"))]
fn prepare_material(
    py: Python<'_>,
    model_dir: std::path::PathBuf,
    tokens: usize,
    out: std::path::PathBuf,
    security: &str,
    link: &str,
    rings: &str,
) -> PyResult<String> {
    let mode = veil_runtime::Mode { security: parse_security(security)?, rings: parse_rings(rings)? };
    let link = parse_link(link)?;
    let model =
        veil_nn::bert::load_hf(&model_dir, false).map_err(|e| PyValueError::new_err(e.to_string()))?;
    if tokens == 0 || tokens > model.max_positions {
        return Err(PyValueError::new_err(format!(
            "tokens must be 1 to {} for this model, not {tokens}",
            model.max_positions
        )));
    }
    let servers = py
        .detach(|| veil_runtime::stored::prepare_material(&model.graph, tokens, mode, &out, link))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    serde_json::to_string(&servers).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The float reference's output of the model in `model_dir` on `text`, row-major, and its
/// shape `(rows, cols)`.
#[pyfunction]
fn plaintext_inference(
    py: Python<'_>,
    model_dir: std::path::PathBuf,
    text: &str,
) -> PyResult<(Vec<f64>, usize, usize)> {
    py.detach(|| -> Result<_, veil_nn::NnError> {
        let model = veil_nn::bert::load_hf(&model_dir, true)?;
        let ids = veil_nn::bert::tokenize(&model, text)?;
        let weights = model.weights.as_ref().ok_or_else(|| veil_nn::NnError::Invalid("no weights".into()))?;
        let out = veil_nn::float::run_float(&model.graph, weights, &ids)?;
        Ok((out.data, out.rows, out.cols))
    })
    .map_err(|e| PyValueError::new_err(e.to_string()))
}

fn parse_offline(offline: &str) -> PyResult<veil_runtime::inference::Material> {
    veil_runtime::inference::Material::parse(offline).map_err(PyValueError::new_err)
}

fn parse_security(security: &str) -> PyResult<Security> {
    Security::parse(security).ok_or_else(|| {
        PyValueError::new_err(format!("security must be 'malicious' or 'semi-honest', not {security:?}"))
    })
}

fn images(data: Vec<f64>, shape: Vec<usize>) -> PyResult<veil_nn::weights::FloatTensor> {
    veil_nn::weights::FloatTensor::new(shape, data.into_iter().map(|v| v as f32).collect())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

fn image_model(path: &std::path::Path) -> PyResult<veil_nn::image::ImageModel> {
    veil_nn::image::ImageModel::load(path).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Reads the public part of the model at `model_path` (a text model's config and tokenizer, an
/// image model's graph) and fails with the reason if it is not a model Veil runs.
#[pyfunction]
fn check_model(model_path: std::path::PathBuf) -> PyResult<()> {
    if !model_path.exists() {
        return Err(pyo3::exceptions::PyFileNotFoundError::new_err(format!(
            "no model at {}",
            model_path.display()
        )));
    }
    if veil_nn::image::is_image_model(&model_path) {
        image_model(&model_path).map(|_| ())
    } else {
        veil_nn::bert::load_hf(&model_path, false)
            .map(|_| ())
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// The token ids the text model at `model_path` makes of `text` (their count is public: what
/// stored material is made for).
#[pyfunction]
fn tokens(model_path: std::path::PathBuf, text: &str) -> PyResult<Vec<u32>> {
    let model =
        veil_nn::bert::load_hf(&model_path, false).map_err(|e| PyValueError::new_err(e.to_string()))?;
    veil_nn::bert::tokenize(&model, text).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A labelled image set (`.safetensors` with `images` `[N, C, H, W]` and `labels` `[N]`):
/// the images' row-major values, their shape and the labels.
#[pyfunction]
fn load_images(path: std::path::PathBuf) -> PyResult<(Vec<f64>, Vec<usize>, Vec<usize>)> {
    let (images, labels) =
        veil_runtime::classify::load_image_set(&path).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((images.data.iter().map(|&v| f64::from(v)).collect(), images.shape, labels))
}

/// Whether `model_path` names an image model: an `.onnx` CNN, a ViT folder or a public model.
#[pyfunction]
fn is_image_model(model_path: std::path::PathBuf) -> bool {
    veil_nn::image::is_image_model(&model_path)
}

/// Private classification of `images` (row-major `data` of `shape` `[N, C, H, W]`) with the
/// image model at `model_path` (an ONNX CNN or a ViT folder) under `family` (any family that
/// runs it, `veil.families()`; default: `mosformer` for a ViT, `aegis` for a CNN) among
/// `parties` computing parties with the owners `outside` or `inside` them (defaults: the
/// family's); returns the report as JSON text. The GIL is released while the parties run.
#[pyfunction]
#[pyo3(signature = (model_path, data, shape, family = None, security = None, link = "memory", offline = None, rings = None, parties = None, owners = None))]
#[allow(clippy::too_many_arguments)]
fn private_classification(
    py: Python<'_>,
    model_path: std::path::PathBuf,
    data: Vec<f64>,
    shape: Vec<usize>,
    family: Option<&str>,
    security: Option<&str>,
    link: &str,
    offline: Option<&str>,
    rings: Option<&str>,
    parties: Option<usize>,
    owners: Option<&str>,
) -> PyResult<String> {
    let model = image_model(&model_path)?;
    let transformer = model.graph.nodes.iter().any(|n| n.op.needs_transformer_layers());
    let default = if transformer { "mosformer" } else { "aegis" };
    let choice = choice(family, security, rings, parties, owners, default)?;
    let material = match offline {
        Some(o) => parse_offline(o)?,
        None => choice.default_material(),
    };
    let link = parse_link(link)?;
    let x = images(data, shape)?;
    let report = py
        .detach(|| {
            veil_runtime::classify::private_classification(&model, &x, None, &choice, material, link, None)
        })
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    serde_json::to_string(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The float reference's logits of the image model at `model_path` on `images` (before the
/// model's preprocessing), row-major, and their shape `(rows, cols)`.
#[pyfunction]
fn plaintext_classification(
    py: Python<'_>,
    model_path: std::path::PathBuf,
    data: Vec<f64>,
    shape: Vec<usize>,
) -> PyResult<(Vec<f64>, usize, usize)> {
    let x = images(data, shape)?;
    py.detach(|| -> Result<_, veil_nn::NnError> {
        let model = veil_nn::image::ImageModel::load(&model_path)?;
        let pixels = model.pixel_values(&x)?;
        let out =
            veil_nn::float::run_float_on(&model.graph, &model.weights, veil_nn::Input::Images(&pixels))?;
        Ok((out.data, out.rows, out.cols))
    })
    .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The model at `model_path` in the clear, no MPC: the float executor beside the plaintext
/// fixed-point executor with `family`'s arithmetic (default: `aegis` for an `.onnx` CNN,
/// `mosformer` otherwise), on `text` or on the images `data` of `shape`; returns
/// the report (both outputs, their largest difference, the layers whose values left their
/// range) as JSON text.
#[pyfunction]
#[pyo3(signature = (model_path, text = None, data = None, shape = None, family = None, rings = None))]
fn fixed_point_inference(
    py: Python<'_>,
    model_path: std::path::PathBuf,
    text: Option<String>,
    data: Option<Vec<f64>>,
    shape: Option<Vec<usize>>,
    family: Option<&str>,
    rings: Option<&str>,
) -> PyResult<String> {
    let model =
        if veil_nn::image::is_image_model(&model_path) { Some(image_model(&model_path)?) } else { None };
    let transformer =
        model.as_ref().is_none_or(|m| m.graph.nodes.iter().any(|n| n.op.needs_transformer_layers()));
    let family = choice(family, None, rings, None, None, if transformer { "mosformer" } else { "aegis" })?;
    let x = match (&model, data, shape, &text) {
        (Some(_), Some(d), Some(s), None) => Some(images(d, s)?),
        (None, None, None, Some(_)) => None,
        _ => {
            return Err(PyValueError::new_err(
                "pass text for a text model, data and shape for an image model",
            ));
        }
    };
    let report = py
        .detach(|| match (&model, x) {
            (Some(m), Some(x)) => veil_runtime::plain::plain_images(m, &x, &family),
            _ => veil_runtime::plain::plain_text(&model_path, text.as_deref().unwrap_or_default(), &family),
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    serde_json::to_string(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(families, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_mul, m)?)?;
    m.add_function(wrap_pyfunction!(make_certs, m)?)?;
    m.add_function(wrap_pyfunction!(private_inference, m)?)?;
    m.add_function(wrap_pyfunction!(prepare_material, m)?)?;
    m.add_function(wrap_pyfunction!(fixed_point_inference, m)?)?;
    m.add_function(wrap_pyfunction!(plaintext_inference, m)?)?;
    m.add_function(wrap_pyfunction!(private_classification, m)?)?;
    m.add_function(wrap_pyfunction!(plaintext_classification, m)?)?;
    m.add_function(wrap_pyfunction!(is_image_model, m)?)?;
    m.add_function(wrap_pyfunction!(check_model, m)?)?;
    m.add_function(wrap_pyfunction!(load_images, m)?)?;
    m.add_function(wrap_pyfunction!(tokens, m)?)?;
    Ok(())
}
