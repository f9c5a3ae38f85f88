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

use crate::key::{CorrectionWord, DpfKey};
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
    if domain_bits == 0 || domain_bits > MAX_DOMAIN_BITS {
        return Err(FssError::InvalidDomainBits { bits: domain_bits, max: MAX_DOMAIN_BITS });
    }
    if alpha >> domain_bits != 0 {
        return Err(FssError::AlphaOutOfRange { alpha, domain_bits });
    }
    let aes = FixedAes::get();
    let roots = [random_seed(rng), random_seed(rng)];
    let mut s = roots;
    let mut t = [false, true];
    let mut cws = Vec::with_capacity(domain_bits as usize);
    for i in (0..domain_bits).rev() {
        let a = (alpha >> i) & 1 == 1;
        let (sl0, tl0, sr0, tr0) = aes.expand(s[0]);
        let (sl1, tl1, sr1, tr1) = aes.expand(s[1]);
        let cw = CorrectionWord {
            seed: if a { sl0 ^ sl1 } else { sr0 ^ sr1 },
            t_left: tl0 ^ tl1 ^ a ^ true,
            t_right: tr0 ^ tr1 ^ a,
        };
        let (keep, t_keep_cw) =
            if a { ([(sr0, tr0), (sr1, tr1)], cw.t_right) } else { ([(sl0, tl0), (sl1, tl1)], cw.t_left) };
        for b in 0..2 {
            let mask = u128::from(t[b]).wrapping_neg();
            s[b] = keep[b].0 ^ (mask & cw.seed);
            t[b] = keep[b].1 ^ (t[b] & t_keep_cw);
        }
        cws.push(cw);
    }
    let (h0, h1) = (aes.leaf_hash(alpha, s[0]), aes.leaf_hash(alpha, s[1]));
    let mut cs = [0u8; 64];
    for (c, (x, y)) in cs.iter_mut().zip(h0.iter().zip(&h1)) {
        *c = x ^ y;
    }
    let diff = beta - aes.convert::<R>(s[0]) + aes.convert::<R>(s[1]);
    let ocw = if t[1] { -diff } else { diff };
    let key =
        |party: u8| DpfKey { party, domain_bits, root: roots[party as usize], cws: cws.clone(), cs, ocw };
    Ok((key(0), key(1)))
}

/// A uniformly random tree seed (control bit cleared).
fn random_seed<G: RngCore + ?Sized>(rng: &mut G) -> u128 {
    let mut b = [0u8; 16];
    rng.fill_bytes(&mut b);
    u128::from_le_bytes(b) & SEED_MASK
}
