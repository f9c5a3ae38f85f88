//! Linear algebra under CKKS in spatial-first packing (the diagonal
//! method of "Algorithms in HElib" with baby-step giant-step, as BOLT uses it).
//!
//! **Packing**: a matrix `X` of `L` rows and `D` columns goes column after column, each column's
//! `L` entries consecutive: slot `d·L + l` of ciphertext `⌊d/B⌋` holds `X[l][d]`, with
//! `B = slots/L` columns ("blocks") per ciphertext (`L` must divide the slots; missing columns
//! are zeros).
//!
//! **Product** `C = X·W` (`W`: `D × D'`) works on blocks: with `x` one input ciphertext and
//! `M[d][j] = W[d][j]` restricted to its blocks, left-rotating `x` by `t·L` brings block
//! `(j + t) mod B` to block `j`, so
//!
//! ```text
//! out_j = Σ_t diag_t[j] · Rot(x, t·L)[j],     diag_t[j] = M[(j + t) mod B][j]  (repeated L times)
//!       = Σ_g Rot( Σ_i Rot(diag_{g·b+i}, −g·b·L) ⊙ Rot(x, i·L), g·b·L )      (t = g·b + i)
//! ```
//!
//! The baby rotations `Rot(x, i·L)`, `i < b`, are hoisted per input ciphertext and shared by
//! every output ciphertext; the inner sums run over all input ciphertexts before each of the
//! `g − 1` giant rotations of an output ciphertext. Rotations: `(b − 1)` per input ciphertext
//! plus `(g − 1)` per output ciphertext; plaintext products: `B` per pair of ciphertexts.
//! A matrix–vector product is the case `L = slots/B`, the vector repeated in every row.
//!
//! Output ciphertexts are computed in parallel (rayon), as are the inputs' baby steps.
//!
//! **Rotate-and-sum** (BLB's reduction over `D`): `log2 B` rotations by `2^i·L` leave the sum
//! over the blocks in every block (the result already broadcast).

use rayon::prelude::*;
use veil_mpc::{MpcError, Result};

use super::{Ciphertext, Ckks, GaloisKeys, Plaintext};

/// The shape of `C = X·W` in spatial-first packing and its baby/giant split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulPlan {
    /// Rows of `X` (`L`).
    pub rows: usize,
    /// Columns of `X`, rows of `W` (`D`).
    pub inner: usize,
    /// Columns of `W` (`D'`).
    pub cols: usize,
    /// Columns per ciphertext (`B = slots/L`).
    pub blocks: usize,
    /// Baby steps `b` (a power of two, `b·g ≥ B`).
    pub baby: usize,
    /// Giant steps `g`.
    pub giant: usize,
}

impl MatmulPlan {
    /// The plan for `X` of `rows × inner` by `W` of `inner × cols` at `slots` slots.
    pub fn new(rows: usize, inner: usize, cols: usize, slots: usize) -> Result<Self> {
        if rows == 0 || inner == 0 || cols == 0 {
            return Err(MpcError::Invalid(format!("a {rows}×{inner} by {inner}×{cols} product")));
        }
        if rows > slots || !slots.is_multiple_of(rows) {
            return Err(MpcError::Invalid(format!("{rows} rows do not divide {slots} slots")));
        }
        let blocks = slots / rows;
        let baby = blocks.isqrt().next_power_of_two().min(blocks);
        let giant = blocks.div_ceil(baby);
        Ok(MatmulPlan { rows, inner, cols, blocks, baby, giant })
    }

    /// Input ciphertexts (`⌈D/B⌉`).
    pub fn inputs(&self) -> usize {
        self.inner.div_ceil(self.blocks)
    }

    /// Output ciphertexts (`⌈D'/B⌉`).
    pub fn outputs(&self) -> usize {
        self.cols.div_ceil(self.blocks)
    }

    /// The left rotations the product needs Galois keys for.
    pub fn rotations(&self) -> Vec<i64> {
        let l = self.rows as i64;
        let baby = (1..self.baby as i64).map(|i| i * l);
        let giant = (1..self.giant as i64).map(|g| g * self.baby as i64 * l);
        baby.chain(giant).collect()
    }

    /// Rotations one product performs: hoisted baby steps and giant steps.
    pub fn rotation_count(&self) -> usize {
        self.inputs() * (self.baby - 1) + self.outputs() * (self.giant - 1)
    }

    /// Plaintext products one product performs.
    pub fn plaintext_products(&self) -> usize {
        self.inputs() * self.outputs() * self.blocks
    }
}

/// `X` (`rows × inner`, row-major) as the slot vectors of its ciphertexts.
pub fn pack(plan: &MatmulPlan, x: &[f64]) -> Result<Vec<Vec<f64>>> {
    if x.len() != plan.rows * plan.inner {
        return Err(MpcError::Invalid(format!(
            "{} values for a {}×{} matrix",
            x.len(),
            plan.rows,
            plan.inner
        )));
    }
    let slots = plan.rows * plan.blocks;
    let mut out = vec![vec![0.0; slots]; plan.inputs()];
    for l in 0..plan.rows {
        for d in 0..plan.inner {
            out[d / plan.blocks][(d % plan.blocks) * plan.rows + l] = x[l * plan.inner + d];
        }
    }
    Ok(out)
}

/// The `rows × cols` matrix (row-major) from the slot vectors of the output ciphertexts.
pub fn unpack(plan: &MatmulPlan, slots: &[Vec<f64>]) -> Result<Vec<f64>> {
    if slots.len() != plan.outputs() || slots.iter().any(|s| s.len() < plan.rows * plan.blocks) {
        return Err(MpcError::Invalid(format!(
            "{} slot vectors for {} output ciphertexts",
            slots.len(),
            plan.outputs()
        )));
    }
    let mut out = vec![0.0; plan.rows * plan.cols];
    for l in 0..plan.rows {
        for j in 0..plan.cols {
            out[l * plan.cols + j] = slots[j / plan.blocks][(j % plan.blocks) * plan.rows + l];
        }
    }
    Ok(out)
}

/// `W` encoded for the product: for each input ciphertext, output ciphertext, giant step `g`
/// and baby step `i`, the diagonal `diag_{g·b+i}` rotated right by `g·b·L` (`None` where it
/// is zero).
#[derive(Clone, Debug)]
pub struct EncodedWeights {
    plan: MatmulPlan,
    /// `[input][output][g·b + i]`.
    diagonals: Vec<Vec<Vec<Option<Plaintext>>>>,
    scale: f64,
}

/// The slots of `Rot(diag_t, −g·b·L)` for input ciphertext `ic` and output ciphertext `oc`
/// (`t = g·b + i`), or `None` where they are all zero.
fn diagonal(plan: &MatmulPlan, w: &[f64], ic: usize, oc: usize, t: usize) -> Option<Vec<f64>> {
    let (l, bl) = (plan.rows, plan.blocks);
    if t >= bl {
        return None;
    }
    let weight =
        |d: usize, j: usize| if d < plan.inner && j < plan.cols { w[d * plan.cols + j] } else { 0.0 };
    let shift = (t / plan.baby) * plan.baby; // g·b, in blocks
    let mut slots = vec![0.0; l * bl];
    let mut nonzero = false;
    for j in 0..bl {
        // Rot(diag_t, −g·b·L)[block j] = diag_t[block (j − g·b) mod B].
        let src = (j + bl - shift) % bl;
        let v = weight(ic * bl + (src + t) % bl, oc * bl + src);
        if v != 0.0 {
            nonzero = true;
            slots[j * l..(j + 1) * l].iter_mut().for_each(|s| *s = v);
        }
    }
    nonzero.then_some(slots)
}

fn check_weights(ckks: &Ckks, plan: &MatmulPlan, w: &[f64]) -> Result<()> {
    if w.len() != plan.inner * plan.cols {
        return Err(MpcError::Invalid(format!(
            "{} weights for a {}×{} matrix",
            w.len(),
            plan.inner,
            plan.cols
        )));
    }
    if plan.rows * plan.blocks != ckks.slots() {
        return Err(MpcError::Invalid(format!(
            "a plan for {} slots at {} slots",
            plan.rows * plan.blocks,
            ckks.slots()
        )));
    }
    Ok(())
}

/// Encodes `W` (`inner × cols`, row-major) at `scale` and `level`, every diagonal held (memory:
/// `⌈D/B⌉·⌈D'/B⌉·B` plaintexts; see [`matmul_streaming`] for large matrices).
pub fn encode_weights(
    ckks: &Ckks,
    plan: &MatmulPlan,
    w: &[f64],
    scale: f64,
    level: usize,
) -> Result<EncodedWeights> {
    check_weights(ckks, plan, w)?;
    let diagonals = (0..plan.inputs())
        .map(|ic| {
            (0..plan.outputs())
                .map(|oc| {
                    (0..plan.blocks)
                        .map(|t| {
                            diagonal(plan, w, ic, oc, t).map(|v| ckks.encode(&v, scale, level)).transpose()
                        })
                        .collect::<Result<Vec<_>>>()
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(EncodedWeights { plan: *plan, diagonals, scale })
}

/// `C = X·W` for `X` in the input ciphertexts (one level, one scale); the output ciphertexts
/// hold `C` in spatial-first packing at scale `x.scale · w.scale`, not rescaled.
pub fn matmul(ckks: &Ckks, x: &[Ciphertext], w: &EncodedWeights, gk: &GaloisKeys) -> Result<Vec<Ciphertext>> {
    product(ckks, &w.plan, x, w.scale, |ic, oc, t| Ok(w.diagonals[ic][oc].get(t).cloned().flatten()), gk)
}

/// [`matmul`] encoding each diagonal of `W` (`inner × cols`, row-major) as it is used, at
/// `scale` and the inputs' level: no plaintext outlives its product.
pub fn matmul_streaming(
    ckks: &Ckks,
    plan: &MatmulPlan,
    x: &[Ciphertext],
    w: &[f64],
    scale: f64,
    gk: &GaloisKeys,
) -> Result<Vec<Ciphertext>> {
    check_weights(ckks, plan, w)?;
    let level = x.first().map_or(0, Ciphertext::level);
    product(
        ckks,
        plan,
        x,
        scale,
        |ic, oc, t| diagonal(plan, w, ic, oc, t).map(|v| ckks.encode(&v, scale, level)).transpose(),
        gk,
    )
}

fn product(
    ckks: &Ckks,
    plan: &MatmulPlan,
    x: &[Ciphertext],
    w_scale: f64,
    diag: impl Fn(usize, usize, usize) -> Result<Option<Plaintext>> + Sync,
    gk: &GaloisKeys,
) -> Result<Vec<Ciphertext>> {
    if x.len() != plan.inputs() {
        return Err(MpcError::Invalid(format!(
            "{} input ciphertexts, the plan takes {}",
            x.len(),
            plan.inputs()
        )));
    }
    let l = plan.rows as i64;
    let steps: Vec<i64> = (0..plan.baby as i64).map(|i| i * l).collect();
    // Baby steps, hoisted: rotated[input][i] = Rot(x_input, i·L).
    let rotated = x.par_iter().map(|ct| ckks.rotate_hoisted(ct, &steps, gk)).collect::<Result<Vec<_>>>()?;
    (0..plan.outputs())
        .into_par_iter()
        .map(|oc| {
            let mut total: Option<Ciphertext> = None;
            for g in 0..plan.giant {
                let mut inner: Option<Ciphertext> = None;
                for (ic, baby) in rotated.iter().enumerate() {
                    for (i, rx) in baby.iter().enumerate() {
                        let Some(pt) = diag(ic, oc, g * plan.baby + i)? else { continue };
                        let term = ckks.mul_plain(rx, &pt)?;
                        inner = Some(match inner {
                            None => term,
                            Some(acc) => ckks.add(&acc, &term)?,
                        });
                    }
                }
                let Some(inner) = inner else { continue };
                let moved = if g == 0 { inner } else { ckks.rotate(&inner, (g * plan.baby) as i64 * l, gk)? };
                total = Some(match total {
                    None => moved,
                    Some(acc) => ckks.add(&acc, &moved)?,
                });
            }
            match total {
                Some(t) => Ok(t),
                // An all-zero block of W: zero at the product's scale.
                None => {
                    let zero = ckks.encode(&[], 1.0, x[0].level())?;
                    let mut z = ckks.mul_plain(&x[0], &zero)?;
                    z.scale = x[0].scale * w_scale;
                    Ok(z)
                }
            }
        })
        .collect()
}

impl EncodedWeights {
    /// The scale of the encoded diagonals.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The plan.
    pub fn plan(&self) -> &MatmulPlan {
        &self.plan
    }
}

/// Sums the `B` blocks of `ct` into every block: `log2 B` rotations by `2^i·L` (BLB's
/// reduction; `B` a power of two).
pub fn rotate_and_sum(ckks: &Ckks, ct: &Ciphertext, rows: usize, gk: &GaloisKeys) -> Result<Ciphertext> {
    let blocks = ckks.slots() / rows.max(1);
    if rows == 0 || !ckks.slots().is_multiple_of(rows) || !blocks.is_power_of_two() {
        return Err(MpcError::Invalid(format!(
            "{rows} rows do not split {} slots into 2^k blocks",
            ckks.slots()
        )));
    }
    let mut acc = ct.clone();
    let mut step = rows;
    while step < ckks.slots() {
        acc = ckks.add(&acc, &ckks.rotate(&acc, step as i64, gk)?)?;
        step *= 2;
    }
    Ok(acc)
}

/// The rotations [`rotate_and_sum`] needs keys for.
pub fn rotate_and_sum_steps(slots: usize, rows: usize) -> Vec<i64> {
    let mut steps = Vec::new();
    let mut step = rows.max(1);
    while step < slots {
        steps.push(step as i64);
        step *= 2;
    }
    steps
}
