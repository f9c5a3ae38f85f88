//! LayerNorm over the last axis (the released code's steps): Z_2^64 with f = 16 for
//! the linear parts; Rsqrt at `f_rsqrt` fractional bits (12, comparisons in Z_2^32, in the
//! mixed-ring plan; 16, comparisons in Z_2^64, without modulus conversion).
//!
//! `y = γ ⊙ (x - m) / √v + β`, `m = Σ x / k`, `v = Σ (x - m)² / k`:
//! 1. row sums, truncation by the public `k` → `m`;
//! 2. `z = x - m`; `z²` by a verified square, truncated by `2^16`;
//! 3. row sums of `z²`, one truncation by `k·2^{16 - f_rsqrt}` → `v` at `f_rsqrt` bits, still
//!    in Z_2^64;
//! 4. Π_Rsqrt on `v` (its comparisons read the working ring through a local reduction), whose
//!    result is in Z_2^64 at `f_rsqrt` bits: a local scale brings it to f = 16;
//! 5. `z · rsqrt`, `· γ` (verified products, truncated), `+ β`.
//!
//! No ε is added to the variance, as in the paper: a row of equal values (v = 0) is outside the
//! Rsqrt domain and gives a wrong row, not an error; the caller must keep
//! `v ≥ 2^-4`.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Z2k, Z64};
use veil_tensor::Tensor;

use crate::mac::Macs;
use crate::recip::{self, Kind, RecipKeys, Sources};
use crate::rss::Rss;
use crate::shape::{Shape, Word};
use crate::triples::Sacrifice;
use crate::trunc::trunc;
use crate::verified;
use veil_mpc::mode::Security;

/// Fractional bits of the linear ring.
pub const F_LIN: u32 = 16;
/// Fractional bits of the Rsqrt ring in the mixed-ring plan (Z_2^32).
pub const F_RSQRT: u32 = 12;

/// Verified material for LayerNorm over `rows` rows, Rsqrt's comparisons in `R`, its gates in
/// the MAC ring `M`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, M: Word")]
pub struct LayerNormKeys<R, M> {
    rows: usize,
    k: usize,
    rsqrt: RecipKeys<R, M>,
}

impl<R: Z2k, M: Z2k> LayerNormKeys<R, M> {
    /// Zero material of the real shapes: the layout real material must have (stored
    /// material is checked against it); `f` is Rsqrt's fractional bits.
    pub(crate) fn placeholder(rows: usize, k: usize, f: u32) -> Self {
        LayerNormKeys { rows, k, rsqrt: RecipKeys::placeholder(Kind::Rsqrt, rows, f) }
    }
}

impl<R, M: Shape> Shape for LayerNormKeys<R, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        out.extend([self.rows, self.k]);
        self.rsqrt.shape(out);
    }
}

/// Deals and checks the material for `[rows, k]` inputs, Rsqrt at `f` fractional bits.
pub fn setup<R: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    rows: usize,
    k: usize,
    f: u32,
) -> Result<LayerNormKeys<R, M>> {
    setup_with(ctx, rows, k, f, Security::Malicious)
}

/// [`setup`] in a given mode.
pub fn setup_with<R: Sacrifice, M: Z2k>(
    ctx: &mut Ctx,
    rows: usize,
    k: usize,
    f: u32,
    security: Security,
) -> Result<LayerNormKeys<R, M>> {
    Ok(LayerNormKeys { rows, k, rsqrt: recip::setup_with(ctx, Kind::Rsqrt, rows, f, security)? })
}

/// A verified product truncated by `2^16`.
fn mul_trunc(ctx: &mut Ctx, sources: &mut impl Sources, a: &Rss<Z64>, b: &Rss<Z64>) -> Result<Rss<Z64>> {
    let p = verified::mul(ctx, sources, a, b)?;
    trunc(ctx, sources, &p, 1 << F_LIN)
}

/// `⟨LayerNorm(x)⟩` for `x: [rows, k]` with `γ, β: [k]` (secret, from the model owner), all in
/// Z_2^64 with 16 fractional bits; Rsqrt runs at `f_rsqrt ≤ 16` fractional bits.
pub fn layernorm<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: LayerNormKeys<R, M>,
    sources: &mut impl Sources,
    x: &Rss<Z64>,
    (gamma, beta): (&Rss<Z64>, &Rss<Z64>),
    f_rsqrt: u32,
    macs: &mut Macs<'_, M>,
) -> Result<Rss<Z64>> {
    let (rows, k) = (keys.rows, keys.k);
    if x.len() != rows * k || gamma.len() != k || beta.len() != k || f_rsqrt > F_LIN {
        return Err(MpcError::Invalid(format!(
            "LayerNorm of {} values (γ {}, β {}) with keys for [{rows}, {k}], Rsqrt at {f_rsqrt} bits",
            x.len(),
            gamma.len(),
            beta.len()
        )));
    }
    let x = x.reshape(&[rows, k])?;
    let tile = |v: &Rss<Z64>| -> Result<Rss<Z64>> {
        let rep = |t: &Tensor<Z64>| {
            Tensor::new(vec![rows, k], t.data().iter().copied().cycle().take(rows * k).collect())
        };
        Rss::new(rep(&v.first)?, rep(&v.second)?)
    };
    let mean = trunc(ctx, sources, &x.row_sums(k)?, k as u64)?;
    let z = x.sub(&mean.spread_rows(k)?)?;
    let sq = mul_trunc(ctx, sources, &z, &z)?;
    let var = trunc(ctx, sources, &sq.row_sums(k)?, (k as u64) << (F_LIN - f_rsqrt))?;
    let rs = recip::evaluate(ctx, keys.rsqrt, sources, &var, f_rsqrt, macs)?;
    let rs = rs.scale(Z64(1 << (F_LIN - f_rsqrt)));
    let normed = mul_trunc(ctx, sources, &z, &rs.spread_rows(k)?)?;
    let scaled = mul_trunc(ctx, sources, &normed, &tile(gamma)?)?;
    scaled.add(&tile(beta)?)
}
