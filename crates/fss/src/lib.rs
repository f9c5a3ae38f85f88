//! Function secret sharing for Veil: a two-party distributed point function (DPF) and its
//! verifiable variant (VDPF), as used by Mosformer's maliciously secure comparison and
//! lookup-table protocols.
//!
//! * DPF: the BGI/BCG tree construction (Boyle–Gilboa–Ishai, CCS 2016) for point functions
//!   `f_{α,β}: {0,1}^d → G`, `f(α) = β`, `f(x) = 0` otherwise, with `λ = 128`-bit seeds and a
//!   fixed-key AES PRG. [`gen_keys`] outputs keys `(k_0, k_1)`; [`eval`] and [`eval_full`] give
//!   additive shares: `eval(k_0, x) + eval(k_1, x) = β·[x = α]`.
//! * VDPF: de Castro and Polychroniadou, "Lightweight, Maliciously Secure Verifiable Function
//!   Secret Sharing" (EUROCRYPT 2022). The keys also carry a 4λ-bit check string `cs`;
//!   [`eval_full_verified`] returns a 2λ-bit [`Proof`], and [`verify`] accepts the pair of proofs
//!   only if the two output vectors sum to a vector with at most one nonzero entry.
//! * Mosformer's extra opened checks ([`one_hot_checks`], [`check_opened`]) fix `β = 1` and tie
//!   the hot position to a secret-shared `α`.
//!
//! **Security properties.** Key privacy: each single key is computationally indistinguishable
//! from a key of any other `(α', β')` of the same domain (PRG security of fixed-key AES in the
//! ideal-permutation model). Verifiability against a malicious dealer: honest keys always verify;
//! keys whose joint output has two or more nonzero positions are rejected except with negligible
//! probability (collision and XOR-collision resistance of BLAKE3). Verification does not protect
//! the online phase: evaluators must still open values with malicious-secure opening.
//!
//! ```
//! use veil_fss::{check_opened, eval_full_verified, gen_keys, one_hot_checks, verify};
//! use veil_ring::{Ring, Z32};
//!
//! let mut rng = rand::rngs::OsRng;
//! let (k0, k1) = gen_keys(5, Z32::ONE, 4, &mut rng)?;
//! let (v0, p0) = eval_full_verified(0, &k0)?;
//! let (v1, p1) = eval_full_verified(1, &k1)?;
//! assert!(verify(&p0, &p1));
//! // [[α]] = 5 shared as 2 + 3.
//! let (t0, s0) = one_hot_checks(&v0, Z32::from_u64(2));
//! let (t1, s1) = one_hot_checks(&v1, Z32::from_u64(3));
//! check_opened(t0 + t1, s0 + s1)?;
//! # Ok::<(), veil_fss::FssError>(())
//! ```

mod checks;
mod error;
mod eval;
mod key;
mod keygen;
mod mmo;
mod prg;
#[cfg(test)]
mod tamper_tests;
mod vdpf;

pub use checks::{check_opened, one_hot_checks};
pub use error::FssError;
pub use eval::{eval, eval_full};
pub use key::{CS_BYTES, DpfKey, KEY_VERSION, key_bytes, paper_key_bits};
pub use keygen::{KeyPair, gen_keys, gen_keys_batch};
pub use vdpf::{Proof, eval_full_verified, eval_full_verified_batch, verify};

/// Largest supported domain size `d` (bits) for [`gen_keys`], [`eval`] and key decoding.
pub const MAX_DOMAIN_BITS: u32 = 63;

/// Largest `d` for [`eval_full`] and [`eval_full_verified`]: the expansion keeps about
/// `2^d · 40` bytes of seeds and blocks in memory (10 GiB at `d = 28`).
pub const MAX_FULL_DOMAIN_BITS: u32 = 28;
