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

use crate::claims::BitProducts;
use crate::mul::{mask_sum, offline};
use crate::share::{Aegis, Masked, Pair};

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
        self.dealing_pair = true;
        let pair = self.make_trunc_pair(ctx, me, n, l, t);
        self.dealing_pair = false;
        pair
    }

    /// The body of [`Aegis::prepare_trunc_pair`].
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
            let bits = |a: &Aegis, ctx: &mut Ctx, peer: usize| -> Result<Vec<u64>> {
                Ok(a.pair_random(ctx, peer, "trunc-pair/bits", n * l)?.into_iter().map(|v| v & 1).collect())
            };
            let b1 = if me != 2 { bits(self, ctx, if me == 0 { 1 } else { 0 })? } else { vec![] };
            let b2 = if me != 1 { bits(self, ctx, if me == 0 { 2 } else { 0 })? } else { vec![] };
            let zeros = |k: usize| vec![0u64; k];
            let neg = |v: &[u64]| v.iter().map(|x| x.wrapping_neg()).collect::<Vec<_>>();
            let online = |v: Vec<u64>| if me == 0 { vec![] } else { v };
            // ⟨b1⟩ = (m 0, [r]_1 −b1, [r]_2 0); ⟨b2⟩ = (m 0, [r]_1 0, [r]_2 −b2).
            let sh1 = Masked {
                m: online(zeros(n * l)),
                r: Pair {
                    one: if me == 2 { vec![] } else { neg(&b1) },
                    two: if me == 1 { vec![] } else { zeros(n * l) },
                },
                n: n * l,
            };
            let sh2 = Masked {
                m: online(zeros(n * l)),
                r: Pair {
                    one: if me == 2 { vec![] } else { zeros(n * l) },
                    two: if me == 1 { vec![] } else { neg(&b2) },
                },
                n: n * l,
            };
            // r_x: weights 2^j (j < l); r_z: weights 2^{j−t} (j ≥ t).
            let wx: Vec<u64> = (0..n * l).map(|e| 1u64 << (e % l)).collect();
            let wz: Vec<u64> = (0..n * l).map(|e| if e % l >= t { 1u64 << (e % l - t) } else { 0 }).collect();
            let compose = |a: &mut Aegis, ctx: &mut Ctx, w: &[u64]| -> Result<Masked> {
                let sum = a.add(&sh1, &sh2)?;
                let linear = sum_rows(&mul_public(a, &sum, w), n, l);
                let twice: Vec<u64> = w.iter().map(|v| v.wrapping_mul(2)).collect();
                let prod = a.inner(ctx, &mul_public(a, &sh1, &twice), &sh2, n, l)?;
                a.sub(&linear, &prod)
            };
            let rx = compose(self, ctx, &wx)?;
            let rz = compose(self, ctx, &wz)?;
            // Both inner products multiply the same bits b1_j·b2_j: verify them as one, kept as
            // the bits (about 2 bytes per bit product instead of 48 per party).
            let narrow = |v: &[u64]| v.iter().map(|&b| b as u8).collect();
            let double = |w: &[u64]| w[..l].iter().map(|v| v.wrapping_mul(2)).collect();
            let bits =
                BitProducts { len: l, w: double(&wx), w2: double(&wz), b1: narrow(&b1), b2: narrow(&b2) };
            self.merge_last_twins(Some(bits))?;
            // Additive shares between P1 and P2: [v]_1 = m − [r]_1, [v]_2 = −[r]_2; P0 knows v.
            let plain = |w: &[u64]| -> Vec<u64> {
                (0..n)
                    .map(|i| {
                        (0..l).fold(0u64, |s, j| {
                            let e = i * l + j;
                            s.wrapping_add(w[e].wrapping_mul(b1[e] ^ b2[e]))
                        })
                    })
                    .collect()
            };
            let additive = |a: &Aegis, v: &Masked, w: &[u64]| -> Pair {
                match me {
                    0 => {
                        let two = neg(&v.r.two);
                        let one =
                            plain(w).iter().zip(&two).map(|(p, q)| a.reduce(p.wrapping_sub(*q))).collect();
                        Pair { one, two: two.into_iter().map(|x| a.reduce(x)).collect() }
                    }
                    1 => Pair {
                        one: v.m.iter().zip(&v.r.one).map(|(m, r)| a.reduce(m.wrapping_sub(*r))).collect(),
                        two: vec![],
                    },
                    _ => Pair { one: vec![], two: neg(&v.r.two).into_iter().map(|x| a.reduce(x)).collect() },
                }
            };
            Ok(TruncPair { rx: additive(self, &rx, &wx), rz: additive(self, &rz, &wz), t: t as u32 })
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

fn mul_public(a: &Aegis, x: &Masked, w: &[u64]) -> Masked {
    let s = |v: &[u64]| v.iter().zip(w).map(|(p, q)| a.reduce(p.wrapping_mul(*q))).collect();
    Masked { m: s(&x.m), r: Pair { one: s(&x.r.one), two: s(&x.r.two) }, n: x.n }
}

fn sum_rows(x: &Masked, rows: usize, len: usize) -> Masked {
    let s = |v: &[u64]| -> Vec<u64> {
        if v.is_empty() {
            return vec![];
        }
        (0..rows).map(|i| v[i * len..(i + 1) * len].iter().fold(0u64, |a, b| a.wrapping_add(*b))).collect()
    };
    Masked { m: s(&x.m), r: Pair { one: s(&x.r.one), two: s(&x.r.two) }, n: rows }
}
