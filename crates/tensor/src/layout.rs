//! Data movement: transpose, permute, slice, concat, broadcast and gather.
//!
//! All of these copy into a new row-major tensor. Index arithmetic: for shape
//! `s` the row-major strides are `t_a = Π_{b>a} s_b`; an axis permutation `π`
//! gives output shape `s'_a = s_{π(a)}` and reads input offset `Σ_a i_a · t_{π(a)}`.

use core::ops::Range;

use crate::Tensor;
use crate::error::TensorError;
use crate::tensor::{next_index, strides};

/// Tile edge for the cache-blocked 2-D transpose.
const TILE: usize = 32;

impl<T: Clone> Tensor<T> {
    /// The transpose of a 2-D tensor (`[m, n] -> [n, m]`).
    pub fn transpose(&self) -> Result<Self, TensorError> {
        let &[m, n] = self.shape() else {
            return Err(TensorError::RankMismatch {
                op: "transpose",
                expected: "2",
                shape: self.shape().to_vec(),
            });
        };
        let src = self.data();
        let mut out = Vec::with_capacity(m * n);
        // Output row j is column j of the input; walk in TILE-wide column strips
        // so the strided reads stay in cache.
        for j0 in (0..n).step_by(TILE) {
            let j1 = (j0 + TILE).min(n);
            for j in j0..j1 {
                out.extend((0..m).map(|i| src[i * n + j].clone()));
            }
        }
        Ok(Self::from_parts(vec![n, m], out))
    }

    /// Reorders the axes: output axis `a` is input axis `perm[a]`.
    pub fn permute(&self, perm: &[usize]) -> Result<Self, TensorError> {
        let shape = self.shape();
        let mut seen = vec![false; shape.len()];
        let valid = perm.len() == shape.len()
            && perm.iter().all(|&p| p < shape.len() && !std::mem::replace(&mut seen[p], true));
        if !valid {
            return Err(TensorError::InvalidPermutation { perm: perm.to_vec(), shape: shape.to_vec() });
        }
        let in_strides = strides(shape);
        let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let step: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
        let src = self.data();
        let mut out = Vec::with_capacity(src.len());
        if !src.is_empty() {
            let mut idx = vec![0usize; out_shape.len()];
            loop {
                let off: usize = idx.iter().zip(&step).map(|(i, s)| i * s).sum();
                out.push(src[off].clone());
                if !next_index(&mut idx, &out_shape) {
                    break;
                }
            }
        }
        Ok(Self::from_parts(out_shape, out))
    }

    /// The sub-tensor with indices `range` along `axis` (other axes whole).
    pub fn slice(&self, axis: usize, range: Range<usize>) -> Result<Self, TensorError> {
        let shape = self.shape();
        let Some(&len) = shape.get(axis) else {
            return Err(TensorError::AxisOutOfRange { op: "slice", axis, shape: shape.to_vec() });
        };
        if range.start > range.end || range.end > len {
            return Err(TensorError::SliceOutOfBounds {
                start: range.start,
                end: range.end,
                axis,
                shape: shape.to_vec(),
            });
        }
        // View as [outer, len, inner] and keep rows range of the middle axis.
        let inner: usize = shape[axis + 1..].iter().product();
        let mut out_shape = shape.to_vec();
        out_shape[axis] = range.len();
        let mut out = Vec::with_capacity(out_shape.iter().product());
        if inner > 0 && len > 0 {
            for block in self.data().chunks_exact(len * inner) {
                out.extend_from_slice(&block[range.start * inner..range.end * inner]);
            }
        }
        Ok(Self::from_parts(out_shape, out))
    }

    /// Joins tensors along `axis`; all other dimensions must agree.
    pub fn concat(tensors: &[&Tensor<T>], axis: usize) -> Result<Self, TensorError> {
        let first = tensors.first().ok_or(TensorError::EmptyConcat)?;
        let shape = first.shape();
        if axis >= shape.len() {
            return Err(TensorError::AxisOutOfRange { op: "concat", axis, shape: shape.to_vec() });
        }
        let mut out_shape = shape.to_vec();
        out_shape[axis] = 0;
        for t in tensors {
            let s = t.shape();
            let compatible = s.len() == shape.len()
                && s.iter().zip(shape).enumerate().all(|(a, (x, y))| a == axis || x == y);
            if !compatible {
                return Err(TensorError::ShapeMismatch {
                    op: "concat",
                    left: shape.to_vec(),
                    right: s.to_vec(),
                });
            }
            out_shape[axis] += s[axis];
        }
        // View every input as [outer, len_t * inner]; output rows interleave them.
        let outer: usize = shape[..axis].iter().product();
        let inner: usize = shape[axis + 1..].iter().product();
        let mut out = Vec::with_capacity(out_shape.iter().product());
        for o in 0..outer {
            for t in tensors {
                let row = t.shape()[axis] * inner;
                out.extend_from_slice(&t.data()[o * row..(o + 1) * row]);
            }
        }
        Ok(Self::from_parts(out_shape, out))
    }

    /// Broadcasts to `shape` by numpy rules: align trailing axes; each input
    /// dimension must equal the target or be 1; missing leading axes are added.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Self, TensorError> {
        let from = self.shape();
        let err = || TensorError::Broadcast { from: from.to_vec(), to: shape.to_vec() };
        if from.len() > shape.len() {
            return Err(err());
        }
        let lead = shape.len() - from.len();
        let in_strides = strides(from);
        // Stride 0 along broadcast axes repeats the single input entry.
        let mut step = vec![0usize; shape.len()];
        for (a, (&d, &s)) in from.iter().zip(&in_strides).enumerate() {
            match (d, shape[lead + a]) {
                (x, y) if x == y => step[lead + a] = if d == 1 { 0 } else { s },
                (1, _) => {}
                _ => return Err(err()),
            }
        }
        let n = crate::error::numel(shape)?;
        let src = self.data();
        let mut out = Vec::with_capacity(n);
        if n > 0 {
            let mut idx = vec![0usize; shape.len()];
            loop {
                let off: usize = idx.iter().zip(&step).map(|(i, s)| i * s).sum();
                out.push(src[off].clone());
                if !next_index(&mut idx, shape) {
                    break;
                }
            }
        }
        Ok(Self::from_parts(shape.to_vec(), out))
    }

    /// Entries picked by flat index into a tensor of `shape`: output entry `i` is input entry
    /// `index[i]`, or `zero` where `index[i]` is `None` (padding). Any index map (im2col,
    /// pooling windows, axis reorders) is one gather; for linear secret sharings it is local.
    pub fn gather(&self, index: &[Option<usize>], shape: &[usize], zero: T) -> Result<Self, TensorError> {
        let n = crate::error::numel(shape)?;
        if n != index.len() {
            return Err(TensorError::DataLength { shape: shape.to_vec(), expected: n, got: index.len() });
        }
        let src = self.data();
        let out = index
            .iter()
            .map(|i| match *i {
                Some(k) => {
                    src.get(k).cloned().ok_or(TensorError::GatherOutOfRange { index: k, len: src.len() })
                }
                None => Ok(zero.clone()),
            })
            .collect::<Result<Vec<T>, _>>()?;
        Ok(Self::from_parts(shape.to_vec(), out))
    }
}
