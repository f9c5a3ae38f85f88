//! Oblivious transfer for Veil's 2-party and n-party families.
//!
//! - [`base`]: 128 base OTs from Diffie–Hellman over Ristretto, once per pair and session.
//! - [`extension`]: IKNP and KOS OT extension (semi-honest and malicious receiver).
//! - [`ferret`]: Ferret silent OT from LPN, under one bit per COT sent.
//! - [`flavours`]: chosen-choice COT, random OT, 1-of-2 and 1-of-N OT, Δ-OT over Z_2^k and Z_M.
//! - [`cot`]: the random correlated OT every engine produces, and the engines' traits.
//! - [`block`], [`prp`]: 128-bit blocks, bit transposition, GF(2^128), fixed-key AES.
//!
//! Every protocol runs over a [`veil_mpc::Ctx`], so its bytes and rounds are counted by the
//! session's `CommStats`, and every message is length-checked on arrival: a short, long or
//! malformed message is a [`veil_mpc::MpcError::Malformed`] naming the protocol step.

#[cfg(target_endian = "big")]
compile_error!("veil-ot hashes blocks as little-endian bytes; big-endian targets are not supported");

pub mod base;
pub mod block;
pub mod cot;
pub mod extension;
pub mod ferret;
pub mod flavours;
mod io;
pub mod prp;

pub use block::Block;
pub use cot::{CotReceiver, CotSender};
pub use extension::{Check, ExtensionReceiver, ExtensionSender};
pub use ferret::{FerretParams, FerretReceiver, FerretSender};
/// Dense bit packing (`veil_mpc::packing`), under the name the OT code uses.
pub use veil_mpc::packing as pack;
