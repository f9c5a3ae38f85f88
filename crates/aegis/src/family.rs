//! The family behind `veil-mpc`'s capability traits (sharing, fixed-point arithmetic, ReLU and
//! maxima, layout, input owners), so the model runtime runs CNNs on it without its internals.
//! It has no transformer layers (GELU, softmax, LayerNorm): the paper gives none.
//!
//! **Encoding**: reals in `Z_2^64` with [`FRAC_BITS`] = 16 fractional bits. A product's
//! rescaling is the paper's malicious truncation: the product is made with the `r_x` of a
//! verified truncation pair as its output mask, then truncated locally
//! ([`Aegis::mul_trunc`]); so a fixed-point product or matrix product costs one online round
//! like an exact one. Division by a public `d` is a product with the public `⌊2^16/d⌉`,
//! truncated the same way (relative error about `d·2^-17`).
//!
//! **Shapes**: a [`Shaped`] share is a [`Masked`] vector with the shape of its secret. Every
//! rearrangement (slice, transpose, concat, im2col, pooling windows) is a gather of each
//! component, local, because the sharing is linear in `(m, [r]_1, [r]_2)`; a padding zero is the
//! public sharing `(0, 0, 0)`.

use veil_mpc::conv::Conv2d;
use veil_mpc::cost::Cost;
use veil_mpc::traits::{FixedPoint, Layout, Linear, Multiply, NonLinear, Owners, Sharing};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::Z64;
use veil_tensor::{Tensor, TensorError};

use crate::share::{Aegis, Masked, Pair};

/// Fractional bits of the fixed-point encoding.
pub const FRAC_BITS: u32 = 16;

/// One party's share of a secret tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shaped {
    /// The secret's shape.
    pub shape: Vec<usize>,
    /// The share of its entries, row-major.
    pub x: Masked,
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

fn shaped(shape: &[usize], x: Masked) -> Result<Shaped> {
    if x.n != numel(shape) {
        return Err(MpcError::Invalid(format!("{} secrets as shape {shape:?}", x.n)));
    }
    Ok(Shaped { shape: shape.to_vec(), x })
}

fn raw(t: &Tensor<Z64>) -> Vec<u64> {
    t.data().iter().map(|v| v.0).collect()
}

fn tensor(shape: &[usize], v: Vec<u64>) -> Result<Tensor<Z64>> {
    Ok(Tensor::new(shape.to_vec(), v.into_iter().map(Z64).collect())?)
}

/// Applies the same rearrangement (a `veil-tensor` layout op) to each component this party
/// holds, as a tensor of the secret's shape; the others stay empty.
fn rearrange(
    x: &Shaped,
    f: impl Fn(Tensor<u64>) -> std::result::Result<Tensor<u64>, TensorError>,
) -> Result<Shaped> {
    let mut shape = None;
    let mut each = |v: &[u64]| -> Result<Vec<u64>> {
        if v.is_empty() {
            return Ok(vec![]);
        }
        let t = f(Tensor::new(x.shape.clone(), v.to_vec())?)?;
        shape = Some(t.shape().to_vec());
        Ok(t.into_data())
    };
    let (m, one, two) = (each(&x.x.m)?, each(&x.x.r.one)?, each(&x.x.r.two)?);
    let shape = shape.ok_or_else(|| MpcError::Invalid("a share with no component".into()))?;
    shaped(&shape, Masked { m, r: Pair { one, two }, n: numel(&shape) })
}

impl Aegis {
    /// The public constant `c` (every entry) as a sharing with a zero mask.
    fn constant(&self, ctx: &Ctx, c: u64, n: usize) -> Masked {
        let z = vec![0; n];
        match ctx.party() {
            0 => Masked { m: vec![], r: Pair { one: z.clone(), two: z }, n },
            1 => Masked { m: vec![c; n], r: Pair { one: z, two: vec![] }, n },
            _ => Masked { m: vec![c; n], r: Pair { one: vec![], two: z }, n },
        }
    }

    /// `⟨(A·B) / 2^t⟩` with a verified truncation pair (one online round).
    fn matmul_trunc(
        &mut self,
        ctx: &mut Ctx,
        a: &Masked,
        b: &Masked,
        [m, k, n]: [usize; 3],
        t: u32,
    ) -> Result<Masked> {
        let pair = self.prepare_trunc_pair(ctx, m * n, t)?;
        let device = ctx.device();
        let op = move |p: &[u64], q: &[u64]| crate::mul::matmul_u64(&*device, p, q, m, k, n);
        self.product_trunc(ctx, a, b, pair, crate::claims::Terms::Matmul { k, n }, &op)
    }
}

impl Aegis {
    /// `⟨p(x)⟩` for a public polynomial `p(x) = Σ_i coeffs[i]·x^i` (real coefficients, encoded
    /// with [`FRAC_BITS`]), elementwise, by Horner's rule: one fixed-point product per degree
    /// (`deg p` online rounds), each verified with the others at [`Aegis::check`].
    pub fn poly(&mut self, ctx: &mut Ctx, x: &Shaped, coeffs: &[f64]) -> Result<Shaped> {
        let encode = |c: f64| -> Result<u64> {
            let v = c * f64::from(1u32 << FRAC_BITS);
            if !v.is_finite() || v.abs() >= 2f64.powi(62) {
                return Err(MpcError::Invalid(format!("coefficient {c} does not fit the encoding")));
            }
            Ok(v.round() as i64 as u64)
        };
        let (&top, rest) =
            coeffs.split_last().ok_or_else(|| MpcError::Invalid("an empty polynomial".into()))?;
        let n = x.x.n;
        let mut acc = Shaped { shape: x.shape.clone(), x: self.constant(ctx, encode(top)?, n) };
        for &c in rest.iter().rev() {
            acc = FixedPoint::mul_fixed(self, ctx, &acc, x)?;
            acc = shaped(&x.shape, Aegis::add_public(self, &acc.x, &vec![encode(c)?; n])?)?;
        }
        Ok(acc)
    }
}

impl Sharing<Z64> for Aegis {
    type Share = Shaped;

    fn share_input(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<Z64>>,
        shape: &[usize],
    ) -> Result<Shaped> {
        let v = value.map(raw);
        shaped(shape, Aegis::share_input(self, ctx, owner, v.as_deref(), numel(shape))?)
    }

    fn reveal_all(&mut self, ctx: &mut Ctx, x: &Shaped) -> Result<Tensor<Z64>> {
        tensor(&x.shape, Aegis::reveal_all(self, ctx, &x.x)?)
    }

    fn reveal_to(&mut self, ctx: &mut Ctx, x: &Shaped, to: PartyId) -> Result<Option<Tensor<Z64>>> {
        Aegis::reveal_to(self, ctx, &x.x, to)?.map(|v| tensor(&x.shape, v)).transpose()
    }
}

impl Linear<Z64> for Aegis {
    fn add(&self, x: &Shaped, y: &Shaped) -> Result<Shaped> {
        same_shape(x, y)?;
        shaped(&x.shape, Aegis::add(self, &x.x, &y.x)?)
    }

    fn sub(&self, x: &Shaped, y: &Shaped) -> Result<Shaped> {
        same_shape(x, y)?;
        shaped(&x.shape, Aegis::sub(self, &x.x, &y.x)?)
    }

    fn add_public(&self, _ctx: &Ctx, x: &Shaped, c: &Tensor<Z64>) -> Result<Shaped> {
        if c.shape() != x.shape.as_slice() {
            return Err(MpcError::Invalid(format!("adding a public {:?} to {:?}", c.shape(), x.shape)));
        }
        shaped(&x.shape, Aegis::add_public(self, &x.x, &raw(c))?)
    }

    fn mul_public(&self, x: &Shaped, c: &Tensor<Z64>) -> Result<Shaped> {
        if c.shape() != x.shape.as_slice() {
            return Err(MpcError::Invalid(format!("multiplying {:?} by a public {:?}", x.shape, c.shape())));
        }
        let c = raw(c);
        let s = |v: &[u64]| v.iter().zip(&c).map(|(a, b)| self.reduce(a.wrapping_mul(*b))).collect();
        let r = Pair { one: s(&x.x.r.one), two: s(&x.x.r.two) };
        shaped(&x.shape, Masked { m: s(&x.x.m), r, n: x.x.n })
    }
}

fn same_shape(x: &Shaped, y: &Shaped) -> Result<()> {
    if x.shape != y.shape {
        return Err(MpcError::Invalid(format!("shapes {:?} and {:?}", x.shape, y.shape)));
    }
    Ok(())
}

impl Multiply<Z64> for Aegis {
    fn mul(&mut self, ctx: &mut Ctx, x: &Shaped, y: &Shaped) -> Result<Shaped> {
        same_shape(x, y)?;
        shaped(&x.shape, Aegis::mul(self, ctx, &x.x, &y.x)?)
    }

    /// P1 and P2 each send `l` bits per product in one message; P0 sends nothing online.
    fn mul_cost(&self, elements: usize, _parties: usize) -> Cost {
        Cost { bytes_sent: (elements * 8) as u64, messages_sent: 1, rounds: 1 }
    }
}

impl FixedPoint<Z64> for Aegis {
    fn frac_bits(&self) -> u32 {
        FRAC_BITS
    }

    fn mul_fixed(&mut self, ctx: &mut Ctx, x: &Shaped, y: &Shaped) -> Result<Shaped> {
        same_shape(x, y)?;
        let pair = self.prepare_trunc_pair(ctx, x.x.n, FRAC_BITS)?;
        shaped(&x.shape, self.mul_trunc(ctx, &x.x, &y.x, pair)?)
    }

    fn matmul_fixed(&mut self, ctx: &mut Ctx, x: &Shaped, y: &Shaped) -> Result<Shaped> {
        let (&[m, k], &[k2, n]) = (x.shape.as_slice(), y.shape.as_slice()) else {
            return Err(MpcError::Invalid(format!("matrix product of {:?} and {:?}", x.shape, y.shape)));
        };
        if k != k2 {
            return Err(MpcError::Invalid(format!("matrix product of {:?} and {:?}", x.shape, y.shape)));
        }
        shaped(&[m, n], self.matmul_trunc(ctx, &x.x, &y.x, [m, k, n], FRAC_BITS)?)
    }

    fn matmul_unscaled(&mut self, ctx: &mut Ctx, x: &Shaped, y: &Shaped) -> Result<Shaped> {
        let (&[m, k], &[k2, n]) = (x.shape.as_slice(), y.shape.as_slice()) else {
            return Err(MpcError::Invalid(format!("matrix product of {:?} and {:?}", x.shape, y.shape)));
        };
        if k != k2 {
            return Err(MpcError::Invalid(format!("matrix product of {:?} and {:?}", x.shape, y.shape)));
        }
        shaped(&[m, n], self.matmul(ctx, &x.x, &y.x, m, k, n)?)
    }

    /// A convolution recorded by its input, not its patches (`kh·kw` times larger): the
    /// product's bilinear map is `(x, W) ↦ im2col(x)·W`, so the offline and online phases
    /// gather each component's patches as they multiply (the same messages as the patches'
    /// product) and the verification sums Freivalds's `uᵀ·im2col(x)` through the geometry
    /// (the `freivalds` module).
    fn conv2d(&mut self, ctx: &mut Ctx, x: &Shaped, conv: &Conv2d, w: &Shaped, scaled: bool) -> Result<Shaped>
    where
        Self: Layout<Z64>,
    {
        let (m, k) = (conv.rows(), conv.cols());
        let n = match w.shape.as_slice() {
            &[k2, n] if k2 == k => n,
            _ => {
                return Err(MpcError::Invalid(format!(
                    "a kernel of shape {:?} for {k} patch columns",
                    w.shape
                )));
            }
        };
        if x.shape.as_slice() != conv.input.as_slice() {
            return Err(MpcError::Invalid(format!(
                "a convolution over {:?} of an input {:?}",
                conv.input, x.shape
            )));
        }
        let device = ctx.device();
        let geometry = *conv;
        let op = move |p: &[u64], q: &[u64]| {
            crate::mul::matmul_u64(&*device, &crate::freivalds::patches(&geometry, p), q, m, k, n)
        };
        let terms = crate::claims::Terms::Conv { conv: *conv, n };
        let out = if scaled {
            let pair = self.prepare_trunc_pair(ctx, m * n, FRAC_BITS)?;
            self.product_trunc(ctx, &x.x, &w.x, pair, terms, &op)?
        } else {
            self.product(ctx, &x.x, &w.x, m * n, terms, op)?
        };
        shaped(&[m, n], out)
    }

    /// `x · c / 2^t` with `c = round(2^t / d)`: `t = 16` for a power of two up to `2^16` (then
    /// `c` is exact), else `t = 32`, which keeps the error of `c` within a unit of the result
    /// for `|x| < 2^31` (reals below `2^15` at 16 fractional bits; `x · c` stays below `2^63`).
    /// With `t = 16` for every divisor, `c` alone was off by up to `x · 2^-17` units: 33 units
    /// for `x / 3` at `x = 100.0`.
    fn div_public(&mut self, ctx: &mut Ctx, x: &Shaped, d: u64) -> Result<Shaped> {
        if d == 0 {
            return Err(MpcError::Invalid("division by 0".into()));
        }
        let t = if d.is_power_of_two() && d <= 1 << FRAC_BITS { FRAC_BITS } else { DIV_BITS };
        let c = ((1u128 << t) as f64 / d as f64).round() as u64;
        let n = x.x.n;
        let pair = self.prepare_trunc_pair(ctx, n, t)?;
        let c = self.constant(ctx, c, n);
        shaped(&x.shape, self.mul_trunc(ctx, &x.x, &c, pair)?)
    }
}

/// Bits of precision of a division by a public divisor that is not a power of two.
const DIV_BITS: u32 = 32;

impl NonLinear<Z64> for Aegis {
    fn relu(&mut self, ctx: &mut Ctx, x: &Shaped) -> Result<Shaped> {
        shaped(&x.shape, Aegis::relu(self, ctx, &x.x)?)
    }

    fn max_rows(&mut self, ctx: &mut Ctx, x: &Shaped, rows: usize, k: usize) -> Result<Shaped> {
        shaped(&[rows], Aegis::max_rows(self, ctx, &x.x, rows, k)?)
    }

    /// The sign-bit extraction works on the whole of `Z_2^64`.
    fn comparisons_on_full_ring(&self) -> bool {
        true
    }

    fn check(&mut self, ctx: &mut Ctx) -> Result<()> {
        Aegis::check(self, ctx)
    }
}

impl Layout<Z64> for Aegis {
    fn shape_of(&self, x: &Shaped) -> Vec<usize> {
        x.shape.clone()
    }

    fn reshape(&self, x: &Shaped, shape: &[usize]) -> Result<Shaped> {
        shaped(shape, x.x.clone())
    }

    fn slice(&self, x: &Shaped, axis: usize, range: std::ops::Range<usize>) -> Result<Shaped> {
        rearrange(x, |t| t.slice(axis, range.clone()))
    }

    fn transpose(&self, x: &Shaped) -> Result<Shaped> {
        rearrange(x, |t| t.transpose())
    }

    fn concat(&self, parts: &[&Shaped], axis: usize) -> Result<Shaped> {
        let first = parts.first().ok_or_else(|| MpcError::Invalid("concatenation of nothing".into()))?;
        let mut shape = first.shape.clone();
        let mut cat = |pick: fn(&Masked) -> &Vec<u64>| -> Result<Vec<u64>> {
            if pick(&first.x).is_empty() {
                return Ok(vec![]);
            }
            let ts = parts
                .iter()
                .map(|p| Tensor::new(p.shape.clone(), pick(&p.x).clone()))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let t = Tensor::concat(&ts.iter().collect::<Vec<_>>(), axis)?;
            shape = t.shape().to_vec();
            Ok(t.into_data())
        };
        let (m, one, two) = (cat(|x| &x.m)?, cat(|x| &x.r.one)?, cat(|x| &x.r.two)?);
        shaped(&shape, Masked { m, r: Pair { one, two }, n: numel(&shape) })
    }

    fn gather(&self, x: &Shaped, index: &[Option<usize>], shape: &[usize]) -> Result<Shaped> {
        rearrange(x, |t| t.gather(index, shape, 0))
    }
}

/// Input owners are parties `3, 4, ...` after the three servers.
impl Owners<Z64> for Aegis {
    fn servers(&self) -> usize {
        3
    }

    fn share_from_owner(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<Z64>>,
        shape: &[usize],
    ) -> Result<Option<Shaped>> {
        let v = value.map(raw);
        Aegis::share_from_owner(self, ctx, owner, v.as_deref(), numel(shape))?
            .map(|x| shaped(shape, x))
            .transpose()
    }

    fn reveal_to_owner(
        &mut self,
        ctx: &mut Ctx,
        x: Option<&Shaped>,
        owner: PartyId,
        shape: &[usize],
    ) -> Result<Option<Tensor<Z64>>> {
        Aegis::reveal_to_owner(self, ctx, x.map(|s| &s.x), owner, numel(shape))?
            .map(|v| tensor(shape, v))
            .transpose()
    }
}
