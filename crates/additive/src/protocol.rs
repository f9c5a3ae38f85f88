//! The protocol: input sharing, reveal, linear operations and Beaver multiplication among the
//! computing parties `0 .. servers` (every party of the session unless set).

use veil_mpc::cost::Cost;
use veil_mpc::traits::{Linear, Multiply, Sharing};
use veil_mpc::{Ctx, MpcError, PartyId, Result};
use veil_ring::Ring;
use veil_tensor::Tensor;

use crate::dealer::TripleSource;

/// One party's additive share of a secret tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share<R>(pub Tensor<R>);

/// The additive-sharing protocol with a given source of correlated randomness.
#[derive(Debug)]
pub struct Additive<D> {
    pub(crate) source: D,
    servers: Option<usize>,
}

impl<D> Additive<D> {
    /// A protocol instance drawing correlations from `source`, every party of the session
    /// computing.
    pub fn new(source: D) -> Self {
        Additive { source, servers: None }
    }

    /// An instance among the computing parties `0 .. servers` only; parties after them are
    /// input owners, who share from outside and receive outputs ([`veil_mpc::traits::Owners`]).
    pub fn with_servers(source: D, servers: usize) -> Self {
        Additive { source, servers: Some(servers) }
    }

    /// The source of correlated randomness.
    pub fn triples(&self) -> &D {
        &self.source
    }

    /// The computing parties set by [`Additive::with_servers`], if any.
    pub(crate) fn servers_set(&self) -> Option<usize> {
        self.servers
    }

    /// The number of computing parties in a session of `ctx`.
    pub(crate) fn computing(&self, ctx: &Ctx) -> usize {
        self.servers.unwrap_or(ctx.parties())
    }

    /// The computing parties other than this one, and their number (this one included); an
    /// error at a party that does not compute.
    pub(crate) fn group(&self, ctx: &Ctx) -> Result<(Vec<PartyId>, usize)> {
        let n = self.computing(ctx);
        let me = ctx.party();
        if me >= n || n > ctx.parties() {
            return Err(MpcError::Invalid(format!(
                "party {me} is not one of the {n} computing parties of a session of {}",
                ctx.parties()
            )));
        }
        Ok(((0..n).filter(|&p| p != me).collect(), n))
    }
}

fn same_shape<R>(x: &Share<R>, y: &Share<R>) -> Result<()> {
    if x.0.shape() != y.0.shape() {
        return Err(MpcError::Invalid(format!("shapes {:?} and {:?} differ", x.0.shape(), y.0.shape())));
    }
    Ok(())
}

/// Sends `values` to every peer and adds up what comes back (one round).
pub(crate) fn open_values<R: Ring>(ctx: &mut Ctx, peers: &[PartyId], values: Vec<R>) -> Result<Vec<R>> {
    for &p in peers {
        ctx.send_ring(p, &values)?;
    }
    let mut sum = values;
    for &p in peers {
        let theirs: Vec<R> = ctx.recv_ring(p, sum.len())?;
        sum.iter_mut().zip(theirs).for_each(|(s, t)| *s += t);
    }
    Ok(sum)
}

impl<R: Ring, D: TripleSource<R>> Sharing<R> for Additive<D> {
    type Share = Share<R>;

    /// Shares derived from pairwise seeds, so nothing is sent: computing party `j ≠ owner`
    /// expands the seed it shares with the owner; the owner, who can expand the same seeds,
    /// keeps `x - Σ_j x_j`.
    fn share_input(
        &mut self,
        ctx: &mut Ctx,
        owner: PartyId,
        value: Option<&Tensor<R>>,
        shape: &[usize],
    ) -> Result<Share<R>> {
        let (peers, n) = self.group(ctx)?;
        if owner >= n {
            return Err(MpcError::Invalid(format!("party {owner} does not compute")));
        }
        let len: usize = shape.iter().product();
        if ctx.party() != owner {
            let mut g = ctx.pair_prg(owner, "veil/additive/input")?;
            return Ok(Share(Tensor::new(shape.to_vec(), R::random_vec(&mut g, len))?));
        }
        let x = value.ok_or_else(|| MpcError::Invalid("the input owner must pass its value".into()))?;
        if x.shape() != shape {
            return Err(MpcError::Invalid(format!("input of shape {:?}, declared {shape:?}", x.shape())));
        }
        let mut mine = x.data().to_vec();
        for p in peers {
            let mut g = ctx.pair_prg(p, "veil/additive/input")?;
            let theirs = R::random_vec(&mut g, len);
            mine.iter_mut().zip(theirs).for_each(|(m, t)| *m -= t);
        }
        Ok(Share(Tensor::new(shape.to_vec(), mine)?))
    }

    fn reveal_all(&mut self, ctx: &mut Ctx, x: &Share<R>) -> Result<Tensor<R>> {
        let (peers, _) = self.group(ctx)?;
        Ok(Tensor::new(x.0.shape().to_vec(), open_values(ctx, &peers, x.0.data().to_vec())?)?)
    }

    fn reveal_to(&mut self, ctx: &mut Ctx, x: &Share<R>, to: PartyId) -> Result<Option<Tensor<R>>> {
        let (peers, n) = self.group(ctx)?;
        if to >= n {
            return Err(MpcError::Invalid(format!("party {to} does not compute")));
        }
        if ctx.party() != to {
            ctx.send_ring(to, x.0.data())?;
            return Ok(None);
        }
        let mut sum = x.0.data().to_vec();
        for p in peers {
            let theirs: Vec<R> = ctx.recv_ring(p, x.0.len())?;
            sum.iter_mut().zip(theirs).for_each(|(s, t)| *s += t);
        }
        Ok(Some(Tensor::new(x.0.shape().to_vec(), sum)?))
    }
}

impl<R: Ring, D: TripleSource<R>> Linear<R> for Additive<D> {
    fn add(&self, x: &Share<R>, y: &Share<R>) -> Result<Share<R>> {
        Ok(Share(x.0.add(&y.0)?))
    }

    fn sub(&self, x: &Share<R>, y: &Share<R>) -> Result<Share<R>> {
        Ok(Share(x.0.sub(&y.0)?))
    }

    /// Party 0 adds the constant; the others keep their share.
    fn add_public(&self, ctx: &Ctx, x: &Share<R>, c: &Tensor<R>) -> Result<Share<R>> {
        if ctx.party() == 0 {
            return Ok(Share(x.0.add(c)?));
        }
        if x.0.shape() != c.shape() {
            return Err(MpcError::Invalid(format!("shapes {:?} and {:?} differ", x.0.shape(), c.shape())));
        }
        Ok(x.clone())
    }

    fn mul_public(&self, x: &Share<R>, c: &Tensor<R>) -> Result<Share<R>> {
        Ok(Share(x.0.mul(c)?))
    }
}

impl<R: Ring, D: TripleSource<R>> Multiply<R> for Additive<D> {
    /// Beaver: with a triple `(a, b, c)`, open `d = x - a` and `e = y - b` (one message to
    /// each peer carrying both), then
    /// `z_i = c_i + d·b_i + e·a_i (+ d·e at party 0)`, so that `Σ z_i = c + d·b + e·a + d·e = x·y`.
    fn mul(&mut self, ctx: &mut Ctx, x: &Share<R>, y: &Share<R>) -> Result<Share<R>> {
        same_shape(x, y)?;
        let (peers, n) = self.group(ctx)?;
        let m = x.0.len();
        let t = self.source.mul_triples(ctx, n, m)?;
        let mut de: Vec<R> = Vec::with_capacity(2 * m);
        de.extend(x.0.data().iter().zip(&t.a).map(|(&xi, &ai)| xi - ai));
        de.extend(y.0.data().iter().zip(&t.b).map(|(&yi, &bi)| yi - bi));
        let de = open_values(ctx, &peers, de)?;
        let (d, e) = de.split_at(m);
        let lead = ctx.party() == 0;
        let z: Vec<R> = (0..m)
            .map(|k| {
                let z = t.c[k] + d[k] * t.b[k] + e[k] * t.a[k];
                if lead { z + d[k] * e[k] } else { z }
            })
            .collect();
        Ok(Share(Tensor::new(x.0.shape().to_vec(), z)?))
    }

    fn mul_cost(&self, elements: usize, parties: usize) -> Cost {
        let peers = self.servers.unwrap_or(parties).saturating_sub(1) as u64;
        Cost { bytes_sent: 2 * peers * (elements * R::BYTES) as u64, messages_sent: peers, rounds: 1 }
    }
}
