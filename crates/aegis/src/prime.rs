//! The small prime field of sign-bit extraction: `p` is the largest prime in
//! `(l, 2^{⌈log2 l⌉+1}]` (127 for `l = 64`), so that the transformed list (values `≤ l + 1`)
//! never wraps to 0. Elements travel packed at `⌈log2 p⌉` bits each (7 for `p = 127`; the
//! paper's measurements fit one byte each), [`Zp::pack`] and [`Zp::unpack`]. The field's
//! arithmetic is `veil-ring`'s [`Zp`].

/// `p` for ring width `l` (`2 ≤ l ≤ 64`).
pub fn prime_for(l: u32) -> u32 {
    let top = 1u32 << (32 - (l - 1).leading_zeros() + 1);
    (l + 1..=top).rev().find(|&q| is_prime(q)).unwrap_or(top - 1)
}

fn is_prime(q: u32) -> bool {
    veil_ring::is_prime(u64::from(q))
}

pub use veil_ring::Zp;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_of_each_width() {
        assert_eq!(prime_for(8), 13);
        assert_eq!(prime_for(16), 31);
        assert_eq!(prime_for(32), 61);
        assert_eq!(prime_for(64), 127);
    }
}
