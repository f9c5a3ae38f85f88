//! [`Ctx`]: everything one party holds during a session.

use std::collections::HashMap;
use std::sync::Arc;

use veil_crypto::{Domain, Prg, Seed, SessionId};
use veil_net::{CommStats, Frame, Net, NetError, PartyId, Transport};
use veil_ring::Ring;
use veil_tensor::{Cpu, Device};

use crate::seeds::{self, Seeds};
use crate::{MpcError, Result, wire};

/// One party's context: network, session id, private randomness, shared seeds, and the
/// compute device its matrix products run on (the CPU unless [`Ctx::set_device`] says
/// otherwise; there is no process-wide device).
///
/// Randomness shared with other parties is derived per use with [`Ctx::pair_prg`] and
/// [`Ctx::common_prg`]: the key binds the seed, the session id, a purpose string and a counter
/// kept per (purpose, set of parties), so two parties that make the same calls in the same
/// order derive the same streams, and no stream is ever reused.
pub struct Ctx {
    net: Net,
    session: SessionId,
    rng: Prg,
    seeds: Seeds,
    counters: HashMap<(String, u64), u64>,
    device: Arc<dyn Device>,
}

/// The transport of [`Ctx::detached`]: every peer is gone.
struct Detached {
    party: PartyId,
    parties: usize,
}

impl Transport for Detached {
    fn party(&self) -> PartyId {
        self.party
    }

    fn parties(&self) -> usize {
        self.parties
    }

    fn max_frame(&self) -> usize {
        0
    }

    fn send(&mut self, to: PartyId, _: Frame) -> std::result::Result<(), NetError> {
        Err(NetError::Disconnected { peer: to })
    }

    fn recv(&mut self, from: PartyId, _: std::time::Duration) -> std::result::Result<Frame, NetError> {
        Err(NetError::Disconnected { peer: from })
    }
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("party", &self.party())
            .field("parties", &self.parties())
            .field("session", &self.session)
            .field("device", &self.device.name())
            .finish_non_exhaustive()
    }
}

impl Ctx {
    /// Joins a session: runs the seed coin toss (phase `"setup"`) over `net`.
    /// `private_seed` keys this party's own randomness and must be secret and fresh.
    pub fn setup(mut net: Net, session: SessionId, private_seed: Seed) -> Result<Self> {
        let mut rng = Prg::derive(&private_seed, &Domain::new(session, "veil/private", 0));
        let previous = net.stats().phase().to_string();
        net.set_phase("setup");
        let seeds = seeds::toss(&mut net, &session, &mut rng)?;
        net.set_phase(&previous);
        Ok(Ctx { net, session, rng, seeds, counters: HashMap::new(), device: Arc::new(Cpu::new()) })
    }

    /// A context with no peers, for work that sends nothing: every message fails with
    /// [`veil_net::NetError::Disconnected`], no seed is shared with anyone (randomness is fresh
    /// and private), and the session id is fresh. It still says which party of how many it
    /// stands for, so a walk of a graph over shapes ([`crate::trace::Tracer`]) takes the paths
    /// that party would take.
    pub fn detached(party: PartyId, parties: usize) -> Self {
        let mut os = rand::rngs::OsRng;
        let session = SessionId::from_rng(&mut os);
        let private = Seed::from_rng(&mut os);
        let rng = Prg::derive(&private, &Domain::new(session, "veil/private", 0));
        let net = Net::new(Box::new(Detached { party, parties }), std::time::Duration::ZERO);
        let seeds = Seeds::alone(Seed::from_rng(&mut os));
        Ctx { net, session, rng, seeds, counters: HashMap::new(), device: Arc::new(Cpu::new()) }
    }

    /// The device this party's matrix products run on.
    pub fn device(&self) -> Arc<dyn Device> {
        Arc::clone(&self.device)
    }

    /// Runs this party's matrix products on `device` from now on.
    pub fn set_device(&mut self, device: Arc<dyn Device>) {
        self.device = device;
    }

    /// This party's id.
    pub fn party(&self) -> PartyId {
        self.net.party()
    }

    /// Number of parties.
    pub fn parties(&self) -> usize {
        self.net.parties()
    }

    /// The other parties in increasing order.
    pub fn peers(&self) -> Vec<PartyId> {
        self.net.peers().collect()
    }

    /// The session id.
    pub fn session(&self) -> SessionId {
        self.session
    }

    /// This party's private randomness.
    pub fn rng(&mut self) -> &mut Prg {
        &mut self.rng
    }

    /// The network handle (raw byte messages, counted).
    pub fn net(&mut self) -> &mut Net {
        &mut self.net
    }

    /// This party's communication counters.
    pub fn stats(&self) -> &CommStats {
        self.net.stats()
    }

    /// Switches the label that communication is counted under.
    pub fn set_phase(&mut self, name: &str) {
        if self.net.stats().phase() != name {
            crate::phase::phase_changed(self.party(), name);
        }
        self.net.set_phase(name);
    }

    /// Sends ring elements to `to`.
    pub fn send_ring<R: Ring>(&mut self, to: PartyId, xs: &[R]) -> Result<()> {
        Ok(self.net.send(to, wire::encode(xs))?)
    }

    /// Receives exactly `n` ring elements from `from`.
    pub fn recv_ring<R: Ring>(&mut self, from: PartyId, n: usize) -> Result<Vec<R>> {
        let bytes = self.recv_at_most(from, n.saturating_mul(R::BYTES))?;
        wire::decode(from, &bytes, n)
    }

    /// Receives the next message from `from` for a step that takes at most `limit` bytes; a
    /// longer one is not read into memory (see [`Net::recv_at_most`]) and is
    /// [`MpcError::Malformed`], like any other message of the wrong size. Every step that knows
    /// its message's size receives through here.
    pub fn recv_at_most(&mut self, from: PartyId, limit: usize) -> Result<Vec<u8>> {
        self.net.recv_at_most(from, limit).map_err(|e| match e {
            NetError::Unexpected { peer, len, expected } => MpcError::Malformed {
                from: peer,
                what: format!("a message of {len} bytes where at most {expected} are expected"),
            },
            other => other.into(),
        })
    }

    /// [`Ctx::recv_at_most`] for the protocol step `step`, which a too long message's error
    /// names.
    pub fn recv_for(&mut self, from: PartyId, limit: usize, step: &str) -> Result<Vec<u8>> {
        self.recv_at_most(from, limit).map_err(|e| e.in_step(step))
    }

    /// Receives exactly `count` words packed at `bits` bits each ([`wire::pack_words`]).
    pub fn recv_words(&mut self, from: PartyId, bits: u32, count: usize) -> Result<Vec<u64>> {
        let bytes = self.recv_at_most(from, wire::packed_len(bits, count))?;
        wire::unpack_words(from, &bytes, bits, count)
    }

    /// A PRG shared with `peer` only, fresh for each call with the same purpose.
    pub fn pair_prg(&mut self, peer: PartyId, purpose: &str) -> Result<Prg> {
        let me = self.party();
        if self.seeds.pairwise(peer).is_none() {
            return Err(MpcError::Invalid(format!("party {me} has no seed shared with party {peer}")));
        }
        let scope = 1u64 << 63 | ((me.min(peer) as u64) << 20) | me.max(peer) as u64;
        let counter = self.next_counter(purpose, scope);
        let seed = self.seeds.pairwise(peer).ok_or_else(|| MpcError::Invalid("no pairwise seed".into()))?;
        Ok(Prg::derive(seed, &Domain::new(self.session, purpose, counter)))
    }

    /// A PRG known to every party (public randomness), fresh for each call with the same purpose.
    pub fn common_prg(&mut self, purpose: &str) -> Prg {
        let counter = self.next_counter(purpose, 0);
        Prg::derive(self.seeds.all(), &Domain::new(self.session, purpose, counter))
    }

    fn next_counter(&mut self, purpose: &str, scope: u64) -> u64 {
        let c = self.counters.entry((purpose.to_string(), scope)).or_insert(0);
        let v = *c;
        *c += 1;
        v
    }
}
