//! Element-wise ring arithmetic and reductions on tensors.

use veil_ring::Ring;

use crate::Tensor;
use crate::error::TensorError;

/// Checks that two shapes are identical for the element-wise operation `op`.
fn same_shape<T>(op: &'static str, a: &Tensor<T>, b: &Tensor<T>) -> Result<(), TensorError> {
    if a.shape() == b.shape() {
        Ok(())
    } else {
        Err(TensorError::ShapeMismatch { op, left: a.shape().to_vec(), right: b.shape().to_vec() })
    }
}

impl<T: Ring> Tensor<T> {
    /// A tensor of independent uniformly random ring elements (e.g. masks and shares).
    pub fn random<G: rand_core::RngCore + ?Sized>(shape: &[usize], rng: &mut G) -> Self {
        Self::from_fn(shape, |_| T::random(rng))
    }

    /// Element-wise `self + other` (shapes must be equal).
    pub fn add(&self, other: &Self) -> Result<Self, TensorError> {
        same_shape("add", self, other)?;
        Ok(self.zip_with(other, |a, b| a + b))
    }

    /// Element-wise `self - other` (shapes must be equal).
    pub fn sub(&self, other: &Self) -> Result<Self, TensorError> {
        same_shape("sub", self, other)?;
        Ok(self.zip_with(other, |a, b| a - b))
    }

    /// Element-wise (Hadamard) product (shapes must be equal).
    pub fn mul(&self, other: &Self) -> Result<Self, TensorError> {
        same_shape("mul", self, other)?;
        Ok(self.zip_with(other, |a, b| a * b))
    }

    /// In place `self += other` (shapes must be equal).
    pub fn add_assign(&mut self, other: &Self) -> Result<(), TensorError> {
        same_shape("add_assign", self, other)?;
        for (a, &b) in self.data_mut().iter_mut().zip(other.data()) {
            *a += b;
        }
        Ok(())
    }

    /// In place `self -= other` (shapes must be equal).
    pub fn sub_assign(&mut self, other: &Self) -> Result<(), TensorError> {
        same_shape("sub_assign", self, other)?;
        for (a, &b) in self.data_mut().iter_mut().zip(other.data()) {
            *a -= b;
        }
        Ok(())
    }

    /// Element-wise negation.
    #[allow(clippy::should_implement_trait, reason = "tensor ops are methods, not operators")]
    pub fn neg(&self) -> Self {
        self.map(|&a| -a)
    }

    /// Multiplies every element by the scalar `s`.
    pub fn scale(&self, s: T) -> Self {
        self.map(|&a| a * s)
    }

    /// Sum of all elements.
    pub fn sum(&self) -> T {
        self.data().iter().copied().sum()
    }

    /// Sums along `axis`, removing it: `[d0, …, da, …] -> [d0, …, d(a-1), d(a+1), …]`.
    pub fn sum_axis(&self, axis: usize) -> Result<Self, TensorError> {
        let shape = self.shape();
        let Some(&len) = shape.get(axis) else {
            return Err(TensorError::AxisOutOfRange { op: "sum_axis", axis, shape: shape.to_vec() });
        };
        // View as [outer, len, inner]; out[o, i] = Σ_l x[o, l, i].
        let outer: usize = shape[..axis].iter().product();
        let inner: usize = shape[axis + 1..].iter().product();
        let mut out = vec![T::ZERO; outer * inner];
        if len > 0 && inner > 0 {
            for (o, block) in self.data().chunks_exact(len * inner).enumerate() {
                let acc = &mut out[o * inner..(o + 1) * inner];
                for row in block.chunks_exact(inner) {
                    for (a, &x) in acc.iter_mut().zip(row) {
                        *a += x;
                    }
                }
            }
        }
        let mut out_shape = shape.to_vec();
        out_shape.remove(axis);
        Ok(Self::from_parts(out_shape, out))
    }

    /// Element-wise combination of two tensors already known to have equal shapes.
    fn zip_with(&self, other: &Self, f: impl Fn(T, T) -> T) -> Self {
        let data = self.data().iter().zip(other.data()).map(|(&a, &b)| f(a, b)).collect();
        Self::from_parts(self.shape().to_vec(), data)
    }
}
