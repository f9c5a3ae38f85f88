//! Public random challenges of the verification ([`crate::verify`]), drawn so that a *rushing*
//! server cannot learn a challenge before the values it tests are fixed.
//!
//! A verification step has P1 and P2 exchange their shares of a masked inner product, then
//! draws the next challenge `ζ`. If a corrupted P1 could learn `ζ` before P2 received its
//! share, it would pick the share's error knowing `ζ` and make a false claim pass (for the
//! Goyal–Song reduction a single error `e·(1 − 2ζ)` on `h(0)` suffices). Opening a random
//! masked value is not enough: P0 sends P1 the only component it lacks in the same round, so a
//! rushing P1 reads it first. The challenge here is built so that each server learns it only
//! after every message that fixes the tested values has reached an honest server:
//!
//! - **Round 1.** P1 and P2 send each other their step's payload, and each sends P0 a fresh
//!   private 16-byte contribution (`a` from P1, `b` from P2) with a hiding commitment to the
//!   payload it sent (`H(salt, sender, payload)`, the salt known to P1 and P2 only, so P0
//!   cannot test guesses of the secret values behind a share). They also send each other a
//!   digest of the piece they share with P0 (`v01` at P1, `v02` at P2).
//! - **Round 2.** P0, after both contributions, knows the seed
//!   `H(a, b, v01, v02)` ([`veil_crypto::combine_seeds`]). It sends P1 `v02` and P2 `v01`,
//!   forwards each commitment to the other prover with a digest of `(a, b)` as it received
//!   them. Whatever it deals for the next step depends on the seed: it follows in a message of
//!   its own, sent in the same round after P0 has computed it, so P1 and P2 work on the next
//!   step (from the seed) while P0 computes its deal.
//! - P1 and P2 check `v` against the digest from the other prover, the forwarded commitment
//!   against the payload they received, and `(a, b)` against P0's digest; any mismatch aborts
//!   with the check named.
//!
//! Why this is safe: P1 learns the seed only from `v02`, which P0 sends after P2's round-1
//! message, and an honest P2 sends that after every earlier message of P1 has arrived; P1's
//! round-1 payload is bound by the commitment P0 holds before it releases anything. The same
//! holds for P2 by symmetry. P0 learns the seed from `a` and `b`, which honest P1 and P2 send
//! after every earlier message of P0 has arrived, and whatever P0 sends afterwards may depend
//! on the challenge (it belongs to the next step, whose own challenge is still to come). The
//! seed is uniform while one of `v01`, `v02` stays unknown to the adversary until the
//! contributions are fixed. Two challenges may be open at once (a pair of halvings,
//! [`crate::verify`]): each has its own contributions, pieces and commitments, and the
//! messages of both keep their order on every link, so each is finished as drawn. Cost: 2
//! rounds; per server at most 96 bytes plus the payload and the deal.

use veil_crypto::{Hasher, Seed, combine_seeds};
use veil_mpc::{Ctx, MpcError, PartyId, Result};

/// Bytes of a contribution and of a digest.
const COIN: usize = 16;
const HASH: usize = 32;

/// A challenge between its two rounds.
pub(crate) enum Pending {
    /// P0 has the seed and what it must forward.
    Dealer { seed: Seed, commits: [Vec<u8>; 2], contributions: Vec<u8>, pieces: [[u8; COIN]; 2] },
    /// P1 or P2: its contribution, the piece it shares with P0, and the salt.
    Prover { mine: [u8; COIN], piece: [u8; COIN], salt: [u8; COIN] },
}

impl Pending {
    /// The seed, at P0 after the first round (`None` at P1 and P2).
    pub(crate) fn seed(&self) -> Option<Seed> {
        match self {
            Pending::Dealer { seed, .. } => Some(seed.clone()),
            Pending::Prover { .. } => None,
        }
    }
}

/// What a challenge gives P1 or P2: the seed and the payload the other prover sent.
pub(crate) struct Drawn {
    pub(crate) seed: Seed,
    pub(crate) from_peer: Vec<u8>,
}

fn digest(purpose: &str, parts: &[&[u8]]) -> Vec<u8> {
    let mut h = Hasher::new(purpose);
    for p in parts {
        h.update_prefixed(p);
    }
    h.finalize().as_bytes().to_vec()
}

fn commitment(salt: &[u8], sender: PartyId, payload: &[u8]) -> Vec<u8> {
    digest("veil/aegis/challenge/commit", &[salt, &[sender as u8], payload])
}

fn piece(ctx: &mut Ctx, peer: PartyId, what: &str) -> Result<[u8; COIN]> {
    Ok(ctx.pair_prg(peer, &format!("{what}/coin"))?.next_block())
}

fn seed_of(what: &str, a: &[u8], b: &[u8], v01: &[u8; COIN], v02: &[u8; COIN]) -> Seed {
    let s = |v: &[u8]| Seed(v.try_into().unwrap_or([0; COIN]));
    combine_seeds(&format!("veil/aegis/{what}"), &[s(a), s(b), Seed(*v01), Seed(*v02)])
}

fn split(from: PartyId, msg: &[u8], tail: usize) -> Result<(&[u8], &[u8])> {
    msg.len().checked_sub(tail).map(|at| msg.split_at(at)).ok_or_else(|| MpcError::Malformed {
        from,
        what: format!("challenge message of {} bytes", msg.len()),
    })
}

/// Round 1 of a challenge: P1 and P2 send `payload` to each other (P0 passes an empty one)
/// and their contributions to P0; P0 receives them and learns the seed.
pub(crate) fn send(ctx: &mut Ctx, what: &str, payload: &[u8]) -> Result<Pending> {
    send_committed(ctx, what, payload, payload)
}

/// [`send`] committing to `committed` while sending `payload`: what a rushing prover that
/// changes its share after the commitment does (negative tests only).
pub(crate) fn send_committed(ctx: &mut Ctx, what: &str, payload: &[u8], committed: &[u8]) -> Result<Pending> {
    let me = ctx.party();
    if me == 0 {
        let (v01, v02) = (piece(ctx, 1, what)?, piece(ctx, 2, what)?);
        let mut got = Vec::new();
        for j in [1, 2] {
            let msg = ctx.recv_at_most(j, COIN + HASH)?;
            if msg.len() != COIN + HASH {
                return Err(MpcError::Malformed {
                    from: j,
                    what: format!("challenge message of {} bytes", msg.len()),
                });
            }
            got.push(msg);
        }
        let seed = seed_of(what, &got[0][..COIN], &got[1][..COIN], &v01, &v02);
        let contributions = digest("veil/aegis/challenge/contributions", &[&got[0][..COIN], &got[1][..COIN]]);
        let commits = [got[0][COIN..].to_vec(), got[1][COIN..].to_vec()];
        return Ok(Pending::Dealer { seed, commits, contributions, pieces: [v01, v02] });
    }
    let peer = 3 - me;
    let mut mine = [0u8; COIN];
    ctx.rng().fill_bytes(&mut mine);
    let piece = piece(ctx, 0, what)?;
    let salt = ctx.pair_prg(peer, &format!("{what}/salt"))?.next_block();
    let mut to_peer = payload.to_vec();
    to_peer.extend_from_slice(&mine);
    to_peer.extend(digest("veil/aegis/challenge/piece", &[&piece]));
    ctx.net().send(peer, to_peer)?;
    let mut to_p0 = mine.to_vec();
    to_p0.extend(commitment(&salt, me, committed));
    ctx.net().send(0, to_p0)?;
    Ok(Pending::Prover { mine, piece, salt })
}

/// Round 2: P0 releases the pieces and forwards the commitments (`None` returned at P0); P1
/// and P2 check everything and get the seed.
pub(crate) fn finish(ctx: &mut Ctx, what: &str, pending: Pending) -> Result<Option<Drawn>> {
    let me = ctx.party();
    match pending {
        Pending::Dealer { commits, contributions, pieces, .. } => {
            let [c1, c2] = commits;
            let [v01, v02] = pieces;
            ctx.net().send(1, [&v02[..], &c2, &contributions].concat())?;
            ctx.net().send(2, [&v01[..], &c1, &contributions].concat())?;
            Ok(None)
        }
        Pending::Prover { mine, piece, salt } => {
            let peer = 3 - me;
            let msg = ctx.net().recv(peer)?;
            let (from_peer, tail) = split(peer, &msg, COIN + HASH)?;
            let (theirs, their_digest) = tail.split_at(COIN);
            let release = ctx.recv_at_most(0, COIN + 2 * HASH)?;
            if release.len() != COIN + 2 * HASH {
                return Err(MpcError::Malformed {
                    from: 0,
                    what: format!("challenge release of {} bytes", release.len()),
                });
            }
            let (other_piece, rest) = release.split_at(COIN);
            let (commit, rest) = rest.split_at(HASH);
            let contributions = rest;
            if digest("veil/aegis/challenge/piece", &[other_piece]) != their_digest {
                return Err(MpcError::abort(
                    format!("aegis challenge {what}: P0's coin piece differs from the other prover's digest"),
                    None,
                ));
            }
            if commitment(&salt, peer, from_peer) != commit {
                return Err(MpcError::abort(
                    format!("aegis challenge {what}: P{peer}'s share differs from its commitment"),
                    None,
                ));
            }
            let (a, b) = if me == 1 { (&mine[..], theirs) } else { (theirs, &mine[..]) };
            if digest("veil/aegis/challenge/contributions", &[a, b]) != contributions {
                return Err(MpcError::abort(
                    format!("aegis challenge {what}: P0 received other contributions"),
                    None,
                ));
            }
            let other: [u8; COIN] = other_piece.try_into().unwrap_or([0; COIN]);
            let (v01, v02) = if me == 1 { (piece, other) } else { (other, piece) };
            Ok(Some(Drawn { seed: seed_of(what, a, b, &v01, &v02), from_peer: from_peer.to_vec() }))
        }
    }
}
