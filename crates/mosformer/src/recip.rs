//! Π_Inv and Π_Rsqrt by domain reduction (paper Algorithms 3 and 6), base `b = 256`,
//! inputs with `f` fractional bits (f = 12 with comparisons in Z_2^32 in the mixed-ring plan;
//! f = 16 in Z_2^64 without modulus conversion, the paper's Table 13 configuration).
//!
//! For `x > 0` with integer encoding `X`, let `k = #{i ≥ 1 : X ≥ b^i}` (three DReLUs against
//! the raw thresholds `b, b², b³`, the released code's count, which the paper's measured costs
//! match). Then `q = X / b^{k+1}` lies in `[2^f/b, 2^f)` and
//! - `1/x = t · T_inv[q - 2^f/b]` with `t = T_exp[k+1] = ⌊2^{2f} / b^{k+1}⌋`,
//! - `1/√x = s · T_rsqrt[q - 2^f/b]` with `s = T_exsqrt[k+1] = ⌊2^f·√(2^f / b^{k+1})⌋`,
//!
//! where `T_inv[i] = ⌊2^f / (i/2^f + 1/b)⌋` and `T_rsqrt[i] = ⌊2^f / √(i/2^f + 1/b)⌋` for
//! `i < (1 - 1/b)·2^f`. Steps: the DReLUs, LUTs of [`scale_bits`] index bits for `t` (and
//! `s`), a verified product `x·t` with truncation by `2^f`, the `ℓ_t = f` LUT (4 096 entries at
//! f = 12, 65 536 at f = 16), and a final verified product with truncation, all values in the
//! 64-bit value ring. DReLU and LUT outputs are MAC'd in the MAC ring (the batch is checked by
//! the caller); products are verified with triples.
//!
//! Table padding: of the `b^{-1}·2^f` indices past the table, the first half
//! (truncation pushing `q` to `2^f`) read the last value, the second half (a negative index
//! wrapping around) read `T[0]`.
//! Valid inputs: `X ≥ b` and `x < 2^f` in real terms, so
//! `[2^-4, 4096)` at f = 12 and `[2^-8, 65536)` at f = 16: below, no threshold is passed and
//! `x·t` outgrows the working ring.
//!
//! Accuracy: once `b^{k+1} > 2^f` the index `q` keeps only `2^f·b^{-(k+1)}·X`'s integer part, so
//! its relative resolution is `1/q ≥ 2^-8` at the bottom of each range; the paper's plaintext
//! bound is 0.0036 for `x ≥ 1`. The protocol's truncations (probabilistic, at most one unit low)
//! can move the index one step, which bounds the inverse's error by about 0.0039 on `[1, 4096)`
//! (0.00366 measured); below 1 the relative error grows to `1/q ≤ 1/16`.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Z2k, Z64};
use veil_tensor::Tensor;

use crate::convert::reduce;
use crate::drelu::setup_parts as drelu_setup_parts;
use crate::drelu::{DreluKeys, drelu};
use crate::lut::setup_with as lut_setup_with;
use crate::lut::{LutKeys, lookup};
use crate::mac::Macs;
use crate::rss::{Rss, constant};
use crate::shape::{Shape, Word};
use crate::triples::Sacrifice;
use crate::triples::TripleSource;
use crate::trunc::{TruncPairSource, trunc};
use crate::verified;
use veil_mpc::mode::Security;

/// The base of the domain reduction.
pub const BASE: u64 = 256;
/// Number of thresholds `b^1..b^3`.
pub const THRESHOLDS: usize = 3;
/// Index bits of the `T_exp`/`T_exsqrt` tables at `f` fractional bits: `k + 1` reaches 4 once
/// inputs may pass `b³` (`2^{2f} > b³`, so f > 12).
pub fn scale_bits(f: u32) -> u32 {
    if f > 12 { 3 } else { 2 }
}

/// Which function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// `1/x`.
    Inv,
    /// `1/√x`.
    Rsqrt,
}

/// `T_exp[i] = ⌊2^{2f}/b^i⌋` or `T_exsqrt[i] = ⌊2^f·√(2^f/b^i)⌋`, `i < 2^{scale_bits(f)}`.
pub fn scale_table(kind: Kind, f: u32) -> Vec<i64> {
    (0..1u32 << scale_bits(f))
        .map(|i| {
            let bi = (BASE as f64).powi(i as i32);
            let two_f = f64::from(1u32 << f);
            match kind {
                Kind::Inv => (two_f * two_f / bi).floor() as i64,
                Kind::Rsqrt => (two_f * (two_f / bi).sqrt()).floor() as i64,
            }
        })
        .collect()
}

/// `T_inv` or `T_rsqrt` over `[0, (1 - 1/b)·2^f)`, padded to `2^f` entries (f index bits: 4096
/// at f = 12, 65 536 at f = 16).
pub fn main_table(kind: Kind, f: u32) -> Result<Vec<i64>> {
    if !(8..=16).contains(&f) {
        return Err(MpcError::Invalid(format!("the reciprocal tables take 8 ≤ f ≤ 16, not {f}")));
    }
    let two_f = f64::from(1u32 << f);
    let len = (two_f * (1.0 - 1.0 / BASE as f64)) as usize;
    let mut t: Vec<i64> = (0..len)
        .map(|i| {
            let v = i as f64 / two_f + 1.0 / BASE as f64;
            match kind {
                Kind::Inv => (two_f / v).floor() as i64,
                Kind::Rsqrt => (two_f / v.sqrt()).floor() as i64,
            }
        })
        .collect();
    let (first, last) = (t[0], t[len - 1]);
    let size = 1usize << f;
    let middle = len + (size - len) / 2;
    t.extend((len..size).map(|i| if i < middle { last } else { first }));
    Ok(t)
}

/// Verified material for `n` reciprocals (or reciprocal square roots).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, M: Word")]
pub struct RecipKeys<R, M> {
    kind: Kind,
    compare: Vec<DreluKeys<R, M>>,
    /// `T_exp` (Inv) or `T_exsqrt` (Rsqrt) at `k + 1`.
    scale: LutKeys<R, M>,
    /// Rsqrt only: `T_exp` at the same index (the paper's merged second table; deriving it as
    /// `s²/2^f` instead would let a one-unit truncation error turn `T_exp[3] = 1` into 0).
    exp: Option<LutKeys<R, M>>,
    table: LutKeys<R, M>,
}

impl<R: Z2k, M: Z2k> RecipKeys<R, M> {
    /// Zero material of the real shapes: the layout real material must have (stored
    /// material is checked against it).
    pub(crate) fn placeholder(kind: Kind, n: usize, f: u32) -> Self {
        RecipKeys {
            kind,
            compare: (0..THRESHOLDS).map(|_| DreluKeys::placeholder(n)).collect(),
            scale: LutKeys::placeholder(scale_bits(f), n),
            exp: (kind == Kind::Rsqrt).then(|| LutKeys::placeholder(scale_bits(f), n)),
            table: LutKeys::placeholder(f, n),
        }
    }
}

impl<R, M: Shape> Shape for RecipKeys<R, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        out.push(self.kind as usize);
        self.compare.shape(out);
        self.scale.shape(out);
        self.exp.shape(out);
        self.table.shape(out);
    }
}

/// Deals and checks the material of `n` evaluations.
pub fn setup<R: Sacrifice, M: Z2k>(ctx: &mut Ctx, kind: Kind, n: usize, f: u32) -> Result<RecipKeys<R, M>> {
    setup_with(ctx, kind, n, f, Security::Malicious)
}

/// [`setup`] in a given mode.
pub fn setup_with<R: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    kind: Kind,
    n: usize,
    f: u32,
    security: Security,
) -> Result<RecipKeys<R, M>> {
    let compare = drelu_setup_parts(ctx, &[n; THRESHOLDS], security)?;
    let scale = lut_setup_with(ctx, scale_bits(f), n, security)?;
    let exp = if kind == Kind::Rsqrt { Some(lut_setup_with(ctx, scale_bits(f), n, security)?) } else { None };
    Ok(RecipKeys { kind, compare, scale, exp, table: lut_setup_with(ctx, f, n, security)? })
}

/// The preprocessing the compound gates need besides their keys: verified products and
/// truncations in the 64-bit value ring.
pub trait Sources: TripleSource<Z64> + TruncPairSource<Z64> {}
impl<T> Sources for T where T: TripleSource<Z64> + TruncPairSource<Z64> {}

/// `⟨1/x⟩` or `⟨1/√x⟩` with `f` fractional bits, for `x` with `f` fractional bits, both in the
/// value ring Z_2^64 (the comparisons read the working ring `R`, the gates compute in the MAC
/// ring `M`).
pub fn evaluate<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: RecipKeys<R, M>,
    sources: &mut impl Sources,
    x: &Rss<Z64>,
    f: u32,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<Z64>> {
    let n = x.len();
    let b = ctx.party();
    let x_v = x.reshape(&[n])?;
    let x: Rss<R> = reduce(&x_v)?;
    // k = Σ_i DReLU(X - b^i).
    let mut k: Option<Rss<Z64>> = None;
    for (i, kd) in keys.compare.into_iter().enumerate() {
        let threshold = Tensor::full(&[n], R::from_u64(BASE.pow(i as u32 + 1)));
        let shifted = x.sub(&Rss::zeros(&[n]).add_public(b, &threshold)?)?;
        let d = reduce(&drelu(ctx, kd, &shifted, macs)?)?;
        k = Some(match k {
            None => d,
            Some(acc) => acc.add(&d)?,
        });
    }
    let k = k.ok_or_else(|| MpcError::Invalid("no thresholds".into()))?;
    // t = T[k + 1].
    let k1: Rss<R> = reduce(&k.add_public(b, &constant(n, 1))?)?;
    let scales: Vec<M> = scale_table(keys.kind, f).into_iter().map(M::from_i64).collect();
    let t_or_s = reduce(&lookup(ctx, keys.scale, &k1, &scales, macs)?)?;
    // For the inverse the same t scales x and the result; for rsqrt x is scaled by T_exp.
    let t = match keys.exp {
        None => t_or_s.clone(),
        Some(exp_keys) => {
            let exps: Vec<M> = scale_table(Kind::Inv, f).into_iter().map(M::from_i64).collect();
            reduce(&lookup(ctx, exp_keys, &k1, &exps, macs)?)?
        }
    };
    // q = x·t / 2^f in [2^f/b, 2^f); index q - 2^f/b.
    let xt = verified::mul(ctx, sources, &x_v, &t)?;
    let q = trunc(ctx, sources, &xt, 1 << f)?;
    let offset = 1i64 << (f - BASE.trailing_zeros());
    let idx: Rss<R> = reduce(&q.add_public(b, &constant(n, -offset))?)?;
    let table: Vec<M> = main_table(keys.kind, f)?.into_iter().map(M::from_i64).collect();
    let w = reduce(&lookup(ctx, keys.table, &idx, &table, macs)?)?;
    let tw = verified::mul(ctx, sources, &t_or_s, &w)?;
    trunc(ctx, sources, &tw, 1 << f)
}
