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
/// A convolution of stride 1 takes a structured `u` instead ([`Separable`]): `uᵀX` then costs a
/// scaling per input word instead of one per patch word (`kh·kw` times fewer), and `uᵀEv` is a
/// polynomial of degree up to `D = B + O_h + O_w + kh + kw − 4` instead of 2, so it vanishes
/// with probability at most `D/2^64` (and a batch with such a product passes with at most
/// `(D + 1)/2^64` before the reductions).
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
    let random_left = |u: &[Gr], x: &[u64], a: &mut [Gr]| {
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
    let separable = conv.filter(|c| c.stride == [1, 1]);
    let draw_left = |coeffs: &mut Prg| match separable {
        Some(c) => Left::Separable(Separable::draw(&c, coeffs)),
        None => Left::Random((0..m).map(|_| Gr::random(coeffs)).collect()),
    };
    let u = draw_left(coeffs);
    let v: Vec<Gr> = (0..n).map(|_| Gr::random(coeffs)).collect();
    let u2: Option<Left> = rec.twin.as_ref().map(|_| draw_left(coeffs));
    // `a += uᵀX` and `uᵀZv`, by the kind of `u`.
    let left = |u: &Left, x: &[u64], a: &mut [Gr]| match u {
        Left::Random(u) => random_left(u, x, a),
        Left::Separable(sep) => add_into(a, &sep.left_input(x)),
    };
    let u_z_v = |u: &Left, z: &[u64], v: &[Gr]| match u {
        Left::Random(u) => bilinear(u, z, v),
        Left::Separable(sep) => Gr::inner_product(&sep.left_output(z, v.len()), v),
    };
    let (xp, yp, zp) = (parts(&rec.x), parts(&rec.y), parts(&rec.z));
    let mut claim = Claim::default();
    for c in 0..3 {
        if xp[c].is_empty() {
            continue;
        }
        let mut a = vec![Gr::ZERO; k];
        left(&u, xp[c], &mut a);
        let (b, mut zc) = (right_product(yp[c], &v, k), u_z_v(&u, zp[c], &v));
        if let (Some((x2, z2)), Some(u2)) = (&rec.twin, &u2) {
            left(u2, parts(x2)[c], &mut a);
            zc = zc.add(&u_z_v(u2, parts(z2)[c], &v));
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

/// Freivalds's left vector of a product.
enum Left {
    /// Uniform entries.
    Random(Vec<Gr>),
    /// A stride-1 convolution's structured vector ([`Separable`]).
    Separable(Separable),
}

/// The left vector of a stride-1 convolution with output rows `p = (b, o_y, o_x)`:
/// `u_p = γ^b·α^{o_y + kh − 1}·β^{o_x + kw − 1}` for uniform `α, β, γ ∈ GR`.
///
/// **Soundness.** With errors `E ≠ 0`, divided by the largest power of 2 dividing all its
/// entries and reduced mod 2 (`Ē ≠ 0`), `uᵀEv` is `Σ_{p,q} Ē_{p,q}·ū_p·v̄_q` over `GF(2^64)` in
/// the uniform residues `ᾱ, β̄, γ̄, v̄`. Distinct rows `p` give distinct monomials
/// `γ̄^b·ᾱ^{o_y + kh − 1}·β̄^{o_x + kw − 1}`, so this is a nonzero polynomial of degree at most
/// `B + O_h + O_w + kh + kw − 4`, which vanishes with probability at most that over `2^64`
/// (Schwartz–Zippel; LeNet's first convolution at batch 30: 84/2^64, VGG-16's first two: 480/2^64), in
/// place of `2/2^64` for a uniform `u`. A twin draws its own `α, β, γ`.
///
/// **Cost.** With `i_y = o_y + ky − pad_y`, `u_p = α^{i_y}·α^{kh − 1 + pad_y − ky}·(the same in
/// x)·γ^b`, so `(uᵀX)_{(ky,kx,c)} = α^{kh−1+pad_y−ky}·β^{kw−1+pad_x−kx}·R(ky, kx, c)` where
/// `R` sums `γ^b·α^{i_y}·β^{i_x}·x[b, i_y, i_x, c]` over the input positions whose output
/// position for that offset exists: a rectangle, nearly the whole image. Input rows (and
/// columns) fall into a few classes by the offsets whose rectangle holds them, so each input
/// word is scaled once, into the sum of its classes (`G`), and each `R` adds up the classes'
/// sums: `B·H·W·C` scalings in place of `B·O_h·O_w·kh·kw·C`. `uᵀZ` goes line by line of the
/// output images: `Σ_{b,o_y} γ^b·α^{o_y+kh−1}·Σ_{o_x} β^{o_x+kw−1}·Z_p`, the scalings of a
/// uniform `u` and `n` GR products per line (never `u` itself, a GR product per row).
struct Separable {
    conv: Conv2d,
    /// `α^i`, `β^i` (for every exponent used) and `γ^b`.
    alpha: Vec<Gr>,
    beta: Vec<Gr>,
    gamma: Vec<Gr>,
}

impl Separable {
    fn draw(conv: &Conv2d, coeffs: &mut Prg) -> Separable {
        let (a, b, g) = (Gr::random(coeffs), Gr::random(coeffs), Gr::random(coeffs));
        let ([batch, h, w, _], [kh, kw], [oh, ow]) = (conv.input, conv.kernel, conv.output);
        let powers = |x: &Gr, n: usize| {
            let mut p = vec![Gr::embed(1); n.max(1)];
            for i in 1..p.len() {
                p[i] = p[i - 1].mul(x);
            }
            p
        };
        Separable {
            conv: *conv,
            alpha: powers(&a, (oh + kh).max(h + kh + conv.pad[0])),
            beta: powers(&b, (ow + kw).max(w + kw + conv.pad[1])),
            gamma: powers(&g, batch),
        }
    }

    /// `u_p` of row `p` (tests).
    #[cfg(test)]
    fn at(&self, p: usize) -> Gr {
        let ([kh, kw], [oh, ow]) = (self.conv.kernel, self.conv.output);
        let (b, oy, ox) = (p / (oh * ow), p / ow % oh, p % ow);
        self.gamma[b].mul(&self.alpha[oy + kh - 1]).mul(&self.beta[ox + kw - 1])
    }

    /// For each input index along one axis (`size` of them), the offsets `k < kernel` whose
    /// output position `i + pad − k` lies in `0..out`, as a bit mask; and the distinct nonzero
    /// masks (the classes), with each index's class (`None` for none).
    fn classes(size: usize, kernel: usize, pad: usize, out: usize) -> (Vec<u64>, Vec<Option<usize>>) {
        let mut masks: Vec<u64> = Vec::new();
        let of = (0..size)
            .map(|i| {
                let mask = (0..kernel)
                    .filter(|&k| (i + pad).checked_sub(k).is_some_and(|o| o < out))
                    .fold(0u64, |m, k| m | 1 << k);
                (mask != 0).then(|| {
                    masks.iter().position(|&m| m == mask).unwrap_or_else(|| {
                        masks.push(mask);
                        masks.len() - 1
                    })
                })
            })
            .collect();
        (masks, of)
    }

    /// `uᵀ·im2col(x)` from one component `x` of the input (`kh·kw·C` sums).
    fn left_input(&self, x: &[u64]) -> Vec<Gr> {
        let conv = &self.conv;
        let ([batch, h, w, c], [kh, kw], [oh, ow], [py, px]) =
            (conv.input, conv.kernel, conv.output, conv.pad);
        let (row_masks, row_class) = Separable::classes(h, kh, py, oh);
        let (col_masks, col_class) = Separable::classes(w, kw, px, ow);
        let (rows, cols) = (row_masks.len(), col_masks.len());
        // G[row class][column class][channel], summed over the input rows in parallel.
        let sums = (0..h)
            .into_par_iter()
            .filter_map(|iy| row_class[iy].map(|rc| (iy, rc)))
            .fold(
                || vec![Gr::ZERO; rows * cols * c],
                |mut g, (iy, rc)| {
                    let mut words = vec![0u64; batch];
                    for (ix, cc) in col_class.iter().enumerate() {
                        let Some(cc) = *cc else { continue };
                        let ab = self.alpha[iy].mul(&self.beta[ix]);
                        let at = |b: usize, ch: usize| x[((b * h + iy) * w + ix) * c + ch];
                        let out = &mut g[(rc * cols + cc) * c..(rc * cols + cc + 1) * c];
                        if c <= batch {
                            // One GR product per channel: Σ_b γ^b·x, times α^{i_y}·β^{i_x}.
                            for (ch, o) in out.iter_mut().enumerate() {
                                words.iter_mut().enumerate().for_each(|(b, v)| *v = at(b, ch));
                                o.add_assign(&ab.mul(&Gr::dot_words(&self.gamma, &words)));
                            }
                        } else {
                            // One GR product per image: the coefficients γ^b·α^{i_y}·β^{i_x}.
                            for b in 0..batch {
                                let coeff = self.gamma[b].mul(&ab);
                                Gr::add_scaled_each(out, &coeff, &x[((b * h + iy) * w + ix) * c..][..c]);
                            }
                        }
                    }
                    g
                },
            )
            .reduce(|| vec![Gr::ZERO; rows * cols * c], add_all);
        let mut a = vec![Gr::ZERO; kh * kw * c];
        for ky in 0..kh {
            for kx in 0..kw {
                let factor = self.alpha[kh - 1 + py - ky].mul(&self.beta[kw - 1 + px - kx]);
                let out = &mut a[(ky * kw + kx) * c..(ky * kw + kx + 1) * c];
                for rc in (0..rows).filter(|&r| row_masks[r] >> ky & 1 == 1) {
                    for cc in (0..cols).filter(|&q| col_masks[q] >> kx & 1 == 1) {
                        add_into(out, &sums[(rc * cols + cc) * c..(rc * cols + cc + 1) * c]);
                    }
                }
                out.iter_mut().for_each(|v| *v = factor.mul(v));
            }
        }
        a
    }

    /// `uᵀZ` for the output `z` (`[rows, n]`), row of outputs by row of outputs.
    fn left_output(&self, z: &[u64], n: usize) -> Vec<Gr> {
        let ([batch, ..], [kh, kw], [oh, ow]) = (self.conv.input, self.conv.kernel, self.conv.output);
        (0..batch * oh)
            .into_par_iter()
            .map(|line| {
                let (b, oy) = (line / oh, line % oh);
                let mut inner = vec![Gr::ZERO; n];
                for ox in 0..ow {
                    let row = (line * ow + ox) * n;
                    Gr::add_scaled_each(&mut inner, &self.beta[ox + kw - 1], &z[row..row + n]);
                }
                let coeff = self.gamma[b].mul(&self.alpha[oy + kh - 1]);
                inner.iter_mut().for_each(|v| *v = coeff.mul(v));
                inner
            })
            .reduce(|| vec![Gr::ZERO; n], add_all)
    }
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

#[cfg(test)]
mod tests {
    use veil_crypto::Seed;

    use super::*;

    /// The structured left vector's sums through the classes equal the sums of `u_p` times the
    /// patches and outputs entry by entry, over paddings, kernels and both ways of scaling
    /// (fewer channels than images and more).
    #[test]
    fn a_separable_left_vector_sums_as_the_patches_do() {
        let geometries = [
            ([3, 5, 6, 2], [3, 3], [1, 1]),
            ([1, 4, 4, 5], [3, 3], [1, 1]),
            ([2, 6, 5, 3], [2, 3], [0, 0]),
            ([2, 7, 7, 1], [5, 5], [2, 2]),
            ([2, 3, 4, 4], [1, 1], [0, 0]),
            ([1, 5, 5, 2], [3, 3], [2, 0]),
        ];
        let mut g = Prg::new(&Seed([9; 16]));
        for (input, kernel, pad) in geometries {
            let output = [input[1] + 2 * pad[0] + 1 - kernel[0], input[2] + 2 * pad[1] + 1 - kernel[1]];
            let conv = Conv2d::new(input, kernel, [1, 1], pad, output).expect("a valid geometry");
            let sep = Separable::draw(&conv, &mut g);
            let x: Vec<u64> = (0..conv.input_len()).map(|_| g.next_u64()).collect();
            let (rows, cols, c) = (conv.rows(), conv.cols(), input[3]);
            let mut want = vec![Gr::ZERO; cols];
            for p in 0..rows {
                let u = sep.at(p);
                for ky in 0..kernel[0] {
                    for kx in 0..kernel[1] {
                        if let Some(s) = conv.source(p, ky, kx) {
                            for ch in 0..c {
                                want[(ky * kernel[1] + kx) * c + ch].add_assign(&u.scale(x[s + ch]));
                            }
                        }
                    }
                }
            }
            assert!(sep.left_input(&x) == want, "uᵀ·im2col(x), {input:?} {kernel:?} {pad:?}");
            let n = 3;
            let z: Vec<u64> = (0..rows * n).map(|_| g.next_u64()).collect();
            let mut want = vec![Gr::ZERO; n];
            for p in 0..rows {
                let u = sep.at(p);
                for q in 0..n {
                    want[q].add_assign(&u.scale(z[p * n + q]));
                }
            }
            assert!(sep.left_output(&z, n) == want, "uᵀz, {input:?} {kernel:?} {pad:?}");
        }
    }
}
