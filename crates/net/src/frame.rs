//! The unit a [`crate::Transport`] moves: a payload plus the sender's logical clock.
//!
//! On a byte stream a frame is `len: u32 LE | depth: u32 LE | payload`, where `len` is the
//! payload length. A receiver checks `len` against its limit *before* allocating, so a peer
//! cannot make it reserve more memory than the limit by announcing a huge frame.

/// Default upper bound on one frame's payload: 1 GiB.
pub const DEFAULT_MAX_FRAME: usize = 1 << 30;

/// Bytes of the header that precedes each payload on a stream.
pub(crate) const HEADER_BYTES: usize = 8;

/// Depth of a *stop notice*: a party leaving the session tells its peers why in a frame of
/// depth 0, which no protocol message has (their depth is 1 + a clock, so at least 1).
pub(crate) const STOP_DEPTH: u32 = 0;

/// Longest reason a stop notice carries.
pub(crate) const MAX_STOP_REASON: usize = 1024;

/// Depth of a *finish notice*: a party whose job succeeded tells its peers so, and succeeds
/// only once every peer has said the same (see [`crate::Net::finish`]). No protocol message
/// reaches this depth (a clock of four billion rounds).
pub(crate) const FINISH_DEPTH: u32 = u32::MAX;

/// On a stream, a header whose length field is `u32::MAX` is a *heartbeat*: no payload, never
/// handed to the protocol, sent by an idle link so that the peer knows this party is alive.
/// A frame's payload is therefore at most `u32::MAX - 1` bytes on a stream.
pub(crate) const HEARTBEAT_LEN: u32 = u32::MAX;

/// One message between two parties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Logical depth of the message: 1 + the sender's clock when it sent it.
    pub depth: u32,
    /// The bytes of the message.
    pub payload: Vec<u8>,
}
