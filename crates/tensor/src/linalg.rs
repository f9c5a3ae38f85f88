//! Matrix products of ring tensors, dispatched to a [`Device`].
//!
//! `C[i, j] = Σ_p A[i, p] · B[p, j]` in the ring. Rings stored in machine words
//! (`Z_2^k`, `k <= 64`) go to the device's word kernels; other rings use a
//! generic kernel on the CPU.

use veil_ring::Ring;

use crate::Tensor;
use crate::device::{Cpu, Device, MatDims};
use crate::error::TensorError;
use crate::kernel;

impl<T: Ring> Tensor<T> {
    /// Matrix product `[m, k] × [k, n] -> [m, n]` on the CPU (the fastest kernels).
    pub fn matmul(&self, other: &Self) -> Result<Self, TensorError> {
        self.matmul_with(other, &Cpu::default())
    }

    /// Matrix product `[m, k] × [k, n] -> [m, n]` on `device`.
    pub fn matmul_with(&self, other: &Self, device: &dyn Device) -> Result<Self, TensorError> {
        let (&[m, k], &[k2, n]) = (self.shape(), other.shape()) else {
            return Err(TensorError::RankMismatch {
                op: "matmul",
                expected: "2 (both operands)",
                shape: if self.ndim() == 2 { other.shape().to_vec() } else { self.shape().to_vec() },
            });
        };
        if k != k2 {
            return Err(mismatch("matmul", self, other));
        }
        let dims = MatDims { m, k, n };
        let out = kernel::matmul(device, self.data(), other.data(), 1, dims)?;
        Ok(Self::from_parts(vec![m, n], out))
    }

    /// Batched product on the CPU: `[b, m, k] × [b, k, n] -> [b, m, n]`,
    /// or `[b, m, k] × [k, n] -> [b, m, n]` with the right operand shared.
    pub fn batched_matmul(&self, other: &Self) -> Result<Self, TensorError> {
        self.batched_matmul_with(other, &Cpu::default())
    }

    /// Batched product on `device`; see [`batched_matmul`](Self::batched_matmul).
    pub fn batched_matmul_with(&self, other: &Self, device: &dyn Device) -> Result<Self, TensorError> {
        let &[batch, m, k] = self.shape() else {
            return Err(TensorError::RankMismatch {
                op: "batched_matmul",
                expected: "3 (left operand)",
                shape: self.shape().to_vec(),
            });
        };
        match *other.shape() {
            [k2, n] if k2 == k => {
                // A shared right operand is one [b·m, k] × [k, n] product.
                let dims = MatDims { m: batch * m, k, n };
                let out = kernel::matmul(device, self.data(), other.data(), 1, dims)?;
                Ok(Self::from_parts(vec![batch, m, n], out))
            }
            [b2, k2, n] if b2 == batch && k2 == k => {
                let dims = MatDims { m, k, n };
                let out = kernel::matmul(device, self.data(), other.data(), batch, dims)?;
                Ok(Self::from_parts(vec![batch, m, n], out))
            }
            [_, _] | [_, _, _] => Err(mismatch("batched_matmul", self, other)),
            _ => Err(TensorError::RankMismatch {
                op: "batched_matmul",
                expected: "2 or 3 (right operand)",
                shape: other.shape().to_vec(),
            }),
        }
    }
}

/// A [`TensorError::ShapeMismatch`] naming both operand shapes.
fn mismatch<T>(op: &'static str, a: &Tensor<T>, b: &Tensor<T>) -> TensorError {
    TensorError::ShapeMismatch { op, left: a.shape().to_vec(), right: b.shape().to_vec() }
}
