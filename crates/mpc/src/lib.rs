//! The layer every protocol family stands on: a party's context, errors, seeds, the
//! multi-party harness, capability traits, preprocessing requests and declared costs.
//!
//! - [`Ctx`]: one party's state (network handle with accounting, session id, private
//!   randomness, pairwise and all-party seeds). No global state: it is passed explicitly.
//! - [`seeds`]: pairwise and all-party seeds by commit-then-open coin tossing.
//! - [`harness`]: `simulate(n, seed, f)` runs `n` parties on threads over an in-memory mesh,
//!   `simulate_tcp` over real TCP + mutual TLS on 127.0.0.1; a failing party makes its peers
//!   fail fast instead of hanging.
//! - [`traits`]: capabilities as traits (a family that lacks an operation does not implement
//!   its trait).
//! - [`runner`]: one party's life in a deployment (seed setup, its job, stop notices).
//! - [`phase`]: the offline phase nested in an online run, with its time kept apart.
//! - [`prep`]: the one preprocessing interface: calls and requests as plain data, plans,
//!   the [`prep::Preprocessing`] trait every source implements.
//! - [`trace`]: a backend of shapes only that records the calls a walk makes (plans without
//!   running the protocol).
//! - [`reference`](mod@reference): a family's fixed-point non-linear layers in the clear.
//! - [`packing`]: dense bit packing of values up to 128 bits.
//! - [`conv`]: a convolution's patch geometry (im2col), for families that keep its input.
//! - [`cost`]: declared costs, compared with measured [`veil_net::PhaseStats`] in tests.
//! - [`mode`]: the security mode and ring plan a session runs in, shared by every family.
//! - [`roles`]: who computes and where the data and model owners sit.

mod ctx;
mod error;

pub mod conv;
pub mod cost;
pub mod harness;
pub mod mode;
pub mod packing;
pub mod phase;
pub mod prep;
pub mod reference;
pub mod roles;
pub mod runner;
pub mod seeds;
pub mod trace;
pub mod traits;
pub mod wire;

pub use ctx::Ctx;
pub use error::{MpcError, Result};
pub use veil_net::PartyId;
