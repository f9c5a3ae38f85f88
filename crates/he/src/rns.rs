//! Polynomials of `Z_Q[X]/(X^N + 1)` in RNS form, limb by limb, with raw access: the layer
//! under CKKS (and what `blb`'s CKKS↔MPC conversions read and write).
//!
//! A [`Ring`] holds `N` and a list of NTT-friendly primes; an [`RnsPoly`] holds one residue
//! vector per prime of its *basis* (indices into the ring's primes), either as coefficients
//! or in NTT form (evaluations at the odd powers of a primitive `2N`-th root `ψ`, in the
//! NTT's own order). Arithmetic is `fhe-math`'s modular vector operations; the NTTs are
//! `tfhe-ntt` 0.7's plans, called directly (see `Transform` below).
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

use fhe_math::zq::Modulus;
use num_bigint::BigUint;
use rand::{CryptoRng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use veil_mpc::{MpcError, Result};

use crate::bfv::math_error;
use crate::ifma;

/// One prime of a ring: its modular arithmetic and its NTT.
pub struct Prime {
    /// The modulus (derefs to its value).
    pub q: Modulus,
    ntt: Transform,
    /// Where the evaluation at `ψ^e` sits in NTT form, by `e` (odd `e < 2N`).
    slot_of_exponent: Vec<usize>,
}

impl std::fmt::Debug for Prime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Prime({})", *self.q)
    }
}

impl Prime {
    /// `x ← (x − r)·c` element by element, in one pass (Shoup's product by the constant `c`).
    fn subtract_and_scale(&self, x: &mut [u64], r: &[u64], c: u64) {
        if ifma::subtract_and_scale(x, r, *self.q, c) {
            return;
        }
        let c_shoup = self.q.shoup(c);
        for (xi, &ri) in x.iter_mut().zip(r) {
            *xi = self.q.mul_shoup(self.q.sub(*xi, ri), c, c_shoup);
        }
    }
}

/// A constant `w < q` with Shoup's quotient `⌊w·2^64/q⌋`, for products `a·w mod q` by one
/// 64×64 → 128-bit high product and two low ones: for any `a < 2^64` the estimated quotient
/// `⌊a·w'/2^64⌋` falls short of `⌊a·w/q⌋` by at most one, so `a·w − k·q ∈ [0, 2q)` (`q < 2^63`).
#[derive(Clone, Copy, Debug)]
struct Shoup {
    w: u64,
    quotient: u64,
}

impl Shoup {
    fn new(w: u64, q: u64) -> Self {
        Shoup { w, quotient: ((u128::from(w) << 64) / u128::from(q)) as u64 }
    }

    /// `a·w mod q`, for any `a < 2^64`.
    fn times(self, a: u64, q: u64) -> u64 {
        let k = ((u128::from(a) * u128::from(self.quotient)) >> 64) as u64;
        let r = a.wrapping_mul(self.w).wrapping_sub(k.wrapping_mul(q));
        r - if r >= q { q } else { 0 }
    }
}

/// `a + b mod q` for `a, b < q < 2^63`.
fn add_mod(a: u64, b: u64, q: u64) -> u64 {
    let s = a + b;
    s - if s >= q { q } else { 0 }
}

/// `a − b mod q` for `a, b < q`.
fn sub_mod(a: u64, b: u64, q: u64) -> u64 {
    a.wrapping_sub(b).wrapping_add(if a < b { q } else { 0 })
}

/// The negacyclic NTT mod one prime: `tfhe-ntt` 0.7's plan, which uses AVX-512 (and, for
/// primes below 2^50, its 52-bit IFMA products) on stable Rust where the CPU has it and AVX2 or
/// scalar code elsewhere, chosen at run time. `fhe-math` 0.1 links `tfhe-ntt` 0.6, whose AVX-512
/// code needs a nightly compiler; on the 2-core development machine 0.7's transform is 3.0×
/// faster for the BFV presets' 36–50-bit primes (6.3 against 19.3 µs at N = 4096) and 1.6×
/// for 60-bit primes (25.5 against 41.4 µs at N = 8192). Both versions choose the same root and
/// the same order of evaluations (checked by a test), so polynomials this layer transforms
/// stay interchangeable with `fhe-math`'s `Poly` in NTT form, which BFV uses.
struct Transform {
    plan: tfhe_ntt::prime64::Plan,
}

impl Transform {
    fn new(p: u64, n: usize) -> Option<Self> {
        tfhe_ntt::prime64::Plan::try_new(n, p).map(|plan| Transform { plan })
    }

    /// Coefficients (in `[0, p)`) to evaluations (in `[0, p)`).
    fn forward(&self, a: &mut [u64]) {
        self.plan.fwd(a);
    }

    /// Evaluations to coefficients, scaled by `N^{−1}`.
    fn backward(&self, a: &mut [u64]) {
        self.plan.inv(a);
        self.plan.normalize(a);
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
                let ntt = Transform::new(p, n)
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

    /// The inverse NTT (scaled by `N^{−1}`) of one residue vector mod prime `b`.
    pub fn ntt_backward(&self, b: usize, limb: &mut [u64]) {
        self.primes[b].ntt.backward(limb);
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
        let kept = a.limbs.iter_mut().map(Vec::as_mut_slice).collect();
        self.divide_by_prime(kept, &a.basis, &mut last, j, a.ntt);
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
        let kept = a.limbs.iter_mut().map(Vec::as_mut_slice).collect();
        self.divide_by_two_primes(kept, &a.basis, (&mut la, ja), (&mut lb, jb), a.ntt);
        Ok(())
    }

    /// Drops the last `drop` primes of a polynomial stored as one row-major buffer of
    /// `basis.len()` limbs (the layout of `fhe-math`'s `Poly`), with rounding, two at a time
    /// then one, and truncates the buffer to the kept limbs: the same arithmetic as
    /// [`Ring::drop_last_two`] and [`Ring::drop_last`] without copying limbs in and out.
    pub fn drop_last_rows(&self, rows: &mut Vec<u64>, basis: &[usize], drop: usize, ntt: bool) -> Result<()> {
        let n = self.n;
        if rows.len() != basis.len() * n || drop >= basis.len() {
            return Err(MpcError::Invalid(format!(
                "dropping {drop} of {} primes from {} coefficients",
                basis.len(),
                rows.len()
            )));
        }
        let mut count = basis.len();
        let mut left = drop;
        while left > 0 {
            let (kept, dropped) =
                rows[..count * n].split_at_mut(if left >= 2 { (count - 2) * n } else { (count - 1) * n });
            let limbs = kept.chunks_mut(n).collect();
            if left >= 2 {
                let (la, lb) = dropped.split_at_mut(n);
                self.divide_by_two_primes(
                    limbs,
                    &basis[..count - 2],
                    (la, basis[count - 2]),
                    (lb, basis[count - 1]),
                    ntt,
                );
                count -= 2;
                left -= 2;
            } else {
                self.divide_by_prime(limbs, &basis[..count - 1], dropped, basis[count - 1], ntt);
                count -= 1;
                left -= 1;
            }
        }
        rows.truncate(count * n);
        Ok(())
    }

    /// The residues mod prime `b` of the centred values of `v` modulo `q_j` (`v[k] < q_j`):
    /// `v[k]`, less `q_j` above `q_j/2`, reduced mod `q_b`. A conditional addition where
    /// `q_j ≤ q_b`, otherwise a reduction (IFMA lanes below 2^50, else a one-word Barrett).
    pub fn centred_residues(&self, v: &[u64], qj: u64, b: usize) -> Vec<u64> {
        let q = self.modulus(b);
        let mut r = vec![0u64; v.len()];
        if qj <= q {
            let lift = q - qj;
            for (ri, &x) in r.iter_mut().zip(v) {
                *ri = x + if x > qj / 2 { lift } else { 0 };
            }
        } else if !ifma::reduce_centred(v, &mut r, q, qj) {
            let (half, shift, ratio) = (qj / 2, qj % q, u64::MAX / q);
            for (ri, &x) in r.iter_mut().zip(v) {
                // k ≥ ⌊x/q⌋ − 1, so x − k·q < 2q.
                let k = ((u128::from(x) * u128::from(ratio)) >> 64) as u64;
                let m = x - k * q;
                let m = m - if m >= q { q } else { 0 };
                *ri = if x > half { sub_mod(m, shift, q) } else { m };
            }
        }
        r
    }

    /// `x ← (x − r)·q_j^{−1}` on each kept limb (prime `basis[i]`), `r` the centred residue of
    /// `last` mod `q_j`: one inverse NTT of `last` (which it overwrites) and one forward NTT per
    /// kept limb in NTT form.
    fn divide_by_prime(
        &self,
        mut kept: Vec<&mut [u64]>,
        basis: &[usize],
        last: &mut [u64],
        j: usize,
        ntt: bool,
    ) {
        if ntt {
            self.primes[j].ntt.backward(last);
        }
        let last = &*last;
        let qj = self.modulus(j);
        kept.par_iter_mut().zip(basis).for_each(|(x, &i)| {
            let p = &self.primes[i];
            let mut r = self.centred_residues(last, qj, i);
            if ntt {
                p.ntt.forward(&mut r);
            }
            p.subtract_and_scale(x, &r, self.inverse[j][i]);
        });
    }

    /// `x ← (x − r)·(q_a·q_b)^{−1}` on each kept limb, `r` the centred residue mod `q_a·q_b`
    /// of the two dropped limbs `la` (prime `ja`) and `lb` (prime `jb`), which it overwrites.
    fn divide_by_two_primes(
        &self,
        mut kept: Vec<&mut [u64]>,
        basis: &[usize],
        (la, ja): (&mut [u64], usize),
        (lb, jb): (&mut [u64], usize),
        ntt: bool,
    ) {
        if ntt {
            self.primes[ja].ntt.backward(la);
            self.primes[jb].ntt.backward(lb);
        }
        let (qa, qb) = (self.modulus(ja), self.modulus(jb));
        let pb = &self.primes[jb].q;
        let qa_inv = self.inverse[ja][jb];
        let prod = u128::from(qa) * u128::from(qb);
        // r = r_a + q_a·((r_b − r_a)·q_a^{−1} mod q_b) ∈ [0, q_a·q_b); negative if above half.
        let residues: Vec<(u128, bool)> = la
            .iter()
            .zip(lb.iter())
            .map(|(&ra, &rb)| {
                let k = pb.mul(pb.sub(rb, pb.reduce(ra)), qa_inv);
                let r = u128::from(ra) + u128::from(qa) * u128::from(k);
                if r > prod / 2 { (prod - r, true) } else { (r, false) }
            })
            .collect();
        kept.par_iter_mut().zip(basis).for_each(|(x, &i)| {
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
            p.subtract_and_scale(x, &r, p.q.mul(self.inverse[ja][i], self.inverse[jb][i]));
        });
    }

    /// The residues mod prime `j` (coefficient form, centred) lifted into `basis`, in NTT form:
    /// a key-switching digit.
    pub fn lift_digit(&self, residues: &[u64], j: usize, basis: &[usize]) -> RnsPoly {
        let qj = self.modulus(j);
        let limbs = basis.iter().map(|&b| self.centred_residues(residues, qj, b)).collect();
        let mut p = RnsPoly { basis: basis.to_vec(), limbs, ntt: false };
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
        // v_i = (r_i − (v_0 + v_1·q_0 + …)) · (q_0⋯q_{i−1})^{−1} mod q_i. The sign comes from
        // comparing the digits with those of (Q − 1)/2; a negative x is read through the digits
        // of Q − 1 − x.
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
        // prefix[i][j] = q_0⋯q_{j−1} mod q_i (j < i), with its Shoup quotient.
        let prefix: Vec<Vec<Shoup>> = (0..k)
            .map(|i| {
                let p = ps[i];
                let mut w = 1u64;
                (0..i)
                    .map(|j| {
                        let here = Shoup::new(w, qs[i]);
                        w = p.mul(w, p.reduce(qs[j]));
                        here
                    })
                    .collect()
            })
            .collect();
        let inv_prefix: Vec<Shoup> = inv_prefix.iter().zip(&qs).map(|(&c, &q)| Shoup::new(c, q)).collect();
        Ok((0..self.n)
            .into_par_iter()
            .map_init(
                || vec![0u64; k],
                |v, c| {
                    for i in 0..k {
                        let q = qs[i];
                        // (v_0 + v_1·q_0 + … + v_{i−1}·q_0⋯q_{i−2}) mod q_i
                        let mut acc = 0u64;
                        for (j, w) in prefix[i].iter().enumerate() {
                            acc = add_mod(acc, w.times(v[j], q), q);
                        }
                        v[i] = inv_prefix[i].times(sub_mod(a.limbs[i][c], acc, q), q);
                    }
                    // x > Q/2 ⟺ x > (Q − 1)/2, whose digits are all (q_i − 1)/2: compare
                    // from the top digit down.
                    let negative = (0..k).rev().map(|i| v[i].cmp(&(qs[i] / 2))).find(|o| o.is_ne())
                        == Some(std::cmp::Ordering::Greater);
                    if negative {
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

#[cfg(test)]
mod tests {
    use super::{Ring, Transform};
    use crate::preset::ntt_primes;
    use fhe_math::ntt::NttOperator;
    use fhe_math::zq::Modulus;
    use num_bigint::{BigInt, BigUint};
    use num_traits::ToPrimitive;

    /// BFV keeps `fhe-math`'s `Poly` in NTT form and switches its limbs with this layer, so the
    /// two transforms must agree value for value (same root, same order), for every prime size
    /// the presets use.
    #[test]
    fn the_transform_matches_fhe_maths_ntt_value_for_value() {
        for (n, bits) in [(4096usize, vec![16, 36, 37]), (8192, vec![45, 50, 60]), (16384, vec![40, 61])] {
            for p in ntt_primes(n, &bits).unwrap() {
                let ours = Transform::new(p, n).unwrap();
                let theirs = NttOperator::new(&Modulus::new(p).unwrap(), n).unwrap();
                let coeffs: Vec<u64> =
                    (0..n as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % p).collect();
                let (mut a, mut b) = (coeffs.clone(), coeffs.clone());
                ours.forward(&mut a);
                theirs.forward(&mut b);
                assert_eq!(a, b, "forward NTT mod {p} (N = {n})");
                ours.backward(&mut a);
                assert_eq!(a, coeffs, "round trip mod {p} (N = {n})");
            }
        }
    }

    /// Garner's reconstruction against big integers: values at 0, ±1, ±(Q/2 − 1), near ±2^k
    /// for k across the range, and random ones, over one to nine primes of 40 to 61 bits (the
    /// CKKS chains), also over a basis that skips primes.
    #[test]
    fn centred_reals_match_big_integers() {
        let n = 16;
        let primes = ntt_primes(n, &[60, 40, 40, 40, 40, 40, 40, 61, 50]).unwrap();
        let ring = Ring::new(n, &primes).unwrap();
        let mut state = 3u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state
        };
        for basis in (1..=primes.len()).map(|k| (0..k).collect::<Vec<_>>()).chain([vec![0, 2, 5], vec![1, 8]])
        {
            let q: BigInt = basis.iter().map(|&b| BigInt::from(primes[b])).product();
            let half: BigInt = &q / 2;
            let mut values: Vec<BigInt> =
                vec![BigInt::from(0), BigInt::from(1), BigInt::from(-1), &half - 1i32, -(&half - 1i32)];
            let bits = q.bits();
            while values.len() < n {
                let magnitude = BigInt::from(BigUint::from_bytes_le(
                    &(0..(bits / 64 + 1)).flat_map(|_| next().to_le_bytes()).collect::<Vec<u8>>(),
                )) >> (next() % bits + 1);
                let v = magnitude % &half;
                values.push(if next() % 2 == 0 { v } else { -v });
            }
            let limbs = basis
                .iter()
                .map(|&b| {
                    let p = BigInt::from(primes[b]);
                    values.iter().map(|v| (((v % &p) + &p) % &p).to_u64().unwrap()).collect()
                })
                .collect();
            let poly = super::RnsPoly { basis: basis.clone(), limbs, ntt: false };
            let got = ring.centred_reals(&poly).unwrap();
            for (v, g) in values.iter().zip(got) {
                let want = v.to_f64().unwrap();
                assert!((g - want).abs() <= want.abs() * 1e-12 + 1e-9, "basis {basis:?}: {v} read as {g}");
            }
        }
    }
}
