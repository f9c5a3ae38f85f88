//! Where the additive family's correlated randomness comes from: the [`Correlations`] a
//! source hands out (Beaver triples, matrix triples, truncation pairs and sign-bit material),
//! and [`InsecureDealer`], the one source that exists today.
//!
//! Every correlation is additive among the `parties` computing parties (`Σ_i share_i`), or
//! XOR-shared where it says so (`⊕_i share_i`). A source hands out the same requests in the
//! same order at every computing party.

use veil_mpc::prep::{CorrelationRequest, PrepUsage};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z64};
use veil_tensor::Tensor;

/// One party's shares of `count` triples `(a, b, c)` with `c = a·b` elementwise.
#[derive(Clone, Debug)]
pub struct Triples<R> {
    /// Shares of `a`.
    pub a: Vec<R>,
    /// Shares of `b`.
    pub b: Vec<R>,
    /// Shares of `c = a·b`.
    pub c: Vec<R>,
}

/// One party's shares of a matrix triple `(A, B, C = A·B)`, `[m, k] × [k, n]`.
#[derive(Clone, Debug)]
pub struct MatrixTriple {
    /// Share of `A`, `[m, k]`.
    pub a: Tensor<Z64>,
    /// Share of `B`, `[k, n]`.
    pub b: Tensor<Z64>,
    /// Share of `C`, `[m, n]`.
    pub c: Tensor<Z64>,
}

/// One party's shares of truncation pairs `(r, ⌊r / d⌋)` with `r` uniform in
/// `[0, TRUNC_MASK_BOUND)` (no wrap when added to a biased input, see `crate::fixed`).
#[derive(Clone, Debug)]
pub struct TruncPairs {
    /// Shares of `r`.
    pub r: Vec<Z64>,
    /// Shares of `⌊r / d⌋`.
    pub q: Vec<Z64>,
}

/// One party's sign-bit material for `count` elements (`crate::sign`): a mask `r` shared
/// additively and bit by bit, AND triples on 63-bit words for the prefix-OR, and a shared bit
/// in both sharings (a daBit) for the conversion of the result.
#[derive(Clone, Debug)]
pub struct SignMaterial {
    /// Additive shares of `r`.
    pub r: Vec<Z64>,
    /// XOR shares of `r mod 2^63`.
    pub r_low: Vec<u64>,
    /// XOR shares of `r`'s top bit (in bit 0).
    pub r_high: Vec<u64>,
    /// XOR shares of AND triples `(a, b, a & b)` on words, [`PREFIX_STEPS`] per element, step
    /// major (`[step · count + element]`).
    pub and_a: Vec<u64>,
    /// See `and_a`.
    pub and_b: Vec<u64>,
    /// See `and_a`.
    pub and_c: Vec<u64>,
    /// XOR shares of a random bit `t` (in bit 0).
    pub bit_xor: Vec<u64>,
    /// Additive shares of the same bit `t`.
    pub bit_arith: Vec<Z64>,
}

/// AND steps of the prefix-OR over 63 bits (shifts 1, 2, 4, 8, 16, 32).
pub const PREFIX_STEPS: usize = 6;

/// Truncation masks are uniform below this bound: `2^64 − 2^49`, so that a masked input
/// `x + B + r` with `0 ≤ x + B < 2^49` never wraps.
pub const TRUNC_MASK_BOUND: u64 = u64::MAX - (1 << 49) + 1;

/// A source of the additive family's correlated randomness among `parties` computing
/// parties. Each call hands out fresh correlations; every computing party makes the same
/// calls in the same order.
pub trait Correlations: Send {
    /// A short name for reports; a source that is not secure says `Insecure` in it.
    fn name(&self) -> &'static str;
    /// `count` Beaver triples over `Z_2^64`.
    fn triples(&mut self, ctx: &mut Ctx, parties: usize, count: usize) -> Result<Triples<Z64>>;
    /// One matrix triple `[m, k] × [k, n]`.
    fn matrix_triple(
        &mut self,
        ctx: &mut Ctx,
        parties: usize,
        m: usize,
        k: usize,
        n: usize,
    ) -> Result<MatrixTriple>;
    /// `count` truncation pairs for the divisor `d ≥ 1`.
    fn trunc_pairs(&mut self, ctx: &mut Ctx, parties: usize, count: usize, d: u64) -> Result<TruncPairs>;
    /// Sign-bit material for `count` elements.
    fn sign_material(&mut self, ctx: &mut Ctx, parties: usize, count: usize) -> Result<SignMaterial>;
    /// What the source has handed out.
    fn usage(&self) -> &PrepUsage;
}

/// Where a party's triples come from (any ring; the elementwise product of [`crate::Additive`]).
pub trait TripleSource<R: Ring>: Send {
    /// This party's shares of `count` fresh triples among `parties` computing parties. Every
    /// computing party calls it in the same order.
    fn mul_triples(&mut self, ctx: &mut Ctx, parties: usize, count: usize) -> Result<Triples<R>>;
}

/// **Insecure** source for tests and demos: every party expands the same public seed (the
/// all-party seed) into every party's shares and keeps its own. Every party can therefore
/// reconstruct every correlation, and with it every value a protocol masks: never use it
/// where privacy matters. It stands in until the OT-made preprocessing exists.
///
/// It costs no communication, which is why the measured bytes of an operation are exactly
/// its online cost.
#[derive(Debug, Default)]
pub struct InsecureDealer {
    usage: PrepUsage,
}

impl InsecureDealer {
    /// A dealer that has produced nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// What it has handed out.
    pub fn usage(&self) -> &PrepUsage {
        &self.usage
    }
}

/// `parties` additive shares of `values` from `g`: random for every party but the last,
/// which gets the correction.
fn split<R: Ring>(g: &mut veil_crypto::Prg, parties: usize, values: &[R]) -> Vec<Vec<R>> {
    let mut shares: Vec<Vec<R>> = (0..parties - 1).map(|_| R::random_vec(g, values.len())).collect();
    let last = (0..values.len()).map(|k| values[k] - shares.iter().map(|s| s[k]).sum::<R>()).collect();
    shares.push(last);
    shares
}

/// `parties` XOR shares of `values` from `g`.
fn split_xor(g: &mut veil_crypto::Prg, parties: usize, values: &[u64]) -> Vec<Vec<u64>> {
    let mut shares: Vec<Vec<u64>> =
        (0..parties - 1).map(|_| (0..values.len()).map(|_| Z64::random(g).0).collect()).collect();
    let last = (0..values.len()).map(|k| shares.iter().fold(values[k], |acc, s| acc ^ s[k])).collect();
    shares.push(last);
    shares
}

fn random_u64s(g: &mut veil_crypto::Prg, n: usize) -> Vec<u64> {
    Z64::random_vec(g, n).into_iter().map(|z| z.0).collect()
}

/// The party's index among `parties`, or an error for a party outside them.
fn index(ctx: &Ctx, parties: usize) -> Result<usize> {
    let me = ctx.party();
    if parties < 2 || me >= parties {
        return Err(MpcError::Invalid(format!("party {me} is not one of {parties} computing parties")));
    }
    Ok(me)
}

impl<R: Ring> TripleSource<R> for InsecureDealer {
    fn mul_triples(&mut self, ctx: &mut Ctx, parties: usize, count: usize) -> Result<Triples<R>> {
        let me = index(ctx, parties)?;
        self.usage.record(&CorrelationRequest::MulTriples { ring_bits: (R::BYTES * 8) as u32, count });
        let mut g = ctx.common_prg("veil/additive/insecure-dealer");
        let a: Vec<R> = R::random_vec(&mut g, count);
        let b: Vec<R> = R::random_vec(&mut g, count);
        let c: Vec<R> = a.iter().zip(&b).map(|(&x, &y)| x * y).collect();
        let take = |v: Vec<Vec<R>>| v.into_iter().nth(me).unwrap_or_default();
        Ok(Triples {
            a: take(split(&mut g, parties, &a)),
            b: take(split(&mut g, parties, &b)),
            c: take(split(&mut g, parties, &c)),
        })
    }
}

impl Correlations for InsecureDealer {
    fn name(&self) -> &'static str {
        "InsecureDealer"
    }

    fn triples(&mut self, ctx: &mut Ctx, parties: usize, count: usize) -> Result<Triples<Z64>> {
        self.mul_triples(ctx, parties, count)
    }

    fn matrix_triple(
        &mut self,
        ctx: &mut Ctx,
        parties: usize,
        m: usize,
        k: usize,
        n: usize,
    ) -> Result<MatrixTriple> {
        let me = index(ctx, parties)?;
        self.usage.record(&CorrelationRequest::MatmulTriple { ring_bits: 64, m, k, n });
        let mut g = ctx.common_prg("veil/additive/insecure-dealer/matrix");
        let a = Tensor::new(vec![m, k], Z64::random_vec(&mut g, m * k))?;
        let b = Tensor::new(vec![k, n], Z64::random_vec(&mut g, k * n))?;
        let c = a.matmul_with(&b, &*ctx.device())?;
        let mut share = |t: &Tensor<Z64>| -> Result<Tensor<Z64>> {
            let mine = split(&mut g, parties, t.data()).into_iter().nth(me).unwrap_or_default();
            Ok(Tensor::new(t.shape().to_vec(), mine)?)
        };
        Ok(MatrixTriple { a: share(&a)?, b: share(&b)?, c: share(&c)? })
    }

    fn trunc_pairs(&mut self, ctx: &mut Ctx, parties: usize, count: usize, d: u64) -> Result<TruncPairs> {
        let me = index(ctx, parties)?;
        if d == 0 {
            return Err(MpcError::Invalid("truncation by 0".into()));
        }
        self.usage.record(&CorrelationRequest::TruncPairs { count });
        let mut g = ctx.common_prg("veil/additive/insecure-dealer/trunc");
        let r: Vec<Z64> = (0..count).map(|_| Z64(Z64::random(&mut g).0 % TRUNC_MASK_BOUND)).collect();
        let q: Vec<Z64> = r.iter().map(|x| Z64(x.0 / d)).collect();
        let take = |v: Vec<Vec<Z64>>| v.into_iter().nth(me).unwrap_or_default();
        Ok(TruncPairs { r: take(split(&mut g, parties, &r)), q: take(split(&mut g, parties, &q)) })
    }

    fn sign_material(&mut self, ctx: &mut Ctx, parties: usize, count: usize) -> Result<SignMaterial> {
        let me = index(ctx, parties)?;
        self.usage.record(&CorrelationRequest::SignBits { count });
        let mut g = ctx.common_prg("veil/additive/insecure-dealer/sign");
        let r = random_u64s(&mut g, count);
        let low: Vec<u64> = r.iter().map(|x| x & LOW_63).collect();
        let high: Vec<u64> = r.iter().map(|x| x >> 63).collect();
        let and_a: Vec<u64> =
            random_u64s(&mut g, PREFIX_STEPS * count).into_iter().map(|x| x & LOW_63).collect();
        let and_b: Vec<u64> =
            random_u64s(&mut g, PREFIX_STEPS * count).into_iter().map(|x| x & LOW_63).collect();
        let and_c: Vec<u64> = and_a.iter().zip(&and_b).map(|(a, b)| a & b).collect();
        let bit: Vec<u64> = random_u64s(&mut g, count).into_iter().map(|x| x & 1).collect();
        let xor = |g: &mut veil_crypto::Prg, v: &[u64]| {
            split_xor(g, parties, v).into_iter().nth(me).unwrap_or_default()
        };
        let arith = |g: &mut veil_crypto::Prg, v: Vec<Z64>| {
            split(g, parties, &v).into_iter().nth(me).unwrap_or_default()
        };
        Ok(SignMaterial {
            r: arith(&mut g, r.iter().map(|&x| Z64(x)).collect()),
            r_low: xor(&mut g, &low),
            r_high: xor(&mut g, &high),
            and_a: xor(&mut g, &and_a),
            and_b: xor(&mut g, &and_b),
            and_c: xor(&mut g, &and_c),
            bit_xor: xor(&mut g, &bit),
            bit_arith: arith(&mut g, bit.iter().map(|&x| Z64(x)).collect()),
        })
    }

    fn usage(&self) -> &PrepUsage {
        &self.usage
    }
}

/// The low 63 bits of a word.
pub const LOW_63: u64 = (1 << 63) - 1;
