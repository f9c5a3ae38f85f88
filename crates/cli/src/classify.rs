//! `veil run` and `veil eval` for image models (CNNs imported from ONNX, Vision Transformers
//! from Hugging Face folders): private classification of images (parties as threads), its
//! report, and test-set accuracy against the float reference.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use veil_nn::image::ImageModel;
use veil_runtime::Link;
use veil_runtime::classify::{ClassifyReport, image_range, load_image_set, private_classification};
use veil_runtime::families::FamilyChoice;
use veil_runtime::inference::Material;

use crate::family::FamilyArgs;

/// Whether `--model` names an image model: an `.onnx` CNN, a ViT folder, or a public model.
pub fn is_image_model(model: Option<&Path>) -> bool {
    model.is_some_and(veil_nn::image::is_image_model)
}

/// `--batch`, or `default` images (at most what the model takes in one run).
pub(crate) fn batch_or(model: &ImageModel, batch: Option<usize>, default: usize) -> usize {
    batch.unwrap_or_else(|| model.max_batch().map_or(default, |m| m.min(default)))
}

/// The labelled images: `--images`, or `test.safetensors` beside the model file (in the
/// model folder).
pub(crate) fn image_set(model: &Path, images: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let beside = if model.is_dir() {
        model.join("test.safetensors")
    } else {
        model.with_file_name("test.safetensors")
    };
    let path = images.unwrap_or(beside);
    if !path.exists() {
        bail!(
            "no images at {}: pass --images FILE (.safetensors with `images` [N, C, H, W] and `labels` [N])",
            path.display()
        );
    }
    Ok(path)
}

/// `veil run --model X.onnx|VIT_FOLDER`: the first `batch` images of the set, privately.
pub fn run(
    model: &Path,
    args: &FamilyArgs,
    (material, link): (Option<Material>, Link),
    images: Option<PathBuf>,
    batch: Option<usize>,
    json: bool,
) -> anyhow::Result<()> {
    let loaded = ImageModel::load(model)?;
    let batch = batch_or(&loaded, batch, 8);
    let choice = FamilyChoice::for_graph(&loaded.graph, &args.request()?)?;
    let material = material.unwrap_or_else(|| choice.default_material());
    let (all, labels) = load_image_set(&image_set(model, images)?)?;
    let x = image_range(&all, 0, batch)?;
    let bar = crate::progress::Bar::follow(0, "secure run");
    let r = private_classification(&loaded, &x, Some(&labels[..batch]), &choice, material, link, None)?;
    drop(bar);
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    print(&r);
    Ok(())
}

fn print(r: &ClassifyReport) {
    let rings = r.rings.as_deref().map(|x| format!(", {x} rings")).unwrap_or_default();
    println!("Veil: private classification with {} under {} ({}{rings})", r.model, r.family, r.security);
    println!("  parties: {} — {}", r.topology.describe(), r.transport);
    println!("  preprocessing: {}", r.preprocessing);
    let images = if r.images == 1 { "image" } else { "images" };
    println!("  input: {} {images} (only their number is public)", r.images);
    println!("  private predictions:   {:?}", r.predictions);
    println!("  float predictions:     {:?}", r.plaintext_predictions);
    if let Some(l) = &r.labels {
        println!("  labels:                {l:?}");
    }
    println!("  largest |private − float| logit: {:.4}", r.max_abs_error);
    println!("  largest |private − fixed-point executor| logit: {} units of 2^-16", r.fixed_point_ulps);
    for o in &r.overflows {
        println!(
            "  out of range at node {} ({}, {}): {} {:.3e} against the limit {:.3e}",
            o.node, o.op, o.scope, o.what, o.max_abs, o.limit
        );
    }
    if let Some(line) = crate::report::preprocessing_used(&r.per_party) {
        println!("{line}");
    }
    println!("\n  party  role         phase     MiB sent   rounds   seconds");
    for p in &r.per_party {
        for ph in p.phases.iter().filter(|ph| ph.bytes_sent > 0 || ph.rounds > 0) {
            println!(
                "  {:>5}  {:<11}  {:<8} {:>9.3} {:>8} {:>9.2}",
                p.party,
                p.role,
                ph.phase,
                ph.bytes_sent as f64 / f64::from(1u32 << 20),
                ph.rounds,
                ph.seconds
            );
        }
    }
    if let Some(server) = r.per_party.first() {
        println!("\n  server 0 per layer ({}):", crate::run::per_layer_scope(server.material.as_deref()));
        for l in &server.per_layer {
            println!(
                "    {:<12} {:>9.3} MiB {:>8.2} s",
                l.op,
                l.bytes as f64 / f64::from(1u32 << 20),
                l.seconds
            );
        }
    }
}

/// One batch of `veil eval`.
#[derive(serde::Serialize)]
struct BatchRow {
    first: usize,
    images: usize,
    correct_private: usize,
    correct_float: usize,
    agree: usize,
    max_abs_error: f64,
    seconds: f64,
    mib_per_server: f64,
}

/// `veil eval --model X.onnx|VIT_FOLDER`: accuracy of private classification over the image set, batch by
/// batch (a session each, parties as threads in memory), beside the float reference's.
pub fn eval(
    model: &Path,
    args: &FamilyArgs,
    images: Option<PathBuf>,
    batch: Option<usize>,
    limit: Option<usize>,
    json: bool,
) -> anyhow::Result<()> {
    let loaded = ImageModel::load(model)?;
    let batch = batch_or(&loaded, batch, 30);
    let family = FamilyChoice::for_graph(&loaded.graph, &args.request()?)?;
    let (all, labels) = load_image_set(&image_set(model, images)?)?;
    let total = limit.unwrap_or(labels.len()).min(labels.len());
    if batch == 0 || total == 0 {
        bail!("nothing to evaluate: --batch {batch}, {total} images");
    }
    let (mut private, mut float, mut agree, mut worst) = (0, 0, 0, 0f64);
    for first in (0..total).step_by(batch) {
        let n = batch.min(total - first);
        let start = std::time::Instant::now();
        let x = image_range(&all, first, n)?;
        let bar = crate::progress::Bar::follow(0, "secure run");
        let r = private_classification(&loaded, &x, None, &family, Material::OnDemand, Link::Memory, None)
            .with_context(|| format!("images {first}..{}", first + n))?;
        drop(bar);
        let truth = &labels[first..first + n];
        let count = |p: &[usize]| p.iter().zip(truth).filter(|(a, b)| a == b).count();
        let row = BatchRow {
            first,
            images: n,
            correct_private: count(&r.predictions),
            correct_float: count(&r.plaintext_predictions),
            agree: r.predictions.iter().zip(&r.plaintext_predictions).filter(|(a, b)| a == b).count(),
            max_abs_error: r.max_abs_error,
            seconds: start.elapsed().as_secs_f64(),
            mib_per_server: r.per_party[0].phases.iter().map(|p| p.bytes_sent).sum::<u64>() as f64
                / f64::from(1u32 << 20),
        };
        if first == 0 {
            let left = (total - n).div_ceil(batch);
            eprintln!("{}", crate::eval_text::expected_time(row.seconds, left, ("batch", "batches")));
        }
        (private, float, agree) =
            (private + row.correct_private, float + row.correct_float, agree + row.agree);
        worst = worst.max(row.max_abs_error);
        if json {
            println!("{}", serde_json::to_string(&row)?);
        } else {
            println!(
                "images {:>4}..{:<4} private {:>3}/{n} float {:>3}/{n} agree {:>3}/{n}  max|err| {:.4}  {:>6.1} s  {:>8.2} MiB/server",
                first,
                first + n,
                row.correct_private,
                row.correct_float,
                row.agree,
                row.max_abs_error,
                row.seconds,
                row.mib_per_server
            );
        }
    }
    let pct = |c: usize| 100.0 * c as f64 / total as f64;
    let summary = serde_json::json!({
        "summary": true, "model": loaded.name, "family": family.name(),
        "security": family.security.name(), "parties": family.topology.computing,
        "rings": family.rings_name(), "images": total,
        "private_accuracy": pct(private) / 100.0, "float_accuracy": pct(float) / 100.0,
        "agreement": pct(agree) / 100.0, "max_abs_error": worst,
    });
    if json {
        println!("{summary}");
    } else {
        println!(
            "{total} images under {}: private accuracy {:.2}%, float {:.2}%, same prediction on {:.2}%, largest logit error {worst:.4}",
            family.name(),
            pct(private),
            pct(float),
            pct(agree)
        );
    }
    Ok(())
}
