//! Ferret silent OT (Yang, Weng, Lan, Zhang, Wang, "Ferret: Fast Extension for Correlated OT
//! with Small Communication", CCS 2020): random COTs from primal LPN with regular noise,
//! bootstrapping each iteration from the previous one's output.
//!
//! One iteration with parameters `(n, k, t, h)` and `k + t·h` COTs in hand:
//!
//! ```text
//! x  = the first k COTs (the LPN secret; choice vector u, sender blocks v_x, receiver w_x)
//! e  = regular multi-point COT from the other t·h COTs (one Half-Tree per block of 2^h)
//! sender:   v   = A·v_x ⊕ s                 receiver: w = A·w_x ⊕ (s ⊕ e·Δ)
//!           so  w = v ⊕ (A·u ⊕ e)·Δ        (choice vector: an LPN sample, pseudorandom)
//! ```
//!
//! The first `k + t·h` outputs are kept for the next iteration, the rest handed out. Setup
//! runs KOS OT extension (after 128 base OTs) for the setup iteration's `k + t·h` COTs; that
//! iteration's output feeds the main one. Per main iteration the sender sends `t·(h − 1)`
//! blocks, one message: 0.20 bits per COT with [`FerretParams::SECURE`] and nothing back.
//!
//! **Security**: semi-honest (a malicious sender could learn whether the punctured positions lie in a set it picks, the selective-failure attack that Ferret's consistency check closes, which is not implemented); the LPN
//! parameters are Ferret's for 128-bit security ([`params`]).

pub mod params;

mod huge;
mod lpn;
mod spcot;

use veil_crypto::Hasher;
use veil_mpc::{Ctx, MpcError, PartyId, Result};

use self::lpn::LpnMatrix;
pub use self::params::{FerretParams, LpnParams};
use crate::block::Block;
use crate::cot::{self, CotReceiver, CotSender, Maker, Stock, normalize};
use crate::extension::{Check, ExtensionReceiver, ExtensionSender};
use crate::io;

fn lpn_matrix(ctx: &Ctx, sender: PartyId, receiver: PartyId, p: &LpnParams) -> LpnMatrix {
    let mut h = Hasher::new("veil/ot/ferret/lpn-matrix");
    h.update(&ctx.session().0);
    h.update_u64(sender as u64).update_u64(receiver as u64);
    h.update_u64(p.n as u64).update_u64(p.k as u64);
    let mut key = [0u8; 16];
    key.copy_from_slice(&h.finalize().0[..16]);
    LpnMatrix::new(key, p.k)
}

fn check_params(params: &FerretParams) -> Result<()> {
    if !params.is_valid() {
        return Err(MpcError::Invalid(format!("Ferret parameters do not chain: {params:?}")));
    }
    Ok(())
}

/// An engine's memory, kept across iterations so that no iteration faults in fresh pages:
/// the COTs the next iteration consumes and the iteration's work area (the outputs ready to
/// hand out are the engine's [`Stock`]).
#[derive(Default)]
struct Buffers {
    reserve: Vec<Block>,
    work: Vec<Block>,
    secret: huge::HugeBlocks,
}

impl Buffers {
    /// After an iteration filled `work`: its last `consumed` blocks feed the next iteration,
    /// the others join `ready`.
    fn settle(&mut self, consumed: usize, ready: &mut Vec<Block>) {
        let keep = self.work.len() - consumed;
        self.reserve.clear();
        self.reserve.extend_from_slice(&self.work[keep..]);
        // Copied, not swapped: both buffers keep their pages (a swap would leave the work area
        // too small for the next iteration, and growing it faults in fresh pages each time).
        ready.extend_from_slice(&self.work[..keep]);
        self.work.clear();
    }
}

/// The sender's side of a Ferret engine.
pub struct FerretSender {
    peer: PartyId,
    delta: Block,
    params: FerretParams,
    buffers: Buffers,
    main: LpnMatrix,
    stock: Stock,
}

impl std::fmt::Debug for FerretSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FerretSender")
            .field("peer", &self.peer)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl FerretSender {
    /// Bootstraps from base OT and KOS with `peer`, then runs the setup iteration.
    pub fn setup(ctx: &mut Ctx, peer: PartyId, params: FerretParams) -> Result<Self> {
        check_params(&params)?;
        let mut ext = ExtensionSender::setup(ctx, peer, Check::Kos)?;
        let base = ext.send_random(ctx, params.setup.consumed())?;
        let me = ctx.party();
        let setup = lpn_matrix(ctx, me, peer, &params.setup);
        let main = lpn_matrix(ctx, me, peer, &params.main);
        let mut engine = FerretSender {
            peer,
            delta: ext.delta(),
            params,
            buffers: Buffers::default(),
            main,
            stock: Stock::default(),
        };
        engine.buffers.reserve = base;
        let mut ready = Vec::new();
        engine.iterate(ctx, params.setup, &setup, &mut ready)?;
        engine.stock.ready = ready;
        Ok(engine)
    }

    /// One iteration from the reserve; its outputs join the ready ones.
    fn iterate(
        &mut self,
        ctx: &mut Ctx,
        p: LpnParams,
        matrix: &LpnMatrix,
        ready: &mut Vec<Block>,
    ) -> Result<()> {
        let b = &mut self.buffers;
        let (x, trees) = b.reserve.split_at(p.k);
        spcot::send(ctx, self.peer, &p, self.delta, trees, &mut b.work)?;
        matrix.encode(b.secret.load(x), &mut b.work);
        normalize(self.delta, &mut b.work);
        b.settle(self.params.main.consumed(), ready);
        Ok(())
    }
}

impl Maker for FerretSender {
    fn stock(&mut self) -> &mut Stock {
        &mut self.stock
    }

    /// One main iteration (its whole output, whatever was asked).
    fn make(&mut self, ctx: &mut Ctx, ready: &mut Vec<Block>, _want: usize) -> Result<()> {
        let matrix = self.main.clone();
        self.iterate(ctx, self.params.main, &matrix, ready)
    }

    fn overshoot(&self) -> usize {
        self.params.main.n
    }
}

impl CotSender for FerretSender {
    fn peer(&self) -> PartyId {
        self.peer
    }

    fn delta(&self) -> Block {
        self.delta
    }

    fn send_random(&mut self, ctx: &mut Ctx, n: usize) -> Result<Vec<Block>> {
        cot::draw(self, ctx, n)
    }

    fn prepare(&mut self, ctx: &mut Ctx, n: usize) -> Result<()> {
        cot::prepare(self, ctx, n)
    }

    fn prepared(&self) -> usize {
        self.stock.len()
    }

    fn consumed(&self) -> u64 {
        self.stock.consumed()
    }

    fn made_on_demand(&self) -> u64 {
        self.stock.on_demand()
    }
}

/// The receiver's side of a Ferret engine.
pub struct FerretReceiver {
    peer: PartyId,
    params: FerretParams,
    buffers: Buffers,
    main: LpnMatrix,
    stock: Stock,
}

impl std::fmt::Debug for FerretReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FerretReceiver")
            .field("peer", &self.peer)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl FerretReceiver {
    /// Bootstraps from base OT and KOS with `peer`, then runs the setup iteration.
    pub fn setup(ctx: &mut Ctx, peer: PartyId, params: FerretParams) -> Result<Self> {
        check_params(&params)?;
        io::check_peer(ctx, peer)?;
        let mut ext = ExtensionReceiver::setup(ctx, peer, Check::Kos)?;
        let base = ext.receive_random(ctx, params.setup.consumed())?;
        let me = ctx.party();
        let setup = lpn_matrix(ctx, peer, me, &params.setup);
        let main = lpn_matrix(ctx, peer, me, &params.main);
        let mut engine =
            FerretReceiver { peer, params, buffers: Buffers::default(), main, stock: Stock::default() };
        engine.buffers.reserve = base;
        let mut ready = Vec::new();
        engine.iterate(ctx, params.setup, &setup, &mut ready)?;
        engine.stock.ready = ready;
        Ok(engine)
    }

    fn iterate(
        &mut self,
        ctx: &mut Ctx,
        p: LpnParams,
        matrix: &LpnMatrix,
        ready: &mut Vec<Block>,
    ) -> Result<()> {
        let b = &mut self.buffers;
        let (x, trees) = b.reserve.split_at(p.k);
        // A·x first, while the sender expands its trees; then the trees' leaves on top.
        b.work.clear();
        b.work.resize(p.n, 0);
        matrix.encode(b.secret.load(x), &mut b.work);
        spcot::receive(ctx, self.peer, &p, trees, &mut b.work)?;
        b.settle(self.params.main.consumed(), ready);
        Ok(())
    }
}

impl Maker for FerretReceiver {
    fn stock(&mut self) -> &mut Stock {
        &mut self.stock
    }

    /// One main iteration (its whole output, whatever was asked).
    fn make(&mut self, ctx: &mut Ctx, ready: &mut Vec<Block>, _want: usize) -> Result<()> {
        let matrix = self.main.clone();
        self.iterate(ctx, self.params.main, &matrix, ready)
    }

    fn overshoot(&self) -> usize {
        self.params.main.n
    }
}

impl CotReceiver for FerretReceiver {
    fn peer(&self) -> PartyId {
        self.peer
    }

    fn receive_random(&mut self, ctx: &mut Ctx, n: usize) -> Result<Vec<Block>> {
        cot::draw(self, ctx, n)
    }

    fn prepare(&mut self, ctx: &mut Ctx, n: usize) -> Result<()> {
        cot::prepare(self, ctx, n)
    }

    fn prepared(&self) -> usize {
        self.stock.len()
    }

    fn consumed(&self) -> u64 {
        self.stock.consumed()
    }

    fn made_on_demand(&self) -> u64 {
        self.stock.on_demand()
    }
}
