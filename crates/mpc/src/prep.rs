//! The one preprocessing interface: what a computation needs of a family's correlated
//! randomness, as plain data, and the [`Preprocessing`] trait every source implements.
//!
//! **From a model to a plan, without running the protocol.** The model runtime walks a graph
//! over the [`crate::trace::Tracer`], a backend of shapes only: no party, no message, no value.
//! The walk yields the [`Call`]s the executor would make of the family (a product of these
//! shapes, a softmax of so many rows, ...). The family's [`Preprocessing::requests`] turns each
//! call into the [`CorrelationRequest`]s it consumes, in order; together they are the
//! [`Plan`] of the session, known to every computing party from public facts alone (the graph,
//! the weights' shapes, the input's size, the mode).
//!
//! **Where material comes from** ([`Supply`]): made ahead of the online phase from the plan
//! ([`Preprocessing::produce`]), made on demand by each call in bounded chunks, or stored on disk
//! by an earlier session and loaded once (the runtime's material files). Whatever the supply,
//! material is made under the communication phase [`crate::phase::OFFLINE_PHASE`], so reports
//! give it apart from the online phase, and [`Preprocessing::made_on_demand`] says how much of
//! a run's material its plan did not cover (0 when the plan was complete).
//!
//! Sources today: `mosformer`'s offline phase (three servers; triples checked by sacrifice,
//! verified DPF keys; ahead, on demand or stored), `aegis`'s dealing (P0 deals each
//! operation's material right before it, verified with the products at the end), the
//! `additive` family's insecure test dealer, and oblivious transfer between pairs of parties
//! (`veil-twopc`'s `OtSource`, COTs made ahead or on demand). A source built on homomorphic
//! encryption implements the same trait.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Ctx, MpcError, Result};

/// The material of one call of a non-linear gate whose keys are made for its shape (function
/// secret sharing keys, lookup tables' masks): the family decides what it holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Gate {
    /// `n` ReLUs.
    Relu {
        /// Elements.
        n: usize,
    },
    /// `n` GELUs.
    Gelu {
        /// Elements.
        n: usize,
    },
    /// A `[rows, k]` softmax.
    Softmax {
        /// Rows.
        rows: usize,
        /// Row length.
        k: usize,
    },
    /// A `[rows, k]` LayerNorm.
    LayerNorm {
        /// Rows.
        rows: usize,
        /// Row length.
        k: usize,
    },
}

impl Gate {
    /// Elements the gate computes (ReLU and GELU inputs, softmax entries, LayerNorm rows): what
    /// its material grows with.
    pub fn elements(&self) -> usize {
        match *self {
            Gate::Relu { n } | Gate::Gelu { n } => n,
            Gate::Softmax { rows, k } => rows * k,
            Gate::LayerNorm { rows, .. } => rows,
        }
    }
}

/// A kind and amount of correlated randomness.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CorrelationRequest {
    /// `count` multiplication triples (a, b, c = a·b) over Z_2^ring_bits (for a family with
    /// masked sharing, the dealt cross terms of `count` products).
    MulTriples {
        /// Ring width.
        ring_bits: u32,
        /// Number of triples.
        count: usize,
    },
    /// One matrix triple (A: m×k, B: k×n, C = A·B) over Z_2^ring_bits.
    MatmulTriple {
        /// Ring width.
        ring_bits: u32,
        /// Rows of A.
        m: usize,
        /// Columns of A.
        k: usize,
        /// Columns of B.
        n: usize,
    },
    /// `count` truncation pairs `(r, ⌊r/d⌋)`.
    TruncPairs {
        /// Number of pairs.
        count: usize,
    },
    /// `count` upcast tuples `(r mod 2^from, r in Z_2^to, MSB(r))`.
    UpcastTuples {
        /// Small ring width.
        from_bits: u32,
        /// Large ring width.
        to_bits: u32,
        /// Number of tuples.
        count: usize,
    },
    /// `count` sign-bit correlations (the mask of a comparison and what its bits need).
    SignBits {
        /// Number of elements.
        count: usize,
    },
    /// The material of one gate call.
    Gate(Gate),
    /// `count` random correlated OTs from party `sender` to party `receiver` (the 2-party and
    /// n-party families that compute on oblivious transfer).
    Cots {
        /// The party holding Δ.
        sender: usize,
        /// The party holding the choice bits.
        receiver: usize,
        /// Number of COTs.
        count: usize,
    },
}

impl CorrelationRequest {
    /// Short name of the kind, for reports.
    pub fn kind(&self) -> &'static str {
        match self {
            CorrelationRequest::MulTriples { .. } => "mul_triples",
            CorrelationRequest::MatmulTriple { .. } => "matmul_triple",
            CorrelationRequest::TruncPairs { .. } => "trunc_pairs",
            CorrelationRequest::UpcastTuples { .. } => "upcast_tuples",
            CorrelationRequest::SignBits { .. } => "sign_bits",
            CorrelationRequest::Gate(_) => "gate_elements",
            CorrelationRequest::Cots { .. } => "cots",
        }
    }

    /// Units of its kind: triples, matrices, pairs, tuples, sign bits, gate elements or COTs.
    pub fn units(&self) -> u64 {
        match *self {
            CorrelationRequest::MulTriples { count, .. }
            | CorrelationRequest::TruncPairs { count }
            | CorrelationRequest::UpcastTuples { count, .. }
            | CorrelationRequest::SignBits { count }
            | CorrelationRequest::Cots { count, .. } => count as u64,
            CorrelationRequest::MatmulTriple { .. } => 1,
            CorrelationRequest::Gate(ref g) => g.elements() as u64,
        }
    }
}

/// A call a computation makes of a family's capabilities ([`crate::traits`]), as plain data:
/// shapes only. What [`crate::trace::Tracer`] records, and what a family's
/// [`Preprocessing::requests`] reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Call {
    /// `n` elementwise products, not rescaled.
    Mul {
        /// Elements.
        n: usize,
    },
    /// `n` elementwise fixed-point products.
    MulFixed {
        /// Elements.
        n: usize,
    },
    /// A `[m, k] × [k, n]` product, rescaled or not.
    Matmul {
        /// `[m, k, n]`.
        dims: [usize; 3],
        /// Rescaled (fixed point) or left with twice the fractional bits.
        scaled: bool,
    },
    /// Several rescaled products side by side.
    MatmulMany {
        /// `[m, k, n]` of each.
        dims: Vec<[usize; 3]>,
    },
    /// `n` divisions by the public `d`.
    DivPublic {
        /// Elements.
        n: usize,
        /// Divisor.
        d: u64,
    },
    /// `n` ReLUs.
    Relu {
        /// Elements.
        n: usize,
    },
    /// Maxima of the rows of a `[rows, k]` tensor.
    MaxRows {
        /// Rows.
        rows: usize,
        /// Row length.
        k: usize,
    },
    /// `n` GELUs.
    Gelu {
        /// Elements.
        n: usize,
    },
    /// A `[rows, k]` softmax.
    Softmax {
        /// Rows.
        rows: usize,
        /// Row length.
        k: usize,
        /// With a mask (causal attention).
        masked: bool,
    },
    /// A `[rows, k]` LayerNorm.
    LayerNorm {
        /// Rows.
        rows: usize,
        /// Row length.
        k: usize,
    },
    /// An owner's tensor of `n` elements shared among the computing parties.
    ShareFromOwner {
        /// Elements.
        n: usize,
    },
    /// `n` elements revealed to an owner.
    RevealToOwner {
        /// Elements.
        n: usize,
    },
    /// The deferred checks.
    Check,
}

/// The comparisons at each level of a row-maxima tournament over `[rows, k]`, widest level
/// first: `rows·⌊w/2⌋` at a level of width `w`, the next level `⌈w/2⌉` wide (an odd entry
/// moves up unchanged). They add up to `rows·(k − 1)`.
pub fn max_tree_levels(rows: usize, k: usize) -> Vec<usize> {
    let (mut width, mut out) = (k, Vec::new());
    while width > 1 {
        out.push(rows * (width / 2));
        width = width.div_ceil(2);
    }
    out
}

/// The material a computation needs, in the order it consumes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// The requests, in order.
    pub requests: Vec<CorrelationRequest>,
}

impl Plan {
    /// The plan of `calls` for `source`.
    pub fn of<P: Preprocessing + ?Sized>(source: &P, calls: &[Call]) -> Self {
        Plan { requests: calls.iter().flat_map(|c| source.requests(c)).collect() }
    }

    /// Elements of every gate in the plan ([`Gate::elements`]): what gate material grows with.
    pub fn gate_elements(&self) -> usize {
        self.gates().map(Gate::elements).sum()
    }

    /// The gates, in order.
    pub fn gates(&self) -> impl Iterator<Item = &Gate> {
        self.requests.iter().filter_map(|r| match r {
            CorrelationRequest::Gate(g) => Some(g),
            _ => None,
        })
    }

    /// The requests grouped by kind, each kind in order: what a source that keeps one queue per
    /// kind serves alike (two plans with equal groups need the same material in the same order).
    pub fn by_kind(&self) -> BTreeMap<&'static str, Vec<&CorrelationRequest>> {
        let mut groups: BTreeMap<&'static str, Vec<&CorrelationRequest>> = BTreeMap::new();
        for r in &self.requests {
            groups.entry(r.kind()).or_default().push(r);
        }
        groups
    }

    /// Units of each kind ([`CorrelationRequest::units`]), as a report gives them.
    pub fn totals(&self) -> PrepUsage {
        let mut usage = PrepUsage::default();
        for r in &self.requests {
            usage.record(r);
        }
        usage
    }
}

/// Where a session's material comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Supply {
    /// Made from the plan before the online phase, held until used.
    Ahead,
    /// Made by each call right before it needs it, in bounded chunks.
    OnDemand,
    /// Made by an earlier session, stored on disk, loaded once and deleted.
    Stored,
}

impl Supply {
    /// The name the command line and the records use.
    pub fn name(self) -> &'static str {
        match self {
            Supply::Ahead => "ahead",
            Supply::OnDemand => "on-demand",
            Supply::Stored => "stored",
        }
    }
}

/// A family's source of correlated randomness (see the module doc). Every computing party
/// holds one and makes the same calls in the same order.
pub trait Preprocessing {
    /// The material `call` consumes, in the order it consumes it (empty when it needs none:
    /// a local operation, or one whose randomness comes from seeds alone).
    fn requests(&self, call: &Call) -> Vec<CorrelationRequest>;

    /// The supplies this source offers; [`Supply::OnDemand`] always.
    fn supplies(&self) -> &'static [Supply] {
        &[Supply::OnDemand]
    }

    /// Makes every request of `plan` now, under the offline phase, to be consumed by the calls
    /// that follow in the order of the plan.
    ///
    /// # Errors
    /// A source that offers no [`Supply::Ahead`], or a failure of the offline phase.
    fn produce(&mut self, ctx: &mut Ctx, plan: &Plan) -> Result<()> {
        let _ = (ctx, plan);
        Err(MpcError::Invalid("this preprocessing source makes its material on demand only".into()))
    }

    /// Units of material made on demand so far because nothing made ahead covered them (0 after
    /// a run whose plan was produced ahead and complete).
    fn made_on_demand(&self) -> u64;

    /// What the calls so far consumed, by kind.
    fn usage(&self) -> PrepUsage;
}

/// How much of each kind a party consumed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PrepUsage {
    counts: BTreeMap<&'static str, u64>,
}

impl PrepUsage {
    /// Records one request.
    pub fn record(&mut self, req: &CorrelationRequest) {
        *self.counts.entry(req.kind()).or_insert(0) += req.units();
    }

    /// Units consumed of a kind (`"mul_triples"`: triples; `"matmul_triple"`: matrices).
    pub fn get(&self, kind: &str) -> u64 {
        self.counts.get(kind).copied().unwrap_or(0)
    }

    /// Every kind with its units.
    pub fn kinds(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.counts.iter().map(|(k, v)| (*k, *v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_max_tree_halves_each_level_and_compares_k_minus_one_times_per_row() {
        assert_eq!(max_tree_levels(2, 5), [4, 2, 2]);
        assert_eq!(max_tree_levels(3, 1), Vec::<usize>::new());
        for k in 1..40 {
            assert_eq!(max_tree_levels(7, k).iter().sum::<usize>(), 7 * (k - 1), "k = {k}");
        }
    }

    struct Doubling;

    impl Preprocessing for Doubling {
        fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
            match *call {
                Call::Mul { n } => vec![CorrelationRequest::MulTriples { ring_bits: 64, count: 2 * n }],
                Call::Relu { n } => vec![CorrelationRequest::Gate(Gate::Relu { n })],
                _ => vec![],
            }
        }

        fn made_on_demand(&self) -> u64 {
            0
        }

        fn usage(&self) -> PrepUsage {
            PrepUsage::default()
        }
    }

    #[test]
    fn a_plan_is_the_requests_of_its_calls_in_order() {
        let calls = [Call::Mul { n: 3 }, Call::Check, Call::Relu { n: 5 }, Call::Mul { n: 1 }];
        let plan = Plan::of(&Doubling, &calls);
        assert_eq!(plan.requests.len(), 3);
        assert_eq!(plan.gate_elements(), 5);
        let totals = plan.totals();
        assert_eq!(totals.get("mul_triples"), 8);
        assert_eq!(totals.get("gate_elements"), 5);
        assert_eq!(totals.kinds().count(), 2);
    }

    #[test]
    fn a_source_without_ahead_refuses_to_produce() {
        assert_eq!(Doubling.supplies(), &[Supply::OnDemand]);
        let mut ctx = Ctx::detached(0, 2);
        let err = Doubling.produce(&mut ctx, &Plan::default()).unwrap_err();
        assert!(err.to_string().contains("on demand only"), "{err}");
    }
}
