//! A block buffer on transparent huge pages where the kernel offers them (Linux `madvise`
//! through `memmap2`), for the LPN secret that every output row reads ten times at random:
//! 2 MiB pages hold its 9 MiB in five TLB entries instead of 2,300 entries of 4 KiB. Where
//! the kernel has no huge pages, or refuses the mapping, it is ordinary memory.

use zerocopy::FromBytes;

use crate::block::Block;

const HUGE_PAGE: usize = 1 << 21;

/// Room for blocks, kept across iterations.
#[derive(Default)]
pub(crate) struct HugeBlocks {
    map: Option<memmap2::MmapMut>,
    fallback: Vec<Block>,
}

impl HugeBlocks {
    /// Copies `x` in and returns the copy.
    pub(crate) fn load(&mut self, x: &[Block]) -> &[Block] {
        let bytes = 16 * x.len();
        if self.map.as_ref().is_none_or(|m| m.len() < bytes + HUGE_PAGE) {
            self.map = memmap2::MmapOptions::new()
                .len(bytes.div_ceil(HUGE_PAGE) * HUGE_PAGE + HUGE_PAGE)
                .map_anon()
                .ok();
            #[cfg(target_os = "linux")]
            if let Some(m) = &self.map {
                // A refusal leaves ordinary pages, which work the same.
                let _ = m.advise(memmap2::Advice::HugePage);
            }
        }
        if let Some(map) = self.map.as_mut() {
            let offset = map.as_ptr().align_offset(HUGE_PAGE).min(HUGE_PAGE);
            if let Ok(blocks) = <[Block]>::mut_from_bytes(&mut map[offset..offset + bytes]) {
                blocks.copy_from_slice(x);
                return blocks;
            }
        }
        self.fallback.clear();
        self.fallback.extend_from_slice(x);
        &self.fallback
    }
}
