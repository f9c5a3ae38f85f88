//! BFV with SIMD slots over the RNS/NTT polynomial layer of `fhe-math`: `N` plaintext slots in
//! Z_t (`t ≡ 1 mod 2N` prime, the M&M paper's `p`), added and multiplied slot by slot.
//!
//! Ring `R_q = Z_q[X]/(X^N + 1)` with `q = q_0·…·q_{L−1}` held limb by limb (RNS), every
//! polynomial of a ciphertext in NTT form. A ciphertext `(c0, c1)` at level `l` (the first
//! `L − l` primes, product `q_l`) encrypts `m ∈ R_t` under the secret `s` when
//!
//! ```text
//! c0 + c1·s = ⌊q_l·m/t⌋ + v  (mod q_l),   |v|∞ < q_l/(2t)  ⇒  m = ⌊t·(c0 + c1·s)/q_l⌉ mod t.
//! ```
//!
//! - **Slots**: `m` is the inverse NTT mod `t` of the slot values, so `R_t ≅ Z_t^N` slotwise.
//! - **Scaling** `⌊q·m/t⌋ = Δ·m + ⌊m·(q mod t)/t⌋` (`Δ = ⌊q/t⌋`) is computed in RNS as
//!   `[m·(q mod t)]_t · (−t^{−1} mod q)`: with `m·(q mod t) = [m·(q mod t)]_t + t·j` and
//!   `Δ·t ≡ −(q mod t)`, the product is `Δ·m + j`. The rounding `δ = q·m/t − ⌊q·m/t⌋ ∈ [0, 1)`
//!   is all the encoding adds to the noise.
//! - **Keys**: a uniform ternary secret `s` (the standard's assumption); errors from the
//!   centred binomial of variance 10 (`|e| ≤ 20`); the public key `(p0, p1) = (−p1·s + e, p1)`
//!   with `p1` expanded from a 32-byte seed, as is the `c1` of a secret-key encryption, so
//!   both travel at half size.
//! - **Ciphertext × plaintext**: both parts times the operand's *centred* lift (`|a|∞ ≤ t/2`),
//!   which halves the noise the product adds against the usual `[0, t)` lift.
//! - **Modulus switching** divides by the dropped primes with rounding, in NTT form
//!   ([`crate::rns`]), multiplying the noise by `q_{l+1}/q_l` and adding `|r0 + r1·s| ≤ (N+1)/2`
//!   per step.
//! - **Flooding** adds a uniform integer in `[−2^b, 2^b)` to `c0` (see [`crate::flood`]).
//!
//! **Security**: RLWE at the presets' `(N, q)` within the homomorphic-encryption standard's
//! 128-bit bounds ([`crate::preset`]); semi-honest key holders (a party decrypts only what the
//! protocol sends it).

use std::sync::Arc;

use fhe_math::rns::ScalingFactor;
use fhe_math::rq::scaler::Scaler;
use fhe_math::rq::traits::TryConvertFrom;
use fhe_math::rq::{Context, Poly, Representation};
use fhe_math::zq::Modulus;
use ndarray::Array2;
use num_bigint::BigUint;
use rand::{CryptoRng, Rng, RngCore};
use veil_mpc::{MpcError, Result};
use zeroize::Zeroize;

use crate::preset::{BfvPreset, primes};
use crate::rns::Ring;

/// A 32-byte seed from which a uniform polynomial is expanded (ChaCha8 keyed by its SHA-256).
pub type Seed = [u8; 32];

/// Variance of the centred binomial errors (`|e| ≤ 2·variance`).
pub const ERROR_VARIANCE: usize = 10;
/// The largest error coefficient, `2·ERROR_VARIANCE`.
pub const ERROR_BOUND: u64 = 2 * ERROR_VARIANCE as u64;

pub(crate) fn math_error(what: &str, e: impl std::fmt::Display) -> MpcError {
    MpcError::Invalid(format!("{what}: {e}"))
}

/// BFV at one preset: its primes, the contexts of every level and the precomputed scalings.
#[derive(Debug)]
pub struct Bfv {
    preset: BfvPreset,
    t: u64,
    /// Arithmetic mod `t`.
    t_mod: Modulus,
    t_ctx: Arc<Context>,
    /// `levels[l]`: the context of the first `L − l` primes.
    levels: Vec<Arc<Context>>,
    /// Per level: `q_l mod t` and, per prime, `−t^{−1} mod q_i`.
    q_mod_t: Vec<u64>,
    neg_t_inv: Vec<Vec<u64>>,
    /// Per level: `x ↦ ⌊t·x/q_l⌉` into the plaintext context.
    to_plain: Vec<Scaler>,
    /// The ciphertext primes as an RNS ring, for switching in NTT form.
    pub(crate) ring: Arc<Ring>,
}

/// A secret key: ternary coefficients, and `s` in NTT form at every level.
pub struct SecretKey {
    coeffs: Vec<i64>,
    pub(crate) ntt: Vec<Poly>,
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.coeffs.zeroize();
        self.ntt.iter_mut().for_each(Zeroize::zeroize);
    }
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(…)")
    }
}

/// A public key `(p0, p1) = (−p1·s + e, p1)` at the top level, `p1` expanded from `seed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    pub(crate) seed: Seed,
    pub(crate) p0: Poly,
    pub(crate) p1: Poly,
}

/// A running sum of ciphertext × plaintext products at one level, accumulated in 128 bits per
/// coefficient and reduced once every few thousand terms (and at the end) instead of after
/// every product: the evaluator's side of a coefficient-encoded matrix product sums hundreds
/// of them per answer.
pub struct ProductSum {
    level: usize,
    c0: Vec<u128>,
    c1: Vec<u128>,
    pending: usize,
    limit: usize,
}

impl ProductSum {
    /// Adds `ct ⊙ op` (`op` from [`Bfv::operand`] at the sum's level).
    pub fn add(&mut self, bfv: &Bfv, ct: &Ciphertext, op: &Poly) -> Result<()> {
        if ct.level != self.level {
            return Err(MpcError::Invalid(format!(
                "a product at level {} in a sum at {}",
                ct.level, self.level
            )));
        }
        if self.pending == self.limit {
            self.reduce(bfv)?;
        }
        let (a0, a1, w) = (ct.c0.coefficients(), ct.c1.coefficients(), op.coefficients());
        let (Some(a0), Some(a1), Some(w)) = (a0.as_slice(), a1.as_slice(), w.as_slice()) else {
            return Err(MpcError::Invalid("polynomials not in one block".into()));
        };
        if w.len() != self.c0.len() || a0.len() != w.len() || a1.len() != w.len() {
            return Err(MpcError::Invalid("a product of another size than the sum".into()));
        }
        for ((s0, s1), ((&x0, &x1), &y)) in self.c0.iter_mut().zip(&mut self.c1).zip(a0.iter().zip(a1).zip(w))
        {
            *s0 += u128::from(x0) * u128::from(y);
            *s1 += u128::from(x1) * u128::from(y);
        }
        self.pending += 1;
        Ok(())
    }

    fn reduce(&mut self, bfv: &Bfv) -> Result<()> {
        let n = bfv.slots();
        for (i, q) in bfv.context(self.level)?.moduli_operators().iter().enumerate() {
            for v in self.c0[i * n..(i + 1) * n].iter_mut().chain(&mut self.c1[i * n..(i + 1) * n]) {
                *v = u128::from(q.reduce_u128(*v));
            }
        }
        self.pending = 0;
        Ok(())
    }

    /// `acc + Σ ct_i ⊙ op_i`.
    pub fn finish(mut self, bfv: &Bfv, acc: &Ciphertext) -> Result<Ciphertext> {
        self.reduce(bfv)?;
        let ctx = bfv.context(self.level)?;
        let poly = |sum: &[u128]| -> Result<Poly> {
            let rows = Array2::from_shape_vec(
                (ctx.moduli().len(), bfv.slots()),
                sum.iter().map(|&v| v as u64).collect(),
            )
            .map_err(|e| math_error("product sum", e))?;
            Poly::try_convert_from(rows, ctx, false, Representation::Ntt)
                .map_err(|e| math_error("product sum", e))
        };
        let sum = Ciphertext { level: self.level, c0: poly(&self.c0)?, c1: poly(&self.c1)?, seed: None };
        bfv.add(acc, &sum)
    }
}

/// A BFV ciphertext `(c0, c1)` in NTT form. `seed` is set while `c1` is still the expansion of
/// a seed (a fresh secret-key encryption), so that the wire carries the seed instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ciphertext {
    pub(crate) level: usize,
    pub(crate) c0: Poly,
    pub(crate) c1: Poly,
    pub(crate) seed: Option<Seed>,
}

impl Ciphertext {
    /// The level (0: every prime).
    pub fn level(&self) -> usize {
        self.level
    }

    /// Whether `c1` travels as its seed.
    pub fn is_seeded(&self) -> bool {
        self.seed.is_some()
    }

    /// `c0` (NTT form).
    pub fn c0(&self) -> &Poly {
        &self.c0
    }

    /// `c1` (NTT form).
    pub fn c1(&self) -> &Poly {
        &self.c1
    }
}

/// An answer with the low bits of its coefficients dropped ([`Bfv::compress`]):
/// `c0' = ⌊c0/2^{k0}⌉`, `c1' = ⌊c1/2^{k1}⌉`, coefficients as integers mod `q_l` (< 2^124).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compressed {
    /// The level.
    pub level: usize,
    /// `(k0, k1)`.
    pub dropped: (u32, u32),
    /// `c0'`.
    pub c0: Vec<u128>,
    /// `c1'`.
    pub c1: Vec<u128>,
}

/// A plaintext: the coefficients of `m ∈ R_t` in `[0, t)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plaintext {
    coeffs: Vec<u64>,
}

impl Bfv {
    /// The scheme at `preset`.
    pub fn new(preset: BfvPreset) -> Result<Self> {
        let n = preset.degree();
        let (t, q) = primes(preset)?;
        let top = Context::new_arc(&q, n).map_err(|e| math_error("ciphertext ring", e))?;
        let t_ctx = Context::new_arc(&[t], n).map_err(|e| math_error("plaintext ring", e))?;
        let tm = Modulus::new(t).map_err(|e| math_error("plaintext modulus", e))?;
        let mut levels = Vec::new();
        let (mut q_mod_t, mut neg_t_inv, mut to_plain) = (Vec::new(), Vec::new(), Vec::new());
        for l in 0..q.len() {
            let ctx = top.context_at_level(l).map_err(|e| math_error("level", e))?;
            let primes = &q[..q.len() - l];
            q_mod_t.push(primes.iter().fold(1u64, |acc, &qi| tm.mul(acc, tm.reduce(qi))));
            let inv = primes
                .iter()
                .map(|&qi| {
                    let m = Modulus::new(qi).map_err(|e| math_error("prime", e))?;
                    let inv =
                        m.inv(m.reduce(t)).ok_or_else(|| MpcError::Invalid(format!("t ≡ 0 mod {qi}")))?;
                    Ok(m.neg(inv))
                })
                .collect::<Result<Vec<u64>>>()?;
            neg_t_inv.push(inv);
            let factor = ScalingFactor::new(&BigUint::from(t), ctx.modulus());
            to_plain.push(Scaler::new(&ctx, &t_ctx, factor).map_err(|e| math_error("decryption scaler", e))?);
            levels.push(ctx);
        }
        let ring = Ring::new(n, &q)?;
        Ok(Bfv { preset, t, t_mod: tm, t_ctx, levels, q_mod_t, neg_t_inv, to_plain, ring })
    }

    /// The preset.
    pub fn preset(&self) -> BfvPreset {
        self.preset
    }

    /// `a^{−1} mod t`, if `a` is invertible.
    pub fn plaintext_inverse(&self, a: u64) -> Option<u64> {
        self.t_mod.inv(a % self.t)
    }

    /// The plaintext modulus `t` (the papers' `p`).
    pub fn plaintext_modulus(&self) -> u64 {
        self.t
    }

    /// Slots per ciphertext (`N`).
    pub fn slots(&self) -> usize {
        self.preset.degree()
    }

    /// Number of levels (`L`, the number of ciphertext primes).
    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    /// The deepest level whose `q_l` still holds `t` with 16 bits to spare for noise; switching
    /// and encrypting stop there.
    pub fn max_level(&self) -> usize {
        let t_bits = u64::from(64 - self.t.leading_zeros());
        (0..self.levels()).take_while(|&l| self.levels[l].modulus().bits() >= t_bits + 16).last().unwrap_or(0)
    }

    /// The context at `level`.
    pub fn context(&self, level: usize) -> Result<&Arc<Context>> {
        self.levels
            .get(level)
            .ok_or_else(|| MpcError::Invalid(format!("no level {level} (of {})", self.levels())))
    }

    /// The primes at `level`.
    pub fn primes(&self, level: usize) -> Result<&[u64]> {
        Ok(self.context(level)?.moduli())
    }

    /// `q_l` at `level`.
    pub fn modulus(&self, level: usize) -> Result<&BigUint> {
        Ok(self.context(level)?.modulus())
    }

    /// `log2 q`, the bits of the product of the ciphertext primes.
    pub fn modulus_bits(&self) -> usize {
        self.levels[0].modulus().bits() as usize
    }

    /// A fresh ternary secret key and its public key (`p1` from a seed drawn from `rng`).
    pub fn keygen<R: RngCore + CryptoRng>(&self, rng: &mut R) -> Result<(SecretKey, PublicKey)> {
        let coeffs: Vec<i64> = (0..self.slots()).map(|_| rng.random_range(-1i64..=1)).collect();
        let ntt =
            self.levels.iter().map(|ctx| self.lift_signed(&coeffs, ctx)).collect::<Result<Vec<Poly>>>()?;
        let sk = SecretKey { coeffs, ntt };
        let seed: Seed = rng.random();
        let p1 = Poly::random_from_seed(&self.levels[0], Representation::Ntt, seed);
        let mut p0 = self.error(0, rng)?;
        p0 -= &(&p1 * &sk.ntt[0]);
        Ok((sk, PublicKey { seed, p0, p1 }))
    }

    /// The secret key's ternary coefficients as bytes ([`crate::keyfile`]).
    pub fn secret_key_bytes(&self, sk: &SecretKey) -> Vec<u8> {
        crate::keyfile::ternary_to_bytes(&sk.coeffs)
    }

    /// A secret key from [`Bfv::secret_key_bytes`].
    pub fn secret_key_from_bytes(&self, bytes: &[u8]) -> Result<SecretKey> {
        let coeffs = crate::keyfile::ternary_from_bytes(bytes, self.slots())?;
        let ntt =
            self.levels.iter().map(|ctx| self.lift_signed(&coeffs, ctx)).collect::<Result<Vec<Poly>>>()?;
        Ok(SecretKey { coeffs, ntt })
    }

    /// Encodes up to `N` values of Z_t into the slots (the rest are 0).
    pub fn encode(&self, values: &[u64]) -> Result<Plaintext> {
        if values.len() > self.slots() {
            return Err(MpcError::Invalid(format!("{} values for {} slots", values.len(), self.slots())));
        }
        if let Some(v) = values.iter().find(|&&v| v >= self.t) {
            return Err(MpcError::Invalid(format!("{v} is not an element of Z_{}", self.t)));
        }
        let mut slots = values.to_vec();
        slots.resize(self.slots(), 0);
        let mut m = Poly::try_convert_from(slots, &self.t_ctx, false, Representation::Ntt)
            .map_err(|e| math_error("encoding", e))?;
        m.change_representation(Representation::PowerBasis);
        Ok(Plaintext { coeffs: m.coefficients().row(0).to_vec() })
    }

    /// Up to `N` values of Z_t as the coefficients of `m` (coefficient encoding, as Cheetah's
    /// linear layers use it; the rest are 0).
    pub fn encode_coefficients(&self, values: &[u64]) -> Result<Plaintext> {
        if values.len() > self.slots() {
            return Err(MpcError::Invalid(format!(
                "{} coefficients for degree {}",
                values.len(),
                self.slots()
            )));
        }
        if let Some(v) = values.iter().find(|&&v| v >= self.t) {
            return Err(MpcError::Invalid(format!("{v} is not an element of Z_{}", self.t)));
        }
        let mut coeffs = values.to_vec();
        coeffs.resize(self.slots(), 0);
        Ok(Plaintext { coeffs })
    }

    /// The coefficients of a plaintext.
    pub fn coefficients(&self, pt: &Plaintext) -> Vec<u64> {
        pt.coeffs.clone()
    }

    /// The `N` slots of a plaintext.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<u64>> {
        let mut m = Poly::try_convert_from(pt.coeffs.clone(), &self.t_ctx, false, Representation::PowerBasis)
            .map_err(|e| math_error("decoding", e))?;
        m.change_representation(Representation::Ntt);
        Ok(m.coefficients().row(0).to_vec())
    }

    /// `⌊q_l·m/t⌋` in NTT form at `level`.
    fn scaled(&self, pt: &Plaintext, level: usize) -> Result<Poly> {
        let ctx = self.context(level)?;
        let mut m = pt.coeffs.clone();
        self.t_mod.scalar_mul_vec(&mut m, self.q_mod_t[level]);
        let mut rows = Array2::<u64>::zeros((ctx.moduli().len(), self.slots()));
        for ((mut row, qi), &inv) in
            rows.outer_iter_mut().zip(ctx.moduli_operators()).zip(&self.neg_t_inv[level])
        {
            for (r, &mi) in row.iter_mut().zip(&m) {
                *r = qi.mul(qi.reduce(mi), inv);
            }
        }
        self.ntt_poly(rows, ctx, "scaling")
    }

    /// The centred lift of `pt` (coefficients in `(−t/2, t/2]`) in NTT form at `level`: the
    /// operand of a ciphertext × plaintext product.
    pub fn operand(&self, pt: &Plaintext, level: usize) -> Result<Poly> {
        let half = self.t / 2;
        let centred: Vec<i64> =
            pt.coeffs.iter().map(|&c| if c > half { c as i64 - self.t as i64 } else { c as i64 }).collect();
        self.lift_signed(&centred, self.context(level)?)
    }

    fn lift_signed(&self, coeffs: &[i64], ctx: &Arc<Context>) -> Result<Poly> {
        let mut rows = Array2::<u64>::zeros((ctx.moduli().len(), self.slots()));
        for (mut row, qi) in rows.outer_iter_mut().zip(ctx.moduli_operators()) {
            // Weight polynomials of coefficient-encoded products are mostly zeros.
            for (r, &c) in row.iter_mut().zip(coeffs).filter(|(_, c)| **c != 0) {
                let m = qi.reduce(c.unsigned_abs());
                *r = if c < 0 { qi.neg(m) } else { m };
            }
        }
        self.ntt_poly(rows, ctx, "lift")
    }

    pub(crate) fn error<R: RngCore + CryptoRng>(&self, level: usize, rng: &mut R) -> Result<Poly> {
        Poly::small(self.context(level)?, Representation::Ntt, ERROR_VARIANCE, rng)
            .map_err(|e| math_error("error", e))
    }

    /// Encrypts `pt` under the secret key at `level`: `c1` expanded from a fresh seed (so the
    /// ciphertext travels at half size), `c0 = −c1·s + e + ⌊q·m/t⌋`.
    pub fn encrypt_secret<R: RngCore + CryptoRng>(
        &self,
        sk: &SecretKey,
        pt: &Plaintext,
        level: usize,
        rng: &mut R,
    ) -> Result<Ciphertext> {
        if level > self.max_level() {
            return Err(MpcError::Invalid(format!(
                "level {level} is past the deepest usable level {}",
                self.max_level()
            )));
        }
        let ctx = self.context(level)?;
        let seed: Seed = rng.random();
        let c1 = Poly::random_from_seed(ctx, Representation::Ntt, seed);
        let mut c0 = self.error(level, rng)?;
        c0 -= &(&c1 * &sk.ntt[level]);
        c0 += &self.scaled(pt, level)?;
        Ok(Ciphertext { level, c0, c1, seed: Some(seed) })
    }

    /// Encrypts `pt` under a public key (top level): `u` ternary, `(p0·u + e0 + ⌊q·m/t⌋,
    /// p1·u + e1)`; then adds `2^flood_bits`-flooding to `c0` when asked.
    pub fn encrypt_public<R: RngCore + CryptoRng>(
        &self,
        pk: &PublicKey,
        pt: &Plaintext,
        flood_bits: Option<u32>,
        rng: &mut R,
    ) -> Result<Ciphertext> {
        let ctx = &self.levels[0];
        let u: Vec<i64> = (0..self.slots()).map(|_| rng.random_range(-1i64..=1)).collect();
        let u = self.lift_signed(&u, ctx)?;
        let mut c0 = &pk.p0 * &u;
        c0 += &self.error(0, rng)?;
        c0 += &self.scaled(pt, 0)?;
        let mut c1 = &pk.p1 * &u;
        c1 += &self.error(0, rng)?;
        let mut ct = Ciphertext { level: 0, c0, c1, seed: None };
        if let Some(bits) = flood_bits {
            self.flood(&mut ct, bits, rng)?;
        }
        Ok(ct)
    }

    /// Adds a uniform integer of `[−2^bits, 2^bits)` to every coefficient of `c0`
    /// (`bits ≤ 190`): below 2^127 one draw, above it `a·2^64 + b` with `b` uniform in
    /// `[0, 2^64)` and `a` in `[−2^{bits−64}, 2^{bits−64})`, which is uniform on the same range.
    pub fn flood<R: RngCore + CryptoRng>(&self, ct: &mut Ciphertext, bits: u32, rng: &mut R) -> Result<()> {
        if bits > 190 {
            return Err(MpcError::Invalid(format!("flooding of 2^{bits} is past 2^190")));
        }
        let ctx = self.context(ct.level)?;
        fn uniform<R: RngCore>(rng: &mut R, bits: u32) -> i128 {
            match bits {
                127 => rng.random::<u128>() as i128,
                _ => (rng.random::<u128>() & ((1u128 << (bits + 1)) - 1)) as i128 - (1i128 << bits),
            }
        }
        // (high, low): the noise is high·2^64 + low.
        let noise: Vec<(i128, i128)> = (0..self.slots())
            .map(|_| {
                if bits <= 127 {
                    (0, uniform(rng, bits))
                } else {
                    (uniform(rng, bits - 64), i128::from(rng.random::<u64>()))
                }
            })
            .collect();
        let mut rows = Array2::<u64>::zeros((ctx.moduli().len(), self.slots()));
        for (mut row, qi) in rows.outer_iter_mut().zip(ctx.moduli_operators()) {
            let shift = qi.reduce_u128(1u128 << 64);
            // A signed value below 2^127 in magnitude, mod q_i.
            let signed = |v: i128| {
                let m = qi.reduce_u128(v.unsigned_abs());
                if v < 0 { qi.neg(m) } else { m }
            };
            for (r, &(h, l)) in row.iter_mut().zip(&noise) {
                *r = qi.add(qi.mul(signed(h), shift), signed(l));
            }
        }
        let p = self.ntt_poly(rows, ctx, "flooding")?;
        ct.c0 += &p;
        ct.seed = None;
        Ok(())
    }

    /// The `N` slots of a ciphertext.
    pub fn decrypt(&self, sk: &SecretKey, ct: &Ciphertext) -> Result<Vec<u64>> {
        let x = self.to_power_basis(&self.phase(sk, ct)?)?;
        let mut m = x.scale(&self.to_plain[ct.level]).map_err(|e| math_error("decryption", e))?;
        m.change_representation(Representation::Ntt);
        Ok(m.coefficients().row(0).to_vec())
    }

    /// The `N` coefficients of `m` in a ciphertext.
    pub fn decrypt_coefficients(&self, sk: &SecretKey, ct: &Ciphertext) -> Result<Vec<u64>> {
        let x = self.to_power_basis(&self.phase(sk, ct)?)?;
        let m = x.scale(&self.to_plain[ct.level]).map_err(|e| math_error("decryption", e))?;
        Ok(m.coefficients().row(0).to_vec())
    }

    /// A polynomial over the first primes of the chain (row `i` mod `q_i`, as `ctx`) from its
    /// coefficients, by the RNS layer's NTTs (`tfhe-ntt` 0.7, the same values as `fhe-math`'s
    /// own, which run on 0.6's slower code; see `rns.rs`).
    pub(crate) fn ntt_poly(&self, mut rows: Array2<u64>, ctx: &Arc<Context>, what: &str) -> Result<Poly> {
        for (i, mut row) in rows.outer_iter_mut().enumerate() {
            let limb = row.as_slice_mut().ok_or_else(|| math_error(what, "rows not contiguous"))?;
            self.ring.ntt_forward(i, limb);
        }
        Poly::try_convert_from(rows, ctx, false, Representation::Ntt).map_err(|e| math_error(what, e))
    }

    /// The coefficients of a polynomial in NTT form (one row per prime), by the RNS layer's
    /// inverse NTTs.
    pub(crate) fn coefficient_rows(&self, p: &Poly) -> Array2<u64> {
        let mut rows = p.coefficients().to_owned();
        for (i, mut row) in rows.outer_iter_mut().enumerate() {
            if let Some(limb) = row.as_slice_mut() {
                self.ring.ntt_backward(i, limb);
            }
        }
        rows
    }

    /// `p` (NTT form) as coefficients, in `fhe-math`'s representation.
    fn to_power_basis(&self, p: &Poly) -> Result<Poly> {
        Poly::try_convert_from(self.coefficient_rows(p), p.ctx(), false, Representation::PowerBasis)
            .map_err(|e| math_error("inverse NTT", e))
    }

    /// `c0 + c1·s` in NTT form.
    fn phase(&self, sk: &SecretKey, ct: &Ciphertext) -> Result<Poly> {
        let s = sk.ntt.get(ct.level).ok_or_else(|| MpcError::Invalid(format!("no level {}", ct.level)))?;
        let mut x = &ct.c1 * s;
        x += &ct.c0;
        Ok(x)
    }

    /// The noise `v = c0 + c1·s − ⌊q_l·m/t⌋` of a ciphertext of the slots `values`, centred,
    /// coefficient by coefficient (for tests and measurements; errors past `2^127`).
    pub fn noise(&self, sk: &SecretKey, ct: &Ciphertext, values: &[u64]) -> Result<Vec<i128>> {
        let mut x = self.phase(sk, ct)?;
        x -= &self.scaled(&self.encode(values)?, ct.level)?;
        x.change_representation(Representation::PowerBasis);
        let q = self.modulus(ct.level)?;
        let half = q >> 1u32;
        Vec::<BigUint>::from(&x)
            .into_iter()
            .map(|c| {
                let (mag, neg) = if c > half { (q - &c, true) } else { (c, false) };
                let v = i128::try_from(&mag).map_err(|_| MpcError::Invalid("noise past 2^127".into()))?;
                Ok(if neg { -v } else { v })
            })
            .collect()
    }

    /// `ct ⊙ pt` slot by slot, `operand` from [`Bfv::operand`] at the ciphertext's level.
    pub fn mul_plain(&self, ct: &Ciphertext, operand: &Poly) -> Ciphertext {
        Ciphertext { level: ct.level, c0: &ct.c0 * operand, c1: &ct.c1 * operand, seed: None }
    }

    /// An empty sum `Σ ct_i ⊙ op_i` at `level`, for [`ProductSum::add`].
    pub fn product_sum(&self, level: usize) -> Result<ProductSum> {
        let primes = self.primes(level)?;
        let bits = primes.iter().map(|&q| u64::BITS - q.leading_zeros()).max().unwrap_or(64);
        let len = primes.len() * self.slots();
        Ok(ProductSum {
            level,
            c0: vec![0; len],
            c1: vec![0; len],
            pending: 0,
            // Each product is below 2^{2·bits}; 2^{127 − 2·bits} of them fit in 127 bits.
            limit: 1usize << 127u32.saturating_sub(2 * bits).min(30),
        })
    }

    /// The ciphertext `(0, 0)` at `level` (a sum's start).
    pub fn zero(&self, level: usize) -> Result<Ciphertext> {
        let ctx = self.context(level)?;
        let z = Poly::zero(ctx, Representation::Ntt);
        Ok(Ciphertext { level, c0: z.clone(), c1: z, seed: None })
    }

    /// `a + b` slot by slot (same level).
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        if a.level != b.level {
            return Err(MpcError::Invalid(format!(
                "adding ciphertexts of levels {} and {}",
                a.level, b.level
            )));
        }
        Ok(Ciphertext { level: a.level, c0: &a.c0 + &b.c0, c1: &a.c1 + &b.c1, seed: None })
    }

    /// `ct + pt` slot by slot.
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        let mut out = ct.clone();
        out.c0 += &self.scaled(pt, ct.level)?;
        out.seed = None;
        Ok(out)
    }

    /// The largest value a coefficient of `⌊c/2^k⌉` takes at `level`: `⌈q_l/2^k⌉`.
    pub fn compressed_max(&self, level: usize, k: u32) -> Result<u128> {
        let q = self.small_modulus(level)?;
        Ok(q.div_ceil(1u128 << k))
    }

    /// `q_l` as an integer, for levels whose modulus is below 2^124 (at most two primes).
    fn small_modulus(&self, level: usize) -> Result<u128> {
        let primes = self.primes(level)?;
        let q = primes.iter().try_fold(1u128, |acc, &p| acc.checked_mul(u128::from(p)));
        q.filter(|&q| q < 1 << 124 && primes.len() <= 2).ok_or_else(|| {
            MpcError::Invalid(format!("level {level}: the modulus is past 2^124 or has more than two primes"))
        })
    }

    /// Drops the low `k0` bits of `c0`'s coefficients and `k1` of `c1`'s (rounding): a public
    /// post-processing of an answer that the key holder decrypts with the extra error
    /// `|e0 + e1·s| ≤ 2^{k0−1} + N·2^{k1−1}` ([`crate::flood::FloodPlan::dropped_bits`]).
    pub fn compress(&self, ct: &Ciphertext, k0: u32, k1: u32) -> Result<Compressed> {
        self.small_modulus(ct.level)?;
        let primes = self.primes(ct.level)?.to_vec();
        let to_integers = |c: &Poly, k: u32| -> Vec<u128> {
            let rows = self.coefficient_rows(c);
            (0..self.slots())
                .map(|j| {
                    let x = if primes.len() == 1 {
                        u128::from(rows[[0, j]])
                    } else {
                        // x = r0 + q0·((r1 − r0)·q0^{−1} mod q1)
                        let (r0, r1) = (rows[[0, j]], rows[[1, j]]);
                        let m = &self.ring.primes()[1].q;
                        let h = m.mul(m.sub(r1, m.reduce(r0)), self.ring.inverse(0, 1));
                        u128::from(r0) + u128::from(primes[0]) * u128::from(h)
                    };
                    if k == 0 { x } else { (x + (1 << (k - 1))) >> k }
                })
                .collect()
        };
        Ok(Compressed {
            level: ct.level,
            dropped: (k0, k1),
            c0: to_integers(&ct.c0, k0),
            c1: to_integers(&ct.c1, k1),
        })
    }

    /// The ciphertext `(c0'·2^{k0}, c1'·2^{k1}) mod q_l` of a compressed answer.
    pub fn decompress(&self, c: &Compressed) -> Result<Ciphertext> {
        self.small_modulus(c.level)?;
        let ctx = self.context(c.level)?;
        let lift = |values: &[u128], k: u32| -> Result<Poly> {
            let mut rows = Array2::<u64>::zeros((ctx.moduli().len(), self.slots()));
            // (v·2^k mod q) mod q_i = v·2^k mod q_i, as q_i divides q; v·2^k < 2^128 (below).
            for (mut row, qi) in rows.outer_iter_mut().zip(ctx.moduli_operators()) {
                for (r, &v) in row.iter_mut().zip(values) {
                    *r = qi.reduce_u128(v << k);
                }
            }
            self.ntt_poly(rows, ctx, "decompression")
        };
        Ok(Ciphertext {
            level: c.level,
            c0: lift(&c.c0, c.dropped.0)?,
            c1: lift(&c.c1, c.dropped.1)?,
            seed: None,
        })
    }

    /// Switches `ct` down to `level` (dropping the last primes with rounding), in NTT form:
    /// two primes at a time by a 128-bit CRT of the dropped limbs, one at a time otherwise.
    pub fn switch_to(&self, ct: &mut Ciphertext, level: usize) -> Result<()> {
        if level < ct.level || level > self.max_level() {
            return Err(MpcError::Invalid(format!("cannot switch from level {} to {level}", ct.level)));
        }
        let target = self.context(level)?;
        for c in [&mut ct.c0, &mut ct.c1] {
            let count = c.coefficients().nrows();
            let basis: Vec<usize> = (0..count).collect();
            let coefficients = c.coefficients();
            let mut rows = coefficients
                .as_slice()
                .map_or_else(|| coefficients.iter().copied().collect(), <[u64]>::to_vec);
            self.ring.drop_last_rows(&mut rows, &basis, count - target.moduli().len(), true)?;
            let rows = Array2::from_shape_vec((target.moduli().len(), self.slots()), rows)
                .map_err(|e| math_error("modulus switching", e))?;
            *c = Poly::try_convert_from(rows, target, false, Representation::Ntt)
                .map_err(|e| math_error("modulus switching", e))?;
        }
        ct.level = level;
        ct.seed = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    /// A product sum equals the products added one by one (ciphertext for ciphertext), also
    /// when it reduces in the middle (a limit of two terms forces it), at every preset.
    #[test]
    fn a_product_sum_equals_products_added_one_by_one() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        for preset in BfvPreset::ALL {
            let bfv = Bfv::new(preset).unwrap();
            let (sk, pk) = bfv.keygen(&mut rng).unwrap();
            let t = bfv.plaintext_modulus();
            let values =
                |rng: &mut ChaCha20Rng| (0..bfv.slots()).map(|_| rng.random_range(0..t)).collect::<Vec<_>>();
            let start =
                bfv.encrypt_public(&pk, &bfv.encode(&values(&mut rng)).unwrap(), None, &mut rng).unwrap();
            let terms: Vec<(Ciphertext, Poly)> = (0..5)
                .map(|_| {
                    let ct = bfv
                        .encrypt_secret(&sk, &bfv.encode(&values(&mut rng)).unwrap(), 0, &mut rng)
                        .unwrap();
                    (ct, bfv.operand(&bfv.encode(&values(&mut rng)).unwrap(), 0).unwrap())
                })
                .collect();
            let mut expected = start.clone();
            for (ct, op) in &terms {
                expected = bfv.add(&expected, &bfv.mul_plain(ct, op)).unwrap();
            }
            for limit in [2, usize::MAX] {
                let mut sum = bfv.product_sum(0).unwrap();
                sum.limit = limit.min(sum.limit);
                for (ct, op) in &terms {
                    sum.add(&bfv, ct, op).unwrap();
                }
                let got = sum.finish(&bfv, &start).unwrap();
                assert_eq!(got.c0, expected.c0, "{} (limit {limit})", preset.name());
                assert_eq!(got.c1, expected.c1, "{} (limit {limit})", preset.name());
                assert_eq!(bfv.decrypt(&sk, &got).unwrap(), bfv.decrypt(&sk, &expected).unwrap());
            }
            // A term at another level is refused.
            let mut low = terms[0].0.clone();
            bfv.switch_to(&mut low, 1).unwrap();
            let mut sum = bfv.product_sum(0).unwrap();
            assert!(sum.add(&bfv, &low, &terms[0].1).is_err());
        }
    }
}
