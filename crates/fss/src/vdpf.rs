//! Verifiable full-domain evaluation `BVEval` and `Verify` (de Castro–Polychroniadou,
//! "Lightweight, Maliciously Secure Verifiable Function Secret Sharing", EUROCRYPT 2022;
//! used by Mosformer for its comparison and LUT protocols).
//!
//! Each evaluator computes, for every `x` in ascending order, with `(s, t)` its leaf values,
//! `π̃_x = H(x ‖ s) ⊕ t·cs` (4λ bits), and its proof
//!
//! `π = H'(H_0(cs ‖ OCW ‖ d) ‖ π̃_0 ‖ π̃_1 ‖ … ‖ π̃_{2^d - 1})` (2λ bits).
//!
//! The paper chains `π ← π ⊕ H'(π ⊕ π̃_x)` from `π = cs`: a way to hash the sequence of `π̃_x`
//! with a 2λ-bit state. Hashing the whole sequence with a collision-resistant streaming hash
//! gives the guarantee the soundness argument uses (equal proofs imply, w.h.p., equal `π̃_x` at
//! every `x`) at a fraction of the cost: BLAKE3 compresses many leaves per SIMD pass instead of
//! one compression per leaf. Starting from `H_0(cs ‖ OCW ‖ d)` also binds `OCW` (see below).
//! The evaluators exchange their 2λ-bit proofs and accept iff `π_0 = π_1` ([`verify`],
//! constant time).
//!
//! **Completeness.** For honest keys, off the `α` path `(s_0, t_0) = (s_1, t_1)`, and at `α`
//! `t_0 ⊕ t_1 = 1` and `cs = H(α‖s_0) ⊕ H(α‖s_1)`, so both sequences of `π̃_x` agree, and so do
//! the proofs.
//!
//! **Soundness** (`H` collision- and XOR-collision-resistant, `H'`, `H_0` collision-resistant;
//! `H` is fixed-key AES in the ideal-permutation model, as the tree PRG is, see
//! [`crate::prg`]; `H'` and `H_0` are keyed BLAKE3 with distinct keys). If the proofs agree,
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
use crate::eval::Leaves;
use crate::key::{CS_BYTES, DpfKey};
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

/// The streaming hash `H': {0,1}^* → {0,1}^{2λ}` and the initialisation hash `H_0`, as keyed
/// BLAKE3 with keys derived from distinct context strings (the leaf hash `H` is fixed-key AES,
/// [`FixedAes::leaf_hashes`]).
pub(crate) struct VdpfHash {
    step: [u8; 32],
    init: [u8; 32],
}

impl VdpfHash {
    /// The hash keys, derived once per process (six compressions that every key generation
    /// and expansion would otherwise repeat).
    pub(crate) fn get() -> &'static Self {
        static KEYS: std::sync::OnceLock<VdpfHash> = std::sync::OnceLock::new();
        KEYS.get_or_init(|| Self {
            step: blake3::derive_key("veil-fss v1 VDPF proof hash H'", b""),
            init: blake3::derive_key("veil-fss v1 VDPF proof init H_0", b""),
        })
    }

    /// `H_0(cs ‖ OCW ‖ d)`, the initial proof state.
    fn init<R: Ring>(&self, key: &DpfKey<R>) -> [u8; 32] {
        let mut ocw = vec![0u8; R::BYTES];
        key.ocw.write_le(&mut ocw);
        let mut h = blake3::Hasher::new_keyed(&self.init);
        h.update(&key.cs).update(&ocw).update(&key.domain_bits.to_le_bytes());
        *h.finalize().as_bytes()
    }

    /// The streaming hash `H'`, started with `H_0(…)`; feed it every `π̃_x` in order.
    fn proof_hasher<R: Ring>(&self, key: &DpfKey<R>) -> blake3::Hasher {
        let mut h = blake3::Hasher::new_keyed(&self.step);
        h.update(&self.init(key));
        h
    }
}

/// [`eval_full_verified`] of a batch of keys with one proof over the batch:
/// `π_b = H'(H_0(k_1) ‖ π̃(k_1) ‖ … ‖ H_0(k_K) ‖ π̃(k_K))`. The two evaluators' batch proofs
/// agree exactly when every key's proof would (a mismatch in any key changes the hashed input;
/// equal proofs from different inputs are a collision of `H'`), so comparing one batch proof is
/// the check of every key. The input goes to the streaming hash in pieces of at least
/// `PROOF_FEED_BYTES` (1 MiB): long enough for BLAKE3 to compress its 1 KiB chunks side by side
/// (SIMD), where a proof per key hashes a few chunks at a time. The pieces are gathered in a
/// buffer each thread keeps from batch to batch: a fresh buffer of the whole batch's leaves was
/// grown, copied and page-faulted anew for every batch, most of the page faults of a long run.
///
/// # Errors
/// As [`eval_full_verified`], for the first key that fails.
pub fn eval_full_verified_batch<R: Ring>(
    b: u8,
    keys: &[DpfKey<R>],
) -> Result<(Vec<Vec<R>>, Proof), FssError> {
    let hash = VdpfHash::get();
    let aes = FixedAes::get();
    let mut tables = Vec::with_capacity(keys.len());
    let mut leaves = Leaves::default();
    let mut proof = blake3::Hasher::new_keyed(&hash.step);
    PROOF_INPUT.with_borrow_mut(|buffer| {
        buffer.clear();
        for key in keys {
            if b > 1 {
                return Err(FssError::InvalidParty(b));
            }
            if b != key.party {
                return Err(FssError::PartyMismatch { key: key.party, requested: b });
            }
            leaves.expand(key, aes)?;
            let init = hash.init(key);
            buffer.extend(init.chunks_exact(16).map(|c| {
                let mut w = [0u8; 16];
                w.copy_from_slice(c);
                u128::from_le_bytes(w)
            }));
            leaves.pi_tildes(aes, &cs_words(key), buffer);
            tables.push(leaves.outputs(key, aes));
            if buffer.len() >= PROOF_FEED_WORDS {
                // Whole 1 KiB chunks (64 words) only: the rest waits, so no chunk is split
                // between pieces.
                let whole = buffer.len() / 64 * 64;
                update_words(&mut proof, &buffer[..whole]);
                buffer.drain(..whole);
            }
        }
        update_words(&mut proof, buffer);
        // A key over a large domain can grow the buffer far past a piece; do not keep that.
        if buffer.capacity() > 4 * PROOF_FEED_WORDS {
            *buffer = Vec::new();
        }
        Ok(())
    })?;
    Ok((tables, Proof(*proof.finalize().as_bytes())))
}

/// Words of proof input [`eval_full_verified_batch`] gathers before it updates the hash (1 MiB).
const PROOF_FEED_WORDS: usize = 1 << 16;

thread_local! {
    /// [`eval_full_verified_batch`]'s proof input, kept by each thread between batches.
    static PROOF_INPUT: std::cell::RefCell<Vec<u128>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The check string as four little-endian words.
fn cs_words<R: Ring>(key: &DpfKey<R>) -> [u128; 4] {
    let mut w = [0u128; 4];
    for (word, chunk) in w.iter_mut().zip(key.cs.chunks_exact(16)) {
        let mut b = [0u8; 16];
        b.copy_from_slice(chunk);
        *word = u128::from_le_bytes(b);
    }
    w
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
    if b > 1 {
        return Err(FssError::InvalidParty(b));
    }
    if b != key.party {
        return Err(FssError::PartyMismatch { key: key.party, requested: b });
    }
    let aes = FixedAes::get();
    let mut leaves = Leaves::default();
    leaves.expand(key, aes)?;
    let hash = VdpfHash::get();
    // All π̃_x in one buffer, hashed in one call (BLAKE3 then compresses its 1 KiB chunks side
    // by side with SIMD).
    let mut pi_tildes = Vec::with_capacity(leaves.nodes.len() * CS_BYTES / 16);
    leaves.pi_tildes(aes, &cs_words(key), &mut pi_tildes);
    let mut proof = hash.proof_hasher(key);
    update_words(&mut proof, &pi_tildes);
    let pi = *proof.finalize().as_bytes();
    Ok((leaves.outputs(key, aes), Proof(pi)))
}
