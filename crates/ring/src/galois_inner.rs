//! Inner products `Σ_t l_t·r_t` over [`crate::Gr`] in Karatsuba's evaluation form: each factor
//! is split three levels deep into 27 pieces of 8 coefficients (`lo`, `hi`, `lo + hi` at each
//! level), the pieces are multiplied pairwise and summed over the terms, and the sum goes back
//! to a polynomial and through the reduction mod `f` once.
//!
//! Karatsuba's `(a_lo + x^h·a_hi)(b_lo + x^h·b_hi) = z_0 + x^h·(z_1 − z_0 − z_2) + x^{2h}·z_2`
//! with `z_0 = a_lo·b_lo`, `z_2 = a_hi·b_hi`, `z_1 = (a_lo + a_hi)(b_lo + b_hi)` is bilinear and
//! division-free, so it holds over `Z_2^64` and its recombination commutes with the sum over
//! terms: 27 piece products of 64 word products each (1 728) per term, where the schoolbook
//! product takes 4 096, and one recombination and reduction per sum instead of per term.
//!
//! A piece product is kept as its 8×8 outer product `D[i][j] = Σ_t a_{t,i}·b_{t,j}` (summed
//! over the terms), which costs 8 word-vector products per piece and term without any shuffle;
//! the coefficients `Σ_{i+j=k} D[i][j]` are formed once at the end.

/// Coefficients of a piece.
pub(crate) const PIECE: usize = 8;

/// Pieces of a factor (`3^3`).
pub(crate) const PIECES: usize = 27;

/// A factor in evaluation form: its 27 pieces.
pub(crate) type Form = [[u64; PIECE]; PIECES];

/// The 8×8 outer products of every piece, summed over the terms.
pub(crate) type Outer = [[[u64; PIECE]; PIECE]; PIECES];

/// The evaluation form of a polynomial of 64 coefficients: piece `9·d_1 + 3·d_2 + d_3` takes
/// at level `k` the half `lo` (`d_k = 0`), `hi` (1) or `lo + hi` (2), the first level most
/// significant (the order [`backward`] recombines).
#[cfg(test)]
pub(crate) fn forward(a: &[u64; 64]) -> Form {
    let mut out = [[0u64; PIECE]; PIECES];
    forward_into(a, &mut out);
    out
}

/// [`forward`] into `out`, which every piece overwrites. A level's `lo` and `hi` are views of
/// its parent, so only the sums `lo + hi` are computed (32, 3 × 16 and 27 × 8 words) and each
/// word is written once, into `out` or a sum: copying every level into zeroed arrays of its own
/// took 2.3 times as long (about 95 against 40 ns a factor on a Zen 1 core), a fifth of an
/// inner product's time per term.
#[inline(always)]
pub(crate) fn forward_into(a: &[u64; 64], out: &mut Form) {
    let (lo, hi) = halves::<64, 32>(a);
    let sum: [u64; 32] = sum_of_halves(a);
    let mut k = 0;
    for node in [lo, hi, &sum] {
        let (lo, hi) = halves::<32, 16>(node);
        let sum: [u64; 16] = sum_of_halves(node);
        for part in [lo, hi, &sum] {
            let (lo, hi) = halves::<16, PIECE>(part);
            out[k] = *lo;
            out[k + 1] = *hi;
            out[k + 2] = sum_of_halves(part);
            k += 3;
        }
    }
}

/// `a`'s low and high halves, as views.
#[inline(always)]
fn halves<const N: usize, const H: usize>(a: &[u64; N]) -> (&[u64; H], &[u64; H]) {
    let (lo, hi) = a.split_at(H);
    (lo.try_into().unwrap_or_else(|_| unreachable!()), hi.try_into().unwrap_or_else(|_| unreachable!()))
}

/// `lo + hi` of `a`'s halves.
#[inline(always)]
fn sum_of_halves<const N: usize, const H: usize>(a: &[u64; N]) -> [u64; H] {
    std::array::from_fn(|i| a[i].wrapping_add(a[H + i]))
}

/// `d += Σ_t l_t ⊗ r_t` piece by piece, portable.
#[inline(always)]
pub(crate) fn accumulate_portable(d: &mut Outer, ls: &[Form], rs: &[Form]) {
    for (p, dp) in d.iter_mut().enumerate() {
        for (l, r) in ls.iter().zip(rs) {
            for (row, &a) in dp.iter_mut().zip(&l[p]) {
                for (v, &b) in row.iter_mut().zip(&r[p]) {
                    *v = v.wrapping_add(a.wrapping_mul(b));
                }
            }
        }
    }
}

/// The product polynomial (127 coefficients, the last entry 0) of the summed outer products:
/// each piece's coefficients `Σ_{i+j=k} D[i][j]`, then Karatsuba's recombination level by
/// level (9 products of 16 coefficients, 3 of 32, 1 of 64).
#[inline(always)]
pub(crate) fn backward(d: &Outer) -> [u64; 128] {
    let mut pieces = [[0u64; 2 * PIECE]; PIECES];
    for (c, dp) in pieces.iter_mut().zip(d) {
        for (i, row) in dp.iter().enumerate() {
            for (v, &x) in c[i..i + PIECE].iter_mut().zip(row) {
                *v = v.wrapping_add(x);
            }
        }
    }
    let mut sixteen = [[0u64; 32]; 9];
    for (g, out) in sixteen.iter_mut().enumerate() {
        join(&pieces[3 * g], &pieces[3 * g + 1], &pieces[3 * g + 2], out);
    }
    let mut thirty_two = [[0u64; 64]; 3];
    for (g, out) in thirty_two.iter_mut().enumerate() {
        join(&sixteen[3 * g], &sixteen[3 * g + 1], &sixteen[3 * g + 2], out);
    }
    let mut out = [0u64; 128];
    join(&thirty_two[0], &thirty_two[1], &thirty_two[2], &mut out);
    out
}

/// The product of factors of `n` coefficients (`out`, `2n` entries) from the products of their
/// low halves `z0`, high halves `z2` and sums of halves `z1` (`n` entries each):
/// `z0 + x^{n/2}·(z1 − z0 − z2) + x^n·z2`.
#[inline(always)]
fn join<const N: usize, const M: usize>(z0: &[u64; N], z2: &[u64; N], z1: &[u64; N], out: &mut [u64; M]) {
    let h = N / 2;
    let (low, high) = out.split_at_mut(N);
    low.copy_from_slice(z0);
    high.copy_from_slice(z2);
    for (i, ((a, b), c)) in z0.iter().zip(z2).zip(z1).enumerate() {
        out[h + i] = out[h + i].wrapping_add(c.wrapping_sub(*a).wrapping_sub(*b));
    }
}
