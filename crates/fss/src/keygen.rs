//! Key generation `Gen(1^λ, f_{α,β}) → (k_0, k_1)` of the (verifiable) DPF.
//!
//! The tree is the BGI/BCG construction (Boyle–Gilboa–Ishai, CCS 2016; Boyle et al., "Function
//! secret sharing for mixed-mode and fixed-point secure computation", EUROCRYPT 2021) with the
//! verifiability layer of de Castro–Polychroniadou (EUROCRYPT 2022), as the Mosformer paper
//! uses it:
//!
//! 1. random seeds `s_0^(0), s_1^(0)`, control bits `t_0^(0) = 0`, `t_1^(0) = 1`;
//! 2. for each level `i = 1..d` with `α_i` the `i`-th bit of `α` (most significant first):
//!    `G(s_b^(i−1)) = s_b^L ‖ t_b^L ‖ s_b^R ‖ t_b^R`; `Keep = α_i`, `Lose = 1 − α_i`;
//!    `s_CW = s_0^Lose ⊕ s_1^Lose`, `t_CW^L = t_0^L ⊕ t_1^L ⊕ α_i ⊕ 1`, `t_CW^R = t_0^R ⊕ t_1^R ⊕ α_i`;
//!    `s_b^(i) = s_b^Keep ⊕ t_b^(i−1)·s_CW`, `t_b^(i) = t_b^Keep ⊕ t_b^(i−1)·t_CW^Keep`;
//! 3. `π̃_b = H(α ‖ s_b^(d))`, `cs = π̃_0 ⊕ π̃_1`;
//! 4. `OCW = (−1)^{t_1^(d)}·(β − Convert(s_0^(d)) + Convert(s_1^(d)))`.
//!
//! Invariant: off the path to `α` both parties hold the same `(s, t)`; on it the seeds are
//! independent and `t_0 ⊕ t_1 = 1`. The final control bit is the tree's `t^(d)` (which already
//! satisfies `t_0^(d) ≠ t_1^(d)` on the path), so the "restart if `t_0 = t_1`" step of an
//! `LSB(s^(d))` variant is never needed.
//!
//! Security: each key alone is pseudorandom (seeds are masked by PRG outputs the holder cannot
//! predict), so it hides `α` and `β`; `cs` is an XOR of two hashes of secret seeds.

use rand_core::{CryptoRng, RngCore};
use veil_ring::Ring;

use crate::key::{CorrectionWord, CorrectionWords, DpfKey};
use crate::prg::{FixedAes, SEED_MASK};
use crate::{FssError, MAX_DOMAIN_BITS};

/// Generates the two keys of `f_{α,β}: {0,1}^d → R`, where `f(α) = β` and `f(x) = 0` elsewhere.
///
/// The keys support plain evaluation ([`eval`](crate::eval), [`eval_full`](crate::eval_full))
/// and verified full-domain evaluation ([`eval_full_verified`](crate::eval_full_verified)):
/// for every `x`, `eval(k_0, x) + eval(k_1, x) = β·[x = α]`.
///
/// # Errors
/// [`FssError::InvalidDomainBits`] unless `1 <= domain_bits <= 63`;
/// [`FssError::AlphaOutOfRange`] if `alpha >= 2^domain_bits`.
pub fn gen_keys<R: Ring, G: RngCore + CryptoRng + ?Sized>(
    alpha: u64,
    beta: R,
    domain_bits: u32,
    rng: &mut G,
) -> Result<(DpfKey<R>, DpfKey<R>), FssError> {
    let mut keys = gen_keys_batch(&[alpha], beta, domain_bits, rng)?;
    keys.pop().ok_or(FssError::InvalidDomainBits { bits: domain_bits, max: MAX_DOMAIN_BITS })
}

/// The two keys `(k_0, k_1)` of one point function.
pub type KeyPair<R> = (DpfKey<R>, DpfKey<R>);

/// [`gen_keys`] for every point of `alphas` (one domain, one `β`), the trees' levels side by
/// side: each level of all the keys is one pass of `MMO`, as are the leaf hashes and the
/// `Convert` blocks (a dealer makes thousands of small keys, and one key's two seeds alone
/// leave the AES pipeline mostly empty). The roots are drawn first, two per key in order, so
/// a batch of one draws what [`gen_keys`] always drew.
///
/// # Errors
/// As [`gen_keys`], for the first point out of range.
pub fn gen_keys_batch<R: Ring, G: RngCore + CryptoRng + ?Sized>(
    alphas: &[u64],
    beta: R,
    domain_bits: u32,
    rng: &mut G,
) -> Result<Vec<KeyPair<R>>, FssError> {
    if domain_bits == 0 || domain_bits > MAX_DOMAIN_BITS {
        return Err(FssError::InvalidDomainBits { bits: domain_bits, max: MAX_DOMAIN_BITS });
    }
    if let Some(&alpha) = alphas.iter().find(|&&a| a >> domain_bits != 0) {
        return Err(FssError::AlphaOutOfRange { alpha, domain_bits });
    }
    let aes = FixedAes::get();
    let roots: Vec<[u128; 2]> = alphas.iter().map(|_| [random_seed(rng), random_seed(rng)]).collect();
    let mut s = roots.clone();
    let mut t = vec![[false, true]; alphas.len()];
    let mut cws = vec![CorrectionWords::with_capacity(domain_bits as usize); alphas.len()];
    let mut blocks = vec![0u128; 4 * alphas.len()];
    for i in (0..domain_bits).rev() {
        // Block 4k + 2b + c: child c (left, right) of party b's seed of key k.
        for (four, sk) in blocks.chunks_exact_mut(4).zip(&s) {
            four.copy_from_slice(&[sk[0], sk[0] ^ 1, sk[1], sk[1] ^ 1]);
        }
        aes.tree_in_place(&mut blocks);
        for (k, four) in blocks.chunks_exact(4).enumerate() {
            let a = (alphas[k] >> i) & 1 == 1;
            let child = |v: u128| (v & SEED_MASK, v & 1 == 1);
            let ((sl0, tl0), (sr0, tr0), (sl1, tl1), (sr1, tr1)) =
                (child(four[0]), child(four[1]), child(four[2]), child(four[3]));
            let cw = CorrectionWord {
                seed: if a { sl0 ^ sl1 } else { sr0 ^ sr1 },
                t_left: tl0 ^ tl1 ^ a ^ true,
                t_right: tr0 ^ tr1 ^ a,
            };
            let (keep, t_keep_cw) = if a {
                ([(sr0, tr0), (sr1, tr1)], cw.t_right)
            } else {
                ([(sl0, tl0), (sl1, tl1)], cw.t_left)
            };
            for b in 0..2 {
                let mask = u128::from(t[k][b]).wrapping_neg();
                s[k][b] = keep[b].0 ^ (mask & cw.seed);
                t[k][b] = keep[b].1 ^ (t[k][b] & t_keep_cw);
            }
            cws[k].push(cw);
        }
    }
    // cs = H(α ‖ s_0) ⊕ H(α ‖ s_1), both hashes of every key in one pass.
    let mut hashes = Vec::with_capacity(8 * alphas.len());
    for (&alpha, sk) in alphas.iter().zip(&s) {
        aes.leaf_hash_inputs(alpha, &[sk[0]], &mut hashes);
        aes.leaf_hash_inputs(alpha, &[sk[1]], &mut hashes);
    }
    aes.leaf_hash_in_place(&mut hashes);
    let mut firsts: Vec<u128> = s.iter().flat_map(|sk| [sk[0], sk[1]]).collect();
    aes.convert_in_place(&mut firsts);
    let mut out = Vec::with_capacity(alphas.len());
    for k in 0..alphas.len() {
        let mut cs = [0u8; 64];
        for (i, chunk) in cs.chunks_exact_mut(16).enumerate() {
            chunk.copy_from_slice(&(hashes[8 * k + i] ^ hashes[8 * k + 4 + i]).to_le_bytes());
        }
        let c0: R = aes.convert_with_first(s[k][0], firsts[2 * k]);
        let c1: R = aes.convert_with_first(s[k][1], firsts[2 * k + 1]);
        let diff = beta - c0 + c1;
        let ocw = if t[k][1] { -diff } else { diff };
        let key = |party: u8| DpfKey {
            party,
            domain_bits,
            root: roots[k][party as usize],
            cws: cws[k].clone(),
            cs,
            ocw,
        };
        out.push((key(0), key(1)));
    }
    Ok(out)
}

fn random_seed<G: RngCore + ?Sized>(rng: &mut G) -> u128 {
    let mut b = [0u8; 16];
    rng.fill_bytes(&mut b);
    u128::from_le_bytes(b) & SEED_MASK
}
