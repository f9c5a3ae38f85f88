//! Lattice homomorphic encryption for Veil's 2-party families.
//!
//! - [`bfv`]: BFV with SIMD slots over a prime plaintext modulus `p` (`p ≡ 1 mod 2N`), the
//!   scheme behind the `mm` family's Z_p products (the M&M paper, "Secure Two-Party ML through
//!   Modulus Conversion and Mixed-Mode Protocols", §II-E): parameter presets for N = 4096
//!   and 8192 after the paper's Table VII, encryption under a public or secret key, plaintext
//!   addition and ciphertext × plaintext products.
//!
//! The arithmetic is the `fhe` crate's (fhe.rs, MIT: RNS-BFV over an NTT polynomial layer,
//! `fhe-math`); this crate fixes the parameters, checks every input, and adds what the
//! families need on top.
//!
//! **Security**: the presets keep `log2 q` within the homomorphic-encryption standard's bound
//! for 128-bit security at their ring degree (ternary secrets): 109 bits at N = 4096, 218 at
//! N = 8192. Semi-honest use: a party decrypts only what the protocol sends it.

pub mod bfv;

pub use bfv::{Bfv, BfvPreset};
