//! The [`Ring`] and [`Z2k`] traits that every protocol is generic over.

use core::fmt::Debug;
use core::ops::{Add, AddAssign, BitAnd, BitOr, BitXor, Mul, MulAssign, Neg, Not, Shl, Shr, Sub, SubAssign};

use crate::RingError;

/// A finite commutative ring with a fixed-width canonical byte encoding.
///
/// Implementations: the power-of-two rings [`Z8`](crate::Z8) … [`Z128`](crate::Z128),
/// [`Zk<K>`](crate::Zk) for any width `1 <= K <= 64`, and prime fields
/// [`Fp<P>`](crate::Fp).
pub trait Ring:
    Copy
    + Clone
    + Default
    + PartialEq
    + Eq
    + Debug
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + core::iter::Sum
{
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// Bytes of the canonical little-endian encoding of one element.
    const BYTES: usize;

    /// A uniformly random element.
    fn random<G: rand_core::RngCore + ?Sized>(rng: &mut G) -> Self;

    /// `n` independent uniformly random elements.
    fn random_vec<G: rand_core::RngCore + ?Sized>(rng: &mut G, n: usize) -> Vec<Self> {
        (0..n).map(|_| Self::random(rng)).collect()
    }

    /// Reduces `x` into the ring (`x mod 2^k` or `x mod p`).
    fn from_u64(x: u64) -> Self;

    /// Maps a signed integer into the ring (two's complement for `2^k`, `x mod p` for fields).
    fn from_i64(x: i64) -> Self;

    /// Writes the canonical little-endian encoding into `out`.
    ///
    /// # Panics
    /// If `out.len() != Self::BYTES` (a caller bug, like slice indexing).
    fn write_le(self, out: &mut [u8]);

    /// Reads a canonical little-endian encoding.
    ///
    /// Fails if `bytes.len() != Self::BYTES` or the value is not canonical
    /// (for example `>= p`, or high bits set beyond `k`).
    fn read_le(bytes: &[u8]) -> Result<Self, RingError>;
}

/// The ring of integers modulo `2^BITS`, with bit operations.
///
/// Shifts by `s >= BITS` give zero (`Shl`, logical `Shr`) or the sign fill
/// ([`arith_shr`](Z2k::arith_shr)), never a panic.
pub trait Z2k:
    Ring
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
{
    /// The width `k` of the ring `Z_{2^k}`.
    const BITS: u32;

    /// Bit `i` (0 = least significant); `false` for `i >= BITS`.
    fn bit(self, i: u32) -> bool;

    /// The most significant bit, i.e. the sign bit in two's complement.
    fn msb(self) -> bool {
        self.bit(Self::BITS - 1)
    }

    /// The canonical representative in `[0, 2^k)`.
    fn to_u128(self) -> u128;

    /// `x mod 2^k`.
    fn from_u128(x: u128) -> Self;

    /// Two's complement decoding into `[-2^(k-1), 2^(k-1))`.
    fn to_signed(self) -> i128;

    /// `x mod 2^k` (wrapping).
    fn from_signed(x: i128) -> Self;

    /// Arithmetic (sign-extending) right shift by `k` bits.
    fn arith_shr(self, k: u32) -> Self;
}

/// Encodes a slice element by element with [`Ring::write_le`].
pub fn encode_slice<R: Ring>(xs: &[R]) -> Vec<u8> {
    let mut out = vec![0u8; xs.len() * R::BYTES];
    for (x, chunk) in xs.iter().zip(out.chunks_exact_mut(R::BYTES)) {
        x.write_le(chunk);
    }
    out
}

/// Decodes a byte string produced by [`encode_slice`].
///
/// Fails if `bytes.len()` is not a multiple of `R::BYTES` or any element is not canonical.
pub fn decode_slice<R: Ring>(bytes: &[u8]) -> Result<Vec<R>, RingError> {
    if !bytes.len().is_multiple_of(R::BYTES) {
        return Err(RingError::RaggedSlice { len: bytes.len(), elem_bytes: R::BYTES });
    }
    bytes.chunks_exact(R::BYTES).map(R::read_le).collect()
}
