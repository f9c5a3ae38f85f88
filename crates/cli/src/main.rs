//! `veil`: the command line of Veil.
//!
//! - `veil version`: the version of this build.
//! - `veil families`: the protocol families, with their party counts, roles, threat models,
//!   rings, model kinds and preprocessing.
//! - `veil certs --parties N --out DIR`: a CA and one certificate per party for a deployment.
//! - `veil party --config FILE --id N`: runs one party of a deployment (TCP + mutual TLS).
//! - `veil run`: a private inference of a Hugging Face model (or a CNN from ONNX), every party
//!   a thread.
//! - `veil eval`: accuracy of private inference against the float reference (sentences for
//!   embeddings, a labelled image set for CNNs).
//! - `veil demo`: the main job: every party a separate process on 127.0.0.1 over mutual TLS,
//!   a private sentence embedding with all-MiniLM-L6-v2 under `mosformer`, printed beside the
//!   plaintext embedding with each party's bytes, rounds and seconds (`--job mul`: the product
//!   of two secret vectors).

mod allocator;
mod bench;
mod classify;
mod config;
mod demo;
mod eval_text;
mod family;
mod job;
mod memory;
mod plain;
mod prepare;
mod progress;
mod report;
mod run;
mod shaped;
mod soak;

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

/// The model and the inputs of `run`, `plain` and `eval`.
#[derive(clap::Args, Debug)]
struct ModelInput {
    /// Model folder (BERT family or GPT-2 on text, ViT on images; default: all-MiniLM-L6-v2 as
    /// setup installs it), or an `.onnx` CNN.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Protocol family (`veil families` lists them): `mosformer` (transformers, ViTs and CNNs;
    /// default for transformers and ViTs), `aegis` (CNNs; default for `.onnx` models) or
    /// `additive` (CNNs among any number of parties; a test family, not private).
    #[arg(long)]
    family: Option<String>,
    /// Image models: the labelled images (default: `test.safetensors` beside the model).
    #[arg(long)]
    images: Option<PathBuf>,
    /// Image models: images per session, the first of the set (default: 8 for `run`, 4 for
    /// `plain`, 30 for `eval`; 1 for a ViT, which takes one image per run).
    #[arg(long)]
    batch: Option<usize>,
}

/// Who computes: the number of computing parties and where the owners sit.
#[derive(clap::Args, Debug)]
struct PartiesArgs {
    /// Computing parties (default: the family's; `additive` takes 2 or more).
    #[arg(long)]
    parties: Option<usize>,
    /// Where the data and model owners sit: `outside` the computing parties (parties of their
    /// own after them) or `inside` (the data owner is party 0, the model owner party 1);
    /// default: the family's.
    #[arg(long)]
    owners: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the version of this build.
    Version,
    /// List the protocol families: parties, where the owners may sit, threat models, rings,
    /// model kinds and where their preprocessing comes from.
    Families {
        /// One JSON object per family.
        #[arg(long)]
        json: bool,
    },
    /// The tokens a text model makes of a text: their count is what `veil prepare --tokens`
    /// and a stored session need (it is public: the data owner announces it).
    Tokens {
        /// Model folder (default: all-MiniLM-L6-v2 as setup installs it).
        #[arg(long)]
        model: Option<PathBuf>,
        /// The text.
        #[arg(long)]
        text: String,
        /// One JSON object: `tokens` (the count) and `ids`.
        #[arg(long)]
        json: bool,
    },
    /// Fault-injection soak: many seeded deployments on this host (one process per party over
    /// TLS), each with one fault (a party killed, frozen, sending a corrupted frame or an
    /// oversized one, a stranger connecting, stored material damaged or replayed); prints what
    /// every party saw, the time to detect it, and whether any output was wrong, released after a failed check,
    /// or any party hung.
    Soak {
        /// Number of runs (the faults rotate over them: eight kinds).
        #[arg(long, default_value_t = 24)]
        runs: usize,
        /// Seed of the faults' parties, moments and frames.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The text model of the main job (`embed`).
        #[arg(long, default_value = "crates/nn/tests/data/tiny-gpt2")]
        text_model: PathBuf,
        /// The CNN of the `classify` job (`test.safetensors` beside it).
        #[arg(long, default_value = "models/digits-cnn/model.onnx")]
        cnn: PathBuf,
        /// One JSON object per run, then the summary.
        #[arg(long)]
        json: bool,
    },
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
        /// This party's secret input in a `demo-mul` job (a JSON array of numbers).
        #[arg(long)]
        input: Option<PathBuf>,
        /// The model folder in an `embed` job (weights needed at the model owner only;
        /// default: all-MiniLM-L6-v2 as setup installs it).
        #[arg(long)]
        model: Option<PathBuf>,
        /// The data owner's text in an `embed` job.
        #[arg(long)]
        text: Option<String>,
        /// The data owner's images in a `classify` job (`.safetensors` with `images`).
        #[arg(long)]
        images: Option<PathBuf>,
        /// How many of them (the first ones) in a `classify` job.
        /// (Default: 8; 1 for a ViT, which takes one image per run.)
        #[arg(long)]
        batch: Option<usize>,
        /// Servers: the folder of this server's stored material (jobs with `offline =
        /// "stored"`), or where `--prepare` writes it.
        #[arg(long)]
        material: Option<PathBuf>,
        /// Servers of an `embed` job: make and store the material of a later session of this
        /// many tokens (the three servers only take part) instead of running the job.
        #[arg(long, value_name = "TOKENS")]
        prepare: Option<usize>,
        /// Print the party's report as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Write the public part of an ONNX model (graph, weight shapes, input shape; no weights)
    /// for the servers and the data owner of a `classify` deployment.
    Graph {
        /// The `.onnx` file.
        #[arg(long)]
        model: PathBuf,
        /// Where to write the public model (JSON).
        #[arg(long)]
        out: PathBuf,
    },
    /// Private inference of a Hugging Face model (default: all-MiniLM-L6-v2) or of a CNN from
    /// an ONNX file, every party on this machine: three servers, the data owner and the model
    /// owner.
    Run {
        #[command(flatten)]
        input: ModelInput,
        #[command(flatten)]
        parties: PartiesArgs,
        /// The data owner's text.
        #[arg(long, default_value = "Secure inference keeps both the model and the data private.")]
        text: String,
        /// `malicious` or `semi-honest` (default: the family's strongest).
        #[arg(long)]
        security: Option<String>,
        /// Under mosformer: the gates' working rings, `mixed` (the paper's modulus conversion:
        /// activations in Z_2^16, softmax and Rsqrt in Z_2^32; the default) or `z64` (no
        /// modulus conversion: every gate in Z_2^64 at 16 fractional bits).
        #[arg(long)]
        rings: Option<String>,
        /// The servers' offline material: `on-demand` (made right before each gate call, in
        /// bounded memory; every family's default), `ahead` (mosformer: planned from the
        /// graph's shapes, made before the online phase and held until used: as fast, about
        /// twice the memory) or `stored` (see --material).
        #[arg(long)]
        offline: Option<String>,
        /// Text models: use the material `veil prepare` stored in this folder (once: each
        /// server deletes its file before the online phase).
        #[arg(long)]
        material: Option<PathBuf>,
        /// `tls` (TCP + mutual TLS on 127.0.0.1) or `memory`.
        #[arg(long, default_value = "tls")]
        link: String,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The servers' offline phase of a later session of a text model, made now and stored: each
    /// server writes its material to `server-N.material` in a folder, for `veil run --material`.
    Prepare {
        /// Model folder (default: all-MiniLM-L6-v2 as setup installs it).
        #[arg(long)]
        model: Option<PathBuf>,
        /// Tokens of the session it will serve (public: the data owner announces the count;
        /// `veil tokens --text` counts them).
        #[arg(long, required_unless_present = "text", conflicts_with = "text")]
        tokens: Option<usize>,
        /// Or the text of that session, whose tokens are counted here.
        #[arg(long)]
        text: Option<String>,
        /// `malicious` or `semi-honest` (the later session must run the same).
        #[arg(long, default_value = "malicious")]
        security: String,
        /// The gates' working rings, `mixed` or `z64` (the later session must run the same).
        #[arg(long, default_value = "mixed")]
        rings: String,
        /// Folder to write the servers' files to (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// `tls` (TCP + mutual TLS on 127.0.0.1) or `memory`.
        #[arg(long, default_value = "tls")]
        link: String,
        /// One JSON object per server.
        #[arg(long)]
        json: bool,
    },
    /// A model in the clear, no MPC: the float executor beside the plaintext fixed-point
    /// executor, which computes what the family's secure run computes (its rings, tables and
    /// precision plan), and the layers whose values leave their range.
    Plain {
        #[command(flatten)]
        input: ModelInput,
        /// The text (transformers).
        #[arg(long, default_value = "Secure inference keeps both the model and the data private.")]
        text: String,
        /// Under mosformer: the gates' working rings, `mixed` or `z64` (see `run`).
        #[arg(long)]
        rings: Option<String>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Accuracy: private embeddings of every line of a file against the float reference.
    Eval {
        /// One sentence per line.
        #[arg(long, default_value = "data/sentences.txt")]
        sentences: PathBuf,
        #[command(flatten)]
        input: ModelInput,
        #[command(flatten)]
        parties: PartiesArgs,
        /// Evaluate only the first N sentences (text) or images (CNNs).
        #[arg(long)]
        limit: Option<usize>,
        /// `malicious` or `semi-honest` (default: the family's strongest).
        #[arg(long)]
        security: Option<String>,
        /// Under mosformer: the gates' working rings, `mixed` (the paper's modulus conversion:
        /// activations in Z_2^16, softmax and Rsqrt in Z_2^32; the default) or `z64` (no
        /// modulus conversion: every gate in Z_2^64 at 16 fractional bits).
        #[arg(long)]
        rings: Option<String>,
        /// Text: keep the records in this JSON Lines file, each appended as soon as its
        /// sentence is done, and skip the sentences it already has (so a long eval can be
        /// stopped and resumed); the summary covers every sentence of the list.
        #[arg(long, value_name = "FILE")]
        resume: Option<PathBuf>,
        /// One JSON object per line, then a summary object.
        #[arg(long)]
        json: bool,
    },
    /// Benchmarks (see the project's benchmark conventions).
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
    /// The main job: a private sentence embedding with all-MiniLM-L6-v2 among 5 local
    /// processes over mutual TLS (3 servers, data owner, model owner), compared with plaintext.
    Demo {
        /// `embed` (the main job) or `mul` (a product of two secret vectors, insecure dealer).
        #[arg(long, default_value = "embed")]
        job: String,
        /// Model folder for `embed` (default: all-MiniLM-L6-v2 as setup installs it).
        #[arg(long)]
        model: Option<PathBuf>,
        /// The data owner's text for `embed`.
        #[arg(long, default_value = "Secure inference keeps both the model and the data private.")]
        text: String,
        /// The protocol family for `embed` (`veil families`): `mosformer` (5 processes: 3
        /// servers and the two owners) or `mm` (2 processes: the client and the server).
        #[arg(long, default_value = "mosformer")]
        family: String,
        /// `malicious` or `semi-honest`, for `embed` (default: the family's strongest).
        #[arg(long)]
        security: Option<String>,
        /// The servers' offline material for `embed`: `ahead` or `on-demand` (see `veil run`;
        /// default: the family's).
        #[arg(long)]
        offline: Option<String>,
        /// Number of parties for `mul`.
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
    /// GBDT training between two parties under `mm` (vertically partitioned data, party 0 with
    /// the labels), private prediction of held-out rows, F1 beside the clear training.
    Gbdt {
        /// `breast-cancer` (data/breast-cancer.csv) or `synthetic`.
        #[arg(long, default_value = "breast-cancer")]
        data: String,
        /// Synthetic training rows (with a quarter more held out).
        #[arg(long, default_value_t = 100_000)]
        rows: usize,
        /// Trees.
        #[arg(long, default_value_t = 10)]
        trees: usize,
        /// Depth (1 to 5).
        #[arg(long, default_value_t = 5)]
        depth: usize,
        /// Bins per feature.
        #[arg(long, default_value_t = 16)]
        bins: usize,
        /// Threads per party.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Folds held out in turn (1 to 5; the F1 is their mean, the costs the first's).
        #[arg(long, default_value_t = 1)]
        folds: usize,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
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
        /// Threads per party (`--family ot`; default 1).
        #[arg(long)]
        threads: Option<usize>,
        /// `--family ot` toolkit ops: make the COTs `ahead` (an offline phase, the default) or
        /// `on-demand` inside the op, as they run out.
        #[arg(long)]
        cots: Option<String>,
        /// `--family he`: the parameter preset (n4096-p16, n8192-p32, n8192-p60; default all).
        #[arg(long)]
        preset: Option<String>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// A whole model: the aegis paper's CNNs (`snn`, `lenet`, `vgg16`) or the M&M paper's image
    /// models (`resnet50`, `densenet121`, `vit-base`; random weights) on a batch of random
    /// images, `minilm` (real weights, mosformer) on `--seq` tokens, or every
    /// layer of `bert-base`, `bert-large` or `gpt2` (random weights of the real shapes,
    /// mosformer, as `veil bench layer --layers 12`, or 24 for BERT-large) on `--seq` tokens. With
    /// `--net`, `minilm` or an `.onnx` CNN with every party a process in its own network
    /// namespace, on unshaped then shaped links (root only).
    Model {
        /// Protocol family: `aegis` or `mosformer`.
        #[arg(long)]
        family: String,
        /// `snn`, `lenet`, `vgg16`, `resnet50`, `densenet121`, `vit-base`, `minilm`, `bert-base`,
        /// `bert-large` or `gpt2` (with `--net`: `minilm` or a path to an `.onnx` CNN).
        #[arg(long)]
        model: String,
        /// Network profile to shape the links to: `lan`, `lan10`, `wan`, `wan40`, `wan100`.
        #[arg(long)]
        net: Option<String>,
        /// `malicious` or `semi-honest`.
        #[arg(long, default_value = "malicious")]
        security: String,
        /// Images per batch (CNNs).
        #[arg(long, default_value_t = 30)]
        batch: usize,
        /// aegis: the servers verify their products after every this many images (default:
        /// once, after the whole batch), which bounds the verification's memory; nothing is
        /// revealed before the last check.
        #[arg(long)]
        images_per_check: Option<usize>,
        /// Tokens (minilm, bert-base, bert-large, gpt2; the papers run BERT-base at 128, GPT-2 at 64).
        #[arg(long, default_value_t = 16)]
        seq: usize,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Removes the network namespaces (and the processes in them) that an interrupted
    /// `--net` benchmark left behind.
    Cleanup,
    /// Transformer layers of BERT-base, BERT-large or GPT-2 (random weights) among three
    /// servers: offline and online cost, per block kind, and peak memory.
    Layer {
        /// Protocol family.
        #[arg(long)]
        family: String,
        /// `malicious` or `semi-honest`.
        #[arg(long, default_value = "malicious")]
        security: String,
        /// `bert-base` or `bert-large` (encoder layers), or `gpt2` (GPT-2 base decoder blocks:
        /// causal, pre-LN).
        #[arg(long, default_value = "bert-base")]
        model: String,
        /// Tokens (BERT-base runs 128; every gate's material grows with it).
        #[arg(long, default_value_t = 8)]
        tokens: usize,
        /// Layers to run (BERT-base and GPT-2 base have 12, BERT-large 24).
        #[arg(long, default_value_t = 1)]
        layers: usize,
        /// `on-demand`: every gate call makes its material just before it (bounded memory);
        /// `ahead`: the servers make the whole session's material first, planned from the
        /// model's shapes (as `veil run --offline ahead`; a plan past the runtime's limit is
        /// made on demand, and the record says so). The record gives the totals over all layers.
        #[arg(long, default_value = "on-demand")]
        material: String,
        /// Most elements one gate call takes at once; larger calls run in chunks one after the
        /// other (fewer rounds with bigger chunks, more memory held at once).
        #[arg(long, default_value_t = veil_bench::encoder::ON_DEMAND_CHUNK)]
        chunk: usize,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    allocator::tune();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Version => {
            println!("veil {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Command::Certs { parties, out, name } => certs(parties, &out, &name),
        Command::Party { config, id, input, model, text, images, batch, material, prepare, json } => {
            let args = job::PartyArgs { input, model, text, images, batch, material, prepare };
            job::party(&config, id, args, json)
        }
        Command::Graph { model, out } => public_graph(&model, &out),
        Command::Families { json } => family::list(json),
        Command::Soak { runs, seed, text_model, cnn, json } => {
            soak::soak(&soak::SoakArgs { runs, seed, text_model, cnn, json })
        }
        Command::Prepare { model, tokens, text, security, rings, out, link, json } => {
            family::parse_security(&security).and_then(|s| {
                let mode = veil_runtime::Mode { security: s, rings: family::parse_rings(&rings)? };
                let tokens = match (tokens, text) {
                    (Some(n), _) => n,
                    (None, Some(t)) => prepare::count_tokens(model.clone(), &t)?.len(),
                    (None, None) => anyhow::bail!("pass --tokens N or --text TEXT"),
                };
                prepare::prepare(model, tokens, mode, &out, &link, json)
            })
        }
        Command::Tokens { model, text, json } => prepare::tokens(model, &text, json),
        Command::Run {
            input: ModelInput { model, family, images, batch },
            parties: PartiesArgs { parties, owners },
            text,
            security,
            rings,
            offline,
            material,
            link,
            json,
        } => {
            let args = family::FamilyArgs { family, security, rings, parties, owners };
            run::material_arg(offline.as_deref(), material).and_then(|material| {
                let link = run::parse_link(&link)?;
                match model {
                    Some(m) if classify::is_image_model(Some(&m)) => {
                        classify::run(&m, &args, (material, link), images, batch, json)
                    }
                    model => run::run(model, &text, &args, material, link, json),
                }
            })
        }
        Command::Plain { input: ModelInput { model, family, images, batch }, text, rings, json } => {
            let args = family::FamilyArgs { family, rings, ..family::FamilyArgs::default() };
            plain::run(model, &args, &text, images, batch, json)
        }
        Command::Eval {
            sentences,
            input: ModelInput { model, family, images, batch },
            parties: PartiesArgs { parties, owners },
            limit,
            security,
            rings,
            resume,
            json,
        } => {
            let args = family::FamilyArgs { family, security, rings, parties, owners };
            match model {
                Some(m) if classify::is_image_model(Some(&m)) => {
                    if resume.is_some() {
                        Err(anyhow::anyhow!("--resume is for text evals"))
                    } else {
                        classify::eval(&m, &args, images, batch, limit, json)
                    }
                }
                model => eval_text::eval(model, &sentences, &args, limit, resume.as_deref(), json),
            }
        }
        Command::Demo { job, model, text, family, security, offline, parties, json, workdir } => {
            match job.as_str() {
                "embed" => demo::run_embed(
                    model,
                    &text,
                    (&family, security.as_deref(), offline.as_deref()),
                    json,
                    workdir,
                ),
                "mul" => demo::run(parties, json, workdir),
                other => Err(anyhow::anyhow!("--job {other}: use embed or mul")),
            }
        }
        Command::Bench {
            what: BenchCommand::Ops { family, security, ring, n, op, threads, cots, preset, json },
        } => {
            if family == "he" {
                bench::he_ops(n, op.as_deref(), preset.as_deref(), threads, json)
            } else if family == "mm" {
                bench::mm_ops(n, op.as_deref(), threads, json)
            } else if preset.is_some() {
                Err(anyhow::anyhow!("--preset applies to --family he"))
            } else if family == "ot" {
                bench::ot_ops(n, op.as_deref(), ring, (threads, cots.as_deref()), json)
            } else if cots.is_some() {
                Err(anyhow::anyhow!("--cots applies to --family ot"))
            } else {
                bench::ops(&family, &security, ring, n, op.as_deref(), json)
            }
        }
        Command::Bench {
            what: BenchCommand::Model { family, model, security, batch, seq: _, net: Some(net), json, .. },
        } => shaped::bench(&model, &family, &security, batch, &net, json),
        Command::Bench { what: BenchCommand::Cleanup } => veil_shaping::cleanup_stale()
            .map(|removed| {
                println!(
                    "removed {} namespace(s){}",
                    removed.len(),
                    if removed.is_empty() { String::new() } else { format!(": {}", removed.join(", ")) }
                )
            })
            .map_err(Into::into),
        Command::Bench {
            what:
                BenchCommand::Model { family, model, security, batch, images_per_check, seq, net: None, json },
        } => bench::model(&family, &model, &security, (batch, images_per_check), seq, json),
        Command::Bench {
            what: BenchCommand::Layer { family, security, model, tokens, layers, material, chunk, json },
        } => bench::layer(&family, &security, &model, (tokens, layers, chunk), &material, json),
        Command::Bench {
            what: BenchCommand::Gbdt { data, rows, trees, depth, bins, threads, folds, json },
        } => bench::gbdt(&data, rows, (trees, depth, bins), (threads, folds), json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn public_graph(model: &std::path::Path, out: &std::path::Path) -> anyhow::Result<()> {
    let m = veil_nn::image::ImageModel::load(model)?;
    std::fs::write(out, m.public_json()?)?;
    println!(
        "wrote the public model of {} ({} nodes, no weights) to {}",
        m.name,
        m.graph.nodes.len(),
        out.display()
    );
    Ok(())
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
