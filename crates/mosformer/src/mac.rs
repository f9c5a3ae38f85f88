//! Batched, deferrable MAC check (paper §3 F_MacCheck, Appendix H.2.4), made sound over rings.
//!
//! **The gap**: a MAC check `α·x = m` computed in Z_2^ℓ itself lets an error
//! `e = 2^{ℓ-1}` through with probability 1/2 (any even `α` kills it), and in Z_2^16 no check
//! reaches better than 2^-16.
//!
//! **The fix**, after SPDZ2k: MAC'd values, their MACs and the key live in a larger ring
//! `Z_2^{k+s}` (`k` the width of the values as they are used afterwards, `s` extra bits); only
//! the value mod 2^k is used afterwards, so errors in the top `s` bits are harmless. The
//! family's gates use `k = 64` (the value ring of the linear layers) and `s = 64`: Z_2^128
//! ([`crate::ops::MacRing`]). The check of a batch `(⟨x_i⟩, ⟨m_i⟩)`:
//! 1. mask: a fresh random `⟨r⟩` (F_rand) and `⟨m_r⟩ = ⟨α⟩·⟨r⟩` (semi-honest product; an
//!    error in it only makes the check fail);
//! 2. challenge: open a fresh random 128-bit `⟨κ⟩` (checked opening) and expand public
//!    coefficients `χ_i ∈ [0, 2^s)` from it with the PRG. `κ` is drawn after the values were
//!    fixed, and the component held by the honest pair is unknown to the adversary until opened.
//!    *Rushing*: the corrupted `P_c` learns `κ` from the component `P_{c−1}` sends it, so
//!    `P_{c−1}` must not open before every message of `P_c` that the batch depends on has
//!    reached an honest party. Its messages to `P_{c−1}` have (received in program order); one
//!    to `P_{c+1}` (the B2A bits of a DReLU, say) need not have, since reshares only flow to
//!    the previous party. So in step 1 each party also sends the next one a readiness message,
//!    and waits for the previous one's before opening: `P_{c+1}` sends it only after receiving
//!    everything `P_c` owed it. Same round as the reshare; 30 bytes per party;
//! 3. `⟨y⟩ = Σ χ_i ⟨x_i⟩ + ⟨r⟩`, `⟨μ⟩ = Σ χ_i ⟨m_i⟩ + ⟨m_r⟩` (local); open `y` (checked; `r` is
//!    uniform in Z_2^{k+s}, so `y` reveals nothing);
//! 4. `⟨δ⟩ = y·⟨α⟩ - ⟨μ⟩` (local) and open `δ` (checked); abort unless `δ = 0`.
//!
//! With errors `e_i` on the values and `f_i` on the MACs, `δ = α·Σχ_i e_i - (Σχ_i f_i + g)`.
//! If some `e_i ≠ 0 mod 2^k`, the adversary, who chose the errors before `χ` and does not know
//! `α`, makes `δ = 0` with probability at most `2^{-s + log2(s+1)}` (the batch MAC-check bound
//! of *SPDZ2k: Efficient MPC mod 2^k for Dishonest Majority*, Cramer et al., CRYPTO 2018):
//! about 2^-27 for s = 32, 2^-42 for s = 48, 2^-58 for s = 64.
//!
//! Opening `δ` when it is not 0 reveals a relation involving `α`; that only happens when the
//! run aborts, after which the key is never used again.
//!
//! Cost per batch, whatever its size: one reshare (with the readiness message) and three
//! checked openings of one or two elements (about 4 latency rounds, under 250 bytes per party), so deferring every check of
//! an encoder to one batch makes the MAC's online cost O(1) per layer instead of 8ℓ bits per
//! value.

use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::Z2k;
use veil_tensor::Tensor;

use crate::mul::cross_terms;
use crate::open::open_all;
use crate::prss::random;
use crate::reshare::{reshare_recv, reshare_send};
use crate::rss::{Rss, next, prev};

/// What each party sends the next one before the challenge ([`MacBatch::check`]).
const READY: &[u8] = b"veil/mosformer/mac-check/ready";

/// What a gate needs to MAC its outputs: `⟨1⟩` (its components weight each pair's terms, see
/// [`crate::keys`]), the MAC key `⟨α⟩`, and the batch each output and its MAC join for the
/// deferred check.
pub struct Macs<'a, M> {
    /// A random sharing of one.
    pub one: &'a Rss<M>,
    /// The MAC key.
    pub alpha: &'a Rss<M>,
    /// Outputs waiting for the check.
    pub batch: &'a mut MacBatch<M>,
}

/// Values with MACs waiting for one batched check.
#[derive(Clone, Debug)]
pub struct MacBatch<R> {
    values: Vec<Rss<R>>,
    macs: Vec<Rss<R>>,
    /// False in the semi-honest mode: gates then compute and reshare no MACs, and the check is
    /// a no-op.
    enabled: bool,
}

impl<R: Z2k> Default for MacBatch<R> {
    fn default() -> Self {
        MacBatch { values: Vec::new(), macs: Vec::new(), enabled: true }
    }
}

impl<R: Z2k> MacBatch<R> {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// The semi-honest mode's batch: gates skip their MACs, nothing is checked.
    pub fn semi_honest() -> Self {
        MacBatch { enabled: false, ..Self::default() }
    }

    /// The batch of a mode: [`MacBatch::new`] when malicious, [`MacBatch::semi_honest`] if not.
    pub fn for_security(security: crate::Security) -> Self {
        match security {
            crate::Security::Malicious => Self::new(),
            crate::Security::SemiHonest => Self::semi_honest(),
        }
    }

    /// Whether gates must compute MACs for this batch (false in the semi-honest mode).
    pub fn wants_macs(&self) -> bool {
        self.enabled
    }

    /// Adds `⟨x⟩` and its MAC `⟨α·x⟩` (same shape); ignored in the semi-honest mode.
    pub fn push(&mut self, x: Rss<R>, mac: Rss<R>) -> Result<()> {
        if !self.enabled {
            return Ok(());
        }
        if x.shape() != mac.shape() {
            return Err(MpcError::Invalid(format!(
                "MAC of shape {:?} for a value of shape {:?}",
                mac.shape(),
                x.shape()
            )));
        }
        self.values.push(x);
        self.macs.push(mac);
        Ok(())
    }

    /// Number of values waiting.
    pub fn len(&self) -> usize {
        self.values.iter().map(Rss::len).sum()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks every value against its MAC under `⟨α⟩` with `s` bits of challenge; aborts
    /// naming `what` if any value or MAC was changed (see the module doc for the bound).
    pub fn check(self, ctx: &mut Ctx, alpha: &Rss<R>, s: u32, what: &str) -> Result<()> {
        if !self.enabled {
            return Ok(());
        }
        if s == 0 || s >= R::BITS || alpha.len() != 1 {
            return Err(MpcError::Invalid(format!(
                "MAC check with s = {s} in Z_2^{} and a key of {} elements",
                R::BITS,
                alpha.len()
            )));
        }
        // 1. Mask and its MAC (a reshare to the previous party), and in the same round a
        //    readiness message to the next party.
        let r = random::<R>(ctx, &[1])?;
        let pending = reshare_send(ctx, cross_terms(alpha, &r)?)?;
        let b = ctx.party();
        ctx.net().send(next(b), READY.to_vec())?;
        let m_r = reshare_recv(ctx, pending)?;
        if ctx.recv_at_most(prev(b), READY.len())? != READY {
            return Err(MpcError::Malformed { from: prev(b), what: "MAC check readiness message".into() });
        }
        // 2. Challenge seed, drawn now (after every value in the batch was fixed, and after
        //    each party heard from both others).
        let mut g = crate::coin::public_prg(ctx)?;
        let low = R::from_u128((1u128 << s) - 1);
        // 3. Random linear combinations.
        let (mut y_first, mut y_second) = (r.first.data()[0], r.second.data()[0]);
        let (mut mu_first, mut mu_second) = (m_r.first.data()[0], m_r.second.data()[0]);
        for (x, m) in self.values.iter().zip(&self.macs) {
            for k in 0..x.len() {
                let chi = R::random(&mut g) & low;
                y_first += chi * x.first.data()[k];
                y_second += chi * x.second.data()[k];
                mu_first += chi * m.first.data()[k];
                mu_second += chi * m.second.data()[k];
            }
        }
        let scalar = |a: R, b: R| Rss::new(Tensor::new(vec![1], vec![a])?, Tensor::new(vec![1], vec![b])?);
        let y = open_all(ctx, &scalar(y_first, y_second)?)?.data()[0];
        // 4. δ = y·α - μ must be 0.
        let delta = alpha.scale(y).sub(&scalar(mu_first, mu_second)?)?;
        let delta = open_all(ctx, &delta)?;
        if delta.data()[0] != R::ZERO {
            return Err(MpcError::abort(format!("{what}: MAC check"), None));
        }
        Ok(())
    }
}
