//! Δ-OT over Z_M: correlated OT whose correlation is an element of Z_2^k (k ≤ 128) or of
//! Z_M for any modulus 2 ≤ M < 2^64 (a prime p, or p − 1 as the exponentiation of M&M needs),
//! from random COT (M&M, "Secure Two-Party ML through Modulus Conversion and Mixed-Mode
//! Protocols", Fig. 12).
//!
//! ```text
//! S: Δ ∈ Z_M^n; v (random COT)        R: c ∈ {0,1}^n; w = v ⊕ u·Δ_cot, u = lsb(w)
//! R → S: c' = u ⊕ c                                            (1 bit per instance)
//! S → R: b' = H(v) + H(v ⊕ Δ_cot) + Δ mod M                    (⌈log2 M⌉ bits, in parallel)
//! S: a = H(v ⊕ c'·Δ_cot) mod M
//! R: b = H(w) if c = 0,  b' − H(w) if c = 1                    ⇒  b = a + c·Δ mod M
//! ```
//!
//! `H` is the 128-bit TCR hash; for M = 2^k its low k bits are used, otherwise it is reduced
//! mod M, which is within statistical distance M / 2^129 of uniform (negligible for M < 2^64).
//! Both messages go out before either is read: one round. The `begin`/`finish` halves let a
//! protocol run Δ-OTs each way in one message per party, each instance over its own modulus
//! (a product by bit decomposition uses `Z_2^{64−i}` for bit `i`).

use veil_mpc::{Ctx, MpcError, Result};

use crate::block::{Block, lsb};
use crate::cot::{CotReceiver, CotSender};
use crate::io::{self, malformed};
use crate::prp::{Prp, tcr_hash};
use veil_mpc::packing::{self as pack, mask};

const STEP_CHOICE: &str = "Δ-OT: choice corrections";
const STEP_CORRECTION: &str = "Δ-OT: correlation corrections";

/// The modulus of a Δ-OT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modulus {
    /// Z_2^k, 1 ≤ k ≤ 128.
    PowerOfTwo(u32),
    /// Z_M, 2 ≤ M < 2^64 (any M; a prime for the field shares of M&M).
    Integer(u64),
}

impl Modulus {
    /// Bits of one element on the wire.
    pub fn bits(&self) -> u32 {
        match *self {
            Modulus::PowerOfTwo(k) => k,
            Modulus::Integer(m) => 64 - (m - 1).leading_zeros(),
        }
    }

    /// Reduces a 128-bit hash output into Z_M.
    pub fn reduce(&self, x: u128) -> u128 {
        match *self {
            Modulus::PowerOfTwo(k) => x & mask(k),
            Modulus::Integer(m) => x % u128::from(m),
        }
    }

    /// Whether `x` is a canonical element.
    pub fn contains(&self, x: u128) -> bool {
        match *self {
            Modulus::PowerOfTwo(k) => x & !mask(k) == 0,
            Modulus::Integer(m) => x < u128::from(m),
        }
    }

    /// `a + b` in Z_M (canonical inputs).
    pub fn add(&self, a: u128, b: u128) -> u128 {
        match *self {
            Modulus::PowerOfTwo(k) => a.wrapping_add(b) & mask(k),
            Modulus::Integer(m) => (a + b) % u128::from(m),
        }
    }

    /// `a − b` in Z_M (canonical inputs).
    pub fn sub(&self, a: u128, b: u128) -> u128 {
        match *self {
            Modulus::PowerOfTwo(k) => a.wrapping_sub(b) & mask(k),
            Modulus::Integer(m) => (a + u128::from(m) - b) % u128::from(m),
        }
    }

    fn check(&self) -> Result<()> {
        match *self {
            Modulus::PowerOfTwo(k) if (1..=128).contains(&k) => Ok(()),
            Modulus::Integer(m) if m >= 2 => Ok(()),
            _ => Err(MpcError::Invalid(format!("{self:?} is not a modulus Δ-OT supports"))),
        }
    }
}

fn hash(moduli: &dyn Fn(usize) -> Modulus, mut xs: Vec<Block>) -> Vec<u128> {
    tcr_hash(&Prp::fixed("ot/delta"), &mut xs, 0);
    xs.into_iter().enumerate().map(|(i, x)| moduli(i).reduce(x)).collect()
}

fn check_all(moduli: &dyn Fn(usize) -> Modulus, n: usize) -> Result<()> {
    (0..n).try_for_each(|i| moduli(i).check())
}

/// Bytes of the correction message of `n` Δ-OTs, instance `i` over `moduli(i)`.
pub fn delta_ot_correction_bytes(moduli: &dyn Fn(usize) -> Modulus, n: usize) -> usize {
    (0..n).map(|i| moduli(i).bits() as usize).sum::<usize>().div_ceil(8)
}

/// The sender's side of Δ-OTs begun by [`delta_ot_begin_send`], waiting for the receiver's
/// choice flips.
#[derive(Debug)]
pub struct DeltaOtSend {
    h0: Vec<u128>,
    h1: Vec<u128>,
}

impl DeltaOtSend {
    /// The sender's outputs `a`, given the receiver's flips `c' = u ⊕ c`.
    pub fn finish(self, flips: &[bool]) -> Vec<u128> {
        flips.iter().zip(self.h0.iter().zip(&self.h1)).map(|(&f, (&a, &b))| if f { b } else { a }).collect()
    }
}

/// Begins `deltas.len()` Δ-OTs as sender, instance `i` over `moduli(i)` with correlation
/// `deltas[i]`: draws the COTs and returns the packed corrections to send (the caller sends
/// them, possibly with its own messages, so that Δ-OTs in both directions share one round).
pub fn delta_ot_begin_send(
    ctx: &mut Ctx,
    s: &mut dyn CotSender,
    moduli: &dyn Fn(usize) -> Modulus,
    deltas: &[u128],
) -> Result<(Vec<u8>, DeltaOtSend)> {
    let n = deltas.len();
    check_all(moduli, n)?;
    if let Some(i) = (0..n).find(|&i| !moduli(i).contains(deltas[i])) {
        return Err(MpcError::Invalid(format!("Δ-OT correlation {i} is not an element of {:?}", moduli(i))));
    }
    let v = s.send_random(ctx, n)?;
    let delta = s.delta();
    let h0 = hash(moduli, v.clone());
    let h1 = hash(moduli, v.iter().map(|x| x ^ delta).collect());
    let mut out = pack::BitWriter::with_capacity(8 * delta_ot_correction_bytes(moduli, n));
    for i in 0..n {
        let m = moduli(i);
        out.push(m.add(m.add(h0[i], h1[i]), deltas[i]), m.bits());
    }
    Ok((out.finish(), DeltaOtSend { h0, h1 }))
}

/// The receiver's side of Δ-OTs begun by [`delta_ot_begin_receive`], waiting for the
/// sender's corrections.
#[derive(Debug)]
pub struct DeltaOtReceive {
    h: Vec<u128>,
    choices: Vec<bool>,
}

impl DeltaOtReceive {
    /// The receiver's outputs `b = a + c·Δ`, from the sender's packed corrections (from
    /// `peer`, named in the error when they are malformed).
    pub fn finish(
        self,
        peer: veil_mpc::PartyId,
        moduli: &dyn Fn(usize) -> Modulus,
        bytes: &[u8],
    ) -> Result<Vec<u128>> {
        let n = self.choices.len();
        let bits: usize = (0..n).map(|i| moduli(i).bits() as usize).sum();
        let padding_clear = bits.is_multiple_of(8) || bytes.last().is_none_or(|&b| b >> (bits % 8) == 0);
        if bytes.len() != bits.div_ceil(8) || !padding_clear {
            return Err(malformed(
                peer,
                STEP_CORRECTION,
                format!("expected {bits} bits of corrections, got {} bytes", bytes.len()),
            ));
        }
        let mut pos = 0;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let m = moduli(i);
            let b = pack::get_at(bytes, pos, m.bits());
            pos += m.bits() as usize;
            if !m.contains(b) {
                return Err(malformed(peer, STEP_CORRECTION, format!("an element is not in {m:?}")));
            }
            out.push(if self.choices[i] { m.sub(b, self.h[i]) } else { self.h[i] });
        }
        Ok(out)
    }
}

/// Begins Δ-OTs as receiver with choices `c`, instance `i` over `moduli(i)`: draws the COTs
/// and returns the flips `c' = u ⊕ c` to send.
pub fn delta_ot_begin_receive(
    ctx: &mut Ctx,
    r: &mut dyn CotReceiver,
    moduli: &dyn Fn(usize) -> Modulus,
    choices: &[bool],
) -> Result<(Vec<bool>, DeltaOtReceive)> {
    let n = choices.len();
    check_all(moduli, n)?;
    let w = r.receive_random(ctx, n)?;
    let flips: Vec<bool> = w.iter().zip(choices).map(|(&w, &c)| lsb(w) ^ c).collect();
    Ok((flips, DeltaOtReceive { h: hash(moduli, w), choices: choices.to_vec() }))
}

/// Sender of Δ-OT with correlations `deltas` (canonical elements of Z_M): returns `a` with
/// the receiver's `b = a + c·Δ`.
pub fn delta_ot_send(ctx: &mut Ctx, s: &mut dyn CotSender, m: Modulus, deltas: &[u128]) -> Result<Vec<u128>> {
    let (corrections, pending) = delta_ot_begin_send(ctx, s, &|_| m, deltas)?;
    ctx.net().send(s.peer(), corrections)?;
    let flips = io::recv_bits(ctx, s.peer(), deltas.len(), STEP_CHOICE)?;
    Ok(pending.finish(&flips))
}

/// Receiver of Δ-OT with choices `c`: returns `b = a + c·Δ`.
pub fn delta_ot_receive(
    ctx: &mut Ctx,
    r: &mut dyn CotReceiver,
    m: Modulus,
    choices: &[bool],
) -> Result<Vec<u128>> {
    let (flips, pending) = delta_ot_begin_receive(ctx, r, &|_| m, choices)?;
    io::send_bits(ctx, r.peer(), &flips)?;
    let bytes = ctx.recv_for(r.peer(), delta_ot_correction_bytes(&|_| m, choices.len()), STEP_CORRECTION)?;
    pending.finish(r.peer(), &|_| m, &bytes)
}
