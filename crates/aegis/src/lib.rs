//! The `aegis` family: three servers computing CNN layers on masked sharings, after *Aegis: A
//! Lightning Fast Privacy-preserving Machine Learning Platform against Malicious Adversaries*
//! (Lu, Zhang, Li, Ren). The protocol boxes lost from the paper's text are rebuilt from its
//! surrounding text and proofs; every sign is in the convention `m = x + r`.
//!
//! **Sharing** (`share`): `⟨x⟩ = ([r_x], m_x)` over `Z_2^l` (`l = 64` with 16 fractional bits
//! for models; any `l ≤ 64` for tests): P0 holds both additive shares of the mask, P1 and P2
//! hold the masked value `m_x = x + r_x` and one mask share each. Masks and the Z_p bit shares
//! come from pairwise seeds; P0 deals the correlated values (`Γ`, cross terms, bits).
//!
//! **Protocols in this crate**: input sharing by a server, reconstruction to all or to
//! one party with hash-checked redundancy, multiplication and inner products (l bits offline,
//! 2l bits and 1 round online), truncation (0 online), sign-bit extraction in 2 online rounds
//! with `x·sign(x)` folded in ([`sign`]), ReLU, `f(v) = v·sign(v)`, two-way max and max trees.
//! `plan` says what P0 deals for each call (`veil-mpc`'s preprocessing interface).
//! `family` puts them behind `veil-mpc`'s capability traits (shaped shares, fixed point with
//! the malicious truncation), so the model runtime runs CNNs on the family.
//!
//! **Security model and status.** One malicious server, security with abort. The online
//! protocols are the paper's: private against one malicious server, correct only up to
//! additive errors, which the final verification in [`Aegis::check`] detects before any output
//! is released (in `Z_2^64`):
//! - that each sign bit is the sign of its input (`pos`): Π_Pos with MACs over `Z_127`
//!   under six keys, run twice with verifiers P1 and P2 (dual execution), and a batch
//!   equality test of the three parties' outputs;
//! - every multiplication, inner product and matrix product, the products a sign extraction
//!   claims (`z·z = z`, so `z` is a bit; `x·z = w`) and the equality test's claims, in one batch
//!   over the Galois ring `GR(2^64, 64)` ([`verify`]: lifting, random combination, Goyal–Song
//!   reductions without division, and a final check multiplied by a secret `α`, rebuilt so that
//!   nothing P0 deals is multiplied by the public `m_α` (the paper's is forgeable); the first
//!   reductions of the elementwise and inner products computed from their recorded shares,
//!   [`columns`]), so the whole check leaks one bit;
//! - P1 and P2 compare a digest of every value they hold jointly (masked inputs, `m_z`, the
//!   values P0 sends both), which catches P0 sending them different values.
//!
//! **Truncation**: [`Aegis::mul_trunc`] with a pair from [`Aegis::prepare_trunc_pair`] is the
//! malicious one (bit-composed masks whose XORs are verified inner products);
//! the stand-alone [`Aegis::trunc`] (P0 deals `[r_x ≫ t]`) is the semi-honest one, and a
//! corrupted P0 could shift its result. Fixes in place: truncation keeps the input mask uniform and deals `[r_x ≫ t]` fresh (no
//! bits of the mask leak to P1); the comparison appends 0 to `a` and 1 to `b`
//! (§7.4); P0 never sees an unmasked bit (it sees only permuted, masked lists); MAC checks use
//! independent coefficients per key, revealed only after the openings (§7.15), and exactly
//! uniform shares; the batch equality test hashes
//! each party's output bits into 128 bits (`⌈128/l⌉` words of `Z_2^l`, not one word: §7.16); the combination coefficients
//! and the reduction points are drawn only after the values they check are fixed, even against a
//! rushing server (`challenge`). Known
//! limitation (the paper's): at a non-`ζ` position the masked lists reveal their masked bit
//! to the list's receiver with probability about `3/(p−1)`.

mod challenge;
mod claims;
pub mod columns;
mod family;
mod final_check;
mod freivalds;
mod lists;
mod lists_simd;
mod lists_simd_avx2;
mod masked;
pub mod mul;
mod plan;
mod pos;
mod prime;
mod prime_simd;
mod reduction;
mod share;
pub mod sign;
mod subsets;
mod trunc;
pub mod verify;

pub use family::{FRAC_BITS, Shaped};
pub use reduction::Pairing;
pub use share::{Aegis, Masked, Pair};
