//! Products dispatch through the device they are given; without one they run on the CPU.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use veil_ring::{Ring, Z64};
use veil_tensor::{Cpu, Device, MatDims, MatmulKernel, Tensor, TensorError};

#[derive(Debug)]
struct Spy(Arc<AtomicUsize>);

impl Device for Spy {
    fn name(&self) -> &'static str {
        "spy"
    }
    fn matmul_u64(&self, a: &[u64], b: &[u64], c: &mut [u64], d: MatDims) -> Result<(), TensorError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Cpu::with_kernel(MatmulKernel::Naive).matmul_u64(a, b, c, d)
    }
    fn matmul_u32(&self, _: &[u32], _: &[u32], _: &mut [u32], _: MatDims) -> Result<(), TensorError> {
        Err(TensorError::Device { device: "spy", message: "no u32 support".into() })
    }
}

#[test]
fn matmul_and_conv_dispatch_through_the_device_given() {
    let calls = Arc::new(AtomicUsize::new(0));
    let spy = Spy(Arc::clone(&calls));
    let a = Tensor::from_fn(&[2, 2], |i| Z64::from_u64((i[0] + 2 * i[1]) as u64));
    let id = Tensor::from_fn(&[2, 2], |i| if i[0] == i[1] { Z64::ONE } else { Z64::ZERO });
    assert_eq!(a.matmul_with(&id, &spy).unwrap(), a);
    let x = Tensor::<Z64>::zeros(&[1, 1, 3, 3]);
    x.conv2d_with(&Tensor::zeros(&[1, 1, 2, 2]), 1, 0, &spy).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // Without a device, the CPU: the spy sees nothing.
    assert_eq!(a.matmul(&id).unwrap(), a);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // Device errors propagate.
    let z = Tensor::<veil_ring::Z32>::zeros(&[2, 2]);
    let e = z.matmul_with(&z, &spy).unwrap_err();
    assert!(e.to_string().contains("spy"), "{e}");
}
