//! Oblivious transfer as a preprocessing source ([`veil_mpc::prep::Preprocessing`]): the
//! random COTs of every pair of parties, made ahead from a plan or on demand by the calls.
//!
//! [`OtSource`] holds a [`TwoParty`] session (a COT engine each way) with every other party,
//! set up pair by pair in one global order (pairs sorted by their ids), so any number of
//! parties sets up without a deadlock. A plan lists [`CorrelationRequest::Cots`] per ordered
//! pair; [`Preprocessing::produce`] makes, with each peer, what the plan's requests between
//! the two add up to. For two parties, [`Preprocessing::requests`] maps the calls the toolkit
//! serves (ReLU, row maxima, division by a power of two as truncation) to the COTs they use;
//! an n-party family maps its own calls to pairwise requests and lets this source make them.

use std::collections::BTreeMap;

use veil_mpc::prep::{Call, CorrelationRequest, Plan, PrepUsage, Preprocessing, Supply};
use veil_mpc::{Ctx, MpcError, PartyId, Result};

use crate::{Engine, TwoParty, millionaire, product};

/// Random COTs between every pair of parties.
pub struct OtSource {
    me: PartyId,
    parties: usize,
    ring_bits: u32,
    pairs: BTreeMap<PartyId, TwoParty>,
}

impl std::fmt::Debug for OtSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtSource").field("me", &self.me).field("peers", &self.pairs.keys()).finish()
    }
}

/// COTs a call of the 2-party toolkit ([`crate::TwoPc`]) uses in `Z_2^bits`: `(P0 sending,
/// P1 sending)`.
pub fn cots_of_call(call: &Call, bits: u32) -> (usize, usize) {
    let relu = |n: usize| {
        let (a, b) = millionaire::cots_needed(n, bits - 1);
        (a + n, b + n)
    };
    let products = |n: usize| product::cots_needed(n, bits);
    // A truncation (M&M's) is one Δ-OT from P0.
    let trunc = |n: usize| (n, 0);
    let add = |a: (usize, usize), b: (usize, usize)| (a.0 + b.0, a.1 + b.1);
    let matmul = |[m, k, p]: [usize; 3], scaled: bool| {
        add(products(m * k * p), if scaled { trunc(m * p) } else { (0, 0) })
    };
    match call {
        Call::Relu { n } => relu(*n),
        // k − 1 comparisons and multiplexers per row.
        Call::MaxRows { rows, k } => relu(rows * k.saturating_sub(1)),
        Call::Mul { n } => products(*n),
        Call::MulFixed { n } => add(products(*n), trunc(*n)),
        Call::Matmul { dims, scaled } => matmul(*dims, *scaled),
        Call::MatmulMany { dims } => dims.iter().fold((0, 0), |acc, &d| add(acc, matmul(d, true))),
        // One truncation, of `x` or of `x·⌈2^s/d⌉`.
        Call::DivPublic { n, d } if *d > 1 => trunc(*n),
        _ => (0, 0),
    }
}

/// The requests of `(P0 sending, P1 sending)` COTs between parties 0 and 1.
pub fn cot_requests((a, b): (usize, usize)) -> Vec<CorrelationRequest> {
    let mut out = Vec::new();
    if a > 0 {
        out.push(CorrelationRequest::Cots { sender: 0, receiver: 1, count: a });
    }
    if b > 0 {
        out.push(CorrelationRequest::Cots { sender: 1, receiver: 0, count: b });
    }
    out
}

impl OtSource {
    /// Sets up a COT engine each way with every other party of the session.
    pub fn setup(ctx: &mut Ctx, engine: Engine, ring_bits: u32) -> Result<Self> {
        Self::setup_among(ctx, engine, ring_bits, ctx.parties())
    }

    /// Sets up a COT engine each way between every two of the parties `0 .. parties` (the
    /// computing parties; later ones, input owners, get an empty source).
    pub fn setup_among(ctx: &mut Ctx, engine: Engine, ring_bits: u32, parties: usize) -> Result<Self> {
        crate::ring::check_bits(ring_bits)?;
        let me = ctx.party();
        if parties > ctx.parties() {
            return Err(MpcError::Invalid(format!(
                "{parties} computing parties in a session of {}",
                ctx.parties()
            )));
        }
        let mut pairs = BTreeMap::new();
        for a in 0..parties {
            for b in a + 1..parties {
                if a == me || b == me {
                    let peer = if a == me { b } else { a };
                    pairs.insert(peer, TwoParty::setup(ctx, peer, engine)?);
                }
            }
        }
        Ok(OtSource { me, parties, ring_bits, pairs })
    }

    /// The session with `peer`.
    pub fn pair(&mut self, peer: PartyId) -> Result<&mut TwoParty> {
        let me = self.me;
        self.pairs
            .get_mut(&peer)
            .ok_or_else(|| MpcError::Invalid(format!("party {me} has no OT session with {peer}")))
    }

    fn counters(&self) -> (u64, u64) {
        self.pairs.values().fold((0, 0), |(used, demand), tp| {
            let (s, r) = (tp.sender_counters(), tp.receiver_counters());
            (used + s.0 + r.0, demand + s.1 + r.1)
        })
    }
}

impl Preprocessing for OtSource {
    fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        // n-party families map their calls themselves; input owners consume nothing.
        if self.parties != 2 || self.me >= self.parties {
            return Vec::new();
        }
        cot_requests(cots_of_call(call, self.ring_bits))
    }

    fn supplies(&self) -> &'static [Supply] {
        &[Supply::Ahead, Supply::OnDemand]
    }

    fn produce(&mut self, ctx: &mut Ctx, plan: &Plan) -> Result<()> {
        let mut totals: BTreeMap<(PartyId, PartyId), usize> = BTreeMap::new();
        for r in &plan.requests {
            match *r {
                CorrelationRequest::Cots { sender, receiver, count } => {
                    if sender == receiver || sender >= self.parties || receiver >= self.parties {
                        return Err(MpcError::Invalid(format!(
                            "COTs from party {sender} to party {receiver}"
                        )));
                    }
                    *totals.entry((sender, receiver)).or_insert(0) += count;
                }
                ref other => {
                    return Err(MpcError::Invalid(format!(
                        "oblivious transfer makes no {} material",
                        other.kind()
                    )));
                }
            }
        }
        let me = self.me;
        let peers: Vec<PartyId> = self.pairs.keys().copied().collect();
        // Pairs in the same global order as the setup.
        for peer in peers {
            let (low, high) = (me.min(peer), me.max(peer));
            let p0 = totals.get(&(low, high)).copied().unwrap_or(0);
            let p1 = totals.get(&(high, low)).copied().unwrap_or(0);
            if p0 + p1 > 0 {
                self.pair(peer)?.prepare(ctx, p0, p1)?;
            }
        }
        Ok(())
    }

    fn made_on_demand(&self) -> u64 {
        self.counters().1
    }

    /// COTs this party's engines handed out, as sender and as receiver, with every peer.
    fn usage(&self) -> PrepUsage {
        let mut usage = PrepUsage::default();
        let used = self.counters().0 as usize;
        if used > 0 {
            usage.record(&CorrelationRequest::Cots { sender: self.me, receiver: self.me, count: used });
        }
        usage
    }
}
