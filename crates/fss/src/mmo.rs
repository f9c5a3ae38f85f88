//! Fixed-key AES-128 in the Matyas–Meyer–Oseas mode, `MMO(x) = AES_K(x) ⊕ x`, over many blocks
//! at once: the one primitive the tree, `Convert` and the leaf hash are made of ([`crate::prg`]).
//!
//! A full-domain expansion is a few long runs of independent blocks, so the backend that
//! keeps the most blocks in flight wins: with VAES and AVX-512, four blocks per instruction and
//! sixteen in flight; with AES-NI, eight blocks in flight; otherwise the `aes` crate (which
//! picks AES-NI or a constant-time software AES itself). All three compute the same function
//! (tested against the `aes` crate); the hardware paths are constant time as AES-NI is.
//!
//! Blocks are `u128` read little-endian, the byte order of `u128::to_le_bytes`, so a block's
//! bytes are those the `aes` crate would encrypt. The round keys are expanded once, with the
//! `aes` crate's own schedule checked against the hardware one in the tests.
#![allow(unsafe_code, reason = "AES-NI and VAES intrinsics; every call is guarded by a feature check")]

use aes::Aes128;
use aes::cipher::{BlockEncrypt, KeyInit, generic_array::GenericArray};

/// Which implementation a [`Mmo`] runs on this processor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code, reason = "the hardware paths are x86-64 only"))]
enum Backend {
    /// VAES with AVX-512: four blocks per instruction.
    Vaes,
    /// AES-NI: one block per instruction, eight in flight.
    AesNi,
    /// The `aes` crate.
    Portable,
}

fn backend() -> Backend {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("aes") && std::arch::is_x86_feature_detected!("sse2") {
            if std::arch::is_x86_feature_detected!("vaes") && std::arch::is_x86_feature_detected!("avx512f") {
                return Backend::Vaes;
            }
            return Backend::AesNi;
        }
    }
    Backend::Portable
}

/// `MMO` under one fixed key.
pub(crate) struct Mmo {
    cipher: Aes128,
    /// The eleven round keys, little-endian.
    round_keys: [u128; 11],
    backend: Backend,
}

impl Mmo {
    /// Expands `key` for every backend.
    pub(crate) fn new(key: [u8; 16]) -> Self {
        Self { cipher: Aes128::new(&key.into()), round_keys: expand_key(key), backend: backend() }
    }

    /// `blocks[i] ← AES_K(blocks[i]) ⊕ blocks[i]` for every block.
    pub(crate) fn hash_in_place(&self, blocks: &mut [u128]) {
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Backend::Vaes` is chosen only where the processor has VAES, AVX-512 F,
            // AES-NI and SSE2 (`backend`).
            Backend::Vaes => unsafe { x86::mmo_vaes(&self.round_keys, blocks) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Backend::AesNi` is chosen only where the processor has AES-NI and SSE2.
            Backend::AesNi => unsafe { x86::mmo_aesni(&self.round_keys, blocks) },
            _ => self.portable(blocks),
        }
    }

    /// `MMO(x)` of one block.
    pub(crate) fn hash(&self, x: u128) -> u128 {
        let mut b = [x];
        self.hash_in_place(&mut b);
        b[0]
    }

    fn portable(&self, blocks: &mut [u128]) {
        for chunk in blocks.chunks_mut(64) {
            let mut bs: Vec<GenericArray<u8, aes::cipher::consts::U16>> =
                chunk.iter().map(|x| GenericArray::from(x.to_le_bytes())).collect();
            self.cipher.encrypt_blocks(&mut bs);
            for (x, b) in chunk.iter_mut().zip(&bs) {
                *x ^= u128::from_le_bytes((*b).into());
            }
        }
    }
}

/// The AES-128 key schedule (FIPS 197 §5.2), round key `i` as a little-endian `u128`.
fn expand_key(key: [u8; 16]) -> [u128; 11] {
    const RCON: [u8; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];
    let mut w = [[0u8; 4]; 44];
    for (i, word) in w.iter_mut().take(4).enumerate() {
        word.copy_from_slice(&key[4 * i..4 * i + 4]);
    }
    for i in 4..44 {
        let mut t = w[i - 1];
        if i % 4 == 0 {
            t.rotate_left(1);
            t = t.map(sbox);
            t[0] ^= RCON[i / 4 - 1];
        }
        for (b, p) in t.iter_mut().zip(w[i - 4]) {
            *b ^= p;
        }
        w[i] = t;
    }
    let mut out = [0u128; 11];
    for (r, k) in out.iter_mut().enumerate() {
        let mut bytes = [0u8; 16];
        for j in 0..4 {
            bytes[4 * j..4 * j + 4].copy_from_slice(&w[4 * r + j]);
        }
        *k = u128::from_le_bytes(bytes);
    }
    out
}

/// The AES S-box, computed (multiplicative inverse in GF(2^8), then the affine map): used only
/// by the key schedule, on public key bytes.
fn sbox(x: u8) -> u8 {
    let mul = |mut a: u8, mut b: u8| {
        let mut p = 0u8;
        while b != 0 {
            if b & 1 == 1 {
                p ^= a;
            }
            let hi = a & 0x80;
            a <<= 1;
            if hi != 0 {
                a ^= 0x1b;
            }
            b >>= 1;
        }
        p
    };
    // x^254 = x^{-1} (0 for 0).
    let mut inv = 1u8;
    for _ in 0..254 {
        inv = mul(inv, x);
    }
    let inv = if x == 0 { 0 } else { inv };
    inv ^ inv.rotate_left(1) ^ inv.rotate_left(2) ^ inv.rotate_left(3) ^ inv.rotate_left(4) ^ 0x63
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128i, __m512i, _mm_aesenc_si128, _mm_aesenclast_si128, _mm_loadu_si128, _mm_storeu_si128,
        _mm_xor_si128, _mm512_aesenc_epi128, _mm512_aesenclast_epi128, _mm512_broadcast_i32x4,
        _mm512_loadu_si512, _mm512_storeu_si512, _mm512_xor_si512,
    };

    /// Blocks per AES-NI pass.
    const NI_LANES: usize = 8;
    /// 512-bit registers per VAES pass (four blocks each).
    const VAES_REGS: usize = 4;

    #[target_feature(enable = "aes,sse2")]
    #[inline]
    fn keys128(round_keys: &[u128; 11]) -> [__m128i; 11] {
        let p = round_keys.as_ptr().cast::<__m128i>();
        // SAFETY: load `i < 11` reads the 16 bytes of `round_keys[i]` (unaligned load).
        core::array::from_fn(|i| unsafe { _mm_loadu_si128(p.add(i)) })
    }

    /// One pass of `MMO` over the `$lanes` registers at `$p` (a pointer to that many, read and
    /// written unaligned): load, the ten rounds under `$rk` with the registers interleaved, the
    /// feed-forward, store. `$load` … `$last` are the register width's intrinsics; the caller
    /// supplies the `unsafe` context and the target features.
    macro_rules! mmo_pass {
        ($p:expr, $lanes:expr, $rk:expr, $load:ident, $store:ident, $xor:ident, $enc:ident, $last:ident) => {{
            let p = $p;
            let mut x = [$load(p); $lanes];
            for (i, v) in x.iter_mut().enumerate().skip(1) {
                *v = $load(p.add(i));
            }
            let input = x;
            for v in &mut x {
                *v = $xor(*v, $rk[0]);
            }
            for k in &$rk[1..10] {
                for v in &mut x {
                    *v = $enc(*v, *k);
                }
            }
            for (i, v) in x.iter().enumerate() {
                $store(p.add(i), $xor($last(*v, $rk[10]), input[i]));
            }
        }};
    }

    /// AES-NI, eight blocks in flight, then one at a time.
    #[target_feature(enable = "aes,sse2")]
    pub(super) fn mmo_aesni(round_keys: &[u128; 11], blocks: &mut [u128]) {
        let rk = keys128(round_keys);
        // `mmo_pass!` with the 128-bit intrinsics, for the full passes and the tail alike.
        macro_rules! ni_pass {
            ($p:expr, $lanes:expr) => {
                mmo_pass!(
                    $p,
                    $lanes,
                    rk,
                    _mm_loadu_si128,
                    _mm_storeu_si128,
                    _mm_xor_si128,
                    _mm_aesenc_si128,
                    _mm_aesenclast_si128
                )
            };
        }
        let mut chunks = blocks.chunks_exact_mut(NI_LANES);
        for chunk in &mut chunks {
            // SAFETY: the chunk holds `NI_LANES` blocks of 16 bytes; unaligned loads and stores
            // within it.
            unsafe { ni_pass!(chunk.as_mut_ptr().cast::<__m128i>(), NI_LANES) }
        }
        for b in chunks.into_remainder() {
            // SAFETY: one 16-byte block, unaligned load and store.
            unsafe { ni_pass!((b as *mut u128).cast::<__m128i>(), 1) }
        }
    }

    /// VAES, sixteen blocks in flight (four registers of four), the rest by AES-NI.
    #[target_feature(enable = "aes,sse2,avx512f,vaes")]
    pub(super) fn mmo_vaes(round_keys: &[u128; 11], blocks: &mut [u128]) {
        let rk128 = keys128(round_keys);
        let rk: [__m512i; 11] = core::array::from_fn(|i| _mm512_broadcast_i32x4(rk128[i]));
        let mut chunks = blocks.chunks_exact_mut(4 * VAES_REGS);
        for chunk in &mut chunks {
            // SAFETY: the chunk holds `4·VAES_REGS` blocks, 64 bytes per register; unaligned
            // loads and stores within it.
            unsafe {
                let p = chunk.as_mut_ptr().cast::<__m512i>();
                mmo_pass!(
                    p,
                    VAES_REGS,
                    rk,
                    _mm512_loadu_si512,
                    _mm512_storeu_si512,
                    _mm512_xor_si512,
                    _mm512_aesenc_epi128,
                    _mm512_aesenclast_epi128
                );
            }
        }
        mmo_aesni(round_keys, chunks.into_remainder());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(key: [u8; 16], x: u128) -> u128 {
        let cipher = Aes128::new(&key.into());
        let mut b = GenericArray::from(x.to_le_bytes());
        cipher.encrypt_block(&mut b);
        u128::from_le_bytes(b.into()) ^ x
    }

    #[test]
    fn key_schedule_matches_fips_197() {
        // FIPS 197 Appendix A.1: key 2b7e1516 28aed2a6 abf71588 09cf4f3c, last round key
        // d014f9a8 c9ee2589 e13f0cc8 b6630ca6.
        let key =
            [0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c];
        let last =
            [0xd0, 0x14, 0xf9, 0xa8, 0xc9, 0xee, 0x25, 0x89, 0xe1, 0x3f, 0x0c, 0xc8, 0xb6, 0x63, 0x0c, 0xa6];
        assert_eq!(expand_key(key)[10], u128::from_le_bytes(last));
        assert_eq!(sbox(0), 0x63);
        assert_eq!(sbox(0x53), 0xed);
    }

    #[test]
    fn every_backend_matches_the_aes_crate_at_every_length() {
        let key = *b"veil-fss:test-K\0";
        let mmo = Mmo::new(key);
        let inputs: Vec<u128> = (0..71u128)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834) ^ (i << 3))
            .collect();
        let want: Vec<u128> = inputs.iter().map(|&x| reference(key, x)).collect();
        let mut backends = vec![Backend::Portable, backend()];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("aes") {
            backends.push(Backend::AesNi);
        }
        for b in backends {
            let m = Mmo { backend: b, ..Mmo::new(key) };
            for len in [0, 1, 7, 8, 15, 16, 17, 33, 71] {
                let mut blocks = inputs[..len].to_vec();
                m.hash_in_place(&mut blocks);
                assert_eq!(blocks, want[..len], "{b:?}, {len} blocks");
            }
        }
        assert_eq!(mmo.hash(inputs[5]), want[5]);
    }
}
