//! The check of matrix products by a random projection over a Galois ring, in place of matrix
//! triples (a Freivalds-style check; the extension ring is the one *Aegis* uses for its batch
//! verification, §4.1, and `veil_ring::Gr` implements).
//!
//! **What is checked.** The semi-honest products `⟨Z_i⟩ = ⟨X_i · Y_i⟩` (`[m_i, k_i] × [k_i,
//! n_i]` over `R = Z_2^ℓ`, [`crate::mul`]) of one [`crate::verified::matmul_many`] call. With
//! at most one corrupted server, the only way to change a product is an additive error in that
//! server's reshare message, so `Z_i = X_i·Y_i + E_i` with `E_i` fixed once the reshare is sent.
//!
//! **The check**, in `G = GR(2^ℓ, 64) = Z_2^ℓ[x]/f`, `f = x^64 + x^4 + x^3 + x + 1`
//! (irreducible mod 2; `R` embeds as the constants):
//! 1. with the products, the servers reshare the cross term of `c = a·b = Σ_j a_j·b_j` for
//!    random `⟨a⟩, ⟨b⟩ ∈ G^K`, `K = Σ_i k_i`, drawn from pairwise keys (F_rand): `c = a·b + e`
//!    with `e ∈ G` fixed at the same time as the `E_i`;
//! 2. a public challenge (`crate::coin`) gives `s_i ∈ G^{m_i}`, `r_i ∈ G^{n_i}`;
//! 3. each server computes, locally, `⟨p⟩ = (X_i^T s_i)_i` and `⟨q⟩ = (Y_i r_i)_i` (both in
//!    `G^K`) and `⟨v⟩ = Σ_i s_i^T (Z_i r_i)`;
//! 4. the servers open `ρ = p − a` and `σ = q − b` (checked opening; `a`, `b` are uniform and
//!    unknown to any single server, so the opened values say nothing);
//! 5. `⟨w⟩ = ⟨c⟩ + ρ·⟨b⟩ + σ·⟨a⟩ + ρ·σ`, which is `p·q + e` since
//!    `p·q = (ρ + a)·(σ + b)`;
//! 6. zero check of `ζ = v − w` ([`crate::open::zero_check`]).
//!
//! **Soundness.** `s_i^T X_i Y_i r_i = p·q`, so `ζ = Σ_i s_i^T E_i r_i − e`, a polynomial of
//! degree 2 in the challenge's entries whose coefficients were fixed before the challenge. If
//! some `E_i ≠ 0` it is a nonzero polynomial, and by the Schwartz–Zippel lemma over Galois rings
//! it vanishes at a uniform point of `G` with probability at most `2/2^64`, whatever `e` is.
//! Working in `Z_2^ℓ` alone would not do: an error of `2^{ℓ−1}` survives half of the
//! challenges. The openings are checked, and the zero check is exact, so nothing else can be
//! changed. Privacy: `ρ`, `σ` are masked by uniform `a`, `b`; `ζ` is 0 in an honest run.
//!
//! **Cost per server** (`B` bytes per element of `R`, 512 B per element of `G` at ℓ = 64):
//! the reshare of `Σ m_i n_i` elements plus 64 (the triple's `c`), the challenge (2 elements,
//! one round), the opening of `2K` elements of `G` (`128·K·B` bytes) and a 32-byte zero check:
//! 4 rounds; no offline material. Matrix triples cost `(2mn + mk)·2B` offline (in the wider
//! ring of their sacrifice) and open `σ = B − Y`, of the weights' size, online: this check
//! sends less whenever `m + n > 128` and multiplies only by 64-column matrices,
//! `(m k + k n + m n)·64` products per component, all in `R`.

use veil_mpc::{Ctx, Result};
use veil_ring::{GR_DEGREE, GR_F_LOW, Ring, Z2k};
use veil_tensor::{Device, Tensor};

use crate::coin::public_prg;
use crate::open::{open_all, zero_check};
use crate::prss::random;
use crate::rss::Rss;

/// Coefficients of an element of `G`.
const D: usize = GR_DEGREE;

/// `Σ_j x_j·y_j` in `G` for `x` given transposed (`[D, K]`: row `u` holds the coefficients of
/// `x^u`) and `y` as `[K, D]` (row `j` is `y_j`): `M = x^T·y` is `D × D` with
/// `M[u][v] = Σ_j x_j[u]·y_j[v]`, the product's coefficient of `x^t` is `Σ_{u+v=t} M[u][v]`,
/// and the 127 coefficients are reduced mod `f`.
pub fn dot_transposed<R: Ring>(device: &dyn Device, xt: &Tensor<R>, y: &Tensor<R>) -> Result<Tensor<R>> {
    let m = xt.matmul_with(y, device)?;
    let mut wide = vec![R::ZERO; 2 * D];
    for (u, row) in m.data().chunks_exact(D).enumerate() {
        for (w, &e) in wide[u..u + D].iter_mut().zip(row) {
            *w += e;
        }
    }
    Ok(Tensor::new(vec![D], reduce(wide))?)
}

/// `Σ_j x_j·y_j` in `G` for `x`, `y` as `[K, D]` coefficient rows.
pub fn dot<R: Ring>(device: &dyn Device, x: &Tensor<R>, y: &Tensor<R>) -> Result<Tensor<R>> {
    dot_transposed(device, &x.transpose()?, y)
}

/// `Σ_t w_t x^t mod f` for 128 coefficients: from the top, `x^t = x^{t−64}·x^64` and
/// `x^64 ≡ −(1 + x + x^3 + x^4)`; folds that land at 64 or above are folded again later.
fn reduce<R: Ring>(mut wide: Vec<R>) -> Vec<R> {
    for t in (D..2 * D).rev() {
        let top = wide[t];
        for e in GR_F_LOW {
            wide[t - D + e] -= top;
        }
    }
    wide.truncate(D);
    wide
}

/// The random masks `⟨a⟩, ⟨b⟩ ∈ G^K` of one check, as `[K, D]` coefficient rows.
#[derive(Debug)]
pub struct Masks<R> {
    a: Rss<R>,
    b: Rss<R>,
}

impl<R: Z2k> Masks<R> {
    /// Fresh masks for products whose inner dimensions add up to `k` (F_rand, no
    /// communication).
    pub fn draw(ctx: &mut Ctx, k: usize) -> Result<Self> {
        Ok(Masks { a: random(ctx, &[k, D])?, b: random(ctx, &[k, D])? })
    }

    /// This party's additive term of `c = a·b`: `a_b·(b_b + b_{b+1}) + a_{b+1}·b_b` as one
    /// dot product of twice the length (64 elements of `R`, reshared with the products).
    pub fn cross_term(&self, device: &dyn Device) -> Result<Tensor<R>> {
        let left = Tensor::concat(&[&self.a.first, &self.a.second], 0)?;
        let right = Tensor::concat(&[&self.b.first.add(&self.b.second)?, &self.b.first], 0)?;
        dot(device, &left, &right)
    }
}

/// `⟨P·X⟩` for a public `P`, local.
fn public_left<R: Ring>(d: &dyn Device, p: &Tensor<R>, x: &Rss<R>) -> Result<Rss<R>> {
    Rss::new(p.matmul_with(&x.first, d)?, p.matmul_with(&x.second, d)?)
}

/// `⟨X·P⟩` for a public `P`, local.
fn public_right<R: Ring>(d: &dyn Device, x: &Rss<R>, p: &Tensor<R>) -> Result<Rss<R>> {
    Rss::new(x.first.matmul_with(p, d)?, x.second.matmul_with(p, d)?)
}

/// Steps 2–6 of the module doc for the products `z[i] = pairs[i].0 · pairs[i].1` (already
/// reshared, as `c` was with them; at least one product); aborts unless every product is
/// right.
pub fn check<R: Z2k>(
    ctx: &mut Ctx,
    pairs: &[(&Rss<R>, &Rss<R>)],
    z: &[Rss<R>],
    masks: &Masks<R>,
    c: &Rss<R>,
) -> Result<()> {
    let device = ctx.device();
    let d = &*device;
    let mut prg = public_prg(ctx)?;
    let (mut p, mut q) = (Vec::with_capacity(pairs.len()), Vec::with_capacity(pairs.len()));
    let mut v = Rss::new(Tensor::zeros(&[D]), Tensor::zeros(&[D]))?;
    for ((x, y), zi) in pairs.iter().zip(z) {
        let (m, n) = (x.shape()[0], y.shape()[1]);
        let st = Tensor::new(vec![D, m], R::random_vec(&mut prg, m * D))?; // s_i^T
        let r = Tensor::new(vec![n, D], R::random_vec(&mut prg, n * D))?;
        p.push(public_left(d, &st, x)?.transpose()?); // X_i^T s_i as [k_i, D] rows
        q.push(public_right(d, y, &r)?);
        let zr = public_right(d, zi, &r)?;
        v = v.add(&Rss::new(dot_transposed(d, &st, &zr.first)?, dot_transposed(d, &st, &zr.second)?)?)?;
    }
    let (p, q) = (
        Rss::concat_axis(&p.iter().collect::<Vec<_>>(), 0)?,
        Rss::concat_axis(&q.iter().collect::<Vec<_>>(), 0)?,
    );
    let k = p.shape()[0];
    let opened = open_all(ctx, &Rss::concat_axis(&[&p.sub(&masks.a)?, &q.sub(&masks.b)?], 0)?)?;
    // w = c + ρ·b + σ·a + ρ·σ, the first two sums as one dot product of [ρ; σ] with [b; a].
    let left_t = opened.transpose()?;
    let w_part = |bc: &Tensor<R>, ac: &Tensor<R>| dot_transposed(d, &left_t, &Tensor::concat(&[bc, ac], 0)?);
    let w = Rss::new(
        c.first.add(&w_part(&masks.b.first, &masks.a.first)?)?,
        c.second.add(&w_part(&masks.b.second, &masks.a.second)?)?,
    )?
    .add_public(ctx.party(), &dot(d, &opened.slice(0, 0..k)?, &opened.slice(0, k..2 * k)?)?)?;
    zero_check(ctx, &v.sub(&w)?, "matmul (product check over GR(2^ℓ, 64))")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;
    use rand::{SeedableRng, rngs::StdRng};
    use veil_ring::{Gr, Z64};
    use veil_tensor::Cpu;

    fn rows(g: &mut StdRng, k: usize) -> Tensor<Z64> {
        Tensor::new(vec![k, D], Z64::random_vec(g, k * D)).unwrap()
    }

    fn to_gr(t: &Tensor<Z64>, j: usize) -> Gr {
        let mut c = [0u64; D];
        c.iter_mut().zip(&t.data()[j * D..(j + 1) * D]).for_each(|(c, v)| *c = v.0);
        Gr(c)
    }

    /// The dot product by one matrix product and a reduction equals the sum of `Gr` products.
    #[test]
    fn dot_matches_the_galois_ring_products() {
        let mut g = StdRng::seed_from_u64(1);
        for k in [1, 2, 7] {
            let (x, y) = (rows(&mut g, k), rows(&mut g, k));
            let want = (0..k).fold(Gr::ZERO, |acc, j| acc.add(&to_gr(&x, j).mul(&to_gr(&y, j))));
            let got = dot(&Cpu::new(), &x, &y).unwrap();
            assert_eq!(to_gr(&got, 0), want, "K = {k}");
        }
    }

    /// `x^63 · x^63 = x^126`, the highest power the reduction folds twice.
    #[test]
    fn reduction_of_the_top_power() {
        let mut x = vec![Z64(0); D];
        x[D - 1] = Z64(1);
        let x = Tensor::new(vec![1, D], x).unwrap();
        let got = dot(&Cpu::new(), &x, &x).unwrap();
        assert_eq!(to_gr(&got, 0), to_gr(&x, 0).mul(&to_gr(&x, 0)));
    }
}
