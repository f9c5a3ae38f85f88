//! Pseudorandom generator: AES-128 in counter mode.
//!
//! The keystream is `AES_k(0) || AES_k(1) || AES_k(2) || ...`, where block
//! `i` encrypts the 128-bit counter `i` encoded little-endian. The key `k` is
//! either the seed itself ([`Prg::new`]) or derived from the seed and a
//! [`Domain`] ([`Prg::derive`]). Every output method draws from this one byte
//! stream in order: `next_u64` takes the next 8 bytes (little-endian), and
//! `fill_u64` gives exactly what repeated `next_u64` calls would.
//!
//! # Performance
//!
//! Keystream comes from [`crate::ctr`]: whole passes of 16 blocks through
//! VAES where the CPU has VAES and AVX-512 ([`crate::vaes`]), the rest through
//! the `aes` crate's block backend (the engine behind `encrypt_blocks`),
//! which pipelines 8 counter blocks at a time through AES-NI when the CPU has
//! it (both detected at run time). Small requests are served from a 64-block buffer;
//! large `fill_bytes` / `fill_u64` requests are encrypted directly into the
//! caller's memory (`fill_u64` views its `u64` slice as bytes through the
//! safe `zerocopy` API, so no `unsafe` is needed here).
//!
//! # Security assumptions
//!
//! AES-128 is a PRP, so the stream is indistinguishable from random for far
//! more output than any inference run produces (the PRP/PRF switching bound
//! is about `q^2 / 2^129` for `q` blocks). Counter values never repeat under a
//! key: a fresh key is derived per domain, and the counter is 128 bits wide.
//! The key schedules (the `aes` crate's via its `zeroize` feature, the VAES
//! path's by its own `Drop`) and the buffered keystream are zeroized on drop. `Prg` deliberately does not implement
//! `Clone`, so a stream cannot be duplicated by accident.

use aes::Aes128Enc;
use aes::cipher::KeyInit;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use zerocopy::IntoBytes;
use zeroize::Zeroize;

use crate::ctr::keystream_into;
use crate::kdf::{KeyKind, derive_key};
use crate::vaes::VaesKeys;
use crate::{Domain, Seed};

/// Number of AES blocks in the internal buffer.
const BUF_BLOCKS: usize = 64;
const BUF_BYTES: usize = BUF_BLOCKS * 16;

/// AES-128 in counter mode, keyed by a seed or a derived key.
///
/// Implements [`RngCore`], [`CryptoRng`] and [`SeedableRng`] (from a [`Seed`]).
pub struct Prg {
    cipher: Aes128Enc,
    /// The round keys for the VAES path, where the processor has it ([`crate::vaes`]).
    vaes: Option<VaesKeys>,
    /// Index of the next block to generate.
    counter: u128,
    /// Buffered keystream; bytes `pos..` are unread.
    buf: [u8; BUF_BYTES],
    pos: usize,
}

impl Prg {
    fn from_key(key: &[u8; 16]) -> Self {
        Prg {
            cipher: Aes128Enc::new(key.into()),
            vaes: VaesKeys::new(key),
            counter: 0,
            buf: [0u8; BUF_BYTES],
            pos: BUF_BYTES,
        }
    }

    /// A PRG keyed by the seed directly (no domain separation).
    ///
    /// Use this only for seeds that serve a single purpose; otherwise use
    /// [`Prg::derive`].
    pub fn new(seed: &Seed) -> Self {
        Self::from_key(seed.as_bytes())
    }

    /// A PRG keyed by `H(seed, session, purpose, counter)` (BLAKE3, with an
    /// unambiguous length-prefixed encoding). Distinct domains give
    /// independent streams.
    pub fn derive(seed: &Seed, domain: &Domain<'_>) -> Self {
        let key = derive_key(KeyKind::Prg, seed, domain);
        Self::from_key(&key)
    }

    fn refill(&mut self) {
        keystream_into(&self.cipher, self.vaes.as_ref(), &mut self.counter, &mut self.buf);
        self.pos = 0;
    }

    /// Fills `out` with the next `out.len()` bytes of the stream.
    pub fn fill_bytes(&mut self, out: &mut [u8]) {
        // 1. Drain the buffer.
        let take = (BUF_BYTES - self.pos).min(out.len());
        out[..take].copy_from_slice(&self.buf[self.pos..self.pos + take]);
        self.pos += take;
        let rest = &mut out[take..];
        if rest.is_empty() {
            return;
        }
        // 2. The buffer is empty now. Small requests refill it (a full,
        //    pipelined batch); large ones get whole blocks encrypted straight
        //    into `out`, and only a trailing partial block uses the buffer.
        let tail = if rest.len() < BUF_BYTES {
            rest
        } else {
            let whole = rest.len() - rest.len() % 16;
            let (direct, tail) = rest.split_at_mut(whole);
            keystream_into(&self.cipher, self.vaes.as_ref(), &mut self.counter, direct);
            tail
        };
        if !tail.is_empty() {
            self.refill();
            tail.copy_from_slice(&self.buf[..tail.len()]);
            self.pos = tail.len();
        }
    }

    /// The next 8 bytes of the stream as a little-endian `u64`.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut bytes = [0u8; 8];
        if let Some(src) = self.buf.get(self.pos..self.pos + 8) {
            bytes.copy_from_slice(src);
            self.pos += 8;
        } else {
            self.fill_bytes(&mut bytes);
        }
        u64::from_le_bytes(bytes)
    }

    /// The next 4 bytes of the stream as a little-endian `u32`.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let mut bytes = [0u8; 4];
        if let Some(src) = self.buf.get(self.pos..self.pos + 4) {
            bytes.copy_from_slice(src);
            self.pos += 4;
        } else {
            self.fill_bytes(&mut bytes);
        }
        u32::from_le_bytes(bytes)
    }

    /// The next 16 bytes of the stream.
    #[inline]
    pub fn next_block(&mut self) -> [u8; 16] {
        let mut block = [0u8; 16];
        self.fill_bytes(&mut block);
        block
    }

    /// Fills `out` with uniformly random words; identical to calling
    /// [`Prg::next_u64`] `out.len()` times, but encrypts many AES blocks per
    /// batch directly into `out`.
    pub fn fill_u64(&mut self, out: &mut [u64]) {
        // Generate straight into the words' memory (safe byte view from
        // `zerocopy`), then fix the byte order on big-endian targets.
        self.fill_bytes(out.as_mut_bytes());
        if cfg!(target_endian = "big") {
            for word in out.iter_mut() {
                *word = u64::from_le(*word);
            }
        }
    }

    /// Number of AES blocks generated so far, including blocks still
    /// buffered and not yet returned (not secret; for accounting and tests).
    pub fn blocks_generated(&self) -> u128 {
        self.counter
    }
}

impl Drop for Prg {
    fn drop(&mut self) {
        self.buf.zeroize();
    }
}

impl core::fmt::Debug for Prg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Prg").field("blocks_generated", &self.counter).finish_non_exhaustive()
    }
}

impl RngCore for Prg {
    fn next_u32(&mut self) -> u32 {
        Prg::next_u32(self)
    }

    fn next_u64(&mut self) -> u64 {
        Prg::next_u64(self)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        Prg::fill_bytes(self, dest);
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        Prg::fill_bytes(self, dest);
        Ok(())
    }
}

impl CryptoRng for Prg {}

impl SeedableRng for Prg {
    type Seed = Seed;

    fn from_seed(seed: Seed) -> Self {
        Prg::new(&seed)
    }
}
