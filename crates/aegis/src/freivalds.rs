//! Freivalds's compression of the recorded matrix products for the batch verification of
//! [`crate::verify`] (convolutions and fully connected layers): one claim of `k` terms per
//! `[m, k] × [k, n]` product instead of `m·n·k`, with public random vectors over
//! `GR(2^64, 64)` drawn after the products were fixed. Security model: that of the
//! verification (one actively corrupted server, abort); the compression is linear, so each
//! party applies it to the components it holds.

use rayon::prelude::*;
use veil_crypto::Prg;
use veil_mpc::conv::Conv2d;
use veil_mpc::{MpcError, Result};
use veil_ring::Gr;

use crate::claims::{Claim, Recorded, Terms};
use crate::share::Masked;

/// Freivalds's compression of a recorded matrix product `Z = X·Y` (`[m, k] × [k, n]`): with
/// public random `u ∈ GR^m` and `v ∈ GR^n`, the claim `uᵀZv = Σ_t a_t·b_t` where `a = uᵀX` and
/// `b = Yv` has `k` terms instead of `m·n·k`; every step is linear, so each party applies it to
/// the components it holds. With errors `E = Z − XY`, the claim is false unless `uᵀEv = 0`:
/// divide `E` by the largest power of 2 dividing all its entries and reduce mod 2, and this is
/// a nonzero polynomial of degree 2 over `GF(2^64)` in the uniform residues of `u` and `v`, so
/// it vanishes with probability at most `2/2^64` (Schwartz–Zippel). Summed with the other
/// records' claims (independent coefficients), a false batch passes with probability at most
/// `3/2^64` before the reductions. A twin `Z2 = X2·Y` adds `u2ᵀX2` to `a` and `u2ᵀZ2v` to the
/// claim with its own `u2` (the same `v`): still degree 2.
///
/// A convolution ([`Terms::Conv`]) keeps its input `x` instead of the patches `X = im2col(x)`:
/// `uᵀX` is then summed through the patch geometry, `(uᵀX)_{(ky,kx,c)} = Σ_i u_i·x[src_i(ky,kx) + c]`,
/// the same linear function of the same shares, so the claim and its soundness are unchanged.
pub(crate) fn compress_matmul(rec: &Recorded, coeffs: &mut Prg) -> Result<Claim> {
    let (m, k, n, conv) = match rec.terms {
        Terms::Matmul { k, n } => (rec.z.n.checked_div(n).unwrap_or(0), k, n, None),
        Terms::Conv { conv, n } => (conv.rows(), conv.cols(), n, Some(conv)),
        _ => return Err(MpcError::Invalid("a product without a matrix on the matrix path".into())),
    };
    let x_len = conv.map_or(m * k, |c| c.input_len());
    if m * n != rec.z.n || rec.x.n != x_len || rec.y.n != k * n {
        return Err(MpcError::Invalid(format!(
            "recorded matrix product: x {} y {} z {} for [{m}, {k}] × [{k}, {n}]",
            rec.x.n, rec.y.n, rec.z.n
        )));
    }
    if let Some((x2, z2)) = &rec.twin
        && (x2.n != rec.x.n || z2.n != rec.z.n)
    {
        return Err(MpcError::Invalid(format!("recorded matrix product: twin x {} z {}", x2.n, z2.n)));
    }
    // `a += uᵀX`, rows in parallel blocks (each block's partial sums, then their sum).
    let left = |u: &[Gr], x: &[u64], a: &mut [Gr]| {
        let partial = u
            .par_chunks(ROWS)
            .enumerate()
            .map(|(b, ub)| {
                let mut part = vec![Gr::ZERO; k];
                match &conv {
                    Some(c) => left_conv(ub, b * ROWS, x, c, &mut part),
                    None => left_product(
                        ub,
                        &x[b * ROWS * k..((b * ROWS + ub.len()) * k).min(x.len())],
                        k,
                        &mut part,
                    ),
                }
                part
            })
            .reduce(|| vec![Gr::ZERO; k], add_all);
        add_into(a, &partial);
    };
    let u: Vec<Gr> = (0..m).map(|_| Gr::random(coeffs)).collect();
    let v: Vec<Gr> = (0..n).map(|_| Gr::random(coeffs)).collect();
    let u2: Option<Vec<Gr>> = rec.twin.as_ref().map(|_| (0..m).map(|_| Gr::random(coeffs)).collect());
    let (xp, yp, zp) = (parts(&rec.x), parts(&rec.y), parts(&rec.z));
    let mut claim = Claim::default();
    for c in 0..3 {
        if xp[c].is_empty() {
            continue;
        }
        let mut a = vec![Gr::ZERO; k];
        left(&u, xp[c], &mut a);
        let (b, mut zc) = (right_product(yp[c], &v, k), bilinear(&u, zp[c], &v));
        if let (Some((x2, z2)), Some(u2)) = (&rec.twin, &u2) {
            left(u2, parts(x2)[c], &mut a);
            zc = zc.add(&bilinear(u2, parts(z2)[c], &v));
        }
        let (cx, cy, cz) = &mut claim;
        let (dx, dy, dz) = match c {
            0 => (&mut cx.m, &mut cy.m, &mut cz.m),
            1 => (&mut cx.one, &mut cy.one, &mut cz.one),
            _ => (&mut cx.two, &mut cy.two, &mut cz.two),
        };
        (*dx, *dy, *dz) = (a, b, vec![zc]);
    }
    Ok(claim)
}

/// Rows of a matrix product per parallel block of [`compress_matmul`]'s sums.
const ROWS: usize = 256;

fn add_into(a: &mut [Gr], b: &[Gr]) {
    a.iter_mut().zip(b).for_each(|(x, y)| x.add_assign(y));
}

fn add_all(mut a: Vec<Gr>, b: Vec<Gr>) -> Vec<Gr> {
    add_into(&mut a, &b);
    a
}

/// The components of `w` this party holds, in [`crate::claims::GrVec`]'s order (absent ones empty).
fn parts(w: &Masked) -> [&[u64]; 3] {
    [&w.m, &w.r.one, &w.r.two]
}

/// `a_t += Σ_i u_i·x[i][t]` for `x` of shape `[u.len(), k]`.
fn left_product(u: &[Gr], x: &[u64], k: usize, a: &mut [Gr]) {
    for (ui, row) in u.iter().zip(x.chunks_exact(k.max(1))) {
        Gr::add_scaled_each(a, ui, row);
    }
}

/// `a_t += Σ_i u_i·im2col(x)[row0 + i][t]` for the patch geometry `conv` (`x` its input), read
/// through the geometry: each row's `kh·kw` runs of `C` channels (zeros in the padding) are
/// gathered into one row of words first, so a row is one [`Gr::add_scaled_each`] over its
/// `kh·kw·C` words (a call per run cost most of the time where `C` is 1: LeNet's first
/// convolution).
fn left_conv(u: &[Gr], row0: usize, x: &[u64], conv: &Conv2d, a: &mut [Gr]) {
    let ([kh, kw], c) = (conv.kernel, conv.input[3]);
    let mut row = vec![0u64; kh * kw * c];
    for (i, ui) in (row0..).zip(u) {
        for (run, src) in row.chunks_exact_mut(c.max(1)).zip(conv.row_sources(i)) {
            match src.and_then(|s| x.get(s..s + c)) {
                Some(v) => run.copy_from_slice(v),
                None => run.fill(0),
            }
        }
        Gr::add_scaled_each(&mut a[..row.len()], ui, &row);
    }
}

/// A convolution's patches `im2col(x)` (`[rows, cols]`, row-major) from one component `x` of
/// its input (empty for an absent component), built in parallel over rows.
pub(crate) fn patches(conv: &Conv2d, x: &[u64]) -> Vec<u64> {
    if x.is_empty() {
        return vec![];
    }
    let ([kh, kw], c, cols) = (conv.kernel, conv.input[3], conv.cols());
    let mut out = vec![0u64; conv.rows() * cols];
    out.par_chunks_mut(cols.max(1)).enumerate().for_each(|(i, row)| {
        for (run, src) in row.chunks_exact_mut(c.max(1)).take(kh * kw).zip(conv.row_sources(i)) {
            if let Some(v) = src.and_then(|s| x.get(s..s + c)) {
                run.copy_from_slice(v);
            }
        }
    });
    out
}

/// `b_t = Σ_j y[t][j]·v_j` for `y` of shape `[k, v.len()]`, rows in parallel.
fn right_product(y: &[u64], v: &[Gr], k: usize) -> Vec<Gr> {
    let n = v.len();
    (0..k).into_par_iter().map(|t| Gr::dot_words(v, &y[t * n..(t + 1) * n])).collect()
}

/// `uᵀ·z·v` for `z` of shape `[u.len(), v.len()]`, as `(uᵀz)·v`: `m·n` scalings and an inner
/// product of `n` terms (a product per row of `z` would take `m` GR products, and `m ≫ n` for a
/// convolution's rows), the rows in parallel blocks.
fn bilinear(u: &[Gr], z: &[u64], v: &[Gr]) -> Gr {
    let n = v.len();
    let left = u
        .par_chunks(ROWS)
        .zip(z.par_chunks((ROWS * n).max(1)))
        .map(|(ub, zb)| {
            let mut part = vec![Gr::ZERO; n];
            left_product(ub, zb, n, &mut part);
            part
        })
        .reduce(|| vec![Gr::ZERO; n], add_all);
    Gr::inner_product(&left, v)
}
