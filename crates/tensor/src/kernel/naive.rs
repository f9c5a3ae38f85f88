//! Reference kernels: a row-parallel `i-k-j` loop for words, and the generic
//! kernel for rings without a word representation (prime fields, `Z_2^128`).
//!
//! `C[i, :] = Σ_p A[i, p] · B[p, :]`: the innermost loop is a contiguous AXPY over
//! a row of `B`, which the compiler vectorises for simple element types.

use rayon::prelude::*;
use veil_ring::Ring;

use super::Word;
use crate::device::MatDims;

/// Rows of `C` handled together so each row of `B` is reused from cache.
const ROWS: usize = 4;

/// `c = a · b` over machine words (row-parallel triple loop).
pub(crate) fn gemm_words<W: Word>(a: &[W], b: &[W], c: &mut [W], d: MatDims) {
    axpy_rows(a, b, c, d, W::ZERO, |acc, x, y| *acc = acc.wadd(x.wmul(y)));
}

/// `batch` products over any ring; `out` must be zero-filled with `batch·m·n` entries.
pub(crate) fn matmul_ring<R: Ring>(a: &[R], b: &[R], mut out: Vec<R>, batch: usize, d: MatDims) -> Vec<R> {
    let (sa, sc) = (d.m * d.k, d.m * d.n);
    let sb = if b.len() == d.k * d.n { 0 } else { d.k * d.n };
    for i in 0..batch {
        let (ai, bi) = (&a[i * sa..(i + 1) * sa], &b[i * sb..i * sb + d.k * d.n]);
        axpy_rows(ai, bi, &mut out[i * sc..(i + 1) * sc], d, R::ZERO, |acc, x, y| *acc += x * y);
    }
    out
}

/// `c = a · b` by row-parallel AXPYs with the multiply-accumulate `mac(acc, a, b)`.
fn axpy_rows<T: Copy + Send + Sync>(
    a: &[T],
    b: &[T],
    c: &mut [T],
    d: MatDims,
    zero: T,
    mac: impl Fn(&mut T, T, T) + Sync,
) {
    let (k, n) = (d.k, d.n);
    if n == 0 {
        return;
    }
    c.fill(zero);
    c.par_chunks_mut(ROWS * n).zip(a.par_chunks(ROWS * k.max(1))).for_each(|(c_rows, a_rows)| {
        for p in 0..k {
            let b_row = &b[p * n..(p + 1) * n];
            for (c_row, a_row) in c_rows.chunks_exact_mut(n).zip(a_rows.chunks(k.max(1))) {
                let x = a_row[p];
                for (acc, &y) in c_row.iter_mut().zip(b_row) {
                    mac(acc, x, y);
                }
            }
        }
    });
}
