//! Base OT: random 1-out-of-2 OT from the Diffie–Hellman assumption over Ristretto
//! (Chou and Orlandi, "The Simplest Protocol for Oblivious Transfer"), the public-key step
//! that every OT extension starts from, run once per pair of parties and session.
//!
//! ```text
//! S: a ←$ Z_q,  A = a·G                                  S → R: A
//! R: for each i, b_i ←$ Z_q,  B_i = b_i·G + c_i·A        R → S: B_1 … B_n
//! S: k0_i = H(sid, i, A, B_i, a·B_i),  k1_i = H(sid, i, A, B_i, a·(B_i − A))
//! R: k_{c_i} = H(sid, i, A, B_i, b_i·A)
//! ```
//!
//! `a·B_i − c_i·a·A = b_i·a·G`, so the receiver's key is the chosen one; the other key needs
//! `a·b_i·G ± a²·G`, a computational Diffie–Hellman problem.
//!
//! **Security.** Ristretto is a prime-order group, so `B_i` is uniform whatever `c_i` is: a
//! malicious sender learns nothing of the choices. Against a malicious receiver the keys hash
//! the whole transcript of the instance (`A`, `B_i`) with the session id, the pair of parties
//! and the index, the fix for the attacks on the original protocol found in later analyses
//! ("Simplest OT" as in Hauck and Loss, "Efficient and Universally Composable Protocols for
//! Oblivious Transfer from the CDH Assumption"): a receiver cannot make two instances share a
//! key or replay keys of another session. Points are checked on decoding (an encoding that is
//! not a Ristretto point, or the identity, is a malformed message). The keys are random OT
//! keys; OT extension turns 128 of them into any number of OTs.

use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use subtle::{Choice, ConditionallySelectable};
use veil_crypto::Hasher;
use veil_mpc::{Ctx, PartyId, Result};

use crate::block::Block;
use crate::io::{self, malformed};

const STEP_A: &str = "base OT: sender's point";
const STEP_B: &str = "base OT: receiver's points";

fn random_scalar(ctx: &mut Ctx) -> Scalar {
    let mut wide = [0u8; 64];
    ctx.rng().fill_bytes(&mut wide);
    Scalar::from_bytes_mod_order_wide(&wide)
}

fn decode_point(bytes: &[u8], from: PartyId, step: &str) -> Result<RistrettoPoint> {
    let point = CompressedRistretto::from_slice(bytes)
        .ok()
        .and_then(|c| c.decompress())
        .ok_or_else(|| malformed(from, step, "not the encoding of a Ristretto point"))?;
    if point == RistrettoPoint::identity() {
        return Err(malformed(from, step, "the identity point"));
    }
    Ok(point)
}

/// The key of instance `i`: a hash of the session, the two parties (sender first), the
/// instance's transcript and the shared point.
fn key(
    ctx: &Ctx,
    sender: PartyId,
    receiver: PartyId,
    i: usize,
    a: &[u8],
    b: &[u8],
    shared: &RistrettoPoint,
) -> Block {
    let mut h = Hasher::new("veil/ot/base");
    h.update(&ctx.session().0);
    h.update(&(sender as u64).to_le_bytes());
    h.update(&(receiver as u64).to_le_bytes());
    h.update(&(i as u64).to_le_bytes());
    h.update(a);
    h.update(b);
    h.update(shared.compress().as_bytes());
    let d = h.finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&d.0[..16]);
    u128::from_le_bytes(out)
}

/// Sender of `n` random OTs to `peer`: returns the key pairs `(k0_i, k1_i)`.
pub fn send(ctx: &mut Ctx, peer: PartyId, n: usize) -> Result<Vec<(Block, Block)>> {
    io::check_peer(ctx, peer)?;
    let a = random_scalar(ctx);
    let big_a = &a * RISTRETTO_BASEPOINT_TABLE;
    let a_bytes = big_a.compress().to_bytes();
    ctx.net().send(peer, a_bytes.to_vec())?;
    let bytes = io::recv_exact(ctx, peer, 32 * n, STEP_B)?;
    let me = ctx.party();
    let mut keys = Vec::with_capacity(n);
    for (i, b_bytes) in bytes.chunks_exact(32).enumerate() {
        let big_b = decode_point(b_bytes, peer, STEP_B)?;
        let k0 = key(ctx, me, peer, i, &a_bytes, b_bytes, &(a * big_b));
        let k1 = key(ctx, me, peer, i, &a_bytes, b_bytes, &(a * (big_b - big_a)));
        keys.push((k0, k1));
    }
    Ok(keys)
}

/// Receiver of random OTs from `peer` with the given choices: returns `k_{c_i}`.
pub fn receive(ctx: &mut Ctx, peer: PartyId, choices: &[bool]) -> Result<Vec<Block>> {
    io::check_peer(ctx, peer)?;
    let a_bytes = io::recv_exact(ctx, peer, 32, STEP_A)?;
    let big_a = decode_point(&a_bytes, peer, STEP_A)?;
    let mut scalars = Vec::with_capacity(choices.len());
    let mut message = Vec::with_capacity(32 * choices.len());
    for &c in choices {
        let b = random_scalar(ctx);
        // B = b·G + c·A without a branch on the secret choice.
        let chosen = RistrettoPoint::conditional_select(
            &RistrettoPoint::identity(),
            &big_a,
            Choice::from(u8::from(c)),
        );
        let big_b = &b * RISTRETTO_BASEPOINT_TABLE + chosen;
        message.extend_from_slice(big_b.compress().as_bytes());
        scalars.push(b);
    }
    let me = ctx.party();
    let keys = scalars
        .iter()
        .enumerate()
        .map(|(i, b)| key(ctx, peer, me, i, &a_bytes, &message[32 * i..32 * (i + 1)], &(b * big_a)))
        .collect();
    ctx.net().send(peer, message)?;
    Ok(keys)
}
