//! Macros that forward the operator traits to inherent `const fn`s.
//!
//! Each ring type defines `add_`, `sub_`, `mul_`, `neg_` (and for `Z2k` types the
//! bit operations) as inherent methods; these macros derive the `core::ops`
//! impls, the `*Assign` impls and `Sum` from them so the arithmetic lives in one place.

/// Implements `Add/Sub/Mul/Neg`, their `*Assign` forms and `Sum` via inherent methods.
macro_rules! impl_ring_ops {
    ([$($gen:tt)*] $ty:ty) => {
        impl<$($gen)*> core::ops::Add for $ty {
            type Output = Self;
            #[inline(always)]
            fn add(self, rhs: Self) -> Self {
                self.add_(rhs)
            }
        }
        impl<$($gen)*> core::ops::Sub for $ty {
            type Output = Self;
            #[inline(always)]
            fn sub(self, rhs: Self) -> Self {
                self.sub_(rhs)
            }
        }
        impl<$($gen)*> core::ops::Mul for $ty {
            type Output = Self;
            #[inline(always)]
            fn mul(self, rhs: Self) -> Self {
                self.mul_(rhs)
            }
        }
        impl<$($gen)*> core::ops::Neg for $ty {
            type Output = Self;
            #[inline(always)]
            fn neg(self) -> Self {
                self.neg_()
            }
        }
        impl<$($gen)*> core::ops::AddAssign for $ty {
            #[inline(always)]
            fn add_assign(&mut self, rhs: Self) {
                *self = self.add_(rhs);
            }
        }
        impl<$($gen)*> core::ops::SubAssign for $ty {
            #[inline(always)]
            fn sub_assign(&mut self, rhs: Self) {
                *self = self.sub_(rhs);
            }
        }
        impl<$($gen)*> core::ops::MulAssign for $ty {
            #[inline(always)]
            fn mul_assign(&mut self, rhs: Self) {
                *self = self.mul_(rhs);
            }
        }
        impl<$($gen)*> core::iter::Sum for $ty {
            fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
                iter.fold(<Self as $crate::Ring>::ZERO, |a, b| a.add_(b))
            }
        }
        impl<'a, $($gen)*> core::iter::Sum<&'a $ty> for $ty {
            fn sum<I: Iterator<Item = &'a Self>>(iter: I) -> Self {
                iter.fold(<Self as $crate::Ring>::ZERO, |a, b| a.add_(*b))
            }
        }
    };
}

/// Implements the bit operations and shifts of [`Z2k`](crate::Z2k) via inherent methods.
macro_rules! impl_bit_ops {
    ([$($gen:tt)*] $ty:ty) => {
        impl<$($gen)*> core::ops::BitAnd for $ty {
            type Output = Self;
            #[inline(always)]
            fn bitand(self, rhs: Self) -> Self {
                self.and_(rhs)
            }
        }
        impl<$($gen)*> core::ops::BitOr for $ty {
            type Output = Self;
            #[inline(always)]
            fn bitor(self, rhs: Self) -> Self {
                self.or_(rhs)
            }
        }
        impl<$($gen)*> core::ops::BitXor for $ty {
            type Output = Self;
            #[inline(always)]
            fn bitxor(self, rhs: Self) -> Self {
                self.xor_(rhs)
            }
        }
        impl<$($gen)*> core::ops::Not for $ty {
            type Output = Self;
            #[inline(always)]
            fn not(self) -> Self {
                self.not_()
            }
        }
        impl<$($gen)*> core::ops::Shl<u32> for $ty {
            type Output = Self;
            #[inline(always)]
            fn shl(self, s: u32) -> Self {
                self.shl_(s)
            }
        }
        impl<$($gen)*> core::ops::Shr<u32> for $ty {
            type Output = Self;
            #[inline(always)]
            fn shr(self, s: u32) -> Self {
                self.shr_(s)
            }
        }
        impl<$($gen)*> core::ops::BitAndAssign for $ty {
            #[inline(always)]
            fn bitand_assign(&mut self, rhs: Self) {
                *self = self.and_(rhs);
            }
        }
        impl<$($gen)*> core::ops::BitOrAssign for $ty {
            #[inline(always)]
            fn bitor_assign(&mut self, rhs: Self) {
                *self = self.or_(rhs);
            }
        }
        impl<$($gen)*> core::ops::BitXorAssign for $ty {
            #[inline(always)]
            fn bitxor_assign(&mut self, rhs: Self) {
                *self = self.xor_(rhs);
            }
        }
    };
}

pub(crate) use {impl_bit_ops, impl_ring_ops};
