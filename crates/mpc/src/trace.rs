//! [`Tracer`]: a backend of shapes only, behind every capability trait, that records the
//! [`Call`]s a computation makes instead of computing. Walking a model over it (with a
//! [`Ctx::detached`] context: it sends nothing) gives the calls the same walk makes of a real
//! family, and from them the family's preprocessing [`crate::prep::Plan`], without running
//! the protocol. It checks shapes as a family does, so a walk that a family would refuse for
//! its shapes fails here too.

use std::ops::Range;

use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::prep::Call;
use crate::traits::{FixedPoint, Layout, Linear, Multiply, NonLinear, Owners, Sharing, TransformerOps};
use crate::{Ctx, MpcError, PartyId, Result, cost::Cost};

/// Shapes in place of shares; the calls made so far.
#[derive(Clone, Debug)]
pub struct Tracer {
    servers: usize,
    frac_bits: u32,
    full_ring: bool,
    calls: Vec<Call>,
}

impl Tracer {
    /// A tracer standing for a family of `servers` computing parties with `frac_bits`
    /// fractional bits, whose comparisons work on the whole ring or not
    /// ([`NonLinear::comparisons_on_full_ring`]): the facts that steer a walk.
    pub fn new(servers: usize, frac_bits: u32, comparisons_on_full_ring: bool) -> Self {
        Tracer { servers, frac_bits, full_ring: comparisons_on_full_ring, calls: Vec::new() }
    }

    /// A tracer standing for `family`.
    pub fn like<R: Ring, F: NonLinear<R> + Owners<R>>(family: &F) -> Self {
        Self::new(family.servers(), family.frac_bits(), family.comparisons_on_full_ring())
    }

    /// The calls recorded so far, in order.
    pub fn calls(&self) -> &[Call] {
        &self.calls
    }

    /// The recorded calls, taken out.
    pub fn into_calls(self) -> Vec<Call> {
        self.calls
    }
}

fn numel(s: &[usize]) -> usize {
    s.iter().product()
}

fn same(x: &[usize], y: &[usize], what: &str) -> Result<()> {
    if x != y {
        return Err(MpcError::Invalid(format!("{what} of shapes {x:?} and {y:?}")));
    }
    Ok(())
}

fn matmul_dims(x: &[usize], y: &[usize]) -> Result<[usize; 3]> {
    match (x, y) {
        (&[m, k], &[k2, n]) if k == k2 => Ok([m, k, n]),
        _ => Err(MpcError::Invalid(format!("matrix product of shapes {x:?} and {y:?}"))),
    }
}

impl<R: Ring> Sharing<R> for Tracer {
    type Share = Vec<usize>;

    fn share_input(
        &mut self,
        _: &mut Ctx,
        _: PartyId,
        _: Option<&Tensor<R>>,
        shape: &[usize],
    ) -> Result<Vec<usize>> {
        self.calls.push(Call::ShareFromOwner { n: numel(shape) });
        Ok(shape.to_vec())
    }

    fn reveal_all(&mut self, _: &mut Ctx, x: &Vec<usize>) -> Result<Tensor<R>> {
        self.calls.push(Call::RevealToOwner { n: numel(x) });
        Ok(Tensor::zeros(x))
    }

    fn reveal_to(&mut self, _: &mut Ctx, x: &Vec<usize>, _: PartyId) -> Result<Option<Tensor<R>>> {
        self.calls.push(Call::RevealToOwner { n: numel(x) });
        Ok(None)
    }
}

impl<R: Ring> Linear<R> for Tracer {
    fn add(&self, x: &Vec<usize>, y: &Vec<usize>) -> Result<Vec<usize>> {
        same(x, y, "sum").map(|()| x.clone())
    }

    fn sub(&self, x: &Vec<usize>, y: &Vec<usize>) -> Result<Vec<usize>> {
        same(x, y, "difference").map(|()| x.clone())
    }

    fn add_public(&self, _: &Ctx, x: &Vec<usize>, c: &Tensor<R>) -> Result<Vec<usize>> {
        same(x, c.shape(), "sum").map(|()| x.clone())
    }

    fn mul_public(&self, x: &Vec<usize>, c: &Tensor<R>) -> Result<Vec<usize>> {
        same(x, c.shape(), "product").map(|()| x.clone())
    }
}

impl<R: Ring> Multiply<R> for Tracer {
    fn mul(&mut self, _: &mut Ctx, x: &Vec<usize>, y: &Vec<usize>) -> Result<Vec<usize>> {
        same(x, y, "product")?;
        self.calls.push(Call::Mul { n: numel(x) });
        Ok(x.clone())
    }

    /// Nothing is sent.
    fn mul_cost(&self, _: usize, _: usize) -> Cost {
        Cost::default()
    }
}

impl<R: Ring> FixedPoint<R> for Tracer {
    fn frac_bits(&self) -> u32 {
        self.frac_bits
    }

    fn mul_fixed(&mut self, _: &mut Ctx, x: &Vec<usize>, y: &Vec<usize>) -> Result<Vec<usize>> {
        same(x, y, "product")?;
        self.calls.push(Call::MulFixed { n: numel(x) });
        Ok(x.clone())
    }

    fn matmul_fixed(&mut self, _: &mut Ctx, x: &Vec<usize>, y: &Vec<usize>) -> Result<Vec<usize>> {
        let dims = matmul_dims(x, y)?;
        self.calls.push(Call::Matmul { dims, scaled: true });
        Ok(vec![dims[0], dims[2]])
    }

    fn matmul_fixed_many(
        &mut self,
        _: &mut Ctx,
        pairs: &[(&Vec<usize>, &Vec<usize>)],
    ) -> Result<Vec<Vec<usize>>> {
        let dims = pairs.iter().map(|(x, y)| matmul_dims(x, y)).collect::<Result<Vec<_>>>()?;
        let out = dims.iter().map(|d| vec![d[0], d[2]]).collect();
        self.calls.push(Call::MatmulMany { dims });
        Ok(out)
    }

    fn matmul_unscaled(&mut self, _: &mut Ctx, x: &Vec<usize>, y: &Vec<usize>) -> Result<Vec<usize>> {
        let dims = matmul_dims(x, y)?;
        self.calls.push(Call::Matmul { dims, scaled: false });
        Ok(vec![dims[0], dims[2]])
    }

    fn div_public(&mut self, _: &mut Ctx, x: &Vec<usize>, d: u64) -> Result<Vec<usize>> {
        if d == 0 {
            return Err(MpcError::Invalid("division by 0".into()));
        }
        self.calls.push(Call::DivPublic { n: numel(x), d });
        Ok(x.clone())
    }
}

impl<R: Ring> NonLinear<R> for Tracer {
    fn relu(&mut self, _: &mut Ctx, x: &Vec<usize>) -> Result<Vec<usize>> {
        self.calls.push(Call::Relu { n: numel(x) });
        Ok(x.clone())
    }

    fn max_rows(&mut self, _: &mut Ctx, x: &Vec<usize>, rows: usize, k: usize) -> Result<Vec<usize>> {
        if numel(x) != rows * k || k == 0 {
            return Err(MpcError::Invalid(format!("maximum of {x:?} as [{rows}, {k}]")));
        }
        self.calls.push(Call::MaxRows { rows, k });
        Ok(vec![rows])
    }

    fn comparisons_on_full_ring(&self) -> bool {
        self.full_ring
    }

    fn check(&mut self, _: &mut Ctx) -> Result<()> {
        self.calls.push(Call::Check);
        Ok(())
    }
}

impl<R: Ring> TransformerOps<R> for Tracer {
    fn gelu(&mut self, _: &mut Ctx, x: &Vec<usize>) -> Result<Vec<usize>> {
        self.calls.push(Call::Gelu { n: numel(x) });
        Ok(x.clone())
    }

    fn softmax(
        &mut self,
        _: &mut Ctx,
        x: &Vec<usize>,
        rows: usize,
        k: usize,
        mask: Option<&[bool]>,
    ) -> Result<Vec<usize>> {
        if numel(x) != rows * k || mask.is_some_and(|m| m.len() != rows * k) {
            return Err(MpcError::Invalid(format!("softmax of {x:?} as [{rows}, {k}]")));
        }
        self.calls.push(Call::Softmax { rows, k, masked: mask.is_some() });
        Ok(x.clone())
    }

    fn layernorm(
        &mut self,
        _: &mut Ctx,
        x: &Vec<usize>,
        gamma: &Vec<usize>,
        beta: &Vec<usize>,
        rows: usize,
        k: usize,
    ) -> Result<Vec<usize>> {
        if numel(x) != rows * k || numel(gamma) != k || numel(beta) != k {
            return Err(MpcError::Invalid(format!("LayerNorm of {x:?} as [{rows}, {k}]")));
        }
        self.calls.push(Call::LayerNorm { rows, k });
        Ok(x.clone())
    }
}

impl<R: Ring> Layout<R> for Tracer {
    fn shape_of(&self, x: &Vec<usize>) -> Vec<usize> {
        x.clone()
    }

    fn reshape(&self, x: &Vec<usize>, shape: &[usize]) -> Result<Vec<usize>> {
        if numel(x) != numel(shape) {
            return Err(MpcError::Invalid(format!("reshape of {x:?} to {shape:?}")));
        }
        Ok(shape.to_vec())
    }

    fn slice(&self, x: &Vec<usize>, axis: usize, range: Range<usize>) -> Result<Vec<usize>> {
        match x.get(axis) {
            Some(&len) if range.start <= range.end && range.end <= len => {
                let mut s = x.clone();
                s[axis] = range.len();
                Ok(s)
            }
            _ => Err(MpcError::Invalid(format!("slice {range:?} of axis {axis} of {x:?}"))),
        }
    }

    fn transpose(&self, x: &Vec<usize>) -> Result<Vec<usize>> {
        match x.as_slice() {
            &[m, n] => Ok(vec![n, m]),
            _ => Err(MpcError::Invalid(format!("transpose of {x:?}"))),
        }
    }

    fn concat(&self, parts: &[&Vec<usize>], axis: usize) -> Result<Vec<usize>> {
        let first = parts.first().ok_or_else(|| MpcError::Invalid("concatenation of nothing".into()))?;
        if axis >= first.len() {
            return Err(MpcError::Invalid(format!("concatenation along axis {axis} of {first:?}")));
        }
        let mut out = (*first).clone();
        out[axis] = 0;
        for p in parts {
            let fits = p.len() == first.len() && (0..p.len()).all(|a| a == axis || p[a] == first[a]);
            if !fits {
                return Err(MpcError::Invalid(format!("concatenation of {first:?} and {p:?}")));
            }
            out[axis] += p[axis];
        }
        Ok(out)
    }

    fn gather(&self, x: &Vec<usize>, index: &[Option<usize>], shape: &[usize]) -> Result<Vec<usize>> {
        let n = numel(x);
        if index.len() != numel(shape) || index.iter().flatten().any(|&i| i >= n) {
            return Err(MpcError::Invalid(format!(
                "gather of {} entries of {x:?} into {shape:?}",
                index.len()
            )));
        }
        Ok(shape.to_vec())
    }
}

impl<R: Ring> Owners<R> for Tracer {
    fn servers(&self) -> usize {
        self.servers
    }

    fn share_from_owner(
        &mut self,
        ctx: &mut Ctx,
        _: PartyId,
        _: Option<&Tensor<R>>,
        shape: &[usize],
    ) -> Result<Option<Vec<usize>>> {
        self.calls.push(Call::ShareFromOwner { n: numel(shape) });
        Ok((ctx.party() < self.servers).then(|| shape.to_vec()))
    }

    fn reveal_to_owner(
        &mut self,
        _: &mut Ctx,
        x: Option<&Vec<usize>>,
        _: PartyId,
        shape: &[usize],
    ) -> Result<Option<Tensor<R>>> {
        self.calls.push(Call::RevealToOwner { n: x.map_or(numel(shape), |s| numel(s)) });
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use veil_ring::Z64;

    use super::*;

    #[test]
    fn records_calls_and_checks_shapes_without_sending() {
        let mut ctx = Ctx::detached(0, 3);
        let mut t = Tracer::new(3, 16, false);
        let x =
            <Tracer as Owners<Z64>>::share_from_owner(&mut t, &mut ctx, 4, None, &[2, 3]).unwrap().unwrap();
        let w = vec![3, 5];
        let y = FixedPoint::<Z64>::matmul_fixed(&mut t, &mut ctx, &x, &w).unwrap();
        assert_eq!(y, vec![2, 5]);
        let r = NonLinear::<Z64>::relu(&mut t, &mut ctx, &y).unwrap();
        let m = NonLinear::<Z64>::max_rows(&mut t, &mut ctx, &r, 2, 5).unwrap();
        assert_eq!(m, vec![2]);
        assert!(FixedPoint::<Z64>::matmul_fixed(&mut t, &mut ctx, &x, &x).is_err());
        assert!(Layout::<Z64>::slice(&t, &x, 1, 2..4).is_err());
        assert_eq!(
            t.calls(),
            [
                Call::ShareFromOwner { n: 6 },
                Call::Matmul { dims: [2, 3, 5], scaled: true },
                Call::Relu { n: 10 },
                Call::MaxRows { rows: 2, k: 5 },
            ]
        );
        // The context has no peer to talk to.
        assert!(ctx.net().send(1, vec![1]).is_err());
        assert!(ctx.pair_prg(1, "x").is_err());
    }
}
