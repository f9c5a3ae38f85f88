//! Subset-sum tables for the bit products of truncation pairs in the lazy reductions
//! ([`crate::columns`]).
//!
//! A truncation pair's inputs are bits (`⟨b1⟩ = (0, −w_t·b1_t, 0)`, `⟨b2⟩ = (0, 0, −b2_t)`,
//! [`crate::claims::BitProducts`]), so once a reduction's entry sums `2^t ≥ 8` slots, its
//! components are sums of public GR weights over the slots whose bit is 1: for four
//! consecutive slots with weights `K_0 … K_3` and bits `β`, `Σ_i β_i·K_i` is one of 16 subset
//! sums. A table of them per group of four slots (whose bits, packed, are one nibble:
//! [`crate::claims::Bits::nibble`]), built once per reduction (15 GR additions
//! per group), turns a GR scaling per bit and input into one GR addition per four bits.
//!
//! Only public values go into a table: the reductions' weights `w_s`, the coefficients `a_g`,
//! `γ` and the pairs' bit weights. The bits select entries, at the parties that hold them
//! (P0 both, P1 `b1`, P2 `b2`).

use veil_ring::Gr;

/// Slots per table group (four bits: tables of `J/4·16` GR elements per record, 2 KiB per
/// slot of a column, where bytes would take 16 KiB).
pub(crate) const GROUP: usize = 4;

/// Entries per group's table.
pub(crate) const SUBSETS: usize = 1 << GROUP;

/// The tables of `k` (a multiple of [`GROUP`] weights): for group `q` and pattern `p` (bit `i`
/// of `p` for weight `q·4 + i`), entry `q·16 + p` is `Σ_{i ∈ p} k_{q·4+i}`.
pub(crate) fn tables(k: &[Gr]) -> Vec<Gr> {
    let mut out = Vec::with_capacity(k.len() / GROUP * SUBSETS);
    for group in k.chunks_exact(GROUP) {
        let base = out.len();
        out.push(Gr::ZERO);
        for p in 1..SUBSETS {
            // The pattern without its lowest bit, plus that bit's weight.
            let low = p.trailing_zeros() as usize;
            let v = out[base + (p & (p - 1))].add(&group[low]);
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use veil_crypto::{Prg, Seed};

    #[test]
    fn every_subset_sum_is_in_its_place() {
        let mut g = Prg::new(&Seed([3; 16]));
        let k: Vec<Gr> = (0..2 * GROUP).map(|_| Gr::random(&mut g)).collect();
        let t = tables(&k);
        assert_eq!(t.len(), 2 * SUBSETS);
        for q in 0..2 {
            for p in 0..SUBSETS {
                let direct =
                    (0..GROUP).filter(|i| p >> i & 1 == 1).fold(Gr::ZERO, |s, i| s.add(&k[q * GROUP + i]));
                assert_eq!(t[q * SUBSETS + p], direct, "group {q}, pattern {p}");
            }
        }
    }
}
