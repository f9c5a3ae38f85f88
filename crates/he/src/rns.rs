//! Polynomials of `Z_Q[X]/(X^N + 1)` in RNS form, limb by limb, with raw access: the layer
//! under CKKS (and what `blb`'s CKKS↔MPC conversions read and write).
//!
//! A [`Ring`] holds `N` and a list of NTT-friendly primes; an [`RnsPoly`] holds one residue
//! vector per prime of its *basis* (indices into the ring's primes), either as coefficients
//! or in NTT form (evaluations at the odd powers of a primitive `2N`-th root `ψ`, in the
//! NTT's own order). Arithmetic is `fhe-math`'s modular vector operations and its NTTs (on
//! `tfhe-ntt`).
//!
//! The operations a scheme needs and that the library's `Poly` does not expose with this
//! control:
//!
//! - **Dropping the last prime with rounding** in NTT form (rescaling, and the mod-down of key
//!   switching): `x ↦ (x − [x]_{q_j}) / q_j` with the centred remainder, one inverse NTT of the
//!   dropped limb and one forward NTT per kept limb.
//! - **Automorphisms** `X ↦ X^g` (odd `g`): a signed permutation of coefficients, or, in NTT
//!   form, a plain permutation of evaluations (`a(ψ^e) ↦ a(ψ^{e·g})`), computed once per `g`
//!   from the NTT of `X`, so that hoisted rotations permute instead of transforming.
//! - **Lifting a residue vector** `[c]_{q_j}` (centred) into other primes (key-switching digits).

use std::collections::HashMap;
use std::sync::Arc;

use fhe_math::ntt::NttOperator;
use fhe_math::zq::Modulus;
use num_bigint::BigUint;
use rand::{CryptoRng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use veil_mpc::{MpcError, Result};

use crate::bfv::math_error;

/// One prime of a ring: its modular arithmetic and its NTT.
pub struct Prime {
    /// The modulus (derefs to its value).
    pub q: Modulus,
    ntt: NttOperator,
    /// Where the evaluation at `ψ^e` sits in NTT form, by `e` (odd `e < 2N`).
    slot_of_exponent: Vec<usize>,
}

impl std::fmt::Debug for Prime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Prime({})", *self.q)
    }
}

/// The ring `Z[X]/(X^N + 1)` over a list of primes.
#[derive(Debug)]
pub struct Ring {
    n: usize,
    primes: Vec<Prime>,
    /// `inverse[j][i] = q_j^{−1} mod q_i` (0 on the diagonal): a modular inverse costs about
    /// 40 µs in constant time, so rescaling looks them up.
    inverse: Vec<Vec<u64>>,
    /// `prefix_inverse[i] = (q_0⋯q_{i−1})^{−1} mod q_i`: Garner's constants for the bases
    /// `q_0 … q_l` that ciphertexts use.
    prefix_inverse: Vec<u64>,
}

/// A polynomial over some of a ring's primes (its basis), as coefficients or in NTT form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RnsPoly {
    /// Indices of the primes, one per limb.
    pub basis: Vec<usize>,
    /// `limbs[i]`: the `N` residues mod prime `basis[i]`.
    pub limbs: Vec<Vec<u64>>,
    /// Whether the limbs are in NTT form.
    pub ntt: bool,
}

impl RnsPoly {
    /// Number of limbs.
    pub fn len(&self) -> usize {
        self.limbs.len()
    }

    /// Whether it has no limbs.
    pub fn is_empty(&self) -> bool {
        self.limbs.is_empty()
    }
}

/// The centred representative of `a mod q` (`q` odd).
pub(crate) fn centred(a: u64, q: u64) -> i64 {
    if a > q / 2 { a as i64 - q as i64 } else { a as i64 }
}

impl Ring {
    /// The ring of degree `n` (a power of two ≥ 8) over `primes` (each `≡ 1 mod 2n`, < 2^62).
    pub fn new(n: usize, primes: &[u64]) -> Result<Arc<Self>> {
        let primes = primes
            .iter()
            .map(|&p| {
                let q = Modulus::new(p).map_err(|e| math_error("prime", e))?;
                let ntt = NttOperator::new(&q, n)
                    .ok_or_else(|| MpcError::Invalid(format!("{p} has no NTT of size {n}")))?;
                // NTT(X)[k] = ψ^{e_k}: find each slot's exponent by walking the odd powers of ψ.
                let mut x = vec![0u64; n];
                x[1] = 1;
                ntt.forward(&mut x);
                let slot_of_value: HashMap<u64, usize> = x.iter().enumerate().map(|(k, &v)| (v, k)).collect();
                let psi = x[0];
                let psi2 = q.mul(psi, psi);
                let mut slot_of_exponent = vec![usize::MAX; 2 * n];
                // Every NTT value is an odd power of ψ_0 := x[0]; walk ψ_0^{1+2i}.
                let mut w = psi;
                for i in 0..n {
                    let e = 1 + 2 * i;
                    let k = slot_of_value.get(&w).copied().ok_or_else(|| {
                        MpcError::Invalid(format!("the NTT mod {p} is not an evaluation at odd powers"))
                    })?;
                    slot_of_exponent[e] = k;
                    w = q.mul(w, psi2);
                }
                Ok(Prime { q, ntt, slot_of_exponent })
            })
            .collect::<Result<Vec<Prime>>>()?;
        let inverse = primes
            .iter()
            .map(|pj| {
                primes
                    .iter()
                    .map(|pi| if pi.q == pj.q { 0 } else { pi.q.inv(pi.q.reduce(*pj.q)).unwrap_or(0) })
                    .collect()
            })
            .collect();
        let prefix_inverse = primes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                p.q.inv(primes[..i].iter().fold(1u64, |acc, pj| p.q.mul(acc, p.q.reduce(*pj.q)))).unwrap_or(0)
            })
            .collect();
        Ok(Arc::new(Ring { n, primes, inverse, prefix_inverse }))
    }

    /// The degree `N`.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// The primes.
    pub fn primes(&self) -> &[Prime] {
        &self.primes
    }

    /// `q_j^{−1} mod q_i` (`j ≠ i`).
    pub fn inverse(&self, j: usize, i: usize) -> u64 {
        self.inverse[j][i]
    }

    /// The modulus of prime `i`.
    pub fn modulus(&self, i: usize) -> u64 {
        *self.primes[i].q
    }

    /// The zero polynomial over `basis`.
    pub fn zero(&self, basis: &[usize], ntt: bool) -> RnsPoly {
        RnsPoly { basis: basis.to_vec(), limbs: vec![vec![0; self.n]; basis.len()], ntt }
    }

    /// Coefficients given as signed integers (|c| < 2^127), over `basis`, coefficient form.
    pub fn from_signed(&self, coeffs: &[i128], basis: &[usize]) -> RnsPoly {
        let limbs = basis
            .iter()
            .map(|&b| {
                let q = self.modulus(b) as i128;
                let mut v: Vec<u64> = coeffs.iter().map(|&c| c.rem_euclid(q) as u64).collect();
                v.resize(self.n, 0);
                v
            })
            .collect();
        RnsPoly { basis: basis.to_vec(), limbs, ntt: false }
    }

    /// Small signed coefficients (|c| < 2^63), over `basis`, coefficient form.
    pub fn from_small(&self, coeffs: &[i64], basis: &[usize]) -> RnsPoly {
        let limbs = basis.iter().map(|&b| self.primes[b].q.reduce_vec_i64(coeffs)).collect();
        RnsPoly { basis: basis.to_vec(), limbs, ntt: false }
    }

    /// A uniform polynomial over `basis` in NTT form (uniform there too), expanded from `seed`
    /// with ChaCha20.
    pub fn uniform_from_seed(&self, seed: [u8; 32], basis: &[usize]) -> RnsPoly {
        let mut rng = ChaCha20Rng::from_seed(seed);
        self.uniform(&mut rng, basis)
    }

    /// A uniform polynomial over `basis` in NTT form.
    pub fn uniform<R: RngCore + CryptoRng>(&self, rng: &mut R, basis: &[usize]) -> RnsPoly {
        let limbs = basis.iter().map(|&b| self.primes[b].q.random_vec(self.n, rng)).collect();
        RnsPoly { basis: basis.to_vec(), limbs, ntt: true }
    }

    /// The forward NTT of one residue vector mod prime `b`.
    pub fn ntt_forward(&self, b: usize, limb: &mut [u64]) {
        self.primes[b].ntt.forward(limb);
    }

    /// To NTT form (no-op if already).
    pub fn to_ntt(&self, p: &mut RnsPoly) {
        if !p.ntt {
            p.limbs.par_iter_mut().zip(&p.basis).for_each(|(limb, &b)| self.primes[b].ntt.forward(limb));
            p.ntt = true;
        }
    }

    /// To coefficient form (no-op if already).
    pub fn to_coeff(&self, p: &mut RnsPoly) {
        if p.ntt {
            p.limbs.par_iter_mut().zip(&p.basis).for_each(|(limb, &b)| self.primes[b].ntt.backward(limb));
            p.ntt = false;
        }
    }

    fn same_shape(a: &RnsPoly, b: &RnsPoly) -> Result<()> {
        if a.basis != b.basis || a.ntt != b.ntt {
            return Err(MpcError::Invalid(format!(
                "polynomials over primes {:?} ({}) and {:?} ({})",
                a.basis,
                if a.ntt { "NTT" } else { "coefficients" },
                b.basis,
                if b.ntt { "NTT" } else { "coefficients" }
            )));
        }
        Ok(())
    }

    /// `a += b`.
    pub fn add_assign(&self, a: &mut RnsPoly, b: &RnsPoly) -> Result<()> {
        Self::same_shape(a, b)?;
        for ((x, y), &i) in a.limbs.iter_mut().zip(&b.limbs).zip(&b.basis) {
            self.primes[i].q.add_vec(x, y);
        }
        Ok(())
    }

    /// `a −= b`.
    pub fn sub_assign(&self, a: &mut RnsPoly, b: &RnsPoly) -> Result<()> {
        Self::same_shape(a, b)?;
        for ((x, y), &i) in a.limbs.iter_mut().zip(&b.limbs).zip(&b.basis) {
            self.primes[i].q.sub_vec(x, y);
        }
        Ok(())
    }

    /// `a = −a`.
    pub fn neg_assign(&self, a: &mut RnsPoly) {
        for (x, &i) in a.limbs.iter_mut().zip(&a.basis) {
            self.primes[i].q.neg_vec(x);
        }
    }

    /// `a *= b` (both in NTT form).
    pub fn mul_assign(&self, a: &mut RnsPoly, b: &RnsPoly) -> Result<()> {
        Self::same_shape(a, b)?;
        if !a.ntt {
            return Err(MpcError::Invalid("products need the NTT form".into()));
        }
        for ((x, y), &i) in a.limbs.iter_mut().zip(&b.limbs).zip(&b.basis) {
            self.primes[i].q.mul_vec(x, y);
        }
        Ok(())
    }

    /// `a * b` (both in NTT form).
    pub fn mul(&self, a: &RnsPoly, b: &RnsPoly) -> Result<RnsPoly> {
        let mut out = a.clone();
        self.mul_assign(&mut out, b)?;
        Ok(out)
    }

    /// `a *= c` for a signed integer `c`.
    pub fn scalar_mul_assign(&self, a: &mut RnsPoly, c: i128) {
        for (x, &i) in a.limbs.iter_mut().zip(&a.basis) {
            let q = self.modulus(i);
            self.primes[i].q.scalar_mul_vec(x, c.rem_euclid(q as i128) as u64);
        }
    }

    /// The polynomial restricted to the first `count` limbs of its basis (a level drop: the
    /// value mod the smaller modulus, nothing divided).
    pub fn truncate(&self, a: &mut RnsPoly, count: usize) {
        a.basis.truncate(count);
        a.limbs.truncate(count);
    }

    /// Divides by the last prime of the basis with rounding and drops it:
    /// `x ↦ (x − r)/q_j`, `r` the centred residue mod `q_j`. Keeps the form.
    pub fn drop_last(&self, a: &mut RnsPoly) -> Result<()> {
        let (Some(mut last), Some(j)) = (a.limbs.pop(), a.basis.pop()) else {
            return Err(MpcError::Invalid("dropping a prime of an empty polynomial".into()));
        };
        if a.ntt {
            self.primes[j].ntt.backward(&mut last);
        }
        let qj = self.modulus(j);
        let centred_last: Vec<i64> = last.iter().map(|&v| centred(v, qj)).collect();
        let ntt = a.ntt;
        a.limbs.par_iter_mut().zip(&a.basis).for_each(|(x, &i)| {
            let p = &self.primes[i];
            let mut r = p.q.reduce_vec_i64(&centred_last);
            if ntt {
                p.ntt.forward(&mut r);
            }
            p.q.sub_vec(x, &r);
            p.q.scalar_mul_vec(x, self.inverse[j][i]);
        });
        Ok(())
    }

    /// Divides by the product of the last two primes of the basis with rounding and drops both
    /// (`x ↦ (x − r)/(q_a·q_b)`, `r` the centred residue mod `q_a·q_b`, from a 128-bit CRT):
    /// two inverse NTTs and one forward NTT per kept limb, against four and two for two
    /// single drops. Keeps the form.
    pub fn drop_last_two(&self, a: &mut RnsPoly) -> Result<()> {
        if a.len() < 3 {
            return Err(MpcError::Invalid(format!("dropping two primes of {}", a.len())));
        }
        let (mut lb, jb) = (a.limbs.pop().unwrap_or_default(), a.basis.pop().unwrap_or_default());
        let (mut la, ja) = (a.limbs.pop().unwrap_or_default(), a.basis.pop().unwrap_or_default());
        if a.ntt {
            self.primes[ja].ntt.backward(&mut la);
            self.primes[jb].ntt.backward(&mut lb);
        }
        let (qa, qb) = (self.modulus(ja), self.modulus(jb));
        let pb = &self.primes[jb].q;
        let qa_inv = self.inverse[ja][jb];
        let prod = u128::from(qa) * u128::from(qb);
        // r = r_a + q_a·((r_b − r_a)·q_a^{−1} mod q_b) ∈ [0, q_a·q_b); negative if above half.
        let residues: Vec<(u128, bool)> = la
            .iter()
            .zip(&lb)
            .map(|(&ra, &rb)| {
                let k = pb.mul(pb.sub(rb, pb.reduce(ra)), qa_inv);
                let r = u128::from(ra) + u128::from(qa) * u128::from(k);
                if r > prod / 2 { (prod - r, true) } else { (r, false) }
            })
            .collect();
        let ntt = a.ntt;
        a.limbs.par_iter_mut().zip(&a.basis).for_each(|(x, &i)| {
            let p = &self.primes[i];
            let mut r: Vec<u64> = residues
                .iter()
                .map(|&(mag, neg)| {
                    let m = p.q.reduce_u128(mag);
                    if neg { p.q.neg(m) } else { m }
                })
                .collect();
            if ntt {
                p.ntt.forward(&mut r);
            }
            p.q.sub_vec(x, &r);
            p.q.scalar_mul_vec(x, p.q.mul(self.inverse[ja][i], self.inverse[jb][i]));
        });
        Ok(())
    }

    /// The residues mod prime `j` (coefficient form, centred) lifted into `basis`, in NTT form:
    /// a key-switching digit.
    pub fn lift_digit(&self, residues: &[u64], j: usize, basis: &[usize]) -> RnsPoly {
        let qj = self.modulus(j);
        let centred: Vec<i64> = residues.iter().map(|&v| centred(v, qj)).collect();
        let mut p = self.from_small(&centred, basis);
        self.to_ntt(&mut p);
        p
    }

    /// `a(X^g)` for odd `g`, in either form.
    pub fn automorphism(&self, a: &RnsPoly, g: usize) -> Result<RnsPoly> {
        let two_n = 2 * self.n;
        let g = g % two_n;
        if g.is_multiple_of(2) {
            return Err(MpcError::Invalid(format!("X ↦ X^{g}: the exponent must be odd")));
        }
        let mut out = a.clone();
        for ((dst, src), &b) in out.limbs.iter_mut().zip(&a.limbs).zip(&a.basis) {
            let p = &self.primes[b];
            if a.ntt {
                // (σ_g a)(ψ^e) = a(ψ^{e·g}), e·g walked in steps of 2g mod 2N.
                let step = 2 * g % two_n;
                let mut eg = g;
                for e in (1..two_n).step_by(2) {
                    dst[p.slot_of_exponent[e]] = src[p.slot_of_exponent[eg]];
                    eg += step;
                    if eg >= two_n {
                        eg -= two_n;
                    }
                }
            } else {
                for (i, &c) in src.iter().enumerate() {
                    let j = i * g % two_n;
                    if j < self.n {
                        dst[j] = c;
                    } else {
                        dst[j - self.n] = p.q.neg(c);
                    }
                }
            }
        }
        Ok(out)
    }

    /// The product of the basis' primes.
    pub fn modulus_of(&self, basis: &[usize]) -> BigUint {
        basis.iter().fold(BigUint::from(1u8), |acc, &b| acc * self.modulus(b))
    }

    /// The coefficients as centred reals (coefficient form; CRT across the limbs).
    pub fn centred_reals(&self, a: &RnsPoly) -> Result<Vec<f64>> {
        if a.ntt {
            return Err(MpcError::Invalid("reading coefficients of a polynomial in NTT form".into()));
        }
        if a.len() == 1 {
            let q = self.modulus(a.basis[0]);
            return Ok(a.limbs[0].iter().map(|&v| centred(v, q) as f64).collect());
        }
        // Garner: x = v_0 + v_1·q_0 + v_2·q_0·q_1 + …, each v_i < q_i, from
        // v_i = (r_i − (v_0 + v_1·q_0 + …)) · (q_0⋯q_{i−1})^{−1} mod q_i. The sign comes from the
        // top digit; a negative x is read through the digits of Q − 1 − x.
        let k = a.len();
        let ps: Vec<&Modulus> = a.basis.iter().map(|&b| &self.primes[b].q).collect();
        let qs: Vec<u64> = a.basis.iter().map(|&b| self.modulus(b)).collect();
        let inv_prefix: Vec<u64> = if a.basis.iter().enumerate().all(|(i, &b)| i == b) {
            self.prefix_inverse[..k].to_vec()
        } else {
            ps.iter()
                .enumerate()
                .map(|(i, p)| {
                    p.inv(qs[..i].iter().fold(1u64, |acc, &q| p.mul(acc, p.reduce(q)))).unwrap_or(0)
                })
                .collect()
        };
        let weights: Vec<f64> = (0..k).map(|i| (0..i).map(|j| qs[j] as f64).product()).collect();
        let top = qs[k - 1];
        Ok((0..self.n)
            .into_par_iter()
            .map_init(
                || vec![0u64; k],
                |v, c| {
                    for i in 0..k {
                        let q = ps[i];
                        // (v_0 + v_1·q_0 + … + v_{i−1}·q_0⋯q_{i−2}) mod q_i
                        let mut acc = 0u64;
                        let mut w = 1u64;
                        for j in 0..i {
                            acc = q.add(acc, q.mul(q.reduce(v[j]), w));
                            w = q.mul(w, q.reduce(qs[j]));
                        }
                        v[i] = q.mul(q.sub(a.limbs[i][c], acc), inv_prefix[i]);
                    }
                    if v[k - 1] > top / 2 {
                        let neg: f64 = (0..k).map(|i| (qs[i] - 1 - v[i]) as f64 * weights[i]).sum();
                        -(neg + 1.0)
                    } else {
                        (0..k).map(|i| v[i] as f64 * weights[i]).sum()
                    }
                },
            )
            .collect())
    }
}
