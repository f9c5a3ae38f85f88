//! Keys kept between the sessions of one deployment: a party's own secret key and the keys it
//! holds of its peer, in one file with a digest, so that later inferences skip key generation
//! and exchange.
//!
//! ```text
//! "VEILHEK1" | kind: u8 (1: BFV OLE, 2: CKKS key holder, 3: CKKS evaluator)
//!            | preset name: u8 length + bytes | sections: u64 length + bytes each
//!            | BLAKE3 digest of everything before (32 bytes, purpose "veil/he/keyfile")
//! ```
//!
//! A secret key is its ternary coefficients, one byte each (0, 1, 2 for −1, 0, 1). Every
//! section is read back through the checked decoders of the wire formats; a file that is cut
//! short, altered, of another kind or preset, or holds an out-of-range value is an error
//! naming what is wrong. The file holds a secret key: callers write it readable by its owner
//! only (`write_private`).

use std::io::Write;
use std::path::Path;

use veil_crypto::hash;
use veil_mpc::{MpcError, Result};

const MAGIC: &[u8; 8] = b"VEILHEK1";
const PURPOSE: &str = "veil/he/keyfile";

/// What a key file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A BFV OLE end: own secret key, the peer's public key.
    BfvOle = 1,
    /// A CKKS key holder: secret and public key.
    CkksKeyHolder = 2,
    /// A CKKS evaluator: public, relinearisation and Galois keys.
    CkksEvaluator = 3,
}

fn invalid(what: String) -> MpcError {
    MpcError::Invalid(format!("key file: {what}"))
}

/// Ternary coefficients as bytes.
pub fn ternary_to_bytes(coeffs: &[i64]) -> Vec<u8> {
    coeffs.iter().map(|&c| (c + 1) as u8).collect()
}

/// Bytes back to ternary coefficients (exactly `n`, each 0, 1 or 2).
pub fn ternary_from_bytes(bytes: &[u8], n: usize) -> Result<Vec<i64>> {
    if bytes.len() != n {
        return Err(invalid(format!("a secret key of {} coefficients, expected {n}", bytes.len())));
    }
    bytes
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if b <= 2 { Ok(i64::from(b) - 1) } else { Err(invalid(format!("secret coefficient {i} is {b}"))) }
        })
        .collect()
}

/// The file's bytes.
pub fn seal(kind: Kind, preset: &str, sections: &[&[u8]]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.push(kind as u8);
    out.push(preset.len() as u8);
    out.extend_from_slice(preset.as_bytes());
    for s in sections {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s);
    }
    let digest = hash(PURPOSE, &out);
    out.extend_from_slice(&digest.0);
    out
}

/// The `count` sections of a file of `kind` and `preset`, after the digest and header checks.
pub fn open<'a>(bytes: &'a [u8], kind: Kind, preset: &str, count: usize) -> Result<Vec<&'a [u8]>> {
    if bytes.len() < MAGIC.len() + 2 + 32 || &bytes[..8] != MAGIC {
        return Err(invalid("not a Veil HE key file".into()));
    }
    let (body, digest) = bytes.split_at(bytes.len() - 32);
    if hash(PURPOSE, body).0 != digest {
        return Err(invalid("the digest does not match: the file is damaged or altered".into()));
    }
    if body[8] != kind as u8 {
        return Err(invalid(format!("kind {}, expected {}", body[8], kind as u8)));
    }
    let name_len = usize::from(body[9]);
    let name = body.get(10..10 + name_len).ok_or_else(|| invalid("the preset name is cut short".into()))?;
    if name != preset.as_bytes() {
        return Err(invalid(format!(
            "keys for preset '{}', expected '{preset}'",
            String::from_utf8_lossy(name)
        )));
    }
    let mut rest = &body[10 + name_len..];
    let mut sections = Vec::with_capacity(count);
    for i in 0..count {
        if rest.len() < 8 {
            return Err(invalid(format!("section {i} is missing")));
        }
        let len = u64::from_le_bytes(rest[..8].try_into().map_err(|_| invalid("length".into()))?);
        let len = usize::try_from(len).ok().filter(|&l| l <= rest.len() - 8);
        let len = len.ok_or_else(|| invalid(format!("section {i} is longer than the file")))?;
        sections.push(&rest[8..8 + len]);
        rest = &rest[8 + len..];
    }
    if !rest.is_empty() {
        return Err(invalid(format!("{} bytes after the last section", rest.len())));
    }
    Ok(sections)
}

/// Writes `bytes` to `path` readable and writable by the owner only (Unix), replacing it.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |e: std::io::Error| MpcError::Invalid(format!("key file {}: {e}", path.display()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)
}

/// Maps a decoder's error on a section (which names a peer) to a key-file error.
pub fn section_error(e: MpcError) -> MpcError {
    match e {
        MpcError::Malformed { what, .. } => invalid(what),
        other => other,
    }
}
