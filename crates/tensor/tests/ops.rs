//! Construction, layout and element-wise operations against naive index loops.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{random_tensor, rng};
use proptest::prelude::*;
use veil_ring::{F127, Ring, Z8, Z64};
use veil_tensor::{Tensor, TensorError};

/// Row-major offset of a multi-index.
fn offset(shape: &[usize], idx: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// Shapes of rank 0..=4 with small dimensions (including 0 and 1).
fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..5, 0..=4)
}

proptest! {
    #[test]
    fn from_fn_get_and_reshape(s in shape(), seed in any::<u64>()) {
        let t = random_tensor::<Z64>(&mut rng(seed), &s);
        prop_assert_eq!(t.len(), s.iter().product::<usize>());
        prop_assert_eq!(t.ndim(), s.len());
        let u = Tensor::from_fn(&s, |idx| *t.get(idx).unwrap());
        prop_assert_eq!(&u, &t);
        let flat = t.clone().reshape(&[t.len()]).unwrap();
        prop_assert_eq!(flat.data(), t.data());
        prop_assert!(t.clone().reshape(&[t.len() + 1]).is_err());
    }

    #[test]
    fn permute_matches_index_loop(s in prop::collection::vec(1usize..5, 1..=4), seed in any::<u64>()) {
        let t = random_tensor::<Z64>(&mut rng(seed), &s);
        let mut perm: Vec<usize> = (0..s.len()).collect();
        perm.reverse();
        perm.rotate_left(seed as usize % s.len());
        let p = t.permute(&perm).unwrap();
        let out_shape: Vec<usize> = perm.iter().map(|&a| s[a]).collect();
        prop_assert_eq!(p.shape(), &out_shape[..]);
        let want = Tensor::from_fn(&out_shape, |o| {
            let mut idx = vec![0; s.len()];
            for (a, &pa) in perm.iter().enumerate() {
                idx[pa] = o[a];
            }
            t.data()[offset(&s, &idx)]
        });
        prop_assert_eq!(p, want);
    }

    #[test]
    fn transpose_is_permute(m in 0usize..40, n in 0usize..40, seed in any::<u64>()) {
        let t = random_tensor::<Z8>(&mut rng(seed), &[m, n]);
        prop_assert_eq!(t.transpose().unwrap(), t.permute(&[1, 0]).unwrap());
        prop_assert_eq!(t.transpose().unwrap().transpose().unwrap(), t);
    }

    #[test]
    fn slice_and_concat_round_trip(s in prop::collection::vec(1usize..5, 1..=3), seed in any::<u64>()) {
        let t = random_tensor::<Z64>(&mut rng(seed), &s);
        let axis = seed as usize % s.len();
        let cut = (seed as usize / 7) % (s[axis] + 1);
        let (a, b) = (t.slice(axis, 0..cut).unwrap(), t.slice(axis, cut..s[axis]).unwrap());
        prop_assert_eq!(a.shape()[axis], cut);
        let want = Tensor::from_fn(a.shape(), |idx| *t.get(idx).unwrap());
        prop_assert_eq!(&a, &want);
        prop_assert_eq!(Tensor::concat(&[&a, &b], axis).unwrap(), t);
    }

    #[test]
    fn broadcast_matches_numpy_rule(s in prop::collection::vec(1usize..4, 0..=3), lead in 0usize..3, seed in any::<u64>()) {
        let mut g = rng(seed);
        // Collapse some dimensions of the source to 1.
        let src: Vec<usize> = s.iter().enumerate().map(|(i, &d)| if (seed >> i) & 1 == 1 { 1 } else { d }).collect();
        let t = random_tensor::<Z64>(&mut g, &src);
        let mut target = vec![2; lead];
        target.extend(&s);
        let bt = t.broadcast_to(&target).unwrap();
        let want = Tensor::from_fn(&target, |o| {
            let idx: Vec<usize> = src.iter().enumerate().map(|(a, &d)| if d == 1 { 0 } else { o[lead + a] }).collect();
            t.data()[offset(&src, &idx)]
        });
        prop_assert_eq!(bt, want);
    }

    #[test]
    fn elementwise_and_sum_axis(s in prop::collection::vec(0usize..5, 1..=3), seed in any::<u64>()) {
        let mut g = rng(seed);
        let a = random_tensor::<F127>(&mut g, &s);
        let b = random_tensor::<F127>(&mut g, &s);
        let zip = |f: fn(F127, F127) -> F127| a.zip_map(&b, |&x, &y| f(x, y)).unwrap();
        prop_assert_eq!(a.add(&b).unwrap(), zip(|x, y| x + y));
        prop_assert_eq!(a.sub(&b).unwrap(), zip(|x, y| x - y));
        prop_assert_eq!(a.mul(&b).unwrap(), zip(|x, y| x * y));
        prop_assert_eq!(a.neg(), a.map(|&x| -x));
        let s3 = F127::from_u64(3);
        prop_assert_eq!(a.scale(s3), a.map(|&x| x * s3));
        let mut c = a.clone();
        c.add_assign(&b).unwrap();
        c.sub_assign(&b).unwrap();
        prop_assert_eq!(&c, &a);
        prop_assert_eq!(a.sum(), a.data().iter().copied().sum::<F127>());
        let axis = seed as usize % s.len();
        let red = a.sum_axis(axis).unwrap();
        let mut out_shape = s.clone();
        out_shape.remove(axis);
        let want = Tensor::from_fn(&out_shape, |o| {
            (0..s[axis]).map(|l| {
                let mut idx = o.to_vec();
                idx.insert(axis, l);
                a.data()[offset(&s, &idx)]
            }).sum()
        });
        prop_assert_eq!(red, want);
    }
}

#[test]
fn constructors() {
    assert!(matches!(
        Tensor::new(vec![2, 3], vec![Z64(0); 5]),
        Err(TensorError::DataLength { expected: 6, got: 5, .. })
    ));
    assert!(matches!(
        Tensor::new(vec![usize::MAX, 3], Vec::<Z64>::new()),
        Err(TensorError::ShapeOverflow { .. })
    ));
    let s = Tensor::scalar(Z64(7));
    assert_eq!((s.shape(), s.len(), s.ndim()), (&[][..], 1, 0));
    assert_eq!(s.get(&[]), Some(&Z64(7)));
    let v = Tensor::from_vec(vec![Z64(1), Z64(2)]);
    assert_eq!(v.shape(), &[2]);
    assert_eq!(v.get(&[2]), None);
    assert_eq!(v.get(&[0, 0]), None);
    let e = Tensor::<Z64>::zeros(&[3, 0]);
    assert!(e.is_empty());
    let mut t = Tensor::<Z64>::zeros(&[2]);
    t.data_mut()[1] = Z64(9);
    assert_eq!(t.into_data(), vec![Z64(0), Z64(9)]);
}

#[test]
fn random_tensors() {
    let t = Tensor::<Z64>::random(&[3, 4], &mut rng(9));
    assert_eq!(t.shape(), &[3, 4]);
    assert_ne!(t, Tensor::<Z64>::random(&[3, 4], &mut rng(10)));
    assert_eq!(t, Tensor::<Z64>::random(&[3, 4], &mut rng(9)));
}

#[test]
fn layout_errors() {
    let t = random_tensor::<Z64>(&mut rng(1), &[2, 3, 4]);
    assert!(matches!(t.transpose(), Err(TensorError::RankMismatch { .. })));
    for bad in [&[0, 1][..], &[0, 1, 1], &[0, 1, 3], &[2, 1, 0, 3]] {
        assert!(matches!(t.permute(bad), Err(TensorError::InvalidPermutation { .. })), "{bad:?}");
    }
    assert!(matches!(t.slice(3, 0..1), Err(TensorError::AxisOutOfRange { .. })));
    assert!(matches!(t.slice(1, 2..4), Err(TensorError::SliceOutOfBounds { .. })));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = t.slice(1, 2..1);
    assert!(reversed.is_err());
    assert!(matches!(Tensor::<Z64>::concat(&[], 0), Err(TensorError::EmptyConcat)));
    let u = Tensor::<Z64>::zeros(&[2, 5, 4]);
    assert_eq!(Tensor::concat(&[&t, &u], 1).unwrap().shape(), &[2, 8, 4]);
    let e = Tensor::concat(&[&t, &u], 0).unwrap_err();
    assert!(e.to_string().contains("[2, 3, 4]") && e.to_string().contains("[2, 5, 4]"), "{e}");
    assert!(Tensor::concat(&[&t], 3).is_err());
    assert!(Tensor::concat(&[&t, &Tensor::zeros(&[2, 3])], 0).is_err());
    assert!(matches!(t.broadcast_to(&[2, 2, 4]), Err(TensorError::Broadcast { .. })));
    assert!(t.broadcast_to(&[3, 4]).is_err());
    assert_eq!(t.broadcast_to(&[5, 2, 3, 4]).unwrap().shape(), &[5, 2, 3, 4]);
}

#[test]
fn elementwise_shape_errors() {
    let a = Tensor::<Z64>::zeros(&[2, 3]);
    let b = Tensor::<Z64>::zeros(&[3, 2]);
    for e in [a.add(&b), a.sub(&b), a.mul(&b)] {
        let e = e.unwrap_err();
        assert!(e.to_string().contains("[2, 3]") && e.to_string().contains("[3, 2]"), "{e}");
    }
    assert!(a.zip_map(&b, |x, y| *x + *y).is_err());
    assert!(a.clone().add_assign(&b).is_err());
    assert!(a.clone().sub_assign(&b).is_err());
    assert!(matches!(a.sum_axis(2), Err(TensorError::AxisOutOfRange { .. })));
    assert_eq!(
        Tensor::scalar(Z64(3)).sum_axis(0).unwrap_err().to_string(),
        "sum_axis: axis 0 is out of range for shape []"
    );
}

#[test]
fn gather_picks_pads_and_rejects_bad_indices() {
    let t = Tensor::new(vec![2, 2], vec![Z64(1), Z64(2), Z64(3), Z64(4)]).unwrap();
    let g = t.gather(&[Some(3), None, Some(0), Some(3)], &[2, 2], Z64(0)).unwrap();
    assert_eq!(g.data(), &[Z64(4), Z64(0), Z64(1), Z64(4)]);
    assert!(t.gather(&[Some(4)], &[1], Z64(0)).is_err());
    assert!(t.gather(&[Some(0)], &[2], Z64(0)).is_err());
}
