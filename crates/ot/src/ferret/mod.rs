//! Ferret silent OT (Yang, Weng, Lan, Zhang, Wang, "Ferret: Fast Extension for Correlated OT
//! with Small Communication", CCS 2020): random COTs from primal LPN with regular noise,
//! bootstrapping each iteration from the previous one's output.
//!
//! One iteration with parameters `(n, k, t, h)` and `k + t·h` COTs in hand:
//!
//! ```text
//! x  = the first k COTs (the LPN secret; choice vector u, sender blocks v_x, receiver w_x)
//! e  = regular multi-point COT from the other t·h COTs (one GGM tree per block of 2^h)
//! sender:   v   = A·v_x ⊕ s                 receiver: w = A·w_x ⊕ (s ⊕ e·Δ)
//!           so  w = v ⊕ (A·u ⊕ e)·Δ        (choice vector: an LPN sample, pseudorandom)
//! ```
//!
//! The first `k + t·h` outputs are kept for the next iteration, the rest handed out. Setup
//! runs KOS OT extension (after 128 base OTs) for the setup iteration's `k + t·h` COTs; that
//! iteration's output feeds the main one. Per main iteration the sender sends `t·(2h + 1)`
//! blocks, one message: 0.45 bits per COT with [`FerretParams::SECURE`] and nothing back.
//!
//! **Security**: semi-honest (a malicious sender could learn whether the punctured positions lie in a set it picks, the selective-failure attack that Ferret's consistency check closes, which is not implemented); the LPN
//! parameters are Ferret's for 128-bit security ([`params`]).

pub mod params;

mod lpn;
mod spcot;

use veil_crypto::Hasher;
use veil_mpc::{Ctx, MpcError, PartyId, Result};

use self::lpn::LpnMatrix;
pub use self::params::{FerretParams, LpnParams};
use crate::block::Block;
use crate::cot::{CotReceiver, CotSender, fill, normalize, take};
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

/// The sender's side of a Ferret engine.
pub struct FerretSender {
    peer: PartyId,
    delta: Block,
    params: FerretParams,
    reserve: Vec<Block>,
    buffer: Vec<Block>,
    tweak: u128,
    main: LpnMatrix,
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
            reserve: Vec::new(),
            buffer: Vec::new(),
            tweak: 0,
            main,
        };
        let mut out = engine.iterate(ctx, &params.setup, &setup, &base)?;
        engine.reserve = out.drain(..params.main.consumed()).collect();
        engine.buffer = out;
        Ok(engine)
    }

    fn iterate(
        &mut self,
        ctx: &mut Ctx,
        p: &LpnParams,
        matrix: &LpnMatrix,
        cots: &[Block],
    ) -> Result<Vec<Block>> {
        let (x, trees) = cots.split_at(p.k);
        let mut out = spcot::send(ctx, self.peer, p, self.delta, trees, self.tweak)?;
        self.tweak += trees.len() as u128;
        matrix.encode(x, &mut out);
        normalize(self.delta, &mut out);
        Ok(out)
    }

    fn next_main(&mut self, ctx: &mut Ctx) -> Result<Vec<Block>> {
        let (p, matrix, reserve) = (self.params.main, self.main.clone(), std::mem::take(&mut self.reserve));
        let mut out = self.iterate(ctx, &p, &matrix, &reserve)?;
        self.reserve = out.drain(..p.consumed()).collect();
        Ok(out)
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
        let mut buffer = std::mem::take(&mut self.buffer);
        let out = take(&mut buffer, n, |_| self.next_main(ctx));
        self.buffer = buffer;
        out
    }

    fn prepare(&mut self, ctx: &mut Ctx, n: usize) -> Result<()> {
        let mut buffer = std::mem::take(&mut self.buffer);
        let out = fill(&mut buffer, n, |_| self.next_main(ctx));
        self.buffer = buffer;
        out
    }

    fn prepared(&self) -> usize {
        self.buffer.len()
    }
}

/// The receiver's side of a Ferret engine.
pub struct FerretReceiver {
    peer: PartyId,
    params: FerretParams,
    reserve: Vec<Block>,
    buffer: Vec<Block>,
    tweak: u128,
    main: LpnMatrix,
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
            FerretReceiver { peer, params, reserve: Vec::new(), buffer: Vec::new(), tweak: 0, main };
        let mut out = engine.iterate(ctx, &params.setup, &setup, &base)?;
        engine.reserve = out.drain(..params.main.consumed()).collect();
        engine.buffer = out;
        Ok(engine)
    }

    fn iterate(
        &mut self,
        ctx: &mut Ctx,
        p: &LpnParams,
        matrix: &LpnMatrix,
        cots: &[Block],
    ) -> Result<Vec<Block>> {
        let (x, trees) = cots.split_at(p.k);
        let (mut out, _) = spcot::receive(ctx, self.peer, p, trees, self.tweak)?;
        self.tweak += trees.len() as u128;
        matrix.encode(x, &mut out);
        Ok(out)
    }

    fn next_main(&mut self, ctx: &mut Ctx) -> Result<Vec<Block>> {
        let (p, matrix, reserve) = (self.params.main, self.main.clone(), std::mem::take(&mut self.reserve));
        let mut out = self.iterate(ctx, &p, &matrix, &reserve)?;
        self.reserve = out.drain(..p.consumed()).collect();
        Ok(out)
    }
}

impl CotReceiver for FerretReceiver {
    fn peer(&self) -> PartyId {
        self.peer
    }

    fn receive_random(&mut self, ctx: &mut Ctx, n: usize) -> Result<Vec<Block>> {
        let mut buffer = std::mem::take(&mut self.buffer);
        let out = take(&mut buffer, n, |_| self.next_main(ctx));
        self.buffer = buffer;
        out
    }

    fn prepare(&mut self, ctx: &mut Ctx, n: usize) -> Result<()> {
        let mut buffer = std::mem::take(&mut self.buffer);
        let out = fill(&mut buffer, n, |_| self.next_main(ctx));
        self.buffer = buffer;
        out
    }

    fn prepared(&self) -> usize {
        self.buffer.len()
    }
}
