//! Chosen-choice COT, random OT and chosen-message 1-of-2 OT from random COT.
//!
//! Derandomizing a random COT `w = v ⊕ u·Δ` (u = lsb(w)) to a chosen bit `c`: the receiver
//! sends `d = c ⊕ u`, the sender swaps its two messages where `d = 1` (`v' = v ⊕ d·Δ`), so
//! that `w = v' ⊕ c·Δ` (Beaver's derandomization).

use veil_mpc::{Ctx, Result};

use crate::block::{Block, lsb, select};
use crate::cot::{CotReceiver, CotSender};
use crate::io;
use crate::prp::{Prp, tcr_hash};

const STEP_CHOICE: &str = "COT: choice corrections";
const STEP_MESSAGES: &str = "chosen-message OT: masked messages";

fn hash(label: &str, mut xs: Vec<Block>) -> Vec<Block> {
    tcr_hash(&Prp::fixed(label), &mut xs, 0);
    xs
}

/// COT with the receiver's choices: returns the sender's `v'` with `w = v' ⊕ c·Δ`.
pub fn chosen_cot_send(ctx: &mut Ctx, s: &mut dyn CotSender, n: usize) -> Result<Vec<Block>> {
    let mut v = s.send_random(ctx, n)?;
    let d = io::recv_bits(ctx, s.peer(), n, STEP_CHOICE)?;
    let delta = s.delta();
    for (x, d) in v.iter_mut().zip(d) {
        *x ^= select(d, delta);
    }
    Ok(v)
}

/// COT with chosen choices `c`: returns `w = v' ⊕ c·Δ`.
pub fn chosen_cot_receive(ctx: &mut Ctx, r: &mut dyn CotReceiver, choices: &[bool]) -> Result<Vec<Block>> {
    let w = r.receive_random(ctx, choices.len())?;
    let d: Vec<bool> = w.iter().zip(choices).map(|(&w, &c)| lsb(w) ^ c).collect();
    io::send_bits(ctx, r.peer(), &d)?;
    Ok(w)
}

/// Random OT: the sender's pairs `(m0, m1)`; nothing is sent.
pub fn random_ot_send(ctx: &mut Ctx, s: &mut dyn CotSender, n: usize) -> Result<Vec<(Block, Block)>> {
    let v = s.send_random(ctx, n)?;
    let delta = s.delta();
    let m0 = hash("ot/random", v.clone());
    let m1 = hash("ot/random", v.iter().map(|x| x ^ delta).collect());
    Ok(m0.into_iter().zip(m1).collect())
}

/// Random OT: the receiver's random choices and `m_c`.
pub fn random_ot_receive(
    ctx: &mut Ctx,
    r: &mut dyn CotReceiver,
    n: usize,
) -> Result<(Vec<bool>, Vec<Block>)> {
    let w = r.receive_random(ctx, n)?;
    let c = w.iter().map(|&x| lsb(x)).collect();
    Ok((c, hash("ot/random", w)))
}

/// 1-of-2 OT of the sender's `(m0, m1)`; the receiver learns `m_c` only.
pub fn chosen_ot_send(ctx: &mut Ctx, s: &mut dyn CotSender, messages: &[(Block, Block)]) -> Result<()> {
    let v = chosen_cot_send(ctx, s, messages.len())?;
    let delta = s.delta();
    let h0 = hash("ot/chosen", v.clone());
    let h1 = hash("ot/chosen", v.iter().map(|x| x ^ delta).collect());
    let mut masked = Vec::with_capacity(2 * messages.len());
    for ((&(m0, m1), a), b) in messages.iter().zip(h0).zip(h1) {
        masked.push(m0 ^ a);
        masked.push(m1 ^ b);
    }
    io::send_blocks(ctx, s.peer(), &masked)
}

/// 1-of-2 OT: the receiver's `m_{c_i}` for each choice.
pub fn chosen_ot_receive(ctx: &mut Ctx, r: &mut dyn CotReceiver, choices: &[bool]) -> Result<Vec<Block>> {
    let w = chosen_cot_receive(ctx, r, choices)?;
    let masked = io::recv_blocks(ctx, r.peer(), 2 * choices.len(), STEP_MESSAGES)?;
    let h = hash("ot/chosen", w);
    Ok(h.iter().zip(choices).enumerate().map(|(i, (&h, &c))| masked[2 * i + usize::from(c)] ^ h).collect())
}
