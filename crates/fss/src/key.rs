//! DPF / VDPF keys and their versioned, length-checked byte encoding.
//!
//! A key of party `b` for `f_{α,β}: {0,1}^d → G` is (de Castro–Polychroniadou, EUROCRYPT 2022,
//! Fig. "VDPF"; the tree part is Boyle–Gilboa–Ishai, CCS 2016)
//!
//! `k_b = (s_b^(0), CW^(1..d), cs, OCW)`, with `CW^(i) = s_CW ‖ t_CW^L ‖ t_CW^R`,
//!
//! where `cs ∈ {0,1}^{4λ}` is the check string and `OCW ∈ G` the output correction. The party
//! index `b` and `d` are recorded too. Only the root seed differs between the two keys; everything
//! else is common, and a verifier binds `cs` and `OCW` into its proof so that a dealer who hands
//! out different common parts is caught.
//!
//! **Encoding (version 1)**, all integers little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 1 | version = 1 |
//! | 1 | party `b ∈ {0,1}` |
//! | 1 | `d` |
//! | 1 | `R::BYTES` |
//! | 16 | root seed `s_b^(0)` |
//! | 16·d | correction seeds `s_CW^(1..d)` |
//! | ⌈2d/8⌉ | control-bit corrections, bit `2i` = `t_CW^L`, bit `2i+1` = `t_CW^R` of level `i`; padding bits zero |
//! | 64 | `cs` |
//! | `R::BYTES` | `OCW` (canonical ring encoding) |
//!
//! so [`key_bytes`] is `84 + 16·d + ⌈d/4⌉ + |G|` bytes, against the paper's
//! `(λ + 2)·d + |G| + 4λ` bits ([`paper_key_bits`]), which leaves out the λ-bit root seed and
//! packs nothing: the difference is the 4-byte header, the root seed and bit padding.

use veil_ring::Ring;

use crate::{FssError, MAX_DOMAIN_BITS};

/// Current encoding version.
pub const KEY_VERSION: u8 = 1;
/// Bytes of the header (version, party, `d`, ring width).
const HEADER: usize = 4;
/// Bytes of the check string `cs` (4λ bits).
pub const CS_BYTES: usize = 64;

/// The correction word of one tree level: `s_CW ‖ t_CW^L ‖ t_CW^R`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct CorrectionWord {
    /// Seed correction `s_CW = s_0^Lose ⊕ s_1^Lose`.
    pub(crate) seed: u128,
    /// Left control-bit correction `t_CW^L = t_0^L ⊕ t_1^L ⊕ α_i ⊕ 1`.
    pub(crate) t_left: bool,
    /// Right control-bit correction `t_CW^R = t_0^R ⊕ t_1^R ⊕ α_i`.
    pub(crate) t_right: bool,
}

/// A key's correction words, level by level.
pub(crate) type CorrectionWords = smallvec::SmallVec<[CorrectionWord; 8]>;

/// One party's key for a (verifiable) distributed point function over `{0,1}^d → R`.
///
/// Produced by [`gen`](crate::gen_keys) and consumed by [`eval`](crate::eval),
/// [`eval_full`](crate::eval_full) and [`eval_full_verified`](crate::eval_full_verified).
/// A single key reveals nothing about `α` or `β` (it is pseudorandom given the other parts).
#[derive(Clone, PartialEq, Eq)]
pub struct DpfKey<R: Ring> {
    pub(crate) party: u8,
    pub(crate) domain_bits: u32,
    pub(crate) root: u128,
    /// Inline up to 8 levels (every domain Veil's gates use), so parsing thousands of keys
    /// allocates nothing per key.
    pub(crate) cws: CorrectionWords,
    pub(crate) cs: [u8; CS_BYTES],
    pub(crate) ocw: R,
}

impl<R: Ring> core::fmt::Debug for DpfKey<R> {
    /// Prints only the public shape: the key material is secret.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DpfKey").field("party", &self.party).field("domain_bits", &self.domain_bits).finish()
    }
}

/// Size in bytes of [`DpfKey::to_bytes`] for a `d`-bit domain and output ring `R`:
/// `4 + 16 + 16·d + ⌈2d/8⌉ + 64 + R::BYTES`.
pub fn key_bytes<R: Ring>(domain_bits: u32) -> usize {
    let d = domain_bits as usize;
    HEADER + 16 + 16 * d + (2 * d).div_ceil(8) + CS_BYTES + R::BYTES
}

/// The key size reported by de Castro–Polychroniadou and Mosformer, in bits:
/// `(λ + 2)·d + |G| + 4λ` with `λ = 128` (the λ-bit root seed is not counted).
pub fn paper_key_bits<R: Ring>(domain_bits: u32) -> usize {
    (128 + 2) * domain_bits as usize + 8 * R::BYTES + 4 * 128
}

impl<R: Ring> DpfKey<R> {
    /// The party (0 or 1) this key belongs to.
    pub fn party(&self) -> u8 {
        self.party
    }

    /// The domain size `d` in bits (the domain is `{0, …, 2^d − 1}`).
    pub fn domain_bits(&self) -> u32 {
        self.domain_bits
    }

    /// Serializes the key (see the module docs for the layout); exactly
    /// [`key_bytes::<R>(d)`](key_bytes) bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(key_bytes::<R>(self.domain_bits));
        self.write_to(&mut out);
        out
    }

    /// Appends [`Self::to_bytes`] to `out` (a dealer writes thousands of keys into one message).
    pub fn write_to(&self, out: &mut Vec<u8>) {
        let d = self.domain_bits as usize;
        // d <= 63 and R::BYTES of the supported rings fit a byte (checked in from_bytes/gen).
        out.extend_from_slice(&[KEY_VERSION, self.party, d as u8, R::BYTES as u8]);
        out.extend_from_slice(&self.root.to_le_bytes());
        for cw in &self.cws {
            out.extend_from_slice(&cw.seed.to_le_bytes());
        }
        let start = out.len();
        out.resize(start + (2 * d).div_ceil(8), 0);
        let bits = &mut out[start..];
        for (i, cw) in self.cws.iter().enumerate() {
            bits[(2 * i) / 8] |= u8::from(cw.t_left) << ((2 * i) % 8);
            bits[(2 * i + 1) / 8] |= u8::from(cw.t_right) << ((2 * i + 1) % 8);
        }
        out.extend_from_slice(&self.cs);
        let start = out.len();
        out.resize(start + R::BYTES, 0);
        self.ocw.write_le(&mut out[start..]);
    }

    /// Parses a key for a `domain_bits`-bit domain.
    ///
    /// # Errors
    /// Any deviation from the canonical encoding: wrong length (truncated or oversized), unknown
    /// version, a different `d` or ring width than expected, a party other than 0/1, nonzero
    /// padding bits, or a non-canonical output correction.
    pub fn from_bytes(bytes: &[u8], domain_bits: u32) -> Result<Self, FssError> {
        if domain_bits == 0 || domain_bits > MAX_DOMAIN_BITS {
            return Err(FssError::InvalidDomainBits { bits: domain_bits, max: MAX_DOMAIN_BITS });
        }
        let expected = key_bytes::<R>(domain_bits);
        if bytes.len() < HEADER {
            return Err(FssError::KeyLength { expected, actual: bytes.len() });
        }
        if bytes[0] != KEY_VERSION {
            return Err(FssError::UnsupportedVersion(bytes[0]));
        }
        let party = bytes[1];
        if party > 1 {
            return Err(FssError::InvalidParty(party));
        }
        if u32::from(bytes[2]) != domain_bits {
            return Err(FssError::DomainMismatch { expected: domain_bits, found: u32::from(bytes[2]) });
        }
        if usize::from(bytes[3]) != R::BYTES {
            return Err(FssError::RingMismatch { expected: R::BYTES, found: usize::from(bytes[3]) });
        }
        if bytes.len() != expected {
            return Err(FssError::KeyLength { expected, actual: bytes.len() });
        }
        let d = domain_bits as usize;
        let mut rest = &bytes[HEADER..];
        let root = u128::from_le_bytes(take::<16>(&mut rest));
        let mut cws = CorrectionWords::with_capacity(d);
        for _ in 0..d {
            cws.push(CorrectionWord {
                seed: u128::from_le_bytes(take::<16>(&mut rest)),
                ..Default::default()
            });
        }
        let (bits, tail) = rest.split_at((2 * d).div_ceil(8));
        for (i, cw) in cws.iter_mut().enumerate() {
            cw.t_left = bits[(2 * i) / 8] >> ((2 * i) % 8) & 1 == 1;
            cw.t_right = bits[(2 * i + 1) / 8] >> ((2 * i + 1) % 8) & 1 == 1;
        }
        if !(2 * d).is_multiple_of(8) && bits.last().is_some_and(|&b| b >> ((2 * d) % 8) != 0) {
            return Err(FssError::NonCanonical("nonzero padding after the control-bit corrections"));
        }
        // Tree seeds carry 127 bits, the low one zero (`crate::prg`); the expansion keeps a
        // node's control bit there, so a seed with it set is not a key `gen_keys` makes.
        if root & 1 == 1 || cws.iter().any(|cw| cw.seed & 1 == 1) {
            return Err(FssError::NonCanonical("a seed with its low (control) bit set"));
        }
        rest = tail;
        let cs = take::<CS_BYTES>(&mut rest);
        let ocw = R::read_le(rest)?;
        Ok(Self { party, domain_bits, root, cws, cs, ocw })
    }
}

/// Splits `N` bytes off the front of `rest`; the caller has checked the total length.
fn take<const N: usize>(rest: &mut &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let (head, tail) = rest.split_at(N.min(rest.len()));
    out[..head.len()].copy_from_slice(head);
    *rest = tail;
    out
}
