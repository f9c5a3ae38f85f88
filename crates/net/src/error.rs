//! Errors of the network layer. Every message names the peer involved.

use std::time::Duration;

use crate::PartyId;

/// What can go wrong while moving bytes between parties.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The peer closed its side (it finished, failed or crashed).
    #[error("party {peer} disconnected")]
    Disconnected {
        /// The peer that went away.
        peer: PartyId,
    },
    /// The peer stopped the session and said why (e.g. a failed security check).
    #[error("party {peer} stopped the session: {reason}")]
    PeerStopped {
        /// The peer that stopped.
        peer: PartyId,
        /// Its reason, as it sent it (at most 1 KiB of text).
        reason: String,
    },
    /// Nothing arrived from the peer within the receive timeout: no message and, on a
    /// transport with heartbeats, no heartbeat either (the peer is frozen, gone or unreachable).
    #[error("heard nothing from party {peer} for {after:?} (the receive timeout)")]
    Timeout {
        /// The silent peer.
        peer: PartyId,
        /// How long it was silent.
        after: Duration,
    },
    /// The peer is alive (its heartbeats arrive) but sent no message for the stall limit.
    #[error("party {peer} is alive but sent no message for {after:?} (the stall limit)")]
    Stalled {
        /// The peer that makes no progress.
        peer: PartyId,
        /// How long we waited.
        after: Duration,
    },
    /// The peer's job ended without it confirming success (see [`crate::Net::finish`]).
    #[error("party {peer} did not confirm that it finished: {reason}")]
    Unconfirmed {
        /// The peer.
        peer: PartyId,
        /// What came instead of its confirmation.
        reason: String,
    },
    /// A frame larger than the configured limit was sent or announced.
    #[error("frame of {len} bytes for party {peer} exceeds the limit of {limit} bytes")]
    FrameTooLarge {
        /// The peer on the other end.
        peer: PartyId,
        /// The announced or attempted length.
        len: u64,
        /// The configured limit.
        limit: u64,
    },
    /// A peer sent a frame larger than the protocol step receiving it expects; a transport
    /// that streams frames stops reading before such a frame's bytes are buffered.
    #[error("party {peer} sent a frame of {len} bytes where this protocol step expects at most {expected}")]
    Unexpected {
        /// The sender.
        peer: PartyId,
        /// The frame's length, as announced.
        len: u64,
        /// The most the receiving step takes.
        expected: u64,
    },
    /// A party id outside `0..parties`, or the party itself.
    #[error("party {peer} is not a peer of party {me} in a session of {parties} parties")]
    BadPeer {
        /// The id asked for.
        peer: PartyId,
        /// This party.
        me: PartyId,
        /// Number of parties.
        parties: usize,
    },
    /// A frame that does not parse.
    #[error("malformed frame from party {peer}: {reason}")]
    Malformed {
        /// The sender.
        peer: PartyId,
        /// What was wrong.
        reason: String,
    },
    /// Socket-level failure.
    #[error("I/O error with party {peer}: {source}")]
    Io {
        /// The peer on the other end.
        peer: PartyId,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The TLS handshake or the Veil hello that follows it failed.
    #[error("handshake with party {peer} failed: {reason}")]
    Handshake {
        /// The peer on the other end (or the claimed one).
        peer: PartyId,
        /// Why, in words.
        reason: String,
    },
    /// Certificates or keys could not be created, read or used.
    #[error("certificate error: {0}")]
    Certificate(String),
    /// A configuration that cannot work (wrong number of addresses, ...).
    #[error("invalid network configuration: {0}")]
    Config(String),
}
