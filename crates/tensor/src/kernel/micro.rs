//! Register-blocked micro-kernels: `C[MR×NR] += A_panel · B_panel`.
//!
//! The packed A panel holds `kc` columns of `MR` rows (`a[p·MR + i] = A[i, p]`), the
//! packed B panel `kc` rows of `NR` columns (`b[p·NR + j] = B[p, j]`). The
//! `MR×NR` accumulator block stays in vector registers for the whole `kc` loop:
//! each step broadcasts `MR` values of A and multiplies them with `NR/lanes`
//! vectors of B (`vpmullq` for `u64` on AVX-512DQ, `vpmulld` for `u32`).
//!
//! The body is plain Rust over fixed-size arrays, compiled once per instruction
//! set inside a `#[target_feature]` function so LLVM vectorises it for that ISA;
//! the ISA is chosen at run time, so the binary also runs without AVX-512.
#![allow(unsafe_code)]

use super::Word;

/// One micro-kernel shape for word type `W`.
pub(crate) trait Micro<W: Word>: Sync {
    /// Rows of the register block.
    const MR: usize;
    /// Columns of the register block.
    const NR: usize;
    /// `c[i·ldc + j] += Σ_{p<kc} a[p·MR + i] · b[p·NR + j]` for `i < MR, j < NR`.
    ///
    /// Requires `a.len() >= kc·MR`, `b.len() >= kc·NR`, `c.len() >= (MR-1)·ldc + NR`.
    fn run(&self, kc: usize, a: &[W], b: &[W], c: &mut [W], ldc: usize);
}

/// The shared micro-kernel body (inlined into each ISA-specific wrapper).
#[inline(always)]
fn body<W: Word, const MR: usize, const NR: usize>(kc: usize, a: &[W], b: &[W], c: &mut [W], ldc: usize) {
    let mut acc = [[W::ZERO; NR]; MR];
    let (a, _) = a.as_chunks::<MR>();
    let (b, _) = b.as_chunks::<NR>();
    for (ap, bp) in a.iter().zip(b).take(kc) {
        for (acc_row, &x) in acc.iter_mut().zip(ap) {
            for (s, &y) in acc_row.iter_mut().zip(bp) {
                *s = s.wadd(x.wmul(y));
            }
        }
    }
    for (i, acc_row) in acc.iter().enumerate() {
        let c_row = &mut c[i * ldc..i * ldc + NR];
        for (s, &x) in c_row.iter_mut().zip(acc_row) {
            *s = s.wadd(x);
        }
    }
}

/// Instruction-set levels of the blocked kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// AVX-512F + AVX-512DQ (512-bit vectors, native 64-bit multiply).
    Avx512,
    /// AVX2 (256-bit vectors).
    Avx2,
    /// Whatever the compilation target offers.
    Portable,
}

impl Isa {
    /// The best level supported by this CPU.
    pub(crate) fn best() -> Self {
        Isa::Avx512.or_lower()
    }

    /// `self` if supported, else the next lower supported level.
    pub(crate) fn or_lower(self) -> Self {
        match self {
            Isa::Avx512 if Avx512U64::new().is_some() => Isa::Avx512,
            Isa::Avx512 | Isa::Avx2 if Avx2U64::new().is_some() => Isa::Avx2,
            _ => Isa::Portable,
        }
    }
}

/// Portable micro-kernel with block `MR×NR` (no target features).
pub(crate) struct Portable<const MR: usize, const NR: usize>;

impl<W: Word, const MR: usize, const NR: usize> Micro<W> for Portable<MR, NR> {
    const MR: usize = MR;
    const NR: usize = NR;
    #[inline]
    fn run(&self, kc: usize, a: &[W], b: &[W], c: &mut [W], ldc: usize) {
        body::<W, MR, NR>(kc, a, b, c, ldc);
    }
}

/// Defines a micro-kernel token for an intrinsic kernel in [`super::simd`],
/// constructible only when the CPU has the kernel's features.
macro_rules! x86_micro {
    ($(#[$doc:meta])* $name:ident, $w:ty, $mr:literal, $nr:literal, $kernel:ident, [$($feat:tt),+]) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $name(());

        impl $name {
            /// The kernel, if the CPU supports its features.
            pub(crate) fn new() -> Option<Self> {
                #[cfg(target_arch = "x86_64")]
                if $(std::arch::is_x86_feature_detected!($feat))&&+ {
                    return Some(Self(()));
                }
                None
            }
        }

        impl Micro<$w> for $name {
            const MR: usize = $mr;
            const NR: usize = $nr;
            #[inline]
            fn run(&self, kc: usize, a: &[$w], b: &[$w], c: &mut [$w], ldc: usize) {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `self` exists only if `new` detected the kernel's features.
                unsafe {
                    super::simd::$kernel(kc, a, b, c, ldc)
                }
                #[cfg(not(target_arch = "x86_64"))]
                body::<$w, $mr, $nr>(kc, a, b, c, ldc);
            }
        }
    };
}

x86_micro!(
    /// `u64`, AVX-512: 8×16 block = 16 zmm accumulators, `vpmullq` + `vpaddq`.
    Avx512U64, u64, 8, 16, avx512_u64_8x16, ["avx512f", "avx512dq"]
);
x86_micro!(
    /// `u32`, AVX-512: 8×32 block = 16 zmm accumulators, `vpmulld` + `vpaddd`.
    Avx512U32, u32, 8, 32, avx512_u32_8x32, ["avx512f"]
);
x86_micro!(
    /// `u64`, AVX2: 4×8 block; the 64-bit product is built from `vpmuludq` pieces.
    Avx2U64, u64, 4, 8, avx2_u64_4x8, ["avx2"]
);
x86_micro!(
    /// `u32`, AVX2: 6×16 block = 12 ymm accumulators, `vpmulld` + `vpaddd`.
    Avx2U32, u32, 6, 16, avx2_u32_6x16, ["avx2"]
);
