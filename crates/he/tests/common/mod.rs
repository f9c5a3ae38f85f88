//! What the `veil-he` tests share: the depth-4 CKKS circuit the precision test and the SEAL
//! differential test both run.

#![allow(dead_code, reason = "each test file uses what it needs")]

use rand_chacha::ChaCha20Rng;
use veil_he::ckks::Ckks;

/// `(((x·y)·z)·w)²` under fresh keys: two ciphertext products, a plaintext product (encoded at
/// the scale of the prime it is divided by), a square, each followed by a rescale; inputs in
/// [−1, 1]. Returns `log2` of the largest and of the RMS slot error against `f64`, and the
/// level it ends at.
pub fn depth_four_error(ckks: &Ckks, [x, y, z, w]: [&[f64]; 4], rng: &mut ChaCha20Rng) -> (f64, f64, usize) {
    let (sk, pk) = ckks.keygen(rng).unwrap();
    let rk = ckks.relin_key(&sk, rng).unwrap();
    let (delta, top) = (ckks.default_scale(), ckks.top_level());
    let mut enc = |v: &[f64]| ckks.encrypt(&pk, &ckks.encode(v, delta, top).unwrap(), rng).unwrap();
    let (cx, cy, cz) = (enc(x), enc(y), enc(z));
    let mut ct = ckks.rescale(&ckks.mul_relin(&cx, &cy, &rk).unwrap()).unwrap();
    let cz = ckks.drop_to_level(&cz, ct.level()).unwrap();
    ct = ckks.rescale(&ckks.mul_relin(&ct, &cz, &rk).unwrap()).unwrap();
    let pw = ckks.encode(w, ckks.ring().modulus(ct.level()) as f64, ct.level()).unwrap();
    ct = ckks.rescale(&ckks.mul_plain(&ct, &pw).unwrap()).unwrap();
    ct = ckks.rescale(&ckks.mul_relin(&ct, &ct, &rk).unwrap()).unwrap();
    let got = ckks.decrypt_values(&sk, &ct).unwrap();
    let errs: Vec<f64> =
        (0..x.len()).map(|i| (got[i].re - (x[i] * y[i] * z[i] * w[i]).powi(2)).abs()).collect();
    let rms = (errs.iter().map(|e| e * e).sum::<f64>() / errs.len() as f64).sqrt();
    (errs.iter().copied().fold(0.0, f64::max).log2(), rms.log2(), ct.level())
}
