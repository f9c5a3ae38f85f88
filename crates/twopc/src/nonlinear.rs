//! ReLU, row maxima and lookup tables on shares of Z_2^ℓ.
//!
//! - **ReLU** `x·1{x ≥ 0}`: DReLU then the multiplexer.
//! - **Row maxima**: a tournament, `⌈log2 k⌉` levels of `max(a, b) = b + 1{a − b ≥ 0}·(a − b)`
//!   (values within `2^{ℓ−2}` of each other, so differences do not overflow).
//! - **Lookup table** `T: Z_2^m → Z_2^ℓ` on shares of `x ∈ Z_2^m` (CrypTFlow2's LUT): P0
//!   offers, by 1-of-2^m OT, `T[x_0 + j] − r` for every `j`; P1 takes `j = x_1` and P0 keeps
//!   `r`. Cost: m bits from P1, `2^m·ℓ` bits from P0, 2 rounds.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ot::flavours::{Modulus, one_of_n_receive, one_of_n_send};

use crate::TwoParty;
use crate::compare::drelu;
use crate::convert::mux;
use crate::ring::{check_shares, mask};

/// `max(x, 0)` elementwise.
pub fn relu(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], bits: u32) -> Result<Vec<u64>> {
    relu_in(tp, ctx, x, bits, bits)
}

/// [`relu`] with the sign read in `Z_2^cmp` (`cmp ≤ bits`, a local reduction of the shares),
/// exact for `|x| < 2^{cmp−1}`: a comparison of `cmp − 1` bits instead of `bits − 1` (the
/// M&M paper's mixed bitwidths).
pub fn relu_in(tp: &mut TwoParty, ctx: &mut Ctx, x: &[u64], bits: u32, cmp: u32) -> Result<Vec<u64>> {
    let s = drelu(tp, ctx, &narrow(x, bits, cmp)?, cmp)?;
    mux(tp, ctx, &s, x, Modulus::PowerOfTwo(bits))
}

/// The shares reduced to `Z_2^cmp`.
fn narrow(x: &[u64], bits: u32, cmp: u32) -> Result<Vec<u64>> {
    check_shares(x, bits)?;
    if !(2..=bits).contains(&cmp) {
        return Err(MpcError::Invalid(format!("comparisons in Z_2^{cmp} for values of Z_2^{bits}")));
    }
    Ok(x.iter().map(|&v| v & mask(cmp)).collect())
}

/// The maximum of each row of a `[rows, k]` matrix of shares (row-major); returns `rows`.
pub fn max_rows(
    tp: &mut TwoParty,
    ctx: &mut Ctx,
    x: &[u64],
    rows: usize,
    k: usize,
    bits: u32,
) -> Result<Vec<u64>> {
    max_rows_in(tp, ctx, x, (rows, k), bits, bits)
}

/// [`max_rows`] with the comparisons in `Z_2^cmp` (differences within `2^{cmp−1}`).
pub fn max_rows_in(
    tp: &mut TwoParty,
    ctx: &mut Ctx,
    x: &[u64],
    (rows, k): (usize, usize),
    bits: u32,
    cmp: u32,
) -> Result<Vec<u64>> {
    check_shares(x, bits)?;
    if k == 0 || x.len() != rows * k {
        return Err(MpcError::Invalid(format!("row maxima of {} values as {rows} rows of {k}", x.len())));
    }
    let m = mask(bits);
    let mut cur = x.to_vec();
    let mut width = k;
    while width > 1 {
        let pairs = width / 2;
        let next = width.div_ceil(2);
        let (mut a, mut b) = (Vec::with_capacity(rows * pairs), Vec::with_capacity(rows * pairs));
        for r in 0..rows {
            for p in 0..pairs {
                a.push(cur[r * width + 2 * p]);
                b.push(cur[r * width + 2 * p + 1]);
            }
        }
        let d: Vec<u64> = a.iter().zip(&b).map(|(&a, &b)| a.wrapping_sub(b) & m).collect();
        let s = drelu(tp, ctx, &narrow(&d, bits, cmp)?, cmp)?;
        let pick = mux(tp, ctx, &s, &d, Modulus::PowerOfTwo(bits))?;
        let mut out = Vec::with_capacity(rows * next);
        for r in 0..rows {
            for p in 0..pairs {
                let i = r * pairs + p;
                out.push(b[i].wrapping_add(pick[i]) & m);
            }
            if width % 2 == 1 {
                out.push(cur[r * width + width - 1]);
            }
        }
        cur = out;
        width = next;
    }
    Ok(cur)
}

/// Shares in Z_2^bits of `table[x]` for shares of `x` in Z_2^in_bits (`table` has
/// `2^in_bits` entries, public, `in_bits ≤ 16`).
pub fn lut(
    tp: &mut TwoParty,
    ctx: &mut Ctx,
    x: &[u64],
    in_bits: u32,
    table: &[u64],
    bits: u32,
) -> Result<Vec<u64>> {
    if !(1..=16).contains(&in_bits) || table.len() != 1 << in_bits {
        return Err(MpcError::Invalid(format!(
            "a table of {} entries for {in_bits}-bit inputs",
            table.len()
        )));
    }
    check_shares(x, in_bits)?;
    let (n, m) = (1usize << in_bits, mask(bits));
    if tp.is_first() {
        let mut r = vec![0u64; x.len()];
        for v in r.iter_mut() {
            *v = ctx.rng().next_u64() & m;
        }
        let mut messages = Vec::with_capacity(x.len() * n);
        for (i, &x0) in x.iter().enumerate() {
            for j in 0..n {
                let entry = table[(x0 as usize + j) & (n - 1)];
                messages.push(u128::from(entry.wrapping_sub(r[i]) & m));
            }
        }
        one_of_n_send(ctx, tp.sender(), in_bits, bits, &messages)?;
        Ok(r)
    } else {
        // P0 offered T[x_0 + j]; x = x_0 + x_1, so j = x_1.
        let index: Vec<usize> = x.iter().map(|&v| v as usize).collect();
        Ok(one_of_n_receive(ctx, tp.receiver(), in_bits, bits, &index)?
            .into_iter()
            .map(|v| v as u64)
            .collect())
    }
}
