//! Maliciously secure multiplication: the semi-honest product, verified *before* anything else
//! uses it (paper §3 "F_mul (malicious)"; Appendix I explains why verifying after truncation,
//! as Falcon does, is unsound): elementwise products with a triple (below), matrix products by
//! a random projection over a Galois ring ([`crate::matcheck`], no offline material; the
//! paper's matrix triples open `σ = B − Y`, as large as the weights, at every product).
//!
//! For `z = x ⊙ y` computed by [`crate::mul::mul_semi_honest`] and a triple `(a, b, c = a ⊙ b)`:
//! 1. open `ρ = a - x` and `σ = b - y` (checked opening, sent in the same round as the
//!    reshare of `z`);
//! 2. `⟨ζ⟩ = ⟨z⟩ - ⟨c⟩ + σ⊙⟨a⟩ + ρ⊙⟨b⟩ - ρ⊙σ`, which is 0 exactly when `z = x ⊙ y`, because
//!    `x ⊙ y = (a - ρ)(b - σ) = c - σ⊙a - ρ⊙b + ρ⊙σ`;
//! 3. zero check: `P_b` sends `H(ζ_b)` (its first component) to `P_{b+1}`, which aborts unless
//!    it equals `H(-(ζ_{b+1} + ζ_{b+2}))`. With one corrupted party, the party after the
//!    honest pair's sender checks with components that are all honestly computed, so a
//!    wrong product is caught.
//!
//! An additive error `e` injected into the product (in the reshare, say) leaves `ζ = e`; the
//! check is exact (no probability of error), since no random challenge is involved.
//!
//! Cost per party for `n` products of `B`-byte elements (hash-compressed redundancy):
//! reshare `n·B`, opening of ρ and σ `2n·B + 32`, zero check 32 bytes; 4 messages, 2 rounds.
//! The paper's code sends `6ℓ` bits per product for the same steps (the zero check in full).

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Ring, Z2k};
use veil_tensor::Tensor;

use crate::matcheck::{self, Masks};
use crate::mul::{cross_terms, matmul_cross_terms_many, split_products};
use crate::open::{open_all_recv, open_all_send};
use crate::reshare::{reshare, reshare_recv, reshare_send};
use crate::rss::Rss;
use crate::triples::{Tamper, TripleSource, tampered};

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

/// `⟨X · Y⟩` for `[m, k] × [k, n]`, verified before it is returned; aborts on any deviation
/// ([`matmul_many`] of one product).
pub fn matmul<R: Z2k>(
    ctx: &mut Ctx,
    triples: &mut impl TripleSource<R>,
    x: &Rss<R>,
    y: &Rss<R>,
) -> Result<Rss<R>> {
    matmul_many(ctx, triples, &[(x, y)])?.pop().ok_or_else(|| MpcError::Invalid("matmul: no product".into()))
}

/// Several independent products `⟨X_i · Y_i⟩` (`[m_i, k_i] × [k_i, n_i]`, e.g. the heads of an
/// attention layer): one reshare of all of them, then one check of all of them by a random
/// projection over a Galois ring ([`crate::matcheck`]: a challenge, an opening of `2·Σ k_i`
/// ring elements of 64 coefficients, a zero check; 4 rounds, no offline material). With a
/// source that does not verify, the semi-honest products (1 round).
pub fn matmul_many<R: Z2k>(
    ctx: &mut Ctx,
    triples: &mut impl TripleSource<R>,
    pairs: &[(&Rss<R>, &Rss<R>)],
) -> Result<Vec<Rss<R>>> {
    matmul_many_tampered(ctx, triples, pairs, None)
}

/// [`matmul_many`] with an optional deviation (tests model a cheating server): `tamper.index`
/// is an element of the reshared term, the products' entries one after the other and then
/// the 64 coefficients of the check's `c`.
pub fn matmul_many_tampered<R: Z2k>(
    ctx: &mut Ctx,
    triples: &mut impl TripleSource<R>,
    pairs: &[(&Rss<R>, &Rss<R>)],
    tamper: Option<Tamper>,
) -> Result<Vec<Rss<R>>> {
    for (x, y) in pairs {
        let (xs, ys) = (x.shape(), y.shape());
        if xs.len() != 2 || ys.len() != 2 || xs[1] != ys[0] {
            return Err(MpcError::Invalid(format!("matmul of shapes {xs:?} and {ys:?}")));
        }
    }
    if !triples.verifies() {
        return crate::mul::matmul_semi_honest_many(ctx, pairs);
    }
    if pairs.is_empty() {
        return Ok(Vec::new());
    }
    let masks = Masks::draw(ctx, pairs.iter().map(|(x, _)| x.shape()[1]).sum())?;
    let device = ctx.device();
    let mut terms = matmul_cross_terms_many(&*device, pairs)?.into_data();
    let products = terms.len();
    terms.extend_from_slice(masks.cross_term(&*device)?.data());
    let terms = tampered(ctx, Tensor::new(vec![terms.len()], terms)?, tamper);
    let all = reshare(ctx, terms)?;
    let z = split_products(&all.range(0, products)?, pairs)?;
    let c = all.range(products, all.len() - products)?;
    matcheck::check(ctx, pairs, &z, &masks, &c)?;
    Ok(z)
}
