//! `veil run`: a private inference of a Hugging Face model with every party (three servers, the
//! data owner, the model owner) on this machine as threads, linked by TCP + mutual TLS on
//! 127.0.0.1 (or in memory), and the report.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use veil_mosformer::Security;
use veil_runtime::Link;
use veil_runtime::inference::{InferenceReport, private_inference};

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

/// Runs and prints.
pub fn run(
    model: Option<PathBuf>,
    text: &str,
    security: Security,
    link: &str,
    json: bool,
) -> anyhow::Result<()> {
    let link = match link {
        "tls" => Link::Tls,
        "memory" => Link::Memory,
        other => bail!("--link {other}: use tls or memory"),
    };
    let dir = model_dir(model)?;
    let report = private_inference(&dir, text, security, link)?;
    print_report(&report, json)
}

/// Prints a report as JSON or as text.
pub fn print_report(r: &InferenceReport, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(r)?);
        return Ok(());
    }
    println!("Veil: private inference of {} under {} ({})", r.model, r.family, r.security);
    println!("  parties: servers 0, 1, 2; data owner 3; model owner 4 — {}", r.transport);
    println!("  input: {:?} ({} tokens, only their number is public)", r.text, r.tokens);
    let head = |v: &[f64]| v.iter().take(6).map(|x| format!("{x:+.4}")).collect::<Vec<_>>().join(" ");
    println!("  secure output (data owner):  [{} …] ({} values)", head(&r.output), r.output.len());
    println!("  float reference:             [{} …]", head(&r.plaintext));
    println!(
        "  cosine similarity vs plaintext: {:.6}   max |error|: {:.4}",
        r.cosine_vs_plaintext, r.max_abs_error
    );
    for p in &r.per_party {
        for c in &p.client_side {
            println!("  done by the data owner in the clear: {c}");
        }
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
    match r.peak_rss_mib {
        Some(mib) => {
            println!("  (parties are threads of one process: peak memory is the process's, {mib:.0} MiB)")
        }
        None => println!("  (peak memory is each party process's own)"),
    }
    println!("  offline = material the servers made for the gates, right before each gate call;");
    println!("  bytes are payload bytes sent; rounds = longest chain of dependent messages");
    Ok(())
}
