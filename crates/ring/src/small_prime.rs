//! [`Zp`]: arithmetic modulo a small prime chosen at run time (`p < 2^16`), with reductions
//! by a precomputed multiplier and elements packed at `⌈log2 p⌉` bits on the wire. The
//! sign-bit extraction of `aegis` works in such a field (`p = 127` for `Z_2^64`).

/// Arithmetic mod a small prime. Reductions use a precomputed multiplier instead of a
/// hardware division (Lemire, Kaser and Kurz, *Faster remainder by direct computation*): with
/// `M = ⌊(2^64 − 1)/p⌋ + 1`, `a mod p = ⌊((M·a mod 2^64)·p) / 2^64⌋` for every 32-bit `a`.
#[derive(Clone, Copy, Debug)]
pub struct Zp {
    p: u32,
    m: u64,
}

impl Zp {
    /// The field of `p` elements (`2 ≤ p < 2^16`, so sums and products of reduced elements fit
    /// in 32 bits).
    pub fn new(p: u32) -> Zp {
        Zp { p, m: u64::MAX / u64::from(p.max(1)) + 1 }
    }
    /// `p`.
    pub fn p(self) -> u32 {
        self.p
    }
    /// `a mod p` for any 32-bit `a`.
    pub fn reduce(self, a: u32) -> u32 {
        let low = self.m.wrapping_mul(u64::from(a));
        ((u128::from(low) * u128::from(self.p)) >> 64) as u32
    }
    /// `a + b`.
    pub fn add(self, a: u32, b: u32) -> u32 {
        self.reduce(a + b)
    }
    /// `a - b`.
    pub fn sub(self, a: u32, b: u32) -> u32 {
        self.reduce(a + self.p - self.reduce(b))
    }
    /// `a · b`.
    pub fn mul(self, a: u32, b: u32) -> u32 {
        self.reduce(a * b)
    }
    /// A uniform element of `Z_p` from 32 random bits (bias below `p / 2^32`).
    pub fn from_random(self, r: u32) -> u32 {
        ((u64::from(r) * u64::from(self.p)) >> 32) as u32
    }
    /// A uniform element of `Z_p^*`.
    pub fn nonzero_from_random(self, r: u32) -> u32 {
        1 + ((u64::from(r) * u64::from(self.p - 1)) >> 32) as u32
    }
    /// Bits per element on the wire: `⌈log2 p⌉`.
    pub fn wire_bits(self) -> u32 {
        32 - (self.p - 1).leading_zeros()
    }
    /// Bytes of `n` packed elements.
    pub fn packed_len(self, n: usize) -> usize {
        (n * self.wire_bits() as usize).div_ceil(8)
    }
    /// Elements (each `< p`) packed at [`Zp::wire_bits`] bits each, least significant bit
    /// first; the last byte is padded with zeros. Up to 7 bits, eight elements at a time fill
    /// `wire_bits` whole bytes, which go through one 64-bit word.
    pub fn pack<T: Copy + Into<u32>>(self, v: &[T]) -> Vec<u8> {
        let w = self.wire_bits();
        let mut out = Vec::with_capacity(self.packed_len(v.len()) + 16);
        let rest = match w {
            7 => gather::<7, T>(v, &mut out),
            6 => gather::<6, T>(v, &mut out),
            5 => gather::<5, T>(v, &mut out),
            4 => gather::<4, T>(v, &mut out),
            3 => gather::<3, T>(v, &mut out),
            2 => gather::<2, T>(v, &mut out),
            1 => gather::<1, T>(v, &mut out),
            _ => v,
        };
        let (mut acc, mut bits) = (0u64, 0u32);
        for &x in rest {
            acc |= u64::from(x.into()) << bits;
            bits += w;
            while bits >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                bits -= 8;
            }
        }
        if bits > 0 {
            out.push(acc as u8);
        }
        out
    }
    /// [`Zp::unpack`] into bytes, for `p < 256` (`None` for a larger `p`): eight elements per
    /// word written in place, then one pass that checks every element is below `p`.
    pub fn unpack_bytes(self, bytes: &[u8], n: usize) -> Option<Vec<u8>> {
        let mut out = vec![0u8; n];
        self.unpack_bytes_into(bytes, &mut out).then_some(out)
    }

    /// [`Zp::unpack_bytes`] into `out` (`out.len()` elements), for a caller that reuses its
    /// buffer or unpacks pieces of one message in place: `false` (and `out` unspecified) for a
    /// malformed message or a `p` above 256.
    pub fn unpack_bytes_into(self, bytes: &[u8], out: &mut [u8]) -> bool {
        let n = out.len();
        let w = self.wire_bits() as usize;
        if w > 7 || bytes.len() != self.packed_len(n) {
            if w == 8 && bytes.len() == n && bytes.iter().all(|&x| u32::from(x) < self.p) {
                out.copy_from_slice(bytes);
                return true;
            }
            return false;
        }
        let mask = (1u64 << w) - 1;
        let groups = n / 8;
        let (whole, tail) = bytes.split_at(groups * w);
        match w {
            7 => spread::<7>(whole, out),
            6 => spread::<6>(whole, out),
            5 => spread::<5>(whole, out),
            4 => spread::<4>(whole, out),
            3 => spread::<3>(whole, out),
            2 => spread::<2>(whole, out),
            _ => spread::<1>(whole, out),
        }
        // The last `n mod 8` elements, and a zero padding.
        let (mut acc, mut bits, mut next) = (0u64, 0usize, tail.iter());
        for d in &mut out[8 * groups..] {
            while bits < w {
                let Some(&b) = next.next() else { return false };
                acc |= u64::from(b) << bits;
                bits += 8;
            }
            *d = (acc & mask) as u8;
            acc >>= w;
            bits -= w;
        }
        // The largest element, by a reduction that vectorises (no early exit).
        let largest = out.iter().fold(0u8, |m, &x| m.max(x));
        acc == 0 && next.next().is_none() && u32::from(largest) < self.p
    }

    /// `n` elements from [`Zp::pack`]'s bytes; `None` unless the length is exact, every element
    /// is below `p` and the padding is zero (a malformed message). `T` is `u32`, or `u8` to
    /// hold many elements of a prime below 256 in a quarter of the memory
    /// ([`Zp::unpack_bytes`] gives those without a conversion per element).
    pub fn unpack<T: TryFrom<u32>>(self, bytes: &[u8], n: usize) -> Option<Vec<T>> {
        if self.wire_bits() <= 8 {
            return self
                .unpack_bytes(bytes, n)?
                .into_iter()
                .map(|x| T::try_from(u32::from(x)).ok())
                .collect();
        }
        if bytes.len() != self.packed_len(n) {
            return None;
        }
        let w = self.wire_bits();
        let mask = (1u64 << w) - 1;
        let mut out = Vec::with_capacity(n);
        let mut bytes = bytes;
        let mut left = n;
        if w <= 7 {
            // Eight elements per `w` bytes, read as one word.
            let groups = n / 8;
            let (whole, tail) = bytes.split_at(groups * w as usize);
            for g in whole.chunks_exact(w as usize) {
                let mut b = [0u8; 8];
                b[..g.len()].copy_from_slice(g);
                let word = u64::from_le_bytes(b);
                for i in 0..8 {
                    let x = ((word >> (w * i)) & mask) as u32;
                    if x >= self.p {
                        return None;
                    }
                    out.push(T::try_from(x).ok()?);
                }
            }
            bytes = tail;
            left = n - 8 * groups;
        }
        let (mut acc, mut bits, mut next) = (0u64, 0u32, bytes.iter());
        for _ in 0..left {
            while bits < w {
                acc |= u64::from(*next.next()?) << bits;
                bits += 8;
            }
            let x = (acc & mask) as u32;
            if x >= self.p {
                return None;
            }
            out.push(T::try_from(x).ok()?);
            acc >>= w;
            bits -= w;
        }
        (acc == 0 && next.next().is_none()).then_some(out)
    }
}

/// Packs the whole groups of eight elements of `v` at `W` bits each (`W` bytes per group)
/// onto `out`, 32 elements at a time with AVX2 where the processor has it, then each group's
/// word written as 8 bytes at once (its top `8 − W` bytes are 0 and the next group's bytes
/// overwrite them), and returns the last `len mod 8` elements.
fn gather<'a, const W: usize, T: Copy + Into<u32>>(v: &'a [T], out: &mut Vec<u8>) -> &'a [T] {
    let rest = &v[v.len() / 8 * 8..];
    let start = out.len();
    out.resize(start + v.len() / 8 * W + 16, 0);
    #[cfg(target_arch = "x86_64")]
    let (v, mut at) = {
        let (done, at) = crate::small_prime_avx2::gather::<W, T>(v, out, start);
        (&v[done..], at)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let mut at = start;
    #[cfg(target_arch = "x86_64")]
    if let Some(end) = crate::small_prime_bmi2::gather::<W, T>(v, out, at) {
        out.truncate(end);
        return rest;
    }
    for g in v.chunks_exact(8) {
        let word = g.iter().enumerate().fold(0u64, |acc, (i, &x)| acc | u64::from(x.into()) << (W * i));
        out[at..at + 8].copy_from_slice(&word.to_le_bytes());
        at += W;
    }
    out.truncate(at);
    rest
}

/// Eight elements of `W` bits per `W` bytes of `whole` into bytes of `out`: 64 at a time with
/// AVX-512 VBMI where the processor has it, then 32 at a time with AVX2 where it has that,
/// the rest one group at a time (the shifts are constants, so the loop unrolls).
fn spread<const W: usize>(whole: &[u8], out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    let (whole, out) = {
        let done = crate::small_prime_vbmi::spread::<W>(whole, out);
        (&whole[done / 8 * W..], &mut out[done..])
    };
    #[cfg(target_arch = "x86_64")]
    let (whole, out) = {
        let done = crate::small_prime_avx2::spread::<W>(whole, out);
        (&whole[done / 8 * W..], &mut out[done..])
    };
    #[cfg(target_arch = "x86_64")]
    if crate::small_prime_bmi2::spread::<W>(whole, out) {
        return;
    }
    let mask = (1u64 << W) - 1;
    for (g, dst) in whole.chunks_exact(W).zip(out.chunks_exact_mut(8)) {
        let mut b = [0u8; 8];
        b[..W].copy_from_slice(g);
        let word = u64::from_le_bytes(b);
        for (i, d) in dst.iter_mut().enumerate() {
            *d = ((word >> (W * i)) & mask) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_by_multiplier_equals_the_remainder() {
        for p in [13, 31, 61, 127] {
            let zp = Zp::new(p);
            let samples = (0..70_000u32).chain([u32::MAX, u32::MAX - 1, 1 << 31, p * p, p * p - 1]);
            for a in samples.chain((0..1000u32).map(|i| i.wrapping_mul(2_654_435_761))) {
                assert_eq!(zp.reduce(a), a % p, "{a} mod {p}");
            }
            assert_eq!(zp.sub(0, p - 1), 1);
            assert_eq!(zp.mul(p - 1, p - 1), 1);
        }
    }

    /// The bit-by-bit packing the word-at-a-time path must equal.
    fn reference_pack(w: u32, v: &[u32]) -> Vec<u8> {
        let mut bits = Vec::new();
        for &x in v {
            bits.extend((0..w).map(|i| (x >> i) & 1));
        }
        bits.chunks(8).map(|c| c.iter().enumerate().fold(0u8, |b, (i, &bit)| b | (bit as u8) << i)).collect()
    }

    #[test]
    fn word_packing_equals_the_bitwise_layout_and_checks_every_element() {
        // Every width, and lengths around the 32 and 64 elements of the vector paths' steps.
        for p in [2u32, 3, 7, 13, 31, 61, 127, 251] {
            let zp = Zp::new(p);
            for n in [0usize, 5, 8, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 250, 1000] {
                let v: Vec<u32> =
                    (0..n as u32).map(|i| zp.from_random(i.wrapping_mul(0x9e37_79b9))).collect();
                let bytes = reference_pack(zp.wire_bits(), &v);
                assert_eq!(zp.pack(&v), bytes, "p = {p}, n = {n}");
                let narrow: Vec<u8> = v.iter().map(|&x| x as u8).collect();
                assert_eq!(zp.pack(&narrow), bytes, "p = {p}, n = {n}, from bytes");
                assert_eq!(zp.unpack_bytes(&bytes, n), Some(narrow), "p = {p}, n = {n}, unpacked");
                // An element equal to p at each position, in a whole group or in the tail.
                if zp.wire_bits() < 8 && (1u32 << zp.wire_bits()) > p {
                    for at in 0..n {
                        let mut bad = v.clone();
                        bad[at] = p;
                        let bytes = reference_pack(zp.wire_bits(), &bad);
                        assert_eq!(zp.unpack::<u32>(&bytes, n), None, "p = {p}, n = {n}, at {at}");
                    }
                }
            }
        }
    }

    #[test]
    fn packing_round_trips_and_refuses_malformed_messages() {
        for (p, bits) in [(13, 4), (31, 5), (61, 6), (127, 7)] {
            let zp = Zp::new(p);
            assert_eq!(zp.wire_bits(), bits);
            for n in [0, 1, 7, 8, 9, 63, 64, 1000] {
                let v: Vec<u32> =
                    (0..n as u32).map(|i| zp.from_random(i.wrapping_mul(2_654_435_761))).collect();
                let bytes = zp.pack(&v);
                assert_eq!(bytes.len(), (n * bits as usize).div_ceil(8));
                let narrow: Vec<u8> = v.iter().map(|&x| x as u8).collect();
                assert_eq!(zp.pack(&narrow), bytes, "bytes pack the same");
                assert_eq!(zp.unpack(&bytes, n), Some(narrow.clone()), "p = {p}, n = {n}, into bytes");
                assert_eq!(zp.unpack_bytes(&bytes, n), Some(narrow), "p = {p}, n = {n}, as bytes");
                assert_eq!(zp.unpack(&bytes, n), Some(v), "p = {p}, n = {n}");
            }
            let all_ones = vec![0xffu8; zp.packed_len(8)];
            assert_eq!(
                zp.unpack::<u32>(&all_ones, 8).is_some(),
                p == 255,
                "an element equal to p is refused"
            );
            let mut short = zp.pack(&[1u32, 2, 3]);
            short.push(0);
            assert_eq!(zp.unpack::<u32>(&short, 3), None, "a trailing byte is refused");
        }
        let zp = Zp::new(127);
        let mut padded = zp.pack(&[5u32]);
        padded[0] |= 0x80;
        assert_eq!(zp.unpack::<u32>(&padded, 1), None, "nonzero padding is refused");
        // An element equal to p at every position of a group of eight, and in the tail.
        for at in 0..9 {
            let mut v = vec![3u32; 9];
            let mut bytes = zp.pack(&v);
            v[at] = 127;
            let bits = 7 * at;
            bytes[bits / 8] |= (127u32 << (bits % 8)) as u8;
            if bits % 8 > 1 {
                bytes[bits / 8 + 1] |= (127u32 >> (8 - bits % 8)) as u8;
            }
            assert_eq!(zp.unpack_bytes(&bytes, 9), None, "p at position {at}");
        }
        let big = Zp::new(251);
        assert_eq!(big.unpack_bytes(&[250, 3], 2), Some(vec![250, 3]));
        assert_eq!(big.unpack_bytes(&[251], 1), None);
        assert_eq!(Zp::new(257).unpack_bytes(&[0, 0], 1), None, "no bytes for p above 256");
    }
}
