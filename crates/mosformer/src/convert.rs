//! Modulus conversion between the rings of the precision plan (paper §6, Appendix C.6):
//! linear layers in Z_2^64 (f = 16), softmax and rsqrt in Z_2^32 (f = 12), activations in
//! Z_2^16 (f = 6).
//!
//! **Downcast** (ℓ → ℓ' < ℓ, f → f' ≤ f), local. With `x = x_0 + x_1 + x_2 - w·2^ℓ` and
//! `s = f - f'`: `Σ ⌊x_i / 2^s⌋ = ⌊x / 2^s⌋ + w·2^{ℓ-s} - w'` with carry `w' ∈ {0, 1, 2}`, and the
//! `w` term vanishes mod 2^{ℓ'} whenever `ℓ - s ≥ ℓ'` (64→32: 60 ≥ 32; 64→16: 54 ≥ 16).
//! So each party shifts both its components right by `s` (logical shift) and reduces mod
//! 2^{ℓ'}; both holders of a component do the same, so the result is a consistent sharing.
//! Result: `⌊x / 2^s⌋ - w'`, at most 2 units low; valid while `|x / 2^s| < 2^{ℓ'-1}`.
//!
//! **Upcast** (ℓ → ℓ' > ℓ, f → f' ≥ f), one checked opening. With a tuple
//! `(⟨r⟩_ℓ, ⟨r⟩_{ℓ'}, ⟨MSB(r)⟩_{ℓ'})` for a uniform `r < 2^ℓ` (the same integer in both rings):
//! open `x̂ = x + r + 2^{ℓ-2} mod 2^ℓ`; for `x ∈ [-2^{ℓ-2}, 2^{ℓ-2})`, `X = x + 2^{ℓ-2}` lies in
//! `[0, 2^{ℓ-1})`, so the wrap `ŵ = [X + r ≥ 2^ℓ]` equals `MSB(r)·(1 - MSB(x̂))` (if `MSB(r) = 0`
//! there is no wrap; if it is 1, `X + r ≥ 2^{ℓ-1}` and the wrap is exactly what clears the MSB).
//! Then `x = x̂ - r + ŵ·2^ℓ - 2^{ℓ-2}` over the integers, computed in Z_2^{ℓ'} and scaled by
//! `2^{f'-f}`: exact. Cost per party: `n·B_ℓ + 32` bytes, 2 messages, 1 round.
//!
//! Tuples come from [`generate_upcast_tuples`], built from random bits the servers produce
//! and verify themselves.
//!
//! Known limitation: a value outside `[-2^{ℓ-2}, 2^{ℓ-2})` upcasts to a wrong value without
//! notice; the guard needs a comparison gate (DReLU), which comes with the FSS gates.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Z2k;
use veil_tensor::Tensor;

use crate::bits::random_bits;
use crate::open::open_all;
use crate::rss::Rss;
use crate::triples::TripleSource;

fn convert<R: Z2k, S: Z2k>(t: &Tensor<R>, shift: u32) -> Tensor<S> {
    t.map(|v| S::from_u128(v.to_u128() >> shift))
}

/// `⟨x / 2^shift⟩` in the smaller ring `S` (local; see the module doc for error and range).
pub fn downcast<R: Z2k, S: Z2k>(x: &Rss<R>, shift: u32) -> Result<Rss<S>> {
    if S::BITS >= R::BITS || R::BITS - shift.min(R::BITS) < S::BITS {
        return Err(MpcError::Invalid(format!(
            "downcast from Z_2^{} to Z_2^{} by {shift} bits: needs ℓ' < ℓ and ℓ - shift ≥ ℓ'",
            R::BITS,
            S::BITS
        )));
    }
    Rss::new(convert(&x.first, shift), convert(&x.second, shift))
}

/// `⟨x mod 2^ℓ'⟩` in a ring `S` no wider than `R` (local and exact: reduction mod 2^ℓ' is a
/// ring homomorphism, applied to each component). With `S = R` it is the identity, which is
/// how the gates read their conditions in the full ring when there is no modulus conversion.
pub fn reduce<R: Z2k, S: Z2k>(x: &Rss<R>) -> Result<Rss<S>> {
    if S::BITS > R::BITS {
        return Err(MpcError::Invalid(format!("reduction from Z_2^{} to Z_2^{}", R::BITS, S::BITS)));
    }
    Ok(x.map_components(|v| S::from_u128(v.to_u128())))
}

/// A sharing over the wider ring `S` of *some* `x' ≡ x (mod 2^ℓ)` (local: each component read
/// as an integer below 2^ℓ, so `x' = x + w·2^ℓ` with `w ∈ {0, 1, 2}`). Enough wherever only
/// linear steps and selections follow and the result is taken mod 2^ℓ again ([`reduce`]): the
/// gates' values in the MAC ring, whose MACs authenticate them mod 2^ℓ ([`crate::mac`]).
/// Not a sign extension: truncation or comparison of `x'` in `S` would see the `w·2^ℓ`.
pub fn lift<R: Z2k, S: Z2k>(x: &Rss<R>) -> Result<Rss<S>> {
    if S::BITS < R::BITS {
        return Err(MpcError::Invalid(format!("lift from Z_2^{} to Z_2^{}", R::BITS, S::BITS)));
    }
    Ok(x.map_components(|v| S::from_u128(v.to_u128())))
}

/// One party's shares of an upcast tuple.
#[derive(Clone, Debug)]
pub struct UpcastTuple<R, S> {
    /// `⟨r⟩` over the small ring.
    pub r_small: Rss<R>,
    /// `⟨r⟩` over the large ring (the same integer `r < 2^ℓ`).
    pub r_large: Rss<S>,
    /// `⟨MSB_ℓ(r)⟩` over the large ring.
    pub msb: Rss<S>,
}

/// Where upcast tuples come from. All parties call it in the same order.
pub trait UpcastSource<R: Z2k, S: Z2k> {
    /// A tuple for a tensor of the given shape.
    fn upcast_tuple(&mut self, ctx: &mut Ctx, shape: &[usize]) -> Result<UpcastTuple<R, S>>;
}

/// `⟨x · 2^shift⟩` in the larger ring `S`, for `x ∈ [-2^{ℓ-2}, 2^{ℓ-2})`.
pub fn upcast<R: Z2k, S: Z2k>(
    ctx: &mut Ctx,
    tuples: &mut impl UpcastSource<R, S>,
    x: &Rss<R>,
    shift: u32,
) -> Result<Rss<S>> {
    if S::BITS <= R::BITS || shift >= S::BITS {
        return Err(MpcError::Invalid(format!(
            "upcast from Z_2^{} to Z_2^{} by {shift} bits",
            R::BITS,
            S::BITS
        )));
    }
    let t = tuples.upcast_tuple(ctx, x.shape())?;
    let bias_small = R::from_u128(1u128 << (R::BITS - 2));
    let bias = Tensor::new(x.shape().to_vec(), vec![bias_small; x.len()])?;
    let x_hat = open_all(ctx, &x.add(&t.r_small)?.add_public(ctx.party(), &bias)?)?;
    // ŵ = MSB(r)·(1 - MSB(x̂)): keep ⟨MSB(r)⟩ where MSB(x̂) = 0.
    let keep = x_hat.map(|v| if v.msb() { S::ZERO } else { S::ONE });
    let wrap = t.msb.mul_public(&keep)?.scale(S::from_u128(1u128 << R::BITS));
    let public = x_hat.map(|v| S::from_u128(v.to_u128()) - S::from_u128(1u128 << (R::BITS - 2)));
    let x_large = wrap.sub(&t.r_large)?.add_public(ctx.party(), &public)?;
    Ok(x_large.scale(S::from_u128(1u128 << shift)))
}

/// `n` upcast tuples for `Z_2^ℓ → Z_2^{ℓ'}` (`R → S`), from `ℓ·n` random bits over `S`
/// ([`crate::bits`]): `r = Σ 2^i β_i` over `S`, `⟨r mod 2^ℓ⟩` by local reduction (a ring
/// homomorphism), `MSB(r) = β_{ℓ-1}`. Exact and uniform; costs `2ℓ` verified products per tuple.
pub fn generate_upcast_tuples<R: Z2k, S: Z2k>(
    ctx: &mut Ctx,
    triples: &mut impl TripleSource<S>,
    n: usize,
) -> Result<UpcastTuple<R, S>> {
    let l = R::BITS as usize;
    if S::BITS <= R::BITS {
        return Err(MpcError::Invalid(format!("upcast tuples from Z_2^{} to Z_2^{}", R::BITS, S::BITS)));
    }
    // Bit i of tuple k at k·ℓ + i.
    let bits = random_bits::<S>(ctx, triples, n * l)?;
    let weigh = |t: &Tensor<S>| -> Result<(Tensor<S>, Tensor<S>)> {
        let (mut r, mut msb) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for chunk in t.data().chunks(l) {
            r.push(chunk.iter().enumerate().fold(S::ZERO, |acc, (i, &v)| acc + (v << i as u32)));
            msb.push(chunk[l - 1]);
        }
        Ok((Tensor::new(vec![n], r)?, Tensor::new(vec![n], msb)?))
    };
    let (r0, m0) = weigh(&bits.first)?;
    let (r1, m1) = weigh(&bits.second)?;
    let r_large = Rss::new(r0, r1)?;
    Ok(UpcastTuple {
        r_small: r_large.map_components(|v| R::from_u128(v.to_u128())),
        r_large,
        msb: Rss::new(m0, m1)?,
    })
}
