//! `Z2k` specifics: bit operations, shifts, and the two's complement view.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use veil_ring::{Ring, RingError, Z2k, Z8, Z16, Z32, Z64, Z128, Zk};

fn mask(bits: u32) -> u128 {
    if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 }
}

macro_rules! test_z2k {
    ($modname:ident, $ty:ty) => {
        mod $modname {
            use super::*;
            type R = $ty;
            const K: u32 = <R as Z2k>::BITS;
            /// Most negative / most positive signed value, `-2^(k-1)` and `2^(k-1) - 1`.
            const MIN: i128 = i128::MIN >> (128 - K);
            const MAX: i128 = i128::MAX >> (128 - K);

            fn elem() -> impl Strategy<Value = R> {
                prop_oneof![
                    any::<u128>().prop_map(R::from_u128),
                    (-3i128..=3).prop_map(R::from_signed),
                    Just(R::from_u128(1u128 << (K - 1))),
                    Just(R::from_u128(mask(K - 1))),
                ]
            }

            proptest! {
                #[test]
                fn matches_u128_model(a in elem(), b in elem(), s in 0u32..140) {
                    let (x, y, m) = (a.to_u128(), b.to_u128(), mask(K));
                    prop_assert!(x <= m);
                    prop_assert_eq!((a + b).to_u128(), x.wrapping_add(y) & m);
                    prop_assert_eq!((a * b).to_u128(), x.wrapping_mul(y) & m);
                    prop_assert_eq!((a & b).to_u128(), x & y);
                    prop_assert_eq!((a | b).to_u128(), x | y);
                    prop_assert_eq!((a ^ b).to_u128(), x ^ y);
                    prop_assert_eq!((!a).to_u128(), !x & m);
                    let shl = if s >= K { 0 } else { (x << s) & m };
                    let shr = if s >= K { 0 } else { x >> s };
                    prop_assert_eq!((a << s).to_u128(), shl);
                    prop_assert_eq!((a >> s).to_u128(), shr);
                    prop_assert_eq!(a.bit(s), s < K && (x >> s) & 1 == 1);
                    prop_assert_eq!(a.msb(), (x >> (K - 1)) & 1 == 1);
                }

                #[test]
                fn signed_view(a in elem(), s in 0u32..140) {
                    let v = a.to_signed();
                    prop_assert!((MIN..=MAX).contains(&v));
                    prop_assert_eq!(R::from_signed(v), a);
                    prop_assert_eq!(v < 0, a.msb());
                    prop_assert_eq!(a.arith_shr(s).to_signed(), v >> s.min(127));
                }

                #[test]
                fn from_signed_wraps(x in any::<i128>()) {
                    prop_assert_eq!(R::from_signed(x).to_u128(), (x as u128) & mask(K));
                }
            }

            #[test]
            fn signed_edges() {
                assert_eq!(R::ZERO.to_signed(), 0);
                assert_eq!(R::from_i64(-1).to_signed(), -1);
                assert_eq!(R::from_u128(mask(K)).to_signed(), -1);
                assert_eq!(R::from_u128(1u128 << (K - 1)).to_signed(), MIN);
                assert_eq!(R::from_u128(mask(K - 1)).to_signed(), MAX);
                assert_eq!(R::from_signed(MIN).to_signed(), MIN);
                assert_eq!(R::from_signed(MAX).to_signed(), MAX);
                assert_eq!(R::from_signed(MAX) + R::ONE, R::from_signed(MIN));
                assert_eq!(R::from_i64(-1).arith_shr(K + 5), R::from_i64(-1));
                assert_eq!(R::from_signed(MAX).arith_shr(K), R::ZERO);
            }
        }
    };
}

test_z2k!(z8, Z8);
test_z2k!(z16, Z16);
test_z2k!(z32, Z32);
test_z2k!(z64, Z64);
test_z2k!(z128, Z128);
test_z2k!(zk1, Zk<1>);
test_z2k!(zk13, Zk<13>);
test_z2k!(zk63, Zk<63>);
test_z2k!(zk64, Zk<64>);

#[test]
fn zk_read_le_rejects_high_bits() {
    assert_eq!(<Zk<13> as Ring>::BYTES, 2);
    assert!(matches!(
        Zk::<13>::read_le(&[0xFF, 0x20]),
        Err(RingError::NonCanonical { value: 0x20FF, modulus: 8192 })
    ));
    assert_eq!(Zk::<13>::read_le(&[0xFF, 0x1F]).unwrap().value(), 0x1FFF);
    assert!(Zk::<1>::read_le(&[2]).is_err());
    assert_eq!(Zk::<64>::read_le(&[0xFF; 8]).unwrap().value(), u64::MAX);
}

#[test]
fn native_widths() {
    assert_eq!((Z8::BYTES, Z16::BYTES, Z32::BYTES, Z64::BYTES, Z128::BYTES), (1, 2, 4, 8, 16));
    assert_eq!(Z64(u64::MAX) + Z64(1), Z64(0));
    assert_eq!(Z64::from_i64(i64::MIN).to_signed(), i128::from(i64::MIN));
    assert_eq!(Z128::from_i64(-1).0, u128::MAX);
}
