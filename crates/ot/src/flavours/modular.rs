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
//! Both messages go out before either is read: one round.

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

fn hash(m: Modulus, mut xs: Vec<Block>) -> Vec<u128> {
    tcr_hash(&Prp::fixed("ot/delta"), &mut xs, 0);
    xs.into_iter().map(|x| m.reduce(x)).collect()
}

/// Sender of Δ-OT with correlations `deltas` (canonical elements of Z_M): returns `a` with
/// the receiver's `b = a + c·Δ`.
pub fn delta_ot_send(ctx: &mut Ctx, s: &mut dyn CotSender, m: Modulus, deltas: &[u128]) -> Result<Vec<u128>> {
    m.check()?;
    if let Some(i) = deltas.iter().position(|&d| !m.contains(d)) {
        return Err(MpcError::Invalid(format!("Δ-OT correlation {i} is not an element of {m:?}")));
    }
    let n = deltas.len();
    let v = s.send_random(ctx, n)?;
    let delta = s.delta();
    let h0 = hash(m, v.clone());
    let h1 = hash(m, v.iter().map(|x| x ^ delta).collect());
    let corrections: Vec<u128> =
        h0.iter().zip(&h1).zip(deltas).map(|((&a, &b), &d)| m.add(m.add(a, b), d)).collect();
    ctx.net().send(s.peer(), pack::pack(&corrections, m.bits()))?;
    let flips = io::recv_bits(ctx, s.peer(), n, STEP_CHOICE)?;
    Ok(flips.iter().zip(h0.iter().zip(&h1)).map(|(&f, (&a, &b))| if f { b } else { a }).collect())
}

/// Receiver of Δ-OT with choices `c`: returns `b = a + c·Δ`.
pub fn delta_ot_receive(
    ctx: &mut Ctx,
    r: &mut dyn CotReceiver,
    m: Modulus,
    choices: &[bool],
) -> Result<Vec<u128>> {
    m.check()?;
    let n = choices.len();
    let w = r.receive_random(ctx, n)?;
    let flips: Vec<bool> = w.iter().zip(choices).map(|(&w, &c)| lsb(w) ^ c).collect();
    io::send_bits(ctx, r.peer(), &flips)?;
    let bytes = ctx.net().recv(r.peer())?;
    let corrections = pack::unpack(&bytes, m.bits(), n).ok_or_else(|| {
        malformed(
            r.peer(),
            STEP_CORRECTION,
            format!("expected {n} packed {}-bit elements, got {} bytes", m.bits(), bytes.len()),
        )
    })?;
    if corrections.iter().any(|&x| !m.contains(x)) {
        return Err(malformed(r.peer(), STEP_CORRECTION, format!("an element is not in {m:?}")));
    }
    let h = hash(m, w);
    Ok(h.iter()
        .zip(&corrections)
        .zip(choices)
        .map(|((&h, &b), &c)| if c { m.sub(b, h) } else { h })
        .collect())
}
