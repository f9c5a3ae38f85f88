//! The OT flavours the families use, each made from random COTs of any engine
//! ([`crate::CotSender`] / [`crate::CotReceiver`]: IKNP, KOS or Ferret).
//!
//! | flavour | receiver sends | sender sends | rounds |
//! |---|---|---|---|
//! | [`chosen_cot_send`]: COT with chosen choice bits | 1 bit | – | 1 |
//! | [`random_ot_send`]: random OT, 128-bit messages | – | – | 0 |
//! | [`chosen_ot_send`]: 1-of-2 OT of 128-bit messages | 1 bit | 2 blocks | 2 |
//! | [`delta_ot_send`]: Δ-OT over Z_2^k or Z_M | 1 bit | ⌈log2 M⌉ bits | 1 |
//! | [`one_of_n_send`]: 1-of-N OT of ℓ-bit messages (ℓ per instance) | log2 N bits | N·ℓ bits | 2 |
//!
//! Messages are derived with the TCR hash ([`crate::prp::tcr_hash`]) of the COT blocks, with
//! the instance's index as tweak: the sender's blocks are fresh per batch, so no (input, tweak)
//! pair repeats. Both parties call the matching functions with the same sizes in the same
//! order.

mod choice;
mod modular;
mod one_of_n;

pub use choice::{
    chosen_cot_receive, chosen_cot_send, chosen_ot_receive, chosen_ot_send, random_ot_receive, random_ot_send,
};
pub use modular::{
    DeltaOtReceive, DeltaOtSend, Modulus, delta_ot_begin_receive, delta_ot_begin_send,
    delta_ot_correction_bytes, delta_ot_receive, delta_ot_send,
};
pub use one_of_n::{
    PIECE, Shape, one_of_n_receive, one_of_n_receive_rows, one_of_n_send, one_of_n_send_rows,
    one_of_n_send_with,
};
