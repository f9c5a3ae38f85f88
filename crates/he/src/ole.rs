//! The RLWE Z_p-OLE and share products over Z_p (the M&M paper §IV-B and App. C-A).
//!
//! `F_OLE`: the evaluator holds `a_0 … a_{K−1}`, the key holder `b_0 … b_{K−1}` (vectors of
//! Z_t of one length `n`); the evaluator gets a uniform `u`, the key holder `Σ_k a_k ⊙ b_k − u`.
//!
//! ```text
//! 1) key holder → evaluator:  ct_k = Enc_sk(b_k), seeded (c1 travels as 32 bytes)
//! 2) evaluator → key holder:  ct' = Σ_k ct_k ⊠ a_k ⊞ Enc_pk(−u) ⊞ flooding, switched down,
//!                             the low bits of its coefficients dropped
//! 3) key holder:  Dec_sk(ct') = Σ_k a_k ⊙ b_k − u;   evaluator: u
//! ```
//!
//! The evaluator encrypts `−u` (not `u`), so that the two outputs add up to the product (the
//! paper's App. C-A prints `+u` on both sides). The flooding and the level of `ct'` are
//! [`crate::flood::plan`]'s. Each party has its own key pair, made and exchanged in
//! [`Ole::setup`].
//!
//! **Share products** ([`Ole::mul_shares`]): `x·y = x_0·y_0 + x_1·y_1 + (x_0·y_1 + x_1·y_0)`;
//! the cross terms are one 2-term OLE, the key holder's `b = (x_R, y_R)` against the
//! evaluator's `a = (y_E, x_E)`. The roles switch halfway (P0 evaluates the first half of the
//! ciphertexts, P1 the second), so both parties compute at once; two messages each, two rounds.
//!
//! Ciphertexts are encrypted, evaluated and decrypted in parallel (rayon), each with its own
//! ChaCha20 stream seeded from the party's generator.
//!
//! **Security**: semi-honest. The key holder learns `Σ a_k ⊙ b_k − u` and a ciphertext whose
//! `c1` is re-randomised by the public-key encryption (RLWE) and whose noise is within
//! statistical distance `2^{−40}` of the flooding alone; the evaluator sees only RLWE
//! ciphertexts.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use veil_mpc::{Ctx, MpcError, PartyId, Result};

use crate::bfv::{Bfv, Ciphertext, Compressed, Plaintext, PublicKey, SecretKey};
use crate::flood::{FloodPlan, plan};
use crate::keyfile;
use crate::pack::GaloisKeys;
use crate::preset::BfvPreset;
use crate::wire::{self, Form};

/// How values sit in a plaintext: in the SIMD slots, or as the coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Packing {
    Slots,
    Coefficients,
}

/// One party's end of the OLE: the scheme, its own secret key and the peer's public key.
#[derive(Debug)]
pub struct Ole {
    bfv: Bfv,
    sk: SecretKey,
    peer_pk: PublicKey,
    /// The peer's Galois keys, with which this party packs the answers it evaluates: received
    /// after the peer's first queries whose answers are packed.
    peer_galois: OnceLock<GaloisKeys>,
    /// Whether this party has sent its own Galois keys to the peer.
    galois_sent: AtomicBool,
    peer: PartyId,
    compress: bool,
}

mod packed;

fn rngs(ctx: &mut Ctx, count: usize) -> Vec<ChaCha20Rng> {
    (0..count)
        .map(|_| {
            let mut seed = [0u8; 32];
            ctx.rng().fill_bytes(&mut seed);
            ChaCha20Rng::from_seed(seed)
        })
        .collect()
}

fn check_operands(t: u64, n: usize, operands: &[&[u64]]) -> Result<()> {
    if operands.is_empty() {
        return Err(MpcError::Invalid("an OLE of no operands".into()));
    }
    for (k, op) in operands.iter().enumerate() {
        if op.len() != n {
            return Err(MpcError::Invalid(format!("operand {k} has {} values, expected {n}", op.len())));
        }
        if let Some(v) = op.iter().find(|&&v| v >= t) {
            return Err(MpcError::Invalid(format!("operand {k} holds {v}, not an element of Z_{t}")));
        }
    }
    Ok(())
}

impl Ole {
    /// Makes this party's key pair and swaps public keys with `peer` (one message each way).
    /// Galois keys ([`crate::pack`]) follow the first queries whose answers are packed.
    pub fn setup(ctx: &mut Ctx, peer: PartyId, preset: BfvPreset) -> Result<Self> {
        let bfv = Bfv::new(preset)?;
        let mut rng = rngs(ctx, 1).remove(0);
        let (sk, pk) = bfv.keygen(&mut rng)?;
        ctx.net().send(peer, wire::encode_public_key(&pk))?;
        let bytes = ctx.recv_at_most(peer, wire::public_key_bytes(&bfv)?)?;
        let peer_pk = wire::decode_public_key(&bfv, peer, &bytes)?;
        Ok(Ole::with_keys(bfv, sk, peer_pk, peer))
    }

    fn with_keys(bfv: Bfv, sk: SecretKey, peer_pk: PublicKey, peer: PartyId) -> Self {
        let (peer_galois, galois_sent) = (OnceLock::new(), AtomicBool::new(false));
        Ole { bfv, sk, peer_pk, peer_galois, galois_sent, peer, compress: true }
    }

    /// This end's keys (own secret key, the peer's public key) as a key file's bytes, to skip
    /// setup in the later sessions of a deployment ([`crate::keyfile`]).
    pub fn export_keys(&self) -> Vec<u8> {
        let sk = self.bfv.secret_key_bytes(&self.sk);
        let pk = wire::encode_public_key(&self.peer_pk);
        let galois = self.peer_galois.get().map(GaloisKeys::encode).unwrap_or_default();
        let sent = [u8::from(self.galois_sent.load(Ordering::Acquire))];
        keyfile::seal(keyfile::Kind::BfvOle, self.bfv.preset().name(), &[&sk, &pk, &galois, &sent])
    }

    /// An end from a key file of [`Ole::export_keys`], talking to `peer`.
    pub fn import_keys(bytes: &[u8], peer: PartyId, preset: BfvPreset) -> Result<Self> {
        let bfv = Bfv::new(preset)?;
        let sections = keyfile::open(bytes, keyfile::Kind::BfvOle, preset.name(), 4)?;
        let sk = bfv.secret_key_from_bytes(sections[0])?;
        let peer_pk = wire::decode_public_key(&bfv, peer, sections[1]).map_err(keyfile::section_error)?;
        let ole = Ole::with_keys(bfv, sk, peer_pk, peer);
        if !sections[2].is_empty() {
            let keys = GaloisKeys::decode(&ole.bfv, peer, sections[2]).map_err(keyfile::section_error)?;
            ole.peer_galois.get_or_init(|| keys);
        }
        match sections[3] {
            [0] => {}
            [1] => ole.galois_sent.store(true, Ordering::Release),
            _ => return Err(MpcError::Invalid("key file: the Galois keys' flag is not 0 or 1".into())),
        }
        Ok(ole)
    }

    /// Whether answers drop the low bits of their coefficients (on by default; both parties
    /// must agree). Off, the answer's noise is the flooding itself, which the statistical
    /// tests observe.
    pub fn with_compressed_answers(mut self, on: bool) -> Self {
        self.compress = on;
        self
    }

    /// How answers travel: compressed where the plan leaves bits to drop, with `c0` at the
    /// positions the reader decodes (`used`, coefficient packing) if given.
    fn answer_form<'a>(&self, plan: &FloodPlan, used: Option<&'a [usize]>) -> Form<'a> {
        match (plan.dropped_bits, used) {
            (Some((k0, k1)), Some(used)) if self.compress => Form::Sparse(k0, k1, used),
            (Some((k0, k1)), None) if self.compress => Form::Compressed(k0, k1),
            _ => Form::Full,
        }
    }

    fn encode_answers(
        &self,
        plan: &FloodPlan,
        answers: &[Ciphertext],
        used: Option<&[usize]>,
    ) -> Result<Vec<u8>> {
        let (k0, k1, used) = match self.answer_form(plan, used) {
            Form::Compressed(k0, k1) => (k0, k1, None),
            Form::Sparse(k0, k1, used) => (k0, k1, Some(used)),
            _ => return Ok(wire::encode_ciphertexts(answers)),
        };
        let cs = answers
            .par_iter()
            .map(|a| {
                let mut c = self.bfv.compress(a, k0, k1)?;
                if let Some(used) = used {
                    c.c0 = used.iter().map(|&j| c.c0.get(j).copied().unwrap_or(0)).collect();
                }
                Ok(c)
            })
            .collect::<Result<Vec<Compressed>>>()?;
        wire::encode_compressed(&self.bfv, &cs)
    }

    /// The scheme.
    pub fn bfv(&self) -> &Bfv {
        &self.bfv
    }

    /// The plaintext modulus `t`.
    pub fn modulus(&self) -> u64 {
        self.bfv.plaintext_modulus()
    }

    fn ciphertexts(&self, n: usize) -> usize {
        n.div_ceil(self.bfv.slots())
    }

    /// The flooding plan of a `products`-term response.
    pub fn plan(&self, products: usize) -> Result<FloodPlan> {
        plan(&self.bfv, products)
    }

    fn encode(&self, packing: Packing, values: &[u64]) -> Result<Plaintext> {
        match packing {
            Packing::Slots => self.bfv.encode(values),
            Packing::Coefficients => self.bfv.encode_coefficients(values),
        }
    }

    /// Encrypts each vector under this party's key (seeded) and sends them in one message.
    fn send_encrypted(&self, ctx: &mut Ctx, packing: Packing, vectors: &[&[u64]]) -> Result<()> {
        let rngs = rngs(ctx, vectors.len());
        let cts = vectors
            .par_iter()
            .zip(rngs)
            .map(|(v, mut rng)| self.bfv.encrypt_secret(&self.sk, &self.encode(packing, v)?, 0, &mut rng))
            .collect::<Result<Vec<Ciphertext>>>()?;
        ctx.net().send(self.peer, wire::encode_ciphertexts(&cts))?;
        Ok(())
    }

    /// Receives `count` queries and answers, for each output `o`, `Σ Enc(q_i) ⊠ a` over the
    /// pairs `(i, a)` of `rows[o]`, minus a mask of `mask_lens[o]` uniform values, flooded for
    /// `terms` terms and switched; sends the answers (their `c0` at the positions `used` only,
    /// if given) and returns the masks.
    fn answer_queries(
        &self,
        ctx: &mut Ctx,
        (packing, used): (Packing, Option<&[usize]>),
        count: usize,
        rows: &[Vec<(usize, &[u64])>],
        mask_lens: &[usize],
        terms: usize,
    ) -> Result<Vec<Vec<u64>>> {
        let plan = self.plan(terms.max(1))?;
        let queries = wire::recv_ciphertexts(ctx, &self.bfv, self.peer, count, 0, Form::Seeded)?;
        let t = self.modulus();
        let mut rngs = rngs(ctx, rows.len());
        let masks: Vec<Vec<u64>> = rngs
            .iter_mut()
            .zip(mask_lens)
            .map(|(rng, &len)| (0..len).map(|_| rand::Rng::random_range(rng, 0..t)).collect())
            .collect();
        let answers = rows
            .par_iter()
            .zip(&masks)
            .zip(rngs)
            .map(|((row, mask), mut rng)| {
                let neg: Vec<u64> = mask.iter().map(|&r| (t - r) % t).collect();
                let fresh =
                    self.bfv.encrypt_public(&self.peer_pk, &self.encode(packing, &neg)?, None, &mut rng)?;
                let mut acc = self.row_sum(&queries, row, packing, &fresh)?;
                self.bfv.flood(&mut acc, plan.flood_bits, &mut rng)?;
                self.bfv.switch_to(&mut acc, plan.response_level)?;
                Ok(acc)
            })
            .collect::<Result<Vec<Ciphertext>>>()?;
        ctx.net().send(self.peer, self.encode_answers(&plan, &answers, used)?)?;
        Ok(masks)
    }

    /// `start + Σ_{(i, a) ∈ row} queries[i] ⊠ a` at the top level.
    fn row_sum(
        &self,
        queries: &[Ciphertext],
        row: &[(usize, &[u64])],
        packing: Packing,
        start: &Ciphertext,
    ) -> Result<Ciphertext> {
        let mut sum = self.bfv.product_sum(0)?;
        for &(i, a) in row {
            let op = self.bfv.operand(&self.encode(packing, a)?, 0)?;
            sum.add(&self.bfv, &queries[i], &op)?;
        }
        sum.finish(&self.bfv, start)
    }

    /// Receives `outputs` answers of `terms`-term sums and decrypts them.
    fn receive_decrypted(
        &self,
        ctx: &mut Ctx,
        packing: Packing,
        terms: usize,
        outputs: usize,
        used: Option<&[usize]>,
    ) -> Result<Vec<Vec<u64>>> {
        let cts = self.receive_ciphertexts(ctx, terms, outputs, used)?;
        cts.par_iter()
            .map(|ct| match packing {
                Packing::Slots => self.bfv.decrypt(&self.sk, ct),
                Packing::Coefficients => self.bfv.decrypt_coefficients(&self.sk, ct),
            })
            .collect()
    }

    fn receive_ciphertexts(
        &self,
        ctx: &mut Ctx,
        terms: usize,
        outputs: usize,
        used: Option<&[usize]>,
    ) -> Result<Vec<Ciphertext>> {
        let plan = self.plan(terms.max(1))?;
        wire::recv_ciphertexts(
            ctx,
            &self.bfv,
            self.peer,
            outputs,
            plan.response_level,
            self.answer_form(&plan, used),
        )
    }

    /// Key holder, step 1: sends `Enc_sk(b_k)` for every operand (`⌈n/N⌉` ciphertexts each).
    pub fn send_queries(&self, ctx: &mut Ctx, operands: &[&[u64]]) -> Result<()> {
        let n = operands.first().map_or(0, |o| o.len());
        check_operands(self.modulus(), n, operands)?;
        let slots = self.bfv.slots();
        let chunks: Vec<&[u64]> = operands.iter().flat_map(|op| op.chunks(slots)).collect();
        self.send_encrypted(ctx, Packing::Slots, &chunks)
    }

    /// Evaluator, step 2: receives the peer's queries for `operands.len()` operands of
    /// `operands[k].len()` values, answers `Σ_k ct_k ⊠ a_k − u` flooded and switched, and
    /// returns its output `u`.
    pub fn answer(&self, ctx: &mut Ctx, operands: &[&[u64]]) -> Result<Vec<u64>> {
        let n = operands.first().map_or(0, |o| o.len());
        check_operands(self.modulus(), n, operands)?;
        let (k, per, slots) = (operands.len(), self.ciphertexts(n), self.bfv.slots());
        let ranges: Vec<std::ops::Range<usize>> =
            (0..per).map(|c| c * slots..(c * slots + slots).min(n)).collect();
        let rows: Vec<Vec<(usize, &[u64])>> = ranges
            .iter()
            .enumerate()
            .map(|(c, r)| (0..k).map(|j| (j * per + c, &operands[j][r.clone()])).collect())
            .collect();
        let lens: Vec<usize> = ranges.iter().map(ExactSizeIterator::len).collect();
        Ok(self.answer_queries(ctx, (Packing::Slots, None), k * per, &rows, &lens, k)?.concat())
    }

    /// Key holder, step 3: receives and decrypts the answers to `products`-term queries of `n`
    /// values: `Σ_k a_k ⊙ b_k − u`.
    pub fn receive_answers(&self, ctx: &mut Ctx, products: usize, n: usize) -> Result<Vec<u64>> {
        let mut out =
            self.receive_decrypted(ctx, Packing::Slots, products, self.ciphertexts(n), None)?.concat();
        out.truncate(n);
        Ok(out)
    }

    /// The answer ciphertexts of step 3, checked but not decrypted.
    pub fn receive_answer_ciphertexts(
        &self,
        ctx: &mut Ctx,
        products: usize,
        n: usize,
    ) -> Result<Vec<Ciphertext>> {
        self.receive_ciphertexts(ctx, products, self.ciphertexts(n), None)
    }

    /// The noise of a ciphertext under this party's key, around what it decrypts to (tests and
    /// measurements: see [`Bfv::noise`]).
    pub fn noise(&self, ct: &Ciphertext) -> Result<Vec<i128>> {
        let values = self.bfv.decrypt(&self.sk, ct)?;
        self.bfv.noise(&self.sk, ct, &values)
    }

    /// Key holder: sends `Enc_sk(x̂)` for polynomials given by their coefficients (coefficient
    /// encoding, at most `N` each), one ciphertext per polynomial.
    pub fn send_polynomials(&self, ctx: &mut Ctx, polys: &[Vec<u64>]) -> Result<()> {
        let vectors: Vec<&[u64]> = polys.iter().map(Vec::as_slice).collect();
        self.send_encrypted(ctx, Packing::Coefficients, &vectors)
    }

    /// Key holder: [`Ole::send_polynomials`] for answers of `terms` terms to be read at `used`
    /// ([`Ole::receive_polynomials_at`]); if they will be packed and this party has not sent
    /// its Galois keys yet, the keys follow the queries (same direction, no extra round).
    pub fn send_polynomials_for(
        &self,
        ctx: &mut Ctx,
        polys: &[Vec<u64>],
        used: &[usize],
        (terms, outputs): (usize, usize),
    ) -> Result<()> {
        self.send_polynomials(ctx, polys)?;
        if self.packing(used, terms, outputs).is_some() && !self.galois_sent.load(Ordering::Acquire) {
            let mut rng = rngs(ctx, 1).remove(0);
            let keys = GaloisKeys::generate(&self.bfv, &self.sk, &mut rng)?;
            ctx.net().send(self.peer, keys.encode())?;
            self.galois_sent.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Evaluator: receives `inputs` polynomial ciphertexts and answers, for every output `o`,
    /// `Σ_i Enc(x̂_i) ⊠ ŵ_{o,i} − R_o` (terms with `weights[o][i] = None` left out), flooded and
    /// switched as [`crate::flood::plan`] says for the largest number of terms. Returns the
    /// masks `R_o` (coefficients).
    pub fn answer_polynomials(
        &self,
        ctx: &mut Ctx,
        inputs: usize,
        weights: &[Vec<Option<Vec<u64>>>],
    ) -> Result<Vec<Vec<u64>>> {
        self.answer_polynomials_at(ctx, inputs, weights, None)
    }

    /// As [`Ole::answer_polynomials`], for a key holder that reads the coefficient positions
    /// `used` only (ascending, below `N`; [`Ole::receive_polynomials_at`] with the same
    /// positions): answers whose read positions share a residue mod a power of two are packed
    /// ([`Ole::packing`], [`crate::pack`]), others travel with `c0` at those positions only;
    /// the other coefficients of the key holder's decryption are noise or 0.
    pub fn answer_polynomials_at(
        &self,
        ctx: &mut Ctx,
        inputs: usize,
        weights: &[Vec<Option<Vec<u64>>>],
        used: Option<&[usize]>,
    ) -> Result<Vec<Vec<u64>>> {
        if weights.iter().any(|row| row.len() != inputs) {
            return Err(MpcError::Invalid(format!("a weight row does not have {inputs} entries")));
        }
        let rows: Vec<Vec<(usize, &[u64])>> = weights
            .iter()
            .map(|row| row.iter().enumerate().filter_map(|(i, w)| w.as_deref().map(|w| (i, w))).collect())
            .collect();
        let terms = rows.iter().map(Vec::len).max().unwrap_or(0);
        if let Some(used) = used
            && let Some(packing) = self.packing(used, terms, rows.len())
        {
            return self.answer_packed(ctx, inputs, &rows, terms, used, packing);
        }
        let lens = vec![self.bfv.slots(); rows.len()];
        self.answer_queries(ctx, (Packing::Coefficients, used), inputs, &rows, &lens, terms)
    }

    /// Key holder: receives and decrypts the `outputs` answers of
    /// [`Ole::answer_polynomials`] whose largest sum had `terms` terms: the coefficients of
    /// `Σ_i x̂_i·ŵ_{o,i} − R_o`.
    pub fn receive_polynomials(&self, ctx: &mut Ctx, terms: usize, outputs: usize) -> Result<Vec<Vec<u64>>> {
        self.receive_decrypted(ctx, Packing::Coefficients, terms, outputs, None)
    }

    /// As [`Ole::receive_polynomials`], for answers of [`Ole::answer_polynomials_at`] with
    /// the same positions: the coefficients at `used` are right, the others noise.
    pub fn receive_polynomials_at(
        &self,
        ctx: &mut Ctx,
        terms: usize,
        outputs: usize,
        used: Option<&[usize]>,
    ) -> Result<Vec<Vec<u64>>> {
        if let Some(used) = used
            && let Some(packing) = self.packing(used, terms, outputs)
        {
            return self.receive_packed(ctx, terms, outputs, used, packing);
        }
        self.receive_decrypted(ctx, Packing::Coefficients, terms, outputs, used)
    }

    /// Shares of `x ⊙ y` over Z_t from this party's additive shares `x`, `y` (both parties call
    /// it with vectors of one length; `first` is true at P0).
    pub fn mul_shares(&self, ctx: &mut Ctx, x: &[u64], y: &[u64], first: bool) -> Result<Vec<u64>> {
        let t = self.modulus();
        check_operands(t, x.len(), &[x, y])?;
        let n = x.len();
        // P0 evaluates [0, split), P1 evaluates [split, n).
        let split = (self.ciphertexts(n).div_ceil(2) * self.bfv.slots()).min(n);
        let (mine, theirs) = if first { (0..split, split..n) } else { (split..n, 0..split) };
        let (kx, ky) = (&x[theirs.clone()], &y[theirs.clone()]);
        self.send_queries(ctx, &[kx, ky])?;
        let u = self.answer(ctx, &[&y[mine.clone()], &x[mine.clone()]])?;
        let w = self.receive_answers(ctx, 2, theirs.len())?;
        let mut cross = vec![0u64; n];
        cross[mine].copy_from_slice(&u);
        cross[theirs].copy_from_slice(&w);
        Ok(x.iter()
            .zip(y)
            .zip(cross)
            .map(|((&a, &b), c)| ((u128::from(a) * u128::from(b) + u128::from(c)) % u128::from(t)) as u64)
            .collect())
    }
}
