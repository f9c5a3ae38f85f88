//! BFV parameter presets after the M&M paper's Table VII, `(log2 N, log2 q, log2 p)`:
//!
//! | preset | paper | here: ciphertext primes (bits) | log2 q | why it differs |
//! |---|---|---|---|---|
//! | [`BfvPreset::N4096P16`] | (12, 109, 16) | 36 + 36 + 37 | 109 | – |
//! | [`BfvPreset::N8192P32`] | (13, 135, 32) | 45 + 45 + 45 | 135 | – |
//! | [`BfvPreset::N8192P60`] | (13, 173, 60) | 50 + 50 + 50 + 50 | 200 | flooding a 60-bit response at 40 bits of statistical security needs `log2 q ≥ 190` (docs/he.md); 173 bits leave about 24 |
//!
//! Every prime is NTT-friendly (`≡ 1 mod 2N`), the plaintext modulus too, so that the slots
//! exist: each is the largest such prime of its bit size not already taken. Only these presets
//! are built, so no outside input reaches the parameter checks. Every `log2 q` is within the
//! homomorphic-encryption standard's bound for 128-bit security with ternary secrets (109 bits
//! at N = 4096, 218 at N = 8192).

use fhe_math::zq::primes::generate_prime;
use veil_mpc::{MpcError, Result};

/// A BFV parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BfvPreset {
    /// N = 4096, 16-bit `p`, 109-bit `q`.
    N4096P16,
    /// N = 8192, 32-bit `p`, 135-bit `q`.
    N8192P32,
    /// N = 8192, 60-bit `p`, 200-bit `q`.
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
            BfvPreset::N8192P60 => &[50, 50, 50, 50],
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

/// Distinct NTT-friendly primes for ring degree `degree`, one per entry of `bits`: for each
/// bit size, the largest prime `≡ 1 mod 2N` below `2^bits` not already taken.
pub(crate) fn ntt_primes(degree: usize, bits: &[usize]) -> Result<Vec<u64>> {
    let step = 2 * degree as u64;
    let mut taken: Vec<u64> = Vec::with_capacity(bits.len());
    for &b in bits {
        let mut upper = (1u64 << b) - 1;
        loop {
            let p = generate_prime(b, step, upper)
                .ok_or_else(|| MpcError::Invalid(format!("no {b}-bit prime ≡ 1 mod {step} left")))?;
            upper = p - 1;
            if !taken.contains(&p) {
                taken.push(p);
                break;
            }
        }
    }
    Ok(taken)
}

/// The plaintext modulus `p` and the ciphertext primes `q_0, …, q_{L−1}` of a preset (`p`
/// first, so that no ciphertext prime takes it).
pub(crate) fn primes(preset: BfvPreset) -> Result<(u64, Vec<u64>)> {
    let bits: Vec<usize> =
        std::iter::once(preset.plaintext_bits()).chain(preset.moduli_bits().iter().copied()).collect();
    let mut all = ntt_primes(preset.degree(), &bits)?;
    let q = all.split_off(1);
    Ok((all[0], q))
}
