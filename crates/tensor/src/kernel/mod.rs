//! Matrix-product kernels and the dispatch from ring elements to machine words.
//!
//! `Z_{2^k}` arithmetic is machine-word arithmetic reduced mod `2^k`, and
//! reduction commutes with `+` and `·`, so a product over any `Z_{2^k}`,
//! `k <= 64`, is a `u64` (or, for `k <= 32`, a `u32`) wrapping product followed
//! by a mask. [`matmul`] recognises those ring types ([`cast`]) and sends them to the
//! [`Device`]; other rings (prime fields, `Z_2^128`) use the generic kernel in
//! [`naive`].

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod amx;
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[path = "amx_stub.rs"]
mod amx;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod amx_gemm;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod amx_pack;
mod cast;
mod f64limb;
mod micro;
mod naive;
mod packed;
mod simd;

use veil_ring::Ring;

use crate::device::{Device, MatDims, MatmulKernel};
use crate::error::TensorError;
use cast::Storage;

/// A machine word with wrapping arithmetic (`u32` or `u64`).
pub(crate) trait Word: Copy + Default + Send + Sync + PartialEq + 'static {
    /// Zero.
    const ZERO: Self;
    /// Bytes per word.
    const BYTES: usize;
    /// `self + o mod 2^w`.
    fn wadd(self, o: Self) -> Self;
    /// `self · o mod 2^w`.
    fn wmul(self, o: Self) -> Self;
    /// Zero-extension to 64 bits.
    fn to_u64(self) -> u64;
    /// `x mod 2^w`.
    fn from_u64(x: u64) -> Self;
}

impl Word for u64 {
    const ZERO: Self = 0;
    const BYTES: usize = 8;
    #[inline(always)]
    fn wadd(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn wmul(self, o: Self) -> Self {
        self.wrapping_mul(o)
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        x
    }
}

impl Word for u32 {
    const ZERO: Self = 0;
    const BYTES: usize = 4;
    #[inline(always)]
    fn wadd(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn wmul(self, o: Self) -> Self {
        self.wrapping_mul(o)
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        x as u32
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
use amx::gemm as amx_gemm;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
use amx_gemm::gemm as amx_gemm;

/// The AMX token, if AMX-INT8 is usable in this process.
fn amx_token() -> Option<amx::Amx> {
    amx::Amx::new()
}

/// `c = a · b mod 2^64` on the CPU with the chosen kernel (lengths already checked).
pub(crate) fn cpu_matmul_u64(kernel: MatmulKernel, a: &[u64], b: &[u64], c: &mut [u64], d: MatDims) {
    match kernel {
        MatmulKernel::Auto | MatmulKernel::Amx if let Some(amx) = amx_token() => amx_gemm(amx, a, b, c, d),
        MatmulKernel::Auto | MatmulKernel::Amx | MatmulKernel::Blocked => {
            packed::gemm_u64(micro::Isa::best(), a, b, c, d)
        }
        MatmulKernel::BlockedAvx2 => packed::gemm_u64(micro::Isa::Avx2.or_lower(), a, b, c, d),
        MatmulKernel::BlockedPortable => packed::gemm_u64(micro::Isa::Portable, a, b, c, d),
        MatmulKernel::F64Limbs => f64limb::gemm_u64(a, b, c, d),
        MatmulKernel::Naive => naive::gemm_words(a, b, c, d),
    }
}

/// `c = a · b mod 2^32` on the CPU with the chosen kernel (lengths already checked).
pub(crate) fn cpu_matmul_u32(kernel: MatmulKernel, a: &[u32], b: &[u32], c: &mut [u32], d: MatDims) {
    match kernel {
        MatmulKernel::Auto | MatmulKernel::Amx if let Some(amx) = amx_token() => amx_gemm(amx, a, b, c, d),
        MatmulKernel::Auto | MatmulKernel::Amx | MatmulKernel::Blocked => {
            packed::gemm_u32(micro::Isa::best(), a, b, c, d)
        }
        MatmulKernel::BlockedAvx2 => packed::gemm_u32(micro::Isa::Avx2.or_lower(), a, b, c, d),
        MatmulKernel::BlockedPortable => packed::gemm_u32(micro::Isa::Portable, a, b, c, d),
        MatmulKernel::F64Limbs => f64limb::gemm_u32(a, b, c, d),
        MatmulKernel::Naive => naive::gemm_words(a, b, c, d),
    }
}

/// `batch` products over the ring `R` (`b` holds `batch` matrices or one shared one).
///
/// Lengths must already match `dims` (checked by the tensor layer).
pub(crate) fn matmul<R: Ring>(
    dev: &dyn Device,
    a: &[R],
    b: &[R],
    batch: usize,
    d: MatDims,
) -> Result<Vec<R>, TensorError> {
    let mut out = vec![R::ZERO; batch * d.m * d.n];
    let done = match cast::storage::<R>() {
        Some((Storage::U64, bits)) if bits > 32 => word_path_u64(dev, a, b, &mut out, batch, d, bits)?,
        Some((Storage::U32, _)) => match (cast::u32s(a), cast::u32s(b), cast::u32s_mut(&mut out)) {
            (Some(a), Some(b), Some(c)) => dev.batched_matmul_u32(a, b, c, batch, d).map(Some)?,
            _ => None,
        },
        Some(_) => {
            // Narrow rings (Z8, Z16, Zk<K <= 32>): compute mod 2^32, then reduce mod 2^k.
            match (cast::widen_u32(a), cast::widen_u32(b)) {
                (Some(a), Some(b)) => {
                    let mut c = vec![0u32; out.len()];
                    dev.batched_matmul_u32(&a, &b, &mut c, batch, d)?;
                    cast::narrow_from_u32(&c, &mut out)
                }
                _ => None,
            }
        }
        None => None,
    };
    match done {
        Some(()) => Ok(out),
        None => Ok(naive::matmul_ring(a, b, out, batch, d)),
    }
}

/// The `u64` route for `Z64` and `Zk<K>` with `32 < K <= 64`; `None` if `R` is not such a ring.
fn word_path_u64<R: Ring>(
    dev: &dyn Device,
    a: &[R],
    b: &[R],
    out: &mut [R],
    batch: usize,
    d: MatDims,
    bits: u32,
) -> Result<Option<()>, TensorError> {
    let (Some(a), Some(b), Some(c)) = (cast::u64s(a), cast::u64s(b), cast::u64s_mut(out)) else {
        return Ok(None);
    };
    dev.batched_matmul_u64(a, b, c, batch, d)?;
    if bits < 64 {
        // Restore the Zk<K> invariant: reduce mod 2^K.
        let mask = (1u64 << bits) - 1;
        c.iter_mut().for_each(|x| *x &= mask);
    }
    Ok(Some(()))
}
