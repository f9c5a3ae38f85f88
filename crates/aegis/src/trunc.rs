//! Truncation by `2^t` with no online communication (paper Fig. 21, with a fix): the input
//! mask `r_x` stays uniform (from seeds), P0 deals a *fresh* sharing
//! of `r_z = r_x ≫ t` (`l` bits offline), and P1 and P2 set `m_z = m_x ≫ t` locally. The paper's
//! version conditions `r_x` on P1's share, which leaks bits of the mask to P1.
//!
//! Both shifts are logical on `l`-bit values, so `z = m_z − r_z` is `⌊x/2^t⌋` or `⌊x/2^t⌋ + 1`
//! (as a signed value) unless adding the mask wrapped around, which happens with probability
//! about `|x|/2^l`. The semi-honest protocol; the paper's malicious version (bit-composed
//! masks checked by inner-product verification) comes with the verification.

use veil_mpc::prep::CorrelationRequest;
use veil_mpc::{Ctx, MpcError, Result};

use std::sync::Arc;

use crate::claims::{BitProducts, Bits, Recorded, Terms};
use crate::mul::{mask_sum, offline};
use crate::share::{Aegis, Masked, Pair, recv_u64s, to_bytes};

impl Aegis {
    /// `⟨x / 2^t⟩` (within one unit, see the module docs).
    pub fn trunc(&mut self, ctx: &mut Ctx, x: &Masked, t: u32) -> Result<Masked> {
        let r = self.prepare_trunc(ctx, &x.r, x.n, t)?;
        self.trunc_online(x, r, t)
    }

    /// Offline: P0 deals `[r_x ≫ t]` for secrets masked by `rx` (`l` bits per element).
    pub fn prepare_trunc(&mut self, ctx: &mut Ctx, rx: &Pair, n: usize, t: u32) -> Result<Pair> {
        let me = Self::check_server(ctx)?;
        if t == 0 || t >= self.l() {
            return Err(MpcError::Invalid(format!("truncation by {t} bits in Z_2^{}", self.l())));
        }
        let shifted =
            (me == 0).then(|| mask_sum(rx).into_iter().map(|r| self.reduce(r) >> t).collect::<Vec<_>>());
        offline(ctx, |ctx| self.deal(ctx, "trunc/r_z", shifted.as_deref(), n))
    }

    /// Online: `m_z = m_x ≫ t`, no communication.
    pub fn trunc_online(&self, x: &Masked, r: Pair, t: u32) -> Result<Masked> {
        self.shift_masked(x, r, t, 0)
    }

    /// `m_z = (m_x − offset) ≫ t` (P1 and P2 alike: `m_x` is theirs in the clear).
    fn shift_masked(&self, x: &Masked, r: Pair, t: u32, offset: u64) -> Result<Masked> {
        if t == 0 || t >= self.l() {
            return Err(MpcError::Invalid(format!("truncation by {t} bits in Z_2^{}", self.l())));
        }
        let m = x.m.iter().map(|&v| self.reduce(v.wrapping_sub(offset)) >> t).collect();
        Ok(Masked { m, r, n: x.n })
    }
}

/// A truncation pair made by the servers and checked (paper Fig. 20, with its bit indices
/// corrected, and fewer bit products): the input mask is
///
/// ```text
/// r_x = 2^(l−u)·T + V1 + V2 (mod 2^l),   T = Σ_{j<u} 2^j (b1_j ⊕ b2_j),
/// r_z = 2^(l−u−t)·T + (V1 ≫ t) + (V2 ≫ t)
/// ```
///
/// from `u` bits P0 shares with P1 (`b1`) and with P2 (`b2`), and from `V1` (P0 and P1) and
/// `V2` (P0 and P2), uniform in `[0, 2^(l−u))`. The XORs are two inner products (`b1 ⊕ b2 =
/// b1 + b2 − 2·b1·b2`), verified with every other product, so a corrupted P0 cannot make
/// the high part of `r_z` differ from that of `r_x ≫ t`; `V1` and `V2` come from seeds and
/// are computed by both holders, so nobody chooses them. Both masks come out as additive
/// shares between P1 and P2 (P0 knows both), ready to be the output mask of the product
/// that makes the value to truncate, whose truncation is then local.
///
/// **Privacy.** From P1's view (it knows `b1`, `V1`) `T` is uniform in `[0, 2^u)` and `V2`
/// in `[0, 2^(l−u))`, independent; `r_x` is `2^(l−u)·((T + c) mod 2^u) + ((V1 + V2) mod
/// 2^(l−u))` with the carry `c` a function of `V2`, so `r_x` is uniform in `Z_2^l`, exactly
/// as with `l` bits (and symmetrically for P2).
///
/// **Correctness.** `r_z` is `r_x ≫ t − c` with `c` the carry of `V1 + V2` out of their low
/// `t` bits (`c = 1` with probability about 1/2), so `m_x ≫ t − r_z` is `⌊x/2^t⌋` plus 0, 1
/// or 2. The online step takes `m_z = (m_x − 2^(t−1)) ≫ t` ([`TruncPair::offset`]), which
/// makes the result `⌊(x − 2^(t−1))/2^t⌋ + {0, 1, 2}`: within 1.5 units of `x/2^t` and
/// unbiased (the mask's part is a stochastic rounding of `(x − 2^(t−1))/2^t`, mean
/// `x/2^t − 1/2`, and `c` adds 1/2 on average), against within one unit and unbiased with
/// `l` bits. `r_z` is wrong only when `V1 + V2`
/// carries into `2^(l−u)·T` and that sum wraps (`T = 2^u − 1`): probability `2^−(u+1)` per
/// element, `2^−33` with `u = 32`, against the truncation's own failure probability `|x|/2^l`
/// (about `2^−24` for a product of two values of magnitude `2^4` at 16 fractional bits:
/// the new failure is hundreds of times rarer). With `u = 32` instead of `l = 64` a pair costs
/// half the bit products, which are most of a CNN's verified terms. When `t > l − 32` (or
/// `l ≤ 32`) the pair uses `u = l` bits and no `V`, as the paper does.
#[derive(Clone, Debug)]
pub struct TruncPair {
    /// Additive shares of `r_x`.
    pub rx: Pair,
    /// Additive shares of `r_x ≫ t`.
    pub rz: Pair,
    /// The shift.
    pub t: u32,
    /// Subtracted from the masked value before the shift: `2^(t−1)` when the mask has a low
    /// part (see the type's docs), else 0.
    pub offset: u64,
}

impl Aegis {
    /// Makes `n` verified truncation pairs for a shift by `t` (offline: two inner products of
    /// length `u` per pair, `6u` bits: `u = 32` where the shift leaves room for the low part,
    /// else `l`; see `TruncPair`).
    pub fn prepare_trunc_pair(&mut self, ctx: &mut Ctx, n: usize, t: u32) -> Result<TruncPair> {
        let me = Self::check_server(ctx)?;
        let l = self.l() as usize;
        if t == 0 || t as usize >= l {
            return Err(MpcError::Invalid(format!("truncation by {t} bits in Z_2^{l}")));
        }
        let t = t as usize;
        self.usage.record(&CorrelationRequest::TruncPairs { count: n });
        self.make_trunc_pair(ctx, me, n, l, t)
    }

    /// The body of [`Aegis::prepare_trunc_pair`], word by word from the bits: the sharings
    /// `⟨b1⟩ = (m 0, [r]_1 −b1, [r]_2 0)` and `⟨b2⟩ = (m 0, [r]_1 0, [r]_2 −b2)` have `m = 0`,
    /// so the product protocol's online shares of `Σ_j 2w_j·b1_j·b2_j` are P0's dealt `[Γ]`
    /// alone, and `Σ_j w_j·(b1_j + b2_j)` is a sum of mask shares: nothing of length `n·l`
    /// besides the bits is formed. The messages are those of two inner products (P0 deals
    /// `[Γ]`, P1 and P2 exchange their shares), both recorded as one pair of bit products.
    fn make_trunc_pair(
        &mut self,
        ctx: &mut Ctx,
        me: usize,
        n: usize,
        l: usize,
        t: usize,
    ) -> Result<TruncPair> {
        offline(ctx, |ctx| {
            let u = mask_bits(l, t);
            // b1 (P0, P1) and b2 (P0, P2), one bit per position, LSB first.
            let b1 =
                if me != 2 { pair_bits(ctx, if me == 0 { 1 } else { 0 }, n * u)? } else { Bits::default() };
            let b2 =
                if me != 1 { pair_bits(ctx, if me == 0 { 2 } else { 0 }, n * u)? } else { Bits::default() };
            // V1 (P0, P1) and V2 (P0, P2): the low `l − u` bits of r_x.
            let v1 = if me != 2 { low_words(ctx, if me == 0 { 1 } else { 0 }, n, l - u)? } else { vec![] };
            let v2 = if me != 1 { low_words(ctx, if me == 0 { 2 } else { 0 }, n, l - u)? } else { vec![] };
            let (wx, wz) = mask_weights(l, u, t);
            let double = |w: &[u64]| -> Vec<u64> { w.iter().map(|v| v.wrapping_mul(2)).collect() };
            let (wx2, wz2) = (double(&wx), double(&wz));
            let mut outputs = Vec::with_capacity(2);
            for (w, w2) in [(&wx, &wx2), (&wz, &wz2)] {
                // P0's `Σ_j 2w_j·b1_j·b2_j`, then the product's mask and `[Γ]`.
                let prod = (me == 0).then(|| weighted_rows(w2, n, u, |e| b1.get(e) & b2.get(e)));
                let r_z = self.random_pair(ctx, "mul/r_z", n)?;
                let g = prod.map(|p| {
                    (0..n).map(|i| p[i].wrapping_add(r_z.one[i]).wrapping_add(r_z.two[i])).collect::<Vec<_>>()
                });
                let gamma = self.deal(ctx, "mul/gamma", g.as_deref(), n)?;
                // Online shares of the product: `Γ` alone, since `m = 0` for both inputs.
                let m = if me == 0 {
                    vec![]
                } else {
                    let share = if me == 1 { &gamma.one } else { &gamma.two };
                    ctx.net().send(3 - me, to_bytes(share))?;
                    let other = recv_u64s(ctx, 3 - me, n)?;
                    let m: Vec<u64> =
                        share.iter().zip(&other).map(|(a, b)| self.reduce(a.wrapping_add(*b))).collect();
                    self.record_joint(&m);
                    m
                };
                let product = Masked { m, r: r_z, n };
                // `⟨Σ_j w_j·(b1_j ⊕ b2_j)⟩ = Σ_j w_j·(⟨b1_j⟩ + ⟨b2_j⟩) − product`: `m` is minus the
                // product's, the masks' shares are `−Σ_j w_j·b_j` minus the product's.
                let neg_sum = |b: &Bits, r: &[u64]| -> Vec<u64> {
                    if r.is_empty() {
                        return vec![];
                    }
                    let s = weighted_rows(w, n, u, |e| b.get(e));
                    s.iter().zip(r).map(|(a, q)| self.reduce(a.wrapping_add(*q).wrapping_neg())).collect()
                };
                let v = Masked {
                    m: product.m.iter().map(|x| self.reduce(x.wrapping_neg())).collect(),
                    r: Pair { one: neg_sum(&b1, &product.r.one), two: neg_sum(&b2, &product.r.two) },
                    n,
                };
                // Additive shares between P1 and P2: [v]_1 = m − [r]_1, [v]_2 = −[r]_2; P0 knows v.
                let additive = match me {
                    0 => {
                        let two: Vec<u64> = v.r.two.iter().map(|x| self.reduce(x.wrapping_neg())).collect();
                        let plain = weighted_rows(w, n, u, |e| b1.get(e) ^ b2.get(e));
                        let one =
                            plain.iter().zip(&two).map(|(p, q)| self.reduce(p.wrapping_sub(*q))).collect();
                        Pair { one, two }
                    }
                    1 => Pair {
                        one: v.m.iter().zip(&v.r.one).map(|(m, r)| self.reduce(m.wrapping_sub(*r))).collect(),
                        two: vec![],
                    },
                    _ => Pair {
                        one: vec![],
                        two: v.r.two.iter().map(|x| self.reduce(x.wrapping_neg())).collect(),
                    },
                };
                outputs.push((product, additive));
            }
            let (rz_product, mut rz) =
                outputs.pop().ok_or_else(|| MpcError::Invalid("truncation pair".into()))?;
            let (rx_product, mut rx) =
                outputs.pop().ok_or_else(|| MpcError::Invalid("truncation pair".into()))?;
            // The low parts: `V1` into P1's shares, `V2` into P2's (P0 holds both).
            let add = |share: &mut Vec<u64>, v: &[u64], shift: usize| {
                for (s, v) in share.iter_mut().zip(v) {
                    *s = self.reduce(s.wrapping_add(v >> shift));
                }
            };
            add(&mut rx.one, &v1, 0);
            add(&mut rz.one, &v1, t);
            add(&mut rx.two, &v2, 0);
            add(&mut rz.two, &v2, t);
            // Both inner products multiply the same bits b1_j·b2_j: verified as one record, kept
            // as the bits (2 bits per bit product at P0, 1 at P1 and P2, instead of 48 bytes).
            self.recorded.push(Recorded {
                x: Arc::default(),
                y: Arc::default(),
                z: Arc::new(rx_product),
                terms: Terms::Inner { len: u },
                twin: Some((Arc::default(), Arc::new(rz_product))),
                bits: Some(BitProducts { len: u, w: wx2, w2: wz2, b1, b2 }),
            });
            let offset = if u < l { 1u64 << (t - 1) } else { 0 };
            Ok(TruncPair { rx, rz, t: t as u32, offset })
        })
    }

    /// `⟨(x·y) / 2^t⟩` elementwise with a verified truncation pair: the product is made with
    /// the pair's `r_x` as its output mask, so the truncation is local (1 round online, as one
    /// multiplication).
    pub fn mul_trunc(&mut self, ctx: &mut Ctx, x: &Masked, y: &Masked, pair: TruncPair) -> Result<Masked> {
        if x.n != y.n {
            return Err(MpcError::Invalid(format!("product of {} and {} elements", x.n, y.n)));
        }
        self.product_trunc(ctx, x, y, pair, crate::claims::Terms::Elementwise, &crate::mul::elementwise)
    }

    /// `⟨op(x, y) / 2^t⟩` for any bilinear `op` (elementwise, matrix product) with a verified
    /// truncation pair as the product's output mask.
    pub(crate) fn product_trunc(
        &mut self,
        ctx: &mut Ctx,
        x: &Masked,
        y: &Masked,
        pair: TruncPair,
        terms: crate::claims::Terms,
        op: &impl Fn(&[u64], &[u64]) -> Vec<u64>,
    ) -> Result<Masked> {
        let mat = self.prepare_product_masked(ctx, &x.r, &y.r, pair.rx, op)?;
        let p = self.product_online(ctx, x, y, mat, terms, op)?;
        self.shift_masked(&p, pair.rz, pair.t, pair.offset)
    }
}

/// The bits of a truncation pair's mask made from checked bit products (see [`TruncPair`]):
/// 32 where the shift leaves room for the low part below them (`t ≤ l − 32`), else all `l`.
fn mask_bits(l: usize, t: usize) -> usize {
    const HIGH_BITS: usize = 32;
    if l > HIGH_BITS && t <= l - HIGH_BITS { HIGH_BITS } else { l }
}

/// The weights of the `u` bits of `T` in `r_x` (`2^(l−u+j)`) and in `r_z = r_x ≫ t`
/// (`2^(l−u+j−t)`, 0 for a bit shifted out).
fn mask_weights(l: usize, u: usize, t: usize) -> (Vec<u64>, Vec<u64>) {
    let place = |j: usize| l - u + j;
    let wx = (0..u).map(|j| 1u64 << place(j)).collect();
    let wz = (0..u).map(|j| if place(j) >= t { 1u64 << (place(j) - t) } else { 0 }).collect();
    (wx, wz)
}

/// `count` words uniform in `[0, 2^bits)` from the seed shared with `peer` (zeros when
/// `bits = 0`).
fn low_words(ctx: &mut Ctx, peer: usize, count: usize, bits: usize) -> Result<Vec<u64>> {
    if bits == 0 {
        return Ok(vec![0; count]);
    }
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let mut raw = vec![0u8; 8 * count];
    ctx.pair_prg(peer, "trunc-pair/low")?.fill_bytes(&mut raw);
    Ok(raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])) & mask).collect())
}

/// `count` random bits from the seed shared with `peer`, packed as the PRG gives them.
fn pair_bits(ctx: &mut Ctx, peer: usize, count: usize) -> Result<Bits> {
    let mut raw = vec![0u8; count.div_ceil(8)];
    ctx.pair_prg(peer, "trunc-pair/bits")?.fill_bytes(&mut raw);
    Ok(Bits::from_bytes(raw, count))
}

/// Per row `i < rows`: `Σ_j w_j·bit(i·len + j)` over rows of `len` bits.
fn weighted_rows(w: &[u64], rows: usize, len: usize, bit: impl Fn(usize) -> u8) -> Vec<u64> {
    (0..rows)
        .map(|i| (0..len).fold(0u64, |s, j| s.wrapping_add(w[j].wrapping_mul(u64::from(bit(i * len + j))))))
        .collect()
}
