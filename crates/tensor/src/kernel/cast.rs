//! Zero-copy views of ring-element slices as machine words.
//!
//! `veil_ring::{Z8, Z16, Z32, Z64}` and `Zk<K>` are `#[repr(transparent)]`
//! newtypes over `u8, u16, u32, u64, u64` with no invalid bit patterns, so a
//! slice of them has exactly the layout of a slice of the word. A view is only
//! handed out after the element type has been identified by `TypeId`, and the
//! size/alignment equality is asserted at compile time below.
//!
//! `Zk<K>` stores its value reduced mod `2^K`; that is a library invariant, not a
//! validity requirement, and callers that write through a mutable `u64` view
//! mask the words before the elements are used again.
#![allow(unsafe_code)]

use std::any::TypeId;
use std::mem::{align_of, size_of};

use veil_ring::{Ring, Z8, Z16, Z32, Z64, Zk};

/// The machine word a ring type is stored in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Storage {
    /// `u8` (`Z8`).
    U8,
    /// `u16` (`Z16`).
    U16,
    /// `u32` (`Z32`).
    U32,
    /// `u64` (`Z64`, `Zk<K>`).
    U64,
}

const _: () = {
    assert!(size_of::<Z8>() == 1 && align_of::<Z8>() == align_of::<u8>());
    assert!(size_of::<Z16>() == 2 && align_of::<Z16>() == align_of::<u16>());
    assert!(size_of::<Z32>() == 4 && align_of::<Z32>() == align_of::<u32>());
    assert!(size_of::<Z64>() == 8 && align_of::<Z64>() == align_of::<u64>());
    assert!(size_of::<Zk<13>>() == 8 && align_of::<Zk<13>>() == align_of::<u64>());
};

/// The width `K` if `R` is `Zk<K>`.
fn zk_bits<R: 'static>() -> Option<u32> {
    let id = TypeId::of::<R>();
    macro_rules! probe {
        ($($k:literal)*) => {
            $( if id == TypeId::of::<Zk<$k>>() { return Some($k); } )*
        };
    }
    probe!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
        33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64);
    None
}

/// The storage word and ring width `k` of `R`, if `R` is a known `Z_{2^k}` type.
pub(crate) fn storage<R: Ring>() -> Option<(Storage, u32)> {
    let id = TypeId::of::<R>();
    if id == TypeId::of::<Z64>() {
        Some((Storage::U64, 64))
    } else if id == TypeId::of::<Z32>() {
        Some((Storage::U32, 32))
    } else if id == TypeId::of::<Z16>() {
        Some((Storage::U16, 16))
    } else if id == TypeId::of::<Z8>() {
        Some((Storage::U8, 8))
    } else {
        zk_bits::<R>().map(|k| (Storage::U64, k))
    }
}

/// Reinterprets `xs` as words of type `W` when `R`'s storage is `want`.
fn view<R: Ring, W>(xs: &[R], want: Storage) -> Option<&[W]> {
    if storage::<R>().map(|s| s.0) != Some(want)
        || size_of::<R>() != size_of::<W>()
        || align_of::<R>() != align_of::<W>()
    {
        return None;
    }
    // SAFETY: `R` was identified as a `#[repr(transparent)]` newtype of `W` (same
    // size and alignment, checked above); every `W` bit pattern is a valid `R`
    // and vice versa, and the length and lifetime are those of `xs`.
    Some(unsafe { std::slice::from_raw_parts(xs.as_ptr().cast::<W>(), xs.len()) })
}

/// Mutable version of [`view`].
fn view_mut<R: Ring, W>(xs: &mut [R], want: Storage) -> Option<&mut [W]> {
    if storage::<R>().map(|s| s.0) != Some(want)
        || size_of::<R>() != size_of::<W>()
        || align_of::<R>() != align_of::<W>()
    {
        return None;
    }
    // SAFETY: as in `view`; `xs` is borrowed mutably for the returned lifetime,
    // so there is no aliasing, and any word written is a valid `R` bit pattern.
    Some(unsafe { std::slice::from_raw_parts_mut(xs.as_mut_ptr().cast::<W>(), xs.len()) })
}

/// `xs` as `u64` words (for `Z64` and `Zk<K>`).
pub(crate) fn u64s<R: Ring>(xs: &[R]) -> Option<&[u64]> {
    view(xs, Storage::U64)
}

/// `xs` as mutable `u64` words; the caller must leave `Zk<K>` words reduced mod `2^K`.
pub(crate) fn u64s_mut<R: Ring>(xs: &mut [R]) -> Option<&mut [u64]> {
    view_mut(xs, Storage::U64)
}

/// `xs` as `u32` words (for `Z32`).
pub(crate) fn u32s<R: Ring>(xs: &[R]) -> Option<&[u32]> {
    view(xs, Storage::U32)
}

/// `xs` as mutable `u32` words (for `Z32`).
pub(crate) fn u32s_mut<R: Ring>(xs: &mut [R]) -> Option<&mut [u32]> {
    view_mut(xs, Storage::U32)
}

/// Copies a ring of width `k <= 32` into `u32` words (zero-extended).
pub(crate) fn widen_u32<R: Ring>(xs: &[R]) -> Option<Vec<u32>> {
    let (st, bits) = storage::<R>()?;
    if bits > 32 {
        return None;
    }
    match st {
        Storage::U8 => view::<R, u8>(xs, st).map(|v| v.iter().map(|&x| u32::from(x)).collect()),
        Storage::U16 => view::<R, u16>(xs, st).map(|v| v.iter().map(|&x| u32::from(x)).collect()),
        Storage::U32 => view::<R, u32>(xs, st).map(<[u32]>::to_vec),
        // Zk<K <= 32>: the stored value is < 2^K <= 2^32, so the cast is exact.
        Storage::U64 => view::<R, u64>(xs, st).map(|v| v.iter().map(|&x| x as u32).collect()),
    }
}

/// Writes `src mod 2^k` into the ring elements `dst` (`k <= 32`); `None` if `R` is not such a ring.
pub(crate) fn narrow_from_u32<R: Ring>(src: &[u32], dst: &mut [R]) -> Option<()> {
    let (st, bits) = storage::<R>()?;
    if bits > 32 {
        return None;
    }
    let mask = u32::MAX >> (32 - bits);
    match st {
        Storage::U8 => fill(view_mut::<R, u8>(dst, st)?, src, |x| x as u8),
        Storage::U16 => fill(view_mut::<R, u16>(dst, st)?, src, |x| x as u16),
        Storage::U32 => fill(view_mut::<R, u32>(dst, st)?, src, |x| x),
        Storage::U64 => fill(view_mut::<R, u64>(dst, st)?, src, |x| u64::from(x & mask)),
    }
    Some(())
}

/// `dst[i] = f(src[i])`.
fn fill<W>(dst: &mut [W], src: &[u32], f: impl Fn(u32) -> W) {
    for (o, &x) in dst.iter_mut().zip(src) {
        *o = f(x);
    }
}
