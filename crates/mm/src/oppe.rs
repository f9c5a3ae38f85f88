//! Oblivious piecewise polynomial evaluation with mixed moduli and a delayed truncation (the
//! M&M paper, §V-D, Fig. 13), and its GeLU and sigmoid (App. D-B).
//!
//! `g(x) = F_i(x)` on the piece `i` cut by breakpoints `I_1 < … < I_d`, each
//! `F_i(x) = Σ_j a_{i,j}·x^j`, for signed fixed-point shares `x` over `Z_2^ℓ`:
//!
//! ```text
//! 1  b_i = [x > I_i] = MSB(I_i − x) on Z_2^ℓ (millionaires);  𝕀_0 = 1 ⊕ b_1, 𝕀_i = b_i ⊕ b_{i+1}, 𝕀_d = b_d
//! 2  x → Z_p                                    (conversion, |x| < 2^{ℓ−2})
//! 3  x^j, j ≤ m, by OLE products over Z_p, each truncated by 2^f (Theorem 1, E ∈ {−1, 0, 1})
//! 4  F_i(x)·2^{2f+s} = ⌊a_{i,0}·2^{2f+s}⌉ + Σ_j x^j·⌊a_{i,j}·2^{f+s}⌉      (local)
//! 5  u = Σ_i 𝕀_i·F_i(x)                           (Boolean × arithmetic over Z_p)
//! 6  Z_p → Z_2^ℓ with the truncation by 2^{f+s} free (Fig. 7)
//! ```
//!
//! The coefficients carry `s` bits beyond `f` (as many as the field leaves above the largest
//! input): at `f = 11` the sigmoid's `b_4 ≈ −2.5·10^{−4}` is
//! half a unit, and rounded to `f` bits it moved σ(−5) by 0.15. The paper leaves the
//! coefficients' precision open (`s = η − ℓ − f − 1`, at most 20, with `η = ⌊log2 p⌋ − 2`).
//!
//! The comparisons stay on the ring, the polynomials run on the field, and one truncation
//! after the sum replaces one per piece. Preconditions: `|x| < 2^{ℓ−2}`, and the selected
//! piece's `|F_i(x)|·2^{2f+s} < 2^{⌊log2 p⌋ − 2}` (unselected pieces may overflow: the
//! selection multiplies them by 0).

use veil_he::ole::Ole;
use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::Modulus;
use veil_twopc::TwoParty;
use veil_twopc::compare::msb;
use veil_twopc::convert::mux;

use crate::convert::ring_to_field;
use crate::trunc::{field_to_ring_truncated, headroom, truncate};

/// A piecewise polynomial: breakpoints `I_1 < … < I_d` and `d + 1` coefficient lists
/// (`a_{i,0}, a_{i,1}, …`).
#[derive(Clone, Debug, PartialEq)]
pub struct Piecewise {
    /// The breakpoints.
    pub breaks: Vec<f64>,
    /// The pieces' coefficients, constant term first.
    pub pieces: Vec<Vec<f64>>,
}

impl Piecewise {
    /// The function in the clear.
    pub fn eval(&self, x: f64) -> f64 {
        let i = self.breaks.iter().filter(|&&b| x > b).count();
        self.pieces[i].iter().rev().fold(0.0, |acc, &a| acc * x + a)
    }

    /// GeLU after the M&M paper (Eq. 4, ℓ = 32, f = 12): `0` below −3, `0.5x + P4(|x|)` on
    /// [−3, 3] (as two pieces, `|x|` folded into the signs), `x` above 3.
    pub fn gelu() -> Self {
        let a = [
            0.001620808531841547,
            -0.03798164612714154,
            0.5410550166368381,
            -0.18352506127082727,
            0.020848611754127593,
        ];
        let neg: Vec<f64> = a.iter().enumerate().map(|(j, &c)| if j % 2 == 1 { -c } else { c }).collect();
        let (mut left, mut right) = (neg, a.to_vec());
        left[1] += 0.5;
        right[1] += 0.5;
        Piecewise { breaks: vec![-3.0, 0.0, 3.0], pieces: vec![vec![0.0], left, right, vec![0.0, 1.0]] }
    }

    /// The logistic sigmoid after the paper (App. D-B, f = 11): `P4(|x|)` on [0, 5],
    /// `1 − P4(−x)` on [−5, 0), `0` and `1` outside.
    pub fn sigmoid() -> Self {
        let b = [
            0.49352908920523014,
            0.3028510171823098,
            -0.06808619212463336,
            0.006747908074344234,
            -0.0002472776978734074,
        ];
        let left: Vec<f64> = b
            .iter()
            .enumerate()
            .map(|(j, &c)| {
                let c = if j % 2 == 1 { -c } else { c };
                if j == 0 { 1.0 - c } else { -c }
            })
            .collect();
        Piecewise { breaks: vec![-5.0, 0.0, 5.0], pieces: vec![vec![0.0], left, b.to_vec(), vec![1.0]] }
    }

    fn degree(&self) -> usize {
        self.pieces.iter().map(|p| p.len().saturating_sub(1)).max().unwrap_or(0)
    }
}

/// Shares over `Z_2^ℓ` of `g(x)` with `f` fractional bits for signed shares `x` with `f`
/// fractional bits; `p` is the OLE's modulus.
pub fn oppe(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    g: &Piecewise,
    x: &[u64],
    l: u32,
    f: u32,
) -> Result<Vec<u128>> {
    oppe_in(tp, ole, ctx, g, x, (l, l), f)
}

/// [`oppe`] with the breakpoints' comparisons in `Z_2^cmp` (`cmp ≤ ℓ`, the shares reduced
/// locally), exact for `|x| < 2^{cmp−2}`.
pub fn oppe_in(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    g: &Piecewise,
    x: &[u64],
    (l, cmp): (u32, u32),
    f: u32,
) -> Result<Vec<u128>> {
    if g.pieces.len() != g.breaks.len() + 1 || g.breaks.windows(2).any(|w| w[0] >= w[1]) {
        return Err(MpcError::Invalid(
            "a piecewise polynomial needs increasing breakpoints and one piece more".into(),
        ));
    }
    if !(4..=64).contains(&l) || f == 0 || 2 * f + 4 > l || !(f + 4..=l).contains(&cmp) {
        return Err(MpcError::Invalid(format!("OPPE on Z_2^{l} with f = {f}, comparisons in Z_2^{cmp}")));
    }
    let (p, first, n) = (ole.modulus(), tp.is_first(), x.len());
    let pm = Modulus::Integer(p);
    let mask = if cmp == 64 { u64::MAX } else { (1u64 << cmp) - 1 };
    let fixed = |v: f64, bits: u32| -> i128 { (v * (1u64 << bits) as f64).round() as i128 };
    // 1. b_i = MSB(I_i − x).
    let mut b = Vec::with_capacity(g.breaks.len());
    for &brk in &g.breaks {
        let d: Vec<u64> =
            x.iter()
                .map(|&v| {
                    if first {
                        (fixed(brk, f) as u64).wrapping_sub(v) & mask
                    } else {
                        v.wrapping_neg() & mask
                    }
                })
                .collect();
        b.push(msb(tp, ctx, &d, cmp)?);
    }
    let d = b.len();
    let indicator = |i: usize, k: usize| -> bool {
        match i {
            0 => b[0][k] ^ first,
            _ if i == d => b[d - 1][k],
            _ => b[i - 1][k] ^ b[i][k],
        }
    };
    // 2, 3. x and its powers over Z_p, f fractional bits each.
    let narrow = |v: Vec<u128>| -> Vec<u64> { v.into_iter().map(|e| e as u64).collect() };
    let xp = narrow(ring_to_field(tp, ctx, x, l, p)?);
    let mut powers = vec![xp.clone()];
    for _ in 1..g.degree() {
        let last = powers.last().cloned().unwrap_or_default();
        let prod = ole.mul_shares(ctx, &last, &xp, first)?;
        powers.push(narrow(truncate(tp, ctx, &prod, u128::from(p), f, pm)?));
    }
    // 4. F_i at scale 2^{2f+s}, the coefficients carrying s extra bits (as many as the largest
    // input's linear term leaves below 2^η), and 5. the selected sum.
    let extra = headroom(u128::from(p)).saturating_sub(l - 2 + f + 1).min(20);
    let to_field = |c: i128| -> u128 { c.rem_euclid(i128::from(p)) as u128 };
    let mut total = vec![0u128; n];
    for (i, piece) in g.pieces.iter().enumerate() {
        let mut fi: Vec<u128> = vec![if first { to_field(fixed(piece[0], 2 * f + extra)) } else { 0 }; n];
        for (j, &a) in piece.iter().enumerate().skip(1) {
            let c = to_field(fixed(a, f + extra));
            for (acc, &xj) in fi.iter_mut().zip(&powers[j - 1]) {
                *acc = pm.add(*acc, u128::from(xj) * c % u128::from(p));
            }
        }
        let sel: Vec<bool> = (0..n).map(|k| indicator(i, k)).collect();
        let fi: Vec<u64> = fi.into_iter().map(|v| v as u64).collect();
        let chosen = mux(tp, ctx, &sel, &fi, pm)?;
        for (acc, c) in total.iter_mut().zip(chosen) {
            *acc = pm.add(*acc, u128::from(c));
        }
    }
    // 6. Back to the ring, the truncation by 2^{f+s} free.
    let total: Vec<u64> = total.into_iter().map(|v| v as u64).collect();
    field_to_ring_truncated(tp, ctx, &total, p, f + extra, l)
}
