//! Veil's 2-party toolkit: the non-linear protocols of the 2-party families (`mm`, `blb`)
//! over oblivious transfer, for two semi-honest parties.
//!
//! Shares are additive over Z_2^ℓ (`u64` words, ℓ ≤ 64; B2A and the multiplexer also over any
//! Z_M) or Boolean (`bool`, XOR). Every protocol takes the session's [`TwoParty`] (a COT
//! engine each way: Ferret by default, [`veil_ot`]) and the party's [`veil_mpc::Ctx`], and runs
//! on batches.
//!
//! | module | protocols |
//! |---|---|
//! | [`share`] | input sharing, opening |
//! | [`cost`] | declared bytes and messages of every protocol |
//! | [`bits`] | AND triples from random OT (plain and correlated), AND gates |
//! | [`millionaire`] | `1{x < y}` for private `x`, `y` (CrypTFlow2, m = 4, M&M's triples) |
//! | [`compare`] | MSB, DReLU, wrap bit, `x < y` on shares |
//! | [`convert`] | B2A, Boolean × arithmetic multiplexer, signed and unsigned extension |
//! | [`trunc`] | exact truncation, and M&M's one-bit-error truncation for bounded values |
//! | [`nonlinear`] | ReLU, row maxima, lookup tables by 1-of-N OT |
//! | [`product`] | products of shares by bit-decomposed Δ-OT (Gilboa) |
//! | [`prep`] | OT as a preprocessing source: pairwise COTs, ahead or on demand |
//! | [`family`] | all of it behind `veil-mpc`'s capability traits over Z_2^64 ([`TwoPc`]) |
//!
//! **Security model**: semi-honest, two parties, as the families that use it. The OT engines
//! underneath are semi-honest (Ferret, IKNP) or secure against a malicious receiver (KOS).

pub mod bits;
pub mod compare;
pub mod convert;
pub mod cost;
pub mod family;
pub mod millionaire;
pub mod nonlinear;
pub mod prep;
pub mod product;
pub mod ring;
pub mod share;
pub mod trunc;

mod session;
mod wire;

pub use family::TwoPc;
pub use session::{Engine, TwoParty};
