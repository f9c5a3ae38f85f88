//! Pairwise and all-party seeds by commit-then-open coin tossing, in two rounds.
//!
//! Round 1: party `i` draws an all-party contribution `c_i` and, for each peer `j`, a pairwise
//! contribution `p_ij`; it sends to each `j` the commitments `Com(c_i) | Com(p_ij)`.
//! Round 2: it sends to each `j` the openings of both, plus an echo: the hash of every
//! all-party commitment it received in round 1 (its own included), in party order.
//!
//! Each party verifies every opening and every echo. The echo makes equivocation visible: a
//! party that sent different commitments to different peers makes two honest parties' echoes
//! differ, and the run aborts. The all-party seed is `H(c_0, ..., c_{n-1})`; the seed of pair
//! `{i, j}` is `H(p_lo,hi, p_hi,lo)`. As long as one contribution to a seed is honest, the seed
//! is uniform and (for pairwise seeds) known only to the pair, because every contribution was
//! fixed before any was revealed.

use veil_crypto::{Commitment, Opening, Seed, SessionId, commit_in_session, verify_commitment_in_session};
use veil_crypto::{Hasher, Prg, combine_seeds};
use veil_net::{Net, PartyId};

use crate::{MpcError, Result};

/// The seeds one party shares: one with each peer, and one with everyone.
pub struct Seeds {
    pairwise: Vec<Option<Seed>>,
    all: Seed,
}

impl Seeds {
    /// The seeds of a party alone: no pairwise seed, and an all-party seed known to nobody else
    /// (a fresh random one).
    pub(crate) fn alone(all: Seed) -> Self {
        Seeds { pairwise: Vec::new(), all }
    }

    /// The seed shared with `peer` (None for oneself or an unknown party).
    pub fn pairwise(&self, peer: PartyId) -> Option<&Seed> {
        self.pairwise.get(peer).and_then(|s| s.as_ref())
    }

    /// The seed shared by all parties.
    pub fn all(&self) -> &Seed {
        &self.all
    }
}

const ROUND1: usize = 64;
const ROUND2: usize = 32 + 32 + 32;

fn opening_bytes(seed: &Seed, o: &Opening) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[..16].copy_from_slice(seed.as_bytes());
    b[16..].copy_from_slice(&o.randomness);
    b
}

fn parse_opening(b: &[u8]) -> (Seed, Opening) {
    let mut s = [0u8; 16];
    let mut r = [0u8; 16];
    s.copy_from_slice(&b[..16]);
    r.copy_from_slice(&b[16..32]);
    (Seed(s), Opening { randomness: r })
}

fn commitment(b: &[u8]) -> Commitment {
    let mut c = [0u8; 32];
    c.copy_from_slice(&b[..32]);
    Commitment(c)
}

fn checked(from: PartyId, msg: Vec<u8>, len: usize) -> Result<Vec<u8>> {
    if msg.len() != len {
        return Err(MpcError::Malformed {
            from,
            what: format!("coin toss: {} bytes, expected {len}", msg.len()),
        });
    }
    Ok(msg)
}

/// Runs the coin toss among all parties of `net`.
pub fn toss(net: &mut Net, session: &SessionId, rng: &mut Prg) -> Result<Seeds> {
    let n = net.parties();
    let me = net.party();
    let mine_all = Seed::from_rng(rng);
    let (com_all, open_all) = commit_in_session(rng, session, mine_all.as_bytes());
    let mut mine_pair: Vec<Option<(Seed, Opening)>> = (0..n).map(|_| None).collect();
    for j in net.peers().collect::<Vec<_>>() {
        let p = Seed::from_rng(rng);
        let (c, o) = commit_in_session(rng, session, p.as_bytes());
        let mut msg = com_all.0.to_vec();
        msg.extend_from_slice(&c.0);
        net.send(j, msg)?;
        mine_pair[j] = Some((p, o));
    }
    let mut coms_all = vec![com_all; n];
    let mut coms_pair = vec![com_all; n];
    for j in net.peers().collect::<Vec<_>>() {
        let m = checked(j, net.recv_at_most(j, ROUND1)?, ROUND1)?;
        coms_all[j] = commitment(&m[..32]);
        coms_pair[j] = commitment(&m[32..]);
    }
    let mut echo = Hasher::new("veil/cointoss/echo");
    for c in &coms_all {
        echo.update(&c.0);
    }
    let echo = echo.finalize();
    for j in net.peers().collect::<Vec<_>>() {
        let Some((p, o)) = &mine_pair[j] else { continue };
        let mut msg = opening_bytes(&mine_all, &open_all).to_vec();
        msg.extend_from_slice(&opening_bytes(p, o));
        msg.extend_from_slice(&echo.0);
        net.send(j, msg)?;
    }
    let mut all = vec![mine_all.clone(); n];
    let mut pairwise: Vec<Option<Seed>> = (0..n).map(|_| None).collect();
    for j in net.peers().collect::<Vec<_>>() {
        let m = checked(j, net.recv_at_most(j, ROUND2)?, ROUND2)?;
        let (c_j, o_j) = parse_opening(&m[..32]);
        verify_commitment_in_session(session, &coms_all[j], &o_j, c_j.as_bytes())
            .map_err(|_| MpcError::abort("coin toss: all-party opening", Some(j)))?;
        let (p_j, q_j) = parse_opening(&m[32..64]);
        verify_commitment_in_session(session, &coms_pair[j], &q_j, p_j.as_bytes())
            .map_err(|_| MpcError::abort("coin toss: pairwise opening", Some(j)))?;
        if !echo.ct_eq(&veil_crypto::Digest(m[64..96].try_into().unwrap_or([0; 32]))) {
            // Someone equivocated; an honest party cannot tell who, so no suspect is named.
            return Err(MpcError::abort("coin toss: commitments differ between parties", None));
        }
        all[j] = c_j;
        let Some((mine, _)) = &mine_pair[j] else { continue };
        let ordered = if me < j { [mine.clone(), p_j] } else { [p_j, mine.clone()] };
        pairwise[j] = Some(combine_seeds("veil/seed/pair", &ordered));
    }
    Ok(Seeds { pairwise, all: combine_seeds("veil/seed/all", &all) })
}
