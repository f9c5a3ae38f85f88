//! The layout of a piece of offline material ([`Shape`]: the lengths and counts that fix it)
//! and the ring words material holds ([`Word`]): what stored material is checked against
//! before use ([`crate::stored`]), in a leaf module every gate's material implements.

use serde::Serialize;
use veil_ring::{Z8, Z16, Z32, Z64, Z128};

/// A ring word that material can hold: any `Z_2^k` with serde's encoding.
pub trait Word: veil_ring::Z2k + Serialize + serde::de::DeserializeOwned {}

impl<T: veil_ring::Z2k + Serialize + serde::de::DeserializeOwned> Word for T {}

/// The lengths (and counts) that fix the layout of a piece of material: two pieces with equal
/// shapes can be used in each other's place without an out-of-range access.
pub(crate) trait Shape {
    /// Appends this piece's lengths and counts to `out`.
    fn shape(&self, out: &mut Vec<usize>);
}

macro_rules! no_shape {
    ($($t:ty),*) => {$(
        impl Shape for $t {
            #[inline]
            fn shape(&self, _: &mut Vec<usize>) {}
        }
    )*};
}
no_shape!(Z8, Z16, Z32, Z64, Z128, u128);

impl<T: Shape> Shape for Vec<T> {
    fn shape(&self, out: &mut Vec<usize>) {
        out.push(self.len());
        for x in self {
            x.shape(out);
        }
    }
}

impl<A: Shape, B: Shape> Shape for (A, B) {
    fn shape(&self, out: &mut Vec<usize>) {
        self.0.shape(out);
        self.1.shape(out);
    }
}

impl<T: Shape> Shape for Option<T> {
    fn shape(&self, out: &mut Vec<usize>) {
        out.push(usize::from(self.is_some()));
        if let Some(x) = self {
            x.shape(out);
        }
    }
}

impl<T: Shape> Shape for Box<T> {
    fn shape(&self, out: &mut Vec<usize>) {
        (**self).shape(out);
    }
}
