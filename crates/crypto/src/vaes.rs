//! AES-128 counter-mode keystream with VAES and AVX-512, where the processor has them: sixteen
//! blocks in flight, four per 512-bit register, where the `aes` crate's AES-NI backend keeps
//! eight (one per 128-bit register). The keystream is the one of [`crate::ctr`], block `i`
//! being `AES_k(i)` with `i` little-endian, and the tests check it block by block against the
//! `aes` crate.
//!
//! The round keys are expanded with AES-NI's key-generation assist (constant time, as the
//! rounds are) and zeroized on drop.
#![allow(unsafe_code, reason = "AES-NI and VAES intrinsics; every call is guarded by a feature check")]

use zeroize::Zeroize;

/// Blocks per pass: four registers of four.
pub(crate) const PASS_BLOCKS: usize = 16;

/// The expanded key of one [`crate::Prg`] for the VAES path.
pub(crate) struct VaesKeys {
    /// The eleven round keys, little-endian.
    keys: [u128; 11],
}

impl Drop for VaesKeys {
    fn drop(&mut self) {
        self.keys.zeroize();
    }
}

impl VaesKeys {
    /// The round keys of `key`, or `None` where the processor lacks AES-NI, VAES or AVX-512 F.
    pub(crate) fn new(key: &[u8; 16]) -> Option<VaesKeys> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("aes")
            && std::arch::is_x86_feature_detected!("vaes")
            && std::arch::is_x86_feature_detected!("avx512f")
        {
            // SAFETY: the processor has AES-NI (checked just above).
            return Some(VaesKeys { keys: unsafe { x86::expand(key) } });
        }
        let _ = key;
        None
    }

    /// Writes the keystream blocks `counter, counter + 1, …` into the longest prefix of `out`
    /// made of whole passes of [`PASS_BLOCKS`] blocks and advances `counter` past them; returns
    /// the bytes written (the caller writes the rest). Writes nothing where the counter's low
    /// word would wrap within the prefix (the caller's path carries into the high word).
    pub(crate) fn keystream(&self, counter: &mut u128, out: &mut [u8]) -> usize {
        let blocks = out.len() / 16 / PASS_BLOCKS * PASS_BLOCKS;
        if blocks == 0 || (*counter as u64).checked_add(blocks as u64).is_none() {
            return 0;
        }
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `VaesKeys` exists only where the processor has AES-NI, VAES and AVX-512 F
            // (`VaesKeys::new`); the low word does not wrap (checked above).
            unsafe { x86::keystream(&self.keys, *counter, &mut out[..16 * blocks]) };
            *counter += blocks as u128;
            16 * blocks
        }
        #[cfg(not(target_arch = "x86_64"))]
        0
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128i, __m512i, _mm_aeskeygenassist_si128, _mm_loadu_si128, _mm_shuffle_epi32, _mm_slli_si128,
        _mm_storeu_si128, _mm_xor_si128, _mm512_add_epi64, _mm512_aesenc_epi128, _mm512_aesenclast_epi128,
        _mm512_broadcast_i32x4, _mm512_set_epi64, _mm512_storeu_si512, _mm512_xor_si512,
    };

    use super::PASS_BLOCKS;

    /// One step of the AES-128 key schedule (FIPS 197 §5.2) from the last round key `k`.
    #[target_feature(enable = "aes,sse2")]
    fn next_key<const RCON: i32>(k: __m128i) -> __m128i {
        let t = _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<RCON>(k));
        let k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        let k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        let k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        _mm_xor_si128(k, t)
    }

    /// The eleven round keys of `key`, little-endian.
    #[target_feature(enable = "aes,sse2")]
    pub(super) fn expand(key: &[u8; 16]) -> [u128; 11] {
        // SAFETY: a 16-byte unaligned load of the key.
        let mut k = unsafe { _mm_loadu_si128(key.as_ptr().cast()) };
        let mut out = [0u128; 11];
        let mut store = |i: usize, k: __m128i| {
            let mut bytes = [0u8; 16];
            // SAFETY: a 16-byte unaligned store into `bytes`.
            unsafe { _mm_storeu_si128(bytes.as_mut_ptr().cast(), k) };
            out[i] = u128::from_le_bytes(bytes);
            bytes.fill(0);
        };
        store(0, k);
        macro_rules! rounds {
            ($($i:expr => $rcon:expr),*) => {$(
                k = next_key::<$rcon>(k);
                store($i, k);
            )*};
        }
        rounds!(1 => 0x01, 2 => 0x02, 3 => 0x04, 4 => 0x08, 5 => 0x10, 6 => 0x20, 7 => 0x40, 8 => 0x80,
            9 => 0x1b, 10 => 0x36);
        out
    }

    /// `AES_k(counter + i)` for every block `i` of `out` (a whole number of passes), the low
    /// word of the counter not wrapping (checked by the caller).
    #[target_feature(enable = "aes,sse2,avx512f,vaes")]
    pub(super) fn keystream(round_keys: &[u128; 11], counter: u128, out: &mut [u8]) {
        let p = round_keys.as_ptr().cast::<__m128i>();
        // SAFETY: load `i < 11` reads the 16 bytes of `round_keys[i]` (unaligned load).
        let rk: [__m512i; 11] =
            core::array::from_fn(|i| _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(p.add(i)) }));
        let (lo, hi) = (counter as u64 as i64, (counter >> 64) as u64 as i64);
        // Register `r` of a pass holds blocks `4r … 4r + 3` (low word first in each lane).
        let mut next: [__m512i; 4] = core::array::from_fn(|r| {
            let b = lo.wrapping_add(4 * r as i64);
            _mm512_set_epi64(hi, b.wrapping_add(3), hi, b.wrapping_add(2), hi, b.wrapping_add(1), hi, b)
        });
        let step = _mm512_set_epi64(
            0,
            PASS_BLOCKS as i64,
            0,
            PASS_BLOCKS as i64,
            0,
            PASS_BLOCKS as i64,
            0,
            PASS_BLOCKS as i64,
        );
        for pass in out.chunks_exact_mut(16 * PASS_BLOCKS) {
            let mut x: [__m512i; 4] = core::array::from_fn(|r| _mm512_xor_si512(next[r], rk[0]));
            for k in &rk[1..10] {
                for v in &mut x {
                    *v = _mm512_aesenc_epi128(*v, *k);
                }
            }
            for (r, v) in x.iter().enumerate() {
                // SAFETY: register `r` covers bytes `64r .. 64r + 64` of the 256-byte pass
                // (unaligned store).
                unsafe {
                    _mm512_storeu_si512(
                        pass.as_mut_ptr().add(64 * r).cast(),
                        _mm512_aesenclast_epi128(*v, rk[10]),
                    )
                };
            }
            for n in &mut next {
                *n = _mm512_add_epi64(*n, step);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::Aes128Enc;
    use aes::cipher::{BlockEncrypt, KeyInit};

    /// The VAES keystream is AES of the little-endian counters, block by block, for several
    /// keys, lengths and starting counters (a high word set among them); a counter whose low
    /// word would wrap is left to the caller.
    #[test]
    fn the_vaes_keystream_is_aes_of_the_counters() {
        for key in [[0u8; 16], [0xffu8; 16], std::array::from_fn(|i| (i as u8).wrapping_mul(37))] {
            let Some(vaes) = VaesKeys::new(&key) else {
                eprintln!("skipped: no VAES with AVX-512 on this processor");
                return;
            };
            let cipher = Aes128Enc::new(&key.into());
            for (start, bytes) in
                [(0u128, 256), (5, 16 * 40), (u128::from(u64::MAX - 100) | 7 << 64, 512), (3, 100)]
            {
                let mut counter = start;
                let mut out = vec![0u8; bytes];
                let written = vaes.keystream(&mut counter, &mut out);
                assert_eq!(written, bytes / 256 * 256);
                assert_eq!(counter, start + (written / 16) as u128);
                for (i, block) in out[..written].chunks_exact(16).enumerate() {
                    let mut b = (start + i as u128).to_le_bytes().into();
                    cipher.encrypt_block(&mut b);
                    assert_eq!(block, b.as_slice(), "block {i} from {start}");
                }
            }
            let mut counter = u128::from(u64::MAX - 3);
            assert_eq!(vaes.keystream(&mut counter, &mut [0u8; 256]), 0, "the low word would wrap");
            assert_eq!(counter, u128::from(u64::MAX - 3));
        }
    }
}
