//! Exact `Z_{2^w}` matrix products on Intel AMX-INT8 tiles (`w` = 32 or 64).
//!
//! Split every word into `L = w/8` bytes, `x = Σ_{i<L} x_i · 2^{8i}`. Then
//!
//! `A·B ≡ Σ_{s<L} 2^{8s} · P_s (mod 2^w)`,   `P_s = Σ_{i+j=s} A_i · B_j`,
//!
//! where `A_i`, `B_j` are byte matrices (terms with `i + j >= L` vanish mod
//! `2^w`). `TDPBUUD` multiplies a 16×64 `u8` tile by a 64×16 `u8` tile into a
//! 16×16 `i32` tile with wrapping adds, i.e. it computes `P_s mod 2^32`. Only
//! `P_s mod 2^{w-8s}` matters, so wrapping is harmless whenever `w - 8s <= 32`
//! (always for `w = 32`). For `w = 64` and `s <= 3`, `P_s` must not wrap:
//! `P_s <= (s+1)·k·255² < 2^32` holds for `k <= 16384`, so longer `k` is cut into
//! slabs of at most `MAX_Q` 64-deep steps and the slabs are summed in `u64`.
//! `w = 64` costs 36 tile products per 16×16×64 block (`w = 32`: 10), but one tile
//! product is 16384 byte-MACs, which is why this beats 64-bit SIMD multiplies.
//!
//! Register blocking is 2×2: four `C` tiles (32×32 outputs) with two A and two B
//! tiles loaded per 64-deep step. Packed tiles are 64-byte aligned (unaligned
//! tile loads were measured to be 3× slower).
#![allow(unsafe_code)]

use std::arch::asm;
use std::marker::PhantomData;
use std::sync::OnceLock;

use super::amx_pack::{Line, TILE_LINES};

/// Proof that this process may use AMX-INT8 (CPU, OS and permission checked).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Amx(());

impl Amx {
    /// AMX, if the CPU has AMX-TILE/AMX-INT8 (plus AVX-512 BW/VBMI for packing), the OS
    /// enables tile state, and the kernel grants this process the tile data permission.
    pub(crate) fn new() -> Option<Self> {
        static AVAILABLE: OnceLock<bool> = OnceLock::new();
        AVAILABLE.get_or_init(detect).then_some(Amx(()))
    }
}

/// CPUID, XCR0 and `arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`.
fn detect() -> bool {
    let leaf7 = core::arch::x86_64::__cpuid_count(7, 0);
    let cpu = (leaf7.edx >> 24) & 1 == 1 && (leaf7.edx >> 25) & 1 == 1;
    let simd = std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi");
    if !cpu || !simd || !std::arch::is_x86_feature_detected!("xsave") {
        return false;
    }
    // SAFETY: the xsave feature was detected above.
    let xcr0 = unsafe { xgetbv0() };
    if xcr0 & (0b11 << 17) != 0b11 << 17 {
        return false;
    }
    const ARCH_REQ_XCOMP_PERM: u64 = 0x1023;
    const XFEATURE_XTILEDATA: u64 = 18;
    const SYS_ARCH_PRCTL: u64 = 158;
    let ret: i64;
    // SAFETY: arch_prctl only updates this process's permitted XSAVE features;
    // the syscall clobbers rcx and r11 and returns in rax.
    unsafe {
        asm!("syscall", inlateout("rax") SYS_ARCH_PRCTL as i64 => ret,
             in("rdi") ARCH_REQ_XCOMP_PERM, in("rsi") XFEATURE_XTILEDATA,
             lateout("rcx") _, lateout("r11") _, options(nostack));
    }
    ret == 0
}

/// `XCR0`, the OS-enabled XSAVE feature mask.
#[target_feature(enable = "xsave")]
fn xgetbv0() -> u64 {
    // SAFETY: reading XCR0 is always valid once XSAVE is supported (this fn's feature).
    unsafe { core::arch::x86_64::_xgetbv(0) }
}

/// Loaded tile configuration of the current thread (8 tiles of 16 rows × 64 bytes),
/// released on drop. Not `Send`: tile state is per thread.
pub(crate) struct Tiles(PhantomData<*const ()>);

/// The `ldtilecfg` operand: palette 1, tiles 0..8 of 16 rows × 64 bytes.
#[repr(C, align(64))]
struct TileConfig {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    colsb: [u16; 16],
    rows: [u8; 16],
}

impl Tiles {
    /// Configures the tiles of the calling thread.
    pub(crate) fn new(_: Amx) -> Self {
        let mut cfg =
            TileConfig { palette: 1, start_row: 0, reserved: [0; 14], colsb: [0; 16], rows: [0; 16] };
        cfg.colsb[..8].fill(64);
        cfg.rows[..8].fill(16);
        // SAFETY: AMX is enabled and permitted (`Amx` token); the config is a
        // valid palette-1 description read from a live, aligned 64-byte struct.
        unsafe { asm!("ldtilecfg [{}]", in(reg) &cfg, options(nostack, readonly)) };
        Tiles(PhantomData)
    }

    /// `tmm0..tmm3 = 0` (the four accumulators).
    pub(crate) fn zero(&self) {
        // SAFETY: tiles are configured (`self`); only tile registers change.
        unsafe {
            asm!("tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3", options(nostack, nomem))
        };
    }

    /// `C00 += Σ_q A0_q·B0_q`, `C01 += A0·B1`, `C10 += A1·B0`, `C11 += A1·B1` over `nq` tiles.
    pub(crate) fn dot(&self, a0: &[Line], a1: &[Line], b0: &[Line], b1: &[Line], nq: usize) {
        let need = nq * TILE_LINES;
        assert!(nq > 0 && a0.len() >= need && a1.len() >= need && b0.len() >= need && b1.len() >= need);
        // SAFETY: tiles are configured; every load reads 16 lines of 64 bytes at
        // stride 64 from one of the slices, `nq` tiles each, which the assert
        // shows are in bounds; all pointers are 64-byte aligned (`Line`).
        unsafe {
            asm!(
                "2:",
                "tileloadd tmm4, [{a0} + {s}*1]",
                "tileloadd tmm6, [{b0} + {s}*1]",
                "tdpbuud tmm0, tmm4, tmm6",
                "tileloadd tmm7, [{b1} + {s}*1]",
                "tdpbuud tmm1, tmm4, tmm7",
                "tileloadd tmm5, [{a1} + {s}*1]",
                "tdpbuud tmm2, tmm5, tmm6",
                "tdpbuud tmm3, tmm5, tmm7",
                "add {a0}, 1024",
                "add {a1}, 1024",
                "add {b0}, 1024",
                "add {b1}, 1024",
                "dec {n}",
                "jnz 2b",
                a0 = inout(reg) a0.as_ptr() => _,
                a1 = inout(reg) a1.as_ptr() => _,
                b0 = inout(reg) b0.as_ptr() => _,
                b1 = inout(reg) b1.as_ptr() => _,
                n = inout(reg) nq => _,
                s = in(reg) 64usize,
                options(nostack, readonly),
            );
        }
    }

    /// Stores the accumulators as a 32×32 `i32` block (row stride 128 bytes).
    pub(crate) fn store(&self, out: &mut [u32; 1024]) {
        // SAFETY: tiles are configured; each store writes 16 rows of 64 bytes at
        // stride 128 starting at offsets 0, 64, 2048, 2112 of the 4096-byte `out`.
        unsafe {
            asm!(
                "tilestored [{p} + {s}*1], tmm0",
                "tilestored [{p} + {s}*1 + 64], tmm1",
                "tilestored [{p} + {s}*1 + 2048], tmm2",
                "tilestored [{p} + {s}*1 + 2112], tmm3",
                p = in(reg) out.as_mut_ptr(),
                s = in(reg) 128usize,
                options(nostack),
            );
        }
    }
}

impl Drop for Tiles {
    fn drop(&mut self) {
        // SAFETY: releases this thread's tile state, which nothing uses afterwards.
        unsafe { asm!("tilerelease", options(nostack, nomem)) };
    }
}
