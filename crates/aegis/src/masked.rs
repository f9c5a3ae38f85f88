//! The masked sharing's data: `⟨x⟩ = ([r_x], m_x)` with `[r_x]` additive between P1 and P2
//! (P0 holds both shares), as a leaf every protocol module reads, and its words on the wire.

use veil_mpc::{MpcError, PartyId, Result};

/// A 2-party additive sharing `[v] = [v]_1 + [v]_2` between P1 and P2 (P0 may know both).
/// A party keeps the shares it knows; the others are empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pair {
    /// `[v]_1` (P0 and P1).
    pub one: Vec<u64>,
    /// `[v]_2` (P0 and P2).
    pub two: Vec<u64>,
}

/// This party's part of `⟨x⟩` for a vector of `n` secrets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Masked {
    /// `m_x` (P1 and P2; empty at P0).
    pub m: Vec<u64>,
    /// The mask's shares this party holds.
    pub r: Pair,
    /// Number of secrets.
    pub n: usize,
}

/// Words as little-endian bytes, 8 per word.
pub(crate) fn to_bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Exactly `n` words from `from`'s bytes, or an error naming the sender.
/// Receives exactly `n` ring elements from `from` (a longer message is refused unread).
pub(crate) fn recv_u64s(ctx: &mut veil_mpc::Ctx, from: PartyId, n: usize) -> Result<Vec<u64>> {
    from_bytes(from, &ctx.recv_at_most(from, n.saturating_mul(8))?, n)
}

pub(crate) fn from_bytes(from: PartyId, b: &[u8], n: usize) -> Result<Vec<u64>> {
    if b.len() != 8 * n {
        return Err(MpcError::Malformed { from, what: format!("{} bytes for {n} ring elements", b.len()) });
    }
    Ok(b.chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect())
}
