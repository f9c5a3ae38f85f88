//! CKKS between two parties: the key holder (it makes the keys, encrypts and decrypts) and the
//! evaluator (it computes on what it receives with its own plaintexts), as `blb`'s client and
//! server.
//!
//! Setup is one message from the key holder: the public key, the relinearisation key and the
//! Galois keys of the rotations the computation needs (seeded halves as seeds), each section
//! length-prefixed and checked ([`super::wire`]). The keys serve every later exchange of the
//! session; the phase a caller puts the setup in reports its bytes and seconds apart. Both
//! ends can keep their keys in a key file (`export_keys` / `import_keys`, [`crate::keyfile`])
//! and skip the setup in the later sessions of a deployment.
//!
//! **Security**: semi-honest. The evaluator sees only ciphertexts and keys. A CKKS decryption
//! carries the evaluator's noise, which depends on its plaintexts: a protocol that decrypts an
//! evaluator's result must mask it first (`blb` converts to shares); this
//! module moves ciphertexts and does not decide that.

use num_complex::Complex64;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use veil_mpc::{Ctx, MpcError, PartyId, Result};

use super::{Ciphertext, Ckks, CkksPreset, GaloisKeys, PublicKey, SecretKey, SwitchingKey, wire};
use crate::keyfile::{self, Kind, section_error};

fn rng(ctx: &mut Ctx) -> ChaCha20Rng {
    let mut seed = [0u8; 32];
    ctx.rng().fill_bytes(&mut seed);
    ChaCha20Rng::from_seed(seed)
}

fn put_section(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn take_section<'a>(from: PartyId, bytes: &mut &'a [u8], what: &str) -> Result<&'a [u8]> {
    let malformed = |why: String| MpcError::Malformed { from, what: format!("{what}: {why}") };
    if bytes.len() < 8 {
        return Err(malformed("its length is cut short".into()));
    }
    let len = u64::from_le_bytes(bytes[..8].try_into().map_err(|_| malformed("length".into()))?);
    let len = usize::try_from(len).ok().filter(|&l| l <= bytes.len() - 8);
    let len =
        len.ok_or_else(|| malformed(format!("a section longer than the {} bytes left", bytes.len() - 8)))?;
    let (section, rest) = bytes[8..].split_at(len);
    *bytes = rest;
    Ok(section)
}

/// The key holder's end.
#[derive(Debug)]
pub struct KeyHolder {
    ckks: Ckks,
    sk: SecretKey,
    pk: PublicKey,
    peer: PartyId,
}

/// The evaluator's end: the key holder's public, relinearisation and Galois keys.
#[derive(Debug)]
pub struct Evaluator {
    ckks: Ckks,
    /// The key holder's public key (to encrypt the evaluator's own values).
    pub pk: PublicKey,
    /// The relinearisation key.
    pub rk: SwitchingKey,
    /// The Galois keys.
    pub gk: GaloisKeys,
    peer: PartyId,
}

impl KeyHolder {
    /// Makes the keys and sends the evaluator what it needs for `rotations` (left, by slots)
    /// and, if asked, conjugation.
    pub fn setup(
        ctx: &mut Ctx,
        peer: PartyId,
        preset: CkksPreset,
        rotations: &[i64],
        conjugation: bool,
    ) -> Result<Self> {
        let ckks = Ckks::new(preset)?;
        let mut rng = rng(ctx);
        let (sk, pk) = ckks.keygen(&mut rng)?;
        let rk = ckks.relin_key(&sk, &mut rng)?;
        let gk = ckks.galois_keys(&sk, rotations, conjugation, &mut rng)?;
        let mut msg = Vec::new();
        put_section(&mut msg, &wire::encode_public_key(&ckks, &pk));
        put_section(&mut msg, &wire::encode_switching_key(&ckks, &rk));
        put_section(&mut msg, &wire::encode_galois_keys(&ckks, &gk));
        ctx.net().send(peer, msg)?;
        Ok(KeyHolder { ckks, sk, pk, peer })
    }

    /// The scheme.
    pub fn ckks(&self) -> &Ckks {
        &self.ckks
    }

    /// The secret and public keys as a key file's bytes ([`crate::keyfile`]).
    pub fn export_keys(&self) -> Vec<u8> {
        let sk = self.ckks.secret_key_bytes(&self.sk);
        let pk = wire::encode_public_key(&self.ckks, &self.pk);
        keyfile::seal(Kind::CkksKeyHolder, self.ckks.preset().name(), &[&sk, &pk])
    }

    /// A key holder from a key file of [`KeyHolder::export_keys`], talking to `peer` (the
    /// evaluator keeps its keys in its own file: no setup message).
    pub fn import_keys(bytes: &[u8], peer: PartyId, preset: CkksPreset) -> Result<Self> {
        let ckks = Ckks::new(preset)?;
        let sections = keyfile::open(bytes, Kind::CkksKeyHolder, preset.name(), 2)?;
        let sk = ckks.secret_key_from_bytes(sections[0])?;
        let pk = wire::decode_public_key(&ckks, peer, sections[1]).map_err(section_error)?;
        Ok(KeyHolder { ckks, sk, pk, peer })
    }

    /// Encrypts each slot vector at `scale` and `level` and sends them in one message.
    pub fn encrypt_and_send(
        &self,
        ctx: &mut Ctx,
        values: &[Vec<f64>],
        scale: f64,
        level: usize,
    ) -> Result<()> {
        let mut rng = rng(ctx);
        let mut msg = Vec::new();
        for v in values {
            let ct = self.ckks.encrypt(&self.pk, &self.ckks.encode(v, scale, level)?, &mut rng)?;
            msg.extend_from_slice(&wire::encode_ciphertext(&self.ckks, &ct));
        }
        ctx.net().send(self.peer, msg)?;
        Ok(())
    }

    /// Receives `count` ciphertexts and decrypts them.
    pub fn receive_and_decrypt(&self, ctx: &mut Ctx, count: usize) -> Result<Vec<Vec<Complex64>>> {
        wire::recv_ciphertexts(ctx, &self.ckks, self.peer, count)?
            .iter()
            .map(|ct| self.ckks.decrypt_values(&self.sk, ct))
            .collect()
    }
}

impl Evaluator {
    /// Receives and checks the key holder's keys.
    pub fn setup(ctx: &mut Ctx, peer: PartyId, preset: CkksPreset) -> Result<Self> {
        let ckks = Ckks::new(preset)?;
        let msg = ctx.net().recv(peer)?;
        let mut rest: &[u8] = &msg;
        let pk = wire::decode_public_key(&ckks, peer, take_section(peer, &mut rest, "public key")?)?;
        let rk =
            wire::decode_switching_key(&ckks, peer, take_section(peer, &mut rest, "relinearisation key")?)?;
        let gk = wire::decode_galois_keys(&ckks, peer, take_section(peer, &mut rest, "Galois keys")?)?;
        if !rest.is_empty() {
            return Err(MpcError::Malformed {
                from: peer,
                what: format!("{} bytes after the keys", rest.len()),
            });
        }
        Ok(Evaluator { ckks, pk, rk, gk, peer })
    }

    /// The scheme.
    pub fn ckks(&self) -> &Ckks {
        &self.ckks
    }

    /// The key holder's keys as a key file's bytes ([`crate::keyfile`]).
    pub fn export_keys(&self) -> Vec<u8> {
        let pk = wire::encode_public_key(&self.ckks, &self.pk);
        let rk = wire::encode_switching_key(&self.ckks, &self.rk);
        let gk = wire::encode_galois_keys(&self.ckks, &self.gk);
        keyfile::seal(Kind::CkksEvaluator, self.ckks.preset().name(), &[&pk, &rk, &gk])
    }

    /// An evaluator from a key file of [`Evaluator::export_keys`], talking to `peer`.
    pub fn import_keys(bytes: &[u8], peer: PartyId, preset: CkksPreset) -> Result<Self> {
        let ckks = Ckks::new(preset)?;
        let sections = keyfile::open(bytes, Kind::CkksEvaluator, preset.name(), 3)?;
        let pk = wire::decode_public_key(&ckks, peer, sections[0]).map_err(section_error)?;
        let rk = wire::decode_switching_key(&ckks, peer, sections[1]).map_err(section_error)?;
        let gk = wire::decode_galois_keys(&ckks, peer, sections[2]).map_err(section_error)?;
        Ok(Evaluator { ckks, pk, rk, gk, peer })
    }

    /// Receives exactly `count` ciphertexts.
    pub fn receive(&self, ctx: &mut Ctx, count: usize) -> Result<Vec<Ciphertext>> {
        wire::recv_ciphertexts(ctx, &self.ckks, self.peer, count)
    }

    /// Sends ciphertexts in one message.
    pub fn send(&self, ctx: &mut Ctx, cts: &[Ciphertext]) -> Result<()> {
        let msg: Vec<u8> = cts.iter().flat_map(|ct| wire::encode_ciphertext(&self.ckks, ct)).collect();
        ctx.net().send(self.peer, msg)?;
        Ok(())
    }
}
