//! Sources of multiplication triples.

use veil_mpc::prep::CorrelationRequest;
use veil_mpc::{Ctx, Result};
use veil_ring::Ring;

/// One party's shares of `count` triples `(a, b, c)` with `c = a·b` elementwise.
#[derive(Clone, Debug)]
pub struct Triples<R> {
    /// Shares of `a`.
    pub a: Vec<R>,
    /// Shares of `b`.
    pub b: Vec<R>,
    /// Shares of `c = a·b`.
    pub c: Vec<R>,
}

/// Where a party's triples come from.
pub trait TripleSource<R: Ring>: Send {
    /// This party's shares of `count` fresh triples. Every party calls it in the same order.
    fn mul_triples(&mut self, ctx: &mut Ctx, count: usize) -> Result<Triples<R>>;
}

/// **Insecure** triple source for tests and demos: every party expands the same public seed
/// (the all-party seed) into everyone's shares and keeps its own. Every party can therefore
/// reconstruct `a`, `b` and `c`: never use it where privacy matters.
///
/// It costs no communication, which is why measured bytes of a multiplication are exactly
/// the online cost of the Beaver step.
#[derive(Debug, Default)]
pub struct InsecureDealer {
    usage: veil_mpc::prep::PrepUsage,
}

impl InsecureDealer {
    /// A dealer that has produced nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// What it has handed out.
    pub fn usage(&self) -> &veil_mpc::prep::PrepUsage {
        &self.usage
    }
}

impl<R: Ring> TripleSource<R> for InsecureDealer {
    fn mul_triples(&mut self, ctx: &mut Ctx, count: usize) -> Result<Triples<R>> {
        let req = CorrelationRequest::MulTriples { ring_bits: (R::BYTES * 8) as u32, count };
        self.usage.record(&req);
        let (n, me) = (ctx.parties(), ctx.party());
        let mut g = ctx.common_prg("veil/additive/insecure-dealer");
        // Shares of a and b for every party, then c = (Σa)(Σb) split the same way: the last
        // party's c-share is the correction c - Σ_{i<n-1} c_i.
        let a: Vec<Vec<R>> = (0..n).map(|_| R::random_vec(&mut g, count)).collect();
        let b: Vec<Vec<R>> = (0..n).map(|_| R::random_vec(&mut g, count)).collect();
        let mut c: Vec<Vec<R>> = (0..n - 1).map(|_| R::random_vec(&mut g, count)).collect();
        let last: Vec<R> = (0..count)
            .map(|k| {
                let sa: R = a.iter().map(|v| v[k]).sum();
                let sb: R = b.iter().map(|v| v[k]).sum();
                let sc: R = c.iter().map(|v| v[k]).sum();
                sa * sb - sc
            })
            .collect();
        c.push(last);
        Ok(Triples { a: a[me].clone(), b: b[me].clone(), c: c[me].clone() })
    }
}
