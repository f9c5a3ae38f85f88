//! n-party additive secret sharing over a ring, with Beaver multiplication: the `additive`
//! family, which runs CNNs among any number `n ≥ 2` of computing parties.
//!
//! A secret `x` is held as shares `x_0, ..., x_{n-1}` with `x = Σ x_i`. This is the first
//! protocol through Veil's whole stack (ring, tensor, PRG and seeds, network, accounting,
//! harness, CLI); the protocol families of later work reuse its pieces.
//!
//! # Security model
//! Semi-honest parties, dishonest majority (any n-1 may collude), *given* honestly generated
//! triples. The only triple source here is [`InsecureDealer`], which derives every party's
//! triples from a seed all parties know: anyone can reconstruct every triple, so this crate
//! is **not secure** with it. It exists to exercise the stack; real preprocessing (OT- or
//! HE-based) comes with the families that need it.
//!
//! # Operations and their cost (per party, `m` elements, `n` parties, `B` bytes per element)
//! | op | bytes sent | messages | rounds |
//! |---|---|---|---|
//! | `share_input` | 0 | 0 | 0 |
//! | `reveal_all` | (n-1)·m·B | n-1 | 1 |
//! | `reveal_to(t)` | m·B at parties ≠ t, 0 at t | 1 / 0 | 1 |
//! | `add`, `sub`, `add_public`, `mul_public` | 0 | 0 | 0 |
//! | `mul` (Beaver) | 2·(n-1)·m·B | n-1 | 1 |
//! | `truncate` (Z_2^64, `fixed`) | (n-1)·8m | n-1 | 1 |
//! | `matmul` `[m,k]×[k,p]` (`fixed`) | (n-1)·8(mk+kp) | n-1 | 1 |
//! | `drelu` (`sign`) | (n-1)·105m | 8(n-1) | 8 |
//! | `relu` (`sign`) | (n-1)·121m | 9(n-1) | 9 |
//!
//! # Models
//! Over `Z_2^64` with 16 fractional bits the family implements `veil-mpc`'s `FixedPoint`,
//! `NonLinear`, `Layout` and `Owners` (no transformer layers), so the secure executor runs
//! CNNs on it, with the data and model owners outside the computing parties or among them
//! (`owners`). Its correlations come from a [`Correlations`] source; the only one today is
//! the [`InsecureDealer`]; `plan` says what each call draws (`veil-mpc`'s preprocessing
//! interface).

mod dealer;
mod fixed;
mod owners;
mod plan;
mod protocol;
mod sign;

pub use dealer::{
    Correlations, InsecureDealer, LOW_63, MatrixTriple, PREFIX_STEPS, SignMaterial, TRUNC_MASK_BOUND,
    TripleSource, Triples, TruncPairs,
};
pub use protocol::{Additive, Share};
