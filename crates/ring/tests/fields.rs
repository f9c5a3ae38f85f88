//! Prime-field specifics: reduction against `u128` arithmetic, inverses, canonical decoding.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use veil_ring::{F60, F61, F127, Fp, Goldilocks, Ring, RingError};

macro_rules! field_tests {
    ($modname:ident, $ty:ty) => {
        mod $modname {
            use super::*;
            type F = $ty;
            const P: u64 = F::MODULUS;

            proptest! {
                #[test]
                fn ops_match_u128(a in any::<u64>(), b in any::<u64>()) {
                    let (x, y) = (F::from_u64(a), F::from_u64(b));
                    let (a, b, p) = (u128::from(a % P), u128::from(b % P), u128::from(P));
                    prop_assert_eq!(u128::from((x * y).value()), a * b % p);
                    prop_assert_eq!(u128::from((x + y).value()), (a + b) % p);
                    prop_assert_eq!(u128::from((x - y).value()), (a + p - b) % p);
                }

                #[test]
                fn inverse(a in any::<u64>()) {
                    let x = F::from_u64(a);
                    match x.inv() {
                        None => prop_assert_eq!(x, F::ZERO),
                        Some(y) => prop_assert_eq!(x * y, F::ONE),
                    }
                }

                #[test]
                fn from_i64_is_mod_p(a in any::<i64>()) {
                    let want = i128::from(a).rem_euclid(i128::from(P)) as u64;
                    prop_assert_eq!(F::from_i64(a).value(), want);
                    prop_assert_eq!(F::from_i64(a).centered().rem_euclid(i128::from(P)) as u64, want);
                }
            }

            #[test]
            fn edges_and_fermat() {
                let top = F::from_u64(P - 1);
                assert_eq!(top * top, F::ONE);
                assert_eq!(top + F::ONE, F::ZERO);
                assert_eq!(F::ZERO - F::ONE, top);
                assert_eq!(F::from_u64(P), F::ZERO);
                assert_eq!(F::from_i64(-1), top);
                assert_eq!(F::from_u64(5).pow(P - 1), F::ONE);
                assert_eq!(F::from_u64(5).pow(0), F::ONE);
                assert_eq!(F::ZERO.inv(), None);
                assert_eq!(F::from_u128(u128::MAX).value() as u128, u128::MAX % P as u128);
                assert_eq!(top.centered(), -1);
            }

            #[test]
            fn read_le_rejects_non_canonical() {
                let n = F::BYTES;
                for bad in [P, P + 1, (u64::MAX >> (64 - 8 * n as u32)).max(P)] {
                    if u128::from(bad) >= 1u128 << (8 * n) {
                        continue;
                    }
                    let bytes = &bad.to_le_bytes()[..n];
                    assert!(
                        matches!(F::read_le(bytes), Err(RingError::NonCanonical { .. })),
                        "{bad} accepted"
                    );
                }
                let ok = &(P - 1).to_le_bytes()[..n];
                assert_eq!(F::read_le(ok).unwrap().value(), P - 1);
            }
        }
    };
}

field_tests!(f3, Fp<3>);
field_tests!(f127, F127);
field_tests!(f60, F60);
field_tests!(f61, F61);
field_tests!(goldilocks, Goldilocks);
field_tests!(largest, Fp<{ u64::MAX - 58 }>);
field_tests!(f32bit, Fp<4_294_967_291>);

#[test]
fn byte_widths() {
    assert_eq!(F127::BYTES, 1);
    assert_eq!(F61::BYTES, 8);
    assert_eq!(F60::BYTES, 8);
    assert_eq!(Fp::<65_537>::BYTES, 3);
    assert_eq!(F127::MODULUS_BITS, 7);
}
