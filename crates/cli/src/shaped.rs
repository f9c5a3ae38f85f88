//! `veil bench model --net PROFILE`: a model job with every party as its own `veil party`
//! process in its own network namespace, the links between them shaped by the kernel
//! (`veil-shaping`), run twice: on unshaped links, then on shaped ones. The record gives the
//! shaped time beside the projection from the unshaped run (measured time + rounds × RTT/2
//! + bytes / bandwidth), and how far apart they are.
//!
//! Where the kernel has no `netem`, the kernel shapes the bandwidth only (`tbf`) and the
//! latency is emulated by the parties: every receiver holds each frame for half the profile's
//! round trip after its last byte arrived (the config's `link_delay_us`, see
//! `veil_net::tcp`), and the record says so. Either way the shaped run is compared with the
//! full projection (measured time + rounds × RTT/2 + bytes / bandwidth).
//!
//! Jobs: `minilm` (a sentence embedding, `mosformer`) and any `.onnx` CNN (classification of
//! the first `--batch` images of `test.safetensors` beside it, `aegis` or `mosformer`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Serialize;
use veil_runtime::inference::{DATA_OWNER, InferenceParty, MODEL_OWNER, PARTIES};
use veil_shaping::{Mesh, Profile, Traffic, project};

use crate::config::Job;
use crate::demo::{launch_parties, prepare_config_at};

/// First port; party `i` listens on `PORT + i` at its namespace's address.
const PORT: u16 = 7000;
/// Longest a run may take.
const LIMIT: Duration = Duration::from_secs(3600);

/// What the parties run and the extra arguments each gets.
struct Workload {
    name: String,
    job: Job,
    args: Vec<Vec<String>>,
}

/// One run: wall time from the first process started to the last one finished, and the
/// parties' reports.
struct Run {
    seconds: f64,
    parties: Vec<InferenceParty>,
}

/// The network part of the record.
#[derive(Serialize)]
struct NetRecord {
    name: &'static str,
    bandwidth_bps: u64,
    rtt_ms: f64,
    shaped: bool,
    latency: &'static str,
}

/// One party's traffic in the unshaped run.
#[derive(Serialize)]
struct PartyTraffic {
    party: usize,
    role: String,
    bytes_sent: u64,
    rounds: u64,
}

/// The record printed.
#[derive(Serialize)]
struct ShapedRecord {
    model: String,
    family: String,
    security: String,
    parties: usize,
    net: NetRecord,
    /// Wall-clock seconds on unshaped links (namespaces, veth, no qdisc).
    seconds_unshaped: f64,
    /// Wall-clock seconds on the shaped links.
    seconds_shaped: f64,
    /// The projection of the shaped run from the unshaped one: measured time + rounds × RTT/2
    /// + bytes / bandwidth.
    seconds_projected: f64,
    /// `seconds_shaped / seconds_projected - 1`.
    relative_gap: f64,
    traffic: Vec<PartyTraffic>,
}

/// Runs and prints.
pub fn bench(
    model: &str,
    family: &str,
    security: &str,
    batch: usize,
    net: &str,
    json: bool,
) -> anyhow::Result<()> {
    let profile = veil_shaping::profile(net)?;
    veil_shaping::available()?;
    let dir = tempfile::tempdir().context("cannot create a temporary folder")?;
    let work = workload(model, family, security, batch, dir.path())?;
    let addresses: Vec<SocketAddr> =
        (0..PARTIES).map(|i| SocketAddr::new(Mesh::address(i).into(), PORT + i as u16)).collect();
    let config = prepare_config_at(dir.path(), addresses, work.job.clone(), 600)?;
    eprintln!("bench: {} with every party in its own namespace, unshaped links ...", work.name);
    let plain = run_in(&Mesh::create(PARTIES, None)?, &config, &work)?;
    eprintln!("bench: the same on links shaped to `{}` ...", profile.name);
    let mesh = Mesh::create(PARTIES, Some(profile))?;
    let latency_shaped = mesh.latency_shaped();
    let shaped_config = if latency_shaped { config.clone() } else { with_link_delay(&config, profile)? };
    let shaped = run_in(&mesh, &shaped_config, &work)?;
    mesh.remove()?;
    let record = record(&work, family, security, profile, latency_shaped, &plain, &shaped);
    if json {
        println!("{}", serde_json::to_string(&record)?);
    } else {
        print(&record);
    }
    Ok(())
}

fn workload(model: &str, family: &str, security: &str, batch: usize, dir: &Path) -> anyhow::Result<Workload> {
    let mut args = vec![Vec::new(); PARTIES];
    if model == "minilm" {
        if family != "mosformer" {
            bail!("minilm runs under mosformer");
        }
        let folder = crate::run::model_dir(None)?.display().to_string();
        for a in &mut args {
            a.extend(["--model".to_string(), folder.clone()]);
        }
        args[DATA_OWNER].extend(["--text".into(), "The quick brown fox jumps over the lazy dog.".into()]);
        let job = Job::Embed {
            family: family.into(),
            security: Some(security.into()),
            offline: Some("on-demand".into()),
            rings: Some("mixed".into()),
            owners: None,
        };
        return Ok(Workload { name: "all-MiniLM-L6-v2 (one sentence, 12 tokens)".into(), job, args });
    }
    let path = PathBuf::from(model);
    if path.extension().is_none_or(|e| e != "onnx") {
        bail!(
            "--net runs every party as a `veil party` process: use `--model minilm` or an `.onnx` CNN \
             (the built-in {model} has no file to hand to the parties)"
        );
    }
    let loaded = veil_nn::onnx::load_onnx(&path)?;
    let public = dir.join("public-model.json");
    std::fs::write(&public, loaded.public_json()?).context("cannot write the public model")?;
    let images = path.with_file_name("test.safetensors");
    for (id, a) in args.iter_mut().enumerate() {
        let m = if id == MODEL_OWNER { &path } else { &public };
        a.extend(["--model".to_string(), m.display().to_string(), "--batch".into(), batch.to_string()]);
    }
    args[DATA_OWNER].extend(["--images".to_string(), images.display().to_string()]);
    let job = Job::Classify {
        family: family.into(),
        security: Some(security.into()),
        offline: Some("on-demand".into()),
        rings: None,
        owners: None,
    };
    Ok(Workload { name: format!("{} ({batch} images)", loaded.name), job, args })
}

/// A copy of the deployment config whose parties emulate the profile's latency: each holds
/// every frame it receives for half the round trip.
fn with_link_delay(config: &Path, profile: Profile) -> anyhow::Result<PathBuf> {
    let text = std::fs::read_to_string(config).context("cannot read the benchmark's config")?;
    let mut cfg: crate::config::Config = toml::from_str(&text).context("the benchmark's config")?;
    cfg.link_delay_us = (profile.rtt_ms * 500.0).round() as u64;
    let path = config.with_file_name("deployment-delayed.toml");
    std::fs::write(&path, toml::to_string(&cfg)?).context("cannot write the delayed config")?;
    Ok(path)
}

fn run_in(mesh: &Mesh, config: &Path, work: &Workload) -> anyhow::Result<Run> {
    let exe = std::env::current_exe().context("cannot find the veil executable")?;
    let commands: Vec<Command> = (0..PARTIES)
        .map(|id| {
            let mut c = mesh.command(id, &exe);
            c.arg("party").arg("--config").arg(config).arg("--id").arg(id.to_string()).arg("--json");
            c.args(&work.args[id]);
            c
        })
        .collect();
    let start = Instant::now();
    let parties = launch_parties(commands, LIMIT)?;
    Ok(Run { seconds: start.elapsed().as_secs_f64(), parties })
}

fn traffic(p: &InferenceParty) -> Traffic {
    Traffic {
        bytes_sent: p.phases.iter().map(|ph| ph.bytes_sent).sum(),
        rounds: p.phases.iter().map(|ph| ph.rounds).sum(),
    }
}

fn record(
    work: &Workload,
    family: &str,
    security: &str,
    profile: Profile,
    latency_shaped: bool,
    plain: &Run,
    shaped: &Run,
) -> ShapedRecord {
    let traffic: Vec<Traffic> = plain.parties.iter().map(traffic).collect();
    let projected = project(plain.seconds, &traffic, &profile);
    ShapedRecord {
        model: work.name.clone(),
        family: family.into(),
        security: security.into(),
        parties: PARTIES,
        net: NetRecord {
            name: profile.name,
            bandwidth_bps: profile.bandwidth_bps,
            rtt_ms: profile.rtt_ms,
            shaped: true,
            latency: if latency_shaped {
                "shaped by the kernel (netem)"
            } else {
                "emulated by the receivers (no netem in this kernel)"
            },
        },
        seconds_unshaped: plain.seconds,
        seconds_shaped: shaped.seconds,
        seconds_projected: projected,
        relative_gap: shaped.seconds / projected - 1.0,
        traffic: plain
            .parties
            .iter()
            .zip(&traffic)
            .map(|(p, t)| PartyTraffic {
                party: p.party,
                role: p.role.clone(),
                bytes_sent: t.bytes_sent,
                rounds: t.rounds,
            })
            .collect(),
    }
}

fn print(r: &ShapedRecord) {
    println!(
        "{} under {} ({}), {} parties, each in its own network namespace",
        r.model, r.family, r.security, r.parties
    );
    println!(
        "  network `{}`: {} Mbps per link, {} ms round trip; bandwidth shaped by the kernel, latency {}",
        r.net.name,
        r.net.bandwidth_bps / 1_000_000,
        r.net.rtt_ms,
        r.net.latency
    );
    println!("  unshaped links:         {:>9.2} s", r.seconds_unshaped);
    println!("  shaped links:           {:>9.2} s", r.seconds_shaped);
    println!(
        "  projection:             {:>9.2} s  (gap {:+.1}%)",
        r.seconds_projected,
        100.0 * r.relative_gap
    );
    println!("  party  role          MiB sent    rounds");
    for t in &r.traffic {
        println!(
            "  {:>5}  {:<12} {:>9.2} {:>9}",
            t.party,
            t.role,
            t.bytes_sent as f64 / f64::from(1u32 << 20),
            t.rounds
        );
    }
}
