//! Algebraic rings for Veil's MPC protocols.
//!
//! * [`Ring`]: a finite commutative ring with a canonical little-endian encoding
//!   ([`encode_slice`], [`decode_slice`] for whole messages);
//! * [`Z2k`]: rings `Z_{2^k}` with bit operations and a two's complement view —
//!   [`Z8`], [`Z16`], [`Z32`], [`Z64`], [`Z128`] (native words) and [`Zk<K>`]
//!   for any `1 <= K <= 64`;
//! * [`Fp<P>`]: prime fields for any odd prime `P < 2^64` (checked at compile time
//!   with the deterministic [`is_prime`]);
//! * [`Zp`]: a small prime field chosen at run time, with fast reductions and packed wire
//!   encoding (Aegis's sign-bit extraction);
//! * [`Gr`]: the Galois ring `GR(2^64, 64)` of Aegis's verification;
//! * [`FixedPoint`]: real numbers as scaled integers in a `Z2k` ring, with range
//!   errors instead of silent wrap-around.
//!
//! ```
//! use veil_ring::{FixedPoint, Ring, Z2k, Z64, F127};
//!
//! let a = Z64::from_i64(-3);
//! assert_eq!((a * a).to_signed(), 9);
//! assert_eq!(F127::from_u64(200).value(), 73);
//!
//! let fp = FixedPoint::new(16);
//! let x: Z64 = fp.encode(1.5)?;
//! assert_eq!(fp.decode(x + x), 3.0);
//! # Ok::<(), veil_ring::RingError>(())
//! ```

mod error;
mod fixed;
mod fp;
mod galois;
mod galois_avx2;
mod galois_inner;
mod galois_simd;
mod macros;
mod prime;
mod small_prime;
mod small_prime_avx2;
mod small_prime_bmi2;
mod small_prime_vbmi;
mod stored;
mod traits;
mod z2k;
mod zk;

pub use error::RingError;
pub use fixed::FixedPoint;
pub use fp::{F60, F61, F127, Fp, Goldilocks};
pub use galois::{GR_DEGREE, GR_F_LOW, Gr, Multiplier, f_is_irreducible_mod_2};
pub use prime::is_prime;
pub use small_prime::Zp;
pub use stored::words;
pub use traits::{Ring, Z2k, decode_slice, encode_slice};
pub use z2k::{Z8, Z16, Z32, Z64, Z128};
pub use zk::Zk;
