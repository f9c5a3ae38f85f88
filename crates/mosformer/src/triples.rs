//! Multiplication triples for the verification of products.
//!
//! A triple is `(⟨a⟩, ⟨b⟩, ⟨c⟩)` with `c = a ⊙ b` (elementwise) or `C = A · B` (matrices).
//! [`TripleSource`] is what the online protocol asks; the only source so far is
//! [`InsecureRssDealer`], which derives every triple from the seed all three parties share, so
//! *every party knows every triple*. It exists to test the online protocol; the real source,
//! produced by the parties themselves, is the next step of this family.

use veil_mpc::prep::{CorrelationRequest, PrepUsage};
use veil_mpc::{Ctx, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::rss::{Rss, next};

/// One party's shares of a triple.
#[derive(Clone, Debug)]
pub struct Triple<R> {
    /// `⟨a⟩` (or `⟨A⟩`).
    pub a: Rss<R>,
    /// `⟨b⟩` (or `⟨B⟩`).
    pub b: Rss<R>,
    /// `⟨c⟩ = ⟨a ⊙ b⟩` (or `⟨A · B⟩`).
    pub c: Rss<R>,
}

/// Where the verification triples come from. All parties call it in the same order.
pub trait TripleSource<R: Ring> {
    /// A triple for elementwise products of the given shape.
    fn mul_triple(&mut self, ctx: &mut Ctx, shape: &[usize]) -> Result<Triple<R>>;
    /// A triple for the product of an `m × k` and a `k × n` matrix.
    fn matmul_triple(&mut self, ctx: &mut Ctx, m: usize, k: usize, n: usize) -> Result<Triple<R>>;
}

/// **Insecure** test source: triples expanded from the all-party seed, known to every party.
#[derive(Debug, Default)]
pub struct InsecureRssDealer {
    usage: PrepUsage,
}

impl InsecureRssDealer {
    /// A dealer that has produced nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// What it has handed out.
    pub fn usage(&self) -> &PrepUsage {
        &self.usage
    }

    pub(crate) fn usage_mut(&mut self) -> &mut PrepUsage {
        &mut self.usage
    }
}

/// Replicated shares of a value every party knows, split with the common PRG: `a_0, a_1`
/// random, `a_2 = v - a_0 - a_1`; party `b` keeps `(a_b, a_{b+1})`. Insecure dealer only.
pub(crate) fn split<R: Ring>(ctx: &mut Ctx, v: &Tensor<R>) -> Result<Rss<R>> {
    let mut g = ctx.common_prg("mosformer/insecure-dealer/split");
    let a0 = Tensor::new(v.shape().to_vec(), R::random_vec(&mut g, v.len()))?;
    let a1 = Tensor::new(v.shape().to_vec(), R::random_vec(&mut g, v.len()))?;
    let a2 = v.sub(&a0)?.sub(&a1)?;
    let comps = [a0, a1, a2];
    let b = ctx.party();
    Rss::new(comps[b].clone(), comps[next(b)].clone())
}

impl<R: Ring> TripleSource<R> for InsecureRssDealer {
    fn mul_triple(&mut self, ctx: &mut Ctx, shape: &[usize]) -> Result<Triple<R>> {
        let n: usize = shape.iter().product();
        self.usage.record(&CorrelationRequest::MulTriples { ring_bits: (R::BYTES * 8) as u32, count: n });
        let mut g = ctx.common_prg("mosformer/insecure-dealer/values");
        let a = Tensor::new(shape.to_vec(), R::random_vec(&mut g, n))?;
        let b = Tensor::new(shape.to_vec(), R::random_vec(&mut g, n))?;
        let c = a.mul(&b)?;
        Ok(Triple { a: split(ctx, &a)?, b: split(ctx, &b)?, c: split(ctx, &c)? })
    }

    fn matmul_triple(&mut self, ctx: &mut Ctx, m: usize, k: usize, n: usize) -> Result<Triple<R>> {
        self.usage.record(&CorrelationRequest::MatmulTriple { ring_bits: (R::BYTES * 8) as u32, m, k, n });
        let mut g = ctx.common_prg("mosformer/insecure-dealer/values");
        let a = Tensor::new(vec![m, k], R::random_vec(&mut g, m * k))?;
        let b = Tensor::new(vec![k, n], R::random_vec(&mut g, k * n))?;
        let c = a.matmul(&b)?;
        Ok(Triple { a: split(ctx, &a)?, b: split(ctx, &b)?, c: split(ctx, &c)? })
    }
}
