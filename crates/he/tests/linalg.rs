//! CKKS linear algebra against plaintext arithmetic: matrix products in spatial-first packing
//! with BSGS diagonals (several input and output ciphertexts, ragged shapes), a matrix–vector
//! product, rotate-and-sum, and the plan's counts.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use veil_he::ckks::linalg::{
    MatmulPlan, encode_weights, matmul, matmul_streaming, pack, rotate_and_sum, rotate_and_sum_steps, unpack,
};
use veil_he::ckks::{Ckks, CkksPreset};

fn plain_matmul(x: &[f64], w: &[f64], rows: usize, inner: usize, cols: usize) -> Vec<f64> {
    let mut c = vec![0.0; rows * cols];
    for l in 0..rows {
        for d in 0..inner {
            for j in 0..cols {
                c[l * cols + j] += x[l * inner + d] * w[d * cols + j];
            }
        }
    }
    c
}

fn run(
    ckks: &Ckks,
    rng: &mut ChaCha20Rng,
    rows: usize,
    inner: usize,
    cols: usize,
    x: Vec<f64>,
) -> (Vec<f64>, Vec<f64>, MatmulPlan) {
    let plan = MatmulPlan::new(rows, inner, cols, ckks.slots()).unwrap();
    let (sk, pk) = ckks.keygen(rng).unwrap();
    let gk = ckks.galois_keys(&sk, &plan.rotations(), false, rng).unwrap();
    let w: Vec<f64> = (0..inner * cols).map(|_| rng.random_range(-0.1..0.1)).collect();
    let top = ckks.top_level();
    let cts: Vec<_> = pack(&plan, &x)
        .unwrap()
        .iter()
        .map(|v| ckks.encrypt(&pk, &ckks.encode(v, ckks.default_scale(), top).unwrap(), rng).unwrap())
        .collect();
    let weights = encode_weights(ckks, &plan, &w, ckks.ring().modulus(top) as f64, top).unwrap();
    let out = matmul(ckks, &cts, &weights, &gk).unwrap();
    assert_eq!(out.len(), plan.outputs());
    // Encoding the diagonals as they are used gives the same ciphertexts.
    let streamed = matmul_streaming(ckks, &plan, &cts, &w, ckks.ring().modulus(top) as f64, &gk).unwrap();
    assert!(streamed == out);
    let slots: Vec<Vec<f64>> = out
        .iter()
        .map(|ct| {
            let ct = ckks.rescale(ct).unwrap();
            ckks.decrypt_values(&sk, &ct).unwrap().iter().map(|z| z.re).collect()
        })
        .collect();
    (unpack(&plan, &slots).unwrap(), plain_matmul(&x, &w, rows, inner, cols), plan)
}

fn max_error(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn matrix_products_in_spatial_first_packing() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let ckks = Ckks::new(CkksPreset::N8192).unwrap();
    // 64 rows: 64 columns per ciphertext; 100 inputs and 70 outputs: two ciphertexts each,
    // the last ones ragged.
    let (rows, inner, cols) = (64, 100, 70);
    let x: Vec<f64> = (0..rows * inner).map(|_| rng.random_range(-1.0..1.0)).collect();
    let (got, want, plan) = run(&ckks, &mut rng, rows, inner, cols, x);
    assert_eq!((plan.blocks, plan.baby, plan.giant, plan.inputs(), plan.outputs()), (64, 8, 8, 2, 2));
    assert_eq!((plan.rotation_count(), plan.plaintext_products()), (2 * 7 + 2 * 7, 2 * 2 * 64));
    let err = max_error(&got, &want);
    assert!(err < 2f64.powi(-16), "error 2^{:.1}", err.log2());
}

#[test]
fn matrix_vector_product_repeats_the_vector() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let ckks = Ckks::new(CkksPreset::N8192).unwrap();
    // A 200-vector times a 200×150 matrix: 256 blocks of 16 rows, the vector in every row.
    let (inner, cols) = (200, 150);
    let rows = ckks.slots() / 256;
    let v: Vec<f64> = (0..inner).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x: Vec<f64> = (0..rows).flat_map(|_| v.clone()).collect();
    let (got, want, plan) = run(&ckks, &mut rng, rows, inner, cols, x);
    assert_eq!((plan.blocks, plan.baby, plan.giant), (256, 16, 16));
    let err = max_error(&got, &want);
    assert!(err < 2f64.powi(-16), "error 2^{:.1}", err.log2());
    assert!(max_error(&got[..cols], &got[cols..2 * cols]) < 2f64.powi(-16), "every row holds the product");
}

#[test]
fn rotate_and_sum_broadcasts_the_block_sum() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let ckks = Ckks::new(CkksPreset::N8192).unwrap();
    let rows = 128;
    let (sk, pk) = ckks.keygen(&mut rng).unwrap();
    let gk = ckks.galois_keys(&sk, &rotate_and_sum_steps(ckks.slots(), rows), false, &mut rng).unwrap();
    let v: Vec<f64> = (0..ckks.slots()).map(|_| rng.random_range(-1.0..1.0)).collect();
    let ct = ckks
        .encrypt(&pk, &ckks.encode(&v, ckks.default_scale(), ckks.top_level()).unwrap(), &mut rng)
        .unwrap();
    let got = ckks.decrypt_values(&sk, &rotate_and_sum(&ckks, &ct, rows, &gk).unwrap()).unwrap();
    let blocks = ckks.slots() / rows;
    for l in 0..rows {
        let want: f64 = (0..blocks).map(|d| v[d * rows + l]).sum();
        for d in 0..blocks {
            assert!((got[d * rows + l].re - want).abs() < 2f64.powi(-18), "row {l}, block {d}");
        }
    }
    assert!(rotate_and_sum(&ckks, &ct, 3, &gk).is_err());
    assert!(MatmulPlan::new(3, 10, 10, ckks.slots()).unwrap_err().to_string().contains("do not divide"));
}
