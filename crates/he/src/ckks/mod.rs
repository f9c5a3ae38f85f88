//! RNS-CKKS ("Homomorphic Encryption for Arithmetic of Approximate Numbers"; its RNS variant
//! "A Full RNS Variant of Approximate Homomorphic Encryption"), the scheme of `blb`'s fused
//! linear blocks, on [`crate::rns`].
//!
//! A ciphertext at level `l` is a pair (or, after a product, a triple) of polynomials over the
//! data primes `q_0 … q_l` in NTT form with a scale `Δ`, decrypting to `m = c0 + c1·s (+ c2·s²)`
//! whose canonical embedding is `Δ·z` up to noise ([`encoding`]).
//!
//! - **Chain**: the preset's primes; the last is the *special* prime `P` of key switching and no
//!   ciphertext carries it. Fresh ciphertexts sit at the top level `L − 1` (all data primes).
//! - **Rescale** divides by the last data prime with rounding: level `l → l − 1`, scale
//!   `Δ → Δ/q_l`. **Level drop** forgets primes without dividing (scale unchanged).
//! - **Key switching** (hybrid, one digit per data prime, as SEAL does): the key for `s'`
//!   holds, for each data prime `j`, `(−a_j·s + e_j + P·s'·[j-th CRT unit], a_j)` over
//!   `q_0 … q_{L−1}, P`; a polynomial `c` is split into its residues `[c]_{q_j}` (centred),
//!   each lifted to every prime of its level and `P`, multiplied with its digit's key and
//!   summed, and the sum divided by `P` (`c·s' ≈ d0 + d1·s` with noise `≈ Σ_j q_j·e_j/P`).
//! - **Relinearisation** switches `c2` from `s²`; **rotation** by `k` applies `X ↦ X^{5^k}`
//!   and switches from `s(X^{5^k})`; **conjugation** uses `X ↦ X^{−1}`. **Hoisted** rotations
//!   split and lift `c1` once and permute the lifted digits in NTT form for every offset.
//!
//! **Security**: RLWE with uniform ternary secrets and centred-binomial errors (variance 10)
//! at each preset's `(N, log2 QP)` within the homomorphic-encryption standard's 128-bit bounds
//! (218, 438 and 881 bits at N = 8192, 16384, 32768). CKKS decryptions reveal the noise, so a
//! decrypted value that leaves the key holder must be protected by the protocol using it
//! (`blb` converts to shares before decrypting).

pub mod encoding;
pub mod linalg;
pub mod session;
mod switching;
pub mod wire;

use std::collections::BTreeMap;
use std::sync::Arc;

use num_complex::Complex64;
use rand::{CryptoRng, Rng, RngCore};
use veil_mpc::{MpcError, Result};
use zeroize::Zeroize;

use crate::bfv::ERROR_VARIANCE;
use crate::preset::ntt_primes;
use crate::rns::{Ring, RnsPoly};
use encoding::Encoder;

/// A CKKS parameter set: ring degree, prime chain (the last prime special) and default scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CkksPreset {
    /// N = 8192, {60, 40, 60}, Δ = 2^40: depth 1 (BLB's auxiliary context).
    N8192,
    /// N = 16384, {60, 40, 40, 40, 40, 60}, Δ = 2^40: depth 4.
    N16384,
    /// N = 32768, {60, 40 × 7, 60}, Δ = 2^40: depth 7 (BLB block 3, the softmax core).
    N32768,
    /// BLB block 1 (FFN-2 + LayerNorm part 1): N = 16384, {60 × 5}, Δ = 2^38.
    BlbBlock1,
    /// BLB block 2 (LayerNorm part 2 + Q/K/V + Q·Kᵀ): N = 32768, {60, 35, 60 × 6}, Δ = 2^44.
    BlbBlock2,
    /// BLB block 4 (softmax·V + W_O + LayerNorm part 1): N = 32768, {60 × 7}, Δ = 2^43.
    BlbBlock4,
    /// BLB block 5 (LayerNorm part 2 + FFN-1 + GeLU part): N = 32768, {60, 32, 60 × 6}, Δ = 2^46.
    BlbBlock5,
}

impl CkksPreset {
    /// Every preset.
    pub const ALL: [CkksPreset; 7] = [
        CkksPreset::N8192,
        CkksPreset::N16384,
        CkksPreset::N32768,
        CkksPreset::BlbBlock1,
        CkksPreset::BlbBlock2,
        CkksPreset::BlbBlock4,
        CkksPreset::BlbBlock5,
    ];

    /// The name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            CkksPreset::N8192 => "ckks-n8192",
            CkksPreset::N16384 => "ckks-n16384",
            CkksPreset::N32768 => "ckks-n32768",
            CkksPreset::BlbBlock1 => "blb-block1",
            CkksPreset::BlbBlock2 => "blb-block2",
            CkksPreset::BlbBlock4 => "blb-block4",
            CkksPreset::BlbBlock5 => "blb-block5",
        }
    }

    /// The preset of a name.
    pub fn from_name(name: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
            MpcError::Invalid(format!("no CKKS preset '{name}' (available: {})", names.join(", ")))
        })
    }

    /// Ring degree `N`.
    pub fn degree(self) -> usize {
        match self {
            CkksPreset::N8192 => 8192,
            CkksPreset::N16384 | CkksPreset::BlbBlock1 => 16384,
            _ => 32768,
        }
    }

    /// Bits of the primes, the special prime last.
    pub fn chain_bits(self) -> &'static [usize] {
        match self {
            CkksPreset::N8192 => &[60, 40, 60],
            CkksPreset::N16384 => &[60, 40, 40, 40, 40, 60],
            CkksPreset::N32768 => &[60, 40, 40, 40, 40, 40, 40, 40, 60],
            CkksPreset::BlbBlock1 => &[60, 60, 60, 60, 60],
            CkksPreset::BlbBlock2 => &[60, 35, 60, 60, 60, 60, 60, 60],
            CkksPreset::BlbBlock4 => &[60, 60, 60, 60, 60, 60, 60],
            CkksPreset::BlbBlock5 => &[60, 32, 60, 60, 60, 60, 60, 60],
        }
    }

    /// `log2 Δ`.
    pub fn scale_bits(self) -> u32 {
        match self {
            CkksPreset::BlbBlock1 => 38,
            CkksPreset::BlbBlock2 => 44,
            CkksPreset::BlbBlock4 => 43,
            CkksPreset::BlbBlock5 => 46,
            _ => 40,
        }
    }

    /// The standard's bound on `log2 QP` for 128-bit security at this degree.
    pub fn max_modulus_bits(self) -> usize {
        match self.degree() {
            8192 => 218,
            16384 => 438,
            _ => 881,
        }
    }
}

/// A CKKS plaintext: a polynomial over the data primes of a level, in NTT form, with its scale.
#[derive(Clone, Debug, PartialEq)]
pub struct Plaintext {
    /// The polynomial.
    pub poly: RnsPoly,
    /// Its scale `Δ`.
    pub scale: f64,
}

/// A CKKS ciphertext: 2 (or 3, before relinearisation) polynomials in NTT form and a scale.
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext {
    /// `c0, c1 (, c2)` over the data primes `q_0 … q_level`.
    pub parts: Vec<RnsPoly>,
    /// The scale `Δ`.
    pub scale: f64,
}

impl Ciphertext {
    /// The level (0: one prime).
    pub fn level(&self) -> usize {
        self.parts[0].len() - 1
    }
}

/// A secret key: ternary coefficients and `s` in NTT form over every prime.
pub struct SecretKey {
    coeffs: Vec<i64>,
    s: RnsPoly,
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.coeffs.zeroize();
        self.s.limbs.iter_mut().for_each(|l| l.zeroize());
    }
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(…)")
    }
}

/// A public key `(−a·s + e, a)` over every prime (the special one too), `a` from `seed`.
#[derive(Clone, Debug, PartialEq)]
pub struct PublicKey {
    /// Seed of `a`.
    pub seed: [u8; 32],
    /// `−a·s + e`.
    pub b: RnsPoly,
    /// `a`.
    pub a: RnsPoly,
}

/// A key-switching key from some `s'` to `s`: one `(b_j, a_j)` per data prime, over every prime,
/// `a_j` expanded from `seeds[j]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchingKey {
    /// `(b_j, a_j)`.
    pub digits: Vec<(RnsPoly, RnsPoly)>,
    /// The seed of each `a_j`.
    pub seeds: Vec<[u8; 32]>,
}

/// Galois keys by Galois element `g` (rotations `5^k mod 2N`, conjugation `2N − 1`).
#[derive(Clone, Debug, Default)]
pub struct GaloisKeys {
    /// The keys.
    pub keys: BTreeMap<usize, SwitchingKey>,
}

/// CKKS at one preset.
#[derive(Debug)]
pub struct Ckks {
    preset: CkksPreset,
    ring: Arc<Ring>,
    encoder: Encoder,
    /// Number of data primes (`L`); the special prime has index `L`.
    data: usize,
}

impl Ckks {
    /// The scheme at `preset`.
    pub fn new(preset: CkksPreset) -> Result<Self> {
        let primes = ntt_primes(preset.degree(), preset.chain_bits())?;
        // Key switching accumulates up to 16 products of 61-bit residues in 128 bits.
        if primes.len() > 17 || primes.iter().any(|&p| p >= 1 << 61) {
            return Err(MpcError::Invalid("chains are at most 16 data primes below 2^61".into()));
        }
        let ring = Ring::new(preset.degree(), &primes)?;
        Ok(Ckks { preset, ring, encoder: Encoder::new(preset.degree()), data: primes.len() - 1 })
    }

    /// The preset.
    pub fn preset(&self) -> CkksPreset {
        self.preset
    }

    /// The polynomial ring (raw access to primes and polynomials).
    pub fn ring(&self) -> &Arc<Ring> {
        &self.ring
    }

    /// Complex slots per ciphertext (`N/2`).
    pub fn slots(&self) -> usize {
        self.preset.degree() / 2
    }

    /// The top level (`L − 1`: every data prime).
    pub fn top_level(&self) -> usize {
        self.data - 1
    }

    /// The preset's default scale `2^scale_bits`.
    pub fn default_scale(&self) -> f64 {
        2f64.powi(self.preset.scale_bits() as i32)
    }

    /// `log2` of the product of every prime, special one included.
    pub fn modulus_bits(&self) -> usize {
        self.ring.modulus_of(&(0..=self.data).collect::<Vec<_>>()).bits() as usize
    }

    /// Number of data primes (`L`); the special prime is prime `L` of the ring.
    pub fn data_primes(&self) -> usize {
        self.data
    }

    fn basis(&self, level: usize) -> Vec<usize> {
        (0..=level).collect()
    }

    fn ext_basis(&self, level: usize) -> Vec<usize> {
        (0..=level).chain([self.data]).collect()
    }

    fn ternary<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Vec<i64> {
        (0..self.preset.degree()).map(|_| rng.random_range(-1i64..=1)).collect()
    }

    fn error<R: RngCore + CryptoRng>(&self, rng: &mut R, basis: &[usize]) -> Result<RnsPoly> {
        let e = fhe_util::sample_vec_cbd(self.preset.degree(), ERROR_VARIANCE, rng)
            .map_err(|e| MpcError::Invalid(format!("error sampling: {e}")))?;
        let mut p = self.ring.from_small(&e, basis);
        self.ring.to_ntt(&mut p);
        Ok(p)
    }

    /// `s` restricted to `basis` (a sub-list of the key's primes `0 … L`).
    fn secret_on(&self, sk: &SecretKey, basis: &[usize]) -> RnsPoly {
        RnsPoly {
            basis: basis.to_vec(),
            limbs: basis.iter().map(|&b| sk.s.limbs[b].clone()).collect(),
            ntt: true,
        }
    }

    /// The secret key's ternary coefficients as bytes ([`crate::keyfile`]).
    pub fn secret_key_bytes(&self, sk: &SecretKey) -> Vec<u8> {
        crate::keyfile::ternary_to_bytes(&sk.coeffs)
    }

    /// A secret key from [`Ckks::secret_key_bytes`].
    pub fn secret_key_from_bytes(&self, bytes: &[u8]) -> Result<SecretKey> {
        let coeffs = crate::keyfile::ternary_from_bytes(bytes, self.preset.degree())?;
        let mut s = self.ring.from_small(&coeffs, &(0..=self.data).collect::<Vec<_>>());
        self.ring.to_ntt(&mut s);
        Ok(SecretKey { coeffs, s })
    }

    /// A fresh ternary secret key and its public key.
    pub fn keygen<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Result<(SecretKey, PublicKey)> {
        let coeffs = self.ternary(rng);
        let mut s = self.ring.from_small(&coeffs, &(0..=self.data).collect::<Vec<_>>());
        self.ring.to_ntt(&mut s);
        let sk = SecretKey { coeffs, s };
        let all: Vec<usize> = (0..=self.data).collect();
        let seed: [u8; 32] = rng.random();
        let a = self.ring.uniform_from_seed(seed, &all);
        let mut b = self.error(rng, &all)?;
        self.ring.sub_assign(&mut b, &self.ring.mul(&a, &sk.s)?)?;
        Ok((sk, PublicKey { seed, b, a }))
    }

    /// The switching key from `target` (NTT form over every prime) to `sk`.
    fn switching_key<R: RngCore + CryptoRng>(
        &self,
        sk: &SecretKey,
        target: &RnsPoly,
        rng: &mut R,
    ) -> Result<SwitchingKey> {
        let all: Vec<usize> = (0..=self.data).collect();
        let p = self.ring.modulus(self.data);
        let seeds: Vec<[u8; 32]> = (0..self.data).map(|_| rng.random()).collect();
        let digits = (0..self.data)
            .map(|j| {
                let a = self.ring.uniform_from_seed(seeds[j], &all);
                let mut b = self.error(rng, &all)?;
                self.ring.sub_assign(&mut b, &self.ring.mul(&a, &sk.s)?)?;
                // + P·s' on limb j only (the j-th CRT unit is 1 mod q_j, 0 mod the others and P).
                let q = &self.ring.primes()[j].q;
                let mut term = target.limbs[j].clone();
                q.scalar_mul_vec(&mut term, q.reduce(p));
                q.add_vec(&mut b.limbs[j], &term);
                Ok((b, a))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(SwitchingKey { digits, seeds })
    }

    /// The relinearisation key (from `s²`).
    pub fn relin_key<R: RngCore + CryptoRng>(&self, sk: &SecretKey, rng: &mut R) -> Result<SwitchingKey> {
        let s2 = self.ring.mul(&sk.s, &sk.s)?;
        self.switching_key(sk, &s2, rng)
    }

    /// The Galois element of a left rotation by `k` slots (negative: right).
    pub fn rotation_element(&self, k: i64) -> usize {
        let two_n = 2 * self.preset.degree();
        let steps = k.rem_euclid(self.slots() as i64) as u64;
        let mut g = 1u64;
        for _ in 0..steps {
            g = g * 5 % two_n as u64;
        }
        g as usize
    }

    /// The Galois element of complex conjugation.
    pub fn conjugation_element(&self) -> usize {
        2 * self.preset.degree() - 1
    }

    /// Galois keys for left rotations by each of `steps` (negative: right) and, if asked,
    /// conjugation.
    pub fn galois_keys<R: RngCore + CryptoRng>(
        &self,
        sk: &SecretKey,
        steps: &[i64],
        conjugation: bool,
        rng: &mut R,
    ) -> Result<GaloisKeys> {
        let mut elements: Vec<usize> = steps.iter().map(|&k| self.rotation_element(k)).collect();
        if conjugation {
            elements.push(self.conjugation_element());
        }
        let mut keys = BTreeMap::new();
        for g in elements {
            if g == 1 || keys.contains_key(&g) {
                continue;
            }
            let target = self.ring.automorphism(&sk.s, g)?;
            keys.insert(g, self.switching_key(sk, &target, rng)?);
        }
        Ok(GaloisKeys { keys })
    }

    /// Encodes real values into the slots at `scale` and `level`.
    pub fn encode(&self, values: &[f64], scale: f64, level: usize) -> Result<Plaintext> {
        let z: Vec<Complex64> = values.iter().map(|&v| Complex64::new(v, 0.0)).collect();
        self.encode_complex(&z, scale, level)
    }

    /// Encodes complex values into the slots at `scale` and `level`.
    pub fn encode_complex(&self, values: &[Complex64], scale: f64, level: usize) -> Result<Plaintext> {
        if values.len() > self.slots() {
            return Err(MpcError::Invalid(format!("{} values for {} slots", values.len(), self.slots())));
        }
        if level > self.top_level() {
            return Err(MpcError::Invalid(format!("no level {level} (top {})", self.top_level())));
        }
        if let Some(v) = values.iter().find(|v| !v.re.is_finite() || !v.im.is_finite()) {
            return Err(MpcError::Invalid(format!("{v} is not a finite value")));
        }
        let reals = self.encoder.embed_inverse(values, scale);
        let limit = 2f64.powi(120);
        if let Some(c) = reals.iter().find(|c| c.abs() >= limit) {
            return Err(MpcError::Invalid(format!(
                "a coefficient of {c:e} is past 2^120: lower the scale or the values"
            )));
        }
        let mut poly = if reals.iter().all(|c| c.abs() < 2f64.powi(62)) {
            let coeffs: Vec<i64> = reals.iter().map(|&c| c.round() as i64).collect();
            self.ring.from_small(&coeffs, &self.basis(level))
        } else {
            let coeffs: Vec<i128> = reals.iter().map(|&c| c.round() as i128).collect();
            self.ring.from_signed(&coeffs, &self.basis(level))
        };
        self.ring.to_ntt(&mut poly);
        Ok(Plaintext { poly, scale })
    }

    /// The slots of a plaintext.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<Complex64>> {
        let mut m = pt.poly.clone();
        self.ring.to_coeff(&mut m);
        let reals = self.ring.centred_reals(&m)?;
        Ok(self.encoder.embed(&reals, pt.scale))
    }

    /// Encrypts under the secret key (`c1` uniform from a fresh seed).
    pub fn encrypt_secret<R: RngCore + CryptoRng>(
        &self,
        sk: &SecretKey,
        pt: &Plaintext,
        rng: &mut R,
    ) -> Result<Ciphertext> {
        let basis = pt.poly.basis.clone();
        let seed: [u8; 32] = rng.random();
        let c1 = self.ring.uniform_from_seed(seed, &basis);
        let mut c0 = self.error(rng, &basis)?;
        self.ring.sub_assign(&mut c0, &self.ring.mul(&c1, &self.secret_on(sk, &basis))?)?;
        self.ring.add_assign(&mut c0, &pt.poly)?;
        Ok(Ciphertext { parts: vec![c0, c1], scale: pt.scale })
    }

    /// Encrypts under a public key: `(b·u + e0, a·u + e1)` over the plaintext's primes and
    /// `P`, divided by `P` (which leaves only the rounding of the division as noise, as SEAL
    /// does), then `+ m`; `u` ternary.
    pub fn encrypt<R: RngCore + CryptoRng>(
        &self,
        pk: &PublicKey,
        pt: &Plaintext,
        rng: &mut R,
    ) -> Result<Ciphertext> {
        let ext = self.ext_basis(pt.poly.len() - 1);
        let mut u = self.ring.from_small(&self.ternary(rng), &ext);
        self.ring.to_ntt(&mut u);
        let restrict = |k: &RnsPoly| RnsPoly {
            basis: ext.clone(),
            limbs: ext.iter().map(|&b| k.limbs[b].clone()).collect(),
            ntt: true,
        };
        let mut c0 = self.ring.mul(&restrict(&pk.b), &u)?;
        self.ring.add_assign(&mut c0, &self.error(rng, &ext)?)?;
        let mut c1 = self.ring.mul(&restrict(&pk.a), &u)?;
        self.ring.add_assign(&mut c1, &self.error(rng, &ext)?)?;
        self.ring.drop_last(&mut c0)?;
        self.ring.drop_last(&mut c1)?;
        self.ring.add_assign(&mut c0, &pt.poly)?;
        Ok(Ciphertext { parts: vec![c0, c1], scale: pt.scale })
    }

    /// Decrypts to a plaintext.
    pub fn decrypt(&self, sk: &SecretKey, ct: &Ciphertext) -> Result<Plaintext> {
        let basis = ct.parts[0].basis.clone();
        let s = self.secret_on(sk, &basis);
        let mut m = ct.parts[0].clone();
        let mut power = s.clone();
        for part in &ct.parts[1..] {
            self.ring.add_assign(&mut m, &self.ring.mul(part, &power)?)?;
            power = self.ring.mul(&power, &s)?;
        }
        Ok(Plaintext { poly: m, scale: ct.scale })
    }

    /// Decrypts and decodes.
    pub fn decrypt_values(&self, sk: &SecretKey, ct: &Ciphertext) -> Result<Vec<Complex64>> {
        self.decode(&self.decrypt(sk, ct)?)
    }

    fn same_level(a: &Ciphertext, b_level: usize) -> Result<()> {
        if a.level() != b_level {
            return Err(MpcError::Invalid(format!("operands at levels {} and {b_level}", a.level())));
        }
        Ok(())
    }

    fn same_scale(a: f64, b: f64) -> Result<()> {
        if (a / b - 1.0).abs() > 1e-9 {
            return Err(MpcError::Invalid(format!(
                "adding at scales 2^{:.3} and 2^{:.3}",
                a.log2(),
                b.log2()
            )));
        }
        Ok(())
    }

    /// `a + b`.
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        Self::same_level(a, b.level())?;
        Self::same_scale(a.scale, b.scale)?;
        let (long, short) = if a.parts.len() >= b.parts.len() { (a, b) } else { (b, a) };
        let mut out = long.clone();
        for (x, y) in out.parts.iter_mut().zip(&short.parts) {
            self.ring.add_assign(x, y)?;
        }
        Ok(out)
    }

    /// `a − b`.
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let mut nb = b.clone();
        nb.parts.iter_mut().for_each(|p| self.ring.neg_assign(p));
        self.add(a, &nb)
    }

    /// `ct + pt`.
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        Self::same_level(ct, pt.poly.len() - 1)?;
        Self::same_scale(ct.scale, pt.scale)?;
        let mut out = ct.clone();
        self.ring.add_assign(&mut out.parts[0], &pt.poly)?;
        Ok(out)
    }

    /// `ct ⊙ pt` (scales multiply).
    pub fn mul_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        Self::same_level(ct, pt.poly.len() - 1)?;
        let parts = ct.parts.iter().map(|p| self.ring.mul(p, &pt.poly)).collect::<Result<Vec<_>>>()?;
        Ok(Ciphertext { parts, scale: ct.scale * pt.scale })
    }

    /// `a ⊙ b` without relinearisation: three parts, scales multiply.
    pub fn mul(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        Self::same_level(a, b.level())?;
        if a.parts.len() != 2 || b.parts.len() != 2 {
            return Err(MpcError::Invalid("multiplying a ciphertext that is not relinearised".into()));
        }
        let r = &self.ring;
        let d0 = r.mul(&a.parts[0], &b.parts[0])?;
        let mut d1 = r.mul(&a.parts[0], &b.parts[1])?;
        r.add_assign(&mut d1, &r.mul(&a.parts[1], &b.parts[0])?)?;
        let d2 = r.mul(&a.parts[1], &b.parts[1])?;
        Ok(Ciphertext { parts: vec![d0, d1, d2], scale: a.scale * b.scale })
    }

    /// Divides by the last prime: level − 1, scale / q_level.
    pub fn rescale(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        let level = ct.level();
        if level == 0 {
            return Err(MpcError::Invalid("rescaling a ciphertext at level 0".into()));
        }
        let q = self.ring.modulus(level) as f64;
        let mut out = ct.clone();
        for p in &mut out.parts {
            self.ring.drop_last(p)?;
        }
        out.scale /= q;
        Ok(out)
    }

    /// Drops to `level` without dividing (scale unchanged); level 0 leaves one prime.
    pub fn drop_to_level(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        if level > ct.level() {
            return Err(MpcError::Invalid(format!(
                "cannot raise a ciphertext from level {} to {level}",
                ct.level()
            )));
        }
        let mut out = ct.clone();
        out.parts.iter_mut().for_each(|p| self.ring.truncate(p, level + 1));
        Ok(out)
    }

    /// Bytes of one polynomial over `count` data primes (residues at their bit widths).
    pub fn poly_bytes(&self, count: usize, special: bool) -> usize {
        let n = self.preset.degree();
        let mut basis: Vec<usize> = (0..count).collect();
        if special {
            basis.push(self.data);
        }
        basis.iter().map(|&b| (n * (64 - self.ring.modulus(b).leading_zeros()) as usize).div_ceil(8)).sum()
    }

    /// Bytes of a fresh ciphertext, a public key (seeded), and one switching key (seeded `a_j`).
    pub fn sizes(&self) -> (usize, usize, usize) {
        let ct = 2 * self.poly_bytes(self.data, false);
        let pk = self.poly_bytes(self.data, true) + 32;
        let ksk = self.data * (self.poly_bytes(self.data, true) + 32);
        (ct, pk, ksk)
    }
}
