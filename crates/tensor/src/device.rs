//! The compute-device seam: protocol code calls [`Tensor::matmul`](crate::Tensor::matmul),
//! which hands word-level matrix products to a [`Device`].
//!
//! [`Cpu`] is the default device. A GPU backend implements [`Device`] for raw
//! `u64`/`u32` words (the storage of `Z_2^64`, `Z_2^32` and every `Z_2^k`,
//! `k <= 64`) and is passed to the `*_with` methods; there is no process-wide device: a
//! party's device travels in its context (`veil_mpc::Ctx::device`), so two sessions in one
//! process may use different devices.

use std::fmt;

use crate::error::TensorError;
use crate::kernel;

/// Dimensions of `C[m×n] = A[m×k] · B[k×n]` (all row-major, dense).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatDims {
    /// Rows of `A` and `C`.
    pub m: usize,
    /// Columns of `A`, rows of `B`.
    pub k: usize,
    /// Columns of `B` and `C`.
    pub n: usize,
}

impl MatDims {
    /// `m·k·n`, the number of multiply-accumulates.
    pub fn macs(&self) -> usize {
        self.m * self.k * self.n
    }

    /// Checks buffer lengths for `batch` products (`B` shared when `b_len == k·n`).
    pub fn check(&self, batch: usize, a: usize, b: usize, c: usize) -> Result<(), TensorError> {
        let (m, k, n) = (self.m, self.k, self.n);
        let ok = a == batch * m * k && (b == batch * k * n || b == k * n) && c == batch * m * n;
        if ok {
            Ok(())
        } else {
            Err(TensorError::ShapeMismatch {
                op: "device matmul buffers (a, b, c lengths vs [batch, m, k, n])",
                left: vec![a, b, c],
                right: vec![batch, m, k, n],
            })
        }
    }
}

/// A backend for the word-level matrix products behind `Tensor::matmul`.
///
/// All products are over `Z_{2^64}` / `Z_{2^32}` (wrapping), row-major, and
/// overwrite `c`. Implementations must accept any sizes, including zeros.
pub trait Device: Send + Sync + fmt::Debug {
    /// Short name for logs and benchmarks.
    fn name(&self) -> &'static str;

    /// `c = a · b mod 2^64` with `a: m×k`, `b: k×n`, `c: m×n`.
    fn matmul_u64(&self, a: &[u64], b: &[u64], c: &mut [u64], dims: MatDims) -> Result<(), TensorError>;

    /// `c = a · b mod 2^32` with `a: m×k`, `b: k×n`, `c: m×n`.
    fn matmul_u32(&self, a: &[u32], b: &[u32], c: &mut [u32], dims: MatDims) -> Result<(), TensorError>;

    /// `batch` independent products `c[i] = a[i] · b[i] mod 2^64`, each `dims`;
    /// `b` may also hold a single `k×n` matrix shared by all.
    fn batched_matmul_u64(
        &self,
        a: &[u64],
        b: &[u64],
        c: &mut [u64],
        batch: usize,
        dims: MatDims,
    ) -> Result<(), TensorError> {
        dims.check(batch, a.len(), b.len(), c.len())?;
        for_each_batch(a, b, c, batch, dims, |a, b, c| self.matmul_u64(a, b, c, dims))
    }

    /// `batch` independent products `c[i] = a[i] · b[i] mod 2^32`; see
    /// [`batched_matmul_u64`](Device::batched_matmul_u64).
    fn batched_matmul_u32(
        &self,
        a: &[u32],
        b: &[u32],
        c: &mut [u32],
        batch: usize,
        dims: MatDims,
    ) -> Result<(), TensorError> {
        dims.check(batch, a.len(), b.len(), c.len())?;
        for_each_batch(a, b, c, batch, dims, |a, b, c| self.matmul_u32(a, b, c, dims))
    }
}

/// Splits batched buffers (already length-checked) and runs `f` on each product.
fn for_each_batch<W>(
    a: &[W],
    b: &[W],
    c: &mut [W],
    batch: usize,
    d: MatDims,
    mut f: impl FnMut(&[W], &[W], &mut [W]) -> Result<(), TensorError>,
) -> Result<(), TensorError> {
    let (sa, sc) = (d.m * d.k, d.m * d.n);
    let sb = if b.len() == d.k * d.n { 0 } else { d.k * d.n };
    for i in 0..batch {
        let bi = &b[i * sb..i * sb + d.k * d.n];
        f(&a[i * sa..(i + 1) * sa], bi, &mut c[i * sc..(i + 1) * sc])?;
    }
    Ok(())
}

/// Matrix-product kernels of the [`Cpu`] device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MatmulKernel {
    /// The fastest kernel available: [`Amx`](Self::Amx) where supported, else
    /// [`Blocked`](Self::Blocked).
    #[default]
    Auto,
    /// Intel AMX-INT8 tiles on byte limbs (Sapphire Rapids and later, Linux);
    /// falls back to [`Blocked`](Self::Blocked) where unavailable.
    Amx,
    /// Packed, register-blocked integer kernel with the best SIMD level found at
    /// run time (AVX-512 → AVX2 → portable), multithreaded with rayon.
    Blocked,
    /// [`Blocked`](Self::Blocked) limited to AVX2 (portable if AVX2 is missing).
    BlockedAvx2,
    /// [`Blocked`](Self::Blocked) without explicit SIMD features (baseline target).
    BlockedPortable,
    /// Exact product through `f64` GEMM (`matrixmultiply`) on balanced limbs.
    F64Limbs,
    /// Straightforward row-parallel triple loop (reference).
    Naive,
}

impl MatmulKernel {
    /// Every kernel, for benchmarks and tests.
    pub const ALL: [MatmulKernel; 7] = [
        MatmulKernel::Auto,
        MatmulKernel::Amx,
        MatmulKernel::Blocked,
        MatmulKernel::BlockedAvx2,
        MatmulKernel::BlockedPortable,
        MatmulKernel::F64Limbs,
        MatmulKernel::Naive,
    ];
}

/// The CPU device: selectable kernels per word type, multithreaded with rayon.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cpu {
    /// Kernel for `Z_2^64` (and `Z_2^k`, `k > 32`).
    pub kernel_u64: MatmulKernel,
    /// Kernel for `Z_2^32` (and narrower `Z_2^k`).
    pub kernel_u32: MatmulKernel,
}

impl Cpu {
    /// The CPU device with the fastest kernels.
    pub fn new() -> Self {
        Self::default()
    }

    /// The CPU device using `kernel` for every word type.
    pub fn with_kernel(kernel: MatmulKernel) -> Self {
        Self { kernel_u64: kernel, kernel_u32: kernel }
    }
}

impl Device for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn matmul_u64(&self, a: &[u64], b: &[u64], c: &mut [u64], dims: MatDims) -> Result<(), TensorError> {
        dims.check(1, a.len(), b.len(), c.len())?;
        kernel::cpu_matmul_u64(self.kernel_u64, a, b, c, dims);
        Ok(())
    }

    fn matmul_u32(&self, a: &[u32], b: &[u32], c: &mut [u32], dims: MatDims) -> Result<(), TensorError> {
        dims.check(1, a.len(), b.len(), c.len())?;
        kernel::cpu_matmul_u32(self.kernel_u32, a, b, c, dims);
        Ok(())
    }
}
