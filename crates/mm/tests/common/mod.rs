//! Helpers the `mm` protocol tests share: a deterministic stream for share splits and the
//! signed representative of a residue.

#![allow(dead_code, reason = "each test file uses what it needs")]

/// A deterministic xorshift stream (share splits, test inputs).
pub fn stream(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// The signed representative of `x mod m`, in `(−m/2, m/2]`.
pub fn rep(x: u128, m: u128) -> i128 {
    if x >= m.div_ceil(2) { x as i128 - m as i128 } else { x as i128 }
}
