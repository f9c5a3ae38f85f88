//! `Zk<K>`: integers modulo `2^K` for any width `1 <= K <= 64`, stored in a `u64`.
//!
//! The value is always kept reduced, i.e. `0 <= v < 2^K` (`v & MASK == v`). Every
//! operation is the 64-bit wrapping operation followed by `& MASK`, which is
//! correct because reduction mod `2^K` commutes with `+`, `-`, `*` mod `2^64`
//! (`2^K` divides `2^64`).

use core::fmt;

use crate::macros::{impl_bit_ops, impl_ring_ops};
use crate::{Ring, RingError, Z2k};

/// Integers modulo `2^K`, `1 <= K <= 64` (checked at compile time).
///
/// `#[repr(transparent)]` over a `u64` holding the canonical representative.
///
/// ```compile_fail
/// use veil_ring::{Ring, Zk};
/// let _ = Zk::<65>::ONE; // widths above 64 are rejected
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Zk<const K: u32>(u64);

impl<const K: u32> Zk<K> {
    /// `2^K - 1`. Evaluating it rejects `K = 0` or `K > 64` at compile time.
    pub const MASK: u64 = {
        assert!(K >= 1 && K <= 64, "Zk<K> requires 1 <= K <= 64");
        if K == 64 { u64::MAX } else { (1u64 << K) - 1 }
    };

    /// Width `K` of the ring.
    pub const BITS: u32 = K;

    /// `x mod 2^K`.
    #[inline(always)]
    pub const fn new(x: u64) -> Self {
        Self(x & Self::MASK)
    }

    /// The canonical representative in `[0, 2^K)`.
    #[inline(always)]
    pub const fn value(self) -> u64 {
        self.0
    }

    #[inline(always)]
    pub(crate) const fn add_(self, rhs: Self) -> Self {
        Self::new(self.0.wrapping_add(rhs.0))
    }
    #[inline(always)]
    pub(crate) const fn sub_(self, rhs: Self) -> Self {
        Self::new(self.0.wrapping_sub(rhs.0))
    }
    #[inline(always)]
    pub(crate) const fn mul_(self, rhs: Self) -> Self {
        Self::new(self.0.wrapping_mul(rhs.0))
    }
    #[inline(always)]
    pub(crate) const fn neg_(self) -> Self {
        Self::new(self.0.wrapping_neg())
    }
    #[inline(always)]
    const fn and_(self, rhs: Self) -> Self {
        Self(self.0 & rhs.0)
    }
    #[inline(always)]
    const fn or_(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
    #[inline(always)]
    const fn xor_(self, rhs: Self) -> Self {
        Self(self.0 ^ rhs.0)
    }
    #[inline(always)]
    const fn not_(self) -> Self {
        Self::new(!self.0)
    }
    /// Logical left shift mod `2^K`; `0` when `s >= K`.
    #[inline(always)]
    const fn shl_(self, s: u32) -> Self {
        if s >= K { Self(0) } else { Self::new(self.0 << s) }
    }
    /// Logical right shift; `0` when `s >= K`.
    #[inline(always)]
    const fn shr_(self, s: u32) -> Self {
        if s >= K { Self(0) } else { Self(self.0 >> s) }
    }
    /// The value sign-extended from `K` to 64 bits.
    #[inline(always)]
    const fn sign_extended(self) -> i64 {
        let pad = 64 - K;
        ((self.0 << pad) as i64) >> pad
    }
}

impl_ring_ops!([const K: u32] Zk<K>);
impl_bit_ops!([const K: u32] Zk<K>);

impl<const K: u32> fmt::Debug for Zk<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Zk<{K}>({})", self.0)
    }
}

impl<const K: u32> fmt::Display for Zk<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl<const K: u32> Ring for Zk<K> {
    const ZERO: Self = Self::new(0);
    const ONE: Self = Self::new(1);
    const BYTES: usize = K.div_ceil(8) as usize;

    #[inline]
    fn random<G: rand_core::RngCore + ?Sized>(rng: &mut G) -> Self {
        // Masking a uniform u64 is uniform mod 2^K.
        Self::new(rng.next_u64())
    }

    #[inline]
    fn from_u64(x: u64) -> Self {
        Self::new(x)
    }

    #[inline]
    fn from_i64(x: i64) -> Self {
        Self::new(x as u64)
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
        if v & !Self::MASK != 0 {
            return Err(RingError::NonCanonical { value: u128::from(v), modulus: 1u128 << K });
        }
        Ok(Self(v))
    }
}

impl<const K: u32> Z2k for Zk<K> {
    const BITS: u32 = K;

    #[inline]
    fn bit(self, i: u32) -> bool {
        i < K && (self.0 >> i) & 1 == 1
    }

    #[inline]
    fn to_u128(self) -> u128 {
        u128::from(self.0)
    }

    #[inline]
    fn from_u128(x: u128) -> Self {
        Self::new(x as u64)
    }

    #[inline]
    fn to_signed(self) -> i128 {
        i128::from(self.sign_extended())
    }

    #[inline]
    fn from_signed(x: i128) -> Self {
        Self::new(x as u64)
    }

    #[inline]
    fn arith_shr(self, k: u32) -> Self {
        Self::new((self.sign_extended() >> k.min(63)) as u64)
    }
}
