//! The deployment config file read by `veil party` (TOML).
//!
//! ```toml
//! session = "00112233445566778899aabbccddeeff"   # 16 bytes, hex, the same at every party
//! ca = "certs/ca.pem"
//! connect_timeout_s = 30
//! recv_timeout_s = 60      # give up on a peer silent this long (no message, no heartbeat)
//! stall_timeout_s = 86400  # give up on a live peer that sends nothing this long
//! link_delay_us = 0        # benchmarks only: emulated one-way latency (see below)
//!
//! [[party]]                # one per party, in id order
//! address = "127.0.0.1:7000"
//! cert = "certs/party-0.pem"
//! key = "certs/party-0.key"
//!
//! [job]
//! kind = "embed"           # private inference of a Hugging Face model
//! family = "mosformer"     # any family that runs transformers (`veil families`)
//! security = "malicious"   # optional: the family's strongest by default
//! offline = "ahead"        # or "on-demand", or "stored" (optional: the family's default;
//!                          # every server must use the same; "stored": each server passes
//!                          # --material DIR, where `veil party --prepare` wrote its file)
//! rings = "mixed"          # or "z64": the gates without modulus conversion (optional)
//! owners = "outside"       # or "inside" (optional: the family's default)
//! ```
//!
//! or `kind = "classify"` (private classification with an ONNX CNN under any family:
//! `aegis`, `mosformer` with `rings` as above, `additive`), or `kind = "demo-mul"` with
//! `length` and `output` (a product of two secret vectors with an insecure test dealer, kept
//! to exercise deployments quickly).
//!
//! **Parties.** The `[[party]]` list is the whole session. With the owners `outside`, its
//! last two entries are the data owner and the model owner and the others compute (the
//! 3-party families: servers 0, 1, 2, data owner 3, model owner 4); with the owners `inside`,
//! every entry computes, party 0 is the data owner and party 1 the model owner (`additive`
//! among any number of parties, 2-party client/server families). The family must accept that
//! many computing parties.
//!
//! Secret inputs are not in this file (every party reads it): in `embed`, the data owner
//! passes `--text`, the model owner a `--model` folder with the weights,
//! and every party a `--model` folder with the public files; in `classify`, the model owner
//! passes the `.onnx` file, the others the public model `veil graph` writes from it, and the
//! data owner `--images FILE.safetensors` (with `--batch N`); in `demo-mul`, parties 0 and 1
//! pass `--input FILE` (a JSON array of numbers). Relative paths are relative to the config
//! file's folder.
//!
//! **Timeouts.** Every link sends a heartbeat each second while idle, so a party tells a peer
//! that computes (an offline phase of minutes) from one that is frozen, crashed or cut off:
//! it waits on a live peer up to `stall_timeout_s` and gives up on a silent one after
//! `recv_timeout_s` (at least 3 s, three heartbeats). A party reports success only once every
//! peer has confirmed its own; a server never reports a job done whose output did not reach
//! its receiver.
//!
//! `link_delay_us` makes every party hold each frame it receives for that long after its last
//! byte arrived: the latency of a link, emulated where the kernel cannot delay packets (no
//! `netem`; `veil bench model --net` uses it then). It is 0 in deployments.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use veil_runtime::Placement;
use veil_runtime::families::FamilyChoice;

use crate::family::FamilyArgs;

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
    /// Seconds a peer may be silent (no message, no heartbeat) before a party gives up on it.
    #[serde(default = "default_recv")]
    pub recv_timeout_s: u64,
    /// Seconds a party waits for one message from a peer that is alive.
    #[serde(default = "default_stall")]
    pub stall_timeout_s: u64,
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
/// Longest `connect_timeout_s`, `recv_timeout_s` and `stall_timeout_s`: a day (a timeout,
/// not an eternity; a receive waits through another party's longest offline phase, hours for
/// BERT-base).
const MAX_TIMEOUT_S: u64 = 86_400;
/// Shortest `recv_timeout_s`: three heartbeat intervals.
const MIN_RECV_TIMEOUT_S: u64 = 3;

fn default_connect() -> u64 {
    30
}

fn default_recv() -> u64 {
    60
}

fn default_stall() -> u64 {
    MAX_TIMEOUT_S
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
    /// Private inference of a Hugging Face model: the data owner passes `--text`, the model
    /// owner's `--model` folder holds the weights. Every party passes `--model` with at least
    /// the public files (`config.json`, `tokenizer.json`, pooling).
    Embed {
        /// Protocol family (`veil families`).
        family: String,
        /// `malicious` or `semi-honest` (default: the family's strongest).
        #[serde(default)]
        security: Option<String>,
        /// The servers' offline material: `ahead` of the online phase, `on-demand`, or
        /// `stored` by `veil party --prepare` (each server passes `--material DIR`); default:
        /// the family's.
        #[serde(default)]
        offline: Option<String>,
        /// The gates' working rings, `mixed` (modulus conversion) or `z64` (mosformer).
        #[serde(default)]
        rings: Option<String>,
        /// Where the owners sit: `outside` or `inside` the computing parties (default: the
        /// family's).
        #[serde(default)]
        owners: Option<String>,
    },
    /// Private classification with an ONNX CNN: the data owner passes `--images`, the model
    /// owner the `.onnx` file, the others the public model.
    Classify {
        /// Protocol family (`veil families`).
        family: String,
        /// `malicious` or `semi-honest` (default: the family's strongest).
        #[serde(default)]
        security: Option<String>,
        /// The servers' offline material: `ahead` of the online phase, `on-demand`, or
        /// `stored` by `veil party --prepare` (each server passes `--material DIR`); default:
        /// the family's.
        #[serde(default)]
        offline: Option<String>,
        /// The gates' working rings, `mixed` (modulus conversion) or `z64` (mosformer).
        #[serde(default)]
        rings: Option<String>,
        /// Where the owners sit: `outside` or `inside` the computing parties (default: the
        /// family's).
        #[serde(default)]
        owners: Option<String>,
    },
}

/// A model job's family and its settings; what is left out takes the family's default.
#[derive(Debug, Clone, Default)]
pub struct FamilySettings {
    /// Protocol family (`veil families`).
    pub family: String,
    /// `malicious` or `semi-honest`.
    pub security: Option<String>,
    /// The servers' offline material (`ahead`, `on-demand`, `stored`).
    pub offline: Option<String>,
    /// The gates' working rings (`mixed`, `z64`).
    pub rings: Option<String>,
    /// Where the owners sit (`outside`, `inside`).
    pub owners: Option<String>,
}

impl Job {
    /// A model job's family settings; `None` for `demo-mul`.
    pub fn settings(&self) -> Option<FamilySettings> {
        match self {
            Job::Embed { family, security, offline, rings, owners }
            | Job::Classify { family, security, offline, rings, owners } => Some(FamilySettings {
                family: family.clone(),
                security: security.clone(),
                offline: offline.clone(),
                rings: rings.clone(),
                owners: owners.clone(),
            }),
            Job::DemoMul { .. } => None,
        }
    }
}

impl FamilySettings {
    /// The family with these settings among the config's `parties` (owners included).
    pub fn choice(&self, parties: usize) -> anyhow::Result<FamilyChoice> {
        let info = &veil_runtime::families::family(&self.family)?.info;
        let placement = match &self.owners {
            Some(o) => crate::family::parse_owners(o)?,
            None => info.owners[0],
        };
        let computing = match placement {
            Placement::Outside => parties.saturating_sub(2),
            Placement::Inside => parties,
        };
        let args = FamilyArgs {
            family: Some(self.family.clone()),
            security: self.security.clone(),
            rings: self.rings.clone(),
            parties: Some(computing),
            owners: Some(placement.name().into()),
        };
        let choice = FamilyChoice::new(&args.request()?, &self.family).with_context(|| {
            format!(
                "job: the config lists {parties} parties ({computing} computing, the owners {})",
                placement.name()
            )
        })?;
        match self.offline.as_deref() {
            Some("stored") | None => {}
            Some(other) => {
                crate::run::parse_offline(other)?;
            }
        }
        Ok(choice)
    }
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
        for (name, value, least) in [
            ("connect_timeout_s", self.connect_timeout_s, 1),
            ("recv_timeout_s", self.recv_timeout_s, MIN_RECV_TIMEOUT_S),
            ("stall_timeout_s", self.stall_timeout_s, self.recv_timeout_s.max(1)),
        ] {
            if !(least..=MAX_TIMEOUT_S).contains(&value) {
                bail!(
                    "{name} = {value}: this timeout must be between {least} s and {MAX_TIMEOUT_S} s (a day)"
                );
            }
        }
        for (i, p) in self.party.iter().enumerate() {
            if let Some(j) = self.party[..i].iter().position(|q| q.address == p.address) {
                bail!("parties {j} and {i} both listen on {}: each party needs its own address", p.address);
            }
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
            Job::Classify { .. } => {
                self.choice()?;
            }
            Job::Embed { family, .. } => {
                let (choice, _) = self.choice()?;
                if !choice.family.info.runs_transformers() {
                    bail!(
                        "job: family {family:?} cannot run models yet that need transformer layers, as embed jobs do (use \"mosformer\")"
                    );
                }
            }
        }
        Ok(())
    }

    /// How long a party waits on its peers.
    pub fn patience(&self) -> veil_net::Patience {
        veil_net::Patience {
            silence: std::time::Duration::from_secs(self.recv_timeout_s),
            stall: std::time::Duration::from_secs(self.stall_timeout_s),
        }
    }

    /// The model job's family with its settings; an error for a `demo-mul` job.
    pub fn choice(&self) -> anyhow::Result<(FamilyChoice, FamilySettings)> {
        let settings = self.job.settings().context("the config's job is `demo-mul`, which has no family")?;
        Ok((settings.choice(self.party.len())?, settings))
    }

    /// The session id as bytes.
    pub fn session_id(&self) -> anyhow::Result<[u8; 16]> {
        let bytes = hex::decode(&self.session).context("session must be 32 hex digits")?;
        bytes.try_into().map_err(|_| anyhow::anyhow!("session must be 32 hex digits (16 bytes)"))
    }
}

#[cfg(test)]
mod reference {
    //! `docs/deployment.md` against this file: its samples load, and it names every field.
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

    use super::{Config, Job, PartyEntry};

    fn doc() -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/deployment.md");
        std::fs::read_to_string(path).unwrap()
    }

    /// Every key a config can hold, `party.` and `job.` prefixed below the top level.
    fn every_key() -> Vec<String> {
        let party = PartyEntry { address: "127.0.0.1:1".parse().unwrap(), cert: "c".into(), key: "k".into() };
        let some = |s: &str| Some(s.to_string());
        let jobs = [
            Job::Embed {
                family: "mosformer".into(),
                security: some("malicious"),
                offline: some("ahead"),
                rings: some("mixed"),
                owners: some("outside"),
            },
            Job::Classify {
                family: "aegis".into(),
                security: some("malicious"),
                offline: some("ahead"),
                rings: some("mixed"),
                owners: some("outside"),
            },
            Job::DemoMul { length: 2, output: 0 },
        ];
        let mut keys = Vec::new();
        for job in jobs {
            let cfg = Config {
                session: "00".repeat(16),
                ca: "ca.pem".into(),
                connect_timeout_s: 1,
                recv_timeout_s: 3,
                stall_timeout_s: 3,
                link_delay_us: 0,
                party: vec![party.clone()],
                job,
            };
            let table: toml::Table = toml::from_str(&toml::to_string(&cfg).unwrap()).unwrap();
            for (k, v) in &table {
                match v {
                    toml::Value::Array(a) => {
                        keys.push(format!("[[{k}]]"));
                        for t in a.iter().filter_map(|x| x.as_table()) {
                            keys.extend(t.keys().map(|f| format!("{k}.{f}")));
                        }
                    }
                    toml::Value::Table(t) => {
                        keys.push(format!("[{k}]"));
                        keys.extend(t.keys().map(|f| format!("{k}.{f}")));
                    }
                    _ => keys.push(k.clone()),
                }
            }
        }
        keys.sort();
        keys.dedup();
        keys
    }

    #[test]
    fn the_deployment_reference_matches_the_config() {
        let doc = doc();
        for key in every_key() {
            let named = doc.contains(&format!("`{key}`"))
                || key.rsplit_once('.').is_some_and(|(t, f)| {
                    doc.contains(&format!("`{t}.{f}`,")) || doc.contains(&format!(", `{t}.{f}`"))
                });
            assert!(named, "docs/deployment.md does not describe `{key}`");
        }
        let samples: Vec<&str> =
            doc.split("```toml\n").skip(1).filter_map(|b| b.split("```").next()).collect();
        assert!(samples.len() >= 4, "the samples: {}", samples.len());
        for (i, sample) in samples.iter().enumerate() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("deployment.toml");
            std::fs::write(&path, sample).unwrap();
            let cfg =
                Config::load(&path).unwrap_or_else(|e| panic!("sample {i} of docs/deployment.md: {e:#}"));
            if !matches!(cfg.job, Job::DemoMul { .. }) {
                cfg.choice().unwrap_or_else(|e| panic!("sample {i}: {e:#}"));
            }
        }
    }
}

#[cfg(test)]
mod fuzz {
    //! The deployment file under the fuzzer (`veil-fuzz`, corpus `deployment`): a mutated
    //! config is refused with an error or read, never a panic.
    #![allow(clippy::panic, reason = "test code")]

    fn load(bytes: &[u8]) -> bool {
        let Ok(dir) = tempfile::tempdir() else { return false };
        let path = dir.path().join("deployment.toml");
        std::fs::write(&path, bytes).is_ok()
            && super::Config::load(&path).map(|c| (c.patience(), c.choice().is_ok())).is_ok()
    }

    #[test]
    fn deployment_files() {
        let target = veil_fuzz::Target { name: "deployment", run: load };
        if let Err(e) = veil_fuzz::fuzz(&target) {
            panic!("{e}");
        }
    }
}
