//! Veil's network layer: moves byte messages among the parties of a session and counts them.
//!
//! It knows nothing of rings or protocols. A [`Transport`] moves [`Frame`]s between numbered
//! parties; two implementations exist:
//!
//! - [`mesh`]: an in-memory mesh of channels for tests (`simulate` runs every party on a thread);
//! - [`tcp`]: TCP with TLS 1.3 and mutual authentication (rustls), one connection per pair of
//!   parties, each party's certificate signed by the deployment's CA and bound to its party id.
//!
//! [`Net`] wraps a transport for one party and keeps its [`CommStats`]: bytes, messages and
//! latency rounds (the longest chain of dependent messages, tracked with a logical clock carried
//! in every frame), per labelled phase.
//!
//! # Security model
//! The transport authenticates peers and protects the links (TLS 1.3); it does not make a
//! malicious peer honest: everything received is length-checked here and must be validated by
//! the protocol that reads it. Malformed frames, oversized frames, disconnects and timeouts are
//! errors, never panics or hangs.

mod error;
mod frame;
mod net;
mod stats;
mod transport;

pub mod certs;
pub mod decode;
pub mod fault;
pub mod mesh;
pub mod tcp;
mod tls;

pub use error::NetError;
pub use frame::{DEFAULT_MAX_FRAME, Frame};
pub use net::{Net, Patience};
pub use stats::{CommStats, Lanes, PhaseStats};
pub use transport::{PartyId, Transport};
