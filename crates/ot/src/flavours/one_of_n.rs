//! 1-out-of-N OT of ℓ-bit messages (ℓ ≤ 128, N = 2^m) from m random COTs (Naor and Pinkas,
//! "Computationally Secure Oblivious Transfer", the reduction to 1-out-of-2 OT).
//!
//! Instance `i` uses m COTs, derandomized to the bits of the receiver's index `j*`. Message
//! `j` is masked with `⊕_l H(k_l^{j_l}, tweak(i, l, j))` where `k_l^0 = v_l`,
//! `k_l^1 = v_l ⊕ Δ`. The receiver knows `k_l^{j*_l}` only; for every `j ≠ j*` some `l` has
//! `j_l ≠ j*_l`, whose key it does not know, and the tweak includes `j`, so the masks of
//! different messages are independent (a mask built as a hash of the XOR of keys, or an XOR
//! of per-key hashes without `j` in the tweak, would let the receiver combine messages).
//!
//! Messages are fused: many instances with the same chooser can share one index, and a
//! message of ℓ bits costs ℓ bits on the wire. Cost: m bits from the receiver, N·ℓ bits from
//! the sender.

use veil_mpc::{Ctx, MpcError, Result};

use crate::block::Block;
use crate::cot::{CotReceiver, CotSender};
use crate::flavours::{chosen_cot_receive, chosen_cot_send};
use crate::io::malformed;
use crate::pack::{self, mask};
use crate::prp::Prp;

const STEP: &str = "1-of-N OT: masked messages";

/// `H(k, t) = π(π(k) ⊕ t) ⊕ π(k)` with `π(k)` given.
fn tweaked(prp: &Prp, pk: Block, tweak: u128) -> Block {
    prp.permute_one(pk ^ tweak) ^ pk
}

fn tweak(instance: usize, level: usize, index: usize) -> u128 {
    (instance as u128) << 64 | (level as u128) << 32 | index as u128
}

fn check(log_n: u32, bits: u32) -> Result<()> {
    if !(1..=16).contains(&log_n) || !(1..=128).contains(&bits) {
        return Err(MpcError::Invalid(format!("1-of-2^{log_n} OT of {bits}-bit messages is not supported")));
    }
    Ok(())
}

/// Sender: `messages[i * N + j]` is message `j` of instance `i` (low `bits` bits used).
pub fn one_of_n_send(
    ctx: &mut Ctx,
    s: &mut dyn CotSender,
    log_n: u32,
    bits: u32,
    messages: &[u128],
) -> Result<()> {
    check(log_n, bits)?;
    let (m, n) = (log_n as usize, 1usize << log_n);
    if !messages.len().is_multiple_of(n) {
        return Err(MpcError::Invalid(format!("{} messages are not whole instances of {n}", messages.len())));
    }
    let count = messages.len() / n;
    let v = chosen_cot_send(ctx, s, count * m)?;
    let delta = s.delta();
    let prp = Prp::fixed("ot/one-of-n");
    let mut keys: Vec<Block> = v.iter().flat_map(|&x| [x, x ^ delta]).collect();
    prp.permute(&mut keys);
    let mut masked = Vec::with_capacity(messages.len());
    for i in 0..count {
        for j in 0..n {
            let mut pad = 0u128;
            for l in 0..m {
                let bit = j >> l & 1;
                pad ^= tweaked(&prp, keys[2 * (i * m + l) + bit], tweak(i, l, j));
            }
            masked.push((messages[i * n + j] ^ pad) & mask(bits));
        }
    }
    Ok(ctx.net().send(s.peer(), pack::pack(&masked, bits))?)
}

/// Receiver: message `indices[i]` of each instance.
pub fn one_of_n_receive(
    ctx: &mut Ctx,
    r: &mut dyn CotReceiver,
    log_n: u32,
    bits: u32,
    indices: &[usize],
) -> Result<Vec<u128>> {
    check(log_n, bits)?;
    let (m, n) = (log_n as usize, 1usize << log_n);
    if let Some(&bad) = indices.iter().find(|&&j| j >= n) {
        return Err(MpcError::Invalid(format!("index {bad} is out of range for 1-of-{n} OT")));
    }
    let choices: Vec<bool> = indices.iter().flat_map(|&j| (0..m).map(move |l| j >> l & 1 == 1)).collect();
    let mut w = chosen_cot_receive(ctx, r, &choices)?;
    let bytes = ctx.net().recv(r.peer())?;
    let count = indices.len();
    let masked = pack::unpack(&bytes, bits, count * n).ok_or_else(|| {
        malformed(
            r.peer(),
            STEP,
            format!("expected {} packed {bits}-bit messages, got {} bytes", count * n, bytes.len()),
        )
    })?;
    let prp = Prp::fixed("ot/one-of-n");
    prp.permute(&mut w);
    Ok(indices
        .iter()
        .enumerate()
        .map(|(i, &j)| {
            let pad = (0..m).fold(0u128, |acc, l| acc ^ tweaked(&prp, w[i * m + l], tweak(i, l, j)));
            (masked[i * n + j] ^ pad) & mask(bits)
        })
        .collect())
}
