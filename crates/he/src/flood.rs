//! The flooding bound of the Z_p-OLE response (circuit privacy, the M&M paper §II-E and
//! App. C-A's `Enc~`), derived for the worst-case evaluator operand.
//!
//! The evaluator returns `ct' = Σ_{k<K} ct_k ⊠ a_k ⊞ Enc_pk(−u) ⊞ (F, 0)`, where the `ct_k`
//! are the key holder's fresh secret-key encryptions, `a_k` the evaluator's operands (centred,
//! `|a_k|∞ ≤ t/2`), and `F` uniform on `[−2^b, 2^b)^N`. Its noise is `F + c` with
//!
//! ```text
//! c = Σ_k v_k·a_k + v_pk,     v_k = e_k − δ_k  (|e_k| ≤ 20 centred binomial, δ_k ∈ [0, 1)),
//! |Σ_k (e_k·a_k)_j| ≤ H = 20·(t/2)·sqrt(2N·ln(2N/ε))    for every j, except with prob. ε
//!                                                         (Hoeffding: N independent terms)
//! |Σ_k (δ_k·a_k)_j| ≤ D = N·t/2                           (worst case)
//! |v_pk|∞ ≤ P = 20·(2N + 1) + 1                           (e·u + e0 + e1·s − δ, ternary u, s)
//! |c|∞ ≤ B_op = K·(H + D) + P.
//! ```
//!
//! **Privacy**: the key holder sees `c1` (the public-key encryption re-randomises it: RLWE)
//! and the noise `F + c`; the simulator gives it `F` alone. For any fixed `c`,
//! `SD(F + c, F) ≤ Σ_j |c_j| / 2^{b+1} ≤ N·B_op / 2^{b+1}`, so `b = ⌈σ + log2(N·B_op)⌉ − 1`
//! gives statistical distance `2^{−σ}` per ciphertext (plus the Hoeffding failure `ε`); this
//! crate takes `σ = 40` and `ε = 2^{−40}`.
//!
//! **Correctness**: decryption needs `|noise| + 1 < q/(2t)` (the `+1` the result's own
//! rounding). After switching down to level `l`, the noise is scaled by `q_l/q` and grows by
//! the rounding `|r0 + r1·s| ≤ (N+1)/2` per dropped prime; the response goes out at the
//! deepest level where that still decrypts, with the low bits of its coefficients dropped as far
//! as the rest of the room allows (`k0` from `c0`, `k1` from `c1`: the key holder's error
//! `2^{k0−1} + N·2^{k1−1}` stays below the room; rounding a public ciphertext costs no privacy).
//!
//! | preset | `log2 B_op` (K = 2) | flooding `b` | response primes | bits dropped `(k0, k1)` |
//! |---|---|---|---|---|
//! | n4096-p16 | ≈ 29.9 | 81 | 1 (36 bits) | (19, 7) |
//! | n8192-p32 | ≈ 46.5 | 99 | 2 (90 bits) | (56, 43) |
//! | n8192-p60 | ≈ 74.6 | 127 | 2 (100 bits) | (38, 25) |

use num_traits::ToPrimitive;
use veil_mpc::{MpcError, Result};

use crate::bfv::{Bfv, ERROR_BOUND};

/// Statistical security of the flooding, per response ciphertext (bits).
pub const STATISTICAL_SECURITY: f64 = 40.0;

/// How a response with `products` terms is flooded and switched.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloodPlan {
    /// Terms `ct_k ⊠ a_k` summed in the response.
    pub products: usize,
    /// `log2 B_op`: the noise bound of the response before flooding.
    pub noise_bits: f64,
    /// The flooding is uniform on `[−2^flood_bits, 2^flood_bits)`.
    pub flood_bits: u32,
    /// The statistical distance of one response from its simulation is `2^{−sigma}`.
    pub sigma: f64,
    /// The level the response is switched to before it is sent.
    pub response_level: usize,
    /// Low bits dropped from the answer's `c0` and `c1` coefficients (`k0`, `k1`; `None` where
    /// the answer's modulus is past 124 bits and it travels whole): the key holder's error
    /// `|e0 + e1·s| ≤ 2^{k0−1} + N·2^{k1−1}` fits in what the noise leaves of `q_l/(2t)`.
    pub dropped_bits: Option<(u32, u32)>,
}

/// The plan for responses of `products` terms at `bfv`'s preset; an error if `σ = 40` does not
/// fit under its modulus.
pub fn plan(bfv: &Bfv, products: usize) -> Result<FloodPlan> {
    plan_for_noise(bfv, products, operand_noise(bfv, products))
}

/// `B_op` of a response of `products` terms.
fn operand_noise(bfv: &Bfv, products: usize) -> f64 {
    let n = bfv.slots() as f64;
    let t = bfv.plaintext_modulus() as f64;
    let e = ERROR_BOUND as f64;
    let ln_fail = STATISTICAL_SECURITY * std::f64::consts::LN_2;
    let hoeffding = e * (t / 2.0) * (2.0 * n * ((2.0 * n).ln() + ln_fail)).sqrt();
    let rounding = n * t / 2.0;
    let public = e * (2.0 * n + 1.0) + 1.0;
    products.max(1) as f64 * (hoeffding + rounding) + public
}

/// The plan for responses that pack `stride` answers of `products` terms each
/// ([`crate::pack`]): the trace multiplies each answer's noise by at most `stride` (the packed
/// answers' noises sit at disjoint coefficients), and the `stride − 1` key switchings add at
/// most `(s/2)·log2(s)` times one switching's noise (a switching at step `h` passes through
/// `log2 h` later doublings, and step `h` has `s/(2h)` of them):
/// `B = s·B_op + (s/2)·log2(s)·B_ks`. An error if it does not fit under the modulus.
pub fn plan_packed(bfv: &Bfv, products: usize, stride: usize) -> Result<FloodPlan> {
    let s = stride.max(1) as f64;
    let switching = 2f64.powf(crate::pack::switching_noise_bits(bfv)?);
    let b_op = s * operand_noise(bfv, products) + s / 2.0 * s.log2() * switching;
    plan_for_noise(bfv, products, b_op)
}

fn plan_for_noise(bfv: &Bfv, products: usize, b_op: f64) -> Result<FloodPlan> {
    let n = bfv.slots() as f64;
    let t = bfv.plaintext_modulus() as f64;
    let noise_bits = b_op.log2();
    let flood_bits = (STATISTICAL_SECURITY + (n * b_op).log2()).ceil() as u32 - 1;
    let sigma = f64::from(flood_bits) + 1.0 - (n * b_op).log2();
    let q0 = bfv.modulus(0)?.to_f64().unwrap_or(f64::INFINITY);
    let fits = |level: usize| -> Result<bool> {
        // The noise scaled by q_l/q_0 plus the rounding of each dropped prime, below q_l/(2t).
        let ql = bfv.modulus(level)?.to_f64().unwrap_or(f64::INFINITY);
        let scaled = (b_op + 2f64.powi(flood_bits as i32)) * (ql / q0);
        let rounds = (n + 1.0) / 2.0 * level as f64;
        Ok(scaled + rounds + 1.0 < ql / (2.0 * t))
    };
    if !fits(0)? {
        return Err(MpcError::Invalid(format!(
            "{}: flooding a {products}-term response at {STATISTICAL_SECURITY} bits needs 2^{flood_bits}, past q/2t",
            bfv.preset().name()
        )));
    }
    let mut response_level = 0;
    while response_level < bfv.max_level() && fits(response_level + 1)? {
        response_level += 1;
    }
    // What the noise leaves below q_l/(2t), half for each dropped part.
    let ql = bfv.modulus(response_level)?.to_f64().unwrap_or(f64::INFINITY);
    let scaled =
        (b_op + 2f64.powi(flood_bits as i32)) * (ql / q0) + (n + 1.0) / 2.0 * response_level as f64 + 1.0;
    let room = ql / (2.0 * t) - scaled;
    let small = bfv.modulus(response_level)?.bits() <= 124 && bfv.primes(response_level)?.len() <= 2;
    let dropped_bits = small.then(|| {
        let k0 = room.max(1.0).log2().floor() as u32; // 2^{k0−1} ≤ room/2
        let k1 = (room / n).max(1.0).log2().floor() as u32; // N·2^{k1−1} ≤ room/2
        (k0, k1)
    });
    Ok(FloodPlan { products, noise_bits, flood_bits, sigma, response_level, dropped_bits })
}
