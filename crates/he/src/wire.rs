//! BFV ciphertexts and public keys on the wire, every field checked on receipt.
//!
//! A polynomial is its NTT-form residues, prime by prime, each residue in `⌈log2 q_i⌉` bits
//! (packed least significant bit first, `N·⌈log2 q_i⌉` a multiple of 8). A ciphertext is
//!
//! ```text
//! level: u8 | form: u8 (0: c0 and c1, 1: c0 and the 32-byte seed of c1, 2: compressed,
//!                      3: compressed with c0 at some positions only) | c0 | c1 or seed
//! ```
//!
//! Form 3 is an answer of a coefficient-encoded product whose reader decodes only some
//! coefficients (Cheetah's observation: decrypting coefficient `j` needs `c0[j]` and all of
//! `c1`): `c0` is sent at those positions only, which both sides know from the layer's plan,
//! and the receiver's `c0` is 0 elsewhere (those coefficients decrypt to noise, never read).
//!
//! and a public key is `seed | p0` at the top level. A receiver states the level and form it
//! expects; a frame of another length, level or form, a residue `≥ q_i` or a nonzero padding
//! bit is [`MpcError::Malformed`] naming the field, never a panic or an allocation sized by
//! the peer.

use fhe_math::rq::traits::TryConvertFrom;
use fhe_math::rq::{Poly, Representation};
use ndarray::Array2;
use veil_mpc::packing::{pack, unpack};
use veil_mpc::wire::{pack_words, unpack_words};
use veil_mpc::{Ctx, MpcError, PartyId, Result};

use crate::bfv::{Bfv, Ciphertext, Compressed, PublicKey, Seed, math_error};

const FULL: u8 = 0;
const SEEDED: u8 = 1;
const COMPRESSED: u8 = 2;
const SPARSE: u8 = 3;

/// How the ciphertexts of a protocol step travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form<'a> {
    /// `c0` and `c1`, NTT residues.
    Full,
    /// `c0` and the 32-byte seed of `c1` (a fresh secret-key encryption).
    Seeded,
    /// An answer with `(k0, k1)` low bits dropped: `⌊c0/2^{k0}⌉`, `⌊c1/2^{k1}⌉` as integers
    /// mod `q_l`, each in `bits(⌈q_l/2^k⌉)` bits ([`Bfv::compress`]).
    Compressed(u32, u32),
    /// As [`Form::Compressed`], `c0` at the given coefficient positions only (ascending, below
    /// `N`; the rest of `c0` is 0 at the receiver).
    Sparse(u32, u32, &'a [usize]),
}

impl Form<'_> {
    fn code(self) -> u8 {
        match self {
            Form::Full => FULL,
            Form::Seeded => SEEDED,
            Form::Compressed(..) => COMPRESSED,
            Form::Sparse(..) => SPARSE,
        }
    }
}

fn width(max: u128) -> u32 {
    (128 - max.leading_zeros()).max(1)
}

fn prime_bits(q: u64) -> u32 {
    64 - q.leading_zeros()
}

/// Bytes of one polynomial at `level`.
pub fn poly_bytes(bfv: &Bfv, level: usize) -> Result<usize> {
    Ok(bfv.primes(level)?.iter().map(|&q| (bfv.slots() * prime_bits(q) as usize).div_ceil(8)).sum())
}

/// Bytes of one ciphertext at `level` in `form`.
pub fn ciphertext_bytes(bfv: &Bfv, level: usize, form: Form<'_>) -> Result<usize> {
    Ok(2 + match form {
        Form::Full => 2 * poly_bytes(bfv, level)?,
        Form::Seeded => poly_bytes(bfv, level)? + 32,
        Form::Compressed(k0, k1) => {
            let n = bfv.slots();
            let b0 = width(bfv.compressed_max(level, k0)?) as usize;
            let b1 = width(bfv.compressed_max(level, k1)?) as usize;
            (n * b0).div_ceil(8) + (n * b1).div_ceil(8)
        }
        Form::Sparse(k0, k1, positions) => {
            let n = bfv.slots();
            let b0 = width(bfv.compressed_max(level, k0)?) as usize;
            let b1 = width(bfv.compressed_max(level, k1)?) as usize;
            (positions.len() * b0).div_ceil(8) + (n * b1).div_ceil(8)
        }
    })
}

/// Bytes of a public key.
pub fn public_key_bytes(bfv: &Bfv) -> Result<usize> {
    Ok(32 + poly_bytes(bfv, 0)?)
}

pub(crate) fn put_poly(out: &mut Vec<u8>, p: &Poly) {
    for (row, q) in p.coefficients().outer_iter().zip(p.ctx().moduli()) {
        let residues: Vec<u64> = row.iter().copied().collect();
        out.extend_from_slice(&pack_words(&residues, prime_bits(*q)));
    }
}

pub(crate) fn get_poly(bfv: &Bfv, from: PartyId, level: usize, bytes: &[u8], what: &str) -> Result<Poly> {
    let ctx = bfv.context(level)?;
    let n = bfv.slots();
    let mut rows = Array2::<u64>::zeros((ctx.moduli().len(), n));
    let mut at = 0;
    for (i, (mut row, &q)) in rows.outer_iter_mut().zip(ctx.moduli()).enumerate() {
        let len = (n * prime_bits(q) as usize).div_ceil(8);
        let part = bytes.get(at..at + len).ok_or_else(|| MpcError::Malformed {
            from,
            what: format!("{what}: residues mod prime {i} are cut short"),
        })?;
        let residues = unpack_words(from, part, prime_bits(q), n)?;
        if let Some(j) = residues.iter().position(|&r| r >= q) {
            return Err(MpcError::Malformed {
                from,
                what: format!("{what}: residue {j} mod prime {i} is {} ≥ {q}", residues[j]),
            });
        }
        row.iter_mut().zip(residues).for_each(|(r, v)| *r = v);
        at += len;
    }
    Poly::try_convert_from(rows, ctx, false, Representation::Ntt).map_err(|e| math_error(what, e))
}

/// The bytes of `ct`.
pub fn encode_ciphertext(ct: &Ciphertext, out: &mut Vec<u8>) {
    out.push(ct.level as u8);
    out.push(if ct.seed.is_some() { SEEDED } else { FULL });
    put_poly(out, &ct.c0);
    match &ct.seed {
        Some(seed) => out.extend_from_slice(seed),
        None => put_poly(out, &ct.c1),
    }
}

/// The bytes of a batch of ciphertexts.
pub fn encode_ciphertexts(cts: &[Ciphertext]) -> Vec<u8> {
    let mut out = Vec::new();
    cts.iter().for_each(|ct| encode_ciphertext(ct, &mut out));
    out
}

/// The bytes of compressed answers (form 3 where `c0` has fewer than `N` values: the caller
/// kept the positions of [`Form::Sparse`]).
pub fn encode_compressed(bfv: &Bfv, cs: &[Compressed]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for c in cs {
        out.push(c.level as u8);
        out.push(if c.c0.len() == bfv.slots() { COMPRESSED } else { SPARSE });
        for (values, k) in [(&c.c0, c.dropped.0), (&c.c1, c.dropped.1)] {
            out.extend_from_slice(&pack(values, width(bfv.compressed_max(c.level, k)?)));
        }
    }
    Ok(out)
}

/// Exactly `count` ciphertexts at `level` in the form the protocol step expects, from
/// `from`'s bytes (compressed answers come back as ciphertexts).
pub fn decode_ciphertexts(
    bfv: &Bfv,
    from: PartyId,
    bytes: &[u8],
    count: usize,
    level: usize,
    form: Form<'_>,
) -> Result<Vec<Ciphertext>> {
    let size = ciphertext_bytes(bfv, level, form)?;
    let expected =
        size.checked_mul(count).ok_or_else(|| MpcError::Invalid(format!("{count} ciphertexts")))?;
    if bytes.len() != expected {
        return Err(MpcError::Malformed {
            from,
            what: format!(
                "expected {count} ciphertexts of {size} bytes ({expected}), got {} bytes",
                bytes.len()
            ),
        });
    }
    bytes
        .chunks_exact(size)
        .enumerate()
        .map(|(i, b)| decode_one(bfv, from, b, level, form, &format!("ciphertext {i}")))
        .collect()
}

/// Receives exactly `count` ciphertexts at `level` in `form` from `from`; a longer message is
/// refused before it is read ([`Ctx::recv_at_most`]).
pub fn recv_ciphertexts(
    ctx: &mut Ctx,
    bfv: &Bfv,
    from: PartyId,
    count: usize,
    level: usize,
    form: Form<'_>,
) -> Result<Vec<Ciphertext>> {
    let expected = ciphertext_bytes(bfv, level, form)?.saturating_mul(count);
    let bytes = ctx.recv_at_most(from, expected)?;
    decode_ciphertexts(bfv, from, &bytes, count, level, form)
}

fn decode_compressed(
    bfv: &Bfv,
    from: PartyId,
    b: &[u8],
    level: usize,
    k: (u32, u32),
    positions: Option<&[usize]>,
    what: &str,
) -> Result<Ciphertext> {
    let n = bfv.slots();
    if positions.is_some_and(|p| p.len() > n || p.iter().any(|&j| j >= n)) {
        return Err(MpcError::Invalid(format!("{what}: c0 positions outside the {n} coefficients")));
    }
    let mut at = 0;
    let mut parts = Vec::with_capacity(2);
    for (name, k, count) in [("c0", k.0, positions.map_or(n, <[usize]>::len)), ("c1", k.1, n)] {
        let max = bfv.compressed_max(level, k)?;
        let bits = width(max);
        let len = (count * bits as usize).div_ceil(8);
        let part = b
            .get(at..at + len)
            .ok_or_else(|| MpcError::Malformed { from, what: format!("{what} {name} is cut short") })?;
        let values = unpack(part, bits, count).ok_or_else(|| MpcError::Malformed {
            from,
            what: format!("{what} {name}: a padding bit is set"),
        })?;
        if let Some(j) = values.iter().position(|&v| v > max) {
            return Err(MpcError::Malformed {
                from,
                what: format!("{what} {name}: coefficient {j} is {} > {max}", values[j]),
            });
        }
        parts.push(values);
        at += len;
    }
    let c1 = parts.pop().unwrap_or_default();
    let mut c0 = parts.pop().unwrap_or_default();
    if let Some(positions) = positions {
        let mut full = vec![0u128; n];
        positions.iter().zip(&c0).for_each(|(&j, &v)| full[j] = v);
        c0 = full;
    }
    bfv.decompress(&Compressed { level, dropped: k, c0, c1 })
}

fn decode_one(
    bfv: &Bfv,
    from: PartyId,
    b: &[u8],
    level: usize,
    form: Form<'_>,
    what: &str,
) -> Result<Ciphertext> {
    let malformed = |why: String| MpcError::Malformed { from, what: format!("{what}: {why}") };
    let got_level = usize::from(b[0]);
    if got_level != level {
        return Err(malformed(format!("level {got_level}, expected {level}")));
    }
    let want = form.code();
    if b[1] != want {
        return Err(malformed(format!(
            "form {}, expected {want} (0: c0 and c1, 1: c0 and the seed of c1, 2: compressed, 3: compressed, c0 in part)",
            b[1]
        )));
    }
    match form {
        Form::Compressed(k0, k1) => {
            return decode_compressed(bfv, from, &b[2..], level, (k0, k1), None, what);
        }
        Form::Sparse(k0, k1, positions) => {
            return decode_compressed(bfv, from, &b[2..], level, (k0, k1), Some(positions), what);
        }
        _ => {}
    }
    let seeded = form == Form::Seeded;
    let half = poly_bytes(bfv, level)?;
    let c0 = get_poly(bfv, from, level, &b[2..2 + half], &format!("{what} c0"))?;
    let rest = &b[2 + half..];
    let (c1, seed) = if seeded {
        let mut seed: Seed = [0; 32];
        seed.copy_from_slice(rest);
        (Poly::random_from_seed(bfv.context(level)?, Representation::Ntt, seed), Some(seed))
    } else {
        (get_poly(bfv, from, level, rest, &format!("{what} c1"))?, None)
    };
    Ok(Ciphertext { level, c0, c1, seed })
}

/// The bytes of a public key: its seed and `p0`.
pub fn encode_public_key(pk: &PublicKey) -> Vec<u8> {
    let mut out = pk.seed.to_vec();
    put_poly(&mut out, &pk.p0);
    out
}

/// A public key from `from`'s bytes.
pub fn decode_public_key(bfv: &Bfv, from: PartyId, bytes: &[u8]) -> Result<PublicKey> {
    let expected = public_key_bytes(bfv)?;
    if bytes.len() != expected {
        return Err(MpcError::Malformed {
            from,
            what: format!("expected a public key of {expected} bytes, got {}", bytes.len()),
        });
    }
    let mut seed: Seed = [0; 32];
    seed.copy_from_slice(&bytes[..32]);
    let p0 = get_poly(bfv, from, 0, &bytes[32..], "public key p0")?;
    let p1 = Poly::random_from_seed(bfv.context(0)?, Representation::Ntt, seed);
    Ok(PublicKey { seed, p0, p1 })
}
