//! 1-out-of-N OT of short messages (N = 2^m, message widths up to 128 bits, each instance
//! its own N and width: a [`Shape`]) from m random COTs (Naor and Pinkas, "Computationally
//! Secure Oblivious Transfer", the reduction to 1-out-of-2 OT).
//!
//! Instance `i` has messages of `w_i` bits and uses m COTs, derandomized to the bits of the
//! receiver's index `j*`. Level `l` has the keys `k_l^0 = v_l` and `k_l^1 = v_l ⊕ Δ`; each key
//! is stretched into a *row* of `N·w_i` bits `G_{i,l}(k) = H(k, t_{i,l,0}) ‖ H(k, t_{i,l,1}) ‖ …`
//! (TCR hash, tweaks unique per instance, level and block), and message `j` is masked with
//! `⊕_l G_{i,l}(k_l^{j_l})[j]`, the `j`-th `w_i`-bit chunk. The receiver knows `k_l^{j*_l}`
//! only; for every `j ≠ j*` some level has `j_l ≠ j*_l`, whose stretched key it cannot tell
//! from random, and each `j` reads its own chunk of it, so the masks of different messages are
//! independent. (A mask that hashed the XOR of keys, or XORed per-key hashes shared by all `j`,
//! would let the receiver combine messages.)
//!
//! The sender masks a whole row at once: with `M_l` the bits of the chunks `j` whose bit `l`
//! is set, the row of pads is `⊕_l (G(k_l^0) ∧ ¬M_l) ∨ (G(k_l^1) ∧ M_l)`, a few word
//! operations per 128 bits instead of one chunk at a time per message and level. The masked
//! rows go out back to back, `N·w_i` bits each.
//!
//! Cost: `m` bits from the receiver, `Σ N·w_i` bits from the sender, one message each way per
//! piece of [`PIECE`] instances, two latency rounds; `2m·⌈N·w_i/128⌉` TCR hashes at the sender,
//! half that at the receiver. The sender's rows come from a function and the work runs a piece
//! at a time, so millions of instances never sit in memory.

use rayon::prelude::*;
use veil_mpc::{Ctx, MpcError, Result};

use crate::block::Block;
use crate::cot::{CotReceiver, CotSender};
use crate::flavours::{chosen_cot_receive, chosen_cot_send};
use crate::io::malformed;
use crate::prp::{Prp, tcr_hash};
use veil_mpc::packing::{BitWriter, get_at, mask};

const STEP: &str = "1-of-N OT: masked messages";
/// Instances hashed per task (small enough that a task's buffers come from the allocator's
/// free lists, not fresh pages).
const TASK: usize = 1 << 10;

/// Instances per piece: COTs are drawn, corrected and answered a piece at a time, so no
/// party holds more than a piece's blocks (a whole batch of millions would be gigabytes).
pub const PIECE: usize = 1 << 16;

/// The shape of one instance: `2^log_n` messages of `bits` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// `log2 N` (1 to 16): the COTs the instance uses.
    pub log_n: u32,
    /// Message width (1 to 128).
    pub bits: u32,
}

impl Shape {
    /// 128-bit blocks in a row of the instance's messages.
    fn blocks(self) -> usize {
        row_blocks(self.log_n, self.bits)
    }

    /// Bits in a row.
    fn row_bits(self) -> usize {
        (self.bits as usize) << self.log_n
    }
}

fn check(shapes: impl Iterator<Item = Shape>) -> Result<()> {
    for Shape { log_n, bits } in shapes {
        if !(1..=16).contains(&log_n) {
            return Err(MpcError::Invalid(format!("1-of-2^{log_n} OT is not supported")));
        }
        if !(1..=128).contains(&bits) {
            return Err(MpcError::Invalid(format!(
                "1-of-2^{log_n} OT of {bits}-bit messages is not supported"
            )));
        }
    }
    Ok(())
}

/// First COT of each instance of a piece (instance `i` of the piece uses
/// `log_n` COTs from `offsets[i]`), and the total as the last entry.
fn cot_offsets(shapes: &[Shape]) -> Vec<usize> {
    let mut offsets = Vec::with_capacity(shapes.len() + 1);
    let mut at = 0;
    for s in shapes {
        offsets.push(at);
        at += s.log_n as usize;
    }
    offsets.push(at);
    offsets
}

/// 128-bit blocks in a row of `N` messages of `bits` bits.
fn row_blocks(log_n: u32, bits: u32) -> usize {
    ((bits as usize) << log_n).div_ceil(128)
}

/// The stretched keys of a task's instances, one row per (instance, level), laid out
/// instance by instance: `offsets[i]` is the first block of instance `i`'s rows.
struct Rows {
    blocks: Vec<Block>,
    offsets: Vec<usize>,
}

/// Stretches `keys` (instance `i` of the task has the next `shapes[i].log_n`, one per level)
/// into rows: instance `i` gets `log_n` rows of [`Shape::blocks`] blocks each. The tweak of a
/// block is the task's first instance (high bits) and the block's position in the task (low
/// 32 bits), so no tweak repeats within a call.
fn stretch(prp: &Prp, keys: &[Block], shapes: &[Shape], first: usize) -> Rows {
    let mut offsets = Vec::with_capacity(shapes.len());
    let mut blocks = Vec::new();
    let mut keys = keys.iter();
    for shape in shapes {
        offsets.push(blocks.len());
        for &k in keys.by_ref().take(shape.log_n as usize) {
            blocks.extend(std::iter::repeat_n(k, shape.blocks()));
        }
    }
    tcr_hash(prp, &mut blocks, (first as u128) << 32);
    Rows { blocks, offsets }
}

/// `M_l` for every level: block `b` of level `l` (at `l·W + b`) has bit `p` set when the chunk
/// holding bit `128·b + p` of the row has bit `l` of its index set.
fn level_masks(log_n: u32, bits: u32) -> Vec<Block> {
    let w = row_blocks(log_n, bits);
    let mut masks = vec![0u128; log_n as usize * w];
    for l in 0..log_n as usize {
        for j in (0..1usize << log_n).filter(|j| j >> l & 1 == 1) {
            for q in j * bits as usize..(j + 1) * bits as usize {
                masks[l * w + q / 128] |= 1u128 << (q % 128);
            }
        }
    }
    masks
}

/// The `bits`-bit chunk `j` of a row.
fn chunk(row: &[Block], j: usize, bits: u32) -> u128 {
    let pos = j * bits as usize;
    let (b, off) = (pos / 128, (pos % 128) as u32);
    let mut v = row[b] >> off;
    if off + bits > 128 {
        v |= row[b + 1] << (128 - off);
    }
    v & mask(bits)
}

/// Sender of `count` instances: message `j` of instance `i` is `message(i, j)` (its low
/// `bits` bits).
pub fn one_of_n_send_with(
    ctx: &mut Ctx,
    s: &mut dyn CotSender,
    log_n: u32,
    bits: u32,
    count: usize,
    message: impl Fn(usize, usize) -> u128 + Sync,
) -> Result<()> {
    let shape = Shape { log_n, bits };
    check(std::iter::once(shape))?;
    let n = 1usize << log_n;
    one_of_n_send_rows(
        ctx,
        s,
        count,
        |_| shape,
        |i, row| {
            for j in 0..n {
                let pos = j * bits as usize;
                let (b, off) = (pos / 128, (pos % 128) as u32);
                let v = message(i, j) & mask(bits);
                row[b] |= v << off;
                if off + bits > 128 {
                    row[b + 1] |= v >> (128 - off);
                }
            }
        },
    )
}

/// Sender: `messages[i * N + j]` is message `j` of instance `i` (low `bits` bits used).
pub fn one_of_n_send(
    ctx: &mut Ctx,
    s: &mut dyn CotSender,
    log_n: u32,
    bits: u32,
    messages: &[u128],
) -> Result<()> {
    check(std::iter::once(Shape { log_n, bits }))?;
    let n = 1usize << log_n;
    if !messages.len().is_multiple_of(n) {
        return Err(MpcError::Invalid(format!("{} messages are not whole instances of {n}", messages.len())));
    }
    one_of_n_send_with(ctx, s, log_n, bits, messages.len() / n, |i, j| messages[i * n + j])
}

/// Sender of `count` instances, instance `i` of shape `shape(i)`, given as rows:
/// `row(i, out)` writes the `N` messages of instance `i` into the zeroed `out`
/// (`⌈N·bits/128⌉` blocks), message `j` at bits `j·bits..`, least significant first.
/// Per piece of [`PIECE`] instances: draw the COTs, read the receiver's corrections for them,
/// send the masked rows.
pub fn one_of_n_send_rows(
    ctx: &mut Ctx,
    s: &mut dyn CotSender,
    count: usize,
    shape: impl Fn(usize) -> Shape + Sync,
    row: impl Fn(usize, &mut [Block]) + Sync,
) -> Result<()> {
    check((0..count).map(&shape))?;
    let delta = s.delta();
    let prp = Prp::fixed("ot/one-of-n");
    for start in (0..count).step_by(PIECE) {
        let shapes: Vec<Shape> = (start..count.min(start + PIECE)).map(&shape).collect();
        let cots = cot_offsets(&shapes);
        let v = chosen_cot_send(ctx, s, cots[shapes.len()])?;
        let tasks = shapes.len().div_ceil(TASK);
        let packed: Vec<(Vec<u8>, usize)> = (0..tasks)
            .into_par_iter()
            .map(|task| {
                let (lo, hi) = (task * TASK, shapes.len().min((task + 1) * TASK));
                let (first, shapes) = (start + lo, &shapes[lo..hi]);
                let keys = &v[cots[lo]..cots[hi]];
                let zero = stretch(&prp, keys, shapes, first);
                let flipped: Vec<Block> = keys.iter().map(|k| k ^ delta).collect();
                let one = stretch(&prp, &flipped, shapes, first);
                let mut masks: Vec<(Shape, Vec<Block>)> = Vec::new();
                let mut out = BitWriter::with_capacity(shapes.iter().map(|s| s.row_bits()).sum());
                let mut buf = Vec::new();
                for (i, &shape) in shapes.iter().enumerate() {
                    let w = shape.blocks();
                    if !masks.iter().any(|(s, _)| *s == shape) {
                        masks.push((shape, level_masks(shape.log_n, shape.bits)));
                    }
                    let level = masks.iter().find(|(s, _)| *s == shape).map_or(&[][..], |(_, v)| &v[..]);
                    buf.clear();
                    buf.resize(w, 0);
                    row(first + i, &mut buf);
                    let at = zero.offsets[i];
                    for l in 0..shape.log_n as usize {
                        let (z, o) = (&zero.blocks[at + l * w..][..w], &one.blocks[at + l * w..][..w]);
                        for b in 0..w {
                            let sel = level[l * w + b];
                            buf[b] ^= (z[b] & !sel) | (o[b] & sel);
                        }
                    }
                    let mut left = shape.row_bits();
                    for &b in &buf {
                        let take = left.min(128) as u32;
                        out.push(b, take);
                        left -= take as usize;
                    }
                }
                let len = out.len();
                (out.finish(), len)
            })
            .collect();
        if packed.iter().all(|(_, len)| len.is_multiple_of(8)) {
            ctx.net().send(s.peer(), packed.into_iter().flat_map(|(bytes, _)| bytes).collect())?;
        } else {
            let mut payload = BitWriter::with_capacity(packed.iter().map(|(_, len)| len).sum());
            for (bytes, len) in &packed {
                payload.append(bytes, *len);
            }
            ctx.net().send(s.peer(), payload.finish())?;
        }
    }
    Ok(())
}

/// Receiver: message `indices[i]` of each instance, all of `bits` bits.
pub fn one_of_n_receive(
    ctx: &mut Ctx,
    r: &mut dyn CotReceiver,
    log_n: u32,
    bits: u32,
    indices: &[usize],
) -> Result<Vec<u128>> {
    one_of_n_receive_rows(ctx, r, |_| Shape { log_n, bits }, indices)
}

/// Receiver: message `indices[i]` of each instance, instance `i` of shape `shape(i)` (the
/// shapes the sender used). Per piece: draw the COTs, send the corrections to the piece's
/// indices and keep only the pads of the chosen messages; the masked rows are read after
/// every piece's corrections went out (two latency rounds in all).
pub fn one_of_n_receive_rows(
    ctx: &mut Ctx,
    r: &mut dyn CotReceiver,
    shape: impl Fn(usize) -> Shape + Sync,
    indices: &[usize],
) -> Result<Vec<u128>> {
    check((0..indices.len()).map(&shape))?;
    if let Some((i, &bad)) = indices.iter().enumerate().find(|&(i, &j)| j >> shape(i).log_n != 0) {
        return Err(MpcError::Invalid(format!(
            "index {bad} is out of range for 1-of-{} OT",
            1usize << shape(i).log_n
        )));
    }
    let prp = Prp::fixed("ot/one-of-n");
    let pieces: Vec<&[usize]> = indices.chunks(PIECE).collect();
    let mut pads = vec![0u128; indices.len()];
    let mut out = vec![0u128; indices.len()];
    // Pieces whose masked rows are still to read. The sender's engine sends its own messages
    // when it runs out of COTs made ahead, right after the masked rows of the pieces before:
    // those are read first, so both sides take the channel in one order (the engines' counts
    // agree, so both know when that happens).
    let mut unread = 0usize;
    for (piece, idx) in pieces.iter().enumerate() {
        let start = piece * PIECE;
        let shapes: Vec<Shape> = (start..start + idx.len()).map(&shape).collect();
        let cots = cot_offsets(&shapes);
        if r.prepared() < cots[shapes.len()] {
            for (p, idx) in pieces.iter().enumerate().take(piece).skip(unread) {
                read_masked(ctx, r.peer(), &shape, idx, p * PIECE, &pads, &mut out)?;
            }
            unread = piece;
        }
        let choices: Vec<bool> =
            idx.iter().zip(&shapes).flat_map(|(&j, s)| (0..s.log_n).map(move |l| j >> l & 1 == 1)).collect();
        let keys = chosen_cot_receive(ctx, r, &choices)?;
        let tasks = shapes.len().div_ceil(TASK);
        let piece_pads: Vec<u128> = (0..tasks)
            .into_par_iter()
            .flat_map_iter(|task| {
                let (lo, hi) = (task * TASK, shapes.len().min((task + 1) * TASK));
                let shapes = &shapes[lo..hi];
                let known = stretch(&prp, &keys[cots[lo]..cots[hi]], shapes, start + lo);
                idx[lo..hi]
                    .iter()
                    .zip(shapes)
                    .enumerate()
                    .map(|(i, (&j, s))| {
                        let (w, at) = (s.blocks(), known.offsets[i]);
                        (0..s.log_n as usize)
                            .fold(0u128, |acc, l| acc ^ chunk(&known.blocks[at + l * w..][..w], j, s.bits))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        pads[start..start + idx.len()].copy_from_slice(&piece_pads);
    }
    for (p, idx) in pieces.iter().enumerate().skip(unread) {
        read_masked(ctx, r.peer(), &shape, idx, p * PIECE, &pads, &mut out)?;
    }
    Ok(out)
}

/// Reads the masked rows of one piece (first instance `start`) and unmasks the chosen
/// messages.
fn read_masked(
    ctx: &mut Ctx,
    peer: veil_mpc::PartyId,
    shape: &(impl Fn(usize) -> Shape + Sync),
    idx: &[usize],
    start: usize,
    pads: &[u128],
    out: &mut [u128],
) -> Result<()> {
    let total: usize = (start..start + idx.len()).map(|i| shape(i).row_bits()).sum();
    let bytes = ctx.recv_for(peer, total.div_ceil(8), STEP)?;
    let padding_clear = total.is_multiple_of(8) || bytes.last().is_none_or(|&b| b >> (total % 8) == 0);
    if bytes.len() != total.div_ceil(8) || !padding_clear {
        return Err(malformed(
            peer,
            STEP,
            format!("expected {total} bits of masked messages, got {} bytes", bytes.len()),
        ));
    }
    let mut pos = 0usize;
    for (i, &j) in idx.iter().enumerate() {
        let s = shape(start + i);
        out[start + i] = (get_at(&bytes, pos + j * s.bits as usize, s.bits) ^ pads[start + i]) & mask(s.bits);
        pos += s.row_bits();
    }
    Ok(())
}
