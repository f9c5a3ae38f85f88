//! Packing answers of coefficient-encoded products: `s` answers whose useful coefficients sit
//! at one residue mod `s` become one ciphertext filled at every residue ("BumbleBee: Secure
//! Two-party Inference Framework for Large Transformers", §4, after the automorphism tree of
//! "Efficient Homomorphic Conversion Between (Ring) LWE Ciphertexts", Alg. 2).
//!
//! **The trace.** For `s = 2^L ≤ N` let `G_s = {g ≡ 1 mod 2N/s}` (the automorphisms
//! `σ_g: X ↦ X^g` fixing `X^s`). `Tr_s = Σ_{g∈G_s} σ_g` keeps the coefficients of `m` at the
//! multiples of `s`, times `s`, and sends the others to 0:
//!
//! ```text
//! Tr_s(X^j) = X^j · Σ_{k<s} X^{2N·j·k/s} = s·X^j if s | j, else 0   (X^{2Nj/s} ≠ 1 is a root of 1)
//! Tr_s = Π_{h = 1, 2, …, s/2} (1 + σ_{1+N/h})                        (the σ's commute)
//! ```
//!
//! **The tree.** `σ_{1+N/h}(X^h) = X^h·X^N = −X^h`, and for `h' < h`, `σ_{1+N/h'}(X^h) = X^h`
//! (`h/h'` even). So two partial results `A`, `B` merge in one automorphism,
//!
//! ```text
//! (A + X^h·B) + σ_{1+N/h}(A − X^h·B) = (1 + σ)(A) + X^h·(1 + σ)(B),
//! ```
//!
//! and later steps (smaller `h`) pass through `X^h`. Pairing `(A_r, A_{r+s/2})` at `h = s/2`,
//! then the halves at `h = s/4`, down to `h = 1`, gives, with `s − 1` automorphisms,
//!
//! ```text
//! pack(A_0, …, A_{s−1}) = Σ_r X^r · Tr_s(A_r) = s · Σ_r Σ_i A_r[s·i] · X^{s·i + r}.
//! ```
//!
//! The trace maps the whole ciphertext into the subring `Z[X^s]`, noise included, so the
//! packed noise at coefficient `s·i + r` is `Tr_s(v_r)[s·i]`: at most `s·‖v_r‖∞`, plus the key
//! switching's (below). The evaluator shifts each answer by `X^{−c}` first, so that the
//! coefficients it reads (`≡ c mod s`) sit at the multiples of `s`; the key holder reads
//! coefficient `p` of answer `r` of a group at `p − c + r` and multiplies by `s^{−1} mod t`.
//!
//! **Automorphisms on ciphertexts.** `σ(c0) + σ(c1)·σ(s) = Δ·σ(m) + σ(v)`; the key holder's
//! Galois key switches `σ(c1)` back to `s`: digits `d_i` = the centred residues of `σ(c1)` mod
//! each ciphertext prime `q_i` (so `Σ_i d_i·g_i ≡ σ(c1)` with `g_i` the CRT basis, `1` mod `q_i`
//! and `0` mod the others), keys `(k0_i, k1_i) = (−a_i·s + e_i + g_i·σ(s), a_i)` with `a_i`
//! from a 32-byte seed, and
//!
//! ```text
//! (σ(c0) + Σ_i d_i·k0_i) + (Σ_i d_i·a_i)·s = σ(c0) + σ(c1)·σ(s) + Σ_i d_i·e_i,
//! |Σ_i d_i·e_i|∞ ≤ L·N·(q_max/2)·20                                 (worst case).
//! ```
//!
//! **Security.** The keys are RLWE encryptions of `σ(s)` under `s` (circular security for
//! automorphisms of the secret, the usual assumption of rotation keys); a key holder sends
//! them once per session, after its first queries whose answers are packed. Packing is the evaluator's local computation before
//! the mask and the flooding, whose bound ([`crate::flood::plan_packed`]) covers the packed
//! noise; the packed plaintext holds exactly the coefficients the key holder was to read,
//! every other product of its input with the weights is gone from it.

use fhe_math::rq::traits::TryConvertFrom;
use fhe_math::rq::{Poly, Representation, SubstitutionExponent};
use ndarray::Array2;
use rand::{CryptoRng, Rng, RngCore};
use veil_mpc::{MpcError, PartyId, Result};

use crate::bfv::{Bfv, Ciphertext, SecretKey, Seed, math_error};
use crate::wire::{get_poly, poly_bytes, put_poly};

/// The largest number of answers packed into one: the keys cover the steps `h = 1 … s/2`.
pub const MAX_STRIDE: usize = 64;

/// One automorphism's switching key: per ciphertext prime, `k0_i` and the seed of `a_i`.
pub struct GaloisKey {
    sub: SubstitutionExponent,
    /// Per prime `i`, `(k0_i, a_i)` with `a_i`'s seed.
    pairs: Vec<Ciphertext>,
}

impl std::fmt::Debug for GaloisKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GaloisKey(X ↦ X^{})", self.sub.exponent)
    }
}

/// The keys of the steps `h = 1, 2, …, MAX_STRIDE/2` (automorphisms `X ↦ X^{1 + N/h}`).
#[derive(Debug)]
pub struct GaloisKeys {
    steps: Vec<GaloisKey>,
}

/// `log2 MAX_STRIDE`: the number of keys.
fn key_count() -> usize {
    MAX_STRIDE.trailing_zeros() as usize
}

/// The exponent of step `h`.
fn exponent(bfv: &Bfv, h: usize) -> usize {
    1 + bfv.slots() / h
}

impl GaloisKeys {
    /// The key holder's keys under `sk`.
    pub fn generate<R: RngCore + CryptoRng>(bfv: &Bfv, sk: &SecretKey, rng: &mut R) -> Result<Self> {
        let ctx = bfv.context(0)?;
        let primes = ctx.moduli().len();
        let steps = (0..key_count())
            .map(|l| {
                let sub = SubstitutionExponent::new(ctx, exponent(bfv, 1 << l))
                    .map_err(|e| math_error("Galois key", e))?;
                let rotated = sk.ntt[0].substitute(&sub).map_err(|e| math_error("Galois key", e))?;
                let mut key = GaloisKey { sub, pairs: Vec::new() };
                for i in 0..primes {
                    let seed: Seed = rng.random();
                    let a = Poly::random_from_seed(ctx, Representation::Ntt, seed);
                    let mut gadget = rotated.coefficients().to_owned();
                    for (j, mut row) in gadget.outer_iter_mut().enumerate() {
                        if j != i {
                            row.fill(0);
                        }
                    }
                    let gadget = Poly::try_convert_from(gadget, ctx, false, Representation::Ntt)
                        .map_err(|e| math_error("Galois key", e))?;
                    let mut k0 = bfv.error(0, rng)?;
                    k0 -= &(&a * &sk.ntt[0]);
                    k0 += &gadget;
                    key.pairs.push(Ciphertext { level: 0, c0: k0, c1: a, seed: Some(seed) });
                }
                Ok(key)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(GaloisKeys { steps })
    }

    /// Bytes of the keys on the wire.
    pub fn bytes(bfv: &Bfv) -> Result<usize> {
        Ok(key_count() * bfv.primes(0)?.len() * (32 + poly_bytes(bfv, 0)?))
    }

    /// The keys' bytes: per step, per prime, the seed of `a_i` and `k0_i`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for key in &self.steps {
            for pair in &key.pairs {
                out.extend_from_slice(&pair.seed.unwrap_or_default());
                put_poly(&mut out, &pair.c0);
            }
        }
        out
    }

    /// Keys from `from`'s bytes, every residue checked.
    pub fn decode(bfv: &Bfv, from: PartyId, bytes: &[u8]) -> Result<Self> {
        let expected = Self::bytes(bfv)?;
        if bytes.len() != expected {
            return Err(MpcError::Malformed {
                from,
                what: format!("expected Galois keys of {expected} bytes, got {}", bytes.len()),
            });
        }
        let ctx = bfv.context(0)?;
        let per = 32 + poly_bytes(bfv, 0)?;
        let mut parts = bytes.chunks(per);
        let steps = (0..key_count())
            .map(|l| {
                let sub = SubstitutionExponent::new(ctx, exponent(bfv, 1 << l))
                    .map_err(|e| math_error("Galois key", e))?;
                let mut key = GaloisKey { sub, pairs: Vec::new() };
                for _ in 0..ctx.moduli().len() {
                    let part = parts
                        .next()
                        .ok_or_else(|| MpcError::Malformed { from, what: "Galois keys cut short".into() })?;
                    let mut seed: Seed = [0; 32];
                    seed.copy_from_slice(&part[..32]);
                    let c0 = get_poly(bfv, from, 0, &part[32..], "Galois key")?;
                    let c1 = Poly::random_from_seed(ctx, Representation::Ntt, seed);
                    key.pairs.push(Ciphertext { level: 0, c0, c1, seed: Some(seed) });
                }
                Ok(key)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(GaloisKeys { steps })
    }

    fn step(&self, h: usize) -> Result<&GaloisKey> {
        self.steps
            .get(h.trailing_zeros() as usize)
            .filter(|_| h.is_power_of_two())
            .ok_or_else(|| MpcError::Invalid(format!("no Galois key for step {h}")))
    }
}

/// The largest power of two `s` from `limit` down to 2 that `aligned` accepts and whose
/// packed answers of `terms` terms the flooding covers ([`crate::flood::plan_packed`]).
pub(crate) fn packing_stride(
    bfv: &Bfv,
    terms: usize,
    limit: usize,
    aligned: impl Fn(usize) -> bool,
) -> Option<usize> {
    let mut stride = if limit.is_power_of_two() { limit } else { limit.next_power_of_two() / 2 };
    while stride >= 2 {
        if aligned(stride) && crate::flood::plan_packed(bfv, terms.max(1), stride).is_ok() {
            return Some(stride);
        }
        stride /= 2;
    }
    None
}

/// `log2` of the largest noise one key switching adds, `L·N·(q_max/2)·20`.
pub fn switching_noise_bits(bfv: &Bfv) -> Result<f64> {
    let primes = bfv.primes(0)?;
    let q_max = primes.iter().copied().max().unwrap_or(1) as f64;
    let e = crate::bfv::ERROR_BOUND as f64;
    Ok((primes.len() as f64 * bfv.slots() as f64 * q_max / 2.0 * e).log2())
}

impl Bfv {
    /// `σ_g(ct)` under `s` again, by `key` (top level only).
    fn automorphism(&self, ct: &Ciphertext, key: &GaloisKey) -> Result<Ciphertext> {
        if ct.level != 0 {
            return Err(MpcError::Invalid(format!("an automorphism at level {}", ct.level)));
        }
        let ctx = self.context(0)?;
        let sub = |p: &Poly| p.substitute(&key.sub).map_err(|e| math_error("automorphism", e));
        let c0 = sub(&ct.c0)?;
        let c1 = sub(&ct.c1)?;
        let residues = self.coefficient_rows(&c1);
        let primes = ctx.moduli();
        // Σ_i d_i·(k0_i, a_i), accumulated in 128 bits and reduced once.
        let mut sum = self.product_sum(0)?;
        for (i, row) in residues.outer_iter().enumerate() {
            let qi = primes[i];
            let mut digit = Array2::<u64>::zeros((primes.len(), self.slots()));
            for (j, (mut out, qj)) in digit.outer_iter_mut().zip(ctx.moduli_operators()).enumerate() {
                if j == i {
                    // d_i ≡ σ(c1) mod q_i: its NTT row is σ(c1)'s.
                    out.assign(&c1.coefficients().row(i));
                    continue;
                }
                let p = primes[j];
                // The centred residue, v or v − q_i, mod q_j: a subtraction when q_i/2 < q_j.
                for (o, &v) in out.iter_mut().zip(row) {
                    *o = match (v > qi / 2, qi / 2 < p) {
                        (true, true) => p - (qi - v),
                        (false, true) => v,
                        (true, false) => qj.neg(qj.reduce(qi - v)),
                        (false, false) => qj.reduce(v),
                    };
                }
                let limb =
                    out.as_slice_mut().ok_or_else(|| math_error("key switching", "rows not contiguous"))?;
                self.ring.ntt_forward(j, limb);
            }
            let digit = Poly::try_convert_from(digit, ctx, false, Representation::Ntt)
                .map_err(|e| math_error("key switching", e))?;
            sum.add(self, &key.pairs[i], &digit)?;
        }
        let start = Ciphertext { level: 0, c0, c1: Poly::zero(ctx, Representation::Ntt), seed: None };
        sum.finish(self, &start)
    }

    /// `X^power` (`power < 2N`, so `X^N = −1`) in NTT form at `level`.
    pub(crate) fn monomial(&self, power: usize, level: usize) -> Result<Poly> {
        let ctx = self.context(level)?;
        let n = self.slots();
        let (at, negative) = (power % n, (power / n) % 2 == 1);
        let mut rows = Array2::<u64>::zeros((ctx.moduli().len(), n));
        for (mut row, &q) in rows.outer_iter_mut().zip(ctx.moduli()) {
            row[at] = if negative { q - 1 } else { 1 };
        }
        self.ntt_poly(rows, ctx, "monomial")
    }

    /// `pack(A_0, …, A_{s−1}) = Σ_r X^r·Tr_s(A_r)` (module docs), `s = answers.len()` a power
    /// of two up to [`MAX_STRIDE`]; `None` stands for a zero ciphertext, and at least one is
    /// given. Top level only.
    pub fn pack(&self, mut answers: Vec<Option<Ciphertext>>, keys: &GaloisKeys) -> Result<Ciphertext> {
        let s = answers.len();
        if !s.is_power_of_two() || s > MAX_STRIDE {
            return Err(MpcError::Invalid(format!(
                "packing {s} answers (a power of two up to {MAX_STRIDE})"
            )));
        }
        let mut h = s / 2;
        while h >= 1 {
            let key = keys.step(h)?;
            let shift = self.monomial(h, 0)?;
            let high = answers.split_off(h);
            answers = answers
                .into_iter()
                .zip(high)
                .map(|(a, b)| {
                    let b = b.map(|b| self.mul_plain(&b, &shift));
                    Ok(match (a, b) {
                        (None, None) => None,
                        (a, b) => {
                            let (sum, difference) = match (&a, &b) {
                                (Some(a), Some(b)) => (self.add(a, b)?, self.subtract(a, b)?),
                                (Some(a), None) => (a.clone(), a.clone()),
                                (None, Some(b)) => (b.clone(), self.negate(b)),
                                (None, None) => unreachable!("matched above"),
                            };
                            Some(self.add(&sum, &self.automorphism(&difference, key)?)?)
                        }
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            h /= 2;
        }
        answers.pop().flatten().ok_or_else(|| MpcError::Invalid("packing no answer".into()))
    }

    fn subtract(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.add(a, &self.negate(b))
    }

    fn negate(&self, a: &Ciphertext) -> Ciphertext {
        Ciphertext { level: a.level, c0: -&a.c0, c1: -&a.c1, seed: None }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    use super::*;
    use crate::preset::BfvPreset;

    /// Packs `s` encryptions of random polynomials and checks the packed decryption against
    /// `s·Σ_r X^r·(m_r at the multiples of s)`, at every stride, with missing answers.
    #[test]
    fn packed_answers_hold_every_strided_coefficient_times_the_stride() {
        let bfv = Bfv::new(BfvPreset::N8192P60).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        let (sk, _) = bfv.keygen(&mut rng).unwrap();
        let keys = GaloisKeys::generate(&bfv, &sk, &mut rng).unwrap();
        let keys = GaloisKeys::decode(&bfv, 1, &keys.encode()).unwrap();
        let (t, n) = (bfv.plaintext_modulus(), bfv.slots());
        for s in [1usize, 2, 8, MAX_STRIDE] {
            let messages: Vec<Option<Vec<u64>>> = (0..s)
                .map(|r| (r % 5 != 3).then(|| (0..n).map(|_| rng.random_range(0..t)).collect()))
                .collect();
            let answers = messages
                .iter()
                .map(|m| {
                    m.as_ref()
                        .map(|m| bfv.encrypt_secret(&sk, &bfv.encode_coefficients(m).unwrap(), 0, &mut rng))
                        .transpose()
                })
                .collect::<Result<Vec<_>>>()
                .unwrap();
            let packed = bfv.pack(answers, &keys).unwrap();
            let got = bfv.decrypt_coefficients(&sk, &packed).unwrap();
            for (j, &v) in got.iter().enumerate() {
                let (i, r) = (j / s, j % s);
                let want =
                    messages[r].as_ref().map_or(0, |m| (m[i * s] as u128 * s as u128 % t as u128) as u64);
                assert_eq!(v, want, "stride {s}, coefficient {j}");
            }
        }
    }

    #[test]
    fn malformed_galois_keys_are_errors() {
        let bfv = Bfv::new(BfvPreset::N4096P16).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(8);
        let (sk, _) = bfv.keygen(&mut rng).unwrap();
        let bytes = GaloisKeys::generate(&bfv, &sk, &mut rng).unwrap().encode();
        assert_eq!(bytes.len(), GaloisKeys::bytes(&bfv).unwrap());
        assert!(GaloisKeys::decode(&bfv, 1, &bytes[1..]).is_err());
        let mut high = bytes.clone();
        high[32..40].fill(0xff);
        assert!(GaloisKeys::decode(&bfv, 1, &high).is_err());
    }
}
