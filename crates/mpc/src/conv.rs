//! The geometry of a 2-D convolution's patches (im2col) over a channels-last `[B, H, W, C]`
//! input: which input entry each entry of the patch matrix reads.
//!
//! A convolution is `out = im2col(x) · W`, with the patch matrix's rows `(b, oy, ox)` and
//! columns `(ky, kx, c)`:
//! `im2col(x)[(b, oy, ox), (ky, kx, c)] = x[b, oy·s_y − p_top + ky, ox·s_x − p_left + kx, c]`,
//! 0 outside the image. The patch matrix is `kh·kw` times larger than the input, so a family
//! that keeps a convolution's operands for a later check may keep the input and this
//! geometry instead ([`crate::traits::FixedPoint::conv2d`]).

/// A convolution's patch geometry (the output size is the caller's, checked against the rest
/// by [`Conv2d::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2d {
    /// `[B, H, W, C]` of the input.
    pub input: [usize; 4],
    /// Kernel height and width.
    pub kernel: [usize; 2],
    /// Vertical and horizontal stride.
    pub stride: [usize; 2],
    /// Padding on the top and on the left (the bottom and right padding only bound the
    /// output size).
    pub pad: [usize; 2],
    /// Output height and width.
    pub output: [usize; 2],
}

impl Conv2d {
    /// The geometry, if every output position's window starts within the padded input and
    /// no size is zero; `None` otherwise.
    pub fn new(
        input: [usize; 4],
        kernel: [usize; 2],
        stride: [usize; 2],
        pad: [usize; 2],
        output: [usize; 2],
    ) -> Option<Conv2d> {
        let ok = kernel.iter().chain(&stride).chain(&output).all(|&v| v > 0)
            && (0..2).all(|a| (output[a] - 1) * stride[a] < input[1 + a] + pad[a]);
        ok.then_some(Conv2d { input, kernel, stride, pad, output })
    }

    /// Rows of the patch matrix: `B·oh·ow`.
    pub fn rows(&self) -> usize {
        self.input[0] * self.output[0] * self.output[1]
    }

    /// Columns of the patch matrix: `kh·kw·C`.
    pub fn cols(&self) -> usize {
        self.kernel[0] * self.kernel[1] * self.input[3]
    }

    /// Entries of the input.
    pub fn input_len(&self) -> usize {
        self.input.iter().product()
    }

    /// For patch row `row` and kernel offset `(ky, kx)`: the flat input index of channel 0 of
    /// the entry it reads (the `C` channels follow it), or `None` in the padding.
    pub fn source(&self, row: usize, ky: usize, kx: usize) -> Option<usize> {
        let [_, h, w, c] = self.input;
        let [oh, ow] = self.output;
        let (b, oy, ox) = (row / (oh * ow), row / ow % oh, row % ow);
        let y = (oy * self.stride[0] + ky).checked_sub(self.pad[0])?;
        let x = (ox * self.stride[1] + kx).checked_sub(self.pad[1])?;
        (y < h && x < w).then_some(((b * h + y) * w + x) * c)
    }

    /// [`Conv2d::source`] for every kernel offset of patch row `row`, `(ky, kx)` row-major: the
    /// row's position is found once (three divisions) instead of per offset.
    pub fn row_sources(&self, row: usize) -> impl Iterator<Item = Option<usize>> + '_ {
        let [_, h, w, c] = self.input;
        let [oh, ow] = self.output;
        let (b, oy, ox) = (row / (oh * ow), row / ow % oh, row % ow);
        let (y0, x0) = (oy * self.stride[0], ox * self.stride[1]);
        let [kh, kw] = self.kernel;
        (0..kh).flat_map(move |ky| {
            let y = (y0 + ky).checked_sub(self.pad[0]).filter(|&y| y < h);
            (0..kw).map(move |kx| {
                let x = (x0 + kx).checked_sub(self.pad[1]).filter(|&x| x < w)?;
                Some(((b * h + y?) * w + x) * c)
            })
        })
    }

    /// The patch matrix as flat input indices, row-major (`None`: a zero of the padding).
    pub fn index_map(&self) -> Vec<Option<usize>> {
        let c = self.input[3];
        let mut idx = Vec::with_capacity(self.rows() * self.cols());
        for row in 0..self.rows() {
            for at in self.row_sources(row) {
                idx.extend((0..c).map(|ch| at.map(|s| s + ch)));
            }
        }
        idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_s_sources_are_those_of_each_offset() {
        for conv in [
            Conv2d::new([2, 5, 4, 3], [3, 2], [2, 1], [1, 0], [3, 3]).unwrap(),
            Conv2d::new([1, 3, 3, 2], [2, 2], [1, 1], [1, 1], [3, 3]).unwrap(),
        ] {
            let [kh, kw] = conv.kernel;
            for row in 0..conv.rows() {
                let direct: Vec<_> = (0..kh)
                    .flat_map(|ky| (0..kw).map(move |kx| (ky, kx)))
                    .map(|(ky, kx)| conv.source(row, ky, kx))
                    .collect();
                assert_eq!(conv.row_sources(row).collect::<Vec<_>>(), direct, "row {row}");
            }
        }
    }

    #[test]
    fn the_index_map_reads_the_shifted_window_and_zeros_outside() {
        // [1, 3, 3, 2], 2x2 kernel, stride 1, padding 1 on top and left: 3x3 outputs.
        let conv = Conv2d::new([1, 3, 3, 2], [2, 2], [1, 1], [1, 1], [3, 3]).unwrap();
        let idx = conv.index_map();
        assert_eq!(idx.len(), conv.rows() * conv.cols());
        assert_eq!((conv.rows(), conv.cols()), (9, 8));
        // Row 0 (oy = ox = 0): offsets (0,0), (0,1), (1,0) are padding, (1,1) reads (0,0).
        assert_eq!(&idx[..8], &[None, None, None, None, None, None, Some(0), Some(1)]);
        // Row 4 (oy = ox = 1): (0,0) .. (1,1) read (0,0), (0,1), (1,0), (1,1).
        assert_eq!(&idx[32..40], &[0, 1, 2, 3, 6, 7, 8, 9].map(Some));
    }

    #[test]
    fn a_window_past_the_padded_input_is_refused() {
        assert!(Conv2d::new([1, 4, 4, 1], [3, 3], [1, 1], [0, 0], [2, 2]).is_some());
        assert!(Conv2d::new([1, 4, 4, 1], [3, 3], [2, 2], [0, 0], [3, 3]).is_none());
        assert!(Conv2d::new([1, 4, 4, 1], [3, 3], [0, 1], [0, 0], [2, 2]).is_none());
    }
}
