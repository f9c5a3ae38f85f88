//! Maliciously secure multiplication: the semi-honest product, verified with a triple
//! *before* anything else uses it (paper §3 "F_mul (malicious)"; Appendix I explains why
//! verifying after truncation, as Falcon does, is unsound).
//!
//! For `z = x ⊙ y` computed by [`crate::mul::mul_semi_honest`] and a triple `(a, b, c = a ⊙ b)`:
//! 1. open `ρ = a - x` and `σ = b - y` (checked opening, sent in the same round as the
//!    reshare of `z`);
//! 2. `⟨ζ⟩ = ⟨z⟩ - ⟨c⟩ + σ⊙⟨a⟩ + ρ⊙⟨b⟩ - ρ⊙σ`, which is 0 exactly when `z = x ⊙ y`, because
//!    `x ⊙ y = (a - ρ)(b - σ) = c - σ⊙a - ρ⊙b + ρ⊙σ`;
//! 3. zero check: `P_b` sends `H(ζ_b)` (its first component) to `P_{b+1}`, which aborts unless
//!    it equals `H(-(ζ_{b+1} + ζ_{b+2}))`. With one corrupted party, the party after the
//!    honest pair's sender checks with components that are all honestly computed, so a
//!    wrong product is caught. The matrix version is the same with `Aσ`, `ρB` and `ρσ` as
//!    matrix products.
//!
//! An additive error `e` injected into the product (in the reshare, say) leaves `ζ = e`; the
//! check is exact (no probability of error), since no random challenge is involved.
//!
//! Cost per party for `n` products of `B`-byte elements (hash-compressed redundancy):
//! reshare `n·B`, opening of ρ and σ `2n·B + 32`, zero check 32 bytes; 4 messages, 2 rounds.
//! The paper's code sends `6ℓ` bits per product for the same steps (the zero check in full).

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Ring;
use veil_tensor::{Device, Tensor};

use crate::mul::{cross_terms, matmul_cross_terms_many, split_products};
use crate::open::{open_all_recv, open_all_send};
use crate::reshare::{reshare_recv, reshare_send};
use crate::rss::Rss;
use crate::triples::TripleSource;

/// Reshares the product term `z_b` while opening `ρ = a - x` and `σ = b - y` (one checked
/// opening of their concatenation), all in one round. Returns `(⟨z⟩, ρ, σ)`.
fn product_and_masks<R: Ring>(
    ctx: &mut Ctx,
    z_b: Tensor<R>,
    rho: &Rss<R>,
    sigma: &Rss<R>,
) -> Result<(Rss<R>, Tensor<R>, Tensor<R>)> {
    let (n, m) = (rho.len(), sigma.len());
    let cat = |p: &Tensor<R>, q: &Tensor<R>| {
        let mut v = p.data().to_vec();
        v.extend_from_slice(q.data());
        Tensor::new(vec![n + m], v)
    };
    let both = Rss::new(cat(&rho.first, &sigma.first)?, cat(&rho.second, &sigma.second)?)?;
    let pending = reshare_send(ctx, z_b)?;
    open_all_send(ctx, &both)?;
    let z = reshare_recv(ctx, pending)?;
    let opened = open_all_recv(ctx, &both)?.into_data();
    let rho = Tensor::new(rho.shape().to_vec(), opened[..n].to_vec())?;
    let sigma = Tensor::new(sigma.shape().to_vec(), opened[n..].to_vec())?;
    Ok((z, rho, sigma))
}

pub use crate::open::zero_check;

/// `⟨x ⊙ y⟩`, verified with a triple from `triples`; aborts on any deviation. (With a source
/// that does not verify, the semi-honest product.)
pub fn mul<R: Ring>(
    ctx: &mut Ctx,
    triples: &mut impl TripleSource<R>,
    x: &Rss<R>,
    y: &Rss<R>,
) -> Result<Rss<R>> {
    if !triples.verifies() {
        return crate::mul::mul_semi_honest(ctx, x, y);
    }
    let t = triples.mul_triple(ctx, x.shape())?;
    let (z, rho, sigma) = product_and_masks(ctx, cross_terms(x, y)?, &t.a.sub(x)?, &t.b.sub(y)?)?;
    let b = ctx.party();
    let zeta = z.sub(&t.c)?.add(&t.a.mul_public(&sigma)?)?.add(&t.b.mul_public(&rho)?)?;
    let zeta = zeta.add_public(b, &rho.mul(&sigma)?.neg())?;
    zero_check(ctx, &zeta, "mul")?;
    Ok(z)
}

fn matmul_public_right<R: Ring>(d: &dyn Device, x: &Rss<R>, p: &Tensor<R>) -> Result<Rss<R>> {
    Rss::new(x.first.matmul_with(p, d)?, x.second.matmul_with(p, d)?)
}

fn matmul_public_left<R: Ring>(d: &dyn Device, p: &Tensor<R>, x: &Rss<R>) -> Result<Rss<R>> {
    Rss::new(p.matmul_with(&x.first, d)?, p.matmul_with(&x.second, d)?)
}

/// `⟨X · Y⟩` for `[m, k] × [k, n]`, verified with a matrix triple; aborts on any deviation
/// ([`matmul_many`] of one product).
pub fn matmul<R: Ring>(
    ctx: &mut Ctx,
    triples: &mut impl TripleSource<R>,
    x: &Rss<R>,
    y: &Rss<R>,
) -> Result<Rss<R>> {
    matmul_many(ctx, triples, &[(x, y)])?.pop().ok_or_else(|| MpcError::Invalid("matmul: no product".into()))
}

/// Several independent products `⟨X_i · Y_i⟩` (`[m_i, k_i] × [k_i, n_i]`, e.g. the heads of an
/// attention layer), each verified with its own matrix triple `(A, B, C = A·B)` as in [`mul`]
/// (`ζ = Z − C + A·σ + ρ·B − ρ·σ` with `ρ = A − X`, `σ = B − Y`), side by side: one reshare and one checked opening for all of them (one round), and one zero
/// check of their concatenated `ζ`, which is 0 exactly when every product is right. Bytes are
/// those of the separate calls (less their per-call digests); rounds are those of one call.
pub fn matmul_many<R: Ring>(
    ctx: &mut Ctx,
    triples: &mut impl TripleSource<R>,
    pairs: &[(&Rss<R>, &Rss<R>)],
) -> Result<Vec<Rss<R>>> {
    let mut dims = Vec::with_capacity(pairs.len());
    for (x, y) in pairs {
        let (xs, ys) = (x.shape(), y.shape());
        if xs.len() != 2 || ys.len() != 2 || xs[1] != ys[0] {
            return Err(MpcError::Invalid(format!("matmul of shapes {xs:?} and {ys:?}")));
        }
        dims.push([xs[0], xs[1], ys[1]]);
    }
    if !triples.verifies() {
        return crate::mul::matmul_semi_honest_many(ctx, pairs);
    }
    let cat = |parts: &[Rss<R>]| Rss::concat(&parts.iter().collect::<Vec<_>>());
    let ts = dims.iter().map(|&[m, k, n]| triples.matmul_triple(ctx, m, k, n)).collect::<Result<Vec<_>>>()?;
    let rho: Vec<Rss<R>> = ts.iter().zip(pairs).map(|(t, (x, _))| t.a.sub(x)).collect::<Result<_>>()?;
    let sigma: Vec<Rss<R>> = ts.iter().zip(pairs).map(|(t, (_, y))| t.b.sub(y)).collect::<Result<_>>()?;
    let (z, rho, sigma) =
        product_and_masks(ctx, matmul_cross_terms_many(&*ctx.device(), pairs)?, &cat(&rho)?, &cat(&sigma)?)?;
    let z = split_products(&z, pairs)?;
    let (mut at_x, mut at_y) = (0, 0);
    let mut zetas = Vec::with_capacity(ts.len());
    let d = ctx.device();
    for ((t, zi), &[m, k, n]) in ts.iter().zip(&z).zip(&dims) {
        let r = Tensor::new(vec![m, k], rho.data()[at_x..at_x + m * k].to_vec())?;
        let s = Tensor::new(vec![k, n], sigma.data()[at_y..at_y + k * n].to_vec())?;
        (at_x, at_y) = (at_x + m * k, at_y + k * n);
        let zeta = zi
            .sub(&t.c)?
            .add(&matmul_public_right(&*d, &t.a, &s)?)?
            .add(&matmul_public_left(&*d, &r, &t.b)?)?;
        zetas.push(zeta.add_public(ctx.party(), &r.matmul_with(&s, &*d)?.neg())?);
    }
    zero_check(ctx, &cat(&zetas)?, "matmul")?;
    Ok(z)
}
