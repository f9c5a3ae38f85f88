//! `veil plain`: a model in the clear, no MPC: the float executor beside the plaintext
//! fixed-point executor with the family's arithmetic, and the layers whose values left their
//! range. For debugging a model's numerics before running it privately.

use std::path::PathBuf;

use veil_runtime::classify::{image_range, load_image_set};
use veil_runtime::families::FamilyChoice;
use veil_runtime::plain::{PlainReport, plain_images, plain_text};

use crate::family::FamilyArgs;

use crate::classify::{batch_or, image_set, is_image_model};
use crate::run::model_dir;

/// Runs and prints.
pub fn run(
    model: Option<PathBuf>,
    args: &FamilyArgs,
    text: &str,
    images: Option<PathBuf>,
    batch: Option<usize>,
    json: bool,
) -> anyhow::Result<()> {
    let r = if is_image_model(model.as_deref()) {
        let path = model.unwrap_or_default();
        let loaded = veil_nn::image::ImageModel::load(&path)?;
        let family = FamilyChoice::for_graph(&loaded.graph, &args.request()?)?;
        let (all, _) = load_image_set(&image_set(&path, images)?)?;
        plain_images(&loaded, &image_range(&all, 0, batch_or(&loaded, batch, 4))?, &family)?
    } else {
        let family = crate::run::text_family(args)?;
        plain_text(&model_dir(model)?, text, &family)?
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print(&r);
    }
    Ok(())
}

fn print(r: &PlainReport) {
    let rings = r.rings.as_deref().map(|x| format!(" ({x} rings)")).unwrap_or_default();
    println!("Veil: {} in the clear, fixed point with {}'s arithmetic{rings}", r.model, r.family);
    let head = |v: &[f64]| v.iter().take(6).map(|x| format!("{x:+.4}")).collect::<Vec<_>>().join(" ");
    println!("  output: {} × {}", r.shape[0], r.shape[1]);
    println!("  float:        [{} …]", head(&r.float));
    println!("  fixed point:  [{} …]", head(&r.fixed_point));
    println!("  largest |fixed point − float|: {:.5}", r.max_abs_fixed_vs_float);
    println!("  cosine(fixed point, float): {:.6}", r.cosine_fixed_vs_float);
    if r.overflows.is_empty() {
        println!("  every value stayed in range");
    }
    for o in &r.overflows {
        println!(
            "  out of range at node {} ({}, {}): {} {:.3e} against the limit {:.3e}",
            o.node, o.op, o.scope, o.what, o.max_abs, o.limit
        );
    }
}
