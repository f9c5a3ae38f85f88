//! CKKS ciphertexts and keys on the wire, every field checked on receipt.
//!
//! A polynomial is its NTT-form residues prime by prime, each in `⌈log2 q_i⌉` bits. Then
//!
//! ```text
//! ciphertext:     parts: u8 (2 or 3) | level: u8 | scale: f64 LE (finite, ≥ 1) | parts over q_0 … q_level
//! plaintext:      level: u8 | scale: f64 LE | the polynomial over q_0 … q_level
//! public key:     seed of a (32) | b over every prime
//! switching key:  digits: u8 (= data primes) | per digit: seed of a_j (32) | b_j over every prime
//! Galois keys:    count: u16 (≤ 64) | per key: g: u32 (odd, < 2N, increasing) | switching key
//! ```
//!
//! A frame of the wrong length, a count, level or scale out of range, a residue `≥ q_i` or a
//! nonzero padding bit is [`MpcError::Malformed`] naming the field; sizes are computed from
//! the scheme and the checked header before anything is allocated.

use std::collections::BTreeMap;

use veil_mpc::wire::{pack_words, unpack_words};
use veil_mpc::{MpcError, PartyId, Result};

use super::{Ciphertext, Ckks, GaloisKeys, Plaintext, PublicKey, SwitchingKey};
use crate::rns::RnsPoly;

/// Most Galois keys one message may carry.
pub const MAX_GALOIS_KEYS: usize = 64;

fn bits(q: u64) -> u32 {
    64 - q.leading_zeros()
}

fn poly_bytes(ckks: &Ckks, basis: &[usize]) -> usize {
    let n = ckks.ring().degree();
    basis.iter().map(|&b| (n * bits(ckks.ring().modulus(b)) as usize).div_ceil(8)).sum()
}

fn put(out: &mut Vec<u8>, ckks: &Ckks, p: &RnsPoly) {
    for (limb, &b) in p.limbs.iter().zip(&p.basis) {
        out.extend_from_slice(&pack_words(limb, bits(ckks.ring().modulus(b))));
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    from: PartyId,
}

impl<'a> Reader<'a> {
    fn malformed(&self, what: String) -> MpcError {
        MpcError::Malformed { from: self.from, what }
    }

    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.at.checked_add(len).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| self.malformed(format!("{what} is cut short")))?;
        let part = &self.bytes[self.at..end];
        self.at = end;
        Ok(part)
    }

    fn seed(&mut self, what: &str) -> Result<[u8; 32]> {
        let mut seed = [0u8; 32];
        seed.copy_from_slice(self.take(32, what)?);
        Ok(seed)
    }

    fn poly(&mut self, ckks: &Ckks, basis: &[usize], what: &str) -> Result<RnsPoly> {
        let n = ckks.ring().degree();
        let mut limbs = Vec::with_capacity(basis.len());
        for (i, &b) in basis.iter().enumerate() {
            let q = ckks.ring().modulus(b);
            let part = self.take((n * bits(q) as usize).div_ceil(8), what)?;
            let limb = unpack_words(self.from, part, bits(q), n)?;
            if let Some(j) = limb.iter().position(|&r| r >= q) {
                return Err(self.malformed(format!("{what}: residue {j} mod prime {i} is {} ≥ {q}", limb[j])));
            }
            limbs.push(limb);
        }
        Ok(RnsPoly { basis: basis.to_vec(), limbs, ntt: true })
    }

    fn end(&self, what: &str) -> Result<()> {
        if self.at != self.bytes.len() {
            return Err(self.malformed(format!("{} bytes after the {what}", self.bytes.len() - self.at)));
        }
        Ok(())
    }
}

/// The bytes of a ciphertext.
pub fn encode_ciphertext(ckks: &Ckks, ct: &Ciphertext) -> Vec<u8> {
    let mut out = vec![ct.parts.len() as u8, ct.level() as u8];
    out.extend_from_slice(&ct.scale.to_le_bytes());
    ct.parts.iter().for_each(|p| put(&mut out, ckks, p));
    out
}

/// Receives exactly `count` ciphertexts from `from`; a message longer than `count` of the
/// largest ciphertexts (three parts at the top level) is refused before it is read.
pub fn recv_ciphertexts(
    ctx: &mut veil_mpc::Ctx,
    ckks: &Ckks,
    from: PartyId,
    count: usize,
) -> Result<Vec<Ciphertext>> {
    let largest = ciphertext_bytes(ckks, 3, ckks.top_level());
    let bytes = ctx.recv_at_most(from, largest.saturating_mul(count))?;
    decode_ciphertexts(ckks, from, &bytes, count)
}

/// Bytes of a ciphertext of `parts` parts at `level`.
pub fn ciphertext_bytes(ckks: &Ckks, parts: usize, level: usize) -> usize {
    10 + parts * poly_bytes(ckks, &(0..=level).collect::<Vec<_>>())
}

/// A ciphertext from `from`'s bytes.
pub fn decode_ciphertext(ckks: &Ckks, from: PartyId, bytes: &[u8]) -> Result<Ciphertext> {
    let mut r = Reader { bytes, at: 0, from };
    let head = r.take(10, "ciphertext header")?;
    let (parts, level) = (usize::from(head[0]), usize::from(head[1]));
    let scale = f64::from_le_bytes(head[2..10].try_into().map_err(|_| r.malformed("scale".into()))?);
    if !(2..=3).contains(&parts) {
        return Err(r.malformed(format!("a ciphertext of {parts} parts (2 or 3)")));
    }
    if level > ckks.top_level() {
        return Err(r.malformed(format!("level {level} past the top level {}", ckks.top_level())));
    }
    if !scale.is_finite() || scale < 1.0 {
        return Err(r.malformed(format!("scale {scale} (finite, at least 1)")));
    }
    let expected = ciphertext_bytes(ckks, parts, level);
    if bytes.len() != expected {
        return Err(r.malformed(format!(
            "a ciphertext of {parts} parts at level {level} is {expected} bytes, got {}",
            bytes.len()
        )));
    }
    let basis: Vec<usize> = (0..=level).collect();
    let parts = (0..parts)
        .map(|i| r.poly(ckks, &basis, &format!("ciphertext part {i}")))
        .collect::<Result<Vec<_>>>()?;
    r.end("ciphertext")?;
    Ok(Ciphertext { parts, scale })
}

/// The bytes of a plaintext.
pub fn encode_plaintext(ckks: &Ckks, pt: &Plaintext) -> Vec<u8> {
    let mut out = vec![(pt.poly.len() - 1) as u8];
    out.extend_from_slice(&pt.scale.to_le_bytes());
    put(&mut out, ckks, &pt.poly);
    out
}

/// A plaintext from `from`'s bytes.
pub fn decode_plaintext(ckks: &Ckks, from: PartyId, bytes: &[u8]) -> Result<Plaintext> {
    let mut r = Reader { bytes, at: 0, from };
    let head = r.take(9, "plaintext header")?;
    let level = usize::from(head[0]);
    let scale = f64::from_le_bytes(head[1..9].try_into().map_err(|_| r.malformed("scale".into()))?);
    if level > ckks.top_level() {
        return Err(r.malformed(format!("level {level} past the top level {}", ckks.top_level())));
    }
    if !scale.is_finite() || scale <= 0.0 {
        return Err(r.malformed(format!("plaintext scale {scale} (finite, positive)")));
    }
    let basis: Vec<usize> = (0..=level).collect();
    let expected = 9 + poly_bytes(ckks, &basis);
    if bytes.len() != expected {
        return Err(
            r.malformed(format!("a plaintext at level {level} is {expected} bytes, got {}", bytes.len()))
        );
    }
    let poly = r.poly(ckks, &basis, "plaintext")?;
    r.end("plaintext")?;
    Ok(Plaintext { poly, scale })
}

/// Exactly `count` ciphertexts, one after another, from `from`'s bytes (each read from its own
/// checked header).
pub fn decode_ciphertexts(ckks: &Ckks, from: PartyId, bytes: &[u8], count: usize) -> Result<Vec<Ciphertext>> {
    let mut at = 0;
    let mut out = Vec::with_capacity(count.min(bytes.len() / 10 + 1));
    for i in 0..count {
        let head = bytes.get(at..at + 2).ok_or_else(|| MpcError::Malformed {
            from,
            what: format!("ciphertext {i} of {count} is missing"),
        })?;
        let (parts, level) = (usize::from(head[0]), usize::from(head[1]));
        if !(2..=3).contains(&parts) || level > ckks.top_level() {
            return Err(MpcError::Malformed {
                from,
                what: format!("ciphertext {i}: {parts} parts at level {level}"),
            });
        }
        let size = ciphertext_bytes(ckks, parts, level);
        let one = bytes.get(at..at + size).ok_or_else(|| MpcError::Malformed {
            from,
            what: format!("ciphertext {i} of {count} is cut short"),
        })?;
        out.push(decode_ciphertext(ckks, from, one)?);
        at += size;
    }
    if at != bytes.len() {
        return Err(MpcError::Malformed {
            from,
            what: format!("{} bytes after {count} ciphertexts", bytes.len() - at),
        });
    }
    Ok(out)
}

fn all_primes(ckks: &Ckks) -> Vec<usize> {
    (0..=ckks.data_primes()).collect()
}

/// The bytes of a public key.
pub fn encode_public_key(ckks: &Ckks, pk: &PublicKey) -> Vec<u8> {
    let mut out = pk.seed.to_vec();
    put(&mut out, ckks, &pk.b);
    out
}

/// A public key from `from`'s bytes.
pub fn decode_public_key(ckks: &Ckks, from: PartyId, bytes: &[u8]) -> Result<PublicKey> {
    let mut r = Reader { bytes, at: 0, from };
    let all = all_primes(ckks);
    let seed = r.seed("public key seed")?;
    let b = r.poly(ckks, &all, "public key b")?;
    r.end("public key")?;
    Ok(PublicKey { seed, b, a: ckks.ring().uniform_from_seed(seed, &all) })
}

fn put_switching_key(out: &mut Vec<u8>, ckks: &Ckks, key: &SwitchingKey) {
    out.push(key.digits.len() as u8);
    for ((b, _), seed) in key.digits.iter().zip(&key.seeds) {
        out.extend_from_slice(seed);
        put(out, ckks, b);
    }
}

fn get_switching_key(r: &mut Reader<'_>, ckks: &Ckks, what: &str) -> Result<SwitchingKey> {
    let count = usize::from(r.take(1, what)?[0]);
    if count != ckks.data_primes() {
        return Err(r.malformed(format!("{what}: {count} digits, expected {}", ckks.data_primes())));
    }
    let all = all_primes(ckks);
    let (mut digits, mut seeds) = (Vec::with_capacity(count), Vec::with_capacity(count));
    for j in 0..count {
        let seed = r.seed(&format!("{what} digit {j} seed"))?;
        let b = r.poly(ckks, &all, &format!("{what} digit {j}"))?;
        digits.push((b, ckks.ring().uniform_from_seed(seed, &all)));
        seeds.push(seed);
    }
    Ok(SwitchingKey { digits, seeds })
}

/// The bytes of a switching key (relinearisation).
pub fn encode_switching_key(ckks: &Ckks, key: &SwitchingKey) -> Vec<u8> {
    let mut out = Vec::new();
    put_switching_key(&mut out, ckks, key);
    out
}

/// A switching key from `from`'s bytes.
pub fn decode_switching_key(ckks: &Ckks, from: PartyId, bytes: &[u8]) -> Result<SwitchingKey> {
    let mut r = Reader { bytes, at: 0, from };
    let key = get_switching_key(&mut r, ckks, "switching key")?;
    r.end("switching key")?;
    Ok(key)
}

/// The bytes of Galois keys.
pub fn encode_galois_keys(ckks: &Ckks, gk: &GaloisKeys) -> Vec<u8> {
    let mut out = (gk.keys.len() as u16).to_le_bytes().to_vec();
    for (&g, key) in &gk.keys {
        out.extend_from_slice(&(g as u32).to_le_bytes());
        put_switching_key(&mut out, ckks, key);
    }
    out
}

/// Galois keys from `from`'s bytes.
pub fn decode_galois_keys(ckks: &Ckks, from: PartyId, bytes: &[u8]) -> Result<GaloisKeys> {
    let mut r = Reader { bytes, at: 0, from };
    let head = r.take(2, "Galois key count")?;
    let count = usize::from(u16::from_le_bytes([head[0], head[1]]));
    if count > MAX_GALOIS_KEYS {
        return Err(r.malformed(format!("{count} Galois keys, at most {MAX_GALOIS_KEYS}")));
    }
    let two_n = 2 * ckks.ring().degree();
    let mut keys = BTreeMap::new();
    let mut last = 0usize;
    for i in 0..count {
        let g = r.take(4, "Galois element")?;
        let g = u32::from_le_bytes([g[0], g[1], g[2], g[3]]) as usize;
        if g.is_multiple_of(2) || g >= two_n || g <= last {
            return Err(r.malformed(format!("Galois element {i} is {g} (odd, below {two_n}, increasing)")));
        }
        last = g;
        keys.insert(g, get_switching_key(&mut r, ckks, &format!("Galois key X ↦ X^{g}"))?);
    }
    r.end("Galois keys")?;
    Ok(GaloisKeys { keys })
}
