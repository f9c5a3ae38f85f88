//! AES-128 counter-mode keystream generation (internal).
//!
//! Block `i` of the keystream is `AES_k(i)` with `i` a 128-bit counter
//! encoded little-endian. Counter blocks are produced in registers, a
//! backend-sized group at a time (8 blocks with AES-NI), and encrypted
//! straight into the output through the `aes` crate's backend interface,
//! so the output memory is written once. The `aes` crate selects AES-NI or
//! its constant-time software fallback at run time.
//!
//! # Security assumptions
//!
//! The caller never reuses a `(key, counter)` pair; [`crate::Prg`] ensures
//! this by owning the counter, which only moves forward and is 128 bits wide.

use aes::Aes128Enc;

use crate::vaes::VaesKeys;
use aes::cipher::consts::U16;
use aes::cipher::inout::InOutBuf;
use aes::cipher::{Block, BlockBackend, BlockClosure, BlockEncrypt, BlockSizeUser, ParBlocks, Unsigned};

/// Writes `counter, counter + 1, ...` (little-endian) into `blocks` and
/// advances the counter, using 64-bit halves for speed.
#[inline(always)]
fn write_counters(counter: &mut u128, blocks: &mut [Block<Aes128Enc>]) {
    let mut lo = *counter as u64;
    let mut hi = (*counter >> 64) as u64;
    for block in blocks {
        let (lo_bytes, hi_bytes) = block.split_at_mut(8);
        lo_bytes.copy_from_slice(&lo.to_le_bytes());
        hi_bytes.copy_from_slice(&hi.to_le_bytes());
        lo = lo.wrapping_add(1);
        if lo == 0 {
            hi = hi.wrapping_add(1);
        }
    }
    *counter = (u128::from(hi) << 64) | u128::from(lo);
}

/// Rank-2 closure run with the cipher's (autodetected) backend.
struct CtrJob<'a> {
    counter: &'a mut u128,
    out: &'a mut [Block<Aes128Enc>],
}

impl BlockSizeUser for CtrJob<'_> {
    type BlockSize = U16;
}

impl BlockClosure for CtrJob<'_> {
    #[inline(always)]
    fn call<B: BlockBackend<BlockSize = U16>>(self, backend: &mut B) {
        let par = B::ParBlocksSize::USIZE;
        let mut ctrs = ParBlocks::<B>::default();
        let mut groups = self.out.chunks_exact_mut(par);
        for group in &mut groups {
            write_counters(self.counter, &mut ctrs);
            let out = ParBlocks::<B>::from_mut_slice(group);
            backend.proc_par_blocks((&ctrs, out).into());
        }
        for block in groups.into_remainder() {
            let mut ctr = Block::<Aes128Enc>::default();
            write_counters(self.counter, core::slice::from_mut(&mut ctr));
            backend.proc_block((&ctr, block).into());
        }
    }
}

/// Writes keystream blocks for `counter, counter + 1, ...` into `out` and
/// advances `counter`. Only whole blocks are written: `out.len()` must be a
/// multiple of 16 (a trailing partial block is left untouched).
pub(crate) fn keystream_into(
    cipher: &Aes128Enc,
    vaes: Option<&VaesKeys>,
    counter: &mut u128,
    out: &mut [u8],
) {
    debug_assert_eq!(out.len() % 16, 0);
    // Whole passes of 16 blocks by VAES where the processor has it, the rest by the `aes` crate.
    let done = vaes.map_or(0, |v| v.keystream(counter, out));
    let out = &mut out[done..];
    let (blocks, _tail) = InOutBuf::from(out).into_chunks::<U16>();
    cipher.encrypt_with_backend(CtrJob { counter, out: blocks.into_out() });
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::KeyInit;

    #[test]
    fn matches_block_by_block_aes_including_carry() {
        let cipher = Aes128Enc::new(&[9u8; 16].into());
        // Start just below the 64-bit carry; use a length that is not a
        // multiple of the backend's parallelism.
        let start = u128::from(u64::MAX) - 5;
        let mut counter = start;
        let mut out = vec![0u8; 16 * 21];
        keystream_into(&cipher, None, &mut counter, &mut out);
        assert_eq!(counter, start + 21);
        for (i, block) in out.chunks_exact(16).enumerate() {
            let mut b = (start + i as u128).to_le_bytes().into();
            cipher.encrypt_block(&mut b);
            assert_eq!(block, b.as_slice(), "block {i}");
        }
    }
}
