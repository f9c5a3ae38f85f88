//! Fully connected and convolution layers on secret shares by BFV with coefficient encoding
//! ("Cheetah: Lean and Fast Secure Two-Party Deep Neural Network Inference", §3: HomFC and
//! HomConv), as `mm` uses them over Z_t (the M&M paper, App. C-B).
//!
//! Polynomial products place inner products in chosen coefficients, with no rotations:
//!
//! ```text
//! FC (W: n_o × n_i, blocks of b_i inputs and b_o outputs, b_i·b_o ≤ N):
//!   x̂ = Σ_j x_j X^j,   ŵ = Σ_{i<b_o} Σ_{j<b_i} W[i][j] X^{i·b_i + b_i − 1 − j}
//!   (x̂·ŵ)[i·b_i + b_i − 1] = Σ_j W[i][j]·x_j
//! Conv (C' channels × H' rows × W columns per polynomial, C'·H'·W ≤ N, kernels h × h, valid):
//!   x̂ = Σ x[c][i][j] X^{c·H'W + i·W + j},   ŵ_m = Σ K[m][c][l][l'] X^{O − (c·H'W + l·W + l')},
//!   O = (C' − 1)·H'W + (h − 1)·W + h − 1,   (x̂·ŵ_m)[O + i·W + j] = Σ_{c,l,l'} x[c][i+l][j+l']·K[m][c][l][l']
//! ```
//!
//! (no other pair of terms reaches those coefficients, and nothing wraps around `X^N + 1`,
//! because the products stay below degree `C'·H'·W + O < 2N` and every wrapped term lands
//! below `O`). Larger layers are cut into blocks: input blocks of FC and channel groups of
//! Conv are summed inside one answer; Conv cuts the rows into tiles overlapping by `h − 1`.
//!
//! **Protocol** (shares `x = x_0 + x_1` over Z_t; the evaluator holds `x_0` and the weights,
//! the key holder `x_1`): the key holder sends `Enc(x̂_1)` per input block; the evaluator
//! answers `Σ Enc(x̂_1)·ŵ − R` per output block ([`Ole::answer_polynomials`], flooded) and keeps
//! `W·x_0 + R`; the key holder decrypts `W·x_1 − R`. One round trip; the evaluator's own
//! product is computed in the clear.

use veil_mpc::{Ctx, MpcError, Result};

use crate::ole::Ole;

fn mul_add(acc: u64, a: u64, b: u64, t: u64) -> u64 {
    ((u128::from(acc) + u128::from(a) * u128::from(b)) % u128::from(t)) as u64
}

/// A fully connected layer `y = W·x` (`W`: `outputs × inputs`) cut into polynomial blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FcPlan {
    /// `n_o`.
    pub outputs: usize,
    /// `n_i`.
    pub inputs: usize,
    /// Inputs per polynomial (`b_i`).
    pub in_block: usize,
    /// Outputs per polynomial (`b_o`).
    pub out_block: usize,
}

impl FcPlan {
    /// The plan at ring degree `degree`.
    pub fn new(outputs: usize, inputs: usize, degree: usize) -> Result<Self> {
        if outputs == 0 || inputs == 0 {
            return Err(MpcError::Invalid(format!("a {outputs}×{inputs} layer")));
        }
        let in_block = inputs.min(degree);
        let out_block = outputs.min(degree / in_block);
        Ok(FcPlan { outputs, inputs, in_block, out_block })
    }

    /// Input polynomials (ciphertexts sent).
    pub fn input_polys(&self) -> usize {
        self.inputs.div_ceil(self.in_block)
    }

    /// Output polynomials (ciphertexts answered).
    pub fn output_polys(&self) -> usize {
        self.outputs.div_ceil(self.out_block)
    }

    /// Terms per answer: every input block.
    pub fn terms(&self) -> usize {
        self.input_polys()
    }

    /// `x̂` per input block.
    pub fn encode_input(&self, x: &[u64]) -> Result<Vec<Vec<u64>>> {
        if x.len() != self.inputs {
            return Err(MpcError::Invalid(format!("{} inputs for a layer of {}", x.len(), self.inputs)));
        }
        Ok(x.chunks(self.in_block).map(<[u64]>::to_vec).collect())
    }

    /// `ŵ` per (output block, input block); `w` row-major, entries in Z_t.
    pub fn encode_weights(&self, w: &[u64]) -> Result<Vec<Vec<Option<Vec<u64>>>>> {
        if w.len() != self.outputs * self.inputs {
            return Err(MpcError::Invalid(format!(
                "{} weights for a {}×{} layer",
                w.len(),
                self.outputs,
                self.inputs
            )));
        }
        let (bi, bo) = (self.in_block, self.out_block);
        Ok((0..self.output_polys())
            .map(|ob| {
                (0..self.input_polys())
                    .map(|ib| {
                        let mut poly = vec![0u64; bi * bo];
                        for i in 0..bo.min(self.outputs - ob * bo) {
                            for j in 0..bi.min(self.inputs - ib * bi) {
                                poly[i * bi + bi - 1 - j] = w[(ob * bo + i) * self.inputs + ib * bi + j];
                            }
                        }
                        Some(poly)
                    })
                    .collect()
            })
            .collect())
    }

    /// `y` from the answers' coefficients.
    pub fn decode_output(&self, polys: &[Vec<u64>]) -> Vec<u64> {
        (0..self.outputs)
            .map(|o| polys[o / self.out_block][(o % self.out_block) * self.in_block + self.in_block - 1])
            .collect()
    }

    /// `W·x mod t` in the clear.
    pub fn apply(&self, w: &[u64], x: &[u64], t: u64) -> Vec<u64> {
        (0..self.outputs)
            .map(|o| (0..self.inputs).fold(0, |acc, i| mul_add(acc, w[o * self.inputs + i], x[i], t)))
            .collect()
    }
}

/// A valid, stride-1 convolution of `channels × height × width` inputs with `kernels` kernels
/// of `size × size`, cut into channel groups and row tiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvPlan {
    /// `C`, `H`, `W` of the input.
    pub channels: usize,
    /// See [`Self::channels`].
    pub height: usize,
    /// See [`Self::channels`].
    pub width: usize,
    /// `M` kernels of `h × h`.
    pub kernels: usize,
    /// `h`.
    pub size: usize,
    /// Channels per polynomial (`C'`).
    pub group: usize,
    /// Rows per tile (`H'`).
    pub tile_rows: usize,
    /// First input row of each tile.
    pub tiles: Vec<usize>,
}

impl ConvPlan {
    /// The plan at ring degree `degree`.
    pub fn new(
        channels: usize,
        height: usize,
        width: usize,
        kernels: usize,
        size: usize,
        degree: usize,
    ) -> Result<Self> {
        if [channels, height, width, kernels, size].contains(&0) || size > height || size > width {
            return Err(MpcError::Invalid(format!(
                "a {size}×{size} convolution of {channels}×{height}×{width} into {kernels} channels"
            )));
        }
        if width * size > degree {
            return Err(MpcError::Invalid(format!("{size} rows of {width} exceed the degree {degree}")));
        }
        let (group, tile_rows) = if height * width <= degree {
            (channels.min(degree / (height * width)), height)
        } else {
            (1, degree / width)
        };
        let step = tile_rows - size + 1;
        let out_rows = height - size + 1;
        let tiles = (0..out_rows).step_by(step).collect();
        Ok(ConvPlan { channels, height, width, kernels, size, group, tile_rows, tiles })
    }

    fn groups(&self) -> usize {
        self.channels.div_ceil(self.group)
    }

    /// Input polynomials: one per (channel group, tile).
    pub fn input_polys(&self) -> usize {
        self.groups() * self.tiles.len()
    }

    /// Output polynomials: one per (kernel, tile).
    pub fn output_polys(&self) -> usize {
        self.kernels * self.tiles.len()
    }

    /// Terms per answer: every channel group of the tile.
    pub fn terms(&self) -> usize {
        self.groups()
    }

    fn offset(&self) -> usize {
        (self.group - 1) * self.tile_rows * self.width + (self.size - 1) * self.width + self.size - 1
    }

    /// `x̂` per (group, tile); `x` is `C × H × W`, row-major.
    pub fn encode_input(&self, x: &[u64]) -> Result<Vec<Vec<u64>>> {
        let (h, w) = (self.height, self.width);
        if x.len() != self.channels * h * w {
            return Err(MpcError::Invalid(format!(
                "{} values for a {}×{h}×{w} input",
                x.len(),
                self.channels
            )));
        }
        let plane = self.tile_rows * w;
        let mut out = Vec::with_capacity(self.input_polys());
        for g in 0..self.groups() {
            for &start in &self.tiles {
                let mut poly = vec![0u64; self.group * plane];
                for c in 0..self.group.min(self.channels - g * self.group) {
                    for i in 0..self.tile_rows.min(h - start) {
                        let src = ((g * self.group + c) * h + start + i) * w;
                        poly[c * plane + i * w..c * plane + (i + 1) * w].copy_from_slice(&x[src..src + w]);
                    }
                }
                out.push(poly);
            }
        }
        Ok(out)
    }

    /// `ŵ` per (kernel·tiles + tile, group·tiles + tile); `k` is `M × C × h × h`, row-major.
    pub fn encode_weights(&self, k: &[u64]) -> Result<Vec<Vec<Option<Vec<u64>>>>> {
        let (hh, w) = (self.size, self.width);
        if k.len() != self.kernels * self.channels * hh * hh {
            return Err(MpcError::Invalid(format!(
                "{} weights for {} kernels of {}×{hh}×{hh}",
                k.len(),
                self.kernels,
                self.channels
            )));
        }
        let (plane, o) = (self.tile_rows * w, self.offset());
        let nt = self.tiles.len();
        let per_kernel: Vec<Vec<Vec<u64>>> = (0..self.kernels)
            .map(|m| {
                (0..self.groups())
                    .map(|g| {
                        let mut poly = vec![0u64; o + 1];
                        for c in 0..self.group.min(self.channels - g * self.group) {
                            for l in 0..hh {
                                for l2 in 0..hh {
                                    let v = k[((m * self.channels + g * self.group + c) * hh + l) * hh + l2];
                                    poly[o - (c * plane + l * w + l2)] = v;
                                }
                            }
                        }
                        poly
                    })
                    .collect()
            })
            .collect();
        Ok((0..self.kernels * nt)
            .map(|out| {
                let (m, tile) = (out / nt, out % nt);
                (0..self.groups() * nt)
                    .map(|inp| (inp % nt == tile).then(|| per_kernel[m][inp / nt].clone()))
                    .collect()
            })
            .collect())
    }

    /// The output `M × (H − h + 1) × (W − h + 1)` from the answers' coefficients.
    pub fn decode_output(&self, polys: &[Vec<u64>]) -> Vec<u64> {
        let (oh, ow) = (self.height - self.size + 1, self.width - self.size + 1);
        let (o, nt) = (self.offset(), self.tiles.len());
        let mut y = vec![0u64; self.kernels * oh * ow];
        for m in 0..self.kernels {
            for (ti, &start) in self.tiles.iter().enumerate() {
                let rows = (self.tile_rows - self.size + 1).min(oh - start);
                for i in 0..rows {
                    for j in 0..ow {
                        y[(m * oh + start + i) * ow + j] = polys[m * nt + ti][o + i * self.width + j];
                    }
                }
            }
        }
        y
    }

    /// The convolution mod `t` in the clear.
    pub fn apply(&self, k: &[u64], x: &[u64], t: u64) -> Vec<u64> {
        let (c, h, w, hh) = (self.channels, self.height, self.width, self.size);
        let (oh, ow) = (h - hh + 1, w - hh + 1);
        let mut y = vec![0u64; self.kernels * oh * ow];
        for m in 0..self.kernels {
            for i in 0..oh {
                for j in 0..ow {
                    let mut acc = 0;
                    for ch in 0..c {
                        for l in 0..hh {
                            for l2 in 0..hh {
                                acc = mul_add(
                                    acc,
                                    x[(ch * h + i + l) * w + j + l2],
                                    k[((m * c + ch) * hh + l) * hh + l2],
                                    t,
                                );
                            }
                        }
                    }
                    y[(m * oh + i) * ow + j] = acc;
                }
            }
        }
        y
    }
}

/// A layer both parties can run on shares: its polynomial encodings and clear form.
pub trait Layer {
    /// Polynomials of the input.
    fn input_polys(&self) -> usize;
    /// `x̂` per input polynomial.
    fn encode_input(&self, x: &[u64]) -> Result<Vec<Vec<u64>>>;
    /// `ŵ` per (output, input) polynomial.
    fn encode_weights(&self, w: &[u64]) -> Result<Vec<Vec<Option<Vec<u64>>>>>;
    /// The output from the answers' coefficients.
    fn decode_output(&self, polys: &[Vec<u64>]) -> Vec<u64>;
    /// The layer in the clear, mod `t`.
    fn apply(&self, w: &[u64], x: &[u64], t: u64) -> Vec<u64>;
    /// Output polynomials.
    fn output_polys(&self) -> usize;
    /// Terms in the largest answer (input polynomials one output sums).
    fn terms(&self) -> usize;
    /// The coefficient positions [`Layer::decode_output`] reads of the answers (of any of
    /// them), ascending: the answers' `c0` travels at these only. Found by decoding answers
    /// whose coefficient `j` holds `j + 1`.
    fn used_coefficients(&self, degree: usize) -> Vec<usize> {
        let marker: Vec<u64> = (1..=degree as u64).collect();
        let polys = vec![marker; self.output_polys()];
        let mut used: Vec<usize> =
            self.decode_output(&polys).into_iter().filter(|&v| v > 0).map(|v| v as usize - 1).collect();
        used.sort_unstable();
        used.dedup();
        used
    }
}

macro_rules! layer {
    ($t:ty) => {
        impl Layer for $t {
            fn input_polys(&self) -> usize {
                <$t>::input_polys(self)
            }
            fn encode_input(&self, x: &[u64]) -> Result<Vec<Vec<u64>>> {
                <$t>::encode_input(self, x)
            }
            fn encode_weights(&self, w: &[u64]) -> Result<Vec<Vec<Option<Vec<u64>>>>> {
                <$t>::encode_weights(self, w)
            }
            fn decode_output(&self, polys: &[Vec<u64>]) -> Vec<u64> {
                <$t>::decode_output(self, polys)
            }
            fn apply(&self, w: &[u64], x: &[u64], t: u64) -> Vec<u64> {
                <$t>::apply(self, w, x, t)
            }
            fn output_polys(&self) -> usize {
                <$t>::output_polys(self)
            }
            fn terms(&self) -> usize {
                <$t>::terms(self)
            }
        }
    };
}
layer!(FcPlan);
layer!(ConvPlan);

/// The evaluator's share of the layer on `x = x_0 + x_1`: `W·x_0 + R`.
pub fn evaluate(ole: &Ole, ctx: &mut Ctx, layer: &dyn Layer, w: &[u64], x0: &[u64]) -> Result<Vec<u64>> {
    let t = ole.modulus();
    let weights = layer.encode_weights(w)?;
    let used = layer.used_coefficients(ole.bfv().slots());
    let masks = ole.answer_polynomials_at(ctx, layer.input_polys(), &weights, Some(&used))?;
    let own = layer.apply(w, x0, t);
    let r = layer.decode_output(&masks);
    Ok(own.iter().zip(r).map(|(&a, b)| (a + b) % t).collect())
}

/// The key holder's share of the layer on `x = x_0 + x_1`: `W·x_1 − R`.
pub fn hold(ole: &Ole, ctx: &mut Ctx, layer: &dyn Layer, x1: &[u64]) -> Result<Vec<u64>> {
    let used = layer.used_coefficients(ole.bfv().slots());
    ole.send_polynomials_for(ctx, &layer.encode_input(x1)?, &used, (layer.terms(), layer.output_polys()))?;
    let polys = ole.receive_polynomials_at(ctx, layer.terms(), layer.output_polys(), Some(&used))?;
    Ok(layer.decode_output(&polys))
}
