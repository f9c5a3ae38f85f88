//! The unit a [`crate::Transport`] moves: a payload plus the sender's logical clock.
//!
//! On a byte stream a frame is `len: u32 LE | depth: u32 LE | payload`, where `len` is the
//! payload length. A receiver checks `len` against its limit *before* allocating, so a peer
//! cannot make it reserve more memory than the limit by announcing a huge frame.

/// Default upper bound on one frame's payload: 1 GiB.
pub const DEFAULT_MAX_FRAME: usize = 1 << 30;

/// Bytes of the header that precedes each payload on a stream.
pub(crate) const HEADER_BYTES: usize = 8;

/// One message between two parties.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Logical depth of the message: 1 + the sender's clock when it sent it.
    pub depth: u32,
    /// The bytes of the message.
    pub payload: Vec<u8>,
}
