//! The example CNN (`models/digits-cnn`, trained by `scripts/train_digits_cnn.py`): the ONNX
//! importer and the float executor against the training script's NumPy logits, and private
//! inference of a few test images under `aegis` and `mosformer` against the float reference.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use std::path::{Path, PathBuf};

use veil_aegis::Aegis;
use veil_mosformer::{Mosformer, Rings, Security, offline::Offline};
use veil_mpc::harness::{SimConfig, simulate_with};
use veil_nn::fixed::{ExactCnn, run_fixed};
use veil_nn::float::{Mat, run_float_on};
use veil_nn::image::ImageModel;
use veil_nn::onnx::load_onnx;
use veil_nn::secure::{
    Contribution, Roles, SecureBackend, run_secure, run_secure_cnn, run_secure_cnn_in_groups,
};
use veil_nn::weights::{FloatTensor, read_safetensors};
use veil_nn::{Input, NnError};

fn model_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/digits-cnn")
}

fn load() -> (ImageModel, FloatTensor, Vec<usize>, FloatTensor) {
    let model = load_onnx(&model_dir().join("model.onnx")).unwrap();
    let mut test = read_safetensors(&model_dir().join("test.safetensors")).unwrap();
    let labels = test.remove("labels").unwrap().data.iter().map(|&v| v as usize).collect();
    (model, test.remove("images").unwrap(), labels, test.remove("logits").unwrap())
}

fn argmax(row: &[f64]) -> usize {
    (0..row.len()).fold(0, |b, j| if row[j] > row[b] { j } else { b })
}

fn first_images(images: &FloatTensor, n: usize) -> FloatTensor {
    let per: usize = images.shape[1..].iter().product();
    let mut shape = images.shape.clone();
    shape[0] = n;
    FloatTensor::new(shape, images.data[..n * per].to_vec()).unwrap()
}

#[test]
fn imported_cnn_matches_the_training_scripts_logits() {
    let (model, images, labels, reference) = load();
    assert_eq!(model.input, [1, 8, 8]);
    let out = run_float_on(&model.graph, &model.weights, Input::Images(&images)).unwrap();
    assert_eq!((out.rows, out.cols), (labels.len(), 10));
    let err =
        out.data.iter().zip(&reference.data).map(|(a, b)| (a - f64::from(*b)).abs()).fold(0.0, f64::max);
    assert!(err < 1e-4, "logits off by {err}");
    let correct = (0..out.rows).filter(|&i| argmax(&out.data[i * 10..(i + 1) * 10]) == labels[i]).count();
    assert!(correct as f64 / labels.len() as f64 > 0.95, "float accuracy {correct}/{}", labels.len());
}

/// Runs the model privately among 3 servers, a data owner (3) and a model owner (4), with
/// `family(party)` as each party's instance; returns every party's result.
fn run_parties<B: SecureBackend>(
    model: &ImageModel,
    images: &FloatTensor,
    family: impl Fn(usize) -> B + Sync,
    run: impl Fn(&mut B, &mut veil_mpc::Ctx, Contribution<'_>) -> Result<veil_nn::secure::SecureRun, NnError>
    + Sync,
) -> Vec<Result<veil_nn::secure::SecureRun, veil_mpc::MpcError>> {
    // The owners wait for the servers' whole run.
    let cfg = SimConfig { timeout: std::time::Duration::from_secs(600), ..SimConfig::new(7) };
    simulate_with(5, cfg, |ctx| {
        let start = std::time::Instant::now();
        let mut b = family(ctx.party());
        let mine = match ctx.party() {
            3 => Contribution::Data(Input::Images(images)),
            4 => Contribution::Model(&model.weights),
            _ => Contribution::Server,
        };
        let r = run(&mut b, ctx, mine).map_err(|e| veil_mpc::MpcError::Invalid(e.to_string()));
        eprintln!("party {} done in {:.1} s", ctx.party(), start.elapsed().as_secs_f64());
        r
    })
}

/// [`run_parties`] with the same instance everywhere; asserts that every party succeeded and
/// returns the data owner's output.
fn private<B: SecureBackend>(
    model: &ImageModel,
    images: &FloatTensor,
    family: impl Fn() -> B + Sync,
    run: impl Fn(&mut B, &mut veil_mpc::Ctx, Contribution<'_>) -> Result<veil_nn::secure::SecureRun, NnError>
    + Sync,
) -> Mat {
    let results = run_parties(model, images, |_| family(), run);
    let errors: Vec<String> = results
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.as_ref().err().map(|e| format!("party {i}: {e}")))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let mut runs: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    runs.swap_remove(3).output.unwrap()
}

fn assert_close(secure: &Mat, float: &Mat, tolerance: f64) {
    assert_eq!((secure.rows, secure.cols), (float.rows, float.cols));
    let err = secure.data.iter().zip(&float.data).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(err < tolerance, "private logits off by {err}");
    for i in 0..float.rows {
        let row = |m: &Mat| m.data[i * m.cols..(i + 1) * m.cols].to_vec();
        assert_eq!(argmax(&row(secure)), argmax(&row(float)), "image {i}");
    }
}

const ROLES: Roles = Roles { data_owner: 3, model_owner: 4 };

#[test]
fn private_cnn_under_aegis_matches_the_float_and_fixed_point_references() {
    let (model, images, ..) = load();
    let batch = first_images(&images, 6);
    let float = run_float_on(&model.graph, &model.weights, Input::Images(&batch)).unwrap();
    let out = private(
        &model,
        &batch,
        || Aegis::new(64).unwrap(),
        |b, ctx, mine| run_secure_cnn(b, ctx, &model.graph, 6, ROLES, mine),
    );
    assert_close(&out, &float, 0.02);
    // The fixed-point executor computes what the protocol computes, up to aegis's truncation
    // (one unit of 2^-16 more, now and then, carried through the later layers).
    let fixed = run_fixed(&model.graph, &model.weights, Input::Images(&batch), &ExactCnn(16)).unwrap();
    assert!(fixed.overflows.is_empty(), "{:?}", fixed.overflows);
    let ulps =
        out.data.iter().zip(&fixed.output.data).map(|(a, b)| ((a - b) * 65536.0).abs()).fold(0.0, f64::max);
    eprintln!("secure vs fixed point: {ulps} units of 2^-16");
    assert!(ulps <= 32.0, "secure vs fixed point: {ulps} units of 2^-16");
}

#[test]
fn aegis_checks_a_group_of_images_at_a_time_and_reveals_only_after_the_last() {
    let (model, images, ..) = load();
    let batch = first_images(&images, 5);
    let float = run_float_on(&model.graph, &model.weights, Input::Images(&batch)).unwrap();
    // Groups of 2, 2 and 1 images, each verified before the next starts.
    let out = private(
        &model,
        &batch,
        || Aegis::new(64).unwrap(),
        |b, ctx, mine| run_secure_cnn_in_groups(b, ctx, &model.graph, 5, ROLES, mine, 2),
    );
    assert_close(&out, &float, 0.02);
    // Sign extractions per group: from a run on one image.
    let per_group = std::sync::atomic::AtomicUsize::new(0);
    let one = first_images(&images, 1);
    private(
        &model,
        &one,
        || Aegis::new(64).unwrap(),
        |b, ctx, mine| {
            let r = run_secure_cnn(b, ctx, &model.graph, 1, ROLES, mine);
            if ctx.party() == 1 {
                per_group.store(b.signs_run(), std::sync::atomic::Ordering::Relaxed);
            }
            r
        },
    );
    let per_group = per_group.into_inner();
    assert!(per_group > 0);
    // P1 flips one comparison bit in the first sign extraction of the last of 5 groups of one
    // image: that group's check aborts at every party, and the data owner gets nothing (the
    // earlier groups passed, but their outputs wait for the last check).
    let tampered = |party: usize| {
        let mut b = Aegis::new(64).unwrap();
        if party == 1 {
            b.tamper_sign_after(4 * per_group, veil_aegis::sign::SignTamper::FlipDelta { element: 0 });
        }
        b
    };
    let results = run_parties(&model, &batch, tampered, |b, ctx, mine| {
        run_secure_cnn_in_groups(b, ctx, &model.graph, 5, ROLES, mine, 1)
    });
    assert!(results[3].is_err(), "the data owner received an output: {:?}", results[3]);
    for (party, r) in results.iter().enumerate().take(3) {
        let e = r.as_ref().expect_err("a server went on").to_string();
        assert!(e.contains("abort: check 'aegis"), "party {party}: {e}");
    }
    // A group of 0 images is refused.
    let r = simulate_with(5, SimConfig::new(9), |ctx| {
        let mut b = Aegis::new(64)?;
        run_secure_cnn_in_groups(&mut b, ctx, &model.graph, 5, ROLES, Contribution::Server, 0)
            .map_err(|e| veil_mpc::MpcError::Invalid(e.to_string()))
    });
    assert!(r.iter().all(|r| r.as_ref().is_err_and(|e| e.to_string().contains("0 images"))), "{r:?}");
}

#[test]
fn the_fixed_point_executor_names_the_layer_that_overflows() {
    let (model, images, ..) = load();
    let batch = first_images(&images, 2);
    let fixed = run_fixed(&model.graph, &model.weights, Input::Images(&batch), &ExactCnn(16)).unwrap();
    let float = run_float_on(&model.graph, &model.weights, Input::Images(&batch)).unwrap();
    let err = fixed.output.data.iter().zip(&float.data).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(err < 0.01, "fixed point vs float: {err}");
    // Images scaled by 2^38 still fit (2^54 in the ring), but their products with the first
    // kernel pass 2^62.
    let loud = FloatTensor::new(batch.shape.clone(), batch.data.iter().map(|v| v * 2f32.powi(38)).collect())
        .unwrap();
    let fixed = run_fixed(&model.graph, &model.weights, Input::Images(&loud), &ExactCnn(16)).unwrap();
    let first = fixed.overflows.first().expect("an overflow is reported");
    assert_eq!((first.op.as_str(), first.scope.as_str()), ("conv2d", "conv1"), "{first:?}");
}

#[test]
fn private_cnn_under_mosformer_matches_the_float_reference() {
    let (model, images, ..) = load();
    let batch = first_images(&images, 2);
    let float = run_float_on(&model.graph, &model.weights, Input::Images(&batch)).unwrap();
    for security in [Security::SemiHonest, Security::Malicious] {
        let out = private(
            &model,
            &batch,
            || Mosformer::new(security, Offline::for_security(security)),
            |b, ctx, mine| run_secure(b, ctx, &model.graph, 2, ROLES, mine),
        );
        // ReLU's condition is read at 6 fractional bits (error below 2^-5 near 0).
        assert_close(&out, &float, 0.25);
    }
    // Without modulus conversion ReLU and MaxPool compare all 64 bits: only the truncations'
    // rounding is left.
    let out = private(
        &model,
        &batch,
        || {
            Mosformer::new(Security::Malicious, Offline::for_security(Security::Malicious))
                .with_rings(Rings::Z64)
        },
        |b, ctx, mine| run_secure(b, ctx, &model.graph, 2, ROLES, mine),
    );
    assert_close(&out, &float, 0.01);
}

#[test]
fn wrong_inputs_are_refused_before_anything_is_shared() {
    let (model, images, ..) = load();
    let e = run_float_on(&model.graph, &model.weights, Input::Tokens(&[1, 2])).unwrap_err().to_string();
    assert!(e.contains("not token ids"), "{e}");
    let bad = FloatTensor::new(vec![1, 1, 4, 16], images.data[..64].to_vec()).unwrap();
    let e = run_float_on(&model.graph, &model.weights, Input::Images(&bad)).unwrap_err().to_string();
    assert!(e.contains("[batch ≥ 1, 1, 8, 8]"), "{e}");
}
