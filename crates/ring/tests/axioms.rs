//! Ring axioms and encoding round trips, checked with proptest for every ring type.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use veil_ring::{
    F60, F61, F127, Fp, Goldilocks, Ring, Z8, Z16, Z32, Z64, Z128, Zk, decode_slice, encode_slice,
};

/// Elements drawn uniformly (from a seed) or from a set of edge values.
fn elem<R: Ring>() -> impl Strategy<Value = R> {
    prop_oneof![
        any::<u64>().prop_map(|s| R::random(&mut StdRng::seed_from_u64(s))),
        prop::sample::select(vec![0i64, 1, -1, 2, -2, i64::MAX, i64::MIN]).prop_map(R::from_i64),
        any::<u64>().prop_map(R::from_u64),
    ]
}

macro_rules! test_ring {
    ($modname:ident, $ty:ty) => {
        mod $modname {
            use super::*;
            type R = $ty;

            proptest! {
                #[test]
                fn add_group(a in elem::<R>(), b in elem::<R>(), c in elem::<R>()) {
                    prop_assert_eq!((a + b) + c, a + (b + c));
                    prop_assert_eq!(a + b, b + a);
                    prop_assert_eq!(a + R::ZERO, a);
                    prop_assert_eq!(a + (-a), R::ZERO);
                    prop_assert_eq!(a - b, a + (-b));
                    prop_assert_eq!((a - b) + b, a);
                }

                #[test]
                fn mul_monoid_and_distributive(a in elem::<R>(), b in elem::<R>(), c in elem::<R>()) {
                    prop_assert_eq!((a * b) * c, a * (b * c));
                    prop_assert_eq!(a * b, b * a);
                    prop_assert_eq!(a * R::ONE, a);
                    prop_assert_eq!(a * R::ZERO, R::ZERO);
                    prop_assert_eq!(a * (b + c), a * b + a * c);
                    prop_assert_eq!((-a) * b, -(a * b));
                }

                #[test]
                fn assign_ops_and_sum(a in elem::<R>(), b in elem::<R>()) {
                    let mut x = a;
                    x += b;
                    prop_assert_eq!(x, a + b);
                    x -= b;
                    prop_assert_eq!(x, a);
                    x *= b;
                    prop_assert_eq!(x, a * b);
                    prop_assert_eq!([a, b, a].iter().sum::<R>(), a + b + a);
                    prop_assert_eq!([a, b].into_iter().sum::<R>(), a + b);
                }

                #[test]
                fn integer_embedding_is_homomorphic(x in any::<i32>(), y in any::<i32>()) {
                    let (x, y) = (i64::from(x), i64::from(y));
                    prop_assert_eq!(R::from_i64(x) + R::from_i64(y), R::from_i64(x + y));
                    prop_assert_eq!(R::from_i64(x) * R::from_i64(y), R::from_i64(x * y));
                    prop_assert_eq!(R::from_i64(-x), -R::from_i64(x));
                    if x >= 0 {
                        prop_assert_eq!(R::from_i64(x), R::from_u64(x as u64));
                    }
                }

                #[test]
                fn encoding_round_trip(xs in prop::collection::vec(elem::<R>(), 0..20)) {
                    let bytes = encode_slice(&xs);
                    prop_assert_eq!(bytes.len(), xs.len() * R::BYTES);
                    prop_assert_eq!(decode_slice::<R>(&bytes).unwrap(), xs.clone());
                    for x in &xs {
                        let mut buf = vec![0u8; R::BYTES];
                        x.write_le(&mut buf);
                        prop_assert_eq!(R::read_le(&buf).unwrap(), *x);
                    }
                }
            }

            #[test]
            fn encoding_length_errors() {
                assert!(R::read_le(&[0u8; 17][..R::BYTES + 1]).is_err());
                assert!(R::read_le(&[]).is_err());
                if R::BYTES > 1 {
                    let ragged = [0u8; 33];
                    assert!(decode_slice::<R>(&ragged[..2 * R::BYTES + 1]).is_err());
                }
                assert_eq!(decode_slice::<R>(&[]).unwrap(), Vec::<R>::new());
            }

            #[test]
            fn random_hits_many_values() {
                let mut rng = StdRng::seed_from_u64(7);
                let xs = R::random_vec(&mut rng, 64);
                let distinct: std::collections::HashSet<_> = xs.iter().map(|x| encode_slice(&[*x])).collect();
                // Even the two-element rings must produce both values.
                assert!(distinct.len() >= 2, "{distinct:?}");
            }
        }
    };
}

test_ring!(z8, Z8);
test_ring!(z16, Z16);
test_ring!(z32, Z32);
test_ring!(z64, Z64);
test_ring!(z128, Z128);
test_ring!(zk1, Zk<1>);
test_ring!(zk13, Zk<13>);
test_ring!(zk40, Zk<40>);
test_ring!(zk64, Zk<64>);
test_ring!(f3, Fp<3>);
test_ring!(f127, F127);
test_ring!(f_ntt60, F60);
test_ring!(f_mersenne61, F61);
test_ring!(f_goldilocks, Goldilocks);
test_ring!(f_largest64, Fp<{ u64::MAX - 58 }>);
test_ring!(f_32bit, Fp<4_294_967_291>);
