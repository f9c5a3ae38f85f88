//! Multiplication of replicated sharings, semi-honest core (paper §3, "Mul").
//!
//! With `⟨x⟩ = (a_b, a_{b+1})` and `⟨y⟩ = (c_b, c_{b+1})`, party `P_b` computes the cross terms
//! `z_b = a_b c_b + a_b c_{b+1} + a_{b+1} c_b`; every product `a_i c_j` appears in exactly one
//! party's `z_b`, so `Σ z_b = x·y`. [`crate::reshare`] then makes `⟨x·y⟩` (ℓ bits, 1 round).
//! The malicious protocol runs this and then verifies the product with a triple before any
//! truncation (Appendix I of the paper explains why verifying after truncation is unsound).

use veil_mpc::{Ctx, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::reshare::reshare;
use crate::rss::Rss;

/// This party's additive term `z_b = a_b c_b + a_b c_{b+1} + a_{b+1} c_b` of `x ⊙ y`.
pub fn cross_terms<R: Ring>(x: &Rss<R>, y: &Rss<R>) -> Result<Tensor<R>> {
    let z = x.first.mul(&y.first)?;
    let z = z.add(&x.first.mul(&y.second)?)?;
    Ok(z.add(&x.second.mul(&y.first)?)?)
}

/// This party's additive term of `X · Y`: the same cross terms with matrix products.
pub fn matmul_cross_terms<R: Ring>(x: &Rss<R>, y: &Rss<R>) -> Result<Tensor<R>> {
    let z = x.first.matmul(&y.first)?;
    let z = z.add(&x.first.matmul(&y.second)?)?;
    Ok(z.add(&x.second.matmul(&y.first)?)?)
}

/// `⟨x ⊙ y⟩` elementwise, without verification.
pub fn mul_semi_honest<R: Ring>(ctx: &mut Ctx, x: &Rss<R>, y: &Rss<R>) -> Result<Rss<R>> {
    reshare(ctx, cross_terms(x, y)?)
}

/// `⟨X · Y⟩` for matrices `[m, k] × [k, n]`, without verification (one reshare of `m × n`).
pub fn matmul_semi_honest<R: Ring>(ctx: &mut Ctx, x: &Rss<R>, y: &Rss<R>) -> Result<Rss<R>> {
    reshare(ctx, matmul_cross_terms(x, y)?)
}
