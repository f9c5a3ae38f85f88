//! The servers' offline material on disk: made in one session (`veil prepare`, or `veil party
//! --prepare` on each server host), used once by a later session's online phase.
//!
//! **What a session of the servers makes.** The material depends on public facts only (the
//! graph with its weights' shapes, the number of tokens or images, the mode, the chunk size),
//! so it can be made before the data owner has its input: each server plans it as
//! [`crate::ahead`] does (from the graph's shapes), makes it with the other two servers, and writes it to
//! `server-N.material` in its own folder.
//!
//! **The file.** `veil-material\n`, the header's length (4 bytes, little-endian), the header
//! (JSON: format, family, mode, party, graph digest, input size, chunk size, material id),
//! the material ([`StoredMaterial::encode`]), then a BLAKE3 digest of everything before it. A
//! truncated or damaged file fails the digest; a file for another model, size, mode or party
//! fails the header check, each with an error that names what differs.
//!
//! **Used once.** The three servers draw the material id together when they make it (each
//! contributes 16 random bytes; the id hashes all three). Before a session uses stored
//! material, the servers exchange their ids and stop, naming the server, if one loaded a file
//! of another offline phase. Then each deletes its file *before* the online phase starts: the
//! same masks, keys and triples on two inputs would leak their difference, so a file can never
//! serve a second session (an interrupted session's material is lost, not reused). Deleting
//! is not enough against a restored copy (a backup, a snapshot): each server first records the
//! id in its ledger of used material outside the folder ([`crate::ledger`], synced to disk)
//! and refuses an id it has recorded.
//!
//! **Trust.** A server's file is its own secret material (its shares and keys): keep it with
//! the server's key. It is not encrypted here; a corrupted server that changes it is caught
//! by the online phase's checks like any other deviation.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use veil_crypto::{Digest, Hasher};
use veil_mosformer::offline::Offline;
use veil_mosformer::stored::StoredMaterial;
use veil_mosformer::{Mode, Mosformer};
use veil_mpc::phase::{OFFLINE_PHASE, in_offline_phase};
use veil_mpc::{Ctx, MpcError, PartyId};
use veil_nn::graph::Graph;

use crate::PhaseReport;
use crate::families::THREE_SERVERS;
use crate::inference::{CHUNK, graph_digest, security_name};

/// The file format's version (2: gate outputs and MACs in Z_2^128, and the gates' rings).
pub const FORMAT: u32 = 2;
const MAGIC: &[u8] = b"veil-material\n";
/// The purpose string of the digest that ends a material file.
pub const DIGEST_PURPOSE: &str = "veil/material-file";
/// Largest header accepted (it is a few hundred bytes).
const MAX_HEADER: usize = 1 << 16;

/// Server `party`'s material file in `dir`.
pub fn material_path(dir: &Path, party: PartyId) -> PathBuf {
    dir.join(format!("server-{party}.material"))
}

/// What a material file was made for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialHeader {
    /// [`FORMAT`].
    pub format: u32,
    /// The protocol family (`mosformer`).
    pub family: String,
    /// `malicious` or `semi-honest`.
    pub security: String,
    /// The gates' working rings (`mixed` or `z64`).
    pub rings: String,
    /// The server that holds it.
    pub party: PartyId,
    /// The public graph's digest ([`graph_digest`]), hex.
    pub graph: String,
    /// Tokens or images of the session it serves.
    pub size: usize,
    /// Elements per gate call.
    pub chunk: usize,
    /// The id the three servers drew for this offline phase, hex.
    pub id: String,
}

impl MaterialHeader {
    /// The header of server `party`'s material for a session of `graph` on `size` tokens or
    /// images in `mode`.
    fn new(graph: &Graph, size: usize, mode: Mode, party: PartyId, id: &Digest) -> Result<Self, MpcError> {
        Ok(MaterialHeader {
            format: FORMAT,
            family: "mosformer".into(),
            security: security_name(mode.security).into(),
            rings: mode.rings.name().into(),
            party,
            graph: hex::encode(graph_digest(graph)?.as_bytes()),
            size,
            chunk: CHUNK,
            id: hex::encode(id.as_bytes()),
        })
    }

    /// Names every way this header differs from `want` (`None`: it serves that session).
    fn mismatch(&self, want: &MaterialHeader) -> Option<String> {
        let mut differs = Vec::new();
        let mut differ = |what: &str, got: String, want: String| {
            if got != want {
                differs.push(format!("{what} {got} (this session: {want})"));
            }
        };
        differ("family", self.family.clone(), want.family.clone());
        differ("server", self.party.to_string(), want.party.to_string());
        differ("the model with graph digest", short(&self.graph), short(&want.graph));
        if self.size != want.size {
            differ("an input of", format!("{} tokens or images", self.size), want.size.to_string());
        }
        differ("mode", self.security.clone(), want.security.clone());
        differ("the rings", self.rings.clone(), want.rings.clone());
        differ("gate calls of", self.chunk.to_string(), want.chunk.to_string());
        (!differs.is_empty()).then(|| format!("it was made for {}", differs.join(", for ")))
    }
}

fn short(hex: &str) -> String {
    format!("{}…", hex.get(..12).unwrap_or(hex))
}

/// Hashes what passes through to the file.
struct HashingWriter<W> {
    inner: W,
    hasher: Hasher,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn io_error(path: &Path, what: &str, e: impl std::fmt::Display) -> MpcError {
    MpcError::Invalid(format!("{what} {}: {e}", path.display()))
}

/// Writes a material file (to a temporary name first, renamed once complete, so a crash never
/// leaves a file that looks whole). Returns its size in bytes.
///
/// # Errors
/// A failure to create or write the file.
pub fn write_material(path: &Path, header: &MaterialHeader, m: &StoredMaterial) -> Result<u64, MpcError> {
    let partial = path.with_extension("material.partial");
    let file = std::fs::File::create(&partial).map_err(|e| io_error(&partial, "cannot create", e))?;
    let failed = |e: std::io::Error| io_error(&partial, "cannot write", e);
    // The buffer sits above the hashing, so the digest is fed in large pieces (the encoding
    // writes a word's bytes one at a time).
    let hashing = HashingWriter { inner: file, hasher: Hasher::new(DIGEST_PURPOSE) };
    let mut w = std::io::BufWriter::with_capacity(1 << 20, hashing);
    let head = serde_json::to_vec(header).map_err(|e| MpcError::Invalid(e.to_string()))?;
    w.write_all(MAGIC).map_err(failed)?;
    w.write_all(&(head.len() as u32).to_le_bytes()).map_err(failed)?;
    w.write_all(&head).map_err(failed)?;
    m.encode(&mut w)?;
    let HashingWriter { mut inner, hasher } = w.into_inner().map_err(|e| failed(e.into_error()))?;
    inner.write_all(hasher.finalize().as_bytes()).and_then(|()| inner.sync_all()).map_err(failed)?;
    drop(inner);
    std::fs::rename(&partial, path).map_err(|e| io_error(path, "cannot write", e))?;
    let size = std::fs::metadata(path).map_err(|e| io_error(path, "cannot read", e))?.len();
    Ok(size)
}

/// Reads a material file: checks its digest, then parses the header and the material.
///
/// # Errors
/// A missing, truncated or damaged file (named, with what is wrong), or one of another format.
pub fn read_material(path: &Path) -> Result<(MaterialHeader, StoredMaterial), MpcError> {
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => MpcError::Invalid(format!(
            "no material file at {}: stored material serves one session and is deleted by it; \
             make more with `veil prepare` (or `veil party --prepare`)",
            path.display()
        )),
        _ => io_error(path, "cannot read the material file", e),
    })?;
    let bad = |what: &str| MpcError::Invalid(format!("the material file {} {what}", path.display()));
    if bytes.len() < MAGIC.len() + 4 + 32 || !bytes.starts_with(MAGIC) {
        return Err(bad("is not a Veil material file"));
    }
    let (body, digest) = bytes.split_at(bytes.len() - 32);
    let want = Hasher::new(DIGEST_PURPOSE).update(body).finalize();
    if want.as_bytes().as_slice() != digest {
        return Err(bad("is damaged or truncated (its digest does not match)"));
    }
    let rest = &body[MAGIC.len()..];
    let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
    if len > MAX_HEADER || len > rest.len() - 4 {
        return Err(bad("has a malformed header"));
    }
    let header: MaterialHeader = serde_json::from_slice(&rest[4..4 + len])
        .map_err(|e| bad(&format!("has a malformed header: {e}")))?;
    if header.format != FORMAT {
        return Err(bad(&format!("has format {}; this Veil reads format {FORMAT}", header.format)));
    }
    let material =
        StoredMaterial::decode(&rest[4 + len..]).map_err(|e| bad(&format!("has malformed material: {e}")))?;
    Ok((header, material))
}

/// The servers' common value from one private 16-byte contribution each (servers `0, 1, 2`).
fn draw_id(ctx: &mut Ctx) -> Result<Digest, MpcError> {
    use rand::RngCore;
    let mut mine = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut mine);
    let me = ctx.party();
    let peers: Vec<PartyId> = (0..3).filter(|&p| p != me).collect();
    for &p in &peers {
        ctx.net().send(p, mine.to_vec())?;
    }
    let mut parts = [[0u8; 16]; 3];
    parts[me] = mine;
    for &p in &peers {
        let m = ctx.recv_at_most(p, 16)?;
        parts[p] = m
            .as_slice()
            .try_into()
            .map_err(|_| MpcError::Malformed { from: p, what: "material id".into() })?;
    }
    let mut h = Hasher::new("veil/material-id");
    for part in &parts {
        h.update(part);
    }
    Ok(h.finalize())
}

/// One server's report of an offline phase made to be stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PreparedServer {
    /// Server id.
    pub party: PartyId,
    /// The file written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub file_bytes: u64,
    /// Gate calls the material serves.
    pub gates: usize,
    /// The offline phase's counters (its seconds include planning it from the graph's shapes).
    pub offline: PhaseReport,
    /// Seconds to write the file.
    pub write_seconds: f64,
    /// The material id, hex.
    pub id: String,
}

/// Server `ctx.party()` (of servers `0, 1, 2`; owners take no part) makes the material of a
/// session of `graph` on `size` tokens or images and writes it to [`material_path`] in `dir`.
///
/// # Errors
/// A plan too large to hold ([`crate::ahead::AHEAD_LIMIT`]), a failure of the offline phase,
/// or of writing the file.
pub fn prepare_server(
    ctx: &mut Ctx,
    graph: &Graph,
    size: usize,
    mode: impl Into<Mode>,
    dir: &Path,
) -> Result<PreparedServer, MpcError> {
    let mode = mode.into();
    let security = mode.security;
    let me = ctx.party();
    if me >= 3 {
        return Err(MpcError::Invalid(format!(
            "party {me} is not a server: only servers 0, 1, 2 make material"
        )));
    }
    let start = Instant::now();
    let (material, id) = in_offline_phase(ctx, |ctx| {
        let mut family = Mosformer::new(security, Offline::for_security(security))
            .with_chunk(CHUNK)
            .with_rings(mode.rings);
        let plan = crate::ahead::session_plan(&family, graph, size, THREE_SERVERS.roles, size.max(1))?;
        if plan.gate_elements() > crate::ahead::AHEAD_LIMIT {
            return Err(MpcError::Invalid(format!(
                "a session of {size} tokens or images needs more material than a server holds at once \
                 (over {} gate elements); run it with its material made on demand",
                crate::ahead::AHEAD_LIMIT
            )));
        }
        family.prepare_all(ctx, &plan)?;
        let id = draw_id(ctx)?;
        Ok((family.take_material(), id))
    })?;
    let offline_s = start.elapsed().as_secs_f64();
    let header = MaterialHeader::new(graph, size, mode, me, &id)?;
    let path = material_path(dir, me);
    let written = Instant::now();
    let file_bytes = write_material(&path, &header, &material)?;
    let s = ctx.stats().get(OFFLINE_PHASE);
    Ok(PreparedServer {
        party: me,
        path,
        file_bytes,
        gates: material.gates().count(),
        offline: PhaseReport {
            phase: OFFLINE_PHASE.into(),
            bytes_sent: s.bytes_sent,
            bytes_received: s.bytes_received,
            messages_sent: s.messages_sent,
            rounds: s.rounds,
            seconds: offline_s,
        },
        write_seconds: written.elapsed().as_secs_f64(),
        id: header.id,
    })
}

/// Server `ctx.party()` loads its stored material for this session into `family`: reads and
/// checks its file in `dir`, agrees with the other two servers that all three files come from
/// one offline phase, deletes the file, then hands the material to `family`.
///
/// # Errors
/// A missing, damaged or mismatched file (named), servers holding files of different offline
/// phases, or a file that cannot be deleted (the material is then not used).
pub fn load_server(
    family: &mut Mosformer<Offline>,
    ctx: &mut Ctx,
    graph: &Graph,
    size: usize,
    dir: &Path,
) -> Result<(), MpcError> {
    let me = ctx.party();
    let path = material_path(dir, me);
    // Reading counts as this session's offline phase (its seconds; it sends nothing).
    let (header, material) = in_offline_phase(ctx, |_| read_material(&path))?;
    let mode = Mode { security: family.security(), rings: family.rings() };
    let want = MaterialHeader::new(graph, size, mode, me, &Digest([0; 32]))?;
    if let Some(why) = header.mismatch(&want) {
        return Err(MpcError::Invalid(format!(
            "the material file {} does not serve this session: {why}",
            path.display()
        )));
    }
    in_offline_phase(ctx, |ctx| {
        let peers: Vec<PartyId> = (0..3).filter(|&p| p != me).collect();
        for &p in &peers {
            ctx.net().send(p, header.id.as_bytes().to_vec())?;
        }
        for &p in &peers {
            let theirs = ctx.recv_at_most(p, header.id.len())?;
            if theirs.as_slice() != header.id.as_bytes() {
                return Err(MpcError::Invalid(format!(
                    "server {p} loaded material of another offline phase (id {}, ours {}): \
                     every server must load the files of one `prepare`",
                    short(&String::from_utf8_lossy(&theirs)),
                    short(&header.id)
                )));
            }
        }
        Ok(())
    })?;
    // Recorded as used, durably, before anything depends on it: a restored copy of this file
    // is refused from now on.
    let ledger = crate::ledger::default_path().ok_or_else(|| {
        MpcError::Invalid(
            "no place for the ledger of used material (set VEIL_STATE_DIR, XDG_STATE_HOME or HOME): \
             stored material is refused without one"
                .into(),
        )
    })?;
    crate::ledger::record_use(&ledger, &header.id, me)?;
    std::fs::remove_file(&path)
        .map_err(|e| io_error(&path, "cannot delete used material (it must serve one session only)", e))?;
    family.load_material(material)
}

/// The three servers, as threads of this process (linked in memory or by TCP + mutual TLS on
/// 127.0.0.1), make the material of a session of `graph` on `size` tokens or images and each
/// write theirs to `dir` (created if missing).
///
/// # Errors
/// As [`prepare_server`], or a folder that cannot be created.
pub fn prepare_material(
    graph: &Graph,
    size: usize,
    mode: impl Into<Mode>,
    dir: &Path,
    link: crate::Link,
) -> Result<Vec<PreparedServer>, MpcError> {
    let mode = mode.into();
    use veil_mpc::harness::{SimConfig, simulate_tcp_with, simulate_with};
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, "cannot create the folder", e))?;
    let timeout = std::time::Duration::from_secs(crate::inference::OWNER_WAIT_S);
    // Fresh private seeds: the material must be new each time.
    let cfg = SimConfig { seed: crate::inference::rand_seed(), timeout };
    let job = |ctx: &mut Ctx| prepare_server(ctx, graph, size, mode, dir);
    let results = match link {
        crate::Link::Memory => simulate_with(3, cfg, job),
        crate::Link::Tls => simulate_tcp_with(3, cfg, job),
    };
    veil_mpc::harness::root_cause(results)
}
