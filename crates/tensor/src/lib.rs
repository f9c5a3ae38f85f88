//! Dense row-major tensors over Veil's rings, with fast matrix products.
//!
//! * [`Tensor<T>`]: construction, reshaping and data movement for any `T`;
//!   element-wise ring arithmetic, reductions, [`matmul`](Tensor::matmul),
//!   [`batched_matmul`](Tensor::batched_matmul) and [`conv2d`](Tensor::conv2d)
//!   for `T: Ring`. Every shape mismatch is a [`TensorError`].
//! * [`Device`]: the seam for compute backends. [`Cpu`] (default) picks the
//!   fastest kernel at run time: exact Intel AMX-INT8 tile products on byte
//!   limbs where available, else a cache-blocked AVX-512/AVX2 integer kernel;
//!   all are multithreaded with rayon. The other kernels ([`MatmulKernel`]) stay
//!   selectable for benchmarks (`examples/matmul_bench.rs`).
//!
//! ```
//! use veil_ring::{Ring, Z64};
//! use veil_tensor::Tensor;
//!
//! let a = Tensor::new(vec![2, 2], [1, 2, 3, 4].map(Z64::from_i64).to_vec())?;
//! let i = Tensor::new(vec![2, 2], [1, 0, 0, 1].map(Z64::from_i64).to_vec())?;
//! assert_eq!(a.matmul(&i)?, a);
//! # Ok::<(), veil_tensor::TensorError>(())
//! ```

mod arith;
mod conv;
mod device;
mod error;
mod kernel;
mod layout;
mod linalg;
mod stored;
mod tensor;

pub use device::{Cpu, Device, MatDims, MatmulKernel};
pub use error::TensorError;
pub use tensor::Tensor;
