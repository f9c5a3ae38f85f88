//! One run: its deployment, its stored material and material faults, its session, its verdict.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

use super::session::{Session, session};
use super::{
    FAULT_ENV, Fault, FaultKind, MIN_COSINE, RECV_TIMEOUT_S, RUN_LIMIT, RunRecord, SoakArgs, TEXT, Work,
};
use crate::config::{Config, Job};

/// The models, inputs and plaintext references every run shares.
pub(super) struct Fixtures {
    text_model: PathBuf,
    tokens: usize,
    text_reference: Vec<f64>,
    onnx: PathBuf,
    public_cnn: PathBuf,
    images: PathBuf,
    cnn_reference: Vec<f64>,
}

impl Fixtures {
    pub(super) fn new(args: &SoakArgs, root: &Path) -> anyhow::Result<Self> {
        use veil_runtime::families::{FamilyChoice, Request};
        use veil_runtime::{Mode, Rings, Security};
        let mosformer = FamilyChoice::mosformer(Mode { security: Security::Malicious, rings: Rings::Mixed });
        let text_model = args.text_model.clone();
        let plain = veil_runtime::plain::plain_text(&text_model, TEXT, &mosformer)
            .with_context(|| format!("the text model {}", text_model.display()))?;
        let loaded = veil_nn::bert::load_hf(&text_model, false)?;
        let tokens = veil_nn::bert::tokenize(&loaded, TEXT)?.len();
        let onnx = args.cnn.clone();
        let cnn =
            veil_nn::image::ImageModel::load(&onnx).with_context(|| format!("the CNN {}", onnx.display()))?;
        let public_cnn = root.join("cnn.graph.json");
        std::fs::write(&public_cnn, cnn.public_json()?).context("cannot write the public CNN")?;
        let images = onnx.with_file_name("test.safetensors");
        let (set, _) = veil_runtime::classify::load_image_set(&images)?;
        let first = veil_runtime::classify::image_range(&set, 0, 1)?;
        let aegis = FamilyChoice::new(
            &Request { security: Some(Security::Malicious), ..Request::default() },
            "aegis",
        )?;
        let cnn_reference = veil_runtime::plain::plain_images(&cnn, &first, &aegis)?.float;
        Ok(Fixtures {
            text_model,
            tokens,
            text_reference: plain.float,
            onnx,
            public_cnn,
            images,
            cnn_reference,
        })
    }
}

/// Writes the certificates and the config of a run's deployment in `dir`.
fn deployment(dir: &Path, work: Work, offline: &str) -> anyhow::Result<PathBuf> {
    let job = match work {
        Work::Embed => Job::Embed {
            family: "mosformer".into(),
            security: Some("malicious".into()),
            offline: Some(offline.into()),
            rings: Some("mixed".into()),
            owners: None,
        },
        Work::Classify => Job::Classify {
            family: "aegis".into(),
            security: Some("malicious".into()),
            offline: None,
            rings: None,
            owners: None,
        },
    };
    let listeners = (0..5)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()
        .context("cannot bind on 127.0.0.1")?;
    let addresses = listeners.iter().map(|l| l.local_addr()).collect::<std::io::Result<Vec<_>>>()?;
    drop(listeners);
    let path = crate::demo::prepare_config_at(dir, addresses, job, RUN_LIMIT.as_secs())?;
    let mut cfg: Config = toml::from_str(&std::fs::read_to_string(&path)?)?;
    cfg.recv_timeout_s = RECV_TIMEOUT_S;
    cfg.connect_timeout_s = 20;
    std::fs::write(&path, toml::to_string(&cfg)?)?;
    Ok(path)
}

/// The command of party `id` (`prepare`: make the stored material instead).
fn party_command(exe: &Path, fx: &Fixtures, config: &Path, work: Work, id: usize, stored: bool) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg("party").arg("--config").arg(config).arg("--id").arg(id.to_string()).arg("--json");
    let dir = config.with_file_name(format!("host-{id}"));
    match work {
        Work::Embed => {
            cmd.arg("--model").arg(&fx.text_model);
            if id == 3 {
                cmd.arg("--text").arg(TEXT);
            }
            if stored && id < 3 {
                cmd.arg("--material").arg(dir);
            }
        }
        Work::Classify => {
            cmd.arg("--model").arg(if id == 4 { &fx.onnx } else { &fx.public_cnn });
            if id == 3 {
                cmd.arg("--images").arg(&fx.images).arg("--batch").arg("1");
            }
        }
    }
    cmd
}

/// Makes the servers' stored material of an embed run (the three servers only).
fn prepare_material(exe: &Path, fx: &Fixtures, config: &Path) -> anyhow::Result<()> {
    let commands = (0..3)
        .map(|id| {
            let mut cmd = party_command(exe, fx, config, Work::Embed, id, false);
            cmd.arg("--prepare").arg(fx.tokens.to_string());
            cmd.arg("--material").arg(config.with_file_name(format!("host-{id}")));
            cmd
        })
        .collect();
    let s = session(commands, Fault { kind: FaultKind::None, party: None, after_s: None, frame: None }, &[])?;
    if let Some(e) = s.ends.iter().find(|e| e.status != "ok") {
        bail!("server {} could not make its material: {}", e.party, e.said);
    }
    Ok(())
}

fn material_file(config: &Path, server: usize) -> PathBuf {
    veil_runtime::stored::material_path(&config.with_file_name(format!("host-{server}")), server)
}

pub(super) fn one_run(
    exe: &Path,
    fx: &Fixtures,
    dir: &Path,
    run: usize,
    work: Work,
    fault: Fault,
) -> anyhow::Result<RunRecord> {
    std::fs::create_dir_all(dir)?;
    let stored = matches!(fault.kind, FaultKind::DamagedMaterial | FaultKind::ReplayedMaterial);
    let config = deployment(dir, work, if stored { "stored" } else { "on-demand" })?;
    let addresses: Vec<SocketAddr> = Config::load(&config)?.party.iter().map(|p| p.address).collect();
    let state = dir.join("state");
    let commands = |fault: Fault| -> Vec<Command> {
        (0..5)
            .map(|id| {
                let mut cmd = party_command(exe, fx, &config, work, id, stored);
                cmd.env("VEIL_STATE_DIR", &state).env_remove(FAULT_ENV);
                if fault.party == Some(id)
                    && let Some(frame) = fault.frame
                {
                    match fault.kind {
                        FaultKind::Garbage => cmd.env(FAULT_ENV, frame.to_string()),
                        FaultKind::Oversized => cmd.env(FAULT_ENV, format!("{frame}:grow")),
                        _ => &mut cmd,
                    };
                }
                cmd
            })
            .collect()
    };
    let mut first_verdict = None;
    if stored {
        prepare_material(exe, fx, &config)?;
    }
    if let (FaultKind::DamagedMaterial, Some(p)) = (fault.kind, fault.party) {
        let path = material_file(&config, p);
        let mut bytes = std::fs::read(&path)?;
        let at = bytes.len() / 2;
        bytes[at] ^= 0x01;
        std::fs::write(&path, bytes)?;
    }
    let mut fault_time = None;
    if fault.kind == FaultKind::ReplayedMaterial {
        let backups: Vec<(PathBuf, Vec<u8>)> = (0..3)
            .map(|s| material_file(&config, s))
            .map(|p| std::fs::read(&p).map(|b| (p, b)))
            .collect::<std::io::Result<_>>()?;
        let honest = session(commands(fault), fault, &addresses)?;
        let judged = judge(work, fx, fault, false, &honest);
        if judged.0 != "pass" {
            first_verdict = Some(format!("the first session of the material failed: {}", judged.0));
        }
        for (p, b) in backups {
            std::fs::write(p, b)?;
        }
        fault_time = Some(Instant::now());
    }
    let s = session(commands(fault), fault, &addresses)?;
    let effective = match fault.kind {
        FaultKind::None | FaultKind::Stranger => false,
        FaultKind::Kill | FaultKind::Freeze => fault.party.is_some_and(|p| s.ends[p].status != "ok"),
        FaultKind::Garbage | FaultKind::Oversized => {
            fault.party.is_some_and(|p| s.stderr[p].contains("fault injected"))
        }
        FaultKind::DamagedMaterial | FaultKind::ReplayedMaterial => true,
    };
    let (mut verdict, released, cosine) = judge(work, fx, fault, effective, &s);
    if let Some(v) = first_verdict {
        verdict = v;
    }
    let failed = s.ends.iter().any(|e| e.status != "ok");
    let fault_at = s.fault_at.or(fault_time);
    let detected_after_s = match (failed, fault_at) {
        (true, Some(t)) => Some(s.last_exit.saturating_duration_since(t).as_secs_f64()),
        (true, None) => Some(s.ends.iter().map(|e| e.seconds).fold(0.0, f64::max)),
        _ => None,
    };
    Ok(RunRecord {
        run,
        work,
        fault,
        effective,
        parties: s.ends,
        detected_after_s,
        released,
        cosine,
        hang: s.hang,
        verdict,
    })
}

/// The verdict of a session, whether the data owner released an output, and its cosine.
fn judge(
    work: Work,
    fx: &Fixtures,
    fault: Fault,
    effective: bool,
    s: &Session,
) -> (String, bool, Option<f64>) {
    let owner: Option<serde_json::Value> = serde_json::from_slice(&s.stdout[3]).ok();
    let output: Option<Vec<f64>> =
        owner.as_ref().and_then(|o| o.get("output")).and_then(|o| serde_json::from_value(o.clone()).ok());
    let released = output.is_some();
    let reference = match work {
        Work::Embed => &fx.text_reference,
        Work::Classify => &fx.cnn_reference,
    };
    let cosine = output.as_ref().map(|o| veil_runtime::inference::cosine(o, reference));
    let failed = s.ends.iter().any(|e| e.status != "ok" && e.status != "frozen");
    let check_failed = s.stderr.iter().any(|e| e.contains("abort") || e.contains("check"));
    let verdict = if s.hang {
        "FAIL: a party hung".to_string()
    } else if cosine.is_some_and(|c| c.is_nan() || c < MIN_COSINE) {
        format!("FAIL: a wrong output was released (cosine {:.4})", cosine.unwrap_or_default())
    } else if released && check_failed {
        "FAIL: an output was released by a run where a check failed".to_string()
    } else if !effective && fault.kind != FaultKind::ReplayedMaterial && (failed || !released) {
        "FAIL: a run without an effective fault did not deliver its output".to_string()
    } else if effective && !failed && !released {
        "FAIL: the run neither failed nor delivered".to_string()
    } else {
        "pass".to_string()
    };
    (verdict, released, cosine)
}
