//! The `mm` family: 2-party, semi-honest secure computation by modulus conversion and mixed-mode
//! protocols ("Secure Two-Party ML through Modulus Conversion and Mixed-Mode Protocols"):
//! non-linear work on shares of Z_2^ℓ with Ferret OT (`veil-twopc`), products on shares of Z_p
//! with BFV (`veil-he`), and cheap conversions between the two.
//!
//! - [`clear`]: the family's fixed-point arithmetic in the clear, with the ranges it needs.
//! - [`convert`]: the positive-wrap protocol Π_wrap+ (Fig. 3) and the heuristic conversions
//!   between any two moduli it gives (Eq. (1), Fig. 4, §III-B/C).
//! - [`family`]: the family behind `veil-mpc`'s capability traits, for the secure executor.
//! - [`exp`]: constant-round base-2 exponentiation, one OLE per value (Fig. 8).
//! - [`gbdt`]: gradient-boosted trees trained on vertically partitioned data, and private
//!   prediction (Squirrel's protocol with M&M's changes).
//! - [`layers`]: fully connected and convolution layers on fixed-point ring shares, by
//!   coefficient encoding over Z_p with the truncation folded into the way back.
//! - [`mul`]: products of shares across rings of different widths through the Z_p OLE, the
//!   truncation folded into the way back (§V-B).
//! - [`oppe`]: piecewise polynomials with comparisons on the ring, powers on the field and one
//!   delayed truncation (Fig. 13), GeLU and sigmoid with the paper's coefficients.
//! - [`products`]: elementwise and matrix products on fixed-point shares, local lifts of
//!   operands one party knows.
//! - [`recip`]: reciprocal and reciprocal square root by normalisation and Newton steps.
//! - [`transformer`]: GeLU, softmax and LayerNorm.
//! - [`trunc`]: approximate truncation over any modulus (Theorem 1) and `Z_p → Z_2^ℓ` with a
//!   free truncation (Fig. 7).
//!
//! **Security**: semi-honest, as the Δ-OTs and BFV underneath; the conversions are exact on
//! inputs within their stated range (the "add L" heuristic), which callers must keep.

pub mod clear;
pub mod convert;
pub mod exp;
pub mod family;
pub mod gbdt;
pub mod layers;
pub mod mul;
pub mod oppe;
pub mod products;
pub mod recip;
pub mod transformer;
pub mod trunc;
