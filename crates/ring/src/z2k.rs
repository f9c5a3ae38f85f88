//! The native-width rings `Z8, Z16, Z32, Z64, Z128` (integers mod `2^k`).
//!
//! Each is a `#[repr(transparent)]` newtype over the unsigned integer of the same
//! width, so ring arithmetic is exactly the CPU's wrapping arithmetic:
//! `a + b mod 2^k = a.wrapping_add(b)`, `a * b mod 2^k = a.wrapping_mul(b)`, and
//! two's complement gives the signed view for free.

use core::fmt;

use crate::macros::{impl_bit_ops, impl_ring_ops};
use crate::{Ring, RingError, Z2k};

macro_rules! define_z2k {
    ($(#[$doc:meta])* $name:ident, $u:ty, $s:ty, |$rng:ident| $random:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        #[repr(transparent)]
        pub struct $name(pub $u);

        impl $name {
            /// Width `k` of the ring.
            pub const BITS: u32 = <$u>::BITS;

            /// `self + rhs mod 2^k`.
            #[inline(always)]
            pub(crate) const fn add_(self, rhs: Self) -> Self {
                Self(self.0.wrapping_add(rhs.0))
            }
            /// `self - rhs mod 2^k`.
            #[inline(always)]
            pub(crate) const fn sub_(self, rhs: Self) -> Self {
                Self(self.0.wrapping_sub(rhs.0))
            }
            /// `self * rhs mod 2^k`.
            #[inline(always)]
            pub(crate) const fn mul_(self, rhs: Self) -> Self {
                Self(self.0.wrapping_mul(rhs.0))
            }
            /// `-self mod 2^k`.
            #[inline(always)]
            pub(crate) const fn neg_(self) -> Self {
                Self(self.0.wrapping_neg())
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
                Self(!self.0)
            }
            /// Logical left shift; `0` when `s >= k`.
            #[inline(always)]
            const fn shl_(self, s: u32) -> Self {
                Self(match self.0.checked_shl(s) {
                    Some(v) => v,
                    None => 0,
                })
            }
            /// Logical right shift; `0` when `s >= k`.
            #[inline(always)]
            const fn shr_(self, s: u32) -> Self {
                Self(match self.0.checked_shr(s) {
                    Some(v) => v,
                    None => 0,
                })
            }
        }

        impl_ring_ops!([] $name);
        impl_bit_ops!([] $name);

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl Ring for $name {
            const ZERO: Self = Self(0);
            const ONE: Self = Self(1);
            const BYTES: usize = core::mem::size_of::<$u>();

            #[inline]
            fn random<G: rand_core::RngCore + ?Sized>($rng: &mut G) -> Self {
                Self($random)
            }

            #[inline]
            fn from_u64(x: u64) -> Self {
                // Truncation (or zero extension for Z128) is reduction mod 2^k.
                Self(x as $u)
            }

            #[inline]
            fn from_i64(x: i64) -> Self {
                // Sign extension / truncation is two's complement mod 2^k.
                Self(x as $s as $u)
            }

            #[inline]
            fn write_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.0.to_le_bytes());
            }

            #[inline]
            fn read_le(bytes: &[u8]) -> Result<Self, RingError> {
                let arr = bytes.try_into().map_err(|_| RingError::WrongLength {
                    expected: Self::BYTES,
                    got: bytes.len(),
                })?;
                Ok(Self(<$u>::from_le_bytes(arr)))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                crate::stored::serialize_le(&self.0.to_le_bytes(), s)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let b = crate::stored::deserialize_le::<{ core::mem::size_of::<$u>() }, D>(d)?;
                Ok(Self(<$u>::from_le_bytes(b)))
            }
        }

        impl Z2k for $name {
            const BITS: u32 = <$u>::BITS;

            #[inline]
            fn bit(self, i: u32) -> bool {
                i < Self::BITS && (self.0 >> i) & 1 == 1
            }

            #[inline]
            fn to_u128(self) -> u128 {
                self.0 as u128
            }

            #[inline]
            fn from_u128(x: u128) -> Self {
                Self(x as $u)
            }

            #[inline]
            fn to_signed(self) -> i128 {
                self.0 as $s as i128
            }

            #[inline]
            fn from_signed(x: i128) -> Self {
                Self(x as $u)
            }

            #[inline]
            fn arith_shr(self, k: u32) -> Self {
                // Shifting a signed value by >= k-1 leaves only the sign fill.
                Self(((self.0 as $s) >> k.min(Self::BITS - 1)) as $u)
            }
        }
    };
}

define_z2k!(
    /// Integers modulo `2^8`.
    Z8, u8, i8, |rng| rng.next_u32() as u8
);
define_z2k!(
    /// Integers modulo `2^16`.
    Z16, u16, i16, |rng| rng.next_u32() as u16
);
define_z2k!(
    /// Integers modulo `2^32`.
    Z32, u32, i32, |rng| rng.next_u32()
);
define_z2k!(
    /// Integers modulo `2^64`, the default MPC ring.
    Z64, u64, i64, |rng| rng.next_u64()
);
define_z2k!(
    /// Integers modulo `2^128`.
    Z128, u128, i128, |rng| (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())
);
