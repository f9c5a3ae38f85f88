//! Verifiable full-domain evaluation `BVEval` and `Verify` (de Castro–Polychroniadou,
//! "Lightweight, Maliciously Secure Verifiable Function Secret Sharing", EUROCRYPT 2022;
//! used by Mosformer for its comparison and LUT protocols).
//!
//! Each evaluator computes, for every `x` in ascending order, with `(s, t)` its leaf values,
//! `π̃_x = H(x ‖ s) ⊕ t·cs` (4λ bits), and its proof
//!
//! `π = H'(cs ‖ d ‖ OCW ‖ π̃_0 ‖ π̃_1 ‖ … ‖ π̃_{2^d - 1})` (2λ bits; fixed-width fields, see
//! [`eval_full_verified_batch`] for a batch of keys).
//!
//! The paper chains `π ← π ⊕ H'(π ⊕ π̃_x)` from `π = cs`: a way to hash the sequence of `π̃_x`
//! with a 2λ-bit state. Hashing the whole sequence with a collision-resistant streaming hash
//! gives the guarantee the soundness argument uses (equal proofs imply, w.h.p., equal `π̃_x` at
//! every `x`) at a fraction of the cost: BLAKE3 compresses many leaves per SIMD pass instead of
//! one compression per leaf. Hashing `cs ‖ d ‖ OCW` first also binds `OCW` (see below); it is
//! hashed as it is, where an earlier version hashed it separately first (`H_0`), two
//! compressions per key that cost more than a small key's leaves.
//! The evaluators exchange their 2λ-bit proofs and accept iff `π_0 = π_1` ([`verify`],
//! constant time).
//!
//! **Completeness.** For honest keys, off the `α` path `(s_0, t_0) = (s_1, t_1)`, and at `α`
//! `t_0 ⊕ t_1 = 1` and `cs = H(α‖s_0) ⊕ H(α‖s_1)`, so both sequences of `π̃_x` agree, and so do
//! the proofs.
//!
//! **Soundness** (`H` collision- and XOR-collision-resistant, `H'` collision-resistant; `H` is
//! fixed-key AES in the ideal-permutation model, as the tree PRG is, see [`crate::prg`]; `H'`
//! is keyed BLAKE3). If the proofs agree,
//! then w.h.p. `π̃_0 = π̃_1` at every `x` and both keys carry the same `cs` and `OCW`. At an `x` with
//! `t_0 = t_1` this forces `s_0 = s_1`, hence `y_0 + y_1 = 0`; an `x` with `t_0 ≠ t_1` needs
//! `cs = H(x‖s_0) ⊕ H(x‖s_1)`, and two such `x ≠ x'` would be an XOR collision of `H`. So
//! `y_0 + y_1` is nonzero in at most one position. The value there (`β`) and the position (`α`)
//! are *not* fixed by this check: see [`one_hot_checks`](crate::one_hot_checks).
//!
//! **Privacy.** `π` is a function of values common to both parties in an honest run, so it
//! reveals nothing beyond what the other party already knows.

use subtle::ConstantTimeEq;
use veil_ring::Ring;

use crate::FssError;
use crate::MAX_FULL_DOMAIN_BITS;
use crate::eval::{Leaves, cs_words};
use crate::key::DpfKey;
use crate::prg::FixedAes;

/// The 2λ-bit proof `π_b` of [`eval_full_verified`], exchanged between the two evaluators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Proof(pub [u8; 32]);

impl Proof {
    /// The proof bytes to send to the other evaluator.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// A proof received from the other evaluator.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }
}

/// `Verify(π_0, π_1)`: accepts iff the two proofs are equal, compared in constant time.
pub fn verify(p0: &Proof, p1: &Proof) -> bool {
    p0.0.ct_eq(&p1.0).into()
}

/// The streaming hash `H': {0,1}^* → {0,1}^{2λ}`, keyed BLAKE3 with a key derived from a
/// context string (the leaf hash `H` is fixed-key AES, [`crate::prg`]).
pub(crate) struct VdpfHash {
    step: [u8; 32],
}

impl VdpfHash {
    /// The hash key, derived once per process.
    pub(crate) fn get() -> &'static Self {
        static KEYS: std::sync::OnceLock<VdpfHash> = std::sync::OnceLock::new();
        KEYS.get_or_init(|| Self { step: blake3::derive_key("veil-fss v2 VDPF proof hash H'", b"") })
    }
}

/// [`eval_full_verified`] of a batch of keys with one proof over the batch. The keys go by
/// domain (ascending; in batch order within a domain) in passes of up to `PASS_LEAVES` (4096)
/// leaves, each pass's trees expanded together (`Leaves::expand_batch`), and
///
/// `π_b = H'(h(k_1) ‖ … ‖ h(k_m) ‖ π̃(k_1) ‖ … ‖ π̃(k_m) ‖ h(k_{m+1}) ‖ …)`,
///
/// pass after pass, with `h(k) = cs ‖ d ‖ OCW` (fixed widths: `cs` 64 bytes, `d` one 16-byte
/// word, `OCW` its ring encoding padded to whole words). Both evaluators order and cut the
/// batch the same way (that depends only on the domains, which the caller fixes), so the input is
/// parsed one way only. The batch proofs agree exactly when every key's `cs`, `OCW` and `π̃`
/// agree between the two evaluators (a mismatch anywhere changes the hashed input; equal
/// proofs from different inputs are a collision of `H'`), so comparing one batch proof is the
/// check of every key. The input goes to the streaming hash in pieces of at least 1 MiB:
/// long enough for BLAKE3 to compress its 1 KiB chunks side by side (SIMD). The pieces are
/// gathered in a buffer each thread keeps from batch to batch.
///
/// The tables come back one after the other in batch order, key `i`'s `2^{d_i}` entries after
/// those of the keys before it (one allocation for the batch, not one per key).
///
/// # Errors
/// As [`eval_full_verified`], for the first key that fails.
pub fn eval_full_verified_batch<R: Ring>(b: u8, keys: &[DpfKey<R>]) -> Result<(Vec<R>, Proof), FssError> {
    if b > 1 {
        return Err(FssError::InvalidParty(b));
    }
    if let Some(key) = keys.iter().find(|k| k.party != b) {
        return Err(FssError::PartyMismatch { key: key.party, requested: b });
    }
    if let Some(key) = keys.iter().find(|k| k.domain_bits > MAX_FULL_DOMAIN_BITS) {
        return Err(FssError::DomainTooLargeForFullEval { bits: key.domain_bits, max: MAX_FULL_DOMAIN_BITS });
    }
    let hash = VdpfHash::get();
    let aes = FixedAes::get();
    // Key `i`'s table at `starts[i]`: the batch's tables one after the other, in batch order.
    let mut starts = Vec::with_capacity(keys.len());
    let mut total = 0usize;
    for key in keys {
        starts.push(total);
        total += 1usize << key.domain_bits;
    }
    let mut tables = vec![R::ZERO; total];
    let mut leaves = Leaves::default();
    let mut proof = blake3::Hasher::new_keyed(&hash.step);
    // Keys by domain (ascending), in batch order within a domain.
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| keys[i].domain_bits);
    PROOF_INPUT.with_borrow_mut(|buffer| {
        buffer.clear();
        for run in order.chunk_by(|&a, &c| keys[a].domain_bits == keys[c].domain_bits) {
            let per_pass = (PASS_LEAVES >> keys[run[0]].domain_bits).max(1);
            for pass in run.chunks(per_pass) {
                let pass_keys: Vec<&DpfKey<R>> = pass.iter().map(|&i| &keys[i]).collect();
                leaves.expand_batch(&pass_keys, aes)?;
                for key in &pass_keys {
                    header(key, buffer);
                }
                leaves.pi_tildes(aes, &pass_keys, buffer);
                let pass_starts: Vec<usize> = pass.iter().map(|&i| starts[i]).collect();
                leaves.outputs_into(&pass_keys, aes, &mut tables, &pass_starts);
                if buffer.len() >= PROOF_FEED_WORDS {
                    // Whole 1 KiB chunks (64 words) only: the rest waits, so no chunk is split
                    // between pieces.
                    let whole = buffer.len() / 64 * 64;
                    update_words(&mut proof, &buffer[..whole]);
                    buffer.drain(..whole);
                }
            }
        }
        update_words(&mut proof, buffer);
        // A key over a large domain can grow the buffer far past a piece; do not keep that.
        if buffer.capacity() > 4 * PROOF_FEED_WORDS {
            *buffer = Vec::new();
        }
        Ok::<(), FssError>(())
    })?;
    Ok((tables, Proof(*proof.finalize().as_bytes())))
}

/// Leaves expanded together in one pass of [`eval_full_verified_batch`] (keys over small
/// domains are grouped up to this many leaves; a larger key is a pass of its own).
const PASS_LEAVES: usize = 1 << 12;

/// Words of proof input [`eval_full_verified_batch`] gathers before it updates the hash (1 MiB).
const PROOF_FEED_WORDS: usize = 1 << 16;

thread_local! {
    /// [`eval_full_verified_batch`]'s proof input, kept by each thread between batches.
    static PROOF_INPUT: std::cell::RefCell<Vec<u128>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Appends `h(k) = cs ‖ d ‖ OCW` as words.
fn header<R: Ring>(key: &DpfKey<R>, out: &mut Vec<u128>) {
    out.extend(cs_words(key));
    out.push(u128::from(key.domain_bits));
    for word in 0..R::BYTES.div_ceil(16) {
        // Bytes `16·word ..` of the encoding, zero-padded.
        let mut bytes = [0u8; 16];
        if R::BYTES <= 16 {
            key.ocw.write_le(&mut bytes[..R::BYTES]);
        } else {
            let mut all = vec![0u8; R::BYTES];
            key.ocw.write_le(&mut all);
            let part = &all[16 * word..R::BYTES.min(16 * word + 16)];
            bytes[..part.len()].copy_from_slice(part);
        }
        out.push(u128::from_le_bytes(bytes));
    }
}

/// Hashes words as their little-endian bytes (on a little-endian machine, the words' memory
/// itself; elsewhere a copy in that order, so both evaluators hash the same bytes whatever
/// their machines).
fn update_words(h: &mut blake3::Hasher, words: &[u128]) {
    if cfg!(target_endian = "little") {
        h.update(bytemuck::cast_slice(words));
    } else {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        h.update(&bytes);
    }
}

/// `BVEval(b, k_b, {0, …, 2^d − 1})`: party `b`'s shares of the whole truth table (as
/// [`eval_full`](crate::eval_full)) together with its proof `π_b`.
///
/// The two evaluators exchange proofs and call [`verify`]; an honest pair always verifies, and a
/// pair whose outputs sum to a vector with two or more nonzero entries is rejected except with
/// negligible probability. Callers that need `β = 1` and a specific `α` must also run
/// [`one_hot_checks`](crate::one_hot_checks).
///
/// # Errors
/// [`FssError::InvalidParty`] if `b > 1`, [`FssError::PartyMismatch`] if `b` is not the key's
/// party, [`FssError::DomainTooLargeForFullEval`] as for [`eval_full`](crate::eval_full).
pub fn eval_full_verified<R: Ring>(b: u8, key: &DpfKey<R>) -> Result<(Vec<R>, Proof), FssError> {
    eval_full_verified_batch(b, core::slice::from_ref(key))
}
