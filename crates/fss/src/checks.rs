//! The two opened checks that Mosformer adds after verified full-domain evaluation
//! (Mosformer §4.1 "Setup", Π_UCMP steps 7–10).
//!
//! VDPF verification only guarantees that the shared vector `V = V_0 + V_1` has at most one
//! nonzero entry; it fixes neither its value `β` nor its position. Given additive shares
//! `[[α]]` of the index the dealer claims, the evaluators compute locally
//!
//! * `[[t]] = Σ_j [[V[j]]]`, and
//! * `[[s]] = [[α]] − Σ_j j·[[V[j]]]`,
//!
//! open both (one round, each party sends its two shares), and abort unless `t = 1` and `s = 0`
//! ([`check_opened`]). If `V = β·e_{α*}` then `t = β` and `s = α − β·α* = α − α*`, so the checks
//! pass iff `β = 1` and `α* = α`. Indices are mapped into `R` by `j ↦ R::from_u64(j)`, so the
//! position check is exact only when `2^d ≤ |R|` (always true in Mosformer: the domain is
//! `Z_{2n}` or `Z_{2^ℓ_t}` and `R = Z_{2^ℓ}` with `ℓ ≥ d`).
//!
//! Privacy: for honest inputs the opened values are the constants 1 and 0. (Opening must itself
//! be done with the framework's malicious-secure open, so a party cannot shift `t` or `s`.)

use veil_ring::Ring;

use crate::FssError;

/// This party's shares `([[t]]_b, [[s]]_b)` of `t = Σ_j V[j]` and `s = α − Σ_j j·V[j]`,
/// computed from its full-domain output shares `shares_b` and its share `alpha_share_b` of the
/// claimed hot index `α`.
///
/// The caller opens both values (adding the two parties' shares) and passes them to
/// [`check_opened`], which requires `t = 1` and `s = 0`.
pub fn one_hot_checks<R: Ring>(shares_b: &[R], alpha_share_b: R) -> (R, R) {
    let mut t = R::ZERO;
    let mut weighted = R::ZERO;
    for (j, &v) in (0u64..).zip(shares_b) {
        t += v;
        weighted += R::from_u64(j) * v;
    }
    (t, alpha_share_b - weighted)
}

/// Checks the opened values of [`one_hot_checks`]: `t = 1` (exactly `β = 1`) and `s = 0` (the hot
/// position is the secret-shared `α`).
///
/// # Errors
/// [`FssError::OneHotSumNotOne`] if `t ≠ 1`, otherwise [`FssError::IndexMismatch`] if `s ≠ 0`.
pub fn check_opened<R: Ring>(t: R, s: R) -> Result<(), FssError> {
    if t != R::ONE {
        return Err(FssError::OneHotSumNotOne);
    }
    if s != R::ZERO {
        return Err(FssError::IndexMismatch);
    }
    Ok(())
}
