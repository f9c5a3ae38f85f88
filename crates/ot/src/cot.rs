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

/// The COTs an engine made and has not handed out, with its counts. One mechanism for every
/// engine: requests are served from the end of `ready`; when it runs dry, the engine's
/// [`Maker::make`] appends a batch (made on demand).
#[derive(Debug, Default)]
pub(crate) struct Stock {
    pub(crate) ready: Vec<Block>,
    consumed: u64,
    on_demand: u64,
}

/// An engine that makes COTs in batches into its [`Stock`].
pub(crate) trait Maker {
    /// The engine's stock.
    fn stock(&mut self) -> &mut Stock;
    /// Appends one batch of COTs (of about `want`, or the engine's own batch size) to `ready`.
    fn make(&mut self, ctx: &mut Ctx, ready: &mut Vec<Block>, want: usize) -> Result<()>;
    /// The most one batch may add beyond what was asked (room reserved ahead for it).
    fn overshoot(&self) -> usize {
        0
    }
}

impl Stock {
    /// COTs ready to hand out.
    pub(crate) fn len(&self) -> usize {
        self.ready.len()
    }

    /// COTs handed out so far.
    pub(crate) fn consumed(&self) -> u64 {
        self.consumed
    }

    /// COTs made because a request found too few ready.
    pub(crate) fn on_demand(&self) -> u64 {
        self.on_demand
    }
}

/// Hands out `n` COTs of `engine`, making batches when none are ready.
pub(crate) fn draw<M: Maker>(engine: &mut M, ctx: &mut Ctx, n: usize) -> Result<Vec<Block>> {
    let mut stock = std::mem::take(engine.stock());
    let mut out = Vec::with_capacity(n);
    let mut result = Ok(());
    while out.len() < n {
        if stock.ready.is_empty() {
            result = engine.make(ctx, &mut stock.ready, n - out.len());
            stock.on_demand += stock.ready.len() as u64;
            if result.is_err() || stock.ready.is_empty() {
                break;
            }
        }
        let start = stock.ready.len().saturating_sub(n - out.len());
        out.extend_from_slice(&stock.ready[start..]);
        stock.ready.truncate(start);
    }
    stock.consumed += out.len() as u64;
    *engine.stock() = stock;
    result.map(|()| out)
}

/// Makes batches until at least `n` COTs of `engine` are ready.
pub(crate) fn prepare<M: Maker>(engine: &mut M, ctx: &mut Ctx, n: usize) -> Result<()> {
    let mut stock = std::mem::take(engine.stock());
    // Room for all of it at once: growing by doubling would copy and fault in pages again.
    stock.ready.reserve(n.saturating_sub(stock.ready.len()) + engine.overshoot());
    let mut result = Ok(());
    while stock.ready.len() < n && result.is_ok() {
        let before = stock.ready.len();
        result = engine.make(ctx, &mut stock.ready, n - before);
        if stock.ready.len() == before {
            break;
        }
    }
    *engine.stock() = stock;
    result
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
