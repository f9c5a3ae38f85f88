//! Multiplication of replicated sharings, semi-honest core (paper §3, "Mul").
//!
//! With `⟨x⟩ = (a_b, a_{b+1})` and `⟨y⟩ = (c_b, c_{b+1})`, party `P_b` computes the cross terms
//! `z_b = a_b c_b + a_b c_{b+1} + a_{b+1} c_b`; every product `a_i c_j` appears in exactly one
//! party's `z_b`, so `Σ z_b = x·y`. [`crate::reshare`] then makes `⟨x·y⟩` (ℓ bits, 1 round).
//! A party computes its term as `a_b·(c_b + c_{b+1}) + a_{b+1}·c_b`: two products instead of
//! three (the same sum; for matrices, two matrix products instead of three).
//! The malicious protocol runs this and then verifies the product with a triple before any
//! truncation (Appendix I of the paper explains why verifying after truncation is unsound).

use veil_mpc::{Ctx, Result};
use veil_ring::Ring;
use veil_tensor::{Device, Tensor};

use crate::reshare::reshare;
use crate::rss::Rss;

/// This party's additive term `z_b = a_b c_b + a_b c_{b+1} + a_{b+1} c_b` of `x ⊙ y`, as
/// `a_b·(c_b + c_{b+1}) + a_{b+1}·c_b`.
pub fn cross_terms<R: Ring>(x: &Rss<R>, y: &Rss<R>) -> Result<Tensor<R>> {
    let z = x.first.mul(&y.first.add(&y.second)?)?;
    Ok(z.add(&x.second.mul(&y.first)?)?)
}

/// This party's additive term of `X · Y`: the same cross terms with matrix products, on
/// `device`, as `X_b·(Y_b + Y_{b+1}) + X_{b+1}·Y_b` (two products).
pub fn matmul_cross_terms<R: Ring>(device: &dyn Device, x: &Rss<R>, y: &Rss<R>) -> Result<Tensor<R>> {
    let z = x.first.matmul_with(&y.first.add(&y.second)?, device)?;
    Ok(z.add(&x.second.matmul_with(&y.first, device)?)?)
}

/// This party's additive terms of several products `X_i · Y_i`, flattened one after the other.
pub fn matmul_cross_terms_many<R: Ring>(
    device: &dyn Device,
    pairs: &[(&Rss<R>, &Rss<R>)],
) -> Result<Tensor<R>> {
    let mut all = Vec::new();
    for (x, y) in pairs {
        all.extend_from_slice(matmul_cross_terms(device, x, y)?.data());
    }
    Ok(Tensor::new(vec![all.len()], all)?)
}

/// Cuts the flat sharing of several products (as [`matmul_cross_terms_many`] lays them out)
/// into their `[m_i, n_i]` results.
pub fn split_products<R: Ring>(z: &Rss<R>, pairs: &[(&Rss<R>, &Rss<R>)]) -> Result<Vec<Rss<R>>> {
    let mut at = 0;
    pairs
        .iter()
        .map(|(x, y)| {
            let (m, n) = (x.shape()[0], y.shape()[1]);
            let part = z.range(at, m * n)?.reshape(&[m, n]);
            at += m * n;
            part
        })
        .collect()
}

/// Several products `⟨X_i · Y_i⟩` without verification, in one reshare (one round).
pub fn matmul_semi_honest_many<R: Ring>(ctx: &mut Ctx, pairs: &[(&Rss<R>, &Rss<R>)]) -> Result<Vec<Rss<R>>> {
    let z = reshare(ctx, matmul_cross_terms_many(&*ctx.device(), pairs)?)?;
    split_products(&z, pairs)
}

/// `⟨x ⊙ y⟩` elementwise, without verification.
pub fn mul_semi_honest<R: Ring>(ctx: &mut Ctx, x: &Rss<R>, y: &Rss<R>) -> Result<Rss<R>> {
    reshare(ctx, cross_terms(x, y)?)
}

/// `⟨X · Y⟩` for matrices `[m, k] × [k, n]`, without verification (one reshare of `m × n`).
pub fn matmul_semi_honest<R: Ring>(ctx: &mut Ctx, x: &Rss<R>, y: &Rss<R>) -> Result<Rss<R>> {
    reshare(ctx, matmul_cross_terms(&*ctx.device(), x, y)?)
}
