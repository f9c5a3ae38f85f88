//! 2-D convolution by im2col + matrix product.
//!
//! For input `X[N, C, H, W]`, weight `K[O, C, kh, kw]`, stride `s` and zero
//! padding `p`, the output is `Y[N, O, H', W']` with `H' = (H + 2p - kh)/s + 1`,
//! `W' = (W + 2p - kw)/s + 1` and
//!
//! `Y[n, o, y, x] = Σ_{c, i, j} K[o, c, i, j] · X[n, c, y·s + i - p, x·s + j - p]`
//!
//! (out-of-range input positions read as zero). im2col lays the input patches out
//! as a matrix `P[(c·kh + i)·kw + j, (n·H' + y)·W' + x]`, so that
//! `Y = K.reshape([O, C·kh·kw]) · P`, reshaped to `[O, N, H', W']` and permuted
//! to `[N, O, H', W']`.

use veil_ring::Ring;

use crate::Tensor;
use crate::device::{Cpu, Device};
use crate::error::TensorError;

impl<T: Ring> Tensor<T> {
    /// Convolution of an NCHW input with an OIHW weight on the CPU (the fastest kernels).
    pub fn conv2d(&self, weight: &Self, stride: usize, padding: usize) -> Result<Self, TensorError> {
        self.conv2d_with(weight, stride, padding, &Cpu::default())
    }

    /// Convolution of an NCHW input with an OIHW weight on `device`.
    pub fn conv2d_with(
        &self,
        weight: &Self,
        stride: usize,
        padding: usize,
        device: &dyn Device,
    ) -> Result<Self, TensorError> {
        let err = |reason| TensorError::Conv {
            reason,
            input: self.shape().to_vec(),
            weight: weight.shape().to_vec(),
            stride,
            padding,
        };
        let (&[n, c, _, _], &[o, ci, kh, kw]) = (self.shape(), weight.shape()) else {
            return Err(err("input and weight must both be 4-dimensional"));
        };
        if c != ci {
            return Err(err("input channels differ from weight input channels"));
        }
        let cols = self.im2col(kh, kw, stride, padding).map_err(|e| match e {
            TensorError::Conv { reason, .. } => err(reason),
            other => other,
        })?;
        let (oh, ow) = out_size(self.shape(), kh, kw, stride, padding).ok_or_else(|| err("invalid"))?;
        let w2 = weight.clone().reshape(&[o, c * kh * kw])?;
        let y = w2.matmul_with(&cols, device)?; // [O, N·H'·W']
        y.reshape(&[o, n, oh, ow])?.permute(&[1, 0, 2, 3])
    }

    /// The im2col matrix `[C·kh·kw, N·H'·W']` of an NCHW input (see the module docs).
    pub fn im2col(&self, kh: usize, kw: usize, stride: usize, padding: usize) -> Result<Self, TensorError> {
        let err = |reason| TensorError::Conv {
            reason,
            input: self.shape().to_vec(),
            weight: vec![kh, kw],
            stride,
            padding,
        };
        let &[n, c, h, w] = self.shape() else {
            return Err(err("input must be 4-dimensional (NCHW)"));
        };
        if stride == 0 {
            return Err(err("stride must be at least 1"));
        }
        if kh == 0 || kw == 0 {
            return Err(err("kernel height and width must be at least 1"));
        }
        let (oh, ow) = out_size(self.shape(), kh, kw, stride, padding)
            .ok_or_else(|| err("kernel is larger than the padded input"))?;
        let rows = c * kh * kw;
        let ncols = n * oh * ow;
        let x = self.data();
        let mut out = vec![T::ZERO; rows * ncols];
        for (r, out_row) in out.chunks_exact_mut(ncols.max(1)).enumerate().take(rows) {
            let (ch, i, j) = (r / (kh * kw), (r / kw) % kh, r % kw);
            for b in 0..n {
                let plane = &x[(b * c + ch) * h * w..][..h * w];
                for y in 0..oh {
                    // Input row y·s + i - p, skipped (left zero) when in the padding.
                    let Some(iy) = (y * stride + i).checked_sub(padding).filter(|&v| v < h) else {
                        continue;
                    };
                    let dst = &mut out_row[(b * oh + y) * ow..][..ow];
                    for (xo, d) in dst.iter_mut().enumerate() {
                        if let Some(ix) = (xo * stride + j).checked_sub(padding).filter(|&v| v < w) {
                            *d = plane[iy * w + ix];
                        }
                    }
                }
            }
        }
        Ok(Self::from_parts(vec![rows, ncols], out))
    }
}

/// Output spatial size `(H', W')`, or `None` if the kernel does not fit the padded input.
fn out_size(shape: &[usize], kh: usize, kw: usize, stride: usize, padding: usize) -> Option<(usize, usize)> {
    let (h, w) = (shape[2] + 2 * padding, shape[3] + 2 * padding);
    if kh > h || kw > w || stride == 0 {
        return None;
    }
    Some(((h - kh) / stride + 1, (w - kw) / stride + 1))
}
