//! [`Net`]: one party's handle on the network, with accounting and a receive timeout.

use std::time::Duration;

use crate::frame::{MAX_STOP_REASON, STOP_DEPTH};
use crate::{CommStats, Frame, NetError, PartyId, Transport};

/// A party's view of the network: a boxed [`Transport`] plus [`CommStats`].
///
/// Every protocol message goes through here, so every byte is counted exactly once.
pub struct Net {
    transport: Box<dyn Transport>,
    stats: CommStats,
    timeout: Duration,
}

impl Net {
    /// Wraps a transport; `recv` waits at most `timeout`.
    pub fn new(transport: Box<dyn Transport>, timeout: Duration) -> Self {
        Net { transport, stats: CommStats::new(), timeout }
    }

    /// This party's id.
    pub fn party(&self) -> PartyId {
        self.transport.party()
    }

    /// Number of parties.
    pub fn parties(&self) -> usize {
        self.transport.parties()
    }

    /// The other parties, in increasing order.
    pub fn peers(&self) -> impl Iterator<Item = PartyId> + use<> {
        let me = self.party();
        (0..self.parties()).filter(move |&p| p != me)
    }

    /// The receive timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends `payload` to `to` without waiting for it to be read.
    pub fn send(&mut self, to: PartyId, payload: Vec<u8>) -> Result<(), NetError> {
        if payload.len() > self.transport.max_frame() {
            return Err(NetError::FrameTooLarge {
                peer: to,
                len: payload.len() as u64,
                limit: self.transport.max_frame() as u64,
            });
        }
        crate::transport::check_peer(self.party(), to, self.parties())?;
        let depth = self.stats.on_send(payload.len());
        self.transport.send(to, Frame { depth, payload })
    }

    /// Sends the same payload to every other party (one message each).
    pub fn broadcast(&mut self, payload: &[u8]) -> Result<(), NetError> {
        for p in self.peers() {
            self.send(p, payload.to_vec())?;
        }
        Ok(())
    }

    /// Receives the next message from `from`. A stop notice from the peer is returned as
    /// [`NetError::PeerStopped`] with its reason.
    pub fn recv(&mut self, from: PartyId) -> Result<Vec<u8>, NetError> {
        crate::transport::check_peer(self.party(), from, self.parties())?;
        let frame = self.transport.recv(from, self.timeout)?;
        if frame.depth == STOP_DEPTH {
            let end = frame.payload.len().min(MAX_STOP_REASON);
            let reason = String::from_utf8_lossy(&frame.payload[..end]).into_owned();
            return Err(NetError::PeerStopped { peer: from, reason });
        }
        self.stats.on_recv(frame.payload.len(), frame.depth);
        Ok(frame.payload)
    }

    /// Tells every peer that this party stops, and why, before it leaves the session (best
    /// effort: a peer already gone is skipped). The reason must not contain secrets; it is
    /// not counted in the statistics.
    pub fn notify_stop(&mut self, reason: &str) {
        let mut bytes = reason.as_bytes().to_vec();
        bytes.truncate(MAX_STOP_REASON);
        for p in self.peers().collect::<Vec<_>>() {
            let _ = self.transport.send(p, Frame { depth: STOP_DEPTH, payload: bytes.clone() });
        }
    }

    /// Receives one message from every other party, in party order (index `me` is empty).
    pub fn recv_all(&mut self) -> Result<Vec<Vec<u8>>, NetError> {
        let mut out = vec![Vec::new(); self.parties()];
        for p in self.peers() {
            out[p] = self.recv(p)?;
        }
        Ok(out)
    }

    /// This party's counters.
    pub fn stats(&self) -> &CommStats {
        &self.stats
    }

    /// Switches the phase label that counting goes to (e.g. `"offline"`, `"online"`).
    pub fn set_phase(&mut self, name: &str) {
        self.stats.set_phase(name);
    }
}
