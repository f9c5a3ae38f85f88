//! [`Net`]: one party's handle on the network, with accounting, a receive timeout and the
//! closing handshake.
//!
//! **Liveness is not progress.** On a transport with heartbeats (TCP), a party waits on a peer
//! as long as the peer is alive, however long its next message takes (an offline phase of
//! minutes), and gives up after [`Patience::silence`] without a byte from it (frozen, crashed,
//! cut off) or after [`Patience::stall`] without a message from a live peer.
//!
//! **No success without confirmation.** [`Net::finish`] ends a successful job: a party reports
//! success only once every peer has confirmed that its own job succeeded, so a server never
//! reports a job done whose output its receiver did not get and check.

use std::time::{Duration, Instant};

use crate::frame::{FINISH_DEPTH, MAX_STOP_REASON, STOP_DEPTH};
use crate::{CommStats, Frame, Lanes, NetError, PartyId, Transport};

/// How long a party waits on a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Patience {
    /// Longest silence from a peer (no message, no heartbeat) before giving up on it.
    pub silence: Duration,
    /// Longest wait for one message from a peer that is alive.
    pub stall: Duration,
}

impl From<Duration> for Patience {
    /// `silence` as given, no stall limit.
    fn from(silence: Duration) -> Self {
        Patience { silence, stall: Duration::MAX }
    }
}

/// A party's view of the network: a boxed [`Transport`] plus [`CommStats`].
///
/// Every protocol message goes through here, so every byte is counted exactly once.
pub struct Net {
    transport: Box<dyn Transport>,
    stats: CommStats,
    patience: Patience,
}

impl Net {
    /// Wraps a transport; `recv` gives up on a peer silent for `patience.silence` (a
    /// [`Duration`] converts: silence only, no stall limit).
    pub fn new(transport: Box<dyn Transport>, patience: impl Into<Patience>) -> Self {
        Net { transport, stats: CommStats::new(), patience: patience.into() }
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

    /// The receive timeout (the longest silence accepted from a peer).
    pub fn timeout(&self) -> Duration {
        self.patience.silence
    }

    /// Takes the next frame from `from`, a step taking at most `limit` bytes: waits while the
    /// peer is alive, up to the stall limit, and gives up once it has been silent for the
    /// receive timeout.
    fn wait(&mut self, from: PartyId, limit: usize) -> Result<Frame, NetError> {
        let Patience { silence, stall } = self.patience;
        let started = Instant::now();
        let mut wait = silence.min(stall);
        loop {
            match self.transport.recv_at_most(from, wait, limit) {
                Err(NetError::Timeout { .. }) => {}
                other => return other,
            }
            let waited = started.elapsed();
            if waited >= stall {
                return Err(NetError::Stalled { peer: from, after: waited });
            }
            // Without heartbeats, silence is the time waited here.
            let silent = self.transport.last_heard(from).map_or(waited, |t| t.elapsed());
            if silent >= silence {
                return Err(NetError::Timeout { peer: from, after: silent });
            }
            wait = (silence - silent).min(stall - waited);
        }
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
        let limit = self.transport.max_frame();
        self.recv_at_most(from, limit)
    }

    /// Receives the next message from `from` for a protocol step that takes at most `limit`
    /// bytes: a longer message is [`NetError::Unexpected`], and over TCP its bytes are not
    /// read into memory at all past the first 16 MiB. Every step that knows its message's
    /// size receives through here, so an authenticated peer cannot make this party hold more
    /// than the protocol expects (plus the link's bounded backlog of small frames).
    pub fn recv_at_most(&mut self, from: PartyId, limit: usize) -> Result<Vec<u8>, NetError> {
        crate::transport::check_peer(self.party(), from, self.parties())?;
        let frame = self.wait(from, limit)?;
        if frame.depth == STOP_DEPTH {
            return Err(stopped(from, &frame));
        }
        if frame.depth == FINISH_DEPTH {
            return Err(NetError::Malformed {
                peer: from,
                reason: "it confirmed the end of its job while this party waits for a message from it".into(),
            });
        }
        if frame.payload.len() > limit {
            return Err(NetError::Unexpected {
                peer: from,
                len: frame.payload.len() as u64,
                expected: limit as u64,
            });
        }
        self.stats.on_recv(frame.payload.len(), frame.depth);
        Ok(frame.payload)
    }

    /// Ends a successful job: tells every peer so, then waits until every peer has said the
    /// same. A party reports success only after this returns, so no party reports a job done
    /// whose output did not reach its receiver: the receiver confirms only once it holds the
    /// output and its checks passed. A peer that stopped, left, or sent a message this party
    /// never read instead of its confirmation makes this fail. The notices are not counted.
    pub fn finish(&mut self) -> Result<(), NetError> {
        for p in self.peers() {
            // A peer already gone has left a stop notice or a disconnect to read below.
            let _ = self.transport.send(p, Frame { depth: FINISH_DEPTH, payload: Vec::new() });
        }
        for p in self.peers() {
            match self.wait(p, 0) {
                Ok(f) if f.depth == FINISH_DEPTH => {}
                Ok(f) if f.depth == STOP_DEPTH => return Err(stopped(p, &f)),
                Ok(_) | Err(NetError::Unexpected { .. }) => {
                    let reason = "it sent a message this party's job never read".into();
                    return Err(NetError::Unconfirmed { peer: p, reason });
                }
                Err(NetError::Disconnected { .. }) => {
                    let reason = "it left before confirming".into();
                    return Err(NetError::Unconfirmed { peer: p, reason });
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
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

    /// Begins independent lanes of messages ([`Lanes`]): call [`Net::next_lane`] before each
    /// lane's first message and [`Net::end_lanes`] after the last.
    pub fn begin_lanes(&self) -> Lanes {
        self.stats.begin_lanes()
    }

    /// Starts the next lane.
    pub fn next_lane(&mut self, lanes: &mut Lanes) {
        self.stats.next_lane(lanes);
    }

    /// Within the current lane, makes its later messages depend on every earlier lane as well
    /// (a lane that, from some point on, uses what an earlier lane computed).
    pub fn join_lanes(&mut self, lanes: &Lanes) {
        self.stats.join_lanes(lanes);
    }

    /// Ends the lanes: later messages depend on all of them.
    pub fn end_lanes(&mut self, lanes: Lanes) {
        self.stats.end_lanes(lanes);
    }

    /// Switches the phase label that counting goes to (e.g. `"offline"`, `"online"`).
    pub fn set_phase(&mut self, name: &str) {
        self.stats.set_phase(name);
    }
}

/// The error a stop notice from `peer` stands for.
fn stopped(peer: PartyId, frame: &Frame) -> NetError {
    let end = frame.payload.len().min(MAX_STOP_REASON);
    let reason = String::from_utf8_lossy(&frame.payload[..end]).into_owned();
    NetError::PeerStopped { peer, reason }
}
