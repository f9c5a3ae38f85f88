//! Key switching for CKKS (hybrid, one digit per data prime, a special prime `P`): the
//! relinearisation of products and the Galois automorphisms behind rotations and
//! conjugation, hoisted or one at a time. See the module above for the math.

use rayon::prelude::*;
use veil_mpc::{MpcError, Result};

use super::{Ciphertext, Ckks, GaloisKeys, SwitchingKey};
use crate::rns::RnsPoly;

impl Ckks {
    /// Splits `c` (NTT form, level `l`) into its residues, each lifted to `q_0 … q_l, P` in NTT
    /// form: the digits of key switching, made once and reused across hoisted rotations. The
    /// limb of digit `j` at `q_j` is `c`'s own.
    fn digits(&self, c: &RnsPoly) -> Vec<RnsPoly> {
        let mut coeffs = c.clone();
        self.ring.to_coeff(&mut coeffs);
        let ext = self.ext_basis(c.len() - 1);
        (0..c.len())
            .into_par_iter()
            .map(|j| {
                let qj = self.ring.modulus(c.basis[j]);
                let limbs = ext
                    .iter()
                    .map(|&b| {
                        if b == c.basis[j] {
                            return c.limbs[j].clone();
                        }
                        let mut limb = self.ring.centred_residues(&coeffs.limbs[j], qj, b);
                        self.ring.ntt_forward(b, &mut limb);
                        limb
                    })
                    .collect();
                RnsPoly { basis: ext.clone(), limbs, ntt: true }
            })
            .collect()
    }

    /// `Σ_j digit_j · key_j`, divided by `P`: `(d0, d1)` with `d0 + d1·s ≈ c·s'`. The products
    /// accumulate in 128 bits and are reduced once per coefficient (at most 16 digits of
    /// primes below 2^61: the sum stays below 2^126).
    fn apply_key(&self, digits: &[RnsPoly], key: &SwitchingKey) -> Result<(RnsPoly, RnsPoly)> {
        let ext = digits[0].basis.clone();
        let n = self.ring.degree();
        // Limb by limb (in parallel): Σ_j digit_j[limb]·key_j[limb] in 128 bits, reduced once.
        let limbs: Vec<(Vec<u64>, Vec<u64>)> = ext
            .par_iter()
            .enumerate()
            .map(|(pos, &b)| {
                // In chunks that stay in cache, accumulated on the stack.
                const CHUNK: usize = 512;
                let q = &self.ring.primes()[b].q;
                let (mut out0, mut out1) = (vec![0u64; n], vec![0u64; n]);
                let (mut acc0, mut acc1) = ([0u128; CHUNK], [0u128; CHUNK]);
                for start in (0..n).step_by(CHUNK) {
                    let len = CHUNK.min(n - start);
                    acc0[..len].fill(0);
                    acc1[..len].fill(0);
                    for (digit, (kb, ka)) in digits.iter().zip(&key.digits) {
                        let d = &digit.limbs[pos][start..start + len];
                        let k0 = &kb.limbs[b][start..start + len];
                        let k1 = &ka.limbs[b][start..start + len];
                        for c in 0..len {
                            let x = u128::from(d[c]);
                            acc0[c] += x * u128::from(k0[c]);
                            acc1[c] += x * u128::from(k1[c]);
                        }
                    }
                    for c in 0..len {
                        out0[start + c] = q.reduce_u128(acc0[c]);
                        out1[start + c] = q.reduce_u128(acc1[c]);
                    }
                }
                (out0, out1)
            })
            .collect();
        let (l0, l1): (Vec<Vec<u64>>, Vec<Vec<u64>>) = limbs.into_iter().unzip();
        let out = [
            RnsPoly { basis: ext.clone(), limbs: l0, ntt: true },
            RnsPoly { basis: ext, limbs: l1, ntt: true },
        ];
        let [mut d0, mut d1] = out;
        self.ring.drop_last(&mut d0)?;
        self.ring.drop_last(&mut d1)?;
        Ok((d0, d1))
    }

    /// Relinearises a three-part ciphertext.
    pub fn relinearize(&self, ct: &Ciphertext, rk: &SwitchingKey) -> Result<Ciphertext> {
        if ct.parts.len() != 3 {
            return Ok(ct.clone());
        }
        let (d0, d1) = self.apply_key(&self.digits(&ct.parts[2]), rk)?;
        let mut out = Ciphertext { parts: vec![ct.parts[0].clone(), ct.parts[1].clone()], scale: ct.scale };
        self.ring.add_assign(&mut out.parts[0], &d0)?;
        self.ring.add_assign(&mut out.parts[1], &d1)?;
        Ok(out)
    }

    /// `a ⊙ b`, relinearised.
    pub fn mul_relin(&self, a: &Ciphertext, b: &Ciphertext, rk: &SwitchingKey) -> Result<Ciphertext> {
        self.relinearize(&self.mul(a, b)?, rk)
    }

    /// Applies the Galois elements to one ciphertext, hoisted: `c1` is split and lifted once.
    pub fn apply_galois_hoisted(
        &self,
        ct: &Ciphertext,
        elements: &[usize],
        gk: &GaloisKeys,
    ) -> Result<Vec<Ciphertext>> {
        if ct.parts.len() != 2 {
            return Err(MpcError::Invalid("rotating a ciphertext that is not relinearised".into()));
        }
        let digits = self.digits(&ct.parts[1]);
        elements
            .par_iter()
            .map(|&g| {
                if g == 1 {
                    return Ok(ct.clone());
                }
                let key = gk
                    .keys
                    .get(&g)
                    .ok_or_else(|| MpcError::Invalid(format!("no Galois key for X ↦ X^{g}")))?;
                let moved =
                    digits.iter().map(|d| self.ring.automorphism(d, g)).collect::<Result<Vec<_>>>()?;
                let (d0, d1) = self.apply_key(&moved, key)?;
                let mut c0 = self.ring.automorphism(&ct.parts[0], g)?;
                self.ring.add_assign(&mut c0, &d0)?;
                Ok(Ciphertext { parts: vec![c0, d1], scale: ct.scale })
            })
            .collect()
    }

    /// Applies one Galois element: both parts permuted first, then `c1` switched (one
    /// polynomial permuted instead of every lifted digit).
    pub fn apply_galois(&self, ct: &Ciphertext, g: usize, gk: &GaloisKeys) -> Result<Ciphertext> {
        if ct.parts.len() != 2 {
            return Err(MpcError::Invalid("rotating a ciphertext that is not relinearised".into()));
        }
        if g == 1 {
            return Ok(ct.clone());
        }
        let key = gk.keys.get(&g).ok_or_else(|| MpcError::Invalid(format!("no Galois key for X ↦ X^{g}")))?;
        let c1 = self.ring.automorphism(&ct.parts[1], g)?;
        let (d0, d1) = self.apply_key(&self.digits(&c1), key)?;
        let mut c0 = self.ring.automorphism(&ct.parts[0], g)?;
        self.ring.add_assign(&mut c0, &d0)?;
        Ok(Ciphertext { parts: vec![c0, d1], scale: ct.scale })
    }

    /// Left rotation by `k` slots (negative: right).
    pub fn rotate(&self, ct: &Ciphertext, k: i64, gk: &GaloisKeys) -> Result<Ciphertext> {
        self.apply_galois(ct, self.rotation_element(k), gk)
    }

    /// Left rotations by each of `steps`, hoisted.
    pub fn rotate_hoisted(&self, ct: &Ciphertext, steps: &[i64], gk: &GaloisKeys) -> Result<Vec<Ciphertext>> {
        let elements: Vec<usize> = steps.iter().map(|&k| self.rotation_element(k)).collect();
        self.apply_galois_hoisted(ct, &elements, gk)
    }

    /// Complex conjugation of the slots.
    pub fn conjugate(&self, ct: &Ciphertext, gk: &GaloisKeys) -> Result<Ciphertext> {
        self.apply_galois(ct, self.conjugation_element(), gk)
    }
}
