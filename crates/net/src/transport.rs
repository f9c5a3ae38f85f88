//! The [`Transport`] trait: reliable, ordered delivery of frames between numbered parties.

use std::time::{Duration, Instant};

use crate::{Frame, NetError};

/// Index of a party in a session, `0..parties`.
pub type PartyId = usize;

/// Moves frames between the parties of one session.
///
/// Contract, for every implementation:
/// - `send` never waits for the receiver to read: it queues the frame and returns;
/// - frames from one peer arrive in the order they were sent;
/// - `recv` waits at most `timeout`, then fails with [`NetError::Timeout`];
/// - a transport that can tell a live peer from a silent one reports, in `last_heard`, when the
///   peer last sent anything (a frame or a heartbeat); [`crate::Net`] then waits on a live peer
///   beyond `timeout` (up to its stall limit) and gives up on one silent for `timeout`;
/// - when a peer is gone (finished, failed, crashed), `recv` from it fails with
///   [`NetError::Disconnected`] once its queued frames are drained, instead of hanging;
/// - dropping the transport closes every link, so that peers blocked on it fail fast.
pub trait Transport: Send {
    /// This party's id.
    fn party(&self) -> PartyId;
    /// Number of parties in the session.
    fn parties(&self) -> usize;
    /// Largest payload accepted, in bytes.
    fn max_frame(&self) -> usize;
    /// Queues `frame` for `to`.
    fn send(&mut self, to: PartyId, frame: Frame) -> Result<(), NetError>;
    /// Takes the next frame from `from`, waiting up to `timeout`.
    fn recv(&mut self, from: PartyId, timeout: Duration) -> Result<Frame, NetError>;
    /// Like [`Transport::recv`] for a protocol step that takes at most `limit` bytes. A
    /// transport that reads ahead of the protocol (TCP) buffers a large frame only once a
    /// step asks for it and fails with [`NetError::Unexpected`] if it is larger than `limit`;
    /// others deliver the frame and leave the check to [`crate::Net`].
    fn recv_at_most(&mut self, from: PartyId, timeout: Duration, limit: usize) -> Result<Frame, NetError> {
        let _ = limit;
        self.recv(from, timeout)
    }
    /// When anything (a frame or a heartbeat) last arrived from `from`; `None` where this
    /// transport has no heartbeats (then `recv`'s timeout is the only limit).
    fn last_heard(&self, from: PartyId) -> Option<Instant> {
        let _ = from;
        None
    }
}

/// Checks that `peer` is another party of the session.
pub(crate) fn check_peer(me: PartyId, peer: PartyId, parties: usize) -> Result<(), NetError> {
    if peer >= parties || peer == me {
        return Err(NetError::BadPeer { peer, me, parties });
    }
    Ok(())
}
