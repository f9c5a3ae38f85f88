//! The [`Tensor`] type: a row-major n-dimensional array, with construction,
//! access, reshaping and element-wise mapping.

use crate::error::{TensorError, numel};

/// A dense row-major tensor: element `[i0, …, i(d-1)]` lives at
/// `Σ i_a · stride_a` with `stride_(d-1) = 1`, `stride_a = stride_(a+1) · shape_(a+1)`.
///
/// Invariant: `data.len() == shape.iter().product()`. A 0-dimensional tensor
/// (shape `[]`) is a scalar with one element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tensor<T> {
    shape: Vec<usize>,
    data: Vec<T>,
}

/// Row-major strides of `shape`.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        s[a] = s[a + 1] * shape[a + 1];
    }
    s
}

/// Advances a row-major multi-index by one; returns `false` after the last index.
pub(crate) fn next_index(index: &mut [usize], shape: &[usize]) -> bool {
    for a in (0..shape.len()).rev() {
        index[a] += 1;
        if index[a] < shape[a] {
            return true;
        }
        index[a] = 0;
    }
    false
}

/// Element count, saturating at `usize::MAX` (which no allocation can satisfy).
fn saturating_numel(shape: &[usize]) -> usize {
    shape.iter().fold(1usize, |a, &d| a.saturating_mul(d))
}

impl<T> Tensor<T> {
    /// A tensor with the given shape and row-major data.
    ///
    /// Fails if `data.len()` differs from the product of the dimensions.
    pub fn new(shape: Vec<usize>, data: Vec<T>) -> Result<Self, TensorError> {
        let expected = numel(&shape)?;
        if expected != data.len() {
            return Err(TensorError::DataLength { shape, expected, got: data.len() });
        }
        Ok(Self { shape, data })
    }

    /// Internal constructor for results whose shape is known to be consistent.
    pub(crate) fn from_parts(shape: Vec<usize>, data: Vec<T>) -> Self {
        debug_assert_eq!(shape.iter().product::<usize>(), data.len());
        Self { shape, data }
    }

    /// A one-dimensional tensor holding `data`.
    pub fn from_vec(data: Vec<T>) -> Self {
        Self { shape: vec![data.len()], data }
    }

    /// A 0-dimensional tensor holding one value.
    pub fn scalar(x: T) -> Self {
        Self { shape: Vec::new(), data: vec![x] }
    }

    /// A tensor whose element at multi-index `idx` is `f(idx)`, filled in row-major order.
    ///
    /// # Panics
    /// Only if the shape's element count overflows `usize` (the allocation could not succeed).
    pub fn from_fn(shape: &[usize], mut f: impl FnMut(&[usize]) -> T) -> Self {
        let n = saturating_numel(shape);
        let mut data = Vec::with_capacity(n);
        if n > 0 {
            let mut idx = vec![0usize; shape.len()];
            loop {
                data.push(f(&idx));
                if !next_index(&mut idx, shape) {
                    break;
                }
            }
        }
        Self { shape: shape.to_vec(), data }
    }

    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements in row-major order.
    pub fn data(&self) -> &[T] {
        &self.data
    }

    /// Mutable access to the elements in row-major order (the shape is fixed).
    pub fn data_mut(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// Consumes the tensor, returning its row-major data.
    pub fn into_data(self) -> Vec<T> {
        self.data
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the tensor has no elements (some dimension is 0).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The element at a multi-index, or `None` if it is out of bounds or has the wrong rank.
    pub fn get(&self, index: &[usize]) -> Option<&T> {
        if index.len() != self.shape.len() {
            return None;
        }
        let mut off = 0usize;
        for (&i, &d) in index.iter().zip(&self.shape) {
            if i >= d {
                return None;
            }
            off = off * d + i;
        }
        self.data.get(off)
    }

    /// The same data viewed with another shape of equal element count.
    pub fn reshape(self, shape: &[usize]) -> Result<Self, TensorError> {
        match numel(shape) {
            Ok(n) if n == self.data.len() => Ok(Self { shape: shape.to_vec(), data: self.data }),
            _ => Err(TensorError::Reshape { from: self.shape, to: shape.to_vec() }),
        }
    }

    /// Applies `f` to every element.
    pub fn map<U>(&self, f: impl FnMut(&T) -> U) -> Tensor<U> {
        Tensor { shape: self.shape.clone(), data: self.data.iter().map(f).collect() }
    }

    /// Combines two tensors of identical shape element by element.
    pub fn zip_map<U, V>(
        &self,
        other: &Tensor<U>,
        mut f: impl FnMut(&T, &U) -> V,
    ) -> Result<Tensor<V>, TensorError> {
        if self.shape != other.shape {
            return Err(TensorError::ShapeMismatch {
                op: "zip_map",
                left: self.shape.clone(),
                right: other.shape.clone(),
            });
        }
        Ok(Tensor {
            shape: self.shape.clone(),
            data: self.data.iter().zip(&other.data).map(|(a, b)| f(a, b)).collect(),
        })
    }
}

impl<T: Clone + Default> Tensor<T> {
    /// A tensor of `T::default()` (zero for rings).
    ///
    /// # Panics
    /// Only if the shape's element count overflows `usize` (the allocation could not succeed).
    pub fn zeros(shape: &[usize]) -> Self {
        Self::full(shape, T::default())
    }

    /// A tensor with every entry `value`.
    ///
    /// # Panics
    /// Only if the shape's element count overflows `usize` (the allocation could not succeed).
    pub fn full(shape: &[usize], value: T) -> Self {
        Self { shape: shape.to_vec(), data: vec![value; saturating_numel(shape)] }
    }
}
