//! [`TwoParty`]: one party's half of a 2-party session, holding a COT engine in each
//! direction (this party as sender, and as receiver), so either party can play the OT sender
//! in a protocol.

use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ot::{
    Check, CotReceiver, CotSender, ExtensionReceiver, ExtensionSender, FerretParams, FerretReceiver,
    FerretSender,
};

/// Which OT engine makes the correlations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Ferret silent OT at its 128-bit parameters (the default).
    Ferret,
    /// Ferret at small, **insecure** parameters, for fast tests.
    FerretInsecureSmall,
    /// IKNP OT extension.
    Iknp,
    /// KOS OT extension.
    Kos,
}

/// One party's half of a 2-party session: its peer and both COT engines.
pub struct TwoParty {
    me: PartyId,
    peer: PartyId,
    sender: Box<dyn CotSender>,
    receiver: Box<dyn CotReceiver>,
}

impl std::fmt::Debug for TwoParty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TwoParty").field("me", &self.me).field("peer", &self.peer).finish_non_exhaustive()
    }
}

fn sender(ctx: &mut Ctx, peer: PartyId, engine: Engine) -> Result<Box<dyn CotSender>> {
    Ok(match engine {
        Engine::Ferret => Box::new(FerretSender::setup(ctx, peer, FerretParams::SECURE)?),
        Engine::FerretInsecureSmall => {
            Box::new(FerretSender::setup(ctx, peer, FerretParams::INSECURE_SMALL)?)
        }
        Engine::Iknp => Box::new(ExtensionSender::setup(ctx, peer, Check::None)?),
        Engine::Kos => Box::new(ExtensionSender::setup(ctx, peer, Check::Kos)?),
    })
}

fn receiver(ctx: &mut Ctx, peer: PartyId, engine: Engine) -> Result<Box<dyn CotReceiver>> {
    Ok(match engine {
        Engine::Ferret => Box::new(FerretReceiver::setup(ctx, peer, FerretParams::SECURE)?),
        Engine::FerretInsecureSmall => {
            Box::new(FerretReceiver::setup(ctx, peer, FerretParams::INSECURE_SMALL)?)
        }
        Engine::Iknp => Box::new(ExtensionReceiver::setup(ctx, peer, Check::None)?),
        Engine::Kos => Box::new(ExtensionReceiver::setup(ctx, peer, Check::Kos)?),
    })
}

impl TwoParty {
    /// Sets up both engines with `peer`: first the one where the party with the smaller id
    /// sends, then the other.
    pub fn setup(ctx: &mut Ctx, peer: PartyId, engine: Engine) -> Result<Self> {
        let me = ctx.party();
        if peer == me || peer >= ctx.parties() {
            return Err(MpcError::Invalid(format!("party {me} cannot pair with party {peer}")));
        }
        let (sender, receiver) = if me < peer {
            let s = sender(ctx, peer, engine)?;
            (s, receiver(ctx, peer, engine)?)
        } else {
            let r = receiver(ctx, peer, engine)?;
            (sender(ctx, peer, engine)?, r)
        };
        Ok(TwoParty { me, peer, sender, receiver })
    }

    /// The session of a 2-party context with its other party.
    pub fn with_other(ctx: &mut Ctx, engine: Engine) -> Result<Self> {
        if ctx.parties() != 2 {
            return Err(MpcError::Invalid(format!(
                "a 2-party protocol in a session of {} parties",
                ctx.parties()
            )));
        }
        let peer = 1 - ctx.party();
        Self::setup(ctx, peer, engine)
    }

    /// Whether this party plays `P0` (the smaller id): the millionaire's OT sender, the party
    /// that adds public constants.
    pub fn is_first(&self) -> bool {
        self.me < self.peer
    }

    /// The other party.
    pub fn peer(&self) -> PartyId {
        self.peer
    }

    /// This party's COT engine as sender.
    pub fn sender(&mut self) -> &mut dyn CotSender {
        self.sender.as_mut()
    }

    /// This party's COT engine as receiver.
    pub fn receiver(&mut self) -> &mut dyn CotReceiver {
        self.receiver.as_mut()
    }

    /// `(COTs handed out, COTs made on demand)` of this party's sending engine.
    pub fn sender_counters(&self) -> (u64, u64) {
        (self.sender.consumed(), self.sender.made_on_demand())
    }

    /// `(COTs handed out, COTs made on demand)` of this party's receiving engine.
    pub fn receiver_counters(&self) -> (u64, u64) {
        (self.receiver.consumed(), self.receiver.made_on_demand())
    }

    /// Makes COTs ahead (an offline phase): `p0_sends` with P0 as sender, `p1_sends` with P1
    /// as sender. Both parties pass the same two numbers.
    pub fn prepare(&mut self, ctx: &mut Ctx, p0_sends: usize, p1_sends: usize) -> Result<()> {
        if self.is_first() {
            self.sender.prepare(ctx, p0_sends)?;
            self.receiver.prepare(ctx, p1_sends)
        } else {
            self.receiver.prepare(ctx, p0_sends)?;
            self.sender.prepare(ctx, p1_sends)
        }
    }
}
