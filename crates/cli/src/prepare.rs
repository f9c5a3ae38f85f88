//! `veil prepare`: the three servers' offline phase for a later session, stored: each server
//! makes its material for a session of the model on a number of tokens (public: the data owner
//! announces it) and writes it to `server-N.material` in a folder. `veil run --material DIR`
//! (or `veil party` with `offline = "stored"` and `--material DIR`) then uses it, once.

use std::path::{Path, PathBuf};

use anyhow::bail;
use veil_runtime::Mode;
use veil_runtime::stored::{PreparedServer, prepare_material};

/// Makes and stores the material, then prints what each server wrote.
pub fn prepare(
    model: Option<PathBuf>,
    tokens: usize,
    mode: Mode,
    out: &Path,
    link: &str,
    json: bool,
) -> anyhow::Result<()> {
    let link = crate::run::parse_link(link)?;
    let dir = crate::run::model_dir(model)?;
    let loaded = veil_nn::bert::load_hf(&dir, false)?;
    check_tokens(tokens, loaded.max_positions)?;
    let bar = crate::progress::Bar::follow(0, "offline phase");
    let servers = prepare_material(&loaded.graph, tokens, mode, out, link)?;
    drop(bar);
    print_prepared(&loaded.name, tokens, &servers, json)
}

/// The token ids the text model in `model` (default: all-MiniLM-L6-v2) makes of `text`.
pub fn count_tokens(model: Option<PathBuf>, text: &str) -> anyhow::Result<Vec<u32>> {
    let dir = crate::run::model_dir(model)?;
    let loaded = veil_nn::bert::load_hf(&dir, false)?;
    Ok(veil_nn::bert::tokenize(&loaded, text)?)
}

/// `veil tokens`: prints the count of tokens (and their ids) of `text`.
pub fn tokens(model: Option<PathBuf>, text: &str, json: bool) -> anyhow::Result<()> {
    let ids = count_tokens(model, text)?;
    if json {
        println!("{}", serde_json::json!({ "tokens": ids.len(), "ids": ids }));
    } else {
        println!("{} tokens: {ids:?}", ids.len());
    }
    Ok(())
}

/// A session's token count: 1 to the model's maximum.
pub fn check_tokens(tokens: usize, max: usize) -> anyhow::Result<()> {
    if tokens == 0 || tokens > max {
        bail!(
            "--tokens {tokens}: the model takes 1 to {max} tokens (the count the data owner will announce)"
        );
    }
    Ok(())
}

/// Prints the servers' reports: JSON Lines, or a table.
pub fn print_prepared(
    model: &str,
    tokens: usize,
    servers: &[PreparedServer],
    json: bool,
) -> anyhow::Result<()> {
    if json {
        for s in servers {
            println!("{}", serde_json::to_string(s)?);
        }
        return Ok(());
    }
    println!("Veil: offline material of {model} for a session of {tokens} tokens, stored");
    println!("  server  file                                   MiB stored  MiB sent  rounds  seconds  gates");
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    for s in servers {
        println!(
            "  {:>6}  {:<38} {:>10.1} {:>9.1} {:>7} {:>8.1} {:>6}",
            s.party,
            s.path.display(),
            mib(s.file_bytes),
            mib(s.offline.bytes_sent),
            s.offline.rounds,
            s.offline.seconds + s.write_seconds,
            s.gates
        );
    }
    if let Some(s) = servers.first() {
        println!(
            "  material id {}…: one session uses it (`veil run --material DIR`), then it is deleted",
            &s.id[..16]
        );
    }
    Ok(())
}
