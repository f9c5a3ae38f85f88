//! Lattice homomorphic encryption for Veil's 2-party families.
//!
//! - [`preset`]: BFV parameter sets after the M&M paper's Table VII ("Secure Two-Party ML
//!   through Modulus Conversion and Mixed-Mode Protocols", §II-E).
//! - [`bfv`]: BFV with SIMD slots over a prime plaintext modulus `t ≡ 1 mod 2N`: keys,
//!   secret- and public-key encryption, ciphertext × plaintext, additions, modulus switching,
//!   flooding, noise measurement.
//! - [`flood`]: the flooding bound for circuit privacy, derived per preset.
//! - [`wire`]: ciphertexts and public keys on the wire, every field checked on receipt.
//! - [`keyfile`]: keys kept between the sessions of a deployment, with a digest.
//! - [`ole`]: the Z_p-OLE of the paper's §IV-B and share products over Z_p with role switching.
//! - [`linear`]: fully connected and convolution layers on shares by coefficient encoding
//!   (Cheetah's HomFC and HomConv).
//! - [`matmul`]: matrix products `X·W` on shares by coefficient encoding, rows batched.
//! - [`pack`]: answers of coefficient-encoded products packed by automorphisms (Galois keys).
//! - [`rns`]: RNS polynomials with raw access to limbs, NTT-form rescaling and automorphisms.
//! - [`ckks`]: RNS-CKKS (encoding, keys, products, rescaling, rotations, hoisting, linear
//!   algebra in spatial-first packing, wire format), the scheme of `blb`'s fused blocks.
//!
//! The polynomial arithmetic (RNS, NTT, modulus switching, RNS scaling) is `fhe-math`'s
//! (fhe.rs, MIT); this crate builds the schemes on it, fixes the parameters and checks every
//! input.
//!
//! **Security**: the presets keep `log2 q` within the homomorphic-encryption standard's bound
//! for 128-bit security at their ring degree (ternary secrets). Semi-honest parties; the
//! evaluator's operands are hidden from the key holder statistically by flooding
//! ([`flood`]) and computationally by re-randomising with a public-key encryption of zero.

pub mod bfv;
pub mod ckks;
pub mod flood;
mod ifma;
pub mod keyfile;
pub mod linear;
pub mod matmul;
pub mod ole;
pub mod pack;
pub mod preset;
pub mod rns;
pub mod wire;

pub use bfv::{Bfv, Ciphertext, Plaintext, PublicKey, SecretKey};
pub use preset::BfvPreset;
