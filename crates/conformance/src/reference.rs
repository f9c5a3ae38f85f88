//! The plaintext reference family: every capability trait implemented in the clear, so that a
//! family is compared with it through the same calls (as SPU's `ref2k` serves its protocols).
//!
//! A "share" is the value itself, held by every party: an input owner sends its value to the
//! others, a reveal is local. Products are exact and rescaled by an exact floor; ReLU follows
//! the family's clear arithmetic ([`FixedReference`]: a family that compares in a narrower
//! ring does so here too), maxima are exact. Nothing is secret and nothing is checked.

use veil_mpc::cost::Cost;
use veil_mpc::reference::FixedReference;
use veil_mpc::traits::{FixedPoint, Layout, Linear, Multiply, NonLinear, Sharing};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::Z64;
use veil_tensor::Tensor;

/// The reference family with a family's clear arithmetic.
#[derive(Clone, Copy)]
pub struct Plaintext {
    reference: &'static dyn FixedReference,
}

impl std::fmt::Debug for Plaintext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plaintext").field("frac_bits", &self.reference.frac_bits()).finish()
    }
}

impl Plaintext {
    /// The reference following `reference`'s arithmetic.
    pub fn new(reference: &'static dyn FixedReference) -> Self {
        Plaintext { reference }
    }
}

fn signed(t: &Tensor<Z64>) -> Vec<i64> {
    t.data().iter().map(|v| v.0 as i64).collect()
}

fn tensor(shape: &[usize], v: Vec<i64>) -> Result<Tensor<Z64>> {
    Ok(Tensor::new(shape.to_vec(), v.into_iter().map(|x| Z64(x as u64)).collect())?)
}

/// `⌊x / d⌋` on signed values.
fn floor_div(t: &Tensor<Z64>, d: u64) -> Result<Tensor<Z64>> {
    if d == 0 {
        return Err(MpcError::Invalid("division by 0".into()));
    }
    let d = i128::from(d);
    tensor(t.shape(), signed(t).into_iter().map(|x| (i128::from(x).div_euclid(d)) as i64).collect())
}

impl Sharing<Z64> for Plaintext {
    type Share = Tensor<Z64>;

    fn share_input(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<Z64>>,
        shape: &[usize],
    ) -> Result<Tensor<Z64>> {
        if ctx.party() == owner {
            let v = value.ok_or_else(|| MpcError::Invalid("the owner must pass its value".into()))?;
            for p in ctx.peers() {
                ctx.send_ring(p, v.data())?;
            }
            return Ok(v.clone());
        }
        let n: usize = shape.iter().product();
        Ok(Tensor::new(shape.to_vec(), ctx.recv_ring(owner, n)?)?)
    }

    fn reveal_all(&mut self, _: &mut Ctx, x: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        Ok(x.clone())
    }

    fn reveal_to(&mut self, ctx: &mut Ctx, x: &Tensor<Z64>, to: PartyId) -> Result<Option<Tensor<Z64>>> {
        Ok((ctx.party() == to).then(|| x.clone()))
    }
}

impl Linear<Z64> for Plaintext {
    fn add(&self, x: &Tensor<Z64>, y: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        Ok(x.add(y)?)
    }

    fn sub(&self, x: &Tensor<Z64>, y: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        Ok(x.sub(y)?)
    }

    fn add_public(&self, _: &Ctx, x: &Tensor<Z64>, c: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        Ok(x.add(c)?)
    }

    fn mul_public(&self, x: &Tensor<Z64>, c: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        Ok(x.mul(c)?)
    }
}

impl Multiply<Z64> for Plaintext {
    fn mul(&mut self, _: &mut Ctx, x: &Tensor<Z64>, y: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        Ok(x.mul(y)?)
    }

    fn mul_cost(&self, _: usize, _: usize) -> Cost {
        Cost { bytes_sent: 0, messages_sent: 0, rounds: 0 }
    }
}

impl FixedPoint<Z64> for Plaintext {
    fn frac_bits(&self) -> u32 {
        self.reference.frac_bits()
    }

    fn mul_fixed(&mut self, _: &mut Ctx, x: &Tensor<Z64>, y: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        floor_div(&x.mul(y)?, 1 << self.frac_bits())
    }

    fn matmul_fixed(&mut self, _: &mut Ctx, x: &Tensor<Z64>, y: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        floor_div(&x.matmul(y)?, 1 << self.frac_bits())
    }

    fn matmul_unscaled(&mut self, _: &mut Ctx, x: &Tensor<Z64>, y: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        Ok(x.matmul(y)?)
    }

    fn div_public(&mut self, _: &mut Ctx, x: &Tensor<Z64>, d: u64) -> Result<Tensor<Z64>> {
        floor_div(x, d)
    }
}

impl NonLinear<Z64> for Plaintext {
    fn relu(&mut self, _: &mut Ctx, x: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        tensor(x.shape(), self.reference.relu(&signed(x)).values)
    }

    fn max_rows(&mut self, _: &mut Ctx, x: &Tensor<Z64>, rows: usize, k: usize) -> Result<Tensor<Z64>> {
        let v = signed(x);
        if k == 0 || v.len() != rows * k {
            return Err(MpcError::Invalid(format!("{rows} rows of {k} over {} values", v.len())));
        }
        tensor(&[rows], v.chunks(k).map(|r| r.iter().copied().max().unwrap_or(0)).collect())
    }

    fn check(&mut self, _: &mut Ctx) -> Result<()> {
        Ok(())
    }
}

impl Layout<Z64> for Plaintext {
    fn shape_of(&self, x: &Tensor<Z64>) -> Vec<usize> {
        x.shape().to_vec()
    }

    fn reshape(&self, x: &Tensor<Z64>, shape: &[usize]) -> Result<Tensor<Z64>> {
        Ok(x.clone().reshape(shape)?)
    }

    fn slice(&self, x: &Tensor<Z64>, axis: usize, range: std::ops::Range<usize>) -> Result<Tensor<Z64>> {
        Ok(x.slice(axis, range)?)
    }

    fn transpose(&self, x: &Tensor<Z64>) -> Result<Tensor<Z64>> {
        Ok(x.transpose()?)
    }

    fn concat(&self, parts: &[&Tensor<Z64>], axis: usize) -> Result<Tensor<Z64>> {
        Ok(Tensor::concat(parts, axis)?)
    }

    fn gather(&self, x: &Tensor<Z64>, index: &[Option<usize>], shape: &[usize]) -> Result<Tensor<Z64>> {
        Ok(x.gather(index, shape, Z64(0))?)
    }
}
