//! Answers of coefficient-encoded products packed `s` to a ciphertext ([`crate::pack`]).
//!
//! When every coefficient the key holder reads sits at one residue `c` mod `s` (a matrix
//! product's outputs at `≡ k_b − 1 mod k_b`, an FC layer's at `≡ b_i − 1 mod b_i`), the
//! evaluator shifts each answer by `X^{−c}`, packs each group of `s` consecutive answers into
//! one ciphertext, and only then masks, floods ([`crate::flood::plan_packed`]) and switches it:
//!
//! ```text
//! evaluator:  P_g = pack(X^{−c}·Σ_i Enc(x̂_i)·ŵ_{gs+r,i} : r < s) ⊞ Enc_pk(−u_g) ⊞ flooding
//!             keeps R_{gs+r}[p] = s^{−1}·u_g[p − c + r]
//! key holder: Dec(P_g)[p − c + r] = s·y_{gs+r}[p] − u_g[p − c + r], times s^{−1}
//! ```
//!
//! so the two shares still add up to every coefficient read. One dense answer replaces `s`
//! answers that each carried a whole `c1`. Both ends choose `s` alike from the positions,
//! the number of answers and the flooding bound ([`Ole::packing`]).

use std::sync::atomic::Ordering;

use rayon::prelude::*;
use veil_mpc::{Ctx, MpcError, Result};

use super::{Ole, Packing, rngs};
use crate::bfv::Ciphertext;
use crate::flood::{FloodPlan, plan_packed};
use crate::pack::{GaloisKeys, MAX_STRIDE, packing_stride};
use crate::wire;

/// The terms of one answer: (query index, the evaluator's operand).
type Row<'a> = Vec<(usize, &'a [u64])>;

/// How a layer's answers are packed: `stride` to a ciphertext, the read coefficients at
/// `offset` mod `stride`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnswerPacking {
    /// Answers per packed ciphertext (a power of two, at least 2).
    pub stride: usize,
    /// The residue of every read coefficient mod `stride`.
    pub offset: usize,
}

impl Ole {
    /// The packing of `outputs` answers of `terms` terms read at `used` (ascending): the
    /// largest power of two up to [`MAX_STRIDE`] and the answers' count (rounded up) that
    /// divides every distance between read positions and whose flooding fits; `None` below 2.
    pub fn packing(&self, used: &[usize], terms: usize, outputs: usize) -> Option<AnswerPacking> {
        let first = *used.first()?;
        let limit = MAX_STRIDE.min(outputs.next_power_of_two());
        let aligned = |stride: usize| used.iter().all(|&p| (p - first) % stride == 0);
        let stride = packing_stride(&self.bfv, terms, limit, aligned)?;
        Some(AnswerPacking { stride, offset: first % stride })
    }

    /// The peer's Galois keys, received now if they have not been (they follow its first
    /// packed queries, [`Ole::send_polynomials_for`]).
    fn peer_keys(&self, ctx: &mut Ctx) -> Result<&GaloisKeys> {
        if let Some(keys) = self.peer_galois.get() {
            return Ok(keys);
        }
        let bytes = ctx.recv_at_most(self.peer, GaloisKeys::bytes(&self.bfv)?)?;
        let keys = GaloisKeys::decode(&self.bfv, self.peer, &bytes)?;
        Ok(self.peer_galois.get_or_init(|| keys))
    }

    fn packed_plan(&self, terms: usize, packing: AnswerPacking) -> Result<FloodPlan> {
        plan_packed(&self.bfv, terms.max(1), packing.stride)
    }

    /// Evaluator: [`Ole::answer_polynomials_at`] with the answers packed.
    pub(super) fn answer_packed(
        &self,
        ctx: &mut Ctx,
        inputs: usize,
        rows: &[Row<'_>],
        terms: usize,
        used: &[usize],
        packing: AnswerPacking,
    ) -> Result<Vec<Vec<u64>>> {
        let plan = self.packed_plan(terms, packing)?;
        let queries = wire::recv_ciphertexts(ctx, &self.bfv, self.peer, inputs, 0, wire::Form::Seeded)?;
        let keys = self.peer_keys(ctx)?;
        let (t, n, s) = (self.modulus(), self.bfv.slots(), packing.stride);
        let back = self.bfv.monomial(2 * n - packing.offset, 0)?;
        let groups: Vec<&[Row<'_>]> = rows.chunks(s).collect();
        let rngs = rngs(ctx, groups.len());
        let packed = groups
            .par_iter()
            .zip(rngs)
            .map(|(group, mut rng)| {
                let mut answers = group
                    .iter()
                    .map(|row| {
                        if row.is_empty() {
                            return Ok(None);
                        }
                        let sum = self.row_sum(&queries, row, Packing::Coefficients, &self.bfv.zero(0)?)?;
                        Ok(Some(self.bfv.mul_plain(&sum, &back)))
                    })
                    .collect::<Result<Vec<Option<Ciphertext>>>>()?;
                answers.resize(s, None);
                let mask: Vec<u64> = (0..n).map(|_| rand::Rng::random_range(&mut rng, 0..t)).collect();
                let neg: Vec<u64> = mask.iter().map(|&r| (t - r) % t).collect();
                let masked = match answers.iter().any(Option::is_some) {
                    true => Some(self.bfv.pack(answers, keys)?),
                    false => None,
                };
                let fresh = self.bfv.encrypt_public(
                    &self.peer_pk,
                    &self.encode(Packing::Coefficients, &neg)?,
                    None,
                    &mut rng,
                )?;
                let mut out = match masked {
                    Some(p) => self.bfv.add(&p, &fresh)?,
                    None => fresh,
                };
                self.bfv.flood(&mut out, plan.flood_bits, &mut rng)?;
                self.bfv.switch_to(&mut out, plan.response_level)?;
                Ok((out, mask))
            })
            .collect::<Result<Vec<(Ciphertext, Vec<u64>)>>>()?;
        let (answers, masks): (Vec<Ciphertext>, Vec<Vec<u64>>) = packed.into_iter().unzip();
        ctx.net().send(self.peer, self.encode_answers(&plan, &answers, None)?)?;
        Ok(self.unpack(&masks, rows.len(), used, packing))
    }

    /// Key holder: [`Ole::receive_polynomials_at`] for packed answers.
    pub(super) fn receive_packed(
        &self,
        ctx: &mut Ctx,
        terms: usize,
        outputs: usize,
        used: &[usize],
        packing: AnswerPacking,
    ) -> Result<Vec<Vec<u64>>> {
        if !self.galois_sent.load(Ordering::Acquire) {
            return Err(MpcError::Invalid(
                "packed answers need this party's Galois keys: send the queries with send_polynomials_for"
                    .into(),
            ));
        }
        let plan = self.packed_plan(terms, packing)?;
        let groups = outputs.div_ceil(packing.stride);
        let form = self.answer_form(&plan, None);
        let cts = wire::recv_ciphertexts(ctx, &self.bfv, self.peer, groups, plan.response_level, form)?;
        let plain = cts
            .par_iter()
            .map(|ct| self.bfv.decrypt_coefficients(&self.sk, ct))
            .collect::<Result<Vec<Vec<u64>>>>()?;
        Ok(self.unpack(&plain, outputs, used, packing))
    }

    /// Per answer `g·s + r`, the coefficients `s^{−1}·packed_g[p − c + r]` at the read `p`.
    fn unpack(
        &self,
        packed: &[Vec<u64>],
        outputs: usize,
        used: &[usize],
        packing: AnswerPacking,
    ) -> Vec<Vec<u64>> {
        let (t, n, s, c) = (self.modulus(), self.bfv.slots(), packing.stride, packing.offset);
        // t is an odd prime, s a power of two: the inverse exists.
        let inverse = u128::from(self.bfv.plaintext_inverse(s as u64).unwrap_or(0));
        (0..outputs)
            .map(|o| {
                let (group, r) = (&packed[o / s], o % s);
                let mut poly = vec![0u64; n];
                for &p in used {
                    poly[p] = (u128::from(group[p - c + r]) * inverse % u128::from(t)) as u64;
                }
                poly
            })
            .collect()
    }
}
