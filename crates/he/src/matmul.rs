//! Matrix products `Z = X·W` on shares by coefficient encoding ("Cheetah: Lean and Fast Secure
//! Two-Party Deep Neural Network Inference", §3, HomFC with a batch; the matrix products of
//! "BumbleBee: Secure Two-party Inference Framework for Large Transformers" use the same
//! placement), as `mm` runs a transformer's dense layers and attention products.
//!
//! `X` is `rows × inner` (the key holder's side, encrypted), `W` is `inner × cols` (the
//! evaluator's plaintext). Blocks of `n_b` rows, `k_b` inner entries and `m_b` columns with
//! `n_b·k_b·m_b ≤ N`:
//!
//! ```text
//! x̂ = Σ_{i<n_b, j<k_b} X[i][j] · z^{i·k_b·m_b + j}
//! ŵ = Σ_{j<k_b, l<m_b} W[j][l] · z^{l·k_b + k_b − 1 − j}
//! (x̂·ŵ)[i·k_b·m_b + l·k_b + k_b − 1] = Σ_j X[i][j]·W[j][l]
//! ```
//!
//! No other pair of terms reaches those coefficients (`(i' − i)·m_b·k_b + (l' − l)·k_b = j'' − j'`
//! with `|j'' − j'| < k_b` forces `i' = i`, `l' = l`, `j' = j''`), and terms past `z^N` wrap
//! below `z^{k_b − 1}`, under every coefficient read. With `n_b = 1` this is Cheetah's FC
//! layer ([`crate::linear::FcPlan`]) on one row. Each output block sums its row block's
//! `⌈inner/k_b⌉` input blocks. The blocks are chosen to send the fewest ciphertexts: the
//! queries `⌈rows/n_b⌉·⌈inner/k_b⌉` and the answers `⌈rows/n_b⌉·⌈cols/m_b⌉`.

use veil_mpc::{MpcError, Result};

use crate::bfv::Bfv;
use crate::flood::{plan, plan_packed};
use crate::linear::Layer;
use crate::pack::{MAX_STRIDE, packing_stride};
use crate::wire::{self, Form};

/// What one key switching of the answers' packing is counted as when plans are compared, in
/// bytes: about its time (0.3 ms at N = 8192, four primes, one core) on a 1 Gbit/s link.
pub const SWITCH_BYTES: f64 = 2_000.0;

/// A product `X·W` cut into polynomial blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatPlan {
    /// Rows of `X`.
    pub rows: usize,
    /// Columns of `X`, rows of `W`.
    pub inner: usize,
    /// Columns of `W`.
    pub cols: usize,
    /// `n_b`, `k_b`, `m_b`.
    pub blocks: (usize, usize, usize),
}

/// Powers of two below `limit`, and `limit` itself.
fn candidates(limit: usize) -> impl Iterator<Item = usize> {
    (0..usize::BITS).map(|e| 1usize << e).take_while(move |&b| b < limit).chain(std::iter::once(limit))
}

impl MatPlan {
    /// The plan at ring degree `degree` that sends the fewest ciphertexts.
    pub fn new(rows: usize, inner: usize, cols: usize, degree: usize) -> Result<Self> {
        Self::cheapest(rows, inner, cols, degree, |plan| {
            Some((plan.input_polys() + plan.output_polys()) as f64)
        })
        .ok_or_else(|| MpcError::Invalid(format!("a product of {rows}×{inner} and {inner}×{cols}")))
    }

    /// The plan at `bfv`'s degree that costs the least on the wire between the key holder and
    /// the evaluator of [`crate::linear::evaluate`]: its seeded queries, its answers packed
    /// `s` to a ciphertext as [`crate::ole::Ole::packing`] packs them (`s` the power of two in
    /// `k_b`, as far as the flooding allows) or sparse where they cannot be packed, and each
    /// key switching of the packing counted as [`SWITCH_BYTES`].
    pub fn for_scheme(rows: usize, inner: usize, cols: usize, bfv: &Bfv) -> Result<Self> {
        let query = wire::ciphertext_bytes(bfv, 0, Form::Seeded)? as f64;
        // A plan whose answers sum too many terms to flood is no candidate.
        let cost = |plan: &MatPlan| Some(plan.input_polys() as f64 * query + plan.answer_cost(bfv).ok()?);
        Self::cheapest(rows, inner, cols, bfv.slots(), cost).ok_or_else(|| {
            MpcError::Invalid(format!(
                "no block plan of {rows}×{inner}·{inner}×{cols} fits the ring degree and the flooding of {}",
                bfv.preset().name()
            ))
        })
    }

    /// The blocks `n_b·k_b·m_b ≤ degree` (powers of two or the whole axis) of least `cost`;
    /// `None` where no candidate has a cost or a dimension is 0.
    fn cheapest(
        rows: usize,
        inner: usize,
        cols: usize,
        degree: usize,
        cost: impl Fn(&MatPlan) -> Option<f64>,
    ) -> Option<Self> {
        if rows == 0 || inner == 0 || cols == 0 || degree == 0 {
            return None;
        }
        let mut best: Option<(f64, MatPlan)> = None;
        for kb in candidates(inner.min(degree)) {
            for nb in candidates(rows.min(degree / kb)) {
                let mb = cols.min(degree / (kb * nb));
                if mb == 0 {
                    continue;
                }
                let plan = MatPlan { rows, inner, cols, blocks: (nb, kb, mb) };
                if let Some(c) = cost(&plan)
                    && best.as_ref().is_none_or(|(b, _)| c < *b)
                {
                    best = Some((c, plan));
                }
            }
        }
        best.map(|(_, p)| p)
    }

    /// Bytes of the answers, packed where they can be, plus the packing's key switchings.
    fn answer_cost(&self, bfv: &Bfv) -> Result<f64> {
        let (nb, kb, mb) = self.blocks;
        let (outputs, terms) = (self.output_polys(), self.terms());
        let limit = (1usize << kb.trailing_zeros()).min(MAX_STRIDE).min(outputs.next_power_of_two());
        let stride = packing_stride(bfv, terms, limit, |_| true).unwrap_or(1);
        let form = |plan: &crate::flood::FloodPlan, used: &[usize]| match plan.dropped_bits {
            Some((k0, k1)) if used.is_empty() => {
                wire::ciphertext_bytes(bfv, plan.response_level, Form::Compressed(k0, k1))
            }
            Some((k0, k1)) => wire::ciphertext_bytes(bfv, plan.response_level, Form::Sparse(k0, k1, used)),
            None => wire::ciphertext_bytes(bfv, plan.response_level, Form::Full),
        };
        if stride >= 2 {
            let groups = outputs.div_ceil(stride);
            let bytes = form(&plan_packed(bfv, terms, stride)?, &[])? as f64;
            Ok(groups as f64 * bytes + (groups * (stride - 1)) as f64 * SWITCH_BYTES)
        } else {
            let used = vec![0; (nb * mb).min(bfv.slots())];
            Ok(outputs as f64 * form(&plan(bfv, terms)?, &used)? as f64)
        }
    }

    fn row_blocks(&self) -> usize {
        self.rows.div_ceil(self.blocks.0)
    }

    fn inner_blocks(&self) -> usize {
        self.inner.div_ceil(self.blocks.1)
    }

    fn col_blocks(&self) -> usize {
        self.cols.div_ceil(self.blocks.2)
    }

    /// Input polynomials (ciphertexts sent).
    pub fn input_polys(&self) -> usize {
        self.row_blocks() * self.inner_blocks()
    }

    /// Output polynomials (ciphertexts answered).
    pub fn output_polys(&self) -> usize {
        self.row_blocks() * self.col_blocks()
    }

    /// Terms per answer: the row block's inner blocks.
    pub fn terms(&self) -> usize {
        self.inner_blocks()
    }

    /// `x̂` per (row block, inner block); `x` row-major.
    pub fn encode_input(&self, x: &[u64]) -> Result<Vec<Vec<u64>>> {
        if x.len() != self.rows * self.inner {
            return Err(MpcError::Invalid(format!(
                "{} entries for a {}×{} matrix",
                x.len(),
                self.rows,
                self.inner
            )));
        }
        let (nb, kb, mb) = self.blocks;
        let mut polys = Vec::with_capacity(self.input_polys());
        for rb in 0..self.row_blocks() {
            for ib in 0..self.inner_blocks() {
                let mut poly = vec![0u64; (nb - 1) * kb * mb + kb];
                for i in 0..nb.min(self.rows - rb * nb) {
                    for j in 0..kb.min(self.inner - ib * kb) {
                        poly[i * kb * mb + j] = x[(rb * nb + i) * self.inner + ib * kb + j];
                    }
                }
                polys.push(poly);
            }
        }
        Ok(polys)
    }

    /// `ŵ` per (output polynomial, input polynomial): each output block `(r, c)` takes its row
    /// block's inputs; `w` row-major.
    pub fn encode_weights(&self, w: &[u64]) -> Result<Vec<Vec<Option<Vec<u64>>>>> {
        if w.len() != self.inner * self.cols {
            return Err(MpcError::Invalid(format!(
                "{} weights for a {}×{} matrix",
                w.len(),
                self.inner,
                self.cols
            )));
        }
        let (_, kb, mb) = self.blocks;
        let blocks: Vec<Vec<Vec<u64>>> = (0..self.col_blocks())
            .map(|cb| {
                (0..self.inner_blocks())
                    .map(|ib| {
                        let mut poly = vec![0u64; kb * mb];
                        for l in 0..mb.min(self.cols - cb * mb) {
                            for j in 0..kb.min(self.inner - ib * kb) {
                                poly[l * kb + kb - 1 - j] = w[(ib * kb + j) * self.cols + cb * mb + l];
                            }
                        }
                        poly
                    })
                    .collect()
            })
            .collect();
        let inputs = self.input_polys();
        let mut out = Vec::with_capacity(self.output_polys());
        for rb in 0..self.row_blocks() {
            for col in &blocks {
                let mut row = vec![None; inputs];
                for (ib, poly) in col.iter().enumerate() {
                    row[rb * self.inner_blocks() + ib] = Some(poly.clone());
                }
                out.push(row);
            }
        }
        Ok(out)
    }

    /// `Z` (row-major) from the answers' coefficients.
    pub fn decode_output(&self, polys: &[Vec<u64>]) -> Vec<u64> {
        let (nb, kb, mb) = self.blocks;
        let mut z = vec![0u64; self.rows * self.cols];
        for (r, row) in z.chunks_mut(self.cols).enumerate() {
            for (c, v) in row.iter_mut().enumerate() {
                let poly = &polys[(r / nb) * self.col_blocks() + c / mb];
                *v = poly.get((r % nb) * kb * mb + (c % mb) * kb + kb - 1).copied().unwrap_or(0);
            }
        }
        z
    }

    /// `X·W mod t` in the clear.
    pub fn apply(&self, w: &[u64], x: &[u64], t: u64) -> Vec<u64> {
        // Row by row, the products `x[r][j]·w[j][·]` (each below 2^{2b}, t < 2^b) accumulate in
        // 128 bits, 2^{127−2b} terms at a time (128 for b = 60) before one reduction mod t.
        let b = u64::BITS - t.saturating_sub(1).leading_zeros();
        let terms = 1usize << 127u32.saturating_sub(2 * b).min(20);
        let t128 = u128::from(t);
        let mut z = vec![0u64; self.rows * self.cols];
        let mut acc = vec![0u128; self.cols];
        for (r, row) in z.chunks_mut(self.cols).enumerate() {
            acc.fill(0);
            let xr = &x[r * self.inner..(r + 1) * self.inner];
            for (j, &a) in xr.iter().enumerate() {
                if a != 0 {
                    let wj = &w[j * self.cols..(j + 1) * self.cols];
                    for (s, &b) in acc.iter_mut().zip(wj) {
                        *s += u128::from(a) * u128::from(b);
                    }
                }
                if (j + 1) % terms == 0 {
                    acc.iter_mut().for_each(|s| *s %= t128);
                }
            }
            for (v, s) in row.iter_mut().zip(&acc) {
                *v = (s % t128) as u64;
            }
        }
        z
    }
}

impl Layer for MatPlan {
    fn input_polys(&self) -> usize {
        MatPlan::input_polys(self)
    }
    fn encode_input(&self, x: &[u64]) -> Result<Vec<Vec<u64>>> {
        MatPlan::encode_input(self, x)
    }
    fn encode_weights(&self, w: &[u64]) -> Result<Vec<Vec<Option<Vec<u64>>>>> {
        MatPlan::encode_weights(self, w)
    }
    fn decode_output(&self, polys: &[Vec<u64>]) -> Vec<u64> {
        MatPlan::decode_output(self, polys)
    }
    fn apply(&self, w: &[u64], x: &[u64], t: u64) -> Vec<u64> {
        MatPlan::apply(self, w, x, t)
    }
    fn output_polys(&self) -> usize {
        MatPlan::output_polys(self)
    }
    fn terms(&self) -> usize {
        MatPlan::terms(self)
    }
}
