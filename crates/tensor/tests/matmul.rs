//! Matrix products of every kernel and ring type against the naive definition.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{naive_matmul, random_tensor, rng};
use veil_ring::{F61, Fp, Goldilocks, Ring, Z8, Z16, Z32, Z64, Z128, Zk};
use veil_tensor::{Cpu, Device, MatDims, MatmulKernel, Tensor, TensorError};

/// Shapes covering 1, odd sizes, and the block edges of every kernel
/// (MR/NR of 4..32, AMX 32×32 blocks and 64-deep steps, KC = 256).
const SHAPES: [(usize, usize, usize); 12] = [
    (1, 1, 1),
    (1, 7, 1),
    (3, 5, 2),
    (2, 1, 9),
    (7, 13, 11),
    (16, 64, 16),
    (17, 65, 33),
    (31, 63, 47),
    (33, 129, 65),
    (40, 300, 70),
    (64, 257, 96),
    (5, 600, 3),
];

fn check_ring<R: Ring>(dev: &dyn Device, seed: u64) {
    let mut g = rng(seed);
    for (m, k, n) in SHAPES {
        let a = random_tensor::<R>(&mut g, &[m, k]);
        let b = random_tensor::<R>(&mut g, &[k, n]);
        let got = a.matmul_with(&b, dev).unwrap();
        assert_eq!(got, naive_matmul(&a, &b), "{m}x{k}x{n} on {dev:?}");
    }
}

#[test]
fn every_kernel_z64_and_z32() {
    for kernel in MatmulKernel::ALL {
        let dev = Cpu::with_kernel(kernel);
        check_ring::<Z64>(&dev, 1);
        check_ring::<Z32>(&dev, 2);
    }
}

#[test]
fn narrow_and_odd_width_rings() {
    for kernel in [MatmulKernel::Auto, MatmulKernel::Blocked, MatmulKernel::Naive] {
        let dev = Cpu::with_kernel(kernel);
        check_ring::<Z8>(&dev, 3);
        check_ring::<Z16>(&dev, 4);
        check_ring::<Zk<1>>(&dev, 5);
        check_ring::<Zk<13>>(&dev, 6);
        check_ring::<Zk<32>>(&dev, 7);
        check_ring::<Zk<40>>(&dev, 8);
        check_ring::<Zk<63>>(&dev, 9);
        check_ring::<Zk<64>>(&dev, 10);
    }
}

#[test]
fn generic_rings() {
    let dev = Cpu::new();
    check_ring::<F61>(&dev, 11);
    check_ring::<Goldilocks>(&dev, 12);
    check_ring::<Fp<127>>(&dev, 13);
    check_ring::<Z128>(&dev, 14);
}

#[test]
fn all_ones_saturate_nothing() {
    // (2^64 - 1)^2 · k mod 2^64 = k: every partial product at its maximum.
    for kernel in MatmulKernel::ALL {
        let dev = Cpu::with_kernel(kernel);
        for (m, k, n) in [(3, 70, 5), (33, 2100, 2)] {
            let a = Tensor::new(vec![m, k], vec![Z64(u64::MAX); m * k]).unwrap();
            let b = Tensor::new(vec![k, n], vec![Z64(u64::MAX); k * n]).unwrap();
            let c = a.matmul_with(&b, &dev).unwrap();
            assert!(c.data().iter().all(|&x| x == Z64(k as u64)), "{kernel:?}");
            let a = a.map(|x| Z32(x.0 as u32));
            let b = b.map(|x| Z32(x.0 as u32));
            let c = a.matmul_with(&b, &dev).unwrap();
            assert!(c.data().iter().all(|&x| x == Z32(k as u32)), "{kernel:?}");
        }
    }
}

#[test]
fn deep_products_cross_kernel_slabs() {
    // k beyond the f64 exactness slab (2048) and the AMX u64 slab (16384).
    let mut g = rng(15);
    for kernel in MatmulKernel::ALL {
        let dev = Cpu::with_kernel(kernel);
        let (m, k, n) = (2, 16_500, 3);
        let a = random_tensor::<Z64>(&mut g, &[m, k]);
        let b = random_tensor::<Z64>(&mut g, &[k, n]);
        assert_eq!(a.matmul_with(&b, &dev).unwrap(), naive_matmul(&a, &b), "{kernel:?}");
    }
}

#[test]
fn empty_dimensions() {
    for kernel in MatmulKernel::ALL {
        let dev = Cpu::with_kernel(kernel);
        for (m, k, n) in [(0, 3, 2), (2, 0, 3), (2, 3, 0)] {
            let a = Tensor::<Z64>::zeros(&[m, k]);
            let b = Tensor::<Z64>::from_fn(&[k, n], |_| Z64(5));
            let c = a.matmul_with(&b, &dev).unwrap();
            assert_eq!(c.shape(), &[m, n]);
            assert!(c.data().iter().all(|&x| x == Z64(0)));
        }
    }
}

#[test]
fn batched_matmul_both_forms() {
    let mut g = rng(16);
    let a = random_tensor::<Z64>(&mut g, &[3, 5, 7]);
    let b = random_tensor::<Z64>(&mut g, &[3, 7, 4]);
    let shared = random_tensor::<Z64>(&mut g, &[7, 4]);
    let per = a.batched_matmul(&b).unwrap();
    let sh = a.batched_matmul(&shared).unwrap();
    assert_eq!(per.shape(), &[3, 5, 4]);
    for i in 0..3 {
        let ai = a.slice(0, i..i + 1).unwrap().reshape(&[5, 7]).unwrap();
        let bi = b.slice(0, i..i + 1).unwrap().reshape(&[7, 4]).unwrap();
        let want = naive_matmul(&ai, &bi).reshape(&[1, 5, 4]).unwrap();
        assert_eq!(per.slice(0, i..i + 1).unwrap(), want);
        let want = naive_matmul(&ai, &shared).reshape(&[1, 5, 4]).unwrap();
        assert_eq!(sh.slice(0, i..i + 1).unwrap(), want);
    }
    let f = random_tensor::<F61>(&mut g, &[2, 3, 4]);
    let fb = random_tensor::<F61>(&mut g, &[2, 4, 2]);
    let fp = f.batched_matmul(&fb).unwrap();
    let f1 = f.slice(0, 1..2).unwrap().reshape(&[3, 4]).unwrap();
    let fb1 = fb.slice(0, 1..2).unwrap().reshape(&[4, 2]).unwrap();
    assert_eq!(fp.slice(0, 1..2).unwrap().reshape(&[3, 2]).unwrap(), naive_matmul(&f1, &fb1));
}

#[test]
fn shape_errors_name_the_shapes() {
    let a = Tensor::<Z64>::zeros(&[2, 3]);
    let b = Tensor::<Z64>::zeros(&[4, 5]);
    let e = a.matmul(&b).unwrap_err();
    assert!(matches!(e, TensorError::ShapeMismatch { .. }));
    assert!(e.to_string().contains("[2, 3]") && e.to_string().contains("[4, 5]"), "{e}");
    assert!(matches!(Tensor::<Z64>::zeros(&[2, 3, 1]).matmul(&b), Err(TensorError::RankMismatch { .. })));
    assert!(Tensor::<Z64>::zeros(&[2, 3]).batched_matmul(&b).is_err());
    let a3 = Tensor::<Z64>::zeros(&[2, 3, 4]);
    assert!(a3.batched_matmul(&Tensor::zeros(&[3, 4, 5])).is_err());
    assert!(a3.batched_matmul(&Tensor::zeros(&[5, 5])).is_err());
    assert!(a3.batched_matmul(&Tensor::zeros(&[5])).is_err());
}

#[test]
fn device_buffers_are_checked() {
    let dev = Cpu::new();
    let d = MatDims { m: 2, k: 3, n: 4 };
    let mut c = vec![0u64; 8];
    assert!(dev.matmul_u64(&[0; 6], &[0; 12], &mut c, d).is_ok());
    assert!(dev.matmul_u64(&[0; 5], &[0; 12], &mut c, d).is_err());
    assert!(dev.matmul_u64(&[0; 6], &[0; 12], &mut c[..7], d).is_err());
    let mut c32 = vec![0u32; 8];
    assert!(dev.matmul_u32(&[0; 6], &[0; 11], &mut c32, d).is_err());
    assert!(dev.batched_matmul_u64(&[0; 12], &[0; 12], &mut [0; 16], 2, d).is_ok());
    assert!(dev.batched_matmul_u64(&[0; 12], &[0; 13], &mut [0; 16], 2, d).is_err());
}

/// A device that counts calls and forwards to the CPU.
#[derive(Debug, Default)]
struct Counting {
    calls: std::sync::atomic::AtomicUsize,
}

impl Device for Counting {
    fn name(&self) -> &'static str {
        "counting"
    }
    fn matmul_u64(&self, a: &[u64], b: &[u64], c: &mut [u64], d: MatDims) -> Result<(), TensorError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Cpu::new().matmul_u64(a, b, c, d)
    }
    fn matmul_u32(&self, a: &[u32], b: &[u32], c: &mut [u32], d: MatDims) -> Result<(), TensorError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Cpu::new().matmul_u32(a, b, c, d)
    }
}

#[test]
fn custom_device_receives_word_products() {
    let dev = Counting::default();
    let mut g = rng(17);
    let a = random_tensor::<Zk<20>>(&mut g, &[4, 6]);
    let b = random_tensor::<Zk<20>>(&mut g, &[6, 3]);
    assert_eq!(a.matmul_with(&b, &dev).unwrap(), naive_matmul(&a, &b));
    let a = random_tensor::<Z64>(&mut g, &[2, 4, 6]);
    let b = random_tensor::<Z64>(&mut g, &[2, 6, 3]);
    a.batched_matmul_with(&b, &dev).unwrap();
    // One call for the 2-D product, one per batch entry (default batched impl).
    assert_eq!(dev.calls.load(std::sync::atomic::Ordering::Relaxed), 3);
    // Prime fields never reach the word device.
    let f = random_tensor::<F61>(&mut g, &[2, 2]);
    f.matmul_with(&f, &dev).unwrap();
    assert_eq!(dev.calls.load(std::sync::atomic::Ordering::Relaxed), 3);
}
