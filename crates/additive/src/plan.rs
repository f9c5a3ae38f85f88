//! The family's correlations behind `veil-mpc`'s [`Preprocessing`] interface: what each call of
//! the capability traits draws from its [`Correlations`] source ([`Additive::requests`]), so
//! that a session's material follows from the model's shapes. The source today is the
//! insecure dealer, which makes each call's material on demand; what it made is counted
//! ([`Preprocessing::usage`]) and checked against the plan in the session tests.
//!
//! Per call (Z_2^64): a product of `n` draws `n` triples, a matrix product one matrix triple;
//! rescaling draws `n` truncation pairs after the product, as does a division by a public value;
//! ReLU of `n` draws `n` sign-bit correlations, then the `n` triples of `x·DReLU(x)`; the maxima
//! of `[rows, k]` run one such ReLU of `rows·⌊w/2⌋` per level of width `w` (then `⌈w/2⌉`).

use veil_mpc::prep::{Call, CorrelationRequest, PrepUsage, Preprocessing, max_tree_levels};

use crate::dealer::Correlations;
use crate::protocol::Additive;

fn triples(count: usize) -> CorrelationRequest {
    CorrelationRequest::MulTriples { ring_bits: 64, count }
}

fn pairs(count: usize) -> CorrelationRequest {
    CorrelationRequest::TruncPairs { count }
}

fn relu(n: usize) -> [CorrelationRequest; 2] {
    [CorrelationRequest::SignBits { count: n }, triples(n)]
}

fn matrix([m, k, n]: [usize; 3]) -> CorrelationRequest {
    CorrelationRequest::MatmulTriple { ring_bits: 64, m, k, n }
}

impl<D> Additive<D> {
    /// The correlations `call` draws (see the module doc).
    pub fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        match call {
            Call::Mul { n } => vec![triples(*n)],
            Call::MulFixed { n } => vec![triples(*n), pairs(*n)],
            Call::Matmul { dims, scaled: true } => vec![matrix(*dims), pairs(dims[0] * dims[2])],
            Call::Matmul { dims, scaled: false } => vec![matrix(*dims)],
            Call::MatmulMany { dims } => dims.iter().flat_map(|d| [matrix(*d), pairs(d[0] * d[2])]).collect(),
            Call::DivPublic { n, .. } => vec![pairs(*n)],
            Call::Relu { n } => relu(*n).to_vec(),
            Call::MaxRows { rows, k } => max_tree_levels(*rows, *k).into_iter().flat_map(relu).collect(),
            Call::Gelu { .. }
            | Call::Softmax { .. }
            | Call::LayerNorm { .. }
            | Call::ShareFromOwner { .. }
            | Call::RevealToOwner { .. }
            | Call::Check => vec![],
        }
    }
}

impl<D: Correlations> Preprocessing for Additive<D> {
    fn requests(&self, call: &Call) -> Vec<CorrelationRequest> {
        Additive::requests(self, call)
    }

    /// Everything: the source makes each call's correlations when the call draws them.
    fn made_on_demand(&self) -> u64 {
        self.source.usage().kinds().map(|(_, units)| units).sum()
    }

    fn usage(&self) -> PrepUsage {
        self.source.usage().clone()
    }
}
