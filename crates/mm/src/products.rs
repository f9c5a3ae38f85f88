//! Products of the `mm` family on fixed-point shares of Z_2^64: elementwise by the Z_p-OLE
//! with role switching, matrix products by coefficient encoding ([`veil_he::matmul`]), both
//! lifted into Z_p by one conversion per operand and brought back with the rescaling free
//! (the M&M paper, §IV-B, §V-B, App. C-B).
//!
//! An operand may be **known** to one computing party: a weight its owner shared from inside
//! the session (the server of a client/server run) is held in full by the owner, the other
//! party's share being 0. Its lift into Z_p is then local, and a matrix product with it runs
//! in one direction only (the owner evaluates, the other party sends its encrypted share):
//! Cheetah's and BumbleBee's setting, where the server's weights are plaintext to it.
//! A product of two operands known to the same party is computed by that party alone.
//!
//! Ranges, which the model keeps (the fixed-point executor reports where it does not): shares
//! of `|x| < 2^62`, products below `2^{η}` at twice the fractional bits, `η = ⌊log2 p⌋ − 2`.

use veil_he::linear::{Layer, evaluate, hold};
use veil_he::matmul::MatPlan;
use veil_he::ole::Ole;
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_twopc::TwoParty;

use crate::convert::{field_to_ring, ring_to_field};
use crate::trunc::field_to_ring_truncated;

/// Values per one-way product call: what a party holds of ciphertexts at once stays bounded.
const CHUNK: usize = 1 << 18;

/// The ring of the family's shares.
pub const BITS: u32 = 64;
/// The ring comparisons read their operands in (a local reduction of the shares): values
/// within `±2^39` units, `±2^23` at 16 fractional bits (the M&M paper's mixed bitwidths:
/// comparisons cost in proportion to their width, the values need no more).
pub const COMPARE_BITS: u32 = 40;

/// Shares of a matrix: row-major words, rows, columns, and the party that knows it (if any).
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a> {
    /// Row-major shares.
    pub words: &'a [u64],
    /// `[rows, cols]`.
    pub dims: [usize; 2],
    /// The computing party holding the whole value (the other's share is 0), if any.
    pub holder: Option<PartyId>,
}

fn reduce_signed(v: u64, p: u64) -> u64 {
    i128::from(v as i64).rem_euclid(i128::from(p)) as u64
}

/// Shares in Z_p of the signed values of `x`: local when one party holds them.
pub fn lift(
    tp: &mut TwoParty,
    ctx: &mut Ctx,
    x: &[u64],
    holder: Option<PartyId>,
    p: u64,
) -> Result<Vec<u64>> {
    match holder {
        Some(h) if ctx.party() == h => Ok(x.iter().map(|&v| reduce_signed(v, p)).collect()),
        Some(_) => Ok(vec![0; x.len()]),
        None => Ok(ring_to_field(tp, ctx, x, BITS, p)?.into_iter().map(|v| v as u64).collect()),
    }
}

/// Shares in Z_2^64 of `⌊rep_p(z)/2^s⌋` (up to the truncation's unit), or of `rep_p(z)` for
/// `s = 0`.
pub fn lower(tp: &mut TwoParty, ctx: &mut Ctx, z: &[u64], p: u64, s: u32) -> Result<Vec<u64>> {
    let out = if s == 0 {
        field_to_ring(tp, ctx, z, p, BITS)?
    } else {
        field_to_ring_truncated(tp, ctx, z, p, s, BITS)?
    };
    Ok(out.into_iter().map(|v| v as u64).collect())
}

/// `⌊x·y / 2^s⌋` elementwise on shares (one OLE each way, role switched).
pub fn mul_shift(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: &[u64],
    y: &[u64],
    s: u32,
) -> Result<Vec<u64>> {
    if x.len() != y.len() {
        return Err(MpcError::Invalid(format!("products of {} and {} values", x.len(), y.len())));
    }
    let p = ole.modulus();
    let xp = lift(tp, ctx, x, None, p)?;
    let yp = lift(tp, ctx, y, None, p)?;
    let z = ole.mul_shares(ctx, &xp, &yp, tp.is_first())?;
    lower(tp, ctx, &z, p, s)
}

/// `⌊x ⊙ m / 2^s⌋` for shared `x` and `m` known to `holder` (the other party's `m` is
/// ignored): the holder's part local, the other's by one OLE one way (it sends `Enc(x)`, the
/// holder answers with `m`).
pub fn mul_known(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: &[u64],
    m: &[u64],
    (holder, s): (usize, u32),
) -> Result<Vec<u64>> {
    if x.len() != m.len() {
        return Err(MpcError::Invalid(format!("products of {} and {} values", x.len(), m.len())));
    }
    let mut out = Vec::with_capacity(x.len());
    for (xc, mc) in x.chunks(CHUNK).zip(m.chunks(CHUNK)) {
        out.extend(mul_known_chunk(tp, ole, ctx, xc, mc, (holder, s))?);
    }
    Ok(out)
}

fn mul_known_chunk(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: &[u64],
    m: &[u64],
    (holder, s): (usize, u32),
) -> Result<Vec<u64>> {
    let p = ole.modulus();
    let xp = lift(tp, ctx, x, None, p)?;
    let z = if ctx.party() == holder {
        let mp = lift(tp, ctx, m, Some(holder), p)?;
        let cross = ole.answer(ctx, &[&mp])?;
        xp.iter()
            .zip(&mp)
            .zip(cross)
            .map(|((&a, &b), c)| ((u128::from(a) * u128::from(b) + u128::from(c)) % u128::from(p)) as u64)
            .collect()
    } else {
        ole.send_queries(ctx, &[&xp])?;
        ole.receive_answers(ctx, 1, x.len())?
    };
    lower(tp, ctx, &z, p, s)
}

/// `x ⊙ y` (shifted by `s`) where each operand may be known to one party (both ways).
pub fn mul_holders(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    (x, hx): (&[u64], Option<usize>),
    (y, hy): (&[u64], Option<usize>),
    s: u32,
) -> Result<Vec<u64>> {
    let p = ole.modulus();
    let xp = lift(tp, ctx, x, hx, p)?;
    let yp = lift(tp, ctx, y, hy, p)?;
    let z = ole.mul_shares(ctx, &xp, &yp, tp.is_first())?;
    lower(tp, ctx, &z, p, s)
}

/// `⌊x·y / 2^s⌋` computed by the party that knows both (the other's share is 0).
fn local_product(ctx: &Ctx, holder: PartyId, x: Operand<'_>, w: Operand<'_>, s: u32) -> Vec<u64> {
    let ([m, k], [_, n]) = (x.dims, w.dims);
    if ctx.party() != holder {
        return vec![0; m * n];
    }
    let mut out = vec![0u64; m * n];
    for (i, row) in out.chunks_mut(n).enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            let sum: i128 = (0..k)
                .map(|l| i128::from(x.words[i * k + l] as i64) * i128::from(w.words[l * n + j] as i64))
                .sum();
            *v = (sum >> s) as i64 as u64;
        }
    }
    out
}

fn transpose(x: &[u64], [rows, cols]: [usize; 2]) -> Vec<u64> {
    let mut out = vec![0u64; x.len()];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = x[r * cols + c];
        }
    }
    out
}

/// Shares in Z_p of `X·W` where `W` (Z_p) is known to `holder` and `X` is shared in Z_p.
fn evaluate_known(
    ole: &Ole,
    ctx: &mut Ctx,
    plan: &MatPlan,
    holder: PartyId,
    xp: &[u64],
    wp: &[u64],
) -> Result<Vec<u64>> {
    if ctx.party() == holder { evaluate(ole, ctx, plan, wp, xp) } else { hold(ole, ctx, plan, xp) }
}

/// Shares in Z_p of `X·W` for `X`, `W` both shared: each party evaluates its share of `W` on
/// the shared `X` (`X·W = X·W_0 + X·W_1`), both directions in the same round trip.
fn evaluate_shared(ole: &Ole, ctx: &mut Ctx, plan: &MatPlan, xp: &[u64], wp: &[u64]) -> Result<Vec<u64>> {
    let p = ole.modulus();
    // The answers' c0 travels at the coefficients the output reads only.
    let used = plan.used_coefficients(ole.bfv().slots());
    ole.send_polynomials_for(ctx, &plan.encode_input(xp)?, &used, (plan.terms(), plan.output_polys()))?;
    let masks = ole.answer_polynomials_at(ctx, plan.input_polys(), &plan.encode_weights(wp)?, Some(&used))?;
    let own = plan.apply(wp, xp, p);
    let mine = plan.decode_output(&masks);
    let answers = ole.receive_polynomials_at(ctx, plan.terms(), plan.output_polys(), Some(&used))?;
    let cross = plan.decode_output(&answers);
    Ok(own
        .iter()
        .zip(mine)
        .zip(cross)
        .map(|((&a, b), c)| ((u128::from(a) + u128::from(b) + u128::from(c)) % u128::from(p)) as u64)
        .collect())
}

/// The Z_p shares of `Wᵀ` for a shared `W` (`[k, n]`), lifted once for several products
/// [`matmul_known_by_lifted`] makes with it (each lift is a conversion on the wire).
pub fn lift_transposed(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    w: &[u64],
    dims: [usize; 2],
) -> Result<Vec<u64>> {
    if w.len() != dims[0] * dims[1] {
        return Err(MpcError::Invalid(format!("{} entries for a {:?} matrix", w.len(), dims)));
    }
    lift(tp, ctx, &transpose(w, dims), None, ole.modulus())
}

/// Shares of `⌊X·W / 2^s⌋` for `X` (`[m, k]`) known to one party and `W` (`[k, n]`) shared,
/// given as [`lift_transposed`]'s `Wᵀ` in Z_p: what [`matmul`] computes, without lifting `W`.
pub fn matmul_known_by_lifted(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: Operand<'_>,
    wt: &[u64],
    n: usize,
    s: u32,
) -> Result<Vec<u64>> {
    let [m, k] = x.dims;
    let Some(h) = x.holder else {
        return Err(MpcError::Invalid("the left operand is not known to a party".into()));
    };
    if x.words.len() != m * k || wt.len() != k * n {
        return Err(MpcError::Invalid(format!("a product of {:?} and a lifted {k}×{n}", x.dims)));
    }
    let p = ole.modulus();
    // (X·W)ᵀ = Wᵀ·Xᵀ with Xᵀ the known operand.
    let plan = MatPlan::for_scheme(n, k, m, ole.bfv())?;
    let xt = lift(tp, ctx, &transpose(x.words, [m, k]), Some(h), p)?;
    let z = transpose(&evaluate_known(ole, ctx, &plan, h, wt, &xt)?, [n, m]);
    lower(tp, ctx, &z, p, s)
}

/// Shares of `⌊X·W / 2^s⌋` (`[m, k] × [k, n]`) and who knows the result.
pub fn matmul(
    tp: &mut TwoParty,
    ole: &Ole,
    ctx: &mut Ctx,
    x: Operand<'_>,
    w: Operand<'_>,
    s: u32,
) -> Result<(Vec<u64>, Option<PartyId>)> {
    let ([m, k], [k2, n]) = (x.dims, w.dims);
    if k != k2 || x.words.len() != m * k || w.words.len() != k * n {
        return Err(MpcError::Invalid(format!("a product of {:?} and {:?}", x.dims, w.dims)));
    }
    if let (Some(a), Some(b)) = (x.holder, w.holder)
        && a == b
    {
        return Ok((local_product(ctx, a, x, w, s), Some(a)));
    }
    let p = ole.modulus();
    let z = match (x.holder, w.holder) {
        (_, Some(h)) => {
            let plan = MatPlan::for_scheme(m, k, n, ole.bfv())?;
            let xp = lift(tp, ctx, x.words, x.holder, p)?;
            let wp = lift(tp, ctx, w.words, w.holder, p)?;
            evaluate_known(ole, ctx, &plan, h, &xp, &wp)?
        }
        (Some(_), None) => {
            let wt = lift_transposed(tp, ole, ctx, w.words, [k, n])?;
            return Ok((matmul_known_by_lifted(tp, ole, ctx, x, &wt, n, s)?, None));
        }
        (None, None) => {
            let plan = MatPlan::for_scheme(m, k, n, ole.bfv())?;
            let xp = lift(tp, ctx, x.words, None, p)?;
            let wp = lift(tp, ctx, w.words, None, p)?;
            evaluate_shared(ole, ctx, &plan, &xp, &wp)?
        }
    };
    Ok((lower(tp, ctx, &z, p, s)?, None))
}
