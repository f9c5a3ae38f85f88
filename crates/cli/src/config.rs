//! The deployment config file read by `veil party` (TOML).
//!
//! ```toml
//! session = "00112233445566778899aabbccddeeff"   # 16 bytes, hex, the same at every party
//! ca = "certs/ca.pem"
//! connect_timeout_s = 30
//! recv_timeout_s = 60
//! link_delay_us = 0        # benchmarks only: emulated one-way latency (see below)
//!
//! [[party]]                # one per party, in id order
//! address = "127.0.0.1:7000"
//! cert = "certs/party-0.pem"
//! key = "certs/party-0.key"
//!
//! [job]
//! kind = "embed"           # private inference of a Hugging Face model (5 parties)
//! family = "mosformer"
//! security = "malicious"
//! offline = "ahead"        # or "on-demand", or "stored" (optional; every server must use
//!                          # the same; "stored": each server passes --material DIR, where
//!                          # `veil party --prepare` wrote its file)
//! rings = "mixed"          # or "z64": the gates without modulus conversion (optional)
//! ```
//!
//! or `kind = "classify"` (private classification with an ONNX CNN, 5 parties, `family` `aegis`
//! or `mosformer`, the latter with `rings` as above), or `kind = "demo-mul"` with `length` and `output` (a product of two secret
//! vectors with an insecure test dealer, kept to exercise deployments quickly).
//!
//! Secret inputs are not in this file (every party reads it): in `embed`, the data owner
//! (party 3) passes `--text`, the model owner (party 4) a `--model` folder with the weights,
//! and every party a `--model` folder with the public files; in `classify`, the model owner
//! passes the `.onnx` file, the others the public model `veil graph` writes from it, and the
//! data owner `--images FILE.safetensors` (with `--batch N`); in `demo-mul`, parties 0 and 1
//! pass `--input FILE` (a JSON array of numbers). Relative paths are relative to the config
//! file's folder.
//!
//! `link_delay_us` makes every party hold each frame it receives for that long after its last
//! byte arrived: the latency of a link, emulated where the kernel cannot delay packets (no
//! `netem`; `veil bench model --net` uses it then). It is 0 in deployments.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

/// A whole deployment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Session id, 32 hex digits.
    pub session: String,
    /// The CA certificate.
    pub ca: PathBuf,
    /// Seconds to keep dialing and accepting peers.
    #[serde(default = "default_connect")]
    pub connect_timeout_s: u64,
    /// Seconds a receive waits.
    #[serde(default = "default_recv")]
    pub recv_timeout_s: u64,
    /// Emulated one-way latency in microseconds, added by each receiver (benchmarks).
    #[serde(default)]
    pub link_delay_us: u64,
    /// The parties, in id order.
    pub party: Vec<PartyEntry>,
    /// What to compute.
    pub job: Job,
}

/// The largest emulated one-way latency accepted.
const MAX_LINK_DELAY_US: u64 = 10_000_000;

fn default_connect() -> u64 {
    30
}

fn default_recv() -> u64 {
    60
}

/// One party's address and credentials.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartyEntry {
    /// Where it listens.
    pub address: SocketAddr,
    /// Its certificate.
    pub cert: PathBuf,
    /// Its private key.
    pub key: PathBuf,
}

/// The computation.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Job {
    /// Elementwise product of party 0's secret vector and party 1's, revealed to `output`.
    DemoMul {
        /// Length of both vectors.
        length: usize,
        /// The party that learns the result.
        output: usize,
    },
    /// Private inference of a Hugging Face model: servers 0, 1, 2, data owner 3 (passes
    /// `--text`), model owner 4 (its `--model` folder holds the weights). Every party passes
    /// `--model` with at least the public files (`config.json`, `tokenizer.json`, pooling).
    Embed {
        /// Protocol family (`mosformer`).
        family: String,
        /// `malicious` or `semi-honest`.
        security: String,
        /// The servers' offline material: `ahead` of the online phase, `on-demand`, or
        /// `stored` by `veil party --prepare` (each server passes `--material DIR`).
        #[serde(default = "default_offline")]
        offline: String,
        /// The gates' working rings: `mixed` (modulus conversion) or `z64`.
        #[serde(default = "default_rings")]
        rings: String,
    },
    /// Private classification with an ONNX CNN: servers 0, 1, 2, data owner 3 (passes
    /// `--images`), model owner 4 (passes the `.onnx` file); the others pass the public model.
    Classify {
        /// Protocol family (`aegis` or `mosformer`).
        family: String,
        /// `malicious` or `semi-honest`.
        security: String,
        /// The servers' offline material under `mosformer`: `ahead`, `on-demand` or `stored`.
        #[serde(default = "default_offline")]
        offline: String,
        /// Under `mosformer`, the gates' working rings: `mixed` or `z64`.
        #[serde(default = "default_rings")]
        rings: String,
    },
}

fn default_offline() -> String {
    "ahead".into()
}

fn default_rings() -> String {
    "mixed".into()
}

/// `offline`: `ahead`, `on-demand` or `stored`.
fn check_offline(offline: &str) -> anyhow::Result<()> {
    if offline != "stored" {
        crate::run::parse_offline(offline)?;
    }
    Ok(())
}

impl Config {
    /// Reads and checks a config file; relative paths are resolved against its folder.
    pub fn load(path: &Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the config file {}", path.display()))?;
        let mut cfg: Config =
            toml::from_str(&text).with_context(|| format!("invalid config file {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        cfg.ca = base.join(&cfg.ca);
        for p in &mut cfg.party {
            p.cert = base.join(&p.cert);
            p.key = base.join(&p.key);
        }
        cfg.check()?;
        Ok(cfg)
    }

    fn check(&self) -> anyhow::Result<()> {
        self.session_id()?;
        if self.link_delay_us > MAX_LINK_DELAY_US {
            bail!(
                "link_delay_us = {} is more than {MAX_LINK_DELAY_US} (10 s): an emulated latency, not a timeout",
                self.link_delay_us
            );
        }
        if self.party.len() < 2 {
            bail!("the config lists {} parties; at least 2 are needed", self.party.len());
        }
        match &self.job {
            Job::DemoMul { length, output } => {
                if *length == 0 || *length > 1 << 24 {
                    bail!("job: length must be between 1 and 2^24, got {length}");
                }
                if *output >= self.party.len() {
                    bail!("job: output party {output} does not exist");
                }
            }
            Job::Classify { family, security, offline, rings } => {
                veil_runtime::classify::CnnFamily::parse(family, crate::bench::parse_security(security)?)?
                    .with_rings(crate::run::parse_rings(rings)?)?;
                check_offline(offline)?;
                if self.party.len() != veil_runtime::inference::PARTIES {
                    bail!(
                        "job: a classify session has {} parties (3 servers, data owner, model owner), the config lists {}",
                        veil_runtime::inference::PARTIES,
                        self.party.len()
                    );
                }
            }
            Job::Embed { family, security, offline, rings } => {
                if family != "mosformer" {
                    bail!("job: family {family:?} cannot run models yet (use \"mosformer\")");
                }
                crate::bench::parse_security(security)?;
                crate::run::parse_rings(rings)?;
                check_offline(offline)?;
                if self.party.len() != veil_runtime::inference::PARTIES {
                    bail!(
                        "job: an embed session has {} parties (3 servers, data owner, model owner), the config lists {}",
                        veil_runtime::inference::PARTIES,
                        self.party.len()
                    );
                }
            }
        }
        Ok(())
    }

    /// The session id as bytes.
    pub fn session_id(&self) -> anyhow::Result<[u8; 16]> {
        let bytes = hex::decode(&self.session).context("session must be 32 hex digits")?;
        bytes.try_into().map_err(|_| anyhow::anyhow!("session must be 32 hex digits (16 bytes)"))
    }
}
