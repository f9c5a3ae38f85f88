//! Rejection sampling of [`crate::prime::Draws`] 64 bytes at a time with AVX-512 VBMI2, where
//! the processor has it: a byte below the rejection limit becomes `offset + (b mod q)` (one
//! conditional subtraction, `q ≥ 86`), the others are dropped, and `vpcompressb` stores the
//! accepted ones in order, so the elements are exactly those, in the order, that the
//! byte-by-byte path gives (the parties agree whatever their processors). The scalar path
//! sends a 16-byte chunk with a rejected byte (1 in 4 for `Z_127^*`) byte by byte.
//!
//! With AVX2 but not VBMI2, the same conversion runs 32 bytes to a register, and the accepted
//! bytes are packed eight at a time by `pshufb` with a shuffle looked up by their 8-bit accept
//! mask ([`PACK`], 2 KiB): the same bytes in the same order.
#![allow(unsafe_code)]
#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::{
    __m128i, __m256i, _mm_loadl_epi64, _mm_shuffle_epi8, _mm_storel_epi64, _mm256_add_epi8, _mm256_and_si256,
    _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_min_epu8, _mm256_movemask_epi8,
    _mm256_set1_epi8, _mm256_storeu_si256, _mm256_sub_epi8, _mm512_add_epi8, _mm512_cmpge_epu8_mask,
    _mm512_cmplt_epu8_mask, _mm512_loadu_si512, _mm512_mask_sub_epi8, _mm512_maskz_compress_epi8,
    _mm512_set1_epi8, _mm512_storeu_si512,
};

/// Bytes converted at a time.
pub(crate) const BLOCK: usize = 64;

/// Whether the processor has AVX-512 BW and VBMI2 (`vpcompressb`).
pub(crate) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512bw") && std::arch::is_x86_feature_detected!("avx512vbmi2")
}

/// Converts whole 64-byte blocks of `src` into `out` while both have room for one (`out` at
/// least 64 bytes past what is written: a block's accepted elements are written at the end of
/// the last one's, and the rest of the 64 bytes is overwritten), and returns the bytes of `src`
/// used and the elements written; `None` (nothing done) without AVX-512 VBMI2 or AVX2. The
/// processor's features are checked once per run of blocks, not per block.
pub(crate) fn convert_run(
    src: &[u8],
    out: &mut [u8],
    q: u8,
    limit: u8,
    offset: u8,
) -> Option<(usize, usize)> {
    if available() {
        // SAFETY: the processor has the features `convert_run_vbmi2` is compiled for (checked
        // just above).
        Some(unsafe { convert_run_vbmi2(src, out, q, limit, offset) })
    } else if std::arch::is_x86_feature_detected!("avx2") {
        let (mut used, mut made) = (0, 0);
        while used + BLOCK <= src.len() && made + BLOCK <= out.len() {
            let (block, room) =
                (src[used..used + BLOCK].try_into(), (&mut out[made..made + BLOCK]).try_into());
            let (Ok(block), Ok(room)) = (block, room) else { break };
            // SAFETY: the processor has AVX2 (checked just above), the feature of `convert_avx2`.
            made += unsafe { convert_avx2(block, room, q, limit, offset) };
            used += BLOCK;
        }
        Some((used, made))
    } else {
        None
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
fn convert_run_vbmi2(src: &[u8], out: &mut [u8], q: u8, limit: u8, offset: u8) -> (usize, usize) {
    let (mut used, mut made) = (0, 0);
    while used + BLOCK <= src.len() && made + BLOCK <= out.len() {
        let (block, room) = (src[used..used + BLOCK].try_into(), (&mut out[made..made + BLOCK]).try_into());
        let (Ok(block), Ok(room)) = (block, room) else { break };
        made += convert_vbmi2(block, room, q, limit, offset);
        used += BLOCK;
    }
    (used, made)
}

/// For each 8-bit mask, the `pshufb` indices that gather the bytes of its set bits, in order,
/// to the front (the rest 0x80: zero).
const PACK: [[u8; 8]; 256] = {
    let mut t = [[0x80u8; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut bit, mut n) = (0, 0);
        while bit < 8 {
            if m >> bit & 1 == 1 {
                t[m][n] = bit as u8;
                n += 1;
            }
            bit += 1;
        }
        m += 1;
    }
    t
};

#[target_feature(enable = "avx2")]
fn convert_avx2(src: &[u8; BLOCK], out: &mut [u8; BLOCK], q: u8, limit: u8, offset: u8) -> usize {
    let mut values = [0u8; BLOCK];
    let mut accept = 0u64;
    for half in 0..2 {
        // SAFETY: bytes `32·half .. 32·half + 32` of the 64-byte `src` and `values` (unaligned).
        unsafe {
            let v = _mm256_loadu_si256(src.as_ptr().add(32 * half).cast::<__m256i>());
            // Unsigned: `b < limit` as `min(b, limit − 1) = b` (`limit ≥ q ≥ 86`), `b ≥ q` as
            // `max(b, q) = b`.
            let ok = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8((limit - 1) as i8)), v);
            let over = _mm256_cmpeq_epi8(_mm256_max_epu8(v, _mm256_set1_epi8(q as i8)), v);
            let reduced = _mm256_sub_epi8(v, _mm256_and_si256(over, _mm256_set1_epi8(q as i8)));
            let converted = _mm256_add_epi8(reduced, _mm256_set1_epi8(offset as i8));
            _mm256_storeu_si256(values.as_mut_ptr().add(32 * half).cast::<__m256i>(), converted);
            accept |= u64::from(_mm256_movemask_epi8(ok) as u32) << (32 * half);
        }
    }
    let mut n = 0;
    for group in 0..BLOCK / 8 {
        let mask = (accept >> (8 * group)) as u8;
        // At most `8·group` bytes so far, so the 8 bytes stored at `n` end within `out`.
        debug_assert!(n + 8 <= BLOCK);
        // SAFETY: 8-byte loads of `values[8·group ..]` and of a `PACK` row, and an 8-byte store
        // at `out[n ..]` with `n ≤ 8·group ≤ 56` (every pointer within its array).
        unsafe {
            let bytes = _mm_loadl_epi64(values.as_ptr().add(8 * group).cast::<__m128i>());
            let shuffle = _mm_loadl_epi64(PACK[usize::from(mask)].as_ptr().cast::<__m128i>());
            _mm_storel_epi64(
                out.as_mut_ptr().add(n.min(BLOCK - 8)).cast::<__m128i>(),
                _mm_shuffle_epi8(bytes, shuffle),
            );
        }
        n += mask.count_ones() as usize;
    }
    n
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
fn convert_vbmi2(src: &[u8; BLOCK], out: &mut [u8; BLOCK], q: u8, limit: u8, offset: u8) -> usize {
    // SAFETY: `src` is 64 bytes, loaded unaligned.
    let v = unsafe { _mm512_loadu_si512(src.as_ptr().cast()) };
    let accept = _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(limit as i8));
    let over = _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8(q as i8));
    let reduced = _mm512_mask_sub_epi8(v, over, v, _mm512_set1_epi8(q as i8));
    let values = _mm512_add_epi8(reduced, _mm512_set1_epi8(offset as i8));
    // The accepted bytes are compressed in a register and the whole register is stored: the
    // bytes past the accepted ones are zeros that the caller's next draws overwrite. (The
    // compress with a memory operand is microcoded on some processors, AMD's Zen 4 among
    // them, and took 10 % of LeNet's whole run there.)
    let packed = _mm512_maskz_compress_epi8(accept, values);
    // SAFETY: `out` is 64 bytes, stored unaligned.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), packed) };
    accept.count_ones() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 packing keeps exactly the accepted bytes, converted, in order (whichever path
    /// `convert` takes on this processor), on random blocks and the edges of every mask.
    #[test]
    fn the_avx2_packing_keeps_the_accepted_bytes_in_order() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("skipped: this processor has no AVX2");
            return;
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for trial in 0..3000 {
            let (q, offset) = [(127u8, 0u8), (126, 1), (86, 0), (251, 0), (250, 1)][trial % 5];
            let limit = ((256 / u32::from(q)) * u32::from(q)).min(255) as u8;
            let src: [u8; BLOCK] = std::array::from_fn(|i| {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                match trial % 7 {
                    0 => 255,
                    1 => [limit, limit - 1, q, q - 1, 0][i % 5],
                    _ => (state >> 56) as u8,
                }
            });
            let expected: Vec<u8> = src
                .iter()
                .filter(|&&b| b < limit)
                .map(|&b| offset + if b >= q { b - q } else { b })
                .collect();
            let mut out = [0xaa; BLOCK];
            // SAFETY: the processor has AVX2 (checked above).
            let n = unsafe { convert_avx2(&src, &mut out, q, limit, offset) };
            assert_eq!(&out[..n], &expected[..], "trial {trial}");
        }
    }

    /// A run of blocks gives the accepted bytes of every whole block it used, converted, in
    /// order, and stops where the source or the room for one more block ends.
    #[test]
    fn a_run_of_blocks_keeps_the_accepted_bytes_in_order() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for (len, room) in [(64 * 5, 64 * 5), (64 * 5 + 17, 64 * 3 + 5), (63, 200), (200, 63), (0, 64)] {
            let (q, offset, limit) = (126u8, 1u8, 252u8);
            let src: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 24) as u8
                })
                .collect();
            let mut out = vec![0xaa; room];
            let Some((used, made)) = convert_run(&src, &mut out, q, limit, offset) else {
                eprintln!("skipped: this processor has neither AVX-512 VBMI2 nor AVX2");
                return;
            };
            assert_eq!(used % BLOCK, 0);
            assert!(used + BLOCK > src.len() || made + BLOCK > room, "stopped early: {used} of {len}");
            let expected: Vec<u8> = src[..used]
                .iter()
                .filter(|&&b| b < limit)
                .map(|&b| offset + if b >= q { b - q } else { b })
                .collect();
            assert_eq!(&out[..made], &expected[..], "{len} bytes into {room}");
        }
    }
}
