//! Python bindings of Veil (`veil._native`), thin on purpose: conversions, errors, and
//! releasing the GIL while parties run. The Python API lives in `python/veil`.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use veil_runtime::{Link, simulate_demo};

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
    let link = match link {
        "memory" => Link::Memory,
        "tls" => Link::Tls,
        other => return Err(PyValueError::new_err(format!("link must be 'memory' or 'tls', not {other:?}"))),
    };
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

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_mul, m)?)?;
    m.add_function(wrap_pyfunction!(make_certs, m)?)?;
    Ok(())
}
