//! `veil bench model`: a whole model privately among three servers (parties as threads,
//! in-memory links, no shaping), with the cost per phase (offline material, online execution,
//! the deferred checks) per server and the paper's figures beside it: the CNNs of the aegis
//! paper (random weights at the real architecture, see [`veil_nn::zoo`]) on a batch of random
//! images, or all-MiniLM-L6-v2 (real weights) on a sentence of `seq` tokens.

use crate::dollars::{DollarCost, dollar_cost};
use serde::Serialize;
use veil_mosformer::Security;
use veil_mpc::MpcError;
use veil_nn::image::ImageModel;
use veil_nn::zoo;

use crate::ops::{PaperFigure, PhaseCost};
use veil_runtime::Link;
use veil_runtime::classify::private_classification;
use veil_runtime::families::{FamilyChoice, Request};
use veil_runtime::inference::{InferenceParty, Material, security_name};

/// Seconds per phase at the slowest server.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModelSeconds {
    /// Online execution.
    pub online: f64,
    /// Offline material (made on demand, timed apart).
    pub offline: f64,
    /// The deferred checks.
    pub verify: f64,
}

/// One `veil bench model` record (fields of the project's benchmark conventions).
#[derive(Debug, Clone, Serialize)]
pub struct ModelRecord {
    /// Protocol family.
    pub family: &'static str,
    /// `malicious` or `semi-honest`.
    pub security: &'static str,
    /// Model name.
    pub model: String,
    /// Images (CNNs).
    pub batch: Option<usize>,
    /// Tokens (transformers).
    pub seq: Option<usize>,
    /// aegis: the servers verified after every this many images (absent: once, after the
    /// batch); rounds then add up over the groups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images_per_check: Option<usize>,
    /// Ring width and fractional bits of the shares.
    pub ring_bits: u32,
    /// Fractional bits.
    pub frac_bits: u32,
    /// Computing parties.
    pub parties: usize,
    /// Online execution, per server.
    pub online: PhaseCost,
    /// Offline material, per server.
    pub offline: PhaseCost,
    /// The deferred checks (aegis's final verification, mosformer's MAC checks), per server.
    pub verify: PhaseCost,
    /// Wall-clock seconds.
    pub seconds: ModelSeconds,
    /// `none`: loopback, no shaping.
    pub net: &'static str,
    /// Largest and mean absolute logit error against the float64 run.
    pub max_abs_error: f64,
    /// Mean absolute logit error.
    pub mean_abs_error: f64,
    /// Peak resident memory of the process running every party, MiB.
    pub peak_rss_mib: Option<f64>,
    /// The paper's figures for the same model and batch.
    pub paper: Vec<PaperFigure>,
    /// Width of the ring of the family's MACs (`mosformer`: 128; absent where the family has
    /// none). Records without it predate the Z_2^128 MACs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac_bits: Option<u32>,
    /// True where material made on demand ends each offline step with the servers waiting for
    /// one another, so that a wait for a peer's offline work counts as offline time. Records
    /// without it (`mosformer` only) counted those waits as online time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline_steps_synced: Option<bool>,
    /// The processor, threads and vector tier it ran on ([`crate::machine`]); records without
    /// it predate the field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// Two-party families: the M&M paper's dollar cost of the run ([`crate::dollars`]), with
    /// every phase's seconds and both parties' bytes, the machine's threads as each party's
    /// cores (the parties share them here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dollar_cost: Option<DollarCost>,
}

/// Sums a phase over the three servers; the deferred checks' rounds are counted across them
/// ([`veil_runtime::inference::verify_rounds`]).
fn phase(per_party: &[InferenceParty], name: &str) -> (PhaseCost, f64) {
    let servers: Vec<_> = per_party.iter().filter(|p| p.party < 3).collect();
    let get = |p: &InferenceParty| p.phases.iter().find(|ph| ph.phase == name).cloned().unwrap_or_default();
    let n = servers.len().max(1) as f64;
    let cost = PhaseCost {
        bytes_per_party: servers.iter().map(|p| get(p).bytes_sent as f64).sum::<f64>() / n,
        bytes_max_party: servers.iter().map(|p| get(p).bytes_sent).max().unwrap_or(0),
        // The checks' rounds across the servers where they recorded their spans (a server that
        // entered a check behind the others would count the rounds it waited).
        rounds: match veil_runtime::inference::verify_rounds(&servers) {
            Some(r) if name == veil_nn::secure::VERIFY_PHASE && r > 0 => r,
            _ => servers.iter().map(|p| get(p).rounds).max().unwrap_or(0),
        },
        messages_per_party: servers.iter().map(|p| get(p).messages_sent as f64).sum::<f64>() / n,
    };
    (cost, servers.iter().map(|p| get(p).seconds).fold(0.0, f64::max))
}

/// The aegis paper's Table 3 (LAN, batch 30) for a model.
fn aegis_table3(model: &str) -> Vec<PaperFigure> {
    const CONV: &str = "aegis Table 3, LAN, batch 30; 'Com in MB' (whose sends it sums is not stated; for \
                        S-NN and LeNet it is one image's cost by the paper's Table 6, docs/benchmarks.md)";
    let rows: &[(&str, f64, f64, f64, f64, f64)] = match model {
        // offline MB, online execution MB, execution rounds, verification MB, verification rounds
        "snn" => &[("snn", 0.05, 0.17, 2.0, 1.75, 3.0)],
        "lenet" => &[("lenet", 0.65, 2.46, 42.0, 26.1, 10.0)],
        "vgg16" => &[("vgg16", 10.2, 39.2, 127.0, 414.0, 18.0)],
        _ => &[],
    };
    rows.iter()
        .flat_map(|&(_, off, on, on_r, ver, ver_r)| {
            [
                PaperFigure {
                    source: "aegis Table 3: offline communication",
                    value: off,
                    unit: "MB",
                    convention: CONV,
                },
                PaperFigure {
                    source: "aegis Table 3: execution communication",
                    value: on,
                    unit: "MB",
                    convention: CONV,
                },
                PaperFigure {
                    source: "aegis Table 3: execution rounds",
                    value: on_r,
                    unit: "rounds",
                    convention: CONV,
                },
                PaperFigure {
                    source: "aegis Table 3: verification communication",
                    value: ver,
                    unit: "MB",
                    convention: CONV,
                },
                PaperFigure {
                    source: "aegis Table 3: verification rounds",
                    value: ver_r,
                    unit: "rounds",
                    convention: CONV,
                },
            ]
        })
        .collect()
}

/// Runs a paper CNN privately on `batch` random images (material made on demand, as the
/// larger models need to fit in memory), checked after every `images_per_check` images
/// (aegis; default once, after the batch).
pub fn bench_cnn(
    model: &str,
    family: &str,
    security: Security,
    batch: usize,
    images_per_check: Option<usize>,
) -> Result<ModelRecord, MpcError> {
    let (graph, weights, input) = zoo::cnn(model, 1).map_err(veil_runtime::inference::nn_error)?;
    let m = ImageModel { name: model.to_string(), graph, weights, input, preprocess: None };
    let images = zoo::random_images(batch, input, 2);
    let choice = FamilyChoice::new(&Request { security: Some(security), ..Request::default() }, family)?;
    let r = private_classification(
        &m,
        &images,
        None,
        &choice,
        Material::OnDemand,
        Link::Memory,
        images_per_check,
    )?;
    let plain = veil_nn::float::run_float_on(&m.graph, &m.weights, veil_nn::Input::Images(&images))
        .map_err(veil_runtime::inference::nn_error)?;
    let paper = match choice.name() {
        "aegis" => aegis_table3(model),
        "mm" => mm_table11(model),
        _ => vec![],
    };
    let mut rec = record(
        choice.name(),
        security,
        model,
        (Some(batch), None),
        &r.per_party,
        &r.output,
        &plain.data,
        r.peak_rss_mib,
        paper,
    );
    rec.images_per_check = images_per_check.filter(|&k| k < batch);
    rec.parties = choice.topology.computing;
    if rec.parties == 2 {
        let seconds = rec.seconds.online + rec.seconds.offline + rec.seconds.verify;
        let bytes =
            [&rec.online, &rec.offline, &rec.verify].iter().map(|p| p.bytes_per_party).sum::<f64>() * 2.0;
        rec.dollar_cost = Some(dollar_cost(seconds, rayon::current_num_threads(), bytes));
    }
    Ok(rec)
}

/// The M&M paper's Table XI row of an image model (one image, LAN; 4 cores for the CNNs, 64
/// for ViT-base).
fn mm_table11(model: &str) -> Vec<PaperFigure> {
    match model {
        "resnet50" => vec![
            PaperFigure {
                source: "M&M Table XI: ResNet-50, one 224×224 image, 4 cores, LAN",
                value: 112.4,
                unit: "s",
                convention: "end to end, both parties",
            },
            PaperFigure {
                source: "M&M Table XI: ResNet-50 communication",
                value: 1.85 * 1024.0,
                unit: "MiB (both parties)",
                convention: "the paper's GB is GiB",
            },
            PaperFigure {
                source: "M&M Table XI: ResNet-50 A2I cost",
                value: 17.93,
                unit: "cents (A2I)",
                convention: "4 cores per party (the record's dollar_cost: this machine's threads)",
            },
        ],
        "densenet121" => vec![
            PaperFigure {
                source: "M&M Table XI: DenseNet-121, one 224×224 image, 4 cores, LAN",
                value: 131.3,
                unit: "s",
                convention: "end to end, both parties",
            },
            PaperFigure {
                source: "M&M Table XI: DenseNet-121 communication",
                value: 2.01 * 1024.0,
                unit: "MiB (both parties)",
                convention: "the paper's GB is GiB",
            },
            PaperFigure {
                source: "M&M Table XI: DenseNet-121 A2I cost (printed 15.59¢; its own time and bytes give 19.59¢)",
                value: 19.59,
                unit: "cents (A2I)",
                convention: "4 cores per party (the record's dollar_cost: this machine's threads)",
            },
        ],
        "vit-base" => vec![
            PaperFigure {
                source: "M&M Table XI: ViT-base, one 224×224 image, 64 cores, LAN",
                value: 192.1,
                unit: "s",
                convention: "end to end, both parties",
            },
            PaperFigure {
                source: "M&M Table XI: ViT-base communication",
                value: 7.72 * 1024.0,
                unit: "MiB (both parties)",
                convention: "the paper's GB is GiB",
            },
            PaperFigure {
                source: "M&M Table XI: ViT-base A2I cost",
                value: 104.53,
                unit: "cents (A2I)",
                convention: "64 cores per party (the record's dollar_cost: this machine's threads)",
            },
        ],
        _ => vec![],
    }
}

/// Runs all-MiniLM-L6-v2 (the folder `dir`) privately under `mosformer` on a sentence of `seq`
/// tokens (`[CLS]`, `seq − 2` words, `[SEP]`).
pub fn bench_minilm(dir: &std::path::Path, security: Security, seq: usize) -> Result<ModelRecord, MpcError> {
    if seq < 3 {
        return Err(MpcError::Invalid(format!("--seq {seq}: at least 3 tokens")));
    }
    let model = veil_nn::bert::load_hf(dir, true).map_err(veil_runtime::inference::nn_error)?;
    let text = vec!["privacy"; seq - 2].join(" ");
    let r = veil_runtime::inference::private_inference_of(
        &model,
        &text,
        security,
        Material::OnDemand,
        Link::Memory,
    )?;
    if r.tokens != seq {
        return Err(MpcError::Invalid(format!("the sentence has {} tokens, not {seq}", r.tokens)));
    }
    Ok(record(
        "mosformer",
        security,
        &model.name,
        (None, Some(seq)),
        &r.per_party,
        &r.output,
        &r.plaintext,
        r.peak_rss_mib,
        vec![],
    ))
}

#[allow(clippy::too_many_arguments)]
fn record(
    family: &'static str,
    security: Security,
    model: &str,
    (batch, seq): (Option<usize>, Option<usize>),
    per_party: &[InferenceParty],
    output: &[f64],
    plain: &[f64],
    peak_rss_mib: Option<f64>,
    paper: Vec<PaperFigure>,
) -> ModelRecord {
    let (online, on_s) = phase(per_party, "online");
    let (offline, off_s) = phase(per_party, veil_mpc::phase::OFFLINE_PHASE);
    let (verify, ver_s) = phase(per_party, veil_nn::secure::VERIFY_PHASE);
    let errors: Vec<f64> = output.iter().zip(plain).map(|(a, b)| (a - b).abs()).collect();
    ModelRecord {
        family,
        security: security_name(security),
        model: model.to_string(),
        batch,
        seq,
        images_per_check: None,
        ring_bits: 64,
        frac_bits: 16,
        parties: 3,
        online,
        offline,
        verify,
        seconds: ModelSeconds { online: on_s, offline: off_s, verify: ver_s },
        net: "none",
        max_abs_error: errors.iter().copied().fold(0.0, f64::max),
        mean_abs_error: errors.iter().sum::<f64>() / errors.len().max(1) as f64,
        peak_rss_mib,
        paper,
        mac_bits: crate::ops::mac_bits(family),
        offline_steps_synced: (family == "mosformer").then_some(true),
        dollar_cost: None,
        machine: Some(crate::machine::describe()),
    }
}
