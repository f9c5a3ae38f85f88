//! BFV with SIMD slots: `N` plaintext slots in Z_p, added and multiplied slot by slot.
//!
//! **Presets** after the M&M paper's Table VII, `(log2 N, log2 q, log2 p)`:
//!
//! | preset | paper | here: ciphertext primes (bits) | log2 q | why it differs |
//! |---|---|---|---|---|
//! | [`BfvPreset::N4096P16`] | (12, 109, 16) | 36 + 36 + 37 | 109 | – |
//! | [`BfvPreset::N8192P32`] | (13, 135, 32) | 45 + 45 + 45 | 135 | – |
//! | [`BfvPreset::N8192P60`] | (13, 173, 60) | 62 + 62 + 62 | 186 | with a ciphertext prime below the 60-bit `p` (58 + 58 + 57 bits) the library's modular arithmetic fails an assertion on a fresh encryption; three 62-bit primes stay within the standard's 218 bits |
//!
//! Every prime is NTT-friendly (`≡ 1 mod 2N`), the plaintext modulus too, so that the slots
//! exist (`p` is the largest such prime of its bit size). Only these presets are built, so no
//! outside input reaches the library's parameter checks.

use std::sync::Arc;

use fhe::bfv::{BfvParameters, BfvParametersBuilder, Ciphertext, Encoding, Plaintext, PublicKey, SecretKey};
use fhe_math::zq::primes::generate_prime;
use fhe_traits::{FheDecoder, FheDecrypter, FheEncoder, FheEncrypter};
use rand::{CryptoRng, RngCore};
use veil_mpc::{MpcError, Result};

/// A BFV parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BfvPreset {
    /// N = 4096, 16-bit `p`, 109-bit `q`.
    N4096P16,
    /// N = 8192, 32-bit `p`, 135-bit `q`.
    N8192P32,
    /// N = 8192, 60-bit `p`, 186-bit `q`.
    N8192P60,
}

impl BfvPreset {
    /// Every preset.
    pub const ALL: [BfvPreset; 3] = [BfvPreset::N4096P16, BfvPreset::N8192P32, BfvPreset::N8192P60];

    /// The name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            BfvPreset::N4096P16 => "n4096-p16",
            BfvPreset::N8192P32 => "n8192-p32",
            BfvPreset::N8192P60 => "n8192-p60",
        }
    }

    /// The preset of a name.
    pub fn from_name(name: &str) -> Result<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|p| p.name()).collect();
            MpcError::Invalid(format!("no BFV preset '{name}' (available: {})", names.join(", ")))
        })
    }

    /// Ring degree `N` (also the number of slots).
    pub fn degree(self) -> usize {
        match self {
            BfvPreset::N4096P16 => 4096,
            BfvPreset::N8192P32 | BfvPreset::N8192P60 => 8192,
        }
    }

    /// Bits of the ciphertext primes.
    pub fn moduli_bits(self) -> &'static [usize] {
        match self {
            BfvPreset::N4096P16 => &[36, 36, 37],
            BfvPreset::N8192P32 => &[45, 45, 45],
            BfvPreset::N8192P60 => &[62, 62, 62],
        }
    }

    /// Bits of the plaintext modulus `p`.
    pub fn plaintext_bits(self) -> usize {
        match self {
            BfvPreset::N4096P16 => 16,
            BfvPreset::N8192P32 => 32,
            BfvPreset::N8192P60 => 60,
        }
    }

    /// The largest `log2 q` the homomorphic-encryption standard allows at this degree for
    /// 128-bit security with ternary secrets.
    pub fn max_modulus_bits(self) -> usize {
        match self.degree() {
            4096 => 109,
            _ => 218,
        }
    }
}

fn he_error(what: &str, e: impl std::fmt::Display) -> MpcError {
    MpcError::Invalid(format!("{what}: {e}"))
}

/// BFV at one preset: encoding, encryption and the slotwise operations.
#[derive(Debug, Clone)]
pub struct Bfv {
    preset: BfvPreset,
    par: Arc<BfvParameters>,
}

impl Bfv {
    /// The scheme at `preset`.
    pub fn new(preset: BfvPreset) -> Result<Self> {
        let n = preset.degree();
        let bits = preset.plaintext_bits();
        let p = generate_prime(bits, 2 * n as u64, (1u64 << bits) - 1)
            .ok_or_else(|| MpcError::Invalid(format!("no {bits}-bit prime ≡ 1 mod {}", 2 * n)))?;
        let par = BfvParametersBuilder::new()
            .set_degree(n)
            .set_plaintext_modulus(p)
            .set_moduli_sizes(preset.moduli_bits())
            .build_arc()
            .map_err(|e| he_error("BFV parameters", e))?;
        Ok(Bfv { preset, par })
    }

    /// The preset.
    pub fn preset(&self) -> BfvPreset {
        self.preset
    }

    /// The library's parameters.
    pub fn parameters(&self) -> &Arc<BfvParameters> {
        &self.par
    }

    /// The plaintext modulus `p`.
    pub fn plaintext_modulus(&self) -> u64 {
        self.par.plaintext()
    }

    /// Slots per ciphertext (`N`).
    pub fn slots(&self) -> usize {
        self.par.degree()
    }

    /// `log2 q`, the bits of the product of the ciphertext primes.
    pub fn modulus_bits(&self) -> usize {
        self.par.moduli_sizes().iter().sum()
    }

    /// A fresh secret key and its public key.
    pub fn keygen<R: RngCore + CryptoRng>(&self, rng: &mut R) -> (SecretKey, PublicKey) {
        let sk = SecretKey::random(&self.par, rng);
        let pk = PublicKey::new(&sk, rng);
        (sk, pk)
    }

    /// Encodes up to `N` values of Z_p into the slots (the rest are 0).
    pub fn encode(&self, values: &[u64]) -> Result<Plaintext> {
        let p = self.plaintext_modulus();
        if values.len() > self.slots() {
            return Err(MpcError::Invalid(format!("{} values for {} slots", values.len(), self.slots())));
        }
        if let Some(v) = values.iter().find(|&&v| v >= p) {
            return Err(MpcError::Invalid(format!("{v} is not an element of Z_{p}")));
        }
        Plaintext::try_encode(values, Encoding::simd(), &self.par).map_err(|e| he_error("encoding", e))
    }

    /// The `N` slots of a plaintext.
    pub fn decode(&self, pt: &Plaintext) -> Result<Vec<u64>> {
        Vec::<u64>::try_decode(pt, Encoding::simd()).map_err(|e| he_error("decoding", e))
    }

    /// Encrypts `values` under a public key.
    pub fn encrypt<R: RngCore + CryptoRng>(
        &self,
        pk: &PublicKey,
        values: &[u64],
        rng: &mut R,
    ) -> Result<Ciphertext> {
        let pt = self.encode(values)?;
        pk.try_encrypt(&pt, rng).map_err(|e| he_error("encryption", e))
    }

    /// Encrypts `values` under the secret key (smaller noise; the form a party uses for its own
    /// queries).
    pub fn encrypt_secret<R: RngCore + CryptoRng>(
        &self,
        sk: &SecretKey,
        values: &[u64],
        rng: &mut R,
    ) -> Result<Ciphertext> {
        let pt = self.encode(values)?;
        sk.try_encrypt(&pt, rng).map_err(|e| he_error("encryption", e))
    }

    /// The `N` slots of a ciphertext.
    pub fn decrypt(&self, sk: &SecretKey, ct: &Ciphertext) -> Result<Vec<u64>> {
        let pt = sk.try_decrypt(ct).map_err(|e| he_error("decryption", e))?;
        self.decode(&pt)
    }

    /// `ct ⊙ pt`, slot by slot.
    pub fn mul_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Ciphertext {
        ct * pt
    }

    /// `ct + pt`, slot by slot.
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Ciphertext {
        ct + pt
    }
}
