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
        if t == 0 || t >= self.l() {
            return Err(MpcError::Invalid(format!("truncation by {t} bits in Z_2^{}", self.l())));
        }
        let m = x.m.iter().map(|&v| self.reduce(v) >> t).collect();
        Ok(Masked { m, r, n: x.n })
    }
}

/// A truncation pair made by the servers and checked (paper Fig. 20, with its bit indices
/// corrected): the input mask `r_x = Σ_j 2^j (b1_j ⊕ b2_j)` from bits P0 shares with
/// P1 (`b1`) and with P2 (`b2`), and `r_z = r_x ≫ t` from the same bits. The XORs are two
/// inner products (`b1 ⊕ b2 = b1 + b2 − 2·b1·b2`), verified with every other product, so a
/// corrupted P0 cannot make `r_z` differ from `r_x ≫ t`. Both come out as additive shares
/// between P1 and P2 (P0 knows both), ready to be the output mask of the product that makes
/// the value to truncate, whose truncation is then local.
#[derive(Clone, Debug)]
pub struct TruncPair {
    /// Additive shares of `r_x`.
    pub rx: Pair,
    /// Additive shares of `r_x ≫ t`.
    pub rz: Pair,
    /// The shift.
    pub t: u32,
}

impl Aegis {
    /// Makes `n` verified truncation pairs for a shift by `t` (offline: two inner products of
    /// length `l` and `l − t` per pair, `6l` bits).
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
            // b1 (P0, P1) and b2 (P0, P2), one bit per position, LSB first.
            let b1 =
                if me != 2 { pair_bits(ctx, if me == 0 { 1 } else { 0 }, n * l)? } else { Bits::default() };
            let b2 =
                if me != 1 { pair_bits(ctx, if me == 0 { 2 } else { 0 }, n * l)? } else { Bits::default() };
            // r_x: weights 2^j (j < l); r_z: weights 2^{j−t} (j ≥ t).
            let wx: Vec<u64> = (0..l).map(|j| 1u64 << j).collect();
            let wz: Vec<u64> = (0..l).map(|j| if j >= t { 1u64 << (j - t) } else { 0 }).collect();
            let double = |w: &[u64]| -> Vec<u64> { w.iter().map(|v| v.wrapping_mul(2)).collect() };
            let (wx2, wz2) = (double(&wx), double(&wz));
            let mut outputs = Vec::with_capacity(2);
            for (w, w2) in [(&wx, &wx2), (&wz, &wz2)] {
                // P0's `Σ_j 2w_j·b1_j·b2_j`, then the product's mask and `[Γ]`.
                let prod = (me == 0).then(|| weighted_rows(w2, n, l, |e| b1.get(e) & b2.get(e)));
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
                    let s = weighted_rows(w, n, l, |e| b.get(e));
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
                        let plain = weighted_rows(w, n, l, |e| b1.get(e) ^ b2.get(e));
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
            let (rz_product, rz) =
                outputs.pop().ok_or_else(|| MpcError::Invalid("truncation pair".into()))?;
            let (rx_product, rx) =
                outputs.pop().ok_or_else(|| MpcError::Invalid("truncation pair".into()))?;
            // Both inner products multiply the same bits b1_j·b2_j: verified as one record, kept
            // as the bits (2 bits per bit product at P0, 1 at P1 and P2, instead of 48 bytes).
            self.recorded.push(Recorded {
                x: Arc::default(),
                y: Arc::default(),
                z: Arc::new(rx_product),
                terms: Terms::Inner { len: l },
                twin: Some((Arc::default(), Arc::new(rz_product))),
                bits: Some(BitProducts { len: l, w: wx2, w2: wz2, b1, b2 }),
            });
            Ok(TruncPair { rx, rz, t: t as u32 })
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
        self.trunc_online(&p, pair.rz, pair.t)
    }
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
