//! `veil`: the command line of Veil.
//!
//! - `veil version`: the version of this build.
//! - `veil certs --parties N --out DIR`: a CA and one certificate per party for a deployment.
//! - `veil party --config FILE --id N`: runs one party of a deployment (TCP + mutual TLS).
//! - `veil demo`: starts every party as a separate process on 127.0.0.1 over mutual TLS and
//!   runs the demo job (a private product of two secret vectors), then prints the result and
//!   the bytes, messages and rounds of each party.

mod bench;
mod config;
mod demo;
mod job;
mod report;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Private machine-learning inference by secure multi-party computation.
#[derive(Parser, Debug)]
#[command(name = "veil", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the version of this build.
    Version,
    /// Create a CA and a certificate per party (`party-<id>.pem`/`.key`, `ca.pem`) in a folder.
    Certs {
        /// Number of parties.
        #[arg(long)]
        parties: usize,
        /// Folder to write the files to (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// Name of the deployment, written into the CA certificate.
        #[arg(long, default_value = "veil")]
        name: String,
    },
    /// Run one party of a deployment described by a config file.
    Party {
        /// The deployment's TOML config (hosts, ports, certificate paths, session, job).
        #[arg(long)]
        config: PathBuf,
        /// This party's id.
        #[arg(long)]
        id: usize,
        /// This party's secret input (a JSON array of numbers), if it owns one.
        #[arg(long)]
        input: Option<PathBuf>,
        /// Print the party's report as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Benchmarks (see the project's benchmark conventions).
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
    /// Run the demo: 3 local parties as separate processes over mutual TLS.
    Demo {
        /// Number of parties.
        #[arg(long, default_value_t = 3)]
        parties: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Keep the generated certificates and config in this folder (default: a temp folder).
        #[arg(long)]
        workdir: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// Per-operation cost: bytes, messages, rounds and seconds per party, beside the paper.
    Ops {
        /// Protocol family.
        #[arg(long)]
        family: String,
        /// `malicious` or `semi-honest`.
        #[arg(long, default_value = "malicious")]
        security: String,
        /// Ring width (default: the op's ring in the paper's precision plan).
        #[arg(long)]
        ring: Option<u32>,
        /// Number of elements (default: 10^4, 10^5, 10^6).
        #[arg(long)]
        n: Option<usize>,
        /// One operation (default: all of the family's).
        #[arg(long)]
        op: Option<String>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// One BERT-base encoder layer (random weights): offline and online cost per layer, with
    /// the offline phase made one layer at a time, and peak memory.
    Layer {
        /// Protocol family.
        #[arg(long)]
        family: String,
        /// `malicious` or `semi-honest`.
        #[arg(long, default_value = "malicious")]
        security: String,
        /// Tokens (BERT-base runs 128; every gate's material grows with it).
        #[arg(long, default_value_t = 8)]
        tokens: usize,
        /// Layers to run: 1 makes the material on demand, gate call by gate call (bounded
        /// memory); 2 or more make the measured layer's material ahead, planned by the first.
        #[arg(long, default_value_t = 2)]
        layers: usize,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Version => {
            println!("veil {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Command::Certs { parties, out, name } => certs(parties, &out, &name),
        Command::Party { config, id, input, json } => job::run_party_from_config(&config, id, input, json),
        Command::Demo { parties, json, workdir } => demo::run(parties, json, workdir),
        Command::Bench { what: BenchCommand::Ops { family, security, ring, n, op, json } } => {
            bench::ops(&family, &security, ring, n, op.as_deref(), json)
        }
        Command::Bench { what: BenchCommand::Layer { family, security, tokens, layers, json } } => {
            bench::layer(&family, &security, tokens, layers, json)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn certs(parties: usize, out: &std::path::Path, name: &str) -> anyhow::Result<()> {
    if parties < 2 {
        anyhow::bail!("a deployment needs at least 2 parties, got {parties}");
    }
    let d = veil_net::certs::Deployment::generate(name, parties)?;
    d.write(out)?;
    println!("wrote ca.pem and party-0..{} certificates and keys to {}", parties - 1, out.display());
    println!("the CA key was used once and discarded: run `veil certs` again to re-key the deployment");
    Ok(())
}
