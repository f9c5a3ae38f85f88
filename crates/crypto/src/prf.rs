//! Pseudorandom function `F_k(x) = AES_k(x)` on 128-bit blocks.
//!
//! Inputs are encoded big-endian: [`Prf::eval`] on `x: u128` encrypts
//! `x.to_be_bytes()`, so the FIPS-197 test vector plaintext
//! `00112233...eeff` is the integer `0x00112233_44556677_8899aabb_ccddeeff`.
//!
//! # Security assumptions
//!
//! AES-128 is a PRP, hence a PRF up to the switching bound `q^2 / 2^129` for
//! `q` queries; truncation ([`Prf::eval_u64`]) preserves PRF security.
//! Keys come from [`crate::Seed`] via domain-separated derivation (a PRF key
//! derived for a domain is independent of the [`crate::Prg`] key derived
//! for the same domain). The key schedule is zeroized on drop.

use aes::Aes128Enc;
use aes::cipher::consts::U16;
use aes::cipher::inout::InOutBuf;
use aes::cipher::{BlockEncrypt, KeyInit};

use crate::kdf::{KeyKind, derive_key};
use crate::{Domain, Seed};

/// A PRF `F_k(x) = AES_k(x)` on 128-bit blocks, keyed by a seed or a
/// derived key.
#[derive(Clone)]
pub struct Prf {
    cipher: Aes128Enc,
}

impl Prf {
    /// A PRF keyed by the seed directly (no domain separation); mainly for
    /// known-answer tests and single-purpose seeds.
    pub fn new(seed: &Seed) -> Self {
        Prf { cipher: Aes128Enc::new(seed.as_bytes().into()) }
    }

    /// A PRF keyed by `H(seed, session, purpose, counter)`; independent of
    /// [`crate::Prg::derive`] with the same arguments.
    pub fn derive(seed: &Seed, domain: &Domain<'_>) -> Self {
        let key = derive_key(KeyKind::Prf, seed, domain);
        Prf { cipher: Aes128Enc::new(key.as_ref().into()) }
    }

    /// `AES_k(block)` on raw bytes.
    #[inline]
    pub fn eval_block(&self, block: &[u8; 16]) -> [u8; 16] {
        let mut b = (*block).into();
        self.cipher.encrypt_block(&mut b);
        b.into()
    }

    /// `AES_k(x)` with `x` encoded as 16 big-endian bytes.
    #[inline]
    pub fn eval(&self, x: u128) -> [u8; 16] {
        self.eval_block(&x.to_be_bytes())
    }

    /// A 64-bit PRF on a pair of 64-bit inputs: the first 8 bytes
    /// (little-endian) of `AES_k(a || b)`, with `a || b` big-endian.
    #[inline]
    pub fn eval_u64(&self, a: u64, b: u64) -> u64 {
        let out = self.eval((u128::from(a) << 64) | u128::from(b));
        let mut le = [0u8; 8];
        le.copy_from_slice(&out[..8]);
        u64::from_le_bytes(le)
    }

    /// Evaluates the PRF on every block in place (batched, pipelined AES).
    pub fn eval_blocks_in_place(&self, blocks: &mut [[u8; 16]]) {
        let (chunks, _tail) = InOutBuf::from(blocks.as_flattened_mut()).into_chunks::<U16>();
        self.cipher.encrypt_blocks_inout(chunks);
    }
}

impl core::fmt::Debug for Prf {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Prf { key: <redacted> }")
    }
}
