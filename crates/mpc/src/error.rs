//! Errors of MPC protocols.

use veil_net::{NetError, PartyId};

/// Result of an MPC operation.
pub type Result<T> = std::result::Result<T, MpcError>;

/// Why a protocol run stopped.
#[derive(Debug, thiserror::Error)]
pub enum MpcError {
    /// The network failed (disconnect, timeout, oversized frame, handshake).
    #[error(transparent)]
    Net(#[from] NetError),
    /// A security check failed: the run aborts and reveals nothing more.
    #[error("abort: check '{check}' failed{}", suspect.map(|p| format!(" (suspected party {p})")).unwrap_or_default())]
    Abort {
        /// Which check failed.
        check: String,
        /// The party the check points at, when it points at one.
        suspect: Option<PartyId>,
    },
    /// A peer sent a message of the wrong size or form.
    #[error("malformed message from party {from}: {what}")]
    Malformed {
        /// The sender.
        from: PartyId,
        /// What was wrong.
        what: String,
    },
    /// The caller asked for something the protocol cannot do (wrong shape, wrong party...).
    #[error("invalid use: {0}")]
    Invalid(String),
    /// A ring-level error (e.g. a value outside the fixed-point range).
    #[error(transparent)]
    Ring(#[from] veil_ring::RingError),
    /// A tensor shape error.
    #[error(transparent)]
    Tensor(#[from] veil_tensor::TensorError),
    /// A cryptographic check failed.
    #[error(transparent)]
    Crypto(#[from] veil_crypto::CryptoError),
    /// A session failed at `party` for this reason (what [`crate::harness::root_cause`] reports
    /// for a whole session).
    #[error("party {party}: {source}")]
    AtParty {
        /// The party that failed first for its own reason.
        party: PartyId,
        /// Its error.
        source: Box<MpcError>,
    },
    /// The party's code panicked (a bug); reported so that the harness never hangs.
    #[error("party {party} panicked: {message}")]
    Panicked {
        /// The party whose thread panicked.
        party: PartyId,
        /// The panic message.
        message: String,
    },
}

impl MpcError {
    /// A malformed message's error with the protocol step that received it named first; any
    /// other error as it is.
    pub fn in_step(self, step: &str) -> Self {
        match self {
            MpcError::Malformed { from, what } => {
                MpcError::Malformed { from, what: format!("{step}: {what}") }
            }
            other => other,
        }
    }

    /// An abort naming the failed check.
    pub fn abort(check: impl Into<String>, suspect: Option<PartyId>) -> Self {
        MpcError::Abort { check: check.into(), suspect }
    }

    /// Whether this error only follows another party's failure: a peer left, stopped the
    /// session (saying why) or fell silent. Such an error is a knock-on effect, not a cause.
    pub fn is_knock_on(&self) -> bool {
        matches!(
            self,
            MpcError::Net(
                NetError::Disconnected { .. }
                    | NetError::PeerStopped { .. }
                    | NetError::Timeout { .. }
                    | NetError::Stalled { .. }
                    | NetError::Unconfirmed { .. }
            )
        )
    }
}
