//! The Galois ring `GR(2^64, 64) = Z_2^64[x] / f(x)` with `f(x) = x^64 + x^4 + x^3 + x + 1`,
//! the extension Aegis's batch multiplication verification works in (its §4.1): a product check
//! over `Z_2^64` alone is unsound (zero divisors: an error of `2^63` survives half of the
//! challenges), while in the Galois ring a random evaluation point catches a nonzero polynomial
//! of degree `D` except with probability about `D/2^d` (Schwartz–Zippel over Galois rings).
//!
//! `f` is irreducible over `GF(2)` ([`f_is_irreducible_mod_2`] checks it with Rabin's test), so
//! the quotient is a Galois ring; `Z_2^64` embeds as the constant coefficient. An element is 64
//! coefficients (512 bytes).

use rand_core::RngCore;

/// Degree of the extension.
pub const GR_DEGREE: usize = 64;

/// The exponents of `f` below its leading term `x^64` (`x^64 ≡ −Σ_{e ∈ GR_F_LOW} x^e mod f`).
pub const GR_F_LOW: [usize; 4] = [0, 1, 3, 4];

/// An element of `GR(2^64, 64)`: coefficients of `1, x, …, x^63` in `Z_2^64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gr(pub [u64; GR_DEGREE]);

impl Default for Gr {
    fn default() -> Self {
        Gr::ZERO
    }
}

impl Gr {
    /// 0.
    pub const ZERO: Gr = Gr([0; GR_DEGREE]);

    /// The embedding of `a ∈ Z_2^64` (constant coefficient).
    pub fn embed(a: u64) -> Gr {
        let mut c = [0; GR_DEGREE];
        c[0] = a;
        Gr(c)
    }

    /// A uniform element.
    pub fn random<G: RngCore + ?Sized>(rng: &mut G) -> Gr {
        let mut c = [0; GR_DEGREE];
        c.iter_mut().for_each(|v| *v = rng.next_u64());
        Gr(c)
    }

    /// `self + other`.
    pub fn add(&self, other: &Gr) -> Gr {
        Gr(std::array::from_fn(|k| self.0[k].wrapping_add(other.0[k])))
    }

    /// `self += other` in place (no 512-byte temporary).
    pub fn add_assign(&mut self, other: &Gr) {
        #[cfg(target_arch = "x86_64")]
        if crate::galois_simd::add_assign::<false>(&mut self.0, &other.0)
            || crate::galois_avx2::add_assign::<false>(&mut self.0, &other.0)
        {
            return;
        }
        add_assign_portable::<false>(&mut self.0, &other.0);
    }

    /// `self −= other` in place.
    pub fn sub_assign(&mut self, other: &Gr) {
        #[cfg(target_arch = "x86_64")]
        if crate::galois_simd::add_assign::<true>(&mut self.0, &other.0)
            || crate::galois_avx2::add_assign::<true>(&mut self.0, &other.0)
        {
            return;
        }
        add_assign_portable::<true>(&mut self.0, &other.0);
    }

    /// `Σ_k table[picks[k]]`: a sum of table entries kept in registers over all of them (with
    /// AVX-512), where a loop of [`Gr::add_assign`] loads and stores it at every entry. Panics
    /// on an index past the table.
    pub fn sum_picked(table: &[Gr], picks: &[u32]) -> Gr {
        #[cfg(target_arch = "x86_64")]
        if let Some(sum) = crate::galois_simd::sum_picked(table, picks) {
            return Gr(sum);
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(sum) = crate::galois_avx2::sum_picked(table, picks) {
            return Gr(sum);
        }
        sum_picked_portable(table, picks)
    }

    /// `self = Σ_k table[picks[k]]` ([`Gr::sum_picked`] written in place).
    pub fn set_sum_picked(&mut self, table: &[Gr], picks: &[u32]) {
        #[cfg(target_arch = "x86_64")]
        if crate::galois_simd::sum_picked_into(&mut self.0, table, picks) {
            return;
        }
        *self = Gr::sum_picked(table, picks);
    }

    /// `self − other`.
    pub fn sub(&self, other: &Gr) -> Gr {
        Gr(std::array::from_fn(|k| self.0[k].wrapping_sub(other.0[k])))
    }

    /// `s · self` for `s ∈ Z_2^64`.
    pub fn scale(&self, s: u64) -> Gr {
        let mut c = Gr::ZERO;
        c.add_scaled(self, s);
        c
    }

    /// `self += v·s` for `s ∈ Z_2^64` (a scaling and a sum without a temporary).
    pub fn add_scaled(&mut self, v: &Gr, s: u64) {
        #[cfg(target_arch = "x86_64")]
        if crate::galois_simd::add_scaled(&mut self.0, &v.0, s)
            || crate::galois_avx2::add_scaled(&mut self.0, &v.0, s)
        {
            return;
        }
        add_scaled_portable(&mut self.0, &v.0, s);
    }

    /// `Σ_i vs_i·s_i` for words `s_i ∈ Z_2^64` (over the shorter of the two): with AVX-512 the
    /// sum stays in registers over all terms, where a loop of [`Gr::add_scaled`] loads and
    /// stores it at every term. Zero words are skipped.
    pub fn dot_words(vs: &[Gr], s: &[u64]) -> Gr {
        let mut acc = Gr::ZERO;
        acc.add_dot_words(vs, s);
        acc
    }

    /// `self += Σ_i vs_i·s_i` ([`Gr::dot_words`] added in place: no zeroed temporary, no
    /// 512-byte copy of the sum and no second pass to add it).
    pub fn add_dot_words(&mut self, vs: &[Gr], s: &[u64]) {
        #[cfg(target_arch = "x86_64")]
        if crate::galois_simd::dot_words(&mut self.0, vs, s)
            || crate::galois_avx2::dot_words(&mut self.0, vs, s)
        {
            return;
        }
        dot_words_portable(&mut self.0, vs, s);
    }

    /// `accs_i += v·s_i` for words `s_i ∈ Z_2^64` (over the shorter of the two): with AVX-512
    /// `v` stays in registers over all terms. Zero words are skipped.
    pub fn add_scaled_each(accs: &mut [Gr], v: &Gr, s: &[u64]) {
        #[cfg(target_arch = "x86_64")]
        if crate::galois_simd::add_scaled_each(accs, &v.0, s)
            || crate::galois_avx2::add_scaled_each(accs, &v.0, s)
        {
            return;
        }
        add_scaled_each_portable(accs, &v.0, s);
    }

    /// Whether only the constant coefficient may be nonzero (an embedded `Z_2^64` value).
    pub fn is_constant(&self) -> bool {
        self.0[1..].iter().all(|&c| c == 0)
    }

    /// `self · other mod f`: a scaling when either factor is an embedded constant (lifted
    /// products start that way), otherwise the product of the polynomials (127 coefficients;
    /// with AVX-512 where the processor has it) reduced by `x^64 ≡ −(x^4 + x^3 + x + 1)`.
    pub fn mul(&self, other: &Gr) -> Gr {
        if other.is_constant() {
            return self.scale(other.0[0]);
        }
        if self.is_constant() {
            return other.scale(self.0[0]);
        }
        reduce(&product(&self.0, &other.0))
    }

    /// `Σ_t ls_t·rs_t` (over the shorter of the two), in Karatsuba's evaluation form with
    /// one reduction for the whole sum (the crate's `galois_inner` module): about 2.4× fewer word
    /// products per term than [`Gr::mul`]'s schoolbook product.
    pub fn inner_product(ls: &[Gr], rs: &[Gr]) -> Gr {
        #[cfg(target_arch = "x86_64")]
        if let Some(sum) = crate::galois_avx2::inner_product(ls, rs) {
            return sum;
        }
        inner_product_body(ls, rs)
    }

    /// Little-endian bytes (512).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.0.iter().flat_map(|v| v.to_le_bytes()).collect()
    }
}

/// Multiplication by one fixed element `c`, for many elements: `c·v = Σ_i v_i·(c·x^i mod f)`,
/// one [`Gr::dot_words`] over the 64 columns of `c`'s multiplication matrix, formed once
/// (each column is the one before times `x`: a shift and the reduction of its top word). With
/// AVX-512 it takes about 0.6 of [`Gr::mul`]'s time per element (no product polynomial of 127
/// coefficients, no reduction per element).
#[derive(Clone, Debug)]
pub struct Multiplier {
    columns: Vec<Gr>,
}

impl Multiplier {
    /// The multiplier by `c`.
    pub fn new(c: &Gr) -> Multiplier {
        let mut columns = Vec::with_capacity(GR_DEGREE);
        let mut col = *c;
        for _ in 0..GR_DEGREE {
            columns.push(col);
            // `x·col`: the coefficients move up one, the top one wraps as `x^64 ≡ −Σ x^e`.
            let top = col.0[GR_DEGREE - 1];
            col.0.copy_within(..GR_DEGREE - 1, 1);
            col.0[0] = 0;
            for e in GR_F_LOW {
                col.0[e] = col.0[e].wrapping_sub(top);
            }
        }
        Multiplier { columns }
    }

    /// `c·v`.
    pub fn apply(&self, v: &Gr) -> Gr {
        Gr::dot_words(&self.columns, &v.0)
    }

    /// `acc += c·v`.
    pub fn add_applied(&self, acc: &mut Gr, v: &Gr) {
        acc.add_dot_words(&self.columns, &v.0);
    }
}

/// [`Gr::inner_product`]'s body (inlined into each build of it: the baseline's and AVX2's).
#[inline(always)]
pub(crate) fn inner_product_body(ls: &[Gr], rs: &[Gr]) -> Gr {
    use crate::galois_inner::{Outer, PIECE, PIECES, backward};
    let n = ls.len().min(rs.len());
    if n == 0 {
        return Gr::ZERO;
    }
    thread_local! {
        /// The transformed terms' words and the outer products' sums, kept from call to call:
        /// every form is written before it is read (`forward_into` sets all its words), the
        /// sums are overwritten by the first block's ([`accumulate_blocks`]), and a short sum
        /// (a lazy column's few entries) would otherwise spend about as long allocating and
        /// zeroing them (2 × 27 KiB of forms at 16 terms, 13.5 KiB of sums) as multiplying.
        static FORMS: std::cell::RefCell<(Vec<u64>, Vec<u64>, Vec<Outer>)> =
            const { std::cell::RefCell::new((Vec::new(), Vec::new(), Vec::new())) };
    }
    let words = BLOCK * PIECE * PIECES;
    FORMS.with_borrow_mut(|(lw, rw, d)| {
        for w in [&mut *lw, &mut *rw] {
            if w.len() < words {
                w.resize(words, 0);
            }
        }
        if d.is_empty() {
            d.push([[[0; PIECE]; PIECE]; PIECES]);
        }
        accumulate_blocks(&mut d[0], ls, rs, n, lw, rw);
        reduce(&backward(&d[0]))
    })
}

/// Terms [`inner_product_body`] transforms at a time (their forms, 3.4 KiB a term, stay in
/// cache).
const BLOCK: usize = 16;

/// [`inner_product_body`]'s accumulation into `d` (whatever it held before is overwritten),
/// [`BLOCK`] terms at a time through the forms `lw`, `rw` (each at least `BLOCK` forms long).
#[inline(always)]
fn accumulate_blocks(
    d: &mut crate::galois_inner::Outer,
    ls: &[Gr],
    rs: &[Gr],
    n: usize,
    lw: &mut [u64],
    rw: &mut [u64],
) {
    use crate::galois_inner::{PIECE, PIECES, accumulate_portable, forward_into};
    let lf = lw.as_chunks_mut::<PIECE>().0.as_chunks_mut::<PIECES>().0;
    let rf = rw.as_chunks_mut::<PIECE>().0.as_chunks_mut::<PIECES>().0;
    for start in (0..n).step_by(BLOCK) {
        let fresh = start == 0;
        let len = (start + BLOCK).min(n) - start;
        for ((f, g), (l, r)) in
            lf.iter_mut().zip(rf.iter_mut()).zip(ls[start..].iter().zip(&rs[start..])).take(len)
        {
            forward_into(&l.0, f);
            forward_into(&r.0, g);
        }
        let (lf, rf) = (&lf[..len], &rf[..len]);
        #[cfg(target_arch = "x86_64")]
        if crate::galois_simd::accumulate(d, lf, rf, fresh) {
            continue;
        }
        if fresh {
            *d = [[[0; PIECE]; PIECE]; PIECES];
        }
        accumulate_portable(d, lf, rf);
    }
}

/// `acc += v` (`acc −= v` with `SUB`) coefficient-wise.
#[inline(always)]
pub(crate) fn add_assign_portable<const SUB: bool>(acc: &mut [u64; GR_DEGREE], v: &[u64; GR_DEGREE]) {
    for (a, b) in acc.iter_mut().zip(v) {
        *a = if SUB { a.wrapping_sub(*b) } else { a.wrapping_add(*b) };
    }
}

/// `acc += v·s` coefficient-wise.
#[inline(always)]
pub(crate) fn add_scaled_portable(acc: &mut [u64; GR_DEGREE], v: &[u64; GR_DEGREE], s: u64) {
    acc.iter_mut().zip(v).for_each(|(a, b)| *a = a.wrapping_add(b.wrapping_mul(s)));
}

/// [`Gr::sum_picked`] with the sum in a local array.
#[inline(always)]
pub(crate) fn sum_picked_portable(table: &[Gr], picks: &[u32]) -> Gr {
    let mut acc = [0u64; GR_DEGREE];
    picks.iter().for_each(|&p| add_assign_portable::<false>(&mut acc, &table[p as usize].0));
    Gr(acc)
}

/// `acc += Σ_i vs_i·s_i` ([`Gr::dot_words`]), the sum in a local array.
#[inline(always)]
pub(crate) fn dot_words_portable(acc: &mut [u64; GR_DEGREE], vs: &[Gr], s: &[u64]) {
    let mut sum = [0u64; GR_DEGREE];
    for (v, &x) in vs.iter().zip(s).filter(|(_, x)| **x != 0) {
        add_scaled_portable(&mut sum, &v.0, x);
    }
    add_assign_portable::<false>(acc, &sum);
}

/// `accs_i += v·s_i` ([`Gr::add_scaled_each`]).
#[inline(always)]
pub(crate) fn add_scaled_each_portable(accs: &mut [Gr], v: &[u64; GR_DEGREE], s: &[u64]) {
    for (acc, &x) in accs.iter_mut().zip(s).filter(|(_, x)| **x != 0) {
        add_scaled_portable(&mut acc.0, v, x);
    }
}

/// `L + x^64·H mod f` for a product `wide = L + x^64·H` (`H` of degree ≤ 62): with
/// `x^64 ≡ −g`, `g = 1 + x + x^3 + x^4`, it is `L − T` for `T = H·g` (degree ≤ 66), and the
/// top of `T`, `x^64·T_hi`, folds once more: `L − T_lo + T_hi·g` (`T_hi·g` of degree ≤ 6).
/// Written as whole-array sums over a zero-padded `H`, which the compiler vectorises, in
/// place of 63 dependent folds from the top.
#[inline(always)]
pub(crate) fn reduce(wide: &[u64; 2 * GR_DEGREE]) -> Gr {
    // padded[4 + i] = H_i (i < 64; H_63 = wide[127] = 0), zeros on either side.
    let mut padded = [0u64; GR_DEGREE + 8];
    padded[4..4 + GR_DEGREE].copy_from_slice(&wide[GR_DEGREE..]);
    // T_j = H_j + H_{j−1} + H_{j−3} + H_{j−4}.
    let t = |j: usize| {
        padded[4 + j].wrapping_add(padded[3 + j]).wrapping_add(padded[1 + j]).wrapping_add(padded[j])
    };
    let mut c = [0u64; GR_DEGREE];
    for (j, cj) in c.iter_mut().enumerate() {
        *cj = wide[j].wrapping_sub(t(j));
    }
    for m in 0..3 {
        let top = t(GR_DEGREE + m);
        for e in GR_F_LOW {
            c[m + e] = c[m + e].wrapping_add(top);
        }
    }
    Gr(c)
}

/// The product of two polynomials of 64 coefficients over `Z_2^64` (127 coefficients; the last
/// entry is 0): with AVX-512 where the processor has it ([`crate::galois_simd`], about 6× faster
/// than the baseline build's Karatsuba, whose 64-bit multiplications stay scalar), else
/// [`karatsuba`], compiled for AVX2 where the processor has that ([`crate::galois_avx2`]).
#[inline(always)]
pub(crate) fn product(a: &[u64; GR_DEGREE], b: &[u64; GR_DEGREE]) -> [u64; 2 * GR_DEGREE] {
    #[cfg(target_arch = "x86_64")]
    if let Some(wide) = crate::galois_simd::product(a, b) {
        return wide;
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(wide) = crate::galois_avx2::product(a, b) {
        return wide;
    }
    let mut wide = [0u64; 2 * GR_DEGREE];
    karatsuba(a, b, &mut wide);
    wide
}

/// `out += a·b` for polynomials of 64 coefficients (`out` of 128), over `Z_2^64` (wrapping):
/// Karatsuba's `(a_lo + a_hi·x^h)(b_lo + b_hi·x^h) = z0 + z1·x^h + z2·x^2h` with
/// `z1 = (a_lo + a_hi)(b_lo + b_hi) − z0 − z2`, three levels down to schoolbook products of 8
/// coefficients (27 of them, 1 728 word products). Written without recursion, so that each
/// build of [`product`] (the baseline's and AVX2's) inlines all of it. On two Zen 1 cores
/// (whose AVX2 runs at half width) a third level took the AVX2 build's product from 2.1 to
/// 1.3 µs and the baseline's from 1.5 to 1.4 µs; a fourth is slower again.
#[inline(always)]
pub(crate) fn karatsuba(a: &[u64], b: &[u64], out: &mut [u64]) {
    karatsuba_level::<64, 32>(a, b, out, karatsuba_half);
}

/// [`karatsuba`] of 32 coefficients.
#[inline(always)]
fn karatsuba_half(a: &[u64], b: &[u64], out: &mut [u64]) {
    karatsuba_level::<32, 16>(a, b, out, karatsuba_quarter);
}

/// [`karatsuba`] of 16 coefficients.
#[inline(always)]
fn karatsuba_quarter(a: &[u64], b: &[u64], out: &mut [u64]) {
    karatsuba_level::<16, 8>(a, b, out, schoolbook);
}

/// One level of [`karatsuba`] (`N = a.len()` coefficients, a power of two, `H = N/2`), the
/// halves' products by `half`. The halves' products and sums are arrays of their own sizes
/// (arrays of 64 at every level zeroed about 4 000 words per product, a fifth of its time).
#[inline(always)]
fn karatsuba_level<const N: usize, const H: usize>(
    a: &[u64],
    b: &[u64],
    out: &mut [u64],
    half: impl Fn(&[u64], &[u64], &mut [u64]),
) {
    let (n, h) = (N, H);
    let mut z0 = [0u64; N];
    let mut z2 = [0u64; N];
    let mut z1 = [0u64; N];
    half(&a[..h], &b[..h], &mut z0);
    half(&a[h..], &b[h..], &mut z2);
    let (mut sa, mut sb) = ([0u64; H], [0u64; H]);
    for i in 0..h {
        sa[i] = a[i].wrapping_add(a[h + i]);
        sb[i] = b[i].wrapping_add(b[h + i]);
    }
    half(&sa[..h], &sb[..h], &mut z1[..n]);
    for i in 0..n {
        out[i] = out[i].wrapping_add(z0[i]);
        out[n + i] = out[n + i].wrapping_add(z2[i]);
        out[h + i] = out[h + i].wrapping_add(z1[i].wrapping_sub(z0[i]).wrapping_sub(z2[i]));
    }
}

/// `out += a·b`, schoolbook.
#[inline(always)]
fn schoolbook(a: &[u64], b: &[u64], out: &mut [u64]) {
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            out[i + j] = out[i + j].wrapping_add(x.wrapping_mul(y));
        }
    }
}

/// Polynomials over `GF(2)` of degree < 128 as bit masks.
fn gf2_mulmod(a: u128, b: u128, f: u128, deg: u32) -> u128 {
    let mut r = 0u128;
    let mut a = a;
    let mut b = b;
    while b != 0 {
        if b & 1 == 1 {
            r ^= a;
        }
        b >>= 1;
        a <<= 1;
        if (a >> deg) & 1 == 1 {
            a ^= f;
        }
    }
    r
}

fn gf2_gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        while a != 0 && 128 - a.leading_zeros() >= 128 - b.leading_zeros() {
            a ^= b << ((128 - a.leading_zeros()) - (128 - b.leading_zeros()));
        }
        std::mem::swap(&mut a, &mut b);
    }
    a
}

/// Rabin's test for `f` (degree 64, whose only prime divisor is 2): `f` is irreducible over
/// `GF(2)` iff `x^{2^64} ≡ x (mod f)` and `gcd(x^{2^32} − x, f) = 1`.
pub fn f_is_irreducible_mod_2() -> bool {
    let deg = GR_DEGREE as u32;
    rabin_degree_64((1u128 << deg) | GR_F_LOW.iter().map(|&e| 1u128 << e).fold(0, |a, b| a | b))
}

/// Rabin's irreducibility test for a degree-64 polynomial over `GF(2)` given as a bit mask.
fn rabin_degree_64(f: u128) -> bool {
    let deg = GR_DEGREE as u32;
    let x = 2u128;
    let mut p = x;
    let mut at_half = 0;
    for i in 1..=deg {
        p = gf2_mulmod(p, p, f, deg);
        if i == deg / 2 {
            at_half = p;
        }
    }
    p == x && gf2_gcd(f, at_half ^ x) == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn in_place_sums_equal_the_sums() {
        let mut g = rand::rngs::StdRng::seed_from_u64(5);
        for _ in 0..20 {
            let (a, v) = (Gr::random(&mut g), Gr::random(&mut g));
            let (mut x, mut y) = (a, a);
            x.add_assign(&v);
            y.sub_assign(&v);
            assert_eq!((x, y), (a.add(&v), a.sub(&v)));
            // The vector path (where the processor has it) against the word-by-word sums, at
            // random values and where every word wraps.
            for (a, v) in [(a, v), (Gr([u64::MAX; GR_DEGREE]), Gr([1 << 63; GR_DEGREE]))] {
                let plus = Gr(std::array::from_fn(|k| a.0[k].wrapping_add(v.0[k])));
                let minus = Gr(std::array::from_fn(|k| a.0[k].wrapping_sub(v.0[k])));
                assert_eq!((a.add(&v), a.sub(&v)), (plus, minus));
            }
        }
    }

    #[test]
    fn picked_sums_are_sums_of_the_picked_entries() {
        let mut g = rand::rngs::StdRng::seed_from_u64(7);
        let mut table: Vec<Gr> = (0..20).map(|_| Gr::random(&mut g)).collect();
        table.push(Gr([u64::MAX; GR_DEGREE]));
        for picks in [vec![], vec![3], vec![0, 0, 19, 20, 20, 5], (0..21).collect::<Vec<u32>>()] {
            let direct = picks.iter().fold(Gr::ZERO, |s, &p| {
                Gr(std::array::from_fn(|k| s.0[k].wrapping_add(table[p as usize].0[k])))
            });
            assert_eq!(Gr::sum_picked(&table, &picks), direct, "{picks:?}");
            // In place, over whatever the element held.
            let mut out = Gr::random(&mut g);
            out.set_sum_picked(&table, &picks);
            assert_eq!(out, direct, "{picks:?}");
        }
    }

    #[test]
    fn add_scaled_is_a_scaling_then_a_sum() {
        let mut g = rand::rngs::StdRng::seed_from_u64(3);
        let (a, v) = (Gr::random(&mut g), Gr::random(&mut g));
        for s in [0, 1, u64::MAX, 1 << 63, 12345] {
            let mut acc = a;
            acc.add_scaled(&v, s);
            let mut plain = a;
            plain.0.iter_mut().zip(&v.0).for_each(|(x, y)| *x = x.wrapping_add(y.wrapping_mul(s)));
            assert_eq!(acc, plain);
            assert_eq!(acc, a.add(&v.scale(s)));
        }
    }

    #[test]
    fn inner_products_in_karatsuba_form_match_the_products() {
        use crate::galois_inner::{Outer, PIECE, PIECES, accumulate_portable, backward, forward};
        let mut g = rand::rngs::StdRng::seed_from_u64(5);
        let edges = [Gr([u64::MAX; GR_DEGREE]), Gr([1 << 63; GR_DEGREE]), Gr::embed(u64::MAX), Gr::ZERO];
        for n in [0usize, 1, 2, 15, 16, 17, 40] {
            let mut ls: Vec<Gr> = (0..n).map(|_| Gr::random(&mut g)).collect();
            let rs: Vec<Gr> = (0..n).map(|_| Gr::random(&mut g)).collect();
            for (v, e) in ls.iter_mut().zip(edges.iter().cycle()).step_by(3) {
                *v = *e;
            }
            let direct = ls.iter().zip(&rs).fold(Gr::ZERO, |s, (a, b)| s.add(&a.mul(b)));
            assert_eq!(Gr::inner_product(&ls, &rs), direct, "{n} terms");
            // The portable kernel gives the same sums as the one `inner_product` picked.
            let mut d: Outer = [[[0; PIECE]; PIECE]; PIECES];
            let lf: Vec<_> = ls.iter().map(|v| forward(&v.0)).collect();
            let rf: Vec<_> = rs.iter().map(|v| forward(&v.0)).collect();
            accumulate_portable(&mut d, &lf, &rf);
            assert_eq!(reduce(&backward(&d)), direct, "{n} terms, portable");
        }
        assert_eq!(Gr::inner_product(&[Gr::embed(3)], &[]), Gr::ZERO);
        // A short sum after a long one on the same thread: the kept sums are overwritten.
        let (a, b) = (Gr::random(&mut g), Gr::random(&mut g));
        assert_eq!(Gr::inner_product(&[a], &[b]), a.mul(&b));
    }

    #[test]
    fn a_fixed_multiplier_is_the_product() {
        let mut g = rand::rngs::StdRng::seed_from_u64(11);
        let edges = [Gr([u64::MAX; GR_DEGREE]), Gr([1 << 63; GR_DEGREE]), Gr::embed(u64::MAX), Gr::ZERO];
        let cs = edges.iter().copied().chain((0..4).map(|_| Gr::random(&mut g)));
        for c in cs.collect::<Vec<_>>() {
            let times = Multiplier::new(&c);
            for v in edges.iter().copied().chain((0..4).map(|_| Gr::random(&mut g))).collect::<Vec<_>>() {
                assert_eq!(times.apply(&v), c.mul(&v));
                let start = Gr::random(&mut g);
                let mut acc = start;
                times.add_applied(&mut acc, &v);
                assert_eq!(acc, start.add(&c.mul(&v)));
            }
        }
    }

    #[test]
    fn batched_scalings_match_one_at_a_time() {
        let mut g = rand::rngs::StdRng::seed_from_u64(9);
        for n in [0usize, 1, 2, 7, 33] {
            let vs: Vec<Gr> = (0..n).map(|_| Gr::random(&mut g)).collect();
            let edges = [0, 1, u64::MAX, 1 << 63];
            let s: Vec<u64> = (0..n).map(|i| if i % 3 == 0 { edges[i % 4] } else { g.next_u64() }).collect();
            let mut direct = Gr::ZERO;
            for (v, &x) in vs.iter().zip(&s) {
                direct = direct.add(&v.mul(&Gr::embed(x)));
            }
            assert_eq!(Gr::dot_words(&vs, &s), direct, "{n} terms");
            // Over the shorter of the two.
            assert_eq!(Gr::dot_words(&vs, &s[..n / 2]), Gr::dot_words(&vs[..n / 2], &s), "{n} terms");
            // Added in place onto what the accumulator held.
            let start = Gr::random(&mut g);
            let mut acc = start;
            acc.add_dot_words(&vs, &s);
            assert_eq!(acc, start.add(&direct), "{n} terms");
            let v = Gr::random(&mut g);
            let mut accs: Vec<Gr> = (0..n).map(|_| Gr::random(&mut g)).collect();
            let expected: Vec<Gr> = accs.iter().zip(&s).map(|(a, &x)| a.add(&v.mul(&Gr::embed(x)))).collect();
            Gr::add_scaled_each(&mut accs, &v, &s);
            assert_eq!(accs, expected, "{n} terms");
        }
    }

    #[test]
    fn f_is_irreducible_and_a_reducible_one_is_not() {
        assert!(f_is_irreducible_mod_2());
        // The test rejects reducible ones: x^64 + 1 = (x + 1)^64; x^64 + x^4 + x^3 + 1 (an even
        // number of terms: 1 is a root).
        assert!(!rabin_degree_64((1 << 64) | 1));
        assert!(!rabin_degree_64((1 << 64) | 0b11001));
        assert!(!rabin_degree_64((1 << 64) | (1 << 32) | 1), "x^64 + x^32 + 1 = (x^32 + x^16 + 1)^2");
        assert_eq!(gf2_gcd(0b10101, 0b111), 0b111);
        assert_eq!(gf2_mulmod(0b10, 0b10, 0b111, 2), 0b11);
    }

    #[test]
    fn ring_axioms_and_the_embedding() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for _ in 0..20 {
            let (a, b, c) = (Gr::random(&mut rng), Gr::random(&mut rng), Gr::random(&mut rng));
            assert_eq!(a.mul(&b), b.mul(&a));
            assert_eq!(a.mul(&b).mul(&c), a.mul(&b.mul(&c)));
            assert_eq!(a.mul(&b.add(&c)), a.mul(&b).add(&a.mul(&c)));
            assert_eq!(a.mul(&Gr::embed(1)), a);
            assert_eq!(a.sub(&a), Gr::ZERO);
            let (s, t) = (rng.next_u64(), rng.next_u64());
            assert_eq!(Gr::embed(s).mul(&Gr::embed(t)), Gr::embed(s.wrapping_mul(t)));
            assert_eq!(Gr::embed(s).add(&Gr::embed(t)), Gr::embed(s.wrapping_add(t)));
            assert_eq!(a.scale(s), a.mul(&Gr::embed(s)));
        }
        // Karatsuba agrees with the schoolbook product, edge values included.
        let edges = [Gr([u64::MAX; GR_DEGREE]), Gr([1 << 63; GR_DEGREE]), Gr::embed(u64::MAX), Gr::ZERO];
        let randoms: Vec<Gr> = (0..40).map(|_| Gr::random(&mut rng)).collect();
        let pairs = edges.iter().flat_map(|a| edges.iter().map(move |b| (*a, *b)));
        for (a, b) in pairs.chain(randoms.chunks_exact(2).map(|p| (p[0], p[1]))) {
            let mut school = [0u64; 2 * GR_DEGREE];
            for i in 0..GR_DEGREE {
                for j in 0..GR_DEGREE {
                    school[i + j] = school[i + j].wrapping_add(a.0[i].wrapping_mul(b.0[j]));
                }
            }
            let mut fast = [0u64; 2 * GR_DEGREE];
            karatsuba(&a.0, &b.0, &mut fast);
            assert_eq!(school, fast);
            // And so does the product `mul` uses (AVX-512 where the processor has it).
            assert_eq!(school, product(&a.0, &b.0));
            // The reduction agrees with folding `x^64 ≡ −(x^4 + x^3 + x + 1)` from the top.
            for k in (GR_DEGREE..2 * GR_DEGREE - 1).rev() {
                let top = school[k];
                for e in GR_F_LOW {
                    school[k - GR_DEGREE + e] = school[k - GR_DEGREE + e].wrapping_sub(top);
                }
            }
            assert_eq!(reduce(&product(&a.0, &b.0)).0[..], school[..GR_DEGREE]);
        }
        // x^63 · x = x^64 = −(x^4 + x^3 + x + 1).
        let mut x63 = Gr::ZERO;
        x63.0[63] = 1;
        let mut x1 = Gr::ZERO;
        x1.0[1] = 1;
        let p = x63.mul(&x1);
        let minus_one = u64::MAX;
        for (i, &v) in p.0.iter().enumerate() {
            assert_eq!(v, if GR_F_LOW.contains(&i) { minus_one } else { 0 }, "coefficient {i}");
        }
    }
}
