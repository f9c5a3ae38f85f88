//! Serde encoding of a ring tensor, for material a party stores between sessions: its shape,
//! then its words as one byte string ([`veil_ring::words`]). Reading checks that the data
//! fills the shape exactly (the [`Tensor`] invariant), so a damaged file is an error.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use veil_ring::Ring;

use crate::Tensor;

#[derive(Serialize)]
#[serde(bound = "")]
struct TensorRef<'a, T: Ring> {
    shape: &'a [usize],
    #[serde(with = "veil_ring::words")]
    data: &'a [T],
}

#[derive(Deserialize)]
#[serde(bound = "")]
struct TensorOwned<T: Ring> {
    shape: Vec<usize>,
    #[serde(with = "veil_ring::words")]
    data: Vec<T>,
}

impl<T: Ring> Serialize for Tensor<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        TensorRef { shape: self.shape(), data: self.data() }.serialize(s)
    }
}

impl<'de, T: Ring> Deserialize<'de> for Tensor<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = TensorOwned::<T>::deserialize(d)?;
        Tensor::new(raw.shape, raw.data).map_err(serde::de::Error::custom)
    }
}
