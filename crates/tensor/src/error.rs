//! Errors of tensor operations; every shape problem is reported, never a panic.

/// A tensor operation received arguments of incompatible shapes (or a device failed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TensorError {
    /// The data length does not match the number of elements of the shape.
    #[error("shape {shape:?} has {expected} elements but {got} values were given")]
    DataLength {
        /// The requested shape.
        shape: Vec<usize>,
        /// Product of the dimensions.
        expected: usize,
        /// Length of the data.
        got: usize,
    },
    /// The product of the dimensions overflows `usize`.
    #[error("shape {shape:?} has too many elements")]
    ShapeOverflow {
        /// The offending shape.
        shape: Vec<usize>,
    },
    /// Two operands have incompatible shapes.
    #[error("{op}: incompatible shapes {left:?} and {right:?}")]
    ShapeMismatch {
        /// Name of the operation.
        op: &'static str,
        /// Shape of the first operand.
        left: Vec<usize>,
        /// Shape of the second operand.
        right: Vec<usize>,
    },
    /// A tensor has the wrong number of dimensions for the operation.
    #[error("{op}: expected a tensor with {expected} dimensions, got shape {shape:?}")]
    RankMismatch {
        /// Name of the operation.
        op: &'static str,
        /// Accepted rank(s), in words (e.g. "2" or "2 or 3").
        expected: &'static str,
        /// The shape received.
        shape: Vec<usize>,
    },
    /// An axis index is not below the number of dimensions.
    #[error("{op}: axis {axis} is out of range for shape {shape:?}")]
    AxisOutOfRange {
        /// Name of the operation.
        op: &'static str,
        /// The requested axis.
        axis: usize,
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// A reshape changes the number of elements.
    #[error("cannot reshape {from:?} into {to:?}")]
    Reshape {
        /// Current shape.
        from: Vec<usize>,
        /// Requested shape.
        to: Vec<usize>,
    },
    /// The argument of `permute` is not a permutation of `0..ndim`.
    #[error("{perm:?} is not a permutation of the axes of shape {shape:?}")]
    InvalidPermutation {
        /// The requested axis order.
        perm: Vec<usize>,
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// A gather names an entry past the end of its source.
    #[error("gather: index {index} is out of range for {len} elements")]
    GatherOutOfRange {
        /// The offending index.
        index: usize,
        /// Number of source elements.
        len: usize,
    },
    /// A slice range is empty-reversed or exceeds the axis length.
    #[error("slice {start}..{end} is out of bounds for axis {axis} of shape {shape:?}")]
    SliceOutOfBounds {
        /// Range start.
        start: usize,
        /// Range end (exclusive).
        end: usize,
        /// Axis being sliced.
        axis: usize,
        /// Shape of the tensor.
        shape: Vec<usize>,
    },
    /// A shape cannot be broadcast to the target (numpy rules).
    #[error("cannot broadcast shape {from:?} to {to:?}")]
    Broadcast {
        /// Shape of the tensor.
        from: Vec<usize>,
        /// Requested shape.
        to: Vec<usize>,
    },
    /// `concat` was given no tensors.
    #[error("concat needs at least one tensor")]
    EmptyConcat,
    /// Convolution parameters are invalid for the given shapes.
    #[error("conv2d: {reason} (input {input:?}, weight {weight:?}, stride {stride}, padding {padding})")]
    Conv {
        /// What is wrong.
        reason: &'static str,
        /// Input shape (NCHW).
        input: Vec<usize>,
        /// Weight shape (OIHW).
        weight: Vec<usize>,
        /// Stride.
        stride: usize,
        /// Zero padding.
        padding: usize,
    },
    /// A compute device reported a failure.
    #[error("device {device}: {message}")]
    Device {
        /// Device name.
        device: &'static str,
        /// What went wrong.
        message: String,
    },
}

/// Number of elements of `shape`, or an error if the product overflows.
pub(crate) fn numel(shape: &[usize]) -> Result<usize, TensorError> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| TensorError::ShapeOverflow { shape: shape.to_vec() })
}
