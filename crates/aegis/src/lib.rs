//! The `aegis` family: three servers computing CNN layers on masked sharings, after *Aegis: A
//! Lightning Fast Privacy-preserving Machine Learning Platform against Malicious Adversaries*
//! (Lu, Zhang, Li, Ren). The protocol boxes lost from the paper's text are rebuilt as in the
//! implementation notes; every sign is in the convention `m = x + r`.
//!
//! **Sharing** ([`share`]): `⟨x⟩ = ([r_x], m_x)` over `Z_2^l` (`l = 64` with 16 fractional bits
//! for models; any `l ≤ 64` for tests): P0 holds both additive shares of the mask, P1 and P2
//! hold the masked value `m_x = x + r_x` and one mask share each. Masks and the Z_p bit shares
//! come from pairwise seeds; P0 deals the correlated values (`Γ`, cross terms, bits).
//!
//! **Protocols in this crate today**: input sharing by a server, reconstruction to all or to
//! one party with hash-checked redundancy, multiplication and inner products (l bits offline,
//! 2l bits and 1 round online), truncation (0 online), sign-bit extraction in 2 online rounds
//! with `x·sign(x)` folded in ([`sign`]), ReLU, `f(v) = v·sign(v)`, two-way max and max trees.
//!
//! **Security model and status.** The online protocols are the paper's: private against one
//! malicious server, correct only up to additive errors, which the paper's final verification
//! (batch multiplication verification over a Galois ring, sign-bit verification with MACs and
//! dual execution) detects. That verification is not implemented yet, so today the family is
//! **semi-honest**, with one malicious-security fix already in place: P1 and P2 keep a running
//! digest of every value they hold jointly (masked inputs, `m_z`, values P0 sends both) and
//! [`Aegis::check`] aborts if the digests differ (notes §7.14). Fixes in place: truncation keeps
//! the input mask uniform and deals `[r_x ≫ t]` fresh (no bits of the mask leak to P1, notes
//! §7.18); the comparison appends 0 to `a` and 1 to `b` (§7.4); P0 never sees an unmasked bit
//! (it sees only the permuted, masked lists).

pub mod mul;
pub mod prime;
pub mod share;
pub mod sign;
pub mod trunc;

pub use share::{Aegis, Masked, Pair};
