//! What an instance keeps for its final verification, apart from the protocols that record it
//! and the verification that checks it: the recorded products ([`Recorded`], with their
//! [`Terms`] and the bit form of truncation pairs), the sign extractions ([`SignPair`]), the
//! GR vectors and entries the verification reduces ([`GrVec`], [`Entry`], [`Claim`]), and the
//! negative tests' deviations ([`SignTamper`]). A leaf of the crate: it depends on the masked
//! sharing's data only ([`crate::masked`]).

use std::sync::Arc;

use rayon::prelude::*;

use veil_mpc::{MpcError, Result};
use veil_ring::{Gr, Multiplier};

use crate::masked::Masked;

/// The lazy reductions stop once the claim has at most this many entries, or once a column
/// holds a single entry, whichever comes first; the rest run on the materialized vectors
/// ([`crate::columns`]; an entry costs a party about 3 KiB once materialized, 48 MiB here).
/// A lazy reduction costs one pass over the recorded shares (about 60–100 ms per party for
/// LeNet at batch 30, 4.2 million terms in 4 071 columns), a held one of 2^14 entries
/// 10–20 ms, and materializing costs a pass plus writing every entry in GR: materializing
/// once the claim is this short saves two passes.
pub const MATERIALIZE_AT: usize = 1 << 14;

/// A vector of GR values in masked sharing; a party keeps the components it holds.
#[derive(Clone, Debug, Default)]
pub(crate) struct GrVec {
    pub(crate) m: Vec<Gr>,
    pub(crate) one: Vec<Gr>,
    pub(crate) two: Vec<Gr>,
}

pub(crate) fn gr_bytes(v: &[Gr]) -> Vec<u8> {
    v.iter().flat_map(Gr::to_bytes).collect()
}

/// Receives exactly `n` GR elements from `from` (a longer message is refused unread).
pub(crate) fn recv_gr(ctx: &mut veil_mpc::Ctx, from: usize, n: usize) -> Result<Vec<Gr>> {
    gr_from(from, &ctx.recv_at_most(from, n.saturating_mul(512))?, n)
}

pub(crate) fn gr_from(from: usize, b: &[u8], n: usize) -> Result<Vec<Gr>> {
    if b.len() != n * 512 {
        return Err(MpcError::Malformed { from, what: format!("{} bytes for {n} GR elements", b.len()) });
    }
    let words = crate::masked::from_bytes(from, b, n * 64)?;
    Ok(words.chunks_exact(64).map(|c| Gr(c.try_into().unwrap_or([0; 64]))).collect())
}

pub(crate) fn gr_digest(v: &[Gr]) -> Vec<u8> {
    let mut h = veil_crypto::Hasher::new("veil/aegis/gr-component");
    for g in v {
        h.update_u64s(&g.0);
    }
    h.finalize().as_bytes().to_vec()
}

/// A step's two sums as polynomials in a pending challenge `ζ`, from the values of their
/// quadratic form at `(u, v) = (1, 0)`, `(0, 1)` and `(1, 1)` (`u = 1 − ζ`, `v = ζ`): with
/// `m = Q(1, 1) − Q(1, 0) − Q(0, 1)`, `Q(1 − ζ, ζ) = Q(1, 0) + ζ·(m − 2·Q(1, 0)) +
/// ζ²·(Q(1, 0) − m + Q(0, 1))`. Laid out as `[c_0, c_1, c_2]` of the first sum, then of the
/// second. Linear in the three values, so it applies to local parts and shares alike.
pub(crate) fn monomials(uu: [Gr; 2], vv: [Gr; 2], both: [Gr; 2]) -> [Gr; 6] {
    let mut out = [Gr::ZERO; 6];
    for s in 0..2 {
        let mixed = both[s].sub(&uu[s]).sub(&vv[s]);
        out[3 * s] = uu[s];
        out[3 * s + 1] = mixed.sub(&uu[s]).sub(&uu[s]);
        out[3 * s + 2] = uu[s].sub(&mixed).add(&vv[s]);
    }
    out
}

/// Values a local part is linear in: GR elements and a party's entries.
pub(crate) trait Linear: Copy {
    fn plus(&self, o: &Self) -> Self;
    fn minus(&self, o: &Self) -> Self;
}

impl Linear for Gr {
    fn plus(&self, o: &Gr) -> Gr {
        self.add(o)
    }
    fn minus(&self, o: &Gr) -> Gr {
        self.sub(o)
    }
}

impl Linear for [Gr; 2] {
    fn plus(&self, o: &[Gr; 2]) -> [Gr; 2] {
        [self[0].add(&o[0]), self[1].add(&o[1])]
    }
    fn minus(&self, o: &[Gr; 2]) -> [Gr; 2] {
        [self[0].sub(&o[0]), self[1].sub(&o[1])]
    }
}

/// A pair of halvings' local parts from one pass over the entries `xs`, `ys` (a multiple of
/// four of them, `(E_0, E_1, E_2, E_3)` in each group and `F` for `Y`): the first step's two
/// sums (pairs `(E_{2i}, E_{2i+1})`) and the next step's
/// at the three weightings of [`monomials`] (on `E_{2i}`, on `E_{2i+1}` and on
/// `E_{2i} + E_{2i+1}`, each paired `(2j, 2j + 1)`), from eight sums of products
/// `S_k = Σ_j B(C_k(E_j), C_k(F_j))` of the combinations `C_k` = `E_0`, `E_2`, `E_1`,
/// `E_0 + E_1`, `E_3 − E_2`, `E_2 − E_0`, `E_3 − E_1` and `(E_2 + E_3) − (E_0 + E_1)`, `sum`
/// being the bilinear local part summed over two vectors:
///
/// - first step: `(S_0 + S_1, 2S_0 + 2S_2 − S_3 + S_4)`, since
///   `B(E_1 − E_0, F_1 − F_0) = 2B(E_0, F_0) + 2B(E_1, F_1) − B(E_0 + E_1, F_0 + F_1)`;
/// - next step: `(S_0, S_5)`, `(S_2, S_6)` and `(S_3, S_7)`.
///
/// Eight products per group, against six for the two steps one after the other, and one pass
/// over the entries (a lazy claim forms them from every recorded term) instead of two.
pub(crate) fn group_sums<T: Linear>(
    xs: &[T],
    ys: &[T],
    sum: impl Fn(&[T], &[T]) -> Gr,
) -> ([Gr; 2], [[Gr; 2]; 3]) {
    let groups = xs.len().min(ys.len()) / 4;
    // The eight combinations of each group, the sums shared: `E_0 + E_1` and `E_2 + E_3`.
    let columns = |v: &[T]| -> [Vec<T>; 8] {
        let mut out: [Vec<T>; 8] = std::array::from_fn(|_| Vec::with_capacity(groups));
        for e in v.chunks_exact(4).take(groups) {
            let low = e[0].plus(&e[1]);
            let high = e[2].plus(&e[3]);
            let combos = [
                e[0],
                e[2],
                e[1],
                low,
                e[3].minus(&e[2]),
                e[2].minus(&e[0]),
                e[3].minus(&e[1]),
                high.minus(&low),
            ];
            for (o, c) in out.iter_mut().zip(combos) {
                o.push(c);
            }
        }
        out
    };
    let (cx, cy) = (columns(xs), columns(ys));
    let s: Vec<Gr> = cx.iter().zip(&cy).map(|(x, y)| sum(x, y)).collect();
    let twice = |v: &Gr| v.add(v);
    let first = [s[0].add(&s[1]), twice(&s[0]).add(&twice(&s[2])).sub(&s[3]).add(&s[4])];
    (first, [[s[0], s[5]], [s[2], s[6]], [s[3], s[7]]])
}

impl GrVec {
    pub(crate) fn len(&self) -> usize {
        self.m.len().max(self.one.len()).max(self.two.len())
    }

    /// Entry `i` as `[m, [r]_1, [r]_2]`, with 0 for the components this party does not hold.
    pub(crate) fn at(&self, i: usize) -> Entry {
        let get = |v: &[Gr]| v.get(i).copied().unwrap_or(Gr::ZERO);
        [get(&self.m), get(&self.one), get(&self.two)]
    }

    pub(crate) fn map2(&self, o: &GrVec, f: impl Fn(&Gr, &Gr) -> Gr) -> GrVec {
        let z = |a: &[Gr], b: &[Gr]| a.iter().zip(b).map(|(p, q)| f(p, q)).collect();
        GrVec { m: z(&self.m, &o.m), one: z(&self.one, &o.one), two: z(&self.two, &o.two) }
    }

    pub(crate) fn add(&self, o: &GrVec) -> GrVec {
        self.map2(o, Gr::add)
    }

    pub(crate) fn sub(&self, o: &GrVec) -> GrVec {
        self.map2(o, Gr::sub)
    }

    /// `c · self` for a public `c`.
    pub(crate) fn times(&self, c: &Gr) -> GrVec {
        let c = Multiplier::new(c);
        let s = |a: &[Gr]| a.iter().map(|v| c.apply(v)).collect();
        GrVec { m: s(&self.m), one: s(&self.one), two: s(&self.two) }
    }

    /// In place, `V'_i = V_{2i} + ζ·(V_{2i+1} − V_{2i})` (even length), component by component.
    pub(crate) fn fold(&mut self, zeta: &Gr) {
        let zeta = Multiplier::new(zeta);
        for v in [&mut self.m, &mut self.one, &mut self.two] {
            *v = v
                .par_chunks_exact(2)
                .map(|p| {
                    let mut folded = p[0];
                    zeta.add_applied(&mut folded, &p[1].sub(&p[0]));
                    folded
                })
                .collect();
        }
    }

    pub(crate) fn pick(&self, idx: impl Fn(usize) -> usize, n: usize) -> GrVec {
        let p = |a: &[Gr]| if a.is_empty() { vec![] } else { (0..n).map(|i| a[idx(i)]).collect() };
        GrVec { m: p(&self.m), one: p(&self.one), two: p(&self.two) }
    }

    pub(crate) fn extend(&mut self, o: GrVec) {
        self.m.extend(o.m);
        self.one.extend(o.one);
        self.two.extend(o.two);
    }
}

/// One recorded product: `z_o = Σ_k x[pairs_o,k]·y[...]`, as index lists into `x` and `y`.
/// The shares are reference-counted: a sign extraction's `z` is the `x`, `y` and `z` of its
/// record `z·z = z` and the input of its positivity check, kept once.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    pub(crate) x: Arc<Masked>,
    pub(crate) y: Arc<Masked>,
    pub(crate) z: Arc<Masked>,
    /// For each output, the `(x index, y index)` pairs it sums.
    pub(crate) terms: Terms,
    /// A second product `z2 = x2 ⋆ y` with the same `y` and terms, verified with the same
    /// terms: `c·(z − Σ x·y) + c2·(z2 − Σ x2·y) = (c·z + c2·z2) − Σ (c·x + c2·x2)·y`.
    pub(crate) twin: Option<(Arc<Masked>, Arc<Masked>)>,
    /// When set, `x`, `y` and the twin's `x2` are not stored (empty) but are these bits.
    pub(crate) bits: Option<BitProducts>,
}

/// Bits packed eight to a byte, the first in the lowest bit of the first byte.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bits {
    bytes: Vec<u8>,
    len: usize,
}

impl Bits {
    /// The first `len` bits of `bytes` (which must hold them; later bits are cleared).
    pub(crate) fn from_bytes(mut bytes: Vec<u8>, len: usize) -> Bits {
        bytes.resize(len.div_ceil(8), 0);
        if !len.is_multiple_of(8)
            && let Some(last) = bytes.last_mut()
        {
            *last &= (1u8 << (len % 8)) - 1;
        }
        Bits { bytes, len }
    }

    /// One bit per byte of `v` (each 0 or 1).
    #[cfg(test)]
    pub(crate) fn from_each(v: &[u8]) -> Bits {
        let mut bytes = vec![0u8; v.len().div_ceil(8)];
        for (i, &b) in v.iter().enumerate() {
            bytes[i / 8] |= (b & 1) << (i % 8);
        }
        Bits { bytes, len: v.len() }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Bit `i` (0 or 1).
    pub(crate) fn get(&self, i: usize) -> u8 {
        (self.bytes[i / 8] >> (i % 8)) & 1
    }

    /// The `len` bits from bit `len·k` on (bit `j` of the word is bit `len·k + j`; `len` a
    /// power of two from 8 to 64, so whole bytes; 0 past the end).
    pub(crate) fn run(&self, k: usize, len: usize) -> u64 {
        debug_assert!(len.is_power_of_two() && (8..=64).contains(&len));
        let bytes = len / 8;
        let mut w = [0u8; 8];
        if let Some(from) = self.bytes.get(bytes * k..) {
            let n = from.len().min(bytes);
            w[..n].copy_from_slice(&from[..n]);
        }
        u64::from_le_bytes(w)
    }

    /// Bits `i .. i + 4` as a pattern (bit `k` of it is bit `i + k`), 0 past the end.
    pub(crate) fn nibble(&self, i: usize) -> usize {
        let (b, s) = (i / 8, i % 8);
        let lo = u16::from(self.bytes[b]);
        let hi = u16::from(self.bytes.get(b + 1).copied().unwrap_or(0));
        usize::from(((lo | hi << 8) >> s) & 0xF)
    }
}

/// The inputs of a truncation pair's two inner products, kept as bits: `x = w ⊙ ⟨b1⟩`,
/// `x2 = w2 ⊙ ⟨b1⟩` and `y = ⟨b2⟩` for public weights per position `j < len`, where
/// `⟨b1⟩ = (m 0, [r]_1 −b1, [r]_2 0)` (P0 and P1 know `b1`) and `⟨b2⟩ = (m 0, [r]_1 0,
/// [r]_2 −b2)` (P0 and P2 know `b2`). A bit each, packed ([`Bits`]), instead of the 64-bit
/// word per component the shares would take: the products of every pair in a CNN are
/// verified at once.
#[derive(Clone, Debug)]
pub(crate) struct BitProducts {
    pub(crate) len: usize,
    pub(crate) w: Vec<u64>,
    pub(crate) w2: Vec<u64>,
    /// `b1` (empty at P2), `b2` (empty at P1), `len` per output.
    pub(crate) b1: Bits,
    pub(crate) b2: Bits,
}

impl Recorded {
    /// Component `c` (`0` = `m`, `1` = `[r]_1`, `2` = `[r]_2`) of input `x` at `i`.
    pub(crate) fn x_at(&self, c: usize, i: usize) -> u64 {
        match &self.bits {
            Some(b) => bit_share(c == 1, b.w[i % b.len], &b.b1, i),
            None => component(&self.x, c)[i],
        }
    }

    /// The same for the twin's `x2` (0 without a twin).
    pub(crate) fn x2_at(&self, c: usize, i: usize) -> u64 {
        match (&self.bits, &self.twin) {
            (Some(b), _) => bit_share(c == 1, b.w2[i % b.len], &b.b1, i),
            (None, Some((x2, _))) => component(x2, c)[i],
            (None, None) => 0,
        }
    }

    /// The same for `y`.
    pub(crate) fn y_at(&self, c: usize, i: usize) -> u64 {
        match &self.bits {
            Some(b) => bit_share(c == 2, 1, &b.b2, i),
            None => component(&self.y, c)[i],
        }
    }
}

/// `−w·b_i` in the component that holds the bit, 0 in the others.
fn bit_share(holds: bool, w: u64, bits: &Bits, i: usize) -> u64 {
    if holds { w.wrapping_mul(u64::from(bits.get(i))).wrapping_neg() } else { 0 }
}

/// Component `c` of a masked sharing, as [`Recorded::x_at`] numbers them.
pub(crate) fn component(v: &Masked, c: usize) -> &[u64] {
    match c {
        0 => &v.m,
        1 => &v.r.one,
        _ => &v.r.two,
    }
}

/// How a recorded product's outputs are built from its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terms {
    /// `z_i = x_i·y_i`.
    Elementwise,
    /// `z_i = Σ_t x_{i·len+t}·y_{i·len+t}`.
    Inner {
        /// Length of each inner product.
        len: usize,
    },
    /// `Z = X·Y` for `[m, k] × [k, n]`.
    Matmul {
        /// Inner dimension.
        k: usize,
        /// Columns of the output.
        n: usize,
    },
    /// A convolution, `Z = im2col(x)·Y` with `x` the recorded input (not its patches, `kh·kw`
    /// times larger): `[rows, cols] × [cols, n]` in the patch geometry `conv`.
    Conv {
        /// The patch geometry.
        conv: veil_mpc::conv::Conv2d,
        /// Columns of the output.
        n: usize,
    },
}

/// A party's view of one component-wise GR entry, `[m, [r]_1, [r]_2]` (absent components
/// stay 0).
pub(crate) type Entry = [Gr; 3];

/// A party's local part of the masked product `a·b` (the rest is dealt by P0, see
/// [`crate::verify`]): P0 `r_a·r_b`; P1 and P2 `−(m_a·[r_b]_j + [r_a]_j·m_b)`, P2 also
/// `m_a·m_b`, computed as `m_a·(m_b − [r_b]_2) − [r_a]_2·m_b` (two GR products, not three).
pub(crate) fn cross_term(me: usize, a: &Entry, b: &Entry) -> Gr {
    match me {
        0 => a[1].add(&a[2]).mul(&b[1].add(&b[2])),
        1 => Gr::ZERO.sub(&a[0].mul(&b[1])).sub(&a[1].mul(&b[0])),
        _ => a[0].mul(&b[0].sub(&b[2])).sub(&a[2].mul(&b[0])),
    }
}

/// This party's local parts of a reduction step's two sums over `n` entries (`n` even, paired
/// `(2i, 2i + 1)`), entry `i` being `at(i) = (X_i, Y_i)`: `Σ_i B(X_{2i}, Y_{2i})` and
/// `Σ_i B(X_{2i+1} − X_{2i}, Y_{2i+1} − Y_{2i})` ([`cross_sum`]).
pub(crate) fn pair_sums(me: usize, n: usize, at: impl Fn(usize) -> (Entry, Entry)) -> [Gr; 2] {
    let pairs = n / 2;
    let (mut xs, mut ys) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
    let (mut dx, mut dy) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
    for i in 0..pairs {
        let ((x0, y0), (x1, y1)) = (at(2 * i), at(2 * i + 1));
        dx.push(std::array::from_fn(|c| x1[c].sub(&x0[c])));
        dy.push(std::array::from_fn(|c| y1[c].sub(&y0[c])));
        xs.push(x0);
        ys.push(y0);
    }
    [cross_sum(me, xs.iter().zip(&ys)), cross_sum(me, dx.iter().zip(&dy))]
}

/// [`group_sums`] of a party's entries under its local part [`cross_term`]: each entry is
/// first mapped to the factors [`cross_sum`] multiplies (linear maps, so the combinations
/// commute with them): P0's one `a_1 + a_2` and `b_1 + b_2`, P1's and P2's two each, which
/// leaves the combinations two GR vectors (P0 one) instead of three.
pub(crate) fn entry_group_sums(me: usize, xs: &[Entry], ys: &[Entry]) -> ([Gr; 2], [[Gr; 2]; 3]) {
    if me == 0 {
        let sum = |v: &Entry| v[1].add(&v[2]);
        let (ls, rs): (Vec<Gr>, Vec<Gr>) = (xs.iter().map(sum).collect(), ys.iter().map(sum).collect());
        return group_sums(&ls, &rs, |l: &[Gr], r: &[Gr]| Gr::inner_product(l, r));
    }
    let (ls, rs): (Vec<[Gr; 2]>, Vec<[Gr; 2]>) = if me == 1 {
        (xs.iter().map(|a| [a[0], a[1]]).collect(), ys.iter().map(|b| [b[1], b[0]]).collect())
    } else {
        (
            xs.iter().map(|a| [a[0], Gr::ZERO.sub(&a[2])]).collect(),
            ys.iter().map(|b| [b[0].sub(&b[2]), b[0]]).collect(),
        )
    };
    group_sums(&ls, &rs, |l: &[[Gr; 2]], r: &[[Gr; 2]]| {
        let sum = Gr::inner_product(l.as_flattened(), r.as_flattened());
        if me == 1 { Gr::ZERO.sub(&sum) } else { sum }
    })
}

/// A party's factors of the left side of its cross term ([`cross_sum`]), from the entry's
/// components `get(c)` (`[m, [r]_1, [r]_2]`): P0 `[r]_1 + [r]_2`; P1 `(m, [r]_1)`; P2
/// `(m, −[r]_2)`. [`factor_width`] of them.
pub(crate) fn left_factors(me: usize, get: impl Fn(usize) -> Gr, out: &mut [Gr]) {
    match me {
        0 => out[0] = get(1).add(&get(2)),
        1 => (out[0], out[1]) = (get(0), get(1)),
        _ => (out[0], out[1]) = (get(0), Gr::ZERO.sub(&get(2))),
    }
}

/// The right side's factors against [`left_factors`]: P0 `[r]_1 + [r]_2`; P1 `([r]_1, m)`
/// (the sum negated, [`factor_halves`]); P2 `(m − [r]_2, m)`.
pub(crate) fn right_factors(me: usize, get: impl Fn(usize) -> Gr, out: &mut [Gr]) {
    match me {
        0 => out[0] = get(1).add(&get(2)),
        1 => (out[0], out[1]) = (get(1), get(0)),
        _ => (out[0], out[1]) = (get(0).sub(&get(2)), get(0)),
    }
}

/// Factors per entry: one at P0, two at P1 and P2.
pub(crate) fn factor_width(me: usize) -> usize {
    if me == 0 { 1 } else { 2 }
}

/// [`pair_sums`] over `pairs` pairs of entries whose factors `left(i, out)` and `right(i, out)`
/// write ([`left_factors`], [`right_factors`]): the factors are linear in the entry, so those of
/// the pairs' differences are the differences of the factors, and each sum is one
/// [`Gr::inner_product`], with no entry's three components formed or copied.
pub(crate) fn factor_halves(
    me: usize,
    pairs: usize,
    left: impl Fn(usize, &mut [Gr]),
    right: impl Fn(usize, &mut [Gr]),
) -> [Gr; 2] {
    let width = factor_width(me);
    let len = pairs * width;
    let [mut le, mut re, mut ld, mut rd] = std::array::from_fn(|_| vec![Gr::ZERO; len]);
    for i in 0..pairs {
        let at = i * width..(i + 1) * width;
        left(2 * i, &mut le[at.clone()]);
        right(2 * i, &mut re[at.clone()]);
        left(2 * i + 1, &mut ld[at.clone()]);
        right(2 * i + 1, &mut rd[at.clone()]);
        for t in at {
            ld[t].sub_assign(&le[t]);
            rd[t].sub_assign(&re[t]);
        }
    }
    let sums = [Gr::inner_product(&le, &re), Gr::inner_product(&ld, &rd)];
    if me == 1 { sums.map(|s| Gr::ZERO.sub(&s)) } else { sums }
}

/// `a + b`, component by component.
pub(crate) fn add_entries(a: &Entry, b: &Entry) -> Entry {
    std::array::from_fn(|c| a[c].add(&b[c]))
}

/// `Σ_i cross_term(me, a_i, b_i)` as one GR inner product ([`Gr::inner_product`], in
/// Karatsuba's form with one reduction) of two factors per party and pair: P0
/// `(a_1 + a_2)·(b_1 + b_2)`; P1 `−(m_a·[r_b]_1 + [r_a]_1·m_b)`; P2
/// `m_a·(m_b − [r_b]_2) − [r_a]_2·m_b`. Short sums, or sums whose right factors are embedded
/// constants (scalings), go term by term.
pub(crate) fn cross_sum<'e>(me: usize, pairs: impl Iterator<Item = (&'e Entry, &'e Entry)>) -> Gr {
    let pairs: Vec<(&Entry, &Entry)> = pairs.collect();
    if pairs.len() < 3 || pairs.iter().all(|(_, b)| b.iter().all(Gr::is_constant)) {
        return pairs.iter().fold(Gr::ZERO, |s, (a, b)| s.add(&cross_term(me, a, b)));
    }
    let (mut ls, mut rs) = (Vec::with_capacity(2 * pairs.len()), Vec::with_capacity(2 * pairs.len()));
    for (a, b) in pairs {
        match me {
            0 => {
                ls.push(a[1].add(&a[2]));
                rs.push(b[1].add(&b[2]));
            }
            1 => {
                ls.extend([a[0], a[1]]);
                rs.extend([b[1], b[0]]);
            }
            _ => {
                ls.extend([a[0], Gr::ZERO.sub(&a[2])]);
                rs.extend([b[0].sub(&b[2]), b[0]]);
            }
        }
    }
    let sum = Gr::inner_product(&ls, &rs);
    if me == 1 { Gr::ZERO.sub(&sum) } else { sum }
}

#[cfg(test)]
mod tests {
    use super::*;
    use veil_crypto::{Prg, Seed};

    #[test]
    fn packed_bits_read_back_one_by_one_and_four_at_a_time() {
        let mut g = Prg::new(&Seed([5; 16]));
        for len in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000] {
            let each: Vec<u8> = (0..len).map(|_| (g.next_u64() & 1) as u8).collect();
            let bits = Bits::from_each(&each);
            assert_eq!(bits.len(), len);
            for (i, &b) in each.iter().enumerate() {
                assert_eq!(bits.get(i), b, "bit {i} of {len}");
                let p = (0..4).fold(0, |p, k| p | usize::from(*each.get(i + k).unwrap_or(&0)) << k);
                assert_eq!(bits.nibble(i), p, "bits {i}.. of {len}");
            }
            // From PRG bytes: the bits past `len` are cleared.
            let raw: Vec<u8> = (0..len.div_ceil(8)).map(|_| g.next_u64() as u8).collect();
            let b = Bits::from_bytes(raw.clone(), len);
            let want: Vec<u8> = (0..len).map(|e| (raw[e / 8] >> (e % 8)) & 1).collect();
            assert_eq!(b, Bits::from_each(&want));
        }
    }

    #[test]
    fn a_cross_sum_is_the_sum_of_the_cross_terms() {
        let mut g = Prg::new(&Seed([4; 16]));
        let mut entry = |constant: bool| -> Entry {
            std::array::from_fn(|_| if constant { Gr::embed(g.next_u64()) } else { Gr::random(&mut g) })
        };
        for me in 0..3 {
            for (n, constant) in [(0, false), (1, false), (2, false), (5, false), (40, false), (9, true)] {
                let xs: Vec<Entry> = (0..n).map(|_| entry(false)).collect();
                let ys: Vec<Entry> = (0..n).map(|_| entry(constant)).collect();
                let direct = xs.iter().zip(&ys).fold(Gr::ZERO, |s, (a, b)| s.add(&cross_term(me, a, b)));
                assert_eq!(cross_sum(me, xs.iter().zip(&ys)), direct, "party {me}, {n} pairs");
            }
        }
    }

    /// A step's two sums from the entries' factors are those of the entries themselves, at
    /// every party: `Σ_i cross_term(X_{2i}, Y_{2i})` and the same of the pairs' differences.
    #[test]
    fn the_sums_from_the_factors_are_the_sums_of_the_cross_terms() {
        let mut g = Prg::new(&Seed([5; 16]));
        for me in 0..3 {
            for n in [0usize, 2, 4, 10, 64] {
                let xs: Vec<Entry> = (0..n).map(|_| std::array::from_fn(|_| Gr::random(&mut g))).collect();
                let ys: Vec<Entry> = (0..n).map(|_| std::array::from_fn(|_| Gr::random(&mut g))).collect();
                let direct = pair_sums(me, n, |i| (xs[i], ys[i]));
                let sums = factor_halves(
                    me,
                    n / 2,
                    |i, out| left_factors(me, |c| xs[i][c], out),
                    |i, out| right_factors(me, |c| ys[i][c], out),
                );
                assert_eq!(sums, direct, "party {me}, {n} entries");
            }
        }
    }
}

/// A claim `Σ X_i·Y_i = Z` over GR.
pub(crate) type Claim = (GrVec, GrVec, GrVec);

/// A sign extraction's input and claimed sign bit, kept for the verification.
#[derive(Clone, Debug)]
pub(crate) struct SignPair {
    pub(crate) x: Arc<Masked>,
    pub(crate) z: Arc<Masked>,
}

/// A deviation of a malicious P1 or P2 in the online sign extraction, for the negative tests:
/// it must make the final verification abort.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum SignTamper {
    /// Add 1 to every entry of the `u` lists of elements `0 .. elements` before sending them
    /// to P0 (shifted `Z_p` shares: P0 reads a wrong comparison bit for about half of them,
    /// those whose masked bit `β` is 0).
    ShiftLists {
        /// How many elements.
        elements: usize,
    },
    /// Use the other value of the pairwise bit `δ` for one element.
    FlipDelta {
        /// The element.
        element: usize,
    },
}
