//! Π_LUT: lookup of a public table at a secret index (paper Algorithm 5), with
//! MAC'd output.
//!
//! **Offline** ([`setup`]): each server in turn deals, per lookup, a point `r^j < 2^{ℓ_t}` with
//! VDPF keys over the table's domain (outputs in the MAC ring `M`) and `α`-shares over the
//! working ring `R`; its two evaluators verify them (`crate::deal`).
//!
//! **Online** ([`lookup`]), for `x ∈ [0, 2^{ℓ_t})` (the caller guarantees the range):
//! 1. the masked sharing of each `r^j`: components `([[r]]_0, [[r]]_1, 0)` at indices
//!    `(j, j+1, j+2)`, so `P_j` holds `([[r]]_0, [[r]]_1)`, `P_{j+1}` `([[r]]_1, 0)`, `P_{j+2}`
//!    `(0, [[r]]_0)` — no communication;
//! 2. `x̂_j = x - r^j`, each component reduced mod 2^{ℓ_t} (opening over Z_2^ℓ
//!    would leak the high bits and the wrap), revealed to `P_{j+1}` and `P_{j+2}`: six checked
//!    reveals in one round, each component packed in `ℓ_t` bits;
//! 3. each evaluator of dealer `j` computes `w = Σ_k V[k]·T[(k + x̂_j) mod 2^{ℓ_t}]` (the one-hot
//!    vector rotated from `r^j` to `x`), a 2-of-2 share of `T[x]`;
//! 4. weighting by the component of `⟨1⟩` (and of `⟨α⟩`) that the pair knows, index `j + 2`:
//!    `[[res]]_b = w_0^{b+1}·1_b + w_1^{b+2}·1_{b+1}` and the same with `α` for the MAC, so that
//!    `Σ_b [[res]]_b = T[x]·Σ_j 1_j = T[x]` and the MACs sum to `α·T[x]`;
//! 5. one reshare of `[res ‖ m]`, and `(⟨res⟩, ⟨m⟩)` joins a [`MacBatch`].
//!
//! An evaluator that adds an error to its `w` changes `res` by `e·1_{j+2}` and `m` by
//! `e·α_{j+2}`; it knows both components but not `α`, and with `⟨1⟩` random (not the trivial
//! `(1, 0, 0)`, see [`crate::keys`]) the MAC check catches it. A dealer's bad keys are caught
//! offline. Output and MAC live in `M` (e.g. Z_2^64 for a Z_2^32 working ring) so the check is
//! sound over rings ([`crate::mac`]); take the result mod 2^ℓ afterwards.
//!
//! Cost per lookup and party: `2·ℓ_t` bits (two packed reveal components) + `2·B_M` (reshare of
//! the value and its MAC), plus 64 bytes of digests per batch; 2 latency rounds. The MAC check is
//! batched separately. (The paper: 14ℓ bits, 56 B at ℓ = 32, with an undeferred MAC check.)

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Z2k;
use veil_tensor::Tensor;

use crate::deal::{Dealt, PointKeys, deal_unchecked, finish_one_hot_checks};
use crate::mac::{MacBatch, Macs};
use crate::open::reveal_batch_packed;
use crate::reshare::reshare;
use crate::rss::{Rss, next, prev};
use crate::shape::{Shape, Word};
use veil_mpc::mode::Security;

/// One server's verified material for `count` lookups into tables of `2^{ℓ_t}` entries.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "R: Word, M: Word")]
pub struct LutKeys<R, M> {
    ell_t: u32,
    count: usize,
    /// As dealer: the shares of its own points (given to its role-0 and role-1 evaluators).
    own: (Vec<R>, Vec<R>),
    /// As role-0 evaluator of dealer `b + 1`.
    e0: PointKeys<Vec<M>, R>,
    /// As role-1 evaluator of dealer `b + 2`.
    e1: PointKeys<Vec<M>, R>,
}

impl<R: Z2k, M: Z2k> LutKeys<R, M> {
    /// Zero material of the real shapes: the layout real material must have (stored
    /// material is checked against it).
    pub(crate) fn placeholder(ell_t: u32, count: usize) -> Self {
        LutKeys {
            ell_t,
            count,
            own: (vec![R::ZERO; count], vec![R::ZERO; count]),
            e0: PointKeys::placeholder(0, ell_t, count, vec![M::ZERO; 1 << ell_t]),
            e1: PointKeys::placeholder(1, ell_t, count, vec![M::ZERO; 1 << ell_t]),
        }
    }
}

impl<R, M: Shape> Shape for LutKeys<R, M> {
    fn shape(&self, out: &mut Vec<usize>) {
        out.extend([self.ell_t as usize, self.count, self.own.0.len(), self.own.1.len()]);
        self.e0.shape(out);
        self.e1.shape(out);
    }
}

/// Pads a table to `2^{ℓ_t}` entries with its last value (truncation errors can
/// land just past the end).
pub fn pad_table<M: Copy>(values: &[M], ell_t: u32) -> Result<Vec<M>> {
    let size = 1usize << ell_t;
    let last = *values.last().ok_or_else(|| MpcError::Invalid("empty table".into()))?;
    if values.len() > size {
        return Err(MpcError::Invalid(format!("a table of {} entries does not fit 2^{ell_t}", values.len())));
    }
    let mut t = values.to_vec();
    t.resize(size, last);
    Ok(t)
}

/// Deals and verifies the keys of `count` lookups (each server deals once; 6 rounds).
pub fn setup<R: Z2k, M: Z2k>(ctx: &mut Ctx, ell_t: u32, count: usize) -> Result<LutKeys<R, M>> {
    setup_with(ctx, ell_t, count, Security::Malicious)
}

/// [`setup`] in a given mode (semi-honest: keys not verified).
pub fn setup_with<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    ell_t: u32,
    count: usize,
    security: Security,
) -> Result<LutKeys<R, M>> {
    crate::prss::check_server(ctx)?;
    let b = ctx.party();
    let (mut own, mut e0, mut e1) = (None, None, None);
    // Each server's own dealing first, the checks after all three (`deal_unchecked`): the
    // servers generate and expand keys at the same time.
    let mut checks = Vec::with_capacity(2);
    for dealer in [b, next(b), prev(b)] {
        let (dealt, check) =
            deal_unchecked::<M, R, Vec<M>>(ctx, dealer, ell_t, count, security, &<[M]>::to_vec)?;
        checks.extend(check);
        match dealt {
            Dealt::Dealer { alpha0, alpha1 } => own = Some((alpha0, alpha1)),
            Dealt::Evaluator(k) if dealer == next(b) => e0 = Some(k),
            Dealt::Evaluator(k) => e1 = Some(k),
        }
    }
    finish_one_hot_checks(ctx, &checks, "LUT setup")?;
    match (own, e0, e1) {
        (Some(own), Some(e0), Some(e1)) => Ok(LutKeys { ell_t, count, own, e0, e1 }),
        _ => Err(MpcError::Invalid("LUT setup did not give every role".into())),
    }
}

fn reduce_mod<R: Z2k>(t: &Tensor<R>, ell_t: u32) -> Tensor<R> {
    let mask = R::from_u128((1u128 << ell_t) - 1);
    t.map(|&v| v & mask)
}

/// Steps 1-4 at this party: the additive terms `([[res]]_b, [[m]]_b)` of `T[x]` and `α·T[x]`.
pub fn lookup_terms<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: &LutKeys<R, M>,
    x: &Rss<R>,
    table: &[M],
    one: &Rss<M>,
    alpha: &Rss<M>,
) -> Result<(Tensor<M>, Tensor<M>)> {
    let n = x.len();
    let size = 1usize << keys.ell_t;
    if n != keys.count || table.len() != size || one.len() != 1 || alpha.len() != 1 {
        return Err(MpcError::Invalid(format!(
            "lookup of {n} values with keys for {}, a table of {} entries for 2^{}",
            keys.count,
            table.len(),
            keys.ell_t
        )));
    }
    let b = ctx.party();
    let shape = x.shape().to_vec();
    let t = |v: &[R]| Tensor::new(shape.clone(), v.to_vec());
    let zero = Tensor::<R>::zeros(&shape);
    // Masked sharings of r^b (ours), r^{b+1} (we are its role-0 evaluator), r^{b+2} (role 1).
    let r_own = Rss::new(t(&keys.own.0)?, t(&keys.own.1)?)?;
    let r_next = Rss::new(zero.clone(), t(&keys.e0.alpha)?)?;
    let r_prev = Rss::new(t(&keys.e1.alpha)?, zero)?;
    let mut hats = Vec::with_capacity(3);
    for j in 0..3 {
        let r = if j == b {
            &r_own
        } else if j == next(b) {
            &r_next
        } else {
            &r_prev
        };
        let h = x.sub(r)?;
        hats.push(Rss::new(reduce_mod(&h.first, keys.ell_t), reduce_mod(&h.second, keys.ell_t))?);
    }
    let items: Vec<(&Rss<R>, usize)> =
        (0..3).flat_map(|j| [(&hats[j], next(j)), (&hats[j], prev(j))]).collect();
    let opened = reveal_batch_packed(ctx, &items, keys.ell_t)?;
    // Item 2j and 2j+1 reveal x̂_j; the two addressed to us are those of our two dealers.
    let (mut x_next, mut x_prev) = (None, None);
    for (idx, v) in opened.into_iter().enumerate() {
        match v {
            Some(v) if idx / 2 == next(b) => x_next = Some(reduce_mod(&v, keys.ell_t)),
            Some(v) => x_prev = Some(reduce_mod(&v, keys.ell_t)),
            None => {}
        }
    }
    let (Some(x_next), Some(x_prev)) = (x_next, x_prev) else {
        return Err(MpcError::Invalid("LUT: a masked index was not revealed to this party".into()));
    };
    let mask = size - 1;
    let inner = |tables: &[Vec<M>], hat: &Tensor<R>| -> Vec<M> {
        (0..n)
            .map(|i| {
                let shift = hat.data()[i].to_u128() as usize;
                tables[i].iter().enumerate().map(|(k, &v)| v * table[(k + shift) & mask]).sum()
            })
            .collect()
    };
    let w0 = inner(&keys.e0.tables, &x_next);
    let w1 = inner(&keys.e1.tables, &x_prev);
    let (one0, one1) = (one.first.data()[0], one.second.data()[0]);
    let (al0, al1) = (alpha.first.data()[0], alpha.second.data()[0]);
    let res: Vec<M> = (0..n).map(|i| w0[i] * one0 + w1[i] * one1).collect();
    let mac: Vec<M> = (0..n).map(|i| w0[i] * al0 + w1[i] * al1).collect();
    Ok((Tensor::new(shape.clone(), res)?, Tensor::new(shape, mac)?))
}

/// Step 5: reshares the terms and queues `(⟨res⟩, ⟨m⟩)` for the MAC check; returns `⟨res⟩`.
pub fn lookup_finish<M: Z2k>(
    ctx: &mut Ctx,
    res: Tensor<M>,
    mac: Tensor<M>,
    batch: &mut MacBatch<M>,
) -> Result<Rss<M>> {
    let shape = res.shape().to_vec();
    let n = res.len();
    if !batch.wants_macs() {
        return reshare(ctx, res);
    }
    let both = Tensor::concat(&[&res.reshape(&[n])?, &mac.reshape(&[n])?], 0)?;
    let shared = reshare(ctx, both)?;
    let part = |t: &Tensor<M>, lo: usize| Tensor::new(shape.clone(), t.data()[lo..lo + n].to_vec());
    let res = Rss::new(part(&shared.first, 0)?, part(&shared.second, 0)?)?;
    let mac = Rss::new(part(&shared.first, n)?, part(&shared.second, n)?)?;
    batch.push(res.clone(), mac)?;
    Ok(res)
}

/// `⟨T[x]⟩` in the MAC ring, its MAC queued in `macs.batch`; consumes the keys (one use only).
pub fn lookup<R: Z2k, M: Z2k>(
    ctx: &mut Ctx,
    keys: LutKeys<R, M>,
    x: &Rss<R>,
    table: &[M],
    macs: &mut Macs<'_, M>,
) -> Result<Rss<M>> {
    let (res, mac) = lookup_terms(ctx, &keys, x, table, macs.one, macs.alpha)?;
    lookup_finish(ctx, res, mac, macs.batch)
}
