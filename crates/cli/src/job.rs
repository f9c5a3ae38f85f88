//! One party's run: join the deployment over TCP + mutual TLS, run the job
//! ([`veil_runtime::demo_mul`]), report.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use veil_crypto::{Seed, SessionId};
use veil_net::certs::Identity;
use veil_net::tcp::{TcpConfig, TcpTransport};
use veil_runtime::families::FamilyChoice;
use veil_runtime::inference::Material;
use veil_runtime::{PartyReport, demo_mul, phases};

use crate::config::{Config, Job};

/// What a party brings on the command line.
pub struct PartyArgs {
    /// `demo-mul`: the secret input file.
    pub input: Option<PathBuf>,
    /// `embed`: the model folder; `classify`: the `.onnx` file or public model.
    pub model: Option<PathBuf>,
    /// `embed`: the data owner's text.
    pub text: Option<String>,
    /// `classify`: the data owner's images (`.safetensors`).
    pub images: Option<PathBuf>,
    /// `classify`: how many of them.
    pub batch: Option<usize>,
    /// Servers: the folder of their stored material (`offline = "stored"`, or `--prepare`).
    pub material: Option<PathBuf>,
    /// `embed`, servers: make and store the material of a later session of this many tokens
    /// (the three servers only take part) instead of running the job.
    pub prepare: Option<usize>,
}

/// `veil party`: runs the config's job.
pub fn party(config: &Path, id: usize, args: PartyArgs, json: bool) -> anyhow::Result<()> {
    let PartyArgs { input, model, text, images, batch, material, prepare } = args;
    let job = Config::load(config)?.job;
    if images.is_some() && !matches!(job, Job::Classify { .. }) {
        bail!("--images is for `classify` jobs");
    }
    if let Some(tokens) = prepare {
        if !matches!(job, Job::Embed { .. }) || input.is_some() || text.is_some() {
            bail!("--prepare makes the servers' material of an `embed` job; it takes --model and --material");
        }
        let dir =
            material.context("--prepare needs --material DIR, the folder to write this server's file to")?;
        return prepare_party(config, id, model, tokens, &dir, json);
    }
    match job {
        Job::Classify { .. } => {
            if input.is_some() || text.is_some() {
                bail!("a `classify` job takes --model and --images, not --input or --text");
            }
            run_classify_party(config, id, model, images, batch, material, json)
        }
        Job::Embed { .. } => {
            if input.is_some() {
                bail!("an `embed` job takes --model and --text, not --input");
            }
            run_embed_party(config, id, model, text, material, json)
        }
        Job::DemoMul { .. } => {
            if model.is_some() || text.is_some() || material.is_some() {
                bail!("a `demo-mul` job takes --input, not --model, --text or --material");
            }
            run_party_from_config(config, id, input, json)
        }
    }
}

/// `veil party` for a `demo-mul` job: loads the config, reads this party's input if it has one, runs, prints.
pub fn run_party_from_config(
    config: &Path,
    id: usize,
    input: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<()> {
    let cfg = Config::load(config)?;
    let Some(me) = cfg.party.get(id) else {
        bail!("party {id} is not in the config ({} parties)", cfg.party.len());
    };
    let values: Option<Vec<f64>> = match &input {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
            Some(
                serde_json::from_str(&text)
                    .with_context(|| format!("{} must hold a JSON array of numbers", p.display()))?,
            )
        }
        None => None,
    };
    let identity = Identity::from_files(&cfg.ca, &me.cert, &me.key)?;
    let addrs = cfg.party.iter().map(|p| p.address).collect();
    let mut tcp = TcpConfig::new(id, addrs, cfg.session_id()?, identity);
    tcp.connect_timeout = Duration::from_secs(cfg.connect_timeout_s);
    tcp.delay = Duration::from_micros(cfg.link_delay_us);
    let report = run(&cfg, tcp, values)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", crate::report::table(std::slice::from_ref(&report)));
        if let Some(out) = &report.output {
            println!("result: {out:?}");
        }
    }
    Ok(())
}

/// `veil party` for an `embed` job: loads the model (weights at the model owner only),
/// tokenizes the text (data owner), joins, runs, prints the party's report.
pub fn run_embed_party(
    config: &Path,
    id: usize,
    model: Option<PathBuf>,
    text: Option<String>,
    stored: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<()> {
    use veil_runtime::inference::inference_party;
    let cfg = Config::load(config)?;
    if !matches!(cfg.job, Job::Embed { .. }) {
        bail!("the config's job is not `embed`; pass --input for `demo-mul`");
    }
    let (choice, settings) = cfg.choice()?;
    let roles = choice.topology.roles;
    let material = party_material(settings.offline.as_deref(), stored, id, &choice)?;
    if id >= cfg.party.len() {
        bail!("party {id} is not in the config ({} parties)", cfg.party.len());
    }
    let dir = crate::run::model_dir(model)?;
    let loaded = veil_nn::bert::load_hf(&dir, id == roles.model_owner)?;
    let ids = match (id == roles.data_owner, text) {
        (true, Some(t)) => Some(veil_nn::bert::tokenize(&loaded, &t)?),
        (true, None) => bail!("party {id} is the data owner: pass its input with --text"),
        (false, Some(_)) => {
            bail!("party {id} ({}) has no text input; do not pass --text", choice.topology.role(id))
        }
        (false, None) => None,
    };
    let peaks = crate::memory::text_job_peaks(&choice, &loaded.graph, ids.as_ref().map(Vec::len), &material)?;
    crate::memory::warn_if_short(peaks.get(id).copied().unwrap_or_default());
    let bar = crate::progress::for_party(id);
    let report =
        join_and_run(&cfg, id, |ctx| inference_party(ctx, &loaded, ids.as_deref(), choice, material))?;
    drop(bar);
    print_party(&report, json)?;
    if let (false, Some(out)) = (json, &report.output) {
        // The whole vector is in the --json report; the table shows its head at 4 decimals.
        let head: Vec<String> = out.iter().take(8).map(|v| format!("{v:.4}")).collect();
        let more = if out.len() > 8 { ", …" } else { "" };
        println!("output ({} values): [{}{more}] (--json prints them all)", out.len(), head.join(", "));
    }
    Ok(())
}

/// The job's `offline` mode at party `id` (the family's default when the job leaves it
/// out): with `stored`, a server's `--material` folder (parties that do not compute take no
/// material and pass none).
fn party_material(
    offline: Option<&str>,
    stored: Option<PathBuf>,
    id: usize,
    choice: &FamilyChoice,
) -> anyhow::Result<Material> {
    match (offline, stored, choice.topology.is_computing(id)) {
        (Some("stored"), Some(dir), true) => Ok(Material::Stored(dir)),
        (Some("stored"), None, true) => {
            bail!("the job's material is stored: pass this server's folder with --material DIR")
        }
        (Some("stored"), None, false) => Ok(Material::OnDemand),
        (_, Some(_), false) => {
            bail!("party {id} is not a server and holds no material; do not pass --material")
        }
        (other, Some(_), true) => {
            let name = other.unwrap_or(choice.family.info.materials[0]);
            bail!("--material is for jobs whose offline material is `stored`; this job's is `{name}`")
        }
        (Some(other), None, _) => crate::run::parse_offline(other),
        (None, None, _) => Ok(choice.default_material()),
    }
}

/// `veil party --prepare`: server `id` makes, with the other two servers, the material of a
/// later `embed` session of `tokens` tokens and writes it to `server-ID.material` in `dir`.
/// The servers link among themselves only (the config's first three parties), under a session
/// id derived from the config's, so this session's messages belong to no other.
fn prepare_party(
    config: &Path,
    id: usize,
    model: Option<PathBuf>,
    tokens: usize,
    dir: &Path,
    json: bool,
) -> anyhow::Result<()> {
    let cfg = Config::load(config)?;
    if !matches!(cfg.job, Job::Embed { .. }) {
        bail!("--prepare is for `embed` jobs");
    }
    let (choice, _) = cfg.choice()?;
    if !choice.family.info.materials.contains(&"stored") {
        bail!("{} makes no stored material ({})", choice.name(), choice.family.info.preprocessing);
    }
    let mode = choice.mode();
    let servers = choice.topology.computing;
    if id >= servers {
        bail!("party {id} is not a server: only servers 0 to {} make material", servers - 1);
    }
    let loaded = veil_nn::bert::load_hf(&crate::run::model_dir(model)?, false)?;
    crate::prepare::check_tokens(tokens, loaded.max_positions)?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut linked = cfg.clone();
    linked.party.truncate(servers);
    let session = veil_crypto::hash("veil/prepare-session", &cfg.session_id()?);
    linked.session = hex::encode(&session.as_bytes()[..16]);
    let bar = crate::progress::for_party(id);
    let report = join_and_run(&linked, id, |ctx| {
        veil_runtime::stored::prepare_server(ctx, &loaded.graph, tokens, mode, dir)
    })?;
    drop(bar);
    crate::prepare::print_prepared(&loaded.name, tokens, std::slice::from_ref(&report), json)
}

/// `veil party` for a `classify` job: loads the model (the `.onnx` file with its weights at
/// the model owner, the public model elsewhere) and the data owner's images, joins, runs,
/// prints the party's report.
fn run_classify_party(
    config: &Path,
    id: usize,
    model: Option<PathBuf>,
    images: Option<PathBuf>,
    batch: Option<usize>,
    stored: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<()> {
    use veil_runtime::classify::{cnn_party, image_range, load_image_set};
    let cfg = Config::load(config)?;
    if !matches!(cfg.job, Job::Classify { .. }) {
        bail!("the config's job is not `classify`")
    }
    let (choice, settings) = cfg.choice()?;
    let material = party_material(settings.offline.as_deref(), stored, id, &choice)?;
    let (data_owner, model_owner) = (choice.topology.roles.data_owner, choice.topology.roles.model_owner);
    let role = |id: usize| choice.topology.role(id);
    if id >= cfg.party.len() {
        bail!("party {id} is not in the config ({} parties)", cfg.party.len());
    }
    let path =
        model.context("pass --model: the .onnx file at the model owner, its public model elsewhere")?;
    let loaded = veil_nn::image::ImageModel::load(&path)?;
    let batch = crate::classify::batch_or(&loaded, batch, 8);
    if id == model_owner && loaded.weights.is_empty() {
        bail!("party {id} is the model owner: pass the .onnx file with the weights");
    }
    if id != model_owner && !loaded.weights.is_empty() {
        bail!("party {id} ({}) must not hold the weights: pass the public model (`veil graph`)", role(id));
    }
    let x = match (id == data_owner, images) {
        (true, Some(p)) => Some(image_range(&load_image_set(&p)?.0, 0, batch)?),
        (true, None) => bail!("party {id} is the data owner: pass its images with --images"),
        (false, Some(_)) => bail!("party {id} ({}) has no images; do not pass --images", role(id)),
        (false, None) => None,
    };
    let bar = crate::progress::for_party(id);
    let report = join_and_run(&cfg, id, |ctx| cnn_party(ctx, &loaded, x.as_ref(), &choice, material, None))?;
    drop(bar);
    print_party(&report, json)?;
    if let (false, Some(out)) = (json, &report.output) {
        let predictions = veil_runtime::classify::argmax_rows(out, out.len() / batch.max(1));
        println!("predictions: {predictions:?}");
    }
    Ok(())
}

/// Prints a model party's report: one JSON object, or its phases.
fn print_party(report: &veil_runtime::inference::InferenceParty, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string(report)?);
        return Ok(());
    }
    println!("party {} ({}) done", report.party, report.role);
    for ph in &report.phases {
        println!(
            "  {:<8} {:>10.2} MiB sent {:>6} rounds {:>8.2} s",
            ph.phase,
            ph.bytes_sent as f64 / f64::from(1u32 << 20),
            ph.rounds,
            ph.seconds
        );
    }
    Ok(())
}

/// Joins the deployment as party `id` (TCP + mutual TLS) and runs `job` as that party.
fn join_and_run<T>(
    cfg: &Config,
    id: usize,
    job: impl FnOnce(&mut veil_mpc::Ctx) -> Result<T, veil_mpc::MpcError>,
) -> anyhow::Result<T> {
    let Some(me) = cfg.party.get(id) else {
        bail!("party {id} is not in the config ({} parties)", cfg.party.len());
    };
    let identity = Identity::from_files(&cfg.ca, &me.cert, &me.key)?;
    let addrs = cfg.party.iter().map(|p| p.address).collect();
    let mut tcp = TcpConfig::new(id, addrs, cfg.session_id()?, identity);
    tcp.connect_timeout = Duration::from_secs(cfg.connect_timeout_s);
    tcp.delay = Duration::from_micros(cfg.link_delay_us);
    let transport =
        TcpTransport::connect(&tcp).with_context(|| format!("party {id} could not join the deployment"))?;
    let transport = crate::soak::faulty(Box::new(transport))?;
    let private = Seed::from_rng(&mut rand::rngs::OsRng);
    Ok(veil_mpc::runner::run_party(transport, SessionId(tcp.session), private, cfg.patience(), job)?)
}

fn run(cfg: &Config, tcp: TcpConfig, input: Option<Vec<f64>>) -> anyhow::Result<PartyReport> {
    let id = tcp.party;
    let Job::DemoMul { length, output } = cfg.job.clone() else {
        bail!("the config's job is `embed`: pass --model (and --text at the data owner), not --input");
    };
    let owns_input = id == 0 || id == 1;
    match (&input, owns_input) {
        (None, true) => bail!("party {id} owns an input: pass it with --input FILE"),
        (Some(_), false) => bail!("party {id} has no input in this job; do not pass --input"),
        (Some(v), true) if v.len() != length => {
            bail!("the input has {} values, the job declares {length}", v.len())
        }
        _ => {}
    }
    let t0 = Instant::now();
    let transport =
        TcpTransport::connect(&tcp).with_context(|| format!("party {id} could not join the deployment"))?;
    let private = Seed::from_rng(&mut rand::rngs::OsRng);
    let session = SessionId(tcp.session);
    let result = veil_mpc::runner::run_party(Box::new(transport), session, private, cfg.patience(), |ctx| {
        let setup_s = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        ctx.set_phase("online");
        let out = demo_mul(ctx, input.as_deref(), length, output)?;
        let online_s = t1.elapsed().as_secs_f64();
        Ok(PartyReport {
            party: id,
            output: out,
            phases: phases(ctx.stats(), &[("setup", setup_s), ("online", online_s)]),
        })
    })?;
    Ok(result)
}
