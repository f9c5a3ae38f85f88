//! The small prime field of sign-bit extraction: `p` is the largest prime in
//! `(l, 2^{⌈log2 l⌉+1}]` (127 for `l = 64`), so that the transformed list (values `≤ l + 1`)
//! never wraps to 0. Elements travel packed at `⌈log2 p⌉` bits each (7 for `p = 127`; the
//! paper's measurements fit one byte each), [`Zp::pack`] and [`Zp::unpack`]. The field's
//! arithmetic is `veil-ring`'s [`Zp`].
//!
//! [`Draws`] turns a PRG's bytes into exactly uniform elements by rejection: a byte `b` below
//! `⌊256/p⌋·p` gives `b mod p` (every residue the same number of times), a larger byte is
//! skipped (2 in 256 for `p = 127`). Shares and MAC shares must be uniform, not merely close:
//! a prover sees many shares under one MAC key, and a bias in each would add up to a
//! statistical trace of the key.

use rayon::prelude::*;
use veil_crypto::Prg;

/// `p` for ring width `l` (`2 ≤ l ≤ 64`).
pub fn prime_for(l: u32) -> u32 {
    let top = 1u32 << (32 - (l - 1).leading_zeros() + 1);
    (l + 1..=top).rev().find(|&q| is_prime(q)).unwrap_or(top - 1)
}

fn is_prime(q: u32) -> bool {
    veil_ring::is_prime(u64::from(q))
}

pub use veil_ring::Zp;

/// Elements per piece of [`pack_par`] and [`unpack_par`]: a multiple of 8, so that each piece
/// but the last packs into whole bytes and the pieces' bytes, concatenated, are the whole
/// vector's.
const PACK_PIECE: usize = 1 << 16;

/// [`Zp::pack`] with the pieces packed in parallel (the same bytes).
pub(crate) fn pack_par(zp: Zp, v: &[u8]) -> Vec<u8> {
    if v.len() <= PACK_PIECE {
        return zp.pack(v);
    }
    v.par_chunks(PACK_PIECE).map(|c| zp.pack(c)).collect::<Vec<_>>().concat()
}

/// [`Zp::unpack_bytes`] with the pieces unpacked in parallel: the same values, and `None` for
/// exactly the inputs it refuses (a wrong length, a value `≥ p`, nonzero padding).
pub(crate) fn unpack_par(zp: Zp, bytes: &[u8], n: usize) -> Option<Vec<u8>> {
    let mut out = vec![0u8; n];
    unpack_par_into(zp, bytes, &mut out, false).then_some(out)
}

/// [`unpack_par`] into `out` (`out.len()` elements), or with `add` added to it elementwise mod
/// `p` (its entries must be below `p`): P0 sums the two provers' lists piece by piece as it
/// unpacks the second, with no vector of it and no second pass. `false` for a malformed
/// message (`out` is then unspecified).
pub(crate) fn unpack_par_into(zp: Zp, bytes: &[u8], out: &mut [u8], add: bool) -> bool {
    let n = out.len();
    if bytes.len() != zp.packed_len(n) {
        return false;
    }
    let piece = zp.packed_len(PACK_PIECE);
    let p = zp.p() as u16;
    let one = |(b, o): (&[u8], &mut [u8])| {
        if !add {
            return zp.unpack_bytes_into(b, o);
        }
        let mut v = vec![0u8; o.len()];
        if !zp.unpack_bytes_into(b, &mut v) {
            return false;
        }
        for (s, x) in o.iter_mut().zip(v) {
            // Both below p: one conditional subtraction reduces the sum.
            let t = u16::from(*s) + u16::from(x);
            *s = (if t >= p { t - p } else { t }) as u8;
        }
        true
    };
    if n <= PACK_PIECE {
        return one((bytes, out));
    }
    bytes.par_chunks(piece).zip(out.par_chunks_mut(PACK_PIECE)).all(one)
}

/// Bytes read from the PRG at a time.
const BUF: usize = 4096;

/// Exactly uniform draws from a PRG's byte stream: elements of `Z_p` or `Z_p^*` (`p < 256`)
/// and indices below small bounds, by rejection of the few bytes that would bias them.
pub(crate) struct Draws {
    prg: Prg,
    buf: Box<[u8; BUF]>,
    pos: usize,
    /// `b mod p` for the bytes accepted for `Z_p` (a byte's entry is 255 where it is
    /// rejected), and `1 + b mod (p − 1)` for `Z_p^*`.
    zp: [u8; 256],
    nonzero: [u8; 256],
    /// `p`, for the branch-free path of [`Draws::fill_with`].
    p: u32,
}

/// Bytes the branch-free path of [`Draws::fill_with`] converts at a time (a chunk with a rejected
/// byte, 1 in 4 for `Z_127^*`, goes byte by byte).
const CHUNK: usize = 16;

fn table(modulus: u32, offset: u32) -> [u8; 256] {
    let limit = (256 / modulus.max(1)) * modulus;
    std::array::from_fn(|b| if (b as u32) < limit { (offset + b as u32 % modulus) as u8 } else { 255 })
}

impl Draws {
    /// Draws for `Z_p`, `2 ≤ p < 255`, from `prg`.
    pub(crate) fn new(prg: Prg, p: u32) -> Draws {
        Draws { prg, buf: Box::new([0; BUF]), pos: BUF, zp: table(p, 0), nonzero: table(p - 1, 1), p }
    }

    fn refill(&mut self) {
        self.prg.fill_bytes(&mut self.buf[..]);
        self.pos = 0;
    }

    /// Fills `out` through a byte table (255: rejected). Where the modulus `q` (`p` or
    /// `p − 1`) has at most two multiples below 256 (`q ≥ 86`, so `b mod q` is one conditional
    /// subtraction), 16 bytes at a time go through a branch-free conversion that the compiler
    /// vectorises, kept when none of them is rejected: the same elements, in the same order,
    /// as byte by byte.
    fn fill_with(&mut self, out: &mut [u8], nonzero: bool) {
        let (q, offset) = if nonzero { (self.p - 1, 1) } else { (self.p, 0) };
        let Draws { prg, buf, pos, zp, nonzero: nz, .. } = self;
        let t: &[u8; 256] = if nonzero { nz } else { zp };
        let fast = (86..256).contains(&q);
        let (q8, limit) = (q as u8, ((256 / q.max(1)) * q).min(255) as u8);
        let mut k = 0;
        while k < out.len() {
            if *pos == BUF {
                prg.fill_bytes(&mut buf[..]);
                *pos = 0;
            }
            let mut take = (BUF - *pos).min(out.len() - k);
            #[cfg(target_arch = "x86_64")]
            if fast
                && let Some((used, made)) =
                    crate::prime_simd::convert_run(&buf[*pos..], &mut out[k..], q8, limit, offset)
                && used > 0
            {
                k += made;
                *pos += used;
                continue;
            }
            if fast && k + CHUNK <= out.len() && *pos + CHUNK <= BUF {
                let src = &buf[*pos..*pos + CHUNK];
                let mut converted = [0u8; CHUNK];
                let mut rejected = 0u8;
                for (c, &b) in converted.iter_mut().zip(src) {
                    rejected |= u8::from(b >= limit);
                    *c = offset + if b >= q8 { b - q8 } else { b };
                }
                if rejected == 0 {
                    out[k..k + CHUNK].copy_from_slice(&converted);
                    k += CHUNK;
                    *pos += CHUNK;
                    continue;
                }
                // This chunk byte by byte, then the branch-free path again.
                take = CHUNK;
            }
            // At most one element per byte: `take ≤ out.len() − k` bytes cannot overrun `out`.
            for &b in &buf[*pos..*pos + take] {
                let v = t[usize::from(b)];
                out[k] = v;
                k += usize::from(v != 255);
            }
            *pos += take;
        }
    }

    /// Uniform elements of `Z_p`.
    pub(crate) fn fill(&mut self, out: &mut [u8]) {
        self.fill_with(out, false);
    }

    /// Uniform elements of `Z_p^*`.
    pub(crate) fn fill_nonzero(&mut self, out: &mut [u8]) {
        self.fill_with(out, true);
    }

    /// One uniform element of `Z_p`.
    #[cfg(test)]
    pub(crate) fn next(&mut self) -> u8 {
        let mut v = [0u8];
        self.fill(&mut v);
        v[0]
    }

    /// The next `out.len()` bytes of the stream as they are.
    pub(crate) fn bytes(&mut self, out: &mut [u8]) {
        let mut k = 0;
        while k < out.len() {
            if self.pos == BUF {
                self.refill();
            }
            let take = (BUF - self.pos).min(out.len() - k);
            out[k..k + take].copy_from_slice(&self.buf[self.pos..self.pos + take]);
            self.pos += take;
            k += take;
        }
    }

    /// The next two bytes of the stream as a `u32` below `2^16`.
    fn next_u16(&mut self) -> u32 {
        if self.pos + 2 > BUF {
            // Keep the stream's order: the byte left over starts the next word.
            let carry = if self.pos < BUF { Some(self.buf[self.pos]) } else { None };
            self.refill();
            if let Some(first) = carry {
                let v = u32::from(first) | u32::from(self.buf[0]) << 8;
                self.pos = 1;
                return v;
            }
        }
        let v = u32::from(self.buf[self.pos]) | u32::from(self.buf[self.pos + 1]) << 8;
        self.pos += 2;
        v
    }

    /// A uniform index in `0..=k` (`k < 2^16 − 1`): Lemire's multiply-and-shift of a 16-bit draw,
    /// redrawn in the rare case (probability below `(k + 1)/2^16`) that would bias it.
    pub(crate) fn below_or_equal(&mut self, k: u32) -> u32 {
        let r = self.next_u16();
        self.below_or_equal_with(r, k)
    }

    /// [`Draws::below_or_equal`] from a first 16-bit draw `r` the caller read from this
    /// stream; further draws, when needed, come from the stream.
    #[inline(always)]
    pub(crate) fn below_or_equal_with(&mut self, r: u32, k: u32) -> u32 {
        let s = k + 1;
        let m = r * s;
        if (m & 0xffff) < s { self.redraw(m, s) } else { m >> 16 }
    }

    /// The rare case of [`Draws::below_or_equal_with`] (probability below `s/2^16`): `m` may be
    /// in the biased range, redrawn while it is.
    #[cold]
    #[inline(never)]
    fn redraw(&mut self, mut m: u32, s: u32) -> u32 {
        let threshold = (0x1_0000 - s) % s;
        while (m & 0xffff) < threshold {
            m = self.next_u16() * s;
        }
        m >> 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use veil_crypto::Seed;

    #[test]
    fn parallel_packing_is_the_serial_packing() {
        for p in [127u32, 61, 13] {
            let zp = Zp::new(p);
            let mut d = Draws::new(Prg::new(&Seed([5; 16])), p);
            for n in [5, PACK_PIECE, PACK_PIECE + 1, 3 * PACK_PIECE + 13] {
                let mut v = vec![0u8; n];
                d.fill(&mut v);
                let packed = zp.pack(&v);
                assert_eq!(pack_par(zp, &v), packed, "p = {p}, n = {n}");
                assert_eq!(unpack_par(zp, &packed, n), Some(v.clone()), "p = {p}, n = {n}");
                assert_eq!(
                    unpack_par(zp, &packed, n + 1),
                    zp.unpack_bytes(&packed, n + 1),
                    "p = {p}, n = {n}"
                );
                assert_eq!(unpack_par(zp, &packed, n + 8), None, "a wrong length is refused");
                // Unpacked onto a vector of the same length: the sum mod p.
                let mut w = vec![0u8; n];
                d.fill(&mut w);
                let mut sums = w.clone();
                assert!(unpack_par_into(zp, &packed, &mut sums, true));
                let expected: Vec<u8> =
                    v.iter().zip(&w).map(|(&a, &b)| ((u32::from(a) + u32::from(b)) % p) as u8).collect();
                assert_eq!(sums, expected, "p = {p}, n = {n}");
                assert!(!unpack_par_into(zp, &packed, &mut vec![0u8; n + 8], true), "a wrong length");
                if n > PACK_PIECE {
                    // A value ≥ p in the second piece and nonzero padding are refused.
                    let mut bad = v.clone();
                    bad[PACK_PIECE] = (p - 1) as u8;
                    let mut bytes = zp.pack(&bad);
                    let w = zp.wire_bits() as usize;
                    let bit = PACK_PIECE * w;
                    for k in 0..w {
                        bytes[(bit + k) / 8] |= 1 << ((bit + k) % 8);
                    }
                    assert_eq!(unpack_par(zp, &bytes, n), zp.unpack_bytes(&bytes, n), "p = {p}, n = {n}");
                    assert_eq!(unpack_par(zp, &bytes, n), None, "an all-ones value is ≥ p");
                    if !(n * w).is_multiple_of(8) {
                        let mut padded = packed.clone();
                        *padded.last_mut().unwrap() |= 0x80;
                        assert_eq!(unpack_par(zp, &padded, n), None, "nonzero padding is refused");
                    }
                }
            }
        }
    }

    #[test]
    fn primes_of_each_width() {
        assert_eq!(prime_for(8), 13);
        assert_eq!(prime_for(16), 31);
        assert_eq!(prime_for(32), 61);
        assert_eq!(prime_for(64), 127);
    }

    /// Every residue is drawn, none out of range, with frequencies within a few standard
    /// deviations of uniform; the same seed gives the same draws.
    #[test]
    fn the_branch_free_and_vector_paths_draw_what_the_table_does() {
        for p in [61u32, 127, 131, 251] {
            for nonzero in [false, true] {
                let seed = Seed([p as u8; 16]);
                let mut d = Draws::new(Prg::new(&seed), p);
                let mut fast = vec![0u8; 20_000];
                let mut k = 0;
                for len in [1usize, 63, 64, 65, 200, 4096, 5000].iter().cycle() {
                    let end = (k + len).min(fast.len());
                    d.fill_with(&mut fast[k..end], nonzero);
                    k = end;
                    if k == fast.len() {
                        break;
                    }
                }
                // Byte by byte through the table from the same stream.
                let (q, offset) = if nonzero { (p - 1, 1) } else { (p, 0) };
                let t = table(q, offset);
                let mut stream = Prg::new(&seed);
                let mut reference = Vec::with_capacity(fast.len());
                let mut block = [0u8; BUF];
                while reference.len() < fast.len() {
                    stream.fill_bytes(&mut block);
                    for &b in &block {
                        if t[usize::from(b)] != 255 && reference.len() < fast.len() {
                            reference.push(t[usize::from(b)]);
                        }
                    }
                }
                assert_eq!(fast, reference, "p = {p}, nonzero = {nonzero}");
            }
        }
    }

    #[test]
    fn draws_are_uniform_in_range_and_repeatable() {
        for p in [13u32, 31, 61, 127] {
            let mut d = Draws::new(Prg::new(&Seed([3; 16])), p);
            let mut v = vec![0u8; 200_000];
            d.fill(&mut v);
            let mut counts = vec![0usize; p as usize];
            for &x in &v {
                assert!(u32::from(x) < p);
                counts[usize::from(x)] += 1;
            }
            let mean = v.len() as f64 / f64::from(p);
            for (x, &c) in counts.iter().enumerate() {
                assert!((c as f64 - mean).abs() < 6.0 * mean.sqrt(), "p = {p}: {x} drawn {c} times");
            }
            let mut nz = vec![0u8; 10_000];
            d.fill_nonzero(&mut nz);
            assert!(nz.iter().all(|&x| x >= 1 && u32::from(x) < p));
            let mut again = Draws::new(Prg::new(&Seed([3; 16])), p);
            let mut w = vec![0u8; 1000];
            again.fill(&mut w);
            assert_eq!(w, v[..1000]);
            for k in [0u32, 1, 2, 5, 63, 64, 200, 1000] {
                assert!((0..300).all(|_| d.below_or_equal(k) <= k));
            }
            let mut counts = [0usize; 7];
            for _ in 0..70_000 {
                counts[d.below_or_equal(6) as usize] += 1;
            }
            assert!(counts.iter().all(|&c| (c as f64 - 10_000.0).abs() < 600.0), "{counts:?}");
        }
    }
}
