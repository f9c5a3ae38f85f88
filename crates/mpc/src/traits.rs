//! Capabilities of a protocol family, as traits over the ring `R`.
//!
//! A family implements the traits of the operations it has; one that lacks an operation does
//! not implement the trait, so the gap shows at compile time, not as a run-time "not
//! implemented". Local (communication-free) operations take no context; interactive ones take
//! the party's [`Ctx`] and return a [`Result`].

use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::{Ctx, PartyId, Result, cost::Cost};

/// Sharing and revealing secret tensors.
pub trait Sharing<R: Ring> {
    /// One party's share of a secret tensor.
    type Share: Clone + Send;

    /// Shares the input of `owner` (which passes `Some(value)`; the others pass `None` and the
    /// public `shape`).
    fn share_input(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<R>>,
        shape: &[usize],
    ) -> Result<Self::Share>;

    /// Opens `x` to every party.
    fn reveal_all(&mut self, ctx: &mut Ctx, x: &Self::Share) -> Result<Tensor<R>>;

    /// Opens `x` to `to` only; the others get `None` and learn nothing.
    fn reveal_to(&mut self, ctx: &mut Ctx, x: &Self::Share, to: PartyId) -> Result<Option<Tensor<R>>>;
}

/// Linear operations, all local.
pub trait Linear<R: Ring>: Sharing<R> {
    /// `x + y`.
    fn add(&self, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;
    /// `x - y`.
    fn sub(&self, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;
    /// `x + c` for a public `c`.
    fn add_public(&self, ctx: &Ctx, x: &Self::Share, c: &Tensor<R>) -> Result<Self::Share>;
    /// `x · c` elementwise for a public `c`.
    fn mul_public(&self, x: &Self::Share, c: &Tensor<R>) -> Result<Self::Share>;
}

/// Elementwise multiplication of two secrets.
pub trait Multiply<R: Ring>: Sharing<R> {
    /// `x · y` elementwise.
    fn mul(&mut self, ctx: &mut Ctx, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;
    /// Declared online cost of multiplying `elements` pairs among `parties` parties, at one party
    /// (it may depend on the instance's mode).
    fn mul_cost(&self, elements: usize, parties: usize) -> Cost;
}
