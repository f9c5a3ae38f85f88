//! Prime fields `Fp<P>` for any odd prime `P < 2^64`.
//!
//! Elements are canonical representatives `0 <= v < P` in a `u64`.
//!
//! * addition: `s = a + b` may overflow 64 bits when `P > 2^63`, so the carry is
//!   checked: `a + b mod P = s - P` if `s` carried or `s >= P`, else `s`;
//! * subtraction: `a - b mod P = a - b` if `a >= b`, else `a - b + P` (mod `2^64`);
//! * multiplication: for `P < 2^32` the product fits a `u64` and the compiler turns
//!   `% P` (a constant) into a multiply-shift. Otherwise the 128-bit product is
//!   reduced with the Möller–Granlund invariant-divisor method (see
//!   [`crate::prime`]): shift so the divisor `D = P·2^s` has its top bit set, then
//!   one 64×64 multiply by the precomputed reciprocal plus two corrections;
//! * inversion by Fermat: `a^(P-2) = a^(-1)` for `a ≠ 0`.

use core::fmt;

use crate::macros::impl_ring_ops;
use crate::prime::{is_prime, reciprocal, rem_2by1};
use crate::{Ring, RingError};

/// The prime field `Z/PZ`. `P` must be an odd prime; this is checked at compile
/// time when the type is used.
///
/// ```compile_fail
/// use veil_ring::{Fp, Ring};
/// let _ = Fp::<91>::ONE; // 91 = 7 · 13 is rejected
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Fp<const P: u64>(u64);

/// The field with 127 elements (a Mersenne prime), handy for tests.
pub type F127 = Fp<127>;
/// The field modulo the Mersenne prime `2^61 - 1`.
pub type F61 = Fp<{ (1 << 61) - 1 }>;
/// An NTT-friendly 60-bit prime field, `p = 2^60 - 2^18 + 1` (`2^18 | p - 1`).
pub type F60 = Fp<0x0FFF_FFFF_FFFC_0001>;
/// The "Goldilocks" field `p = 2^64 - 2^32 + 1`.
pub type Goldilocks = Fp<0xFFFF_FFFF_0000_0001>;

impl<const P: u64> Fp<P> {
    /// The modulus. Evaluating it rejects a `P` that is not an odd prime at compile time.
    pub const MODULUS: u64 = {
        assert!(P > 2 && P % 2 == 1, "Fp<P> requires an odd modulus P > 2");
        assert!(is_prime(P), "Fp<P> requires P to be prime");
        P
    };
    /// Bit length of `P`.
    pub const MODULUS_BITS: u32 = 64 - Self::MODULUS.leading_zeros();
    /// Normalization shift: `P << SHIFT` has its top bit set.
    const SHIFT: u32 = Self::MODULUS.leading_zeros();
    /// Normalized divisor `P · 2^SHIFT`.
    const D: u64 = Self::MODULUS << Self::SHIFT;
    /// Möller–Granlund reciprocal of `D`.
    const V: u64 = reciprocal(Self::D);
    /// Mask of `MODULUS_BITS` ones, used for rejection sampling.
    const SAMPLE_MASK: u64 = u64::MAX >> Self::SHIFT;

    /// `x mod P`.
    #[inline(always)]
    pub const fn new(x: u64) -> Self {
        Self(x % Self::MODULUS)
    }

    /// `x mod P` for a 128-bit `x`.
    #[inline]
    pub const fn from_u128(x: u128) -> Self {
        Self((x % Self::MODULUS as u128) as u64)
    }

    /// The canonical representative in `[0, P)`.
    #[inline(always)]
    pub const fn value(self) -> u64 {
        self.0
    }

    /// The centered representative in `(-P/2, P/2]`, i.e. `v` if `v <= P/2` else `v - P`.
    #[inline]
    pub const fn centered(self) -> i128 {
        if self.0 <= Self::MODULUS / 2 { self.0 as i128 } else { self.0 as i128 - Self::MODULUS as i128 }
    }

    /// `a · b mod P` for canonical `a, b`.
    #[inline(always)]
    pub(crate) const fn mul_(self, rhs: Self) -> Self {
        if Self::MODULUS < (1 << 32) {
            // Both factors are < 2^32, so the product fits and `% P` is by a constant.
            Self((self.0 * rhs.0) % Self::MODULUS)
        } else {
            // a·b < P², so a·b·2^s < D·P < D·2^64: the high word is below D.
            let prod = (self.0 as u128 * rhs.0 as u128) << Self::SHIFT;
            let r = rem_2by1((prod >> 64) as u64, prod as u64, Self::D, Self::V);
            Self(r >> Self::SHIFT)
        }
    }

    #[inline(always)]
    pub(crate) const fn add_(self, rhs: Self) -> Self {
        let (s, carry) = self.0.overflowing_add(rhs.0);
        if carry || s >= Self::MODULUS { Self(s.wrapping_sub(Self::MODULUS)) } else { Self(s) }
    }

    #[inline(always)]
    pub(crate) const fn sub_(self, rhs: Self) -> Self {
        let (d, borrow) = self.0.overflowing_sub(rhs.0);
        if borrow { Self(d.wrapping_add(Self::MODULUS)) } else { Self(d) }
    }

    #[inline(always)]
    pub(crate) const fn neg_(self) -> Self {
        if self.0 == 0 { self } else { Self(Self::MODULUS - self.0) }
    }

    /// `self^e` by square-and-multiply (`0^0 = 1`).
    pub const fn pow(self, mut e: u64) -> Self {
        let mut acc = Self(1);
        let mut base = self;
        while e > 0 {
            if e & 1 == 1 {
                acc = acc.mul_(base);
            }
            base = base.mul_(base);
            e >>= 1;
        }
        acc
    }

    /// The multiplicative inverse `self^(P-2)` (Fermat), or `None` for zero.
    pub const fn inv(self) -> Option<Self> {
        if self.0 == 0 { None } else { Some(self.pow(Self::MODULUS - 2)) }
    }
}

impl_ring_ops!([const P: u64] Fp<P>);

impl<const P: u64> fmt::Debug for Fp<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fp<{P}>({})", self.0)
    }
}

impl<const P: u64> fmt::Display for Fp<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl<const P: u64> Ring for Fp<P> {
    const ZERO: Self = Self::new(0);
    const ONE: Self = Self::new(1);
    const BYTES: usize = Self::MODULUS_BITS.div_ceil(8) as usize;

    #[inline]
    fn random<G: rand_core::RngCore + ?Sized>(rng: &mut G) -> Self {
        // Rejection sampling on MODULUS_BITS-bit values: uniform, and since
        // P >= 2^(bits-1) each try succeeds with probability > 1/2.
        loop {
            let v = rng.next_u64() & Self::SAMPLE_MASK;
            if v < Self::MODULUS {
                return Self(v);
            }
        }
    }

    #[inline]
    fn from_u64(x: u64) -> Self {
        Self::new(x)
    }

    #[inline]
    fn from_i64(x: i64) -> Self {
        // rem_euclid gives the representative in [0, P).
        Self((i128::from(x).rem_euclid(i128::from(Self::MODULUS))) as u64)
    }

    #[inline]
    fn write_le(self, out: &mut [u8]) {
        out.copy_from_slice(&self.0.to_le_bytes()[..Self::BYTES]);
    }

    fn read_le(bytes: &[u8]) -> Result<Self, RingError> {
        if bytes.len() != Self::BYTES {
            return Err(RingError::WrongLength { expected: Self::BYTES, got: bytes.len() });
        }
        let mut buf = [0u8; 8];
        buf[..Self::BYTES].copy_from_slice(bytes);
        let v = u64::from_le_bytes(buf);
        if v >= Self::MODULUS {
            return Err(RingError::NonCanonical { value: u128::from(v), modulus: u128::from(Self::MODULUS) });
        }
        Ok(Self(v))
    }
}
