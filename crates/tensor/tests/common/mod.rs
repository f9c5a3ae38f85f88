//! Shared helpers for the tensor tests: random tensors with edge values and naive references.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use veil_ring::Ring;
use veil_tensor::Tensor;

/// A deterministic RNG per test.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Random elements, with roughly one in four an edge value (0, 1, -1 = all ones, 2^(k-1)).
pub fn random_tensor<R: Ring>(rng: &mut StdRng, shape: &[usize]) -> Tensor<R> {
    let edges = [R::ZERO, R::ONE, -R::ONE, R::from_i64(i64::MIN), R::from_u64(u64::MAX)];
    Tensor::from_fn(shape, |_| {
        if rng.gen_ratio(1, 4) { edges[rng.gen_range(0..edges.len())] } else { R::random(rng) }
    })
}

/// `C[i, j] = Σ_p A[i, p] · B[p, j]` by the definition.
pub fn naive_matmul<R: Ring>(a: &Tensor<R>, b: &Tensor<R>) -> Tensor<R> {
    let (&[m, k], &[_, n]) = (a.shape(), b.shape()) else {
        panic!("naive_matmul needs 2-D operands");
    };
    Tensor::from_fn(&[m, n], |ij| (0..k).map(|p| a.data()[ij[0] * k + p] * b.data()[p * n + ij[1]]).sum())
}
