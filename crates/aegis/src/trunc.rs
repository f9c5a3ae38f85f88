//! Truncation by `2^t` with no online communication (paper Fig. 21, with the fix of notes
//! §3.4.1 / §7.18): the input mask `r_x` stays uniform (from seeds), P0 deals a *fresh* sharing
//! of `r_z = r_x ≫ t` (`l` bits offline), and P1 and P2 set `m_z = m_x ≫ t` locally. The paper's
//! version conditions `r_x` on P1's share, which leaks bits of the mask to P1.
//!
//! Both shifts are logical on `l`-bit values, so `z = m_z − r_z` is `⌊x/2^t⌋` or `⌊x/2^t⌋ + 1`
//! (as a signed value) unless adding the mask wrapped around, which happens with probability
//! about `|x|/2^l`. The semi-honest protocol; the paper's malicious version (bit-composed
//! masks checked by inner-product verification) comes with the verification.

use veil_mpc::{Ctx, MpcError, Result};

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
