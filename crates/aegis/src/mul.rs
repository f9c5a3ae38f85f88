//! Multiplication and matrix products (paper §2 and Fig. 19), ASTRA-style in
//! the convention `m = x + r`:
//!
//! `m_z = x·y + r_z = m_x·m_y − m_x·r_y − m_y·r_x + Γ` with `Γ = r_x·r_y + r_z`.
//!
//! **Offline**: `[r_z]` from seeds; P0 computes `Γ` and deals it (`l` bits per output).
//! **Online**: P_j (j = 1, 2) computes `[m_z]_j = (j−1)·m_x·m_y − m_x·[r_y]_j − m_y·[r_x]_j +
//! [Γ]_j`; P1 and P2 exchange them (1 round, `l` bits each way). A matrix product is the same
//! with matrix products: one `Γ` per output entry, whatever the inner dimension, so an inner
//! product of any length costs what one multiplication costs.
//!
//! Correct up to additive errors (the paper's batch verification, to come, catches them).

use std::sync::Arc;

use veil_mpc::prep::CorrelationRequest;
use veil_mpc::{Ctx, MpcError, Result};
use veil_tensor::{Device, MatDims};

use crate::claims::Recorded;
pub use crate::claims::Terms;
use crate::share::{Aegis, Masked, Pair, recv_u64s, to_bytes};

/// Runs `f` with communication counted under the phase `offline` (its time kept apart).
pub(crate) use veil_mpc::phase::in_offline_phase as offline;

/// `C = A·B` over `Z_2^64` (wrapping), `A: [m, k]`, `B: [k, n]`, row-major, on the party's
/// device (`veil-tensor`'s blocked, parallel kernels on the CPU). Should the device fail (or
/// the callers' sizes disagree with `m, k, n`), the plain loop below gives the product on the
/// CPU instead of a short result.
pub(crate) fn matmul_u64(
    device: &dyn Device,
    a: &[u64],
    b: &[u64],
    m: usize,
    k: usize,
    n: usize,
) -> Vec<u64> {
    let mut c = vec![0u64; m * n];
    if device.matmul_u64(a, b, &mut c, MatDims { m, k, n }).is_ok() {
        return c;
    }
    c.fill(0);
    for i in 0..m.min(a.len() / k.max(1)) {
        let row = &mut c[i * n..(i + 1) * n];
        for (t, &av) in a[i * k..(i + 1) * k].iter().enumerate() {
            for (cv, &bv) in row.iter_mut().zip(b.get(t * n..(t + 1) * n).unwrap_or_default()) {
                *cv = cv.wrapping_add(av.wrapping_mul(bv));
            }
        }
    }
    c
}

fn sum(a: &[u64], b: &[u64]) -> Vec<u64> {
    a.iter().zip(b).map(|(x, y)| x.wrapping_add(*y)).collect()
}

impl Aegis {
    /// `⟨x·y⟩` elementwise.
    pub fn mul(&mut self, ctx: &mut Ctx, x: &Masked, y: &Masked) -> Result<Masked> {
        if x.n != y.n {
            return Err(MpcError::Invalid(format!("product of {} and {} elements", x.n, y.n)));
        }
        self.product(ctx, x, y, x.n, Terms::Elementwise, elementwise)
    }

    /// `⟨A·B⟩` for `A: [m, k]`, `B: [k, n]` (row-major): one inner product per output entry.
    pub fn matmul(
        &mut self,
        ctx: &mut Ctx,
        a: &Masked,
        b: &Masked,
        m: usize,
        k: usize,
        n: usize,
    ) -> Result<Masked> {
        if a.n != m * k || b.n != k * n {
            return Err(MpcError::Invalid(format!(
                "[{m}, {k}] × [{k}, {n}] product of {} and {} elements",
                a.n, b.n
            )));
        }
        let device = ctx.device();
        self.product(ctx, a, b, m * n, Terms::Matmul { k, n }, |p, q| matmul_u64(&*device, p, q, m, k, n))
    }

    /// Inner products of the rows of `x` and `y` (`[rows, len]` each): `⟨Σ_j x_ij·y_ij⟩`, of
    /// at most [`crate::columns::MAX_TERMS`] terms each.
    pub fn inner(
        &mut self,
        ctx: &mut Ctx,
        x: &Masked,
        y: &Masked,
        rows: usize,
        len: usize,
    ) -> Result<Masked> {
        if x.n != rows * len || y.n != rows * len {
            return Err(MpcError::Invalid(format!("{rows} inner products of length {len}")));
        }
        if len > crate::columns::MAX_TERMS {
            return Err(MpcError::Invalid(format!(
                "inner products of length {len}: at most {} (use a matrix product)",
                crate::columns::MAX_TERMS
            )));
        }
        self.product(ctx, x, y, rows, Terms::Inner { len }, |p, q| {
            (0..rows)
                .map(|i| {
                    let (a, b) = (&p[i * len..(i + 1) * len], &q[i * len..(i + 1) * len]);
                    a.iter().zip(b).fold(0u64, |s, (u, v)| s.wrapping_add(u.wrapping_mul(*v)))
                })
                .collect()
        })
    }

    /// The common protocol for any bilinear `op` (elementwise, inner, matrix product).
    pub(crate) fn product(
        &mut self,
        ctx: &mut Ctx,
        x: &Masked,
        y: &Masked,
        out: usize,
        terms: Terms,
        op: impl Fn(&[u64], &[u64]) -> Vec<u64>,
    ) -> Result<Masked> {
        let mat = self.prepare_product(ctx, &x.r, &y.r, out, &op)?;
        self.product_online(ctx, x, y, mat, terms, &op)
    }

    /// Offline part of a product of secrets masked by `rx` and `ry`: a fresh `[r_z]` and the
    /// dealt `[Γ]` (`l` bits per output from P0, counted under the phase `offline`).
    pub fn prepare_product(
        &mut self,
        ctx: &mut Ctx,
        rx: &Pair,
        ry: &Pair,
        out: usize,
        op: &impl Fn(&[u64], &[u64]) -> Vec<u64>,
    ) -> Result<ProductMaterial> {
        let r_z = self.random_pair(ctx, "mul/r_z", out)?;
        self.prepare_product_masked(ctx, rx, ry, r_z, op)
    }

    /// [`Aegis::prepare_product`] with a given output mask (a truncation pair's `r_x`).
    pub fn prepare_product_masked(
        &mut self,
        ctx: &mut Ctx,
        rx: &Pair,
        ry: &Pair,
        r_z: Pair,
        op: &impl Fn(&[u64], &[u64]) -> Vec<u64>,
    ) -> Result<ProductMaterial> {
        let me = Self::check_server(ctx)?;
        let out = r_z.one.len().max(r_z.two.len());
        self.usage.record(&CorrelationRequest::MulTriples { ring_bits: self.l(), count: out });
        offline(ctx, |ctx| {
            let g = (me == 0)
                .then(|| sum(&op(&sum(&rx.one, &rx.two), &sum(&ry.one, &ry.two)), &sum(&r_z.one, &r_z.two)));
            let gamma = self.deal(ctx, "mul/gamma", g.as_deref(), out)?;
            Ok(ProductMaterial { r_z, gamma })
        })
    }

    /// Online part: P1 and P2 exchange their shares of `m_z` (1 round, `l` bits each). The
    /// product is recorded (as `terms` describes it) for the verification of [`Aegis::check`].
    pub fn product_online(
        &mut self,
        ctx: &mut Ctx,
        x: &Masked,
        y: &Masked,
        mat: ProductMaterial,
        terms: Terms,
        op: &impl Fn(&[u64], &[u64]) -> Vec<u64>,
    ) -> Result<Masked> {
        let me = Self::check_server(ctx)?;
        let ProductMaterial { r_z, gamma } = mat;
        let out = gamma.one.len().max(gamma.two.len());
        if me == 0 {
            let z = Masked { m: vec![], r: r_z, n: out };
            self.record(Arc::new(x.clone()), Arc::new(y.clone()), Arc::new(z.clone()), terms);
            return Ok(z);
        }
        let (rx, ry, g) =
            if me == 1 { (&x.r.one, &y.r.one, &gamma.one) } else { (&x.r.two, &y.r.two, &gamma.two) };
        let mxry = op(&x.m, ry);
        let rxmy = op(rx, &y.m);
        let mut share: Vec<u64> =
            (0..out).map(|i| g[i].wrapping_sub(mxry[i]).wrapping_sub(rxmy[i])).collect();
        if me == 2 {
            share = sum(&share, &op(&x.m, &y.m));
        }
        ctx.net().send(3 - me, to_bytes(&share))?;
        let other = recv_u64s(ctx, 3 - me, out)?;
        let m: Vec<u64> = sum(&share, &other).into_iter().map(|v| self.reduce(v)).collect();
        self.record_joint(&m);
        let z = Masked { m, r: r_z, n: out };
        self.record(Arc::new(x.clone()), Arc::new(y.clone()), Arc::new(z.clone()), terms);
        Ok(z)
    }

    /// Keeps a product for the batch verification.
    pub(crate) fn record(&mut self, x: Arc<Masked>, y: Arc<Masked>, z: Arc<Masked>, terms: Terms) {
        self.recorded.push(Recorded { x, y, z, terms, twin: None, bits: None });
    }
}

/// A product's offline material: the output mask and `[Γ] = [r_x·r_y + r_z]`.
#[derive(Clone, Debug)]
pub struct ProductMaterial {
    r_z: Pair,
    gamma: Pair,
}

/// Elementwise product, as the `op` of [`Aegis::prepare_product`].
pub fn elementwise(a: &[u64], b: &[u64]) -> Vec<u64> {
    a.iter().zip(b).map(|(p, q)| p.wrapping_mul(*q)).collect()
}

/// Shares of a product's mask, exposed for the truncation and sign protocols.
pub(crate) fn mask_sum(r: &Pair) -> Vec<u64> {
    sum(&r.one, &r.two)
}
