//! `veil run`: a private inference of a Hugging Face model with every party (three servers, the
//! data owner, the model owner) on this machine as threads, linked by TCP + mutual TLS on
//! 127.0.0.1 (or in memory), and the report.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use veil_runtime::Link;
use veil_runtime::families::FamilyChoice;
use veil_runtime::inference::{InferenceReport, Material, private_inference_of};

use crate::family::FamilyArgs;

/// The model folder: the given one, or all-MiniLM-L6-v2 as `scripts/setup.sh` installs it.
pub fn model_dir(model: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match model {
        Some(m) => Ok(m),
        None => {
            let here = std::env::current_dir().context("no current folder")?;
            let exe = std::env::current_exe().ok();
            veil_nn::bert::find_minilm(&here)
                .or_else(|| exe.as_deref().and_then(Path::parent).and_then(veil_nn::bert::find_minilm))
                .context("all-MiniLM-L6-v2 is not installed: run ./scripts/setup.sh, or pass --model DIR")
        }
    }
}

/// The family of a text model: `--family` (default `mosformer`), which must run transformers.
pub fn text_family(args: &FamilyArgs) -> anyhow::Result<FamilyChoice> {
    let choice = FamilyChoice::new(&args.request()?, "mosformer")?;
    if !choice.family.info.runs_transformers() {
        bail!(
            "--family {} does not run transformers; use {}",
            choice.name(),
            veil_runtime::families::families()
                .iter()
                .filter(|f| f.runs_transformers())
                .map(|f| f.name)
                .collect::<Vec<_>>()
                .join(" or ")
        );
    }
    Ok(choice)
}

/// Runs and prints.
pub fn run(
    model: Option<PathBuf>,
    text: &str,
    args: &FamilyArgs,
    material: Option<Material>,
    link: veil_runtime::Link,
    json: bool,
) -> anyhow::Result<()> {
    let choice = text_family(args)?;
    let material = material.unwrap_or_else(|| choice.default_material());
    let dir = model_dir(model)?;
    // Loaded once: for the memory estimate (every party runs in this process), then the run.
    let loaded = veil_nn::bert::load_hf(&dir, true)?;
    let tokens = veil_nn::bert::tokenize(&loaded, text)?.len();
    crate::memory::warn_if_short(
        crate::memory::text_job_peaks(&choice, &loaded.graph, Some(tokens), &material)?.iter().sum(),
    );
    let bar = crate::progress::Bar::follow(0, "secure run");
    let report = private_inference_of(&loaded, text, choice, material, link)?;
    drop(bar);
    print_report(&report, json)
}

/// `--offline`'s value: the servers' offline material `ahead` of the online phase or
/// `on-demand` before each gate call.
pub fn parse_offline(offline: &str) -> anyhow::Result<Material> {
    Material::parse(offline).map_err(|e| anyhow::anyhow!(e))
}

/// `--offline` and `--material` together: material `ahead`, `on-demand`, or `stored` in the
/// folder `--material` names (as `veil prepare` wrote it; `--material` alone means `stored`);
/// `None` when neither is given (the family's default).
pub fn material_arg(offline: Option<&str>, material: Option<PathBuf>) -> anyhow::Result<Option<Material>> {
    match (offline, material) {
        (None, None) => Ok(None),
        (None | Some("stored"), Some(dir)) => Ok(Some(Material::Stored(dir))),
        (Some("stored"), None) => {
            bail!("--offline stored needs --material DIR (the folder `veil prepare` wrote)")
        }
        (Some(other), Some(_)) => {
            bail!("--material loads stored material; it does not go with --offline {other}")
        }
        (Some(offline), None) => parse_offline(offline).map(Some),
    }
}

/// `--link`'s value.
pub fn parse_link(link: &str) -> anyhow::Result<Link> {
    match link {
        "tls" => Ok(Link::Tls),
        "memory" => Ok(Link::Memory),
        other => bail!("--link {other}: use tls or memory"),
    }
}

/// Prints a report as JSON or as text.
/// What a per-layer row of a server counts: the bytes it sent while the layer ran, which
/// include the layer's preprocessing only when that is made on demand.
pub fn per_layer_scope(material: Option<&str>) -> &'static str {
    match material {
        Some("on-demand") => "online, and the offline material made on demand",
        Some(_) => "online only: the offline material was made before",
        None => "while each layer ran",
    }
}

pub fn print_report(r: &InferenceReport, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(r)?);
        return Ok(());
    }
    // A ring plan's name (`mixed`, `z64`) reads "… rings"; a family's arithmetic says itself.
    let rings = if r.rings.contains(' ') { r.rings.clone() } else { format!("{} rings", r.rings) };
    println!("Veil: private inference of {} under {} ({}, {rings})", r.model, r.family, r.security);
    println!("  parties: {} — {}", r.topology.describe(), r.transport);
    println!("  preprocessing: {}", r.preprocessing);
    println!("  input: {:?} ({} tokens, only their number is public)", r.text, r.tokens);
    let head = |v: &[f64]| v.iter().take(6).map(|x| format!("{x:+.4}")).collect::<Vec<_>>().join(" ");
    println!("  secure output (data owner):  [{} …] ({} values)", head(&r.output), r.output.len());
    println!("  float reference:             [{} …]", head(&r.plaintext));
    println!(
        "  cosine similarity vs plaintext: {:.6}   max |error|: {:.4}",
        r.cosine_vs_plaintext, r.max_abs_error
    );
    if let (Some((id, text)), Some((pid, ptext))) = (&r.next_token, &r.plaintext_next_token) {
        println!("  next token: {id} {text:?} (private), {pid} {ptext:?} (float)");
    }
    println!(
        "  fixed-point executor (the family's arithmetic in the clear): max |secure − fixed| {:.4}",
        r.max_abs_vs_fixed_point
    );
    for o in &r.overflows {
        println!(
            "  out of range at node {} ({}, {}): {} {:.3e} against the limit {:.3e}",
            o.node, o.op, o.scope, o.what, o.max_abs, o.limit
        );
    }
    for p in &r.per_party {
        for c in &p.client_side {
            println!("  done by the data owner in the clear: {c}");
        }
    }
    if let Some(m) = r.per_party.iter().find_map(|p| p.material.as_deref()) {
        let how = match m {
            "ahead" => "made ahead of the online phase (planned from the graph's shapes)",
            "stored" => "made by an earlier session (`veil prepare`), loaded and deleted",
            _ => "made right before each gate call (bounded memory)",
        };
        println!("  servers' offline material: {how}");
    }
    if let Some(line) = crate::report::preprocessing_used(&r.per_party) {
        println!("{line}");
    }
    println!("\n  party  role         phase     MiB sent   rounds   seconds   peak MiB");
    for p in &r.per_party {
        for ph in &p.phases {
            if ph.bytes_sent == 0 && ph.rounds == 0 {
                continue;
            }
            let peak = p.peak_rss_mib.map(|m| format!("{m:.0}")).unwrap_or_else(|| "-".into());
            println!(
                "  {:>5}  {:<11}  {:<8} {:>9.2} {:>8} {:>9.2} {:>10}",
                p.party,
                p.role,
                ph.phase,
                ph.bytes_sent as f64 / f64::from(1u32 << 20),
                ph.rounds,
                ph.seconds,
                peak
            );
        }
    }
    if let Some(server) = r.per_party.first() {
        println!("\n  server 0 per layer ({}):", crate::run::per_layer_scope(server.material.as_deref()));
        for l in &server.per_layer {
            let mib = l.bytes as f64 / f64::from(1u32 << 20);
            println!("    {:<18} {:>9.2} MiB {:>8.2} s", l.op, mib, l.seconds);
        }
    }
    match r.peak_rss_mib {
        Some(mib) => {
            println!("  (parties are threads of one process: peak memory is the process's, {mib:.0} MiB)")
        }
        None => println!("  (peak memory is each party process's own)"),
    }
    println!("  offline = the servers' preprocessing (triples, gate keys; see their material above);");
    println!("  bytes are payload bytes sent; rounds = longest chain of dependent messages");
    Ok(())
}
