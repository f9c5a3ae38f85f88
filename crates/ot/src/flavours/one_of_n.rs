//! 1-out-of-N OT of ℓ-bit messages (ℓ ≤ 128, N = 2^m) from m random COTs (Naor and Pinkas,
//! "Computationally Secure Oblivious Transfer", the reduction to 1-out-of-2 OT).
//!
//! Instance `i` uses m COTs, derandomized to the bits of the receiver's index `j*`. Level `l`
//! has the keys `k_l^0 = v_l` and `k_l^1 = v_l ⊕ Δ`; each key is stretched into `N·ℓ` bits
//! `G_{i,l}(k) = H(k, t_{i,l,0}) ‖ H(k, t_{i,l,1}) ‖ …` (TCR hash, tweaks unique per instance,
//! level and block), and message `j` is masked with `⊕_l G_{i,l}(k_l^{j_l})[j]`, the `j`-th
//! ℓ-bit chunk. The receiver knows `k_l^{j*_l}` only; for every `j ≠ j*` some level has
//! `j_l ≠ j*_l`, whose stretched key it cannot tell from random, and each `j` reads its own
//! chunk of it, so the masks of different messages are independent. (A mask that hashed the
//! XOR of keys, or XORed per-key hashes shared by all `j`, would let the receiver combine
//! messages.)
//!
//! Cost: `m` bits from the receiver, `N·ℓ` bits from the sender, one message each way per
//! piece of [`PIECE`] instances, two latency rounds; `2m·⌈N·ℓ/128⌉` TCR hashes at the sender,
//! half that at the receiver. The sender's messages come from a function and the work runs a
//! piece at a time, so millions of instances never sit in memory.

use rayon::prelude::*;
use veil_mpc::{Ctx, MpcError, Result};

use crate::block::Block;
use crate::cot::{CotReceiver, CotSender};
use crate::flavours::{chosen_cot_receive, chosen_cot_send};
use crate::io::malformed;
use crate::prp::{Prp, tcr_hash};
use veil_mpc::packing::{self as pack, mask};

const STEP: &str = "1-of-N OT: masked messages";
/// Instances hashed per task (small enough that a task's buffers come from the allocator's
/// free lists, not fresh pages).
const TASK: usize = 1 << 10;

fn check(log_n: u32, bits: u32) -> Result<()> {
    if !(1..=16).contains(&log_n) || !(1..=128).contains(&bits) {
        return Err(MpcError::Invalid(format!("1-of-2^{log_n} OT of {bits}-bit messages is not supported")));
    }
    Ok(())
}

/// 128-bit blocks per stretched key.
fn blocks_per_key(log_n: u32, bits: u32) -> usize {
    ((bits as usize) << log_n).div_ceil(128)
}

/// Stretches keys: `keys[k]` (instance `first + k / m`, level `k % m`) into `w` blocks each.
fn stretch(prp: &Prp, keys: &[Block], first: usize, m: usize, w: usize) -> Vec<Block> {
    let mut out: Vec<Block> = keys.iter().flat_map(|&k| std::iter::repeat_n(k, w)).collect();
    // Tweak of (instance, level, block): consecutive, so one base and the index suffice.
    tcr_hash(prp, &mut out, (first * m * w) as u128);
    out
}

/// The `ℓ`-bit chunk `j` of a stretched key (`w` blocks).
fn chunk(key: &[Block], j: usize, bits: u32) -> u128 {
    let pos = j * bits as usize;
    let (b, off) = (pos / 128, (pos % 128) as u32);
    let mut v = key[b] >> off;
    if off + bits > 128 {
        v |= key[b + 1] << (128 - off);
    }
    v & mask(bits)
}

/// Instances per piece: COTs are drawn, corrected and answered a piece at a time, so no
/// party holds more than a piece's blocks (a whole batch of millions would be gigabytes).
pub const PIECE: usize = 1 << 16;

/// Sender of `count` instances: message `j` of instance `i` is `message(i, j)` (its low
/// `bits` bits). Per piece of [`PIECE`] instances: draw the COTs, read the receiver's
/// corrections for them, send the masked messages.
pub fn one_of_n_send_with(
    ctx: &mut Ctx,
    s: &mut dyn CotSender,
    log_n: u32,
    bits: u32,
    count: usize,
    message: impl Fn(usize, usize) -> u128 + Sync,
) -> Result<()> {
    check(log_n, bits)?;
    let (m, n, w) = (log_n as usize, 1usize << log_n, blocks_per_key(log_n, bits));
    let delta = s.delta();
    let prp = Prp::fixed("ot/one-of-n");
    for start in (0..count).step_by(PIECE) {
        let size = PIECE.min(count - start);
        let v = chosen_cot_send(ctx, s, size * m)?;
        // Each task packs its own instances: TASK·N·ℓ bits is a whole number of bytes, so
        // the tasks' bytes join into one packing.
        let packed: Vec<Vec<u8>> = v
            .par_chunks(TASK * m)
            .enumerate()
            .map(|(task, keys)| {
                let first = start + task * TASK;
                let zero = stretch(&prp, keys, first, m, w);
                let one = stretch(&prp, &keys.iter().map(|k| k ^ delta).collect::<Vec<_>>(), first, m, w);
                let mut masked = Vec::with_capacity(keys.len() / m * n);
                for i in 0..keys.len() / m {
                    for j in 0..n {
                        let mut pad = 0u128;
                        for l in 0..m {
                            let side = if j >> l & 1 == 1 { &one } else { &zero };
                            pad ^= chunk(&side[(i * m + l) * w..(i * m + l + 1) * w], j, bits);
                        }
                        masked.push((message(first + i, j) ^ pad) & mask(bits));
                    }
                }
                pack::pack(&masked, bits)
            })
            .collect();
        ctx.net().send(s.peer(), packed.concat())?;
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
    let n = 1usize << log_n;
    if !messages.len().is_multiple_of(n) {
        return Err(MpcError::Invalid(format!("{} messages are not whole instances of {n}", messages.len())));
    }
    one_of_n_send_with(ctx, s, log_n, bits, messages.len() / n, |i, j| messages[i * n + j])
}

/// Receiver: message `indices[i]` of each instance. Per piece: draw the COTs, send the
/// corrections to the piece's indices and keep only the ℓ-bit pads; the masked messages are
/// read after every piece's corrections went out (two latency rounds in all).
pub fn one_of_n_receive(
    ctx: &mut Ctx,
    r: &mut dyn CotReceiver,
    log_n: u32,
    bits: u32,
    indices: &[usize],
) -> Result<Vec<u128>> {
    check(log_n, bits)?;
    let (m, n, w) = (log_n as usize, 1usize << log_n, blocks_per_key(log_n, bits));
    if let Some(&bad) = indices.iter().find(|&&j| j >= n) {
        return Err(MpcError::Invalid(format!("index {bad} is out of range for 1-of-{n} OT")));
    }
    let prp = Prp::fixed("ot/one-of-n");
    let pieces: Vec<&[usize]> = indices.chunks(PIECE).collect();
    let mut pads = vec![0u128; indices.len()];
    let mut out = vec![0u128; indices.len()];
    // Pieces whose masked messages are still to read. The sender's engine sends its own
    // messages when it runs out of COTs made ahead, right after the masked messages of the
    // pieces before: those are read first, so both sides take the channel in one order (the
    // engines' counts agree, so both know when that happens).
    let mut unread = 0usize;
    for (piece, idx) in pieces.iter().enumerate() {
        if r.prepared() < idx.len() * m {
            for (p, idx) in pieces.iter().enumerate().take(piece).skip(unread) {
                read_masked(ctx, r.peer(), bits, n, idx, p * PIECE, &pads, &mut out)?;
            }
            unread = piece;
        }
        let start = piece * PIECE;
        let choices: Vec<bool> = idx.iter().flat_map(|&j| (0..m).map(move |l| j >> l & 1 == 1)).collect();
        let keys = chosen_cot_receive(ctx, r, &choices)?;
        let piece_pads: Vec<u128> = keys
            .par_chunks(TASK * m)
            .zip(idx.par_chunks(TASK))
            .enumerate()
            .flat_map_iter(|(task, (keys, idx))| {
                let first = start + task * TASK;
                let known = stretch(&prp, keys, first, m, w);
                idx.iter()
                    .enumerate()
                    .map(|(i, &j)| {
                        (0..m).fold(0u128, |acc, l| {
                            acc ^ chunk(&known[(i * m + l) * w..(i * m + l + 1) * w], j, bits)
                        })
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        pads[start..start + idx.len()].copy_from_slice(&piece_pads);
    }
    for (p, idx) in pieces.iter().enumerate().skip(unread) {
        read_masked(ctx, r.peer(), bits, n, idx, p * PIECE, &pads, &mut out)?;
    }
    Ok(out)
}

/// Reads the masked messages of one piece (first instance `start`) and unmasks the chosen ones.
#[allow(clippy::too_many_arguments)]
fn read_masked(
    ctx: &mut Ctx,
    peer: veil_mpc::PartyId,
    bits: u32,
    n: usize,
    idx: &[usize],
    start: usize,
    pads: &[u128],
    out: &mut [u128],
) -> Result<()> {
    let bytes = ctx.net().recv(peer)?;
    if !pack::fits(&bytes, bits, idx.len() * n) {
        return Err(malformed(
            peer,
            STEP,
            format!("expected {} packed {bits}-bit messages, got {} bytes", idx.len() * n, bytes.len()),
        ));
    }
    for (i, &j) in idx.iter().enumerate() {
        out[start + i] = (pack::get(&bytes, bits, i * n + j) ^ pads[start + i]) & mask(bits);
    }
    Ok(())
}
