//! Symmetric cryptographic primitives for Veil's MPC protocols.
//!
//! This crate provides the small set of symmetric tools every Veil protocol
//! needs, with one vetted implementation each:
//!
//! * [`Prg`]: a pseudorandom generator, AES-128 in counter mode, used for
//!   correlated randomness (pairwise-shared seeds), masks and share generation.
//! * [`Prf`]: a pseudorandom function `F_k(x) = AES_k(x)` on 128-bit blocks.
//! * [`Hasher`], [`hash`], [`Digest`]: BLAKE3 with domain separation, for
//!   consistency checks and transcript hashing.
//! * [`commit`] / [`verify_commitment`]: hash-based commitments.
//! * [`combine_seeds`]: combining coin-toss contributions into a joint seed.
//!
//! # Example
//!
//! ```
//! use veil_crypto::{Domain, Prg, Seed, SessionId, combine_seeds, commit, verify_commitment};
//!
//! let mut os = rand::rngs::OsRng;
//! let session = SessionId::from_rng(&mut os);
//! // Coin toss: each party commits to a seed, then all open (in party order).
//! let mine = Seed::from_rng(&mut os);
//! let (c, o) = commit(&mut os, mine.as_bytes());
//! verify_commitment(&c, &o, mine.as_bytes()).expect("honest opening");
//! let joint = combine_seeds("example", &[mine, Seed::from_rng(&mut os)]);
//! // Derive an independent stream per purpose and counter.
//! let mut prg = Prg::derive(&joint, &Domain::new(session, "masks", 0));
//! let mut masks = vec![0u64; 1024];
//! prg.fill_u64(&mut masks);
//! ```
//!
//! # Why these building blocks
//!
//! AES comes from the RustCrypto [`aes`] crate. It is well maintained and
//! widely reviewed, detects AES-NI at run time (falling back to a
//! constant-time bitsliced software implementation when the CPU lacks it), and
//! keeps its `unsafe` intrinsics inside that crate. With AES-NI every AES call
//! is constant time; no table lookups depend on key or data. The `aes` 0.8
//! line pipelines 8 blocks through AES-NI and has no VAES path; the 0.9 line's
//! VAES backend measured slower than 0.8's AES-NI one in Veil's counter mode
//! (its 64-block batches are built through generic arrays). So the PRG's bulk
//! keystream takes a VAES path of its own where the processor has VAES and
//! AVX-512 (`vaes`, the one module here with `unsafe` intrinsics, each call
//! behind a feature check): 16 blocks in flight instead of 8, checked block by
//! block against the `aes` crate; on two Zen 4 cores the sign checks of
//! aegis's verification draw about 650 MB of it for LeNet at batch 30.
//! Hashing uses the official [`blake3`] crate; safe `u64`-to-byte views
//! use `zerocopy`.
//!
//! # Security assumptions
//!
//! * AES-128 is a pseudorandom permutation (hence a PRF for fewer than about
//!   2^64 queries per key), which makes [`Prg`] and [`Prf`] secure.
//! * BLAKE3 behaves as a random oracle / collision-resistant hash. Key
//!   derivation, commitments and coin tossing rely on this.
//! * Every derivation binds the seed, the [`SessionId`], a purpose string and
//!   a counter with an unambiguous (length-prefixed) encoding, so distinct
//!   [`Domain`]s give independent keys. Callers must never reuse the same
//!   seed and domain for two different uses.
//! * Secrets ([`Seed`], keys, buffered keystream) are zeroized on drop and
//!   their `Debug` output never shows them. Zeroization is best effort: Rust
//!   may leave copies after moves.
//! * Nothing here is secure against an attacker who can read process memory.

mod cointoss;
mod commit;
mod ctr;
mod error;
mod hash;
mod kdf;
mod prf;
mod prg;
mod seed;
mod vaes;

pub use cointoss::combine_seeds;
pub use commit::{
    Commitment, Opening, commit, commit_in_session, verify_commitment, verify_commitment_in_session,
};
pub use error::CryptoError;
pub use hash::{Digest, Hasher, hash};
pub use prf::Prf;
pub use prg::Prg;
pub use seed::{Domain, Seed, SessionId};
