//! Geometry of the CNN layers as index maps over channels-last `[B, H, W, C]` tensors.
//!
//! Each layer that moves data (im2col for a convolution, the windows of a pooling, the
//! channel-major order of `Flatten`) is a list of flat source indices, `None` standing for a
//! zero of the padding. The float executor and the secure one apply the same lists: the former
//! to numbers, the latter with [`veil_mpc::traits::Layout::gather`] to shares, which is local
//! for every linear sharing. So both compute the same function by construction, and a
//! convolution costs one matrix product:
//!
//! `out[(b, oy, ox), o] = Σ_{ky, kx, c} x[b, oy·s_y − p_top + ky, ox·s_x − p_left + kx, c] ·
//! W[(ky, kx, c), o]`, where an index outside the image reads 0.

use serde::{Deserialize, Serialize};

use veil_mpc::conv::Conv2d;

use crate::error::{NnError, Result};
use crate::weights::FloatTensor;

/// Flat source indices of a gather (`None`: a zero of the padding).
pub type IndexMap = Vec<Option<usize>>;

/// A 2-D window: kernel, stride and padding (`[top, left, bottom, right]`, as ONNX orders its
/// `pads` for two spatial axes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Kernel height and width.
    pub kernel: [usize; 2],
    /// Vertical and horizontal stride.
    pub stride: [usize; 2],
    /// Padding: top, left, bottom, right.
    pub pad: [usize; 4],
}

impl Window {
    /// A square kernel with equal stride and padding on every side.
    pub fn square(kernel: usize, stride: usize, pad: usize) -> Self {
        Window { kernel: [kernel; 2], stride: [stride; 2], pad: [pad; 4] }
    }

    /// Output height and width on an `h × w` input (floor division, as ONNX's default).
    pub fn output(&self, h: usize, w: usize) -> Result<(usize, usize)> {
        let [kh, kw] = self.kernel;
        let [sh, sw] = self.stride;
        let (ph, pw) = (h + self.pad[0] + self.pad[2], w + self.pad[1] + self.pad[3]);
        if kh == 0 || kw == 0 || sh == 0 || sw == 0 {
            return Err(NnError::Invalid(format!("window {self:?} has a zero kernel or stride")));
        }
        if kh > ph || kw > pw {
            return Err(NnError::Invalid(format!("a {kh}x{kw} kernel on a padded {ph}x{pw} input")));
        }
        if self.pad[0] >= kh || self.pad[2] >= kh || self.pad[1] >= kw || self.pad[3] >= kw {
            return Err(NnError::Invalid(format!("padding {:?} as wide as the kernel {kh}x{kw}", self.pad)));
        }
        Ok(((ph - kh) / sh + 1, (pw - kw) / sw + 1))
    }

    /// Source `(y, x)` of kernel offset `(ky, kx)` at output `(oy, ox)`, if inside the image.
    fn source(
        &self,
        h: usize,
        w: usize,
        (oy, ox): (usize, usize),
        (ky, kx): (usize, usize),
    ) -> Option<(usize, usize)> {
        let y = (oy * self.stride[0] + ky).checked_sub(self.pad[0])?;
        let x = (ox * self.stride[1] + kx).checked_sub(self.pad[1])?;
        (y < h && x < w).then_some((y, x))
    }
}

/// The patch geometry of a convolution of `[b, h, w, c]` under `win` (rows `(b, oy, ox)`,
/// columns `(ky, kx, c)`).
pub fn patches(shape: [usize; 4], win: &Window) -> Result<Conv2d> {
    let [_, h, w, _] = shape;
    let (oh, ow) = win.output(h, w)?;
    Conv2d::new(shape, win.kernel, win.stride, [win.pad[0], win.pad[1]], [oh, ow])
        .ok_or_else(|| NnError::Invalid(format!("window {win:?} on a {h}x{w} input")))
}

/// im2col of `[b, h, w, c]`: rows `(b, oy, ox)`, columns `(ky, kx, c)`. Returns the index map
/// and the matrix's `[rows, cols]`.
pub fn im2col(shape: [usize; 4], win: &Window) -> Result<(IndexMap, [usize; 2])> {
    let conv = patches(shape, win)?;
    Ok((conv.index_map(), [conv.rows(), conv.cols()]))
}

/// What a pooling window holds at a padded position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PadFill {
    /// A zero (average pooling).
    Zero,
    /// A copy of the window's first real entry, so a maximum is unchanged by padding.
    Repeat,
}

/// Pooling windows of `[b, h, w, c]`: rows `(b, oy, ox, ch)`, columns `(ky, kx)`. Returns the
/// index map, `[rows, k]` and each row's count of real (unpadded) entries.
pub fn windows(shape: [usize; 4], win: &Window, fill: PadFill) -> Result<(IndexMap, [usize; 2], Vec<usize>)> {
    let [b, h, w, c] = shape;
    let (oh, ow) = win.output(h, w)?;
    let [kh, kw] = win.kernel;
    let rows = b * oh * ow * c;
    let (mut idx, mut counts) = (Vec::with_capacity(rows * kh * kw), Vec::with_capacity(rows));
    for n in 0..b {
        for oy in 0..oh {
            for ox in 0..ow {
                for ch in 0..c {
                    let real: Vec<Option<usize>> = (0..kh * kw)
                        .map(|k| {
                            win.source(h, w, (oy, ox), (k / kw, k % kw))
                                .map(|(y, x)| ((n * h + y) * w + x) * c + ch)
                        })
                        .collect();
                    let first = real.iter().flatten().next().copied();
                    if first.is_none() {
                        return Err(NnError::Invalid(format!(
                            "window {win:?} at ({oy}, {ox}) covers only padding"
                        )));
                    }
                    counts.push(real.iter().flatten().count());
                    idx.extend(real.into_iter().map(|v| match fill {
                        PadFill::Zero => v,
                        PadFill::Repeat => v.or(first),
                    }));
                }
            }
        }
    }
    Ok((idx, [rows, kh * kw], counts))
}

/// `[b, h, w, c]` → `[b, c·h·w]` in channel-major order.
pub fn flatten(shape: [usize; 4]) -> IndexMap {
    let [b, h, w, c] = shape;
    let mut idx = Vec::with_capacity(b * h * w * c);
    for n in 0..b {
        for ch in 0..c {
            for y in 0..h {
                for x in 0..w {
                    idx.push(Some(((n * h + y) * w + x) * c + ch));
                }
            }
        }
    }
    idx
}

/// `[b, c, h, w]` (PyTorch's layout) → `[b, h, w, c]` as an index map.
pub fn nchw_to_nhwc(shape: [usize; 4]) -> IndexMap {
    let [b, c, h, w] = shape;
    let mut idx = Vec::with_capacity(b * c * h * w);
    for n in 0..b {
        for y in 0..h {
            for x in 0..w {
                idx.extend((0..c).map(|ch| Some(((n * c + ch) * h + y) * w + x)));
            }
        }
    }
    idx
}

/// Applies an index map to plain values.
pub fn gather<T: Copy>(src: &[T], idx: &[Option<usize>], zero: T) -> Result<Vec<T>> {
    idx.iter()
        .map(|i| match *i {
            Some(k) => src
                .get(k)
                .copied()
                .ok_or_else(|| NnError::Invalid(format!("index {k} of {} values", src.len()))),
            None => Ok(zero),
        })
        .collect()
}

/// A convolution kernel from PyTorch's and ONNX's `[OC, C, kh, kw]` to the im2col order
/// `[kh, kw, C, OC]` of [`crate::graph::Op::Conv2d`].
pub fn kernel_to_im2col(w: &FloatTensor) -> Result<FloatTensor> {
    let [oc, c, kh, kw] = w.shape[..] else {
        return Err(NnError::Invalid(format!("a kernel of shape {:?}, not [OC, C, kh, kw]", w.shape)));
    };
    let mut data = vec![0f32; w.data.len()];
    for o in 0..oc {
        for ch in 0..c {
            for y in 0..kh {
                for x in 0..kw {
                    data[((y * kw + x) * c + ch) * oc + o] = w.data[((o * c + ch) * kh + y) * kw + x];
                }
            }
        }
    }
    FloatTensor::new(vec![kh, kw, c, oc], data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A direct convolution, for comparing with im2col.
    fn direct(x: &[f64], [b, h, w, c]: [usize; 4], k: &[f64], oc: usize, win: &Window) -> Vec<f64> {
        let (oh, ow) = win.output(h, w).unwrap();
        let mut out = vec![0.0; b * oh * ow * oc];
        for n in 0..b {
            for oy in 0..oh {
                for ox in 0..ow {
                    for o in 0..oc {
                        let mut s = 0.0;
                        for ky in 0..win.kernel[0] {
                            for kx in 0..win.kernel[1] {
                                let y = (oy * win.stride[0] + ky) as isize - win.pad[0] as isize;
                                let xx = (ox * win.stride[1] + kx) as isize - win.pad[1] as isize;
                                if y < 0 || xx < 0 || y >= h as isize || xx >= w as isize {
                                    continue;
                                }
                                for ch in 0..c {
                                    let xi = ((n * h + y as usize) * w + xx as usize) * c + ch;
                                    let ki = ((ky * win.kernel[1] + kx) * c + ch) * oc + o;
                                    s += x[xi] * k[ki];
                                }
                            }
                        }
                        out[((n * oh + oy) * ow + ox) * oc + o] = s;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn im2col_times_kernel_is_the_convolution() {
        let shape = [2, 5, 4, 3];
        let x: Vec<f64> = (0..2 * 5 * 4 * 3).map(|v| (v as f64 * 0.37).sin()).collect();
        let oc = 2;
        for win in [
            Window::square(3, 1, 1),
            Window::square(2, 2, 0),
            Window { kernel: [3, 2], stride: [2, 1], pad: [1, 0, 2, 1] },
        ] {
            let k: Vec<f64> =
                (0..win.kernel[0] * win.kernel[1] * 3 * oc).map(|v| (v as f64 * 0.11).cos()).collect();
            let (idx, [rows, cols]) = im2col(shape, &win).unwrap();
            let cols_v = gather(&x, &idx, 0.0).unwrap();
            let mut got = vec![0.0; rows * oc];
            for r in 0..rows {
                for j in 0..cols {
                    for o in 0..oc {
                        got[r * oc + o] += cols_v[r * cols + j] * k[j * oc + o];
                    }
                }
            }
            let want = direct(&x, shape, &k, oc, &win);
            assert_eq!(got.len(), want.len());
            assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-12), "{win:?}");
        }
    }

    #[test]
    fn padded_max_windows_repeat_a_real_entry() {
        let (idx, [rows, k], counts) =
            windows([1, 2, 2, 1], &Window::square(2, 1, 1), PadFill::Repeat).unwrap();
        assert_eq!((rows, k), (9, 4));
        assert!(idx.iter().all(Option::is_some));
        assert_eq!(counts[0], 1);
        assert_eq!(counts[4], 4);
        let (idx, ..) = windows([1, 2, 2, 1], &Window::square(2, 1, 1), PadFill::Zero).unwrap();
        assert_eq!(idx[..4], [None, None, None, Some(0)]);
    }

    #[test]
    fn flatten_and_layout_orders() {
        // NCHW [1, 2, 1, 2] = [a0 a1 | b0 b1]; NHWC = [a0 b0 a1 b1]; flatten returns NCHW order.
        let nchw = [1.0, 2.0, 10.0, 20.0];
        let nhwc = gather(&nchw, &nchw_to_nhwc([1, 2, 1, 2]), 0.0).unwrap();
        assert_eq!(nhwc, [1.0, 10.0, 2.0, 20.0]);
        assert_eq!(gather(&nhwc, &flatten([1, 1, 2, 2]), 0.0).unwrap(), nchw);
    }

    #[test]
    fn bad_windows_are_errors() {
        assert!(Window::square(0, 1, 0).output(4, 4).is_err());
        assert!(Window::square(5, 1, 0).output(4, 4).is_err());
        assert!(Window::square(2, 1, 2).output(4, 4).is_err());
    }
}
