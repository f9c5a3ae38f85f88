//! Declared online costs of the toolkit's protocols at one party, with the COTs made ahead
//! ([`crate::TwoParty::prepare`]): bytes and messages it sends. Tests compare them with what
//! `CommStats` measured.

use veil_mpc::cost::Cost;
use veil_ot::flavours::Modulus;

use crate::millionaire;

fn bytes(bits: usize) -> u64 {
    bits.div_ceil(8) as u64
}

fn plus(a: Cost, b: Cost) -> Cost {
    Cost {
        bytes_sent: a.bytes_sent + b.bytes_sent,
        messages_sent: a.messages_sent + b.messages_sent,
        rounds: a.rounds + b.rounds,
    }
}

/// One Δ-OT of `n` elements of `m`: the sender sends the corrections, the receiver its flips.
fn delta_ot(n: usize, m: Modulus, sender: bool) -> Cost {
    let b = if sender { bytes(n * m.bits() as usize) } else { bytes(n) };
    Cost { bytes_sent: b, messages_sent: 1, rounds: 1 }
}

/// B2A of `n` bits into Z_M (P0 holds the correlations).
pub fn b2a(n: usize, m: Modulus, first: bool) -> Cost {
    delta_ot(n, m, first)
}

/// Multiplexer of `n` elements of Z_M: one Δ-OT each way.
pub fn mux(n: usize, m: Modulus, _first: bool) -> Cost {
    let c = plus(delta_ot(n, m, true), delta_ot(n, m, false));
    Cost { rounds: 2, ..c }
}

/// MSB (and DReLU) in Z_2^bits.
pub fn msb(n: usize, bits: u32, first: bool) -> Cost {
    millionaire::cost(n, bits - 1, first)
}

/// Wrap bit of shares of Z_2^bits.
pub fn wrap(n: usize, bits: u32, first: bool) -> Cost {
    millionaire::cost(n, bits, first)
}

/// ReLU in Z_2^bits.
pub fn relu(n: usize, bits: u32, first: bool) -> Cost {
    plus(msb(n, bits, first), mux(n, Modulus::PowerOfTwo(bits), first))
}

/// Extension from Z_2^from to Z_2^to.
pub fn extend(n: usize, from: u32, to: u32, first: bool) -> Cost {
    plus(wrap(n, from, first), b2a(n, Modulus::PowerOfTwo(to - from), first))
}

/// M&M's truncation by `f` bits: one Δ-OT over Z_2^f from P0.
pub fn trunc(n: usize, f: u32, first: bool) -> Cost {
    delta_ot(n, Modulus::PowerOfTwo(f), first)
}

/// Exact truncation by `f` bits in Z_2^bits.
pub fn trunc_exact(n: usize, bits: u32, f: u32, first: bool) -> Cost {
    let cmp = plus(wrap(n, bits, first), wrap(n, f, first));
    plus(cmp, plus(b2a(n, Modulus::PowerOfTwo(f), first), b2a(n, Modulus::PowerOfTwo(bits), first)))
}

/// Lookup table on `in_bits`-bit inputs with `bits`-bit entries: 1-of-2^in_bits OT from P0.
pub fn lut(n: usize, in_bits: u32, bits: u32, first: bool) -> Cost {
    let b = if first { bytes((n * bits as usize) << in_bits) } else { bytes(n * in_bits as usize) };
    Cost { bytes_sent: b, messages_sent: n.div_ceil(veil_ot::flavours::PIECE) as u64, rounds: 2 }
}
