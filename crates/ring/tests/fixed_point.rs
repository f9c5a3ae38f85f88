//! Fixed-point encoding: round trips, rounding error, and range errors at the edges.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use veil_ring::{FixedPoint, RingError, Z2k, Z8, Z16, Z32, Z64, Z128, Zk};

fn round_trip<R: Z2k>(f: u32, x: f64) -> Result<(), TestCaseError> {
    let fp = FixedPoint::new(f);
    let enc: R = fp.encode(x).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back = fp.decode(enc);
    prop_assert!((back - x).abs() <= fp.resolution() / 2.0, "x={x} back={back} f={f}");
    Ok(())
}

proptest! {
    #[test]
    fn round_trip_within_half_ulp(x in -1.0e6f64..1.0e6, f in 0u32..20) {
        round_trip::<Z64>(f, x)?;
        round_trip::<Z128>(f, x)?;
        round_trip::<Zk<48>>(f, x)?;
    }

    #[test]
    fn small_rings(x in -100.0f64..100.0, f in 0u32..8) {
        round_trip::<Z16>(f, x)?;
        round_trip::<Z32>(f, x)?;
    }

    #[test]
    fn encoding_is_additive(x in -1.0e3f64..1.0e3, y in -1.0e3f64..1.0e3) {
        let fp = FixedPoint::new(12);
        let (a, b): (Z64, Z64) = (fp.encode(x).unwrap(), fp.encode(y).unwrap());
        prop_assert!((fp.decode(a + b) - (x + y)).abs() <= fp.resolution());
    }
}

fn is_out_of_range<R: Z2k>(fp: FixedPoint, x: f64) -> bool {
    matches!(fp.encode::<R>(x), Err(RingError::OutOfRange { ring_bits, .. }) if ring_bits == R::BITS)
}

#[test]
fn range_edges() {
    // Z8 with f = 2: representable scaled values are [-128, 127], i.e. x in [-32, 31.75].
    let fp = FixedPoint::new(2);
    assert_eq!(fp.encode::<Z8>(31.75).unwrap(), Z8(127));
    assert_eq!(fp.encode::<Z8>(-32.0).unwrap(), Z8(128));
    assert_eq!(fp.decode(Z8(128)), -32.0);
    assert!(is_out_of_range::<Z8>(fp, 32.0));
    assert!(is_out_of_range::<Z8>(fp, 31.9)); // rounds to 128
    assert_eq!(fp.encode::<Z8>(31.8).unwrap(), Z8(127)); // rounds to 127
    assert!(is_out_of_range::<Z8>(fp, -32.2)); // rounds to -129
    assert_eq!(fp.encode::<Z8>(-32.1).unwrap(), Z8(128)); // rounds to -128

    // Z64 with f = 16: limit 2^47.
    let fp = FixedPoint::new(16);
    let lim = 2f64.powi(47);
    assert!(is_out_of_range::<Z64>(fp, lim));
    assert!(fp.encode::<Z64>(-lim).is_ok());
    assert!(fp.encode::<Z64>(lim - 1.0).is_ok());
    assert!(is_out_of_range::<Z64>(fp, -lim - 1.0));

    // Odd widths.
    let fp = FixedPoint::new(0);
    assert!(fp.encode::<Zk<1>>(-1.0).is_ok());
    assert!(is_out_of_range::<Zk<1>>(fp, 1.0));
    assert!(is_out_of_range::<Z128>(fp, 2f64.powi(127)));
    assert_eq!(fp.encode::<Z128>(-(2f64.powi(127))).unwrap().to_signed(), i128::MIN);
}

#[test]
fn non_finite_is_an_error() {
    let fp = FixedPoint::new(8);
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(is_out_of_range::<Z64>(fp, x));
    }
    // A huge scale overflows to infinity: an error, not a wrap.
    assert!(is_out_of_range::<Z64>(FixedPoint::new(2000), 1.0));
    assert_eq!(FixedPoint::new(2000).encode::<Z64>(0.0).unwrap(), Z64(0));
    let msg = fp.encode::<Z16>(1e9).unwrap_err().to_string();
    assert!(msg.contains("16-bit") && msg.contains("8 fractional"), "{msg}");
}

#[test]
fn slices() {
    let fp = FixedPoint::new(10);
    let xs = [0.5, -1.25, 3.0, 0.0];
    let enc: Vec<Z32> = fp.encode_slice(&xs).unwrap();
    assert_eq!(fp.decode_slice(&enc), xs.to_vec());
    assert!(fp.encode_slice::<Z16>(&[1.0, 1e9]).is_err());
}
