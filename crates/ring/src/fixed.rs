//! Fixed-point encoding of reals into `Z_{2^k}`.
//!
//! A real `x` is encoded as `round(x · 2^f) mod 2^k`, read back through the
//! two's complement view: `decode(v) = to_signed(v) / 2^f`. Encoding is exact up
//! to rounding, so `|decode(encode(x)) - x| <= 2^-(f+1)` whenever
//! `round(x · 2^f)` lies in the representable range `[-2^(k-1), 2^(k-1))`.
//! Outside that range (and for NaN / ±∞) encoding fails instead of wrapping.

use crate::{RingError, Z2k};

/// A fixed-point format with `frac_bits` fractional bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FixedPoint {
    /// Number of fractional bits `f`.
    pub frac_bits: u32,
}

/// `2^e` as an `f64` built from its exponent bits (exact; `+∞` when `e > 1023`).
fn pow2(e: u32) -> f64 {
    if e > 1023 { f64::INFINITY } else { f64::from_bits(u64::from(1023 + e) << 52) }
}

impl FixedPoint {
    /// A format with `frac_bits` fractional bits.
    pub const fn new(frac_bits: u32) -> Self {
        Self { frac_bits }
    }

    /// The scale `2^f`.
    pub fn scale(&self) -> f64 {
        pow2(self.frac_bits)
    }

    /// The resolution `2^-f`, the value of one unit in the last place.
    pub fn resolution(&self) -> f64 {
        1.0 / self.scale()
    }

    /// Encodes `x` as `round(x · 2^f)` (ties away from zero) in two's complement.
    ///
    /// Returns [`RingError::OutOfRange`] when `x` is NaN or infinite, or when the
    /// rounded value is outside `[-2^(k-1), 2^(k-1))`.
    pub fn encode<R: Z2k>(&self, x: f64) -> Result<R, RingError> {
        let err = || RingError::OutOfRange { value: x, ring_bits: R::BITS, frac_bits: self.frac_bits };
        if !x.is_finite() {
            return Err(err());
        }
        if x == 0.0 {
            return Ok(R::ZERO);
        }
        // Multiplying by a power of two is exact (barring overflow, caught below).
        let scaled = (x * self.scale()).round();
        let half = pow2(R::BITS - 1); // 2^(k-1), exact; k <= 128.
        if !(scaled >= -half && scaled < half) {
            return Err(err());
        }
        // |scaled| <= 2^127, so the conversion to i128 is exact.
        Ok(R::from_signed(scaled as i128))
    }

    /// Decodes `to_signed(x) / 2^f`.
    pub fn decode<R: Z2k>(&self, x: R) -> f64 {
        x.to_signed() as f64 / self.scale()
    }

    /// Encodes every element; fails on the first value out of range.
    pub fn encode_slice<R: Z2k>(&self, xs: &[f64]) -> Result<Vec<R>, RingError> {
        xs.iter().map(|&x| self.encode(x)).collect()
    }

    /// Decodes every element.
    pub fn decode_slice<R: Z2k>(&self, xs: &[R]) -> Vec<f64> {
        xs.iter().map(|&x| self.decode(x)).collect()
    }
}
