//! A family's fixed-point arithmetic in the clear: what its secure operations compute, on
//! plain ring elements, so a model's numerics can be followed (and debugged) without MPC.
//!
//! Values are elements of `Z_2^64` read as signed integers with the family's fractional bits
//! (the shares' encoding). A family implements the non-linear layers it has with its own
//! approximations: its tables, its rings and its precision plan, step for step. The only
//! difference from the secure run is in the truncations, which the reference computes exactly
//! (`⌊x / d⌋`) where the protocols' are probabilistic (a unit or two in the last place).
//!
//! Each layer also says where its input left the range the family's approximation is valid
//! on ([`Excess`]): the fixed-point executor reports it with the layer's name.

/// An input outside the range a layer is valid on, in real terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Excess {
    /// What went out of range (e.g. `"GELU input"`, `"LayerNorm variance"`).
    pub what: String,
    /// The offending magnitude.
    pub value: f64,
    /// The bound it crossed (`value ≥ limit`, or below it for lower bounds).
    pub limit: f64,
}

/// A layer's output, with what left the valid range (if anything).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checked {
    /// The output, as signed ring elements with the family's fractional bits.
    pub values: Vec<i64>,
    /// The first range violation seen.
    pub excess: Option<Excess>,
}

/// The clear counterpart of a family's fixed-point non-linear layers.
pub trait FixedReference: Send + Sync {
    /// Fractional bits of the values passed in and out.
    fn frac_bits(&self) -> u32;

    /// `ReLU(x)`; exact unless the family compares at a lower precision.
    fn relu(&self, x: &[i64]) -> Checked {
        Checked { values: x.iter().map(|&v| v.max(0)).collect(), excess: None }
    }

    /// `GELU(x)` as the family approximates it; `None` when the family has no transformer
    /// layers.
    fn gelu(&self, _x: &[i64]) -> Option<Checked> {
        None
    }

    /// Softmax over the last axis of `[rows, k]`, `mask[i·k + j] = true` leaving an entry out.
    fn softmax(&self, _x: &[i64], _rows: usize, _k: usize, _mask: Option<&[bool]>) -> Option<Checked> {
        None
    }

    /// LayerNorm over the last axis of `[rows, k]` with `γ, β` of `k` entries.
    fn layernorm(
        &self,
        _x: &[i64],
        _gamma: &[i64],
        _beta: &[i64],
        _rows: usize,
        _k: usize,
    ) -> Option<Checked> {
        None
    }
}

/// A family whose non-linear layers are exact (ReLU and maxima only, as the CNN families
/// compute them on the whole ring), with `f` fractional bits.
#[derive(Debug, Clone, Copy)]
pub struct ExactCnn(pub u32);

impl FixedReference for ExactCnn {
    fn frac_bits(&self) -> u32 {
        self.0
    }
}
