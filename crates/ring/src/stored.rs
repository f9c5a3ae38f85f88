//! Serde encodings of ring words, for material a party stores between sessions.
//!
//! A word of `Z_2^k` (k = 8 … 128) is `k/8` little-endian bytes, as a fixed-size tuple of bytes
//! (so a compact binary format writes exactly those bytes, with no length or varint). A
//! `Vec` of words in a hot field is better written whole with [`words`]: one byte string of
//! [`encode_slice`], decoded with [`decode_slice`]'s checks.

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserializer, Serializer};

use crate::{Ring, decode_slice, encode_slice};

/// Writes `bytes` as a tuple of that many bytes.
pub(crate) fn serialize_le<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    let mut t = s.serialize_tuple(bytes.len())?;
    for b in bytes {
        t.serialize_element(b)?;
    }
    t.end()
}

/// Reads a tuple of `N` bytes.
pub(crate) fn deserialize_le<'de, const N: usize, D: Deserializer<'de>>(d: D) -> Result<[u8; N], D::Error> {
    struct Le<const N: usize>;
    impl<'de, const N: usize> Visitor<'de> for Le<N> {
        type Value = [u8; N];
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{N} little-endian bytes")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[u8; N], A::Error> {
            let mut out = [0u8; N];
            for (i, b) in out.iter_mut().enumerate() {
                *b = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(i, &self))?;
            }
            Ok(out)
        }
    }
    d.deserialize_tuple(N, Le::<N>)
}

/// `#[serde(with = "veil_ring::words")]` for a `Vec<R>`: one byte string of the words'
/// little-endian encodings.
pub mod words {
    use super::*;

    /// Writes the words as one byte string.
    pub fn serialize<R: Ring, S: Serializer>(v: &[R], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&encode_slice(v))
    }

    /// Reads a byte string of whole, canonical words.
    pub fn deserialize<'de, R: Ring, D: Deserializer<'de>>(d: D) -> Result<Vec<R>, D::Error> {
        struct Words<R>(PhantomData<R>);
        impl<'de, R: Ring> Visitor<'de> for Words<R> {
            type Value = Vec<R>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a byte string of {}-byte ring words", R::BYTES)
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<R>, E> {
                decode_slice(v).map_err(E::custom)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<R>, A::Error> {
                let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
                while let Some(b) = seq.next_element::<u8>()? {
                    bytes.push(b);
                }
                self.visit_bytes(&bytes)
            }
        }
        d.deserialize_bytes(Words(PhantomData))
    }
}
