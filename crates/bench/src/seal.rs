//! SEAL's time for the same operation, measured in the same run through seal-python
//! (`scripts/seal_ops.py`, embedded here) where it is installed: the interpreter is
//! `$VEIL_PYTHON`, else `.venv/bin/python` (what `scripts/setup.sh` makes), else `python3`.
//! Where none of them imports `seal`, the records say `null` and one line on stderr says why.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use veil_he::Bfv;

const SCRIPT: &str = include_str!("../../../scripts/seal_ops.py");

fn python() -> String {
    if let Ok(p) = std::env::var("VEIL_PYTHON") {
        return p;
    }
    if std::path::Path::new(".venv/bin/python").exists() {
        return ".venv/bin/python".into();
    }
    "python3".into()
}

/// Runs the script on `request` (with the BFV parameters added); its JSON answer.
pub fn run(bfv: &Bfv, mut request: serde_json::Value) -> Result<serde_json::Value, String> {
    let primes = bfv.primes(0).map_err(|e| e.to_string())?.to_vec();
    request["n"] = bfv.slots().into();
    request["t"] = bfv.plaintext_modulus().into();
    request["primes"] = primes.into();
    run_request(&request)
}

/// Runs the script on a complete request.
pub fn run_request(request: &serde_json::Value) -> Result<serde_json::Value, String> {
    let mut child = Command::new(python())
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", python()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    // The script may exit (seal-python missing) before it reads its request.
    let _ = stdin.write_all(request.to_string().as_bytes());
    drop(stdin);
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|_| format!("no answer from SEAL: {}", String::from_utf8_lossy(&out.stderr).trim()))?;
    match answer.get("error") {
        Some(e) => Err(e.as_str().unwrap_or("error").to_string()),
        None => Ok(answer),
    }
}

/// SEAL's seconds for a BFV `request`, or `None` (said once on stderr) where SEAL is not there.
pub fn seconds(bfv: &Bfv, request: serde_json::Value) -> Option<f64> {
    said(run(bfv, request))
}

/// SEAL's seconds for a complete CKKS request (`n`, `chain`, `scale` given).
pub fn seconds_ckks(request: serde_json::Value) -> Option<f64> {
    said(run_request(&request))
}

fn said(answer: Result<serde_json::Value, String>) -> Option<f64> {
    static SAID: OnceLock<()> = OnceLock::new();
    match answer {
        Ok(answer) => answer.get("seconds").and_then(serde_json::Value::as_f64),
        Err(why) => {
            SAID.get_or_init(|| eprintln!("bench: no SEAL figures ({why})"));
            None
        }
    }
}
