//! The offline phase: preprocessing material produced by the three servers themselves, held
//! until the online phase consumes it.
//!
//! [`Offline`] is the [`TripleSource`], [`TruncPairSource`] and [`UpcastSource`] of the
//! family. What it holds and how it is made:
//! - elementwise triples ([`crate::triples`]: random sharings, semi-honest products,
//!   sacrifice in a wider ring); matrix products need none ([`crate::matcheck`]);
//! - upcast tuples ([`crate::convert::generate_upcast_tuples`]: random bits with verified
//!   products);
//! - truncation pairs are made on demand from pairwise seeds, with no communication
//!   ([`crate::trunc::pair_known_pair`]), so there is nothing to store.
//!
//! The FSS material (point-function keys, auxiliary data) is made by each gate's `setup`, and
//! the MAC key and `⟨1⟩` by [`crate::keys`]; all of it runs before the online phase too.
//!
//! **Phases.** Everything produced is counted under the communication phase
//! [`OFFLINE_PHASE`]. Material is produced ahead with the `produce_*` methods, or from the
//! triples and tuples of a [`Plan`](veil_mpc::prep::Plan) (derived from the model's shapes,
//! never from data, `crate::plan`; [`Offline::plan`] lists what a run asked for, to
//! compare). If the online phase asks for more than was produced, the missing part is made on
//! the spot (still counted as offline, but its rounds then delay the online phase);
//! [`Offline::made_on_demand`] says how much, so benchmarks can check it is zero. Gate material
//! made on demand ends with `leave_offline_together` (one round), so the online phase's rounds
//! and time stay its own.
//!
//! **Memory.** Material is held until used and then dropped, so producing it per layer (or per
//! batch of gates) bounds what a party holds at once to one piece.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use veil_mpc::prep::{CorrelationRequest, PrepUsage};
use veil_mpc::{Ctx, MpcError, Result};
use veil_ring::{Z2k, Z16, Z32, Z64};

use crate::convert::{UpcastSource, UpcastTuple, generate_upcast_tuples};
use crate::rss::Rss;
use crate::triples::{Sacrifice, Triple, TripleSource, generate_mul};
use crate::trunc::{TruncPair, TruncPairSource, pair_known_pair};

/// What each server sends the other two when it leaves an on-demand offline step.
const DONE: &[u8] = b"veil/mosformer/offline/done";

/// Ends material made on demand inside another phase: each server tells the other two it is
/// done and waits for both (one short message each way, one round, counted offline). Dealing is
/// uneven (the dealer of a batch finishes before its evaluators have checked it), so without
/// this a server that finished early would wait for the others in the first online message
/// that follows, and that wait would be reported as online time.
pub(crate) fn leave_offline_together(ctx: &mut Ctx) -> Result<()> {
    let b = ctx.party();
    let peers = [crate::rss::next(b), crate::rss::prev(b)];
    for p in peers {
        ctx.net().send(p, DONE.to_vec())?;
    }
    for p in peers {
        if ctx.recv_at_most(p, DONE.len())? != DONE {
            return Err(MpcError::Malformed { from: p, what: "end of an offline step".into() });
        }
    }
    Ok(())
}

/// Upcast tuples made per batch (bounds the bits and triples held while making them).
pub const UPCAST_BATCH: usize = 4096;

pub(crate) use veil_mpc::phase::in_offline_phase;
pub use veil_mpc::phase::{OFFLINE_PHASE, nested_offline_seconds};

/// A queue of equally shaped flat sharings consumed element by element.
#[derive(Debug, Serialize, Deserialize)]
#[serde(bound = "R: Z2k", try_from = "PoolParts<R>")]
struct Pool<R> {
    chunks: VecDeque<Vec<Rss<R>>>,
    offset: usize,
    #[serde(skip)]
    available: usize,
}

/// A [`Pool`] as read from stored material, before its layout is checked.
#[derive(Deserialize)]
#[serde(bound = "R: Z2k")]
struct PoolParts<R> {
    chunks: VecDeque<Vec<Rss<R>>>,
    offset: usize,
}

impl<R: Z2k> TryFrom<PoolParts<R>> for Pool<R> {
    type Error = MpcError;

    /// Every chunk's parts are flat and of one length, none empty, and the offset lies inside
    /// the first chunk.
    fn try_from(p: PoolParts<R>) -> Result<Self> {
        let bad = |what: &str| MpcError::Invalid(format!("stored material pool: {what}"));
        let mut total = 0usize;
        for chunk in &p.chunks {
            let len = chunk.first().map_or(0, Rss::len);
            if len == 0 || chunk.iter().any(|r| r.shape() != [len]) {
                return Err(bad("a chunk's parts are empty, not flat or of different lengths"));
            }
            total += len;
        }
        if p.offset > 0 && p.chunks.front().is_none_or(|c| p.offset >= c[0].len()) {
            return Err(bad("the offset is past the first chunk"));
        }
        Ok(Pool { available: total - p.offset, chunks: p.chunks, offset: p.offset })
    }
}

impl<R> Default for Pool<R> {
    fn default() -> Self {
        Pool { chunks: VecDeque::new(), offset: 0, available: 0 }
    }
}

impl<R: Z2k> Pool<R> {
    /// Whether every chunk has `parts` parts.
    fn has_parts(&self, parts: usize) -> bool {
        self.chunks.iter().all(|c| c.len() == parts)
    }

    fn push(&mut self, parts: Vec<Rss<R>>) {
        self.available += parts.first().map_or(0, Rss::len);
        self.chunks.push_back(parts);
    }

    /// The next `n` elements of every part, each as a `[n]` sharing.
    fn take(&mut self, n: usize, parts: usize) -> Result<Vec<Rss<R>>> {
        if n > self.available {
            return Err(MpcError::Invalid(format!("{n} elements asked, {} held", self.available)));
        }
        let mut pieces: Vec<Vec<Rss<R>>> = vec![Vec::new(); parts];
        let mut need = n;
        while need > 0 {
            let front = self.chunks.front().ok_or_else(|| MpcError::Invalid("empty pool".into()))?;
            let len = front[0].len();
            let take = need.min(len - self.offset);
            for (p, piece) in front.iter().zip(pieces.iter_mut()) {
                piece.push(p.range(self.offset, take)?);
            }
            self.offset += take;
            need -= take;
            if self.offset == len {
                self.chunks.pop_front();
                self.offset = 0;
            }
        }
        self.available -= n;
        pieces.iter().map(|p| Rss::concat(&p.iter().collect::<Vec<_>>())).collect()
    }
}

/// Everything held for one working ring.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(bound = "R: Z2k")]
pub struct RingStore<R> {
    mul: Pool<R>,
    /// Upcast tuples into this ring, by source width: `(r over this ring, MSB(r))`.
    upcast: Vec<(u32, Pool<R>)>,
}

impl<R: Z2k> RingStore<R> {
    /// Checks a stored ring's layout: triples of 3 parts and upcast tuples of 2, from a
    /// narrower ring.
    fn check(&self) -> Result<()> {
        let bad = |what: String| MpcError::Invalid(format!("stored material over Z_2^{}: {what}", R::BITS));
        if !self.mul.has_parts(3) {
            return Err(bad("triples without 3 parts".into()));
        }
        for (from, pool) in &self.upcast {
            if !matches!(from, 16 | 32) || *from >= R::BITS || !pool.has_parts(2) {
                return Err(bad(format!("upcast tuples from Z_2^{from}")));
            }
        }
        Ok(())
    }

    fn is_empty(&self) -> bool {
        self.mul.available == 0 && self.upcast.is_empty()
    }

    fn upcast_pool(&mut self, from: u32) -> &mut Pool<R> {
        let i = match self.upcast.iter().position(|(b, _)| *b == from) {
            Some(i) => i,
            None => {
                self.upcast.push((from, Pool::default()));
                self.upcast.len() - 1
            }
        };
        &mut self.upcast[i].1
    }
}

/// An [`Offline`] store's triples and tuples, moved out to be stored
/// ([`crate::stored::StoredMaterial`]).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct StoredTriples {
    z16: RingStore<Z16>,
    z32: RingStore<Z32>,
    z64: RingStore<Z64>,
}

#[cfg(test)]
impl StoredTriples {
    /// Adds 1 to this server's first component of the first stored triple's `c` over Z_2^64
    /// (what a corrupted server might do to its own stored material).
    pub(crate) fn tamper_first_product(&mut self) {
        if let Some(chunk) = self.z64.mul.chunks.front_mut() {
            let c = &chunk[2];
            let mut first = c.first.data().to_vec();
            first[0] += Z64(1);
            if let Ok(t) = veil_tensor::Tensor::new(c.shape().to_vec(), first) {
                chunk[2] = Rss { first: t, second: c.second.clone() };
            }
        }
    }
}

/// The rings the offline phase produces triples for.
pub trait OfflineRing: Sacrifice {
    /// This ring's store.
    fn store(o: &mut Offline) -> &mut RingStore<Self>;
}

impl OfflineRing for Z16 {
    fn store(o: &mut Offline) -> &mut RingStore<Self> {
        &mut o.z16
    }
}
impl OfflineRing for Z32 {
    fn store(o: &mut Offline) -> &mut RingStore<Self> {
        &mut o.z32
    }
}
impl OfflineRing for Z64 {
    fn store(o: &mut Offline) -> &mut RingStore<Self> {
        &mut o.z64
    }
}

/// One party's offline material (see the module doc).
#[derive(Debug, Default)]
pub struct Offline {
    z16: RingStore<Z16>,
    z32: RingStore<Z32>,
    z64: RingStore<Z64>,
    plan: Vec<CorrelationRequest>,
    usage: PrepUsage,
    on_demand: u64,
    /// Set while the store consumes its own triples (for upcast tuples): not online requests.
    producing: bool,
    /// The semi-honest mode: no triples, products unverified.
    semi_honest: bool,
}

impl Offline {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The semi-honest mode's store: products are not verified, so it makes no triples (upcast
    /// tuples then come from unverified bits).
    pub fn semi_honest() -> Self {
        Offline { semi_honest: true, ..Self::default() }
    }

    /// Moves the triples and tuples produced so far out of the store.
    pub fn take_stored(&mut self) -> StoredTriples {
        StoredTriples {
            z16: std::mem::take(&mut self.z16),
            z32: std::mem::take(&mut self.z32),
            z64: std::mem::take(&mut self.z64),
        }
    }

    /// Puts stored triples and tuples into this store, which must hold none.
    ///
    /// # Errors
    /// A store that holds material, or stored material of another layout.
    pub fn load_stored(&mut self, s: StoredTriples) -> Result<()> {
        if !(self.z16.is_empty() && self.z32.is_empty() && self.z64.is_empty()) {
            return Err(MpcError::Invalid("triples loaded into a store that holds some".into()));
        }
        s.z16.check()?;
        s.z32.check()?;
        s.z64.check()?;
        (self.z16, self.z32, self.z64) = (s.z16, s.z32, s.z64);
        Ok(())
    }

    /// The triple, tuple and truncation pair requests served so far, in order (what a plan of
    /// the same computation lists of them).
    pub fn plan(&self) -> &[CorrelationRequest] {
        &self.plan
    }

    /// What the online phase consumed, by kind.
    pub fn usage(&self) -> &PrepUsage {
        &self.usage
    }

    /// Elements (triples, tuples) made on demand because nothing was produced
    /// ahead for them.
    pub fn made_on_demand(&self) -> u64 {
        self.on_demand
    }

    /// The store of a mode: [`Offline::new`] when malicious, [`Offline::semi_honest`] if not.
    pub fn for_security(security: crate::Security) -> Self {
        match security {
            crate::Security::Malicious => Self::new(),
            crate::Security::SemiHonest => Self::semi_honest(),
        }
    }

    /// Produces `n` elementwise triples over `R` (nothing in the semi-honest mode).
    pub fn produce_mul<R: OfflineRing>(&mut self, ctx: &mut Ctx, n: usize) -> Result<()> {
        if self.semi_honest {
            return Ok(());
        }
        let t = in_offline_phase(ctx, |ctx| generate_mul::<R>(ctx, n))?;
        R::store(self).mul.push(vec![t.a, t.b, t.c]);
        Ok(())
    }

    /// Produces `n` upcast tuples from `R` into `S`, in batches of [`UPCAST_BATCH`] (each
    /// tuple takes `ℓ` random bits and `2ℓ` triples while it is made).
    pub fn produce_upcast<R: Z2k, S: OfflineRing>(&mut self, ctx: &mut Ctx, n: usize) -> Result<()> {
        let mut left = n;
        while left > 0 {
            let batch = left.min(UPCAST_BATCH);
            // Two verified products per bit, ℓ bits per tuple.
            let need = 2 * R::BITS as usize * batch;
            let held = S::store(self).mul.available;
            if held < need {
                self.produce_mul::<S>(ctx, need - held)?;
            }
            self.producing = true;
            let t = in_offline_phase(ctx, |ctx| generate_upcast_tuples::<R, S>(ctx, self, batch));
            self.producing = false;
            let t = t?;
            S::store(self).upcast_pool(R::BITS).push(vec![t.r_large, t.msb]);
            left -= batch;
        }
        Ok(())
    }

    /// Produces every triple and tuple `plan` lists, merging the elementwise requests of a
    /// ring into one batch (gate material is the instance's, [`crate::Mosformer::prepare`];
    /// truncation pairs come from seeds, with nothing to produce).
    pub fn produce(&mut self, ctx: &mut Ctx, plan: &[CorrelationRequest]) -> Result<()> {
        let mut mul = [0usize; 3];
        let mut up: Vec<((u32, u32), usize)> = Vec::new();
        for req in plan {
            match *req {
                CorrelationRequest::MulTriples { ring_bits, count } => mul[ring_index(ring_bits)?] += count,
                CorrelationRequest::UpcastTuples { from_bits, to_bits, count } => {
                    match up.iter_mut().find(|(k, _)| *k == (from_bits, to_bits)) {
                        Some((_, c)) => *c += count,
                        None => up.push(((from_bits, to_bits), count)),
                    }
                }
                CorrelationRequest::TruncPairs { .. } | CorrelationRequest::Gate(_) => {}
                CorrelationRequest::MatmulTriple { .. } => {
                    return Err(MpcError::Invalid(
                        "mosformer makes no matrix triples (its matrix products are checked online)".into(),
                    ));
                }
                CorrelationRequest::SignBits { .. } => {
                    return Err(MpcError::Invalid("mosformer makes no sign-bit material".into()));
                }
                CorrelationRequest::Cots { .. } => {
                    return Err(MpcError::Invalid("mosformer makes no oblivious-transfer material".into()));
                }
            }
        }
        if mul[0] > 0 {
            self.produce_mul::<Z16>(ctx, mul[0])?;
        }
        if mul[1] > 0 {
            self.produce_mul::<Z32>(ctx, mul[1])?;
        }
        if mul[2] > 0 {
            self.produce_mul::<Z64>(ctx, mul[2])?;
        }
        for ((from, to), count) in up {
            match (from, to) {
                (16, 32) => self.produce_upcast::<Z16, Z32>(ctx, count)?,
                (16, 64) => self.produce_upcast::<Z16, Z64>(ctx, count)?,
                (32, 64) => self.produce_upcast::<Z32, Z64>(ctx, count)?,
                _ => return Err(MpcError::Invalid(format!("upcast from Z_2^{from} to Z_2^{to}"))),
            }
        }
        Ok(())
    }
}

fn ring_index(bits: u32) -> Result<usize> {
    match bits {
        16 => Ok(0),
        32 => Ok(1),
        64 => Ok(2),
        _ => Err(unsupported(bits)),
    }
}

fn unsupported(bits: u32) -> MpcError {
    MpcError::Invalid(format!("no offline material over Z_2^{bits} (16, 32 or 64 bits)"))
}

impl<R: OfflineRing> TripleSource<R> for Offline {
    fn verifies(&self) -> bool {
        !self.semi_honest
    }

    fn mul_triple(&mut self, ctx: &mut Ctx, shape: &[usize]) -> Result<Triple<R>> {
        let n: usize = shape.iter().product();
        let held = R::store(self).mul.available;
        if !self.producing {
            let req = CorrelationRequest::MulTriples { ring_bits: R::BITS, count: n };
            self.usage.record(&req);
            self.plan.push(req);
            self.on_demand += n.saturating_sub(held) as u64;
        }
        if held < n {
            self.produce_mul::<R>(ctx, n - held)?;
        }
        let mut parts = R::store(self).mul.take(n, 3)?.into_iter().map(|p| p.reshape(shape));
        let mut next = || parts.next().ok_or_else(|| MpcError::Invalid("triple parts".into()))?;
        Ok(Triple { a: next()?, b: next()?, c: next()? })
    }
}

impl<R: Z2k> TruncPairSource<R> for Offline {
    fn trunc_pair(&mut self, ctx: &mut Ctx, shape: &[usize], d: u64) -> Result<TruncPair<R>> {
        let req = CorrelationRequest::TruncPairs { count: shape.iter().product() };
        self.usage.record(&req);
        self.plan.push(req);
        pair_known_pair(ctx, shape, d)
    }
}

impl<R: Z2k, S: OfflineRing> UpcastSource<R, S> for Offline {
    fn upcast_tuple(&mut self, ctx: &mut Ctx, shape: &[usize]) -> Result<UpcastTuple<R, S>> {
        let n: usize = shape.iter().product();
        let req = CorrelationRequest::UpcastTuples { from_bits: R::BITS, to_bits: S::BITS, count: n };
        self.usage.record(&req);
        self.plan.push(req);
        let held = S::store(self).upcast_pool(R::BITS).available;
        if held < n {
            self.on_demand += (n - held) as u64;
            self.produce_upcast::<R, S>(ctx, n - held)?;
        }
        let parts = S::store(self).upcast_pool(R::BITS).take(n, 2)?;
        let (r_large, msb) = (parts[0].reshape(shape)?, parts[1].reshape(shape)?);
        let r_small = r_large.map_components(|v| R::from_u128(v.to_u128()));
        Ok(UpcastTuple { r_small, r_large, msb })
    }
}
