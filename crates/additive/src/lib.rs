//! n-party additive secret sharing over a ring, with Beaver multiplication.
//!
//! A secret `x` is held as shares `x_0, ..., x_{n-1}` with `x = Σ x_i`. This is the first
//! protocol through Veil's whole stack (ring, tensor, PRG and seeds, network, accounting,
//! harness, CLI); the protocol families of later work reuse its pieces.
//!
//! # Security model
//! Semi-honest parties, dishonest majority (any n-1 may collude), *given* honestly generated
//! triples. The only triple source here is [`InsecureDealer`], which derives every party's
//! triples from a seed all parties know: anyone can reconstruct every triple, so this crate
//! is **not secure** with it. It exists to exercise the stack; real preprocessing (OT- or
//! HE-based) comes with the families that need it.
//!
//! # Operations and their cost (per party, `m` elements, `n` parties, `B` bytes per element)
//! | op | bytes sent | messages | rounds |
//! |---|---|---|---|
//! | `share_input` | 0 | 0 | 0 |
//! | `reveal_all` | (n-1)·m·B | n-1 | 1 |
//! | `reveal_to(t)` | m·B at parties ≠ t, 0 at t | 1 / 0 | 1 |
//! | `add`, `sub`, `add_public`, `mul_public` | 0 | 0 | 0 |
//! | `mul` (Beaver) | 2·(n-1)·m·B | n-1 | 1 |

mod dealer;
mod protocol;

pub use dealer::{InsecureDealer, TripleSource, Triples};
pub use protocol::{Additive, Share};
