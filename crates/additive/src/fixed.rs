//! Fixed-point arithmetic on additive shares over `Z_2^64`: products rescaled by truncation
//! pairs, and matrix products with matrix triples.
//!
//! **Truncation by a public `d`** (`⌊x / d⌋` within one unit). With a pair `(r, q = ⌊r/d⌋)`
//! and a public bias `B = d·⌈2^47/d⌉`, the parties open `c = x + B + r`. For
//! `x ∈ [−2^47, 2^47)` and `r < 2^64 − 2^49` ([`crate::dealer::TRUNC_MASK_BOUND`]) the sum does
//! not wrap, so `⌊c/d⌋ − B/d − q ∈ {⌊x/d⌋, ⌊x/d⌋ + 1}`. With a trusted source, `c` hides `x`
//! up to a statistical distance of `2^49 / 2^64 = 2^-15` (the mask's range against the
//! input's); values outside `±2^47` (`±2^15` at 32 fractional bits) give garbage, which the
//! fixed-point executor's range report flags first.
//!
//! **Matrix products** `X·Y` with a triple `(A, B, C = A·B)`: open `D = X − A` and
//! `E = Y − B` in one message to each peer, then `Z = C + D·B + A·E (+ D·E at party 0)`.
//!
//! Costs per party, `n` computing parties, 8-byte words: truncation of `m` values
//! `(n−1)·8m` bytes, `n−1` messages, 1 round; a `[m, k] × [k, p]` product
//! `(n−1)·8(mk + kp)` bytes, `n−1` messages, 1 round.

use veil_mpc::cost::Cost;
use veil_mpc::traits::FixedPoint;
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Z64;
use veil_tensor::Tensor;

use crate::dealer::{Correlations, TripleSource};
use crate::protocol::{Additive, Share, open_values};

/// Fractional bits of the family's fixed-point encoding.
pub const FRAC_BITS: u32 = 16;
/// Largest public divisor a truncation takes (keeps `x + B` below `2^49`).
pub const MAX_DIVISOR: u64 = 1 << 40;
/// Inputs of a truncation must lie in `[−2^RANGE_BITS, 2^RANGE_BITS)`.
pub const RANGE_BITS: u32 = 47;

impl<D: Correlations> Additive<D> {
    /// `⟨⌊x / d⌋⟩` (or one more), for a public `1 ≤ d ≤ 2^40`, in one round.
    pub fn truncate(&mut self, ctx: &mut Ctx, x: &Share<Z64>, d: u64) -> Result<Share<Z64>> {
        if d == 0 || d > MAX_DIVISOR {
            return Err(MpcError::Invalid(format!("truncation by {d}: the divisor must be 1 to 2^40")));
        }
        let (peers, n) = self.group(ctx)?;
        let m = x.0.len();
        let pairs = self.source.trunc_pairs(ctx, n, m, d)?;
        let bias = d * (1u64 << RANGE_BITS).div_ceil(d);
        let lead = ctx.party() == 0;
        let masked: Vec<Z64> = (0..m)
            .map(|k| {
                let v = x.0.data()[k] + pairs.r[k];
                if lead { v + Z64(bias) } else { v }
            })
            .collect();
        let c = open_values(ctx, &peers, masked)?;
        let out: Vec<Z64> = (0..m)
            .map(|k| {
                let public = if lead { Z64(c[k].0 / d - bias / d) } else { Z64(0) };
                public - pairs.q[k]
            })
            .collect();
        Ok(Share(Tensor::new(x.0.shape().to_vec(), out)?))
    }

    /// `⟨X · Y⟩` for `[m, k] × [k, p]`, exact in `Z_2^64` (not rescaled), in one round.
    pub fn matmul(&mut self, ctx: &mut Ctx, x: &Share<Z64>, y: &Share<Z64>) -> Result<Share<Z64>> {
        let (m, k, p) = match (x.0.shape(), y.0.shape()) {
            ([m, k], [k2, p]) if k == k2 => (*m, *k, *p),
            (a, b) => return Err(MpcError::Invalid(format!("a product of {a:?} and {b:?}"))),
        };
        let (peers, n) = self.group(ctx)?;
        let t = self.source.matrix_triple(ctx, n, m, k, p)?;
        let mut de: Vec<Z64> = x.0.sub(&t.a)?.into_data();
        de.extend_from_slice(y.0.sub(&t.b)?.data());
        let de = open_values(ctx, &peers, de)?;
        let d = Tensor::new(vec![m, k], de[..m * k].to_vec())?;
        let e = Tensor::new(vec![k, p], de[m * k..].to_vec())?;
        let device = ctx.device();
        let mut z = t.c.add(&d.matmul_with(&t.b, &*device)?)?.add(&t.a.matmul_with(&e, &*device)?)?;
        if ctx.party() == 0 {
            z = z.add(&d.matmul_with(&e, &*device)?)?;
        }
        Ok(Share(z))
    }

    /// Declared cost at one party of truncating `m` values among `n` computing parties.
    pub fn truncate_cost(m: usize, n: usize) -> Cost {
        let peers = n.saturating_sub(1) as u64;
        Cost { bytes_sent: peers * 8 * m as u64, messages_sent: peers, rounds: 1 }
    }

    /// Declared cost at one party of a `[m, k] × [k, p]` product among `n` computing parties.
    pub fn matmul_cost(m: usize, k: usize, p: usize, n: usize) -> Cost {
        let peers = n.saturating_sub(1) as u64;
        Cost { bytes_sent: peers * 8 * (m * k + k * p) as u64, messages_sent: peers, rounds: 1 }
    }
}

impl<D: Correlations + TripleSource<Z64>> FixedPoint<Z64> for Additive<D> {
    fn frac_bits(&self) -> u32 {
        FRAC_BITS
    }

    fn mul_fixed(&mut self, ctx: &mut Ctx, x: &Share<Z64>, y: &Share<Z64>) -> Result<Share<Z64>> {
        let z = veil_mpc::traits::Multiply::mul(self, ctx, x, y)?;
        self.truncate(ctx, &z, 1 << FRAC_BITS)
    }

    fn matmul_fixed(&mut self, ctx: &mut Ctx, x: &Share<Z64>, y: &Share<Z64>) -> Result<Share<Z64>> {
        let z = self.matmul(ctx, x, y)?;
        self.truncate(ctx, &z, 1 << FRAC_BITS)
    }

    fn matmul_unscaled(&mut self, ctx: &mut Ctx, x: &Share<Z64>, y: &Share<Z64>) -> Result<Share<Z64>> {
        self.matmul(ctx, x, y)
    }

    fn div_public(&mut self, ctx: &mut Ctx, x: &Share<Z64>, d: u64) -> Result<Share<Z64>> {
        self.truncate(ctx, x, d)
    }
}
