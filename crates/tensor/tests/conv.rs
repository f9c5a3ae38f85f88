//! 2-D convolution against the direct definition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{random_tensor, rng};
use veil_ring::{F61, Ring, Z32, Z64};
use veil_tensor::{Tensor, TensorError};

/// `Y[n, o, y, x] = Σ_{c,i,j} K[o, c, i, j] · X[n, c, y·s + i - p, x·s + j - p]`.
fn naive_conv<R: Ring>(x: &Tensor<R>, w: &Tensor<R>, s: usize, p: usize) -> Tensor<R> {
    let (&[n, c, h, wd], &[o, _, kh, kw]) = (x.shape(), w.shape()) else {
        panic!("4-D expected");
    };
    let (oh, ow) = ((h + 2 * p - kh) / s + 1, (wd + 2 * p - kw) / s + 1);
    Tensor::from_fn(&[n, o, oh, ow], |idx| {
        let (b, oc, y, xx) = (idx[0], idx[1], idx[2], idx[3]);
        let mut acc = R::ZERO;
        for ch in 0..c {
            for i in 0..kh {
                for j in 0..kw {
                    let (iy, ix) = ((y * s + i) as isize - p as isize, (xx * s + j) as isize - p as isize);
                    if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < wd {
                        acc += *w.get(&[oc, ch, i, j]).unwrap()
                            * *x.get(&[b, ch, iy as usize, ix as usize]).unwrap();
                    }
                }
            }
        }
        acc
    })
}

fn check<R: Ring>(seed: u64) {
    let mut g = rng(seed);
    let cases = [
        // (n, c, h, w, o, kh, kw, stride, pad)
        (1, 1, 1, 1, 1, 1, 1, 1, 0),
        (2, 3, 7, 5, 4, 3, 3, 1, 1),
        (1, 2, 8, 8, 3, 3, 2, 2, 0),
        (3, 1, 5, 6, 2, 5, 6, 1, 0),
        (2, 4, 9, 7, 5, 3, 3, 3, 2),
        (1, 3, 4, 4, 2, 1, 1, 2, 1),
    ];
    for (n, c, h, w, o, kh, kw, s, p) in cases {
        let x = random_tensor::<R>(&mut g, &[n, c, h, w]);
        let k = random_tensor::<R>(&mut g, &[o, c, kh, kw]);
        let got = x.conv2d(&k, s, p).unwrap();
        assert_eq!(got, naive_conv(&x, &k, s, p), "{:?}", (n, c, h, w, o, kh, kw, s, p));
    }
}

#[test]
fn conv2d_matches_definition() {
    check::<Z64>(1);
    check::<Z32>(2);
    check::<F61>(3);
}

#[test]
fn im2col_layout() {
    // One 1×3×3 image, 2×2 kernel, stride 1: column (y·2 + x) holds the patch at (y, x).
    let x = Tensor::from_fn(&[1, 1, 3, 3], |i| Z64((i[2] * 3 + i[3]) as u64));
    let cols = x.im2col(2, 2, 1, 0).unwrap();
    assert_eq!(cols.shape(), &[4, 4]);
    let want: Vec<u64> = vec![0, 1, 3, 4, 1, 2, 4, 5, 3, 4, 6, 7, 4, 5, 7, 8];
    assert_eq!(cols.map(|v| v.0).into_data(), want);
}

#[test]
fn conv2d_errors() {
    let x = Tensor::<Z64>::zeros(&[1, 2, 4, 4]);
    let w = Tensor::<Z64>::zeros(&[3, 2, 3, 3]);
    let conv = |x: &Tensor<Z64>, w: &Tensor<Z64>, s, p| x.conv2d(w, s, p).unwrap_err();
    assert!(matches!(conv(&x, &w, 0, 0), TensorError::Conv { reason, .. } if reason.contains("stride")));
    let e = conv(&x, &Tensor::zeros(&[3, 1, 3, 3]), 1, 0);
    assert!(e.to_string().contains("[1, 2, 4, 4]") && e.to_string().contains("[3, 1, 3, 3]"), "{e}");
    assert!(matches!(conv(&x, &Tensor::zeros(&[3, 2, 5, 5]), 1, 0), TensorError::Conv { .. }));
    assert!(x.conv2d(&Tensor::zeros(&[3, 2, 5, 5]), 1, 1).is_ok());
    assert!(matches!(conv(&Tensor::zeros(&[2, 4, 4]), &w, 1, 0), TensorError::Conv { .. }));
    assert!(matches!(conv(&x, &Tensor::zeros(&[3, 2, 3]), 1, 0), TensorError::Conv { .. }));
    assert!(matches!(conv(&x, &Tensor::zeros(&[3, 2, 0, 3]), 1, 0), TensorError::Conv { .. }));
}
