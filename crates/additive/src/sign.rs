//! Comparisons on additive shares over `Z_2^64`: the sign bit of a secret, ReLU and row
//! maxima, exact on the whole ring.
//!
//! **Sign bit** (DReLU, `1{x ≥ 0}`), with material from the source ([`SignMaterial`]): a mask
//! `r` shared additively and bit by bit (XOR shares of `r mod 2^63` and of its top bit), six
//! AND triples on 63-bit words, and a daBit `t`.
//! 1. Open `c = x + r` (one round). Writing `c = c_h·2^63 + c_l` and `r = r_h·2^63 + r_l`,
//!    `MSB(x) = MSB(c − r) = c_h ⊕ r_h ⊕ [c_l < r_l]` (a borrow from the low bits flips it).
//! 2. `[c_l < r_l]` with `c_l` public: `e = c_l ⊕ r_l` (local), its prefix-OR from the top
//!    `f_i = ∨_{j ≥ i} e_j` by six steps `f ← f ∨ (f ≫ s)`, `s = 1, 2, …, 32`, each one AND
//!    of shared words (one round). `f ⊕ (f ≫ 1)` keeps the highest bit where `c_l` and `r_l`
//!    differ, and `c_l < r_l` exactly when `c_l` has a 0 there: the parity of
//!    `(f ⊕ (f ≫ 1)) ∧ ¬c_l`, local since `c_l` is public.
//! 3. `DReLU = 1 ⊕ MSB(x)` in XOR shares; open `u = DReLU ⊕ t` (one round, a byte per
//!    element) and take `DReLU = t + u·(1 − 2t)` in additive shares.
//!
//! ReLU is `x · DReLU` (one Beaver product), the maximum of two is `b + ReLU(a − b)`, and
//! a row's maximum is a tournament of those.
//!
//! **Security**: semi-honest, with a trusted source: `c` is uniform, the AND openings are
//! masked by the triples, `u` by `t`. With [`crate::InsecureDealer`] every party knows `r`,
//! so nothing is hidden.
//!
//! **Cost** per element and peer: 8 + 6·16 + 1 = 105 bytes and 8 rounds for DReLU; ReLU adds
//! 16 bytes and a round.

use veil_mpc::cost::Cost;
use veil_mpc::traits::{Multiply, NonLinear};
use veil_mpc::{Ctx, PartyId, Result};
use veil_ring::{Z2k, Z8, Z64};
use veil_tensor::Tensor;

use crate::dealer::{Correlations, LOW_63, PREFIX_STEPS, SignMaterial, TripleSource};
use crate::protocol::{Additive, Share, open_values};

/// Bytes one element's DReLU sends to each peer.
const DRELU_BYTES: u64 = 8 + (PREFIX_STEPS as u64) * 16 + 1;
/// Rounds of a DReLU.
const DRELU_ROUNDS: u64 = 2 + PREFIX_STEPS as u64;

/// Opens XOR-shared values (words, or bits in bytes): sends ours to every peer and XORs what
/// comes back (one round).
fn open_xor<R: Z2k>(ctx: &mut Ctx, peers: &[PartyId], values: Vec<R>) -> Result<Vec<R>> {
    for &p in peers {
        ctx.send_ring(p, &values)?;
    }
    let mut acc = values;
    for &p in peers {
        let theirs: Vec<R> = ctx.recv_ring(p, acc.len())?;
        acc.iter_mut().zip(theirs).for_each(|(a, t)| *a = *a ^ t);
    }
    Ok(acc)
}

/// XOR shares of `f ∧ g`, wordwise, with the AND triples of `step`.
fn and_words(
    ctx: &mut Ctx,
    peers: &[PartyId],
    mat: &SignMaterial,
    step: usize,
    f: &[u64],
    g: &[u64],
) -> Result<Vec<u64>> {
    let m = f.len();
    let at = |v: &[u64], k: usize| v[step * m + k];
    let mut opened: Vec<u64> = (0..m).map(|k| f[k] ^ at(&mat.and_a, k)).collect();
    opened.extend((0..m).map(|k| g[k] ^ at(&mat.and_b, k)));
    let de: Vec<u64> =
        open_xor(ctx, peers, opened.into_iter().map(Z64).collect())?.into_iter().map(|z| z.0).collect();
    let lead = ctx.party() == 0;
    Ok((0..m)
        .map(|k| {
            let (d, e) = (de[k], de[m + k]);
            let z = at(&mat.and_c, k) ^ (d & at(&mat.and_b, k)) ^ (e & at(&mat.and_a, k));
            if lead { z ^ (d & e) } else { z }
        })
        .collect())
}

impl<D: Correlations> Additive<D> {
    /// `⟨1{x ≥ 0}⟩` (additive shares of 0 or 1) for every element, in 8 rounds.
    pub fn drelu(&mut self, ctx: &mut Ctx, x: &Share<Z64>) -> Result<Share<Z64>> {
        let (peers, n) = self.group(ctx)?;
        let m = x.0.len();
        let lead = ctx.party() == 0;
        let mat = self.source.sign_material(ctx, n, m)?;
        let c = open_values(ctx, &peers, x.0.data().iter().zip(&mat.r).map(|(&a, &b)| a + b).collect())?;
        let mut f: Vec<u64> = (0..m).map(|k| mat.r_low[k] ^ if lead { c[k].0 & LOW_63 } else { 0 }).collect();
        for step in 0..PREFIX_STEPS {
            let g: Vec<u64> = f.iter().map(|v| v >> (1u32 << step)).collect();
            let both = and_words(ctx, &peers, &mat, step, &f, &g)?;
            for k in 0..m {
                f[k] ^= g[k] ^ both[k];
            }
        }
        let drelu: Vec<u8> = (0..m)
            .map(|k| {
                let top = f[k] ^ (f[k] >> 1);
                let borrow = u64::from((top & !c[k].0 & LOW_63).count_ones() & 1);
                let mut bit = borrow ^ mat.r_high[k] ^ mat.bit_xor[k];
                if lead {
                    bit ^= (c[k].0 >> 63) ^ 1;
                }
                (bit & 1) as u8
            })
            .collect();
        let u = open_bits(ctx, &peers, drelu)?;
        let out: Vec<Z64> = (0..m)
            .map(|k| {
                let t = mat.bit_arith[k];
                if u[k] == 0 {
                    t
                } else {
                    let one = if lead { Z64(1) } else { Z64(0) };
                    one - t
                }
            })
            .collect();
        Ok(Share(Tensor::new(x.0.shape().to_vec(), out)?))
    }

    /// Declared cost at one party of `m` DReLUs among `n` computing parties.
    pub fn drelu_cost(m: usize, n: usize) -> Cost {
        let peers = n.saturating_sub(1) as u64;
        Cost {
            bytes_sent: peers * DRELU_BYTES * m as u64,
            messages_sent: peers * DRELU_ROUNDS,
            rounds: DRELU_ROUNDS,
        }
    }

    /// Declared cost at one party of `m` ReLUs among `n` computing parties.
    pub fn relu_cost(m: usize, n: usize) -> Cost {
        let peers = n.saturating_sub(1) as u64;
        let d = Self::drelu_cost(m, n);
        Cost {
            bytes_sent: d.bytes_sent + peers * 16 * m as u64,
            messages_sent: d.messages_sent + peers,
            rounds: d.rounds + 1,
        }
    }
}

/// Opens XOR-shared bits, one byte each (one round).
fn open_bits(ctx: &mut Ctx, peers: &[PartyId], bits: Vec<u8>) -> Result<Vec<u8>> {
    let opened = open_xor(ctx, peers, bits.into_iter().map(Z8).collect())?;
    Ok(opened.into_iter().map(|b| b.0 & 1).collect())
}

impl<D: Correlations + TripleSource<Z64>> NonLinear<Z64> for Additive<D> {
    fn relu(&mut self, ctx: &mut Ctx, x: &Share<Z64>) -> Result<Share<Z64>> {
        let d = self.drelu(ctx, x)?;
        self.mul(ctx, x, &d)
    }

    fn max_rows(&mut self, ctx: &mut Ctx, x: &Share<Z64>, rows: usize, k: usize) -> Result<Share<Z64>> {
        if k == 0 || x.0.len() != rows * k {
            return Err(veil_mpc::MpcError::Invalid(format!(
                "maxima of {rows} rows of {k} over {} values",
                x.0.len()
            )));
        }
        let mut cur = x.0.clone().reshape(&[rows, k])?;
        let mut width = k;
        while width > 1 {
            let half = width / 2;
            let pick = |offset: usize| -> Vec<Option<usize>> {
                (0..rows).flat_map(|r| (0..half).map(move |j| Some(r * width + 2 * j + offset))).collect()
            };
            let a = cur.gather(&pick(0), &[rows, half], Z64(0))?;
            let b = cur.gather(&pick(1), &[rows, half], Z64(0))?;
            let diff = Share(a.sub(&b)?);
            let m = Share(b).0.add(&self.relu(ctx, &diff)?.0)?;
            cur = if width % 2 == 1 {
                let last = cur.slice(1, width - 1..width)?;
                Tensor::concat(&[&m, &last], 1)?
            } else {
                m
            };
            width = half + width % 2;
        }
        Ok(Share(cur.reshape(&[rows])?))
    }

    /// The sign bit is exact on any value of `Z_2^64`.
    fn comparisons_on_full_ring(&self) -> bool {
        true
    }

    /// Nothing is deferred: the family is semi-honest.
    fn check(&mut self, _ctx: &mut Ctx) -> Result<()> {
        Ok(())
    }
}
