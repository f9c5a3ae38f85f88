//! The ledger of stored material a server has used: its ids, one per line, kept outside the
//! material's folder and written durably before the material serves a session, so that a
//! restored copy of a material file (a backup, a snapshot) is refused instead of serving a
//! second input with the same masks and keys (which would leak the two inputs' difference).
//!
//! **Where.** `$VEIL_STATE_DIR/used-material`, else `$XDG_STATE_HOME/veil/used-material`, else
//! `$HOME/.local/state/veil/used-material`: per user and host, apart from the material (a copy
//! of the material folder does not bring an older ledger with it). A server that can find no
//! such place refuses stored material.
//!
//! **Format.** Lines `<material id> <party>`; the file is locked while a server checks and
//! records (servers of one host, as processes or threads, share it), and synced to disk before
//! the material is used. Lines that do not parse are an error, never skipped.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use veil_mpc::{MpcError, PartyId};

/// The ledger's file name in its folder.
const FILE: &str = "used-material";
/// Largest ledger read (about 2·10^5 uses); a larger file is refused, not read.
const MAX_BYTES: u64 = 8 << 20;

/// The ledger's path on this host (see the module doc), or `None`.
pub fn default_path() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let dir = var("VEIL_STATE_DIR")
        .or_else(|| var("XDG_STATE_HOME").map(|d| d.join("veil")))
        .or_else(|| var("HOME").map(|h| h.join(".local/state/veil")))?;
    Some(dir.join(FILE))
}

fn io(path: &Path, what: &str, e: std::io::Error) -> MpcError {
    MpcError::Invalid(format!("the ledger of used material {}: {what}: {e}", path.display()))
}

/// Records that server `party` uses material `id`, durably, unless it did already: then an
/// error, and the material must not be used.
///
/// # Errors
/// A used id, or a ledger that cannot be read, parsed or written.
pub fn record_use(path: &Path, id: &str, party: PartyId) -> Result<(), MpcError> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(MpcError::Invalid(format!("material id {id:?} is not hex")));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(path, "cannot create its folder", e))?;
    }
    let mut file: File = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| io(path, "cannot open it", e))?;
    file.lock().map_err(|e| io(path, "cannot lock it", e))?;
    let len = file.metadata().map_err(|e| io(path, "cannot read it", e))?.len();
    if len > MAX_BYTES {
        return Err(MpcError::Invalid(format!(
            "the ledger of used material {} holds {len} bytes, more than {MAX_BYTES}: archive it",
            path.display()
        )));
    }
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).map_err(|e| io(path, "cannot read it", e))?;
    file.read_to_string(&mut text).map_err(|e| io(path, "cannot read it", e))?;
    for (n, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(' ').collect();
        let [used, by] = fields.as_slice() else {
            return Err(MpcError::Invalid(format!(
                "the ledger {} line {}: not `<id> <party>`",
                path.display(),
                n + 1
            )));
        };
        if *used == id && by.parse::<PartyId>().ok() == Some(party) {
            return Err(MpcError::Invalid(format!(
                "material {id} was already used by server {party} (the ledger {} says so): \
                 stored material serves one session; a restored copy would reuse its masks and \
                 keys on another input",
                path.display()
            )));
        }
    }
    file.write_all(format!("{id} {party}\n").as_bytes()).map_err(|e| io(path, "cannot write it", e))?;
    file.sync_all().map_err(|e| io(path, "cannot sync it", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_serves_each_server_once_and_a_bad_ledger_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state").join(FILE);
        record_use(&path, "00ff", 0).unwrap();
        record_use(&path, "00ff", 1).unwrap();
        record_use(&path, "abcd", 0).unwrap();
        let err = record_use(&path, "00ff", 1).unwrap_err();
        assert!(err.to_string().contains("already used by server 1"), "{err}");
        assert!(record_use(&path, "not hex", 0).is_err());
        std::fs::write(&path, "00ff 0\ngarbage\n").unwrap();
        let err = record_use(&path, "1234", 2).unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }
}
