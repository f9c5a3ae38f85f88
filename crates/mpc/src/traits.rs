//! Capabilities of a protocol family, as traits over the ring `R`.
//!
//! A family implements the traits of the operations it has; one that lacks an operation does
//! not implement the trait, so the gap shows at compile time, not as a run-time "not
//! implemented". Local (communication-free) operations take no context; interactive ones take
//! the party's [`Ctx`] and return a [`Result`].

use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::{Ctx, PartyId, Result, conv::Conv2d, cost::Cost};

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

/// Fixed-point arithmetic on shares of reals encoded with [`frac_bits`](Self::frac_bits)
/// fractional bits (two's complement in the ring). Results are rescaled, so a product of two
/// encodings is again an encoding; each rescaling may be off by a few units in the last place.
pub trait FixedPoint<R: Ring>: Linear<R> {
    /// Fractional bits of the encoding.
    fn frac_bits(&self) -> u32;

    /// `⟨x ⊙ y⟩`, elementwise, rescaled.
    fn mul_fixed(&mut self, ctx: &mut Ctx, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;

    /// `⟨X · Y⟩` for `[m, k] × [k, n]`, rescaled.
    fn matmul_fixed(&mut self, ctx: &mut Ctx, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;

    /// Several independent products `⟨X_i · Y_i⟩`, rescaled: what calling
    /// [`matmul_fixed`](Self::matmul_fixed) on each gives, but a family may run them side by
    /// side in the rounds of one (the heads of an attention layer).
    fn matmul_fixed_many(
        &mut self,
        ctx: &mut Ctx,
        pairs: &[(&Self::Share, &Self::Share)],
    ) -> Result<Vec<Self::Share>> {
        pairs.iter().map(|(x, y)| self.matmul_fixed(ctx, x, y)).collect()
    }

    /// `⟨X · Y⟩` for `[m, k] × [k, n]`, not rescaled: the result has twice the fractional
    /// bits, to be rescaled later by [`div_public`](Self::div_public) (`2^f`), after layers
    /// that commute with it.
    fn matmul_unscaled(&mut self, ctx: &mut Ctx, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;

    /// A convolution, `⟨im2col(x) · W⟩` for `x: [B, H, W, C]`, the patch geometry `conv` and
    /// `W: [kh·kw·C, n]`, rescaled (`scaled`) or not (as [`matmul_unscaled`](Self::matmul_unscaled)):
    /// what gathering the patches ([`Layout::gather`] with [`Conv2d::index_map`]) and
    /// multiplying gives, which is the default. A family that keeps the operands of its
    /// products for a later check may keep `x` instead of its patches, `kh·kw` times larger.
    fn conv2d(
        &mut self,
        ctx: &mut Ctx,
        x: &Self::Share,
        conv: &Conv2d,
        w: &Self::Share,
        scaled: bool,
    ) -> Result<Self::Share>
    where
        Self: Layout<R> + Sized,
    {
        let patches = self.gather(x, &conv.index_map(), &[conv.rows(), conv.cols()])?;
        if scaled { self.matmul_fixed(ctx, &patches, w) } else { self.matmul_unscaled(ctx, &patches, w) }
    }

    /// `⟨x / d⟩` for a public integer `d ≥ 1` (rounded down, within a few units).
    fn div_public(&mut self, ctx: &mut Ctx, x: &Self::Share, d: u64) -> Result<Self::Share>;
}

/// The non-linear layers every model needs (CNNs and transformers alike), on fixed-point
/// shares. Families may check some of their work in batches: [`check`](Self::check) runs every
/// pending check, and must succeed before any result is revealed.
pub trait NonLinear<R: Ring>: FixedPoint<R> {
    /// `⟨max(x, 0)⟩`, elementwise.
    fn relu(&mut self, ctx: &mut Ctx, x: &Self::Share) -> Result<Self::Share>;

    /// `⟨max_j x[i, j]⟩` for each row of a `[rows, k]` tensor (max pooling); returns `[rows]`.
    fn max_rows(&mut self, ctx: &mut Ctx, x: &Self::Share, rows: usize, k: usize) -> Result<Self::Share>;

    /// Whether ReLU and maxima are exact on any value of the ring (a sign-bit extraction over
    /// the whole ring), so they may run on products that are not yet rescaled; `false` when
    /// they need values within the fixed-point range (comparisons read in a narrower ring).
    fn comparisons_on_full_ring(&self) -> bool {
        false
    }

    /// Runs every deferred check; an error means the run must stop without revealing anything.
    fn check(&mut self, ctx: &mut Ctx) -> Result<()>;
}

/// The non-linear layers of transformers, on fixed-point shares. A family without them (a CNN
/// family) does not implement this trait, and a model that needs them does not compile
/// against it.
pub trait TransformerOps<R: Ring>: NonLinear<R> {
    /// `⟨GELU(x)⟩` (tanh form), elementwise.
    fn gelu(&mut self, ctx: &mut Ctx, x: &Self::Share) -> Result<Self::Share>;

    /// Softmax over the last axis of a `[rows, k]` tensor; `mask[i·k + j] = true` leaves entry
    /// `(i, j)` out (its output is 0), as in causal attention.
    fn softmax(
        &mut self,
        ctx: &mut Ctx,
        x: &Self::Share,
        rows: usize,
        k: usize,
        mask: Option<&[bool]>,
    ) -> Result<Self::Share>;

    /// LayerNorm over the last axis of a `[rows, k]` tensor with secret `γ, β` of `k` entries.
    fn layernorm(
        &mut self,
        ctx: &mut Ctx,
        x: &Self::Share,
        gamma: &Self::Share,
        beta: &Self::Share,
        rows: usize,
        k: usize,
    ) -> Result<Self::Share>;
}

/// Local rearrangements of shares. Every sharing in Veil is linear in its components, so
/// slicing, transposing, reshaping or joining each party's share does the same to the secret,
/// without any message.
pub trait Layout<R: Ring>: Sharing<R> {
    /// The shape of the secret behind `x`.
    fn shape_of(&self, x: &Self::Share) -> Vec<usize>;
    /// The same secret with another shape of as many elements.
    fn reshape(&self, x: &Self::Share, shape: &[usize]) -> Result<Self::Share>;
    /// Entries `range` along `axis`.
    fn slice(&self, x: &Self::Share, axis: usize, range: std::ops::Range<usize>) -> Result<Self::Share>;
    /// The transposed matrix.
    fn transpose(&self, x: &Self::Share) -> Result<Self::Share>;
    /// Secrets joined along `axis` (shapes agreeing elsewhere).
    fn concat(&self, parts: &[&Self::Share], axis: usize) -> Result<Self::Share>;
    /// Entries picked by flat index into a secret of `shape` (`None`: a public 0, for
    /// padding); im2col, pooling windows and axis reorders are each one gather.
    fn gather(&self, x: &Self::Share, index: &[Option<usize>], shape: &[usize]) -> Result<Self::Share>;
}

/// Input owners outside the compute parties: a data owner shares its input and alone receives
/// the output, a model owner shares the weights. Compute parties are `0 .. servers()`; owners
/// are the parties after them in the same session.
pub trait Owners<R: Ring>: Sharing<R> {
    /// How many compute parties the family runs among.
    fn servers(&self) -> usize;

    /// Shares the owner's tensor among the compute parties: the owner passes `Some(value)` and
    /// gets `None`; compute parties pass `None` and the public shape, and get their share;
    /// other owners do nothing and get `None`.
    fn share_from_owner(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<R>>,
        shape: &[usize],
    ) -> Result<Option<Self::Share>>;

    /// Reveals `x` to the owner `owner` only: compute parties pass their share and get `None`;
    /// the owner passes `None` and the shape, and gets the value. Callers of malicious
    /// families run every pending check first.
    fn reveal_to_owner(
        &mut self,
        ctx: &mut Ctx,
        x: Option<&Self::Share>,
        owner: PartyId,
        shape: &[usize],
    ) -> Result<Option<Tensor<R>>>;
}
