//! Random correlated OT (COT), the one correlation every engine of this crate produces and
//! every flavour is made from.
//!
//! A batch of `n` random COTs between a sender with global key Δ and a receiver:
//!
//! ```text
//! sender:   Δ, v_1 … v_n            receiver:   w_1 … w_n
//! w_i = v_i ⊕ c_i·Δ,  c_i = lsb(w_i),  lsb(v_i) = 0,  lsb(Δ) = 1
//! ```
//!
//! The choice bit rides in the least significant bit of the receiver's block (Δ has that bit
//! set and the sender's block has it clear), so no separate bit vector is kept. Fixing one bit
//! of Δ leaves 127 secret bits. Both sides must ask for the same batch sizes in the same order.

use veil_mpc::{Ctx, PartyId, Result};

use crate::block::{Block, lsb, select};

/// The sender's side of a random-COT engine.
pub trait CotSender: Send {
    /// The receiving party.
    fn peer(&self) -> PartyId;
    /// The global key Δ (least significant bit set).
    fn delta(&self) -> Block;
    /// The next `n` random COTs: `v_1 … v_n`.
    fn send_random(&mut self, ctx: &mut Ctx, n: usize) -> Result<Vec<Block>>;
    /// Makes at least `n` COTs ahead (an offline phase), so that the next requests up to
    /// `n` send nothing. The receiver calls [`CotReceiver::prepare`] with the same `n`.
    fn prepare(&mut self, ctx: &mut Ctx, n: usize) -> Result<()>;
    /// COTs made ahead and not handed out yet.
    fn prepared(&self) -> usize;
    /// COTs handed out so far.
    fn consumed(&self) -> u64;
    /// COTs made by a request because not enough were made ahead.
    fn made_on_demand(&self) -> u64;
}

/// The receiver's side of a random-COT engine.
pub trait CotReceiver: Send {
    /// The sending party.
    fn peer(&self) -> PartyId;
    /// The next `n` random COTs: `w_1 … w_n`, the choice bits in their least significant bits.
    fn receive_random(&mut self, ctx: &mut Ctx, n: usize) -> Result<Vec<Block>>;
    /// Makes at least `n` COTs ahead; see [`CotSender::prepare`].
    fn prepare(&mut self, ctx: &mut Ctx, n: usize) -> Result<()>;
    /// COTs made ahead and not handed out yet.
    fn prepared(&self) -> usize;
    /// COTs handed out so far.
    fn consumed(&self) -> u64;
    /// COTs made by a request because not enough were made ahead.
    fn made_on_demand(&self) -> u64;
}

/// How many COTs an engine handed out and how many it had to make on demand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub(crate) consumed: u64,
    pub(crate) on_demand: u64,
}

/// Hands out `n` blocks from `buffer` (made ahead), making what is missing with `make`,
/// which returns a batch of whatever size it produces.
pub(crate) fn take(
    buffer: &mut Vec<Block>,
    n: usize,
    mut make: impl FnMut(usize) -> Result<Vec<Block>>,
) -> Result<Vec<Block>> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        if buffer.is_empty() {
            *buffer = make(n - out.len())?;
        }
        let start = buffer.len().saturating_sub(n - out.len());
        out.extend(buffer.drain(start..));
    }
    Ok(out)
}

/// Grows `buffer` to at least `n` blocks with `make`.
pub(crate) fn fill(
    buffer: &mut Vec<Block>,
    n: usize,
    mut make: impl FnMut(usize) -> Result<Vec<Block>>,
) -> Result<()> {
    while buffer.len() < n {
        let mut more = make(n - buffer.len())?;
        more.append(buffer);
        *buffer = more;
    }
    Ok(())
}

/// Puts a sender's blocks in the normal form `lsb(v) = 0` by swapping the two messages of
/// each OT where needed (`v ↦ v ⊕ Δ`); the receiver's blocks are unchanged and its choice bits
/// become `lsb(w)`.
pub fn normalize(delta: Block, v: &mut [Block]) {
    for x in v {
        *x ^= select(lsb(*x), delta);
    }
}

/// The choice bits of a receiver's blocks.
pub fn choices(w: &[Block]) -> Vec<bool> {
    w.iter().map(|&x| lsb(x)).collect()
}
